"""Organisation sign-in (Streamlit's st.login through Authlib) in a real headless Chromium,
against a loopback OpenID Connect provider (tests/support/oidc_provider.py): a page's URL
opened signed out is the page the browser is on after the provider sent it back to the app's
root, signed in as the account named by the identity's e-mail."""

from __future__ import annotations

import os

import pytest

from tests.support.services import unavailable
from tests.support.streamlit_server import CHROMIUM, StreamlitServer, free_port, seed_store, wait_cookie, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
LEAD = "lead@example.org"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from curate.model import Annotator
    from curate.store import Store
    from tests.support.oidc_provider import OIDCProvider

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("oidc")
    with Store(str(d / "app.db"), images=d / "images") as s:
        seed_store(s, annotators=("alice",))
        s.add_annotator(Annotator(LEAD, "admin", None))  # no password: the organisation signs it in
    port = free_port()
    with OIDCProvider(LEAD) as provider:
        # the deployment's [auth] settings, in the secrets file of the server's working directory
        (d / ".streamlit").mkdir()
        (d / ".streamlit" / "secrets.toml").write_text(provider.secrets_toml(f"http://127.0.0.1:{port}"))
        with StreamlitServer(str(d / "app.db"), str(d / "images"), log=d / "streamlit.log", cwd=d, port=port) as srv:
            yield srv


def test_a_page_opened_signed_out_is_there_after_the_organisation_sign_in(browser, server):
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    page.goto(server.url + "/admin_quality")
    wait_idle(page)
    page.get_by_text("Sign in to open Quality.").wait_for(timeout=45_000)
    page.get_by_role("button", name="Sign in with your organisation").click()
    # provider -> /oauth2callback -> the app's root -> the handoff -> the page asked for
    page.get_by_role("heading", name="Quality").wait_for(timeout=60_000)
    wait_cookie(page)
    wait_idle(page)
    assert page.url == server.url + "/admin_quality"
    sidebar = page.locator("[data-testid=stSidebar]").inner_text()
    assert f"Signed in as {LEAD} (admin)" in sidebar.replace("\u2060", "")  # plain() keeps @ from linking
    ctx.close()
