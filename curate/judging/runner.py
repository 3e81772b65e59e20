"""The judge runner: asks a VLM judge about pairs, stores every judgment, resumes.

Each judgment (run, pair, order, sample) is written to the ``judgments`` table as soon as
its answer arrives, by one writer thread that commits whatever has queued in one
transaction: a crash loses at most the answers not yet committed, and a rerun with the same
run id sends only the judgments that are not stored (failed requests are stored with
outcome ``error`` and are sent again on resume unless ``retry_errors=False``).

A failed request (connection, timeout, HTTP error, malformed body, an empty or oversized
answer) is outcome ``error``, never ``unparsed``: it holds no answer, so it is never scored
or read as a verdict. After each pass the run is stored as ``complete`` only when every
planned judgment has an answer, else ``incomplete`` with its count of failures.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MmrbError
from ..llm import Completion, Endpoint, LLMClient, count_kinds, encode_image, image_data_url
from ..model import Order
from ..seeding import hex_hash
from ..sides import shown_first, shown_pair, stored_pair, verdict_from_letter
from ..store import Store, dumps, loads
from ..store.writer import BatchWriter
from ..wording import plural
from .order import plan
from .parsing import get_parser
from .records import NO_DATASET, JudgeRun, JudgeTask, Judgment, JudgmentKey, RunDataset, RunPurpose, TaskPart
from .templates import Template

# Config keys that may change between a run and its resumption.
VOLATILE = ("concurrency", "timeout", "max_retries", "backoff_base", "backoff_max", "max_response_chars")


@dataclass(frozen=True)
class JudgeConfig:
    endpoint: Endpoint
    template: Template
    order: str = "fixed"
    samples: int = 1
    seed: int = 0
    max_image_side: int | None = 1024
    allow_missing_images: bool = False

    @property
    def name(self) -> str:
        return self.endpoint.label

    def identity(self) -> dict:
        """What defines the run's judgments (resuming with another identity is refused)."""
        ep = self.endpoint
        return {
            "kind": "vlm",
            "model": ep.model,
            "base_url": ep.base_url,
            "params": dict(ep.params),
            "template": self.template.name,
            "template_sha256": hashlib.sha256(self.template.digest_text.encode()).hexdigest(),
            "parser": self.template.parser,
            "image_first": self.template.image_first,
            "order": self.order,
            "samples": self.samples,
            "seed": self.seed,
            "max_image_side": self.max_image_side,
        }


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
        eg = f" ({count_kinds(self.errors)}; e.g. {self.errors[0]})" if self.errors else ""
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
    store: Store, run_id: str, *, purpose: RunPurpose, judge: str, identity: Mapping, dataset: RunDataset
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


def finish_run(store: Store, summary: RunSummary, planned: Sequence[JudgmentKey]) -> RunSummary:
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


def judgment_writer(store: Store, run_id: str, replace_keys: Iterable[JudgmentKey] = ()) -> BatchWriter[Judgment]:
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
    order: str,
    samples: int,
    seed: int,
    retry_errors: bool = True,
) -> tuple[list[tuple[JudgeTask, Order, int]], int]:
    """(the judgments still to ask for, how many are already stored)."""
    todo = []
    have = 0
    for t in tasks:
        for o, i in plan(t.pair_id, order, samples, seed):
            outcome = stored.get((t.pair_id, o, i))
            if outcome is not None and not (retry_errors and outcome == "error"):
                have += 1
            else:
                todo.append((t, o, i))
    return todo, have


# -- asking ------------------------------------------------------------------------------
def _remote(img: str) -> bool:
    return "://" in img or img.startswith("data:")


def task_images(task: JudgeTask) -> list[TaskPart]:
    """Every image of a task, the prompt's first, then the first and second response's."""
    return [TaskPart.of_image(i) for i in task.images] + list(task.response_images)


def check_images(tasks: Sequence[JudgeTask]) -> list[str]:
    """Images a judge could not be shown: local paths that do not exist, and response images
    the input names but that were never stored (the prompt's and the responses' alike)."""
    missing = []
    for t in tasks:
        for img in task_images(t):
            if img.missing or not (_remote(img.value) or Path(img.value).exists()):
                missing.append(img.value)
    return missing


def missing_marker(img: TaskPart) -> str:
    """What a judge reads in place of a response image it cannot be shown (only with
    ``allow_missing_images``: the response keeps its shape)."""
    name = img.value if _remote(img.value) else Path(img.value).name
    return f"[image not available: {name}]"


