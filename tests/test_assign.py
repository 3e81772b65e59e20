from __future__ import annotations

import tempfile
from collections import Counter, defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curate.assign import assign, needs_another
from curate.errors import MmrbError
from curate.model import Label
from curate.store import Store
from tests.support.pairs import seed_pairs


def plan(store):
    return {(a.pair_id, a.annotator): (a.left, a.seq, a.is_gold, a.batch) for a in store.assignments()}


def test_k_distinct_balanced_and_contiguous(store):
    seed_pairs(store, 10)
    rep = assign(store, k=3, annotators=["ann", "bob", "cat", "dan"], seed=1)
    assert rep.created == 30 and rep.regular == 30 and rep.short == ()
    rows = store.assignments()
    per_pair = defaultdict(set)
    for a in rows:
        per_pair[a.pair_id].add(a.annotator)
    assert all(len(v) == 3 for v in per_pair.values()) and len(per_pair) == 10
    load = Counter(a.annotator for a in rows)
    assert max(load.values()) - min(load.values()) <= 1
    for name in load:
        seqs = sorted(a.seq for a in rows if a.annotator == name)
        assert seqs == list(range(len(seqs)))
    sides = Counter(a.left for a in rows)
    assert sides["first"] > 0 and sides["second"] > 0


def test_same_seed_same_plan_other_seed_differs(tmp_path):
    plans = []
    for n, seed in enumerate([5, 5, 6]):
        with Store(str(tmp_path / f"s{n}.db"), images=tmp_path / "img") as s:
            seed_pairs(s, 12)
            assign(s, k=2, annotators=["a", "b", "c"], seed=seed)
            plans.append(plan(s))
    assert plans[0] == plans[1]
    assert plans[0] != plans[2]


@pytest.mark.both_backends
def test_rerun_extends_without_moving_work(store):
    seed_pairs(store, 6)
    assign(store, k=2, annotators=["a", "b", "c"], batch="one")
    before = plan(store)
    # label some work, then re-run: nothing new
    first = store.assignments(annotator="a")[0]
    store.save_label(Label(pair_id=first.pair_id, annotator="a", preference="first"))
    assert assign(store, k=2, annotators=["a", "b", "c"]).created == 0
    # new annotator and new pairs: existing rows untouched, new ones appended
    seed_pairs(store, 4, start=100)
    rep = assign(store, k=2, annotators=["a", "b", "c", "d"], batch="two")
    after = plan(store)
    assert {key: after[key] for key in before} == before
    new = {key: v for key, v in after.items() if key not in before}
    assert rep.created == len(new) == 8
    assert {key[0] for key in new} == {f"p{i}" for i in range(100, 104)}
    assert all(v[3] == "two" for v in new.values())
    # the newcomer takes most of the new work (balance), and seqs continue after old ones
    assert Counter(key[1] for key in new)["d"] >= 3
    for name in "abc":
        old_max = max(v[1] for key, v in before.items() if key[1] == name)
        assert all(v[1] > old_max for key, v in new.items() if key[1] == name)


def test_raising_k_adds_annotators(sqlite_store):
    store = sqlite_store
    seed_pairs(store, 3)
    assign(store, k=1, annotators=["a", "b", "c"])
    assign(store, k=2, annotators=["a", "b", "c"])
    per_pair = Counter(a.pair_id for a in store.assignments())
    assert set(per_pair.values()) == {2}


def test_too_few_annotators_reported(sqlite_store):
    store = sqlite_store
    seed_pairs(store, 2)
    rep = assign(store, k=3, annotators=["a", "b"])
    assert set(rep.short) == {"p0", "p1"} and rep.created == 4


def _label_all(store, pair_id, prefs):
    for name, pref in prefs.items():
        store.save_label(Label(pair_id=pair_id, annotator=name, preference=pref))


def test_adaptive_overlap(store):
    seed_pairs(store, 2)
    names = ["a", "b", "c", "d"]
    assign(store, k=2, annotators=names, max_k=3)
    by_pair = defaultdict(list)
    for a in store.assignments():
        by_pair[a.pair_id].append(a.annotator)
    # p0: disagreement; p1: agreement
    _label_all(store, "p0", {by_pair["p0"][0]: "first", by_pair["p0"][1]: "second"})
    _label_all(store, "p1", {by_pair["p1"][0]: "first", by_pair["p1"][1]: "first"})
    rep = assign(store, k=2, annotators=names, max_k=3)
    assert rep.adaptive == 1 and rep.created == 1
    third = [a for a in store.assignments(pair_id="p0") if a.annotator not in by_pair["p0"]]
    assert len(third) == 1
    # the extra annotator has not labelled yet: nothing more
    assert assign(store, k=2, annotators=names, max_k=3).created == 0
    # first/second/tie has no majority, but max_k is reached; a higher max_k adds one more
    _label_all(store, "p0", {third[0].annotator: "tie"})
    assert assign(store, k=2, annotators=names, max_k=3).created == 0
    assert assign(store, k=2, annotators=names, max_k=4).adaptive == 1
    assert len(store.assignments(pair_id="p0")) == 4


