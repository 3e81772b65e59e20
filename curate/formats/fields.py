"""Typed access to one record's fields, every problem naming file, line and field.

A format module reads a record through ``Fields`` and returns its typed record, or None
when the record has problems (they are in ``Fields.problems``). What ids, categories and
images mean depends on who reads: scoring takes them as written (this class), the importer
turns them into store ids, checks categories against its list and stages the images
(``curate.ingest.common.ImportFields`` overrides ``ident``, ``check_ident``, ``category``
and ``images``). Problems come in the order the format reads its fields, whoever reads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from ..errors import InputError, InputProblem
from ..wording import plural
from .reader import MALFORMED, Row, json_problem

R = TypeVar("R")


class Fields:
    """One record's fields, as a format reads them."""

    def __init__(self, file: str, line: int, data: Mapping[str, Any]):
        self.file = file
        self.line = line
        self.data = data
        self.problems: list[InputProblem] = []

    def bad(self, name: str | None, message: str) -> None:
        self.problems.append(InputProblem(self.file, self.line, name, message))

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def text(
        self, name: str, *, required: bool = True, allow_empty: bool = False, default: str | None = None
    ) -> str | None:
        v = self.data.get(name)
        if v is None:
            if required:
                self.bad(name, "missing required field")
            return default
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            self.bad(name, f"expected text, got {type(v).__name__}")
            return default
        if isinstance(v, float) and not math.isfinite(v):  # JSON's NaN, Infinity (or 1e400): no text
            self.bad(name, f"expected text, got the number {json.dumps(v)}, which is not finite")
            return default
        v = v if isinstance(v, str) else _num_text(v)
        if not allow_empty and not v.strip():
            self.bad(name, "must not be empty")
            return default
        return v

    def value(self, name: str, types: tuple[type, ...], *, required: bool = True, what: str = "") -> Any:
        v = self.data.get(name)
        if isinstance(v, str) and list in types and v.strip().startswith(("[", "{")):
            v = _json_cell(self, name, v)  # a list or object written as JSON in a CSV cell
        elif isinstance(v, str) and dict in types and v.strip().startswith("{"):
            v = _json_cell(self, name, v)
        if v is None:
            if required and name not in {p.field for p in self.problems}:
                self.bad(name, "missing required field")
            return None
        if not isinstance(v, (str, bytes)) and hasattr(v, "tolist"):
            v = v.tolist()  # numpy arrays from Parquet readers
        if isinstance(v, tuple):
            v = list(v)
        if not isinstance(v, types) or isinstance(v, bool) and bool not in types:
            self.bad(name, f"expected {what or ' or '.join(t.__name__ for t in types)}, got {type(v).__name__}")
            return None
        return v

    # -- what the reader makes of ids, categories and images ------------------------------
    def ident(self, name: str, *, required: bool = True) -> str | None:
        """A record id (or a model name): text; the importer normalises it."""
        v = self.text(name, required=required)
        return None if v is None else self.check_ident(name, v)

    def check_ident(self, name: str, value: str) -> str | None:
        return value

    def category(self, name: str, value: str | None) -> str | None:
        return value

    def images(self, *names: str, required: bool = False) -> tuple[Any, ...] | None:
        """The images of the first of ``names`` present: a list, or one value; as written
        (paths, data URIs, Hugging Face image features), empty ones left out. A value of
        another type is a problem of its field (``image_value_problem``)."""
        found = self.image_values(*names, required=required)
        if found is None:
            return None
        ok = True
        for name, v in found:
            why = image_value_problem(v)
            if why:
                self.bad(name, why)
                ok = False
        return tuple(v for _, v in found if v not in (None, "")) if ok else None

    def image_values(self, *names: str, required: bool = False) -> list[tuple[str, Any]] | None:
        """(field name, value) of each image: ``images`` (a list, or JSON of one in a CSV
        cell) or ``image`` (one value)."""
        present = [n for n in names if self.has(n)]
        if not present:
            if required:
                self.bad(names[0], "missing required field")
                return None
            return []
        name = present[0]
        v = self.data[name]
        if isinstance(v, str) and v.strip().startswith("["):
            v = _json_cell(self, name, v)
            if v is None:
                return None
        if not isinstance(v, (str, bytes)) and hasattr(v, "tolist"):
            v = v.tolist()
        if isinstance(v, (list, tuple)):
            return [(f"{name}[{n}]", x) for n, x in enumerate(v)]
        return [(name, v)]

    def metadata(self, used: Iterable[str]) -> dict[str, Any]:
        """The row's own fields that the model has no place for, kept as they were."""
        used = set(used)
        return {k: jsonable(v) for k, v in self.data.items() if k not in used and v is not None}


