"""The `mmrb` command line itself: every stage is there with its help, and a command's
start-up imports its own stage only."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from curate.cli import STAGES, build_parser, main


def test_top_level_help_lists_every_stage(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for name in STAGES:
        assert name in out


@pytest.mark.parametrize("name", STAGES)
def test_each_stage_help_is_the_same_as_in_the_full_parser(name, capsys):
    with pytest.raises(SystemExit) as e:
        main([name, "--help"])
    assert e.value.code == 0
    lazy = capsys.readouterr().out
    with pytest.raises(SystemExit):
        build_parser().parse_args([name, "--help"])
    full = capsys.readouterr().out
    assert lazy == full and f"usage: mmrb {name}" in lazy and lazy.count("\n  -") >= 1


def test_the_full_parser_still_knows_every_command_option():
    p = build_parser()
    args = p.parse_args(["pair", "--strategy", "cross_model", "--seed", "3"])
    assert args.command == "pair" and args.seed == 3


def test_a_command_does_not_import_the_other_stages():
    code = (
        "import sys\nfrom curate.cli import main\ntry:\n    main(['sample', '--help'])\nexcept SystemExit:\n    pass\n"
        "stages = ('curate.pairing', 'curate.assign', 'mmrb_eval.commands.options', 'curate.dedup')\n"
        "print(sorted(m for m in stages if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def _command_paths(parser, path=()):
    """Every command and sub-command of the full parser, e.g. ("annotators", "add")."""
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _command_paths(sub, (*path, name))


HEAVY = (
    "sqlalchemy",
    "psycopg",
    "numpy",
    "pandas",
    "pyarrow",
    "scipy",
    "sklearn",
    "statsmodels",
    "matplotlib",
    "httpx",
    "aiohttp",
    "openai",
    "label_studio_sdk",
    "PIL",
    "streamlit",
    "datasets",
    "rich",
)


@pytest.mark.parametrize("path", list(_command_paths(build_parser())), ids=lambda p: " ".join(p) or "mmrb")
def test_help_imports_no_heavy_library(path):
    # `mmrb --help` took 0.7 s when it built every command's options (sqlalchemy, numpy, httpx), and
    # `mmrb score --help` 0.55 s when its options came from modules importing the store and numpy
    argv = [*path, "--help"]
    code = (
        f"import sys\nfrom curate.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "usage: mmrb" in out
    assert out.strip().splitlines()[-1] == "[]"


def test_every_command_path_is_checked():
    paths = set(_command_paths(build_parser()))
    assert {("ingest", "pairs"), ("labelstudio", "push"), ("annotators", "add"), ("score",)} <= paths


def test_an_unknown_command_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["nonsense"])
    assert e.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_no_top_level_package_shadows_a_well_known_one():
    # `evaluate` was ours and shadowed Hugging Face's `evaluate` once both were installed
    import importlib.util
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    include = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    ours = {p.rstrip("*") for p in include}
    assert ours == {"curate", "annotate", "mmrb_eval"}
    spec = importlib.util.find_spec("evaluate")
    assert spec is None or root not in Path(spec.origin or "").parents
