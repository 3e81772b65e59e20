"""Reliability over integer codes (curate.quality.reliability.codes_report, frames.store_codes)
against the frame-based computation it replaced, kept here as the reference: the same report,
number for number, on random frames, on random stores and on the labelled sample."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curate.model import LABEL_FIELDS
from curate.quality.aggregate import aggregate_field
from curate.quality.frames import COLUMNS, LongCodes, gold_by_field, labels_frame, store_codes
from curate.quality.reliability import (
    QualityReport,
    Reliability,
    _alerts,
    reliability_report,
    store_figures,
    wilson,
)


# -- the reference: the frame-based report as it was before the codes ------------------------
def _gold_counts(frame: pd.DataFrame, gold: Mapping[str, str]) -> dict[str, tuple[int, int]]:
    g = frame["pair"].map(gold)
    on_gold = frame[g.notna().to_numpy()]
    if on_gold.empty:
        return {}
    right = on_gold["value"].to_numpy() == g[g.notna()].to_numpy()
    tally = pd.DataFrame({"annotator": on_gold["annotator"].to_numpy(), "right": right})
    grouped = tally.groupby("annotator")["right"].agg(["size", "sum"])
    return {str(a): (int(r["size"]), int(r["sum"])) for a, r in grouped.iterrows()}


def _majority_counts(frame: pd.DataFrame) -> dict[str, tuple[int, int]]:
    if frame.empty:
        return {}
    pair_code, _ = pd.factorize(frame["pair"])
    value_code, values = pd.factorize(frame["value"])
    tab = np.zeros((int(pair_code.max()) + 1, len(values)), dtype=np.int64)
    np.add.at(tab, (pair_code, value_code), 1)
    others = tab[pair_code]
    others[np.arange(len(others)), value_code] -= 1
    top = others.max(axis=1)
    counted = (others.sum(axis=1) >= 1) & ((others == top[:, None]).sum(axis=1) == 1)
    agree = counted & (others.argmax(axis=1) == value_code)
    tally = pd.DataFrame({"annotator": frame["annotator"].astype(str).to_numpy(), "n": counted, "k": agree})
    sums = tally.groupby("annotator")[["n", "k"]].sum()
    return {str(a): (int(r["n"]), int(r["k"])) for a, r in sums.iterrows() if r["n"]}


def _figures(frame: pd.DataFrame, gold: Mapping[str, str], seed: int) -> dict[str, Reliability]:
    regular = frame[~frame["control"].to_numpy(dtype=bool)]
    g = _gold_counts(frame, gold)
    m = _majority_counts(regular)
    model: dict[str, float] = {}
    model_n: dict[str, int] = {}
    spans: dict = {}
    if not regular.empty:
        fa = aggregate_field(regular, "dawid-skene", gold=gold, seed=seed, intervals=True)
        model, spans = fa.reliability, fa.intervals
        model_n = {str(a): int(n) for a, n in regular.groupby("annotator").size().items()}
    out = {}
    for a in sorted(set(frame["annotator"].astype(str))):
        gn, gk = g.get(a, (0, 0))
        mn, mk = m.get(a, (0, 0))
        out[a] = Reliability(wilson(gk, gn), wilson(mk, mn), model.get(a), model_n.get(a, 0), spans.get(a))
    return out


def reference_report(labels: pd.DataFrame, gold: Mapping[str, Mapping[str, str]], seed: int = 0) -> QualityReport:
    fields: dict = {}
    categories: dict = {}
    alerts: list = []
    order = {f: i for i, f in enumerate(LABEL_FIELDS)}
    names = sorted(set(labels["field"].astype(str)), key=lambda f: (order.get(f, len(order)), f)) if len(labels) else []
    for name in names:
        part = labels[labels["field"].to_numpy() == name]
        g = gold.get(name, {})
        figs = _figures(part, g, seed)
        fields[name] = figs
        alerts += _alerts(figs, name, None, 0.7, 20)
        for cat, sub in part.groupby("category", sort=True):
            figs = _figures(sub, g, seed)
            categories.setdefault(str(cat), {})[name] = figs
            alerts += _alerts(figs, name, str(cat), 0.7, 20)
    annotators = tuple(sorted(set(labels["annotator"].astype(str)))) if len(labels) else ()
    return QualityReport(annotators, fields, categories, alerts, 0.7, 20)


# -- random frames ------------------------------------------------------------------------------
VALUES = {"preference": ["first", "second", "tie"], "correctness_first": ["correct", "incorrect"], "score": ["1", "2"]}


@st.composite
def frames(draw, category_per_label: bool = False):
    rows = []
    pairs = [f"p{n}" for n in range(draw(st.integers(1, 12)))]
    for p in pairs:
        category = draw(st.sampled_from(["", "vqa", "safety"]))
        for a in draw(st.lists(st.sampled_from(["ann", "bea", "cy", "dee"]), min_size=1, max_size=4, unique=True)):
            if category_per_label:  # a frame may give one pair's labels other categories
                category = draw(st.sampled_from(["", "vqa", "safety"]))
            control = draw(st.booleans()) and draw(st.booleans())
            for f in draw(st.lists(st.sampled_from(sorted(VALUES)), min_size=1, max_size=3, unique=True)):
                rows.append((p, a, f, draw(st.sampled_from(VALUES[f])), control, category))
    gold = {
        f: {p: draw(st.sampled_from([*VALUES[f], "unsure"])) for p in pairs if draw(st.integers(0, 3)) == 0}
        for f in VALUES
    }
    return pd.DataFrame(rows, columns=list(COLUMNS)), gold


@given(frames())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_report_on_codes_is_the_frame_report(case) -> None:
    frame, gold = case
    assert reliability_report(frame, gold) == reference_report(frame, gold)


@given(frames(category_per_label=True))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_pair_in_two_categories_gets_each_categorys_own_majority(case) -> None:
    """The report slices the field's majority flags per category only where each pair lies in
    one category; elsewhere each category's are its own labels'."""
    frame, gold = case
    assert reliability_report(frame, gold) == reference_report(frame, gold)


def test_an_empty_frame_reports_nothing() -> None:
    empty = pd.DataFrame(columns=list(COLUMNS))
    assert reliability_report(empty, {}) == reference_report(empty, {})


# -- random stores and the labelled sample ------------------------------------------------------
def _decoded(codes: LongCodes) -> list[tuple]:
    return sorted(
        zip(
            codes.pairs[codes.pair],
            codes.annotators[codes.annotator],
            codes.fields[codes.field],
            codes.values[codes.value],
            codes.control.tolist(),
            codes.categories[codes.category],
            strict=True,
        )
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_store_codes_and_figures_on_random_stores(tmp_path, seed) -> None:
    from bench.pages import build_store
    from curate.store import Store

    db = tmp_path / "store.db"
    build_store(db, 150 + 40 * seed, seed=seed)
    with Store(str(db), tmp_path / "images") as store:
        frame = labels_frame(store)
        assert _decoded(store_codes(store)) == _decoded(LongCodes.of_frame(frame))
        gold = gold_by_field(store.gold().values())
        assert store_figures(store) == reference_report(frame, gold)


def test_store_figures_on_the_labelled_sample(tmp_path) -> None:
    """Schemes other than mmrb (ratings fields), gold derived from the references."""
    from curate.store import Store
    from tests.support.quality_sample import quality_sample

    info = quality_sample(tmp_path / "sample.db")
    with Store(info.db, info.images) as store:
        frame = labels_frame(store)
        assert _decoded(store_codes(store)) == _decoded(LongCodes.of_frame(frame))
        assert store_figures(store) == reference_report(frame, gold_by_field(store.gold().values()))


@pytest.mark.parametrize("seed", [3, 4])
def test_gold_stats_categories_are_the_records(tmp_path, seed) -> None:
    """gold_stats reads the gold pairs' categories as columns; before, every pair and item as records."""
    from collections import Counter

    from bench.pages import build_store
    from curate.quality.gold import gold_stats
    from curate.store import Store

    db = tmp_path / "store.db"
    build_store(db, 400 + 100 * seed, seed=seed)
    with Store(str(db), tmp_path / "images") as store:
        pairs = {p.id: p for p in store.pairs()}
        cats = {i.id: i.category for i in store.items()}
        want = Counter(cats.get(pairs[g].item_id, "") for g in store.gold() if g in pairs)
        stats = gold_stats(store)
        assert stats.by_category == dict(want) and len(want) > 1
        assert stats.control_labels == len(store.labels(control=True)) > 0


def test_intervals_of_one_category_are_those_of_the_full_report(tmp_path) -> None:
    """The Quality page asks for the intervals of every category together, then of the one
    picked: the same figures as the full report there, no interval elsewhere, the same alerts."""
    from bench.pages import build_store
    from curate.store import Store

    db = tmp_path / "store.db"
    build_store(db, 300, seed=5)
    with Store(str(db), tmp_path / "images") as store:
        full = store_figures(store)
        picked = sorted(full.categories)[1]
        some = store_figures(store, interval_categories=(picked,))
        none = store_figures(store, interval_categories=())
    assert some.fields == full.fields == none.fields and some.alerts == full.alerts == none.alerts
    assert some.categories[picked] == full.categories[picked]
    for cat, per_field in some.categories.items():
        for name, per_ann in per_field.items():
            for a, r in per_ann.items():
                assert r.model == full.categories[cat][name][a].model
                assert (r.model_interval is None) == (cat != picked) or full.categories[cat][name][
                    a
                ].model_interval is None
                assert none.categories[cat][name][a].model_interval is None
