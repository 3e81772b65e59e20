"""The lead's pages' one read (curate/store/sheet.py): every method SheetStore answers from the
columns read once equals the store's own SQL answer, and so does every figure of the Progress,
Agreement and Quality pages computed through it; and a page's figures read the label table once."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

from annotate import admin, progress
from curate.agreement import from_store
from curate.model import Label
from curate.quality.bias import bias_report, store_facts
from curate.quality.gold import control_shares, gold_stats
from curate.quality.reliability import store_figures
from curate.store.sheet import LabelSheet, SheetStore, sheet_store


def _rows(*columns) -> list[tuple]:
    """A read's rows as tuples of values (a coded column by its values, a float by its repr),
    sorted: the store's reads promise the same rows, not the same row order."""
    out = []
    for c in columns:
        if isinstance(c, np.ndarray):
            out.append([repr(float(x)) if c.dtype.kind == "f" else x.item() for x in c])
        else:
            out.append([str(v) for v in c.values[c.codes]])
    return sorted(zip(*out, strict=True))


def _values(c) -> list[str]:
    return [str(v) for v in c.values]


def _same_reads(store, sheet: SheetStore) -> None:
    want, got = store.label_columns(), sheet.label_columns()
    assert _rows(want.pair, want.annotator, *want.fields.values(), want.ratings) == _rows(
        got.pair, got.annotator, *got.fields.values(), got.ratings
    )
    for a, b in ((want.pair, got.pair), (want.annotator, got.annotator), (want.ratings, got.ratings)):
        assert _values(a) == _values(b)  # the codes' values: those present, in codepoint order
    assert [_values(c) for c in want.fields.values()] == [_values(c) for c in got.fields.values()]
    assert _rows(*store.submitted_seconds()) == _rows(*sheet.submitted_seconds())
    assert _values(store.submitted_seconds()[0]) == _values(sheet.submitted_seconds()[0])
    fw, fg = store.label_fact_columns(), sheet.label_fact_columns()
    facts = ("annotator", "pair", "preference", "seconds", "unsure", "left")
    assert _rows(*(getattr(fw, n) for n in facts)) == _rows(*(getattr(fg, n) for n in facts))
    assert _values(fw.left) == _values(fg.left)
    for plain in (True, False):
        assert sorted(store.label_tallies(plain_submitted=plain), key=repr) == sorted(
            sheet.label_tallies(plain_submitted=plain), key=repr
        )
    assert sorted(store.annotator_work(), key=repr) == sorted(sheet.annotator_work(), key=repr)
    assert store.control_keys() == sheet.control_keys()
    assert sorted(store.progress_by_category(), key=repr) == sorted(sheet.progress_by_category(), key=repr)
    for k in (None, 1, 2, 3, 4):
        assert store.short_pairs(k) == sheet.short_pairs(k)


def _same_figures(store, sheet: SheetStore) -> None:
    now = datetime.now(UTC)
    pd.testing.assert_frame_equal(
        admin.progress_by_annotator(sheet, now=now), admin.progress_by_annotator(store, now=now)
    )
    sub = progress.Submitted.read_parts(sheet)  # as annotate/figures.py reads it
    pd.testing.assert_frame_equal(
        progress.labels_over_time(sub), progress.labels_over_time(progress.Submitted.read(store))
    )
    pd.testing.assert_frame_equal(
        progress.seconds_per_label(sub), progress.seconds_per_label(progress.Submitted.read(store))
    )
    pd.testing.assert_frame_equal(
        progress.label_distribution(from_store(sheet)), progress.label_distribution(from_store(store))
    )
    pd.testing.assert_frame_equal(admin.progress_by_category(sheet), admin.progress_by_category(store))
    pd.testing.assert_frame_equal(admin.short_of_overlap(sheet), admin.short_of_overlap(store))
    dump = lambda r: json.dumps(r.as_dict(), sort_keys=True, default=str)  # noqa: E731
    assert dump(admin.lead_report(sheet, resamples=20)) == dump(admin.lead_report(store, resamples=20))
    assert dump(store_figures(sheet, interval_categories=())) == dump(store_figures(store, interval_categories=()))
    assert dump(bias_report(store_facts(sheet.label_fact_columns()))) == dump(
        bias_report(store_facts(store.label_fact_columns()))
    )
    assert gold_stats(sheet) == gold_stats(store)
    assert control_shares(sheet) == control_shares(store)


def _shuffle_labels(store, seed: int) -> None:
    """Skips, flags, untimed labels, edits and a label without an assignment."""
    rng = random.Random(seed)
    for lab in rng.sample(store.labels(), 30):
        store.save_label(
            Label(
                lab.pair_id,
                lab.annotator,
                preference=rng.choice([lab.preference, None, "tie"]),
                correctness_first=rng.choice(["unsure", "correct", None]),
                status=rng.choice(["submitted", "skipped"]),
                flag=rng.choice([None, "", "other"]),
                seconds=rng.choice([None, 3.0, 0.1 + 0.2]),
            ),
            expected_revision=lab.revision,
        )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_sheet_answers_as_the_store_on_random_stores(tmp_path, seed) -> None:
    from bench.pages import build_store
    from curate.store import Store

    db = tmp_path / "store.db"
    build_store(db, 150 + 70 * seed, seed=seed)
    with Store(str(db), tmp_path / "images") as store:
        _shuffle_labels(store, seed)
        sheet = sheet_store(store)
        _same_reads(store, sheet)
        _same_figures(store, sheet)


