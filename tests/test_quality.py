"""Annotator quality control: gold answers, control tasks, qualification, reliability and
aggregation (curate/quality/, curate/store/gold.py)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotate import queue
from curate.assign import assign
from curate.benchmark import dry_run
from curate.benchmark.rules import Rules
from curate.errors import InputError, MmrbError
from curate.model import Adjudication, Annotator, Assignment, Candidate, Gold, Item, Label, Pair
from curate.quality import gold as G
from curate.quality import qualification as Q
from curate.quality.aggregate import aggregate, majority, store_aggregate
from curate.quality.frames import as_frame, labels_frame
from curate.quality.reliability import reliability_report, store_report, wilson
from tests.support.pairs import seed


def label(store, pair_id: str, who: str, pref: str) -> None:
    store.save_label(Label(pair_id, who, preference=pref))


# -- the store (both backends) ------------------------------------------------------------------
@pytest.mark.both_backends
def test_gold_round_trip_replace_and_legacy_gold_pairs(store):
    seed(store, 3)
    store.update_pair("p2", is_gold=True, known_preference="second")
    g0 = Gold("p0", "import", "first", None, "incorrect", note="from the paper")
    assert store.set_gold([g0, Gold("p1", "reference", correctness_first="correct")]) == 2
    got = store.gold()
    assert got["p0"] == dataclasses.replace(g0, created_at=got["p0"].created_at)
    assert got["p1"].correctness_first == "correct" and got["p1"].preference is None
    # a pair marked gold before the table existed gives its known answer, as an import
    assert got["p2"].preference == "second" and got["p2"].source == "import"
    store.set_gold([Gold("p0", "adjudication", "tie")])  # replaces
    assert store.gold()["p0"].preference == "tie" and store.gold()["p0"].source == "adjudication"
    assert store.delete_gold(["p1"]) == 1 and "p1" not in store.gold()


@pytest.mark.both_backends
def test_control_labels_are_told_apart_on_both_backends(store):
    seed(store, 2)
    for n in ("a", "b"):
        store.add_annotator(Annotator(n))
    store.add_assignments([Assignment("p0", "a", "first", 0), Assignment("p0", "b", "second", 0, is_gold=True)])
    label(store, "p0", "a", "first")
    label(store, "p0", "b", "second")
    assert store.control_keys() == {("p0", "b")}
    assert [lab.annotator for lab in store.labels(control=False)] == ["a"]
    assert [lab.annotator for lab in store.labels(control=True)] == ["b"]
    assert len(store.labels()) == 2
    (ov,) = [o for o in store.pair_overlap() if o.pair_id == "p0"]
    assert (ov.assigned, ov.submitted) == (1, 1)


@pytest.mark.both_backends
def test_annotator_qualification_and_pause_round_trip(store):
    store.add_annotator(Annotator("a"))
    store.update_annotator("a", qualification="failed", paused="low gold accuracy")
    assert store.get_annotator("a") == Annotator("a", qualification="failed", paused="low gold accuracy")


# -- gold files ------------------------------------------------------------------------------------
def test_gold_import_csv_and_jsonl(sqlite_store, tmp_path):
    seed(sqlite_store, 3)
    f = tmp_path / "gold.csv"
    f.write_text("pair_id,preference,correctness_first,correctness_second,note\np0,first,,,\np1,,correct,incorrect,n\n")
    assert G.import_gold(sqlite_store, f).written == 2
    j = tmp_path / "gold.jsonl"
    j.write_text(json.dumps({"pair": "p2", "preference": "tie"}) + "\n")
    G.import_gold(sqlite_store, j)
    got = sqlite_store.gold()
    assert (got["p0"].preference, got["p0"].correctness_first) == ("first", None)
    assert (got["p1"].correctness_first, got["p1"].correctness_second, got["p1"].note) == ("correct", "incorrect", "n")
    assert got["p2"].preference == "tie" and {g.source for g in got.values()} == {"import"}


@pytest.mark.parametrize(
    "text, line, field, words",
    [
        ("pair_id,preference\np0,first\np9,second\n", 3, "pair_id", "no pair 'p9'"),
        ("pair_id,preference\np0,left\n", 2, "preference", "'left' is not one of first, second, tie"),
        ("pair_id,preferance\np0,first\n", 2, "preferance", "unknown column"),
        ("pair_id,preference\np0,first\np0,second\n", 3, "pair_id", "first on line 2"),
        ("pair_id,preference,correctness_first\np0,,\n", 2, None, "no gold value"),
        ("preference\nfirst\n", 2, "pair_id", "missing"),
        ("pair_id,correctness_second\np1,wrong\n", 2, "correctness_second", "not one of correct, incorrect, unsure"),
    ],
)
def test_gold_import_errors_name_file_line_field_and_write_nothing(sqlite_store, tmp_path, text, line, field, words):
    seed(sqlite_store, 2)
    f = tmp_path / "gold.csv"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        G.import_gold(sqlite_store, f)
    problem = e.value.problems[0]
    assert (problem.file, problem.line, problem.field) == (str(f), line, field)
    assert words in problem.message
    assert sqlite_store.gold() == {}  # all or nothing: p0's good row was not written either


def test_gold_import_of_a_bad_json_line(sqlite_store, tmp_path):
    seed(sqlite_store, 1)
    f = tmp_path / "gold.jsonl"
    f.write_text('{"pair_id": "p0", "preference": "first"}\n{"pair_id": \n')
    with pytest.raises(InputError) as e:
        G.import_gold(sqlite_store, f)
    assert e.value.problems[0].line == 2 and sqlite_store.gold() == {}


def test_gold_derived_from_adjudications_and_references_keeps_other_sources(sqlite_store):
    seed(sqlite_store, 3, auto=True)
    sqlite_store.update_pair("p2", auto_first="unsure", auto_second="unsure")
    sqlite_store.set_adjudication(Adjudication("p0", "lead", preference="second", note="looked closely"))
    sqlite_store.set_adjudication(Adjudication("p1", "lead", exclude=True))
    adj, ref = G.derive_gold(sqlite_store)
    assert (adj.written, adj.skipped) == (1, 1)  # the exclusion gives no gold
    assert (ref.written, ref.kept_other, ref.skipped) == (1, 1, 1)  # p0 keeps its adjudication; p2 unsure
    got = sqlite_store.gold()
    assert (got["p0"].source, got["p0"].preference) == ("adjudication", "second")
    assert (got["p1"].source, got["p1"].preference, got["p1"].correctness_first) == ("reference", "first", "correct")
    with pytest.raises(MmrbError, match="cannot be derived"):
        G.derive_gold(sqlite_store, ["import"])
    stats = G.gold_stats(sqlite_store)
    assert stats.pairs == 2 and stats.by_source == {"adjudication": 1, "reference": 1}
    assert stats.by_field["preference"] == 2 and stats.by_category == {"vqa": 2}


# -- control tasks ---------------------------------------------------------------------------------
def test_control_tasks_are_mixed_in_evenly_and_never_count_toward_overlap(store):
    ids = seed(store, 44)
    store.set_gold([Gold(p, "import", "first") for p in ids[40:]])  # p40..p43 have gold
    rep = assign(store, k=1, annotators=["a", "b"], control_share=0.1, pair_ids=ids[:40], seed=1)
    assert rep.gold == 4 and rep.regular == 40
    for n in ("a", "b"):
        mine = store.assignments(annotator=n)
        control = [a for a in mine if a.is_gold]
        assert len(control) == 2 and all(a.pair_id in ids[40:] for a in control)  # 20 regular -> 2 = 10% of 22
        seqs = sorted(a.seq for a in control)
        assert seqs[0] < 11 <= seqs[1]  # one in each half of the queue: spread, not bunched
    # a control pair that is also a regular pair: the control label does not fill its overlap
    store.set_gold([Gold("p0", "import", "second")])
    holder = next(a.annotator for a in store.assignments(pair_id="p0"))
    other = "b" if holder == "a" else "a"
    store.add_assignments([Assignment("p0", other, "first", 99, is_gold=True)])
    label(store, "p0", other, "first")
    label(store, "p0", holder, "second")
    rep2 = assign(store, k=2, annotators=["a", "b", "c"], pair_ids=["p0"], seed=1)
    on_p0 = {a.annotator: a.is_gold for a in store.assignments(pair_id="p0")}
    assert rep2.regular == 1 and on_p0 == {holder: False, other: True, "c": False}  # c, not `other`, is the 2nd


def test_control_labels_never_count_toward_agreement_or_the_build(sqlite_store):
    from curate.agreement import from_store

    seed(sqlite_store, 1)
    for n in ("a", "b", "c"):
        sqlite_store.add_annotator(Annotator(n))
    sqlite_store.add_assignments(
        [
            Assignment("p0", "a", "first", 0),
            Assignment("p0", "b", "first", 0),
            Assignment("p0", "c", "first", 0, is_gold=True),
        ]
    )
    label(sqlite_store, "p0", "a", "first")
    label(sqlite_store, "p0", "b", "second")
    label(sqlite_store, "p0", "c", "second")  # as a control task: would make "second" the majority
    t = from_store(sqlite_store)
    assert t.fields["preference"].code.size == 2 and "c" not in {
        t.annotators[i] for i in t.fields["preference"].annotator
    }
    (d,) = dry_run(sqlite_store, Rules(min_labels=2)).decisions
    assert d.n_labels == 2 and d.removed_by == "no_preference"  # one first, one second: no majority


def test_a_control_pair_comes_out_of_the_queue_like_any_other(sqlite_store):
    seed(sqlite_store, 2)
    sqlite_store.set_gold([Gold("p1", "import", "second", "incorrect", "correct")])
    sqlite_store.add_annotator(Annotator("a"))
    sqlite_store.add_assignments([Assignment("p0", "a", "first", 0), Assignment("p1", "a", "first", 1, is_gold=True)])
    regular = queue.current_view(sqlite_store, "a")
    sqlite_store.save_label(Label("p0", "a", preference="first"))
    control = queue.current_view(sqlite_store, "a")
    assert (regular.pair_id, control.pair_id) == ("p0", "p1")
    assert type(control) is type(regular)
    # the same fields, and the ones that differ differ only as two regular pairs would
    differ = {f.name for f in dataclasses.fields(control) if getattr(control, f.name) != getattr(regular, f.name)}
    assert differ <= {"pair_id", "item_id", "prompt", "left_text", "right_text", "seq"}
    assert not any("gold" in f.name for f in dataclasses.fields(control))
    assert "incorrect" not in repr(control) and control.label is None


# -- qualification ---------------------------------------------------------------------------------
@pytest.mark.both_backends
def test_qualification_comes_first_and_gates_the_real_queue(store, tmp_path):
    sqlite_store = store  # both backends
    ids = seed(sqlite_store, 8)
    sqlite_store.set_gold([Gold(p, "import", "first") for p in ids[:4]])
    with pytest.raises(MmrbError, match="no gold answer"):
        Q.set_qualification(sqlite_store, ["p0", "p7"], 0.75)
    Q.set_qualification(sqlite_store, ids[:4], 0.75)
    rep = assign(sqlite_store, k=1, annotators=["good", "bad"], pair_ids=ids[4:], seed=2)
    assert rep.qualification == 8
    for n in ("good", "bad"):
        assert sqlite_store.get_annotator(n).qualification == "pending"
        first4 = [a for a in sqlite_store.assignments(annotator=n)][:4]
        assert {a.pair_id for a in first4} == set(ids[:4]) and all(a.qualification and a.is_gold for a in first4)
    for n, answers in (
        ("good", ["first", "first", "first", "second"]),
        ("bad", ["second", "second", "first", "second"]),
    ):
        for ans in answers:
            v = queue.current_view(sqlite_store, n)
            assert v.pair_id in ids[:4]
            label(sqlite_store, v.pair_id, n, ans)
    # good matched 3 of 4 (= 0.75): passes and gets regular work; bad matched 1: nothing else
    assert queue.current_view(sqlite_store, "good").pair_id in ids[4:]
    assert sqlite_store.get_annotator("good").qualification == "passed"
    assert queue.current_view(sqlite_store, "bad") is None
    assert sqlite_store.get_annotator("bad").qualification == "failed"
    assert "project lead" in queue.closed_notice(sqlite_store, "bad")
    assert queue.closed_notice(sqlite_store, "good") is None
    # the lead is told, and can let the account in
    report = store_report(sqlite_store, min_n=1)
    assert report.qualification == {"good": "passed", "bad": "failed"}
    assert any("kept out of the real queue (failed): bad" in line for line in report.lines())
    Q.resume(sqlite_store, "bad")
    assert queue.current_view(sqlite_store, "bad").pair_id in ids[4:]
    # an annotator who has labelled already is not asked to qualify
    sqlite_store.add_annotator(Annotator("old"))
    label(sqlite_store, ids[5], "old", "first")
    assign(sqlite_store, k=1, annotators=["old"], pair_ids=ids[4:], seed=2)
    assert sqlite_store.get_annotator("old").qualification is None


def test_a_paused_account_is_served_nothing(sqlite_store):
    seed(sqlite_store, 1)
    sqlite_store.add_annotator(Annotator("a"))
    sqlite_store.add_assignments([Assignment("p0", "a", "first", 0)])
    sqlite_store.update_annotator("a", paused="test")
    assert queue.current_view(sqlite_store, "a") is None and "paused" in queue.closed_notice(sqlite_store, "a")
    Q.resume(sqlite_store, "a")
    assert queue.current_view(sqlite_store, "a").pair_id == "p0"


# -- reliability -----------------------------------------------------------------------------------
def planted(n_pairs: int = 40, careless: str = "dan"):
    """Three careful annotators who agree with the truth on 39 of 40 pairs each (a different
    slip each), and one who answers "first" whatever the pair. The truth alternates."""
    truth = {f"p{i}": ("first", "second")[i % 2] for i in range(n_pairs)}
    rows = []
    for i, (p, t) in enumerate(truth.items()):
        for j, who in enumerate(("ann", "bea", "cat")):
            slip = i == 5 + j
            rows.append((p, who, "preference", ("second" if t == "first" else "first") if slip else t, i >= 30, "vqa"))
        rows.append((p, careless, "preference", "first", i >= 30, "vqa"))
    frame = pd.DataFrame(rows, columns=["pair", "annotator", "field", "value", "control", "category"])
    gold = {"preference": {p: truth[p] for p in list(truth)[30:]}}  # the control tasks have gold
    return frame, gold, truth


def test_a_careless_annotator_is_caught_by_gold_accuracy_and_by_dawid_skene():
    frame, gold, _ = planted()
    report = reliability_report(frame, gold, threshold=0.8, min_n=10)
    figs = report.fields["preference"]
    assert figs["dan"].gold.n == 10 and figs["dan"].gold.share == 0.5
    assert figs["dan"].gold.high < 0.8  # the Wilson interval of 5 of 10 stays below
    assert all(figs[n].gold.share >= 0.9 for n in ("ann", "bea", "cat"))
    assert figs["dan"].model < 0.7 and 0.8 < min(figs[n].model for n in ("ann", "bea", "cat"))
    assert {(a.annotator, a.basis) for a in report.alerts if a.category is None} == {
        ("dan", "gold"),
        ("dan", "dawid-skene"),
    }
    # majority agreement uses regular labels only (30 pairs)
    assert figs["ann"].majority.n == 30 and figs["dan"].majority.share == pytest.approx(15 / 30, abs=0.04)


def test_the_minimum_gates_only_dawid_skene_and_gold_needs_its_interval_below():
    frame, gold, _ = planted()
    # 5 of 10 on gold is [23.7%, 76.3%]: below 80% it alerts even under min_n=50, at 70% never
    report = reliability_report(frame, gold, threshold=0.8, min_n=50)
    assert {(a.annotator, a.basis) for a in report.alerts if a.category is None} == {("dan", "gold")}
    assert reliability_report(frame, gold, threshold=0.7, min_n=50).alerts == []


def test_wilson_interval():
    s = wilson(8, 10)
    assert s.share == 0.8 and s.low == pytest.approx(0.4902, abs=1e-4) and s.high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 0).share is None


def test_automatic_pause_from_the_store(sqlite_store):
    ids = seed(sqlite_store, 12)
    sqlite_store.set_gold([Gold(p, "import", "second") for p in ids])
    for n in ("ok", "lazy"):
        sqlite_store.add_annotator(Annotator(n))
    sqlite_store.add_assignments(
        [Assignment(p, n, "first", i, is_gold=True) for i, p in enumerate(ids) for n in ("ok", "lazy")]
    )
    for p in ids:
        label(sqlite_store, p, "ok", "second")
        label(sqlite_store, p, "lazy", "first")
    frame = labels_frame(sqlite_store)
    assert frame["control"].all() and len(frame) == 24
    report = store_report(sqlite_store, threshold=0.7, min_n=10, pause=True)
    assert {a.annotator for a in report.alerts} == {"lazy"}
    assert "lazy" in report.paused and sqlite_store.get_annotator("ok").paused is None
    assert queue.current_view(sqlite_store, "lazy") is None


# -- aggregation -----------------------------------------------------------------------------------
def test_dawid_skene_outvotes_a_careless_majority_and_uses_gold():
    # Two careless annotators always say "first"; three careful ones are right. Where only one
    # careful annotator and both careless ones labelled a pair, the majority follows the
    # careless pair; Dawid-Skene, having learnt who is careless, follows the careful one.
    rows = []
    truth = {f"p{i}": ("first", "second")[i % 2] for i in range(60)}
    for i, (p, t) in enumerate(truth.items()):
        careful = ("ann", "bea", "cat") if i < 40 else (("ann", "bea", "cat")[i % 3],)
        rows += [(p, who, "preference", t) for who in careful]
        rows += [(p, who, "preference", "first") for who in ("xo", "yo")]
    frame = as_frame(rows)
    maj = majority(frame[frame["field"] == "preference"])
    ds = aggregate(frame, "dawid-skene").fields["preference"]
    wrong_majority = [p for p, t in truth.items() if maj.get(p) != t]
    assert len(wrong_majority) == 10  # the second-answer pairs among the last 20
    assert ds.differ == 10 and all(ds.final[p] == truth[p] for p in truth)
    assert ds.reliability["xo"] < 0.7 < ds.reliability["ann"]
    # gold wins where present, with every method
    for method in ("majority", "dawid-skene", "mace"):
        fa = aggregate(frame, method, {"preference": {"p0": "second"}}).fields["preference"]
        assert fa.final["p0"] == "second" and fa.from_gold == 1
    mace = aggregate(frame, "mace").fields["preference"]
    assert mace.reliability["xo"] < mace.reliability["ann"]


def test_majority_ignores_ties():
    frame = as_frame([("p", "a", "preference", "first"), ("p", "b", "preference", "second")])
    assert majority(frame) == {}
    with pytest.raises(MmrbError, match="unknown aggregation"):
        aggregate(frame, "em")


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from(["first", "second", "tie"])), max_size=40)
)
def test_aggregation_decides_only_labelled_pairs_and_majority_is_a_modal_value(raw):
    rows = {(f"p{p}", f"a{a}"): v for p, a, v in raw}  # one label per (pair, annotator)
    frame = as_frame((p, a, "preference", v) for (p, a), v in rows.items())
    maj = majority(frame) if rows else {}
    for p, v in maj.items():
        counts = frame[frame["pair"] == p]["value"].value_counts()
        assert counts[v] == counts.max() and (counts == counts.max()).sum() == 1
    if rows:
        fa = aggregate(frame, "dawid-skene").fields["preference"]
        assert set(fa.final) == {p for p, _ in rows}
        assert fa.differ + sum(1 for p in maj if fa.final[p] == maj[p]) == len(maj)


def test_store_aggregate_reads_regular_labels_only(sqlite_store):
    seed(sqlite_store, 2)
    for n in ("a", "b", "c"):
        sqlite_store.add_annotator(Annotator(n))
    sqlite_store.add_assignments([Assignment("p0", "c", "first", 0, is_gold=True)])
    label(sqlite_store, "p0", "a", "first")
    label(sqlite_store, "p0", "b", "first")
    label(sqlite_store, "p0", "c", "second")
    agg = store_aggregate(sqlite_store, "dawid-skene")
    assert set(agg.fields["preference"].reliability) == {"a", "b"}


# -- the build -------------------------------------------------------------------------------------
def careless_store(store) -> dict[str, str]:
    """60 pairs; three careful annotators and two who always answer "first". The last 20 pairs
    have one careful label and both careless ones, so their majority follows the careless."""
    ids = seed(store, 60)
    truth = {p: ("first", "second")[i % 2] for i, p in enumerate(ids)}
    for n in ("ann", "bea", "cat", "xo", "yo"):
        store.add_annotator(Annotator(n))
    labels = []
    for i, (p, t) in enumerate(truth.items()):
        careful = ("ann", "bea", "cat") if i < 40 else (("ann", "bea", "cat")[i % 3],)
        labels += [Label(p, who, preference=t) for who in careful]
        labels += [Label(p, who, preference="first") for who in ("xo", "yo")]
    store.add_labels(labels)
    return truth


def test_build_with_dawid_skene_follows_the_careful_annotators_and_says_so(sqlite_store, tmp_path):
    from curate.benchmark import build

    truth = careless_store(sqlite_store)
    by_majority = {d.pair.id: d.chosen for d in dry_run(sqlite_store, Rules(min_labels=3)).kept}
    res = build(sqlite_store, Rules(min_labels=3, aggregation="dawid-skene", resamples=10), tmp_path / "out")
    by_ds = {t.id: ("first" if t.chosen.startswith("answer a") else "second") for t in res.triplets}
    assert by_ds == truth  # every pair, the careless majority's ten included
    assert sum(by_majority[p] != t for p, t in truth.items()) == 10
    card = (tmp_path / "out" / "README.md").read_text()
    assert "aggregated with Dawid-Skene" in card and "| preference | 60 | 10 | 0 | 0 |" in card
    assert "(decided by an adjudication, by the correctness task or by the aggregation): 10." in card
    manifest = json.loads((tmp_path / "out" / "build.json").read_text())
    assert manifest["rules"]["filter"]["aggregation"] == "dawid-skene"
    assert manifest["aggregation"]["differ_from_majority"] == {"preference": 10}
    rel = {
        line.split("|")[1].strip(): float(line.split("|")[2])
        for line in card.splitlines()
        if line.startswith(("| xo |", "| ann |"))
    }
    assert rel["xo"] < 0.7 < rel["ann"]


def test_gold_decides_a_pair_in_a_model_build(sqlite_store):
    truth = careless_store(sqlite_store)
    sqlite_store.set_gold([Gold("p0", "import", "second")])
    (d,) = [d for d in dry_run(sqlite_store, Rules(aggregation="mace")).decisions if d.pair.id == "p0"]
    assert truth["p0"] == "first" and d.chosen == "second"


def test_rules_file_names_the_aggregation(tmp_path):
    from curate.benchmark.rules import load_rules

    f = tmp_path / "rules.toml"
    f.write_text('[filter]\naggregation = "mace"\n')
    assert load_rules(f).aggregation == "mace"
    f.write_text('[filter]\naggregation = "em"\n')
    with pytest.raises(InputError, match="filter.aggregation"):
        load_rules(f)


# -- the commands ----------------------------------------------------------------------------------
def test_gold_and_quality_commands(sqlite_store, tmp_path, capsys):
    from curate.cli import main

    seed(sqlite_store, 4, auto=True)
    for n in ("a", "b", "c"):
        sqlite_store.add_annotator(Annotator(n))
    for p in ("p0", "p1", "p2", "p3"):
        for n, v in (("a", "first"), ("b", "first"), ("c", "second")):
            label(sqlite_store, p, n, v)
    db = ["--db", sqlite_store.db]
    bad = tmp_path / "bad.csv"
    bad.write_text("pair_id,preference\np0,first\np1,sideways\n")
    assert main(["gold", "import", str(bad), *db]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3 field 'preference'" in err and "nothing was written" in err and "Traceback" not in err
    good = tmp_path / "gold.csv"
    good.write_text("pair_id,preference\np0,first\n")
    assert main(["gold", "import", str(good), *db]) == 0
    assert main(["gold", "derive", "--from", "reference", *db]) == 0
    out = capsys.readouterr().out
    assert "1 gold answer written (import)" in out and "3 gold answers written (reference)" in out
    assert "1 pair kept the gold of another source" in out
    assert main(["gold", "list", "--json", *db]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["pair_id"], r["source"]) for r in rows] == [
        ("p0", "import"),
        ("p1", "reference"),
        ("p2", "reference"),
        ("p3", "reference"),
    ]
    assert main(["gold", "stats", *db]) == 0
    assert "4 pairs with gold" in capsys.readouterr().out
    assert main(["quality", "--min-n", "4", "--threshold", "0.5", "--aggregate", "dawid-skene", *db]) == 0
    out = capsys.readouterr().out
    assert "ALERT c: gold 0.0% [0.0%, 49.0%] below 50.0% on preference (4 labels)" in out
    assert "Aggregation: dawid-skene" in out
    assert main(["quality", "--min-n", "4", "--threshold", "0.5", "--pause", "--json", *db]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["paused"]) == {"c"} and report["fields"]["preference"]["a"]["gold"]["share"] == 1.0
    assert main(["gold", "resume", "c", *db]) == 0
    assert sqlite_store.get_annotator("c").paused is None


@pytest.mark.both_backends
def test_a_version_5_store_gets_the_gold_table_and_the_new_columns(db_url, tmp_path):
    from sqlalchemy import update

    from curate.store import Store
    from curate.store import migrations as M
    from curate.store import schema as S

    s = Store(db_url, images=tmp_path / "im")
    seed(s, 1)
    s.add_annotator(Annotator("a"))
    s.add_assignments([Assignment("p0", "a", "first", 0)])
    with s.write() as c:  # as a store written before quality control
        c.exec_driver_sql("DROP TABLE gold")
        c.exec_driver_sql("ALTER TABLE assignments DROP COLUMN qualification")
        c.exec_driver_sql("ALTER TABLE annotators DROP COLUMN qualification")
        c.exec_driver_sql("ALTER TABLE annotators DROP COLUMN paused")
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="5"))
    s.close()
    s = Store(db_url, images=tmp_path / "im", create=False)  # migrations alone must add the table
    try:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION)
        assert s.get_assignment("p0", "a") == Assignment("p0", "a", "first", 0)  # qualification: false
        assert s.get_annotator("a") == Annotator("a")
        s.set_gold([Gold("p0", "import", "first")])
        assert s.gold()["p0"].preference == "first"
    finally:
        s.close()


def test_the_agreement_report_compares_with_imported_gold(sqlite_store):
    from curate.agreement import agreement_report, from_store

    seed(sqlite_store, 2)
    for n in ("a", "b"):
        sqlite_store.add_annotator(Annotator(n))
        for p in ("p0", "p1"):
            label(sqlite_store, p, n, "first" if n == "a" else "second")
    sqlite_store.set_gold([Gold("p0", "import", "first"), Gold("p1", "adjudication", "first")])
    rep = agreement_report(from_store(sqlite_store), resamples=10)
    assert set(rep.fields["preference"].annotators) == {"a", "b"}
    rel = store_report(sqlite_store).fields["preference"]  # the section mmrb agreement prints
    assert (rel["a"].gold.n, rel["a"].gold.k, rel["b"].gold.n, rel["b"].gold.k) == (2, 2, 2, 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.sampled_from(["x", "y", "z"])), max_size=40))
def test_agreement_with_the_others_majority_matches_its_definition(raw):
    from collections import Counter

    from curate.quality.reliability import _majority_counts

    rows = {(f"p{p}", f"a{a}"): v for p, a, v in raw}
    frame = as_frame((p, a, "f", v) for (p, a), v in rows.items())
    want: dict[str, list[int]] = {}
    for (p, a), v in rows.items():
        others = Counter(w for (q, b), w in rows.items() if q == p and b != a)
        if not others:
            continue
        (top, n), *rest = others.most_common()
        if rest and rest[0][1] == n:
            continue
        slot = want.setdefault(a, [0, 0])
        slot[0] += 1
        slot[1] += top == v
    assert _majority_counts(frame) == {a: (n, k) for a, (n, k) in want.items()}


@settings(max_examples=20, deadline=None)
@given(
    n_pairs=st.integers(1, 30),
    n_gold=st.integers(1, 8),
    n_ann=st.integers(1, 4),
    k=st.integers(1, 3),
    share=st.sampled_from([0.05, 0.1, 0.25, 0.5]),
    seed_=st.integers(0, 3),
)
def test_control_tasks_invariants(n_pairs, n_gold, n_ann, k, share, seed_):
    """Whatever the sizes: overlap counts regular assignments only and reaches k, no
    annotator gets a pair twice, a control task is always a pair with gold, and each queue
    holds about ``share`` control tasks (as many as the gold pool allows)."""
    import tempfile

    from curate.store import Store

    with tempfile.TemporaryDirectory() as d, Store(f"{d}/s.db", images=f"{d}/img") as s:
        ids = seed(s, n_pairs + n_gold)
        gold_ids = set(ids[n_pairs:])
        s.set_gold([Gold(p, "import", "first") for p in gold_ids])
        names = [f"n{i}" for i in range(n_ann)]
        assign(s, k=k, annotators=names, control_share=share, seed=seed_, pair_ids=ids[:n_pairs])
        rows = s.assignments()
        assert len(rows) == len({(a.pair_id, a.annotator) for a in rows})
        regular = Counter(a.pair_id for a in rows if not a.is_gold)
        assert set(regular) == set(ids[:n_pairs]) and set(regular.values()) == {min(k, n_ann)}
        assert {a.pair_id for a in rows if a.is_gold} <= gold_ids
        for n in names:
            mine = [a for a in rows if a.annotator == n]
            n_regular = sum(not a.is_gold for a in mine)
            want = min(round(n_regular * share / (1 - share)), n_gold)
            assert sum(a.is_gold for a in mine) == want
        assert assign(s, k=k, annotators=names, control_share=share, seed=seed_, pair_ids=ids[:n_pairs]).created == 0


def planted_store(store) -> None:
    """Two categories of 16 pairs labelled by four annotators, dan carelessly ("first"
    always); every annotator also labels 8 gold pairs as control tasks (dan wrong on all)."""
    truth = {}
    for cat in ("vqa", "chart"):
        ids = seed_more(store, cat, 16)
        truth.update({p: ("first", "second")[i % 2] for i, p in enumerate(ids)})
    gold_ids = seed_more(store, "vqa-gold", 8)
    store.set_gold([Gold(p, "import", "second") for p in gold_ids])
    names = ("ann", "bea", "cat", "dan")
    for n in names:
        store.add_annotator(Annotator(n))
    store.add_assignments(
        [Assignment(p, n, "first", i) for i, p in enumerate(truth) for n in names]
        + [Assignment(p, n, "first", 100 + i, is_gold=True) for i, p in enumerate(gold_ids) for n in names]
    )
    for i, (p, t) in enumerate(truth.items()):
        for n in names:
            wrong = n == "dan" or (n == "cat" and i % 7 == 0)
            label(store, p, n, "first" if wrong else t)
    for p in gold_ids:
        for n in names:
            label(store, p, n, "first" if n == "dan" else "second")


def seed_more(store, category: str, n: int) -> list[str]:
    """n more pairs in ``category`` (ids after the store's last)."""
    start = len(store.pairs())
    with store.write() as conn:
        for i in range(start, start + n):
            store.add_items([Item(id=f"it{i}", prompt=f"q{i}", category=category)], conn=conn)
            store.add_candidates(
                [
                    Candidate(id=f"c{i}a", item_id=f"it{i}", model="m1", text=f"a{i}"),
                    Candidate(id=f"c{i}b", item_id=f"it{i}", model="m2", text=f"b{i}"),
                ],
                conn=conn,
            )
            store.add_pairs(
                [Pair(id=f"p{i}", item_id=f"it{i}", first_id=f"c{i}a", second_id=f"c{i}b", origin="t")], conn=conn
            )
    return [f"p{i}" for i in range(start, start + n)]


def test_mmrb_quality_and_mmrb_agreement_agree_on_every_figure(sqlite_store, capsys):
    """The reliability section of mmrb agreement is mmrb quality's report (gold accuracy with
    its Wilson interval counting control tasks, agreement with the others' majority,
    Dawid-Skene, per field and category, alerts), and the agreement report's own
    per-annotator majority is the same figure."""
    from curate.cli import main

    planted_store(sqlite_store)
    db = ["--db", sqlite_store.db]
    opts = ["--threshold", "0.8", "--min-n", "8"]
    assert main(["quality", "--json", *opts, *db]) == 0
    quality = json.loads(capsys.readouterr().out)
    assert main(["agreement", "--json", "--reliability", "--resamples", "20", *opts, *db]) == 0
    agreement = json.loads(capsys.readouterr().out)
    assert quality.pop("bias")["annotators"].keys() == {"ann", "bea", "cat", "dan"}  # mmrb quality's own section
    assert agreement["reliability"] == quality
    assert {(a["annotator"], a["basis"]) for a in quality["alerts"] if a["category"] is None} == {
        ("dan", "gold"),
        ("dan", "dawid-skene"),
    }
    dan = quality["fields"]["preference"]["dan"]
    assert dan["gold"]["n"] == 8 and dan["gold"]["k"] == 0  # control tasks count toward gold
    for name, per_ann in agreement["fields"].items():
        for who, figs in per_ann["annotators"].items():
            mine = quality["fields"][name][who]["majority"]
            assert (figs["majority"]["n"], figs["majority"]["agreement"]) == (
                mine["n"],
                None if mine["share"] is None else round(mine["share"], 6),
            )
    # the text: every line of mmrb quality --category is in mmrb agreement --category
    assert main(["quality", "--category", *opts, *db]) == 0
    q_text, bias_text = capsys.readouterr().out.split("\nAnnotator bias", 1)
    assert "Bias alerts:" in bias_text
    assert main(["agreement", "--category", "--reliability", "--resamples", "20", *opts, *db]) == 0
    a_text = capsys.readouterr().out
    assert q_text.strip() and q_text.strip() in a_text
    assert "ALERT dan: gold 0.0% [0.0%, 32.4%] below 80.0% on preference (8 labels)" in a_text
    assert main(["agreement", "--resamples", "20", *opts, *db]) == 0
    skipped = capsys.readouterr().out
    assert "ALERT" not in skipped and "--reliability or mmrb quality" in skipped


def test_a_gold_upload_imports_like_the_command_and_its_errors_name_the_uploaded_file(sqlite_store):
    seed(sqlite_store, 2)
    bad = b"pair_id,preference\np0,first\np9,second\n"
    with pytest.raises(InputError) as e:
        G.import_gold_upload(sqlite_store, "gold.csv", bad)
    assert [(p.file, p.line, p.field) for p in e.value.problems] == [("gold.csv", 3, "pair_id")]
    assert sqlite_store.gold() == {}  # all or nothing
    done = G.import_gold_upload(sqlite_store, "g.jsonl", b'{"pair_id": "p1", "preference": "tie"}\n')
    assert done.written == 1 and sqlite_store.gold()["p1"].preference == "tie"


def test_the_control_share_in_effect_per_queue(sqlite_store):
    ids = seed(sqlite_store, 12)
    sqlite_store.set_gold([Gold(p, "import", "first") for p in ids[10:]])
    assign(sqlite_store, k=1, annotators=["a", "b"], control_share=0.2, seed=0, pair_ids=ids[:10])
    shares = {c.annotator: c for c in G.control_shares(sqlite_store)}
    rows = sqlite_store.assignments()
    for n in ("a", "b"):
        mine = [r for r in rows if r.annotator == n]
        assert (shares[n].assigned, shares[n].control) == (len(mine), sum(r.is_gold for r in mine))
        assert shares[n].control > 0 and shares[n].share == shares[n].control / len(mine)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from(["x", "y", "z"])), max_size=40))
