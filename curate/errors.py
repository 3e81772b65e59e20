"""Errors that point at the exact place in the user's input."""

from __future__ import annotations

from dataclasses import dataclass


class MmrbError(Exception):
    """An error meant for the user: the CLI prints it on one line and exits 1."""


class StoreError(MmrbError):
    pass


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
