"""The one judge runner: asks any judge (curate/judging/judge.py: a VLM judge, a reward model)
about pairs, stores every judgment, resumes.

Each judgment (run, pair, order, sample) is written to the ``judgments`` table as soon as
its answer arrives, by one writer thread that commits whatever has queued in one
transaction: a crash loses at most the answers not yet committed, and a rerun with the same
run id sends only the judgments that are not stored (failed requests are stored with
outcome ``error`` and are sent again on resume unless ``retry_errors=False``).

A failed request (connection, timeout, HTTP error, malformed body, an empty or oversized
answer, a reward model's answer without its score) is outcome ``error``, never ``unparsed``:
it holds no answer, so it is never scored or read as a verdict. After each pass the run is
stored as ``complete`` only when every planned judgment has an answer, else ``incomplete``
with its count of failures.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MmrbError
from ..llm import Endpoint, LLMClient
from ..model import Failure, Order, count_failures
from ..seeding import hex_hash
from ..store import dumps, loads
from ..store.protocols import JudgeRunStore
from ..store.writer import BatchWriter
from ..wording import plural
from .judge import Judge, Plan
from .records import NO_DATASET, JudgeRun, JudgeTask, Judgment, JudgmentKey, RunDataset, RunPurpose


@dataclass
class RunSummary:
    run_id: str
    planned: int = 0
    already_stored: int = 0
    sent: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)  # of the judgments sent in this pass
    seconds: float = 0.0
    judge: str = ""
    failed: int = 0  # planned judgments stored as failures after this pass
    missing: int = 0  # planned judgments not stored at all
    errors: list[str] = field(default_factory=list)  # the failures' messages

    @property
    def per_second(self) -> float:
        return self.sent / self.seconds if self.seconds else 0.0

    @property
    def complete(self) -> bool:
        return not self.failed and not self.missing

    def failure_line(self) -> str:
        """What failed and how to resume (for an incomplete run)."""
        parts = [
            f"{n} of {plural(self.planned, 'judgment')} {what}"
            for n, what in ((self.failed, "failed after retries"), (self.missing, "were never sent"))
            if n
        ]
        eg = f" ({count_failures(map(Failure.read, self.errors))}; e.g. {self.errors[0]})" if self.errors else ""
        return (
            f"judge {self.judge}: {' and '.join(parts)}{eg}; run {self.run_id} is stored as incomplete; "
            "rerun the same command to send only those"
        )


def default_run_id(name: str, identity: Mapping[str, Any], dataset: RunDataset) -> str:
    h = hex_hash(dumps({"identity": identity, "dataset": dataset.label}), n=10)
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:60]
    return f"{safe}-{h}"


# -- store side ----------------------------------------------------------------------------
def ensure_run(
    store: JudgeRunStore, run_id: str, *, purpose: RunPurpose, judge: str, identity: Mapping, dataset: RunDataset
) -> bool:
    """Create the judge run, or check that an existing one has the same identity.
    Returns True when the run already existed (a resumption)."""
    stored, created = store.add_judge_run(JudgeRun(run_id, purpose, judge, dict(identity), dataset))
    if created:
        return False
    old = stored.config
    if old != loads(dumps(dict(identity))) or stored.dataset != dataset:
        changed = sorted(k for k in set(old) | set(identity) if old.get(k) != identity.get(k))
        if stored.dataset != dataset:
            changed.append("dataset")
        raise MmrbError(
            f"judge run {run_id!r} exists with a different configuration ({', '.join(changed)}); "
            "choose another --run to start a new run"
        )
    return True


def finish_run(store: JudgeRunStore, summary: RunSummary, planned: Sequence[JudgmentKey]) -> RunSummary:
    """Count what the planned judgments hold after a pass and store the run's status."""
    stored = store.judgment_outcomes(summary.run_id)
    failed = {k for k in planned if stored.get(k) == "error"}
    summary.failed = len(failed)
    summary.missing = sum(1 for k in planned if k not in stored)
    summary.errors = []
    if failed:
        summary.errors = [e or "unknown error" for k, e in store.judgment_errors(summary.run_id).items() if k in failed]
    store.set_judge_run_status(
        summary.run_id, "complete" if summary.complete else "incomplete", planned=len(planned), failed=summary.failed
    )
    return summary


def judgment_writer(
    store: JudgeRunStore, run_id: str, replace_keys: Iterable[JudgmentKey] = ()
) -> BatchWriter[Judgment]:
    """Commits judgments as they arrive; stored failures of ``replace_keys`` that a new
    answer arrives for are replaced, never duplicated."""
    stale = set(replace_keys)

    def commit(batch: list[Judgment]) -> None:
        store.add_judgments(run_id, batch, replace=stale)
        stale.difference_update(j.key for j in batch)

    # every answer is committed as soon as the previous commit is done (no waiting interval)
    return BatchWriter(commit, flush_every=1000, flush_interval=0.0, name="judgment-writer")


