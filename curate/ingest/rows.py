"""The checked rows of an import: each row of the file read, its fields checked, parsed
into items, candidates, pairs and labels and turned into the store's rows, and its ids
checked against the rest of the file (repeated, or looking like another id of it).

What is left to the importer (curate/ingest/importer.py) is the store: ids already in it,
and the writing. The rows come in batches, in file order; memory holds a few batches and
the ids taken so far, in a dict (some 330 bytes an id: at 200,000 pairs, four ids each,
about 260 MB).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict
from hashlib import blake2b
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InputProblem
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
    a look-alike. (A named tuple: an import makes one per id.)"""

    line: int
    content: bytes | None
    ident: str


# Valid rows checked (and written) at once. On PostgreSQL, 2,000 took 5% off an import of
# 50,000 pairs against 1,000 (fewer statements); no change on SQLite
BATCH = 2000


def checked_batches(
    path: Path, json_key: str | None, parse: ParseFn, ctx: Context, shared: bool
) -> Iterator[list[Checked]]:
    """Every row of ``path`` in file order, checked (see the module's docstring), in batches
    of up to BATCH valid rows. Images the rows name are staged in ``ctx.staged`` by the time
    their batch comes."""
    taken: dict[str, SeenKey] = {}  # key (see ``key``) -> where its id was first seen
    for batch in _parsed_batches(path, json_key, parse, ctx, shared):
        yield _take_ids(taken, batch, shared, ctx.name)


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


def _take_ids(taken: dict[str, SeenKey], batch: list[Checked], shared: bool, name: str) -> list[Checked]:
    """The batch with the ids its valid rows take checked against the file so far (``taken``,
    which gets the ids of the rows accepted): a row whose id was taken, or looks like one
    taken, gets that problem."""
    out: list[Checked] = []
    for c in batch:
        if c.problems:  # a row with problems has no entry
            out.append(c)
            continue
        pending: dict[str, SeenKey] = {}
        fresh, repeats, problems = [], [], []
        for e in c.fresh:
            kind, ident, content, _, _ = e
            k = key(kind, ident)
            prev = pending.get(k) or taken.get(k)
            if prev is None:
                pending[k] = SeenKey(c.line, content, ident)
                fresh.append(e)
                continue
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


def key(kind: str, ident: str) -> str:
    """The key of an id: its kind and skeleton, the same for ids that look alike
    (curate/lookalike.py)."""
    return f"{kind}\0{skeleton(ident)}"


def content_digest(obj: Any) -> bytes:
    return blake2b(dumps(asdict(obj)).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _check_lengths(f: ImportFields, parsed: ParsedRow) -> None:
    for kind, objs in (("item", parsed.items), ("candidate", parsed.candidates), ("pair", parsed.pairs)):
        for o in objs:
            if len(o.id) > MAX_ID:
                f.bad("id", f"{kind} id is {len(o.id)} characters, the store keeps up to {MAX_ID}: {o.id[:60]}...")
                return
