"""The Progress page's figures (no Streamlit here): totals, tables as the lead reads them,
and the data behind its plots (labels over time, seconds per label, label distribution)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd

from curate.agreement.report import AgreementReport
from curate.agreement.summary import field_title, ordered_fields, table_value_counts, value_counts
from curate.agreement.table import LabelTable
from curate.model import category_title
from curate.store import Store
from curate.store.columns import CodedColumn, sorted_codes
from curate.store.counts import LabelActivity

from .tables import Table, human

MAX_POINTS = 400  # per annotator on the labels-over-time line: enough to draw, small to send


@dataclass(frozen=True)
class ProgressTotals:
    done: int  # assignments done
    assigned: int
    last_hour: int  # labels submitted in the last hour
    median_seconds: float | None  # the median over annotators of each one's median; None: no timed label

    @classmethod
    def of(cls, people: pd.DataFrame) -> ProgressTotals:
        med = people["median_seconds"].dropna()
        return cls(
            int(people["done"].sum()),
            int(people["assigned"].sum()),
            int(people["last_hour"].sum()),
            float(med.median()) if len(med) else None,
        )


# -- tables ---------------------------------------------------------------------------------------
SECONDS = "%.1f"
PERCENT = "%.1f%%"  # of a value already in percent (6.25 -> "6.2%")


# the two rates beside each other measure different things, and their headers say which
LAST_HOUR = "Labels in the last hour"  # submitted within the last 60 minutes of the clock
PACE = "Labels per labelling hour"  # over the seconds recorded per label (admin.labels_per_hour)
MEDIAN_SECONDS = "Median s per label"


def annotator_table(people: pd.DataFrame) -> Table:
    """admin.progress_by_annotator as the lead reads it: the people who label (a lead with
    nothing assigned is no annotator row of zeros), each account's state in words."""
    shown = people[(people["role"] != "admin") | (people["assigned"] > 0)] if len(people) else people
    if len(shown):
        shown = shown.assign(active=shown["active"].map(lambda a: "active" if a else "disabled"))
    return human(
        shown,
        {
            "annotator": "Annotator",
            "active": "Account",
            "assigned": "Assigned",
            "done": "Done",
            "submitted": "Submitted",
            "skipped": "Skipped",
            "flagged": "Flagged",
            "last_hour": LAST_HOUR,
            "labels_per_hour": PACE,
            "median_seconds": MEDIAN_SECONDS,
        },
        {PACE: "%.1f", MEDIAN_SECONDS: SECONDS},
    )


def accounts_table(people: pd.DataFrame) -> Table:
    """The Annotators page's accounts: who, role, active, assigned, done."""
    return human(
        people, {"annotator": "Annotator", "role": "Role", "active": "Active", "assigned": "Assigned", "done": "Done"}
    )


def category_table(cats: pd.DataFrame) -> Table:
    """admin.progress_by_category, the share done in percent, categories by their titles."""
    frame = (
        cats.assign(percent_done=100 * cats["done"] / cats["assigned"], category=cats["category"].map(category_title))
        if len(cats)
        else cats
    )
    return human(
        frame,
        {"category": "Category", "assigned": "Assigned", "done": "Done", "percent_done": "Share done"},
        {"Share done": PERCENT},
    )


def short_table(short: pd.DataFrame) -> Table:
    """admin.short_of_overlap as the lead reads it."""
    return human(
        short,
        {
            "pair": "Pair",
            "wanted": "Labels wanted",
            "assigned": "Assigned",
            "labelled": "Labelled",
            "waiting_on": "Waiting on",
        },
    )


# -- plots' data --------------------------------------------------------------------------------------
def _thin(n: int) -> np.ndarray:
    """Indices of at most MAX_POINTS of n points, the first and the last included."""
    if n <= MAX_POINTS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, MAX_POINTS).round().astype(int))


