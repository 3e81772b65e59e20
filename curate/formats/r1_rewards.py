"""R1-Reward's outputs: the benchmark's own rows plus ``rewards``.

Its harness scores each row of Multimodal RewardBench (``ID, Output1, Output2, Better,
Category``) or of a chosen/rejected copy (``id, prompt, chosen, rejected, image``) and
writes the row back with ``rewards: [reward of chosen, reward of rejected]`` (further
entries ignored) and the model's text in ``critic``. The harness always shows the chosen
response first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from .fields import Fields

R = TypeVar("R")


@dataclass(frozen=True)
class Rewards(Generic[R]):
    row: R  # the benchmark's row
    chosen: float
    rejected: float
    critic: str | None = None


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def parse(f: Fields, parse_row: Callable[[Fields], R | None]) -> Rewards[R] | None:
    """A row read by ``parse_row`` (the benchmark's own reader) and its rewards."""
    rw = f.data.get("rewards")
    if not (isinstance(rw, list) and len(rw) >= 2 and _is_number(rw[0]) and _is_number(rw[1])):
        f.bad("rewards", "must be [reward of chosen, reward of rejected], two numbers")
    row = parse_row(f)
    if f.problems or row is None or not isinstance(rw, list):
        return None
    critic = f.data.get("critic")
    return Rewards(row, rw[0], rw[1], critic if isinstance(critic, str) else None)
