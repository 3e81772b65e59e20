"""A test run stops the PostgreSQL cluster it started, and only that one (tests/support/services.py,
tests/conftest.py): pg_ctlcluster and the server stood in for by fakes saying what they were asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import services
from tests.support.streamlit_server import free_port

ROOT = Path(__file__).resolve().parents[1]


class FakeSystem:
    """subprocess.run of pg_lsclusters, pg_ctlcluster and psql: a cluster 15/main, down until started."""

    def __init__(self, start_code: int):
        self.start_code = start_code
        self.calls: list[list[str]] = []

    def __call__(self, cmd, **kwargs):
        self.calls.append(list(cmd))
        out, code = "", 0
        if cmd[0] == "pg_lsclusters":
            out = "15 main 5432 down postgres /var/lib/postgresql/15/main log\n"
        elif cmd[0] == "pg_ctlcluster" and cmd[-1] == "start":
            code = self.start_code
        return subprocess.CompletedProcess(cmd, code, out, "")


@pytest.fixture
def started_file(tmp_path, monkeypatch):
    path = tmp_path / "started"
    monkeypatch.setenv(services.STARTED_ENV, str(path))
    monkeypatch.delenv("MMRB_TEST_PG_URL", raising=False)
    monkeypatch.setattr(services.shutil, "which", lambda name: f"/usr/bin/{name}")
    return path


@pytest.mark.parametrize(("start_code", "noted"), [(0, "postgres 15 main\n"), (2, None)])
def test_a_cluster_is_noted_only_when_this_run_started_it(started_file, monkeypatch, start_code, noted):
    answers = iter([False, True])  # not accepting connections, then accepting them once started
    monkeypatch.setattr(services, "_psql_ok", lambda: next(answers))
    system = FakeSystem(start_code)
    monkeypatch.setattr(services.subprocess, "run", system)
    assert services.ensure_postgres().startswith("postgresql://")
    assert ["pg_ctlcluster", "15", "main", "start"] in system.calls
    assert (started_file.read_text() if started_file.exists() else None) == noted


def test_a_cluster_already_accepting_connections_is_not_noted(started_file, monkeypatch):
    monkeypatch.setattr(services, "_psql_ok", lambda: True)
    system = FakeSystem(0)
    monkeypatch.setattr(services.subprocess, "run", system)
    services.ensure_postgres()
    assert system.calls == [] and not started_file.exists()


@pytest.mark.parametrize("others", [0, 1])
def test_the_run_stops_what_it_noted_once_unless_another_client_uses_it(started_file, monkeypatch, others):
    started_file.write_text("postgres 15 main\npostgres 15 main\n")  # two workers each started it
    monkeypatch.setattr(services, "_other_clients", lambda base: others)
    system = FakeSystem(0)
    monkeypatch.setattr(services.subprocess, "run", system)
    stopped = services.stop_started(str(started_file))
    if others:
        assert stopped == [] and system.calls == []
    else:
        assert stopped == ["postgres 15 main"] and system.calls == [["pg_ctlcluster", "15", "main", "stop"]]


def test_nothing_noted_stops_nothing(tmp_path, monkeypatch):
    system = FakeSystem(0)
    monkeypatch.setattr(services.subprocess, "run", system)
    assert services.stop_started(str(tmp_path / "absent")) == [] and system.calls == []


def test_a_run_stops_at_its_end_what_its_workers_started(tmp_path):
    # a run of its own (two xdist workers), one of whose tests notes a started cluster; the fake
    # pg_ctlcluster logs what it is asked, and no server answers on the port (no other clients)
    bin_dir, log = tmp_path / "bin", tmp_path / "asked"
    bin_dir.mkdir()
    fake = bin_dir / "pg_ctlcluster"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    fake.chmod(0o755)
    (tmp_path / "test_noting.py").write_text(
        "from tests.support import services\n\n"
        "def test_starts():\n    services._note_started('postgres 15 main')\n\n"
        "def test_other():\n    pass\n"
    )
    env = {k: v for k, v in os.environ.items() if k != services.STARTED_ENV}
    env |= {"PATH": f"{bin_dir}:{env['PATH']}", "MMRB_TEST_PG_PORT": str(free_port()), "PYTHONPATH": str(ROOT)}
    # the project's settings and conftest, on a test file outside tests/
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "--rootdir", str(ROOT)]
    cmd += ["-c", str(ROOT / "pyproject.toml"), "-p", "tests.conftest", str(tmp_path)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert log.read_text() == "15 main stop\n"
