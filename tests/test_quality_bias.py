"""Annotator bias diagnostics (curate/quality/bias.py, Store.label_facts): position, ties and
"unsure", length, fast labels; their alerts; `mmrb quality --json`."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.model import Annotator, Assignment, Label
from curate.quality.bias import FEWER_TIMED, BiasLimits, LabelFacts, facts_frame, store_facts
from curate.quality.bias import bias_report as report_of_frame
from curate.quality.reliability import wilson
from curate.sides import from_screen
from tests.support.pairs import seed


def fact(who="ann", pref="first", left="first", secs=10.0, unsure=False, lengths=(10, 10), pair="p") -> LabelFacts:
    del pair  # a fixture's pair, for reading only
    return LabelFacts(who, pref, left, secs, unsure, *lengths)


def bias_report(facts, limits=None):
    return report_of_frame(facts_frame(facts), limits)


def test_left_picks_are_read_through_the_assignments_left_side():
    # ann picks the screen's left every time: stored "first" where first was on the left,
    # "second" where second was; bea picks the stored first whatever the screen
    ann = [fact("ann", "first", "first"), fact("ann", "second", "second"), fact("ann", "first", "first")]
    bea = [fact("bea", "first", "first"), fact("bea", "first", "second")]
    report = bias_report([*ann, *bea])
    assert (report.annotators["ann"].left.k, report.annotators["ann"].left.n) == (3, 3)
    assert (report.annotators["bea"].left.k, report.annotators["bea"].left.n) == (1, 2)


def test_ties_and_imported_labels_count_toward_no_left_share():
    facts = [
        fact(pref="tie"),
        fact(pref=None),  # no preference: neither pick nor tie
        fact(pref="first", left=None),  # imported: no screen side
        fact(pref="second", left="first"),
    ]
    b = bias_report(facts).annotators["ann"]
    assert (b.left.k, b.left.n, b.unseen) == (0, 1, 1)
    assert (b.tie.k, b.tie.n) == (1, 3) and b.labels == 4


def test_unsure_and_longer_chosen():
    facts = [
        fact(pref="first", unsure=True, lengths=(30, 10)),  # longer chosen
        fact(pref="second", lengths=(30, 10)),  # shorter chosen
        fact(pref="second", lengths=(5, 50)),  # longer chosen
        fact(pref="first", lengths=(7, 7)),  # equal lengths: not compared
        fact(pref="tie", lengths=(1, 9)),  # a tie picks no response
    ]
    b = bias_report(facts).annotators["ann"]
    assert (b.unsure.k, b.unsure.n) == (1, 5)
    assert (b.longer.k, b.longer.n) == (2, 3)


def test_fast_labels_are_under_a_third_of_the_annotators_own_median():
    secs = [30, 30, 30, 30, 9.9, 10, None, 0]  # median of the timed 6 is 30: 9.9 is fast, 10 is not
    b = bias_report([fact(secs=s) for s in secs]).annotators["ann"]
    assert b.median_seconds == 30 and (b.fast.k, b.fast.n) == (1, 6) and b.fast_undefined is None
    few = bias_report([fact(secs=1.0) for _ in range(4)]).annotators["ann"]
    assert few.fast.share is None and few.fast_undefined == FEWER_TIMED and few.median_seconds is None


def test_a_bias_alert_is_an_interval_wholly_beyond_its_bound():
    # 12 left picks of 12: [75.8%, 100%] beyond 60%; 7 of 12 ([32.0%, 80.7%]) is not
    always_left = [fact("ann", "first", "first", pair=f"p{i}") for i in range(12)]
    some = [fact("bea", "first" if i < 7 else "second", "first", pair=f"p{i}") for i in range(12)]
    report = bias_report([*always_left, *some])
    left = [a for a in report.alerts if a.diagnostic == "left"]
    assert [(a.annotator, a.n) for a in left] == [("ann", 12)]
    assert left[0].text() == "ann: left picks 100.0% [75.8%, 100.0%] outside 40.0%-60.0% (12 labels)"
    # every label a tie: ties above 30%
    ties = bias_report([fact(pref="tie") for _ in range(6)])
    assert [(a.diagnostic, a.bound_high) for a in ties.alerts] == [("tie", 0.3)]
    assert "  ALERT ann: ties 100.0% [61.0%, 100.0%] above 30.0% (6 labels)" in ties.lines()
    # a stricter limit alerts where the default does not
    assert not [a for a in report.alerts if a.annotator == "bea"]
    strict = bias_report(some, BiasLimits(left_margin=0.0))
    assert strict.alerts == []  # 50% lies inside [32.0%, 80.7%]: still no alert


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["left", "right"]), st.sampled_from(["first", "second"])), max_size=40))
def test_the_left_share_counts_exactly_the_screen_left_picks(picks):
    """Whatever the seeded sides, the left share is the number of left picks on screen;
    it alerts exactly when its Wilson interval lies outside [40%, 60%]."""
    facts = [fact(pref=from_screen(screen, left), left=left, pair=f"p{i}") for i, (screen, left) in enumerate(picks)]
    report = bias_report(facts)
    if not picks:
        assert report.annotators == {} and report.alerts == []
        return
    b = report.annotators["ann"]
    k = sum(screen == "left" for screen, _ in picks)
    assert (b.left.k, b.left.n) == (k, len(picks))
    s = wilson(k, len(picks))
    assert any(a.diagnostic == "left" for a in report.alerts) == (s.low > 0.6 or s.high < 0.4)


@pytest.mark.both_backends
def test_the_store_gives_the_facts_and_mmrb_quality_reports_them(store, capsys):
    from curate.cli import main

    sqlite_store = store

    ids = seed(sqlite_store, 6)
    sqlite_store.add_annotator(Annotator("ann"))
    lefts = ["first", "second", "first", "second", "first", "second"]
    sqlite_store.add_assignments(
        [Assignment(p, "ann", left, i) for i, (p, left) in enumerate(zip(ids, lefts, strict=True))]
    )
    for i, (p, left) in enumerate(zip(ids, lefts, strict=True)):  # always the screen's left, once unsure
        unsure = "unsure" if i == 0 else None
        sqlite_store.save_label(Label(p, "ann", unsure, preference=from_screen("left", left), seconds=20.0))
    cols = sqlite_store.label_fact_columns()
    facts = store_facts(cols).assign(pair=cols.pair.values[cols.pair.codes]).set_index("pair").loc[ids]
    assert facts["left"].tolist() == lefts and facts["unsure"].tolist() == [True] + [False] * 5
    pairs = {p.id: p for p in sqlite_store.pairs()}
    texts = {c.id: c.text for c in sqlite_store.candidates()}
    assert [(a, b) for a, b in zip(facts["length_first"], facts["length_second"], strict=True)] == [
        (len(texts[pairs[p].first_id]), len(texts[pairs[p].second_id])) for p in ids
    ]
    assert main(["quality", "--json", "--db", sqlite_store.db]) == 0
    out = json.loads(capsys.readouterr().out)
    ann = out["bias"]["annotators"]["ann"]
    assert (ann["left"]["k"], ann["left"]["n"], ann["unsure"]["k"]) == (6, 6, 1)
    assert [(a["annotator"], a["diagnostic"]) for a in out["bias"]["alerts"]] == [("ann", "left")]
    assert main(["quality", "--db", sqlite_store.db]) == 0
    text = capsys.readouterr().out
    assert "ALERT ann: left picks 100.0% [61.0%, 100.0%] outside 40.0%-60.0% (6 labels)" in text


def test_the_lead_reads_the_bias_as_a_table_and_a_chart():
    from annotate import admin, charts
    from tests.test_lead_figures import layers

    facts = [fact("ann", "first", "first", pair=f"p{i}") for i in range(12)]  # always left: alerts
    facts += [fact("bea", "tie", secs=None, pair="q")]  # one tie, no timed label
    report = bias_report(facts)
    frame = admin.bias_frame(report)
    assert len(frame) == 10 and frame["alert"].sum() == 1
    ann_left = frame[(frame["annotator"] == "ann") & (frame["diagnostic"] == "left picks")].iloc[0]
    assert (ann_left["share"], ann_left["n"], ann_left["alert"]) == (1.0, 12, True)
    bea_fast = frame[(frame["annotator"] == "bea") & (frame["diagnostic"] == "fast labels")].iloc[0]
    assert pd.isna(bea_fast["share"]) and bea_fast["note"] == FEWER_TIMED
    table = admin.bias_table(report).frame.set_index("Annotator")
    assert table.loc["ann", "Left picks"] == "100% [76-100] n=12"
    assert table.loc["ann", "Alert"] == "left picks" and table.loc["bea", "Alert"] == ""
    assert table.loc["bea", "Fast labels"] == f"undefined ({FEWER_TIMED})" and table.loc["bea", "Left picks"] is None
    spec = charts.annotator_bias(frame).to_dict()
    marks = [(la["mark"]["type"] if isinstance(la["mark"], dict) else la["mark"]) for la in layers(spec)]
    assert marks.count("bar") == 1 and marks.count("rule") == 2 and marks.count("text") == 1
    data = [d for d in spec["datasets"].values() if d and "diagnostic" in d[0]][0]
    notes = {(r["annotator"], r["diagnostic"]): r["label"] for r in data if not r["shown"]}
    assert notes[("bea", "fast labels")] == FEWER_TIMED and notes[("bea", "left picks")] == "none"


def test_labels_on_declared_schemes_give_their_stored_preference_and_unsure_answers(sqlite_store):
    """mmrb2-pairwise: a score shown as 6 (the left response much better) with the second
    response on the left is stored as 1, preference "second": a left pick. verify: an
    "unsure" verdict counts as an unsure answer."""
    from curate import schemes
    from curate.sides import scale_from_screen

    pairwise, verify = schemes.BUILT_IN["mmrb2-pairwise"], schemes.BUILT_IN["verify"]
    ids = seed(sqlite_store, 3)
    sqlite_store.set_pair_scheme(ids[:2], pairwise.name, pairwise.version)
    sqlite_store.set_pair_scheme(ids[2:], verify.name, verify.version)
    sqlite_store.add_annotator(Annotator("ann"))
    sqlite_store.add_assignments([Assignment(p, "ann", "second", i) for i, p in enumerate(ids)])
    for p, shown in ((ids[0], 6), (ids[1], 2)):  # left much better; right better
        stored = scale_from_screen(shown, 1, 6, "second")
        sqlite_store.save_label(schemes.to_label(pairwise, p, "ann", {"score": stored}))
    sqlite_store.save_label(schemes.to_label(verify, ids[2], "ann", {"verdict": "unsure"}, proposal="first"))
    cols = sqlite_store.label_fact_columns()
    facts = store_facts(cols).assign(pair=cols.pair.values[cols.pair.codes]).set_index("pair").loc[ids]
    assert facts["preference"].tolist()[:2] == ["second", "first"]
    assert facts["unsure"].tolist() == [False, False, True]
    b = report_of_frame(facts).annotators["ann"]
    assert (b.left.k, b.left.n) == (1, 2) and (b.unsure.k, b.unsure.n) == (1, 3)
