"""What a judge is asked: a task (a pair as a judge sees it, each response's parts in order).

The nouns a judge run stores (``Judgment``, ``JudgeRun``, ``RunDataset``, outcomes) live in
curate/model.py, where the store takes them from; they are named here too for the modules that
read them from this one (curate/formats/, mmrb_eval).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..model import (
    NO_DATASET,
    OUTCOMES,
    JudgeRun,
    Judgment,
    JudgmentKey,
    Order,
    Outcome,
    Part,
    RunDataset,
    RunPurpose,
    RunStatus,
    Side,
)

ParseOutcome = Literal["parsed", "unparsed", "both"]  # what a parser reads from a judge's text


@dataclass(frozen=True)
class JudgeTask:
    """One pair as a judge sees it, in the pair's canonical order.

    ``first`` / ``second`` are the responses' texts (a response with images: its text
    rendering, images as ``[image: name]`` markers). A response with images also has its
    parts in order (``first_parts`` / ``second_parts``); a plain-text task has none and is
    judged exactly as before. ``category`` lets a template choose its text per task (MMRB2's
    judge prompt differs for t2i, edit, interleaved and reasoning)."""

    pair_id: str
    prompt: str
    first: str
    second: str
    images: tuple[str, ...] = ()  # local paths (or data: / http URLs) of the prompt's images
    first_parts: tuple[Part, ...] = ()
    second_parts: tuple[Part, ...] = ()
    category: str = ""
    # the prompt's text and images interleaved as its source writes them (MMRB2's prompt_content);
    # empty: ``prompt`` and then ``images``. Its images are ``images`` too.
    prompt_parts: tuple[Part, ...] = ()

    @property
    def has_response_images(self) -> bool:
        return any(p.kind == "image" for p in (*self.first_parts, *self.second_parts))

    def parts(self, side: Side) -> tuple[Part, ...]:
        """A response's parts in order: its own, or its text as one part."""
        own = self.first_parts if side == "first" else self.second_parts
        return own or (Part.of_text(self.first if side == "first" else self.second),)

    @property
    def response_images(self) -> tuple[Part, ...]:
        """Both responses' image parts, the first response's first."""
        return tuple(p for p in (*self.first_parts, *self.second_parts) if p.kind == "image")


def task_parts(content: Iterable[Part], paths: Mapping[str, Any]) -> tuple[Part, ...]:
    """A stored response's parts as a judge is shown them (``Candidate.content``; empty for a
    plain-text response): each image at its stored file (``paths``: sha256 -> path, as
    ``Store.image_paths`` gives), an image that was never stored (or whose file is gone) as
    missing under its source."""
    out = []
    for p in content:
        if p.kind == "text" or p.image is None:
            out.append(p)
            continue
        path = paths.get(p.image.sha256) if p.image.sha256 else None
        out.append(Part.of_image(str(path)) if path is not None else Part.of_image(p.value, True))
    return tuple(out)


__all__ = [
    "NO_DATASET",
    "OUTCOMES",
    "JudgeRun",
    "JudgeTask",
    "Judgment",
    "JudgmentKey",
    "Order",
    "Outcome",
    "ParseOutcome",
    "Part",
    "RunDataset",
    "RunPurpose",
    "RunStatus",
    "task_parts",
]
