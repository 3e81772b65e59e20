"""`mmrb annotators add|list|disable|enable|reset-password|set-role|sign-out`: accounts of the app.

Whatever changes what an account may do (disable, reset-password, set-role) also ends its
sessions at once, in every open tab and every app process sharing the store."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import TYPE_CHECKING

from curate.commands.common import add_store_options, cli_actor, open_store, print_json
from curate.errors import MmrbError
from curate.wording import plural

if TYPE_CHECKING:
    from curate.store import Store

HELP = "manage annotator accounts of the annotation app"
DESCRIPTION = (
    "Manage the accounts that sign in to the annotation app. Passwords are hashed with argon2id. "
    "Give a password with --password-stdin (one line on standard input), $MMRB_PASSWORD, "
    "or type it when asked."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = sub.add_parser("add", help="create an account")
    a.add_argument("name")
    a.add_argument("--role", choices=["annotator", "admin"], default="annotator")
    a.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    ls = sub.add_parser("list", help="list accounts with their progress")
    ls.add_argument("--json", action="store_true", help="print the accounts as JSON (its schema: docs/json.md)")
    d = sub.add_parser("disable", help="stop an account from signing in and end its sessions (its labels stay)")
    d.add_argument("name")
    e = sub.add_parser("enable", help="let a disabled account sign in again")
    e.add_argument("name")
    r = sub.add_parser("reset-password", help="set a new password (ends the account's sessions)")
    r.add_argument("name")
    r.add_argument("--password-stdin", action="store_true")
    sr = sub.add_parser("set-role", help="make an account an annotator or an admin (ends its sessions)")
    sr.add_argument("name")
    sr.add_argument("role", choices=["annotator", "admin"])
    so = sub.add_parser("sign-out", help="end every session of an account now (e.g. a lost laptop)")
    so.add_argument("name")
    for q in (a, ls, d, e, r, sr, so):
        add_store_options(q)


def _password(args: argparse.Namespace) -> str:
    if getattr(args, "password_stdin", False):
        return sys.stdin.readline().rstrip("\n")
    if os.environ.get("MMRB_PASSWORD"):
        return os.environ["MMRB_PASSWORD"]
    if not sys.stdin.isatty():
        raise MmrbError("no password given: use --password-stdin or $MMRB_PASSWORD")
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise MmrbError("the two passwords differ")
    return first


def _accounts(store: Store) -> list[dict[str, object]]:
    """Every account with its progress, as `mmrb annotators list` shows it (text or --json)."""
    out: list[dict[str, object]] = []
    for a in store.annotators():
        done, assigned = store.progress(a.name)
        row = {"name": a.name, "role": a.role, "active": a.active, "has_password": bool(a.password_hash)}
        out.append({**row, "labelled": done, "assigned": assigned})
    return out


def run(args: argparse.Namespace) -> int:
    from annotate import auth

    by = cli_actor()  # who the audit trail names

    # accounts may come before the data, as the app starts on an empty store
    with open_store(args, create=args.action == "add") as store:
        if args.action == "add":
            a = auth.add_account(store, args.name, _password(args), args.role, by=by)
            print(f"added {a.role} {a.name}")
        elif args.action == "list":
            rows = _accounts(store)
            if args.json:
                print_json({"annotators": rows})
            elif not rows:
                print("no accounts yet: mmrb annotators add NAME")
            else:
                for row in rows:
                    state = "active" if row["active"] else "disabled"
                    pw = "" if row["has_password"] else "  (no password: cannot sign in)"
                    name, role, done = row["name"], row["role"], f"{row['labelled']}/{row['assigned']}"
                    print(f"{name:<24} {role:<10} {state:<9} {done} labelled{pw}")
        elif args.action in ("disable", "enable"):
            auth.set_active(store, args.name, args.action == "enable", by=by)
            print(f"{args.action}d {args.name}" + ("; its sessions have ended" if args.action == "disable" else ""))
        elif args.action == "reset-password":
            if store.get_annotator(args.name) is None:  # before asking for a password
                raise MmrbError(f"no annotator named {args.name!r}")
            n = auth.reset_password(store, args.name, _password(args), by=by)
            print(f"password of {args.name} reset; {plural(n, 'session')} ended")
        elif args.action == "set-role":
            auth.set_role(store, args.name, args.role, by=by)
            print(f"{args.name} is now {args.role}; its sessions have ended")
        elif args.action == "sign-out":
            n = auth.sign_out_everywhere(store, args.name, by=by)
            print(f"{plural(n, 'session')} of {args.name} ended")
    return 0
