"""The full-size view (Z) in a real server and headless Chromium (issue 25): with a stored
image replaced by a symbolic link to /proc/self/environ, nothing the server serves holds the
app's environment, and the view shows the placeholder with its reason. The rest of the issue's
faults are tests/test_faults_images.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.images import swap_for_link

pytestmark = [pytest.mark.browser, pytest.mark.slow]


# -- the real server: nothing it serves holds what a link points at ------------------------------
ENV_SECRET = "hunter2-env-secret"


@pytest.fixture(scope="module")
def linked_server(tmp_path_factory):
    """A real app server whose store has ir0/a's image (alice's left response on pr0)
    replaced by a link to /proc/self/environ, its environment holding ENV_SECRET."""
    from curate.store import Store
    from tests.support.services import unavailable
    from tests.support.streamlit_server import CHROMIUM, StreamlitServer, seed_image_pairs, seed_store

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("linked")
    db, images = str(d / "app.db"), d / "images"
    with Store(db, images=images) as s:
        seed_store(s, n_pairs=1, annotators=("alice",))
        seed_image_pairs(s, ("alice",))
        swap_for_link(s.image_path(s.candidates(ids=["ir0/a"])[0].images[0].sha256), Path("/proc/self/environ"))
    with StreamlitServer(db, str(images), log=d / "streamlit.log", extra_env={"MMRB_TEST_SECRET": ENV_SECRET}) as srv:
        yield srv


def test_the_server_never_serves_the_environment_through_a_linked_image(page, linked_server):
    from tests.support.streamlit_server import PASSWORD, wait_cookie, wait_idle, wait_label_ready

    page.goto(linked_server.url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").fill("alice")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(".st-key-mmrb-label", timeout=45_000)
    wait_cookie(page)
    wait_label_ready(page)
    left = page.locator(".mmrb-response-left .mmrb-rimage").first
    assert "Image missing" in left.inner_text()
    page.keyboard.press("z")
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Original size:").wait_for(timeout=45_000)
    wait_idle(page)
    served = page.evaluate("() => [...document.querySelectorAll('img')].map((i) => i.src)")
    media = [u for u in served if "/media/" in u]
    assert media, served  # the right response's image and its thumbnail are served as ever
    for url in media:
        got = page.request.get(url)
        assert got.ok and ENV_SECRET.encode() not in got.body() and b"MMRB_" not in got.body(), url
    assert "Left response: no image" in dialog.inner_text()
    placeholder = page.locator("[role=dialog] .mmrb-side-by-side .mmrb-zoom-left")
    assert "The image file is not a regular file in the image folder." in placeholder.inner_text()
    assert not page.errors, page.errors
