"""The label and adjudication pages with responses that are images, in a real headless
Chromium: both images shown at the same size, the full-size view with its flip (same place,
other picture), and a label given with the keyboard alone saved in stored order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotate.render import pair_token
from tests.support.services import unavailable
from tests.support.streamlit_server import (
    CHROMIUM,
    CONTROLS,
    OFF_SCREEN,
    PASSWORD,
    StreamlitServer,
    seed_image_pairs,
    seed_store,
    settled,
    wait_cookie,
    wait_idle,
    wait_label_ready,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from curate.store import Store

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("app")
    db, images = str(d / "app.db"), d / "images"
    with Store(db, images=images) as s:
        seed_store(s, n_pairs=2, annotators=("alice", "bob", "carol"))
        seed_image_pairs(s, ("alice", "bob", "carol"), missing_at=1)
        seed_interleaved(s, "dave")
    with StreamlitServer(db, str(images), log=d / "streamlit.log") as srv:
        srv.db, srv.images = db, images
        yield srv


def seed_interleaved(store, who: str) -> None:
    """An account ``who`` whose only pair, il0, has two interleaved responses (text, image,
    text, image, text; then three images with text between them) of tall pictures, as an
    MMRB2 image response has: the later parts are below the first image."""
    from curate.model import Annotator, Assignment, Candidate, ImageRef, Item, Pair, Part, render_parts
    from tests.support.streamlit_server import _password_hash, png

    stored = [store.images.put(png(40 + n, (400, 600))) for n in range(5)]
    refs = [ImageRef(f"il/{n}.png", x.sha256, "ok", x.width, x.height) for n, x in enumerate(stored)]
    text = Part.of_text
    a = (text("Step one:"), Part.of_image(refs[0]), text("Step two:"), Part.of_image(refs[1]), text("Done A."))
    b = (Part.of_image(refs[2]), text("Then:"), Part.of_image(refs[3]), text("And:"), Part.of_image(refs[4]))
    b += (text("Done B."),)
    with store.write() as c:
        store.add_images(stored, conn=c)
        store.add_items([Item(id="il0", prompt="Draw it in steps.", category="interleaved")], conn=c)
        store.add_candidates(
            [
                Candidate("il0/a", "il0", "omni-a", render_parts(a), content=a),
                Candidate("il0/b", "il0", "omni-b", render_parts(b), content=b),
            ],
            conn=c,
        )
        store.add_pairs([Pair("il0", "il0", "il0/a", "il0/b", "test")], conn=c)
    store.add_annotator(Annotator(who, "annotator", _password_hash()))
    store.add_assignments([Assignment("il0", who, "first", 0)])


# Every part of a response on the page: no box between it and the page's own scrolling hides
# anything (each scrolls no further than it shows, or lets its overflow show), and each part,
# scrolled to, is in the viewport.
HIDDEN_PARTS = """(box) => {
  const out = [];
  const main = document.querySelector('[data-testid=stMain]');
  for (let e = box; e && e !== main && e !== document.body; e = e.parentElement) {
    const cs = getComputedStyle(e);
    const clips = (v) => v !== 'visible';
    if ((clips(cs.overflowY) && e.scrollHeight > e.clientHeight + 1)
        || (clips(cs.overflowX) && e.scrollWidth > e.clientWidth + 1))
      out.push('clipped by ' + e.className + ' ' + [e.scrollHeight, e.clientHeight, e.scrollWidth, e.clientWidth]);
  }
  const b = box.getBoundingClientRect();
  for (const part of box.children) {
    const r = part.getBoundingClientRect();
    if (!r.height || r.top < b.top - 1 || r.bottom > b.bottom + 1 || r.left < b.left - 1 || r.right > b.right + 1)
      out.push('outside its box: ' + part.outerHTML.slice(0, 80));
    part.scrollIntoView({block: 'nearest'});
    const v = part.getBoundingClientRect();
    if (v.top < 0 || v.bottom > innerHeight + 1) out.push('not in view: ' + part.outerHTML.slice(0, 80));
  }
  return out;
}"""


def test_an_interleaved_response_shows_every_part_with_no_scroll_box(page, server):
    sign_in(page, server, "dave")
    tk = pair_token("il0")
    page.set_viewport_size({"width": 1366, "height": 768})
    for side, n in (("left", 2), ("right", 3)):
        sel = f'.mmrb-response-{side}[data-pair="{tk}"] img[data-image]'
        page.wait_for_function(
            "([sel, n]) => { const i = document.querySelectorAll(sel); return i.length === n"
            " && Array.from(i).every((x) => x.complete && x.naturalWidth > 0); }",
            arg=[sel, n],
            timeout=45_000,
        )
    wait_label_ready(page)
    settled(page)
    boxes = page.locator(f'.mmrb-response[data-pair="{tk}"]')
    texts = [boxes.nth(i).inner_text() for i in range(2)]
    assert "Done A." in texts[0] and "Done B." in texts[1]
    kinds = [
        boxes.nth(i).locator("> *").evaluate_all("(es) => es.map((e) => e.className || e.tagName)") for i in range(2)
    ]
    assert kinds == [
        ["P", "mmrb-rimage", "P", "mmrb-rimage", "P"],
        ["mmrb-rimage", "P", "mmrb-rimage", "P", "mmrb-rimage", "P"],
    ]
    for i in range(2):
        assert boxes.nth(i).evaluate(HIDDEN_PARTS) == [], i
    # the images the same size on both sides, wide enough to read: not shrunk to a sliver
    sizes = {
        tuple(r[2:])
        for r in page.locator(f'.mmrb-response[data-pair="{tk}"] .mmrb-rimage').evaluate_all(f"(es) => es.map({RECT})")
    }
    assert len(sizes) == 1 and min(next(iter(sizes))) >= 0.17 * 768, sizes
    page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / "annotate-interleaved.png"))
    assert not page.errors, page.errors


def store_of(server):
    from curate.store import Store

    return Store(server.db, images=server.images)


def sign_in(page, server, name: str) -> None:
    page.goto(server.url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("[data-testid=stSidebarNav], .st-key-mmrb-label", timeout=45_000)
    wait_idle(page)
    wait_cookie(page)


LOADED = """(sel) => { const i = document.querySelector(sel);
  return !!i && i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().height > 0; }"""
RECT = "(e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height].map(Math.round); }"
SHOWN = "(e) => getComputedStyle(e).visibility === 'visible'"


# The picture as drawn: an image fitted into its box (object-fit: contain) is drawn at the box's
# limiting side, its natural shape kept.
PICTURE = """(i) => { const r = i.getBoundingClientRect();
  const s = Math.min(r.width / i.naturalWidth, r.height / i.naturalHeight);
  return [i.naturalWidth * s, i.naturalHeight * s].map(Math.round); }"""


def assert_fills_the_screen(page, sel: str, inline: list[int]) -> None:
    """The full-size view's image ``sel`` at fit: drawn at least as large as inline, its box
    most of the viewport's height, and the dialog all on screen (nothing to scroll to)."""
    drawn, box = page.locator(sel).evaluate(PICTURE), page.locator(sel).evaluate(RECT)
    height = page.evaluate("innerHeight")
    assert drawn[0] >= inline[0] and drawn[1] >= inline[1], (drawn, inline)
    assert box[3] >= 0.7 * height and box[1] + box[3] <= height, (box, height)
    assert page.evaluate(
        "() => { const d = document.querySelector('[data-testid=stDialog]');"
        " return d.scrollHeight <= d.clientHeight + 1; }"
    )


