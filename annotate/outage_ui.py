"""A store failure met by a widget callback or a save: logged in one line and told calmly,
never as a traceback. (annotate/guard.py does the same for a page's run; annotate/outage.py
holds the rules.)"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from . import flash, outage

_log = logging.getLogger("mmrb.app")
P = ParamSpec("P")
R = TypeVar("R")


def log_failure(e: BaseException) -> None:
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    _log.warning("store failure, shown as a notice and retried: %s: %s", type(e).__name__, first)


def log_refusal(e: BaseException) -> None:
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    _log.warning("the database refused the data, shown to the user to correct: %s: %s", type(e).__name__, first)


def calm(what: str) -> Callable[[Callable[P, R]], Callable[P, R | None]]:
    """A button callback that meets a store failure leaves a message, not a traceback (the
    page that follows shows the outage notice while the store is down)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R | None]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R | None:
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                refused = outage.data_problem(e)
                if refused is not None:  # the data itself: trying again would not help
                    log_refusal(e)
                    flash.say("warning", f"{what}: {refused}.")
                    return None
                reason = outage.failure_reason(e)
                if reason is None:
                    raise
                log_failure(e)
                flash.say("warning", f"{what}: {reason}. Please try again.")
                return None

        return run

    return wrap
