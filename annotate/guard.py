"""Every run of a page goes through ``outage_guard``: a store that cannot answer shows one
calm line, the page tries again by itself with backoff, and answers submitted meanwhile are
kept in their form and saved first. (annotate/outage.py holds the rules.)"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import streamlit as st

from curate.errors import MmrbError

from . import flash, outage
from .form_state import forget_shown
from .label_ui import PENDING, label_form, save_answers
from .outage_ui import log_failure, log_refusal
from .pair_ui import show_item
from .render import image_html, item_html, plain

OUTAGE = "outage"  # session key: (failures in a row, when to try again, what they were)
R = TypeVar("R")


@contextmanager
def outage_guard() -> Iterator[None]:
    """Page execution goes through here (app.py around the user lookup and the page; the
    label page's fragment, whose reruns do not pass through app.py). A store failure shows
    one calm line instead of a traceback, and the page tries again by itself with backoff.
    Answers submitted during the failure are kept in the form and saved first. Any other
    error meant for the user (MmrbError) is shown as its one line."""
    try:
        _settle_pending()
    except Exception as e:
        _store_failed(e)
    try:
        yield
    except Exception as e:
        _store_failed(e)


def guarded(fn: Callable[[], R]) -> R | None:
    with outage_guard():
        return fn()
    return None  # never reached (the guard ends the run); for the type checker, which lets a `with` swallow


def _store_failed(e: Exception) -> None:
    reason = outage.failure_reason(e)
    if reason is None:
        problem = outage.data_problem(e)
        if problem is not None:  # the database refused the data itself: said once, never retried
            log_refusal(e)
            st.error(f"Nothing was changed: {problem}. Correct what was typed and try again.")
            st.stop()
        if isinstance(e, MmrbError):  # meant for the user (e.g. a store made by a newer version): one line
            st.error(plain(e))
            st.stop()
        raise e
    log_failure(e)
    _ride_out(reason)


def _settle_pending() -> None:
    """Answers kept from a failed save go first: saved when their retry is due (the app
    then reruns and moves on), else the page waits with them in the form."""
    p = st.session_state.get(PENDING)
    if p is None:
        return
    if time.monotonic() >= p.due:
        _retry(p)
    _ride_out()


def _retry(p: outage.PendingSave) -> None:
    """Try the kept answers once more; when they are saved (or refused by a rule), rerun
    the app, which shows what comes next."""
    ss = st.session_state
    save_answers(p.view, p.mode, p.answers, p.seconds, cleared=False)
    if ss.get(PENDING) is not None:
        return
    if "form_errors" not in ss and flash.kind() == "success":
        flash.say("info", "The database is back: your answers were saved.")
    st.rerun()


def _ride_out(reason: str | None = None) -> None:
    """Show the notice (and the kept answers, in their form) and end this run. The notice
    is a fragment that reruns every second: it counts down and tries again when the backoff
    is over. Ending the run, rather than waiting in it, clears what the page showed before
    and leaves the annotator free to click. Never returns."""
    ss = st.session_state
    if ss.get(PENDING) is None:
        n, due, _ = ss.get(OUTAGE) or (0, 0.0, None)
        now = time.monotonic()
        if now >= due:  # a new failure, not a rerun that came before the retry was due
            n = 1 if now > due + 4 * outage.BACKOFF_MAX else n + 1  # a long good spell starts over
            ss[OUTAGE] = (n, now + outage.backoff(n), reason or outage.UNREACHABLE)
    _outage_notice()
    p = ss.get(PENDING)
    if p is not None:
        _show_pending(p)
    st.stop()


@st.fragment(run_every=1.0)
def _outage_notice() -> None:
    ss = st.session_state
    p = ss.get(PENDING)
    if p is not None and time.monotonic() >= p.due:
        _retry(p)  # saved: reruns the app; else p is the next attempt
        p = ss.get(PENDING)
    if p is not None:
        attempts, due, reason = p.attempts, p.due, p.reason
    else:
        attempts, due, reason = ss.get(OUTAGE) or (1, 0.0, outage.UNREACHABLE)
        if time.monotonic() >= due:
            st.rerun()  # the whole app tries again
    left = math.ceil(max(0.0, due - time.monotonic()))
    st.warning(outage.message(attempts, left, saving=p is not None, reason=reason), icon=":material/cloud_off:")


def _show_pending(p: outage.PendingSave) -> None:
    """The pair and the kept answers, from the browser session alone."""
    try:
        show_item(p.view)
    except Exception as e:  # the image's path comes from the store
        if not outage.is_store_failure(e):
            raise
        gone = image_html(
            None,
            item_id=p.view.item_id,
            alt="",
            missing_reason="The image cannot be loaded while the database is not reachable.",
        )
        st.html(item_html(gone, p.view.category, p.view.prompt))
    # set the kept answers on new widgets: shown outside its page (when the user lookup in
    # app.py failed) a widget is a new one, and a submitted label-page form was cleared
    forget_shown(p.mode)
    label_form(p.view, mode=p.mode, prefill=p.answers)
