"""The two values a judge run moves around: a task to judge and a stored judgment."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping, Any, get_args

Outcome = Literal["parsed", "unparsed", "both", "error"]
Order = Literal["forward", "reverse"]  # forward: the pair's first response is shown as A
OUTCOMES: tuple[str, ...] = get_args(Outcome)
ORDERS: tuple[str, ...] = get_args(Order)


@dataclass(frozen=True)
class JudgeTask:
    """One pair as a judge sees it, in the pair's canonical order."""

    pair_id: str
    prompt: str
    first: str
    second: str
    images: tuple[str, ...] = ()  # local paths (or data: / http URLs) of the prompt's images


@dataclass(frozen=True)
class Judgment:
    pair_id: str
    order: Order = "forward"
    sample_index: int = 0
    verdict: str | None = None  # "first" / "second" / "tie" (canonical), None if unparsed
    outcome: Outcome = "parsed"
    raw: str | None = None
    prompt: str = ""
    score_first: float | None = None
    score_second: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # format-specific, not stored

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.pair_id, self.order, self.sample_index)

    @property
    def shown(self) -> str | None:
        """The verdict as the judge saw it: "A", "B", "tie" or None."""
        if self.verdict is None or self.verdict == "tie":
            return self.verdict
        return from_canonical(self.verdict, self.order)


def to_canonical(shown: str | None, order: str) -> str | None:
    """Map the A/B the judge named to the pair's own first/second."""
    if shown in (None, "tie"):
        return shown
    if order == "forward":
        return {"A": "first", "B": "second"}[shown]
    return {"A": "second", "B": "first"}[shown]


def from_canonical(verdict: str, order: str) -> str:
    if order == "forward":
        return {"first": "A", "second": "B"}[verdict]
    return {"first": "B", "second": "A"}[verdict]
