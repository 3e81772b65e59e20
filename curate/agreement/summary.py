"""An agreement report as tidy rows for plots and tables (the lead's Agreement page, the
dataset card): alpha per field and category with its interval, Cohen's kappa per pair of
annotators, each annotator's agreement with the others' majority, label counts (the report's,
or the same counted from its label table); and the wording of an undefined value, said once
per reason instead of in every cell.

Nothing is computed here that the report does not hold: an undefined statistic stays
undefined (None, with the report's reason), never 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..wording import plural
from .report import DEFAULT_MIN_SHARED, AgreementReport, FieldReport
from .stats import TOO_FEW_PAIRS, Estimate
from .table import LabelTable

# Krippendorff (2004, p. 241): rely on alpha >= .800; .667 to .800 for tentative conclusions only.
RELIABLE = 0.8
TENTATIVE = 0.667
THRESHOLDS: tuple[tuple[float, str], ...] = ((RELIABLE, "0.8: reliable"), (TENTATIVE, "0.667: tentative"))
ALL = "All categories"
UNDEFINED = "undefined"

FIELD_TITLES = {
    "preference": "Preference",
    "correctness_first": "Correctness, first response",
    "correctness_second": "Correctness, second response",
}


def field_title(name: str) -> str:
    """A field as people read it (a rating's key stays as it is)."""
    return FIELD_TITLES.get(name, name)


def ordered_fields(names: Iterable[str]) -> list[str]:
    """Preference, then each response's correctness, then ratings in name order."""
    order = list(FIELD_TITLES)
    return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))


@dataclass(frozen=True)
class AlphaRow:
    """Krippendorff's alpha of one field over one category (or ALL), with percent agreement."""

    field: str
    category: str
    pairs: int  # pairs with two or more labels of the field
    labels: int
    alpha: float | None
    low: float | None  # 95% bootstrap interval; None when undefined
    high: float | None
    percent: float | None  # percent agreement
    undefined: str | None  # why alpha has no value
    interval_undefined: str | None  # why a defined alpha has no interval


@dataclass(frozen=True)
class KappaCell:
    """Cohen's kappa of annotators ``a`` and ``b`` on the pairs both labelled (one cell of
    a symmetric heatmap: each pair of annotators appears in both orders)."""

    field: str
    a: str
    b: str
    shared: int
    kappa: float | None
    undefined: str | None


@dataclass(frozen=True)
class MajorityRow:
    """An annotator's agreement with the others' majority on the pairs where the others had one."""

    field: str
    annotator: str
    labels: int
    compared: int  # labels whose pair had a unique majority among the other labels
    agreement: float | None  # share of those equal to it; None when compared == 0


@dataclass(frozen=True)
class ValueCount:
    field: str
    value: str
    labels: int


def _alpha_row(f: FieldReport, category: str) -> AlphaRow:
    a, pa = f.alpha, f.percent_agreement
    return AlphaRow(
        field=f.name,
        category=category,
        pairs=f.n_pairable,
        labels=f.n_labels,
        alpha=a.value,
        low=a.low,
        high=a.high,
        percent=pa.value,
        undefined=a.undefined,
        interval_undefined=a.interval_undefined if a.value is not None else None,
    )


def alpha_rows(report: AgreementReport) -> list[AlphaRow]:
    """Per field over every pair (category ALL), then per category when the report has them."""
    rows = [_alpha_row(f, ALL) for f in report.fields.values()]
    for cat, v in (report.categories or {}).items():
        rows += [_alpha_row(f, cat) for f in v.fields.values()]
    return rows


def kappa_cells(report: AgreementReport) -> list[KappaCell]:
    """Every pair of annotators who share a labelled pair, both ways round, per field."""
    out = []
    for name, f in report.fields.items():
        for c in f.cohen:
            k: Estimate = c["kappa"]
            for a, b in ((c["a"], c["b"]), (c["b"], c["a"])):
                out.append(KappaCell(name, a, b, c["n"], k.value, k.undefined))
    return out


def majority_rows(report: AgreementReport) -> list[MajorityRow]:
    return [
        MajorityRow(name, a, s["labels"], s["majority"]["n"], s["majority"]["agreement"])
        for name, f in report.fields.items()
        for a, s in f.annotators.items()
    ]


def value_counts(report: AgreementReport) -> list[ValueCount]:
    """Submitted labels per value of each field, in the field's scale order (unused values as 0)."""
    return [ValueCount(name, v, n) for name, f in report.fields.items() for v, n in f.value_counts.items()]


def table_value_counts(table: LabelTable) -> list[ValueCount]:
    """:func:`value_counts` straight from the label table, without the report's statistics
    (the Progress page's label distribution): the fields with a label, in name order."""
    return [
        ValueCount(name, v, int(n))
        for name, fl in sorted(table.fields.items())
        if len(fl.code)
        for v, n in zip(fl.spec.values, np.bincount(fl.code, minlength=len(fl.spec.values)), strict=True)
    ]


# -- undefined values, said once ------------------------------------------------------------------
def estimate_cell(e: Estimate) -> str:
    """A table cell: ``0.748 [0.240, 1.000]``, ``0.375 [undefined]`` or ``undefined``; the
    reasons go below the table, once each (:func:`undefined_notes`)."""
    if e.value is None:
        return UNDEFINED
    if e.low is not None:
        return f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}]"
    return f"{e.value:.3f} [{UNDEFINED}]" if e.interval_undefined else f"{e.value:.3f}"


def undefined_notes(cells: Iterable[tuple[str, Estimate]], *, min_pairs: int, shown: int = 6) -> list[str]:
    """One line per distinct reason an estimate is undefined, naming where (``cells`` are
    (where, estimate); the first ``shown`` places, then how many more); then one line per reason
    an interval is undefined (every such cell says ``[undefined]``, so no places)."""
    values: dict[str, list[str]] = {}
    intervals: list[str] = []
    for where, e in cells:
        if e.value is None and e.undefined:
            places = values.setdefault(e.undefined, [])
            if where not in places:
                places.append(where)
        elif e.value is not None and e.low is None and e.interval_undefined:
            why = e.interval_undefined
            if why == TOO_FEW_PAIRS:
                why = (
                    f"fewer than {plural(min_pairs, 'pair')} with two or more labels, too few for a bootstrap interval"
                )
            if why not in intervals:
                intervals.append(why)
    out = []
    for why, places in values.items():
        more = f" and {len(places) - shown} more" if len(places) > shown else ""
        out.append(f"{UNDEFINED} ({'; '.join(places[:shown])}{more}): {why}.")
    return out + [f"[{UNDEFINED}] interval: {why}." for why in intervals]


def row_estimate(r: AlphaRow) -> Estimate:
    """An AlphaRow's alpha as the report's Estimate (for :func:`estimate_cell` and the notes)."""
    if r.alpha is None:
        return Estimate.none(r.undefined or UNDEFINED)
    return Estimate(r.alpha, None, r.low, r.high, interval_undefined=r.interval_undefined)


KAPPA_RULE = (
    f"Cohen's kappa is undefined for two annotators who share fewer than {DEFAULT_MIN_SHARED} labelled pairs "
    "or who both used a single value"
)
MAJORITY_RULE = (
    "Agreement with the others' majority is undefined for an annotator none of whose pairs had a single "
    "most frequent value among the other annotators' labels"
)
