"""Reading input files row by row, each row with the line it came from.

JSONL, CSV and Parquet give one record per row; a JSON file gives the records of its
top-level list (or of the list under ``key``, as in MMRB2's ``{"pairs": [...]}``), each
with the line where it starts, so even a pretty-printed file gets exact line numbers.
A row that cannot be parsed is a Row with ``error`` set, never an exception, so that one
bad line can be reported beside all the others: JSON nested deeper than Python's parser
goes (``[`` x 100,000) and integers past its digit limit included. A CSV header that
names a column twice (or Parquet columns that do) is refused whole: which value to take
would be a guess. JSON's ``NaN`` and ``Infinity`` are read as Python reads them
(R1-Reward's rewards hold them); where text or an id is expected, ``fields.Fields.text``
refuses them. Text is read as UTF-8 with ``surrogateescape``: a byte that is not valid
UTF-8 survives as a lone surrogate in the value it belongs to, and the readers report that
field (see ``fields.text_problems``).

Every format module of this package reads its files through ``read_rows``: the importer
row by row (``curate/ingest``), scoring the whole file at once (``load_rows``). The
agreement label file (``curate/agreement/table.py``) reads its JSONL through ``jsonl_rows``.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, InputProblem
from ..wording import plural

MALFORMED = "malformed JSON"  # how a row (or file) that is not JSON is reported, by every reader
TOO_DEEP = "nested too deeply"  # JSON past the depth Python's parser goes (a RecursionError)
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
        why = "is a folder, not a file" if path.is_dir() else "file not found"
        raise InputError([InputProblem(str(path), None, None, why)])
    kind = file_kind(path)
    if kind == "jsonl":
        yield from jsonl_rows(path, nulls=nulls)
    elif kind == "json":
        yield from _json(path, key, nulls)
    elif kind == "csv":
        yield from _csv(path)
    else:
        yield from _parquet(path)


def row_estimate(path: str | Path) -> int | None:
    """About how many rows ``path`` holds, read cheaply (a progress bar's total, never a count
    that decides anything): JSONL its lines (blank ones too), CSV its lines but the header (a
    quoted field spanning lines counts more than once), Parquet its metadata; None for JSON
    (its records are known only once it is parsed) or a file that cannot be read."""
    path = Path(path)
    kind = FILE_KINDS.get(path.suffix.lower())
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq  # deferred: only a Parquet file needs it, and it is slow to import

            return int(pq.ParquetFile(path).metadata.num_rows)
        if kind not in ("jsonl", "csv"):
            return None
        lines, last = 0, b"\n"
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
        lines += last != b"\n"  # a last line without its newline
    except (OSError, ValueError):  # read_rows says what is wrong with it
        return None
    return max(lines - (kind == "csv"), 0)


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
            except (ValueError, RecursionError) as e:
                yield Row(n, None, text.rstrip("\r\n"), json_problem(e))
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


def json_problem(e: ValueError | RecursionError, *, column: bool = True, what: str = MALFORMED) -> str:
    """How a text that json.loads refused is reported: its JSONDecodeError (with the column),
    nesting past Python's parser (a RecursionError) or a number it will not convert (a
    ValueError: an integer of more than 4,300 digits)."""
    if isinstance(e, json.JSONDecodeError):
        return f"{what}: {e.msg}" + (f" at column {e.colno}" if column else "")
    if isinstance(e, RecursionError):
        return f"{what}: {TOO_DEEP}"
    if "digits" in str(e):  # json's own ValueError names Python's setting: say what it means
        return f"{what}: a number of more than {sys.get_int_max_str_digits():,} digits"
    return f"{what}: {e}"


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


def _walk_to_list(
    text: str,
    pos: int,
    key: str | None,
    member: Callable[[int, str | None], int],
    fail: Callable[[int, str], InputError],
    *,
    after: bool = False,
) -> tuple[int, str]:
    """In an object json cannot read whole (nested too deeply, a number too long), where the
    record list starts: the members before it are read one by one (``member`` raises the
    error of the one to blame), the list's records then by the reader. With ``after``, from
    the end of the list (at ``pos``) to the end of the object: each remaining member read."""
    dec = json.JSONDecoder()
    pos = _skip_ws(text, pos + 1)
    if after and text.startswith(",", pos):
        pos = _skip_ws(text, pos + 1)
    while pos < len(text) and not text.startswith("}", pos):
        start = pos
        pos = _skip_ws(text, member(pos, None))  # the name
        name = dec.raw_decode(text, start)[0]
        if not text.startswith(":", pos):
            raise fail(pos, f"{MALFORMED}: expected ':' after a name")
        pos = _skip_ws(text, pos + 1)
        if not after and isinstance(name, str) and (key is None or name == key) and text.startswith("[", pos):
            return pos, name
        pos = _skip_ws(text, member(pos, str(name)))
        if text.startswith(",", pos):
            pos = _skip_ws(text, pos + 1)
    if after:
        return pos, ""
    raise fail(pos, f"expected a list under {key!r}" if key else "expected a list of records")


def unreadable_member(text: str) -> tuple[int, str | None]:
    """Where a JSON object that json cannot read whole (nested too deeply, a number too long)
    goes wrong: (line, name) of its first member whose value cannot be read, else (1, None)."""
    dec = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if not text.startswith("{", pos):
        return text.count("\n", 0, pos) + 1, None
    pos = _skip_ws(text, pos + 1)
    try:
        while pos < len(text) and not text.startswith("}", pos):
            name, pos = dec.raw_decode(text, pos)
            pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past ':'
            start = pos
            try:
                _, pos = dec.raw_decode(text, pos)
            except (ValueError, RecursionError):
                return text.count("\n", 0, start) + 1, str(name)
            pos = _skip_ws(text, pos)
            if text.startswith(",", pos):
                pos = _skip_ws(text, pos + 1)
    except (ValueError, RecursionError):
        pass
    return 1, None


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

    def fail(pos: int, msg: str, field: str | None = None) -> InputError:
        return InputError([InputProblem(str(path), line_of(pos), field or key, msg)])

    def member(pos: int, field: str | None = None) -> int:  # past the value at pos, or its error
        try:
            return dec.raw_decode(text, pos)[1]
        except json.JSONDecodeError as e:
            raise fail(e.pos, f"{MALFORMED}: {e.msg}", field) from None
        except (ValueError, RecursionError) as e:  # the line it starts on
            raise fail(pos, json_problem(e), field) from None

    pos = skip_ws(0)
    walked = False  # the object could not be read whole: its members are read one by one
    # find the list: either the document itself or the value under `key` of the top object
    if text.startswith("{", pos):
        try:
            doc, _ = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise fail(e.pos, f"{MALFORMED}: {e.msg}") from None
        except (ValueError, RecursionError):  # no position: find the record (or member) to blame
            doc, walked = None, True
            pos, key = _walk_to_list(text, pos, key, member, fail)
        if not walked:
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
        except (ValueError, RecursionError) as e:  # the record's line: where it starts
            yield Row(line_of(start), None, None, json_problem(e))
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
            if walked:  # the members after the list: one of them is what json could not read
                _walk_to_list(text, pos, None, member, fail, after=True)
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
        repeated_columns(path, header)
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


def repeated_columns(path: Path | str, names: list[str], line: int | None = 1) -> None:
    """Refuse a header that names a column twice: a record would keep one of the two values
    without saying so (a gold file's ``preference,preference`` took the last)."""
    seen: dict[str, int] = {}
    problems = []
    for n, name in enumerate(names, 1):
        if name in seen:
            problems.append(
                InputProblem(str(path), line, name, f"column repeated (columns {seen[name]} and {n}): give it once")
            )
        else:
            seen[name] = n
    if problems:
        raise InputError(problems)


def _parquet(path: Path) -> Iterator[Row]:
    # deferred: 0.15 s to import, and only Parquet files need it
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise InputError([InputProblem(str(path), None, None, f"not a readable Parquet file: {e}")]) from None
    repeated_columns(path, pf.schema_arrow.names, None)
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
