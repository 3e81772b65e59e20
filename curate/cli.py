"""The ``mmrb`` command line: one subcommand per pipeline stage.

Subcommands are registered as entry points in the group ``mmrb.commands`` (see
pyproject.toml), so ``curate`` never imports ``annotate`` or ``mmrb_eval``: each package
registers its own commands. A command module provides ``HELP``, ``add_arguments(parser)``
and ``run(args) -> int``; it keeps heavy imports inside ``run`` so ``mmrb --help`` is quick.
What commands parse alike (--db, id files, comma lists, --max-response-chars,
--allow-missing-images) is in curate/commands/common.py.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import entry_points

from .errors import MmrbError, is_disk_full

STAGES = (
    "ingest",
    "sample",
    "pair",
    "select",
    "scheme",
    "assign",
    "gold",
    "labels",
    "agreement",
    "quality",
    "build",
    "publish",
    "evaluate",
    "score",
    "leaderboard",
    "bestofn",
    "validity",
    "labelstudio",
    "annotators",
    "guidelines",
    "audit",
    "status",
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand's one-line help and the full options of ``command``
    only (all of them when ``command`` is None): a command's options may import its stage for
    their defaults, and neither ``mmrb --help`` nor ``mmrb sample`` should pay for importing
    every other stage."""
    parser = argparse.ArgumentParser(
        prog="mmrb",
        description="mmrb-studio: build expert-annotated multimodal reward benchmarks and score judges on them.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    registered = {ep.name: ep for ep in entry_points(group="mmrb.commands")}
    for name in STAGES:
        mod = registered[name].load()
        p = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        if command in (None, name):
            mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first if first in STAGES else "")
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except MmrbError as e:
        print(f"mmrb {args.command}: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a full disk where no command said what it was writing: one line still
        if not is_disk_full(e):
            raise
        print(f"mmrb {args.command}: error: disk full; the command stopped before it finished", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"mmrb {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
