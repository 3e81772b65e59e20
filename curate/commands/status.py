"""mmrb status: what the store holds, per stage and per category."""

from __future__ import annotations

import argparse

HELP = "counts per stage and per category, missing images, labels per pair"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.cli import add_store_options

    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--examples", type=int, default=10, help="missing images to list (default 10)")
    add_store_options(p)


def run(args: argparse.Namespace) -> int:
    import json

    from curate.cli import open_store
    from curate.status import collect, render

    with open_store(args) as store:
        st = collect(store, examples=args.examples)
    print(json.dumps(st.as_dict(), indent=2, sort_keys=True) if args.json else render(st))
    return 0
