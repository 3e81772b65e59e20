"""One client for every model endpoint: OpenAI-compatible chat (hosted APIs, vLLM, SGLang,
Ollama), used by ``sample``, ``select`` and the judge evaluator, and any JSON API a reward
model answers on (``LLMClient.post``: the same retries, backoff and concurrency).

It speaks the chat-completions wire format directly over ``aiohttp``. Not through
``AsyncOpenAI`` or httpx: on 2 cores the client's own CPU per request is what limits
``sample`` (480 requests/s in bench/sample.py), and it measured 2.4-2.9 ms per request through
``AsyncOpenAI`` (even on its low-level ``post``), 1.6-2.8 ms with httpx2 alone and 5 ms with
httpx 0.28, against a fraction of that with aiohttp. The wire format is
the small, stable part of the API: POST ``{base_url}/chat/completions`` with a bearer key,
``choices[0].message.content`` and ``usage`` back. The retry policy is ours, in one place,
and testable:

* retried: 429, 408, 409, 5xx, timeouts, dropped or refused connections, and a 200 whose body
  is not valid JSON (a truncated response from a proxy); but a connection that cannot be made
  before the endpoint has ever answered (refused, an unknown host: a server not started, a wrong
  ``base_url``) is not retried, and ``LLMClient.unreachable`` tells the runner to stop;
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
* a request that still fails becomes a ``Completion`` with ``ok=False`` and its ``Failure``
  (curate/model.py: a kind from ``FailureKind`` and the message stored for it): it never
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
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from .configfile import YAML_SUFFIXES, read_table
from .errors import InputError, InputProblem, MmrbError
from .model import Failure, Part
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
    """A model endpoint and how to call it: an OpenAI-compatible root (``complete``), or the
    URL a JSON API answers on (``post``; ``model`` is then empty)."""

    base_url: str
    model: str
    name: str = ""  # how results are labelled in the store (default: model)
    api_key_env: str | None = None  # name of the environment variable holding the key
    params: Mapping[str, Any] = field(default_factory=dict)  # temperature, max_tokens, top_p, seed, ...
    headers: Mapping[str, str] = field(default_factory=dict)  # sent with each request (over the defaults)
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


ENDPOINT_KEYS = frozenset(f.name for f in fields(Endpoint))
# the numeric settings of an endpoint: (type, least value)
_NUMERIC: dict[str, tuple[type, float]] = {
    "concurrency": (int, 1),
    "max_retries": (int, 0),
    "timeout": (float, 0.001),
    "backoff_base": (float, 0.0),
    "backoff_max": (float, 0.0),
    "max_response_chars": (int, 1),
}
_URL = re.compile(r"^https?://[^/\s]+")


def endpoint_problems(
    entry: Mapping[str, Any], required: Sequence[str] = ("base_url", "model"), url_key: str = "base_url"
) -> list[tuple[str, str]]:
    """What is wrong with the endpoint settings of a configuration table (a models file's
    entry, a judge file), as (key, message): a required key missing or empty, a URL that is
    not http(s), a name that is not a string, params or headers that are not tables, numbers
    of the wrong type or too small. Which keys are unknown is the file's to say."""
    out: list[tuple[str, str]] = []
    for k in required:
        v = entry.get(k)
        if not isinstance(v, str) or not v.strip():
            out.append((k, "required, a non-empty string"))
    url = entry.get(url_key)
    if isinstance(url, str) and url and not _URL.match(url):
        out.append((url_key, f"{url!r} is not an http(s) URL"))
    for k in ("name", "api_key_env"):
        if k in entry and not isinstance(entry[k], str):
            out.append((k, "must be a string"))
    if "params" in entry and not isinstance(entry["params"], dict):
        out.append(("params", "must be a table of request parameters"))
    headers = entry.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        out.append(("headers", "must be a table of strings"))
    for k, (typ, low) in _NUMERIC.items():
        if k not in entry:
            continue
        v = entry[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (typ is int and not isinstance(v, int)):
            out.append((k, f"must be {'an integer' if typ is int else 'a number'}, got {v!r}"))
        elif v < low:
            out.append((k, f"must be at least {low}, got {v}"))
    return out


@dataclass(frozen=True)
class ModelEntry:
    """One entry of a models file: its table (the file's ``[defaults]`` under it), and where it is."""

    table: dict[str, Any]
    line: int | None  # best effort: TOML and YAML parsers keep no positions
    where: str  # "models[N]"


def read_models_file(path: str | Path) -> tuple[list[ModelEntry], list[InputProblem]]:
    """The entries of a models file (``mmrb sample``'s models, ``mmrb select``'s judges) and
    the problems of its shape; each entry's own keys are its reader's to check."""
    path = Path(path)
    if not path.exists():
        raise MmrbError(f"models file {path} does not exist")
    data = read_table(path, yaml_ok=True, what="models file")
    text = path.read_text(encoding="utf-8")
    fname = str(path)
    problems = [
        InputProblem(fname, None, k, "unknown top-level key (expected 'models' and optional 'defaults')")
        for k in sorted(set(data) - {"models", "defaults"})
    ]
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.append(InputProblem(fname, None, "defaults", "must be a table"))
        defaults = {}
    models = data.get("models")
    if not isinstance(models, list) or not models:
        problems.append(InputProblem(fname, None, "models", "must be a non-empty list of model tables"))
        raise InputError(problems)
    needle = "[[models]]" if path.suffix.lower() not in YAML_SUFFIXES else "base_url"
    lines = [i + 1 for i, ln in enumerate(text.splitlines()) if needle in ln and not ln.lstrip().startswith("#")]
    entries = []
    for n, raw in enumerate(models):
        line = lines[n] if n < len(lines) else None
        if not isinstance(raw, dict):
            problems.append(InputProblem(fname, line, f"models[{n}]", "must be a table"))
            continue
        entry = {**defaults, **raw}
        if isinstance(defaults.get("params"), dict) and isinstance(raw.get("params"), dict):
            entry["params"] = {**defaults["params"], **raw["params"]}
        entries.append(ModelEntry(entry, line, f"models[{n}]"))
    return entries, problems


@dataclass(frozen=True)
class Completion:
    """The outcome of one request after its retries: a text, or a failure."""

    ok: bool
    text: str | None = None  # with parts: the text parts joined
    failure: Failure | None = None
    attempts: int = 1
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    seconds: float = 0.0
    # an answer given as a list of parts with an image among them, in order, each image at
    # its data URL (empty: the answer is ``text`` alone)
    parts: tuple[Part, ...] = ()

    @property
    def error(self) -> str | None:
        """The failure's message, as stored (None for an answer)."""
        return self.failure.message if self.failure else None


@dataclass(frozen=True)
class Reply:
    """The outcome of one ``LLMClient.post`` after its retries: a JSON answer (``data``, and
    its ``body`` as it came), or a failure."""

    ok: bool
    data: Any = None
    body: bytes | None = None
    failure: Failure | None = None
    attempts: int = 1
    seconds: float = 0.0

    @property
    def text(self) -> str | None:
        return self.body.decode("utf-8", "replace") if self.body is not None else None


# -- images --------------------------------------------------------------------------------
_PASS_THROUGH = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}


