"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` with scripted answers, a
configurable latency and faults (429 with Retry-After, 500, hang, malformed JSON, dropped
connection), and records every request it received so that a test can assert how often a
key was sent.

Written on asyncio streams (HTTP/1.1 with keep-alive, Content-Length bodies only, which is
what httpx/openai send): no dependency, full control over faults at the socket level (a real
dropped connection, a real hang), and one event loop easily holds hundreds of connections
(the sampling benchmark needs ~100 concurrent requests at 480 req/s).

In a test::

    with FakeOpenAI(answer=lambda req: "Answer: C", latency=0.05) as srv:
        endpoint = Endpoint(base_url=srv.url, model="m")
        ...
        assert srv.count(model="m") == 3

``answer`` is a function of the Request returning a str, a Reply (text + usage) or a Fault.

As a separate process (benchmarks; the server's CPU then is not the client's)::

    python tests/support/fake_openai.py --latency 0.2 --log requests.jsonl
    # prints "http://127.0.0.1:PORT/v1" on its first line, then serves until killed
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

FaultKind = Literal["429", "500", "hang", "malformed", "drop"]


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    retry_after: float | None = None  # for 429 (seconds, sent as the Retry-After header)
    status: int | None = None  # override the status of "500" (e.g. 503)


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    # sent as the message's content instead of ``text`` (a list of parts, as omni models
    # answer with text and image_url data URLs); ``images``: sent as ``message.images``
    content: Any = None
    images: Any = None


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = field(default_factory=time.time)

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def key(self) -> str | None:
        """The client's request id header, if it sent one."""
        return self.headers.get("x-client-request-id")

    @property
    def prompt_text(self) -> str:
        """The text parts of the last user message."""
        for msg in reversed(self.body.get("messages") or []):
            if msg.get("role") == "user":
                c = msg.get("content")
                if isinstance(c, str):
                    return c
                return "\n".join(p.get("text", "") for p in c or [] if p.get("type") == "text")
        return ""

    @property
    def images(self) -> list[str]:
        out = []
        for msg in self.body.get("messages") or []:
            c = msg.get("content")
            if isinstance(c, list):
                out += [p["image_url"]["url"] for p in c if p.get("type") == "image_url"]
        return out


def echo_answer(req: Request) -> str:
    return f"[{req.model}] {req.prompt_text}"


def faults_then(faults: list[Fault], answer: Callable[[Request], Any] = echo_answer, *, per: str = "prompt"):
    """An answer function that gives ``faults`` in turn to each new prompt (or key, or model)
    before answering normally: e.g. ``faults_then([Fault("429", retry_after=1)])``."""
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def fn(req: Request):
        ident = {"prompt": req.prompt_text, "key": req.key or "", "model": req.model or ""}[per]
        with lock:
            n = seen[ident]
            seen[ident] += 1
        return faults[n] if n < len(faults) else answer(req)

    return fn


_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


class FakeOpenAI:
    def __init__(
        self,
        answer: Callable[[Request], str | Reply | Fault] = echo_answer,
        *,
        latency: float | Callable[[Request], float] = 0.0,
        models: tuple[str, ...] = (),
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | None = None,
    ):
        self.answer = answer
        self.latency = latency
        self.models = models
        self.host = host
        self.port = port
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._log = open(log_path, "a", buffering=1) if log_path else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._thread: threading.Thread | None = None
        self.in_flight = 0
        self.max_in_flight = 0

    # -- lifecycle -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        ready = threading.Event()

        def run():
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._start())
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, backlog=1024, limit=2**24)
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        if self._loop is None:
            return

        server, thread = self._server, self._thread

        async def shutdown():
            if server is not None:
                server.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.sleep(0)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if thread is not None:
            thread.join(10)
        self._loop = None
        if self._log:
            self._log.close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- what was received ---------------------------------------------------------------
    def chat_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def count(self, *, model: str | None = None, key: str | None = None, prompt: str | None = None) -> int:
        return sum(
            1
            for r in self.chat_requests()
            if (model is None or r.model == model)
            and (key is None or r.key == key)
            and (prompt is None or prompt in r.prompt_text)
        )

    def key_counts(self) -> Counter[str | None]:
        return Counter(r.key for r in self.chat_requests())

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- HTTP ----------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # the server runs each connection as a task
        self._tasks.add(task)
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                try:
                    method, target, _ = line.decode("latin-1").split(" ", 2)
                except ValueError:
                    return
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length", "0") or 0)
                raw = await reader.readexactly(n) if n else b""
                keep = await self._handle(method, target.split("?")[0], headers, raw, writer)
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:
            writer.transport.abort()
            raise
        finally:
            self._tasks.discard(task)
            if not writer.transport.is_closing():
                writer.close()

    async def _handle(self, method: str, path: str, headers: dict, raw: bytes, writer) -> bool:
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            return await self._send(
                writer, 400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}}
            )
        req = Request(method, path, headers, body if isinstance(body, dict) else {})
        with self._lock:
            self.requests.append(req)
        if self._log:
            self._log.write(json.dumps({"t": req.received_at, "path": path, "model": req.model, "key": req.key}) + "\n")
        if method == "GET" and path.endswith("/models"):
            names = self.models  # empty by default: "cannot tell", so any model name is accepted
            return await self._send(
                writer,
                200,
                {
                    "object": "list",
                    "data": [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in names],
                },
            )
        if method != "POST" or not path.endswith("/chat/completions"):
            return await self._send(
                writer, 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}}
            )

        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            delay = self.latency(req) if callable(self.latency) else self.latency
            if delay:
                await asyncio.sleep(delay)
            out = self.answer(req)
        finally:
            self.in_flight -= 1
        if isinstance(out, Fault):
            return await self._fault(out, writer)
        if isinstance(out, str):
            out = Reply(out)
        pt = out.prompt_tokens if out.prompt_tokens is not None else len(req.prompt_text.split())
        ct = out.completion_tokens if out.completion_tokens is not None else len(out.text.split())
        return await self._send(
            writer,
            200,
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": req.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": out.text if out.content is None else out.content,
                            **({"images": out.images} if out.images is not None else {}),
                        },
                        "finish_reason": out.finish_reason,
                    }
                ],
                "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
            },
        )

    async def _fault(self, f: Fault, writer) -> bool:
        if f.kind == "429":
            extra = {"retry-after": f"{f.retry_after:g}"} if f.retry_after is not None else {}
            return await self._send(writer, 429, {"error": {"message": "rate limited", "type": "rate_limit"}}, extra)
        if f.kind == "500":
            return await self._send(
                writer, f.status or 500, {"error": {"message": "server error", "type": "server_error"}}
            )
        if f.kind == "malformed":
            return await self._send(writer, 200, None, raw=b'{"id": "x", "choices": [{"message": ')
        if f.kind == "drop":
            writer.transport.abort()
            return False
        if f.kind == "hang":
            await asyncio.sleep(3600)
            return False
        raise ValueError(f"unknown fault {f.kind!r}")

    @staticmethod
    async def _send(writer, status: int, obj: Any, extra: dict | None = None, raw: bytes | None = None) -> bool:
        data = raw if raw is not None else json.dumps(obj).encode()
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "content-type: application/json",
            f"content-length: {len(data)}",
            "connection: keep-alive",
        ]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
        await writer.drain()
        return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="fake OpenAI-compatible server (echo answers)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--log", default=None, help="append one JSON line per request to this file")
    args = ap.parse_args(argv)
    srv = FakeOpenAI(latency=args.latency, port=args.port, log_path=args.log).start()
    print(srv.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