def test_the_agreement_reports_majority_is_quality_s(raw):
    """One definition of agreement with the others' majority: mmrb agreement's per-annotator
    figure and mmrb quality's, whatever the labels (pairs with one, two or more labels)."""
    from curate.agreement import agreement_report, from_long
    from curate.quality.reliability import _majority_counts

    rows = {(f"p{p}", f"a{a}"): v for p, a, v in raw}
    if not rows:
        return
    frame = as_frame((p, a, "f", v) for (p, a), v in rows.items())
    df = pd.DataFrame([(p, a, "f", v) for (p, a), v in rows.items()], columns=["unit", "annotator", "field", "value"])
    ann = agreement_report(from_long(df), resamples=0).fields["f"].annotators
    got = {
        a: (s["majority"]["n"], round(s["majority"]["agreement"] * s["majority"]["n"]))
        for a, s in ann.items()
        if s["majority"]["n"]
    }
    assert got == _majority_counts(frame)


def test_an_alert_reads_as_a_sentence_without_snake_case():
    from curate.quality.reliability import Alert

    a = Alert("bob", "correctness_first", None, "dawid-skene", 0.598, 32, 0.7)
    assert a.text() == "bob: Dawid-Skene 59.8% below 70.0% on correctness of the first response (32 labels)"
    b = Alert("c", "preference", "vqa", "gold", 0.0, 1, 0.5)
    assert b.text() == "c: gold 0.0% below 50.0% on preference, category vqa (1 label)"