def wait_loaded(page, sel: str) -> None:
    page.wait_for_function(LOADED, arg=sel, timeout=45_000)


def test_two_image_responses_same_size_zoom_flip_and_a_keyboard_label(page, server):
    sign_in(page, server, "alice")
    tk = pair_token("pr0")
    left = f'.mmrb-response-left[data-pair="{tk}"] img[data-image]'
    right = f'.mmrb-response-right[data-pair="{tk}"] img[data-image]'
    wait_loaded(page, left)
    wait_loaded(page, right)
    wait_label_ready(page)
    # alice sees pr0 with the first response (text, image, text) on the left, in order
    parts = page.locator(f'.mmrb-response-left[data-pair="{tk}"] > *').evaluate_all(
        "(es) => es.map((e) => e.tagName === 'P' ? e.innerText : e.className)"
    )
    assert parts == ["Here is edit 0:", "mmrb-rimage", "The sky is purple now."], parts
    lrect, rrect = page.locator(left).evaluate(RECT), page.locator(right).evaluate(RECT)
    assert lrect[2:] == rrect[2:] and lrect[2] > 100 and lrect[3] > 100, (lrect, rrect)  # the same size
    assert lrect[0] + lrect[2] <= rrect[0] and lrect[1] > rrect[1]  # side by side (the left one under its text)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "annotate-image-responses.png"))
    for sel in (left, right):  # served by the guarded media route, never embedded
        src = page.locator(sel).get_attribute("src")
        assert "/media/" in src
        url = server.url + src if src.startswith("/") else src
        assert page.context.request.get(url).status == 200
        stranger = page.context.browser.new_context()
        try:
            assert stranger.request.get(url).status == 403  # no session, no image
        finally:
            stranger.close()
        assert page.locator(sel).evaluate("(i) => getComputedStyle(i).objectFit") == "contain"
    with store_of(server) as s:
        first, second = (s.candidates(ids=[c])[0].images[0].sha256 for c in ("ir0/a", "ir0/b"))
    assert page.locator(left).get_attribute("data-image") == first
    assert page.locator(right).get_attribute("data-image") == second

    # one screen: a pair of image responses leaves every control in view
    page.set_viewport_size({"width": 1366, "height": 768})
    settled(page)
    assert page.evaluate(OFF_SCREEN, CONTROLS) == {}
    page.set_viewport_size({"width": 1400, "height": 1000})

    # Z: the full-size view of both responses' images, side by side, as large as the screen allows
    settled(page)
    inline = page.locator(left).evaluate(PICTURE)
    page.keyboard.press("z")
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Left response 640 x 480 pixels").wait_for(timeout=45_000)
    wait_loaded(page, "[role=dialog] .mmrb-side-by-side .mmrb-zoom-left")
    wait_loaded(page, "[role=dialog] .mmrb-side-by-side .mmrb-zoom-right")
    settled(page)
    assert_fills_the_screen(page, "[role=dialog] .mmrb-side-by-side .mmrb-zoom-left", inline)
    # the controls on one line above the images
    controls = page.locator("[role=dialog] .st-key-mmrb-zoom [data-testid=stHorizontalBlock]").first.evaluate(RECT)
    assert controls[3] <= 50, controls
    # at 200 % the original's pixels, twice over; scrolling one image scrolls the other alike
    dialog.locator(".st-key-zoom_level").click()
    page.get_by_role("option", name="Zoom: 200%").click()
    page.wait_for_function(
        "() => { const i = document.querySelector('[role=dialog] .mmrb-zoom-left');"
        " return i && i.getBoundingClientRect().width === 1280; }",
        timeout=45_000,
    )
    assert page.locator("[role=dialog] .mmrb-zoom-left").evaluate(RECT)[2:] == [1280, 960]
    frames = page.locator("[role=dialog] .mmrb-side-by-side .mmrb-zoom-frame")
    frames.nth(0).evaluate("(f) => { f.scrollLeft = 60; }")
    page.wait_for_function(
        "() => document.querySelectorAll('[role=dialog] .mmrb-side-by-side .mmrb-zoom-frame')[1].scrollLeft > 0"
    )
    assert frames.nth(1).evaluate("(f) => f.scrollLeft") == frames.nth(0).evaluate("(f) => f.scrollLeft")
    # V: the flip, the left image first, then the right one in the same place
    page.keyboard.press("v")
    page.locator("[role=dialog] .mmrb-flip").wait_for(timeout=45_000)
    wait_idle(page)
    zl, zr = (
        page.locator("[role=dialog] .mmrb-flip .mmrb-zoom-left"),
        page.locator("[role=dialog] .mmrb-flip .mmrb-zoom-right"),
    )
    wait_loaded(page, "[role=dialog] .mmrb-flip .mmrb-zoom-left")
    wait_loaded(page, "[role=dialog] .mmrb-flip .mmrb-zoom-right")
    assert zl.evaluate(SHOWN) and not zr.evaluate(SHOWN)
    assert zl.evaluate(RECT) == zr.evaluate(RECT)
    frame = page.locator("[role=dialog] .mmrb-flip .mmrb-zoom-frame")
    before = frame.screenshot()
    page.screenshot(path=str(ARTIFACTS / "annotate-image-flip.png"))
    page.keyboard.press("v")
    page.wait_for_function(
        "() => getComputedStyle(document.querySelector('[role=dialog] .mmrb-zoom-right')).visibility === 'visible'"
    )
    assert not zl.evaluate(SHOWN) and zr.evaluate(SHOWN)
    assert zr.get_attribute("data-image") == second and zl.evaluate(RECT) == zr.evaluate(RECT)
    assert dialog.get_by_text("Showing Right response").is_visible()
    after = frame.screenshot()
    assert before != after  # the edit (a small square) shows as a change in the same place
    page.keyboard.press("v")
    assert zl.evaluate(SHOWN) and not zr.evaluate(SHOWN)
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached", timeout=45_000)

    # V on the page itself: the flip at once, fit to the screen (Z opens side by side again), V flips on
    wait_label_ready(page)
    page.keyboard.press("v")
    page.locator("[role=dialog] .mmrb-flip").wait_for(timeout=45_000)
    wait_idle(page)
    wait_loaded(page, "[role=dialog] .mmrb-flip .mmrb-zoom-left")
    settled(page)
    assert zl.evaluate(SHOWN) and not zr.evaluate(SHOWN)
    assert_fills_the_screen(page, "[role=dialog] .mmrb-flip .mmrb-zoom-left", inline)
    page.set_viewport_size({"width": 800, "height": 768})  # narrow: the controls still one line, the image fits
    settled(page)
    assert_fills_the_screen(page, "[role=dialog] .mmrb-flip .mmrb-zoom-left", inline)
    assert page.locator("[role=dialog] .st-key-mmrb-zoom [data-testid=stHorizontalBlock]").first.evaluate(RECT)[3] <= 50
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.keyboard.press("v")
    page.wait_for_function(
        "() => getComputedStyle(document.querySelector('[role=dialog] .mmrb-zoom-right')).visibility === 'visible'"
    )
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached", timeout=45_000)
    page.keyboard.press("z")
    page.locator("[role=dialog] .mmrb-side-by-side").wait_for(timeout=45_000)
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached", timeout=45_000)

    # the whole label from the keyboard: left correct, right incorrect, right better
    wait_label_ready(page)
    for k in ("1", "9", "d", "Enter"):
        page.keyboard.press(k)
    page.get_by_text("Edit 1: make the sky purple.").wait_for(timeout=45_000)
    wait_label_ready(page)
    with store_of(server) as s:
        got = s.get_label("pr0", "alice")
        assert s.get_assignment("pr0", "alice").left == "first"
    assert (got.correctness_first, got.correctness_second, got.preference) == ("correct", "incorrect", "second")

    # pr1's second image is missing (alice sees it on the left): a placeholder of the same size, with the reason
    tk1 = pair_token("pr1")
    missing = page.locator(f'.mmrb-response-left[data-pair="{tk1}"] .mmrb-missing')
    missing.wait_for(timeout=45_000)
    assert "The image file was not found when the data was imported." in missing.inner_text()
    wait_loaded(page, f'.mmrb-response-right[data-pair="{tk1}"] img[data-image]')
    shown = page.locator(f'.mmrb-response-right[data-pair="{tk1}"] .mmrb-rimage')
    assert missing.evaluate(RECT)[2:] == shown.evaluate(RECT)[2:]
    wait_loaded(page, 'img[data-item="ir1"]')  # an edit: the prompt's image above the responses
    wait_label_ready(page)
    page.set_viewport_size({"width": 1366, "height": 768})
    settled(page)
    assert page.evaluate(OFF_SCREEN, CONTROLS) == {}
    page.screenshot(path=str(ARTIFACTS / "annotate-image-edit.png"))
    page.keyboard.press("z")  # an edit: the full-size view offers the prompt's image too
    page.get_by_role("dialog").get_by_text("prompt image").click()
    page.get_by_role("dialog").get_by_text("Original size 640 x 480 pixels").wait_for(timeout=45_000)
    page.keyboard.press("Escape")
    page.get_by_role("dialog").wait_for(state="detached", timeout=45_000)
    assert not page.errors, page.errors


