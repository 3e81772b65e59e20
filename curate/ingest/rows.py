"""The checked rows of an import: each row of the file read, its fields checked, parsed
into items, candidates, pairs and labels and turned into the store's rows, and its ids
checked against the rest of the file (repeated, or looking like another id of it; the ids
taken are kept in a dict, compactly: see ``Taken``).

What is left to the importer (curate/ingest/importer.py) is the store: ids already in it,
and the writing. A large file is read in a child process (forked, so the parser and the
context come as they are), which reads, checks and parses the rows, builds their store
rows and hands them over in batches through a pipe, as plain values, while the parent
checks the ids of a batch against the file and writes the batch before: on two cores the
reading and the writing overlap. (A thread would not: the writer gives up the GIL on every
row it inserts and waits for it each time, measured slower than one thread.) Measured on a
quiet machine at 50,000 pairs, the child takes about a third off the import's wall time on
both backends (bench/store.py; the CPU time is the same). The child runs about a batch
ahead, so memory stays flat; the rows come in file order either way.
"""

from __future__ import annotations

import fcntl
import marshal
import os
import pickle
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict
from hashlib import blake2b
from multiprocessing import get_context
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InputError, InputProblem, MmrbError
from ..formats.fields import text_problems
from ..formats.reader import read_rows
from ..lookalike import skeleton
from ..model import Label
from ..store import candidate_rows, dumps, item_rows, now, pair_row
from .common import MAX_ID, Context, ImportFields, ParsedRow

ParseFn = Callable[[ImportFields, Context], ParsedRow]
# What a row writes, one entry an id it takes: (kind, id, content digest, its store rows, its
# images as (sha256, status, source))
Entry = tuple[str, str, bytes | None, Any, tuple[tuple[str | None, str, str], ...]]


class Checked(NamedTuple):
    """One row: its problems, or what it writes, as the ids it takes first in the file
    (``fresh``), those it repeats with the same content (``repeats``: an item several rows
    carry, merged with the row that took it), and its labels."""

    line: int
    problems: list[InputProblem]
    fresh: list[Entry]
    repeats: list[Entry]
    labels: list[Label]


class SeenKey(NamedTuple):
    """Where an id was first seen in this import, a digest of what it named, and the id
    itself: one key stands for every id that looks like it, and the id tells a repeat from
    a look-alike."""

    line: int
    content: bytes | None
    ident: str


# The ids taken so far: the digest of an id's key (``key``) -> where it was first seen, as
# "LINE\tID" when it names no content (every id but a shared item's), else a SeenKey. One
# string a value and a 16-byte key: at 200,000 pairs (800,000 ids of some 60 characters)
# the dict holds about 160 MB where str keys and SeenKey values held 280 (the import's peak
# there, bench/store.py: 538 MB before, 398 MB now, below the bound of 450 MB)
Taken = dict[bytes, "str | SeenKey"]


def _seen(line: int, content: bytes | None, ident: str) -> str | SeenKey:
    return f"{line}\t{ident}" if content is None else SeenKey(line, content, ident)


def _unpacked(v: str | SeenKey) -> SeenKey:
    if isinstance(v, SeenKey):
        return v
    line, _, ident = v.partition("\t")
    return SeenKey(int(line), None, ident)


# Valid rows checked (and written) at once. On PostgreSQL, 2,000 took 5% off an import of
# 50,000 pairs against 1,000 (fewer statements); no change on SQLite
BATCH = 2000
# Files smaller than this (a few thousand pairs) are read in the importing process: they
# take a second or less either way
CHILD_MIN_BYTES = 8 << 20
_PIPE_BYTES = 1 << 20  # Linux's limit for unprivileged processes (/proc/sys/fs/pipe-max-size)


def checked_batches(
    path: Path, json_key: str | None, parse: ParseFn, ctx: Context, shared: bool
) -> Iterator[list[Checked]]:
    """Every row of ``path`` in file order, checked (see the module's docstring), in batches
    of up to BATCH valid rows. Images the rows name are staged in ``ctx.staged`` by the time
    their batch comes."""
    read = _from_child if _child_worthwhile(path) else _parsed_batches
    taken: Taken = {}
    for batch in read(path, json_key, parse, ctx, shared):
        yield _take_ids(taken, batch, shared, ctx.name)


