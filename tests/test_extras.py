"""The lean install's optional extras: declared as curate/extras.py says, and a command that
needs a missing one stops at once with one line naming it (the package's absence simulated by
blocking its import: sys.modules[name] = None)."""

from __future__ import annotations

import ast
import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from curate.cli import main
from curate.extras import EXTRAS, MissingExtra, require_extra
from curate.quality.aggregate import aggregate
from curate.quality.frames import as_frame

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(requirement: str) -> str:
    return Requirement(requirement).name


@pytest.mark.parametrize("extra", list(EXTRAS))
def test_each_extra_is_declared_as_an_extra_and_not_a_dependency(extra):
    _, dist = EXTRAS[extra]
    optional = PROJECT["optional-dependencies"]
    assert dist in {_name(r) for r in optional[extra]}
    assert dist not in {_name(r) for r in PROJECT["dependencies"]}
    # the suite tests every command: installing the test extra installs this one too
    assert any(_name(r) == PROJECT["name"] and extra in Requirement(r).extras for r in optional["test"])


def test_packages_no_production_code_imports_are_not_dependencies():
    core = {_name(r) for r in PROJECT["dependencies"]}
    assert not core & {"openai", "scikit-learn", "statsmodels", "label-studio-sdk", "crowd-kit"}


def _block(monkeypatch, extra):
    monkeypatch.setitem(sys.modules, EXTRAS[extra][0], None)


def _one_line_naming(err: str, extra: str) -> None:
    assert f"pip install 'mmrb-studio[{extra}]'" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("extra", list(EXTRAS))
def test_require_extra_passes_when_installed_and_names_the_extra_when_not(extra, monkeypatch):
    require_extra(extra, "a command")  # the test extra installs it
    _block(monkeypatch, extra)
    with pytest.raises(MissingExtra, match=rf"a command needs {EXTRAS[extra][1]}.*mmrb-studio\[{extra}\]"):
        require_extra(extra, "a command")


def test_labelstudio_push_without_the_sdk_says_which_extra_and_touches_nothing(monkeypatch, tmp_path, capsys):
    _block(monkeypatch, "labelstudio")
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)  # the extra is named first, not the key
    db = tmp_path / "store.db"
    argv = ["labelstudio", "push", "--url", "http://127.0.0.1:9", "--project", "abc", "--db", str(db)]
    assert main(argv) == 1
    _one_line_naming(capsys.readouterr().err, "labelstudio")
    assert not db.exists()


def test_labelstudio_config_needs_no_sdk(monkeypatch, capsys):
    _block(monkeypatch, "labelstudio")
    assert main(["labelstudio", "config"]) == 0
    assert "<View" in capsys.readouterr().out


def test_checking_a_label_studio_config_without_the_sdk_names_the_extra(monkeypatch):
    from annotate.labelstudio.config import config_problems

    _block(monkeypatch, "labelstudio")
    with pytest.raises(MissingExtra, match=r"mmrb-studio\[labelstudio\]"):
        config_problems("<View></View>")


FRAME = [
    ("p1", "ann", "preference", "first"),
    ("p1", "bea", "preference", "first"),
    ("p2", "ann", "preference", "second"),
]


def test_mace_without_crowd_kit_names_the_extra_and_the_others_need_it_not(monkeypatch):
    _block(monkeypatch, "aggregate")
    frame = as_frame(FRAME)
    with pytest.raises(MissingExtra, match=r"MACE.*mmrb-studio\[aggregate\]"):
        aggregate(frame, "mace")
    # the project's own Dawid-Skene and the majority run on the lean install
    for method in ("majority", "dawid-skene"):
        assert aggregate(frame, method).fields["preference"].final["p1"] == "first"


@pytest.mark.parametrize("command", ["build", "quality"])
def test_mace_commands_without_crowd_kit_stop_before_the_store(command, monkeypatch, tmp_path, capsys):
    _block(monkeypatch, "aggregate")
    db = tmp_path / "store.db"
    if command == "build":
        rules = tmp_path / "rules.toml"
        rules.write_text('[filter]\naggregation = "mace"\n', encoding="utf-8")
        argv = ["build", "--rules", str(rules), "--out", str(tmp_path / "out"), "--db", str(db)]
    else:
        argv = ["quality", "--aggregate", "mace", "--db", str(db)]
    assert main(argv) == 1
    _one_line_naming(capsys.readouterr().err, "aggregate")
    assert not db.exists()


# what the lean install leaves out, as modules: the extras' and the test extra's references
NOT_IN_THE_LEAN_INSTALL = ("label_studio_sdk", "crowdkit", "statsmodels", "sklearn", "openai")


def test_every_module_imports_without_what_the_lean_install_leaves_out():
    # each module of the three packages imported with those packages' imports blocked, in a
    # process of its own (a module they would fail in is named, with its error)
    code = (
        "import importlib, pkgutil, sys\n"
        f"for name in {NOT_IN_THE_LEAN_INSTALL!r}:\n    sys.modules[name] = None\n"
        "bad = {}\n"
        "for pkg in ('curate', 'annotate', 'mmrb_eval'):\n"
        "    for info in pkgutil.walk_packages(importlib.import_module(pkg).__path__, pkg + '.'):\n"
        "        try:\n            importlib.import_module(info.name)\n"
        "        except ImportError as e:\n            bad[info.name] = str(e)\n"
        "print(bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "{}"


def test_the_apps_start_up_imports_only_core_dependencies():
    # app.py warms the lead's imports in a thread at start-up: one of a package the lean install
    # leaves out (statsmodels, once) is a traceback on every start
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    warm = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "_warm")
    names = [c.value for c in ast.walk(warm) if isinstance(c, ast.Constant) and isinstance(c.value, str)][1:]
    assert names  # the docstring left out
    dists = importlib.metadata.packages_distributions()
    core = {canonicalize_name(_name(r)) for r in PROJECT["dependencies"]}
    for name in names:
        assert {canonicalize_name(d) for d in dists[name.split(".")[0]]} & core, name
