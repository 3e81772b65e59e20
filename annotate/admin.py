"""Figures for the lead's pages, computed from the store (no Streamlit here).

Admin pages are unblinded: they may show model names, gold answers and every label.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from statistics import median

import pandas as pd

from curate.agreement import agreement_report, from_store
from curate.store import Store


def _ts(s: str | None) -> datetime | None:
    return datetime.fromisoformat(s) if s else None


def progress_by_annotator(store: Store, *, now: datetime | None = None) -> pd.DataFrame:
    """Per annotator: assigned, done, submitted, skipped, flagged, labels in the last hour,
    labels per hour of work and the median seconds per label."""
    now = now or datetime.now(UTC)
    with store.read() as c:
        work = {w.annotator: w for w in store.annotator_work(conn=c)}
        activity = store.label_activity(conn=c)
        people = store.annotators(conn=c)
    by: dict[str, list] = {}
    for r in activity:
        by.setdefault(r.annotator, []).append(r)
    out = []
    for a in people:
        labs = by.get(a.name, [])
        sub = [r for r in labs if r.status == "submitted"]
        secs = [r.seconds for r in sub if r.seconds is not None]
        recent = sum(1 for r in sub if (t := _ts(r.updated_at)) and t >= now - timedelta(hours=1))
        w = work.get(a.name)
        out.append(
            dict(
                annotator=a.name,
                role=a.role,
                active=a.active,
                assigned=w.assigned if w else 0,
                done=w.done if w else 0,
                submitted=len(sub),
                skipped=sum(1 for r in labs if r.status == "skipped"),
                flagged=sum(1 for r in sub if r.flag),
                last_hour=recent,
                # labels per hour of labelling time (the recorded seconds), not of wall-clock time
                labels_per_hour=round(3600 * len(secs) / sum(secs), 1) if secs and sum(secs) > 0 else None,
                median_seconds=round(median(secs), 1) if secs else None,
            )
        )
    return pd.DataFrame(out)


def progress_by_category(store: Store) -> pd.DataFrame:
    cats: dict[str, dict[str, int]] = {}
    for r in store.progress_by_category():
        cats.setdefault(r.category, {})[r.state] = r.assignments
    return pd.DataFrame(
        [
            dict(
                category=cat,
                assigned=sum(v.values()),
                done=v.get("done", 0),
                share_done=round(v.get("done", 0) / sum(v.values()), 3),
            )
            for cat, v in sorted(cats.items())
        ]
    )


def short_of_overlap(store: Store, k: int | None = None) -> pd.DataFrame:
    """Pairs with fewer submitted labels than wanted (k, else the number assigned)."""
    out = []
    for r in store.pair_overlap():
        want = k if k is not None else r.assigned
        if r.submitted < want:
            out.append(
                dict(
                    pair=r.pair_id,
                    wanted=want,
                    assigned=r.assigned,
                    labelled=r.submitted,
                    waiting_on=", ".join(r.waiting_on),
                )
            )
    return pd.DataFrame(out, columns=["pair", "wanted", "assigned", "labelled", "waiting_on"])


@dataclass(frozen=True)
class Glance:
    """One decision at a glance: pairs with 2+ labels, percent agreement and Krippendorff's
    alpha (nominal) with its bootstrap interval; an undefined value is None, with why."""

    pairs: int
    labels: int
    alpha: float | None
    low: float | None
    high: float | None
    percent: float | None
    note: str  # "undefined: ..." when alpha is undefined
    interval_undefined: str | None = None  # why there is no interval (e.g. "too few pairs")


GLANCE_FIELDS = ("preference", "correctness_first", "correctness_second")


def agreement_glance(store: Store, *, resamples: int = 200) -> dict[str, Glance]:
    """Per decision (GLANCE_FIELDS), from the project's agreement report (curate.agreement).
    An undefined alpha is reported with its reason, never as 0 or 1."""
    rep = agreement_report(from_store(store), resamples=resamples, seed=0)
    out: dict[str, Glance] = {}
    for name in GLANCE_FIELDS:
        f = rep.fields.get(name)
        if f is None or f.n_pairable == 0:
            out[name] = Glance(0, 0, None, None, None, None, "no pair has two labels yet")
            continue
        a, pa = f.alpha, f.percent_agreement
        out[name] = Glance(
            pairs=f.n_pairable,
            labels=f.n_labels,
            alpha=None if a.value is None else round(a.value, 3),
            low=None if a.low is None else round(a.low, 3),
            high=None if a.high is None else round(a.high, 3),
            percent=None if pa.value is None else round(pa.value, 3),
            note=f"undefined: {a.undefined}" if a.undefined else "",
            interval_undefined=a.interval_undefined,
        )
    return out
