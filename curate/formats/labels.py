"""Raw per-annotator labels: one record per label (submitted or skipped; drafts never), in
JSONL, Parquet or CSV. This module alone reads and writes the format (``mmrb export labels``,
``mmrb labels import``, the build's ``annotations`` config).

Columns, in this order (``COLUMNS``): the pair and its item and category, the annotator, the
label's status, the pair's scheme and the scheme version the label was made under, the label's
fields in the pair's stored order (``correctness_first``, ``correctness_second``,
``preference``; every other field of the scheme in ``ratings`` by its label name: an object
in JSONL, JSON text in CSV and Parquet), ``rationale``, ``flag``, ``flag_note``, ``seconds``
spent, the guidelines version shown, ``gold`` (the pair has a gold answer), ``control`` (the
label was a control task), ``source`` and the two timestamps. In CSV a blank cell is null.

Reading checks what the file alone can tell (types, the fixed vocabularies, a pair and
annotator given); what a pair's scheme allows is checked by the importer
(``curate/rawlabels.py``), which knows the store. Only ``pair_id`` and ``annotator`` are
required; a missing ``status`` is ``submitted``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

from ..errors import InputError, InputProblem
from ..model import CORRECTNESS, PREFERENCES, Correctness, FlagReason, LabelStatus, Preference, word_of
from .fields import Fields, text_problems
from .reader import read_rows

LabelFileFormat = Literal["jsonl", "parquet", "csv"]
FORMATS: tuple[LabelFileFormat, ...] = get_args(LabelFileFormat)
SUFFIXES: dict[str, LabelFileFormat] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".csv": "csv"}
STATUSES: tuple[LabelStatus, ...] = ("submitted", "skipped")
FLAGS: tuple[FlagReason, ...] = get_args(FlagReason)  # a draft is never exported, nor imported
COLUMNS = (
    "pair_id",
    "item_id",
    "category",
    "annotator",
    "status",
    "scheme",
    "scheme_version",
    "correctness_first",
    "correctness_second",
    "preference",
    "ratings",
    "rationale",
    "flag",
    "flag_note",
    "seconds",
    "guidelines_version",
    "gold",
    "control",
    "source",
    "created_at",
    "updated_at",
)

# What each column holds (the Croissant description's fields: curate/formats/croissant.py)
COLUMN_DESCRIPTIONS = {
    "pair_id": "The pair labelled (a triplet's id when the pair became one).",
    "item_id": "The prompt the pair belongs to.",
    "category": "The prompt's category.",
    "annotator": "The annotator: a pseudonym (annotator-01, ... in the order of their first label).",
    "status": "submitted, or skipped.",
    "scheme": "The pair's annotation scheme.",
    "scheme_version": "The version of the scheme the label was made under.",
    "correctness_first": "The first response (the pair's stored order) judged correct, incorrect or unsure.",
    "correctness_second": "The second response judged correct, incorrect or unsure.",
    "preference": "first, second or tie (the pair's stored order).",
    "ratings": "Every other field of the scheme by its label name, as JSON.",
    "rationale": "The annotator's rationale.",
    "flag": "Why the annotator flagged the pair (broken_image, unsafe_content, unclear_prompt, other).",
    "flag_note": "The annotator's note on the flag.",
    "seconds": "Seconds spent on the label.",
    "guidelines_version": "The version of the labelling guidelines shown.",
    "gold": "The pair has a gold answer.",
    "control": "The label was a control task (a gold pair mixed into the queue).",
    "source": "Where the label was made (app, labelstudio, import, ...).",
    "created_at": "When the label was first saved (ISO 8601).",
    "updated_at": "When the label was last saved (ISO 8601).",
}
REQUIRED = ("pair_id", "annotator")
# a record's values in COLUMNS order, shallow: dataclasses.astuple deep-copies every value (the
# export of 120,000 labels took 4.3 s of CPU with it, 2.6 s without: bench/labels.py)
_VALUES = attrgetter(*COLUMNS)
W = TypeVar("W", bound=str)
_TEXTS = ("item_id", "category", "scheme", "rationale", "flag_note", "source", "created_at", "updated_at")


@dataclass(frozen=True)
class RawLabel:
    """One label as the file holds it: its fields in ``COLUMNS`` order; None where the file
    gives no value (a reader's defaults are the importer's to apply)."""

    pair_id: str
    item_id: str | None
    category: str | None
    annotator: str
    status: LabelStatus
    scheme: str | None
    scheme_version: int | None
    correctness_first: Correctness | None
    correctness_second: Correctness | None
    preference: Preference | None
    ratings: Mapping[str, Any] = field(default_factory=dict)
    rationale: str | None = None
    flag: FlagReason | None = None
    flag_note: str | None = None
    seconds: float | None = None
    guidelines_version: int | None = None
    gold: bool | None = None
    control: bool | None = None
    source: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


def file_format(path: str | Path, given: str | None = None) -> LabelFileFormat:
    """The format named by ``--format``, else by the file's suffix."""
    if given is not None:
        fmt = word_of(FORMATS, given)
        if fmt is None:
            raise InputError(
                [InputProblem(str(path), None, None, f"unknown format {given!r}: use {', '.join(FORMATS)}")]
            )
        return fmt
    fmt = SUFFIXES.get(Path(path).suffix.lower())
    if fmt is None:
        why = (
            f"cannot tell the format from the suffix {Path(path).suffix!r}: use .jsonl, .parquet or .csv (or --format)"
        )
        raise InputError([InputProblem(str(path), None, None, why)])
    return fmt


