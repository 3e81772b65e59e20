"""Best-of-N with expert labels as the correctness source: each candidate's correctness from the
labels of the pairs it appears in (an adjudication first, else the annotators' majority, "unsure"
an abstention), ``--correctness reference|labels|auto``, and what is left out and why."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curate.model import Adjudication, Assignment, Candidate, Item, Label, Pair
from mmrb_eval.bestofn_run import (
    ADJ_DISAGREE,
    ADJ_UNSURE,
    ALL_UNSURE,
    VOTES_TIE,
    LabelVerdict,
    label_correctness,
    pool,
)
from tests.support.command_runner import command
from tests.support.fake_openai import FakeOpenAI
from tests.test_bestofn_run import judge_file, p_judge

# item x: candidates a, b, c; pairs ab (a first) and bc (b first) and ca (c first)
PAIRS = [Pair("ab", "x", "a", "b", "pair"), Pair("bc", "x", "b", "c", "pair"), Pair("ca", "x", "c", "a", "pair")]


def lab(pair: str, who: str, first: str | None, second: str | None) -> Label:
    return Label(pair, who, correctness_first=first, correctness_second=second)  # type: ignore[arg-type]


def test_votes_over_every_pair_a_candidate_appears_in_first_or_second():
    got = label_correctness(
        PAIRS,
        [
            lab("ab", "u1", "correct", "incorrect"),
            lab("ab", "u2", "correct", "incorrect"),
            lab("ca", "u1", None, "incorrect"),  # a, as the second response of ca
            lab("bc", "u1", "incorrect", "correct"),
        ],
        {},
    )
    assert got == {
        "a": LabelVerdict(True, votes=3),  # 2 correct, 1 incorrect
        "b": LabelVerdict(False, votes=3),
        "c": LabelVerdict(True, votes=1),
    }


def test_a_tie_or_only_unsure_leaves_a_candidate_unknown_and_unsure_abstains():
    got = label_correctness(
        PAIRS,
        [
            lab("ab", "u1", "correct", "unsure"),
            lab("ab", "u2", "incorrect", "unsure"),
            lab("bc", "u1", "unsure", "correct"),
            lab("bc", "u2", "unsure", "unsure"),
            lab("bc", "u3", None, "unsure"),
        ],
        {},
    )
    assert got["a"] == LabelVerdict(None, VOTES_TIE, votes=2)
    assert got["b"] == LabelVerdict(None, ALL_UNSURE)
    assert got["c"] == LabelVerdict(True, votes=1)  # one vote and two abstentions


def test_an_adjudication_wins_over_votes_and_an_excluded_pair_counts_for_nothing():
    labels = [lab("ab", u, "correct", "correct") for u in ("u1", "u2", "u3")]
    labels += [lab("bc", u, "correct", "correct") for u in ("u1", "u2")]
    got = label_correctness(PAIRS, labels, {"ab": Adjudication("ab", "lead", correctness_first="incorrect")})
    assert got["a"] == LabelVerdict(False, adjudicated=True)
    assert got["b"] == LabelVerdict(True, votes=5)  # the adjudication decided only the first response
    excluded = label_correctness(PAIRS, labels, {"ab": Adjudication("ab", "lead", exclude=True)})
    assert "a" not in excluded and excluded["b"] == LabelVerdict(True, votes=2)


def test_adjudications_that_disagree_or_say_unsure_leave_it_unknown():
    adj = {
        "ab": Adjudication("ab", "lead", correctness_first="correct", correctness_second="unsure"),
        "ca": Adjudication("ca", "lead", correctness_second="incorrect"),
    }
    got = label_correctness(PAIRS, [lab("ab", "u1", "correct", "correct")], adj)
    assert got["a"] == LabelVerdict(None, ADJ_DISAGREE, adjudicated=True)
    assert got["b"] == LabelVerdict(None, ADJ_UNSURE, adjudicated=True)


def test_labels_of_unknown_pairs_are_ignored():
    assert label_correctness(PAIRS, [lab("zz", "u1", "correct", "correct")], {}) == {}


VALUE = st.sampled_from([None, "correct", "incorrect", "unsure"])


@given(st.lists(st.tuples(st.sampled_from(["ab", "bc", "ca"]), VALUE, VALUE), max_size=12), st.randoms())
def test_neither_the_pairs_stored_order_nor_the_labels_order_changes_a_verdict(rows, rnd):
    labels = [lab(p, f"u{k}", c1, c2) for k, (p, c1, c2) in enumerate(rows)]
    want = label_correctness(PAIRS, labels, {})
    flipped = [Pair(p.id, p.item_id, p.second_id, p.first_id, p.origin) for p in PAIRS]
    mirrored = [lab(x.pair_id, x.annotator, x.correctness_second, x.correctness_first) for x in labels]
    rnd.shuffle(mirrored)
    assert label_correctness(flipped, mirrored, {}) == want
    for cid, v in want.items():
        assert (v.correct is None) == (v.unknown is not None)
        assert cid in {"a", "b", "c"}


def labelled_store(store) -> None:
    """Items with references (r0: its candidates read against it) and without (l0, l1, l2),
    the latter labelled by two annotators: l0 fully known, l1 a tie on one candidate, l2 a
    candidate without labels. l0's and r0's candidate texts carry the loopback judge's mark."""
    items = [
        Item("r0", "What is 2 plus 2?", "math", reference="4"),
        Item("l0", "Describe the chart.", "open"),
        Item("l1", "Caption this.", "open"),
        Item("l2", "Caption that.", "open"),
    ]
    cands = [
        Candidate("r0-a", "r0", "m1", "[c:r0-a] The answer is 4."),
        Candidate("r0-b", "r0", "m2", "[c:r0-b] The answer is 5."),
    ]
    for iid in ("l0", "l1", "l2"):
        cands += [Candidate(f"{iid}-{s}", iid, f"m{s}", f"[c:{iid}-{s}] text {s}") for s in "abc"]
    pairs = [
        Pair(f"{i}-{x}{y}", i, f"{i}-{x}", f"{i}-{y}", "pair")
        for i in ("l0", "l1", "l2", "r0")
        for x, y in (("a", "b"), ("b", "c"))
        if i != "r0" or (x, y) == ("a", "b")
    ]
    labels = [
        lab("l0-ab", "u1", "correct", "incorrect"),
        lab("l0-ab", "u2", "correct", "incorrect"),
        lab("l0-bc", "u1", "incorrect", "incorrect"),
        lab("l1-ab", "u1", "correct", "incorrect"),
        lab("l1-ab", "u2", "incorrect", "incorrect"),  # l1-a: one correct, one incorrect
        lab("l1-bc", "u1", "incorrect", "correct"),
        lab("l2-ab", "u1", "correct", "incorrect"),  # l2-c: in no labelled pair
        lab("r0-ab", "u1", "incorrect", "correct"),  # against the reference: the labels say otherwise
    ]
    with store.write() as conn:
        store.add_items(items, conn=conn)
        store.add_candidates(cands, conn=conn)
        store.add_pairs(pairs, conn=conn)
        for who in ("u1", "u2"):
            store.ensure_annotator(who, conn=conn)
        store.add_labels(labels, conn=conn)


