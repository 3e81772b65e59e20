"""mmrb status: what the store holds, per stage and per category."""

from __future__ import annotations

import argparse

HELP = "counts per stage and per category, missing and broken images, labels per pair"
DESCRIPTION = (
    "What the store holds, per stage and per category. Every stored image an item or a response "
    "refers to is checked in the image folder; exits 1 when any is gone, a symbolic link or unreadable "
    "(the store is damaged)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_store_options

    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--examples", type=int, default=10, help="missing images to list (default 10)")
    add_store_options(p)


def run(args: argparse.Namespace) -> int:
    import json

    from curate.commands.common import open_store
    from curate.status import collect, render

    with open_store(args) as store:
        st = collect(store, examples=args.examples)
    print(json.dumps(st.as_dict(), indent=2, sort_keys=True) if args.json else render(st))
    return 1 if st.broken_files or st.response_broken_files else 0
