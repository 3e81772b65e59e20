"""A full disk (issue 25) and builds into one folder at once.

A full disk is reproduced for real where this machine allows it: a small tmpfs (mounted as
root; CI runs as root) holds the image folder, the SQLite file, a PostgreSQL tablespace, the
rejects file, the import's temporary files or the build's folder. Where mounting is not
permitted those variants skip, and the simulated ones, which always run, raise the errors a
full disk raises at the same places: ENOSPC from a file write (pyarrow's own, taken from
/dev/full), SQLite's "database or disk is full" (for real, through max_page_count) and
psycopg's DiskFull. Each time the command says "disk full while writing X; nothing was
changed" on one line, exits 1, and leaves the store, the image folder and the previous build
as they were, without a temporary file.
"""

from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing
import os
import pwd
import shutil
import signal
import sqlite3
import stat
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

import pytest
from PIL import Image

import curate.benchmark as build_mod
from curate.benchmark import MANIFEST, build, export
from curate.cli import main
from curate.errors import DiskFullError, MmrbError, is_disk_full
from curate.store import Store
from tests.ingest_helpers import assert_nothing_written
from tests.support.build_store import RULES, seed_store

FORK = multiprocessing.get_context("fork")
NO_SPACE = os.strerror(errno.ENOSPC)  # "No space left on device"


def enospc(filename: str | None = None) -> OSError:
    return OSError(errno.ENOSPC, NO_SPACE, filename) if filename else OSError(errno.ENOSPC, NO_SPACE)


def pyarrow_enospc() -> OSError:
    """The error pyarrow itself raises when a write meets a full disk (/dev/full). Through
    a stream: pyarrow.parquet.write_table deletes the file it failed to write."""
    import pyarrow as pa

    if not stat.S_ISCHR(os.stat("/dev/full").st_mode):  # a container without it: pyarrow's words
        return OSError(errno.ENOSPC, f"Error writing bytes to file. Detail: [errno 28] {NO_SPACE}")
    with pytest.raises(OSError) as e:
        with pa.OSFile("/dev/full", "wb") as f:
            f.write(os.urandom(1 << 20))
    return e.value


# -- a small disk: a tmpfs where mounting is permitted --------------------------------------
class Disks:
    """tmpfs mounts for one test, in a folder any local user can reach (a PostgreSQL
    tablespace is written by the server's own user); unmounted when the test ends."""

    def __init__(self) -> None:
        self.base: Path | None = None
        self.mounted: list[Path] = []

    def mount(self, size: str) -> Path:
        if os.geteuid() != 0 or not shutil.which("mount"):
            pytest.skip("mounting a tmpfs needs root (CI runs as root); the simulated variant covers this")
        if self.base is None:
            self.base = Path(tempfile.mkdtemp(prefix="mmrb-disk-"))
            self.base.chmod(0o755)
        where = self.base / f"d{len(self.mounted)}"
        where.mkdir()
        r = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=755", "tmpfs", str(where)], text=True, capture_output=True
        )
        if r.returncode:
            pytest.skip(
                f"mounting a tmpfs is not permitted here ({r.stderr.strip()}); the simulated variant covers this"
            )
        self.mounted.append(where)
        return where

    @staticmethod
    def fill(where: Path, leave: int = 0) -> None:
        """Fill ``where`` up to ``leave`` bytes free (the tmpfs counts in pages)."""
        filler = where / "filler"
        filler.unlink(missing_ok=True)
        st = os.statvfs(where)
        size = st.f_bavail * st.f_frsize - leave
        if size > 0:
            with filler.open("wb") as f:
                try:
                    f.write(b"\0" * size)
                except OSError as e:
                    assert e.errno == errno.ENOSPC

    @staticmethod
    def grow(where: Path, size: str = "256m") -> None:
        """Room again (to look at what was left, which PostgreSQL needs space for)."""
        (where / "filler").unlink(missing_ok=True)
        subprocess.run(["mount", "-o", f"remount,size={size}", str(where)], check=True)

    def close(self) -> None:
        for where in reversed(self.mounted):
            if subprocess.run(["umount", str(where)], capture_output=True).returncode:
                subprocess.run(["umount", "-l", str(where)], capture_output=True)
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture
def disks() -> Iterator[Disks]:
    d = Disks()
    yield d
    d.close()


