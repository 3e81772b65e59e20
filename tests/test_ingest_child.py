"""A large file's rows are checked in a child process while the importer writes
(curate/ingest/rows.py): the same store as checking them in place, and a child that fails
or dies is an error with nothing written. (tests/test_ingest.py and test_faults_ingest.py
run every import both ways.)"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from curate.errors import InputError, MmrbError
from curate.ingest import ingest_pairs, rows
from curate.ingest.common import Context
from curate.ingest.importer import run_import
from curate.ingest.vlrewardbench import parse_text
from curate.model import DEFAULT_CATEGORIES, Label
from curate.store import Store
from tests.ingest_helpers import assert_nothing_written


def _pairs(path: Path, n: int, *, repeat_at: int | None = None) -> Path:
    lines = []
    for k in range(n):
        j = 0 if k == repeat_at else k  # row 1 again: the same pair
        lines.append(json.dumps({"id": f"p{j}", "prompt": f"q{j}", "chosen": f"good {j}", "rejected": f"bad {j}"}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _store_rows(store: Store) -> dict:
    return {
        "items": sorted((i.id, i.prompt, i.category) for i in store.items()),
        "pairs": sorted((p.id, p.first_id, p.second_id, p.known_preference) for p in store.pairs()),
    }


@pytest.fixture
def in_child(monkeypatch):
    monkeypatch.setattr(rows, "_child_worthwhile", lambda path: True)


def test_native_threads_count(tmp_path):
    """pyarrow's pools are threads Python does not list: they count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": list(range(1000))}), path)
    pq.read_table(path)
    assert rows._threads() > threading.active_count()  # its pool's threads are not Python's


def test_only_large_files_are_read_in_a_child(tmp_path, monkeypatch):
    small = _pairs(tmp_path / "small.jsonl", 3)
    assert not rows._child_worthwhile(small)
    monkeypatch.setattr(rows, "CHILD_MIN_BYTES", small.stat().st_size)
    monkeypatch.setattr(rows, "_threads", lambda: 1)  # earlier tests may leave daemon threads
    monkeypatch.setattr(rows, "_cores", lambda: 2)
    assert rows._child_worthwhile(small) == (sys.platform == "linux")
    monkeypatch.setattr(rows, "_cores", lambda: 1)
    assert not rows._child_worthwhile(small)  # nothing to overlap on one core
    assert not rows._child_worthwhile(tmp_path / "absent.jsonl")  # read_rows reports it


def test_no_child_while_other_threads_run(tmp_path, monkeypatch):
    """fork copies only the calling thread (a server's other threads would be gone)."""
    path = _pairs(tmp_path / "p.jsonl", 3)
    monkeypatch.setattr(rows, "CHILD_MIN_BYTES", 0)
    monkeypatch.setattr(rows, "_cores", lambda: 2)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not rows._child_worthwhile(path)
    finally:
        stop.set()
        other.join()
    assert rows._child_worthwhile(path) == (rows._threads() == 1)


def test_a_child_imports_what_checking_in_place_imports(tmp_path, db_url, in_child):
    path = _pairs(tmp_path / "p.jsonl", 2500)  # three batches
    pids: set[int] = set()

    def parse(f, ctx):
        pids.add(os.getpid())  # in the child's copy of this set: seen below through the rows
        return parse_text(f, ctx)

    here = Store(str(tmp_path / "here.db"), images=tmp_path / "img-here")
    ingest_pairs(here, path, format="vlrewardbench-text")
    child = Store(db_url, images=tmp_path / "img-child")
    report = run_import(child, path, parse, format="vlrewardbench-text", missing_images_ok=True)
    assert report.pairs == 2500 and report.rows == 2500
    assert pids == set()  # parse ran in another process: nothing was added here
    assert _store_rows(child) == _store_rows(here)
    here.close()
    child.close()


class Text(str):
    """A text of a type marshal does not take (as numpy's str_, which a reader may make)."""


def _batch(tmp_path: Path, store: Store, prompt=str) -> list[rows.Checked]:
    """A batch as the child makes it: two rows, one unreadable, one parsed (its prompt made
    by ``prompt``), and a row with a label."""
    path = tmp_path / "b.jsonl"
    path.write_text('{"broken\n' + json.dumps({"id": "p1", "prompt": "q", "chosen": "a", "rejected": "b"}) + "\n")

    def parse(f, ctx):
        f.data["prompt"] = prompt(f.data["prompt"])
        return parse_text(f, ctx)

    ctx = Context(store, path, categories=DEFAULT_CATEGORIES, missing_images_ok=True)
    (batch,) = rows._parsed_batches(path, None, parse, ctx, False)
    return [*batch, rows.Checked(3, [], [], [], [Label("p1", "rater", preference="first", source="import")])]


