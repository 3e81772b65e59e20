"""The checked rows of an import: each row of the file read, its fields checked, parsed
into items, candidates, pairs and labels, and its ids checked against the rest of the file
(repeated, or looking like another id of it; curate/store/keys.py keeps the ids taken).

What is left to the importer (curate/ingest/importer.py) is the store: ids already in it,
and the writing. A large file is checked in a child process (forked, so the parser and the
context come as they are), which hands the rows over in batches through a pipe while the
parent writes the batch before: on two cores the checking and the writing overlap. (A
thread would not: the writer gives up the GIL on every row it inserts and waits for it
each time, measured slower than one thread.) The child runs about a batch ahead, so memory
stays flat; the rows come in file order either way. The ids are checked in the child too:
at 500,000 pairs that balanced the two processes best (48 s against 62 s in the parent).
"""

from __future__ import annotations

import fcntl
import os
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
from ..store import KeyEntry, KeyRegistry, SeenKey, dumps
from .common import MAX_ID, Context, ImportFields, ParsedRow

ParseFn = Callable[[ImportFields, Context], ParsedRow]
Entry = tuple[str, Any, bytes, bytes | None]  # kind, object, key of its id, content digest


class Checked(NamedTuple):
    """One row: its problems, or what it turns into with the ids it takes first in the file
    (``fresh``) and those it repeats with the same content (``repeats``: an item several
    rows carry, merged with the row that took it)."""

    line: int
    parsed: ParsedRow
    problems: list[InputProblem]
    fresh: list[Entry]
    repeats: list[Entry]


BATCH = 1000  # valid rows checked (and written) at once: memory holds about three batches
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
    if _child_worthwhile(path):
        yield from _from_child(path, json_key, parse, ctx, shared)
    else:
        yield from _checked_here(path, json_key, parse, ctx, shared)


def _checked_here(
    path: Path, json_key: str | None, parse: ParseFn, ctx: Context, shared: bool
) -> Iterator[list[Checked]]:
    registry = KeyRegistry()
    try:
        for batch in _parsed_batches(path, json_key, parse, ctx, shared):
            yield _take_ids(registry, batch, shared, ctx.name)
    finally:
        registry.close()


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
    for checked in _check_rows(path, json_key, parse, ctx, shared):
        batch.append(checked)
        valid += not checked.problems
        if valid >= BATCH:
            yield batch
            batch, valid = [], 0
    yield batch


def _check_rows(path: Path, json_key: str | None, parse: ParseFn, ctx: Context, shared: bool) -> Iterator[Checked]:
    """Each row with its own problems, or parsed with the ids it would take."""
    for row in read_rows(path, json_key):
        if row.data is None:
            problem = InputProblem(str(path), row.line, None, row.error or "unreadable row")
            yield Checked(row.line, ParsedRow(), [problem], [], [])
            continue
        f = ImportFields(ctx, row.line, row.data)
        if not row.plain:
            for name, message in text_problems(row.data):
                f.bad(name, message)
        parsed = parse(f, ctx) if not f.problems else ParsedRow()
        if not f.problems:
            _check_lengths(f, parsed)
        yield Checked(row.line, parsed, f.problems, [] if f.problems else keys(parsed, shared), [])


def _take_ids(registry: KeyRegistry, batch: list[Checked], shared: bool, name: str) -> list[Checked]:
    """The batch with the ids its valid rows take checked against the file so far: a row
    whose id was taken, or looks like one taken, gets that problem."""
    valid = [c for c in batch if not c.problems]
    taken = [(k, c.line, content, o.id) for c in valid for _, o, k, content in c.fresh]
    # Usually no key of the batch was taken before: checked within the batch, then its keys
    # registered in one statement, which refuses them all if one was taken after all
    if len({t[0] for t in taken}) == len(taken) and registry.claim(taken):
        return batch
    earlier = registry.seen(k for c in valid for _, _, k, _ in c.fresh)
    here: dict[bytes, SeenKey] = {}
    out: list[Checked] = []
    accepted: list[KeyEntry] = []
    for c in batch:
        if c.problems:
            out.append(c)
            continue
        pending: dict[bytes, SeenKey] = {}
        fresh, repeats, problems = [], [], []
        for kind, obj, k, content in c.fresh:
            prev = pending.get(k) or here.get(k) or earlier.get(k)
            if prev is None:
                pending[k] = SeenKey(c.line, content, obj.id)
                fresh.append((kind, obj, k, content))
                continue
            if prev.ident != obj.id:
                why = f"{kind} id {obj.id!r} looks like {kind} id {prev.ident!r} at line {prev.line}"
            elif shared and kind != "pair" and prev.content == content:
                repeats.append((kind, obj, k, content))  # merged with the row that took it
                continue
            elif shared and kind != "pair":
                why = f"{kind} {obj.id!r} also at line {prev.line} with different content"
            else:
                why = f"duplicate {kind} id {obj.id!r} (first at line {prev.line})"
            problems.append(InputProblem(name, c.line, "id", why))
        if problems:
            out.append(Checked(c.line, c.parsed, problems, [], []))
            continue
        here.update(pending)
        accepted += [(k, p.line, p.content, p.ident) for k, p in pending.items()]
        out.append(Checked(c.line, c.parsed, [], fresh, repeats))
    registry.register(accepted)
    return out


def keys(parsed: ParsedRow, shared: bool) -> list[Entry]:
    """(kind, object, key of its id's skeleton, content digest) of each id a row takes: the
    same key for ids that look alike (curate/lookalike.py); the content only where several
    rows may carry the same item."""
    out = []
    for kind, prefix, objs in (
        ("item", b"item\0", parsed.items),
        ("candidate", b"candidate\0", parsed.candidates),
        ("pair", b"pair\0", parsed.pairs),
    ):
        digest = shared and kind != "pair"
        for o in objs:
            key = blake2b(prefix + skeleton(o.id).encode("utf-8", "surrogatepass"), digest_size=16).digest()
            out.append((kind, o, key, content_digest(o) if digest else None))
    return out


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
                kind, payload, staged = receive.recv()
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
            send.send((kind, payload, staged))  # waits while the parent has the batch before to write
        except OSError:  # the parent is gone (killed): nobody to tell, nothing to keep
            os._exit(1)

    try:
        for batch in _checked_here(path, json_key, parse, ctx, shared):
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
