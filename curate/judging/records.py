"""What a judge run moves around: a task to judge, a stored judgment, and the run itself
(its dataset and how complete its last pass left it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from ..model import Order, PartKind, Preference, ResponsePart, Side

ParseOutcome = Literal["parsed", "unparsed", "both"]  # what a parser reads from a judge's text
Outcome = Literal["parsed", "unparsed", "both", "error"]  # of a judgment: a failed request is an error
OUTCOMES: tuple[str, ...] = get_args(Outcome)
RunPurpose = Literal["evaluate", "select"]
# After each pass: "complete" (every planned judgment has an answer), else "incomplete"
RunStatus = Literal["complete", "incomplete"]
JudgmentKey = tuple[str, str, int]  # (pair, order, sample index)


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


@dataclass(frozen=True)
class Judgment:
    pair_id: str
    order: Order = "forward"  # which response was shown as A (curate/sides.py)
    sample_index: int = 0
    verdict: Preference | None = None  # stored terms, None if unparsed
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
    def key(self) -> JudgmentKey:
        return (self.pair_id, self.order, self.sample_index)


@dataclass(frozen=True)
class RunDataset:
    """What a run judged: dataset files in order with the ``--limit`` on their pairs, or a
    named set that is no file (``mmrb select`` judges the store's own pairs)."""

    paths: tuple[str, ...] = ()
    limit: int | None = None
    name: str = ""

    @classmethod
    def files(cls, paths: str | Path | Iterable[str | Path], limit: int | None = None) -> RunDataset:
        """Absolute paths, so that a resumed run can check it is judging the same files."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        return cls(tuple(str(Path(p).resolve()) for p in paths), limit)

    @property
    def label(self) -> str:
        """How reports name the dataset, and what default run ids hash (unchanged since runs
        stored it as this one string: the same command still finds its run)."""
        if self.name:
            return self.name
        return ";".join(self.paths) + (f"[:{self.limit}]" if self.limit is not None else "")


NO_DATASET = RunDataset()  # a run that names no dataset (the default of the runners)


@dataclass(frozen=True)
class JudgeRun:
    id: str
    purpose: RunPurpose
    judge: str
    config: Mapping[str, Any]  # the judge's identity (JudgeConfig.identity)
    dataset: RunDataset
    created_at: str | None = None
    status: RunStatus | None = None  # None for runs stored before schema version 2
    planned: int | None = None  # judgments the last pass asked for
    failed: int | None = None  # of those, stored as failures (outcome "error")


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
