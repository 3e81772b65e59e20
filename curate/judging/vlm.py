"""A generative VLM judge: an OpenAI-compatible chat model shown both responses under a prompt
template, its verdict read from its answer by the template's parser (a ``Judge``,
curate/judging/judge.py)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..llm import Completion, Endpoint, LLMClient, openai_content
from ..model import Judgment, Order, Part
from ..sides import shown_first, shown_pair, stored_pair, verdict_from_letter
from .inputs import image_urls, message_content, require_images
from .judge import Plan
from .order import plan
from .parsing import ParsedVerdict, get_parser
from .records import JudgeTask
from .templates import Template


@dataclass(frozen=True)
class VLMJudge:
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

    def identity(self) -> dict[str, Any]:
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

    def plan(self, pair_id: str) -> Plan:
        return plan(pair_id, self.order, self.samples, self.seed)

    @staticmethod
    def stored_plan(identity: Mapping[str, Any]) -> Callable[[str], Plan]:
        """The plan of a stored run of this kind, from its identity."""
        order = identity.get("order", "fixed")
        samples, seed = int(identity.get("samples", 1)), int(identity.get("seed", 0))
        return lambda pair_id: plan(pair_id, order, samples, seed)

    def check(self, tasks: Sequence[JudgeTask]) -> None:
        require_images(tasks, self.allow_missing_images)

    async def judge(self, client: LLMClient, task: JudgeTask, order: Order, index: int, request_id: str) -> Judgment:
        has_images = task.images or task.has_response_images
        urls = await asyncio.to_thread(image_urls, task, self.max_image_side) if has_images else {}
        messages, text = build_messages(self.template, task, order, urls)
        comp = await client.complete(messages, request_id=request_id)
        return judgment_from(task, order, index, text, comp, self.parser)

    @cached_property
    def parser(self) -> Callable[[str], ParsedVerdict]:
        return get_parser(self.template.parser)


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
        question, prompt_images = task.prompt, [Part.of_image(i) for i in shown_images]
        if task.prompt_parts and not template.image_first:  # the prompt interleaved as written
            question = ""
            prompt_images = [p for p in task.prompt_parts if p.kind == "text" or p.value in image_urls]
        parts = template.render_parts(question, prompt_images, parts_a, parts_b, task.category)
        messages.append({"role": "user", "content": message_content(parts, image_urls)})
    elif shown_images:
        imgs, txt = [Part.of_image(u) for u in shown_images], [Part.of_text(text)]
        shown = imgs + txt if template.image_first else txt + imgs
        messages.append({"role": "user", "content": openai_content(shown, image_urls)})
    else:
        messages.append({"role": "user", "content": text})
    return messages, text


def judgment_from(
    task: JudgeTask,
    order: Order,
    index: int,
    prompt: str,
    comp: Completion,
    parser: Callable[[str], ParsedVerdict],
) -> Judgment:
    """A completion as a judgment: a failed request as outcome ``error`` with its failure's
    message, an answer with the verdict its parser reads, in the pair's stored order."""
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
    p = parser(comp.text or "")
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


__all__ = ["VLMJudge", "build_messages", "judgment_from"]
