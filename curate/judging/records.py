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
    PartKind,
    ResponsePart,
    RunDataset,
    RunPurpose,
    RunStatus,
    Side,
)

ParseOutcome = Literal["parsed", "unparsed", "both"]  # what a parser reads from a judge's text


@dataclass(frozen=True)
class TaskPart:
    """One part of a response as a judge is shown it: a text, or an image given as a local
    path (or a data: / http URL). ``missing`` names an image the input lists but that could
    not be stored or found (its ``value`` is then the source as written)."""

    kind: PartKind
    value: str
    missing: bool = False

    @staticmethod
    def of_text(text: str) -> TaskPart:
        return TaskPart("text", text)

    @staticmethod
    def of_image(path: str, missing: bool = False) -> TaskPart:
        return TaskPart("image", path, missing)


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
    first_parts: tuple[TaskPart, ...] = ()
    second_parts: tuple[TaskPart, ...] = ()
    category: str = ""
    # the prompt's text and images interleaved as its source writes them (MMRB2's prompt_content);
    # empty: ``prompt`` and then ``images``. Its images are ``images`` too.
    prompt_parts: tuple[TaskPart, ...] = ()

    @property
    def has_response_images(self) -> bool:
        return any(p.kind == "image" for p in (*self.first_parts, *self.second_parts))

    def parts(self, side: Side) -> tuple[TaskPart, ...]:
        """A response's parts in order: its own, or its text as one part."""
        own = self.first_parts if side == "first" else self.second_parts
        return own or (TaskPart.of_text(self.first if side == "first" else self.second),)

    @property
    def response_images(self) -> tuple[TaskPart, ...]:
        """Both responses' image parts, the first response's first."""
        return tuple(p for p in (*self.first_parts, *self.second_parts) if p.kind == "image")


def task_parts(content: Iterable[ResponsePart], paths: Mapping[str, Any]) -> tuple[TaskPart, ...]:
    """A stored response's parts as a judge is shown them (``Candidate.content``; empty for a
    plain-text response): each image at its stored file (``paths``: sha256 -> path, as
    ``Store.image_paths`` gives), an image that was never stored (or whose file is gone) as
    missing under its source."""
    out = []
    for p in content:
        if p.kind == "text" or p.image is None:
            out.append(TaskPart.of_text(p.text))
            continue
        path = paths.get(p.image.sha256) if p.image.sha256 else None
        out.append(TaskPart.of_image(str(path)) if path is not None else TaskPart.of_image(p.image.source, True))
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
    "RunDataset",
    "RunPurpose",
    "RunStatus",
    "TaskPart",
    "task_parts",
]
