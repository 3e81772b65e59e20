"""The Progress page's totals over the table of admin.progress_by_annotator."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class ProgressTotals:
    done: int  # assignments done
    assigned: int
    last_hour: int  # labels submitted in the last hour
    median_seconds: float | None  # the median over annotators of each one's median; None: no timed label

    @classmethod
    def of(cls, people: pd.DataFrame) -> ProgressTotals:
        med = people["median_seconds"].dropna()
        return cls(
            int(people["done"].sum()),
            int(people["assigned"].sum()),
            int(people["last_hour"].sum()),
            float(med.median()) if len(med) else None,
        )
