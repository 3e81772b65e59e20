"""The app's pure helpers: accounts, safe rendering, the label form's rules, the queue."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from annotate import adjudication, admin, auth, form, keys, outage, pair_ui, queue, render
from curate.agreement import summary
from curate.errors import MmrbError
from curate.model import CORRECTNESS, SCREEN_PREFERENCES, Label
from tests.support.streamlit_server import seed_store


# -- accounts ----------------------------------------------------------------------------
def test_passwords_are_argon2_hashed_and_verified(sqlite_store):
    a = auth.add_account(sqlite_store, "alice", "correct horse", "annotator")
    assert a.password_hash.startswith("$argon2id$") and "correct horse" not in a.password_hash
    assert auth.authenticate(sqlite_store, "alice", "correct horse").name == "alice"
    assert auth.authenticate(sqlite_store, "alice", "wrong horse!") is None
    assert auth.authenticate(sqlite_store, "nobody", "correct horse") is None
    auth.set_active(sqlite_store, "alice", False)
    assert auth.authenticate(sqlite_store, "alice", "correct horse") is None


def test_production_hashes_cost_what_rfc_9106_recommends_and_cheaper_ones_are_upgraded(
    sqlite_store, production_password_hasher, monkeypatch
):
    from argon2.profiles import RFC_9106_LOW_MEMORY as RFC

    cheap = auth.add_account(sqlite_store, "alice", "correct horse").password_hash  # the tests' cost
    monkeypatch.setattr(auth, "_hasher", production_password_hasher)
    assert f"$argon2id$v=19$m={RFC.memory_cost},t={RFC.time_cost},p={RFC.parallelism}$" not in cheap
    assert auth.authenticate(sqlite_store, "alice", "correct horse")  # rehashed at the production cost
    upgraded = sqlite_store.get_annotator("alice").password_hash
    assert upgraded.startswith(f"$argon2id$v=19$m={RFC.memory_cost},t={RFC.time_cost},p={RFC.parallelism}$")
    assert auth.authenticate(sqlite_store, "alice", "correct horse")
    assert sqlite_store.get_annotator("alice").password_hash == upgraded  # no second rehash


def test_account_rules(sqlite_store):
    with pytest.raises(MmrbError, match="too short"):
        auth.add_account(sqlite_store, "bob", "short")
    with pytest.raises(MmrbError, match="role"):
        auth.add_account(sqlite_store, "bob", "long enough", "boss")
    with pytest.raises(MmrbError, match="invalid annotator name"):
        auth.add_account(sqlite_store, "bob smith", "long enough")
    auth.add_account(sqlite_store, "bob", "long enough")
    with pytest.raises(MmrbError, match="already exists"):
        auth.add_account(sqlite_store, "bob", "long enough")
    # an annotator created without a password by `mmrb assign` can be given one
    sqlite_store.ensure_annotator("carol")
    auth.add_account(sqlite_store, "carol", "long enough")
    assert auth.authenticate(sqlite_store, "carol", "long enough")


def test_page_access_by_role():
    ann, lead = auth.Annotator("a"), auth.Annotator("l", "admin")
    assert auth.can_open(None, "signin") and not auth.can_open(None, "label")
    assert auth.can_open(ann, "label") and not auth.can_open(ann, "admin_progress")
    assert all(auth.can_open(lead, p) for p in auth.ADMIN_PAGES | auth.ANNOTATOR_PAGES)
    assert not auth.can_open(auth.Annotator("x", active=False), "label")


def test_every_page_script_is_listed_once_and_checks_its_own_name():
    """auth's page lists are the one list of pages: app.py's navigation is built from them,
    so each script in annotate/views/ is there, and each script asks access by that name."""
    views = Path(auth.__file__).parent / "views"
    listed = [auth.SIGNIN.name, *auth.ANNOTATOR_PAGES, *auth.ADMIN_PAGES]
    assert sorted(listed) == sorted(p.stem for p in views.glob("*.py") if p.stem != "__init__")
    for name in listed[1:]:
        asked = set(re.findall(r'\brequire\("(\w+)"\)', (views / f"{name}.py").read_text(encoding="utf-8")))
        assert asked == {name}, name


# -- safe rendering ----------------------------------------------------------------------
# what GFM (mdast-util-gfm-autolink-literal) turns into links in text, after parsing
_GFM_AUTOLINK = re.compile(r"(https?://|www(?=\.))[-.\w]+|[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.IGNORECASE)


def _inline_tokens(md_source: str) -> list:
    """The inline tokens a GFM-like parser (CommonMark, tables, strikethrough) finds in
    Markdown source, as Streamlit's Markdown would; text that GFM would still turn into a
    link counts as a link."""
    from markdown_it import MarkdownIt

    out = []
    for t in MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(md_source):
        for c in t.children or []:
            out.append("autolink" if c.type == "text" and _GFM_AUTOLINK.search(c.content) else c)
    return out


@pytest.mark.parametrize(
    "text",
    [
        "![x](http://evil.test/y.png)",
        "[a](javascript:alert(1))",
        "<img src=x onerror=alert(1)>",
        "</script><script>x</script>",
        "$x^2$ :red[red] :material/home:",
        "see http://evil.test/a and www.evil.test",
        "mail me@evil.test",
        "# heading\n- item\n> quote\n1. one",
        "| a | b |\n|---|---|\n| 1 | 2 |",
        "`code` **bold** _it_ ~~gone~~ \\ back",
        "&lt; &amp; &#60;",
        "p0/a*b_c",
    ],
)
def test_plain_shows_a_data_string_as_text_only(text):
    out = _inline_tokens(render.plain(text))
    assert all(t != "autolink" and t.type in ("text", "softbreak", "hardbreak") for t in out), (text, out)
    shown = "".join(t.content if t.type == "text" else "\n" for t in out).replace("\u2060", "")
    assert shown == text


@settings(max_examples=800, deadline=None)
@given(
    st.lists(
        st.sampled_from(list("<>/&\"'=`\\ \n*_[]()!:|-#$~@.ab") + ["http://", "www.", "javascript:", "img"]),
        max_size=40,
    ).map("".join)
)
@example("_@-.a")  # an e-mail address to GFM, though its domain starts with "-"
def test_plain_never_lets_markdown_or_html_through(text):
    out = _inline_tokens(render.plain(text))
    assert all(t != "autolink" and t.type in ("text", "softbreak", "hardbreak") for t in out), (text, out)
    shown = "".join(t.content if t.type == "text" else "\n" for t in out).replace("\u2060", "")
    # Markdown drops spaces at the ends of lines and a break at either end; the rest is as typed
    assert re.sub(r"\s", "", shown) == re.sub(r"\s", "", text)


def test_image_html_is_keyed_by_item_and_escaped():
    h = render.image_html(b"\xff\xd8jpeg", item_id='i"1', alt="x<y")
    assert 'data-item="i&quot;1"' in h and "data:image/jpeg;base64," in h and "x&lt;y" in h
    miss = render.image_html(None, item_id="i2", alt="", missing_reason="file <gone>")
    assert "Image missing" in miss and "file &lt;gone&gt;" in miss and "<img" not in miss


# -- the label form ----------------------------------------------------------------------
def test_form_rules():
    full = form.FormInput(left="correct", right="incorrect", preference="left")
    assert form.problems(full) == []
    assert form.problems(form.FormInput()) == [
        "rate the left response",
        "rate the right response",
        "choose a preference",
    ]
    tie = form.FormInput(left="correct", right="correct", preference="tie")
    assert form.problems(tie) == ["write a rationale: a tie needs a rationale"]
    assert form.problems(form.FormInput("unsure", "correct", "right", rationale="  ")) == [
        "write a rationale: an 'unsure' needs a rationale"
    ]
    assert form.problems(form.FormInput(flag="broken_image")) == ["write a rationale: a flag needs a short note"]
    assert form.problems(form.FormInput(flag="broken_image", rationale="blank")) == []
    assert form.problems(tie, frozenset({"never"})) == []
    assert form.problems(full, frozenset({"always"})) == [
        "write a rationale: the guidelines ask for a rationale on every label"
    ]


def test_rationale_rule_comes_from_the_project(sqlite_store):
    assert form.rationale_rule(sqlite_store) == form.DEFAULT_RATIONALE_RULE
    sqlite_store.set_setting("rationale_required", "always")
    assert form.rationale_rule(sqlite_store) == frozenset({"always"})


@pytest.mark.parametrize("left_side", ["first", "second"])
@given(
    left=st.sampled_from(["correct", "incorrect", "unsure"]),
    right=st.sampled_from(["correct", "incorrect", "unsure"]),
    p=st.sampled_from(["left", "right", "tie"]),
)
def test_sides_round_trip(left_side, left, right, p):
    f = form.FormInput(left, right, p, rationale="why")
    lab = form.to_label(f, pair_id="p", annotator="a", left_side=left_side, seconds=2.5)
    shown_left = lab.correctness_first if left_side == "first" else lab.correctness_second
    assert shown_left == left
    if p != "tie":
        assert lab.preference == (left_side if p == "left" else {"first": "second", "second": "first"}[left_side])
    assert form.from_label(lab, left_side) == f
    assert lab.seconds == 2.5


def test_key_legend_covers_every_decision():
    for k in ("1", "2", "3", "8", "9", "0", "a", "t", "d", "Enter", "s", "u", "z"):
        assert k in keys.KEYS
    for k in ("`1`", "`8`", "`A`", "`T`", "`D`", "`E`", "`F`", "`Enter`", "`S`", "`U`", "`Z`"):
        assert k in keys.LEGEND
    for k in ("1", "2", "3", "8", "9", "0", "a", "t", "d", "x", "Enter", "n", "z"):
        assert k in keys.ADJ_KEYS and f"`{k.upper() if len(k) == 1 else k}`" in keys.ADJ_LEGEND
    assert "st-key-" in keys.script() and keys.script().startswith("<script>")
    for m in keys.MAPS:  # R and C are Streamlit's own (rerun, clear cache)
        assert not {"r", "c"} & (set(m.keys) | set(m.cycle) | set(m.focus)), m.root
        assert m.root in keys.script() and m.submit in keys.script()


def test_the_forms_show_beside_each_option_the_key_that_picks_it():
    """The hints come from the key maps: one key per option of the vocabulary the form offers."""
    assert keys.option_keys(keys.KEYS, "q_pref") == {0: "A", 1: "T", 2: "D"}
    assert SCREEN_PREFERENCES == ("left", "tie", "right")  # A left, T tie, D right
    assert keys.option_keys(keys.KEYS, "q_right") == {0: "8", 1: "9", 2: "0"}
    assert len(keys.option_keys(keys.KEYS, "q_left")) == len(CORRECTNESS)
    # the adjudication form's first option is "no decision", picked by no key
    assert keys.option_keys(keys.ADJ_KEYS, "adj_first") == {1: "1", 2: "2", 3: "3"}


# -- the queue ---------------------------------------------------------------------------
def test_views_are_blind_and_follow_the_assignment_side(store):
    seed_store(store, n_pairs=3, annotators=("alice", "bob"))
    va, vb = queue.current_view(store, "alice"), queue.current_view(store, "bob")
    assert (va.pair_id, vb.pair_id) == ("p0", "p0")
    assert va.left_text.startswith("Answer A0") and vb.left_text.startswith("Answer B0")  # bob: second on the left
    for field in ("model", "known_preference", "is_gold"):
        assert not hasattr(va, field)
    assert queue.current_view(store, "nobody") is None
    assert queue.own_view(store, "alice", "p-missing") is None


def test_save_turns_a_lost_race_into_a_message(store):
    seed_store(store, n_pairs=2, annotators=("alice",))
    lab = Label("p0", "alice", "correct", "correct", "first")
    assert queue.save(store, lab).ok
    res = queue.save(store, lab)
    assert not res.ok and res.conflict and "already submitted" in res.message
    res = queue.save(store, lab, expected_revision=7)
    assert not res.ok and "changed elsewhere" in res.message
    edited = queue.save(store, Label("p0", "alice", "correct", "correct", "second"), expected_revision=1)
    assert edited.ok and edited.label.revision == 2
    rows = queue.my_labels(store, "alice")
    assert [r[0].pair_id for r in rows] == ["p0"]
    assert form.from_label(rows[0][0], "second").preference == "left"


def test_a_label_turns_into_screen_terms_in_one_place():
    """form.from_label is the one way from a saved Label to left/right (the label page's
    prefill, My labels' table and its edits), annotate/scheme_form.py's for a scheme's label
    (through curate.schemes.shown_values); the other things shown in screen terms are a
    verify scheme's proposal and, on the adjudication page, a label's side as its annotator
    saw it (render.as_seen: "first (their right)", beside the stored word): nothing else in
    annotate calls preference_to_screen."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    callers = set()
    for path in [*root.glob("annotate/**/*.py"), root / "app.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = {id(n): f"{path.relative_to(root)}:<module>" for n in ast.walk(tree)}
        for fn in ast.walk(tree):  # outer functions first, so the innermost name wins
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where.update((id(n), f"{path.relative_to(root)}:{fn.name}") for n in ast.walk(fn))
        callers |= {
            where[id(node)]
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "preference_to_screen"
        }
    assert callers == {
        "annotate/form.py:from_label",
        "annotate/scheme_form.py:proposal_words",
        "annotate/render.py:as_seen",
    }


def test_missing_image_view(sqlite_store):
    seed_store(sqlite_store, n_pairs=3, annotators=("alice",), missing_at=0)
    v = queue.current_view(sqlite_store, "alice")
    assert v.image_sha256 is None and v.image_status == "missing"
    assert not v.image_deliberately_missing
    assert pair_ui.missing_reason(v) == pair_ui.MISSING["missing"]  # nothing about the sample


def test_the_samples_deliberately_missing_image_says_so_only_where_the_item_says_so(sqlite_store):
    from annotate import demo
    from curate.model import Annotator, Assignment, Candidate, ImageRef, Item, Pair

    s = sqlite_store
    gone = ImageRef("images/street-scene.png", None, "missing", error="image file not found")
    s.add_items(
        [Item("vqa-04", "What colour is the car?", "vqa", (gone,), metadata={demo.DELIBERATE_MISSING_IMAGE: True})]
    )
    s.add_candidates([Candidate(f"c{n}", "vqa-04", f"m{n}", f"answer {n}") for n in (1, 2)])
    s.add_pairs([Pair("p", "vqa-04", "c1", "c2", origin="test")])
    s.add_annotator(Annotator("alice"))
    s.add_assignments([Assignment(pair_id="p", annotator="alice", left="first", seq=0)])
    v = queue.current_view(s, "alice")
    assert v.image_deliberately_missing
    assert pair_ui.missing_reason(v) == f"{pair_ui.MISSING['missing']} {demo.DELIBERATE_MISSING_NOTE}"


# -- admin figures -----------------------------------------------------------------------
def test_admin_figures(store):
    seed_store(store, n_pairs=3, annotators=("alice", "bob"))
    store.save_label(Label("p0", "alice", "correct", "incorrect", "first", seconds=10))
    store.save_label(Label("p0", "bob", "correct", "incorrect", "second", seconds=30))
    store.save_label(Label("p1", "alice", "correct", "incorrect", "first", seconds=20))
    store.save_label(Label("p1", "bob", "correct", "incorrect", "first", seconds=20))
    prog = admin.progress_by_annotator(store).set_index("annotator")
    assert prog.loc["alice", "done"] == 2 and prog.loc["alice", "assigned"] == 3
    assert prog.loc["alice", "median_seconds"] == 15
    assert pd.isna(prog.loc["alice", "labels_per_hour"])  # two labels in 30 s: too little for a rate
    assert prog.loc["lead", "assigned"] == 0
    cats = admin.progress_by_category(store)
    assert cats.to_dict("records") == [dict(category="vqa", assigned=6, done=4, share_done=0.667)]
    short = admin.short_of_overlap(store)
    assert short["pair"].tolist() == ["p2"] and short["waiting_on"].tolist() == ["alice, bob"]
    rep = admin.lead_report(store, resamples=50)
    assert rep.fields["preference"].n_pairable == 2 and rep.fields["preference"].percent_agreement.value == 0.5
    # two pairs: a value, but no interval (below curate.agreement.stats.MIN_BOOTSTRAP_PAIRS)
    assert rep.fields["preference"].alpha.value is not None and rep.fields["preference"].alpha.low is None
    assert rep.fields["correctness_first"].alpha.value is None  # every label "correct": undefined
    assert set(rep.categories) == {"vqa"}


# -- adjudication (annotate/adjudication.py, render.reference_html / labels_html) ----------
def _adjudication_store(store):
    from curate.model import Adjudication, Item

    seed_store(store, n_pairs=4, annotators=("alice", "bob"))
    with store.write() as c:  # p3's item in another category
        store.add_items([Item("i9", "Chart?", "chart")], conn=c)
    store.update_pair("p3", item_id="i9", auto_first="correct", auto_second="incorrect", auto_method="number")
    labs = {
        "p0": (("correct", "incorrect", "first"), ("correct", "incorrect", "second")),  # preference
        "p1": (("correct", "incorrect", "first"), ("correct", "incorrect", "first")),  # agree
        "p2": (("correct", None, "first"), ("incorrect", "unsure", "first")),  # both correctness fields
        "p3": (("correct", "incorrect", "first"), ("unsure", "incorrect", "tie")),
    }
    for pid, (a, b) in labs.items():
        store.save_label(Label(pid, "alice", *a, rationale="A's **why**", seconds=12.25))
        store.save_label(Label(pid, "bob", *b, rationale="<b>B</b>", seconds=3))
    store.set_adjudication(Adjudication("p2", "lead", "first"))


def test_disagreements_say_on_what_and_in_which_category(store):
    _adjudication_store(store)
    rows = adjudication.disagreements(store)
    got = {r.pair_id: (r.category, r.fields, r.pending, len(r.labels)) for r in rows}
    assert got == {
        "p0": ("vqa", ("preference",), True, 2),
        "p2": ("vqa", ("correctness_first", "correctness_second"), False, 2),
        "p3": ("chart", ("correctness_first", "preference"), True, 2),
    }
    assert [r.pair_id for r in rows] == ["p0", "p2", "p3"]
    narrow = adjudication.narrow
    assert [r.pair_id for r in narrow(rows, categories=["chart"])] == ["p3"]
    assert [r.pair_id for r in narrow(rows, fields=["preference"])] == ["p0", "p3"]
    assert [r.pair_id for r in narrow(rows, fields=["correctness_second"])] == ["p2"]
    assert [r.pair_id for r in narrow(rows, categories=["vqa"], fields=["correctness_first"])] == ["p2"]
    assert narrow(rows, categories=["none"]) == [] and narrow(rows) == rows


def test_next_pending_walks_the_undecided_ones_round(store):
    _adjudication_store(store)
    rows = adjudication.disagreements(store)  # p0 pending, p2 decided, p3 pending
    nxt = adjudication.next_pending
    assert nxt(rows, None) == "p0"
    assert nxt(rows, "p0") == "p3" and nxt(rows, "p2") == "p3" and nxt(rows, "p3") == "p0"
    only = [r for r in rows if r.pair_id != "p3"]
    assert nxt(only, "p0") == "p0"  # the only one left: stay on it
    assert nxt(only, "p0", again=False) is None  # just decided: nothing left
    assert nxt([r for r in rows if r.pair_id == "p2"], None) is None


def test_a_case_carries_the_image_reference_and_automatic_verdict(store):
    _adjudication_store(store)
    c = adjudication.case(store, "p3")
    assert c.item.prompt == "Chart?" and c.image is None and c.first.model == "model-alpha"
    assert (c.auto.first, c.auto.second, c.auto.method) == ("correct", "incorrect", "number")
    c0 = adjudication.case(store, "p0")
    assert c0.auto is None and c0.image.status == "ok" and c0.image.sha256
    # which response each annotator saw on the left (seed_store alternates them)
    assert c0.left_of == {"alice": "first", "bob": "second"} and adjudication.case(store, "p1").left_of == {
        "alice": "second",
        "bob": "first",
    }
    assert adjudication.case(store, "nope") is None


def test_reference_and_labels_render_as_text_and_markdown():
    from curate.model import Label

    ref = render.reference_html(
        "**42** <script>x</script>", adjudication.AutoCheck("correct", None, "num<b>", "42", None)
    )
    assert "<strong>42</strong>" in ref and "&lt;script&gt;" in ref and "num&lt;b&gt;" in ref
    assert "first <b>correct</b> (read &ldquo;42&rdquo;)" in ref and "second not decided" in ref
    none = render.reference_html(None, None)
    assert "No reference answer." in none and "No automatic correctness verdict." in none
    labs = [
        Label(
            "p",
            "al<i>",
            "correct",
            None,
            "tie",
            rationale="**why** <img src=x>",
            seconds=12.25,
            updated_at="2025-03-04T05:06:07+00:00",
            flag="other",
            flag_note="see <b>",
        ),
    ]
    out = render.labels_html(labs, ("preference",), {"al<i>": "second"})
    assert "al&lt;i&gt;" in out and "<strong>why</strong>" in out and "&lt;img src=x&gt;" in out
    assert "12.2 s" in out and "2025-03-04 05:06 UTC" in out and "see &lt;b&gt;" in out and "–" in out
    assert out.count("background:#fff3cd") == 2  # the preference header and its cell
    assert ">Saw on the left</th>" in out and re.search(r"al&lt;i&gt;</b></td><td[^>]*>second</td>", out)
    # no assignment (a label imported from a file): not known
    assert re.search(r"al&lt;i&gt;</b></td><td[^>]*>–</td>", render.labels_html(labs))


@pytest.mark.parametrize(
    "seconds, rate",
    [
        ([60.0] * 9, None),  # 9 labels: too few, however long
        ([10.0] * 59, None),  # 59 labels in 590 s: not yet 10 minutes
        ([60.0] * 10, 60.0),  # 10 labels in 10 minutes
        ([15.0] * 40 + [1200.0], 82.0),  # 41 labels in half an hour
    ],
)
def test_labels_per_hour_only_over_enough_work(seconds, rate):
    assert admin.labels_per_hour(seconds) == rate


def test_alpha_table_says_undefined_and_explains_each_reason_once(store):
    seed_store(store, n_pairs=3, annotators=("alice", "bob"))
    for p in ("p0", "p1"):
        store.save_label(Label(p, "alice", "correct", "incorrect", "first"))
        store.save_label(Label(p, "bob", "correct", "correct", "first" if p == "p0" else "second"))
    rep = admin.lead_report(store, resamples=50)
    rows = summary.alpha_rows(rep)
    t = admin.alpha_table(rows)
    assert list(t.frame.columns) == [
        "Field",
        "Category",
        "Pairs",
        "Labels",
        "Alpha",
        "From",
        "To",
        "Agree",
    ]
    by = {(r["Field"], r["Category"]): r for r in t.frame.to_dict("records")}
    first = by[("Correctness, first response", summary.ALL)]
    # undefined: an empty number (its reason in the notes), never 0 nor the word in a number column
    assert pd.isna(first["Alpha"]) and first["Agree"] == 100.0
    vqa = by[("Preference", "Visual question answering")]  # the category by its name
    assert isinstance(vqa["Alpha"], float) and pd.isna(vqa["From"])  # a value, no interval
    notes = admin.alpha_notes(rows, min_pairs=rep.min_pairs)
    assert notes == [
        "Undefined (Correctness, first response; Correctness, first response in Visual question answering): every "
        "pairable label is 'correct': no variation, alpha is undefined.",
        "[undefined] interval: fewer than 10 pairs with two or more labels, too few for a bootstrap interval.",
    ]
    numeric = ["Pairs", "Labels", "Alpha", "From", "To", "Agree"]
    assert all(pd.api.types.is_float_dtype(t.frame[c]) for c in numeric), t.frame.dtypes


def test_alpha_matrix_is_numbers_per_category_and_field_empty_where_undefined(store):
    seed_store(store, n_pairs=3, annotators=("alice", "bob"))
    for p in ("p0", "p1"):
        store.save_label(Label(p, "alice", "correct", "incorrect", "first"))
        store.save_label(Label(p, "bob", "correct", "correct", "first" if p == "p0" else "second"))
    rows = summary.alpha_rows(admin.lead_report(store, resamples=50))
    t = admin.alpha_matrix(rows)
    fields = ["Preference", "Correctness, first response", "Correctness, second response"]
    assert list(t.frame.columns) == ["Category", *fields]
    assert t.frame["Category"].tolist() == [summary.ALL, "Visual question answering"]
    assert all(pd.api.types.is_float_dtype(t.frame[f]) for f in fields) and t.formats == dict.fromkeys(fields, "%.3f")
    alpha = {(r.category, summary.field_title(r.field)): r.alpha for r in rows}
    for rec in t.frame.to_dict("records"):
        cat = summary.ALL if rec["Category"] == summary.ALL else "vqa"
        for f in fields:
            want = alpha[cat, f]
            assert pd.isna(rec[f]) if want is None else rec[f] == want  # undefined stays empty, never 0
    assert "undefined" in t.helps["Preference"]
    # sorted by a field, the rows follow its numbers, the undefined last
    assert t.frame.sort_values("Preference")["Preference"].dropna().is_monotonic_increasing


# -- the pair as HTML (render.markdown_html, item_html, responses_html) -----------------------
@pytest.mark.parametrize(
    "text, shown, absent",
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;", "<script"),
        ('<img src=x onerror="alert(1)">', "&lt;img src=x onerror=", "<img"),
        ("[click](javascript:alert(1))", "[click](javascript:alert(1))", "href"),
        ("![pixel](http://tracker.example/p.png)", "[image: pixel &lt;http://tracker.example/p.png&gt;]", "<img"),
        ("![a][r]\n\n[r]: http://tracker.example/r.png", "[image: a &lt;http://tracker.example/r.png&gt;]", "<img"),
        ("[d](data:image/png;base64,AAAA) [f](file:///etc/passwd)", "[d](data:image/png;base64,AAAA)", "href"),
        ("[ok](https://example.org/a) [rel](/label) [m](mailto:a@b.c)", '<a href="https://example.org/a">', "<img"),
        ("Inline `code <b>` stays", "<code>code &lt;b&gt;</code>", "<b>"),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "<table>", "<script"),
        ("**bold** and *it*", "<strong>bold</strong>", "<script"),
    ],
)
def test_markdown_html_renders_markdown_and_no_html_of_its_own(text, shown, absent):
    out = render.markdown_html(text)
    assert shown in out and absent not in out


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/&\"'=` \n*[]()!:|-#scriptimgonerrorjavascript")), max_size=120))
def test_markdown_html_never_lets_a_tag_or_handler_through(text):
    import re

    out = render.markdown_html(text)
    # the only tags are the ones Markdown makes; no attribute but href/title/class/start/align
    for tag in re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", out):
        assert tag in {
            "p",
            "em",
            "strong",
            "code",
            "pre",
            "a",
            "ul",
            "ol",
            "li",
            "blockquote",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "hr",
            "br",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
        }, (tag, out)
    for attr in re.findall(r"<[a-z0-9]+((?:\s+[^\s=>]+(?:=\"[^\"]*\")?)*)\s*/?>", out):
        for name in re.findall(r"\s([^\s=]+)=", attr):
            assert name in {"href", "title", "class", "start", "style"}, (name, out)
    for href in re.findall(r'href="([^"]*)"', out):
        assert not href.lower().lstrip().startswith(("javascript:", "vbscript:", "data:")), out