def image_value_problem(v: Any) -> str | None:
    """Why an image as written is none a reader takes (None: it is one, or empty): a path
    or data URI (text), bytes, or a Hugging Face image feature ``{"bytes": bytes | base64
    text | null, "path": text | null}``."""
    if v is None or isinstance(v, (str, bytes, bytearray)):
        return None
    if isinstance(v, Mapping):
        data = v.get("bytes")
        if data is not None and not isinstance(data, (bytes, bytearray, str)):
            return f"image bytes: expected bytes or base64 text, got {type(data).__name__}"
        for key in ("path", "source"):
            if v.get(key) is not None and not isinstance(v[key], str):
                return f"image {key}: expected text, got {type(v[key]).__name__}"
        return None
    return f"expected an image path, a data URI or {{bytes, path}}, got {type(v).__name__}"


def parse_rows(
    path: str | Path, rows: Iterable[Row], parse: Callable[[Fields], R | None], *, nul: bool = False
) -> list[tuple[int, R]]:
    """(line, record) of every row, for readers that need the whole file (scoring): the
    problems of all rows, text that is not valid Unicode included (and with ``nul`` text
    holding a NUL, for texts that will be stored), are one InputError."""
    out: list[tuple[int, R]] = []
    problems: list[InputProblem] = []
    for row in rows:
        if row.data is None:
            continue
        f = checked(path, row.line, row.data, nul=nul)
        rec = parse(f) if not f.problems else None
        problems += f.problems
        if rec is not None and not f.problems:
            out.append((row.line, rec))
    if problems:
        raise InputError(problems)
    return out


def checked(path: str | Path, line: int, data: Mapping[str, Any], *, nul: bool = False) -> Fields:
    """The fields of a record for scoring, with a problem for each text that is not valid
    Unicode (with ``nul``, or holds a NUL) already noted."""
    f = Fields(str(path), line, data)
    for name, message in text_problems(data, nul=nul):
        f.bad(name, message)
    return f


def text_problems(data: Mapping[str, Any], *, nul: bool = True) -> list[tuple[str, str]]:
    """(field, message) for every text in a row that is not valid Unicode (bytes that were
    not UTF-8, read with surrogateescape, or a JSON escape of half a character) and, with
    ``nul``, that holds a NUL character (SQLite would take it, PostgreSQL refuses it)."""
    out: list[tuple[str, str]] = []

    def visit(v: Any, where: str) -> None:
        if isinstance(v, str):
            why = _text_problem(v, nul)
            if why:
                out.append((where, why))
        elif isinstance(v, dict):
            for k, x in v.items():
                ks = str(k)
                why = _text_problem(ks, nul)
                if why:
                    out.append((where or ks.encode("unicode_escape").decode("ascii"), f"field name {why}"))
                    continue
                visit(x, f"{where}.{ks}" if where else ks)
        elif isinstance(v, (list, tuple)):
            for n, x in enumerate(v):
                visit(x, f"{where}[{n}]")

    visit(data, "")
    return out


def _text_problem(v: str, nul: bool) -> str | None:
    if nul and "\x00" in v:
        return f"holds a NUL character (\\u0000) at character {v.index(chr(0)) + 1}, which the store cannot keep"
    if v.isascii():
        return None
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        ch = v[e.start]
        if "\udc80" <= ch <= "\udcff":  # surrogateescape: a byte that was not valid UTF-8
            return f"not valid UTF-8 (byte 0x{ord(ch) - 0xDC00:02x} at character {e.start + 1})"
        return f"holds half a UTF-16 surrogate pair (U+{ord(ch):04X}) at character {e.start + 1}: not valid Unicode"
    return None


def _num_text(v: int | float) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _json_cell(f: Fields, name: str, v: str) -> Any:
    try:
        return json.loads(v)
    except (ValueError, RecursionError) as e:  # nested too deeply, or an integer of 4,300+ digits
        f.bad(name, json_problem(e, column=False, what=f"{MALFORMED} in field"))
        return None


def jsonable(v: Any) -> Any:
    """A value as JSON can hold it: arrays as lists, bytes as their length."""
    if not isinstance(v, (str, bytes)) and hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (bytes, bytearray)):
        return f"<{plural(len(v), 'byte')}>"
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v
