"""When the store cannot answer: which errors those are, how long to wait before trying again,
and the answers kept meanwhile. No Streamlit here; annotate/guard.py shows it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import exc as sa

from curate.errors import InputError, StoreError
from curate.store import ConflictError

from .form import FormInput
from .queue import PairView
from .scheme_form import SchemeInput

BACKOFF_FIRST = 1.0  # seconds before the second attempt
BACKOFF_MAX = 8.0
UNREACHABLE = "the database is not reachable"
REFUSED = "the database could not do this (the error is in the server log)"
_TRANSIENT = (sa.OperationalError, sa.InterfaceError, sa.DisconnectionError, sa.TimeoutError)


def failure_reason(exc: BaseException) -> str | None:
    """What to tell the annotator when ``exc`` is a failure of the database rather than of
    the request, else None. Most are an outage (a server that is down or restarting, a
    dropped connection, a pool timeout, a locked SQLite file, a store that could not be
    opened for any of these); any other database error is reported as such. A lost race
    (ConflictError) is an answer, not a failure: the pages turn it into a message of its own."""
    seen = 0
    e: BaseException | None = exc
    while e is not None and seen < 5:  # "cannot open the store" wraps the driver's error
        if isinstance(e, ConflictError) or _is_data_error(e):
            return None  # a data error is the user's to fix (data_problem), never an outage
        if isinstance(e, _TRANSIENT) or getattr(e, "connection_invalidated", False):
            return UNREACHABLE
        if isinstance(e, sa.SQLAlchemyError):
            return REFUSED
        if isinstance(e, StoreError) and e.__cause__ is None:
            return None  # the store's own verdict (e.g. a newer schema): pages say it themselves
        e, seen = e.__cause__, seen + 1
    return None


def is_store_failure(exc: BaseException) -> bool:
    return failure_reason(exc) is not None


def _is_data_error(e: BaseException) -> bool:
    """A DB-API DataError (SQLAlchemy's, or the driver's own: psycopg, sqlite3): the database
    refusing the value itself, which trying again cannot change."""
    return isinstance(e, sa.DataError) or any(c.__name__ == "DataError" for c in type(e).__mro__)


def data_problem(exc: BaseException) -> str | None:
    """What to tell the user when ``exc`` is the database refusing the data itself (a NUL in
    a text, which PostgreSQL cannot hold; a value out of range), else None. The user's to
    fix, with their answers kept: never an outage, never retried."""
    seen = 0
    e: BaseException | None = exc
    while e is not None and seen < 5:
        if _is_data_error(e):
            text = " ".join(str(x) for x in (e, getattr(e, "orig", None)) if x is not None)
            if "NUL" in text or "0x00" in text:
                return "this text cannot be stored: it contains a NUL character"
            return "the database refused a value as invalid"
        e, seen = e.__cause__, seen + 1
    return None


def refused_answers(exc: BaseException) -> str | None:
    """Why answers cannot be saved as they are, when ``exc`` says so: the store refused a
    text (InputError: curate/store/labels.py) or the database refused a value
    (``data_problem``). None for anything else."""
    if isinstance(exc, InputError):
        return "; ".join(f"the {p.field} {p.message}" if p.field else p.message for p in exc.problems)
    return data_problem(exc)


def backoff(attempt: int) -> float:
    """Seconds to wait after the ``attempt``-th failure: 1, 2, 4, 8, 8, ..."""
    return min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** max(0, attempt - 1))


@dataclass(frozen=True)
class PendingSave:
    """Answers submitted while the store could not take them: kept in the browser session,
    shown again in the form and saved when the store is back."""

    view: PairView  # the pair as it was shown, so it can be shown again without the store
    mode: str  # "new" (the label page) or "edit" (my labels)
    answers: FormInput | SchemeInput
    seconds: float  # labelling time at the first submit: waiting for the store is not labelling
    attempts: int
    due: float  # time.monotonic() of the next attempt
    reason: str = UNREACHABLE  # what the last attempt met


def message(attempts: int, wait: float, *, saving: bool, reason: str = UNREACHABLE) -> str:
    """One calm line: what happened, that nothing is lost, when the next try is."""
    what = f"Not saved yet: {reason}. Your answers are kept below" if saving else reason[0].upper() + reason[1:]
    return f"{what}; retrying in {max(1, round(wait))} s (attempt {attempts + 1}). No need to reload."
