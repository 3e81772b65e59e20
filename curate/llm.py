"""One client for every OpenAI-compatible endpoint (hosted APIs, vLLM, SGLang, Ollama):
used by ``sample``, ``select`` and the judge evaluator.

It speaks the chat-completions wire format directly over ``aiohttp``. Not through
``AsyncOpenAI`` or httpx: on 2 cores the client's own CPU per request is what limits
``sample`` (480 requests/s in bench/sample.py), and it measured 2.4-2.9 ms per request through
``AsyncOpenAI`` (even on its low-level ``post``), 1.6-2.8 ms with httpx2 alone and 5 ms with
httpx 0.28, against a fraction of that with aiohttp. The wire format is
the small, stable part of the API: POST ``{base_url}/chat/completions`` with a bearer key,
``choices[0].message.content`` and ``usage`` back. The retry policy is ours, in one place,
and testable:

* retried: 429, 408, 409, 5xx, timeouts, dropped or refused connections, and a 200 whose body
  is not valid JSON (a truncated response from a proxy);
* exponential backoff ``base * 2**(attempt-1)`` capped at ``backoff_max``, with full jitter
  in [50%, 100%]; a ``Retry-After`` / ``retry-after-ms`` header, when sent, is honoured instead
  (capped at ``RETRY_AFTER_CAP``);
* anything else (400, 401, 404, ...) fails at once;
* an answer that is empty, or longer than ``max_response_chars`` (its body is not even read
  past the matching byte bound), is a failure with its reason, not text: it is not retried
  within the run, a rerun asks again;
* an answer whose ``content`` is a list of parts (text and ``image_url`` data URLs, as omni
  models that draw send it; images listed in ``message.images`` too) keeps them in order in
  ``Completion.parts``; its ``text`` is the text parts joined;
* a request that still fails becomes a ``Completion`` with ``ok=False`` and its error: it never
  raises, so one bad request never aborts a run.

Concurrency is limited per endpoint by a semaphore around each attempt (not around the
backoff sleeps, so a request waiting to retry does not hold a slot); ``timeout`` bounds each
attempt as a whole (connect, send, wait and read).
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import io
import json
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from .errors import MmrbError
from .wording import plural

RETRY_AFTER_CAP = 120.0
RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
# Longest answer taken as data (characters). Generous for reasoning judges (~50k tokens);
# a runaway or hostile endpoint's megabytes are a failure, never stored.
DEFAULT_MAX_RESPONSE_CHARS = 200_000


def body_limit(max_chars: int) -> int:
    """Bytes of a JSON body that can hold ``max_chars`` characters of text: each may take
    up to 6 bytes escaped (``\\uXXXX``), plus the envelope."""
    return 6 * max_chars + 65_536


class ResponseTooLarge(Exception):
    """A body longer than the limit; raised before the rest of it is read."""


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible model endpoint and how to call it."""

    base_url: str
    model: str
    name: str = ""  # how results are labelled in the store (default: model)
    api_key_env: str | None = None  # name of the environment variable holding the key
    params: Mapping[str, Any] = field(default_factory=dict)  # temperature, max_tokens, top_p, seed, ...
    concurrency: int = 8
    timeout: float = 120.0  # seconds per attempt
    max_retries: int = 4  # retries after the first attempt
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS  # longer answers are failures

    @property
    def label(self) -> str:
        return self.name or self.model

    def api_key(self) -> str:
        if not self.api_key_env:
            return "EMPTY"  # local servers (vLLM, Ollama) accept any key; the client needs one
        key = os.environ.get(self.api_key_env)
        if not key:
            raise MmrbError(
                f"model {self.label!r}: environment variable {self.api_key_env} (its api_key_env) is not set"
            )
        return key


