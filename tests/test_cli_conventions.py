"""What `mmrb` does as any good command line does: a closed pipe ends it quietly, `mmrb` alone
lists the commands, `--version`, the store options before the command, and a mistyped `--db`
refused instead of silently starting an empty store."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from curate.cli import BROKEN_PIPE_EXIT, STAGES, main
from curate.commands.common import store_problem
from curate.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_ITEMS = ROOT / "data" / "sample" / "items.jsonl"


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "s.db")
    Store(path, tmp_path / "im").close()
    return path


def _into_closed_pipe(argv: list[str]) -> tuple[int, str]:
    """Run `mmrb ARGV` with its output going to a pipe whose reader is already gone (`| head`
    having read what it wanted): the exit code and what it wrote to stderr."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code = f"import sys\nfrom curate.cli import main\nsys.exit(main({argv!r}))"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # before the child has written anything: its first write meets a closed pipe
    err = p.stderr.read().decode()
    return p.wait(timeout=60), err


def test_a_closed_pipe_ends_a_command_quietly(db):
    rc, err = _into_closed_pipe(["status", "--json", "--db", db])
    # what a shell reports for a tool that SIGPIPE ended (`yes | head` under pipefail)
    assert (rc, err) == (BROKEN_PIPE_EXIT, "") and BROKEN_PIPE_EXIT == 141


@pytest.mark.parametrize("argv", [["--help"], ["status", "--help"], ["--version"], []], ids=" ".join)
def test_a_closed_pipe_ends_help_and_usage_quietly(argv):
    rc, err = _into_closed_pipe(argv)
    assert err == ""
    # argparse itself drops a failed write of its help (0); a failed flush after it is ours (141);
    # `mmrb` alone keeps its usage error's code
    assert rc == 2 if argv == [] else rc in (0, BROKEN_PIPE_EXIT)


def test_a_reader_that_stays_gets_everything(db):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "curate.cli", "status", "--json", "--db", db], capture_output=True, env=env, check=True
    )
    assert json.loads(out.stdout)["db"] == db and out.stderr == b""


def test_mmrb_alone_lists_every_command_and_is_a_usage_error(capsys):
    # 2, argparse's code of a usage error: nothing was run, and `mmrb $CMD` with an empty
    # variable must not pass in a script; the list goes to stdout, so `mmrb | less` pages it
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert err == "" and "usage: mmrb" in out
    for name in STAGES:
        assert re.search(rf"\n    {name}\s", out), name


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"mmrb {version('mmrb-studio')}\n"


def test_the_store_options_may_come_before_the_command(db, tmp_path, capsys):
    assert main(["--db", db, "--images", str(tmp_path / "im"), "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["db"] == db
    # the same value on both sides is one meaning, not a conflict
    assert main(["--db", db, "status", "--db", db, "--json"]) == 0


def test_the_store_options_given_twice_or_to_a_command_without_a_store_are_usage_errors(db, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--db", db, "status", "--db", str(tmp_path / "other.db")])
    assert e.value.code == 2
    assert "--db given before the command" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["--db", db, "scheme"])
    assert e.value.code == 2
    assert "mmrb scheme takes no --db" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["status"], ["pair", "--strategy", "cross_model"], ["agreement"], ["audit"]])
def test_a_command_that_reads_refuses_a_store_that_does_not_exist(command, tmp_path, capsys):
    missing = tmp_path / "x.db"
    assert main([*command, "--db", str(missing)]) == 1
    err = capsys.readouterr().err
    assert f"no store at {missing}; `mmrb ingest` creates one" in err and "Traceback" not in err
    assert not missing.exists() and list(tmp_path.iterdir()) == []


def test_the_default_store_is_named_when_it_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MMRB_DB", raising=False)
    assert main(["status"]) == 1
    assert "no store at mmrb.db; `mmrb ingest` creates one" in capsys.readouterr().err
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`./mmrb.db`" in readme


