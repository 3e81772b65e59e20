"""Labels as a long table (pair, annotator, field, value), read from the store or a file.

Every value is in canonical response terms (``first``/``second`` = ``Pair.first_id`` /
``Pair.second_id``) before any statistic: a statistic over screen sides would mix up the two
responses whenever the display order was randomised per annotator.

A file states screen sides with a ``left`` column (which response, ``first`` or ``second``,
the annotator saw on the left). On such a row the field ``preference`` takes ``left`` /
``right`` / ``tie`` and the fields ``correctness_left`` / ``correctness_right`` name the
sides; they are mapped to ``preference`` first/second/tie and ``correctness_first`` /
``correctness_second``. A screen-side value on a row without ``left`` is an error.

Files: CSV with a header or JSONL, columns ``item, annotator, field, value`` and optional
``category`` and ``left``. Rows whose annotator is ``@gold`` give the gold value of a pair.

Scales, one convention for the store and for files (see :func:`field_spec`): ``--scale``
first; then the fixed vocabularies; then, for the rating names the importers write
(:data:`KNOWN_SCALES`: MMRB2's ``score`` 1-6 and letter grades ``grade_first`` /
``grade_second`` C < B < A), that scale whenever every value lies on it; else the values
observed. The scale matters beyond the level: Gwet's AC1 counts every value of the scale as
a category (q), used or not, so the same labels must get the same scale on both paths.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import numpy as np
import pandas as pd

from ..errors import InputError, InputProblem, MmrbError
from ..formats import reader
from ..formats.fields import text_problems
from ..model import CORRECTNESS, MMRB2_GRADES, PREFERENCES, Level, Screen, word_of
from ..schemes import Scheme, rating_keys, schemes_in_use

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from ..store import Store
from ..sides import from_screen, is_screen, is_side
from ..wording import plural

LEVELS: tuple[Level, ...] = get_args(Level)
GOLD = "@gold"
STORE_FIELDS = ("preference", "correctness_first", "correctness_second")
_SIDE_FIELDS: dict[str, Screen] = {"correctness_left": "left", "correctness_right": "right"}
# Ordered ratings the importers write into Label.ratings (low to high), used in the store and
# in files when no --scale is given and every observed value is on the scale: MMRB2's 1-6 score
# (high = first better) and its per-response letter grades (A best).
_GRADES = tuple(reversed(MMRB2_GRADES))
KNOWN_SCALES: dict[str, tuple[str, ...]] = {
    "score": ("1", "2", "3", "4", "5", "6"),
    "grade_first": _GRADES,
    "grade_second": _GRADES,
}


@dataclass(frozen=True)
class Declared:
    """What the pairs' schemes say of the keys of ``Label.ratings``: each judged field's level
    and scale (low to high), and the keys that hold no judgement (free text, the proposal a
    verify scheme showed), which agreement leaves out."""

    scales: Mapping[str, tuple[Level, tuple[str, ...]]] = field(default_factory=dict)
    skipped: frozenset[str] = frozenset()


def declared_fields(schemes: Iterable[Scheme]) -> Declared:
    """Each ratings key of ``schemes`` at its level: a scale or scale per response ordinal on
    its points, grades ordinal from the worst to the best (the scheme lists them best first),
    a choice nominal on its values, a multi-select nominal on the combinations given. A key
    two schemes declare differently gets neither's scale: it is read as before schemes."""
    scales: dict[str, tuple[Level, tuple[str, ...]]] = {}
    clash: set[str] = set()
    skipped: set[str] = set()
    for scheme in schemes:
        if scheme.shows_proposal:
            skipped.add("proposal")
        for f in scheme.fields:
            keys = rating_keys(scheme, f)
            if f.kind == "text" or (f.name in STORE_FIELDS and scheme.preference.field == f.name):
                skipped.update(keys)  # no judgement on a scale / the label's own preference column
                continue
            if f.kind == "multi":
                continue
            values = tuple(reversed(f.values)) if f.kind == "grades" else f.options
            for key in keys:
                if scales.setdefault(key, (f.level, values)) != (f.level, values):
                    clash.add(key)
    return Declared({k: v for k, v in scales.items() if k not in clash}, frozenset(skipped - set(scales)))


