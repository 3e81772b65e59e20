"""Server-side sign-in sessions: what a session is, how it starts, is checked and ends.

Pure logic over the store (no Streamlit, no HTTP). A session is a row of the store; the
browser holds a random token for it in an httpOnly cookie and the store keeps only the
token's SHA-256. The app checks the row on every run of every page, so deleting it (sign-out,
password reset, disabling the account, a role change) ends the session at once in every tab
and every app process sharing the store.

How the browser gets the cookie: starting a session returns a one-time handoff code (valid
two minutes). The page posts it to the app's own HTTP route (annotate/web.py), which trades it
for a fresh token and sets the cookie; the token never passes through page script. The route
answers only the app's own page (``foreign_origin``).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import SupportsFloat
from urllib.parse import urlsplit

from curate.model import Annotator
from curate.store import Store, Transaction

COOKIE = "mmrb_session"
SESSION_HOURS = 12
HANDOFF_SECONDS = 120


@dataclass(frozen=True)
class Started:
    id: str  # the row's key, kept by the app process (Streamlit session state) only
    handoff: str  # one-time code the page trades for the cookie


@dataclass(frozen=True)
class Live:
    id: str
    who: Annotator
    expires_at: float


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def start(store: Store, who: Annotator, *, now: float | None = None, hours: float = SESSION_HOURS) -> Started:
    t = time.time() if now is None else now
    sid, code = secrets.token_hex(16), secrets.token_urlsafe(32)
    store.add_session(
        sid,
        who.name,
        created_at=t,
        expires_at=t + hours * 3600,
        handoff_hash=digest(code),
        handoff_until=t + HANDOFF_SECONDS,
    )
    return Started(sid, code)


def claim(store: Store, code: str, *, now: float | None = None) -> tuple[str, float] | None:
    """The cookie token for a live handoff code and the session's expiry; None otherwise."""
    if not code:
        return None
    token = secrets.token_urlsafe(32)
    expires = store.claim_handoff(digest(code), digest(token), at=time.time() if now is None else now)
    return (token, expires) if expires is not None else None


def check(
    store: Store, *, session_id: str | None = None, token: str | None = None, now: float | None = None
) -> Live | None:
    """The live session of an active account, by its id or by the cookie token; else None."""
    t = time.time() if now is None else now
    if session_id:
        got = store.session_account(session_id=session_id, at=t)
    elif token:
        got = store.session_account(token_hash=digest(token), at=t)
    else:
        return None
    if got is None or not got[1].active:
        return None
    return Live(*got)


def end(store: Store, *, session_id: str | None = None, token: str | None = None) -> None:
    if session_id:
        store.delete_sessions(session_id=session_id)
    if token:
        store.delete_sessions(token_hash=digest(token))


def end_all(store: Store, name: str, *, now: float | None = None, conn: Transaction | None = None) -> int:
    """End every session of an account (and refuse older organisation identities); how many.
    ``conn``: the transaction of the change that ends them (a role, a password)."""
    refuse_identities_until_now(store, name, now=now, conn=conn)
    return store.delete_sessions(annotator=name, conn=conn)


def refuse_identities_until_now(
    store: Store, name: str, *, now: float | None = None, conn: Transaction | None = None
) -> None:
    store.update_annotator(name, conn=conn, sessions_not_before=time.time() if now is None else now)


def identity_may_start(store: Store, name: str, issued_at: object) -> bool:
    """Whether an organisation (OIDC) identity, issued at ``issued_at`` (the ID token's
    ``iat``), may start a session: Streamlit keeps that identity in its own cookie for 30
    days, so one issued before the account's sessions were ended must not start a new one."""
    before = store.sessions_not_before(name)
    if before is None:
        return True
    if not isinstance(issued_at, (SupportsFloat, str)):
        return False  # no issue time: cannot tell, so no
    try:
        return float(issued_at) > before
    except (TypeError, ValueError):
        return False  # no issue time: cannot tell, so no


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of a URL or an Origin header, the default port filled in; None
    when it names no origin (``null``: a sandboxed frame, a file)."""
    try:
        u = urlsplit(url.strip())
        scheme, host, port = u.scheme.lower(), (u.hostname or "").lower(), u.port
    except ValueError:
        return None
    if not scheme or not host:
        return None
    return scheme, host, port if port is not None else _DEFAULT_PORTS.get(scheme)


def foreign_origin(origin: str | None, fetch_site: str | None, url: str) -> bool:
    """Whether a request to the session route (``url``) came from a page of another origin:
    a sign-in code or a sign-out sent by another site. The browser's own ``Sec-Fetch-Site``
    decides when it is sent (every current browser sends it, and it holds behind a proxy
    that rewrites the Host); else the ``Origin`` must be the one the request was sent to (a
    browser sends it with every POST and DELETE). A request with neither comes from no
    browser (curl, a script), which holds no user's cookie to abuse."""
    if fetch_site:
        return fetch_site.strip().lower() != "same-origin"
    if origin is None:
        return False
    mine = _origin(url)
    return mine is None or _origin(origin) != mine