@pytest.mark.both_backends
def test_pool_takes_correctness_from_the_reference_or_the_labels_as_asked(store):
    labelled_store(store)
    auto = pool(store)
    assert [it.id for it in auto.items] == ["l0", "r0"] and auto.decided_by == {"labels": 1, "reference": 1}
    assert auto.left_out == {
        "no reference answer and a candidate whose expert labels tie": 1,
        "no reference answer and a candidate without expert labels": 1,
    }
    l0, r0 = auto.items
    assert [(r.id, r.correct, r.answer) for r in l0.responses] == [
        ("l0-a", True, None),
        ("l0-b", False, None),
        ("l0-c", False, None),
    ]
    assert [(r.correct, r.answer) for r in r0.responses] == [(True, "4"), (False, "5")]

    ref = pool(store, correctness="reference")
    assert [it.id for it in ref.items] == ["r0"] and ref.left_out == {"no reference answer": 3}

    labels = pool(store, correctness="labels")
    assert [it.id for it in labels.items] == ["l0", "r0"] and labels.decided_by == {"labels": 2}
    assert [r.correct for r in labels.items[1].responses] == [False, True]  # the labels, not the reference
    assert labels.left_out == {"a candidate whose expert labels tie": 1, "a candidate without expert labels": 1}


def test_an_adjudication_decides_and_neither_a_control_task_nor_a_draft_is_a_vote(store):
    labelled_store(store)
    store.set_adjudication(Adjudication("l1-ab", "lead", correctness_first="correct"))  # l1-a's tie decided
    with store.write() as conn:
        store.ensure_annotator("u3", conn=conn)
        store.add_assignments([Assignment("l2-bc", "u3", "left", 0, is_gold=True)], conn=conn)
        store.add_labels(
            [
                lab("l2-bc", "u3", "incorrect", "correct"),  # a control task: l2-c still has no vote
                replace(lab("l0-bc", "u3", "correct", "correct"), status="draft"),  # l0-b would tie
            ],
            conn=conn,
        )
    got = pool(store, correctness="labels")
    assert [it.id for it in got.items] == ["l0", "l1", "r0"]
    assert [r.correct for r in got.items[1].responses] == [True, False, True]
    assert got.left_out == {"a candidate without expert labels": 1}