def encode_image(data: bytes, max_side: int | None = 1024) -> str:
    """Image bytes -> a base64 data URL, downscaled so its longest side is at most
    ``max_side``. Images already small enough in a format every server reads are sent as
    they are (no re-encoding loss)."""
    # deferred: the commands' `--help` import this module and load no image library
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


def openai_content(parts: Iterable[Part], image_urls: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Parts as OpenAI-compatible content parts, the one place they are made: a text as a
    ``text`` part, an image as an ``image_url`` part, its URL ``image_urls[value]`` (the URL
    sent for an image as its task names it) or else its value; ``content_parts`` reads an
    answer's back."""
    urls = image_urls or {}
    return [
        {"type": "text", "text": p.value}
        if p.kind == "text"
        else {"type": "image_url", "image_url": {"url": urls.get(p.value, p.value)}}
        for p in parts
    ]


def user_message(prompt: str, image_urls: Sequence[str] = ()) -> dict:
    if not image_urls:
        return {"role": "user", "content": prompt}
    return {"role": "user", "content": openai_content([*map(Part.of_image, image_urls), Part.of_text(prompt)])}


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
    """What the backoff needs of a client's settings (an ``Endpoint``)."""

    @property
    def backoff_base(self) -> float: ...

    @property
    def backoff_max(self) -> float: ...


def backoff_delay(attempt: int, ep: Backoff, retry_after: float | None, rng: random.Random) -> float:
    """Delay before retry number ``attempt`` (1-based)."""
    if retry_after is not None:
        return min(retry_after, RETRY_AFTER_CAP) + rng.uniform(0, 0.1 * ep.backoff_base)
    return min(ep.backoff_max, ep.backoff_base * 2 ** (attempt - 1)) * rng.uniform(0.5, 1.0)


def classify(exc: BaseException) -> tuple[bool, Failure]:
    """(retryable, failure) for an exception raised by one attempt."""
    # deferred: 0.2 s to import; `--help`, the app and the scoring of files never send a request
    import aiohttp

    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return True, Failure("timeout", "timeout")
    if isinstance(exc, (aiohttp.ClientError, ConnectionError)):  # refused, reset, closed without a response
        return True, Failure("connection error", f"connection error: {exc.__class__.__name__}: {exc}".rstrip(": "))
    if isinstance(exc, ValueError):  # JSONDecodeError and friends: a malformed body
        return True, Failure("malformed response", f"malformed response: {exc}")
    return False, Failure("other", f"{exc.__class__.__name__}: {exc}")


def cannot_connect(exc: BaseException) -> bool:
    """No connection could be made at all (refused, unknown host, no route): unlike a timeout or
    a dropped connection, nothing reached a server."""
    # deferred: 0.2 s to import; `--help`, the app and the scoring of files never send a request
    import aiohttp

    return isinstance(exc, (aiohttp.ClientConnectorError, ConnectionRefusedError))


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
        # whether any request got an answer (any status), and the failure of a connection that
        # could not be made before one did: see ``unreachable``
        self.answered = False
        self.refused: Failure | None = None
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
        self._headers.update({k.lower(): v for k, v in endpoint.headers.items()})

    def _http(self) -> Any:
        # deferred: 0.2 s to import; `--help`, the app and the scoring of files never send a request
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
            self.answered = True
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
    def unreachable(self) -> bool:
        """No connection could be made and none ever answered: the endpoint is not there
        (retries would only wait), so a run stops after its first round of requests."""
        return self.refused is not None and not self.answered

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
        """A chat completion (POST ``{base_url}/chat/completions``)."""
        ep = self.endpoint
        body = {**ep.params, **(params or {}), "model": ep.model, "messages": messages}
        r = await self._send(self._chat_url, body, body_limit(ep.max_response_chars), request_id)
        if not r.ok:
            return Completion(ok=False, failure=r.failure, attempts=r.attempts, seconds=r.seconds)
        return _completion(r.data, r.attempts, r.seconds, ep.max_response_chars)

    async def post(self, body: Mapping[str, Any], *, limit: int, request_id: str | None = None) -> Reply:
        """POST a JSON body to the endpoint's URL (``base_url`` as it is) and read its JSON
        answer, under the same retry policy as ``complete``; a body longer than ``limit``
        bytes is a failure, not read further."""
        return await self._send(self.endpoint.base_url, body, limit, request_id)

    async def _send(self, url: str, body: Mapping[str, Any], limit: int, request_id: str | None) -> Reply:
        """One request with its retries: the JSON answer, or the failure of the last attempt."""
        ep = self.endpoint
        content = json.dumps(body, ensure_ascii=False).encode()
        headers = {"x-client-request-id": request_id} if request_id else None
        t0 = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            retry_after = None
            try:
                async with self.semaphore:
                    async with asyncio.timeout(ep.timeout):
                        status, resp_headers, body_bytes = await self._request(
                            "POST", url, limit, data=content, headers=headers
                        )
                if status < 400:
                    data = json.loads(body_bytes)
                    return Reply(True, data, body_bytes, None, attempt, time.perf_counter() - t0)
                retryable = status in RETRY_STATUS
                failure = Failure("HTTP error", f"HTTP {status}: {_error_message(body_bytes)}")
                retry_after = retry_after_seconds(resp_headers)
            except asyncio.CancelledError:
                raise
            except ResponseTooLarge as e:  # the same request would get the same answer
                retryable = False
                failure = Failure("over the size limit", f"{e} (max_response_chars {ep.max_response_chars})")
            except Exception as e:  # every failure of one attempt is classified, none escapes
                retryable, failure = classify(e)
                if not self.answered and cannot_connect(e):
                    retryable = False
                    failure = Failure(failure.kind, f"{failure.message} (not retried: it has never answered)")
                    self.refused = failure
            if not retryable or attempt > ep.max_retries:
                tail = f" (after {attempt} attempts)" if attempt > 1 else ""
                return Reply(
                    False,
                    failure=Failure(failure.kind, failure.message + tail),
                    attempts=attempt,
                    seconds=time.perf_counter() - t0,
                )
            await self._sleep(backoff_delay(attempt, ep, retry_after, self._rng))

    async def list_models(self, timeout: float = 10.0) -> list[str]:
        """The server's model ids; raises MmrbError naming the endpoint when unreachable or
        when it refuses the key. An empty list means the server cannot tell."""
        where = f"model {self.endpoint.label!r} at {self.endpoint.base_url}"
        try:
            async with asyncio.timeout(timeout):
                status, _, body_bytes = await self._request("GET", self._models_url)
        except Exception as e:
            raise MmrbError(f"cannot reach {where}: {classify(e)[1].message}") from None
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
        no_choices = Failure("response has no choices", "response has no choices")
        return Completion(ok=False, failure=no_choices, attempts=attempts, seconds=seconds)
    choice = choices[0]
    usage = resp.get("usage") or {}
    pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
    message = choice.get("message") or {}
    text = message.get("content")
    parts: tuple[Part, ...] = ()
    failure: Failure | None = None
    if isinstance(text, list) or message.get("images"):
        parts, error = content_parts(text, message.get("images"))
        failure = Failure("other", error) if error else None
        text = "".join(p.text for p in parts)  # the parts of one text run on
        if not any(p.kind == "image" for p in parts):
            parts = ()  # text parts alone: a text answer
    if failure is None and (not isinstance(text, str) or not text.strip()) and not parts:
        failure = Failure("empty response", f"empty response (finish_reason={choice.get('finish_reason')})")
    elif failure is None and isinstance(text, str) and len(text) > max_chars:
        failure = Failure(
            "over the size limit",
            f"response of {plural(len(text), 'character')} is over the limit of {max_chars} (max_response_chars)",
        )
    if failure:
        return Completion(
            ok=False, failure=failure, attempts=attempts, prompt_tokens=pt, completion_tokens=ct, seconds=seconds
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


def content_parts(answer: Any, images: Any = None) -> tuple[tuple[Part, ...], str | None]:
    """An answer's ``content`` given as a list of parts (``{"type": "text", "text": ...}``,
    ``{"type": "image_url", "image_url": {"url": "data:..."}}``), then the images some
    servers list apart in ``message.images``, as Parts in order (each image at its data
    URL); or the error that says which part cannot be read. An image must come as a data
    URL: the client fetches nothing."""
    out: list[Part] = []
    listed = [] if isinstance(answer, str) or answer is None else answer
    if isinstance(answer, str) and answer:
        out.append(Part.of_text(answer))
    if not isinstance(listed, list):
        return (), f"response content is a {type(answer).__name__}, not a text or a list of parts"
    extra = images if isinstance(images, list) else []
    for n, part in enumerate([*listed, *extra]):
        where = f"response part {n + 1}"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("text", "output_text") and isinstance(part.get("text"), str):
            out.append(Part.of_text(part["text"]))
        elif kind == "image_url":
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            if not isinstance(url, str) or not url.startswith("data:image/"):
                shown = url[:60] if isinstance(url, str) else type(url).__name__
                return (), f"{where}: an image that is not a data:image/ URL ({shown!r}); only data URLs are kept"
            out.append(Part.of_image(url))
        else:
            return (), f"{where}: neither text nor an image_url ({str(kind or part)[:60]!r})"
    return tuple(out), None


__all__ = [
    "DEFAULT_MAX_RESPONSE_CHARS",
    "ENDPOINT_KEYS",
    "Backoff",
    "Completion",
    "Endpoint",
    "LLMClient",
    "ModelEntry",
    "Reply",
    "backoff_delay",
    "cannot_connect",
    "classify",
    "content_parts",
    "encode_image",
    "endpoint_problems",
    "image_data_url",
    "openai_content",
    "read_models_file",
    "retry_after_seconds",
    "user_message",
]
