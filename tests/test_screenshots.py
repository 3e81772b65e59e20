"""A screenshot of every page of the app, as an annotator and as the lead, on the bundled
sample with most of its labels in and some disagreements: evidence of what each page looks
like, and a check that none of them shows an exception, "None" or "1 pairs".

The pages are found by the sidebar's navigation, whatever it holds. Screenshots go to the
directory in $MMRB_SCREENSHOTS (default: a pytest temporary directory), named
``{annotator|lead}-{page}.png``, full page, at 1440x900. The Quality page is also shown on
the sample with a careless annotator and gold (tests/support/quality_sample.py), as
``quality.png``. The README's six come from here:

    MMRB_SCREENSHOTS=/tmp/shots .venv/bin/python -m pytest tests/test_screenshots.py
    cp /tmp/shots/{annotator-label,annotator-label-images,lead-adjudication}.png docs/screenshots/
    cp /tmp/shots/{lead-progress,lead-agreement,quality}.png docs/screenshots/

(one image alone: run only its test, e.g. ``-k quality``, and copy only that file). The
label page with image responses is ``annotator-label-images.png`` (``-k image_responses``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.labelled_sample import labelled_sample
from tests.support.quality_sample import careless_gold_alert, quality_sample
from tests.support.services import unavailable
from tests.support.streamlit_server import CHROMIUM, StreamlitServer, settled, wait_cookie, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORT = {"width": 1440, "height": 900}
# Streamlit scrolls inside its own element, so a full-page screenshot would stop at the
# viewport; this lets the document grow instead (vh units keep the real viewport's size).
# The capture resizes the window for a moment (to 1x1 pixel in headless Chromium), which sets
# the sidebar sliding shut and open again: it is pinned where it rests.
UNSCROLL = """() => {
  if (document.getElementById('mmrb-shot')) return;
  const bar = document.querySelector('[data-testid=stSidebar]');
  const w = bar ? Math.round(bar.getBoundingClientRect().width) : 0;
  const s = document.createElement('style');
  s.id = 'mmrb-shot';
  s.textContent = `[data-testid=stAppViewContainer], [data-testid=stMain], html, body, #root, [data-testid=stApp] {
    position: static !important; overflow: visible !important; height: auto !important; max-height: none !important; }
  [data-testid=stSidebar] { align-self: stretch !important; height: auto !important; max-height: none !important;
    transform: none !important; transition: none !important;
    min-width: ${w}px !important; max-width: ${w}px !important; }
  [data-testid=stExpandSidebarButton] { display: none !important; }`;
  document.head.appendChild(s);
}"""


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The bundled sample as three annotators leave it (tests/support/labelled_sample.py):
    each with three pairs still to label, some pairs disagreeing. The lead has decided those
    before the first with an automatic verdict, so the adjudication page opens on one that
    shows the reference answer and the verdict too."""
    from annotate.adjudication import disagreements
    from curate.model import Adjudication
    from curate.store import Store

    info = labelled_sample(tmp_path_factory.mktemp("sample") / "sample.db", leave_open=3)
    with Store(info.db, info.images) as s:
        split = disagreements(s)
        assert split, "no pair disagrees: the adjudication page would be empty"
        for row in split:
            if s.get_pair(row.pair_id).auto_method:
                break
            s.set_adjudication(Adjudication(row.pair_id, "lead", "first", note="Decided in the first pass."))
        assert any(r.pending for r in disagreements(s))
    return info.db, info.images


