"""Reading input files row by row, each row with the line it came from.

JSONL, CSV and Parquet give one record per row; a JSON file gives the records of its
top-level list (or of the list under ``key``, as in MMRB2's ``{"pairs": [...]}``), each
with the line where it starts, so even a pretty-printed file gets exact line numbers.
A row that cannot be parsed is a Row with ``error`` set, never an exception, so that one
bad line can be reported beside all the others. Text is read as UTF-8 with
``surrogateescape``: a byte that is not valid UTF-8 survives as a lone surrogate in the
value it belongs to, and the readers report that field (see ``fields.text_problems``).

Every format module of this package reads its files through ``read_rows``: the importer
row by row (``curate/ingest``), scoring the whole file at once (``load_rows``). The
agreement label file (``curate/agreement/table.py``) reads its JSONL through ``jsonl_rows``.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, InputProblem
from ..wording import plural

MALFORMED = "malformed JSON"  # how a row (or file) that is not JSON is reported, by every reader
FILE_KINDS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


@dataclass
class Row:
    line: int  # 1-based line of the row's start (JSONL/CSV/JSON) or row number (Parquet)
    data: dict[str, Any] | None
    raw: str | None = None  # the text of an unparseable row, kept for the rejects file
    error: str | None = None
    plain: bool = False  # every text of it is valid Unicode without NUL (fields.text_problems has none)


def file_kind(path: Path) -> str:
    kind = FILE_KINDS.get(path.suffix.lower())
    if kind is None:
        raise InputError(
            [
                InputProblem(
                    str(path), None, None, f"unknown file type {path.suffix!r}: use .jsonl, .json, .csv or .parquet"
                )
            ]
        )
    return kind


def read_rows(path: str | Path, key: str | None = None, *, nulls: bool = False) -> Iterator[Row]:
    """The rows of ``path``. ``nulls``: a JSON ``null`` record is a row without data and
    without error (VL-RewardBench's inference files hold them, and its script counts them
    when it shuffles); otherwise it is an error like any record that is not an object."""
    path = Path(path)
    if not path.is_file():
        raise InputError([InputProblem(str(path), None, None, "file not found")])
    kind = file_kind(path)
    if kind == "jsonl":
        yield from jsonl_rows(path, nulls=nulls)
    elif kind == "json":
        yield from _json(path, key, nulls)
    elif kind == "csv":
        yield from _csv(path)
    else:
        yield from _parquet(path)


def load_rows(path: str | Path, key: str | None = None, *, nulls: bool = False) -> list[Row]:
    """Every row of ``path`` for a reader that needs the whole file first (scoring): rows
    that cannot be read are one InputError naming each line."""
    rows = list(read_rows(path, key, nulls=nulls))
    bad = [InputProblem(str(path), r.line, None, r.error) for r in rows if r.error]
    if bad:
        raise InputError(bad)
    return rows


def jsonl_rows(path: Path, *, nulls: bool = False) -> Iterator[Row]:
    """The rows of a JSON Lines file whatever its suffix (the agreement label file takes
    JSONL as ``.json`` too)."""
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as f:
        for n, text in enumerate(f, 1):
            if not text or text.isspace():  # as "not text.strip()", without copying the line
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as e:
                yield Row(n, None, text.rstrip("\r\n"), f"{MALFORMED}: {e.msg} at column {e.colno}")
                continue
            if obj is None and nulls:
                yield Row(n, None, text.rstrip("\r\n"))
                continue
            if not isinstance(obj, dict):
                yield Row(n, None, text.rstrip("\r\n"), f"expected a JSON object, got {type(obj).__name__}")
                continue
            yield Row(n, obj, plain=_plain(text))


# In a JSON line, only an escape can make a NUL or half a surrogate pair (raw control
# characters are not JSON); a lone surrogate written raw is a byte that was not UTF-8.
_UNSAFE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def _plain(text: str) -> bool:
    """Whether the values of this JSON line are all valid Unicode without NUL (a row that
    might not be is checked value by value, ``fields.text_problems``)."""
    if _UNSAFE_ESCAPE.search(text):
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _list_start(text: str, pos: int, key: str | None) -> tuple[int, str]:
    """Where the record list starts in the object at ``pos``: the value of ``key``, or of
    the first member holding a list. Walks the members token by token, so a key written
    with escapes (``"\\u0070airs"``) is found like any other. Returns (position, key)."""
    dec = json.JSONDecoder()
    pos = _skip_ws(text, pos + 1)
    found = None
    while not text.startswith("}", pos):
        name, pos = dec.raw_decode(text, pos)  # the caller checked the whole object parses
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past ':'
        if (name == key or (key is None and found is None)) and text.startswith("[", pos):
            found = (pos, name)  # a repeated key: the last one wins, as in json.loads
        _, pos = dec.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text.startswith(",", pos):
            pos = _skip_ws(text, pos + 1)
    if found is None:
        raise ValueError(key)
    return found


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _json(path: Path, key: str | None, nulls: bool) -> Iterator[Row]:
    text = path.read_text(encoding="utf-8-sig", errors="surrogateescape")
    dec = json.JSONDecoder()

    counted = [0, 1]  # (position, line there): records come in order, so count onwards

    def line_of(pos: int) -> int:
        p0, l0 = counted
        line = l0 + text.count("\n", p0, pos) if pos >= p0 else text.count("\n", 0, pos) + 1
        counted[:] = [pos, line]
        return line

    def skip_ws(pos: int) -> int:
        return _skip_ws(text, pos)

    def fail(pos: int, msg: str) -> InputError:
        return InputError([InputProblem(str(path), line_of(pos), key, msg)])

    pos = skip_ws(0)
    # find the list: either the document itself or the value under `key` of the top object
    if text.startswith("{", pos):
        try:
            doc, _ = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise fail(e.pos, f"{MALFORMED}: {e.msg}") from None
        if not isinstance(doc, dict) or not any(
            isinstance(v, list) and (key is None or k == key) for k, v in doc.items()
        ):
            raise fail(pos, f"expected a list under {key!r}" if key else "expected a list of records")
        pos, key = _list_start(text, pos, key)
    elif not text.startswith("[", pos):
        raise fail(pos, "expected a JSON list of records or an object holding one")
    pos = skip_ws(pos + 1)
    if text.startswith("]", pos):
        return
    while True:
        start = pos
        try:
            obj, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            # a broken record breaks the rest of the document: report it and stop
            yield Row(line_of(e.pos), None, None, f"{MALFORMED}: {e.msg}")
            return
        if isinstance(obj, dict):
            yield Row(line_of(start), obj)
        elif obj is None and nulls:
            yield Row(line_of(start), None, "null")
        else:
            yield Row(line_of(start), None, json.dumps(obj), f"expected a JSON object, got {type(obj).__name__}")
        pos = skip_ws(pos)
        if text.startswith(",", pos):
            pos = skip_ws(pos + 1)
        elif text.startswith("]", pos):
            return
        else:
            yield Row(line_of(pos), None, None, f"{MALFORMED}: expected ',' or ']' between records")
            return


def _csv(path: Path) -> Iterator[Row]:
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError([InputProblem(str(path), 1, None, f"malformed CSV: {e}")]) from None
        prev = reader.line_num
        while True:
            start = prev + 1
            try:
                values = next(reader)
            except StopIteration:
                return
            except csv.Error as e:
                yield Row(start, None, None, f"malformed CSV: {e}")
                prev = reader.line_num
                continue
            prev = reader.line_num
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                yield Row(
                    start, None, ",".join(values), f"expected {plural(len(header), 'column')}, found {len(values)}"
                )
                continue
            # an empty cell is a missing value, as pandas would read it
            yield Row(start, {k: (v if v != "" else None) for k, v in zip(header, values, strict=True)})


def _parquet(path: Path) -> Iterator[Row]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise InputError([InputProblem(str(path), None, None, f"not a readable Parquet file: {e}")]) from None
    n = 0
    batches = pf.iter_batches(batch_size=2048)
    while True:
        try:
            batch = next(batches, None)
            recs = batch.to_pylist() if batch is not None else []
        except Exception as e:  # a damaged page or invalid UTF-8 in a string column
            raise InputError(
                [InputProblem(str(path), n + 1, None, f"unreadable Parquet data from this row on: {e}")]
            ) from None
        if batch is None:
            return
        for rec in recs:
            n += 1
            yield Row(n, rec)
