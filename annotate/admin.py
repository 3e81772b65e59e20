"""Figures for the lead's pages, computed from the store (no Streamlit here).

Admin pages are unblinded: they may show model names, gold answers and every label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from statistics import median

import numpy as np
import pandas as pd

from curate.agreement import AgreementReport, agreement_report, from_store
from curate.agreement.limits import MIN_PAIRABLE_PAIRS
from curate.agreement.stats import DEFAULT_RESAMPLES
from curate.agreement.summary import (
    ALL,
    AlphaRow,
    field_title,
    ordered_fields,
    row_estimate,
    undefined_notes,
)
from curate.audit import HEADERS as AUDIT_HEADERS
from curate.audit import WHAT as AUDIT_WHAT
from curate.audit import table as audit_rows
from curate.model import AuditEntry, category_title
from curate.quality.bias import DIAGNOSTICS, TITLES, BiasReport
from curate.quality.gold import ControlShare
from curate.quality.reliability import QualityReport, Share
from curate.store import Store
from curate.wording import EMPTY, plural

from .progress import Submitted
from .tables import Table, human, numbers


def _ts(s: str | None) -> datetime | None:
    return datetime.fromisoformat(s) if s else None


# A rate means something only over enough work: below these an annotator's labels per hour is
# left empty (one quick label would otherwise read as hundreds an hour).
RATE_MIN_LABELS = 10
RATE_MIN_SECONDS = 600.0
RATE_RULE = (
    "Labels in the last hour: submitted in the last 60 minutes of the clock. Labels per labelling hour: the "
    "pace while labelling, over the seconds recorded per label (not the wall clock), so it can be high when "
    f"nothing came in the last hour; it appears once an annotator has at least {RATE_MIN_LABELS} timed labels "
    f"over at least {RATE_MIN_SECONDS / 60:g} minutes of labelling time."
)


def labels_per_hour(seconds: list[float]) -> float | None:
    """Labels per hour of labelling time, or None below RATE_MIN_LABELS / RATE_MIN_SECONDS."""
    total = sum(seconds)
    if len(seconds) < RATE_MIN_LABELS or total < RATE_MIN_SECONDS:
        return None
    return round(3600 * len(seconds) / total, 1)


@dataclass(frozen=True)
class AnnotatorCounts:
    """An annotator's figures that change only with the store's rows (Store.change_stamp):
    cacheable, unlike the accounts and the last hour's labels."""

    assigned: int
    done: int
    submitted: int
    skipped: int
    flagged: int
    labels_per_hour: float | None
    median_seconds: float | None


def annotator_counts(store: Store, *, submitted: Submitted | None = None) -> dict[str, AnnotatorCounts]:
    """Per annotator with assignments or labels: :class:`AnnotatorCounts`, counted in the
    database, the seconds read as one column: no row object per label (600,000 labels: 1 s
    against 3.9 s). ``submitted``: the submitted labels' columns when the caller holds them
    already (the Progress page's plots read them)."""
    with store.read() as c:
        work = {w.annotator: w for w in store.annotator_work(conn=c)}
        tallies = {(t.annotator, t.status): t for t in store.label_tallies(conn=c, plain_submitted=submitted is None)}
    if submitted is None:
        (codes, names), seconds = store.submitted_seconds()
        counted: dict[str, int] = {a: t.labels for (a, status), t in tallies.items() if status == "submitted"}
    else:
        (codes, names), seconds = submitted.timed_who, submitted.seconds
        by, all_names = submitted.who
        counted = {str(n): int(k) for n, k in zip(all_names, np.bincount(by, minlength=len(all_names)), strict=True)}
    order = np.argsort(codes, kind="stable")  # each annotator's seconds in the order they were read
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    secs_of = {str(n): seconds[order[bounds[i] : bounds[i + 1]]].tolist() for i, n in enumerate(names)}
    out = {}
    for name in sorted({*work, *(a for a, _ in tallies), *counted, *secs_of}):
        sub, skipped, w = tallies.get((name, "submitted")), tallies.get((name, "skipped")), work.get(name)
        secs = secs_of.get(name, [])
        out[name] = AnnotatorCounts(
            assigned=w.assigned if w else 0,
            done=w.done if w else 0,
            submitted=counted.get(name, 0),
            skipped=skipped.labels if skipped else 0,
            flagged=sub.flagged if sub else 0,
            labels_per_hour=labels_per_hour(secs),
            median_seconds=round(median(secs), 1) if secs else None,
        )
    return out