@pytest.fixture(scope="module")
def server(sample, tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    db, images = sample
    with StreamlitServer(db, images, log=tmp_path_factory.mktemp("log") / "streamlit.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    d = Path(os.environ.get("MMRB_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def settle(page) -> None:
    """Until the page has run and drawn: images decoded, charts and tables painted."""
    wait_idle(page)
    settled(page)
    wait_idle(page)


def save(page, path: Path) -> None:
    """A full-page screenshot, made small: a 256-colour palette suits the app's flat colours."""
    from PIL import Image

    page.evaluate(UNSCROLL)
    settled(page)  # laid out again without the scrolling
    page.screenshot(path=str(path), full_page=True)
    with Image.open(path) as im:
        rgb = im.convert("RGB")
        # the sidebar's grey at its top left corner: open, not caught sliding shut (white)
        assert rgb.getpixel((10, 10)) != (255, 255, 255), f"{path.name}: no sidebar"
        small = rgb.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


@contextmanager
def signed_in(browser, url: str, name: str, password: str) -> Iterator[tuple[Any, list[str]]]:
    """A page at VIEWPORT signed in as ``name`` (the sidebar shown, the session cookie set),
    and the script errors it collects; closed when the block ends."""
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url)
        wait_idle(page)
        page.get_by_role("textbox", name="Name").fill(name)
        page.get_by_role("textbox", name="Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_selector("[data-testid=stSidebarNav]", timeout=45_000)
        wait_cookie(page)
        yield page, errors
    finally:
        ctx.close()


def walk(browser, server, name: str, password: str, who: str, out: Path) -> list[str]:
    """Sign in, then open every page of the sidebar's navigation and save its screenshot.
    Returns the page titles, in the sidebar's order."""
    with signed_in(browser, server.url, name, password) as (page, errors):
        links = page.locator("[data-testid=stSidebarNav] a")
        # a link's text is its icon's name, then its title
        pages = [(a.inner_text().strip().split("\n")[-1], urlsplit(a.get_attribute("href")).path) for a in links.all()]
        for title, path in pages:
            page.locator(f'[data-testid=stSidebarNav] a[href$="{path}"]').click()
            page.wait_for_url(f"**{path}", timeout=45_000)
            settle(page)
            text = page.evaluate("document.body.innerText")
            assert page.locator("[data-testid=stException]").count() == 0, f"{who} {title}: an exception is shown"
            assert "Traceback" not in text and "You do not have access" not in text, f"{who} {title}: {text[:300]}"
            # what a reader would find wrong: an empty cell shown as "None", "1 pairs"
            assert not re.search(r"\bNone\b", text), f"{who} {title}: None shown"
            assert not re.search(r"\b1 (pairs|labels|annotators|items|categories)\b", text), f"{who} {title}"
            save(page, out / f"{who}-{slug(title)}.png")
        assert not errors, errors
        return [t for t, _ in pages]


def test_every_annotator_page_is_shown_and_saved(browser, server, shots):
    got = walk(browser, server, "alice", "alice-demo", "annotator", shots)
    assert {"Label", "My labels", "Guidelines"} <= set(got) and "Adjudication" not in got
    for t in got:
        assert (shots / f"annotator-{slug(t)}.png").stat().st_size > 10_000


def test_every_lead_page_is_shown_and_saved(browser, server, shots):
    got = walk(browser, server, "lead", "lead-demo", "lead", shots)
    assert {"Progress", "Agreement", "Adjudication", "Quality", "Annotators", "Leaderboard", "Label"} <= set(got)
    for t in got:
        assert (shots / f"lead-{slug(t)}.png").stat().st_size > 10_000


def test_the_quality_page_with_a_careless_annotator_is_saved(browser, shots, tmp_path_factory):
    """The Quality page on the sample with a careless annotator and gold, alerts below 50% on
    15 labels or more (the sample's annotators have fewer than the default 20 gold labels
    each): the alerts, the three plots and the table, the bias chart and table
    (docs/screenshots/quality.png)."""
    d = tmp_path_factory.mktemp("quality")
    info = quality_sample(d / "sample.db")
    with StreamlitServer(info.db, info.images, log=d / "streamlit.log") as server:
        with signed_in(browser, server.url, "lead", "lead-demo") as (page, errors):
            page.goto(server.url + "/admin_quality")
            page.get_by_role("heading", name="Quality").wait_for(timeout=45_000)
            wait_idle(page)
            for label, value in (("Alert below", "0.50"), ("Labels a share needs (fewer: greyed)", "15")):
                box = page.get_by_role("spinbutton", name=label, exact=True)
                box.fill(value)
                box.press("Enter")
                wait_idle(page)
            page.get_by_text(careless_gold_alert(info, threshold=0.5, min_n=15)).wait_for(timeout=45_000)
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            page.wait_for_function(
                "() => document.querySelectorAll('[data-testid=stVegaLiteChart] svg.marks, "
                "[data-testid=stVegaLiteChart] canvas').length >= 4",
                timeout=45_000,
            )
            settle(page)
            assert page.get_by_text("alice: ", exact=False).count() == 0  # the careless one alone is flagged
            assert page.locator("[data-testid=stException]").count() == 0
            save(page, shots / "quality.png")
            assert (shots / "quality.png").stat().st_size > 10_000
            assert not errors, errors


def test_the_label_page_with_image_responses_is_saved(browser, shots, tmp_path_factory):
    """The label page on a fresh sample, on carol's first pair: a text-to-image prompt whose
    two responses are drawn bar charts (one with a wrong bar), both shown at the same size
    (docs/screenshots/annotator-label-images.png)."""
    from annotate import demo
    from annotate.queue import current_view
    from curate.store import Store

    d = tmp_path_factory.mktemp("images")
    info = demo.ensure_sample(d / "sample.db")
    with Store(info.db, info.images) as s:
        view = current_view(s, "carol")
        assert view is not None and view.category == "t2i" and view.has_response_images
    with StreamlitServer(info.db, info.images, log=d / "streamlit.log") as server:
        with signed_in(browser, server.url, "carol", "carol-demo") as (page, errors):
            shown = ".mmrb-response .mmrb-rimage img"
            page.wait_for_function(
                f"() => {{ const i = document.querySelectorAll({shown!r});"
                " return i.length == 2 && Array.from(i).every((x) => x.complete && x.naturalWidth > 0); }",
                timeout=45_000,
            )
            settle(page)
            boxes = [page.locator(shown).nth(n).bounding_box() for n in range(2)]
            sizes = [(b["width"], b["height"]) for b in boxes if b is not None]
            assert len(sizes) == 2 and sizes[0] == sizes[1], sizes  # the same size on both sides
            assert page.locator("[data-testid=stException]").count() == 0
            save(page, shots / "annotator-label-images.png")
            assert (shots / "annotator-label-images.png").stat().st_size > 10_000
            assert not errors, errors