def message_content(parts: Iterable[TaskPart], image_urls: Mapping[str, str]) -> list[dict[str, Any]]:
    """Parts as OpenAI-compatible content parts: a text as a text part, an image that can be
    shown (``image_urls``, see ``image_urls()``) as an ``image_url`` part, any other image as
    its ``missing_marker`` text."""
    content: list[dict[str, Any]] = []
    for part in parts:
        if part.kind == "text":
            content.append({"type": "text", "text": part.value})
        elif not part.missing and part.value in image_urls:
            content.append({"type": "image_url", "image_url": {"url": image_urls[part.value]}})
        else:
            content.append({"type": "text", "text": missing_marker(part)})
    return content


def build_messages(
    template: Template, task: JudgeTask, order: Order, image_urls: Mapping[str, str]
) -> tuple[list[dict], str]:
    """The chat messages for one judgment and the prompt text stored with it.

    ``image_urls``: each image that can be shown (a path or URL as the task names it) -> the
    URL sent. A plain-text task is the template's text with the prompt's images after it (or
    before, ``image_first``). A task whose responses have images is a multi-image message
    (``Template.render_parts``): the responses' parts in the order shown (curate/sides.py),
    the template's words around each; the stored prompt is then the template's text with
    ``[image: name]`` markers."""
    first_shown = shown_first(order)
    a, b = shown_pair(task.first, task.second, first_shown)
    text = template.render(task.prompt, a, b, task.category)
    messages: list[dict] = []
    if template.system:
        messages.append({"role": "system", "content": template.system})
    shown_images = [i for i in task.images if i in image_urls]
    if task.has_response_images:
        parts_a, parts_b = shown_pair(task.parts("first"), task.parts("second"), first_shown)
        question, prompt_images = task.prompt, [TaskPart.of_image(i) for i in shown_images]
        if task.prompt_parts and not template.image_first:  # the prompt interleaved as written
            question = ""
            prompt_images = [p for p in task.prompt_parts if p.kind == "text" or p.value in image_urls]
        parts = template.render_parts(question, prompt_images, parts_a, parts_b, task.category)
        messages.append({"role": "user", "content": message_content(parts, image_urls)})
    elif shown_images:
        imgs = [{"type": "image_url", "image_url": {"url": image_urls[u]}} for u in shown_images]
        txt = [{"type": "text", "text": text}]
        messages.append({"role": "user", "content": imgs + txt if template.image_first else txt + imgs})
    else:
        messages.append({"role": "user", "content": text})
    return messages, text


def judgment_from(task: JudgeTask, order: Order, index: int, prompt: str, comp: Completion, parser) -> Judgment:
    if not comp.ok:
        return Judgment(
            task.pair_id,
            order,
            index,
            None,
            "error",
            None,
            prompt,
            error=comp.error,
            prompt_tokens=comp.prompt_tokens,
            completion_tokens=comp.completion_tokens,
        )
    p = parser(comp.text)
    score_first, score_second = stored_pair(p.score_a, p.score_b, shown_first(order))
    return Judgment(
        task.pair_id,
        order,
        index,
        verdict_from_letter(p.shown, order) if p.outcome == "parsed" else None,
        p.outcome,
        comp.text,
        prompt,
        score_first=score_first,
        score_second=score_second,
        prompt_tokens=comp.prompt_tokens,
        completion_tokens=comp.completion_tokens,
        error=p.reason,  # why an answer is unparsed, where the parser says (an answer it could not read in budget)
    )


def downscaled(url: str, max_side: int | None) -> str:
    """A base64 data URL of an image larger than ``max_side``, downscaled; any other data
    URL as it is (``curate.llm.encode_image`` keeps small images byte for byte)."""
    head, _, body = url.partition(",")
    if ";base64" not in head:
        return url
    try:
        return encode_image(base64.b64decode(body, validate=True), max_side)
    except (ValueError, OSError):  # not base64, or not an image pillow reads: sent as given
        return url


def image_urls(task: JudgeTask, max_side: int | None) -> dict[str, str]:
    """Each image of the task that can be shown -> the URL sent: a local file as a data URL,
    downscaled to ``max_side`` (``curate.llm.image_data_url``), a data URL downscaled the
    same way, another URL as it is. Missing images are left out."""
    out: dict[str, str] = {}
    for img in task_images(task):
        if img.missing or img.value in out:
            continue
        if img.value.startswith("data:"):
            out[img.value] = downscaled(img.value, max_side)
        elif _remote(img.value):
            out[img.value] = img.value
        elif Path(img.value).exists():
            out[img.value] = image_data_url(img.value, max_side)
    return out