def test_responses_html_marks_both_sides_with_the_pair_token():
    out = render.responses_html("abc123", "left **text**", "<b>right</b>")
    assert out.count('data-pair="abc123"') == 2
    assert "mmrb-response-left" in out and "mmrb-response-right" in out
    assert "<strong>text</strong>" in out and "&lt;b&gt;right&lt;/b&gt;" in out


def test_item_html_escapes_the_category_and_renders_the_prompt():
    out = render.item_html('<div data-item="i1"></div>', "vqa<script>", "What is **this**?")
    assert "Vqa&lt;script&gt;" in out and "<strong>this</strong>" in out and 'data-item="i1"' in out


# -- store failures (annotate/outage.py) ---------------------------------------------------
def test_store_failures_are_told_from_answers_and_bugs(tmp_path):
    from sqlalchemy.exc import IntegrityError, OperationalError

    from curate.errors import StoreError
    from curate.store import ConflictError, Store

    down = OperationalError("SELECT 1", {}, Exception("connection refused"))
    assert outage.failure_reason(down) == outage.UNREACHABLE
    try:  # "cannot open the store" wraps the driver's error
        raise StoreError("cannot open the store x: OperationalError") from down
    except StoreError as e:
        assert outage.failure_reason(e) == outage.UNREACHABLE
    assert outage.failure_reason(IntegrityError("INSERT", {}, Exception("x"))) == outage.REFUSED  # said as it is
    assert not outage.is_store_failure(ConflictError("already labelled"))  # an answer, shown as such
    assert not outage.is_store_failure(StoreError("schema version 9 is newer"))  # a retry does not fix it
    assert not outage.is_store_failure(KeyError("a bug"))
    # a real one: a PostgreSQL URL where nothing listens
    from tests.support.streamlit_server import free_port

    with pytest.raises(StoreError) as got:
        Store(f"postgresql://u:p@127.0.0.1:{free_port()}/x", images=tmp_path)
    assert outage.failure_reason(got.value) == outage.UNREACHABLE


