"""A table as the lead reads it (no Streamlit here): human headers, numbers kept as numbers
so the table still sorts, a printf format per number column, and an empty cell left empty
(None, shown as curate.wording.EMPTY: never "None")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame
    formats: Mapping[str, str] = field(default_factory=dict)  # header -> printf format (sprintf-js)
    helps: Mapping[str, str] = field(default_factory=dict)  # header -> what its column holds (its tooltip)
    widths: Mapping[str, int] = field(default_factory=dict)  # header -> its width in px (else fitted to its cells)


def human(frame: pd.DataFrame, headers: Mapping[str, str], formats: Mapping[str, str] | None = None) -> Table:
    """The columns of ``headers``, in its order and under its names; a missing value becomes None."""
    out = frame.reindex(columns=list(headers)).rename(columns=dict(headers))
    out = out.astype(object).where(out.notna(), None) if len(out) else out
    return Table(out.reset_index(drop=True), dict(formats or {}))


def numbers(table: Table, columns: Sequence[str]) -> Table:
    """``table`` with ``columns`` as nullable floats: they sort as numbers, and a missing value
    stays missing (pd.NA, shown empty), never 0 (human() leaves every column as objects)."""
    out = table.frame.copy()
    for c in columns:
        out[c] = pd.array([None if v is None else float(v) for v in out[c]], dtype="Float64")
    return Table(out, table.formats, table.helps, table.widths)
