"""The annotation app: `streamlit run app.py` (bundled sample) or `streamlit run app.py -- --db URL`.

Arguments after `--`: --db (SQLite file or postgresql:// URL; default $MMRB_DB, else the
bundled sample built in .mmrb/sample.db on first start), --images DIR, --guidelines FILE.

This file is read twice. `streamlit run app.py` first imports it as a module and finds
``app`` (an ``st.App``): the server, with the app's own HTTP routes beside Streamlit's (the
httpOnly session cookie, the guard on images; annotate/web.py). That server then runs this
same file as the page script (``__name__ == "__main__"``) on every rerun of every session.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from annotate import guidelines, session_ui, ui, web
from annotate.auth import ADMIN, ADMIN_PAGES, ANNOTATOR_PAGES, SIGNIN, Page
from annotate.guard import guarded
from annotate.render import plain

if TYPE_CHECKING:
    from annotate import demo

HERE = Path(__file__).resolve().parent
VIEWS = HERE / "annotate" / "views"


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="streamlit run app.py --", add_help=False)
    p.add_argument("--db")
    p.add_argument("--images")
    p.add_argument("--guidelines")
    return p.parse_known_args(sys.argv[1:])[0]


@st.cache_resource(show_spinner="Building the sample project (first start only)...")
def _sample() -> demo.Sample:
    from annotate import demo

    return demo.ensure_sample()


def _warm() -> None:
    """Import what the lead's landing page computes with (seconds on a busy machine), so the
    first lead to sign in does not wait for it."""
    for name in ("altair", "krippendorff"):
        importlib.import_module(name)


@asynccontextmanager
async def _start(_app) -> AsyncIterator[None]:
    """At server start-up, before any browser connects: on the bundled sample, build it if
    needed and print the demo accounts (annotate/demo.py); warm the lead's imports."""
    threading.Thread(target=_warm, name="mmrb-warm", daemon=True).start()
    if not (_args().db or os.environ.get("MMRB_DB")):
        from annotate import demo

        await asyncio.to_thread(demo.ensure_sample, announce=True)
    yield


def page(p: Page, *, url_path: str | None = None, **kw) -> st.Page:
    return st.Page(VIEWS / f"{p.name}.py", title=p.title, icon=p.icon, url_path=url_path or p.name, **kw)


# The app's root URL is a page of its own, hidden, under this url_path: the sign-in page signed
# out, the account's landing page signed in. Streamlit serves its default page only at the root
# (a default page's own path, /admin_progress say, is "Page not found"), so no listed page is the
# default and every one keeps its path. Both states share the name, so signing in at the root
# runs the root page again, now the landing page.
HOME = "home"


def main() -> None:
    # an emoji icon: Streamlit fetches a :material/...: favicon from fonts.gstatic.com, outside the app
    st.set_page_config(page_title="mmrb-studio", page_icon="⚖️", layout="wide")
    args = _args()
    db = args.db or os.environ.get("MMRB_DB")
    if db:
        ui.configure(ui.AppConfig(db=db, images=args.images, guidelines=args.guidelines))
    else:
        sample = _sample()
        ui.configure(
            ui.AppConfig(
                db=sample.db,
                images=sample.images,
                guidelines=args.guidelines or sample.guidelines,
                demo_accounts=sample.accounts,
            )
        )

    # a store that cannot answer shows a calm notice and retries, never a traceback (annotate/guard.py)
    guarded(lambda: guidelines.seed_once(ui.store(), ui.config().guidelines))  # version 1 of a store without any
    who = guarded(lambda: session_ui.current_user(hand_over=True))  # the page's require() takes it
    session_ui.flush()
    guarded(navigation(who).run)


def navigation(who):
    """The pages this account may see (only the sign-in page when nobody is signed in)."""
    pages = (*ANNOTATOR_PAGES.values(), *ADMIN_PAGES.values())
    if who is None:
        # Signed out, every page's URL shows the sign-in page (a bookmark or a link opened in a
        # new tab keeps its path instead of Streamlit's "Page not found"). Streamlit knows a page
        # by the hash of its url_path, so the run after sign-in (and the handoff's reload of the
        # same URL) opens the page itself there, subject to its own access check.
        asked = [
            st.Page(VIEWS / f"{SIGNIN.name}.py", title=SIGNIN.title, url_path=p.name, visibility="hidden")
            for p in pages
        ]
        nav = st.navigation([page(SIGNIN, url_path=HOME, default=True), *asked], position="hidden")
        st.session_state["signin_for"] = next((p.title for p in pages if p.name == nav.url_path), None)
        return nav
    is_admin = who.role == ADMIN
    # an annotator opens on their queue (the first annotator page), the lead on the first
    # lead page, Progress (a lead's own queue is usually empty)
    landing = next(iter(ADMIN_PAGES.values() if is_admin else ANNOTATOR_PAGES.values()))
    home = page(landing, url_path=HOME, default=True, visibility="hidden")
    work = [page(p) for p in ANNOTATOR_PAGES.values()]
    # Admin pages stay registered for everyone but hidden from annotators: opening one by
    # URL reaches the page's own access check, which refuses it with a message.
    vis = "visible" if is_admin else "hidden"
    lead = [page(p, visibility=vis) for p in ADMIN_PAGES.values()]
    nav = st.navigation({"Lead": lead, "Annotate": [*work, home]} if is_admin else {"Annotate": [*work, *lead, home]})
    with st.sidebar:
        st.caption(f"Signed in as **{plain(who.name)}** ({who.role})")
        if st.button("Sign out", key="sign_out"):
            session_ui.sign_out()
            st.rerun()
    return nav


if __name__ == "__main__":  # the page script, run by the server on every rerun
    main()
else:  # imported by `streamlit run app.py`, which serves this st.App (see the docstring)
    app = st.App(
        __file__, lifespan=_start, routes=web.routes(ui.served_store), middleware=web.middleware(ui.served_store)
    )
