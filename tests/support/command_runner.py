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


def command(name: str, argv: list[str], capsys) -> tuple[int, str]:
    """An mmrb_eval command (its module alone) with the output it printed."""
    mod = importlib.import_module(f"mmrb_eval.commands.{name}")
    p = argparse.ArgumentParser()
    mod.add_arguments(p)
    rc = mod.run(p.parse_args(argv))
    return rc, capsys.readouterr().out