@dataclass(frozen=True)
class Completion:
    """The outcome of one request after its retries: a text, or a failure with its error."""

    ok: bool
    text: str | None = None  # with parts: the text parts joined
    error: str | None = None
    attempts: int = 1
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    seconds: float = 0.0
    # an answer given as a list of parts with an image among them: ("text", text) and
    # ("image", data URL) in order (empty: the answer is ``text`` alone)
    parts: tuple[tuple[str, str], ...] = ()


# -- images --------------------------------------------------------------------------------
_PASS_THROUGH = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}


def encode_image(data: bytes, max_side: int | None = 1024) -> str:
    """Image bytes -> a base64 data URL, downscaled so its longest side is at most
    ``max_side``. Images already small enough in a format every server reads are sent as
    they are (no re-encoding loss)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        fmt = im.format or ""
        if (max_side is None or max(im.size) <= max_side) and fmt in _PASS_THROUGH:
            return f"data:{_PASS_THROUGH[fmt]};base64,{base64.b64encode(data).decode()}"
        im.load()
        if max_side is not None and max(im.size) > max_side:
            im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        if im.mode in ("RGBA", "LA", "P") or fmt == "PNG":
            im.save(buf, "PNG", optimize=False)
            mime = "image/png"
        else:
            im.convert("RGB").save(buf, "JPEG", quality=90)
            mime = "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode()}"


@lru_cache(maxsize=64)  # the same image goes to every model of a run, one after the other
def image_data_url(path: str | Path, max_side: int | None = 1024) -> str:
    return encode_image(Path(path).read_bytes(), max_side)


def user_message(prompt: str, image_urls: Sequence[str] = ()) -> dict:
    if not image_urls:
        return {"role": "user", "content": prompt}
    parts: list[dict] = [{"type": "image_url", "image_url": {"url": u}} for u in image_urls]
    parts.append({"type": "text", "text": prompt})
    return {"role": "user", "content": parts}


# -- retry policy --------------------------------------------------------------------------
def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds asked for by ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Backoff(Protocol):
    """What the backoff needs of a client's settings (an ``Endpoint``, a reward model's config)."""

    @property
    def backoff_base(self) -> float: ...

    @property
    def backoff_max(self) -> float: ...


def backoff_delay(attempt: int, ep: Backoff, retry_after: float | None, rng: random.Random) -> float:
    """Delay before retry number ``attempt`` (1-based)."""
    if retry_after is not None:
        return min(retry_after, RETRY_AFTER_CAP) + rng.uniform(0, 0.1 * ep.backoff_base)
    return min(ep.backoff_max, ep.backoff_base * 2 ** (attempt - 1)) * rng.uniform(0.5, 1.0)


def classify(exc: BaseException) -> tuple[bool, str, float | None]:
    """(retryable, message, retry_after) for an exception raised by one attempt."""
    import aiohttp

    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return True, "timeout", None
    if isinstance(exc, (aiohttp.ClientError, ConnectionError)):  # refused, reset, closed without a response
        return True, f"connection error: {exc.__class__.__name__}: {exc}".rstrip(": "), None
    if isinstance(exc, ValueError):  # JSONDecodeError and friends: a malformed body
        return True, f"malformed response: {exc}", None
    return False, f"{exc.__class__.__name__}: {exc}", None


def _error_message(content: bytes) -> str:
    try:
        body = json.loads(content)
    except ValueError:
        return content.decode("utf-8", "replace").strip()[:300] or "(empty body)"
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(body)[:300]


def failure_kind(error: str | None) -> str:
    """A short name for a failure message, to count failures by cause."""
    e = error or "unknown error"
    if "over the limit" in e:
        return "over the size limit"
    for kind in ("empty response", "timeout", "connection error", "malformed response", "response has no choices"):
        if e.startswith(kind):
            return kind
    return e.split(":", 1)[0][:40]  # "HTTP 500", "ValueError", ...


def count_kinds(errors: Sequence[str | None]) -> str:
    """ "5 over the size limit, 1 empty response": failures by cause, most frequent first."""
    from collections import Counter

    return ", ".join(f"{n} {k}" for k, n in Counter(failure_kind(e) for e in errors).most_common())


# -- the client ----------------------------------------------------------------------------
class LLMClient:
    """Calls one endpoint; ``complete`` never raises for request failures."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: random.Random | None = None,
    ):
        self.endpoint = endpoint
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._sem: asyncio.Semaphore | None = None
        self._session: Any = None  # made on first use: aiohttp wants a running event loop
        root = endpoint.base_url.rstrip("/")
        self._chat_url = root + "/chat/completions"
        self._models_url = root + "/models"
        self._headers = {
            "authorization": f"Bearer {endpoint.api_key()}",
            "content-type": "application/json",
            "user-agent": "mmrb-studio",
        }

    def _http(self) -> Any:
        import aiohttp

        if self._session is None:
            n = max(1, self.endpoint.concurrency)
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                connector=aiohttp.TCPConnector(limit=n, limit_per_host=n),
                timeout=aiohttp.ClientTimeout(total=None),  # each attempt is bounded by asyncio.timeout
            )
        return self._session

    async def _request(
        self, method: str, url: str, limit: int | None = None, **kw: Any
    ) -> tuple[int, Mapping[str, str], bytes]:
        async with self._http().request(method, url, **kw) as resp:
            if limit is None or (resp.content_length is not None and resp.content_length <= limit):
                return resp.status, resp.headers, await resp.read()
            if resp.content_length is not None:
                raise ResponseTooLarge(
                    f"response body of {plural(resp.content_length, 'byte')} is over the limit of {limit}"
                )
            buf = bytearray()  # no length announced (chunked): read up to the limit only
            async for chunk in resp.content.iter_any():
                buf += chunk
                if len(buf) > limit:
                    raise ResponseTooLarge(f"response body is over the limit of {plural(limit, 'byte')}")
            return resp.status, resp.headers, bytes(buf)

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(max(1, self.endpoint.concurrency))
        return self._sem

    async def complete(
        self,
        messages: list[dict],
        *,
        params: Mapping[str, Any] | None = None,
        request_id: str | None = None,
    ) -> Completion:
        ep = self.endpoint
        body = {**ep.params, **(params or {}), "model": ep.model, "messages": messages}
        content = json.dumps(body, ensure_ascii=False).encode()
        headers = {"x-client-request-id": request_id} if request_id else None
        limit = body_limit(ep.max_response_chars)
        t0 = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            retry_after = None
            try:
                async with self.semaphore:
                    async with asyncio.timeout(ep.timeout):
                        status, resp_headers, body_bytes = await self._request(
                            "POST", self._chat_url, limit, data=content, headers=headers
                        )
                if status < 400:
                    return _completion(json.loads(body_bytes), attempt, time.perf_counter() - t0, ep.max_response_chars)
                retryable = status in RETRY_STATUS
                msg = f"HTTP {status}: {_error_message(body_bytes)}"
                retry_after = retry_after_seconds(resp_headers)
            except asyncio.CancelledError:
                raise
            except ResponseTooLarge as e:  # the same request would get the same answer
                retryable, msg = False, f"{e} (max_response_chars {ep.max_response_chars})"
            except Exception as e:  # every failure of one attempt is classified, none escapes
                retryable, msg, _ = classify(e)
            if not retryable or attempt > ep.max_retries:
                tail = f" (after {attempt} attempts)" if attempt > 1 else ""
                return Completion(ok=False, error=msg + tail, attempts=attempt, seconds=time.perf_counter() - t0)
            await self._sleep(backoff_delay(attempt, ep, retry_after, self._rng))

    async def list_models(self, timeout: float = 10.0) -> list[str]:
        """The server's model ids; raises MmrbError naming the endpoint when unreachable or
        when it refuses the key. An empty list means the server cannot tell."""
        where = f"model {self.endpoint.label!r} at {self.endpoint.base_url}"
        try:
            async with asyncio.timeout(timeout):
                status, _, body_bytes = await self._request("GET", self._models_url)
        except Exception as e:
            _, msg, _ = classify(e)
            raise MmrbError(f"cannot reach {where}: {msg}") from None
        if status in (401, 403):
            raise MmrbError(f"{where} refused the API key: HTTP {status}: {_error_message(body_bytes)}")
        if status >= 400:
            return []  # some servers have no /models: not a reason to stop
        try:
            data = json.loads(body_bytes).get("data") or []
            return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
        except (ValueError, AttributeError):
            return []

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


