from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from curate.errors import InputError, MmrbError
from curate.llm import Endpoint
from curate.model import ImageRef, Item
from curate.sampling import ModelSpec, load_models, request_id, sample, stored_keys
from curate.store import Store, params_key
from tests.support.fake_openai import FakeOpenAI, Fault, faults_then

ROOT = Path(__file__).resolve().parents[1]


def png(i: int, size=(16, 12)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (i % 256, 0, 0)).save(buf, "PNG")
    return buf.getvalue()


def add_items(store, n: int, *, images: bool = True, start: int = 0, size=(16, 12)) -> list[str]:
    items, stored = [], []
    for i in range(start, start + n):
        refs = ()
        if images:
            s = store.images.put(png(i, size))
            stored.append(s)
            refs = (ImageRef(f"img{i}.png", s.sha256, "ok", s.width, s.height),)
        items.append(Item(id=f"it{i:03d}", prompt=f"question {i}", category="vqa", images=refs))
    with store.write() as conn:
        store.add_images(stored, conn=conn)
        store.add_items(items, conn=conn)
    return [i.id for i in items]


def spec(url, name="m1", samples=1, **kw) -> ModelSpec:
    kw.setdefault("concurrency", 4)
    kw.setdefault("backoff_base", 0.01)
    return ModelSpec(Endpoint(base_url=url, model=name, **kw), samples)


# -- models file -------------------------------------------------------------------------------
def test_load_toml_and_yaml(tmp_path):
    toml = tmp_path / "m.toml"
    toml.write_text(
        textwrap.dedent("""
        [defaults]
        concurrency = 3
        [defaults.params]
        max_tokens = 100
        [[models]]
        name = "a"
        base_url = "http://127.0.0.1:9/v1"
        model = "org/a"
        samples = 2
        [models.params]
        temperature = 0.5
        [[models]]
        base_url = "http://127.0.0.1:9/v1"
        model = "b"
        concurrency = 7
        api_key_env = "B_KEY"
    """)
    )
    a, b = load_models(toml)
    assert (a.label, a.samples, a.endpoint.concurrency, dict(a.endpoint.params)) == (
        "a",
        2,
        3,
        {"max_tokens": 100, "temperature": 0.5},
    )
    assert (b.label, b.endpoint.concurrency, b.endpoint.api_key_env, dict(b.endpoint.params)) == (
        "b",
        7,
        "B_KEY",
        {"max_tokens": 100},
    )
    yml = tmp_path / "m.yaml"
    yml.write_text("models:\n  - base_url: http://127.0.0.1:9/v1\n    model: y\n    params: {temperature: 0}\n")
    (y,) = load_models(yml)
    assert y.label == "y" and y.params_key == params_key({"temperature": 0})


def test_sample_models_file_is_valid():
    specs = load_models(ROOT / "data" / "sample" / "models.toml")
    assert len(specs) >= 2 and all(s.endpoint.base_url.startswith("http://127.0.0.1") for s in specs)


@pytest.mark.parametrize(
    "body,expect",
    [
        ('[[models]]\nmodel = "a"\n', r"m.toml:1 field 'models\[0\].base_url': required"),
        ('[[models]]\nbase_url = "ftp://x"\nmodel = "a"\n', r"field 'models\[0\].base_url': 'ftp://x' is not an http"),
        (
            '[[models]]\nbase_url = "http://x/v1"\nmodel = "a"\nconcurrency = 0\n',
            r"models\[0\].concurrency': must be at least 1",
        ),
        (
            '[[models]]\nbase_url = "http://x/v1"\nmodel = "a"\nsamples = "2"\n',
            r"models\[0\].samples': must be an integer",
        ),
        (
            '[[models]]\nbase_url = "http://x/v1"\nmodel = "a"\ntemprature = 1\n',
            r"models\[0\].temprature': unknown key",
        ),
        (
            '[[models]]\nbase_url = "http://x/v1"\nmodel = "a"\n[[models]]\nbase_url = "http://y/v1"\nmodel = "a"\n',
            r"m.toml:4 field 'models\[1\].name': model label 'a' is used twice",
        ),
        ("models = []\n", r"field 'models': must be a non-empty list"),
        ("[[models]\nbase_url = 1\n", r"m.toml:1: not valid TOML"),
        ('[[models]]\nbase_url = "http://x/v1"\nmodel = "a"\nparams = 3\n', r"models\[0\].params': must be a table"),
    ],
)
def test_bad_models_files(tmp_path, body, expect):
    f = tmp_path / "m.toml"
    f.write_text(body)
    with pytest.raises(InputError, match=expect):
        load_models(f)


