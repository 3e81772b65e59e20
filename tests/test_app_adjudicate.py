"""The lead's adjudication page through AppTest: the evidence it shows, its filters, "next
disagreement" and recording a decision (the browser test, keys included, is in
tests/test_browser_app.py; its screenshot comes from tests/test_screenshots.py)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tests.support.apptest import all_text, sign_in
from tests.support.streamlit_server import seed_store


@pytest.fixture
def lead(tmp_path, monkeypatch):
    """Four disagreements: p0 (preference), p2 (decided), p3 (correctness of first, another
    category, a reference and an automatic verdict), p5 (both correctness fields)."""
    from curate.model import Adjudication, Item, Label
    from curate.store import Store

    db = str(tmp_path / "app.db")
    s = Store(db, images=tmp_path / "images")
    seed_store(s)  # p2's image is missing
    with s.write() as c:
        s.add_items([Item("i9", "Read the **chart**: how many bars?", "chart", reference="4 bars")], conn=c)
    s.update_pair(
        "p3",
        item_id="i9",
        auto_first="correct",
        auto_second="incorrect",
        auto_method="number",
        metadata={"extracted_first": "4", "extracted_second": "5"},
    )
    labs = {
        "p0": (("correct", "incorrect", "first"), ("correct", "incorrect", "second")),
        "p1": (("correct", "incorrect", "first"), ("correct", "incorrect", "first")),  # agree
        "p2": (("correct", "incorrect", "first"), ("correct", "incorrect", "tie")),
        "p3": (("correct", "incorrect", "first"), ("unsure", "incorrect", "first")),
        "p5": (("correct", "incorrect", "first"), ("incorrect", "correct", "first")),
    }
    for pid, (a, b) in labs.items():
        s.save_label(
            Label(
                pid,
                "alice",
                *a,
                rationale=f"alice on {pid}: **first** is right",
                seconds=12.25,
                created_at="2026-11-27T03:12:45.123456+00:00",
                updated_at="2026-11-27T03:12:45.123456+00:00",
            )
        )
        bob_at = "2026-11-26T23:05:00-04:00"  # saved with another offset: said in UTC
        s.save_label(Label(pid, "bob", *b, rationale=f"bob on {pid}", seconds=40, created_at=bob_at, updated_at=bob_at))
    edited = replace(s.get_label("p0", "bob"), updated_at="2026-11-27T05:40:10+02:00")  # edited later
    s.save_label(edited, expected_revision=edited.revision)
    s.set_adjudication(Adjudication("p2", "lead", "first"))
    monkeypatch.setenv("MMRB_DB", db)
    monkeypatch.setenv("MMRB_IMAGES", str(tmp_path / "images"))
    at = sign_in("lead")
    at.switch_page("annotate/views/admin_adjudicate.py").run()
    assert not at.exception, at.exception
    yield at, s
    from annotate import ui

    ui.close_stores()
    s.close()


def by_key(widgets, prefix: str):
    return next(w for w in widgets if w.key and w.key.startswith(prefix))


def test_the_first_undecided_pair_with_every_piece_of_evidence(lead):
    at, _ = lead
    assert at.selectbox(key="adj_pair").value == "p0"
    assert "Pairs whose labels disagree: 4, not yet decided: 3." in all_text(at)
    text = all_text(at)
    # the image (embedded without a server), the prompt, both responses with their models
    assert 'data-item="i0"' in text and "<img" in text and "Question 0: what is in the picture?" in text
    assert "Left: first response · model model-alpha" in text and "Right: second response · model model-beta" in text
    assert "No reference answer." in text and "No automatic correctness verdict." in text
    # every label with its rationale, seconds and when; the field they differ on marked
    assert "alice on p0: <strong>first</strong> is right" in text and "bob on p0" in text
    assert "12.2 s" in text and "40 s" in text
    # when each label was saved, in UTC; an edited one says when it was first saved too
    assert text.count("2026-11-27 03:12 UTC") == 1  # alice's
    assert "2026-11-27 03:40 UTC" in text and "first 2026-11-27 03:05 UTC" in text  # bob's, edited
    assert ">Took</th>" in text and ">Saved</th>" in text
    # rationales say left and right: the table says which response each annotator saw on the left
    assert re.search(r"alice</b></td><td[^>]*>first</td>", text) and re.search(
        r"bob</b></td><td[^>]*>second</td>", text
    )
    assert not by_key(at.button, "adj_zoom").disabled
    assert "`N` next undecided disagreement" in text


def test_reference_and_automatic_verdict_where_known(lead):
    at, _ = lead
    at.selectbox(key="adj_pair").set_value("p3").run()
    text = all_text(at)
    assert "Read the <strong>chart</strong>: how many bars?" in text and "Prompt · Chart" in text
    assert "Reference answer</div><p>4 bars</p>" in text
    assert "Automatic verdict by number: first <b>correct</b> (read &ldquo;4&rdquo;)" in text
    assert "second <b>incorrect</b> (read &ldquo;5&rdquo;)" in text
    assert "This prompt has no image." in text and by_key(at.button, "adj_zoom").disabled


def test_filters_by_category_and_by_the_field_that_disagrees(lead):
    at, _ = lead
    vqa = "Visual question answering"
    assert at.selectbox(key="adj_pair").options == [  # by the prompt, not the pair id
        f"Question 0: what is in the picture? · {vqa} · differs on preference  (pending)",
        f"Question 2: what is in the picture? · {vqa} · differs on preference  (decided)",
        "Read the **chart**: how many bars? · Chart · differs on correctness of first  (pending)",
        f"Question 5: what is in the picture? · {vqa} · differs on correctness of first, correctness of second"
        "  (pending)",
    ]
    at.multiselect[0].set_value(["chart"]).run()
    assert [o.split(" · ")[0] for o in at.selectbox(key="adj_pair").options] == ["Read the **chart**: how many bars?"]
    assert at.selectbox(key="adj_pair").value == "p3"  # the one shown was filtered out
    at.multiselect[0].set_value([]).run()
    at.multiselect[1].set_value(["correctness_second"]).run()
    assert [o.split(":")[0] for o in at.selectbox(key="adj_pair").options] == ["Question 5"]
    at.multiselect[1].set_value(["preference", "correctness_second"]).run()
    assert [o.split(":")[0] for o in at.selectbox(key="adj_pair").options] == ["Question 0", "Question 2", "Question 5"]
    assert not at.exception


def test_next_disagreement_skips_decided_pairs_and_wraps(lead):
    at, _ = lead
    seen = []
    for _ in range(4):
        by_key(at.button, "adj_next").click().run()
        seen.append(at.selectbox(key="adj_pair").value)
    assert seen == ["p3", "p5", "p0", "p3"]  # p2 is decided


def test_recording_a_decision_keeps_it_apart_and_moves_on(lead):
    at, s = lead
    at.selectbox(key="adj_pair").set_value("p5").run()
    by_key(at.radio, "adj_first_").set_value("incorrect")
    by_key(at.radio, "adj_second_").set_value("correct")
    by_key(at.radio, "adj_pref_").set_value("second")
    by_key(at.checkbox, "adj_exclude_").check()
    by_key(at.text_area, "adj_note_").input("bob read the chart right")
    by_key(at.button, "adj_record_").click().run()
    assert not at.exception, at.exception
    got = s.adjudications()["p5"]
    assert (got.preference, got.correctness_first, got.correctness_second, got.exclude, got.admin) == (
        "second",
        "incorrect",
        "correct",
        True,
        "lead",
    )
    assert got.note == "bob read the chart right"
    assert s.get_label("p5", "bob").preference == "first"  # the labels are untouched
    assert "Decision recorded for p5." in [t.value for t in at.toast]
    assert at.selectbox(key="adj_pair").value == "p0"  # the next undecided one, wrapping round
    # reopening a decided pair shows the decision in the form
    at.selectbox(key="adj_pair").set_value("p5").run()
    assert by_key(at.radio, "adj_pref_").value == "second" and by_key(at.checkbox, "adj_exclude_").value
    assert "(decided)" in at.selectbox(key="adj_pair").format_func("p5")


# -- a declared scheme: each of its fields decided ----------------------------------------------
def _on_scheme(s, pid: str, scheme: str, values: dict[str, dict]):
    from curate.schemes import BUILT_IN, to_label

    sc = BUILT_IN[scheme]
    s.set_pair_scheme([pid], sc.name, sc.version, relabel=True)  # its mmrb labels go to the history
    for who, v in values.items():
        s.save_label(to_label(sc, pid, who, v, scheme_version=sc.version))
    return sc


def test_a_six_point_scale_is_decided_and_gives_the_preference_by_its_rule(lead):
    from annotate import adjudication

    at, s = lead
    _on_scheme(s, "p1", "mmrb2-pairwise", {"alice": {"score": 5}, "bob": {"score": 2}})
    rows = {r.pair_id: r for r in adjudication.disagreements(s)}
    assert rows["p1"].fields == ("score",) and rows["p1"].scheme.name == "mmrb2-pairwise"
    at.switch_page("annotate/views/admin_adjudicate.py").run()
    at.selectbox(key="adj_pair").set_value("p1").run()
    assert not at.exception, at.exception
    score = by_key(at.radio, "adj_score_")
    assert score.options[1:] == [f"{n} · {label}" for n, label in enumerate(rows["p1"].scheme.field("score").points, 1)]
    assert "Scheme: MMRB2" in all_text(at)
    score.set_value("2")
    by_key(at.button, "adj_record_").click().run()
    assert not at.exception, at.exception
    got = s.adjudications()["p1"]
    assert (got.ratings, got.preference, got.correctness_first) == ({"score": 2}, "second", None)
    at.selectbox(key="adj_pair").set_value("p1").run()
    assert by_key(at.radio, "adj_score_").value == "2"  # reopened with the decision


def test_per_response_aspects_differ_field_by_field():
    from annotate import adjudication
    from curate.model import Label, Pair
    from curate.schemes import BUILT_IN, to_label

    sc = BUILT_IN["aspects"]
    base = {"helpfulness": (4, 2), "faithfulness": (3, 3), "ethics": (4, 4), "preference": "first", "rationale": "x"}
    a = to_label(sc, "p", "alice", base)
    b = to_label(sc, "p", "bob", {**base, "faithfulness": (3, 1), "rationale": "y"})
    assert adjudication.differing([a, b], sc) == ("faithfulness_second",)  # the rationale is no decision
    keys = [d.key for d in adjudication.decisions(sc)]
    assert keys[:2] == ["helpfulness_first", "helpfulness_second"] and keys[-1] == "preference"
    chosen = {**adjudication.answers(sc, a), "faithfulness_second": "2", "preference": "second"}
    adj = adjudication.decided(sc, Pair("p", "i", "a", "b", "t"), "lead", chosen)
    assert adj.preference == "second" and adj.ratings["faithfulness_second"] == 2
    assert adjudication.answers(sc, adj)["faithfulness_second"] == "2"
    # verify: the decided verdict takes the judges' proposal, kept with it
    v = BUILT_IN["verify"]
    pair = Pair("p", "i", "a", "b", "t", metadata={"proposal": "second"})
    adj = adjudication.decided(v, pair, "lead", {"verdict": "agree"})
    assert (adj.preference, adj.ratings) == ("second", {"verdict": "agree", "proposal": "second"})
    # mmrb stays the label's columns
    m = adjudication.decisions(BUILT_IN["mmrb"])
    assert [d.key for d in m] == ["correctness_first", "correctness_second", "preference"]
    assert adjudication.differing([Label("p", "a", preference="first"), Label("p", "b", preference="tie")]) == (
        "preference",
    )


@pytest.mark.parametrize(
    ("answer", "left", "shown"),
    [
        ("first", "first", "first (their left)"),
        ("first", "second", "first (their right)"),  # saw it flipped: their rationale calls it the right one
        ("second", "second", "second (their left)"),
        ("tie", "second", "tie"),
        ("correct", "second", "correct"),
        ("first", None, "first"),  # no assignment: the side they saw is unknown
        (None, "first", "–"),
    ],
)
def test_a_side_in_the_labels_table_is_also_said_as_its_annotator_saw_it(answer, left, shown):
    from annotate.render import as_seen

    assert as_seen(answer, left) == shown


def test_a_scale_point_is_named_and_said_as_its_annotator_picked_it_when_they_saw_the_pair_flipped():
    from annotate.adjudication import seen_answers
    from curate import schemes
    from curate.model import Label

    scale = schemes.BUILT_IN["mmrb2-pairwise"]
    lab = schemes.to_label(scale, "p", "alice", {"score": 4})  # stored: first slightly better
    assert seen_answers(scale, lab, {"alice": "first"}) == {"score": "4 · left slightly better"}
    # alice saw the second response on the left: she picked 3, "right slightly better", as her rationale says
    assert seen_answers(scale, lab, {"alice": "second"}) == {
        "score": "4 · left slightly better; they picked 3 · right slightly better"
    }
    assert seen_answers(scale, lab, {}) == {"score": "4 · left slightly better"}  # no assignment: as stored
    mmrb = schemes.BUILT_IN[schemes.DEFAULT]  # its sides are said by render.as_seen
    assert seen_answers(mmrb, Label("p", "bob", "correct", None, "first"), {"bob": "second"})["preference"] == "first"