def test_a_batch_crosses_from_the_child_as_it_is(tmp_path, store):
    """Rows cross as plain values (marshal), their problems and labels beside them as a
    pickle; a value marshal does not take (a subclass of str, say) sends the whole batch as
    a pickle. The importer gets the batch as it was made, either way."""

    plain, odd = _batch(tmp_path, store), _batch(tmp_path, store, Text)
    staged = {"sha": "staged image"}
    assert rows._encode("rows", plain, staged)[:1] == b"M"
    assert rows._encode("rows", odd, staged)[:1] == b"P"
    for batch in (plain, odd):
        assert [c.problems for c in batch] == [[batch[0].problems[0]], [], []]
        assert rows._decode(rows._encode("rows", batch, staged)) == ("rows", batch, staged)


def test_a_value_marshal_does_not_take_is_imported_from_a_child(tmp_path, store, in_child):
    def parse(f, ctx):
        f.data["prompt"] = Text(f.data["prompt"])
        return parse_text(f, ctx)

    path = _pairs(tmp_path / "p.jsonl", 1500)
    report = run_import(store, path, parse, format="vlrewardbench-text", missing_images_ok=True)
    assert report.pairs == 1500
    assert sorted(i.prompt for i in store.items())[:2] == ["q0", "q1"]


def test_a_repeated_id_found_in_a_child_names_both_lines(tmp_path, store, in_child):
    path = _pairs(tmp_path / "p.jsonl", 1500, repeat_at=1200)  # the repeat in the second batch
    with pytest.raises(InputError) as e:
        ingest_pairs(store, path, format="vlrewardbench-text")
    assert {(p.line, p.field) for p in e.value.problems} == {(1201, "id")}  # its item, responses, pair
    assert all("(first at line 1)" in p.message for p in e.value.problems)
    assert_nothing_written(store)


def test_a_child_that_dies_is_an_error_and_nothing_is_written(tmp_path, store, in_child):
    path = _pairs(tmp_path / "p.jsonl", 2500)
    parent = os.getpid()

    def parse(f, ctx):
        if f.line == 1800 and os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return parse_text(f, ctx)

    with pytest.raises(MmrbError, match="the reading process ended early"):
        run_import(store, path, parse, format="vlrewardbench-text", missing_images_ok=True)
    assert_nothing_written(store)


def test_problems_of_the_whole_file_come_from_the_child_as_they_are(tmp_path, store, in_child):
    path = tmp_path / "p.json"
    path.write_text('{"not": "a list"}')
    with pytest.raises(InputError) as in_a_child:
        ingest_pairs(store, path, format="vlrewardbench-text")
    rows_in_place = pytest.MonkeyPatch()
    rows_in_place.setattr(rows, "_child_worthwhile", lambda path: False)
    try:
        with pytest.raises(InputError) as in_place:
            ingest_pairs(store, path, format="vlrewardbench-text")
    finally:
        rows_in_place.undo()
    assert in_a_child.value.problems == in_place.value.problems
    assert_nothing_written(store)


def test_a_bug_in_the_child_is_shown_with_its_traceback(tmp_path, store, in_child):
    path = _pairs(tmp_path / "p.jsonl", 10)

    def parse(f, ctx):
        raise ZeroDivisionError("a bug")

    with pytest.raises(RuntimeError, match=r"(?s)reading process.*ZeroDivisionError: a bug"):
        run_import(store, path, parse, format="vlrewardbench-text")
    assert_nothing_written(store)


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _running(pid: int) -> bool:
    """Alive and not a zombie (an ended process stays one until its new parent collects it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="the reading process runs on Linux only")
def test_the_reading_process_ends_when_the_importer_is_killed(tmp_path):
    """`mmrb ingest` killed (SIGKILL, no clean-up) while its reading process waits to hand
    over a batch: the reading process ends too instead of waiting forever."""
    import subprocess
    import time

    path = tmp_path / "p.jsonl"
    filler = "x" * 1500
    with open(path, "w") as f:  # past CHILD_MIN_BYTES
        for k in range(rows.CHILD_MIN_BYTES // 1500 + 2000):
            f.write(json.dumps({"id": f"p{k}", "prompt": "q", "chosen": f"{filler} {k}", "rejected": f"no {k}"}) + "\n")
    cmd = [sys.executable, "-m", "curate.cli", "ingest", "pairs", str(path), "--format", "vlrewardbench-text"]
    cmd += ["--db", str(tmp_path / "s.db"), "--images", str(tmp_path / "img")]
    main = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (child := _children(main.pid)) and main.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert child, "no reading process was started"
    main.kill()
    main.wait()
    deadline = time.monotonic() + 20
    while _running(child[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _running(child[0])
    if alive:
        os.kill(child[0], signal.SIGKILL)
    assert not alive, "the reading process outlived the importer"
