"""The app's own HTTP pieces beside Streamlit's, served through ``st.App`` (see app.py).

A Streamlit page talks to the server over a WebSocket and cannot answer an HTTP request, so
it cannot set a cookie the page's script cannot read. Two things need plain HTTP:

- ``POST {base}/api/session`` trades a one-time handoff code for the session cookie:
  httpOnly, SameSite=Strict, Secure when the request came over HTTPS (uvicorn honours the
  proxy's X-Forwarded-Proto from the addresses in $FORWARDED_ALLOW_IPS, default 127.0.0.1).
  The session the browser's previous cookie named ends: a browser holds one session, so
  signing out in one tab ends every tab of it. ``DELETE`` ends the session the cookie names
  and clears it. Both answer only the app's own page (``sessions.foreign_origin``).
- ``MediaGuard`` answers ``{base}/media/...`` (the prompt images) only to a request carrying
  a live session cookie, so a copied image URL is useless without a session.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal, TypedDict

from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from curate.store import Store

from . import sessions

StoreGetter = Callable[[], "Store | None"]


def base_path() -> str:
    """The app's URL prefix ("" or "/prefix"), from Streamlit's server.baseUrlPath."""
    # deferred: this module is imported before Streamlit runs the app
    from streamlit import config

    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def session_path() -> str:
    return f"{base_path()}/api/session"


class CookieAttributes(TypedDict):
    path: str
    httponly: bool
    samesite: Literal["strict"]
    secure: bool


def cookie_attributes(request: Request) -> CookieAttributes:
    """The session cookie's attributes, for setting it and for deleting it: a browser deletes
    a cookie only when they match the ones it was set with."""
    return CookieAttributes(
        path=base_path() or "/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )


def routes(get_store: StoreGetter) -> list[Route]:
    async def session(request: Request) -> Response:
        if sessions.foreign_origin(
            request.headers.get("origin"), request.headers.get("sec-fetch-site"), str(request.url)
        ):
            return PlainTextResponse("This request did not come from the app's own page.", status_code=403)
        store = get_store()
        if store is None:
            return PlainTextResponse("The app has not started yet.", status_code=503)
        if request.method == "DELETE":
            token = request.cookies.get(sessions.COOKIE)
            if token:
                await run_in_threadpool(sessions.end, store, token=token)
            out = Response(status_code=204)
            out.delete_cookie(sessions.COOKIE, **cookie_attributes(request))
            return out
        code = (await request.body())[:200].decode("ascii", "replace").strip()
        got = await run_in_threadpool(sessions.claim, store, code)
        if got is None:
            return PlainTextResponse("This sign-in has expired: sign in again.", status_code=403)
        token, expires = got
        replaced = request.cookies.get(sessions.COOKIE)
        if replaced:  # a browser holds one session: the one its cookie named ends with it
            await run_in_threadpool(sessions.end, store, token=replaced)
        out = Response(status_code=204)
        out.set_cookie(sessions.COOKIE, token, max_age=max(1, int(expires - time.time())), **cookie_attributes(request))
        return out

    return [Route(session_path(), session, methods=["POST", "DELETE"])]


class MediaGuard:
    """ASGI middleware: media only for a request with a live session cookie."""

    def __init__(self, app, get_store: StoreGetter) -> None:
        self.app = app
        self.get_store = get_store
        self.prefix = f"{base_path()}/media/"

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(self.prefix):
            store = self.get_store()
            token = Request(scope).cookies.get(sessions.COOKIE)
            live = None
            if token and store is not None:
                live = await run_in_threadpool(sessions.check, store, token=token)
            if live is None:
                await PlainTextResponse("Sign in to see this file.", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def middleware(get_store: StoreGetter) -> list[Middleware]:
    return [Middleware(MediaGuard, get_store=get_store)]