def test_backoff_doubles_up_to_a_cap_and_the_message_is_one_calm_line():
    assert [outage.backoff(n) for n in range(1, 7)] == [1, 2, 4, 8, 8, 8]
    m = outage.message(2, 4, saving=True)
    assert m == (
        "Not saved yet: the database is not reachable. Your answers are kept below; retrying in 4 s "
        "(attempt 3). No need to reload."
    )
    assert outage.message(1, 0.2, saving=False) == (
        "The database is not reachable; retrying in 1 s (attempt 2). No need to reload."
    )
    assert outage.message(1, 3, saving=True, reason=outage.REFUSED).startswith(
        "Not saved yet: the database could not do this (the error is in the server log). Your answers are kept"
    )


def test_plain_shows_indented_text_as_text_not_as_a_code_block():
    # four leading spaces made a code block, which showed the escape backslashes ('\<b\>')
    out = _inline_tokens(render.plain("    <b>x</b>\n\tnext"))
    assert [t.content for t in out if t.type == "text"] == ["<b>x</b>", "next"]


def test_categories_read_as_their_titles_from_one_table():
    from annotate.render import item_html
    from curate.model import CATEGORY_TITLES, DEFAULT_CATEGORIES, category_title

    assert set(DEFAULT_CATEGORIES) <= set(CATEGORY_TITLES)  # every category the importers know
    assert category_title("open_generation/correctness_task") == "Open-ended generation (correctness)"
    assert category_title("chart_qa/hard") == "Chart qa hard" and category_title("") == ""
    assert "Prompt · Visual question answering" in item_html("", "vqa", "What is it?")
    assert "Prompt · Text to image" in item_html("<img>", "t2i", "Draw it.")


def test_my_labels_names_a_label_by_its_prompt_on_one_line():
    from annotate.queue import own_rows
    from curate.model import Assignment, Item, Label
    from curate.wording import snippet

    assert snippet("Read the\n**chart**:  how many bars?") == "Read the **chart**: how many bars?"
    assert snippet("x" * 200) == "x" * 79 + "…" and snippet("x" * 80) == "x" * 80
    lab, a = Label("p0", "ann", preference="first"), Assignment("p0", "ann", "second", 0)
    (row,) = own_rows([(lab, a)], items={"p0": Item("i0", "What\nis it?", "t2i")})
    assert (row["Prompt"], row["Category"], row["Better"]) == ("What is it?", "Text to image", "right")
    (row,) = own_rows([(lab, a)])  # the item gone: the pair id stands in
    assert (row["Prompt"], row["Category"]) == ("p0", None)


def test_progress_line_counts_skips_apart_from_labels():
    from annotate.queue import progress_line
    from curate.store import QueueProgress

    assert progress_line(QueueProgress(done=2, skipped=1, assigned=39)) == "1 labelled, 1 skipped of 39"
    assert progress_line(QueueProgress(0, 0, 0), "Saved.") == ":green[Saved.] 0 labelled, 0 skipped of 0"
