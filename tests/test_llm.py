from __future__ import annotations

import asyncio
import base64
import io
import random
import socket
import time
from email.utils import formatdate

import pytest
from PIL import Image

from curate.errors import MmrbError
from curate.llm import (
    Endpoint,
    LLMClient,
    backoff_delay,
    content_parts,
    encode_image,
    openai_content,
    retry_after_seconds,
    user_message,
)
from curate.model import Part
from tests.support.fake_openai import FakeOpenAI, Fault, Reply, faults_then


@pytest.fixture
def server():
    with FakeOpenAI() as srv:
        yield srv


class Sleeps:
    """Records backoff delays instead of waiting them."""

    def __init__(self):
        self.delays: list[float] = []

    async def __call__(self, d: float) -> None:
        self.delays.append(d)
        await asyncio.sleep(0)


def run(coro):
    return asyncio.run(coro)


def ask(endpoint: Endpoint, prompt="q", sleep=None, **kw):
    async def go():
        async with LLMClient(endpoint, sleep=sleep or Sleeps(), rng=random.Random(0)) as c:
            return await c.complete([user_message(prompt)], **kw)

    return run(go())


def _png(size, mode="RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size, (10, 20, 30) if mode == "RGB" else (10, 20, 30, 40)).save(buf, "PNG")
    return buf.getvalue()


def _decode(url: str) -> Image.Image:
    head, b64 = url.split(",", 1)
    return Image.open(io.BytesIO(base64.b64decode(b64)))


# -- images --------------------------------------------------------------------------------
def test_large_image_resized_to_max_side():
    buf = io.BytesIO()
    Image.new("RGB", (3000, 1500), "red").save(buf, "JPEG")
    url = encode_image(buf.getvalue(), max_side=1024)
    assert url.startswith("data:image/jpeg;base64,")
    assert _decode(url).size == (1024, 512)


def test_small_image_sent_unchanged_and_alpha_kept():
    data = _png((40, 30))
    url = encode_image(data, max_side=1024)
    assert base64.b64decode(url.split(",", 1)[1]) == data
    big_alpha = encode_image(_png((2000, 100), "RGBA"), max_side=500)
    assert big_alpha.startswith("data:image/png") and _decode(big_alpha).size == (500, 25)
    assert _decode(encode_image(data, max_side=None)).size == (40, 30)


def test_user_message_shapes():
    assert user_message("hi") == {"role": "user", "content": "hi"}
    m = user_message("hi", ["data:image/png;base64,AA"])
    assert m["content"][0]["type"] == "image_url" and m["content"][-1] == {"type": "text", "text": "hi"}


def test_openai_content_is_the_edge_of_parts():
    url = "data:image/png;base64,AA"
    parts = (Part.of_text("see"), Part.of_image("a.png"), Part.of_image(url))
    out = openai_content(parts, {"a.png": url})
    assert out == [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": {"url": url}},  # its URL as sent
        {"type": "image_url", "image_url": {"url": url}},  # no URL given: its value
    ]
    # an answer's content reads back as the parts it was made of
    assert content_parts(out) == ((Part.of_text("see"), Part.of_image(url), Part.of_image(url)), None)
    assert content_parts("hi", [out[1]]) == ((Part.of_text("hi"), Part.of_image(url)), None)


# -- retry policy --------------------------------------------------------------------------
def test_retry_after_parsing():
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    future = formatdate(time.time() + 30, usegmt=True)
    assert 25 < retry_after_seconds({"retry-after": future}) <= 31


def test_backoff_exponential_capped_with_jitter():
    ep = Endpoint(base_url="x", model="m", backoff_base=1.0, backoff_max=8.0)
    rng = random.Random(1)
    for attempt, full in [(1, 1), (2, 2), (3, 4), (4, 8), (5, 8), (9, 8)]:
        d = [backoff_delay(attempt, ep, None, rng) for _ in range(50)]
        assert all(full * 0.5 <= x <= full for x in d)
        assert max(d) - min(d) > 0  # jittered
    assert 5.0 <= backoff_delay(1, ep, 5.0, rng) <= 5.1  # Retry-After wins
    assert backoff_delay(1, ep, 10_000, rng) <= 121  # capped


# -- against the loopback server -------------------------------------------------------------
def test_ok_with_usage_image_and_request_id(server):
    server.answer = lambda req: Reply("Answer: B", prompt_tokens=11, completion_tokens=2)
    ep = Endpoint(base_url=server.url, model="m1", params={"temperature": 0.7, "max_tokens": 64})

    async def go():
        async with LLMClient(ep) as c:
            msg = user_message("what?", [encode_image(_png((8, 8)))])
            return await c.complete([msg], request_id="it1/m1/0")

    r = run(go())
    assert r.ok and r.text == "Answer: B" and (r.prompt_tokens, r.completion_tokens) == (11, 2)
    assert r.attempts == 1 and r.error is None
    (req,) = server.chat_requests()
    assert req.key == "it1/m1/0" and req.model == "m1"
    assert req.body["temperature"] == 0.7 and req.body["max_tokens"] == 64
    assert req.images[0].startswith("data:image/png;base64,") and req.prompt_text == "what?"


def test_429_honours_retry_after(server):
    server.answer = faults_then([Fault("429", retry_after=2)], lambda r: "ok")
    sleeps = Sleeps()
    r = ask(Endpoint(base_url=server.url, model="m"), sleep=sleeps)
    assert r.ok and r.attempts == 2 and server.count() == 2
    assert len(sleeps.delays) == 1 and 2.0 <= sleeps.delays[0] <= 2.2


def test_500_then_ok_backs_off_exponentially(server):
    server.answer = faults_then([Fault("500"), Fault("500", status=503)], lambda r: "ok")
    sleeps = Sleeps()
    r = ask(Endpoint(base_url=server.url, model="m", backoff_base=1.0), sleep=sleeps)
    assert r.ok and r.attempts == 3 and server.count() == 3
    assert 0.5 <= sleeps.delays[0] <= 1.0 and 1.0 <= sleeps.delays[1] <= 2.0


@pytest.mark.parametrize("kind", ["malformed", "drop"])
def test_malformed_and_dropped_are_retried(server, kind):
    server.answer = faults_then([Fault(kind)], lambda r: "fine")
    r = ask(Endpoint(base_url=server.url, model="m"))
    assert r.ok and r.text == "fine" and r.attempts == 2 and server.count() == 2


def test_hang_times_out_and_becomes_failure(server):
    server.answer = lambda r: Fault("hang")
    t0 = time.perf_counter()
    r = ask(Endpoint(base_url=server.url, model="m", timeout=0.3, max_retries=1))
    assert not r.ok and r.attempts == 2 and "timeout" in r.error and "after 2 attempts" in r.error
    assert server.count() == 2 and time.perf_counter() - t0 < 5


def test_persistent_failure_is_a_value_not_an_exception(server):
    server.answer = lambda r: Fault("500")
    r = ask(Endpoint(base_url=server.url, model="m", max_retries=3))
    assert not r.ok and r.attempts == 4 and r.error.startswith("HTTP 500: server error")
    assert server.count() == 4


def test_client_errors_are_not_retried(server):
    server.answer = lambda r: Fault("500", status=400)
    r = ask(Endpoint(base_url=server.url, model="m"))
    assert not r.ok and r.attempts == 1 and r.error.startswith("HTTP 400") and server.count() == 1


def test_concurrency_limit_per_endpoint(server):
    server.latency = 0.05
    ep = Endpoint(base_url=server.url, model="m", concurrency=3)

    async def go():
        async with LLMClient(ep) as c:
            return await asyncio.gather(*(c.complete([user_message(f"q{i}")]) for i in range(15)))

    res = run(go())
    assert all(r.ok for r in res) and server.max_in_flight == 3


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_endpoint():
    ep = Endpoint(base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="m", name="far", max_retries=3)
    sleeps = Sleeps()
    r = ask(ep, sleep=sleeps)
    # refused before it ever answered: a server not started or a wrong URL, which no wait mends
    assert not r.ok and r.error.startswith("connection error") and r.attempts == 1 and sleeps.delays == []
    assert r.error.endswith("(not retried: it has never answered)")

    async def check():
        async with LLMClient(ep) as c:
            await c.list_models()

    with pytest.raises(MmrbError, match=r"cannot reach model 'far' at http://127.0.0.1:\d+/v1"):
        run(check())


def test_a_refusal_after_an_answer_is_retried_and_unreachable_says_which():
    srv = FakeOpenAI(lambda r: "fine").start()
    ep = Endpoint(base_url=srv.url, model="m", max_retries=2)
    sleeps = Sleeps()

    async def go():
        async with LLMClient(ep, sleep=sleeps, rng=random.Random(0)) as c:
            first = await c.complete([user_message("q")])
            srv.stop()  # the server goes away mid-run (a restart): worth the retries
            second = await c.complete([user_message("q")])
            return first, second, c.unreachable

    first, second, unreachable = run(go())
    assert first.ok and not second.ok and second.attempts == 3 and len(sleeps.delays) == 2
    assert "connection error" in (second.error or "") and not unreachable

    async def dead():
        async with LLMClient(Endpoint(base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="m")) as c:
            before = c.unreachable
            await c.complete([user_message("q")])
            return before, c.unreachable

    assert run(dead()) == (False, True)


def test_timeouts_and_5xx_before_any_answer_keep_their_retries(server):
    server.answer = lambda r: Fault("500", status=503)
    sleeps = Sleeps()
    r = ask(Endpoint(base_url=server.url, model="m", max_retries=2), sleep=sleeps)
    assert r.attempts == 3 and len(sleeps.delays) == 2


def test_list_models(server):
    server.models = ("a", "b")

    async def go():
        async with LLMClient(Endpoint(base_url=server.url, model="a")) as c:
            return await c.list_models()

    assert run(go()) == ["a", "b"]


def test_api_key_from_environment(server, monkeypatch):
    ep = Endpoint(base_url=server.url, model="m", api_key_env="MMRB_TEST_KEY_X")
    monkeypatch.delenv("MMRB_TEST_KEY_X", raising=False)
    with pytest.raises(MmrbError, match="MMRB_TEST_KEY_X"):
        LLMClient(ep)
    monkeypatch.setenv("MMRB_TEST_KEY_X", "sk-test-123")
    assert ask(ep).ok
    assert server.chat_requests()[0].headers["authorization"] == "Bearer sk-test-123"


def test_fake_server_holds_hundreds_of_connections(server):
    server.latency = 0.3
    ep = Endpoint(base_url=server.url, model="m", concurrency=200)

    async def go():
        async with LLMClient(ep) as c:
            return await asyncio.gather(*(c.complete([user_message(f"q{i}")]) for i in range(200)))

    res = run(go())
    assert all(r.ok for r in res) and server.max_in_flight >= 150


# -- answers that are not data: empty, oversized ------------------------------------------------
@pytest.mark.parametrize("text", ["", "  \n\t"])
def test_empty_answer_is_a_failure_not_retried(server, text):
    server.answer = lambda r: Reply(text, finish_reason="length")
    r = ask(Endpoint(base_url=server.url, model="m"))
    assert not r.ok and r.text is None and r.error == "empty response (finish_reason=length)"
    assert r.attempts == 1 and server.count() == 1


def test_answer_over_the_limit_is_a_failure_with_its_size(server):
    server.answer = lambda r: "é" * 101
    r = ask(Endpoint(base_url=server.url, model="m", max_response_chars=100))
    assert not r.ok and r.text is None and r.attempts == 1 and server.count() == 1
    assert r.error == "response of 101 characters is over the limit of 100 (max_response_chars)"
    server.answer = lambda r: "é" * 100  # at the limit: data
    assert ask(Endpoint(base_url=server.url, model="m", max_response_chars=100)).text == "é" * 100


def test_body_over_the_byte_bound_is_not_read(server):
    from curate.llm import body_limit

    server.answer = lambda r: "x" * (body_limit(1000) + 10)
    r = ask(Endpoint(base_url=server.url, model="m", max_response_chars=1000))
    assert not r.ok and r.attempts == 1
    assert r.error.startswith("response body of ") and f"over the limit of {body_limit(1000)}" in r.error


def test_chunked_body_is_cut_at_the_bound():
    """A server that announces no length: the client stops reading at the bound."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Chunked(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            chunk = b'{"choices": [{"message": {"content": "' + b"x" * 65536
            try:
                for _ in range(200):  # 13 MB if read to the end
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    chunk = b"x" * 65536
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Chunked)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        ep = Endpoint(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", model="m", max_response_chars=1000)
        r = ask(ep)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert not r.ok and r.attempts == 1 and "response body is over the limit of 71536 bytes" in r.error


def test_failures_counted_by_cause():
    from curate.model import Failure, count_failures

    def label(message: str) -> str:
        return Failure.read(message).label

    assert label("HTTP 503: busy (after 5 attempts)") == "HTTP 503"
    assert label("response of 9 characters is over the limit of 5 (max_response_chars)") == "over the size limit"
    assert label("connection error: ClientConnectorError: refused") == "connection error"
    assert label("ValueError: odd") == "ValueError" and label(None) == "unknown error"
    # a reward model's failure names the response first; it is counted by its cause
    assert Failure.read("first: timeout (after 5 attempts); second: HTTP 500: x").kind == "timeout"
    assert label("second: HTTP 502: bad gateway") == "HTTP 502"
    assert (
        count_failures(
            map(Failure.read, ["timeout", "empty response (finish_reason=stop)", "timeout (after 2 attempts)"])
        )
        == "2 timeout, 1 empty response"
    )


# -- failures as typed values ------------------------------------------------------------------
@pytest.mark.parametrize(
    "answer, settings, kind, label",
    [
        (lambda r: Fault("500", status=503), {}, "HTTP error", "HTTP 503"),
        (lambda r: Fault("500", status=400), {}, "HTTP error", "HTTP 400"),
        (lambda r: Fault("hang"), {"timeout": 0.2}, "timeout", "timeout"),
        (lambda r: Fault("malformed"), {}, "malformed response", "malformed response"),
        (lambda r: Fault("drop"), {}, "connection error", "connection error"),
        (lambda r: Reply(" "), {}, "empty response", "empty response"),
        (lambda r: "x" * 101, {"max_response_chars": 100}, "over the size limit", "over the size limit"),
        (lambda r: "x" * 80_000, {"max_response_chars": 10}, "over the size limit", "over the size limit"),
        (lambda r: Reply("", content=[{"type": "audio"}]), {}, "other", "response part 1"),
    ],
)
def test_every_failure_reads_back_as_its_kind(server, answer, settings, kind, label):
    # a failure is stored as its message (Judgment.error, SampleFailure.error): reading the
    # message back gives the kind the client made it with, and the label failures are counted by
    from curate.model import Failure

    server.answer = answer
    r = ask(Endpoint(base_url=server.url, model="m", max_retries=1, backoff_base=0.001, **settings))
    assert not r.ok and r.failure is not None and r.error == r.failure.message
    assert (r.failure.kind, r.failure.label) == (kind, label)
    assert Failure.read(r.error) == r.failure


def test_a_reply_without_choices_is_a_failure_of_its_kind():
    from curate.llm import _completion
    from curate.model import Failure

    r = _completion({"object": "chat.completion"}, 1, 0.0)
    assert not r.ok and r.failure == Failure("response has no choices", "response has no choices")
    assert Failure.read(r.error) == r.failure


def test_post_shares_the_retry_policy_and_the_size_limit(server):
    # a reward model's JSON API: the same client, retries and byte bound as a chat endpoint
    server.answer = faults_then([Fault("500")], lambda r: "ok")
    ep = Endpoint(base_url=server.url + "/chat/completions", model="", backoff_base=0.001)

    async def post(limit: int):
        async with LLMClient(ep, sleep=Sleeps()) as c:
            return await c.post({"messages": [{"role": "user", "content": "hi"}]}, limit=limit, request_id="k1")

    r = run(post(10_000))
    assert r.ok and r.attempts == 2 and r.data["choices"][0]["message"]["content"] == "ok"
    assert r.text is not None and r.text.startswith("{") and server.chat_requests()[-1].key == "k1"
    small = run(post(10))
    assert not small.ok and small.failure.kind == "over the size limit" and small.attempts == 1
    assert "over the limit of 10 (max_response_chars" in small.failure.message
