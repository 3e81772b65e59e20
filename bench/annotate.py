"""Benchmark of the annotation app: submit key -> next pair fully shown, in headless Chromium.

    python -m bench.annotate            # 100,000 pairs, 20 annotators, 200 timed labels
    python -m bench.annotate --quick    # 2,000 pairs, 30 timed labels, small anchor
    python -m bench.annotate --no-images  # without the run whose responses are images
    python -m bench.annotate --cold-thumbnails  # the app makes the response images' thumbnails
    python -m bench.annotate --schemes mmrb,mmrb2-pairwise,aspects  # each scheme's form (default: all three)
    python -m bench.annotate --baseline-tree /tmp/base  # mmrb also on another tree's app, same run
    python -m bench.annotate --baseline-tree /tmp/base --rounds 6  # six turns each: a machine whose load drifts

Timed in the page: from the keydown of Enter (a window capture listener, so before the app's
own handler) until the next pair is fully shown: its image decoded, both responses rendered,
and the app no longer running, at the next animation frame. Targets: median < 120 ms,
p95 < 200 ms. Anchor, in the same run: Label Studio's own next-task + submit calls
(GET /api/projects/{id}/next, POST /api/tasks/{id}/annotations) over the same pairs imported
as tasks, on a local Label Studio server (tests/support/labelstudio_server.py).

The image run: one more annotator labels pairs of their own in the same store whose two
responses are each a 1024x1024 image (pillow, different for every pair; a prompt image as
in the text run). Its figure counts until both response images are loaded and decoded too,
and is printed next to the text-only figure of the same run, with the ratio.

Schemes: the text run is on mmrb (today's form, keys 1 8 A); each other scheme of --schemes
has an annotator of its own labelling pairs of the same shape on that scheme (mmrb2-pairwise:
the key 6; aspects: the six scores, the preference and a typed rationale), printed with its
ratio to mmrb. --baseline-tree runs the mmrb figure also on that tree's app (e.g. a git
worktree of an older commit), in turns with this tree's, on a store of the same shape made by
that tree's own code (its schema: an older app cannot open a store of this tree's schema).
The bare page of the same shape (bench/apps/bare_page.py, Streamlit's own floor) runs in the
same turns; the minimal page once after.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from annotate.render import pair_token
from tests.support.streamlit_server import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PASSWORD,
    StreamlitServer,
    wait_idle,
)

ROOT = Path(__file__).resolve().parents[1]

SHARED = ROOT.parent / "shared" / "data" / "vlrewardbench" / "pairs.jsonl"


def texts(n_needed: int) -> list[str]:
    """Real VLM responses (VL-RewardBench, repeated) when ../shared is present, else ~1,500 chars."""
    out: list[str] = []
    if SHARED.exists():
        for line in SHARED.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out += [row["chosen"], row["rejected"]]
    if not out:
        base = (
            "The image shows a bar chart of quarterly revenue. **Q3** is the highest at 42 million; "
            "Q1 is the lowest. The trend is upward except for a dip in Q4.\n\n"
            "- Q1: 18\n- Q2: 27\n- Q3: 42\n- Q4: 35\n\n"
        )
        out = [(base * 8)[:1500], (base.replace("42", "40") * 8)[:1500]]
    return out


def image(n: int) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (1280, 960), ((n * 53) % 256, (n * 97) % 256, (n * 31) % 256))
    d = ImageDraw.Draw(im)
    for k in range(40):
        x, y = (n * 37 + k * 61) % 1200, (n * 17 + k * 43) % 900
        d.ellipse([x, y, x + 90, y + 70], fill=((k * 40) % 256, 255 - (k * 20) % 256, (n + k * 10) % 256))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def response_image(n: int, side: int, size: int = 1024) -> bytes:
    """A 1024x1024 picture of its own for response ``side`` of image pair ``n``: a gradient
    under shapes and a little noise, so that it compresses about like a generated picture."""
    from PIL import Image, ImageDraw

    seed = 2 * n + side
    base = Image.merge(
        "RGB",
        (
            Image.linear_gradient("L").resize((size, size)),
            Image.radial_gradient("L").resize((size, size)),
            Image.linear_gradient("L").rotate(90 + seed % 180).resize((size, size)),
        ),
    )
    d = ImageDraw.Draw(base)
    for k in range(24):
        x, y = (seed * 131 + k * 97) % (size - 200), (seed * 71 + k * 53) % (size - 200)
        d.ellipse([x, y, x + 60 + (k * 37) % 140, y + 50 + (k * 29) % 150], fill=((seed + k * 40) % 256, 90, 200))
    noise = Image.effect_noise((size, size), 24).convert("RGB")
    im = Image.blend(base, noise, 0.12)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


IMAGE_ANNOTATOR = "img00"


def build_image_pairs(db: str, images: Path, n: int, n_prompt_images: int, *, thumbnails: bool = True) -> str:
    """``n`` pairs whose responses are 1024x1024 images, assigned to IMAGE_ANNOTATOR alone,
    in the store ``build`` made (its prompt images reused). Thumbnails are made as for the
    prompt images unless ``thumbnails`` is false (then the app makes each on first view).
    Returns the annotator."""
    from annotate import auth
    from curate.model import Annotator, Assignment, Candidate, ImageRef, Item, Pair, Part, render_parts
    from curate.store import Store

    t = time.perf_counter()
    with Store(db, images=images) as s:
        prompts = [im for im in s.items(ids=[f"i{k:06d}" for k in range(n_prompt_images)])]
        stored, items, cands, pairs = [], [], [], []
        for m in range(n):
            refs = []
            for side in (0, 1):
                im = s.images.put(response_image(m, side))
                if thumbnails:
                    s.images.thumbnail(im.path)
                stored.append(im)
                refs.append(ImageRef(f"out/{m}_{side}.png", im.sha256, "ok", im.width, im.height))
            items.append(
                Item(
                    f"g{m:06d}", f"Edit {m}: make the picture brighter.", "image_edit", prompts[m % len(prompts)].images
                )
            )
            for side, ref in enumerate(refs):
                parts = (Part.of_image(ref),)
                cands.append(
                    Candidate(f"g{m:06d}/{side}", f"g{m:06d}", f"painter-{side}", render_parts(parts), content=parts)
                )
            pairs.append(Pair(f"q{m:06d}", f"g{m:06d}", f"g{m:06d}/0", f"g{m:06d}/1", "bench"))
        with s.write() as c:
            s.add_images(stored, conn=c)
            s.add_annotator(Annotator(IMAGE_ANNOTATOR, "annotator", auth.hash_password(PASSWORD)), conn=c)
            s.add_items(items, conn=c)
            s.add_candidates(cands, conn=c)
            s.add_pairs(pairs, conn=c)
            s.add_assignments(
                (Assignment(p.id, IMAGE_ANNOTATOR, "first" if m % 2 else "second", m) for m, p in enumerate(pairs)),
                conn=c,
            )
    print(f"built {n} pairs with two 1024x1024 response images each in {time.perf_counter() - t:.1f} s")
    return IMAGE_ANNOTATOR


def build_scheme_pairs(db: str, images: Path, n: int, n_prompt_images: int, scheme_name: str) -> str:
    """``n`` text pairs of the text run's shape on scheme ``scheme_name``, assigned to an
    annotator of their own (returned), sides alternating."""
    from annotate import auth
    from curate.model import Annotator, Assignment, Candidate, Item, Pair
    from curate.schemes import BUILT_IN, to_table
    from curate.store import Store

    who, pool, tag = f"sch-{scheme_name}", texts(2 * n), scheme_name.replace("-", "")
    with Store(db, images=images) as s:
        prompts = s.items(ids=[f"i{k:06d}" for k in range(n_prompt_images)])
        items = [
            Item(f"{tag}{m:06d}", f"Question {m}: what does the picture show?", "vqa", prompts[m % len(prompts)].images)
            for m in range(n)
        ]
        cands = [
            Candidate(f"{tag}{m:06d}/{j}", f"{tag}{m:06d}", f"model-{j}", pool[(2 * m + j) % len(pool)])
            for m in range(n)
            for j in (0, 1)
        ]
        pairs = [
            Pair(f"{tag}-p{m:06d}", f"{tag}{m:06d}", f"{tag}{m:06d}/0", f"{tag}{m:06d}/1", "bench") for m in range(n)
        ]
        scheme = BUILT_IN[scheme_name]
        with s.write() as c:
            s.add_annotator(Annotator(who, "annotator", auth.hash_password(PASSWORD)), conn=c)
            s.add_items(items, conn=c)
            s.add_candidates(cands, conn=c)
            s.add_pairs(pairs, conn=c)
            s.add_scheme(scheme.name, scheme.version, to_table(scheme), conn=c)
            s.set_pair_scheme([p.id for p in pairs], scheme.name, scheme.version, conn=c)
            s.add_assignments(
                (Assignment(p.id, who, "first" if m % 2 else "second", m) for m, p in enumerate(pairs)), conn=c
            )
    return who


# The keys that answer one pair of each scheme ("type:" types into the focused text box)
SCHEME_KEYS: dict[str, tuple[str, ...]] = {
    "mmrb": ("1", "8", "a"),
    "mmrb2-pairwise": ("6",),
    "aspects": ("4", "5", "w", "y", "k", "l", "a", "e", "type:fine", "Escape"),
}
# the form's radios, all cleared when the next pair is ready, and how many there are at least
FORM_RADIOS: dict[str, tuple[str, int]] = {
    "mmrb": (", ".join(f'[class*="st-key-{k}"] input[type=radio]' for k in ("q_left", "q_right", "q_pref")), 9),
    "mmrb2-pairwise": ('[class*="st-key-qs-score-"] input[type=radio]', 6),
    "aspects": ('[class*="st-key-qs-"] input[type=radio]', 27),
}


def build(db: str, images: Path, n_pairs: int, n_annotators: int, k: int, n_images: int) -> list[str]:
    from annotate import auth
    from curate.model import Annotator, Assignment, Candidate, ImageRef, Item, Pair
    from curate.store import Store

    t = time.perf_counter()
    pool = texts(2 * n_pairs)
    names = [f"ann{n:02d}" for n in range(n_annotators)]
    with Store(db, images=images) as s:
        stored = [s.images.put(image(n)) for n in range(n_images)]
        for st_ in stored:
            s.images.thumbnail(st_.path)  # as the import would: pre-scaled JPEGs ready to serve
        s.add_images(stored)
        refs = [ImageRef(f"img{n}.png", im.sha256, "ok", im.width, im.height) for n, im in enumerate(stored)]
        pw = auth.hash_password(PASSWORD)
        cats = (
            "vqa",
            "reasoning",
            "knowledge",
            "safety",
            "open_generation/correctness_task",
            "open_generation/preference_task",
        )
        with s.write() as c:
            for a in names:
                s.add_annotator(Annotator(a, "annotator", pw), conn=c)
            step = 20_000
            for lo in range(0, n_pairs, step):
                hi = min(n_pairs, lo + step)
                s.add_items(
                    (
                        Item(
                            f"i{n:06d}",
                            f"Question {n}: what does the picture show, and what stands out?",
                            cats[n % 6],
                            (refs[n % n_images],),
                        )
                        for n in range(lo, hi)
                    ),
                    conn=c,
                )
                s.add_candidates(
                    (
                        Candidate(f"i{n:06d}/{m}", f"i{n:06d}", f"model-{m}", pool[(2 * n + j) % len(pool)])
                        for n in range(lo, hi)
                        for j, m in enumerate("xy")
                    ),
                    conn=c,
                )
                s.add_pairs(
                    (Pair(f"p{n:06d}", f"i{n:06d}", f"i{n:06d}/x", f"i{n:06d}/y", "bench") for n in range(lo, hi)),
                    conn=c,
                )
                s.add_assignments(
                    (
                        Assignment(
                            f"p{n:06d}",
                            names[(n * k + j) % n_annotators],
                            "first" if int(hashlib.sha256(f"{n}/{j}".encode()).hexdigest(), 16) % 2 else "second",
                            n,
                        )
                        for n in range(lo, hi)
                        for j in range(k)
                    ),
                    conn=c,
                )
    print(flush=True)
    print(
        f"built {n_pairs:,} pairs, {n_pairs * k:,} assignments for {n_annotators} annotators, "
        f"{n_images} images in {time.perf_counter() - t:.1f} s"
    )
    return names


WATCH = """
([tk, item, form, formRadios, responseImages]) => {
  window.__t = null; window.__t0 = null; window.__tIdle = null; window.__sawRun = false;
  const onKey = (e) => { if (e.key === 'Enter' && window.__t0 === null) window.__t0 = performance.now(); };
  window.addEventListener('keydown', onKey, {capture: true, once: true});
  const ready = () => {
    const app = document.querySelector('[data-testid=stApp]');
    if (!app || app.getAttribute('data-test-script-state') === 'running') return null;
    const l = document.querySelector('.mmrb-response-left[data-pair="' + tk + '"]')
      || document.querySelector('.st-key-resp_left_' + tk);
    const r = document.querySelector('.mmrb-response-right[data-pair="' + tk + '"]')
      || document.querySelector('.st-key-resp_right_' + tk);
    if (!l || !r) return null;
    // the responses' own images, when they have some: each loaded
    const shots = Array.from(document.querySelectorAll('.mmrb-response[data-pair="' + tk + '"] img'));
    if (responseImages) {
      if (shots.length < responseImages || shots.some((i) => !i.complete || !i.naturalWidth)) return null;
    } else if (!l.innerText.trim() || !r.innerText.trim()) return null;
    // the form is reused from pair to pair: ready when its radios are there and all cleared
    const radios = form ? document.querySelectorAll(form) : [];
    if (form && (radios.length < formRadios || Array.from(radios).some((x) => x.checked))) return null;
    const img = document.querySelector('img[data-item="' + item + '"]');
    if (!img || !img.complete || !img.naturalWidth) return null;
    return [img, ...shots];
  };
  window.__p = new Promise((resolve) => {
    const check = () => {
      const imgs = ready();
      if (!imgs || window.__t0 === null) return false;
      obs.disconnect();
      Promise.all(imgs.map((i) => i.decode().catch(() => {})))
        .then(() => requestAnimationFrame(() => resolve(performance.now() - window.__t0)));
      return true;
    };
    const obs = new MutationObserver((records) => {
      for (const r of records) {
        if (r.attributeName === 'data-test-script-state' && r.oldValue === 'running' && window.__t0 !== null
            && window.__tIdle === null) window.__tIdle = performance.now() - window.__t0;
      }
      check();
    });
    obs.observe(document.body, {subtree: true, childList: true, attributes: true, attributeOldValue: true,
                                characterData: true});
    const poll = () => { if (!check()) setTimeout(poll, 4); };
    poll();
  });
  return true;  // not the promise: evaluate would wait for it before the key is pressed
}
"""


RACE = """() => Promise.race([
  window.__p,
  new Promise((_, no) => setTimeout(() => no(new Error('next pair not shown within 30 s')), 30000)),
])"""


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs)) - 1))]


def run_app(
    db: str,
    images: Path,
    annotator: str,
    n_labels: int,
    warmup: int,
    tmp: Path,
    response_images: int = 0,
    scheme: str = "mmrb",
    tree: Path = ROOT,
) -> list[float]:
    """Timed labels of ``annotator``'s queue on ``scheme``'s form; ``response_images``: how
    many images the next pair's responses show, each waited for; ``tree``: whose app."""
    from playwright.sync_api import sync_playwright

    from curate.store import Store

    if tree == ROOT:
        with Store(db, images=images) as s:
            mine = s.assignments(annotator=annotator)
            queue = [a.pair_id for a in mine if a.state == "open"][: n_labels + warmup + 1]
            items = {p.id: p.item_id for p in s.pairs(ids=queue)}
        tokens = {p: pair_token(p) for p in queue}
    else:  # another tree's store is read with that tree's code (this tree's Store would migrate it), its page keys too
        queue, items, tokens = in_tree(tree, _QUEUE, db, str(images), annotator, n_labels + warmup + 1)
    times: list[float] = []
    idle: list[float] = []
    log = tmp / f"streamlit-{annotator}-{tree.name}.log"
    launcher = (sys.executable, "-m", "streamlit", "run", str(tree / "app.py"))
    own_code = None if tree == ROOT else {"PYTHONPATH": str(tree)}  # its own packages, not this tree's
    radios, n_radios = FORM_RADIOS[scheme]
    with (
        StreamlitServer(db, str(images), log=log, launcher=launcher, cwd=tree, extra_env=own_code) as srv,
        sync_playwright() as p,
    ):
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(srv.url)
        wait_idle(page)
        page.get_by_role("textbox", name="Name").fill(annotator)
        page.get_by_role("textbox", name="Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_selector(f'.mmrb-response-left[data-pair="{tokens[queue[0]]}"]', timeout=60_000)
        ready = "([sel, n]) => window.__mmrbKeys && document.querySelectorAll(sel).length >= n"
        page.wait_for_function(ready, arg=[radios, n_radios], timeout=45_000)
        wait_idle(page)
        for n in range(n_labels + warmup):
            nxt = queue[n + 1]
            for key in SCHEME_KEYS[scheme]:
                if key.startswith("type:"):
                    page.keyboard.type(key.removeprefix("type:"))
                else:
                    page.keyboard.press(key)
            page.evaluate(WATCH, [tokens[nxt], items[nxt], radios, n_radios, response_images])
            page.keyboard.press("Enter")
            ms = page.evaluate(RACE)
            if n >= warmup:
                times.append(ms)
                t_idle = page.evaluate("window.__tIdle")
                if t_idle is not None:
                    idle.append(t_idle)
        b.close()
    if idle:
        print(
            f"           (the app's run ended a median {statistics.median(idle):.0f} ms after the key; the rest is "
            "the browser rendering and decoding)"
        )
    return times


# Run in another tree's own interpreter and code (``in_tree``): its store is made and read by
# its own schema, whatever this tree's is (a store of this tree's schema cannot be opened by an
# older app, nor an older one by this tree's Store without migrating it).
_BUILD = """
import json, sys
from pathlib import Path
import bench.annotate as b
b.SHARED = Path(sys.argv[1])  # this tree's response texts: the same pairs on both sides
db, images, n_pairs, n_ann, k, n_images = sys.argv[2:8]
print(json.dumps(b.build(db, Path(images), int(n_pairs), int(n_ann), int(k), int(n_images))))
"""
_QUEUE = """
import json, sys
from curate.store import Store
try:
    from annotate.render import pair_token
except ImportError:  # a tree before render.pair_token
    from annotate.ui import token as pair_token
db, images, who, n = sys.argv[2:6]
with Store(db, images=images) as s:
    queue = [a.pair_id for a in s.assignments(annotator=who) if a.state == "open"][: int(n)]
    items = {p.id: p.item_id for p in s.pairs(ids=queue)}
print(json.dumps([queue, items, {p: pair_token(p) for p in queue}]))
"""


def in_tree(tree: Path, script: str, *args: object) -> Any:
    """Run ``script`` with ``tree``'s code (its .venv when it has one) and return the JSON it
    prints last; its first argument is this tree's response texts (``SHARED``)."""
    import subprocess

    venv = tree / ".venv" / "bin" / "python"
    python = str(venv) if venv.exists() else sys.executable
    out = subprocess.run(
        [python, "-c", script, str(SHARED), *map(str, args)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{tree}: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_bare(minimal: bool, n_labels: int, warmup: int = 5) -> list[float]:
    """The same measurement on bench/apps/bare_page.py: Streamlit's own floor on this machine."""
    import subprocess
    import urllib.request

    from playwright.sync_api import sync_playwright

    from tests.support.streamlit_server import free_port

    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(ROOT / "bench" / "apps" / "bare_page.py"),
        "--server.headless=true",
        "--server.address=127.0.0.1",
        f"--server.port={port}",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
    ] + (["--", "--minimal"] if minimal else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.2)

        def tk(n: int) -> str:  # bare_page.py's key of its n-th pair
            return pair_token(str(n))

        # the bare page has no key listener: the click on its submit button is timed from
        # just before it (window.__t0 below), and cleared radios are not waited for
        times = []
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = b.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.wait_for_selector(".st-key-resp_left_" + pair_token("0"), timeout=60_000)
            wait_idle(page)
            for n in range(n_labels + warmup):
                page.wait_for_selector(f".st-key-q_submit_{pair_token(str(n))} button", state="attached")
                page.evaluate(
                    "t => { const r = document.querySelector(`.st-key-q_left_${t} input[type=radio]`); r?.click(); }",
                    tk(n),
                )
                page.wait_for_timeout(100)
                page.evaluate(WATCH, [pair_token(str(n + 1)), f"i{n + 1}", None, 0, 0])
                page.evaluate(
                    """t => {
                      window.__t0 = performance.now();
                      document.querySelector(`.st-key-q_submit_${t} button`).click();
                    }""",
                    tk(n),
                )
                ms = page.evaluate(RACE)
                if n >= warmup:
                    times.append(ms)
            b.close()
    finally:
        proc.terminate()
        proc.wait()
    return times


def run_label_studio(n_tasks: int, n_calls: int, tmp: Path, pool: list[str]) -> tuple[list[float], float] | None:
    try:
        import httpx

        from tests.support.labelstudio_server import start_label_studio
    except ImportError as e:
        print(f"anchor skipped: {e}")
        return None
    try:
        url, tok, stop = start_label_studio(tmp / "ls")
    except Exception as e:  # not installed here, or did not start
        print(f"anchor skipped: Label Studio did not start ({e})")
        return None
    try:
        from annotate.labelstudio.config import labeling_config

        h = {"Authorization": f"Token {tok}"}
        c = httpx.Client(base_url=url, headers=h, timeout=600)
        proj = c.post("/api/projects", json={"title": "mmrb bench anchor", "label_config": labeling_config()}).json()
        t = time.perf_counter()
        chunk = 5_000
        for lo in range(0, n_tasks, chunk):
            tasks = [
                {
                    "data": {
                        "prompt": f"Question {n}: what does the picture show?",
                        "image": "/static/images/logo.png",
                        "response_a": pool[(2 * n) % len(pool)],
                        "response_b": pool[(2 * n + 1) % len(pool)],
                        "pair_id": f"p{n:06d}",
                    }
                }
                for n in range(lo, min(n_tasks, lo + chunk))
            ]
            r = c.post(f"/api/projects/{proj['id']}/import", json=tasks)
            r.raise_for_status()
        import_s = time.perf_counter() - t
        result = [
            {"from_name": "preference", "to_name": "prompt", "type": "choices", "value": {"choices": ["A"]}},
        ]
        times = []
        task = c.get(f"/api/projects/{proj['id']}/next").json()
        for n in range(n_calls + 5):
            t0 = time.perf_counter()
            c.post(f"/api/tasks/{task['id']}/annotations", json={"result": result, "lead_time": 1.0}).raise_for_status()
            task = c.get(f"/api/projects/{proj['id']}/next").json()
            if n >= 5:
                times.append((time.perf_counter() - t0) * 1000)
        return times, import_s
    finally:
        stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small smoke run")
    ap.add_argument("--pairs", type=int)
    ap.add_argument("--labels", type=int)
    ap.add_argument("--ls-tasks", type=int, help="tasks imported into Label Studio for the anchor (default: --pairs)")
    ap.add_argument("--no-anchor", action="store_true")
    ap.add_argument("--no-images", action="store_true", help="without the run whose responses are images")
    ap.add_argument(
        "--cold-thumbnails",
        action="store_true",
        help="the image run without pre-made thumbnails of the response images: the app makes each on first view",
    )
    ap.add_argument(
        "--schemes",
        default="mmrb,mmrb2-pairwise,aspects",
        help=f"the forms measured, comma-separated, of {', '.join(SCHEME_KEYS)} (mmrb is always measured)",
    )
    ap.add_argument(
        "--baseline-tree",
        type=Path,
        help="also measure mmrb on this tree's app (e.g. a worktree of the commit before), in the same run",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="rounds of mmrb, the bare page of its shape (and --baseline-tree) in turn, --labels shared among "
        "them (more rounds even out a machine whose load drifts)",
    )
    a = ap.parse_args(argv)
    if a.rounds < 1:
        ap.error("--rounds: at least 1")
    measured = [x for x in dict.fromkeys(a.schemes.split(",")) if x and x != "mmrb"]
    unknown = [x for x in measured if x not in SCHEME_KEYS]
    if unknown:
        ap.error(f"--schemes: no bench keys for {', '.join(unknown)}; use {', '.join(SCHEME_KEYS)}")
    n_pairs = a.pairs or (2_000 if a.quick else 100_000)
    n_labels = a.labels or (30 if a.quick else 200)
    ls_tasks = a.ls_tasks or (300 if a.quick else n_pairs)
    n_ann, k = 20, 3
    with tempfile.TemporaryDirectory(prefix="mmrb-bench-annotate-") as d:
        tmp = Path(d)
        db, images = str(tmp / "bench.db"), tmp / "images"
        n_images = 30 if a.quick else 300
        names = build(db, images, n_pairs, n_ann, k, n_images=n_images)
        imager = (
            None
            if a.no_images
            else build_image_pairs(db, images, n_labels + 6, n_images, thumbnails=not a.cold_thumbnails)
        )
        by_scheme = {x: build_scheme_pairs(db, images, n_labels + 6, n_images, x) for x in measured}
        # mmrb, the bare page of the same shape and the baseline tree in turns, each round in
        # another order (a rotation), so none gains by its place on a machine whose load drifts
        base: list[float] = []
        times: list[float] = []
        bare: list[float] = []
        other = a.baseline_tree.resolve() if a.baseline_tree is not None else None
        other_db, other_images = str(tmp / "baseline.db"), tmp / "baseline-images"
        if other is not None:  # the baseline's own store of the same shape, made by its own code (its schema)
            t = time.perf_counter()
            in_tree(other, _BUILD, other_db, other_images, n_pairs, n_ann, k, n_images)
            print(f"built the same store with {other}'s code in {time.perf_counter() - t:.1f} s")
        turn: list[Path | None] = [ROOT, None, *([other] if other is not None else [])]  # None: the bare page
        for r in range(a.rounds):
            share = n_labels // a.rounds + (r < n_labels % a.rounds)  # --labels in all, over the rounds
            if not share:
                continue
            for tree in turn[r % len(turn) :] + turn[: r % len(turn)]:
                if tree is None:
                    bare.extend(run_bare(False, share))
                elif tree == ROOT:
                    times.extend(run_app(db, images, names[0], share, warmup=5, tmp=tmp))
                else:
                    base.extend(run_app(other_db, other_images, names[0], share, warmup=5, tmp=tmp, tree=tree))
        med, p95 = statistics.median(times), pct(times, 95)
        print(
            f"mmrb app   submit key -> next pair shown over {len(times)} labels: "
            f"median {med:.0f} ms, p95 {p95:.0f} ms (targets 120 / 200 ms) "
            f"{'OK' if med < 120 and p95 < 200 else 'MISSED'}"
        )
        if base:
            b_med, b_p95 = statistics.median(base), pct(base, 95)
            print(
                f"baseline   mmrb on {a.baseline_tree} over {len(base)} labels: median {b_med:.0f} ms, "
                f"p95 {b_p95:.0f} ms; this tree / baseline: median {med / b_med:.3f}, p95 {p95 / b_p95:.3f}"
            )
        for x, who in by_scheme.items():
            st_ = run_app(db, images, who, n_labels, warmup=5, tmp=tmp, scheme=x)
            s_med, s_p95 = statistics.median(st_), pct(st_, 95)
            print(
                f"scheme     {x} over {len(st_)} labels: median {s_med:.0f} ms, p95 {s_p95:.0f} ms; "
                f"against mmrb: median {s_med / med:.2f}, p95 {s_p95 / p95:.2f}"
            )
        if imager is not None:
            it = run_app(db, images, imager, n_labels, warmup=5, tmp=tmp, response_images=2)
            i_med, i_p95 = statistics.median(it), pct(it, 95)
            print(
                f"images     the same with two 1024x1024 response images per pair"
                f"{' (thumbnails made on first view)' if a.cold_thumbnails else ''}, over {len(it)} labels: "
                f"median {i_med:.0f} ms, p95 {i_p95:.0f} ms; against text only: median {i_med / med:.2f}, "
                f"p95 {i_p95 / p95:.2f} (text only here: median {med:.0f} ms, p95 {p95:.0f} ms)"
            )
        for bt, what in ((bare, "bare page of this shape"), (run_bare(True, n_labels), "minimal page (4 elements)")):
            print(
                f"reference  {what:<27} median {statistics.median(bt):.0f} ms, p95 {pct(bt, 95):.0f} ms: "
                f"Streamlit's own rerun here; mmrb / it: median {med / statistics.median(bt):.2f}, "
                f"p95 {p95 / pct(bt, 95):.2f}" + (" (in turns with mmrb)" if bt is bare else "")
            )
        if a.no_anchor:
            return 0
        got = run_label_studio(ls_tasks, n_labels, tmp, texts(2 * ls_tasks))
        if got is None:
            return 0
        ls_times, import_s = got
        ls_med, ls_p95 = statistics.median(ls_times), pct(ls_times, 95)
        print(
            f"anchor     Label Studio submit + next-task API over {len(ls_times)} labels on {ls_tasks:,} tasks "
            f"(imported in {import_s:.0f} s): median {ls_med:.0f} ms, p95 {ls_p95:.0f} ms"
        )
        print(
            f"ratio      mmrb / Label Studio: median {med / ls_med:.2f}, p95 {p95 / ls_p95:.2f} "
            "(mmrb includes the browser render; the anchor is API calls only)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
