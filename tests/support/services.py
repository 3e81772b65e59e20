"""Starting the real services the tests need (PostgreSQL here; others beside it).

A service that cannot be had makes its tests skip with the reason, except under
MMRB_REQUIRE_ALL=1 (set by ``./run test`` and so by CI), where it is a failure: CI must
never pass by skipping the backends it is meant to test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable

import pytest

PG_USER = "mmrb"
PG_PASSWORD = "mmrb-test"
PG_HOST = "127.0.0.1"
PG_PORT = int(os.environ.get("MMRB_TEST_PG_PORT", "5432"))

# A file naming, one a line, the services this test run started (the run's workers and the
# processes they start append to it), so the run stops them when it ends (tests/conftest.py:
# pytest_unconfigure of the controlling process): a cluster already running is left running.
STARTED_ENV = "MMRB_TEST_STARTED"


def unavailable(reason: str):
    if os.environ.get("MMRB_REQUIRE_ALL") == "1":
        pytest.fail(f"required test service unavailable: {reason}", pytrace=False)
    pytest.skip(reason)


def _psql_ok() -> bool:
    import psycopg

    try:
        with psycopg.connect(
            host=PG_HOST, port=PG_PORT, user=PG_USER, password=PG_PASSWORD, dbname="postgres", connect_timeout=3
        ):
            return True
    except psycopg.OperationalError:  # refused, not listening, no such role: not up for us yet
        return False


def ensure_postgres() -> str:
    """A server URL (without database) for a superuser role; starts the cluster if needed."""
    if os.environ.get("MMRB_TEST_PG_URL"):
        return os.environ["MMRB_TEST_PG_URL"].rstrip("/")
    base = f"postgresql://{PG_USER}:{PG_PASSWORD}@{PG_HOST}:{PG_PORT}"
    if _psql_ok():
        return base
    if not shutil.which("pg_ctlcluster") or not shutil.which("pg_lsclusters"):
        unavailable("PostgreSQL is not installed (tests/setup-system.sh installs it)")
    clusters = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True).stdout.split()
    if len(clusters) < 2:
        unavailable("no PostgreSQL cluster found")
    version, name = clusters[0], clusters[1]
    start = subprocess.run(["pg_ctlcluster", version, name, "start"], capture_output=True)
    if start.returncode == 0:  # 2: it was running already, someone else's to stop
        _note_started(f"postgres {version} {name}")
    as_pg = ["su", "postgres", "-c"] if os.geteuid() == 0 else ["sudo", "-u", "postgres", "sh", "-c"]
    sql = (
        f"DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname='{PG_USER}') THEN "
        f"CREATE ROLE {PG_USER} LOGIN SUPERUSER PASSWORD '{PG_PASSWORD}'; END IF; END$$;"
    )
    # fed on stdin: a "$$" on a shell command line would be expanded by the shell
    subprocess.run(as_pg + ["psql -q -v ON_ERROR_STOP=1"], input=sql, capture_output=True, text=True)
    if not _psql_ok():
        unavailable("PostgreSQL did not accept connections on 127.0.0.1 after starting it")
    return base


def _note_started(service: str) -> None:
    path = os.environ.get(STARTED_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(service + "\n")


def _other_clients(base: str) -> int:
    """Sessions on the server other than this one: another test run or an app still using it."""
    import psycopg

    sql = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
    try:
        with psycopg.connect(base + "/postgres", connect_timeout=3) as c:
            row = c.execute(sql).fetchone()
    except psycopg.OperationalError:  # stopped already, or not ours to reach
        return 0
    return int(row[0]) if row else 0


def begin_noting() -> str | None:
    """Start noting the services this process (and its children) start, in a file named by
    $MMRB_TEST_STARTED; None when an outer run already notes them (it stops them)."""
    if STARTED_ENV in os.environ:
        return None
    fd, path = tempfile.mkstemp(prefix="mmrb-test-started-")
    os.close(fd)
    os.environ[STARTED_ENV] = path
    return path


def end_noting(path: str | None) -> list[str]:
    """Stop what was noted since ``begin_noting`` gave ``path`` (see stop_started)."""
    if path is None:
        return []
    stopped = stop_started(path)
    os.unlink(path)
    os.environ.pop(STARTED_ENV, None)
    return stopped


def stop_started(path: str) -> list[str]:
    """Stop the services the run noted in ``path`` as started; returns what it stopped. A
    cluster another client still uses (a concurrent run, an app) is left running."""
    try:
        with open(path, encoding="utf-8") as f:
            noted = list(dict.fromkeys(line.strip() for line in f if line.strip()))
    except FileNotFoundError:
        return []
    stopped = []
    for service in noted:
        kind, *args = service.split()
        if kind != "postgres" or _other_clients(f"postgresql://{PG_USER}:{PG_PASSWORD}@{PG_HOST}:{PG_PORT}"):
            continue
        if subprocess.run(["pg_ctlcluster", *args, "stop"], capture_output=True).returncode == 0:
            stopped.append(service)
    return stopped


def new_pg_database(base: str) -> tuple[str, Callable[[], None]]:
    """Create an empty database; returns (url, drop)."""
    import psycopg

    name = "mmrb_t_" + uuid.uuid4().hex[:12]
    dsn = base.replace("postgresql://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return f"{base}/{name}", drop
