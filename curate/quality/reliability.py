"""Per-annotator reliability: accuracy on gold and agreement with the others' majority with
95% Wilson intervals (from one label on: see :func:`wilson`), and Dawid-Skene's estimated
reliability; per field and per category; alerts when the evidence puts an annotator below a
threshold, and an optional automatic pause (the queue then serves that account nothing).

The input is a long frame with columns ``pair``, ``annotator``, ``field``, ``value``,
``control`` (the label is a control task's) and ``category``. Accuracy on gold counts every
label on a pair with gold, control tasks included (that is what they are for). Agreement
with the others' majority and Dawid-Skene use regular labels only: control labels count
toward no pair's agreement. The others' majority of a label is the unique modal value of
the other annotators' labels on that pair (one other label is its own majority: with two
labels a pair, this is agreement with the other annotator), as in ``mmrb agreement``.

Alerts: an annotator is flagged on a field when the whole Wilson interval of their gold
accuracy lies below ``threshold`` (its upper bound is below it), whatever the number of gold
labels: 4 right of 17 ([9.6%, 47.3%]) alerts at 70%, 1 of 1 ([20.7%, 100%]) does not, the
interval says how much the labels show. Dawid-Skene's reliability has no interval here (a
bootstrap over pairs would refit the model per resample), so it alerts below ``threshold``
on at least ``min_n`` labels in the model, as before. ``min_n`` is also where the Quality page
stops greying a share's bar.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from ..audit import SYSTEM
from ..model import LABEL_FIELDS
from ..seeding import stable_hash
from ..wording import percent, plural
from .aggregate import CodedField, Interval, reliability_intervals
from .dawid_skene import dawid_skene
from .frames import COLUMNS, LongCodes, gold_by_field, store_codes

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from ..agreement.table import LabelTable
    from ..store.protocols import ReliabilityStore

Basis = Literal["gold", "dawid-skene"]


@dataclass(frozen=True)
class Share:
    """k of n, with its 95% Wilson interval (None when n is 0). ``interval_undefined`` is kept
    in the JSON for its readers; a Wilson interval is defined from one label on, so it is
    always None."""

    n: int
    k: int
    share: float | None
    low: float | None
    high: float | None
    interval_undefined: str | None = None

    def text(self) -> str:
        if not self.n:
            return "– (n=0)"
        if self.low is None:
            return f"{percent(self.share)} [undefined ({self.interval_undefined})] (n={self.n})"
        return f"{percent(self.share)} [{percent(self.low)}, {percent(self.high)}] (n={self.n})"


_Z95 = NormalDist().inv_cdf(0.975)  # the two-sided 95% normal quantile, scipy's norm.isf(0.025)


def wilson(k: int, n: int) -> Share:
    """k of n with its 95% Wilson interval, for any n from 1 (issue 28: an alert rests on the
    interval whatever n). The floor of the project's bootstrap intervals
    (``MIN_BOOTSTRAP_PAIRS``) is not applied: it exists because resampling a handful of pairs
    gives an interval far too narrow (1 of 1 -> [1, 1]), while Wilson's score interval is
    computed, not resampled, and is honestly wide on few labels (1 of 1 -> [20.7%, 100%])."""
    if n == 0:
        return Share(0, 0, None, None, None)
    # Wilson (1927) in closed form, as statsmodels' proportion_confint(method="wilson") computes it
    # (equal to 1e-12, tests/test_quality.py): importing statsmodels for it was half of
    # `mmrb quality`'s time on the sample
    z2 = _Z95 * _Z95
    centre = (k + z2 / 2) / (n + z2)
    half = _Z95 / (n + z2) * math.sqrt(k * (n - k) / n + z2 / 4)
    low, high = centre - half, centre + half
    share = k / n
    # rounding leaves 2.8e-17 for 0 of n: the bounds hold the share exactly
    return Share(n, k, share, min(max(float(low), 0.0), share), max(min(float(high), 1.0), share))


@dataclass(frozen=True)
class Reliability:
    gold: Share  # accuracy on gold
    majority: Share  # agreement with the others' majority
    model: float | None  # Dawid-Skene's estimated reliability
    model_n: int  # the annotator's labels in the model
    model_interval: Interval | None = None  # its bootstrap interval over pairs (or why undefined)


BASIS_TITLES: dict[str, str] = {"gold": "gold", "dawid-skene": "Dawid-Skene"}
FIELD_PHRASES: dict[str, str] = {  # a field in a sentence (a rating's key stays as it is)
    "preference": "preference",
    "correctness_first": "correctness of the first response",
    "correctness_second": "correctness of the second response",
}


@dataclass(frozen=True)
class Alert:
    annotator: str
    field: str
    category: str | None  # None: over every category
    basis: Basis
    value: float
    n: int
    threshold: float
    low: float | None = None  # the interval the alert rests on (gold: Wilson's)
    high: float | None = None

    def text(self) -> str:
        """As people read it: ``bob: gold 23.5% [9.6%, 47.3%] below 70.0% on preference (17
        labels)`` or ``bob: Dawid-Skene 59.8% below 70.0% on correctness of the first response
        (32 labels)``, no snake_case."""
        where = FIELD_PHRASES.get(self.field, self.field) + (f", category {self.category}" if self.category else "")
        interval = "" if self.high is None else f" [{percent(self.low)}, {percent(self.high)}]"
        return (
            f"{self.annotator}: {BASIS_TITLES[self.basis]} {percent(self.value)}{interval} below "
            f"{percent(self.threshold)} on {where} ({plural(self.n, 'label')})"
        )


@dataclass
class QualityReport:
    annotators: tuple[str, ...]
    fields: dict[str, dict[str, Reliability]]  # field -> annotator -> figures
    categories: dict[str, dict[str, dict[str, Reliability]]]  # category -> field -> annotator
    alerts: list[Alert]
    threshold: float
    min_n: int
    qualification: dict[str, str] = field(default_factory=dict)  # annotator -> state
    paused: dict[str, str] = field(default_factory=dict)  # annotator -> why

    def as_dict(self) -> dict:
        return {
            "annotators": list(self.annotators),
            "threshold": self.threshold,
            "min_n": self.min_n,
            "fields": {f: {a: asdict(r) for a, r in v.items()} for f, v in self.fields.items()},
            "categories": {
                c: {f: {a: asdict(r) for a, r in v.items()} for f, v in fs.items()} for c, fs in self.categories.items()
            },
            "alerts": [asdict(a) for a in self.alerts],
            "qualification": dict(self.qualification),
            "paused": dict(self.paused),
        }

    def lines(self, *, per_category: bool = False) -> list[str]:
        out = [
            f"Annotator reliability ({plural(len(self.annotators), 'annotator')}; alerts: gold accuracy whose "
            f"Wilson interval lies below {percent(self.threshold)}, whatever its labels; Dawid-Skene below "
            f"{percent(self.threshold)} with at least {plural(self.min_n, 'label')})"
        ]
        for name, per_ann in self.fields.items():
            out += ["", f"{name}: gold accuracy [95% Wilson] / agreement with the others' majority / Dawid-Skene"]
            out += [f"  {a}: {_row(r)}" for a, r in per_ann.items()]
        if per_category:
            for cat, fields in self.categories.items():
                for name, per_ann in fields.items():
                    out += ["", f"{name}, category {cat or '-'}:"]
                    out += [f"  {a}: {_row(r)}" for a, r in per_ann.items()]
        if self.qualification:
            out += ["", "Qualification: " + ", ".join(f"{a} {s}" for a, s in sorted(self.qualification.items()))]
            failed = sorted(a for a, s in self.qualification.items() if s == "failed")
            if failed:
                out.append(f"  kept out of the real queue (failed): {', '.join(failed)}")
        if self.paused:
            out += ["", "Paused (the queue serves them nothing):"]
            out += [f"  {a}: {why}" for a, why in sorted(self.paused.items())]
        out += ["", f"Alerts: {len(self.alerts)}"]
        out += [f"  ALERT {a.text()}" for a in self.alerts]
        return out


def _row(r: Reliability) -> str:
    span = "" if r.model_interval is None else f" {r.model_interval.text()}"
    model = "–" if r.model is None else f"{r.model:.3f}{span} (n={r.model_n})"
    return f"gold {r.gold.text()}; majority {r.majority.text()}; dawid-skene {model}"


def _per_annotator(annotator: np.ndarray, hits: np.ndarray, n_annotators: int) -> tuple[np.ndarray, np.ndarray]:
    """(labels, of which hits) per annotator code."""
    return (
        np.bincount(annotator, minlength=n_annotators),
        np.bincount(annotator, weights=hits.astype(np.float64), minlength=n_annotators).astype(np.int64),
    )


def _dense(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` of non-negative codes, by counting rather than
    sorting (linear: the report takes it of 600,000 labels per field and category)."""
    seen = np.zeros(int(codes.max(initial=-1)) + 1, dtype=bool)
    seen[codes] = True
    rank = np.cumsum(seen) - 1
    return np.flatnonzero(seen), rank[codes]