def test_adjudication_shows_the_response_images_and_the_full_size_view(page, server):
    from curate.model import Label

    with store_of(server) as s:
        s.save_label(Label("pr1", "bob", "correct", "incorrect", "first"))
        s.save_label(Label("pr1", "carol", "incorrect", "correct", "second"))
    sign_in(page, server, "lead")
    page.goto(server.url + "/admin_adjudicate")
    page.get_by_role("button", name="Record decision").wait_for(timeout=45_000)
    wait_idle(page)
    assert page.locator(".st-key-adj_pair input").input_value().startswith("Edit 1:")  # named by its prompt
    tk = pair_token("pr1")
    wait_loaded(page, f'.mmrb-response-left[data-pair="{tk}"] img[data-image]')  # the first response's
    assert "Image missing" in page.locator(f'.mmrb-response-right[data-pair="{tk}"] .mmrb-missing').inner_text()
    page.keyboard.press("z")
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("First response 640 x 480 pixels · Second response: no image").wait_for(timeout=45_000)
    wait_loaded(page, "[role=dialog] .mmrb-zoom-left")
    page.keyboard.press("v")
    page.locator("[role=dialog] .mmrb-flip").wait_for(timeout=45_000)
    page.keyboard.press("v")
    page.wait_for_function(
        "() => getComputedStyle(document.querySelector('[role=dialog] .mmrb-zoom-right')).visibility === 'visible'"
    )
    assert "Image missing" in page.locator("[role=dialog] .mmrb-flip .mmrb-zoom-right").inner_text()
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached", timeout=45_000)
    assert not page.errors, page.errors
