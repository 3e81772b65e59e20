"""mmrb guidelines set FILE | show [--version N] | list: the labelling guidelines, with versions."""

from __future__ import annotations

import argparse

HELP = "set or show the labelling guidelines the app shows (each change a new version)"
DESCRIPTION = (
    "The project's labelling guidelines (Markdown), stored with versions: `set FILE` makes the file the "
    "current version (the same text as the current one adds nothing), `show` prints a version, `list` "
    "the versions. Every label records the version it was made under; each change is in `mmrb audit`."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_store_options

    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = sub.add_parser("set", help="make a Markdown file the current guidelines")
    s.add_argument("file", help="the guidelines as a Markdown file (UTF-8)")
    sh = sub.add_parser("show", help="print the current guidelines (or --version N)")
    sh.add_argument("--version", type=int, help="print this version instead of the current one")
    ls = sub.add_parser("list", help="list the versions: number, author, time (UTC), size")
    ls.add_argument("--json", action="store_true", help="print the versions as JSON (its schema: docs/json.md)")
    for q in (s, sh, ls):
        add_store_options(q)


def _read(path: str) -> str:
    from pathlib import Path

    from curate.errors import MmrbError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise MmrbError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise MmrbError(f"{path}: not UTF-8 text (byte {e.start})") from None
    if not text.strip():
        raise MmrbError(f"{path}: empty; the guidelines were not changed")
    return text


def run(args: argparse.Namespace) -> int:
    from curate.commands.common import cli_actor, open_store, print_json
    from curate.errors import MmrbError
    from curate.wording import utc_time

    # the guidelines may be written before the data
    with open_store(args, create=args.action == "set") as store:
        if args.action == "set":
            g, new = store.set_guidelines(_read(args.file), cli_actor())
            print(
                f"guidelines version {g.version} set from {args.file}"
                if new
                else f"unchanged: the same text as version {g.version}"
            )
        elif args.action == "show":
            shown = store.guidelines(args.version)
            if shown is None:
                what = f"no version {args.version}" if args.version is not None else "no guidelines yet"
                raise MmrbError(f"{what} in the store: mmrb guidelines set FILE")
            print(shown.text, end="" if shown.text.endswith("\n") else "\n")
        else:
            versions = store.guidelines_versions()
            if args.json:
                rows = [
                    {"version": g.version, "author": g.author, "created_at": g.created_at, "characters": len(g.text)}
                    for g in versions
                ]
                print_json({"versions": rows})
                return 0
            if not versions:
                print("no guidelines yet: mmrb guidelines set FILE")
            for g in versions:
                print(f"{g.version:>4}  {utc_time(g.created_at)}  {g.author:<24} {len(g.text)} characters")
    return 0