@dataclass(frozen=True)
class FieldSpec:
    """A labelled field: its level of measurement and its value domain (the scale)."""

    name: str
    level: Level
    values: tuple[str, ...]  # ordered for ordinal/interval/ratio
    scale_source: str = "fixed"  # "fixed" (vocabulary), "given" (--scale), "scheme", "known" or "observed"

    @property
    def numeric(self) -> np.ndarray:
        """Values as numbers for the interval/ratio metrics (ranks if not numeric)."""
        nums = [_as_number(v) for v in self.values]
        if all(n is not None for n in nums):
            return np.array(nums, dtype=float)
        if self.level == "ratio":
            raise MmrbError(f"field {self.name!r}: the ratio level needs numeric values, got {self.values}")
        return np.arange(len(self.values), dtype=float)


@dataclass
class FieldLabels:
    spec: FieldSpec
    unit: np.ndarray  # index into LabelTable.units
    annotator: np.ndarray  # index into LabelTable.annotators
    code: np.ndarray  # index into spec.values


@dataclass
class LabelTable:
    units: np.ndarray  # pair ids, sorted (a stable order for the seeded bootstrap)
    annotators: tuple[str, ...]  # sorted
    category: np.ndarray  # category of each unit ("" when unknown)
    fields: dict[str, FieldLabels]
    gold: dict[str, dict[int, int]] = field(default_factory=dict)  # field -> unit -> code
    source: str = ""

    @property
    def n_labels(self) -> int:
        return int(sum(len(f.code) for f in self.fields.values()))

    def given(self, name: str) -> dict[str, list[str]]:
        """Pair id -> the values given for the field ``name`` (none: the pair is absent)."""
        fl = self.fields.get(name)
        out: dict[str, list[str]] = {}
        if fl is None:
            return out
        values = np.asarray(fl.spec.values, dtype=object)[fl.code]
        for unit, value in zip(self.units[fl.unit], values, strict=True):
            out.setdefault(unit, []).append(value)
        return out

    def only(self, units: Container[str]) -> LabelTable:
        """The labels of ``units`` alone; the other units stay in the index with no label
        and no category, so they count nowhere."""
        # a set lookup per unit: np.isin on object arrays compares every pair (quadratic)
        keep = np.fromiter((u in units for u in self.units), dtype=bool, count=len(self.units))
        fields = {}
        for name, fl in self.fields.items():
            sel = keep[fl.unit]
            fields[name] = FieldLabels(fl.spec, fl.unit[sel], fl.annotator[sel], fl.code[sel])
        return LabelTable(
            self.units, self.annotators, np.where(keep, self.category, ""), fields, self.gold, self.source
        )