@pytest.fixture(params=["tmpfs", "simulated"])
def disk(request) -> str:
    return request.param


@contextmanager
def pg_database_on(where: Path, server: str) -> Iterator[str]:
    """A new PostgreSQL database whose tables live on ``where`` (a tablespace there)."""
    import psycopg

    if urlparse(server).hostname not in ("127.0.0.1", "localhost"):
        pytest.skip("the PostgreSQL server is not on this machine: its tablespace cannot be on our tmpfs")
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no postgres system user to own the tablespace folder")
    folder = where / "tablespace"
    folder.mkdir()
    shutil.chown(folder, "postgres", "postgres")
    name = "mmrb_t_" + uuid.uuid4().hex[:12]
    admin = f"{server}/postgres"
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f"CREATE TABLESPACE {name} LOCATION '{folder}'")
        c.execute(f'CREATE DATABASE "{name}" TABLESPACE {name}')
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f"DROP TABLESPACE IF EXISTS {name}")


# -- simulations -------------------------------------------------------------------------
class _FullFile:
    """A file on a disk that fills up: half of the first write lands, then ENOSPC."""

    def __init__(self, f) -> None:
        self.f = f

    def __getattr__(self, name: str):  # seek, flush, fileno, ...: the real file's
        return getattr(self.f, name)

    def write(self, data: bytes) -> int:
        self.f.write(data[: len(data) // 2])
        self.f.flush()
        raise enospc()

    def close(self) -> None:
        self.f.close()

    def __enter__(self) -> _FullFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()


def full_folder(monkeypatch, folder: Path) -> None:
    """Files opened through os.fdopen (image staging, the rejects file) under ``folder``
    meet a full disk."""
    real = os.fdopen

    def fdopen(fd, *args, **kwargs):
        f = real(fd, *args, **kwargs)
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder.resolve()) + os.sep):
            return _FullFile(f)
        return f

    monkeypatch.setattr(os, "fdopen", fdopen)


@contextmanager
def sqlite_page_limit(extra_pages: int) -> Iterator[None]:
    """Every new SQLite connection may grow its file by ``extra_pages`` only: SQLite itself
    then says "database or disk is full" (SQLITE_FULL), as on a full disk."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def limit(dbapi_conn, _record) -> None:
        if isinstance(dbapi_conn, sqlite3.Connection):
            pages = dbapi_conn.execute("PRAGMA page_count").fetchone()[0]
            dbapi_conn.execute(f"PRAGMA max_page_count = {pages + extra_pages}")

    event.listen(Engine, "connect", limit)
    try:
        yield
    finally:
        event.remove(Engine, "connect", limit)


def pg_disk_full(monkeypatch) -> None:
    """PostgreSQL's answer to a full disk (psycopg's DiskFull, SQLSTATE 53100) when the
    import writes its candidates. The statement's parameters say "No space left on device"
    too: the user's data must not decide what the error is."""
    import psycopg
    from sqlalchemy.exc import OperationalError

    import curate.store.imports as imports

    real = imports.insert_rows

    def insert_rows(conn, table, *args, **kwargs):
        if table.name == "candidates":
            orig = psycopg.errors.DiskFull(f'could not extend file "base/16384/16400": {NO_SPACE}')
            raise OperationalError("INSERT INTO candidates ...", {"text": NO_SPACE}, orig)
        return real(conn, table, *args, **kwargs)

    monkeypatch.setattr(imports, "insert_rows", insert_rows)