def test_bad_yaml_and_missing_file(tmp_path):
    f = tmp_path / "m.yml"
    f.write_text("models:\n  - base_url: [\n")
    with pytest.raises(InputError, match=r"m.yml:\d+: not valid YAML"):
        load_models(f)
    with pytest.raises(MmrbError, match="does not exist"):
        load_models(tmp_path / "nope.toml")


# -- sampling ----------------------------------------------------------------------------------
def test_sample_stores_every_response_and_resumes(store):
    add_items(store, 3)
    with FakeOpenAI(answer=lambda r: f"{r.model} says {r.prompt_text}") as srv:
        specs = [spec(srv.url, "m1", samples=2, params={"temperature": 0.7, "seed": 5}), spec(srv.url, "m2")]
        rep = sample(store, specs)
        assert rep.done == 9 and rep.failed == 0 and not rep.interrupted
        assert srv.count() == 9 and srv.count(model="m1") == 6
        cands = store.candidates()
        assert len(cands) == 9
        c = next(c for c in cands if c.model == "m1" and c.item_id == "it001" and c.sample_index == 1)
        assert c.text == "m1 says question 1" and c.params == {"temperature": 0.7, "seed": 5}
        assert c.prompt_tokens == 2 and c.completion_tokens == 4
        # every request carried the image as a data URL and its key; sample 1 got seed + 1
        reqs = srv.chat_requests()
        assert all(r.images and r.images[0].startswith("data:image/png;base64,") for r in reqs)
        assert sorted(r.body["seed"] for r in reqs if r.model == "m1") == [5, 5, 5, 6, 6, 6]
        assert len({r.key for r in reqs}) == 9
        assert rep.models["m1"].prompt_tokens == 12
        # resume: nothing to send
        rep2 = sample(store, specs)
        assert srv.count() == 9 and rep2.done == 0 and rep2.models["m1"].stored_before == 6
        # new items: only they are asked for
        add_items(store, 1, start=10)
        sample(store, specs)
        assert srv.count() == 12 and store.counts().candidates == 12


def data_url(data: bytes) -> str:
    import base64

    return "data:image/png;base64," + base64.b64encode(data).decode()


def image_part(data: bytes) -> dict:
    return {"type": "image_url", "image_url": {"url": data_url(data)}}


def test_sample_keeps_the_image_parts_of_an_omni_answer(store):
    """An answer whose content is text and image data URLs is stored as the candidate's
    parts in order, each image content-addressed in the store; one listed in
    ``message.images`` (as some servers send it) too; a list of text parts is a text."""
    import hashlib

    from curate.llm import Completion
    from curate.model import render_parts
    from tests.support.fake_openai import Reply

    add_items(store, 3)
    drawn = {"question 0": png(200, (30, 20)), "question 1": png(90, (24, 24))}

    def answer(req):
        q = req.prompt_text
        if q == "question 0":
            return Reply(
                "", content=[{"type": "text", "text": "Here:"}, image_part(drawn[q]), {"type": "text", "text": " done"}]
            )
        if q == "question 1":
            return Reply("A picture.", images=[image_part(drawn[q])])
        return Reply("", content=[{"type": "text", "text": "Only "}, {"type": "text", "text": "words."}])

    with FakeOpenAI(answer=answer) as srv:
        rep = sample(store, [spec(srv.url, "omni")])
        assert (rep.done, rep.failed) == (3, 0)
        c = {x.item_id: x for x in store.candidates()}
        c0 = c["it000"]
        assert [p.kind for p in c0.parts] == ["text", "image", "text"]
        assert (c0.parts[0].text, c0.parts[2].text) == ("Here:", " done")
        im = c0.parts[1].image
        assert im is not None and im.status == "ok" and (im.width, im.height) == (30, 20)
        assert im.sha256 == hashlib.sha256(drawn["question 0"]).hexdigest()
        assert store.image_path(im.sha256).read_bytes() == drawn["question 0"]
        assert c0.text == render_parts(c0.content) == "Here:\n\n[image: image-1.png]\n\ndone"
        c1 = c["it001"]
        assert [p.kind for p in c1.parts] == ["text", "image"] and c1.images[0].width == 24
        assert c["it002"].content == () and c["it002"].text == "Only words."
        # the parts come back from the store as they went in; a rerun asks nothing again
        assert sample(store, [spec(srv.url, "omni")]).done == 0 and srv.count() == 3
    assert store.counts().candidates == 3
    assert Completion(ok=True, text="x").parts == ()


