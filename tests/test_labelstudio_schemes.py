"""Label Studio push/pull on a pair's annotation scheme, without a server: each control's result
-> the field's screen value -> stored terms (mirrored when the task showed the pair flipped) ->
a Label; what is refused and how it is named."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from label_studio_sdk.label_interface import LabelInterface

from annotate.labelstudio.config import PREFERENCE_CHOICES, config_problems, scheme_config, scheme_controls
from annotate.labelstudio.pull import _task_problems, convert_scheme, task_proposal
from annotate.labelstudio.push import build_tasks, config_scheme, one_scheme, shown_proposal
from curate.errors import MmrbError
from curate.model import Candidate, Item, Pair
from curate.schemes import BUILT_IN, from_table, label_values, shown_values, to_table

# one field of each kind Label Studio shows differently; a side-naming scale and choice
TINY = from_table(
    {
        "name": "tiny",
        "field": [
            {"name": "score", "kind": "scale", "points": ["B better", "same", "A better"], "sides": True, "low": 0},
            {"name": "stars", "kind": "scale_per_response", "points": ["bad", "ok", "good"]},
            {"name": "ok", "kind": "choice_per_response", "values": ["yes", "no"]},
            {"name": "winner", "kind": "choice", "values": ["first", "tie", "second"], "sides": True},
            {"name": "tags", "kind": "multi", "values": ["blurry", "off-topic"], "required": False},
            {"name": "note", "kind": "text", "required_when": {"winner": ["tie"]}},
        ],
        "preference": {"rule": "scale", "field": "score"},
    }
)
A_OR_B = {"left": "A", "right": "B", "tie": "Tie"}


def _task(left: str, **extra) -> dict:
    return {"id": 41, "data": {"pair_id": "p", "left": left, **extra}}


def _results(shown: dict) -> list[dict]:
    """What an annotator submits in Label Studio for TINY's values as they saw them (the
    test's own encoding of the config: a scale's choice is its labelled point, a Rating counts
    stars from 1, a side-naming choice is A / Tie / B)."""
    out = []

    def add(name, to, rtype, value):
        out.append({"from_name": name, "to_name": to, "type": rtype, "value": value})

    if "score" in shown:
        n = shown["score"]
        add("score", "prompt", "choices", {"choices": [f"{n} {['B better', 'same', 'A better'][n]}"]})
    for side, to, i in (("a", "response_a", 0), ("b", "response_b", 1)):
        if shown.get("stars") and shown["stars"][i] is not None:
            add(f"stars_{side}", to, "rating", {"rating": shown["stars"][i]})
        if shown.get("ok") and shown["ok"][i] is not None:
            add(f"ok_{side}", to, "choices", {"choices": [shown["ok"][i]]})
    if "winner" in shown:
        add("winner", "prompt", "choices", {"choices": [A_OR_B[shown["winner"]]]})
    if shown.get("tags"):
        add("tags", "prompt", "choices", {"choices": list(shown["tags"])})
    if "note" in shown:
        add("note", "prompt", "textarea", {"text": [shown["note"]]})
    return out


def _convert(results, task, scheme=TINY, version=3):
    return convert_scheme(
        {"id": 5, "result": results, "lead_time": 4.0}, task, "ann", "task 41, annotation 5", scheme, version
    )


def test_results_map_to_stored_terms_shown_in_order():
    shown = {"score": 2, "stars": (3, 1), "ok": ("yes", "no"), "winner": "left", "tags": ["blurry"], "note": "n"}
    label, problems = _convert(_results(shown), _task("first"))
    assert problems == []
    assert label.preference == "first"  # 2 above the midpoint 1
    assert dict(label.ratings) == {
        "score": 2,
        "stars_first": 3,
        "stars_second": 1,
        "ok_first": "yes",
        "ok_second": "no",
        "winner": "first",
        "tags": ["blurry"],
        "note": "n",
    }
    assert (label.scheme_version, label.source, label.seconds) == (3, "labelstudio", 4.0)


def test_results_map_to_stored_terms_shown_flipped():
    shown = {"score": 2, "stars": (3, 1), "ok": ("yes", "no"), "winner": "left", "tags": ["blurry"], "note": "n"}
    label, problems = _convert(_results(shown), _task("second"))
    assert problems == []
    # the second response was on the left: "A better" (2) is the second better (0), the
    # left's stars and correctness are the second's, "A" is the second
    assert label.preference == "second"
    assert dict(label.ratings) == {
        "score": 0,
        "stars_first": 1,
        "stars_second": 3,
        "ok_first": "no",
        "ok_second": "yes",
        "winner": "second",
        "tags": ["blurry"],
        "note": "n",
    }


stored_values_st = st.fixed_dictionaries(
    {
        "score": st.integers(0, 2),
        "stars": st.tuples(st.integers(1, 3), st.integers(1, 3)),
        "ok": st.tuples(st.sampled_from(["yes", "no"]), st.sampled_from(["yes", "no"])),
        "winner": st.sampled_from(["first", "second"]),
        "tags": st.sampled_from([["blurry"], ["off-topic"], ["blurry", "off-topic"]]),
        "note": st.text("abc ", max_size=5).map(str.strip),
    }
)


@given(stored_values_st, st.sampled_from(["first", "second"]))
def test_any_stored_answer_shown_either_way_comes_back_the_same(stored, left):
    shown = shown_values(TINY, stored, left)
    label, problems = _convert(_results(shown), _task(left))
    assert problems == []
    back = label_values(TINY, label)
    assert back == {k: v for k, v in stored.items() if v != ""}


def test_a_missing_required_field_or_an_unknown_value_is_named_and_nothing_is_made():
    full = {"score": 1, "stars": (3, 1), "ok": ("yes", "no"), "winner": "tie", "note": "same"}
    no_note = {k: v for k, v in full.items() if k != "note"}
    label, problems = _convert(_results(no_note), _task("first"))
    assert label is None and problems == ["task 41, annotation 5: field note is required but has no answer"]

    half = _results(full)
    half = [r for r in half if r["from_name"] != "ok_b"]  # one response's answer only
    label, problems = _convert(half, _task("second"))
    assert label is None and problems == ["task 41, annotation 5: field ok is required but has (None, 'yes')"]

    bad = _results(full)
    for r in bad:
        if r["from_name"] == "stars_a":
            r["value"] = {"rating": 4}
        if r["from_name"] == "winner":
            r["value"] = {"choices": ["Left"]}
    label, problems = _convert(bad, _task("first"))
    assert label is None
    assert problems == [
        "task 41, annotation 5: field stars_a has rating 4, expected 1 to 3",
        "task 41, annotation 5: field winner has choices ['Left'], expected one of ['A', 'Tie', 'B']",
    ]
    odd = [*_results(full), {"from_name": "mood", "type": "choices", "value": {"choices": ["x"]}}]
    assert _convert(odd, _task("first"))[1] == [
        "task 41, annotation 5: result 7 has an unexpected from_name 'mood' (type 'choices')"
    ]


def test_flag_and_note_are_read_in_every_scheme():
    res = _results({"score": 1, "stars": (1, 1), "ok": ("no", "no"), "winner": "left"})
    res += [
        {"from_name": "flag", "type": "choices", "value": {"choices": ["Unclear prompt"]}},
        {"from_name": "flag_note", "type": "textarea", "value": {"text": ["which one?"]}},
    ]
    label, problems = _convert(res, _task("first"))
    assert problems == [] and (label.flag, label.flag_note) == ("unclear_prompt", "which one?")
    assert "flag" not in label.ratings


@pytest.mark.parametrize("left", ["first", "second"])
def test_verify_keeps_the_proposal_the_task_showed(left):
    verify = BUILT_IN["verify"]
    shown = shown_proposal("second", left)
    assert shown == ("B" if left == "first" else "A")
    task = _task(left, proposal=shown)
    assert task_proposal(task["data"]) == "second"
    agree = [{"from_name": "verdict", "type": "choices", "value": {"choices": ["agree"]}}]
    label, problems = _convert(agree, task, verify, 1)
    assert (
        problems == [] and label.preference == "second" and label.ratings == {"verdict": "agree", "proposal": "second"}
    )
    # disagreeing: the correction is required (and picked on screen, so mirrored)
    disagree = [{"from_name": "verdict", "type": "choices", "value": {"choices": ["disagree"]}}]
    assert _convert(disagree, task, verify, 1)[1] == [
        "task 41, annotation 5: field corrected is required but has no answer",
        "task 41, annotation 5: field rationale is required but has no answer",
    ]
    disagree += [
        {"from_name": "corrected", "type": "choices", "value": {"choices": ["A"]}},
        {"from_name": "rationale", "type": "textarea", "value": {"text": ["A is right"]}},
    ]
    label, problems = _convert(disagree, task, verify, 1)
    assert problems == [] and label.preference == left and label.rationale == "A is right"
    # no proposal shown: agreeing says nothing
    label, _ = _convert(agree, _task(left, proposal=shown_proposal(None, left)), verify, 1)
    assert label.preference is None and "proposal" not in label.ratings


def test_side_choices_read_back_through_the_published_choices():
    assert {PREFERENCE_CHOICES[v] for v in A_OR_B.values()} == set(A_OR_B)


# -- the project's config and the pushed pairs' scheme ------------------------------------
def test_a_config_is_checked_against_its_scheme_and_identifies_it():
    aspects, pairwise = BUILT_IN["aspects"], BUILT_IN["mmrb2-pairwise"]
    xml = scheme_config(aspects)
    assert config_problems(xml, aspects) == []
    assert config_problems(xml)[:1] == ["control 'correct_a' is missing"]
    assert config_scheme(xml, BUILT_IN.values()) is aspects
    assert config_scheme(scheme_config(pairwise, response_images=True), BUILT_IN.values()) is pairwise
    fewer = xml.replace('maxRating="4"', 'maxRating="5"', 1)
    assert config_problems(fewer, aspects) == ["control 'helpfulness_a' has 5 points, expected 4"]
    assert config_scheme(fewer, BUILT_IN.values()) is None
    verify = BUILT_IN["verify"]
    no_proposal = re.sub(r'\s*<Text name="proposal"[^>]*/>', "", scheme_config(verify))
    assert config_problems(no_proposal, verify) == ["object 'proposal' is missing"]
    assert set(scheme_controls(aspects)) == {c.name for c in LabelInterface(xml).controls}


def _pair(pid, scheme=None, version=None, **kw):
    return Pair(pid, "i", "i/a", "i/b", "t", scheme=scheme, scheme_version=version, **kw)


def test_pairs_of_several_schemes_are_refused_naming_each():
    pairs = [_pair("p1"), _pair("p2"), _pair("p3"), _pair("p4")]
    schemes = {"p1": BUILT_IN["mmrb"], "p2": BUILT_IN["aspects"], "p3": BUILT_IN["aspects"]}
    with pytest.raises(MmrbError) as e:
        one_scheme(pairs, schemes)
    assert str(e.value).startswith(
        "the selected pairs are on 2 annotation schemes (aspects: 2 pairs, mmrb: 2 pairs); "
        "a Label Studio project holds one scheme: push each into its own project, e.g. --scheme NAME"
    )
    v2 = from_table({**to_table(BUILT_IN["aspects"]), "version": 2})
    with pytest.raises(MmrbError, match=r"aspects version 1: 1 pair, aspects version 2: 1 pair"):
        one_scheme(pairs[1:3], {"p2": BUILT_IN["aspects"], "p3": v2})
    assert one_scheme(pairs[1:3], schemes) is BUILT_IN["aspects"]
    assert one_scheme([], {}) is BUILT_IN["mmrb"]


def test_tasks_of_a_scheme_record_it_and_verify_shows_the_proposal(sqlite_store):
    s = sqlite_store
    s.add_items([Item("i", "Which?", "vqa")])
    s.add_candidates([Candidate("i/a", "i", "a", "one"), Candidate("i/b", "i", "b", "two")])
    s.add_pairs(
        [
            _pair("v1", "verify", 1, metadata={"proposal": "first"}),
            _pair("v2", "verify", 1),
            _pair("m1"),
        ]
    )
    tasks, _, warnings = build_tasks(s, s.pairs(ids=["v1", "v2"]), 0, scheme=BUILT_IN["verify"])
    by = {t["data"]["pair_id"]: t["data"] for t in tasks}
    for pid, proposal in (("v1", "first"), ("v2", None)):
        d = by[pid]
        assert (d["scheme"], d["scheme_version"]) == ("verify", 1)
        assert d["proposal"] == shown_proposal(proposal, d["left"])
        assert task_proposal(d) == proposal
    assert by["v2"]["proposal"] == "none"
    assert warnings == [
        "1 pair has no judges' proposal (mmrb select makes it): shown as 'none', "
        "and agreeing with it gives no preference"
    ]
    (mmrb_task,), _, _ = build_tasks(s, s.pairs(ids=["m1"]), 0, scheme=BUILT_IN["mmrb"])
    assert not {"scheme", "scheme_version", "proposal"} & set(mmrb_task["data"])  # as before schemes


def test_a_task_pushed_under_another_scheme_is_a_problem():
    pair = _pair("p", "aspects", 1)
    data = {"pair_id": "p", "left": "first", "left_id": "i/a", "right_id": "i/b"}
    task = {"id": 9, "data": {**data, "scheme": "aspects", "scheme_version": 1}}
    assert _task_problems(task, {"p": pair}, {"p": BUILT_IN["aspects"]}) == []
    assert _task_problems({"id": 9, "data": data}, {"p": pair}, {"p": BUILT_IN["aspects"]}) == [
        "task 9: pair 'p' is now on scheme 'aspects' version 1, but its task was pushed under scheme 'mmrb': "
        "push the pair into a new project to label it on its scheme"
    ]
    assert _task_problems({"id": 9, "data": data}, {"p": _pair("p")}, {"p": BUILT_IN["mmrb"]}) == []


def test_a_scheme_no_pair_is_on_is_refused_before_any_project_is_made(sqlite_store):
    from annotate.labelstudio.push import select_pairs

    s = sqlite_store
    s.add_items([Item("i", "Which?", "vqa")])
    s.add_candidates([Candidate("i/a", "i", "a", "one"), Candidate("i/b", "i", "b", "two")])
    s.add_pairs([_pair("a1", "aspects", 1), _pair("m1")])
    assert [p.id for p in select_pairs(s, scheme="aspects")] == ["a1"]
    assert [p.id for p in select_pairs(s, scheme="mmrb")] == ["m1"]
    with pytest.raises(
        MmrbError, match=r"no pairs on annotation scheme 'aspect' \(the pairs' schemes: aspects, mmrb\)"
    ):
        select_pairs(s, scheme="aspect")
