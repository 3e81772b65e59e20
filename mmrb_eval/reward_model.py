"""Scalar reward models behind an HTTP endpoint, compared pair by pair.

Each response of a pair is scored by one POST whose JSON body is built from the
``request`` template (strings ``{prompt}``, ``{response}``, ``{image}`` = the prompt's first
image as a data URL, and ``{images}`` = all of them as a list, when a string is exactly
that), and the score is read at ``response_field`` (a dotted path; integers index lists, e.g.
``rewards.0``). The higher score wins; equal scores are a tie, counted as such. Results go
to the same ``judgments`` table as VLM verdicts (order ``forward``, with both scores), so
runs resume and rescore the same way.

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
``max_response_chars`` is a judgment with outcome ``error``: it is never scored, and the
run stays incomplete until a rerun resends it.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from curate.errors import MmrbError
from curate.judging.records import NO_DATASET, JudgeTask, Judgment, RunDataset, TaskPart
from curate.judging.runner import (
    RunSummary,
    default_run_id,
    ensure_run,
    execute,
    finish_run,
    image_urls,
    message_content,
    require_images,
    task_images,
    with_response_images,
)
from curate.llm import DEFAULT_MAX_RESPONSE_CHARS, RETRY_STATUS, backoff_delay, retry_after_seconds
from curate.model import Preference, Side
from curate.seeding import hex_hash
from curate.store import Store
from curate.wording import plural


@dataclass(frozen=True)
class RewardModelConfig:
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
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS  # a longer body is a failure, not read further

    def identity(self) -> dict:
        return {
            "kind": "reward_model",
            "url": self.url,
            "request": dict(self.request),
            "response_field": self.response_field,
            "max_image_side": self.max_image_side,
        }


WHOLE_VALUES = ("{images}", "{response_images}", "{response_content}")  # lists: only a whole string
RESPONSE_IMAGES = ("{response_images}", "{response_content}")


def names_any(template: Any, placeholders: Sequence[str]) -> bool:
    """Whether a request template holds one of these whole-string placeholders."""
    if isinstance(template, dict):
        return any(names_any(v, placeholders) for v in template.values())
    if isinstance(template, list):
        return any(names_any(v, placeholders) for v in template)
    return isinstance(template, str) and template in placeholders


def response_values(parts: Sequence[TaskPart], urls: Mapping[str, str]) -> dict[str, list]:
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


class RewardClient:
    def __init__(self, cfg: RewardModelConfig, *, sleep=asyncio.sleep, rng: random.Random | None = None):
        headers = dict(cfg.headers)
        if cfg.api_key_env:
            key = os.environ.get(cfg.api_key_env)
            if not key:
                raise MmrbError(f"reward model {cfg.name!r}: environment variable {cfg.api_key_env} is not set")
            headers.setdefault("Authorization", f"Bearer {key}")
        self.cfg = cfg
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._sem = asyncio.Semaphore(max(1, cfg.concurrency))
        limits = httpx.Limits(max_connections=cfg.concurrency, max_keepalive_connections=cfg.concurrency)
        self._http = httpx.AsyncClient(timeout=cfg.timeout, headers=headers, limits=limits)

    async def score(self, body: Mapping[str, Any]) -> tuple[float | None, str | None, str | None]:
        """(score, raw response text, error) after retries; never raises for request failures."""
        attempt = 0
        while True:
            attempt += 1
            retry_after = None
            try:
                async with self._sem:
                    status, headers, content = await self._post(body)
                if content is None:  # the same request would get the same answer: not retried
                    return None, None, f"response body over {self.cfg.max_response_chars} bytes (max_response_chars)"
                text = content.decode("utf-8", "replace")
                if status == 200:
                    try:
                        return pick(json.loads(text), self.cfg.response_field), text, None
                    except json.JSONDecodeError as e:
                        err, retry = f"malformed response: {e}", True
                    except ValueError as e:  # a valid answer without the field: retrying will not help
                        return None, text, str(e)
                else:
                    err, retry = f"HTTP {status}: {text[:200]}", status in RETRY_STATUS
                    retry_after = retry_after_seconds(headers)
            except httpx.TimeoutException:
                err, retry = "timeout", True
            except httpx.TransportError as e:
                err, retry = f"connection error: {e.__class__.__name__}: {e}", True
            if not retry or attempt > self.cfg.max_retries:
                return None, None, err + (f" (after {attempt} attempts)" if attempt > 1 else "")
            await self._sleep(backoff_delay(attempt, self.cfg, retry_after, self._rng))

    async def _post(self, body: Mapping[str, Any]) -> tuple[int, Any, bytes | None]:
        """(status, headers, body), the body None when it runs over the limit (not read further)."""
        limit = self.cfg.max_response_chars
        async with self._http.stream("POST", self.cfg.url, json=body) as r:
            buf = bytearray()
            async for chunk in r.aiter_bytes():
                buf += chunk
                if len(buf) > limit:
                    return r.status_code, r.headers, None
            return r.status_code, r.headers, bytes(buf)

    async def aclose(self) -> None:
        await self._http.aclose()


async def score_pairs(
    client: RewardClient,
    todo: Sequence[JudgeTask],
    sink: Callable[[Judgment], None],
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    cfg = client.cfg
    counts: dict[str, int] = {}
    done = 0
    it = iter(todo)

    async def one(task: JudgeTask) -> Judgment:
        responses: tuple[tuple[Side, str], ...] = (("first", task.first), ("second", task.second))
        shown = await asyncio.to_thread(image_urls, task, cfg.max_image_side) if task_images(task) else {}
        urls = [shown[i] for i in task.images if i in shown]
        bodies = [
            fill(
                cfg.request,
                {
                    "prompt": task.prompt,
                    "response": resp,
                    "image": urls[0] if urls else "",
                    "images": urls,
                    **response_values(task.parts(side), shown),
                },
            )
            for side, resp in responses
        ]
        (s1, raw1, e1), (s2, raw2, e2) = await asyncio.gather(*(client.score(b) for b in bodies))
        raw = json.dumps({"first": raw1, "second": raw2}, ensure_ascii=False)
        prompt = json.dumps({"first": _short(bodies[0]), "second": _short(bodies[1])}, ensure_ascii=False)
        if s1 is None or s2 is None:  # a score is missing only with its error
            err = "; ".join(f"{side}: {e}" for side, e in (("first", e1), ("second", e2)) if e)
            return Judgment(task.pair_id, "forward", 0, None, "error", raw, prompt, s1, s2, error=err)
        verdict: Preference = "first" if s1 > s2 else "second" if s2 > s1 else "tie"
        return Judgment(task.pair_id, "forward", 0, verdict, "parsed", raw, prompt, s1, s2)

    async def worker() -> None:
        nonlocal done
        for task in it:
            j = await one(task)
            sink(j)
            counts[j.outcome] = counts.get(j.outcome, 0) + 1
            done += 1
            if progress:
                progress(done, len(todo))

    await asyncio.gather(*(worker() for _ in range(max(1, min(len(todo), cfg.concurrency)))))
    return counts


def _short(body: Any) -> Any:
    """The request body as stored: data URLs shortened to their hash."""
    if isinstance(body, dict):
        return {k: _short(v) for k, v in body.items()}
    if isinstance(body, list):
        return [_short(v) for v in body]
    if isinstance(body, str) and body.startswith("data:"):
        return f"<image sha256={hex_hash(body, n=16)}>"
    return body


def require_response_images(tasks: Sequence[JudgeTask], cfg: RewardModelConfig) -> None:
    """Refuse a dataset whose responses have images when the request cannot send them."""
    with_images = [t.pair_id for t in tasks if t.has_response_images]
    if with_images and not names_any(cfg.request, RESPONSE_IMAGES):
        raise MmrbError(
            f"reward model {cfg.name!r}: {plural(len(with_images), 'pair')} ({with_images[0]}"
            f"{', ...' if len(with_images) > 1 else ''}) {'has' if len(with_images) == 1 else 'have'} responses with "
            'images, and its [request] sends no response images: add response_images = "{response_images}" '
            '(a list of data URLs) or response_content = "{response_content}" (OpenAI-style content parts)'
        )


def run_reward_model(
    store: Store,
    tasks: Sequence[JudgeTask],
    cfg: RewardModelConfig,
    *,
    run_id: str | None = None,
    dataset: RunDataset = NO_DATASET,
    retry_errors: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> RunSummary:
    identity = with_response_images(cfg.identity(), tasks)
    run_id = run_id or default_run_id(cfg.name, identity, dataset)
    require_response_images(tasks, cfg)
    require_images(tasks, cfg.allow_missing_images)
    ensure_run(store, run_id, purpose="evaluate", judge=cfg.name, identity=identity, dataset=dataset)
    stored = store.judgment_outcomes(run_id)
    todo = [t for t in tasks if (o := stored.get((t.pair_id, "forward", 0))) is None or (retry_errors and o == "error")]
    summary = RunSummary(run_id, planned=len(tasks), already_stored=len(tasks) - len(todo), judge=cfg.name)
    execute(
        store,
        summary,
        stored,
        len(todo),
        lambda: RewardClient(cfg),
        lambda client, sink: score_pairs(client, todo, sink, progress),
    )
    return finish_run(store, summary, [(t.pair_id, "forward", 0) for t in tasks])
