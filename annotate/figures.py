"""The lead's figures over the labels, computed once per store state and shared by every page
and session of the process: a new label, edit or withdrawal changes Store.change_stamp and
so the cache key; nothing else does. Charts are kept as their Vega-Lite specs: building an
Altair chart and validating it costs far more than drawing the page around it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace

import pandas as pd
import streamlit as st

from curate.agreement import AgreementReport, from_store, summary
from curate.quality.bias import BiasReport, bias_report, store_facts
from curate.quality.gold import ControlShare, GoldStats
from curate.quality.gold import control_shares as control_shares_of
from curate.quality.gold import gold_stats as gold_stats_of
from curate.quality.qualification import qualification_pairs
from curate.quality.reliability import QualityReport, store_figures, with_accounts
from curate.store import Store
from curate.store.sheet import LabelSheet, SheetStore

from . import admin, charts, progress, ui

Key = tuple[tuple[str | None, str | None], tuple]


def page_key(store: Store) -> Key:
    """The cache key of the figures of the served store: (store location, change stamp). The
    stamp counts every stage's rows (0.04 s at 600,000 labels): a page reads it once per run
    and passes it as ``key=`` to each figure it draws."""
    return _key(store)


def _key(store: Store) -> Key:
    c = ui.config()
    return (c.db, c.images), store.change_stamp()


# Every label's columns (and the assignments', once a figure needs them), read once per
# (store location, change stamp) and shared by every figure of the Progress, Agreement and
# Quality pages, which each read the label table again (bench/pages.py); shared as they are
# (read only), the last two kept: a new label makes a new stamp.
_SHEETS: OrderedDict[Key, LabelSheet] = OrderedDict()
_SHEETS_LOCK = threading.Lock()


def _sheet(store: Store, key: Key) -> LabelSheet:
    with _SHEETS_LOCK:
        got = _SHEETS.get(key)
    if got is None:
        got = LabelSheet.read(store)  # outside the lock: two sessions at once read equal sheets
        with _SHEETS_LOCK:
            _SHEETS[key] = got
            while len(_SHEETS) > 2:
                _SHEETS.popitem(last=False)
    return got


def _read(store: Store, key: Key) -> SheetStore:
    """The store, its figures' reads answered from the sheet of ``key``."""
    return SheetStore(store, _sheet(store, key))


@st.cache_data(max_entries=8, show_spinner="Computing agreement...")
def _report(_store: Store, key: Key) -> AgreementReport:
    # From the sheet when another page has read it; else from the store's own reads: the
    # agreement report needs fewer columns than the sheet holds (600,000 labels: 1.7 s on
    # the store's reads, 2.0 s reading the sheet first, 1.3 s with the sheet read)
    with _SHEETS_LOCK:
        sheet = _SHEETS.get(key)
    return admin.lead_report(_store if sheet is None else SheetStore(_store, sheet))


@st.cache_resource(max_entries=2, show_spinner=False)
def _submitted(_store: Store, key: Key) -> progress.Submitted:
    # The submitted labels' columns, read once per (store location, change stamp) for the
    # per-annotator counts and the plots; a resource, not data: shared as it is (read only)
    return progress.Submitted.read_parts(_read(_store, key))


@st.cache_data(max_entries=8, show_spinner=False)
def _annotator_counts(_store: Store, key: Key) -> dict[str, admin.AnnotatorCounts]:
    return admin.annotator_counts(_read(_store, key), submitted=_submitted(_store, key))


def annotator_counts(store: Store, *, key: Key | None = None) -> dict[str, admin.AnnotatorCounts]:
    """admin.annotator_counts of the served store, cached per (store location, change stamp)
    (the accounts and the last hour's labels are read by the page on every run)."""
    return _annotator_counts(store, key or _key(store))


@st.cache_data(max_entries=8, show_spinner="Drawing progress...")
def _progress_charts(_store: Store, key: Key) -> dict[str, dict]:
    activity = _submitted(_store, key)
    over_time = progress.labels_over_time(activity)
    if over_time.empty:
        return {}
    out = {"labels_over_time": charts.spec(charts.labels_over_time(over_time))}
    timed = progress.seconds_per_label(activity)
    if len(timed):
        out["seconds_per_label"] = charts.spec(charts.seconds_per_label(timed))
    # of the label table, not the agreement report: its statistics are the Agreement page's
    dist = progress.label_distribution(from_store(_read(_store, key)))
    out["label_distribution"] = charts.spec(charts.label_distribution(dist))
    return out


@st.cache_data(max_entries=8, show_spinner=False)
def _overlap_tables(_store: Store, key: Key) -> tuple[pd.DataFrame, pd.DataFrame]:
    read = _read(_store, key)
    return admin.progress_by_category(read), admin.short_of_overlap(read)