def _completion(resp: Any, attempts: int, seconds: float, max_chars: int = DEFAULT_MAX_RESPONSE_CHARS) -> Completion:
    choices = resp.get("choices") if isinstance(resp, dict) else None
    if not choices or not isinstance(choices[0], dict):
        return Completion(ok=False, error="response has no choices", attempts=attempts, seconds=seconds)
    choice = choices[0]
    usage = resp.get("usage") or {}
    pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
    message = choice.get("message") or {}
    text = message.get("content")
    parts: tuple[tuple[str, str], ...] = ()
    error = None
    if isinstance(text, list) or message.get("images"):
        parts, error = content_parts(text, message.get("images"))
        text = "".join(v for kind, v in parts if kind == "text")  # the parts of one text run on
        if not any(kind == "image" for kind, _ in parts):
            parts = ()  # text parts alone: a text answer
    if error is None and (not isinstance(text, str) or not text.strip()) and not parts:
        error = f"empty response (finish_reason={choice.get('finish_reason')})"
    elif error is None and isinstance(text, str) and len(text) > max_chars:
        error = f"response of {plural(len(text), 'character')} is over the limit of {max_chars} (max_response_chars)"
    if error:
        return Completion(
            ok=False, error=error, attempts=attempts, prompt_tokens=pt, completion_tokens=ct, seconds=seconds
        )
    return Completion(
        ok=True,
        text=text if isinstance(text, str) else "",
        attempts=attempts,
        prompt_tokens=pt,
        completion_tokens=ct,
        finish_reason=choice.get("finish_reason"),
        seconds=seconds,
        parts=parts,
    )


