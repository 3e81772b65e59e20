"""Scalar reward models behind an HTTP endpoint, compared pair by pair (a ``Judge``,
curate/judging/judge.py).

Each response of a pair is scored by one POST whose JSON body is built from the
``request`` template (strings ``{prompt}``, ``{response}``, ``{image}`` = the prompt's first
image as a data URL, and ``{images}`` = all of them as a list, when a string is exactly
that), and the score is read at ``response_field`` (a dotted path; integers index lists, e.g.
``rewards.0``). The higher score wins; equal scores are a tie, counted as such. Results go
to the same ``judgments`` table as VLM verdicts (order ``forward``, with both scores), so
runs resume and rescore the same way. Requests go through curate/llm.py's client
(``LLMClient.post``): the same retries, backoff and concurrency as every other endpoint.

A response with images sends them too, through one of two whole-string placeholders:
``{response_images}``, the response's images as a list of data URLs (downscaled to
``max_image_side``, in order), or ``{response_content}``, the whole response as
OpenAI-style content parts (``[{"type": "text", "text": ...}, {"type": "image_url",
"image_url": {"url": "data:..."}}, ...]``, a plain-text response as one text part). A
dataset whose responses have images is refused before anything is sent when the request
names neither (``{response}`` alone would show the reward model only ``[image: name]``
markers). A missing response image follows the prompt images' policy (refused, or with
``--allow-missing-images`` a text part ``[image not available: NAME]``; the list leaves it
out).

A request that fails (after retries), an answer without a readable score, or a body over
``max_response_chars`` bytes is a judgment with outcome ``error``: it is never scored, and
the run stays incomplete until a rerun resends it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MmrbError
from ..llm import DEFAULT_MAX_RESPONSE_CHARS, Endpoint, LLMClient, Reply
from ..model import Judgment, Order, Part, Preference, Side
from ..seeding import hex_hash
from ..wording import plural
from .inputs import image_urls, message_content, require_images, task_images
from .judge import Plan
from .records import JudgeTask

WHOLE_VALUES = ("{images}", "{response_images}", "{response_content}")  # lists: only a whole string
RESPONSE_IMAGES = ("{response_images}", "{response_content}")
SIDES: tuple[Side, Side] = ("first", "second")


@dataclass(frozen=True)
class RewardModel:
    name: str
    url: str
    request: Mapping[str, Any] = field(
        default_factory=lambda: {"prompt": "{prompt}", "response": "{response}", "image": "{image}"}
    )
    response_field: str = "score"
    headers: Mapping[str, str] = field(default_factory=dict)
    api_key_env: str | None = None
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_image_side: int | None = 1024
    allow_missing_images: bool = False
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS  # bytes of a body: a longer one is a failure, not read

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(
            base_url=self.url,
            model="",
            name=self.name,
            api_key_env=self.api_key_env,
            headers=self.headers,
            concurrency=self.concurrency,
            timeout=self.timeout,
            max_retries=self.max_retries,
            backoff_base=self.backoff_base,
            backoff_max=self.backoff_max,
            max_response_chars=self.max_response_chars,
        )

    def identity(self) -> dict[str, Any]:
        return {
            "kind": "reward_model",
            "url": self.url,
            "request": dict(self.request),
            "response_field": self.response_field,
            "max_image_side": self.max_image_side,
        }

    def plan(self, pair_id: str) -> Plan:
        return [("forward", 0)]  # both responses scored alone: the order shown means nothing

    @staticmethod
    def stored_plan(identity: Mapping[str, Any]) -> Callable[[str], Plan]:
        return lambda pair_id: [("forward", 0)]

    def check(self, tasks: Sequence[JudgeTask]) -> None:
        require_response_images(tasks, self)
        require_images(tasks, self.allow_missing_images)

    async def judge(self, client: LLMClient, task: JudgeTask, order: Order, index: int, request_id: str) -> Judgment:
        shown = await asyncio.to_thread(image_urls, task, self.max_image_side) if task_images(task) else {}
        urls = [shown[i] for i in task.images if i in shown]
        bodies = [
            fill(
                self.request,
                {
                    "prompt": task.prompt,
                    "response": task.first if side == "first" else task.second,
                    "image": urls[0] if urls else "",
                    "images": urls,
                    **response_values(task.parts(side), shown),
                },
            )
            for side in SIDES
        ]
        replies = await asyncio.gather(
            *(
                client.post(body, limit=self.max_response_chars, request_id=f"{request_id}|{side}")
                for body, side in zip(bodies, SIDES, strict=True)
            )
        )
        (s1, raw1, e1), (s2, raw2, e2) = (self.score(r) for r in replies)
        raw = json.dumps({"first": raw1, "second": raw2}, ensure_ascii=False)
        prompt = json.dumps({"first": _short(bodies[0]), "second": _short(bodies[1])}, ensure_ascii=False)
        if s1 is None or s2 is None:  # a score is missing only with its error
            err = "; ".join(f"{side}: {e}" for side, e in (("first", e1), ("second", e2)) if e)
            return Judgment(task.pair_id, order, index, None, "error", raw, prompt, s1, s2, error=err)
        verdict: Preference = "first" if s1 > s2 else "second" if s2 > s1 else "tie"
        return Judgment(task.pair_id, order, index, verdict, "parsed", raw, prompt, s1, s2)

    def score(self, reply: Reply) -> tuple[float | None, str | None, str | None]:
        """(score, the answer as it came, error) of one reply."""
        if not reply.ok:
            return None, None, reply.failure.message if reply.failure else "unknown error"
        try:
            return pick(reply.data, self.response_field), reply.text, None
        except ValueError as e:  # a valid answer without the field: retrying will not help
            return None, reply.text, str(e)


def names_any(template: Any, placeholders: Sequence[str]) -> bool:
    """Whether a request template holds one of these whole-string placeholders."""
    if isinstance(template, dict):
        return any(names_any(v, placeholders) for v in template.values())
    if isinstance(template, list):
        return any(names_any(v, placeholders) for v in template)
    return isinstance(template, str) and template in placeholders


def response_values(parts: Sequence[Part], urls: Mapping[str, str]) -> dict[str, list]:
    """A response's ``response_images`` and ``response_content`` (see the module's docstring)."""
    images = [urls[p.value] for p in parts if p.kind == "image" and not p.missing and p.value in urls]
    return {"response_images": images, "response_content": message_content(parts, urls)}


def fill(template: Any, values: Mapping[str, Any]) -> Any:
    """Substitute placeholders in a JSON template (strings only; whole-string list values)."""
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    if isinstance(template, str):
        if template in WHOLE_VALUES:
            return list(values.get(template[1:-1], []))
        out = template
        for k in ("prompt", "response", "image"):
            out = out.replace("{" + k + "}", str(values.get(k, "")))
        return out
    return template


def pick(obj: Any, path: str) -> float:
    """The number at a dotted path; raises ValueError naming the path when absent."""
    cur = obj
    for part in path.split(".") if path else []:
        if isinstance(cur, list) and part.lstrip("-").isdigit():
            try:
                cur = cur[int(part)]
            except IndexError:
                raise ValueError(f"response has no element {part} at {path!r}") from None
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise ValueError(f"response has no field {path!r}")
    if isinstance(cur, list) and len(cur) == 1:
        cur = cur[0]
    if isinstance(cur, bool) or not isinstance(cur, (int, float)):
        raise ValueError(f"field {path!r} is not a number: {str(cur)[:80]}")
    return float(cur)


def _short(body: Any) -> Any:
    """The request body as stored: data URLs shortened to their hash."""
    if isinstance(body, dict):
        return {k: _short(v) for k, v in body.items()}
    if isinstance(body, list):
        return [_short(v) for v in body]
    if isinstance(body, str) and body.startswith("data:"):
        return f"<image sha256={hex_hash(body, n=16)}>"
    return body


def require_response_images(tasks: Sequence[JudgeTask], rm: RewardModel) -> None:
    """Refuse a dataset whose responses have images when the request cannot send them."""
    with_images = [t.pair_id for t in tasks if t.has_response_images]
    if with_images and not names_any(rm.request, RESPONSE_IMAGES):
        raise MmrbError(
            f"reward model {rm.name!r}: {plural(len(with_images), 'pair')} ({with_images[0]}"
            f"{', ...' if len(with_images) > 1 else ''}) {'has' if len(with_images) == 1 else 'have'} responses with "
            'images, and its [request] sends no response images: add response_images = "{response_images}" '
            '(a list of data URLs) or response_content = "{response_content}" (OpenAI-style content parts)'
        )


__all__ = ["RewardModel", "fill", "names_any", "pick", "require_response_images", "response_values"]
