"""Stored judge runs as scoring input, and how complete each one is.

A run's verdicts are first/second of its dataset's pairs as the run showed them. A pair whose
file gives only chosen and rejected is oriented by a seeded coin (``EvalPair.seeded_order``):
the run records which side held the chosen response (``Store.run_orientation``), and reading
the run back takes that record, never the coin again (``as_shown``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from curate.errors import MmrbError
from curate.judging.config import stored_plan
from curate.judging.judge import Plan
from curate.judging.records import JudgeRun, Judgment
from curate.sides import is_side
from curate.store import Store

from .datasets import read_dataset
from .records import EvalPair
from .scoring import order_judgments


def stored_run(store: Store, run_id: str) -> JudgeRun:
    run = store.judge_run(run_id)
    if run is None:
        raise MmrbError(f"no judge run {run_id!r} in {store.display_name}")
    return run


def load_run(
    store: Store, run_id: str, pairs: Sequence[EvalPair] | None = None
) -> tuple[str, list[EvalPair], list[Judgment], str]:
    """(judge name, dataset pairs, judgments in dataset order, dataset label). The dataset is
    read from the path the run recorded unless given."""
    run = stored_run(store, run_id)
    if pairs is None:
        if not run.dataset.paths:
            raise MmrbError(f"run {run_id!r} records no dataset: pass --dataset")
        pairs = read_dataset(list(run.dataset.paths))
        if run.dataset.limit is not None:
            pairs = pairs[: run.dataset.limit]
    pairs = as_shown(pairs, store.run_orientation(run_id))
    return run.judge, pairs, order_judgments(store.judgments(run_id), pairs), run.dataset.label


def as_shown(pairs: Iterable[EvalPair], chosen: Mapping[str, str]) -> list[EvalPair]:
    """The pairs in the orientation the run showed them: a pair oriented by a seeded coin
    (``seeded_order``) takes the run's record of the side its chosen response held; a pair
    whose file lists its responses keeps the file's order. A run stored before runs recorded
    their orientation (schema version 10) has no record: its pairs keep the orientation
    computed as they are read (curate.sides.copy_chosen_first), which is the one it showed."""
    out = []
    for p in pairs:
        side = chosen.get(p.id)
        out.append(p.with_chosen(side) if p.seeded_order and is_side(side) else p)
    return out


@dataclass(frozen=True)
class RunHealth:
    """What a run holds for the judgments it planned on a dataset. A run is complete only
    when every planned judgment has an answer: a failure (outcome "error") or a judgment
    never sent leaves it incomplete, whatever the rest scores."""

    planned: int
    answered: int  # stored with an answer (parsed, unparsed or both)
    failed: int  # stored as failed requests
    missing: int  # planned but not stored
    status: str | None = None  # as stored with the run ("complete", "incomplete"; None before version 2)

    @property
    def complete(self) -> bool:
        return not self.failed and not self.missing

    @property
    def completeness(self) -> float | None:
        return self.answered / self.planned if self.planned else None

    @property
    def error_rate(self) -> float | None:
        sent = self.answered + self.failed
        return self.failed / sent if sent else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "complete": self.complete,
            "planned": self.planned,
            "answered": self.answered,
            "failed": self.failed,
            "missing": self.missing,
            "completeness": self.completeness,
            "error_rate": self.error_rate,
            "status": self.status,
        }


@dataclass(frozen=True)
class RunIdentity:
    """What a stored run's configuration says of the judgments it planned: its kind, and that
    kind's plan read once from the configuration (curate/judging/config.py owns its keys)."""

    kind: str
    plan: Callable[[str], Plan] | None  # pair id -> its (order, sample)s; None: a kind this version does not know

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> RunIdentity:
        return cls(str(config.get("kind", "")), stored_plan(config))


def planned_keys(
    identity: RunIdentity, pairs: Sequence[EvalPair], judgments: Sequence[Judgment]
) -> list[tuple[str, str, int]]:
    """The (pair, order, sample) judgments a run with this configuration asks for (its kind's
    plan). A run of an unknown kind plans what it stored for each pair, and one judgment for a
    pair without."""
    plan = identity.plan
    if plan is not None:
        return [(p.id, o, i) for p in pairs for o, i in plan(p.id)]
    stored: dict[str, list[tuple[str, str, int]]] = {}
    for j in judgments:
        stored.setdefault(j.pair_id, []).append(j.key)
    return [k for p in pairs for k in stored.get(p.id, [(p.id, "forward", 0)])]


def health(
    identity: RunIdentity, pairs: Sequence[EvalPair], judgments: Sequence[Judgment], status: str | None = None
) -> RunHealth:
    outcome = {j.key: j.outcome for j in judgments}
    keys = planned_keys(identity, pairs, judgments)
    failed = sum(1 for k in keys if outcome.get(k) == "error")
    missing = sum(1 for k in keys if k not in outcome)
    return RunHealth(len(keys), len(keys) - failed - missing, failed, missing, status)


def run_health(store: Store, run_id: str, pairs: Sequence[EvalPair], judgments: Sequence[Judgment]) -> RunHealth:
    """The health of a stored run on ``pairs`` (its judgments as ``load_run`` gives them)."""
    run = stored_run(store, run_id)
    return health(RunIdentity.of(run.config), pairs, judgments, run.status)