# -- writing -----------------------------------------------------------------------------------
# A row to write: the values in COLUMNS order, ``ratings`` as canonical JSON text (``ratings_text``,
# the text the store keeps): the export passes the store's rows through without an object per label.
LabelRow = tuple[Any, ...]
_RATINGS = COLUMNS.index("ratings")
# the store's canonical JSON (curate/store/engine.py ``dumps``): sorted keys, no spaces
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def ratings_text(ratings: Mapping[str, Any]) -> str:
    return _CANONICAL(dict(ratings)) if ratings else "{}"


def as_row(r: RawLabel) -> LabelRow:
    """A record as a row to write."""
    values = list(_VALUES(r))
    values[_RATINGS] = ratings_text(r.ratings)
    return tuple(values)


def as_record(row: LabelRow) -> RawLabel:
    """A row as a record (``ratings`` read back as a mapping)."""
    values = list(row)
    values[_RATINGS] = json.loads(row[_RATINGS]) if row[_RATINGS] not in (None, "{}") else {}
    return RawLabel(*values)


def write_labels(path: str | Path, labels: Iterable[RawLabel], fmt: LabelFileFormat | None = None) -> int:
    """Write records as given (the caller orders them); see ``write_label_rows``."""
    return write_label_rows(path, [as_row(r) for r in labels], fmt)


def write_label_rows(path: str | Path, rows: Sequence[LabelRow], fmt: LabelFileFormat | None = None) -> int:
    """Write rows as given (the caller orders them); the same rows give the same bytes.
    Returns how many were written."""
    path = Path(path)
    fmt = fmt or file_format(path)
    if fmt == "jsonl":
        encode = json.JSONEncoder(ensure_ascii=False).encode
        with path.open("w", encoding="utf-8", newline="\n") as f:
            for r in rows:
                d = dict(zip(COLUMNS, r, strict=True))
                d["ratings"] = json.loads(d["ratings"]) if d["ratings"] != "{}" else {}
                f.write(encode(d) + "\n")
    elif fmt == "csv":
        with path.open("w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(COLUMNS)
            w.writerows([_cell(v) for v in r] for r in rows)
    else:
        write_parquet_table(path, parquet_table(rows))
    return len(rows)


def write_parquet_table(path: str | Path, table: Any) -> int:
    """An Arrow table of ``parquet_schema`` (``parquet_table``'s, or rows of it) as the Parquet
    file: the bytes ``write_label_rows`` writes of the same rows. Returns how many."""
    import pyarrow.parquet as pq  # deferred: only Parquet needs it

    pq.write_table(table, path)
    return int(table.num_rows)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return v if isinstance(v, str) else repr(v)  # repr: a float read back exactly


def parquet_schema() -> Any:
    """The fixed Arrow schema of the Parquet file (and of the build's ``annotations`` config)."""
    import pyarrow as pa  # deferred: only Parquet needs it

    kinds = {"scheme_version": pa.int64(), "guidelines_version": pa.int64(), "seconds": pa.float64()}
    kinds |= {"gold": pa.bool_(), "control": pa.bool_()}
    return pa.schema([pa.field(c, kinds.get(c, pa.string())) for c in COLUMNS])


def parquet_table(rows: Sequence[LabelRow]) -> Any:
    """The rows as one Arrow table of ``parquet_schema``, built column by column."""
    import pyarrow as pa  # deferred: only Parquet needs it

    schema = parquet_schema()
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in COLUMNS]
    return pa.table([pa.array(list(col), type=f.type) for col, f in zip(columns, schema, strict=True)], schema=schema)