def test_the_command_judges_label_decided_items_and_says_where_correctness_came_from(store, db_url, tmp_path, capsys):
    labelled_store(store)
    truth = {"l0-a": True, "l0-b": False, "l0-c": False, "r0-a": False, "r0-b": True}
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        argv = ["--judge", judge_file(tmp_path, srv.url), "--db", db_url, "--images", str(tmp_path / "images")]
        rc, out = command("bestofn", [*argv, "--correctness", "labels", "--json", "--resamples", "0"], capsys)
        rep = json.loads(out)
        assert rc == 0 and rep["correctness"] == {"source": "labels", "items": {"labels": 2}}
        assert rep["overall"]["accuracy"]["value"] == 1.0  # a perfect judge on the labels' truth
        assert rep["overall"]["baselines"]["majority"]["value"] is None
        assert "without a comparable answer" in rep["overall"]["baselines"]["majority"]["undefined"]
        rc, out = command("bestofn", [*argv, "--resamples", "0"], capsys)
    assert rc == 0 and "correctness (auto): 1 item by labels, 1 item by reference" in out
    assert "left out: 1 no reference answer and a candidate whose expert labels tie" in out


def test_a_run_made_on_the_labels_correctness_reads_back_on_it(store, tmp_path):
    """The recipe keeps the correctness source: read back offline, r0 is judged on its labels
    (r0-b correct), not on its reference (r0-a correct), as the run was made."""
    from curate.judging.config import load_judge
    from mmrb_eval.bestofn_run import run_bestofn, stored_bestofn

    labelled_store(store)
    truth = {"l0-a": True, "l0-b": False, "l0-c": False, "r0-a": False, "r0-b": True}
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        judge = load_judge(judge_file(tmp_path, srv.url), order="both", samples=1)
        made = run_bestofn(store, pool(store, correctness="labels"), judge, method="knockout", resamples=0)
    back = stored_bestofn(store, made.run_id, resamples=0)
    assert made.complete and back.summary.complete
    assert back.report == made.report and back.report.overall.accuracy.value == 1.0
    assert {p.item: p.chosen for p in back.picks} == {"l0": "l0-a", "r0": "r0-b"}