def _majority_flags(pair: np.ndarray, value: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """Per label: whether its others have a unique majority, and whether it equals it."""
    distinct, task = _dense(pair)
    tab = np.bincount(task * n_values + value, minlength=len(distinct) * n_values).reshape(len(distinct), n_values)
    others = tab[task]  # each label's pair, then less one for the label itself
    others[np.arange(len(others)), value] -= 1
    top = others.max(axis=1)
    counted = (others.sum(axis=1) >= 1) & ((others == top[:, None]).sum(axis=1) == 1)
    return counted, counted & (others.argmax(axis=1) == value)


def _majority_counts(frame: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Per annotator of a long frame: (labels whose others have a unique majority, of which
    equal to it); the annotators with none left out."""
    if frame.empty:
        return {}
    pair, _ = pd.factorize(frame["pair"])
    value, values = pd.factorize(frame["value"])
    annotator, names = pd.factorize(frame["annotator"].astype(str), sort=True)
    counted, agree = _majority_flags(pair, value, len(values))
    n, k = _per_annotator(annotator[counted], agree[counted], len(names))
    return {str(a): (int(n[w]), int(k[w])) for w, a in enumerate(names) if n[w]}


def _model(
    codes: LongCodes, rows: np.ndarray, gold: np.ndarray, values: np.ndarray, seed: int, intervals: bool
) -> tuple[dict[str, float], dict[str, Interval], dict[str, int]]:
    """Dawid-Skene's reliability of each annotator over the regular labels ``rows`` (values
    as codes into ``values``, ``gold`` each pair's gold code or -1), its bootstrap interval
    and the annotator's labels in the model: the pairs, annotators and values of those labels
    each in sorted order, a gold value no label holds a class too (curate.quality.aggregate)."""
    pairs, task = _dense(codes.pair[rows])
    workers, worker = _dense(codes.annotator[rows])
    known = gold[pairs]
    classes = np.unique(np.concatenate([codes.value[rows], known[known >= 0]]))
    coded = CodedField(
        task.reshape(-1),
        worker.reshape(-1),
        np.searchsorted(classes, codes.value[rows]),
        np.where(known >= 0, np.searchsorted(classes, known), -1),
        codes.pairs[pairs],
        codes.annotators[workers],
        values[classes],
    )
    patterns = coded.patterns()  # the fit's and its bootstrap's
    fit = dawid_skene(**coded.model_args(), patterns=patterns)
    names = [str(a) for a in coded.annotators]
    reliability = {a: float(r) for a, r in zip(names, fit.reliability(), strict=True)}
    bootstrap_seed = stable_hash("dawid-skene bootstrap", seed, "", nbytes=8)
    spans = reliability_intervals(coded, seed=bootstrap_seed, patterns=patterns) if intervals else {}
    n = np.bincount(coded.annotator, minlength=len(names))
    return reliability, spans, {a: int(k) for a, k in zip(names, n, strict=True)}


def _row_majority_flags(codes: LongCodes, rows: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_majority_flags` of the regular labels ``rows``, one per row (False for a
    control task's label)."""
    regular = ~codes.control[rows]
    counted, agree = np.zeros(len(rows), dtype=bool), np.zeros(len(rows), dtype=bool)
    counted[regular], agree[regular] = _majority_flags(codes.pair[rows][regular], codes.value[rows][regular], n_values)
    return counted, agree


def _figures(
    codes: LongCodes,
    rows: np.ndarray,
    gold: np.ndarray,
    values: np.ndarray,
    seed: int,
    intervals: bool = True,
    majority: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, Reliability]:
    """The figures of every annotator over the labels ``rows`` of one field (and category):
    ``gold`` is each pair's gold value as a code into ``values`` (the field's values and its
    gold's, sorted), -1 where it has none. ``majority``: :func:`_row_majority_flags` of
    ``rows`` when the caller has them."""
    n_ann = len(codes.annotators)
    annotator, pair, value = codes.annotator[rows], codes.pair[rows], codes.value[rows]
    g = gold[pair]
    on = g >= 0
    gold_n, gold_k = _per_annotator(annotator[on], value[on] == g[on], n_ann)
    regular = ~codes.control[rows]
    counted, agree = majority if majority is not None else _row_majority_flags(codes, rows, len(values))
    maj_n, maj_k = _per_annotator(annotator[counted], agree[counted], n_ann)
    model: dict[str, float] = {}
    model_n: dict[str, int] = {}
    spans: dict[str, Interval] = {}
    if regular.any():
        model, spans, model_n = _model(codes, rows[regular], gold, values, seed, intervals)
    out = {}
    for w in np.unique(annotator):
        a = str(codes.annotators[w])
        out[a] = Reliability(
            wilson(int(gold_k[w]), int(gold_n[w])),
            wilson(int(maj_k[w]), int(maj_n[w])),
            model.get(a),
            model_n.get(a, 0),
            spans.get(a),
        )
    return out


def _alerts(
    figures: Mapping[str, Reliability], field_name: str, category: str | None, threshold: float, min_n: int
) -> list[Alert]:
    out = []
    for a, r in figures.items():
        g = r.gold
        if g.share is not None and g.high is not None and g.high < threshold:  # the whole interval below
            out.append(Alert(a, field_name, category, "gold", g.share, g.n, threshold, g.low, g.high))
        if r.model is not None and r.model_n >= min_n and r.model < threshold:
            out.append(Alert(a, field_name, category, "dawid-skene", r.model, r.model_n, threshold))
    return out


def reliability_report(
    labels: pd.DataFrame,
    gold: Mapping[str, Mapping[str, str]],
    *,
    threshold: float = 0.7,
    min_n: int = 20,
    per_category: bool = True,
    seed: int = 0,
) -> QualityReport:
    """The figures of every annotator on every field (and category) of ``labels`` (a long
    frame: ``COLUMNS``). ``gold``: field -> pair -> value."""
    return codes_report(
        LongCodes.of_frame(labels), gold, threshold=threshold, min_n=min_n, per_category=per_category, seed=seed
    )


def codes_report(
    codes: LongCodes,
    gold: Mapping[str, Mapping[str, str]],
    *,
    threshold: float = 0.7,
    min_n: int = 20,
    per_category: bool = True,
    seed: int = 0,
    interval_categories: Collection[str] | None = None,
) -> QualityReport:
    """:func:`reliability_report` over labels as codes. ``interval_categories``: the categories
    whose Dawid-Skene reliabilities get their bootstrap intervals (None: every one; the
    fields over every category always do). A bootstrap is most of the report's time, and
    the Quality page shows one category at a time."""
    fields: dict[str, dict[str, Reliability]] = {}
    categories: dict[str, dict[str, dict[str, Reliability]]] = {}
    alerts: list[Alert] = []
    order = {f: i for i, f in enumerate(LABEL_FIELDS)}
    present = {str(codes.fields[f]): int(f) for f in np.unique(codes.field)}
    pair_index = pd.Index(codes.pairs)
    for name in sorted(present, key=lambda f: (order.get(f, len(order)), f)):
        rows = np.flatnonzero(codes.field == present[name])
        g = gold.get(name, {})
        # the field's values and its gold's as one sorted code space; each pair's gold code
        values = np.asarray(sorted({*codes.values[np.unique(codes.value[rows])].tolist(), *g.values()}), dtype=object)
        index = pd.Index(values)
        labelled = codes.with_values(index.get_indexer(codes.values), values)
        gold_code = np.full(len(codes.pairs), -1, dtype=np.int64)
        if g:
            at = pair_index.get_indexer(list(g))
            gold_code[at[at >= 0]] = index.get_indexer(list(g.values()))[at >= 0]
        majority = _row_majority_flags(labelled, rows, len(values))
        figs = _figures(labelled, rows, gold_code, values, seed, majority=majority)
        fields[name] = figs
        alerts += _alerts(figs, name, None, threshold, min_n)
        if per_category:
            # a label's majority flags depend on its pair's labels alone: where each pair lies
            # in one category, a category's flags are the field's, sliced (not computed again)
            of_pair = np.zeros(len(codes.pairs), dtype=np.int64)
            of_pair[codes.pair[rows]] = codes.category[rows]
            whole = bool((of_pair[codes.pair[rows]] == codes.category[rows]).all())
            for cat in np.unique(codes.category[rows]):
                within = codes.category[rows] == cat
                sub = rows[within]
                label = str(codes.categories[cat])
                spans = interval_categories is None or label in interval_categories
                flags = (majority[0][within], majority[1][within]) if whole else None
                figs = _figures(labelled, sub, gold_code, values, seed, spans, majority=flags)
                categories.setdefault(label, {})[name] = figs
                alerts += _alerts(figs, name, label, threshold, min_n)
    annotators = tuple(str(a) for a in codes.annotators[np.unique(codes.annotator)])
    return QualityReport(annotators, fields, categories, alerts, threshold, min_n)


def table_report(
    table: LabelTable, *, threshold: float = 0.7, min_n: int = 20, per_category: bool = True, seed: int = 0
) -> QualityReport:
    """The report over a label table read from a file (``mmrb agreement --labels``): every
    field of the file, its ``@gold`` rows as gold, no control tasks (a file has none)."""
    parts = [
        pd.DataFrame(
            {
                "pair": table.units[fl.unit],
                "annotator": np.asarray(table.annotators, dtype=object)[fl.annotator],
                "field": name,
                "value": np.asarray(fl.spec.values, dtype=object)[fl.code],
                "control": False,
                "category": table.category[fl.unit].astype(str),
            }
        )
        for name, fl in table.fields.items()
    ]
    frame = (
        pd.concat(parts, ignore_index=True).astype({"control": bool}) if parts else pd.DataFrame(columns=list(COLUMNS))
    )
    gold = {
        name: {str(table.units[u]): table.fields[name].spec.values[c] for u, c in per.items()}
        for name, per in table.gold.items()
        if name in table.fields
    }
    return reliability_report(frame, gold, threshold=threshold, min_n=min_n, per_category=per_category, seed=seed)


def store_figures(
    store: ReliabilityStore,
    *,
    threshold: float = 0.7,
    min_n: int = 20,
    per_category: bool = True,
    seed: int = 0,
    interval_categories: Collection[str] | None = None,
) -> QualityReport:
    """The figures and alerts over the store's labels and gold (no accounts' states: see
    :func:`with_accounts`). They change only with the labels and the gold.
    ``interval_categories``: as :func:`codes_report`."""
    return codes_report(
        store_codes(store),
        gold_by_field(store.gold().values()),
        threshold=threshold,
        min_n=min_n,
        per_category=per_category,
        seed=seed,
        interval_categories=interval_categories,
    )


def pause_alerted(store: ReliabilityStore, report: QualityReport, *, by: str = SYSTEM) -> list[str]:
    """Pause every annotator with an alert in ``report`` who is not paused yet (the queue
    serves them nothing until the lead resumes them); returns their names. Each pause is in
    the audit trail as done ``by``."""
    done = []
    with store.transaction() as tx:
        people = {a.name: a for a in store.annotators(conn=tx)}
        for name in sorted({a.annotator for a in report.alerts}):
            if name in people and people[name].paused is None:
                why = "; ".join(a.text() for a in report.alerts if a.annotator == name)
                store.update_annotator(name, paused=f"automatic pause: {why}", conn=tx)
                store.record_audit(by, "annotator.pause", name, {"reason": why}, conn=tx)
                done.append(name)
    return done


def with_accounts(store: ReliabilityStore, report: QualityReport) -> QualityReport:
    """``report`` with each account's qualification state and pause as they are now."""
    people = store.annotators()
    report.qualification = {a.name: a.qualification for a in people if a.qualification}
    report.paused = {a.name: a.paused for a in people if a.paused}
    return report


def store_report(
    store: ReliabilityStore,
    *,
    threshold: float = 0.7,
    min_n: int = 20,
    per_category: bool = True,
    pause: bool = False,
    seed: int = 0,
    by: str = SYSTEM,
) -> QualityReport:
    """The report over the store's labels and gold, with the accounts' states; with
    ``pause``, every annotator with an alert is paused first (:func:`pause_alerted`)."""
    report = store_figures(store, threshold=threshold, min_n=min_n, per_category=per_category, seed=seed)
    if pause:
        pause_alerted(store, report, by=by)
    return with_accounts(store, report)