NONE_YET = AnnotatorCounts(0, 0, 0, 0, 0, None, None)


def progress_by_annotator(
    store: Store,
    *,
    now: datetime | None = None,
    submitted: Submitted | None = None,
    counts: dict[str, AnnotatorCounts] | None = None,
) -> pd.DataFrame:
    """Per account: assigned, done, submitted, skipped, flagged, labels in the last hour,
    labels per hour of work (once there is enough: :func:`labels_per_hour`) and the median
    seconds per label. ``counts``: :func:`annotator_counts` when the caller holds them (the
    Progress page caches them by the change stamp), else counted here (with ``submitted``,
    as there); the accounts and the last hour are read now."""
    now = now or datetime.now(UTC)
    hour_ago = now - timedelta(hours=1)
    # every ISO time within the hour starts with a date no earlier than this one, whatever its offset
    since = (hour_ago - timedelta(days=2)).date().isoformat()
    if counts is None:
        counts = annotator_counts(store, submitted=submitted)
    with store.read() as c:
        recent = store.submitted_since(since, conn=c)
        people = store.annotators(conn=c)
    last_hour: dict[str, int] = {}
    for who, updated in recent:
        if (t := _ts(updated)) and t >= hour_ago:
            last_hour[who] = last_hour.get(who, 0) + 1
    out = []
    for a in people:
        k = counts.get(a.name, NONE_YET)
        out.append(
            dict(
                annotator=a.name,
                role=a.role,
                active=a.active,
                assigned=k.assigned,
                done=k.done,
                submitted=k.submitted,
                skipped=k.skipped,
                flagged=k.flagged,
                last_hour=last_hour.get(a.name, 0),
                labels_per_hour=k.labels_per_hour,
                median_seconds=k.median_seconds,
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
    """Pairs with fewer submitted labels than wanted (k, else the number assigned), in pair
    id order (Store.short_pairs: compared in the database)."""
    out = [
        dict(
            pair=r.pair_id,
            wanted=k if k is not None else r.assigned,
            assigned=r.assigned,
            labelled=r.submitted,
            waiting_on=", ".join(r.waiting_on),
        )
        for r in store.short_pairs(k)
    ]
    return pd.DataFrame(out, columns=["pair", "wanted", "assigned", "labelled", "waiting_on"])


def lead_report(store: Store, *, resamples: int = DEFAULT_RESAMPLES) -> AgreementReport:
    """The agreement report the lead's pages draw (the figures of ``mmrb agreement --category``):
    every field overall and per category, bootstrap intervals over pairs, seed 0."""
    return agreement_report(from_store(store), per_category=True, resamples=resamples, seed=0)


def agreement_wanting(report: AgreementReport) -> str | None:
    """What the Agreement page still needs before any statistic is defined, or None. Below
    MIN_PAIRABLE_PAIRS pairs labelled by two or more annotators every figure is undefined,
    so the page says what is missing instead of drawing charts of "undefined"."""
    pairable = max((f.n_pairable for f in report.fields.values()), default=0)
    if pairable >= MIN_PAIRABLE_PAIRS:
        return None
    return (
        f"Agreement needs at least {plural(MIN_PAIRABLE_PAIRS, 'pair')} labelled by two or more annotators; "
        f"so far {plural(pairable, 'pair')} ({plural(report.n_labels, 'submitted label')} on "
        f"{plural(report.n_pairs, 'pair')}). The figures appear once two or more annotators have labelled "
        "the same pairs (pairs assigned with `mmrb assign -k 2` or more)."
    )


def _category(name: str) -> str:
    return name if name == ALL else category_title(name)


ALPHA_FORMAT = "%.3f"
MATRIX_CATEGORY_PX = 260


def alpha_matrix(rows: Sequence[AlphaRow]) -> Table:
    """Krippendorff's alpha as a category x field matrix of numbers (issue 28: it sorted as
    text): one row per category (every category first), one column per field. A cell is
    empty where alpha is undefined (:func:`alpha_notes` says why, once per reason) or where
    no pair of the category has the field; never 0."""
    fields = ordered_fields({r.field for r in rows})
    titles = [field_title(f) for f in fields]
    by_cat: dict[str, dict[str, AlphaRow]] = {}
    for r in rows:
        by_cat.setdefault(r.category, {})[r.field] = r
    records = []
    for cat, got in by_cat.items():
        rec: dict[str, object] = {"Category": _category(cat)}
        for f, t in zip(fields, titles, strict=True):
            rec[t] = got[f].alpha if f in got else None
        records.append(rec)
    frame = pd.DataFrame(records, columns=["Category", *titles])
    frame = frame.astype(object).where(frame.notna(), None)
    helps = dict.fromkeys(
        titles,
        "Krippendorff's alpha of this field in the category; empty: undefined (why: below the table) "
        "or no pair of the category has this field",
    )
    # wide enough for a category's whole name (the grid would fit it to the first rows' names)
    widths = {"Category": MATRIX_CATEGORY_PX}
    return numbers(Table(frame, dict.fromkeys(titles, ALPHA_FORMAT), helps, widths), titles)


def alpha_table(rows: Sequence[AlphaRow]) -> Table:
    """Alpha per field and category with its interval and percent agreement, each a number
    (so the table sorts), empty where undefined (:func:`alpha_notes` says why)."""
    frame = pd.DataFrame(
        [
            {
                "field": field_title(r.field),
                "category": _category(r.category),
                "pairs": r.pairs,
                "labels": r.labels,
                "alpha": r.alpha,
                "low": r.low,
                "high": r.high,
                "percent": None if r.percent is None else 100 * r.percent,
            }
            for r in rows
        ],
        columns=["field", "category", "pairs", "labels", "alpha", "low", "high", "percent"],
    )
    table = human(
        frame,
        {
            "field": "Field",
            "category": "Category",
            "pairs": "Pairs",
            "labels": "Labels",
            "alpha": "Alpha",
            "low": "From",
            "high": "To",
            "percent": "Agree",
        },
        {"Alpha": ALPHA_FORMAT, "From": ALPHA_FORMAT, "To": ALPHA_FORMAT, "Agree": "%.1f%%"},
    )
    table = numbers(table, ["Pairs", "Labels", "Alpha", "From", "To", "Agree"])
    return Table(
        table.frame,
        table.formats,
        widths={"Category": MATRIX_CATEGORY_PX},  # a category's whole name (the grid fits the first rows')
        helps={  # short headers, so that the table fits the page at 1366 px; the words are here
            "Pairs": "Pairs with two or more labels of the field",
            "Alpha": "Krippendorff's alpha; empty: undefined (why: below the tables)",
            "From": "95% bootstrap interval over pairs, from; empty: no interval (why: below the tables)",
            "To": "95% bootstrap interval over pairs, to",
            "Agree": "Percent agreement",
        },
    )


def alpha_notes(rows: Sequence[AlphaRow], *, min_pairs: int) -> list[str]:
    """Why a cell of :func:`alpha_table` is undefined, once per reason."""

    def where(r: AlphaRow) -> str:
        return field_title(r.field) if r.category == ALL else f"{field_title(r.field)} in {_category(r.category)}"

    notes = undefined_notes(((where(r), row_estimate(r)) for r in rows), min_pairs=min_pairs)
    return [n[0].upper() + n[1:] for n in notes]


# -- annotator quality (curate/quality/) ------------------------------------------------------
def quality_frame(report: QualityReport, category: str | None = None) -> pd.DataFrame:
    """One row per field and annotator, over every category or in ``category``: the figures
    the Quality page tabulates and plots (shares in [0, 1], None where there is nothing to
    measure)."""
    rows = []
    fields = report.fields if category is None else report.categories.get(category, {})
    for name, per_ann in fields.items():
        for who, r in per_ann.items():
            rows.append(
                {
                    "field": field_title(name),
                    "annotator": who,
                    "gold": r.gold.share,
                    "gold_low": r.gold.low,
                    "gold_high": r.gold.high,
                    "gold_n": r.gold.n,
                    "gold_interval_undefined": r.gold.interval_undefined,
                    "majority": r.majority.share,
                    "majority_low": r.majority.low,
                    "majority_high": r.majority.high,
                    "majority_n": r.majority.n,
                    "model": r.model,
                    "model_low": None if r.model_interval is None else r.model_interval.low,
                    "model_high": None if r.model_interval is None else r.model_interval.high,
                    "model_n": r.model_n,
                    "model_interval_undefined": None if r.model_interval is None else r.model_interval.undefined,
                    "alert": any(
                        a.annotator == who and a.field == name and a.category == category for a in report.alerts
                    ),
                }
            )
    columns = ["field", "annotator", "gold", "gold_low", "gold_high", "gold_n", "gold_interval_undefined"]
    columns += ["majority", "majority_low", "majority_high", "majority_n"]
    columns += ["model", "model_low", "model_high", "model_n", "model_interval_undefined", "alert"]
    return pd.DataFrame(rows, columns=columns)


def _interval_words(frame: pd.DataFrame, kind: str) -> list[str | None]:
    """A figure's interval as the lead reads it, or why it has none ("too few pairs": its
    column says what it is, and the table fits the page at 1366 px)."""
    return [
        (why if isinstance(why, str) else None) if lo is None or pd.isna(lo) else f"[{100 * lo:.1f}%, {100 * hi:.1f}%]"
        for lo, hi, why in zip(
            frame[f"{kind}_low"], frame[f"{kind}_high"], frame[f"{kind}_interval_undefined"], strict=True
        )
    ]


def quality_table(frame: pd.DataFrame) -> Table:
    """:func:`quality_frame` as the lead reads it: percentages, the Wilson interval of gold
    accuracy and Dawid-Skene's bootstrap interval in words ("undefined (too few pairs)" below
    MIN_BOOTSTRAP_PAIRS labels)."""
    out = frame.copy()
    for col in ("gold", "majority", "model"):
        out[col] = out[col].map(lambda v: None if v is None or pd.isna(v) else round(100 * v, 1))
    out["interval"] = _interval_words(frame, "gold")
    out["model_interval"] = _interval_words(frame, "model")
    out["alert"] = out["alert"].map(lambda a: "alert" if a else "")
    return human(
        out,
        {
            "annotator": "Annotator",
            "field": "Field",
            "gold": "Gold accuracy",
            "interval": "Wilson interval (95%)",
            "gold_n": "Gold labels",
            "majority": "Agrees with the others' majority",
            "majority_n": "Labels compared",
            "model": "Dawid-Skene reliability",
            "model_interval": "Bootstrap interval (95%)",
            "alert": "Alert",
        },
        {"Gold accuracy": "%.1f%%", "Agrees with the others' majority": "%.1f%%", "Dawid-Skene reliability": "%.1f%%"},
    )


def bias_frame(report: BiasReport) -> pd.DataFrame:
    """One row per annotator and diagnostic of curate/quality/bias.py: the share in [0, 1]
    (None where nothing was counted), its Wilson interval, its n, whether it alerts."""
    alerted = {(a.annotator, a.diagnostic) for a in report.alerts}
    rows = [
        {
            "annotator": who,
            "diagnostic": TITLES[d],
            "share": b.share(d).share,
            "low": b.share(d).low,
            "high": b.share(d).high,
            "n": b.share(d).n,
            "note": b.fast_undefined if d == "fast" and b.fast_undefined else None,
            "alert": (who, d) in alerted,
        }
        for who, b in report.annotators.items()
        for d in DIAGNOSTICS
    ]
    return pd.DataFrame(rows, columns=["annotator", "diagnostic", "share", "low", "high", "n", "note", "alert"])


def _compact(s: Share) -> str:
    """``57% [39-73] n=30``: a share, its interval and n in whole percent (a table cell of
    five such columns fits the page)."""
    interval = "" if s.low is None or s.high is None else f" [{100 * s.low:.0f}-{100 * s.high:.0f}]"
    return f"{100 * (s.share or 0):.0f}%{interval} n={s.n}"


def bias_table(report: BiasReport) -> Table:
    """Per annotator, each diagnostic as "57% [39-73] n=30" (or why it is undefined), its
    labels, median seconds and alerts: one row each."""
    alerted = {(a.annotator, a.diagnostic) for a in report.alerts}
    rows = []
    for who, b in report.annotators.items():
        row: dict[str, object] = {"annotator": who, "labels": b.labels, "median": b.median_seconds}
        for d in DIAGNOSTICS:
            s = b.share(d)
            row[d] = (
                f"undefined ({b.fast_undefined})"
                if d == "fast" and b.fast_undefined
                else (None if s.share is None else _compact(s))
            )
        row["alert"] = ", ".join(TITLES[d] for d in DIAGNOSTICS if (who, d) in alerted)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["annotator", "labels", "median", *DIAGNOSTICS, "alert"])
    return human(
        frame,
        {
            "annotator": "Annotator",
            "labels": "Labels",
            **{d: TITLES[d][0].upper() + TITLES[d][1:] for d in DIAGNOSTICS},
            "median": "Median seconds",
            "alert": "Alert",
        },
        {"Median seconds": "%.1f"},
    )


def control_table(shares: Sequence[ControlShare]) -> Table:
    """The control share in effect in each queue (curate.quality.gold.control_shares)."""
    frame = pd.DataFrame(
        [
            {
                "annotator": c.annotator,
                "assigned": c.assigned,
                "control": c.control,
                "share": None if c.share is None else round(100 * c.share, 1),
            }
            for c in shares
        ],
        columns=["annotator", "assigned", "control", "share"],
    )
    return human(
        frame,
        {"annotator": "Annotator", "assigned": "Assignments", "control": "Control tasks", "share": "Control share"},
        {"Control share": "%.1f%%"},
    )


# -- the audit trail on the Annotators page ------------------------------------------------
AUDIT_ROWS = 500  # the page's table holds the newest this many; `mmrb audit` prints every one
AUDIT_FILTERS: dict[str, str] = {  # an action or a family of them (Store.audit's ``what``) -> its words
    "account": "accounts, roles, sign-outs",
    "assign": "assignment runs",
    "annotator": "pauses and resumes",
    "gold": "gold imports",
    "adjudicate": "adjudications",
    "guidelines": "guidelines",
}


# The trail's columns in px (the grid widens them to fill the page): the whole table fits the page
# at 1366 px and up, no sideways scrolling; a long detail is cut, and audit_details gives it whole
AUDIT_WIDTHS = {"When (UTC)": 150, "Who": 90, "What": 150, "Subject": 130, "Details": 330}


def audit_table(entries: Sequence[AuditEntry]) -> Table:
    """The trail as the lead reads it, newest first (curate/audit.py: ``table``)."""
    return Table(
        pd.DataFrame(audit_rows(entries), columns=list(AUDIT_HEADERS)),
        helps={"Details": "Select a row (its box on the left) to read its details in full below the table"},
        widths=AUDIT_WIDTHS,
    )


def audit_details(entry: AuditEntry) -> pd.DataFrame:
    """One entry of the trail in full, a row per detail (the table's Details column is cut where
    it is long): who, what, subject and when first, then each detail by its name."""
    rows = [
        ("When (UTC)", entry.at[:19].replace("T", " ")),  # as in the table
        ("Who", entry.who),
        ("What", f"{AUDIT_WHAT.get(entry.what, entry.what)} ({entry.what})"),
        ("Subject", entry.subject or EMPTY),
        *((k, str(v)) for k, v in sorted(entry.details.items())),
    ]
    return pd.DataFrame([v for _, v in rows], index=[k for k, _ in rows], columns=["In full"])
