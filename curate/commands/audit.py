"""mmrb audit: who changed what, and when (UTC)."""

from __future__ import annotations

import argparse

HELP = "print the audit trail: accounts, roles, assignment runs, pauses, gold, adjudication, guidelines"
DESCRIPTION = (
    "The audit trail, newest first: who changed what and when (UTC), with details. Filters: --since "
    "(an ISO 8601 date or time; without an offset it is UTC), --who (an account, or cli:LOGIN for the "
    "command line), --what (an action such as account.role, or a family such as account)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_store_options

    p.add_argument("--since", help="only entries at or after this UTC date or time (e.g. 2026-11-28T09:00)")
    p.add_argument("--who", help="only entries by this account (cli:LOGIN: the command line)")
    p.add_argument("--what", help="only this action (e.g. guidelines.set) or family (e.g. account)")
    p.add_argument("--limit", type=int, help="at most this many entries")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    add_store_options(p)


def since_utc(text: str) -> str:
    """``--since`` as the store's UTC ISO 8601 stamps (a time with an offset converted, one
    without taken as UTC); an unreadable one is an MmrbError naming the option."""
    from datetime import UTC, datetime

    from curate.errors import MmrbError

    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise MmrbError(f"--since {text!r}: not an ISO 8601 date or time (e.g. 2026-11-28T09:00)") from None
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when.isoformat(timespec="microseconds")


def run(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from curate.audit import entry_line
    from curate.commands.common import open_store
    from curate.errors import MmrbError

    if args.limit is not None and args.limit < 1:
        raise MmrbError("--limit must be at least 1")
    since = since_utc(args.since) if args.since else None
    with open_store(args) as store:
        rows = store.audit(since=since, who=args.who, what=args.what, limit=args.limit)
    for e in rows:
        print(json.dumps(asdict(e) | {"details": dict(e.details)}, sort_keys=True) if args.json else entry_line(e))
    if not rows and not args.json:
        print("no entries" + (" match" if any((args.since, args.who, args.what)) else " yet"))
    return 0
