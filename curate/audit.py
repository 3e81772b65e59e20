"""The audit trail as people read it: one line per entry, and the table the lead's page shows."""

from __future__ import annotations

from collections.abc import Iterable

from .model import AuditEntry
from .wording import utc_time

SYSTEM = "system"  # who a change is recorded as when no person is named (the sample's build, a test)

WHAT: dict[str, str] = {
    "account.add": "account added",
    "account.role": "role changed",
    "account.password": "password reset",
    "account.disable": "account disabled",
    "account.enable": "account enabled",
    "account.signout": "signed out everywhere",
    "assign": "assignment run",
    "annotator.pause": "annotator paused",
    "annotator.resume": "annotator resumed",
    "gold.import": "gold imported",
    "adjudicate": "pair adjudicated",
    "guidelines.set": "guidelines changed",
}


def details_text(e: AuditEntry) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(e.details.items()))


def entry_line(e: AuditEntry) -> str:
    """``2026-11-28 09:12 UTC  lead  account.role  bob  role=admin``."""
    parts = [utc_time(e.at), e.who, e.what, e.subject, details_text(e)]
    return "  ".join(p for p in parts if p)


HEADERS = ("When (UTC)", "Who", "What", "Subject", "Details")


def table(entries: Iterable[AuditEntry]) -> list[dict[str, str]]:
    """The page's rows (``HEADERS``): time to the second in UTC, who, what (in words), subject, details."""
    return [
        dict(
            zip(
                HEADERS,
                (e.at[:19].replace("T", " "), e.who, WHAT.get(e.what, e.what), e.subject, details_text(e)),
                strict=True,
            )
        )
        for e in entries
    ]