def test_the_sheet_answers_as_the_store_on_the_labelled_sample(tmp_path) -> None:
    """The sample's schemes put answers in the ratings ("unsure" among them)."""
    from curate.store import Store
    from tests.support.labelled_sample import labelled_sample

    info = labelled_sample(tmp_path / "sample.db")
    with Store(info.db, info.images) as store:
        sheet = sheet_store(store)
        _same_reads(store, sheet)
        _same_figures(store, sheet)


def test_an_empty_store(tmp_path) -> None:
    from curate.store import Store

    with Store(str(tmp_path / "s.db"), tmp_path / "images") as store:
        sheet = sheet_store(store)
        _same_reads(store, sheet)
        assert sheet.short_pairs() == [] and sheet.label_tallies() == []


@pytest.mark.both_backends
def test_the_sheet_on_both_backends(store) -> None:
    """A label without its assignment, a control task's label, an "Unsure" in the ratings
    (SQLite's LIKE folds its case, PostgreSQL's does not), text NULLs."""
    from curate.model import Annotator, Assignment, Candidate, Item, Pair

    with store.write() as c:
        store.add_items(
            [Item(id=f"i{n}", prompt="q", category=("vqa", "ocr")[n % 2], source="t") for n in range(2)], conn=c
        )
        store.add_candidates(
            [Candidate(id=f"i{n}/{m}", item_id=f"i{n}", model=m, text="x" * (n + 3)) for n in range(2) for m in "ab"],
            conn=c,
        )
        pairs = [
            Pair(id=f"p{n}", item_id=f"i{n % 2}", first_id=f"i{n % 2}/a", second_id=f"i{n % 2}/b", origin="t")
            for n in range(5)
        ]
        store.add_pairs(pairs, conn=c)
        for name in ("x", "y", "z"):
            store.add_annotator(Annotator(name), conn=c)
        store.add_assignments(
            [Assignment(f"p{n}", w, "first" if n % 2 else "second", n, is_gold=n == 4) for n in range(5) for w in "xy"],
            conn=c,
        )
    store.save_label(Label("p0", "x", preference="first", seconds=2.5, ratings={"sure": "Unsure"}))
    store.save_label(Label("p0", "y", preference="second", correctness_first="unsure"))
    store.save_label(Label("p1", "z", preference="tie", flag="other"))
    store.save_label(Label("p4", "x", preference="first", seconds=1 / 3))
    store.save_label(Label("p2", "y", status="skipped"))
    sheet = sheet_store(store)
    _same_reads(store, sheet)


def test_a_page_reads_the_label_table_once(tmp_path) -> None:
    """Every figure of the three pages computed through one SheetStore: the labels, the
    assignments and the pairs' categories are each scanned once, by LabelSheet.read."""
    from curate.store import Store
    from tests.support.labelled_sample import labelled_sample

    info = labelled_sample(tmp_path / "sample.db")
    with Store(info.db, info.images) as store:
        scans: list[str] = []
        real = store._columns

        def counted(columns, from_, where=None):
            scans.append(f"{getattr(from_, 'name', from_)}: {', '.join(sorted(str(c) for c in columns))}")
            return real(columns, from_, where)

        store._columns = counted  # type: ignore[method-assign]
        sheet = SheetStore(store, LabelSheet.read(store))
        assert len(scans) == 2  # the labels, the pairs joined with their items
        scans.clear()
        # the Agreement page's figures need no assignment: the control tasks alone
        admin.lead_report(sheet, resamples=5)
        assert scans == []
        # every figure annotate/figures.py computes over the sheet, on the three pages
        sub = progress.Submitted.read_parts(sheet)
        admin.progress_by_annotator(sheet, counts=admin.annotator_counts(sheet, submitted=sub))
        progress.labels_over_time(sub), progress.seconds_per_label(sub)
        progress.label_distribution(from_store(sheet))
        admin.progress_by_category(sheet), admin.short_of_overlap(sheet)
        admin.lead_report(sheet, resamples=5)
        store_figures(sheet, interval_categories=()), gold_stats(sheet), control_shares(sheet)
        bias_report(store_facts(sheet.label_fact_columns()))
        # read besides: the assignments once, when first needed, the pairs' lengths (the bias
        # facts), and the creation times of the Progress page's plot (Store.submitted_created)
        times = "labels: labels.annotator, labels.created_at"
        assert scans.count(times) == 1 and all("labels" not in s or s == times for s in scans), scans
        assert len([s for s in scans if s.startswith("assignments:")]) == 1, scans