# -- files to import -----------------------------------------------------------------------
def image_items(folder: Path, n: int) -> Path:
    """Items with one image each of random pixels (PNG cannot shrink them: 77 KB each)."""
    (folder / "img").mkdir(parents=True, exist_ok=True)
    rows = []
    for k in range(n):
        side = 160
        Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(folder / "img" / f"{k}.png")
        rows.append({"id": f"it-{k}", "prompt": f"q {k}", "images": [f"img/{k}.png"], "category": "vqa"})
    path = folder / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def text_items(folder: Path, n: int, bad: int = 0) -> Path:
    """Items with long responses (8 KB a row) and no image; ``bad`` rows without a prompt."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "id": f"t-{k}",
            "prompt": f"question {k}",
            "category": "vqa",
            "responses": [{"model": "m1", "text": f"{k} " + "a" * 4000}, {"model": "m2", "text": f"{k} " + "b" * 4000}],
        }
        for k in range(n)
    ]
    rows += [{"id": f"bad-{k}", "category": "vqa", "note": "x" * 65536} for k in range(bad)]
    path = folder / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def mmrb(argv: list[str], capsys) -> tuple[int, str]:
    """``mmrb ARGV`` as the command line runs it: (exit code, stderr)."""
    rc = main(argv)
    return rc, capsys.readouterr().err


def ingest_argv(path: Path, db: str, images: Path, *extra: str) -> list[str]:
    return ["ingest", "items", str(path), "--db", db, "--images", str(images), *extra]


def display(db: str) -> str:
    with Store(db) as s:
        return s.display_name


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# -- 1. the one helper ------------------------------------------------------------------
def test_is_disk_full_knows_each_way_a_full_disk_is_said():
    import psycopg
    from sqlalchemy.exc import IntegrityError, OperationalError

    # real SQLite: a file that may not grow
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (x)")
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(sqlite3.OperationalError) as sqlite_full:
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 5000,)] * 50)
    assert str(sqlite_full.value) == "database or disk is full"
    pg_full = psycopg.errors.DiskFull(f'could not extend file "base/1/2": {NO_SPACE}')
    for e in (
        enospc(),
        enospc("/some/file"),
        pyarrow_enospc(),
        OSError(f"Error writing bytes to file. Detail: [errno 28] {NO_SPACE}"),  # without errno
        sqlite_full.value,
        OperationalError("INSERT ...", {}, sqlite_full.value),
        pg_full,
        OperationalError("INSERT ...", {}, pg_full),
    ):
        assert is_disk_full(e), repr(e)
    try:  # behind another error
        try:
            raise enospc()
        except OSError as inner:
            raise RuntimeError("writing failed") from inner
    except RuntimeError as outer:
        assert is_disk_full(outer)
    for e in (
        OSError(errno.EACCES, "Permission denied"),
        sqlite3.OperationalError("database is locked"),
        IntegrityError("INSERT ...", {"text": NO_SPACE}, sqlite3.IntegrityError("UNIQUE constraint failed")),
        ValueError(NO_SPACE),  # text in an error that is no file's or database's: the user's data
        MmrbError(NO_SPACE),  # already said to the user
    ):
        assert not is_disk_full(e), repr(e)
    assert str(DiskFullError("X")) == "disk full while writing X; nothing was changed"


def test_the_command_line_says_a_full_disk_no_command_reported_in_one_line(monkeypatch, capsys):
    import curate.commands.status as status

    def run(args):
        raise enospc("/somewhere/file")

    monkeypatch.setattr(status, "run", run)
    assert mmrb(["status"], capsys) == (1, "mmrb status: error: disk full; the command stopped before it finished\n")


# -- 2. ingest: the image folder fills up ----------------------------------------------------
def test_ingest_into_a_full_image_folder_changes_nothing_and_leaves_no_temporary_file(
    db_url, disk, disks, tmp_path, monkeypatch, capsys
):
    """What the issue saw: `OSError: [Errno 28]` and a `.tmp-*` file left in the image folder."""
    if disk == "tmpfs":
        images = disks.mount("1m") / "images"
        path = image_items(tmp_path / "in", 30)  # 2.3 MB of images
    else:
        images = tmp_path / "images"
        path = image_items(tmp_path / "in", 3)
        full_folder(monkeypatch, images)
    Store(db_url, images=images).close()
    rc, err = mmrb(ingest_argv(path, db_url, images), capsys)
    assert (rc, err) == (
        1,
        f"mmrb ingest: error: disk full while writing image files into {images}; nothing was changed\n",
    )
    assert files_under(images) == []  # no image of the failed import, no .tmp-* file
    monkeypatch.undo()
    with Store(db_url, images=images) as s:
        assert_nothing_written(s)


# -- 3. ingest: the store fills up -------------------------------------------------------------
def test_ingest_into_a_full_sqlite_store_changes_nothing(disk, disks, tmp_path, capsys):
    path = text_items(tmp_path / "in", 600)  # 5 MB of text
    images = tmp_path / "images"
    if disk == "tmpfs":
        where = disks.mount("2m")
        db = str(where / "store.db")
        Store(db, images=images).close()
        rc, err = mmrb(ingest_argv(path, db, images), capsys)
        leftover = sorted(p.name for p in where.iterdir())
        disks.grow(where)
    else:
        db = str(tmp_path / "store.db")
        Store(db, images=images).close()
        with sqlite_page_limit(200):
            rc, err = mmrb(ingest_argv(path, db, images), capsys)
        leftover = sorted(p.name for p in Path(db).parent.iterdir() if p.name.startswith("store.db"))
    assert (rc, err) == (1, f"mmrb ingest: error: disk full while writing to the store {db}; nothing was changed\n")
    assert set(leftover) <= {"store.db", "store.db-wal", "store.db-shm"}  # SQLite's own files only
    with Store(db, images=images) as s:
        assert_nothing_written(s)
        with s.read() as c:
            assert c.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"


def test_ingest_into_a_full_postgresql_store_changes_nothing(disk, disks, pg_server, tmp_path, monkeypatch, capsys):
    """PostgreSQL says it as "could not extend file ...: No space left on device" (DiskFull)."""
    path = text_items(tmp_path / "in", 600)
    images = tmp_path / "images"
    if disk == "tmpfs":
        where = disks.mount("64m")
        with pg_database_on(where, pg_server) as db:
            Store(db, images=images).close()
            disks.fill(where, leave=256 << 10)
            rc, err = mmrb(ingest_argv(path, db, images), capsys)
            disks.grow(where)  # a new connection writes files of its own
            _check_pg_rolled_back(db, images, rc, err)
    else:
        from tests.support.services import new_pg_database

        db, drop = new_pg_database(pg_server)
        try:
            Store(db, images=images).close()
            pg_disk_full(monkeypatch)
            rc, err = mmrb(ingest_argv(path, db, images), capsys)
            monkeypatch.undo()
            _check_pg_rolled_back(db, images, rc, err)
        finally:
            drop()


def _check_pg_rolled_back(db: str, images: Path, rc: int, err: str) -> None:
    assert (rc, err) == (
        1,
        f"mmrb ingest: error: disk full while writing to the store {display(db)}; nothing was changed\n",
    )
    assert "***" in err and "mmrb-test" not in err  # the password stays out of the message
    with Store(db, images=images) as s:
        assert_nothing_written(s)


# -- 4. ingest: the rejects file ------------------------------------------------------------------
def test_a_full_disk_for_the_rejects_file_changes_nothing(db_url, disk, disks, tmp_path, monkeypatch, capsys):
    """With --skip-invalid the rejects file is written before the commit: a full disk there
    leaves the store as it was, where it used to commit the rows and then fail."""
    path = text_items(tmp_path / "in", 5, bad=2)
    images = tmp_path / "images"
    if disk == "tmpfs":
        folder = disks.mount("1m")
        disks.fill(folder)
    else:
        folder = tmp_path / "out"
        folder.mkdir()
        full_folder(monkeypatch, folder)
    rejects = folder / "rejects.jsonl"
    Store(db_url, images=images).close()
    rc, err = mmrb(ingest_argv(path, db_url, images, "--skip-invalid", str(rejects)), capsys)
    assert (rc, err) == (
        1,
        f"mmrb ingest: error: disk full while writing the rejects file {rejects}; nothing was changed\n",
    )
    assert sorted(p.name for p in folder.iterdir() if p.name != "filler") == []  # no .rejects-* file
    monkeypatch.undo()
    with Store(db_url, images=images) as s:
        assert_nothing_written(s)
    # with room, the same command keeps the valid rows and writes the rejects
    if disk == "tmpfs":
        disks.grow(folder)
    assert mmrb(ingest_argv(path, db_url, images, "--skip-invalid", str(rejects)), capsys)[0] == 0
    assert [json.loads(x)["line"] for x in rejects.read_text().splitlines()] == [6, 7]


# -- 5. build: the output folder's disk fills up -------------------------------------------------
def snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def beside(out: Path) -> list[str]:
    """What lies beside ``out`` but ``out`` (and a tmpfs's filler)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name not in (out.name, "filler"))


def assert_one_whole_build(out: Path) -> dict:
    manifest = json.loads((out / MANIFEST).read_text())
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {MANIFEST}
    assert files == set(manifest["files"])
    for rel, sha in manifest["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == sha, rel
    return manifest


def _failing_site(e: BaseException) -> str:
    """The innermost function of the project where the write failed."""
    tb, site = e.__traceback__, "?"
    while tb is not None:
        if "/curate/" in tb.tb_frame.f_code.co_filename:
            site = tb.tb_frame.f_code.co_name
        tb = tb.tb_next
    return site


def test_a_build_on_a_filling_disk_keeps_the_previous_build(store, disks, tmp_path, capsys):
    """The disk fills up at each point of the build in turn (images, JSONL, Parquet through
    pyarrow, the saved dataset, the card's plots and text, the manifest): each time one line,
    the previous build untouched and no temporary folder left."""
    seed_store(store)
    where = disks.mount("1m")
    out = where / "bench"
    build(store, RULES, out)
    before = snapshot(out)
    sites = set()
    for leave in (0, 4, 8, 16, 24, 32, 48, 64, 96, 128, 144, 152, 160, 168, 176, 256):
        disks.fill(where, leave << 10)
        try:
            build(store, RULES, out)
        except DiskFullError as e:
            assert str(e) == (
                f"disk full while writing the build {out}; nothing was changed (the previous build in {out} is kept)"
            )
            assert e.__cause__ is not None and is_disk_full(e.__cause__)
            sites.add(_failing_site(e.__cause__))
        assert snapshot(out) == before and beside(out) == [], leave
    assert len(sites) >= 4, sites  # the disk filled up at several different writes
    # the command line says it in one line
    disks.fill(where)
    argv = ["build", "--db", store.db, "--images", str(store.images.root), "--rules", str(_rules_file(tmp_path))]
    rc, err = mmrb([*argv, "--out", str(out)], capsys)
    assert (rc, err) == (
        1,
        f"mmrb build: error: disk full while writing the build {out}; nothing was changed "
        f"(the previous build in {out} is kept)\n",
    )
    assert snapshot(out) == before and beside(out) == []
    # a first build: nothing to keep, and nothing is left
    rc, err = mmrb([*argv, "--out", str(where / "first")], capsys)
    assert (rc, err) == (
        1,
        f"mmrb build: error: disk full while writing the build {where / 'first'}; nothing was changed\n",
    )
    assert sorted(p.name for p in where.iterdir()) == ["bench", "filler"]


def _rules_file(tmp_path: Path) -> Path:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        "[filter]\nmin_labels = 3\n[filter.agreement]\npreference = { majority = 0.66 }\n[export]\nresamples = 200\n"
    )
    return rules


def _half_written(name: str, error: OSError) -> Callable:
    """In place of an export: half of its file written, then ``error``."""

    def write(out, *args, **kwargs):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(b"half of it")
        raise error

    return write


SITES = ("images", "jsonl", "mmrb2", "parquet (pyarrow)", "card", "manifest", "old folder")


@pytest.mark.parametrize(
    "site, previous",
    # a first build moves no previous build aside
    [(site, True) for site in SITES] + [(site, False) for site in SITES if site != "old folder"],
    ids=lambda v: {True: "previous build", False: "first build"}.get(v, v) if isinstance(v, bool) else v,
)
def test_a_build_meeting_a_full_disk_at_each_write_keeps_the_previous_build(
    store, tmp_path, monkeypatch, site, previous
):
    seed_store(store)
    out = tmp_path / "builds" / "bench"
    if previous:
        build(store, RULES, out)
    before = snapshot(out) if previous else None
    if site == "images":
        monkeypatch.setattr(export, "copy_images", _half_written("images/x.png", enospc()))
    elif site == "jsonl":
        monkeypatch.setattr(export, "write_jsonl", _half_written("triplets.jsonl", enospc()))
    elif site == "mmrb2":
        monkeypatch.setattr(export, "write_mmrb2", _half_written("mmrb2/t2i.json", enospc()))
    elif site == "parquet (pyarrow)":
        monkeypatch.setattr(export, "write_hf", _half_written(export.PARQUET, pyarrow_enospc()))
    elif site == "card":
        monkeypatch.setattr(build_mod, "write_card", _half_written("README.md", enospc()))
    elif site == "manifest":
        real_write_text = Path.write_text

        def write_text(self, data, *args, **kwargs):
            if self.name == MANIFEST:
                real_write_text(self, data[:10], *args, **kwargs)
                raise enospc()
            return real_write_text(self, data, *args, **kwargs)

        monkeypatch.setattr(Path, "write_text", write_text)
    else:  # the folder the previous build is moved to while the new one comes in
        real_held = build_mod._held_tmp

        def held_tmp(out, kind):
            if kind == "old":
                raise enospc()
            return real_held(out, kind)

        monkeypatch.setattr(build_mod, "_held_tmp", held_tmp)
    kept = f" (the previous build in {out} is kept)" if previous else ""
    with pytest.raises(DiskFullError) as e:
        build(store, RULES, out)
    assert str(e.value) == f"disk full while writing the build {out}; nothing was changed{kept}"
    if previous:
        assert snapshot(out) == before
    else:
        assert not out.exists()
    assert beside(out) == []
    monkeypatch.undo()
    build(store, RULES, out)  # with room again
    assert_one_whole_build(out)


def test_any_other_failure_of_a_build_is_not_called_a_full_disk(sqlite_store, tmp_path, monkeypatch):
    seed_store(sqlite_store)
    out = tmp_path / "builds" / "bench"
    monkeypatch.setattr(export, "write_jsonl", _half_written("triplets.jsonl", OSError(errno.EIO, "I/O error")))
    with pytest.raises(OSError, match="I/O error"):
        build(sqlite_store, RULES, out)
    assert beside(out) == [] and not out.exists()


# -- 6. builds into one folder at once ---------------------------------------------------------
def _swapper(out: str, rounds: int, n: int, start, failures) -> None:
    """The issue's loop: a folder made as a build makes it, then swapped in by _replace_dir."""
    start.wait()
    bad = 0
    for r in range(rounds):
        tmp, hold = build_mod._held_tmp(Path(out), "tmp")
        try:
            files = {f"f{k}.txt": f"{n}-{r}-{k}" for k in range(5)}
            for name, text in files.items():
                (tmp / name).write_text(text)
            hashes = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in files.items()}
            (tmp / MANIFEST).write_text(json.dumps({"files": hashes}))
            build_mod._replace_dir(tmp, Path(out))
        except Exception:
            bad += 1
            shutil.rmtree(tmp, ignore_errors=True)
        finally:
            os.close(hold)
    failures.put(bad)


