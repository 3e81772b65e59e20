"""Run one mmrb command module the way ``curate.cli.main`` does, without building the
parser of every other (possibly unfinished) command."""

from __future__ import annotations

import argparse
import importlib
import sys

from curate.errors import MmrbError


def run_command(name: str, argv: list[str], package: str = "curate.commands") -> int:
    mod = importlib.import_module(f"{package}.{name}")
    p = argparse.ArgumentParser(prog=f"mmrb {name}")
    mod.add_arguments(p)
    args = p.parse_args(argv)
    args.command = name
    try:
        return int(mod.run(args) or 0)
    except MmrbError as e:
        print(f"mmrb {name}: error: {e}", file=sys.stderr)
        return 1