@dataclass(frozen=True)
class Submitted:
    """The submitted labels as the progress plots read them: each one's annotator and creation
    time (codes into their sorted distinct values, as the store's columns), and the seconds of
    the timed ones with their annotator."""

    who: CodedColumn
    created: CodedColumn
    timed_who: CodedColumn
    seconds: np.ndarray

    @classmethod
    def of(cls, activity: Iterable[LabelActivity]) -> Submitted:
        sub = [r for r in activity if r.status == "submitted"]
        timed = [r for r in sub if r.seconds is not None]
        return cls(
            sorted_codes(np.array([r.annotator for r in sub], dtype=object)),
            sorted_codes(np.array([r.created_at for r in sub], dtype=object)),
            sorted_codes(np.array([r.annotator for r in timed], dtype=object)),
            np.array([r.seconds for r in timed], dtype=np.float64),
        )

    @classmethod
    def read(cls, store: Store) -> Submitted:
        """From the store's columns (Store.submitted_columns, one scan): no row object per
        label."""
        who, created, seconds = store.submitted_columns()
        timed = ~np.isnan(seconds)
        # the timed labels' annotators coded among themselves, as Submitted.of codes them
        present, codes = np.unique(who.codes[timed], return_inverse=True)
        return cls(who, created, CodedColumn(codes.astype(np.int64), who.values[present]), seconds[timed])

    @classmethod
    def read_parts(cls, store: Store) -> Submitted:
        """As :meth:`read`, in two reads (Store.submitted_created, Store.submitted_seconds):
        the lead's pages' store (curate.store.sheet.SheetStore) has the seconds already."""
        who, created = store.submitted_created()
        timed_who, seconds = store.submitted_seconds()
        return cls(who, created, timed_who, seconds)


def _groups(codes: np.ndarray, n: int, *keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row order grouped by ``codes`` and sorted within by ``keys``, each group's bounds)."""
    order = np.lexsort((*keys, codes)) if keys else np.argsort(codes, kind="stable")
    return order, np.searchsorted(codes[order], np.arange(n + 1))


def labels_over_time(activity: Iterable[LabelActivity] | Submitted) -> pd.DataFrame:
    """Per annotator, submitted labels counted up in the order they were first saved:
    columns annotator, time (UTC), labels (cumulative); thinned to MAX_POINTS per annotator."""
    s = activity if isinstance(activity, Submitted) else Submitted.of(activity)
    (codes, names), (created, times) = s.who, s.created
    order, bounds = _groups(codes, len(names), created)  # by annotator, then the time's text
    parts = []
    for w, who in enumerate(names):
        rows = order[bounds[w] : bounds[w + 1]]
        if not len(rows):
            continue
        keep = _thin(len(rows))
        parts.append(
            pd.DataFrame(
                {
                    "annotator": str(who),
                    "time": [datetime.fromisoformat(times[created[rows[i]]]) for i in keep],
                    "labels": keep + 1,
                }
            )
        )
    if not parts:
        return pd.DataFrame({"annotator": [], "time": pd.to_datetime([], utc=True), "labels": []})
    return pd.concat(parts, ignore_index=True)


QUANTILES = {"p10": 0.10, "q1": 0.25, "median": 0.5, "q3": 0.75, "p90": 0.90}


def seconds_per_label(activity: Iterable[LabelActivity] | Submitted) -> pd.DataFrame:
    """Per annotator with timed submitted labels: their number and the 10th, 25th, 50th, 75th
    and 90th percentiles of the seconds per label (columns annotator, labels, p10 ... p90)."""
    s = activity if isinstance(activity, Submitted) else Submitted.of(activity)
    codes, names = s.timed_who
    order, bounds = _groups(codes, len(names))
    rows = []
    for w, who in enumerate(names):
        xs = s.seconds[order[bounds[w] : bounds[w + 1]]]
        if not len(xs):
            continue
        quantiles = np.quantile(xs, list(QUANTILES.values()))
        rows.append(
            {
                "annotator": str(who),
                "labels": len(xs),
                **{k: float(v) for k, v in zip(QUANTILES, quantiles, strict=True)},
            }
        )
    return pd.DataFrame(rows, columns=["annotator", "labels", *QUANTILES])


def label_distribution(labels: AgreementReport | LabelTable) -> pd.DataFrame:
    """Submitted labels per value of each field (columns field, value, labels, share), the
    fields in reading order (preference first) and each field's values in its scale order:
    of the agreement report, or of the label table it is made from (no statistics)."""
    rows = value_counts(labels) if isinstance(labels, AgreementReport) else table_value_counts(labels)
    order = ordered_fields({r.field for r in rows})
    frame = pd.DataFrame(
        [
            {"field": field_title(r.field), "value": r.value, "labels": r.labels, "order": order.index(r.field)}
            for r in rows
        ],
        columns=["field", "value", "labels", "order"],
    )
    totals = frame.groupby("field")["labels"].transform("sum")
    frame["share"] = (frame["labels"] / totals.where(totals > 0)).astype(float)
    return frame.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)
