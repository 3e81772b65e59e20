"""Errors that point at the exact place in the user's input."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class MmrbError(Exception):
    """An error meant for the user: the CLI prints it on one line and exits 1."""


class StoreError(MmrbError):
    pass


class DiskFullError(MmrbError):
    """The disk filled up while a command wrote something, and what it wrote was undone."""

    def __init__(self, what: str, kept: str = ""):
        super().__init__(f"disk full while writing {what}; nothing was changed{kept}")


_SQLITE_FULL = 13  # sqlite3's SQLITE_FULL (its errors' ``sqlite_errorcode``)
_PG_DISK_FULL = "53100"  # PostgreSQL's SQLSTATE disk_full (psycopg's DiskFull)
_FULL_TEXTS = ("no space left on device", "database or disk is full", "could not extend file")


def is_disk_full(e: BaseException) -> bool:
    """Whether ``e``, or an error behind it, says the disk is full: an OSError with ENOSPC
    (pyarrow's included), SQLite's "database or disk is full", PostgreSQL's disk_full
    ("could not extend file ... No space left on device"). A database error is read through
    its driver's error (sqlalchemy's ``orig``), never its own text, which holds the
    statement's parameters (the user's data)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [e]
    while todo:
        x = todo.pop()
        if x is None or id(x) in seen or isinstance(x, MmrbError):
            continue
        seen.add(id(x))
        orig = getattr(x, "orig", None)
        if isinstance(orig, BaseException):  # sqlalchemy's DBAPIError: its driver's error decides
            todo.append(orig)
        elif isinstance(x, OSError) and x.errno == errno.ENOSPC:
            return True
        elif getattr(x, "sqlstate", None) == _PG_DISK_FULL or getattr(x, "sqlite_errorcode", None) == _SQLITE_FULL:
            return True
        elif (isinstance(x, OSError) or type(x).__module__.split(".")[0] in ("sqlite3", "psycopg")) and any(
            t in str(x).lower() for t in _FULL_TEXTS
        ):
            return True
        todo += [x.__cause__, None if x.__suppress_context__ else x.__context__]
    return False


@contextmanager
def disk_full_reported(what: str, kept: str = "") -> Iterator[None]:
    """A full disk inside the block becomes ``DiskFullError(what, kept)``: one line for the
    user instead of a traceback. The block undoes its own writes (rollback, temporary files
    removed) before the error leaves it."""
    try:
        yield
    except Exception as e:
        if is_disk_full(e):
            raise DiskFullError(what, kept) from e
        raise


@dataclass
class InputProblem:
    file: str
    line: int | None  # 1-based line (JSONL/CSV) or row number (Parquet); None for the file
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f" field '{self.field}'"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message}


class InputError(MmrbError):
    """One or more problems in an input file; nothing was written."""

    def __init__(self, problems: list[InputProblem]):
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"{len(problems)} {noun} in input, nothing was written:\n{shown}{more}")
