"""The rules of a scheme's label form (annotate/scheme_form.py): screen answers -> problems in
form order -> a Label in stored terms, and back; on tiny literal schemes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from annotate.scheme_form import (
    SchemeInput,
    choices,
    from_label,
    is_default_form,
    note_field,
    option_title,
    problems,
    proposal_words,
    to_label,
)
from curate.schemes import BUILT_IN, from_table

SCALE = from_table(
    {
        "name": "tiny-scale",
        "version": 3,
        "field": [
            {"name": "score", "kind": "scale", "points": ["right better", "even", "left better"], "sides": True},
            {"name": "why", "kind": "text", "required": False},
        ],
        "preference": {"rule": "scale", "field": "score"},
    }
)
PER = from_table(
    {
        "name": "tiny-per",
        "field": [
            {"name": "ok", "kind": "choice_per_response", "values": ["yes", "no"]},
            {"name": "tags", "kind": "multi", "values": ["blurry", "off-topic"], "required": False},
            {"name": "pick", "kind": "choice", "values": ["first", "tie", "second"], "sides": True},
            {"name": "rationale", "kind": "text", "required_when": {"pick": ["tie"]}},
        ],
        "preference": {"rule": "field", "field": "pick"},
    }
)
NO_TEXT = from_table({"name": "tiny-bare", "field": [{"name": "c", "kind": "choice", "values": ["x", "y"]}]})


def label_of(scheme, values, left="first", **kw):
    answers = SchemeInput(values, **kw)
    assert problems(scheme, answers, left) == []
    return to_label(scheme, answers, pair_id="p", annotator="ann", left_side=left, seconds=2.5)


def test_a_side_scale_is_stored_as_shown_when_the_first_is_left_and_mirrored_when_it_is_right():
    assert choices(SCALE.field("score")) == (1, 2, 3)
    assert option_title(SCALE.field("score"), 3) == "3 left better"
    kept = label_of(SCALE, {"score": 3}, "first")
    mirrored = label_of(SCALE, {"score": 3}, "second")
    assert (kept.ratings, kept.preference) == ({"score": 3}, "first")
    assert (mirrored.ratings, mirrored.preference) == ({"score": 1}, "second")
    assert kept.scheme_version == 3 and kept.seconds == 2.5 and kept.status == "submitted"


def test_per_response_multi_side_choice_and_text_in_stored_terms():
    got = label_of(PER, {"ok": ("yes", "no"), "tags": ["blurry"], "pick": "left", "rationale": " fine "}, "second")
    assert got.ratings == {"ok_first": "no", "ok_second": "yes", "tags": ["blurry"], "pick": "second"}
    assert (got.preference, got.rationale) == ("second", "fine")
    assert choices(PER.field("pick")) == ("left", "tie", "right")
    assert [option_title(PER.field("pick"), v) for v in ("left", "tie", "right")] == [
        "left better",
        "tie",
        "right better",
    ]


def test_problems_come_in_form_order_with_the_condition_that_made_a_field_required():
    assert problems(PER, SchemeInput({}), "first") == [
        "ok: answer for the left and the right response",
        "answer 'pick'",
    ]
    got = problems(PER, SchemeInput({"ok": ("yes", None), "pick": "tie"}), "second")
    assert got == ["ok: answer for the right response", "write the rationale (required when pick is tie)"]


def test_unknown_answers_are_refused_and_nothing_is_derived_from_them():
    got = problems(PER, SchemeInput({"ok": ("yes", "maybe"), "tags": ["loud"], "pick": "first"}), "first")
    assert got == [
        "unknown answer 'maybe' to 'ok'",
        "unknown answer 'loud' to 'tags'",
        "unknown answer 'first' to 'pick'",
    ]
    assert problems(SCALE, SchemeInput({"score": 4}), "first") == ["unknown answer 4 to 'score'"]
    assert problems(SCALE, SchemeInput({"score": True}), "first") == ["unknown answer True to 'score'"]
    assert problems(SCALE, SchemeInput({"score": 2}, flag="nonsense"), "first") == [
        "unknown flag reason 'nonsense'",
        "a flag needs a short note",
    ]


def test_text_that_cannot_be_stored_alike_is_refused():
    assert problems(SCALE, SchemeInput({"score": 2, "why": "a\x00b"}), "first")[0].startswith("the why ")


def test_a_flag_stands_in_for_the_answers_and_needs_a_note():
    assert problems(PER, SchemeInput({}, flag="unsafe_content"), "first") == ["a flag needs a short note"]
    got = label_of(PER, {"rationale": "a weapon"}, flag="unsafe_content")
    assert (got.flag, got.flag_note, got.rationale, got.preference) == ("unsafe_content", "a weapon", "a weapon", None)
    # a scheme without a text field: the note is the form's own box
    assert note_field(NO_TEXT) is None
    assert problems(NO_TEXT, SchemeInput({}, flag="unsafe_content"), "first") == ["a flag needs a short note"]
    bare = label_of(NO_TEXT, {}, flag="unsafe_content", note=" gore ")
    assert (bare.flag_note, bare.rationale) == ("gore", "")
    assert from_label(NO_TEXT, bare, "first") == SchemeInput({}, "unsafe_content", "gore")


def test_verify_keeps_the_proposal_shown_and_says_it_in_screen_terms():
    v = BUILT_IN["verify"]
    assert proposal_words("first", "second") == "The judges propose: right is better."
    assert proposal_words("tie", "first") == "The judges propose: a tie."
    assert proposal_words(None, "first") == "The judges proposed no preference for this pair."
    assert problems(v, SchemeInput({"verdict": "disagree"}), "first") == [
        "answer 'Which response is better, then?' (required when verdict is disagree)",
        "write the rationale (required when verdict is disagree)",
    ]
    answers = SchemeInput({"verdict": "agree"})
    got = to_label(v, answers, pair_id="p", annotator="a", left_side="second", seconds=1, proposal="second")
    assert (got.preference, got.ratings) == ("second", {"verdict": "agree", "proposal": "second"})


def test_only_the_mmrb_scheme_itself_keeps_todays_form():
    assert is_default_form(BUILT_IN["mmrb"]) and not is_default_form(BUILT_IN["aspects"])


ASPECTS = BUILT_IN["aspects"]
point = st.sampled_from(choices(ASPECTS.field("helpfulness")))


@given(
    st.fixed_dictionaries(
        {a: st.tuples(point, point) for a in ("helpfulness", "faithfulness", "ethics")}
        | {"preference": st.sampled_from(("left", "tie", "right")), "rationale": st.text(min_size=1).map(str.strip)}
    ),
    st.sampled_from(("first", "second")),
)
def test_a_saved_label_reopens_as_it_was_answered(values, left):
    values = {k: v for k, v in values.items() if v != ""}
    answers = SchemeInput(values)
    if problems(ASPECTS, answers, left):
        return  # a rationale the store cannot keep alike, or a tie without one: refused, tested above
    saved = to_label(ASPECTS, answers, pair_id="p", annotator="a", left_side=left, seconds=0)
    assert from_label(ASPECTS, saved, left) == answers
    # the other side's annotator reading it sees the mirror image
    assert (
        from_label(ASPECTS, saved, "second" if left == "first" else "first").values["helpfulness"]
        == (values["helpfulness"][::-1])
    )


def test_the_view_carries_the_pairs_scheme_read_once_per_process_and_the_proposal(sqlite_store, monkeypatch):
    from annotate import queue
    from curate.schemes import to_table
    from tests.support.streamlit_server import seed_store

    s = sqlite_store
    seed_store(s, n_pairs=4, annotators=("alice",))
    v = BUILT_IN["verify"]
    s.add_scheme(SCALE.name, SCALE.version, to_table(SCALE))
    s.add_scheme(v.name, v.version, to_table(v))
    s.set_pair_scheme(["p0", "p1"], SCALE.name, SCALE.version)
    s.set_pair_scheme(["p2"], v.name, v.version)
    s.update_pair("p2", metadata={"proposal": "second"})
    reads = []
    real = s.scheme_definitions
    monkeypatch.setattr(s, "scheme_definitions", lambda conn=None: reads.append(1) or real(conn=conn))
    views = [queue.own_view(s, "alice", p) for p in ("p0", "p1", "p2", "p3")]
    assert [x.scheme for x in views] == [SCALE, SCALE, v, BUILT_IN["mmrb"]]
    assert [x.proposal for x in views] == [None, None, "second", None]
    assert len(reads) == 2  # once per stored version met, never per pair; mmrb without the store
    queue.own_view(s, "alice", "p1")
    assert len(reads) == 2


def test_my_labels_sums_up_a_scheme_label_on_the_annotators_sides():
    from annotate.scheme_form import answers_text
    from curate.schemes import BUILT_IN, to_label

    sc = BUILT_IN["aspects"]
    lab = to_label(
        sc,
        "p",
        "ann",
        {"helpfulness": (4, 2), "faithfulness": (3, None), "preference": "first", "rationale": "why"},
    )
    # shown with the second response on the left: sides swap, the preference is "right better"
    assert answers_text(sc, lab, "second") == (
        "Helpfulness: left 2 fair, right 4 very good; Faithfulness: right 3 good; "
        "Which response is better: right better"
    )
    assert answers_text(BUILT_IN["mmrb2-pairwise"], to_label(BUILT_IN["mmrb2-pairwise"], "p", "a", {}), "first") == ""
