"""The sign-in code exchange in a real browser (issue 25): the app's own page trades its code
for the cookie (sending the Origin and Sec-Fetch-Site the route checks), and a page of
another origin that holds a live code cannot trade it, on SQLite and PostgreSQL. (The route's
rules without a browser: test_faults_app.py.)"""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.services import unavailable
from tests.support.streamlit_server import CHROMIUM, PASSWORD, StreamlitServer, seed_store, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def served(db_url, tmp_path):
    from curate.store import Store

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    s = Store(db_url, images=tmp_path / "images")
    seed_store(s, n_pairs=2, annotators=("alice",), xss_at=None, missing_at=None)
    server = StreamlitServer(db_url, str(tmp_path / "images"), log=tmp_path / "app.log")
    try:
        server.wait()
        yield server, s
    finally:
        server.stop()
        s.close()


def test_the_apps_own_page_signs_in_and_says_where_it_comes_from(served, page):
    server, _ = served
    sent: list = []
    page.on("request", lambda r: sent.append(r) if r.url.endswith("/api/session") else None)
    page.goto(server.url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").fill("alice")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(".st-key-mmrb-label", timeout=45_000)  # after the cookie handoff's reload
    assert any(c["name"] == "mmrb_session" for c in page.context.cookies())
    (request,) = sent
    headers = request.all_headers()  # what the route checks: the browser sends both
    assert (headers.get("origin"), headers.get("sec-fetch-site")) == (server.url, "same-origin")
    assert not page.errors


@pytest.fixture
def another_site():
    """A page served from another origin on this machine (its own port): the page an
    attacker would lure a signed-in lead to."""
    handler = type(
        "Page",
        (BaseHTTPRequestHandler,),
        {
            "do_GET": lambda self: (
                self.send_response(200),
                self.send_header("Content-Type", "text/html"),
                self.end_headers(),
                self.wfile.write(b"<html><body>another site</body></html>"),
            ),
            "log_message": lambda self, *a: None,
        },
    )
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])  # another origin on the same site; another site
def test_a_page_of_another_origin_cannot_trade_a_live_code(served, page, another_site, host):
    """A page of another origin posts a live code as the app's own page would, credentials
    and all. The server refuses it before looking at the code, which stays unused."""
    from annotate import sessions

    server, store = served
    code = sessions.start(store, store.get_annotator("alice")).handoff
    page.goto(f"http://{host}:{another_site}/")
    page.get_by_text("another site").wait_for()
    answers: list[int] = []
    page.on("response", lambda r: answers.append(r.status) if r.url.endswith("/api/session") else None)
    with page.expect_response(lambda r: r.url.endswith("/api/session"), timeout=45_000):  # until it is answered
        page.evaluate(
            """([url, code]) => fetch(url, {method: 'POST', body: code, mode: 'no-cors', credentials: 'include',
                  headers: {'Content-Type': 'text/plain'}}).catch(() => null)""",
            [server.url + "/api/session", code],
        )
    assert answers == [403], answers  # the server saw it, and refused it
    assert not [c for c in page.context.cookies() if c["name"] == "mmrb_session"]
    assert sessions.claim(store, code) is not None  # the code is still there for the app's own page