async def judge_all(
    client: LLMClient,
    config: JudgeConfig,
    todo: Sequence[tuple[JudgeTask, Order, int]],
    sink: Callable[[Judgment], None],
    *,
    run_id: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Ask for every (task, order, sample) and hand each judgment to ``sink`` as it comes."""
    parser = get_parser(config.template.parser)
    counts: dict[str, int] = {}
    it = iter(todo)
    done = 0
    # Workers beyond the client's concurrency keep the pipe full while others build
    # messages or wait out a retry; the client's semaphore still caps requests in flight.
    n_workers = max(1, min(len(todo), config.endpoint.concurrency * 2))

    async def worker() -> None:
        nonlocal done
        for task, order, index in it:
            has_images = task.images or task.has_response_images
            urls = await asyncio.to_thread(image_urls, task, config.max_image_side) if has_images else {}
            messages, text = build_messages(config.template, task, order, urls)
            comp = await client.complete(messages, request_id=f"{run_id}|{task.pair_id}|{order}|{index}")
            j = judgment_from(task, order, index, text, comp, parser)
            sink(j)
            counts[j.outcome] = counts.get(j.outcome, 0) + 1
            done += 1
            if progress:
                progress(done, len(todo))

    await asyncio.gather(*(worker() for _ in range(n_workers)))
    return counts


def run_judge(
    store: Store,
    tasks: Sequence[JudgeTask],
    config: JudgeConfig,
    *,
    run_id: str | None = None,
    purpose: RunPurpose = "evaluate",
    dataset: RunDataset = NO_DATASET,
    retry_errors: bool = True,
    progress: Callable[[int, int], None] | None = None,
    client_factory: Callable[[Endpoint], LLMClient] = LLMClient,
) -> RunSummary:
    """Judge every task under the config's order policy; resume a run with the same id."""
    identity = with_response_images(config.identity(), tasks)
    run_id = run_id or default_run_id(config.name, identity, dataset)
    require_images(tasks, config.allow_missing_images)
    ensure_run(store, run_id, purpose=purpose, judge=config.name, identity=identity, dataset=dataset)
    stored = store.judgment_outcomes(run_id)
    todo, have = pending(tasks, stored, config.order, config.samples, config.seed, retry_errors)
    summary = RunSummary(run_id, planned=len(todo) + have, already_stored=have, judge=config.name)

    async def work(client: LLMClient, sink: Callable[[Judgment], None]) -> dict[str, int]:
        return await judge_all(client, config, todo, sink, run_id=run_id, progress=progress)

    execute(store, summary, stored, len(todo), lambda: client_factory(config.endpoint), work)
    planned = [(t.pair_id, o, i) for t in tasks for o, i in plan(t.pair_id, config.order, config.samples, config.seed)]
    return finish_run(store, summary, planned)


def with_response_images(identity: dict, tasks: Sequence[JudgeTask]) -> dict:
    """A run's identity, marked when its responses' images are shown: a run stored before
    judges saw them (their ``[image: name]`` markers only) is not resumed as if the same."""
    if any(t.has_response_images for t in tasks):
        return {**identity, "response_images": "shown"}
    return identity


def require_images(tasks: Sequence[JudgeTask], allow_missing: bool) -> None:
    missing = check_images(tasks)
    if missing and not allow_missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise MmrbError(
            f"{plural(len(missing), 'image')} not found: {shown} (a judge cannot see a missing image; "
            "pass --allow-missing-images to judge on the text alone)"
        )


def execute(
    store: Store,
    summary: RunSummary,
    stored: Mapping[tuple, str],
    n_todo: int,
    make_client: Callable[[], Any],
    work: Callable[[Any, Callable[[Judgment], None]], Awaitable[dict[str, int]]],
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
    "JudgeConfig",
    "RunSummary",
    "build_messages",
    "check_images",
    "message_content",
    "image_urls",
    "missing_marker",
    "task_images",
    "default_run_id",
    "ensure_run",
    "execute",
    "finish_run",
    "judge_all",
    "judgment_from",
    "judgment_writer",
    "pending",
    "require_images",
    "with_response_images",
    "run_judge",
]
