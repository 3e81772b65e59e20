"""Annotators, their sign-in sessions and sign-in attempts (annotate/sessions.py and
annotate/auth.py hold the rules; this is only where they are kept)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from ..errors import StoreError
from ..lookalike import check_name, lookalike, text_problem
from ..model import Annotator
from . import schema as S
from .base import Conn, StoreBase
from .engine import now


class PeopleStore(StoreBase):
    # -- annotators ----------------------------------------------------------------------
    def add_annotator(self, a: Annotator, conn: Conn | None = None) -> None:
        """Add an account as it is named (annotate/auth.py checks a name a person chose)."""
        _storable_name(a.name)
        with self._w(conn) as c:
            try:
                with c.begin_nested():
                    c.execute(
                        insert(S.annotators).values(
                            name=a.name, role=a.role, password_hash=a.password_hash, active=a.active, created_at=now()
                        )
                    )
            except IntegrityError:
                raise StoreError(f"annotator {a.name!r} already exists") from None

    def ensure_annotator(self, name: str, role: str = "annotator", conn: Conn | None = None) -> bool:
        """Create an annotator without a password if missing; True when created. A new name
        follows the identifier policy (curate/lookalike.py: ``check_name``, as it is written,
        and no look-alike of an account there)."""
        _storable_name(name)
        with self._w(conn) as c:
            if c.scalar(select(S.annotators.c.name).where(S.annotators.c.name == name)):
                return False
            norm, why = check_name(name)
            if why is None and norm != name:
                why = f"is not written in its normal form (NFKC): {norm!r}"
            if why:
                raise StoreError(f"invalid annotator name {name!r}: {why}")
            other = lookalike(name, c.scalars(select(S.annotators.c.name)).all())
            if other is not None:
                raise StoreError(f"invalid annotator name: {name!r} looks like the account {other!r}")
            c.execute(insert(S.annotators).values(name=name, role=role, active=True, created_at=now()))
            return True

    def get_annotator(self, name: str, conn: Conn | None = None) -> Annotator | None:
        if text_problem(name):
            return None  # no account has a name no store can hold (PostgreSQL would refuse to look)
        with self._r(conn) as c:
            r = c.execute(select(S.annotators).where(S.annotators.c.name == name)).mappings().first()
        return _annotator(r) if r else None

    def annotators(self, conn: Conn | None = None) -> list[Annotator]:
        with self._r(conn) as c:
            rows = c.execute(select(S.annotators).order_by(S.annotators.c.name)).mappings().all()
        return [_annotator(r) for r in rows]

    def update_annotator(self, name: str, conn: Conn | None = None, **values: Any) -> None:
        with self._w(conn) as c:
            n = c.execute(update(S.annotators).where(S.annotators.c.name == name).values(**values)).rowcount
            if not n:
                raise StoreError(f"no annotator named {name!r}")

    def sessions_not_before(self, name: str, conn: Conn | None = None) -> float | None:
        with self._r(conn) as c:
            return c.scalar(select(S.annotators.c.sessions_not_before).where(S.annotators.c.name == name))

    # -- sign-in sessions (annotate/sessions.py holds the rules) ------------------------
    def add_session(
        self,
        session_id: str,
        annotator: str,
        *,
        created_at: float,
        expires_at: float,
        handoff_hash: str | None = None,
        handoff_until: float | None = None,
        conn: Conn | None = None,
    ) -> None:
        with self._w(conn) as c:
            c.execute(S.sessions.delete().where(S.sessions.c.expires_at <= created_at))  # keep the table small
            c.execute(
                insert(S.sessions).values(
                    id=session_id,
                    annotator=annotator,
                    handoff_hash=handoff_hash,
                    handoff_until=handoff_until,
                    created_at=created_at,
                    expires_at=expires_at,
                )
            )

    def session_account(
        self, *, at: float, session_id: str | None = None, token_hash: str | None = None, conn: Conn | None = None
    ) -> tuple[str, Annotator, float] | None:
        """(session id, its account, expiry) of a live session found by id or by cookie hash."""
        if (session_id is None) == (token_hash is None):
            raise ValueError("give exactly one of session_id and token_hash")
        key = S.sessions.c.id == session_id if session_id is not None else S.sessions.c.token_hash == token_hash
        q = (
            select(S.sessions.c.id, S.sessions.c.expires_at, S.annotators)
            .join(S.annotators, S.annotators.c.name == S.sessions.c.annotator)
            .where(key, S.sessions.c.expires_at > at)
        )
        with self._r(conn) as c:
            r = c.execute(q).mappings().first()
        if r is None:
            return None
        return r["id"], _annotator(r), r["expires_at"]

    def claim_handoff(self, handoff_hash: str, token_hash: str, *, at: float, conn: Conn | None = None) -> float | None:
        """Trade a live one-time handoff code for a cookie token: the session's expiry, or
        None when the code is unknown, used or stale. Only one claim of a code succeeds."""
        s = S.sessions.c
        with self._w(conn) as c:
            n = c.execute(
                update(S.sessions)
                .where(s.handoff_hash == handoff_hash, s.handoff_until >= at, s.expires_at > at)
                .values(token_hash=token_hash, handoff_hash=None, handoff_until=None)
            ).rowcount
            return c.scalar(select(s.expires_at).where(s.token_hash == token_hash)) if n == 1 else None

    def delete_sessions(
        self,
        *,
        session_id: str | None = None,
        token_hash: str | None = None,
        annotator: str | None = None,
        conn: Conn | None = None,
    ) -> int:
        """End sessions by id, by cookie hash or every one of an account; how many ended."""
        conds = [
            col == v
            for col, v in (
                (S.sessions.c.id, session_id),
                (S.sessions.c.token_hash, token_hash),
                (S.sessions.c.annotator, annotator),
            )
            if v is not None
        ]
        if len(conds) != 1:
            raise ValueError("give exactly one of session_id, token_hash and annotator")
        with self._w(conn) as c:
            return c.execute(S.sessions.delete().where(conds[0])).rowcount

    # -- sign-in attempts (throttling; annotate/auth.py holds the rules) ---------------
    def begin_signin_attempt(
        self, attempt: str, keys: Iterable[str], *, at: float, since: float, conn: Conn | None = None
    ) -> dict[str, list[float]]:
        """Record an attempt under each key, then return each key's attempt times since
        ``since`` (this one included), oldest first. The record is committed before the
        count, so of attempts racing in parallel each sees the others that got in first:
        parallel requests cannot slip more attempts past the limit."""
        keys = list(keys)
        a = S.signin_attempts.c
        with self._w(conn) as c:
            c.execute(S.signin_attempts.delete().where(a.at < since))  # forget what the window no longer sees
            c.execute(insert(S.signin_attempts), [{"attempt": attempt, "key": k, "at": at} for k in keys])
        out: dict[str, list[float]] = {k: [] for k in keys}
        with self._r(conn) as c:
            for k, t in c.execute(select(a.key, a.at).where(a.key.in_(keys), a.at >= since).order_by(a.at)):
                out[k].append(t)
        return out

    def drop_signin_attempt(self, attempt: str, conn: Conn | None = None) -> None:
        with self._w(conn) as c:
            c.execute(S.signin_attempts.delete().where(S.signin_attempts.c.attempt == attempt))

    def clear_signin_attempts(self, key: str, conn: Conn | None = None) -> None:
        with self._w(conn) as c:
            c.execute(S.signin_attempts.delete().where(S.signin_attempts.c.key == key))

    def signin_attempts(self, key: str, conn: Conn | None = None) -> list[float]:
        a = S.signin_attempts.c
        with self._r(conn) as c:
            return [t for (t,) in c.execute(select(a.at).where(a.key == key).order_by(a.at))]


def _storable_name(name: str) -> None:
    why = text_problem(name)
    if why:
        raise StoreError(f"invalid annotator name {name!r}: {why}")


def _annotator(r: Mapping[Any, Any]) -> Annotator:
    return Annotator(
        r["name"], r["role"], r["password_hash"], bool(r["active"]), r.get("qualification"), r.get("paused")
    )
