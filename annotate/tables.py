"""A table as the lead reads it (no Streamlit here): human headers, numbers kept as numbers
so the table still sorts, a printf format per number column, and an empty cell left empty
(None, shown as curate.wording.EMPTY: never "None")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame
    formats: Mapping[str, str] = field(default_factory=dict)  # header -> printf format (sprintf-js)


def human(frame: pd.DataFrame, headers: Mapping[str, str], formats: Mapping[str, str] | None = None) -> Table:
    """The columns of ``headers``, in its order and under its names; a missing value becomes None."""
    out = frame.reindex(columns=list(headers)).rename(columns=dict(headers))
    out = out.astype(object).where(out.notna(), None) if len(out) else out
    return Table(out.reset_index(drop=True), dict(formats or {}))
