"""The labelling guidelines, one row per version, and what the label page reads of them with
the annotator's next pair (store/audit.py records each change)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from ..model import Assignment, Guidelines
from . import schema as S
from .audit import AuditStore
from .base import ConflictError, Conn
from .engine import insert_ignoring, now
from .labels import _assignment, refuse_unstorable


@dataclass(frozen=True)
class QueueHead:
    """The annotator's next open assignment (None: none left), the guidelines' current
    version (None: no guidelines stored) and the version the annotator's last label was made
    under (None: no label yet; 0: none recorded, as for a label made before versions were, or
    imported)."""

    assignment: Assignment | None
    guidelines_version: int | None
    last_label_version: int | None


class GuidelinesStore(AuditStore):
    def guidelines(self, version: int | None = None, conn: Conn | None = None) -> Guidelines | None:
        """One version (None: the current one), or None when there is no such version."""
        g = S.guidelines.c
        q = select(S.guidelines)
        q = q.where(g.version == version) if version is not None else q.order_by(g.version.desc()).limit(1)
        with self._r(conn) as c:
            r = c.execute(q).mappings().first()
        return _guidelines(r) if r else None

    def guidelines_versions(self, conn: Conn | None = None) -> list[Guidelines]:
        """Every version, newest first."""
        with self._r(conn) as c:
            rows = c.execute(select(S.guidelines).order_by(S.guidelines.c.version.desc())).mappings().all()
        return [_guidelines(r) for r in rows]

    def set_guidelines(self, text: str, author: str, conn: Conn | None = None) -> tuple[Guidelines, bool]:
        """Make ``text`` the current guidelines: a new version, recorded in the audit trail in
        the same transaction. The same text as the current version adds nothing. Returns the
        current version and whether it is new. Two changes at once: the later raises
        ConflictError and writes nothing."""
        ts = now()
        with self._w(conn) as c:
            cur = self.guidelines(conn=c)
            if cur is not None and cur.text == text:
                return cur, False
            new = Guidelines((cur.version if cur else 0) + 1, text, author, ts)
            refuse_unstorable("the guidelines", new)
            try:
                with c.begin_nested():
                    c.execute(insert(S.guidelines).values(**_row(new)))
            except IntegrityError:
                raise ConflictError(f"the guidelines changed meanwhile (version {new.version}); try again") from None
            self.record_audit(
                author, "guidelines.set", f"version {new.version}", {"version": new.version, "chars": len(text)}, c
            )
        return new, True

    def seed_guidelines(self, text: str, author: str, conn: Conn | None = None) -> bool:
        """Version 1 from ``text`` when the store holds no guidelines (the app's --guidelines
        file); True when it was written. App processes starting together write it once."""
        first = Guidelines(1, text, author, now())
        refuse_unstorable("the guidelines", first)
        with self._w(conn) as c:
            if c.scalar(select(S.guidelines.c.version).limit(1)) is not None:
                return False
            got = c.execute(insert_ignoring(c, S.guidelines).values(**_row(first)).returning(S.guidelines.c.version))
            if got.first() is None:
                return False
            self.record_audit(author, "guidelines.set", "version 1", {"version": 1, "chars": len(text)}, c)
        return True

    def queue_head(self, annotator: str, conn: Conn | None = None) -> QueueHead:
        """The next open assignment with the two guidelines versions, in one statement: the
        label page reads them on every run (each submit) without another round trip. The
        versions come from scalar subqueries on the guidelines' key and the labels'
        (annotator, updated_at) index. No filter beside the annotator: one on ``source`` made
        PostgreSQL's estimate one row on fresh statistics and its plan a sort of every label
        of the annotator (7 ms at 25,000 labels, against 0.03 ms read backwards on the index)."""
        a, lab, g = S.assignments.c, S.labels.c, S.guidelines.c
        current = select(func.max(g.version)).scalar_subquery()
        last = (
            select(func.coalesce(lab.guidelines_version, 0))
            .where(lab.annotator == annotator)
            .order_by(lab.updated_at.desc())
            .limit(1)
            .scalar_subquery()
        )
        q = (
            select(S.assignments, current.label("g_current"), last.label("g_last"))
            .where(a.annotator == annotator, a.state == "open")
            .order_by(a.seq)
            .limit(1)
        )
        with self._autocommit(conn) as c:
            r = c.execute(q).mappings().first()
        if r is None:
            return QueueHead(None, None, None)
        return QueueHead(_assignment(r), r["g_current"], r["g_last"])


def _row(g: Guidelines) -> dict:
    return dict(version=g.version, text=g.text, author=g.author, created_at=g.created_at)


def _guidelines(r: Mapping) -> Guidelines:
    return Guidelines(r["version"], r["text"], r["author"], r["created_at"])
