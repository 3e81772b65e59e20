"""The lead's pages' one read: every label's columns and each pair's category, read once per
store state (annotate/figures.py keeps it per change stamp), and the assignments' columns once
a figure needs them, shared by every figure of the Progress, Agreement and Quality pages.

Each page's figures used to read the label table again (600,000 labels: the per-annotator
counts, the plots, the label distribution, the agreement table, the reliability frame and the
bias facts each scanned it, 0.4-0.9 s a scan); :class:`SheetStore` answers those same
methods from the columns read once, so the code computing the figures is unchanged, and
tests/test_label_sheet.py holds every answer equal to the store's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import case

from . import Store
from . import schema as S
from .base import Conn
from .columns import LABEL_FIELDS, CodedColumn, LabelColumns, LabelFactColumns, numbers, sorted_codes
from .counts import AnnotatorWork, CategoryProgress, LabelTally, PairOverlap


def take(column: CodedColumn, rows: np.ndarray) -> CodedColumn:
    """The column's ``rows`` (a mask or indices), coded into the values they hold only, as a
    read of those rows alone codes them (the values stay in codepoint order)."""
    codes = column.codes[rows]
    present = np.zeros(len(column.values), dtype=bool)  # by the values' codes: no sort (np.unique was 8x)
    present[codes] = True
    rank = np.cumsum(present) - 1
    return CodedColumn(rank[codes].astype(np.int64), column.values[present])


def _index_in(values: np.ndarray, into: np.ndarray) -> np.ndarray:
    """Each of ``values``' position in ``into`` (both sorted distinct strings), -1 if absent."""
    if not len(into):
        return np.full(len(values), -1, dtype=np.int64)
    if len(values) == len(into) and (values is into or bool(np.all(values == into))):
        return np.arange(len(values), dtype=np.int64)  # the labels' pairs are the assignments' (8x)
    pos = np.searchsorted(into, values).clip(0, len(into) - 1)
    return np.where(into[pos] == values, pos, -1).astype(np.int64)


@dataclass(frozen=True)
class Assignments:
    """Every assignment as columns in one row order: read when a figure first needs them
    (the Agreement page's do not: the control tasks alone, Store.control_keys)."""

    pair: CodedColumn
    annotator: CodedColumn
    state: CodedColumn
    left: CodedColumn
    gold: np.ndarray  # bool: a control task

    @classmethod
    def read(cls, store: Store) -> Assignments:
        A = S.assignments.c
        gold_text = case((A.is_gold.is_(True), "1"), else_="0")
        pair, who, state, left, gold = store._columns(
            [A.pair_id, A.annotator, A.state, A.left, gold_text], S.assignments
        )
        return cls(
            pair, who, state, left, gold.values[gold.codes] == "1" if len(gold.codes) else np.zeros(0, dtype=bool)
        )


@dataclass(frozen=True)
class LabelSheet:
    """Every label (whatever its status) as columns in one row order, NULL read as ``""``;
    each pair's category; ``memo``: what the figures made of it once (the submitted labels'
    columns, the assignments)."""

    pair: CodedColumn
    annotator: CodedColumn
    status: CodedColumn
    fields: dict[str, CodedColumn]  # LABEL_FIELDS
    ratings: CodedColumn
    seconds: np.ndarray  # float64, NaN: untimed
    flag: CodedColumn
    categories: tuple[CodedColumn, CodedColumn]  # (pair id, its item's category)
    backend: str
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def read(cls, store: Store) -> LabelSheet:
        """Two scans: the labels, the pairs with their items (bench/pages.py times it)."""
        L = S.labels.c
        # separate reads, as the pages' own reads were: a label saved between them shows on
        # the next change stamp. Not the creation times (0.2 s of 1 s at 600,000 labels): only the Progress page's
        # plots read them (Store.submitted_created)
        pair, who, status, *fields, ratings, secs, flag = store._columns(
            [
                L.pair_id,
                L.annotator,
                L.status,
                *(L[name] for name in LABEL_FIELDS),
                L.ratings,
                store._exact_text(L.seconds),
                L.flag,
            ],
            S.labels,
        )
        categories = store.pair_category_columns()
        return cls(
            pair=pair,
            annotator=who,
            status=status,
            fields=dict(zip(LABEL_FIELDS, fields, strict=True)),
            ratings=ratings,
            seconds=numbers(secs, np.float64, np.nan),
            flag=flag,
            categories=categories,
            backend=store.backend,
        )

    def is_(self, column: CodedColumn, value: str) -> np.ndarray:
        """Each row's mask: its value is ``value``."""
        return column.values[column.codes] == value if len(column.codes) else column.codes.astype(bool)

    def submitted(self) -> np.ndarray:
        return self.is_(self.status, "submitted")

    def assignment_of(self, a: Assignments) -> np.ndarray:
        """Each label's assignment row (same pair and annotator), -1 where none."""
        pairs = _index_in(self.pair.values, a.pair.values)[self.pair.codes]
        people = _index_in(self.annotator.values, a.annotator.values)[self.annotator.codes]
        width = max(len(a.annotator.values), 1)
        keys = a.pair.codes * width + a.annotator.codes
        order = np.argsort(keys, kind="stable")
        wanted = pairs * width + people
        if not len(keys):
            return np.full(len(wanted), -1, dtype=np.int64)
        pos = np.searchsorted(keys[order], wanted).clip(0, len(keys) - 1)
        found = (pairs >= 0) & (people >= 0) & (keys[order][pos] == wanted)
        return np.where(found, order[pos], -1).astype(np.int64)