def test_skipped_assignment_is_replaced(sqlite_store):
    store = sqlite_store
    seed_pairs(store, 1)
    assign(store, k=2, annotators=["a", "b", "c"])
    who = store.assignments(pair_id="p0")[0].annotator
    store.save_label(Label(pair_id="p0", annotator=who, status="skipped"))
    rep = assign(store, k=2, annotators=["a", "b", "c"])
    assert rep.created == 1
    assert len({a.annotator for a in store.assignments(pair_id="p0")}) == 3


def test_needs_another_rule():
    A, B = ("preference", "first"), ("preference", "second")
    assert not needs_another([A], 2)
    assert needs_another([A, B], 2)
    assert not needs_another([A, A], 2)
    assert not needs_another([A, B, A], 2)
    assert needs_another([A, B, A, B], 2)


def test_gold_mixed_in_at_rate(store):
    seed_pairs(store, 40, gold=10)
    rep = assign(store, k=1, annotators=["a", "b"], control_share=0.2, seed=3)
    rows = store.assignments()
    for name in "ab":
        mine = [a for a in rows if a.annotator == name]
        gold = [a for a in mine if a.is_gold]
        assert len(gold) == 5  # 20 regular -> 5 gold = 20% of 25
        assert len({a.pair_id for a in gold}) == 5
        assert all(a.pair_id.startswith("p4") for a in gold)  # p40..p49 are the gold ones
        positions = sorted(a.seq for a in gold)
        assert positions[-1] - positions[0] >= 10  # spread, not bunched at one end
    assert rep.gold == 10 and rep.gold_pool == 10 and rep.gold_without_answer == 0
    # re-running keeps the rate without repeating gold
    seed_pairs(store, 20, start=200)
    assign(store, k=1, annotators=["a", "b"], control_share=0.2, seed=3)
    for name in "ab":
        gold = [a.pair_id for a in store.assignments(annotator=name) if a.is_gold]
        assert len(gold) == len(set(gold)) == 8  # 30 regular -> round(7.5) = 8


def test_errors(sqlite_store):
    store = sqlite_store
    seed_pairs(store, 1)
    with pytest.raises(MmrbError, match="k must be"):
        assign(store, k=0, annotators=["a"])
    with pytest.raises(MmrbError, match="max_k"):
        assign(store, k=2, max_k=1, annotators=["a"])
    with pytest.raises(MmrbError, match="no annotators"):
        assign(store, k=1)
    with pytest.raises(MmrbError, match="not found"):
        assign(store, k=1, annotators=["a"], pair_ids=["nope"])
    assert store.counts().assignments == 0


def test_dropped_pairs_not_assigned(sqlite_store):
    store = sqlite_store
    seed_pairs(store, 3)
    store.update_pair("p1", status="dropped", reason="test")
    assign(store, k=1, annotators=["a"])
    assert {a.pair_id for a in store.assignments()} == {"p0", "p2"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_pairs=st.integers(0, 15), n_ann=st.integers(1, 6), k=st.integers(1, 4), seed=st.integers(0, 3))
def test_invariants(n_pairs, n_ann, k, seed):
    with tempfile.TemporaryDirectory() as d, Store(f"{d}/s.db", images=f"{d}/img") as s:
        seed_pairs(s, n_pairs)
        names = [f"n{i}" for i in range(n_ann)]
        rep = assign(s, k=k, annotators=names, seed=seed)
        rows = s.assignments()
        per_pair = Counter(a.pair_id for a in rows)
        assert len(rows) == len({(a.pair_id, a.annotator) for a in rows})
        assert all(v == min(k, n_ann) for v in per_pair.values()) and len(per_pair) == n_pairs
        load = Counter(a.annotator for a in rows)
        if rows:
            assert max(load[n] for n in names) - min(load[n] for n in names) <= 1
        assert rep.created == len(rows)
        assert assign(s, k=k, annotators=names, seed=seed).created == 0


def test_cli(tmp_path, capsys):
    from tests.support.command_runner import run_command

    db = str(tmp_path / "s.db")
    with Store(db, images=tmp_path / "img") as s:
        seed_pairs(s, 4)
    ids = tmp_path / "ids.txt"
    ids.write_text("p0\np1\n")
    assert run_command("assign", ["--db", db, "-k", "2", "--annotators", "x,y", "--pairs", str(ids)]) == 0
    assert "4 assignments added" in capsys.readouterr().out
    assert run_command("assign", ["--db", db, "-k", "0", "--annotators", "x"]) == 1
    assert "k must be at least 1" in capsys.readouterr().err