# -- reading -----------------------------------------------------------------------------------
def read_labels(path: str | Path) -> list[tuple[int, RawLabel]]:
    """(line, label) of every record (a Parquet file's row number for its line), the format
    told by the suffix; or one InputError naming every problem's file, line and field."""
    path = Path(path)
    out: list[tuple[int, RawLabel]] = []
    problems: list[InputProblem] = []
    for row in read_rows(path):
        if row.error or row.data is None:
            problems.append(InputProblem(str(path), row.line, None, row.error or "empty row"))
            continue
        f = Fields(str(path), row.line, row.data)
        if not (row.plain or _plainly_clean(row.data)):  # the store keeps them: no NUL either
            for name, message in text_problems(row.data):
                f.bad(name, message)
        label = _parse(f) if not f.problems else None
        problems += f.problems
        if label is not None:
            out.append((row.line, label))
    if problems:
        raise InputError(problems)
    return out


def _plainly_clean(data: Mapping[str, Any]) -> bool:
    """Whether a flat row is ASCII text without NUL and plain scalars: no text to check value by
    value (``text_problems``, a third of reading 120,000 labels from Parquet or CSV)."""
    for k, v in data.items():
        if not k.isascii() or "\x00" in k:
            return False
        if isinstance(v, str):
            if not v.isascii() or "\x00" in v:
                return False
        elif v is not None and not isinstance(v, int | float):  # an object or a list: visit it
            return False
    return True


def _parse(f: Fields) -> RawLabel | None:
    for name in sorted(set(f.data) - set(COLUMNS)):
        f.bad(name, f"unknown column (expected {', '.join(COLUMNS)})")
    pair_id = f.text("pair_id")
    annotator = f.text("annotator")
    status = _word(f, "status", STATUSES)
    correctness = [_word(f, n, CORRECTNESS) for n in ("correctness_first", "correctness_second")]
    preference = _word(f, "preference", PREFERENCES)
    flag = _word(f, "flag", FLAGS)
    texts = {n: f.text(n, required=False, allow_empty=True) for n in _TEXTS}
    ratings = f.value("ratings", (dict,), required=False, what="an object of the scheme's fields") or {}
    seconds = _number(f, "seconds")
    versions = {n: _whole(f, n) for n in ("scheme_version", "guidelines_version")}
    flags = {n: _flag(f, n) for n in ("gold", "control")}
    if f.problems or pair_id is None or annotator is None:
        return None
    return RawLabel(
        pair_id=pair_id,
        item_id=texts["item_id"],
        category=texts["category"],
        annotator=annotator,
        status=status or "submitted",
        scheme=texts["scheme"],
        scheme_version=versions["scheme_version"],
        correctness_first=correctness[0],
        correctness_second=correctness[1],
        preference=preference,
        ratings=ratings,
        rationale=texts["rationale"],
        flag=flag,
        flag_note=texts["flag_note"],
        seconds=seconds,
        guidelines_version=versions["guidelines_version"],
        gold=flags["gold"],
        control=flags["control"],
        source=texts["source"],
        created_at=texts["created_at"],
        updated_at=texts["updated_at"],
    )


def _word(f: Fields, name: str, vocabulary: tuple[W, ...]) -> W | None:
    text = f.text(name, required=False, allow_empty=True)
    if text is None or not text.strip():
        return None
    word = word_of(vocabulary, text.strip())
    if word is None:
        f.bad(name, f"{text!r} is not one of {', '.join(vocabulary)}")
    return word


def _number(f: Fields, name: str) -> float | None:
    v = f.data.get(name)
    if isinstance(v, str):
        try:
            v = float(v) if v.strip() else None
        except ValueError:
            f.bad(name, f"{v!r} is not a number")
            return None
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        f.bad(name, f"expected a number of seconds of at least 0, got {v!r}")
        return None
    return float(v)


def _whole(f: Fields, name: str) -> int | None:
    v = f.data.get(name)
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v.strip())
    elif isinstance(v, float) and v.is_integer():
        v = int(v)
    elif isinstance(v, str) and not v.strip():
        v = None
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        f.bad(name, f"expected a whole number of at least 1, got {v!r}")
        return None
    return v


def _flag(f: Fields, name: str) -> bool | None:
    v = f.data.get(name)
    if isinstance(v, str):
        v = {"true": True, "false": False, "1": True, "0": False, "": None}.get(v.strip().lower(), v)
    if v is None or isinstance(v, bool):
        return v
    f.bad(name, f"expected true or false, got {v!r}")
    return None