def _child_worthwhile(path: Path) -> bool:
    try:
        big = path.stat().st_size >= CHILD_MIN_BYTES
    except OSError:
        return False  # read_rows reports it
    # Linux only (fork is unsafe with macOS's system libraries, absent on Windows), with a
    # second core to run on, and no other thread: fork copies only the calling one
    return big and sys.platform == "linux" and _cores() > 1 and _threads() == 1


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _threads() -> int:
    """This process's threads, those of native libraries too (pyarrow's pools, say, which a
    forked copy can deadlock in): Python's own count does not see them."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count() + 1  # cannot tell: as if another ran


def _parsed_batches(
    path: Path, json_key: str | None, parse: ParseFn, ctx: Context, shared: bool
) -> Iterator[list[Checked]]:
    """The rows, each with its own problems or parsed, in batches of BATCH valid rows."""
    batch: list[Checked] = []
    valid = 0
    for checked in _check_rows(path, json_key, parse, ctx, shared, now()):
        batch.append(checked)
        valid += not checked.problems
        if valid >= BATCH:
            yield batch
            batch, valid = [], 0
    yield batch


def _check_rows(
    path: Path, json_key: str | None, parse: ParseFn, ctx: Context, shared: bool, ts: str
) -> Iterator[Checked]:
    """Each row with its own problems, or with what it writes (``ts``: its rows' time)."""
    for row in read_rows(path, json_key):
        if row.data is None:
            problem = InputProblem(str(path), row.line, None, row.error or "unreadable row")
            yield Checked(row.line, [problem], [], [], [])
            continue
        f = ImportFields(ctx, row.line, row.data)
        if not row.plain:
            for name, message in text_problems(row.data):
                f.bad(name, message)
        parsed = parse(f, ctx) if not f.problems else ParsedRow()
        if not f.problems:
            _check_lengths(f, parsed)
        if f.problems:
            yield Checked(row.line, f.problems, [], [], [])
        else:
            yield Checked(row.line, [], entries(parsed, shared, ts), [], parsed.labels)


def _take_ids(taken: Taken, batch: list[Checked], shared: bool, name: str) -> list[Checked]:
    """The batch with the ids its valid rows take checked against the file so far (``taken``,
    which gets the ids of the rows accepted): a row whose id was taken, or looks like one
    taken, gets that problem."""
    out: list[Checked] = []
    for c in batch:
        if c.problems:  # a row with problems has no entry
            out.append(c)
            continue
        pending: Taken = {}
        fresh, repeats, problems = [], [], []
        for e in c.fresh:
            kind, ident, content, _, _ = e
            k = key(kind, ident)
            got = pending.get(k) or taken.get(k)
            if got is None:
                pending[k] = _seen(c.line, content, ident)
                fresh.append(e)
                continue
            prev = _unpacked(got)
            if prev.ident != ident:
                why = f"{kind} id {ident!r} looks like {kind} id {prev.ident!r} at line {prev.line}"
            elif shared and kind != "pair" and prev.content == content:
                repeats.append(e)  # merged with the row that took it
                continue
            elif shared and kind != "pair":
                why = f"{kind} {ident!r} also at line {prev.line} with different content"
            else:
                why = f"duplicate {kind} id {ident!r} (first at line {prev.line})"
            problems.append(InputProblem(name, c.line, "id", why))
        if problems:
            out.append(Checked(c.line, problems, [], [], []))
            continue
        taken.update(pending)
        out.append(Checked(c.line, [], fresh, repeats, c.labels))
    return out


def entries(parsed: ParsedRow, shared: bool, ts: str) -> list[Entry]:
    """What a row writes (``Entry``), an entry per id it takes; the content digest is there
    only where several rows may carry the same item."""
    out: list[Entry] = []
    for i in parsed.items:
        images = tuple((r.sha256, r.status, r.source) for r in i.images)
        digest = content_digest(i) if shared else None
        out.append(("item", i.id, digest, item_rows(i, ts), images))
    for c in parsed.candidates:
        images = tuple((r.sha256, r.status, r.source) for r in c.images) if c.content else ()
        digest = content_digest(c) if shared else None
        out.append(("candidate", c.id, digest, candidate_rows(c, ts), images))
    for p in parsed.pairs:
        out.append(("pair", p.id, None, pair_row(p, ts), ()))
    return out


def key(kind: str, ident: str) -> bytes:
    """The key of an id: a digest of its kind and skeleton, the same for ids that look alike
    (curate/lookalike.py)."""
    return blake2b(f"{kind}\0{skeleton(ident)}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


def content_digest(obj: Any) -> bytes:
    return blake2b(dumps(asdict(obj)).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _check_lengths(f: ImportFields, parsed: ParsedRow) -> None:
    for kind, objs in (("item", parsed.items), ("candidate", parsed.candidates), ("pair", parsed.pairs)):
        for o in objs:
            if len(o.id) > MAX_ID:
                f.bad("id", f"{kind} id is {len(o.id)} characters, the store keeps up to {MAX_ID}: {o.id[:60]}...")
                return


# -- the child ----------------------------------------------------------------------------
def _from_child(
    path: Path, json_key: str | None, parse: ParseFn, ctx: Context, shared: bool
) -> Iterator[list[Checked]]:
    mp = get_context("fork")
    receive, send = mp.Pipe(duplex=False)
    _widen(send)
    child = mp.Process(target=_child, args=(receive, send, path, json_key, parse, ctx, shared), daemon=True)
    child.start()
    send.close()  # the child's end: reading gets EOFError if the child dies
    try:
        while True:
            try:
                kind, payload, staged = _decode(receive.recv_bytes())
            except EOFError:
                child.join()
                raise MmrbError(f"{ctx.name}: the reading process ended early (exit code {child.exitcode})") from None
            ctx.staged.update(staged)
            if kind == "rows":
                yield payload
            elif kind == "done":
                break
            elif kind == "input":
                raise InputError(payload)
            elif kind == "error":
                raise MmrbError(payload)
            else:
                raise RuntimeError(f"reading {ctx.name} failed in the reading process:\n{payload}")
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join()


def _widen(conn: Connection) -> None:
    """A pipe that holds about a batch (64 KB by default): the child hands a batch over and
    goes on reading while the parent is still writing the one before."""
    try:
        fcntl.fcntl(conn.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (OSError, AttributeError):  # larger than the system allows: the default size
        pass


def _child(
    receive: Connection, send: Connection, path: Path, json_key: str | None, parse: ParseFn, ctx: Context, shared: bool
) -> None:
    receive.close()  # the parent's end: if the parent dies, sending fails instead of waiting forever

    def hand_over(kind: str, payload: Any) -> None:
        staged, ctx.staged = ctx.staged, {}
        try:
            send.send_bytes(_encode(kind, payload, staged))  # waits while the parent writes the batch before
        except OSError:  # the parent is gone (killed): nobody to tell, nothing to keep
            os._exit(1)

    try:
        for batch in _parsed_batches(path, json_key, parse, ctx, shared):
            hand_over("rows", batch)
        hand_over("done", None)
    except InputError as e:
        hand_over("input", e.problems)
    except MmrbError as e:
        hand_over("error", str(e))
    except BaseException:  # a bug: shown to the parent as it is
        hand_over("bug", traceback.format_exc())
    finally:
        send.close()


# A batch of rows crosses as plain values in marshal's format (at 1,000 rows, 3.5 ms to write
# and 1.5 to read, against 12 and 9 for a pickle of the parsed objects); what is rare
# (problems, labels, staged images) as a pickle beside it, and so is every other message
def _encode(kind: str, payload: Any, staged: dict) -> bytes:
    if kind == "rows":
        plain = [(c.line, c.fresh, c.repeats) for c in payload]
        rare = {n: (c.problems, c.labels) for n, c in enumerate(payload) if c.problems or c.labels}
        try:
            return b"M" + marshal.dumps((plain, pickle.dumps((rare, staged)) if rare or staged else b""))
        except ValueError:  # a value marshal does not know (a type a reader made): as a pickle
            pass
    return b"P" + pickle.dumps((kind, payload, staged), protocol=pickle.HIGHEST_PROTOCOL)


def _decode(data: bytes) -> tuple[str, Any, dict]:
    if data[:1] == b"P":
        return pickle.loads(memoryview(data)[1:])
    plain, extra = marshal.loads(memoryview(data)[1:])
    rare, staged = pickle.loads(extra) if extra else ({}, {})
    batch = []
    for n, (line, fresh, repeats) in enumerate(plain):
        problems, labels = rare.get(n, ([], []))
        batch.append(Checked(line, problems, fresh, repeats, labels))
    return "rows", batch, staged