def overlap_tables(store: Store, *, key: Key | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(admin.progress_by_category, admin.short_of_overlap) of the served store, cached per
    (store location, change stamp): a new assignment or label changes the stamp, the clock
    does not enter them (200,000 pairs: 1.2 s of the Progress page's view)."""
    return _overlap_tables(store, key or _key(store))


@st.cache_data(max_entries=8, show_spinner="Drawing agreement...")
def _agreement_charts(_store: Store, key: Key) -> dict[str, dict]:
    report = _report(_store, key)
    cells = summary.kappa_cells(report)
    out = {
        "alpha": charts.spec(charts.alpha_per_category(summary.alpha_rows(report))),
        "majority": charts.spec(charts.majority_agreement(summary.majority_rows(report))),
    }
    if cells:
        out["kappa"] = charts.spec(charts.kappa_heatmap(cells))
    return out


def agreement(store: Store) -> AgreementReport:
    """admin.lead_report of the served store, cached per (store location, change stamp)."""
    return _report(store, _key(store))


def progress_charts(store: Store, *, key: Key | None = None) -> dict[str, dict]:
    """The Progress page's charts by name (none before the first label)."""
    return _progress_charts(store, key or _key(store))


def agreement_charts(store: Store) -> dict[str, dict]:
    """The Agreement page's charts by name ("kappa" only once two annotators share a pair)."""
    return _agreement_charts(store, _key(store))


def quality_key(store: Store) -> tuple:
    """The cache key of the Quality page's figures: (store location, change stamp) and the
    gold answers (re-imported gold changes them, not the stamp). Read once per run and
    passed to :func:`quality`, :func:`quality_drawn` and :func:`gold_stats`."""
    gold = tuple(
        sorted((g.pair_id, g.preference, g.correctness_first, g.correctness_second) for g in store.gold().values())
    )
    return _key(store), gold


@st.cache_data(max_entries=8, show_spinner="Computing annotator reliability...")
def _quality(_store: Store, key: tuple, threshold: float, min_n: int, category: str | None) -> QualityReport:
    return store_figures(
        _read(_store, key[0]),
        threshold=threshold,
        min_n=min_n,
        interval_categories=() if category is None else (category,),
    )


def quality(
    store: Store, *, threshold: float, min_n: int, category: str | None = None, key: tuple | None = None
) -> QualityReport:
    """The figures of ``mmrb quality`` (curate.quality.reliability.store_figures), cached per
    (store location, change stamp, gold answers, threshold, minimum, category), with the
    accounts' qualification and pauses read as they are now. Dawid-Skene's bootstrap
    intervals are those of every category together and of ``category`` only: the page shows
    one at a time, and each category's bootstrap is most of the report's time. ``key``:
    :func:`quality_key`, when the caller has read it."""
    return with_accounts(store, _quality(store, key or quality_key(store), threshold, min_n, category))


@st.cache_data(max_entries=8, show_spinner=False)
def _quality_drawn(
    _store: Store, key: tuple, threshold: float, min_n: int, category: str | None
) -> tuple[pd.DataFrame, dict[str, dict]]:
    frame = admin.quality_frame(_quality(_store, key, threshold, min_n, category), category)
    if frame.empty:
        return frame, {}
    return frame, {
        kind: charts.spec(charts.annotator_reliability(frame, kind, threshold=threshold, min_n=min_n))
        for kind in ("gold", "majority", "model")
    }


def quality_drawn(
    store: Store, *, threshold: float, min_n: int, category: str | None = None, key: tuple | None = None
) -> tuple[pd.DataFrame, dict[str, dict]]:
    """The Quality page's table frame (admin.quality_frame) over every category or in
    ``category``, and its charts by kind (gold, majority, model; none when the frame is
    empty), cached as :func:`quality` is: drawn on every run they cost 0.2 s."""
    return _quality_drawn(store, key or quality_key(store), threshold, min_n, category)


@st.cache_data(max_entries=8, show_spinner=False)
def _gold_stats(_store: Store, key: tuple) -> GoldStats:
    return gold_stats_of(_read(_store, key[0]))


def gold_stats(store: Store, *, key: tuple | None = None) -> GoldStats:
    """curate.quality.gold.gold_stats, cached as :func:`quality` is (gold pairs, control
    tasks and their labels change the key); the qualification set, a setting, read now."""
    qual = qualification_pairs(store)
    stats = _gold_stats(store, key or quality_key(store))
    return replace(stats, qualification_pairs=len(qual[0]) if qual else 0)


@st.cache_data(max_entries=8, show_spinner="Computing annotator bias...")
def _bias(_store: Store, key: Key) -> BiasReport:
    return bias_report(store_facts(_read(_store, key).label_fact_columns()))


def bias(store: Store, *, key: Key | None = None) -> BiasReport:
    """The bias diagnostics of ``mmrb quality`` (curate.quality.bias), cached per (store
    location, change stamp): they read only the labels, their assignments and the pairs."""
    return _bias(store, key or _key(store))


@st.cache_data(max_entries=8, show_spinner=False)
def _bias_chart(_store: Store, key: Key) -> dict:
    return charts.spec(charts.annotator_bias(admin.bias_frame(_bias(_store, key))))


def bias_chart(store: Store, *, key: Key | None = None) -> dict:
    """The Quality page's bias chart (of :func:`bias`), cached as it is."""
    return _bias_chart(store, key or _key(store))


@st.cache_data(max_entries=8, show_spinner=False)
def _control_shares(_store: Store, key: Key) -> list[ControlShare]:
    return control_shares_of(_read(_store, key))


def control_shares(store: Store, *, key: Key | None = None) -> list[ControlShare]:
    """curate.quality.gold.control_shares, cached per (store location, change stamp): the
    assignments and their states change the stamp."""
    return _control_shares(store, key or _key(store))
