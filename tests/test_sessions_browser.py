"""Sessions in a real browser against two app processes sharing one PostgreSQL store (as
behind a load balancer): the cookie is httpOnly, a copy dies with sign-out, a password reset
or a disabled account ends open tabs in both processes at once (Undo included), and images
are served only with a live session."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from tests.support.services import unavailable
from tests.support.streamlit_server import (
    CHROMIUM,
    ROOT,
    StreamlitServer,
    seed_store,
    sign_in,
    wait_label_ready,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ENDED = "Your session has ended"


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Two `streamlit run app.py` processes on one PostgreSQL database."""
    from curate.store import Store
    from tests.support.services import ensure_postgres, new_pg_database

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("two")
    images = d / "images"
    db, drop = new_pg_database(ensure_postgres())
    with Store(db, images=images) as s:
        seed_store(s, annotators=("alice", "bob", "carol"))
    one = StreamlitServer(db, str(images), log=d / "one.log")
    two = StreamlitServer(db, str(images), log=d / "two.log")
    try:
        one.wait()
        two.wait()
        yield one, two, db, images
    finally:
        one.stop()
        two.stop()
        drop()


@pytest.fixture
def contexts(browser):
    made = []

    def new(**kw):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, **kw)
        made.append(ctx)
        return ctx

    yield new
    for ctx in made:
        ctx.close()


def open_signed_in(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(".st-key-mmrb-label", timeout=45_000)
    wait_label_ready(page)


def session_cookie(ctx) -> dict:
    return next(c for c in ctx.cookies() if c["name"] == "mmrb_session")


def sees_sign_in_page(page, ended: bool = True) -> None:
    page.get_by_role("textbox", name="Name").wait_for(timeout=45_000)
    if ended:
        page.get_by_text(ENDED).wait_for(timeout=45_000)
    assert page.locator(".st-key-mmrb-label").count() == 0


def mmrb(*argv: str, stdin: str = "") -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run(
        [sys.executable, "-m", "curate.cli", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def label_shown_pair(page) -> None:
    for k in ("1", "9", "a", "Enter"):
        page.keyboard.press(k)


def http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_the_cookie_is_httponly_and_a_copy_dies_with_sign_out(servers, contexts):
    one, two, db, _ = servers
    mine = contexts()
    page = mine.new_page()
    sign_in(page, one.url, "bob")
    cookie = session_cookie(mine)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert "mmrb_session" not in page.evaluate("document.cookie")  # page script cannot read it
    # a copy of the cookie works in another browser, on the other app process...
    thief = contexts()
    thief.add_cookies([cookie])
    stolen = thief.new_page()
    open_signed_in(stolen, two.url)
    # ...until the owner signs out
    page.get_by_role("button", name="Sign out").click()
    sees_sign_in_page(page, ended=False)
    later = contexts()
    later.add_cookies([cookie])
    fresh = later.new_page()
    fresh.goto(two.url)
    sees_sign_in_page(fresh, ended=False)
    stolen.get_by_role("button", name="Skip this pair").click()  # the already-open copy: its next action
    sees_sign_in_page(stolen)
    from curate.store import Store

    with Store(db, images=servers[3]) as s:
        assert s.get_label("p0", "bob") is None  # the skip was not recorded


def test_reset_password_ends_open_tabs_in_both_processes_undo_included(servers, contexts):
    one, two, db, images = servers
    ctx = contexts()
    a = ctx.new_page()
    sign_in(a, one.url, "alice")
    a.get_by_text("Question 0: what is in the picture?").wait_for()
    src = a.locator("img[data-item]").get_attribute("src")
    assert src.startswith("/media/")
    assert a.evaluate(f"fetch({src!r}).then(r => r.status)") == 200  # the page, with its cookie
    assert http_status(one.url + src) == 403  # the same URL without a session
    label_shown_pair(a)
    a.get_by_text("Question 1: what is in the picture?").wait_for(timeout=45_000)
    wait_label_ready(a)
    b = ctx.new_page()  # a second tab, served by the other process
    open_signed_in(b, two.url)
    from curate.store import Store

    with Store(db, images=images) as s:
        assert s.get_label("p0", "alice") is not None
    out = mmrb("annotators", "reset-password", "alice", "--password-stdin", "--db", db, stdin="a new password\n")
    assert "1 session ended" in out  # both tabs share one session (one cookie)
    a.get_by_role("button", name="Undo last").click()
    sees_sign_in_page(a)
    b.keyboard.press("u")  # the keyboard's undo in the other process's tab
    sees_sign_in_page(b)
    with Store(db, images=images) as s:
        assert s.get_label("p0", "alice") is not None  # nothing was withdrawn
    assert a.evaluate(f"fetch({src!r}).then(r => r.status)") == 403  # and no more images


def test_disabling_an_account_ends_its_tab_in_the_other_process(servers, contexts):
    one, two, db, images = servers
    page = contexts().new_page()
    sign_in(page, two.url, "carol")
    mmrb("annotators", "disable", "carol", "--db", db)
    label_shown_pair(page)  # a whole label by keyboard: must not be saved
    sees_sign_in_page(page)
    from curate.store import Store

    with Store(db, images=images) as s:
        assert s.get_label("p0", "carol") is None