def _as_number(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def canonical_value(v) -> str | None:
    """Values compare as text: 5, 5.0 and "5" are the same label."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return str(int(v)) if float(v).is_integer() else repr(float(v))
    s = str(v).strip()
    return s or None


def _sort_values(values: Iterable[str]) -> tuple[str, ...]:
    vals = sorted(set(values))
    nums = [_as_number(v) for v in vals]
    if vals and all(n is not None for n in nums):
        return tuple(v for _, v in sorted(zip(nums, vals, strict=True)))
    return tuple(vals)


def parse_scales(items: Sequence[str] | None) -> dict[str, tuple[str, ...]]:
    """``["score=1,2,3"]`` -> ``{"score": ("1","2","3")}`` (an ordered scale)."""
    out: dict[str, tuple[str, ...]] = {}
    for s in items or ():
        name, eq, vals = s.partition("=")
        read = [canonical_value(v) for v in vals.split(",")]
        values = tuple(v for v in read if v is not None)
        if not eq or not name.strip() or len(values) != len(read) or len(set(values)) != len(values):
            raise MmrbError(f"--scale {s!r}: expected FIELD=v1,v2,... with distinct values, low to high")
        out[name.strip()] = values
    return out


def parse_levels(items: Sequence[str] | None) -> dict[str, Level]:
    out: dict[str, Level] = {}
    for s in items or ():
        name, _, written = s.partition("=")
        level = word_of(LEVELS, written)
        if level is None or not name:
            raise MmrbError(f"--level {s!r}: expected FIELD=" + "|".join(LEVELS))
        out[name] = level
    return out


def field_spec(
    name: str,
    observed: Iterable[str],
    scales: Mapping[str, tuple[str, ...]],
    levels: Mapping[str, Level],
    declared: Declared | None = None,
) -> FieldSpec:
    """Nominal for the fixed vocabularies and unscaled text; ordinal for a given scale, an
    importer's known scale (when every observed value is on it; store and files alike) or
    numbers; a field the pairs' schemes declare at its level on its scale (``declared``);
    the level can always be overridden explicitly."""
    if name in scales:
        spec = FieldSpec(name, "ordinal", scales[name], "given")
    elif declared is not None and name in declared.scales:
        level, values = declared.scales[name]
        spec = FieldSpec(name, level, values, "scheme")
    elif name == "preference":
        spec = FieldSpec(name, "nominal", PREFERENCES)
    elif name in ("correctness_first", "correctness_second"):
        spec = FieldSpec(name, "nominal", CORRECTNESS)
    elif name in KNOWN_SCALES and set(observed) <= set(KNOWN_SCALES[name]):
        spec = FieldSpec(name, "ordinal", KNOWN_SCALES[name], "known")
    else:
        vals = _sort_values(observed)
        numeric = bool(vals) and all(_as_number(v) is not None for v in vals)
        spec = FieldSpec(name, "ordinal" if numeric else "nominal", vals, "observed")
    if name in levels:
        spec = FieldSpec(name, levels[name], spec.values, spec.scale_source)
    return spec


# A column as (codes, values): one integer per row into the column's distinct values, so a
# million labels cost a few arrays rather than a million Python objects. In a file's columns
# code -1 is an empty cell and -2 a record without that key (JSONL).
Column = tuple[np.ndarray, np.ndarray]
_EMPTY, _ABSENT = -1, -2


def _lookup(per_value: Sequence | np.ndarray, fill: object = False) -> np.ndarray:
    """``per_value`` indexable by any code of a column: -1 and -2 (empty, absent) read ``fill``."""
    dtype = bool if isinstance(fill, bool) else object
    return np.append(np.asarray(per_value, dtype=dtype), np.array([fill, fill], dtype=dtype))


def _used_sorted(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes into the values that occur, in code point order (as ``np.unique`` sorts text)."""
    used = np.flatnonzero(np.bincount(codes, minlength=len(values)))
    vals = np.asarray(values, dtype=object)[used]
    order = np.argsort(vals.astype(str), kind="stable")
    rank = np.full(len(values), -1, dtype=np.int64)
    rank[used[order]] = np.arange(len(used))
    return rank[codes], vals[order]


def _second_labels(
    unit: np.ndarray, annotator: np.ndarray, field_: np.ndarray, sizes: tuple[int, int, int]
) -> np.ndarray:
    """Positions of the rows repeating an earlier row's (unit, annotator, field)."""
    n_units, n_annotators, n_fields = sizes
    key = unit.astype(np.int64)
    key *= n_annotators
    key += annotator
    key *= n_fields
    key += field_
    if n_units * n_annotators * n_fields <= 4 * len(key) + 1024:  # a count per possible key costs less than hashing
        if not (np.bincount(key) > 1).any():
            return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(pd.Series(key).duplicated(keep="first").to_numpy())


def from_long(
    df: pd.DataFrame,
    *,
    scales: Mapping[str, tuple[str, ...]] | None = None,
    levels: Mapping[str, Level] | None = None,
    source: str = "",
    lines: Sequence[int] | None = None,
) -> LabelTable:
    """Build a table from a canonical long frame with columns unit, annotator, field, value
    (and optional category). Values outside a field's scale are input errors."""
    df = df.reset_index(drop=True)

    def column(values) -> Column:
        codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
        return codes, np.asarray(uniques, dtype=object)

    category = column(df["category"].fillna("").astype(str)) if "category" in df else None
    return _table(
        source,
        column(df["unit"].to_numpy(dtype=object).astype(str)),
        column(df["annotator"]),
        column(df["field"]),
        column(df["value"]),
        category,
        (lambda i: i + 1) if lines is None else (lambda i: int(lines[i])),
        scales,
        levels,
    )


def _table(
    source: str,
    unit: Column,
    annotator: Column,
    field_: Column,
    value: Column,
    category: Column | None,
    line_of: Callable[[int], int],
    scales: Mapping[str, tuple[str, ...]] | None,
    levels: Mapping[str, Level] | None,
) -> LabelTable:
    """The table of long rows given as columns of codes (every code of unit, annotator, field
    and value >= 0; a category code < 0 reads as no category); ``line_of(row)`` says where a
    row came from."""
    scales, levels = dict(scales or {}), dict(levels or {})
    problems: list[InputProblem] = []
    u, units = _used_sorted(*unit)
    a, ann_values = annotator
    f, field_values = field_
    v, value_values = value
    gold_code = next((n for n, x in enumerate(ann_values) if x == GOLD), -1)
    is_gold = a == gold_code
    labels = np.flatnonzero(~is_gold) if gold_code >= 0 else slice(None)  # a slice: no copies
    second = _second_labels(u[labels], a[labels], f[labels], (len(units), len(ann_values), len(field_values)))
    for i in (second if isinstance(labels, slice) else labels[second])[:50]:
        problems.append(
            InputProblem(
                source,
                line_of(int(i)),
                "value",
                f"second label by {ann_values[a[i]]!r} for pair {units[u[i]]!r} field {field_values[f[i]]!r}",
            )
        )
    used = np.flatnonzero(np.bincount(a[labels], minlength=len(ann_values)))
    order = sorted(used, key=lambda n: ann_values[n])
    annotators = tuple(ann_values[n] for n in order)
    a_rank = np.full(len(ann_values), -1, dtype=np.int64)
    a_rank[order] = np.arange(len(order))
    cats: np.ndarray = np.full(len(units), "", dtype=object)
    if category is not None:
        cat_codes, cat_values = category
        last = np.empty(len(units), dtype=np.int64)
        last[u] = cat_codes  # the last one wins; a pair has one item, hence one category
        cats = _lookup(cat_values, "")[last]
    fields: dict[str, FieldLabels] = {}
    gold: dict[str, dict[int, int]] = {}
    for fc in sorted(np.flatnonzero(np.bincount(f, minlength=len(field_values))), key=lambda n: field_values[n]):
        name = field_values[fc]
        rows = np.flatnonzero(f == fc)
        vc = v[rows]
        seen = np.flatnonzero(np.bincount(vc, minlength=len(value_values)))
        spec = field_spec(name, set(value_values[seen]), scales, levels)
        index = {x: n for n, x in enumerate(spec.values)}
        on_scale = np.full(len(value_values), -1, dtype=np.int64)
        on_scale[seen] = [index.get(x, -1) for x in value_values[seen]]
        codes = on_scale[vc]
        for i in rows[codes < 0][:50]:
            problems.append(
                InputProblem(
                    source,
                    line_of(int(i)),
                    "value",
                    f"{value_values[v[i]]!r} is not on the scale of {name!r}: {', '.join(spec.values)}",
                )
            )
        g = is_gold[rows]
        keep = ~g & (codes >= 0)
        fields[name] = FieldLabels(spec, u[rows[keep]], a_rank[a[rows[keep]]], codes[keep])
        g &= codes >= 0
        if g.any():
            gold[name] = {int(x): int(c) for x, c in zip(u[rows[g]], codes[g], strict=True)}
    if problems:
        raise InputError(problems)
    return LabelTable(units, annotators, cats, fields, gold, source)


# -- files -------------------------------------------------------------------------------
_FILE_COLUMNS = ("item", "annotator", "field", "value", "left", "category")
_REQUIRED = ("item", "annotator", "field", "value")


def read_labels_file(
    path: str | Path, *, scales: Mapping[str, tuple[str, ...]] | None = None, levels: Mapping[str, Level] | None = None
) -> LabelTable:
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise MmrbError(f"{name}: is a folder, not a file")
    if not path.exists():
        raise MmrbError(f"{name}: no such file")
    read = _read_jsonl if path.suffix.lower() in (".jsonl", ".ndjson", ".json") else _read_csv
    return _from_file_columns(name, *read(path, name), scales, levels)


# what a reader gives: rows, the line of a row, columns of codes, problems met while reading
FileColumns = tuple[int, Callable[[int], int], dict[str, Column], list[InputProblem]]


def _read_csv(path: Path, name: str) -> FileColumns:
    """Arrow's CSV reader with every column dictionary-encoded: codes, never a str per cell.
    Line numbers count records after the header (blank lines are none), as ``csv`` does."""
    # deferred: only a CSV label file needs pyarrow (0.1 s to import)
    import pyarrow as pa
    import pyarrow.csv as pcsv

    with path.open("rb") as f:
        first = f.readline()
    try:
        header = next(csv.reader([first.decode("utf-8-sig")]), [])
    except (UnicodeDecodeError, csv.Error) as e:
        raise InputError([InputProblem(name, 1, None, f"cannot read the header: {e}")]) from None
    reader.repeated_columns(name, header)  # Arrow would take one of the two without saying which
    missing = [c for c in _REQUIRED if c not in header]
    if header and missing:
        raise InputError([InputProblem(name, 1, c, "missing column") for c in missing])
    if not header:
        return 0, lambda i: i + 2, {}, []
    wanted = [c for c in _FILE_COLUMNS if c in header]
    ragged: list = []

    def on_ragged(row) -> str:
        ragged.append(row)
        return "skip"

    text = pa.dictionary(pa.int32(), pa.string())
    try:
        parse = pcsv.ParseOptions(newlines_in_values=True, invalid_row_handler=on_ragged)
        convert = pcsv.ConvertOptions(
            include_columns=wanted,
            column_types=dict.fromkeys(wanted, text),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        )
        table = pcsv.read_csv(path, parse_options=parse, convert_options=convert)
    except pa.ArrowInvalid as e:
        raise InputError(
            _text_rows(path, name) or [InputProblem(name, None, None, f"not a readable CSV file: {e}")]
        ) from None
    if ragged:
        raise InputError(
            _ragged_rows(path, name, len(header))
            or [
                InputProblem(
                    name, None, None, f"{plural(len(ragged), 'row')} with another number of fields than the header"
                )
            ]
        )
    n = table.num_rows
    chunked = dict(zip(table.column_names, table.unify_dictionaries().columns, strict=True))
    del table
    columns = {c: _canonical_column(chunked.pop(c)) for c in wanted}
    pa.default_memory_pool().release_unused()  # the parsed blocks: give them back before the table is built
    return n, lambda i: i + 2, columns, []


def _ragged_rows(path: Path, name: str, width: int) -> list[InputProblem]:
    """Where the rows whose number of fields is not the header's are (Arrow does not say)."""
    with path.open(encoding="utf-8-sig", newline="") as f:
        records = (r for r in csv.reader(f) if r)
        next(records, None)
        return [
            InputProblem(name, n, None, f"{plural(len(r), 'field')} where the header has {width}")
            for n, r in enumerate(records, 2)
            if len(r) != width
        ]


def _text_rows(path: Path, name: str) -> list[InputProblem]:
    """The cells whose bytes are not UTF-8, with their line (numbered as ``_ragged_rows``
    does) and column: Arrow says neither."""
    with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as f:
        records = (r for r in csv.reader(f) if r)
        header = next(records, [])
        out = []
        for n, record in enumerate(records, 2):
            row = dict(zip(header, record, strict=False))
            out += [InputProblem(name, n, c, why) for c, why in text_problems(row, nul=False)]
        return out[:20]


def _canonical_column(column) -> Column:
    """An Arrow dictionary column (one dictionary for every chunk) as codes into its distinct
    canonical values; a blank cell is -1."""
    if column.num_chunks == 0:
        return np.zeros(0, dtype=np.int32), np.array([], dtype=object)
    canonical = [s.strip() or None for s in column.chunk(0).dictionary.to_pylist()]  # canonical_value of text
    remap, values = pd.factorize(np.array(canonical, dtype=object))  # None -> -1
    indices = np.concatenate([c.indices.to_numpy() for c in column.chunks])
    return remap.astype(np.int32)[indices], np.asarray(values, dtype=object)


def _read_jsonl(path: Path, name: str) -> FileColumns:
    problems: list[InputProblem] = []
    lines: list[int] = []
    cells: dict[str, list] = {c: [] for c in _FILE_COLUMNS}
    absent = object()
    for row in reader.jsonl_rows(path):
        rec = row.data
        if rec is None:
            problems.append(InputProblem(name, row.line, None, row.error or reader.MALFORMED))
            continue
        bad = text_problems({c: rec[c] for c in cells if c in rec}, nul=False)
        bad += [
            (c, f"expected text, got the number {json.dumps(rec[c])}, which is not finite")
            for c in cells
            if isinstance(rec.get(c), float) and not math.isfinite(rec[c])  # JSON's NaN, Infinity: no label
        ]
        if bad:  # bytes that were not UTF-8 would never match another annotator's value
            problems += [InputProblem(name, row.line, where, why) for where, why in bad]
            continue
        lines.append(row.line)
        for c, out in cells.items():
            out.append(canonical_value(rec[c]) if c in rec else absent)
    columns = {}
    for c, values in cells.items():
        codes, uniques = pd.factorize(np.array(values, dtype=object))  # None -> -1
        gone = [n for n, x in enumerate(uniques) if x is absent]
        if gone:
            codes[codes == gone[0]] = _ABSENT
        columns[c] = (codes.astype(np.int32), np.asarray(uniques, dtype=object))
    return len(lines), lines.__getitem__, columns, problems


def _from_file_columns(
    name: str,
    n: int,
    line_of: Callable[[int], int],
    columns: Mapping[str, Column],
    problems: list[InputProblem],
    scales: Mapping[str, tuple[str, ...]] | None,
    levels: Mapping[str, Level] | None,
) -> LabelTable:
    """Check a file's rows and map screen sides to responses, a whole column at a time; each
    bad row gets its first problem, in the order a reader would meet them."""
    none: Column = (np.full(n, _ABSENT, dtype=np.int32), np.array([], dtype=object))
    item, annotator, field_, value, left = (columns.get(c, none) for c in _FILE_COLUMNS[:5])
    (f, f_values), (v, v_values), (lc, l_values) = field_, value, left
    why = np.zeros(n, dtype=np.int8)  # 0: fine; else the problem below

    def mark(rows: np.ndarray, k: int) -> None:
        why[(why == 0) & rows] = k

    for k, (codes, _) in enumerate((item, annotator, field_, value), 1):  # 1-4: no such key
        mark(codes == _ABSENT, k)
    for k, (codes, _) in enumerate((item, annotator, field_), 5):  # 5-7: empty
        mark(codes == _EMPTY, k)
    unlabelled = (why == 0) & (v == _EMPTY)  # an empty value is a missing label, not a label
    has_left = lc >= 0
    mark(has_left & ~_lookup([is_side(x) for x in l_values])[lc] & ~unlabelled, 8)
    f_pref = next((k for k, x in enumerate(f_values) if x == "preference"), -9)
    shown = (f == f_pref) & _lookup([is_screen(x) for x in v_values])[v]
    side_field = _lookup([x in _SIDE_FIELDS for x in f_values])[f]
    mark(shown & ~has_left & ~unlabelled, 9)
    mark(side_field & ~has_left & ~unlabelled, 10)
    for i in np.flatnonzero(why):
        k = int(why[i])
        col, message = (
            (_REQUIRED[k - 1], "missing column")
            if k <= 4
            else (_REQUIRED[k - 5], "empty")
            if k <= 7
            else (
                "left",
                f"{l_values[lc[i]]!r}: expected first or second"
                if k == 8
                else f"preference {v_values[v[i]]!r} is a screen side: give the column 'left' (first or second: which "
                "response was shown on the left)"
                if k == 9
                else f"field {f_values[f[i]]!r} names a screen side: give the column 'left' (first or second)",
            )
        )
        problems.append(InputProblem(name, line_of(int(i)), col, message))
    if problems:
        raise InputError(problems)
    if unlabelled.all():
        raise MmrbError(f"{name}: no labels")
    # screen sides -> responses: a preference left/right, a field correctness_left/right
    fields, values = list(f_values), list(v_values)

    def code(names: list, x: str) -> int:
        if x not in names:
            names.append(x)
        return names.index(x)

    f_mapped = f.copy() if side_field.any() else f
    v_mapped = v.copy() if shown.any() else v
    for lk in (k for k, x in enumerate(l_values) if is_side(x)):
        at_left = lc == lk
        for vk in (k for k, x in enumerate(v_values) if is_screen(x)):
            v_mapped[shown & at_left & (v == vk)] = code(values, from_screen(v_values[vk], l_values[lk]))
        for fk in (k for k, x in enumerate(f_values) if x in _SIDE_FIELDS):
            side = from_screen(_SIDE_FIELDS[f_values[fk]], l_values[lk])
            f_mapped[at_left & (f == fk)] = code(fields, f"correctness_{side}")
    category = columns.get("category")
    keep: slice | np.ndarray = np.flatnonzero(~unlabelled) if unlabelled.any() else slice(None)  # a slice: no copies
    return _table(
        name,
        (item[0][keep], item[1]),
        (annotator[0][keep], annotator[1]),
        (f_mapped[keep], np.asarray(fields, dtype=object)),
        (v_mapped[keep], np.asarray(values, dtype=object)),
        None if category is None else (category[0][keep], category[1]),
        line_of if isinstance(keep, slice) else lambda i: line_of(int(keep[i])),
        scales,
        levels,
    )


# -- the store ---------------------------------------------------------------------------
# The store reads the labels as columns of codes (curate/store/columns.py: one scan).
def from_store(
    store: Store, *, scales: Mapping[str, tuple[str, ...]] | None = None, levels: Mapping[str, Level] | None = None
) -> LabelTable:
    """Submitted labels of the store: preference, correctness of each response, and every
    key of ``Label.ratings`` (an ordered rating).

    One scan of the labels table reads pair, annotator, the three label fields and the
    ratings text as columns of codes (Store.label_columns); each distinct ratings
    text is parsed once.
    """
    scales, levels = dict(scales or {}), dict(levels or {})
    specs = [field_spec(name, (), scales, levels) for name in STORE_FIELDS]
    for spec in specs:
        if len(spec.values) > 3:
            raise MmrbError(
                f"--scale {spec.name}: the store's {spec.name} takes at most 3 values "
                f"({', '.join(field_spec(spec.name, (), {}, {}).values)})"
            )
    keys = store.scheme_keys()
    # pairs before schemes (all mmrb) are read exactly as before: the declared scales are the schemes'
    declared = declared_fields(schemes_in_use(store)) if keys - {(None, None)} else None
    cols = store.label_columns()
    (unit_codes, units), (ann_codes, ann_names), (text_codes, texts) = cols.pair, cols.annotator, cols.ratings
    regular = _not_control(store.control_keys(), unit_codes, units, ann_codes, ann_names)
    if regular is not None:  # control tasks' labels count toward no agreement
        unit_codes, ann_codes, text_codes = unit_codes[regular], ann_codes[regular], text_codes[regular]
    annotators = tuple(str(a) for a in ann_names)
    fields: dict[str, FieldLabels] = {}
    for name, spec in zip(STORE_FIELDS, specs, strict=True):
        raw, values = cols.fields[name]
        if regular is not None:
            raw = raw[regular]
        # a missing value ("") or one outside the vocabulary is no label
        index = {v: n for n, v in enumerate(spec.values)}
        codes = np.array([index.get(v, -1) for v in values], dtype=np.int64)[raw]
        keep = codes >= 0
        fields[name] = FieldLabels(spec, unit_codes[keep], ann_codes[keep], codes[keep])
    _add_ratings(fields, text_codes, texts, unit_codes, ann_codes, units, annotators, scales, levels, declared)
    cats = np.full(len(units), "", dtype=object)
    (id_codes, ids), (cat_codes, cat_names) = store.pair_category_columns()
    at = pd.Index(units).get_indexer(ids)[id_codes]  # -1: a pair without submitted labels
    cats[at[at >= 0]] = cat_names[cat_codes[at >= 0]]
    gold = _store_gold(store, units, fields)
    return LabelTable(units, annotators, cats, fields, gold, store.display_name)


def _not_control(
    control: set[tuple[str, str]], unit: np.ndarray, units: np.ndarray, ann: np.ndarray, annotators: np.ndarray
) -> np.ndarray | None:
    """Rows that are not a control task's label (None: no control task at all)."""
    if not control:
        return None
    pairs, names = zip(*control, strict=True)
    cu = pd.Index(units).get_indexer(list(pairs))
    ca = pd.Index(annotators).get_indexer(list(names))
    found = (cu >= 0) & (ca >= 0)
    n = max(len(annotators), 1)
    keys = cu[found].astype(np.int64) * n + ca[found]
    return ~np.isin(unit.astype(np.int64) * n + ann, keys)


def _add_ratings(
    fields: dict[str, FieldLabels],
    text_codes: np.ndarray,
    texts: np.ndarray,
    unit: np.ndarray,
    ann: np.ndarray,
    units: np.ndarray,
    annotators: tuple[str, ...],
    scales: Mapping[str, tuple[str, ...]],
    levels: Mapping[str, Level],
    declared: Declared | None = None,
) -> None:
    """Every key of Label.ratings becomes a field (but those the schemes say hold no
    judgement); each distinct JSON text is parsed once."""
    parsed = [json.loads(t) if t not in ("", "{}") else None for t in texts]
    skipped = declared.skipped if declared is not None else frozenset()
    for key in sorted({k for d in parsed if isinstance(d, dict) for k in d} - skipped):
        per_text = [rating_value(d.get(key)) if isinstance(d, dict) else None for d in parsed]
        spec = field_spec(key, {v for v in per_text if v is not None}, scales, levels, declared)
        index = {v: n for n, v in enumerate(spec.values)}
        # -2: no rating under this key; -1: a rating off the scale
        codes = np.array([-2 if v is None else index.get(v, -1) for v in per_text], dtype=np.int64)[text_codes]
        bad = np.flatnonzero(codes == -1)
        if len(bad):
            i = int(bad[0])
            raise MmrbError(
                f"rating {key!r} = {per_text[text_codes[i]]!r} of pair {units[unit[i]]!r} by "
                f"{annotators[ann[i]]!r} is not on the scale {', '.join(spec.values)}"
            )
        keep = codes >= 0
        name = key if key not in fields else f"ratings.{key}"  # never shadow a label field
        fields[name] = FieldLabels(spec, unit[keep], ann[keep], codes[keep])


def rating_value(v) -> str | None:
    """A rating as text; a multi-select's answer is the set it names (the order picked is no
    part of it)."""
    if isinstance(v, list):
        return "+".join(sorted(str(x) for x in v)) or None
    return canonical_value(v)


def _store_gold(store: Store, units: np.ndarray, fields: Mapping[str, FieldLabels]) -> dict[str, dict[int, int]]:
    """The store's gold answers (Store.gold: imported, adjudicated, from a reference, and the
    pairs marked gold), as codes of each field (``Gold.ratings``: of the labels' ``fields``)."""
    rows = list(store.gold().values())
    at = pd.Index(units).get_indexer([r.pair_id for r in rows]) if rows else []  # not a 200k-entry dict
    gold: dict[str, dict[int, int]] = {}
    for u, r in zip(at, rows, strict=True):
        if u < 0:
            continue
        for name, vocab in (
            ("preference", PREFERENCES),
            ("correctness_first", CORRECTNESS),
            ("correctness_second", CORRECTNESS),
        ):
            v = r.value(name)
            if v in vocab:
                gold.setdefault(name, {})[int(u)] = vocab.index(v)
        for key, raw in (r.ratings or {}).items():  # a scheme's fields, on their field's scale
            name = key if key not in STORE_FIELDS else f"ratings.{key}"
            fl, word = fields.get(name), rating_value(raw)
            if fl is not None and word in fl.spec.values:
                gold.setdefault(name, {})[int(u)] = fl.spec.values.index(word)
    return gold