@pytest.mark.slow
def test_replace_dir_from_many_processes_at_once_never_fails_nor_leaves_a_folder(tmp_path):
    """Before: 4 processes x 300 rounds gave about 10 failures and left `.out.old-*` folders."""
    out = tmp_path / "out"
    procs, rounds = 4, 300
    start, failures = FORK.Barrier(procs), FORK.Queue()
    children = [
        FORK.Process(target=_swapper, args=(str(out), rounds, n, start, failures), daemon=True) for n in range(procs)
    ]
    for c in children:
        c.start()
    bad = [failures.get(timeout=300) for _ in children]
    for c in children:
        c.join(60)
        assert c.exitcode == 0
    assert bad == [0] * procs
    assert beside(out) == []  # no .out.old-*, no .out.tmp-*, no lock file
    assert_one_whole_build(out)


def _builder(db: str, images: str, out: str, rounds: int, start, failures) -> None:
    start.wait()
    bad = []
    with Store(db, images=images) as store:
        for _ in range(rounds):
            try:
                build(store, RULES, out)
            except Exception as e:
                bad.append(f"{e.__class__.__name__}: {e}")
    failures.put(bad)


@pytest.mark.slow
def test_builds_into_one_folder_at_once_all_succeed_and_leave_one_whole_build(store, tmp_path):
    seed_store(store)
    reference = tmp_path / "reference"
    build(store, RULES, reference)
    out = tmp_path / "builds" / "bench"
    procs, rounds = 4, 4
    start, failures = FORK.Barrier(procs), FORK.Queue()
    args = (store.db, str(store.images.root), str(out), rounds, start, failures)
    store.engine.dispose()  # no connection shared with the children
    children = [FORK.Process(target=_builder, args=args, daemon=True) for _ in range(procs)]
    for c in children:
        c.start()
    bad = [failures.get(timeout=600) for _ in children]
    for c in children:
        c.join(60)
    assert bad == [[]] * procs
    assert beside(out) == []
    assert_one_whole_build(out)
    assert snapshot(out) == snapshot(reference)  # the same inputs: the same bytes


