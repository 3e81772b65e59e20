"""The annotation app under test: a small seeded store, and a real `streamlit run` server.

``seed_store`` fills a store through its public API (no pipeline stages needed), with the
cases the app must handle: a missing image, a response full of HTML and script.
``StreamlitServer`` runs ``streamlit run app.py -- --db ...`` on a free 127.0.0.1 port and
waits for ``/_stcore/health`` (``cwd`` and ``launcher``: another tree's app, e.g. a bench's baseline).
"""

from __future__ import annotations

import functools
import io
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
PASSWORD = "password-123"
XSS = (
    "Here is **bold** text and a list:\n\n- one\n- two\n\n"
    "<script>window.__pwned = (window.__pwned || 0) + 1</script>\n\n"
    '<img src="nope.png" onerror="window.__pwned = (window.__pwned || 0) + 1">\n\n'
    "Inline `code <b>` stays."
)


@functools.cache  # bytes, so safe to share: every app test's seed draws the same ones
def png(seed: int, size: tuple[int, int] = (800, 600)) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", size, ((seed * 53) % 256, (seed * 97) % 256, (seed * 31) % 256))
    d = ImageDraw.Draw(im)
    for n in range(12):
        x = (seed * 37 + n * 61) % size[0]
        y = (seed * 17 + n * 43) % size[1]
        d.rectangle([x, y, x + 80, y + 60], fill=((n * 40) % 256, 255 - (n * 20) % 256, (seed + n * 10) % 256))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def seed_store(
    store,
    *,
    n_pairs: int = 6,
    annotators=("alice", "bob"),
    admin: str = "lead",
    xss_at: int | None = 1,
    missing_at: int | None = 2,
    response_chars: int = 0,
) -> list[str]:
    """Items i0.., candidates, pairs p0.., accounts (password PASSWORD) and assignments.

    Every annotator gets every pair in order; sides alternate so both mappings are exercised.
    Returns the pair ids.
    """
    from curate.model import Assignment, Candidate, ImageRef, Item, Pair

    items, cands, pairs, stored = [], [], [], []
    for n in range(n_pairs):
        if n == missing_at:
            ref = ImageRef(f"img/{n}.png", None, "missing", error="image file not found: img/{n}.png")
        else:
            s = store.images.put(png(n))
            stored.append(s)
            ref = ImageRef(f"img/{n}.png", s.sha256, "ok", s.width, s.height)
        items.append(Item(id=f"i{n}", prompt=f"Question {n}: what is in the picture?", category="vqa", images=(ref,)))
        pad = ("Lorem ipsum dolor sit amet. " * (response_chars // 28 + 1))[:response_chars]
        a_text = XSS if n == xss_at else f"Answer A{n}: a red square. {pad}"
        cands += [
            Candidate(id=f"i{n}/a", item_id=f"i{n}", model="model-alpha", text=a_text),
            Candidate(id=f"i{n}/b", item_id=f"i{n}", model="model-beta", text=f"Answer B{n}: a blue circle. {pad}"),
        ]
        pairs.append(
            Pair(
                id=f"p{n}",
                item_id=f"i{n}",
                first_id=f"i{n}/a",
                second_id=f"i{n}/b",
                origin="test",
                known_preference="first",
                is_gold=n == 0,
            )
        )
    with store.write() as c:
        store.add_images(stored, conn=c)
        store.add_items(items, conn=c)
        store.add_candidates(cands, conn=c)
        store.add_pairs(pairs, conn=c)
    from curate.model import Annotator

    # one argon2 hash for every account: hashing costs a third of a second each
    h = _password_hash()
    store.add_annotator(Annotator(admin, "admin", h))
    for name in annotators:
        store.add_annotator(Annotator(name, "annotator", h))
    store.add_assignments(
        Assignment(pair_id=p.id, annotator=a, left="first" if (n + k) % 2 == 0 else "second", seq=n)
        for k, a in enumerate(annotators)
        for n, p in enumerate(pairs)
    )
    return [p.id for p in pairs]


@functools.cache
def edited_png(seed: int, *, edited: bool, size: tuple[int, int] = (640, 480)) -> bytes:
    """A picture and its edit: the edit differs only by one small square (an image-editing
    pair is judged by such a difference)."""
    from PIL import Image, ImageDraw

    im = Image.open(io.BytesIO(png(seed, size)))
    if edited:
        ImageDraw.Draw(im).rectangle([size[0] // 2, size[1] // 2, size[0] // 2 + 24, size[1] // 2 + 24], fill="white")
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def seed_image_pairs(store, annotators=("alice",), *, n_pairs: int = 2, missing_at: int | None = None) -> list[str]:
    """Pairs ir0.. whose responses are images (accounts must exist): the first response is a
    text, its image and a closing text; the second is its image alone, the same picture
    with a small edit. ``missing_at``: that pair's second image is missing. Each annotator
    gets them at the head of their queue (negative seq), sides alternating. Even pairs are
    text to image (no prompt image), odd ones edits of the prompt's image."""
    from curate.model import Assignment, Candidate, ImageRef, Item, Pair, Part, render_parts

    stored, items, cands, pairs = [], [], [], []
    for n in range(n_pairs):
        a = store.images.put(edited_png(n + 10, edited=False))
        stored.append(a)
        ref_a = ImageRef(f"out/{n}_a.png", a.sha256, "ok", a.width, a.height)
        if n == missing_at:
            ref_b = ImageRef(f"out/{n}_b.png", None, "missing", error=f"image file not found: out/{n}_b.png")
        else:
            b = store.images.put(edited_png(n + 10, edited=True))
            stored.append(b)
            ref_b = ImageRef(f"out/{n}_b.png", b.sha256, "ok", b.width, b.height)
        parts_a = (
            Part.of_text(f"Here is edit {n}:"),
            Part.of_image(ref_a),
            Part.of_text("The sky is **purple** now."),
        )
        parts_b = (Part.of_image(ref_b),)
        prompt_images: tuple[ImageRef, ...] = ()
        if n % 2:
            src = store.images.put(png(n + 10, (640, 480)))
            stored.append(src)
            prompt_images = (ImageRef(f"in/{n}.png", src.sha256, "ok", src.width, src.height),)
        items.append(
            Item(id=f"ir{n}", prompt=f"Edit {n}: make the sky purple.", category="image_edit", images=prompt_images)
        )
        cands += [
            Candidate(f"ir{n}/a", f"ir{n}", "painter-a", render_parts(parts_a), content=parts_a),
            Candidate(f"ir{n}/b", f"ir{n}", "painter-b", render_parts(parts_b), content=parts_b),
        ]
        pairs.append(Pair(f"pr{n}", f"ir{n}", f"ir{n}/a", f"ir{n}/b", "test"))
    with store.write() as c:
        store.add_images(stored, conn=c)
        store.add_items(items, conn=c)
        store.add_candidates(cands, conn=c)
        store.add_pairs(pairs, conn=c)
        store.add_assignments(
            [
                Assignment(p.id, who, "first" if (n + k) % 2 == 0 else "second", n - n_pairs)
                for k, who in enumerate(annotators)
                for n, p in enumerate(pairs)
            ],
            conn=c,
        )
    return [p.id for p in pairs]


@functools.lru_cache(maxsize=1)
def _password_hash() -> str:
    from annotate import auth

    return auth.hash_password(PASSWORD)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """``streamlit run app.py`` in a subprocess, on loopback, headless. ``launcher`` is what
    runs Streamlit on app.py (e.g. ``./run app``); without ``db`` the app chooses its store."""

    def __init__(
        self,
        db: str | None,
        images: str | None = None,
        *,
        extra_env: dict | None = None,
        log: Path | None = None,
        launcher: Sequence[str] = (sys.executable, "-m", "streamlit", "run", str(APP)),
        cwd: Path = ROOT,
        port: int | None = None,
    ):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [
            *launcher,
            "--server.headless=true",
            "--server.address=127.0.0.1",
            f"--server.port={self.port}",
            "--browser.gatherUsageStats=false",
            "--server.fileWatcherType=none",
        ]
        args = [*(["--db", db] if db else []), *(["--images", str(images)] if images else [])]
        if args:  # without db, the app takes $MMRB_DB (as a systemd unit gives it) or its sample
            cmd += ["--", *args]
        env = dict(os.environ, **(extra_env or {}))
        self._log = open(log, "wb") if log else None
        out = self._log if self._log is not None else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)

    def wait(self, timeout: float = 60) -> StreamlitServer:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"streamlit did not answer on {self.url} within {timeout} s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> StreamlitServer:
        return self.wait()

    def __exit__(self, *exc) -> None:
        self.stop()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def wait_idle(page, timeout: float = 45_000) -> None:
    """Until the app has finished its run (the status widget gone and the app not running)."""
    page.wait_for_function(
        "() => { const a = document.querySelector('[data-testid=stApp]');"
        " return a && a.getAttribute('data-test-script-state') !== 'running'"
        " && !document.querySelector('[data-testid=stStatusWidget] button'); }",
        timeout=timeout,
    )


# Every control of the decision, as the label page shows it (flag included: it is always there);
# OFF_SCREEN says which of them are out of view (a decision must fit one screen).
CONTROLS = {
    "left correctness": '[class*="st-key-q_left"] [role=radiogroup]',
    "right correctness": '[class*="st-key-q_right"] [role=radiogroup]',
    "preference": '[class*="st-key-q_pref"] [role=radiogroup]',
    "flag": '[class*="st-key-q_flag"] [role=radiogroup]',
    "rationale": '[class*="st-key-q_rationale"] textarea',
    "submit": '[class*="st-key-q_submit"] button',
}
OFF_SCREEN = """(sels) => {
  const out = {};
  for (const [name, sel] of Object.entries(sels)) {
    const el = document.querySelector(sel);
    if (!el) { out[name] = 'absent'; continue; }
    const r = el.getBoundingClientRect();
    if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth || !r.height)
      out[name] = [r.left, r.top, r.right, r.bottom].map(Math.round).join(',') + ' in ' + innerWidth + 'x'
        + innerHeight;
  }
  const main = document.querySelector('[data-testid=stMain]');
  if (scrollY || (main && main.scrollTop)) out.scrolled = [scrollY, main && main.scrollTop];
  return out;
}"""


DRAWN = """() => Array.from(document.images).every((i) => i.complete)
  && Array.from(document.querySelectorAll('[data-testid=stVegaLiteChart]')).every((c) => c.querySelector('canvas, svg'))
  && Array.from(document.querySelectorAll('[data-testid=stDataFrame]'))
    .every((d) => d.querySelector('canvas') || d.closest('details:not([open])'))"""  # a folded expander's: not drawn


def settled(page, timeout: float = 45_000) -> None:
    """Until what the page shows is drawn: every image loaded or failed (so an ``onerror`` has
    fired, and any request it makes has been sent), charts and tables drawn, and two frames
    painted since (the layout after a new viewport size, say). Waited for, never guessed."""
    page.wait_for_function(DRAWN, timeout=timeout)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def wait_cookie(page) -> None:
    """The session cookie (httpOnly, set by the server after the sign-in's handoff): a new URL
    opened before it is there starts signed out, as it would for a person."""
    end = time.monotonic() + 45
    while not any(c["name"] == "mmrb_session" for c in page.context.cookies()):
        assert time.monotonic() < end, "no session cookie"
        page.wait_for_timeout(100)


def wait_label_ready(page, timeout: float = 45_000) -> None:
    """Until the label form is fully there (the key listener, every radio, the submit button)
    and the app idle: the response text can appear before the form below it."""
    page.wait_for_function(
        "() => window.__mmrbKeys && document.querySelectorAll('[class*=\"st-key-q_\"] input[type=radio]').length >= 9"
        " && document.querySelector('[class*=\"st-key-q_submit\"] button')",
        timeout=timeout,
    )
    wait_idle(page, timeout)


def sign_in(page, url: str, name: str) -> None:
    """Through the sign-in form at ``url``, until the label page is ready (password PASSWORD)."""
    page.goto(url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(".st-key-mmrb-label", timeout=45_000)  # after the cookie handoff's reload
    wait_label_ready(page)
