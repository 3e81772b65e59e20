"""The audit trail: who changed what, when (UTC), with details. A change records itself in
its own transaction (pass the change's ``conn``), so the trail never shows a change that was
rolled back nor misses one that was committed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import insert, select

from ..model import AUDIT_ACTIONS, AuditAction, AuditEntry
from . import schema as S
from .base import Conn, StoreBase
from .engine import dumps_mapping, loads, now


class AuditStore(StoreBase):
    def record_audit(
        self,
        who: str,
        what: AuditAction,
        subject: str = "",
        details: Mapping[str, Any] | None = None,
        conn: Conn | None = None,
    ) -> None:
        if what not in AUDIT_ACTIONS:  # a bug: the trail's filters list only these
            raise ValueError(f"unknown audit action {what!r}")
        with self._w(conn) as c:
            c.execute(
                insert(S.audit).values(
                    at=now(), who=who, what=what, subject=subject, details=dumps_mapping(details or {})
                )
            )

    def audit(
        self,
        *,
        since: str | None = None,
        who: str | None = None,
        what: str | None = None,
        limit: int | None = None,
        conn: Conn | None = None,
    ) -> list[AuditEntry]:
        """Entries newest first. ``since``: an ISO 8601 UTC time or date (entries at or after
        it); ``what``: an action, or its family before the dot (``account``)."""
        a = S.audit.c
        q = select(S.audit).order_by(a.at.desc(), a.id.desc())
        if since:
            q = q.where(a.at >= since)
        if who:
            q = q.where(a.who == who)
        if what:
            q = q.where(a.what == what) if "." in what or what in AUDIT_ACTIONS else q.where(a.what.like(f"{what}.%"))
        if limit is not None:
            q = q.limit(limit)
        with self._r(conn) as c:
            return [
                AuditEntry(r["id"], r["at"], r["who"], r["what"], r["subject"], loads(r["details"]))
                for r in c.execute(q).mappings()
            ]

    def audit_actors(self, conn: Conn | None = None) -> list[str]:
        """Everyone with an entry, for the page's filter."""
        with self._r(conn) as c:
            return list(c.scalars(select(S.audit.c.who).distinct().order_by(S.audit.c.who)))
