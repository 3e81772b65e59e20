"""Every page in a real browser over a store whose every string is hostile: Markdown images
and links to an outside host, raw HTML, script, javascript: and data: URLs. Nothing may make
the browser fetch a URL outside the app, and no hostile HTML may become an element.

The data is seeded through the store's API (and an evaluation run for the leaderboard), then
the test walks each page as an annotator and as the lead with a request listener on the
browser context; each page must also show the hostile text (so a page that showed nothing
could not pass)."""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import pytest

from tests.support.services import unavailable
from tests.support.streamlit_server import (
    CHROMIUM,
    PASSWORD,
    StreamlitServer,
    png,
    settled,
    wait_cookie,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EVIL = "evil.test"  # a reserved name: a request to it is seen by the listener and resolves nowhere
PWN = "window.__pwned=1"


def short(tag: str) -> str:
    """A hostile one-word string of at most 100 characters (names, categories)."""
    return f"{tag}![i](http://{EVIL}/{tag}.png)<img/src=http://{EVIL}/{tag}r.png/onerror={PWN}>"


def inline(tag: str) -> str:
    """A hostile one-line string of at most 200 characters (ids, model names)."""
    return (
        f"{tag} ![i](http://{EVIL}/{tag}.png) [js](javascript:{PWN}) <img src=//{EVIL}/{tag}r.png onerror={PWN}>"
        f" <a href=http://{EVIL}/{tag}/raw-a>a</a> $x$ :red[r] </script><script>{PWN}</script>"
    )[:200]


def block(tag: str) -> str:
    """Hostile free text: every way Markdown or HTML could fetch, run or become an element."""
    return "\n\n".join(
        [
            f"{tag} starts here with **bold**",
            f"![md image](http://{EVIL}/{tag}/md.png) and ![ref image][r] and <http://{EVIL}/{tag}/auto>",
            f"[a link](http://{EVIL}/{tag}/md-link) [js link](javascript:{PWN}) "
            f"[data link](data:text/html,<script>{PWN}</script>)",
            "![data image](data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnLz4=)",
            f'<img src="http://{EVIL}/{tag}/raw.png" onerror="{PWN}"> <img srcset="http://{EVIL}/{tag}/set.png 2x">',
            f"<script>{PWN}</script>",
            f'<iframe src="http://{EVIL}/{tag}/frame"></iframe><object data="http://{EVIL}/{tag}/obj"></object>',
            f'<a href="http://{EVIL}/{tag}/raw-a">raw anchor</a> <svg><image href="http://{EVIL}/{tag}/svg.png"/></svg>',
            f'<style>@import url("http://{EVIL}/{tag}/css");</style><link rel="stylesheet" href="http://{EVIL}/{tag}/l.css">',
            f'<video poster="http://{EVIL}/{tag}/poster.png"></video> <div style="background:url(http://{EVIL}/{tag}/bg.png)">bg</div>',
            "$\\href{http://" + EVIL + "/" + tag + "/tex}{tex}$ :red[red] :material/home:",
            f"[r]: http://{EVIL}/{tag}/ref.png",
        ]
    )


ANN, OTHER = short("ANN"), short("OTH")
LEAD = f"LEAD</script><img/src=//{EVIL}/L.png/onerror={PWN}>![i](http://{EVIL}/L.png)"  # also inside a <script>
CAT = short("CAT")
PAIRS = [inline(f"PID{n}") for n in range(3)]


def seed(store, tmp) -> None:
    from curate.judging.records import Judgment, RunDataset
    from curate.judging.runner import ensure_run
    from curate.model import Adjudication, Annotator, Assignment, Candidate, ImageRef, Item, Label, Pair
    from tests.support.streamlit_server import _password_hash

    img = store.images.put(png(1))
    items, cands, pairs = [], [], []
    for n, pid in enumerate(PAIRS):
        iid = inline(f"IID{n}")
        ref = ImageRef(inline(f"SRC{n}"), img.sha256, "ok", img.width, img.height)
        items.append(Item(id=iid, prompt=block(f"PRM{n}"), category=CAT, images=(ref,)))
        cands += [
            Candidate(id=inline(f"CA{n}"), item_id=iid, model=inline(f"MODA{n}"), text=block(f"RSA{n}")),
            Candidate(id=inline(f"CB{n}"), item_id=iid, model=inline(f"MODB{n}"), text=block(f"RSB{n}")),
        ]
        pairs.append(
            Pair(
                id=pid,
                item_id=iid,
                first_id=cands[-2].id,
                second_id=cands[-1].id,
                origin=inline("ORG"),
                known_preference="first",
                is_gold=n == 0,
            )
        )
    with store.write() as c:
        store.add_images([img], conn=c)
        store.add_items(items, conn=c)
        store.add_candidates(cands, conn=c)
        store.add_pairs(pairs, conn=c)
    h = _password_hash()
    store.add_annotator(Annotator(LEAD, "admin", h))
    for name in (ANN, OTHER):
        store.add_annotator(Annotator(name, "annotator", h))
    store.add_assignments(
        Assignment(pair_id=p.id, annotator=a, left="first", seq=n) for a in (ANN, OTHER) for n, p in enumerate(pairs)
    )
    # pairs 1 and 2 labelled by both, differently (two disagreements); pair 0 stays open for ANN
    for pid in PAIRS[1:]:
        store.save_label(Label(pid, ANN, "correct", "incorrect", "first", rationale=block("RAT"), seconds=3.0))
        store.save_label(
            Label(
                pid,
                OTHER,
                "incorrect",
                "correct",
                "second",
                rationale=block("RAO"),
                flag="other",
                flag_note=block("FLN"),
                seconds=4.0,
            )
        )
    store.set_adjudication(Adjudication(PAIRS[2], LEAD, "first", "correct", "incorrect", note=block("NOTE")))
    store.set_guidelines(block("GDL"), LEAD)
    store.set_setting("rationale_required", "tie,unsure,flag," + short("RULE"))
    # an evaluation run for the leaderboard: a judge that always says "first" (so it has mistakes),
    # twice per pair (two samples: the page draws its inference-time scaling, the judge's name in it)
    ds = tmp / "dataset.jsonl"
    ds.write_text(
        "".join(
            json.dumps(
                {
                    "id": inline(f"EID{n}"),
                    "prompt": block(f"EPR{n}"),
                    "chosen": block(f"ECH{n}"),
                    "rejected": block(f"ERJ{n}"),
                    "category": short(f"ECAT{n}"),
                    "images": [inline(f"EIMG{n}")],
                }
            )
            + "\n"
            for n in range(2)
        ),
        encoding="utf-8",
    )
    from mmrb_eval.datasets import read_dataset

    label = RunDataset.files([str(ds)])
    run = inline("RUN")
    ensure_run(store, run, purpose="evaluate", judge=inline("JUDGE"), identity={"kind": "test"}, dataset=label)
    store.add_judgments(
        run,
        [
            Judgment(p.id, "forward", i, "first", "parsed", block("JOUT"), block("JPROMPT"))
            for p in read_dataset(ds)
            for i in range(2)
        ],
    )
    ensure_run(
        store,
        inline("ORPHAN"),
        purpose="evaluate",
        judge=inline("OJ"),
        identity={},
        dataset=RunDataset.files(tmp / "gone![i](http:evil.test/gone.png).jsonl"),
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from curate.store import Store

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("hostile")
    db, images = str(d / "app.db"), d / "images"
    with Store(db, images=images) as s:
        seed(s, d)
    with StreamlitServer(db, str(images), log=d / "streamlit.log") as srv:
        srv.db, srv.images = db, images
        yield srv


# Every element attribute and style text of the document that points at the outside host or
# runs script. Markdown links in rendered text (paths ending /md-link or /auto) may stay
# links: a link is shown, not fetched. Anything else naming the host is hostile HTML.
SCAN = """() => {
  const bad = [];
  // attributes that load or point somewhere (text ones such as value, title or aria-label may hold anything)
  const URL_ATTRS = ['src', 'href', 'srcset', 'action', 'formaction', 'poster', 'data', 'background', 'style',
                     'xlink:href', 'ping', 'codebase', 'cite', 'manifest', 'lowsrc', 'dynsrc'];
  const ok = (el, name, v) => el.tagName === 'A' && name === 'href' && /\\/(md-link|auto)$/.test(v);
  for (const el of document.querySelectorAll('*')) {
    const t = el.tagName;
    // a script of the data's own (our session-cookie script holds a name only as a JS string)
    if (t === 'SCRIPT' && /^\\s*window\\.__pwned/.test(el.textContent)) {
      bad.push('SCRIPT: ' + el.textContent.slice(0, 80));
    }
    if (t === 'STYLE' && /evil\\.test/.test(el.textContent)) bad.push('STYLE: ' + el.textContent.slice(0, 80));
    if (['IFRAME', 'OBJECT', 'EMBED', 'FRAME', 'VIDEO', 'LINK'].includes(t) && /evil\\.test/.test(el.outerHTML)) {
      bad.push(el.outerHTML.slice(0, 120));
    }
    for (const a of el.attributes) {
      const v = a.value;
      if (a.name.startsWith('on') && /__pwned/.test(v)) bad.push(t + ' ' + a.name + '=' + v);
      else if (URL_ATTRS.includes(a.name) && /evil\\.test/.test(v) && !ok(el, a.name, v)) {
        bad.push(t + ' ' + a.name + '=' + v.slice(0, 120));
      }
      else if (['href', 'src', 'srcset', 'action', 'formaction', 'poster', 'data'].includes(a.name)
               && /^\\s*(javascript|vbscript):/i.test(v)) bad.push(t + ' ' + a.name + '=' + v);
      else if (['href', 'src', 'srcset'].includes(a.name) && /^\\s*data:(image\\/svg|text\\/html)/i.test(v)
               && !(t === 'LINK' && /icon/.test(el.rel))) {  // the favicon
        bad.push(t + ' ' + a.name + '=' + v.slice(0, 60));
      }
    }
  }
  return bad;
}"""


class Walk:
    """One browser context with a listener for every request it makes."""

    def __init__(self, browser, server):
        self.server = server
        self.origin = urlsplit(server.url).netloc
        self.ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.outside: list[str] = []
        self.ctx.on("request", self._seen)
        self.page = self.ctx.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _seen(self, request) -> None:
        u = urlsplit(request.url)
        if EVIL in request.url or (u.scheme in ("http", "https", "ws", "wss") and u.netloc != self.origin):
            self.outside.append(request.url)

    def sign_in(self, name: str) -> None:
        p = self.page
        p.goto(self.server.url)
        wait_idle(p)
        p.get_by_role("textbox", name="Name").fill(name)
        p.get_by_role("textbox", name="Password").fill(PASSWORD)
        p.get_by_role("button", name="Sign in").click()
        p.wait_for_selector(
            "[data-testid=stSidebarNav]", timeout=45_000
        )  # an annotator lands on Label, a lead on Progress
        wait_idle(p)
        wait_cookie(p)

    def open(self, title: str) -> None:
        """A page by its sidebar link, as a person does."""
        nav = self.page.locator("[data-testid=stSidebarNav]")
        link = nav.get_by_role("link", name=title, exact=True)  # "Label", not "My labels"
        path = urlsplit(link.get_attribute("href")).path
        link.click()
        self.page.wait_for_url(f"**{path}", timeout=45_000)
        self.page.wait_for_function(  # the link of the page the app now runs
            "(path) => { const a = document.querySelector('[data-testid=stSidebarNav] a[aria-current=page]');"
            " return a && new URL(a.href).pathname === path; }",
            arg=path,
            timeout=45_000,
        )
        wait_idle(self.page)

    def check(self, where: str, *tags: str) -> None:
        """Nothing fetched from outside, no hostile element, no script run, and the page
        shows the hostile strings it is meant to show (as text)."""
        p = self.page
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # here: --quick collects without it

        try:
            shown = "(t) => t.every((s) => document.body.innerText.includes(s))"
            p.wait_for_function(shown, arg=list(tags), timeout=45_000)
        except PlaywrightTimeout:
            pass  # the assertion below names what is missing
        settled(p)  # any image the page made has loaded or failed: its request was made
        wait_idle(p)
        text = p.evaluate("document.body.innerText")
        missing = [t for t in tags if t not in text]
        assert not missing, f"{where}: the page does not show {missing}"
        assert "Traceback" not in text, f"{where}: a traceback is shown"
        assert p.evaluate(SCAN) == [], f"{where}: hostile HTML became elements"
        assert p.evaluate("window.__pwned") is None, f"{where}: hostile script ran"
        assert self.outside == [], f"{where}: requests left the app: {self.outside}"
        assert not self.errors, f"{where}: {self.errors}"

    def close(self) -> None:
        self.ctx.close()


def test_every_annotator_page_with_hostile_data_fetches_nothing_outside(browser, server):
    w = Walk(browser, server)
    try:
        w.sign_in(ANN)
        w.page.get_by_text("PRM0 starts here").wait_for(timeout=45_000)
        w.page.locator("[data-testid=stExpander] summary", has_text="Guidelines").click()  # the panel under the form
        w.check(
            "label page",
            "PRM0 starts here",
            "RSA0 starts here",
            "RSB0 starts here",
            "ANN![i]",
            "CAT![i]",
            "GDL starts here",
        )
        w.open("My labels")
        w.page.wait_for_selector("[data-testid=stDataFrame]", timeout=45_000)
        w.check("my labels")
        # reopen the first row (the row marker column at the grid's left edge)
        box = w.page.locator("[data-testid=stDataFrame]").bounding_box()
        w.page.mouse.click(box["x"] + 18, box["y"] + 35 + 18)
        w.page.get_by_text("Editing pair").wait_for(timeout=45_000)
        w.check("my labels, editing", "Editing pair PID", "PRM", "RSA", "RSB")
        assert "RAT starts here" in w.page.locator("textarea").input_value()  # the rationale, as text
        w.open("Guidelines")
        w.check("guidelines", "GDL starts here")
    finally:
        w.close()


def test_every_lead_page_with_hostile_data_fetches_nothing_outside(browser, server):
    w = Walk(browser, server)
    try:
        w.sign_in(LEAD)  # the lead lands on Progress
        w.page.wait_for_selector("[data-testid=stDataFrame]", timeout=45_000)
        w.check("progress", "By category")
        w.open("Label")  # nothing assigned to the lead: a notice, no empty form
        w.page.get_by_text("No pairs are assigned to you yet").wait_for(timeout=45_000)
        w.check("lead's label page", "LEAD</script>")
        w.open("Agreement")
        w.page.get_by_text("Alpha per field and category").wait_for(timeout=45_000)
        w.check("agreement", "Alpha per field and category")
        w.open("Adjudication")
        w.page.get_by_role("button", name="Record decision").wait_for(timeout=45_000)
        w.check("adjudication", "PRM1 starts here", "RSA1 starts here", "RSB1 starts here", "MODA1 ", "MODB1 ")
        w.page.get_by_role("button", name="Record decision").click()
        w.page.get_by_text("Decision recorded for").wait_for(timeout=45_000)
        w.check("adjudication, after recording", "Decision recorded for PID1")
        w.open("Annotators")
        w.page.wait_for_selector("[data-testid=stDataFrame]", timeout=45_000)
        w.check("annotators")
        w.page.get_by_text("Add an account").click()
        for attempt in (1, 2):  # text typed while a rerun of the page is still arriving can be dropped
            w.page.get_by_role("textbox", name="Name").fill(short("NEW"))
            w.page.get_by_role("textbox", name="Initial password (at least 8 characters)").fill(PASSWORD)
            w.page.get_by_role("button", name="Add").click()
            try:  # markup names no account
                w.page.get_by_text("invalid annotator name").wait_for(timeout=30_000 if attempt == 1 else 45_000)
                break
            except Exception:
                if attempt == 2:
                    raise
                wait_idle(w.page)
        w.check("annotators, after adding", "invalid annotator name 'NEW![i]")
        w.open("Leaderboard")
        w.page.get_by_text("Mistakes").wait_for(timeout=45_000)
        for exp in w.page.locator("[data-testid=stExpander] summary").all():
            exp.click()
        w.check("leaderboard", "ORPHAN ![i]", "EPR", "EID", "ECAT", "EIMG", "JOUT", "Inference-time scaling")
        w.open("Guidelines")
        w.check("lead's guidelines", "GDL starts here")
    finally:
        w.close()
