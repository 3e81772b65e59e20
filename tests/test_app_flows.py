"""The annotation app's flows through streamlit.testing.v1.AppTest (no browser)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.support.apptest import all_text, form_keys, label, new_app, sign_in, submit
from tests.support.streamlit_server import PASSWORD, XSS


def test_sign_in_refuses_wrong_password_then_opens_the_queue(sqlite_env):
    at = new_app().run()
    assert not at.exception
    at.text_input(key="signin_name").input("alice")
    at.text_input(key="signin_password").input("wrong-password")
    at.button[0].click().run()
    assert "Wrong name or password" in all_text(at)
    assert not at.radio  # still on the sign-in page
    at.text_input(key="signin_password").input(PASSWORD)
    at.button[0].click().run()
    assert "Question 0" in all_text(at)
    assert [p.proto.text for p in at.get("progress")] == ["0 labelled, 0 skipped of 6"]


def test_disabled_account_cannot_sign_in(sqlite_env):
    from annotate import auth

    auth.set_active(sqlite_env, "bob", False)
    at = sign_in("bob")
    assert "Wrong name or password" in all_text(at)


def test_label_is_saved_in_response_ids_with_time_and_the_next_pair_follows(app_env):
    s = app_env
    at = sign_in("bob")  # bob sees p0 with the *second* response on the left
    assert s.get_assignment("p0", "bob").left == "second"
    text = all_text(at)
    assert "Answer B0" in text.split("Answer A0")[0]  # the second response is shown first (left)
    label(at, left="correct", right="incorrect", pref="left")
    got = s.get_label("p0", "bob")
    assert (got.correctness_first, got.correctness_second, got.preference) == ("incorrect", "correct", "second")
    assert got.seconds is not None and got.seconds >= 0
    assert "Question 1" in all_text(at)
    assert s.progress("bob") == (1, 6)


def test_annotator_never_sees_model_names_gold_or_other_labels(sqlite_env):
    s = sqlite_env
    at = sign_in("alice")
    label(at, left="correct", right="correct", pref="tie", rationale="both fine")
    at2 = sign_in("bob")
    text = all_text(at2)
    for secret in ("model-alpha", "model-beta", "known", "gold", "alice", "both fine"):
        assert secret not in text, secret
    # the admin pages are not even listed in the navigation for an annotator
    assert s.get_label("p0", "alice") is not None


def test_tie_needs_a_rationale(sqlite_env):
    s = sqlite_env
    at = sign_in("alice")
    label(at, left="correct", right="correct", pref="tie")
    assert "write a rationale" in all_text(at)
    assert s.get_label("p0", "alice") is None
    assert "Question 0" in all_text(at)  # still on the same pair, answers kept
    k = form_keys(at)
    assert at.radio(key=k["q_pref"]).value == "tie"
    at.text_area(key=k["q_rationale"]).input("Both are right and equally clear.")
    submit(at)
    assert s.get_label("p0", "alice").rationale == "Both are right and equally clear."


def test_incomplete_label_is_refused(sqlite_env):
    at = sign_in("alice")
    label(at, left="correct")
    assert "rate the right response" in all_text(at) and "choose a preference" in all_text(at)
    assert sqlite_env.get_label("p0", "alice") is None


def test_skip_and_flag(sqlite_env):
    s = sqlite_env
    at = sign_in("alice")
    next(b for b in at.button if b.key == "act_skip").click().run()
    assert s.get_label("p0", "alice").status == "skipped"
    assert "Question 1" in all_text(at)
    # a skip is no label: the progress line counts it apart, and says it quietly (no notice box)
    assert [p.proto.text for p in at.get("progress")] == [":green[Skipped.] 0 labelled, 1 skipped of 6"]
    assert not at.info and not at.success
    label(at, flag="unsafe_content", rationale="shows a weapon")
    got = s.get_label("p1", "alice")
    assert (got.flag, got.flag_note, got.status) == ("unsafe_content", "shows a weapon", "submitted")
    assert "Question 2" in all_text(at)
    assert [p.proto.text for p in at.get("progress")] == [":green[Saved.] 1 labelled, 1 skipped of 6"]
    next(b for b in at.button if b.key == "act_undo").click().run()  # said once: the next run has no "Saved."
    assert [p.proto.text for p in at.get("progress")] == ["0 labelled, 1 skipped of 6"]


def test_undo_brings_the_last_pair_back_prefilled(sqlite_env):
    s = sqlite_env
    at = sign_in("alice")
    label(at, left="correct", right="incorrect", pref="left")
    assert "Question 1" in all_text(at)
    next(b for b in at.button if b.key == "act_undo").click().run()
    assert s.get_label("p0", "alice") is None
    assert "Question 0" in all_text(at)
    k = form_keys(at)
    assert at.radio(key=k["q_left"]).value == "correct" and at.radio(key=k["q_pref"]).value == "left"
    assert [h.action for h in s.label_history("p0", "alice")] == ["undo"]


def test_edit_own_label_keeps_history(sqlite_env):
    s = sqlite_env
    at = sign_in("alice")
    label(at, left="correct", right="incorrect", pref="left")
    at.switch_page("annotate/views/my_labels.py").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value  # as she answered, on her screen's sides
    assert list(table.columns) == [
        "Prompt",
        "Category",
        "Status",
        "Left is",
        "Right is",
        "Better",
        "Answers",
        "Rationale",
        "Flag",
        "Saved (UTC)",
    ]
    row = table.iloc[0]
    assert (row["Prompt"], row["Category"]) == ("Question 0: what is in the picture?", "Visual question answering")
    assert (row["Status"], row["Left is"], row["Right is"], row["Better"]) == (
        "submitted",
        "correct",
        "incorrect",
        "left",
    )
    assert row["Flag"] is None and row["Rationale"] is None  # shown as EMPTY, never "None"
    assert row["Answers"] is None  # mmrb's answers have their own columns
    saved = s.get_label("p0", "alice").updated_at
    assert row["Saved (UTC)"] == f"{saved[:10]} {saved[11:16]}" and saved.endswith("+00:00")
    at.session_state["editing"] = "p0"
    at.run()
    k = form_keys(at)
    assert at.radio(key=k["q_pref"]).value == "left"
    at.radio(key=k["q_pref"]).set_value("right")
    submit(at)
    got = s.get_label("p0", "alice")
    assert got.preference == "second" and got.revision == 2
    assert [h.snapshot.preference for h in s.label_history("p0", "alice")] == ["first"]


@pytest.mark.both_backends
def test_two_tabs_cannot_submit_the_same_pair_twice(app_env):
    s = app_env
    tab1, tab2 = sign_in("alice"), sign_in("alice")
    label(tab1, left="correct", right="incorrect", pref="left")
    label(tab2, left="incorrect", right="correct", pref="right")
    assert "already submitted" in all_text(tab2)
    assert "Question 1" in all_text(tab2)  # moved on
    got = s.get_label("p0", "alice")
    assert got.preference == "first" and got.revision == 1
    assert len(s.labels(annotator="alice")) == 1


def test_admin_page_is_refused_to_an_annotator_even_by_url(sqlite_env):
    at = sign_in("alice")
    for page in ("admin_progress", "admin_adjudicate", "admin_annotators", "admin_agreement"):
        at.switch_page(f"annotate/views/{page}.py").run()
        assert not at.exception, at.exception
        assert "You do not have access" in all_text(at), page
        assert not at.dataframe


def test_admin_sees_progress_and_can_adjudicate(sqlite_env):
    s = sqlite_env
    a = sign_in("alice")
    label(a, left="correct", right="incorrect", pref="left", rationale="A is right")
    b = sign_in("bob")
    label(b, left="correct", right="incorrect", pref="left", rationale="B-left is right")  # bob's left is second
    lead = sign_in("lead")  # lands on Progress
    assert [h.value for h in lead.subheader] == ["Progress"]
    assert lead.dataframe and "alice" in lead.dataframe[0].value["Annotator"].tolist()
    lead.switch_page("annotate/views/admin_adjudicate.py").run()
    assert not lead.exception, lead.exception
    text = all_text(lead)
    assert "model-alpha" in text and "p0" in str(lead.selectbox[0].value)
    next(r for r in lead.radio if r.key.startswith("adj_pref_")).set_value("first")
    next(b for b in lead.button if "Record decision" in b.label).click().run()
    assert s.adjudications()["p0"].preference == "first"
    assert s.get_label("p0", "alice").preference == "first"  # annotators' labels untouched
    lead.switch_page("annotate/views/admin_agreement.py").run()
    assert not lead.exception, lead.exception


def test_agreement_says_what_it_needs_until_two_pairs_overlap_then_draws(sqlite_env):
    a, b = sign_in("alice"), sign_in("bob")
    label(a, left="correct", right="incorrect", pref="left")
    label(b, left="correct", right="incorrect", pref="right")  # p0 by both: one pair overlaps
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_agreement.py").run()
    assert not lead.exception, lead.exception
    said = [i.value for i in lead.info]
    assert said and "at least 2 pairs labelled by two or more annotators; so far 1 pair" in said[0], said
    assert not lead.get("vega_lite_chart") and not lead.dataframe  # no charts of "undefined"
    label(a, left="incorrect", right="correct", pref="right")
    label(b, left="correct", right="incorrect", pref="right")  # p1 by both: two pairs overlap
    lead.run()
    assert not lead.info and lead.get("vega_lite_chart")


# -- the lead's pages ---------------------------------------------------------------------------
def label_everything(s, *, minutes: int = 2) -> None:
    """alice and bob label every pair, ``minutes`` apart, every label 'correct' on the first
    response (no variation: its alpha is undefined); bob disagrees on the preference of p1."""
    from datetime import UTC, datetime, timedelta

    from curate.model import Label

    t = datetime(2025, 1, 1, 9, tzinfo=UTC)
    for n, pair in enumerate(p.id for p in s.pairs()):
        for who in ("alice", "bob"):
            pref = "second" if (who, pair) == ("bob", "p1") else "first"
            at = (t + timedelta(minutes=minutes * n)).isoformat()
            s.save_label(Label(pair, who, "correct", "incorrect", pref, seconds=12.345, created_at=at, updated_at=at))


def charts(at) -> list:
    return list(at.get("vega_lite_chart"))


def assert_lead_tables(at) -> None:
    """Human headers, and an empty cell shown as "–", never "None"."""
    assert at.dataframe
    for table in at.dataframe:
        assert table.proto.placeholder == "–"
        for header in table.value.columns:
            assert "_" not in header and header[:1].isupper(), header
    assert "None" not in all_text(at)


def test_the_lead_lands_on_progress_not_on_an_empty_label_page(sqlite_env):
    lead = sign_in("lead")
    assert [h.value for h in lead.subheader] == ["Progress"]
    assert not form_keys(lead) and not lead.get("progress")  # no label form, no "0 of 0 labelled" bar
    assert not charts(lead)  # no label yet: no plot
    assert "appear with the first label" in all_text(lead)
    assert_lead_tables(lead)
    assert "6 pairs with fewer submitted labels" in all_text(lead)


def test_the_label_page_of_someone_with_nothing_assigned_says_so_without_idle_controls(sqlite_env):
    lead = sign_in("lead")  # the lead has no queue
    lead.switch_page("annotate/views/label.py").run()
    assert not lead.exception, lead.exception
    assert [h.value for h in lead.subheader] == ["Label"]
    assert "No pairs are assigned to you yet. The Annotators page assigns pairs to annotators" in all_text(lead)
    assert "mmrb assign --annotators lead" in all_text(lead)  # what gives a lead pairs
    assert not lead.get("progress") and not form_keys(lead)  # no bar, no form
    assert [b.key for b in lead.button] == ["sign_out"]  # no Skip, Undo or zoom that would do nothing
    alice = sign_in("alice")  # one with a queue sees the bar, the form and the buttons
    assert alice.get("progress") and form_keys(alice) and any(b.key == "act_skip" for b in alice.button)


def test_progress_has_human_tables_rates_only_over_enough_work_and_its_plots(sqlite_env):
    label_everything(sqlite_env)
    lead = sign_in("lead")
    assert_lead_tables(lead)
    people = lead.dataframe[0].value.set_index("Annotator")
    assert sorted(people.index) == ["alice", "bob"]  # the lead, with nothing assigned, is no row of zeros
    assert people["Account"].tolist() == ["active", "active"]  # a word, not a greyed checkbox
    assert people.loc["alice", "Median s per label"] == 12.3  # stored 12.345 s
    assert pd.isna(people.loc["alice", "Labels per labelling hour"])  # 6 labels in 74 s: not enough for a rate
    formats = json.loads(lead.dataframe[0].proto.columns)
    assert formats["Median s per label"]["type_config"]["format"] == "%.1f"
    assert "at least 10 timed labels over at least 10 minutes" in all_text(lead)
    cats = lead.dataframe[1].value
    assert cats["Share done"].tolist() == [100.0] and "%.1f%%" in lead.dataframe[1].proto.columns
    assert "0 pairs with fewer submitted labels" in all_text(lead)
    assert len(charts(lead)) == 3  # labels over time, seconds per label, label distribution
    assert not lead.exception, lead.exception


def test_agreement_page_plots_intervals_kappas_and_majority_and_explains_undefined_once(sqlite_env):
    label_everything(sqlite_env)
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_agreement.py").run()
    assert not lead.exception, lead.exception
    assert [h.value for h in lead.subheader] == ["Agreement"]
    assert len(charts(lead)) == 3  # alpha per category, kappa heatmap, agreement with the majority
    assert_lead_tables(lead)
    matrix = lead.dataframe[0].value  # category x field, numbers
    assert matrix["Category"].tolist() == ["All categories", "Visual question answering"]
    assert matrix["Correctness, first response"].isna().all()  # every category, and vqa: empty, never 0
    assert matrix["Preference"].notna().all() and str(matrix["Preference"].dtype) == "Float64"
    table = lead.dataframe[1].value  # every figure, in the expander
    first = table[table["Field"] == "Correctness, first response"]["Alpha"]
    assert len(first) == 2 and first.isna().all()
    text = all_text(lead)
    assert text.count("every pairable label is 'correct'") == 1
    sent = b"".join(d.data.data for c in charts(lead) for d in c.proto.datasets)  # the charts' data (Arrow)
    assert b"0.8: reliable" in sent and b"0.667: tentative" in sent


def test_the_annotators_page_lists_accounts_under_human_headers(sqlite_env):
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_annotators.py").run()
    assert not lead.exception, lead.exception
    assert_lead_tables(lead)
    accounts = lead.dataframe[0].value
    assert list(accounts.columns) == ["Annotator", "Role", "Active", "Assigned", "Done"]
    assert sorted(accounts["Annotator"]) == ["alice", "bob", "lead"]


def test_the_leads_my_labels_page_has_its_heading(sqlite_env):
    lead = sign_in("lead")
    lead.switch_page("annotate/views/my_labels.py").run()
    assert not lead.exception, lead.exception
    assert [h.value for h in lead.subheader] == ["My labels"]
    assert "You have not labelled anything yet." in all_text(lead)


def test_missing_image_shows_a_placeholder_and_html_is_text(sqlite_env):
    at = sign_in("alice")
    label(at, left="correct", right="correct", pref="left")
    # p1 holds a response full of HTML: it is rendered from Markdown with every tag as text
    hostile = [e.proto.body for e in at.get("html") if "window.__pwned" in e.proto.body]
    assert len(hostile) == 1
    assert "&lt;script&gt;" in hostile[0] and "&lt;img" in hostile[0]
    assert "<script" not in hostile[0] and '<img src="nope' not in hostile[0]
    assert "<code>code &lt;b&gt;</code>" in hostile[0]  # code stays code
    assert XSS.startswith("Here is **bold**") and "<strong>bold</strong>" in hostile[0]
    label(at, left="correct", right="correct", pref="left")
    html = " ".join(str(e.proto) for e in at.get("html"))
    assert "Image missing" in html and "data:image/jpeg" not in html


def test_full_size_view_opens_with_zoom(sqlite_env):
    at = sign_in("alice")
    next(b for b in at.button if b.key == "act_zoom").click().run()
    assert not at.exception, at.exception
    assert at.selectbox and at.selectbox[0].label == "Zoom" and at.selectbox[0].value == "fit"
    assert "Original size 800 x 600 pixels" in all_text(at)


def test_guidelines_page_and_panel(sqlite_env):
    sqlite_env.set_guidelines("# Our rules\n\nA tie requires a rationale.", "lead")
    at = sign_in("alice")
    assert "A tie requires a rationale." in all_text(at)  # the panel on the label page
    at.switch_page("annotate/views/guidelines.py").run()
    assert not at.exception and "A tie requires a rationale." in all_text(at)


def test_sign_out_returns_to_the_sign_in_page(sqlite_env):
    at = sign_in("alice")
    assert at.radio
    next(b for b in at.button if b.key == "sign_out").click().run()
    assert not at.exception, at.exception
    assert not at.radio and at.text_input(key="signin_name") is not None


# -- OIDC sign-in (Streamlit's st.login) ------------------------------------------------------
# Here: the button appears only when the deployment configures [auth], and an identity maps to
# an active account only. The whole flow, through a loopback provider: tests/test_browser_oidc.py.
OIDC_SECRETS = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "x" * 32,
    "client_id": "mmrb",
    "client_secret": "s",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}


def test_organisation_sign_in_is_offered_only_when_configured(sqlite_env):
    at = new_app().run()
    assert not any("organisation" in b.label for b in at.button)
    at = new_app()
    at.secrets["auth"] = OIDC_SECRETS
    at.run()
    assert not at.exception, at.exception
    assert any(b.label == "Sign in with your organisation" for b in at.button)


def test_an_oidc_identity_signs_in_as_its_active_account_only(sqlite_env):
    from annotate import auth
    from curate.model import Annotator

    s = sqlite_env
    s.add_annotator(Annotator("ann@example.org", "annotator", None))
    assert auth.account_for_identity(s, "ann@example.org").name == "ann@example.org"
    assert auth.account_for_identity(s, "nobody@example.org") is None
    assert auth.account_for_identity(s, None) is None
    auth.set_active(s, "ann@example.org", False)
    assert auth.account_for_identity(s, "ann@example.org") is None


def test_the_label_time_survives_a_refresh(sqlite_env, monkeypatch):
    from types import SimpleNamespace

    from annotate import clock

    now = [1000.0]  # the label clock's time, moved by hand rather than slept through
    monkeypatch.setattr(clock, "time", SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(clock, "CLOCK", clock.Clock())  # this test's own record of when pairs were first shown
    sign_in("alice")  # p0 shown in one browser session...
    now[0] += 90
    at = sign_in("alice")  # ...and the page reloaded 90 s later: a new session
    label(at, left="correct", right="correct", pref="left")
    got = sqlite_env.get_label("p0", "alice")
    assert got is not None and got.seconds == pytest.approx(90)


def test_the_quality_page_shows_gold_accuracy_alerts_and_resumes_a_paused_account(sqlite_env):
    from curate.model import Gold

    s = sqlite_env
    label_everything(s)
    s.set_gold([Gold("p1", "import", "first"), Gold("p2", "import", "first")])  # p0 has gold as Pair.is_gold
    s.update_annotator("bob", paused="automatic pause: test")
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_quality.py").run()
    assert not lead.exception, lead.exception
    assert [h.value for h in lead.subheader] == ["Quality"]
    assert len(charts(lead)) == 4  # accuracy on gold, agreement with the majority, Dawid-Skene, bias
    assert "Annotator bias" in all_text(lead)
    assert_lead_tables(lead)
    table = lead.dataframe[0].value
    pref = table[table["Field"] == "Preference"].set_index("Annotator")
    assert pref.loc["alice", "Gold accuracy"] == 100.0 and pref.loc["bob", "Gold accuracy"] == pytest.approx(66.7)
    assert pref.loc["bob", "Gold labels"] == 3
    lead.number_input(key="quality_min_n").set_value(3).run()
    lead.number_input(key="quality_threshold").set_value(0.8).run()
    assert "bob: gold" not in all_text(lead)  # 2 of 3 is [20.8%, 93.9%]: 80% lies inside
    lead.number_input(key="quality_threshold").set_value(0.95).run()
    assert "bob: gold 66.7% [20.8%, 93.9%] below 95.0% on preference (3 labels)" in all_text(lead)
    assert "bob: automatic pause: test" in all_text(lead)
    assert "No qualification set" in all_text(lead)
    lead.selectbox(key="quality_category").set_value("vqa").run()
    assert not lead.exception, lead.exception
    assert lead.dataframe[0].value["Gold labels"].tolist() == table["Gold labels"].tolist()  # every pair is vqa
    lead.button(key="resume_bob").click().run()
    assert not lead.exception, lead.exception
    assert s.get_annotator("bob").paused is None


def test_an_annotator_whose_queue_is_closed_is_told_so(sqlite_env):
    sqlite_env.update_annotator("alice", paused="automatic pause: test")
    at = sign_in("alice")
    assert not form_keys(at)
    text = all_text(at)
    assert "Your queue is paused" in text and "Your queue is done" not in text and "automatic pause" not in text


def test_the_quality_page_is_the_leads_only(sqlite_env):
    at = sign_in("alice")
    at.switch_page("annotate/views/admin_quality.py").run()
    assert "You do not have access" in all_text(at) and not at.dataframe


def test_the_quality_page_shows_the_qualification_set_and_the_control_share_in_effect(sqlite_env):
    from curate.model import Annotator, Assignment, Gold
    from curate.quality.qualification import set_qualification

    s = sqlite_env
    s.set_gold([Gold("p4", "import", "first"), Gold("p5", "import", "second")])
    set_qualification(s, ["p4", "p5"], 0.75)
    s.add_annotator(Annotator("cy"))
    s.add_assignments([Assignment("p0", "cy", "first", 0), Assignment("p5", "cy", "first", 1, is_gold=True)])
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_quality.py").run()
    assert not lead.exception, lead.exception
    assert "Qualification set: 2 gold pairs, minimum score 75.0%" in all_text(lead)
    shares = lead.dataframe[-1].value.set_index("Annotator")
    assert (shares.loc["cy", "Assignments"], shares.loc["cy", "Control tasks"]) == (2, 1)
    assert shares.loc["cy", "Control share"] == 50.0
    assert shares.loc["alice", "Control tasks"] == 0 and shares.loc["alice", "Control share"] == 0.0


def test_the_quality_page_follows_new_gold_and_a_changed_gold_answer(sqlite_env):
    """Its figures are cached per store state: a gold answer added, or one replaced by
    another value (the same count of gold pairs), shows on the next run."""
    from curate.model import Gold

    s = sqlite_env
    label_everything(s)
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_quality.py").run()

    def alice() -> tuple:
        table = lead.dataframe[0].value
        row = table[(table["Field"] == "Preference") & (table["Annotator"] == "alice")].iloc[0]
        return row["Gold labels"], row["Gold accuracy"]

    before = alice()
    s.set_gold([Gold("p2", "import", "first")])
    lead.run()
    assert alice()[0] == before[0] + 1 and alice()[1] == 100.0  # alice said first everywhere
    s.set_gold([Gold("p2", "import", "second")])  # replaced: as many gold pairs as before
    lead.run()
    assert alice()[0] == before[0] + 1 and alice()[1] < 100.0


def test_the_assignment_form_starts_from_the_last_runs_numbers(sqlite_env):
    from curate.assign import DEFAULT_PLAN, LAST_PLAN, assign, last_plan

    s = sqlite_env
    assert last_plan(s) == DEFAULT_PLAN  # before any run: k=3
    assign(s, k=2, max_k=4, control_share=0.1, annotators=["alice", "bob"])
    assert last_plan(s) == {"k": 2, "max_k": 4, "control_share": 0.1}
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_annotators.py").run()
    assert not lead.exception, lead.exception
    values = {n.label: n.value for n in lead.number_input}
    assert (values["k (labels per pair)"], values["max k (adaptive overlap)"], values["control share"]) == (
        2,
        4,
        0.1,
    )
    for garbage in ("not json", "[1, 2]", '{"k": "two", "max_k": true}'):  # a setting not ours: the defaults
        s.set_setting(LAST_PLAN, garbage)
        assert last_plan(s) == DEFAULT_PLAN