def content_parts(content: Any, images: Any = None) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """An answer's ``content`` given as a list of parts (``{"type": "text", "text": ...}``,
    ``{"type": "image_url", "image_url": {"url": "data:..."}}``), then the images some
    servers list apart in ``message.images``, as ("text", text) / ("image", data URL) in
    order; or the error that says which part cannot be read. An image must come as a data
    URL: the client fetches nothing."""
    out: list[tuple[str, str]] = []
    listed = [] if isinstance(content, str) or content is None else content
    if isinstance(content, str) and content:
        out.append(("text", content))
    if not isinstance(listed, list):
        return (), f"response content is a {type(content).__name__}, not a text or a list of parts"
    extra = images if isinstance(images, list) else []
    for n, part in enumerate([*listed, *extra]):
        where = f"response part {n + 1}"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("text", "output_text") and isinstance(part.get("text"), str):
            out.append(("text", part["text"]))
        elif kind == "image_url":
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            if not isinstance(url, str) or not url.startswith("data:image/"):
                shown = url[:60] if isinstance(url, str) else type(url).__name__
                return (), f"{where}: an image that is not a data:image/ URL ({shown!r}); only data URLs are kept"
            out.append(("image", url))
        else:
            return (), f"{where}: neither text nor an image_url ({str(kind or part)[:60]!r})"
    return tuple(out), None


__all__ = [
    "DEFAULT_MAX_RESPONSE_CHARS",
    "Backoff",
    "Completion",
    "Endpoint",
    "LLMClient",
    "backoff_delay",
    "classify",
    "content_parts",
    "count_kinds",
    "encode_image",
    "failure_kind",
    "image_data_url",
    "retry_after_seconds",
    "user_message",
]
