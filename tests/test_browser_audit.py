"""The audit trail in a real headless Chromium: the lead changes an annotator's role and signs
them out everywhere on the Annotators page, and the page's audit trail lists both (the grid's
rows as the browser holds them), filtered by what was done. A screenshot goes to
$MMRB_SCREENSHOTS (default: this test's tmp dir)."""

from __future__ import annotations

import os

import pytest

from tests.support.labelled_sample import labelled_sample
from tests.support.services import unavailable
from tests.support.streamlit_server import CHROMIUM, StreamlitServer, wait_idle
from tests.test_browser_lead import screenshots, sign_in_lead, whole_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]
GRID = "[data-testid=stDataFrame]"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("audit")
    info = labelled_sample(d / "sample.db")
    with StreamlitServer(info.db, info.images, log=d / "streamlit.log") as srv:
        srv.sample = info
        yield srv


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Failed to load" not in m.text else None)
    pg.errors = errors
    yield pg
    ctx.close()


def trail_once_it_shows(page, words: str, lacks: str = "\x00") -> str:
    """The audit grid's text (the accessible table the grid keeps inside its canvas) once it
    holds ``words`` and not ``lacks``: the rerun after a change may still be arriving."""
    page.wait_for_function(
        "([w, x]) => { const g = document.querySelectorAll('[data-testid=stDataFrame]');"
        " const t = g.length ? g[g.length - 1].querySelector('table')?.textContent || '' : '';"
        " return t.includes(w) && !t.includes(x); }",
        arg=[words, lacks],
        timeout=30_000,
    )
    return page.locator(GRID).last.locator("table").text_content() or ""


def test_the_lead_changes_a_role_and_signs_a_user_out_and_the_trail_shows_both(page, server, tmp_path):
    from curate.store import Store

    info = server.sample
    sign_in_lead(page, server.url)
    page.goto(server.url + "/admin_annotators")
    page.get_by_role("heading", name="Audit trail").wait_for(timeout=45_000)
    wait_idle(page)
    with Store(info.db, info.images) as s:
        target = s.annotators()[0].name  # the account the form selects first
        assert s.get_annotator(target).role == "annotator"
    page.get_by_text("Manage an account: role, sign-in, password").click()
    wait_idle(page)
    page.get_by_role("button", name="Sign out everywhere").click()
    page.get_by_text(f"of {target} ended.").wait_for(timeout=45_000)
    wait_idle(page)
    if not page.get_by_role("button", name="Change role").is_visible():  # the rerun folded it
        page.get_by_text("Manage an account: role, sign-in, password").click()
        wait_idle(page)
    page.get_by_role("radiogroup", name="Role").get_by_text("admin", exact=True).click()
    page.get_by_role("button", name="Change role").click()
    page.get_by_text(f"{target} is now admin; their sessions have ended.").wait_for(timeout=45_000)
    wait_idle(page)
    with Store(info.db, info.images) as s:
        assert s.get_annotator(target).role == "admin"
        assert [(e.who, e.what, e.subject) for e in s.audit(what="account")][:2] == [
            ("lead", "account.role", target),
            ("lead", "account.signout", target),
        ]
    page.locator(GRID).last.scroll_into_view_if_needed()
    text = trail_once_it_shows(page, "role changed")
    assert "role changed" in text and "signed out everywhere" in text and "role=admin" in text, text
    whole_page(page, screenshots(tmp_path) / "lead-audit.png")
    # filtered to the guidelines (the sample's version 1): the account changes are gone
    what = page.locator(".st-key-audit_what input")
    what.click()
    what.press_sequentially("guidelines")
    what.press("Enter")
    text = trail_once_it_shows(page, "guidelines changed", lacks="role changed")
    assert "guidelines changed" in text and "role changed" not in text, text
    assert page.locator("[data-testid=stException]").count() == 0
    assert not page.errors, page.errors