def pending(
    tasks: Sequence[JudgeTask],
    stored: Mapping[JudgmentKey, str],
    plan: Callable[[str], Plan],
    retry_errors: bool = True,
) -> tuple[list[tuple[JudgeTask, Order, int]], int]:
    """(the judgments still to ask for, how many are already stored)."""
    todo = []
    have = 0
    for t in tasks:
        for o, i in plan(t.pair_id):
            outcome = stored.get((t.pair_id, o, i))
            if outcome is not None and not (retry_errors and outcome == "error"):
                have += 1
            else:
                todo.append((t, o, i))
    return todo, have


# -- asking ------------------------------------------------------------------------------
async def judge_all(
    client: LLMClient,
    judge: Judge,
    todo: Sequence[tuple[JudgeTask, Order, int]],
    sink: Callable[[Judgment], None],
    *,
    run_id: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Ask for every (task, order, sample) and hand each judgment to ``sink`` as it comes."""
    counts: dict[str, int] = {}
    it = iter(todo)
    done = 0
    # Workers beyond the client's concurrency keep the pipe full while others build
    # requests or wait out a retry; the client's semaphore still caps requests in flight.
    n_workers = max(1, min(len(todo), judge.endpoint.concurrency * 2))

    async def worker() -> None:
        nonlocal done
        # an endpoint that refused every first request is not there: take no more work
        while not client.unreachable and (nxt := next(it, None)) is not None:
            task, order, index = nxt
            j = await judge.judge(client, task, order, index, f"{run_id}|{task.pair_id}|{order}|{index}")
            sink(j)
            counts[j.outcome] = counts.get(j.outcome, 0) + 1
            done += 1
            if progress:
                progress(done, len(todo))

    await asyncio.gather(*(worker() for _ in range(n_workers)))
    if client.unreachable and client.refused is not None:
        raise MmrbError(
            f"judge {judge.name}: cannot connect to {judge.endpoint.base_url} ({client.refused.message}); "
            f"stopped after the first {plural(done, 'request')}. Start the server or correct base_url, "
            "then rerun the same command: it resumes"
        )
    return counts


def run_judge(
    store: JudgeRunStore,
    tasks: Sequence[JudgeTask],
    judge: Judge,
    *,
    run_id: str | None = None,
    purpose: RunPurpose = "evaluate",
    dataset: RunDataset = NO_DATASET,
    retry_errors: bool = True,
    progress: Callable[[int, int], None] | None = None,
    client_factory: Callable[[Endpoint], LLMClient] = LLMClient,
) -> RunSummary:
    """Judge every task with ``judge`` (its plan: orders and samples); resume a run with the same id."""
    identity = with_response_images(judge.identity(), tasks)
    run_id = run_id or default_run_id(judge.name, identity, dataset)
    judge.check(tasks)
    ensure_run(store, run_id, purpose=purpose, judge=judge.name, identity=identity, dataset=dataset)
    stored = store.judgment_outcomes(run_id)
    todo, have = pending(tasks, stored, judge.plan, retry_errors)
    summary = RunSummary(run_id, planned=len(todo) + have, already_stored=have, judge=judge.name)

    async def work(client: LLMClient, sink: Callable[[Judgment], None]) -> dict[str, int]:
        return await judge_all(client, judge, todo, sink, run_id=run_id, progress=progress)

    execute(store, summary, stored, len(todo), lambda: client_factory(judge.endpoint), work)
    planned = [(t.pair_id, o, i) for t in tasks for o, i in judge.plan(t.pair_id)]
    return finish_run(store, summary, planned)


def with_response_images(identity: dict, tasks: Sequence[JudgeTask]) -> dict:
    """A run's identity, marked when its responses' images are shown: a run stored before
    judges saw them (their ``[image: name]`` markers only) is not resumed as if the same."""
    if any(t.has_response_images for t in tasks):
        return {**identity, "response_images": "shown"}
    return identity


def execute(
    store: JudgeRunStore,
    summary: RunSummary,
    stored: Mapping[tuple, str],
    n_todo: int,
    make_client: Callable[[], LLMClient],
    work: Callable[[LLMClient, Callable[[Judgment], None]], Awaitable[dict[str, int]]],
) -> RunSummary:
    """Send what is still to do through one client, committing judgments as they arrive;
    failed judgments of an earlier attempt are replaced, never duplicated."""
    if not n_todo:
        return summary
    store.set_judge_run_status(summary.run_id, "incomplete")  # until the pass ends with every answer
    writer = judgment_writer(store, summary.run_id, replace_keys=[k for k, o in stored.items() if o == "error"])
    t0 = time.perf_counter()

    def sink(j: Judgment) -> None:
        try:
            writer.put(j)
        except Exception as e:
            raise MmrbError(f"storing judgments failed: {e}") from e

    async def go() -> dict[str, int]:
        client = make_client()
        try:
            return await work(client, sink)
        finally:
            await client.aclose()

    try:
        summary.outcomes = asyncio.run(go())
    finally:
        try:
            writer.close()
        except Exception as e:
            raise MmrbError(f"storing judgments failed: {e}") from e
    summary.sent = n_todo
    summary.seconds = time.perf_counter() - t0
    return summary


__all__ = [
    "RunSummary",
    "default_run_id",
    "ensure_run",
    "execute",
    "finish_run",
    "judge_all",
    "judgment_writer",
    "pending",
    "run_judge",
    "with_response_images",
]