@pytest.mark.parametrize(
    "content, words",
    [
        ([{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}], "response image 1"),
        ([{"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}], "not a data:image/ URL"),
        ([{"type": "audio", "audio": {}}], "neither text nor an image_url"),
        ([], "empty response"),
    ],
)
def test_an_answer_with_an_unreadable_image_is_a_failure(sqlite_store, content, words):
    """Never a candidate with a broken image: the request is a failure, asked again later."""
    from tests.support.fake_openai import Reply

    add_items(sqlite_store, 1)
    with FakeOpenAI(answer=lambda r: Reply("", content=content)) as srv:
        rep = sample(sqlite_store, [spec(srv.url, max_retries=0)])
    assert (rep.done, rep.failed) == (0, 1)
    (f,) = sqlite_store.sample_failures()
    assert words in f.error, f.error
    assert sqlite_store.candidates() == []
    assert len(sqlite_store.image_hashes()) == 1  # the item's image only, no file of the answer
    assert len([p for p in sqlite_store.images.root.rglob("*") if p.is_file() and not p.name.startswith(".")]) == 1


def test_failures_recorded_then_retried(sqlite_store):
    store = sqlite_store
    add_items(store, 3, images=False)
    with FakeOpenAI(answer=lambda r: Fault("500") if "question 1" in r.prompt_text else "fine") as srv:
        rep = sample(store, [spec(srv.url, max_retries=2)])
        assert rep.done == 2 and rep.failed == 1
        assert srv.count(prompt="question 1") == 3  # 1 + 2 retries
        assert len(store.sample_failures()) == 1
        assert "1 failed" in "\n".join(rep.lines())
        srv.answer = lambda r: "fixed"
        rep = sample(store, [spec(srv.url, max_retries=2)])
        assert rep.done == 1 and len(store.sample_failures()) == 0 and store.counts().candidates == 3
        assert srv.count(prompt="question 0") == 1  # never sent twice


def test_transient_faults_are_absorbed(sqlite_store):
    add_items(sqlite_store, 4, images=False)
    faults = [Fault("429", retry_after=0.01), Fault("drop"), Fault("malformed")]
    with FakeOpenAI(answer=faults_then(faults, lambda r: "ok")) as srv:
        rep = sample(sqlite_store, [spec(srv.url)])
    assert rep.done == 4 and rep.failed == 0 and srv.count() == 16 and rep.models["m1"].retried == 4


def test_images_resized_and_missing_images_skipped(sqlite_store):
    store = sqlite_store
    add_items(store, 1, size=(400, 100))
    with store.write() as conn:
        store.add_items(
            [Item(id="broken", prompt="q", category="vqa", images=(ImageRef("gone.png", None, "missing"),))], conn=conn
        )
    with FakeOpenAI() as srv:
        rep = sample(store, [spec(srv.url)], max_side=40)
        (req,) = srv.chat_requests()
    from base64 import b64decode

    im = Image.open(io.BytesIO(b64decode(req.images[0].split(",", 1)[1])))
    assert im.size == (40, 10)
    assert rep.skipped_items == {"broken": "image gone.png is missing"}


def test_unreachable_endpoint_is_a_clear_error(sqlite_store):
    import socket

    add_items(sqlite_store, 1, images=False)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(MmrbError, match=rf"cannot reach model 'm1' at http://127.0.0.1:{port}/v1: connection error"):
        sample(sqlite_store, [spec(f"http://127.0.0.1:{port}/v1")])
    assert sqlite_store.counts().candidates == 0


def test_model_not_served_is_a_clear_error(sqlite_store):
    add_items(sqlite_store, 1, images=False)
    with FakeOpenAI(models=("other",)) as srv:
        with pytest.raises(MmrbError, match="'m1' .* is not served at .*it serves: other"):
            sample(sqlite_store, [spec(srv.url)])
        assert sample(sqlite_store, [spec(srv.url)], check=False).done == 1


def test_unknown_item_ids(sqlite_store):
    with FakeOpenAI() as srv, pytest.raises(MmrbError, match="not in the store"):
        sample(sqlite_store, [spec(srv.url)], item_ids=["zzz"])


def test_concurrency_per_endpoint(sqlite_store):
    add_items(sqlite_store, 12, images=False)
    with FakeOpenAI(latency=0.05) as srv:
        sample(sqlite_store, [spec(srv.url, concurrency=3)])
        assert srv.max_in_flight == 3


# -- kill and resume ---------------------------------------------------------------------------
SAMPLE_CMD = [sys.executable, "-m", "curate.cli", "sample"]  # the real `mmrb sample`


STORED_AT_KILL = 40


def _answer_then_hold(limit: int):
    """An answer function for the fake server: the first ``limit`` requests are answered,
    later ones held unanswered until ``release`` is set (so the sampler stores exactly
    ``limit`` responses before it is killed, however fast the machine is)."""
    from tests.support.fake_openai import echo_answer

    answered = [0]
    release = threading.Event()

    def answer(req):
        if release.is_set() or answered[0] < limit:
            answered[0] += 1  # the server's event loop calls this: one thread
            return echo_answer(req)
        return Fault("hang")

    return answer, release


def _wait_until_held(db: str, images: Path, n: int, srv: FakeOpenAI, proc: subprocess.Popen) -> None:
    """Until the sampler in ``proc`` has stored the ``n`` answered responses (it cannot store
    more) and sent a request the server holds."""
    deadline = time.monotonic() + 120
    with Store(db, images=images) as watch:
        while len(watch.candidates()) < n or len(srv.chat_requests()) <= n:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, (
                f"stored {len(watch.candidates())} of {n}, sent {len(srv.chat_requests())}"
            )
            time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.both_backends
def test_sigkill_and_resume_sends_nothing_twice_and_loses_nothing(db_url, tmp_path):
    db = db_url  # a SQLite file or a PostgreSQL database: both must survive the kill
    with Store(db, images=tmp_path / "img") as store:
        add_items(store, 60)
    answer, release = _answer_then_hold(STORED_AT_KILL)
    with FakeOpenAI(answer=answer) as srv:
        models = tmp_path / "models.toml"
        models.write_text(
            "".join(
                f'[[models]]\nname = "{m}"\nbase_url = "{srv.url}"\nmodel = "{m}"\nconcurrency = 4\n'
                f"[models.params]\ntemperature = 0.5\n"
                for m in ("m1", "m2")
            )
        )
        args = ["--db", db, "--images", str(tmp_path / "img"), "--models", str(models), "--no-progress"]
        with subprocess.Popen(SAMPLE_CMD + args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            _wait_until_held(db, tmp_path / "img", STORED_AT_KILL, srv, proc)
            os.kill(proc.pid, signal.SIGKILL)  # with requests in flight: the held ones
        assert proc.returncode == -signal.SIGKILL
        with Store(db, images=tmp_path / "img") as store:
            before = {c.id: c for c in store.candidates()}
            stored_at_kill = {
                request_id((c.item_id, c.model, params_key(c.params), c.sample_index)) for c in before.values()
            }
        assert len(before) == STORED_AT_KILL
        release.set()
        sent_before = len(srv.chat_requests())

        done = subprocess.run(SAMPLE_CMD + args, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "finished:" in done.stdout

        after_kill = [r.key for r in srv.chat_requests()[sent_before:]]
        assert not set(after_kill) & stored_at_kill  # no stored key asked again
        assert len(after_kill) == len(set(after_kill))
        with Store(db, images=tmp_path / "img") as store:
            final = {c.id: c for c in store.candidates()}
            assert len(stored_keys(store)) == 120 and len(final) == 120  # nothing lost
        assert all(final[k] == v for k, v in before.items())  # nothing stored was rewritten


def test_progress_bar_on_a_terminal_shows_count_rate_and_eta(tmp_path):
    """On a terminal (a pseudo-terminal here) each model gets a bar with done/total, rate,
    failures, elapsed time and ETA; the summary follows."""
    import pty

    db = str(tmp_path / "s.db")
    with Store(db, images=tmp_path / "img") as store:
        add_items(store, 8)
    with FakeOpenAI(latency=0.05, answer=lambda r: "fine") as srv:
        models = tmp_path / "models.toml"
        models.write_text(f'[[models]]\nname = "vlm-one"\nbase_url = "{srv.url}"\nmodel = "vlm-one"\nconcurrency = 2\n')
        main_fd, sub_fd = pty.openpty()
        proc = subprocess.Popen(
            SAMPLE_CMD + ["--db", db, "--images", str(tmp_path / "img"), "--models", str(models)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=sub_fd,
            text=True,
            env={**os.environ, "COLUMNS": "140", "TERM": "xterm"},
        )
        os.close(sub_fd)
        chunks = []
        while True:
            try:
                data = os.read(main_fd, 65536)
            except OSError:  # the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        out, _ = proc.communicate(timeout=60)
        os.close(main_fd)
    assert proc.returncode == 0
    bar = b"".join(chunks).decode(errors="replace")
    assert "vlm-one" in bar and "8/8" in bar
    assert "/s" in bar and "failed 0" in bar and "ETA" in bar
    assert "finished: 8 responses stored" in out


@pytest.mark.slow
def test_bench_quick_runs():
    out = subprocess.run(
        [sys.executable, "-m", "bench.sample", "--quick", "--items", "30", "--latency", "0.05"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr + out.stdout
    assert "responses stored        90 / 90" in out.stdout
    assert "sent twice (stored key) 0" in out.stdout and "responses lost          0" in out.stdout


def test_cli_summary_and_bad_models_file(tmp_path, capsys):
    from tests.support.command_runner import run_command

    db = str(tmp_path / "s.db")
    with Store(db, images=tmp_path / "img") as store:
        add_items(store, 2, images=False)
    with FakeOpenAI() as srv:
        models = tmp_path / "models.yaml"
        models.write_text(f"models:\n  - name: alpha\n    base_url: {srv.url}\n    model: a\n    samples: 2\n")
        args = ["--db", db, "--images", str(tmp_path / "img"), "--models", str(models)]
        assert run_command("sample", args) == 0
        out = capsys.readouterr().out
        assert "finished: 4 responses stored, 0 failed" in out
        assert "alpha: 4 new, 0 already stored, 0 failed; tokens 8 prompt + 12 completion" in out
        assert run_command("sample", args + ["--only", "beta"]) == 1
        assert "--only names models not in" in capsys.readouterr().err
    models.write_text("models:\n  - model: a\n")
    assert run_command("sample", args) == 1
    err = capsys.readouterr().err
    assert "models.yaml" in err and "models[0].base_url" in err and "nothing was written" in err


def test_store_failure_stops_the_run_with_a_clear_error(sqlite_store, monkeypatch):
    add_items(sqlite_store, 40, images=False)

    def broken(answers, failures, conn=None):
        raise OSError("disk full")

    monkeypatch.setattr(sqlite_store, "record_samples", broken)
    with FakeOpenAI(latency=0.02) as srv:
        with pytest.raises(MmrbError, match="could not store responses in .*OSError: disk full"):
            sample(sqlite_store, [spec(srv.url, concurrency=2)], flush_every=1)
        assert srv.count() < 40  # stopped sending once nothing could be stored


# -- failures are failures: never candidates, always reported, resumed by a rerun --------------
def test_empty_and_oversized_answers_are_failures_not_candidates(sqlite_store):
    store = sqlite_store
    add_items(store, 5, images=False)
    answers = {"question 0": "", "question 1": "   \n", "question 2": "y" * 1001, "question 3": "z" * 200_000}

    def answer(r):
        return next((a for q, a in answers.items() if q in r.prompt_text), "a fine answer")

    with FakeOpenAI(answer=answer) as srv:
        rep = sample(store, [spec(srv.url, max_response_chars=1000)])
        assert rep.done == 1 and rep.failed == 4 and not rep.complete
        # each asked once: an empty or oversized answer is not retried within the run
        assert srv.count() == 5
        errors = {f.item_id: f.error for f in store.sample_failures()}
        assert [c.text for c in store.candidates()] == ["a fine answer"]
        assert errors["it000"].startswith("empty response") and errors["it001"].startswith("empty response")
        assert errors["it002"] == "response of 1001 characters is over the limit of 1000 (max_response_chars)"
        assert errors["it003"].startswith("response body of ") and "over the limit of 71536" in errors["it003"]
        text = "\n".join(rep.failure_lines())
        assert "incomplete: 4 requests still failed after retries (m1: 4)" in text
        assert "m1: 2 empty response, 2 over the size limit; e.g. " in text
        assert "rerun the same command to send only those requests" in text
        srv.reset()
        srv.answer = lambda r: "now fine"
        rep = sample(store, [spec(srv.url, max_response_chars=1000)])
        assert srv.count() == 4 and rep.done == 4 and rep.complete and rep.failure_lines() == []
        assert len(store.sample_failures()) == 0 and store.counts().candidates == 5


def test_default_response_limit_is_generous_but_bounded(sqlite_store):
    from curate.llm import DEFAULT_MAX_RESPONSE_CHARS

    assert Endpoint(base_url="http://x/v1", model="m").max_response_chars == DEFAULT_MAX_RESPONSE_CHARS == 200_000
    add_items(sqlite_store, 2, images=False)
    long_ok, runaway = "w " * 60_000, "x" * (5 * 1024 * 1024)  # ~30k tokens of answer; a 5 MB one
    with FakeOpenAI(answer=lambda r: long_ok if "question 0" in r.prompt_text else runaway) as srv:
        rep = sample(sqlite_store, [spec(srv.url)])
    assert rep.done == 1 and rep.failed == 1
    assert [len(c.text) for c in sqlite_store.candidates()] == [len(long_ok)]


def test_cli_exits_1_naming_failed_model_and_resumes_only_those(tmp_path, capsys):
    from tests.support.command_runner import run_command

    db = str(tmp_path / "s.db")
    with Store(db, images=tmp_path / "img") as store:
        add_items(store, 3, images=False)
    with FakeOpenAI(answer=lambda r: "fine" if r.model == "a" else Fault("500")) as srv:
        models = tmp_path / "models.toml"
        models.write_text(
            "".join(
                f'[[models]]\nname = "{n}"\nbase_url = "{srv.url}"\nmodel = "{n}"\n'
                "max_retries = 1\nbackoff_base = 0.001\n"
                for n in ("a", "b")
            )
        )
        args = ["--db", db, "--images", str(tmp_path / "img"), "--models", str(models)]
        assert run_command("sample", args) == 1
        out, err = capsys.readouterr()
        assert "finished: 3 responses stored, 3 failed" in out
        assert "incomplete: 3 requests still failed after retries (b: 3)" in err
        assert "b: 3 HTTP 500; e.g. HTTP 500: server error (after 2 attempts)" in err
        assert "rerun the same command to send only those requests" in err
        srv.answer = lambda r: "fine now"
        srv.reset()
        assert run_command("sample", args) == 0
        assert srv.count() == 3 and srv.count(model="a") == 0
        assert "b: 3 new, 0 already stored, 0 failed" in capsys.readouterr().out
        # the limit from the command line: every answer is now too long
        assert run_command("sample", args + ["--max-response-chars", "3"]) == 0  # nothing left to send
        with Store(db, images=tmp_path / "img") as store:
            add_items(store, 1, images=False, start=7)
        assert run_command("sample", args + ["--max-response-chars", "3"]) == 1
        assert "over the limit of 3 (max_response_chars)" in capsys.readouterr().err


def test_models_file_max_response_chars(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('[defaults]\nmax_response_chars = 5000\n[[models]]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "a"\n')
    (a,) = load_models(f)
    assert a.endpoint.max_response_chars == 5000
    f.write_text('[[models]]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "a"\nmax_response_chars = 0\n')
    with pytest.raises(InputError, match="max_response_chars.*must be at least 1"):
        load_models(f)
