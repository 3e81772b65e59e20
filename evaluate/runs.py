"""Stored judge runs as scoring input."""

from __future__ import annotations

from typing import Sequence

from sqlalchemy import select

from curate import schema as S
from curate.errors import MmrbError
from curate.judging.records import Judgment
from curate.judging.runner import load_judgments
from curate.store import Store

from .datasets import dataset_paths, read_dataset
from .records import EvalPair
from .scoring import order_judgments


def run_row(store: Store, run_id: str) -> dict:
    with store.read() as c:
        row = c.execute(select(S.judge_runs).where(S.judge_runs.c.id == run_id)).mappings().first()
    if row is None:
        raise MmrbError(f"no judge run {run_id!r} in {store.display_name}")
    return dict(row)


def load_run(
    store: Store, run_id: str, pairs: Sequence[EvalPair] | None = None
) -> tuple[str, list[EvalPair], list[Judgment], str]:
    """(judge name, dataset pairs, judgments in dataset order, dataset label). The dataset is
    read from the path the run recorded unless given."""
    row = run_row(store, run_id)
    label = row["dataset"]
    if pairs is None:
        paths, limit = dataset_paths(label)
        if not paths:
            raise MmrbError(f"run {run_id!r} records no dataset: pass --dataset")
        pairs = read_dataset(paths)
        if limit is not None:
            pairs = pairs[:limit]
    pairs = list(pairs)
    return row["judge"], pairs, order_judgments(load_judgments(store, run_id), pairs), label
