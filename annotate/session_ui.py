"""Who is signed in, for the page scripts and their widget callbacks.

The Streamlit session keeps only the id of a server-side session (annotate/sessions.py), and
every run re-reads that session from the store, once: a session ended anywhere (sign-out in
another tab, a password reset, a disabled account, another app process) stops this tab at its
next run, callbacks included (they run before the page's own check, so they ask ``acting_user``,
whose answer the page's check of the same run takes).
A new browser connection (refresh, new tab) finds its session by the httpOnly cookie.
"""

from __future__ import annotations

import json
import time

import streamlit as st

from curate.model import Annotator

from . import auth, sessions, ui, web


def _cookie() -> str | None:
    try:
        v = st.context.cookies.get(sessions.COOKIE)
    except Exception:  # no browser request behind this session (tests, bare mode)
        return None
    return v if isinstance(v, str) else None  # AppTest has no real request behind it


def _browser() -> bool:
    """A real browser is connected, which can take a cookie over HTTP (AppTest has no
    request behind it, hence no headers)."""
    try:
        return len(st.context.headers) > 0
    except Exception:
        return False


def client_address() -> str | None:
    """The client's address as the server sees it; behind a reverse proxy, uvicorn puts the
    forwarded one here for proxies listed in $FORWARDED_ALLOW_IPS (default 127.0.0.1)."""
    try:
        return st.context.ip_address
    except Exception:
        return None


def _forget() -> None:
    """The session ended elsewhere: drop everything this browser session held for it."""
    for k in list(st.session_state.keys()):
        del st.session_state[k]
    st.session_state["session_ended"] = True


# One read of the session per run: a widget callback's check (it runs first) and app.py's
# (before the page) are handed to the next check of the same run, the page's, which takes it.
# Only this young, in case a run ended between the two (an error in a later callback).
_CHECKED = "session_checked"  # (session id, account, when)
RUN_SECONDS = 1.0


def current_user(*, hand_over: bool = False) -> Annotator | None:
    """The signed-in, still active account, checked against the store once per run.
    ``hand_over``: the account found is the answer of the run's next check too (a callback's
    check, app.py's before the page's own)."""
    ss = st.session_state
    checked = ss.pop(_CHECKED, None)
    if (
        checked is not None
        and checked[0] == ss.get("session")
        and time.monotonic() - checked[2] < RUN_SECONDS
        and not ss.get("session_ended")
    ):
        who: Annotator | None = checked[1]
    else:
        who = _check()
    if who is not None and hand_over:
        ss[_CHECKED] = (ss.get("session"), who, time.monotonic())
    return who


def _check() -> Annotator | None:
    s = ui.store()
    ss = st.session_state
    sid = ss.get("session")
    if sid:
        live = sessions.check(s, session_id=sid)
        if live is None:
            _forget()
            return None
        ss["user"] = live.who.name
        return live.who
    live = sessions.check(s, token=_cookie())
    if live is not None:
        ss["session"], ss["user"] = live.id, live.who.name
        return live.who
    who = _oidc_account(s)
    if who is not None:
        sign_in(who)
    return who


def acting_user() -> str | None:
    """For widget callbacks: the signed-in account's name, or None when its session has ended
    (then the callback does nothing and the run that follows shows the sign-in page)."""
    who = current_user(hand_over=True)
    return who.name if who is not None else None


def _oidc_account(s) -> Annotator | None:
    """An organisation identity (st.login) starts a session for the active account named by
    its e-mail, unless the identity predates the end of that account's sessions. Only when
    the deployment configures [auth]: no other source of ``st.user`` is trusted."""
    if not oidc_configured():
        return None
    try:
        if not st.user.is_logged_in:
            return None
        email, issued = st.user.get("email"), st.user.get("iat")
    except Exception:
        return None
    who = auth.account_for_identity(s, email if isinstance(email, str) else None)
    if who is None or not sessions.identity_may_start(s, who.name, issued):
        return None
    return who


