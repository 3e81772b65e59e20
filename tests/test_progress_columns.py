"""The Progress page's figures read as columns and counted in the database (admin.progress_by_annotator,
admin.short_of_overlap, progress.labels_over_time / seconds_per_label over progress.Submitted)
against the row-by-row computations they replaced, kept here as the reference: equal on
random stores (skips, flags, recent labels, control tasks, pairs short of overlap) and on
the labelled sample."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from statistics import median

import numpy as np
import pandas as pd
import pytest

from annotate import admin, progress
from curate.model import Label


# -- the reference: as computed before, one row object per label -------------------------------
def old_progress_by_annotator(store, now) -> pd.DataFrame:
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
        recent = sum(
            1 for r in sub if r.updated_at and datetime.fromisoformat(r.updated_at) >= now - timedelta(hours=1)
        )
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
                labels_per_hour=admin.labels_per_hour(secs),
                median_seconds=round(median(secs), 1) if secs else None,
            )
        )
    return pd.DataFrame(out)


def old_short_of_overlap(store) -> pd.DataFrame:
    out = []
    for r in sorted(store.pair_overlap(), key=lambda r: r.pair_id):
        if r.submitted < r.assigned:
            out.append(
                dict(
                    pair=r.pair_id,
                    wanted=r.assigned,
                    assigned=r.assigned,
                    labelled=r.submitted,
                    waiting_on=", ".join(r.waiting_on),
                )
            )
    return pd.DataFrame(out, columns=["pair", "wanted", "assigned", "labelled", "waiting_on"])


def old_labels_over_time(activity) -> pd.DataFrame:
    times: dict[str, list[str]] = {}
    for r in activity:
        if r.status == "submitted":
            times.setdefault(r.annotator, []).append(r.created_at)
    parts = []
    for who, ts in sorted(times.items()):
        ts.sort()
        keep = progress._thin(len(ts))
        parts.append(
            pd.DataFrame({"annotator": who, "time": [datetime.fromisoformat(ts[i]) for i in keep], "labels": keep + 1})
        )
    if not parts:
        return pd.DataFrame({"annotator": [], "time": pd.to_datetime([], utc=True), "labels": []})
    return pd.concat(parts, ignore_index=True)


def old_seconds_per_label(activity) -> pd.DataFrame:
    secs: dict[str, list[float]] = {}
    for r in activity:
        if r.status == "submitted" and r.seconds is not None:
            secs.setdefault(r.annotator, []).append(r.seconds)
    rows = [
        {
            "annotator": who,
            "labels": len(xs),
            **{
                k: float(v)
                for k, v in zip(progress.QUANTILES, np.quantile(xs, list(progress.QUANTILES.values())), strict=True)
            },
        }
        for who, xs in sorted(secs.items())
    ]
    return pd.DataFrame(rows, columns=["annotator", "labels", *progress.QUANTILES])


def _check(store, now) -> None:
    old = old_progress_by_annotator(store, now)
    pd.testing.assert_frame_equal(admin.progress_by_annotator(store, now=now), old)
    submitted = progress.Submitted.read(store)  # as the Progress page: the plots' columns shared
    pd.testing.assert_frame_equal(admin.progress_by_annotator(store, now=now, submitted=submitted), old)
    pd.testing.assert_frame_equal(admin.short_of_overlap(store), old_short_of_overlap(store))
    activity = store.label_activity()
    pd.testing.assert_frame_equal(progress.labels_over_time(submitted), old_labels_over_time(activity))
    pd.testing.assert_frame_equal(progress.seconds_per_label(submitted), old_seconds_per_label(activity))
    pd.testing.assert_frame_equal(progress.labels_over_time(activity), old_labels_over_time(activity))
    from curate.agreement import from_store  # the distribution of the table, as of the report

    pd.testing.assert_frame_equal(
        progress.label_distribution(from_store(store)),
        progress.label_distribution(admin.lead_report(store, resamples=5)),
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_progress_figures_on_random_stores(tmp_path, seed) -> None:
    from bench.pages import build_store
    from curate.store import Store

    db = tmp_path / "store.db"
    build_store(db, 120 + 50 * seed, seed=seed)
    rng = random.Random(seed)
    with Store(str(db), tmp_path / "images") as store:
        # some labels skipped, some edited just now (so within the last hour), some untimed
        now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        for lab in rng.sample(store.labels(), 30):
            status = rng.choice(["submitted", "skipped"])
            store.save_label(
                Label(
                    lab.pair_id,
                    lab.annotator,
                    preference=lab.preference,
                    status=status,
                    seconds=rng.choice([None, 3.0, 41.25, 0.1 + 0.2]),
                ),
                expected_revision=lab.revision,
            )
        _check(store, datetime.now(UTC))
        _check(store, now)


def test_progress_figures_on_the_labelled_sample(tmp_path) -> None:
    from curate.store import Store
    from tests.support.labelled_sample import END, labelled_sample

    info = labelled_sample(tmp_path / "sample.db")
    with Store(info.db, info.images) as store:
        for minutes in (10, 90, 200):
            _check(store, END - timedelta(minutes=minutes) + timedelta(hours=1))
        _check(store, datetime.now(UTC))


def test_nothing_labelled(tmp_path) -> None:
    from curate.store import Store

    with Store(str(tmp_path / "s.db"), tmp_path / "images") as store:
        _check(store, datetime.now(UTC))


@pytest.mark.both_backends
def test_submitted_columns_read_every_float_back_exactly(store) -> None:
    """The seconds travel as text: each must read back as the very float stored (SQLite's
    own cast keeps 15 digits: 0.1 + 0.2 would read as 0.3), NaN where untimed, skipped left out."""
    from curate.model import Annotator, Candidate, Item, Pair

    secs = [0.1 + 0.2, 1 / 3, 1e-7, 123456.789012345, 3.0, None, 2.5]
    with store.write() as c:
        store.add_items([Item(id="i", prompt="q", category="vqa", source="t")], conn=c)
        store.add_candidates([Candidate(id=f"i/{m}", item_id="i", model=m, text="x") for m in "ab"], conn=c)
        pairs = [Pair(id=f"p{n}", item_id="i", first_id="i/a", second_id="i/b", origin="t") for n in range(8)]
        store.add_pairs(pairs, conn=c)
        for name in ("x", "y"):
            store.add_annotator(Annotator(name), conn=c)
    for n, s in enumerate(secs):
        store.save_label(Label(f"p{n}", "xy"[n % 2], preference="first", seconds=s))
    store.save_label(Label("p7", "x", preference="first", status="skipped", seconds=9.0))
    who, created, seconds = store.submitted_columns()
    got = sorted(zip(who.values[who.codes], seconds.tolist(), strict=True), key=lambda t: str(t[1]))
    want = sorted(((("xy"[n % 2]), np.nan if s is None else s) for n, s in enumerate(secs)), key=lambda t: str(t[1]))
    assert [w for w, _ in got] == [w for w, _ in want] and len(created.codes) == len(secs)
    assert all((a == b) or (np.isnan(a) and np.isnan(b)) for (_, a), (_, b) in zip(got, want, strict=True))
    sub = progress.Submitted.read(store)
    assert sorted(sub.seconds.tolist()) == sorted(s for s in secs if s is not None)
    assert list(sub.timed_who.values) == ["x", "y"]


@pytest.mark.both_backends
def test_the_counts_in_the_database_on_both_backends(store) -> None:
    """The counts the lead's pages leave to the database (pairs short of overlap, control
    labels, gold pairs per category) equal the records' on SQLite and PostgreSQL alike."""
    from collections import Counter

    from curate.model import Annotator, Assignment, Gold
    from curate.quality.gold import gold_stats
    from tests.support.build_store import seed_store

    seed_store(store)
    pairs = [p.id for p in store.pairs()]
    names = [a.name for a in store.annotators()]
    for name in ("x", "y", "z"):
        if name not in names:
            store.add_annotator(Annotator(name))
    rng = random.Random(4)
    assignments, labels = [], []
    for n, pid in enumerate(pairs):
        for k, who in enumerate(rng.sample(["x", "y", "z"], rng.randint(1, 3))):
            control = n % 4 == 0 and k == 0
            assignments.append(Assignment(pid, who, "first", n, is_gold=control))
            if rng.random() < 0.7:
                labels.append(Label(pid, who, preference="first", status=rng.choice(["submitted", "skipped"])))
    labels.append(Label(pairs[1], "lead", preference="second"))  # a label without an assignment
    store.add_assignments(assignments)
    for lab in labels:
        if lab.annotator == "lead" and "lead" not in names:
            store.add_annotator(Annotator("lead", role="admin"))
        store.save_label(lab)
    store.set_gold([Gold(p, "import", preference="first") for p in pairs[::3]])
    pd.testing.assert_frame_equal(admin.short_of_overlap(store), old_short_of_overlap(store))
    stats = gold_stats(store)
    items = {p.id: p.item_id for p in store.pairs()}
    cats = {i.id: i.category or "" for i in store.items()}
    assert stats.by_category == dict(Counter(cats[items[g]] for g in store.gold()))
    assert stats.control_labels == len(store.labels(control=True)) > 0
