"""The evaluation dataset row: a pair with a known better response."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from curate.judging import JudgeTask
from curate.model import Part, Side


@dataclass(frozen=True)
class EvalPair:
    """A benchmark row in canonical order: ``first``/``second`` and which one is preferred.

    ``group`` gathers the pairs of one prompt (Acc+ of MM-RLHF-RewardBench); it defaults to
    the id itself. A response with images also has its parts (``first_parts`` /
    ``second_parts``; ``first`` / ``second`` are then its text with ``[image: name]``
    markers), which go to the judge.
    """

    id: str
    prompt: str
    first: str
    second: str
    preferred: Side  # the better (chosen) response
    category: str = "all"
    images: tuple[str, ...] = ()
    source: str = ""
    group: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    first_parts: tuple[Part, ...] = ()
    second_parts: tuple[Part, ...] = ()
    prompt_parts: tuple[Part, ...] = ()  # the prompt interleaved as written (MMRB2)
    # first/second decided by curate.sides.copy_chosen_first (the file says only chosen and
    # rejected), not listed by the file: a judge run's record of it wins (mmrb_eval/runs.py)
    seeded_order: bool = False

    @property
    def prompt_group(self) -> str:
        return self.group or self.id

    @property
    def chosen(self) -> str:
        return self.first if self.preferred == "first" else self.second

    @property
    def rejected(self) -> str:
        return self.second if self.preferred == "first" else self.first

    def with_chosen(self, side: Side) -> EvalPair:
        """The pair with its chosen response at ``side`` (its two responses swapped when it
        is at the other)."""
        if side == self.preferred:
            return self
        return replace(
            self,
            first=self.second,
            second=self.first,
            preferred=side,
            first_parts=self.second_parts,
            second_parts=self.first_parts,
        )

    def task(self) -> JudgeTask:
        return JudgeTask(
            self.id,
            self.prompt,
            self.first,
            self.second,
            self.images,
            self.first_parts,
            self.second_parts,
            self.category,
            self.prompt_parts,
        )
