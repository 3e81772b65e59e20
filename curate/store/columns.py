"""The agreement fast path: labels read as columns of codes (curate/agreement/table.py).

Columns come back as one delimited string each (group_concat / string_agg): a million rows
through the DB-API cost ~1 us each in tuples and str objects (5 s for 1M labels), one string
per column ~0.2 s in SQL, and pyarrow splits and encodes it in C. numpy, pandas and pyarrow
are imported when a column is read, not with the store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, FromClause, Text, case, cast, func, select
from sqlalchemy.sql import Select

from . import schema as S
from .base import StoreBase

if TYPE_CHECKING:
    # deferred: every command opens the store, and only the column reads need numpy
    import numpy as np

_SEP = "\x1f"  # ASCII unit separator; a value containing it falls back to row fetching
LABEL_FIELDS = ("preference", "correctness_first", "correctness_second")


@dataclass(frozen=True)
class CodedColumn:
    """A column as codes into its distinct values, the values in codepoint order (whatever
    the server collation), NULL read as ``""``."""

    codes: np.ndarray  # int64, one per row
    values: np.ndarray  # object (str)

    def __iter__(self) -> Iterator[np.ndarray]:  # unpacks as (codes, values)
        return iter((self.codes, self.values))


@dataclass(frozen=True)
class LabelColumns:
    """Submitted labels, every column in the same row order."""

    pair: CodedColumn
    annotator: CodedColumn
    fields: dict[str, CodedColumn]  # LABEL_FIELDS
    ratings: CodedColumn  # the ratings JSON text


@dataclass(frozen=True)
class LabelFactRows:
    """What the annotator bias diagnostics read (curate/quality/bias.py) as rows: the reference
    :class:`LabelFactColumns` is tested against (tests/test_quality_bias_codes.py). In two
    scans rather than one join of both responses per label (600,000 labels: about 2 s against 5 s): every
    submitted label's (annotator, pair, preference, seconds, any answer "unsure" as 0/1, the
    stored side its assignment showed on the left or None), every pair's (pair, characters of
    its first response's text, of its second's; images as their markers)."""

    labels: list[tuple[Any, ...]]
    lengths: list[tuple[Any, ...]]


@dataclass(frozen=True)
class LabelFactColumns:
    """What the annotator bias diagnostics read (curate/quality/bias.py), as columns: every
    submitted label's annotator, pair, preference (``""``: none), seconds (NaN: untimed),
    whether any answer is "unsure", the stored side its assignment showed on the left (``""``:
    no assignment); and every pair's id with the characters of its first and second
    response's text (images as their markers). The same two scans as
    :class:`LabelFactRows`, each value sent as one string per column, not a tuple per row
    (600,000 labels: 0.9 s against 1.8 s with the frame made)."""

    annotator: CodedColumn
    pair: CodedColumn
    preference: CodedColumn
    seconds: np.ndarray  # float64
    unsure: np.ndarray  # bool
    left: CodedColumn
    pair_ids: CodedColumn
    length_first: np.ndarray  # int64, one per pair_ids row
    length_second: np.ndarray


class ColumnStore(StoreBase):
    def label_fact_rows(self) -> LabelFactRows:
        L, A, P = S.labels.c, S.assignments.c, S.pairs.c
        first, second = S.candidates.alias("first"), S.candidates.alias("second")
        # "unsure" in a ratings field is a JSON string value ("unsure" inside a free text is
        # escaped as \"unsure\"), so the text test keeps it in SQL
        unsure = (L.correctness_first == "unsure") | (L.correctness_second == "unsure") | L.ratings.contains('"unsure"')
        labels = (
            select(L.annotator, L.pair_id, L.preference, L.seconds, case((unsure, 1), else_=0), A.left)
            .select_from(S.labels.outerjoin(S.assignments, (A.pair_id == L.pair_id) & (A.annotator == L.annotator)))
            .where(L.status == "submitted")
        )
        lengths = select(P.id, func.length(first.c.text), func.length(second.c.text)).select_from(
            S.pairs.join(first, first.c.id == P.first_id).join(second, second.c.id == P.second_id)
        )
        return LabelFactRows(self._fetch(labels)[1], self._fetch(lengths)[1])

    def label_fact_columns(self) -> LabelFactColumns:
        import numpy as np  # deferred: every command opens the store, and only the column reads need numpy

        L, A = S.labels.c, S.assignments.c
        # as label_fact_rows: "unsure" in a ratings field is a JSON string value
        unsure = (L.correctness_first == "unsure") | (L.correctness_second == "unsure") | L.ratings.contains('"unsure"')
        who, pair, pref, secs, flag, left = self._columns(
            [L.annotator, L.pair_id, L.preference, self._exact_text(L.seconds), case((unsure, "1"), else_="0"), A.left],
            S.labels.outerjoin(S.assignments, (A.pair_id == L.pair_id) & (A.annotator == L.annotator)),
            L.status == "submitted",
        )
        ids, n1, n2 = self.pair_lengths()
        return LabelFactColumns(
            annotator=who,
            pair=pair,
            preference=pref,
            seconds=numbers(secs, np.float64, np.nan),
            unsure=flag.values[flag.codes] == "1" if len(flag.codes) else np.zeros(0, dtype=bool),
            left=left,
            pair_ids=ids,
            length_first=n1,
            length_second=n2,
        )

    def pair_lengths(self) -> tuple[CodedColumn, np.ndarray, np.ndarray]:
        """Every pair's id with the characters of its first and second response's text
        (images as their markers), in the same row order."""
        import numpy as np  # deferred: every command opens the store, and only the column reads need numpy

        P = S.pairs.c
        first, second = S.candidates.alias("first"), S.candidates.alias("second")
        ids, n1, n2 = self._columns(
            [P.id, cast(func.length(first.c.text), Text), cast(func.length(second.c.text), Text)],
            S.pairs.join(first, first.c.id == P.first_id).join(second, second.c.id == P.second_id),
        )
        return ids, numbers(n1, np.int64, 0), numbers(n2, np.int64, 0)

    def label_columns(self) -> LabelColumns:
        L = S.labels
        pair, ann, *fields, ratings = self._columns(
            [L.c.pair_id, L.c.annotator, *(L.c[name] for name in LABEL_FIELDS), L.c.ratings],
            L,
            L.c.status == "submitted",
        )
        return LabelColumns(pair, ann, dict(zip(LABEL_FIELDS, fields, strict=True)), ratings)

    def submitted_columns(self) -> tuple[CodedColumn, CodedColumn, np.ndarray]:
        """(annotator, created_at, seconds) of every submitted label, in the same row order, in
        one scan: the progress plots' labels over time (sorted by the codes: codepoint order of
        the text) and seconds per label, NaN where untimed. The seconds travel as text that
        reads back to the same float (a plain text cast in SQLite keeps 15 digits and loses
        some): 600,000 labels in 0.4 s against 0.8 s for a second scan on the raw cursor."""
        import numpy as np  # deferred: every command opens the store, and only the column reads need numpy

        L = S.labels
        who, created, secs = self._columns(
            [L.c.annotator, L.c.created_at, self._exact_text(L.c.seconds)], L, L.c.status == "submitted"
        )
        values = np.array([float(v) if v else np.nan for v in secs.values], dtype=np.float64)
        return who, created, values[secs.codes] if len(secs.codes) else np.zeros(0, dtype=np.float64)

    def submitted_created(self) -> tuple[CodedColumn, CodedColumn]:
        """(annotator, created_at) of every submitted label, in the same row order: with
        :meth:`submitted_seconds`, the progress plots' columns in two reads (the lead's pages
        take the seconds from their sheet, curate/store/sheet.py)."""
        L = S.labels
        who, created = self._columns([L.c.annotator, L.c.created_at], L, L.c.status == "submitted")
        return who, created

    def _exact_text(self, column: ColumnElement) -> ColumnElement:
        """A float column as text that reads back to the same float (NULL stays NULL):
        SQLite's own cast keeps 15 significant digits and its printf 16 unless the "!" flag
        asks for more; PostgreSQL's cast (12 and later) gives the shortest exact text."""
        if self.backend == "sqlite":
            return case((column.is_(None), None), else_=func.printf("%!.17g", column))
        return cast(column, Text)

    def submitted_seconds(self) -> tuple[CodedColumn, np.ndarray]:
        """(annotator, seconds) of every timed submitted label: the seconds as the database's
        floats (as text they would lose digits), on the raw cursor."""
        import numpy as np  # deferred: every command opens the store, and only the column reads need numpy

        L = S.labels.c
        _, rows = self._fetch(select(L.annotator, L.seconds).where(L.status == "submitted", L.seconds.is_not(None)))
        who = sorted_codes(np.array([r[0] for r in rows], dtype=object))
        return who, np.array([r[1] for r in rows], dtype=np.float64)

    def pair_category_columns(self) -> tuple[CodedColumn, CodedColumn]:
        """(pair id, its item's category) of every pair, in the same row order."""
        P, It = S.pairs, S.items
        pair, cat = self._columns([P.c.id, It.c.category], P.join(It, It.c.id == P.c.item_id))
        return pair, cat

    def _fetch(self, query: Select) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one SELECT on the raw DB-API cursor: no SQLAlchemy Row object per row."""
        with self.read() as conn:
            compiled = query.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})
            cur = conn.connection.cursor()  # the DB-API cursor of the pooled connection
            try:
                cur.execute(str(compiled))
                cols: list[str] = [d[0] for d in cur.description]
                rows: list[tuple[Any, ...]] = list(cur.fetchall())
            finally:
                cur.close()
        return cols, rows

    def _columns(
        self, columns: Sequence[ColumnElement], from_: FromClause, where: ColumnElement[bool] | None = None
    ) -> list[CodedColumn]:
        # deferred: every command opens the store, and only the column reads need numpy
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        exprs = [func.coalesce(c, "") for c in columns]
        # aggregates of one SELECT step through the same rows in the same order, so the
        # strings line up; the count detects a value that contains the separator
        query = select(func.count(), *(func.aggregate_strings(e, _SEP) for e in exprs)).select_from(from_)
        if where is not None:
            query = query.where(where)
        _, [(n, *texts)] = self._fetch(query)
        if not n:
            return [CodedColumn(np.zeros(0, dtype=np.int64), np.array([], dtype=object)) for _ in columns]
        out = []
        for text in texts:
            # Arrow strings straight over the UTF-8 bytes, cut after each separator (a byte no
            # multi-byte character contains): every value keeps one trailing separator, so
            # equal values stay equal, and it is dropped from the few distinct ones below.
            data = (text + _SEP).encode()
            cuts = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord(_SEP)) + 1
            if len(cuts) != n:
                break
            offsets = np.concatenate([[0], cuts]).astype(np.int64)
            values = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
            enc = values.dictionary_encode()
            distinct = pc.utf8_slice_codeunits(enc.dictionary, 0, -1)
            # arrow sorts UTF-8 bytewise, which is codepoint order
            out.append(
                _rank_sorted(
                    enc.indices.to_numpy(),
                    distinct.to_numpy(zero_copy_only=False),
                    pc.array_sort_indices(distinct).to_numpy(),
                )
            )
        else:
            return out
        query = select(*exprs).select_from(from_)  # slow path: one tuple per row
        _, rows = self._fetch(query if where is None else query.where(where))
        grid = np.array(rows, dtype=object).reshape(len(rows), len(columns))
        return [sorted_codes(grid[:, k]) for k in range(len(columns))]


def numbers(c: CodedColumn, dtype: type, empty: float) -> np.ndarray:
    """A column of numbers read as text, one per row (``empty`` where NULL)."""
    import numpy as np  # deferred: every command opens the store, and only the column reads need numpy

    values: np.ndarray = np.array([float(v) if v else empty for v in c.values] or [empty], dtype=dtype)
    return values[c.codes]


def _rank_sorted(codes: np.ndarray, uniques: np.ndarray, order: np.ndarray | None = None) -> CodedColumn:
    """Recode (codes, uniques) so the uniques are in codepoint order (``order`` sorts them),
    whatever the server collation."""
    # deferred: every command opens the store, and only the column reads need numpy
    import numpy as np

    if order is None:
        order = np.argsort(uniques.astype(str), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return CodedColumn(rank[codes].astype(np.int64), np.asarray(uniques, dtype=object)[order])


def sorted_codes(values: np.ndarray) -> CodedColumn:
    """Codes into the sorted distinct values (codepoint order, whatever the server collation)."""
    # deferred: every command opens the store, and only the column reads need numpy
    import numpy as np
    import pandas as pd

    if not len(values):
        return CodedColumn(np.zeros(0, dtype=np.int64), np.array([], dtype=object))
    codes, uniques = pd.factorize(values, sort=False)
    return _rank_sorted(codes, np.asarray(uniques, dtype=object))