def _swap_one(out: str, go, done) -> None:
    go.wait()
    tmp, hold = build_mod._held_tmp(Path(out), "tmp")
    (tmp / MANIFEST).write_text(json.dumps({"files": {}}))
    build_mod._replace_dir(tmp, Path(out))
    os.close(hold)
    done.set()


def _hold_forever(out: str, holding) -> None:
    with build_mod._out_lock(Path(out)):
        holding.set()
        while True:
            signal.pause()


def test_a_swap_waits_for_the_one_in_progress_and_a_dead_holder_blocks_nobody(tmp_path):
    out = tmp_path / "bench"
    out.mkdir()
    (out / MANIFEST).write_text(json.dumps({"files": {}}))
    (out / "mine.txt").write_text("first")
    go, done = FORK.Event(), FORK.Event()
    # forked before the lock is taken: a child forked while it is held would share it
    child = FORK.Process(target=_swap_one, args=(str(out), go, done), daemon=True)
    child.start()
    with build_mod._out_lock(out):
        go.set()
        assert not done.wait(1.0)  # it waits for the lock
        assert (out / "mine.txt").read_text() == "first"
    assert done.wait(60)
    child.join(60)
    assert not (out / "mine.txt").exists() and beside(out) == []
    # a holder killed while it held the lock leaves the file; its lock ended with it
    holding = FORK.Event()
    holder = FORK.Process(target=_hold_forever, args=(str(out), holding), daemon=True)
    holder.start()
    assert holding.wait(60)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join()
    assert beside(out) == [".bench.lock"]
    go.set()
    done.clear()
    _swap_one(str(out), go, done)
    assert done.is_set() and beside(out) == []


def test_a_killed_builds_lock_file_does_not_stop_the_command(sqlite_store, tmp_path, capsys):
    seed_store(sqlite_store)
    out = tmp_path / "builds" / "bench"
    out.parent.mkdir()
    (out.parent / ".bench.lock").write_text("")  # as a build killed while swapping leaves it
    build(sqlite_store, RULES, out)
    assert beside(out) == [] and assert_one_whole_build(out)
