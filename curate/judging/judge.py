"""The one protocol every judge of pairs follows, whatever it is: a generative VLM judge
(curate/judging/vlm.py), a scalar reward model over HTTP (curate/judging/reward_model.py).

The runner (curate/judging/runner.py) asks a judge for its identity, the judgments it plans
per pair and whether it can judge the tasks at all, opens one client on its endpoint
(curate/llm.py: one HTTP client, one retry policy, one concurrency limit) and calls ``judge``
once per planned judgment. ``judge`` never raises for a failed request: it returns a
judgment with outcome ``error`` and its failure's message, which the runner stores and a rerun
sends again. Storing, resuming and counting are the runner's alone.

A new kind of judge is a class with these members and an entry in ``JUDGE_KINDS``
(curate/judging/config.py), which reads it from a judge file and plans a stored run of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..llm import Endpoint, LLMClient
from ..model import Judgment, Order
from .records import JudgeTask

Plan = list[tuple[Order, int]]  # the (order, sample index) judgments asked for one pair


class Judge(Protocol):
    @property
    def name(self) -> str:
        """How runs and reports name the judge."""
        ...

    @property
    def endpoint(self) -> Endpoint:
        """Where its requests go, and how (concurrency, timeout, retries, size limit)."""
        ...

    def identity(self) -> dict[str, Any]:
        """What defines its judgments: stored with the run, which resumes only under the
        same identity; default run ids hash it. Its ``kind`` names the entry of
        ``JUDGE_KINDS``."""
        ...

    def plan(self, pair_id: str) -> Plan:
        """The judgments to ask for one pair."""
        ...

    def check(self, tasks: Sequence[JudgeTask]) -> None:
        """Refuse (MmrbError) tasks it cannot judge, before any request is sent."""
        ...

    async def judge(self, client: LLMClient, task: JudgeTask, order: Order, index: int, request_id: str) -> Judgment:
        """One planned judgment, through ``client`` (made on ``endpoint``); a failed request is
        a judgment with outcome ``error``, never an exception."""
        ...


__all__ = ["Judge", "Plan"]