def organisation_email() -> str | None:
    """The e-mail of the organisation identity (st.login) this browser holds, if any."""
    try:
        email = st.user.get("email") if st.user.is_logged_in else None
    except Exception:  # no OIDC configured
        return None
    return email if isinstance(email, str) else None


def oidc_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:
        return False


def sign_in(who: Annotator) -> None:
    started = sessions.start(ui.store(), who)
    st.session_state.pop("session_ended", None)
    st.session_state["session"], st.session_state["user"] = started.id, who.name
    if _browser():
        st.session_state["handoff"] = started.handoff


def sign_out() -> None:
    """End this session everywhere (every tab and process that shares its cookie)."""
    s = ui.store()
    sessions.end(s, session_id=st.session_state.get("session"))
    try:
        if st.user.is_logged_in:
            # Streamlit keeps the organisation identity in its own cookie for 30 days:
            # a copy of it must not start a new session after this sign-out.
            who = st.session_state.get("user")
            if who:
                sessions.refuse_identities_until_now(s, who)
            st.logout()
    except Exception:  # no OIDC configured
        pass
    for k in list(st.session_state.keys()):
        del st.session_state[k]
    if _browser():
        st.session_state["clear_cookie"] = True


def flush() -> None:
    """What the page must do over HTTP, where only the server can set an httpOnly cookie.

    After a sign-in, the page trades the handoff code for the cookie and reloads, so that every
    later request (images included) carries it; nothing else is shown meanwhile. After a
    sign-out, the page asks the server to clear the cookie."""
    ss = st.session_state
    code = ss.pop("handoff", None)
    if code:
        st.html(_handoff_html(code), unsafe_allow_javascript=True)
        st.stop()
    if ss.pop("clear_cookie", False):
        st.html(
            f"<script>fetch({json.dumps(web.session_path())}, {{method: 'DELETE', credentials: 'same-origin'}});"
            "</script>",
            unsafe_allow_javascript=True,
        )


RETURN_KEY = "mmrb-return"


def remember_page_html() -> str:
    """Shown by the sign-in page: keeps, for this tab, the path the sign-in page was opened at.
    The organisation's provider (st.login) sends the browser back to the app's root, so the
    handoff after it goes to this path instead of staying there."""
    return f"<script>sessionStorage.setItem({json.dumps(RETURN_KEY)}, location.pathname + location.search);</script>"


def _handoff_html(code: str) -> str:
    return (
        '<p id="mmrb-signin-status">Signing in...</p><script>'
        f"fetch({json.dumps(web.session_path())}, {{method: 'POST', body: {json.dumps(code)}, "
        "credentials: 'same-origin', headers: {'Content-Type': 'text/plain'}})"
        # back to the page the sign-in page was opened at (remember_page_html): the same URL after a
        # password sign-in, the app's root after the organisation's provider sent the browser there
        f".then(r => {{ if (!r.ok) throw new Error('HTTP ' + r.status); const k = {json.dumps(RETURN_KEY)};"
        " const back = sessionStorage.getItem(k); sessionStorage.removeItem(k);"
        " if (back && back.startsWith('/') && !back.startsWith('//') && back !== location.pathname + location.search)"
        " location.replace(back); else location.reload(); })"
        ".catch(e => { document.getElementById('mmrb-signin-status').textContent = "
        "'Signing in failed (' + e.message + '): reload the page and sign in again.'; });"
        "</script>"
    )


def require(page: str) -> Annotator:
    """Stop the page unless the signed-in user may open it (a URL typed by hand included)."""
    who = current_user()
    if who is None and st.session_state.get("session_ended"):
        st.rerun()  # from inside a fragment too: the whole page turns into the sign-in page
    if who is None or not auth.can_open(who, page):
        if who is None:
            st.warning("Please sign in first.")
        else:
            st.error("This page is for the annotation lead. You do not have access to it.")
        st.stop()
    return who