# -- gold accuracy: an interval from one label on, alerts on it (issue 28) ---------------------------
def test_gold_accuracy_has_a_wilson_interval_from_one_label_on():
    """A Wilson interval is computed, not resampled: on few labels it is wide, never the
    bootstrap's [1, 1]; in the text, the JSON and the Quality page's table."""
    from annotate import admin

    one = wilson(1, 1)
    assert (one.share, one.interval_undefined) == (1.0, None)
    assert one.low == pytest.approx(0.2065, abs=1e-4) and one.high == 1.0
    assert one.text() == "100.0% [20.7%, 100.0%] (n=1)"
    rows = [(f"p{i}", who, "preference", "first") for i in range(12) for who in ("ann", "bea")]
    rows += [("p0", "cat", "preference", "first")]  # cat: one gold label
    labels = as_frame(rows).assign(control=False, category="vqa")
    report = reliability_report(labels, {"preference": {f"p{i}": "first" for i in range(12)}})
    figs = report.fields["preference"]
    assert figs["cat"].gold.n == 1 and figs["cat"].gold.low == one.low
    assert report.as_dict()["fields"]["preference"]["cat"]["gold"]["high"] == 1.0
    assert "  cat: gold 100.0% [20.7%, 100.0%] (n=1);" in "\n".join(report.lines())
    table = admin.quality_table(admin.quality_frame(report)).frame.set_index("Annotator")
    assert table.loc["cat", "Wilson interval (95%)"] == "[20.7%, 100.0%]"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_a_wilson_interval_holds_its_share_whatever_n(nk):
    n, k = nk
    s = wilson(k, n)
    assert s.low is not None and s.high is not None and s.interval_undefined is None
    assert 0.0 <= s.low <= s.share <= s.high <= 1.0
    assert (s.low == 0.0) == (k == 0) and (s.high == 1.0) == (k == n)


