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
import os
import signal
import sys
from importlib.metadata import PackageNotFoundError, entry_points, version

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
    "export",
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
    from .commands.common import add_global_store_options

    parser = argparse.ArgumentParser(
        prog="mmrb",
        description="mmrb-studio: build expert-annotated multimodal reward benchmarks and score judges on them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    add_global_store_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    registered = {ep.name: ep for ep in entry_points(group="mmrb.commands")}
    for name in STAGES:
        mod = registered[name].load()
        p = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        if command in (None, name):
            mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _version() -> str:
    try:
        return version("mmrb-studio")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


# what a shell reports for a tool killed by SIGPIPE (`yes | head`; 141 under `set -o pipefail`)
BROKEN_PIPE_EXIT = 128 + signal.SIGPIPE


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code. A reader that goes away (`mmrb status | head`) ends the
    command quietly with ``BROKEN_PIPE_EXIT``, as conventional tools end."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # inside the guard: a pipe's buffered output is written here, not at exit
        return code
    except SystemExit as e:  # argparse's --help, --version and usage errors
        if e.code not in (None, 0):
            raise
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            return _quiet_broken_pipe()
        raise
    except BrokenPipeError:
        return _quiet_broken_pipe()


def _quiet_broken_pipe() -> int:
    # what is still buffered for the closed pipe goes nowhere, so that the interpreter's own
    # flush at exit prints no "Exception ignored" either (Python's signal module documentation)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # a stdout without a file descriptor (a test's capture)
        pass
    return BROKEN_PIPE_EXIT


def _main(argv: list[str] | None) -> int:
    from .commands.common import apply_global_store_options

    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # `mmrb` alone: the commands, and a usage error's code (nothing was run)
        build_parser("").print_help()
        return 2
    first = next((a for a in argv if a in STAGES), None)
    parser = build_parser(first or "")
    args = parser.parse_args(argv)
    try:
        apply_global_store_options(parser, args)
        return int(args._run(args) or 0)
    except MmrbError as e:
        print(f"mmrb {args.command}: error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise
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