class SheetStore(Store):
    """The store, with the methods the lead's figures read the labels and assignments through
    answered from a :class:`LabelSheet` (each answer equal to the store's own); every other
    method is the store's, on its connections."""

    def __init__(self, store: Store, sheet: LabelSheet) -> None:  # shares the store's engines
        self.__dict__.update(store.__dict__)
        self.sheet = sheet

    def _assignments(self) -> Assignments:
        # read on first need, once per sheet (two threads at once read equal ones)
        memo = self.sheet.memo
        if "assignments" not in memo:
            memo["assignments"] = Assignments.read(self)
        got: Assignments = memo["assignments"]
        return got

    # -- the labels ---------------------------------------------------------------------------
    def label_columns(self) -> LabelColumns:
        # made once per sheet, shared by every figure (read only); two threads making it at
        # once make equal ones
        memo = self.sheet.memo
        if "label_columns" not in memo:
            memo["label_columns"] = self._submitted_label_columns()
        return memo["label_columns"]

    def _submitted_label_columns(self) -> LabelColumns:
        sh = self.sheet
        rows = sh.submitted()
        return LabelColumns(
            take(sh.pair, rows),
            take(sh.annotator, rows),
            {name: take(c, rows) for name, c in sh.fields.items()},
            take(sh.ratings, rows),
        )

    def submitted_seconds(self) -> tuple[CodedColumn, np.ndarray]:
        sh = self.sheet
        rows = sh.submitted() & ~np.isnan(sh.seconds)
        return take(sh.annotator, rows), sh.seconds[rows]

    def label_fact_columns(self) -> LabelFactColumns:
        sh = self.sheet
        a = self._assignments()
        rows = sh.submitted()
        # as the store's SQL: "unsure" as an answer, or as a JSON string value in the ratings
        # (SQLite's LIKE ignores the case of ASCII letters, PostgreSQL's does not)
        fold = self.backend == "sqlite"
        in_ratings = np.array(
            [(b'"unsure"' in (t.encode().lower() if fold else t.encode())) for t in sh.ratings.values],
            dtype=bool,
        )
        unsure = (
            sh.is_(sh.fields["correctness_first"], "unsure")
            | sh.is_(sh.fields["correctness_second"], "unsure")
            | (in_ratings[sh.ratings.codes] if len(sh.ratings.codes) else np.zeros(0, dtype=bool))
        )
        at = sh.assignment_of(a)[rows]
        # the assignment's left side; "" where the label has no assignment (the last entry)
        left_of = np.concatenate([a.left.values[a.left.codes], np.array([""], dtype=object)])

        ids, n1, n2 = self.pair_lengths()
        return LabelFactColumns(
            annotator=take(sh.annotator, rows),
            pair=take(sh.pair, rows),
            preference=take(sh.fields["preference"], rows),
            seconds=sh.seconds[rows],
            unsure=unsure[rows],
            left=sorted_codes(left_of[at]),
            pair_ids=ids,
            length_first=n1,
            length_second=n2,
        )

    def label_tallies(self, conn: Conn | None = None, *, plain_submitted: bool = True) -> list[LabelTally]:
        sh = self.sheet
        flagged = ~sh.is_(sh.flag, "")
        keep = np.ones(len(flagged), dtype=bool) if plain_submitted else (~sh.submitted() | flagged)
        width = max(len(sh.status.values), 1)
        key = sh.annotator.codes[keep] * width + sh.status.codes[keep]
        n = np.bincount(key, minlength=len(sh.annotator.values) * width)
        f = np.bincount(key, weights=flagged[keep], minlength=len(n)).astype(np.int64)
        return [
            LabelTally(str(sh.annotator.values[k // width]), str(sh.status.values[k % width]), int(n[k]), int(f[k]))
            for k in np.flatnonzero(n)
        ]

    # -- the assignments ----------------------------------------------------------------------
    def annotator_work(self, conn: Conn | None = None) -> list[AnnotatorWork]:
        sh = self.sheet
        a = self._assignments()
        names = a.annotator.values
        n = np.bincount(a.annotator.codes, minlength=len(names))
        done = np.bincount(a.annotator.codes, weights=sh.is_(a.state, "done"), minlength=len(names))
        return [AnnotatorWork(str(names[k]), int(n[k]), int(done[k])) for k in np.flatnonzero(n)]

    def control_keys(self, conn: Conn | None = None) -> set[tuple[str, str]]:
        if "assignments" not in self.sheet.memo:  # the few control tasks alone (the Agreement page)
            return super().control_keys(conn)
        a = self._assignments()
        pairs, people = a.pair.values[a.pair.codes], a.annotator.values[a.annotator.codes]
        return {(str(p), str(a)) for p, a in zip(pairs[a.gold], people[a.gold], strict=True)}

    def pair_category_columns(self) -> tuple[CodedColumn, CodedColumn]:
        return self.sheet.categories

    def progress_by_category(self, conn: Conn | None = None) -> list[CategoryProgress]:
        sh = self.sheet
        a = self._assignments()
        (ids, id_values), (cats, cat_values) = sh.categories
        category_of = np.full(len(a.pair.values), -1, dtype=np.int64)  # per assignment pair value
        at = _index_in(id_values, a.pair.values)[ids]
        category_of[at[at >= 0]] = cats[at >= 0]
        cat = category_of[a.pair.codes]
        known = cat >= 0  # an inner join: an assignment of a pair without an item counts nowhere
        width = max(len(a.state.values), 1)
        n = np.bincount(cat[known] * width + a.state.codes[known], minlength=len(cat_values) * width)
        return [
            CategoryProgress(str(cat_values[k // width]), str(a.state.values[k % width]), int(n[k]))
            for k in np.flatnonzero(n)
        ]

    def short_pairs(self, k: int | None = None, conn: Conn | None = None) -> list[PairOverlap]:
        sh = self.sheet
        a = self._assignments()
        n_pairs = len(a.pair.values)
        regular = ~a.gold
        assigned = np.bincount(a.pair.codes[regular], minlength=n_pairs)
        submitted = sh.submitted()
        on = _index_in(sh.pair.values, a.pair.values)[sh.pair.codes]  # each label's pair among the assigned
        counted = submitted & (on >= 0)
        labelled = np.bincount(on[counted], minlength=n_pairs)
        # less the control tasks' submitted labels
        at = sh.assignment_of(a)
        control = submitted & (at >= 0)
        control[control] = a.gold[at[control]]
        labelled -= np.bincount(on[control], minlength=n_pairs)
        short = np.flatnonzero((assigned > 0) & (labelled < (assigned if k is None else k)))
        waiting: dict[int, list[str]] = {}
        open_ = regular & sh.is_(a.state, "open")
        for p, w in zip(a.pair.codes[open_].tolist(), a.annotator.codes[open_].tolist(), strict=True):
            waiting.setdefault(p, []).append(str(a.annotator.values[w]))
        # the pair values are in codepoint order: so are the short ones
        return [
            PairOverlap(str(a.pair.values[p]), int(assigned[p]), int(labelled[p]), tuple(sorted(waiting.get(p, ()))))
            for p in short.tolist()
        ]


def sheet_store(store: Store) -> SheetStore:
    """The store answering the lead's figures' reads from one :class:`LabelSheet` read now."""
    return SheetStore(store, LabelSheet.read(store))
