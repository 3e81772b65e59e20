"""The Progress page's figures (no Streamlit here): totals, tables as the lead reads them,
and the data behind its plots (labels over time, seconds per label, label distribution)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd

from curate.agreement.report import AgreementReport
from curate.agreement.summary import field_title, ordered_fields, value_counts
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
    """admin.progress_by_category, the share done in percent."""
    frame = cats.assign(percent_done=100 * cats["done"] / cats["assigned"]) if len(cats) else cats
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


def labels_over_time(activity: Iterable[LabelActivity]) -> pd.DataFrame:
    """Per annotator, submitted labels counted up in the order they were first saved:
    columns annotator, time (UTC), labels (cumulative); thinned to MAX_POINTS per annotator."""
    times: dict[str, list[str]] = {}
    for r in activity:
        if r.status == "submitted":
            times.setdefault(r.annotator, []).append(r.created_at)
    parts = []
    for who, ts in sorted(times.items()):
        ts.sort()
        keep = _thin(len(ts))
        parts.append(
            pd.DataFrame(
                {
                    "annotator": who,
                    "time": [datetime.fromisoformat(ts[i]) for i in keep],
                    "labels": keep + 1,
                }
            )
        )
    if not parts:
        return pd.DataFrame({"annotator": [], "time": pd.to_datetime([], utc=True), "labels": []})
    return pd.concat(parts, ignore_index=True)


QUANTILES = {"p10": 0.10, "q1": 0.25, "median": 0.5, "q3": 0.75, "p90": 0.90}


def seconds_per_label(activity: Iterable[LabelActivity]) -> pd.DataFrame:
    """Per annotator with timed submitted labels: their number and the 10th, 25th, 50th, 75th
    and 90th percentiles of the seconds per label (columns annotator, labels, p10 ... p90)."""
    secs: dict[str, list[float]] = {}
    for r in activity:
        if r.status == "submitted" and r.seconds is not None:
            secs.setdefault(r.annotator, []).append(r.seconds)
    rows = [
        {
            "annotator": who,
            "labels": len(xs),
            **{k: float(v) for k, v in zip(QUANTILES, np.quantile(xs, list(QUANTILES.values())), strict=True)},
        }
        for who, xs in sorted(secs.items())
    ]
    return pd.DataFrame(rows, columns=["annotator", "labels", *QUANTILES])


def label_distribution(report: AgreementReport) -> pd.DataFrame:
    """Submitted labels per value of each field (columns field, value, labels, share), the
    fields in reading order (preference first) and each field's values in its scale order."""
    rows = value_counts(report)
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