def test_a_folder_a_missing_folder_and_a_file_as_folder_are_said_as_such(tmp_path, capsys):
    (tmp_path / "f").write_text("not a folder")
    cases = {
        str(tmp_path): f"--db {tmp_path} is a folder",
        str(
            tmp_path / "nope" / "x.db"
        ): f"no store at {tmp_path / 'nope' / 'x.db'}: the folder {tmp_path / 'nope'} does not exist",
        str(tmp_path / "f" / "x.db"): f"{tmp_path / 'f'} is a file, not a folder",
    }
    for db, said in cases.items():
        assert main(["status", "--db", db]) == 1
        assert said in capsys.readouterr().err
    # a store can be started in a folder to be made, never under a file
    assert store_problem(str(tmp_path / "new" / "x.db"), create=True) is None
    assert "is a file" in (store_problem(str(tmp_path / "f" / "g" / "x.db"), create=True) or "")
    assert "is a folder" in (store_problem(str(tmp_path), create=True) or "")
    assert store_problem("postgresql://u@127.0.0.1:1/none", create=False) is None  # the server's to refuse


def test_the_commands_that_start_a_store_still_do(tmp_path, monkeypatch, capsys):
    db = tmp_path / "new" / "s.db"  # its folder made too, as before
    assert main(["ingest", "items", str(SAMPLE_ITEMS), "--allow-missing-images", "--db", str(db)]) == 0
    assert db.is_file()
    (tmp_path / "g.md").write_text("Prefer the correct answer.\n")
    assert main(["guidelines", "set", str(tmp_path / "g.md"), "--db", str(tmp_path / "g.db")]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("a-long-enough-password\n"))
    assert main(["annotators", "add", "ada", "--password-stdin", "--db", str(tmp_path / "a.db")]) == 0
    assert (tmp_path / "g.db").is_file() and (tmp_path / "a.db").is_file()
    # and their sub-commands that read refuse like any reader
    capsys.readouterr()
    for argv in (["guidelines", "list"], ["annotators", "list"]):
        assert main([*argv, "--db", str(tmp_path / "none.db")]) == 1
        assert "no store at" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_ingest_counts_images_as_status_does(tmp_path, capsys):
    # ingest said "28 images stored" (files) where status said "27 references, 26 stored"
    db = str(tmp_path / "s.db")
    assert main(["ingest", "items", str(SAMPLE_ITEMS), "--allow-missing-images", "--db", db]) == 0
    said = capsys.readouterr().out.splitlines()[0]
    assert main(["status", "--json", "--db", db]) == 0
    st = json.loads(capsys.readouterr().out)
    ok, refs, responses = st["images"]["ok"], sum(st["images"].values()), sum(st["response_images"].values())
    assert ok < refs and responses > 0  # the sample has a missing image and response images
    assert f"image references stored: {ok} of items and {responses} of responses (" in said
    assert f"; {refs - ok} image reference missing" in said


def test_leaderboard_of_every_run_of_a_store_without_runs_says_so(db, tmp_path, capsys):
    # it said "give report files, --run or --all-runs" when given --all-runs
    assert main(["leaderboard", "--all-runs", "--db", db, "--images", str(tmp_path / "im")]) == 1
    err = capsys.readouterr().err
    assert f"no evaluation runs in the store {db}: `mmrb evaluate` stores them" in err and "give report" not in err
    assert main(["leaderboard", "--db", db]) == 1
    assert "nothing to compare: give report files, --run or --all-runs" in capsys.readouterr().err


def _on_a_terminal(argv: list[str]) -> tuple[int, bytes, bytes]:
    """Run `mmrb ARGV` with stderr on a pseudo-terminal and stdout to a pipe: the exit code,
    stdout, and what was drawn on the terminal."""
    master, slave = os.openpty()
    code = f"import sys\nfrom curate.cli import main\nsys.exit(main({argv!r}))"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm", "COLUMNS": "100"}
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    assert p.stdout is not None
    out = p.stdout.read()
    rc = p.wait(timeout=60)
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    return rc, out, drawn


def test_quality_draws_a_progress_bar_on_a_terminal_only(db, capsys):
    rc, out, drawn = _on_a_terminal(["quality", "--db", db])
    assert rc == 0 and b"2/2" in drawn and b"ETA" in drawn and b"\x1b[" not in out
    rc, quiet_out, quiet_drawn = _on_a_terminal(["quality", "--db", db, "--quiet"])
    assert rc == 0 and quiet_drawn == b"" and quiet_out == out
    assert main(["quality", "--db", db]) == 0  # not a terminal: nothing on stderr
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out.encode() == out
