"""Links in a real headless Chromium: every page is reachable by its own URL. Opened signed
out, a page's URL shows the sign-in form under that URL (no Streamlit "Page not found"), and
after sign-in the page itself is there; opened signed in, in a new tab, it is there at once;
an annotator who asks for a lead page is refused in words."""

from __future__ import annotations

import os

import pytest

from tests.support.services import unavailable
from tests.support.streamlit_server import (
    CHROMIUM,
    PASSWORD,
    StreamlitServer,
    seed_store,
    settled,
    wait_cookie,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
NOT_FOUND = "Page not found"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from curate.store import Store

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("links")
    with Store(str(d / "app.db"), images=d / "images") as s:
        seed_store(s, annotators=("alice",))
    with StreamlitServer(str(d / "app.db"), str(d / "images"), log=d / "streamlit.log") as srv:
        yield srv


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    yield ctx
    ctx.close()


def sign_in_at(page, url: str, name: str, asked: str) -> None:
    """Open ``url`` signed out: the sign-in form under that URL says which page it opens."""
    page.goto(url)
    wait_idle(page)
    page.get_by_text(f"Sign in to open {asked}.").wait_for(timeout=45_000)
    assert page.get_by_text(NOT_FOUND).count() == 0
    assert page.url == url
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    wait_cookie(page)


def test_a_lead_page_opened_signed_out_is_there_after_sign_in_and_in_a_new_tab(context, server):
    # Progress is the lead's landing page: Streamlit served a default page only at the root
    # ("Page not found" at its own path, the issue's /admin_progress), so it is asked for by name
    page = context.new_page()
    sign_in_at(page, server.url + "/admin_progress", "lead", "Progress")
    page.get_by_role("heading", name="Progress").wait_for(timeout=45_000)  # after the handoff's reload
    wait_idle(page)
    assert page.url == server.url + "/admin_progress" and page.get_by_text(NOT_FOUND).count() == 0

    for path, title in (("admin_quality", "Quality"), ("admin_progress", "Progress")):  # signed in, new tabs
        tab = context.new_page()
        tab.goto(f"{server.url}/{path}")
        tab.get_by_role("heading", name=title).wait_for(timeout=45_000)
        wait_idle(tab)
        assert tab.url == f"{server.url}/{path}", path
        assert tab.get_by_text(NOT_FOUND).count() == 0 and tab.get_by_role("textbox", name="Password").count() == 0


def test_an_annotator_page_opened_signed_out_is_there_after_sign_in_and_a_lead_page_is_refused(context, server):
    page = context.new_page()
    sign_in_at(page, server.url + "/my_labels", "alice", "My labels")
    page.get_by_role("heading", name="My labels").wait_for(timeout=45_000)
    wait_idle(page)
    assert page.url == server.url + "/my_labels"

    queue = context.new_page()  # the annotator's landing page by its own path
    queue.goto(server.url + "/label")
    queue.wait_for_selector(".st-key-mmrb-label", timeout=45_000)
    wait_idle(queue)
    assert queue.url == server.url + "/label" and queue.get_by_text(NOT_FOUND).count() == 0

    tab = context.new_page()
    tab.goto(server.url + "/admin_progress")
    tab.get_by_text("This page is for the annotation lead").wait_for(timeout=45_000)
    assert tab.get_by_role("heading", name="Progress").count() == 0


def test_the_app_root_signed_out_asks_for_no_page_and_lands_on_the_queue(context, server):
    page = context.new_page()
    page.goto(server.url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").wait_for(timeout=45_000)
    assert page.get_by_text("Sign in to open").count() == 0
    page.get_by_role("textbox", name="Name").fill("alice")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(".st-key-mmrb-label", timeout=45_000)
    wait_idle(page)
    assert page.url.rstrip("/") == server.url and page.get_by_text(NOT_FOUND).count() == 0


def test_the_sign_in_page_is_a_narrow_card_in_the_middle(context, server):
    """The name and password boxes of a narrow card centred on the page (not as wide as the
    page), at a laptop's width and at 800 px; the sign-in button as wide as the card."""
    page = context.new_page()
    page.goto(server.url)
    wait_idle(page)
    name = page.get_by_role("textbox", name="Name")
    name.wait_for(timeout=45_000)
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 768})
        settled(page)
        box, button = name.bounding_box(), page.get_by_role("button", name="Sign in").bounding_box()
        assert box is not None and button is not None
        assert 200 <= box["width"] <= 480, (width, box)
        assert abs(box["x"] + box["width"] / 2 - width / 2) <= 0.02 * width, (width, box)  # centred
        assert abs(button["width"] - box["width"]) < 6 and button["y"] > box["y"]  # the input is inside its frame
        password = page.get_by_role("textbox", name="Password").bounding_box()
        assert password is not None and abs(password["x"] - box["x"]) < 2  # one above the other
    page.get_by_text("mmrb-studio").first.wait_for()
    assert not page.get_by_text(NOT_FOUND).count()