def gold_case(right: dict[str, tuple[int, int]], field: str = "correctness_second"):
    """Each annotator's (right, of) gold labels on ``field``, one pair each: a tiny literal
    fixture, no other labels."""
    rows, gold = [], {}
    for who, (k, n) in right.items():
        for i in range(n):
            p = f"{who}{i}"
            gold[p] = "correct"
            rows.append((p, who, field, "correct" if i < k else "incorrect", True, "vqa"))
    frame = pd.DataFrame(rows, columns=["pair", "annotator", "field", "value", "control", "category"])
    return frame, {field: gold}


def test_bob_below_the_threshold_on_17_gold_labels_is_alerted_whatever_the_minimum():
    # the case: bob 4 of 17 (23.5% [9.6, 47.3]) raised no alert under min_n=20
    frame, gold = gold_case({"bob": (4, 17), "alice": (16, 17), "carol": (3, 4)})
    report = reliability_report(frame, gold, threshold=0.7, min_n=20)
    gold_alerts = [a for a in report.alerts if a.basis == "gold" and a.category is None]
    assert [(a.annotator, a.n) for a in gold_alerts] == [("bob", 17)]
    (bob,) = gold_alerts
    assert (round(bob.low, 3), round(bob.high, 3)) == (0.096, 0.473)
    assert bob.text() == "bob: gold 23.5% [9.6%, 47.3%] below 70.0% on correctness of the second response (17 labels)"
    assert report.as_dict()["alerts"][0]["high"] == pytest.approx(0.473, abs=1e-3)
    # carol's 3 of 4 reaches [30.1%, 95.4%]: the threshold lies inside, no alert
    assert "carol" not in {a.annotator for a in report.alerts}
    # below the threshold on one label, yet the interval reaches above it: no alert
    frame, gold = gold_case({"dan": (0, 1), "eve": (0, 3)})
    alerted = {a.annotator for a in reliability_report(frame, gold, threshold=0.7).alerts if a.basis == "gold"}
    assert alerted == {"eve"}  # 0 of 3 is [0, 56.1%]; 0 of 1 is [0, 79.3%]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 25).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
    st.floats(0.05, 0.95),
    st.integers(1, 50),
)
def test_a_gold_alert_is_exactly_an_interval_below_the_threshold(nk, threshold, min_n):
    k, n = nk[1], nk[0]
    frame, gold = gold_case({"ann": (k, n)})
    report = reliability_report(frame, gold, threshold=threshold, min_n=min_n, per_category=False)
    alerted = any(a.basis == "gold" for a in report.alerts)
    assert alerted == (wilson(k, n).high < threshold)


def test_the_wilson_interval_is_statsmodels_own():
    from statsmodels.stats.proportion import proportion_confint

    from curate.quality.reliability import wilson

    for n in (1, 2, 3, 7, 17, 20, 100, 1001):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            got = wilson(k, n)
            low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
            assert abs(got.low - max(low, 0.0)) < 1e-12 and abs(got.high - min(high, 1.0)) < 1e-12, (k, n)
    assert (round(wilson(4, 17).low, 3), round(wilson(4, 17).high, 3)) == (0.096, 0.473)  # bob's
