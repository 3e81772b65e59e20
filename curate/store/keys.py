"""The ids an import has taken so far, for finding ids repeated anywhere in its file.

Each id a row takes is registered under a key (its kind and skeleton, so ids that look alike
share a key; curate/lookalike.py) with the row's line, a digest of what it named and the id
itself. The newest keys are held in a dict; past a bound they move to a private temporary
SQLite database, not the store: the check is about the file alone, so it needs no store
transaction (curate/ingest/rows.py). Memory stays flat: the dict is bounded, SQLite keeps a
bounded page cache and spills the rest to its temporary file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple


class SeenKey(NamedTuple):
    """Where an id was first seen in this import, a digest of what it named, and the id
    itself: one key stands for every id that looks like it, and the id tells a repeat from
    a look-alike. (A named tuple: an import makes one per id.)"""

    line: int
    content: bytes | None
    ident: str


KeyEntry = tuple[str, int, bytes | None, str]  # key, line, content digest, id

# Keys held in memory (about 400 bytes each with their ids: some 100 MB) before they move to
# SQLite. A key in a dict costs a tenth of a microsecond; in SQLite's B-tree 2-4
# microseconds: an import of up to 62,500 pairs (4 keys each) never touches SQLite
MEMORY_KEYS = 250_000
# Past this cache the tables spill to their file: 64 or 96 MB gained 2-4% at 500,000 pairs.
# Pages of 16 KB took a tenth off the inserts against the default 4 KB
_CACHE_KIB = 32768
_PAGE_SIZE = 16384
_CHUNK = 500  # keys a lookup statement names
# The keys moved to SQLite are also marked in a Bloom filter of this many bits (32 MB), so a
# key that is new (nearly all of them) is known to be new without a lookup: with 2 million
# keys moved, one new key in a million still needs one, with 20 million one in 230
_FILTER_BITS = 1 << 28


class KeyRegistry:
    """The keys of one import (see the module's docstring)."""

    def __init__(self, memory_keys: int | None = None) -> None:
        self._recent: dict[str, tuple[int, bytes | None, str]] = {}
        self._limit = memory_keys or MEMORY_KEYS
        self._db: sqlite3.Connection | None = None  # opened when the dict first fills
        self._runs = 0  # tables of keys moved to SQLite
        self._filter: Any = None  # the Bloom filter's bits (see _FILTER_BITS)

    def claim(self, entries: Sequence[KeyEntry]) -> bool:
        """Register these keys (different from each other) if none of them was registered
        before, the usual case. When one was, nothing is registered and the answer is False:
        the caller asks ``seen`` and ``register``s what it then accepts."""
        keys = [e[0] for e in entries]
        if not self._recent.keys().isdisjoint(keys) or self._moved(keys, "key"):
            return False
        self.register(entries)
        return True

    def seen(self, keys: Iterable[str]) -> dict[str, SeenKey]:
        """The keys registered before, of these."""
        recent = self._recent
        out: dict[str, SeenKey] = {}
        older = []
        for k in set(keys):
            if (v := recent.get(k)) is not None:
                out[k] = SeenKey(*v)
            else:
                older.append(k)
        for key, line, content, ident in self._moved(older, "key, line, content, ident"):
            out[key] = SeenKey(line, content, ident)
        return out

    def register(self, entries: Sequence[KeyEntry]) -> None:
        """Register these keys, none of them registered before."""
        self._recent.update({k: (line, content, ident) for k, line, content, ident in entries})
        if len(self._recent) >= self._limit:
            self._move()

    def close(self) -> None:
        self._recent = {}
        if self._db is not None:
            self._db.close()

    def _moved(self, keys: Sequence[str], columns: str) -> list[tuple]:
        """Rows of the keys moved to SQLite, of these."""
        if self._db is None or not keys:
            return []
        wanted = [k for k, maybe in zip(keys, self._in_filter(keys), strict=True) if maybe]
        out = []
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for run in range(self._runs):
                out += self._db.execute(f"SELECT {columns} FROM run{run} WHERE key IN ({marks})", chunk).fetchall()
        return out

    def _move(self) -> None:
        """The keys in memory, moved to SQLite: a table of their own, indexed once filled
        (SQLite sorts them in C; one table of every key moved took 2-4 microseconds an
        insert)."""
        if self._db is None:
            # "": a private database on disk, deleted when it is closed
            self._db = sqlite3.connect("", isolation_level=None)
            for pragma in (f"page_size = {_PAGE_SIZE}", f"cache_size = -{_CACHE_KIB}", "journal_mode = OFF"):
                self._db.execute(f"PRAGMA {pragma}")
            self._db.execute("PRAGMA synchronous = OFF")
            self._db.execute("BEGIN")  # never committed: nothing of it outlives the import
            self._filter = _numpy().zeros(_FILTER_BITS // 8, dtype="uint8")
        recent, self._recent = self._recent, {}
        table = f"run{self._runs}"
        self._db.execute(f"CREATE TABLE {table} (key TEXT, line INTEGER, content BLOB, ident TEXT)")
        self._db.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?)", [(k, *v) for k, v in recent.items()])
        self._db.execute(f"CREATE INDEX {table}_key ON {table} (key)")
        self._runs += 1
        np = _numpy()
        byte, bit = self._probes(list(recent))
        np.bitwise_or.at(self._filter, byte, np.left_shift(1, bit, dtype=np.uint8))

    def _in_filter(self, keys: Sequence[str]) -> list[bool]:
        """For each key, whether it may have moved to SQLite (False: it has not)."""
        byte, bit = self._probes(keys)
        return ((self._filter[byte] >> bit) & 1).all(axis=1).tolist()

    def _probes(self, keys: Sequence[str]) -> tuple[Any, Any]:
        """The filter's four bits of each key, one row a key, as (byte, bit in it): from the
        key's hash (Python's, the same for a text all through this process), h1 + i * h2."""
        np = _numpy()
        h = np.array([hash(k) for k in keys], dtype=np.int64).view(np.uint64)
        h1, h2 = h & np.uint64(0xFFFFFFFF), (h >> np.uint64(32)) | np.uint64(1)
        slots = (h1[:, None] + h2[:, None] * np.arange(4, dtype=np.uint64)) & np.uint64(_FILTER_BITS - 1)
        return slots >> np.uint64(3), (slots & np.uint64(7)).astype(np.uint8)


def _numpy() -> Any:
    """numpy, imported once keys move, not with this module: its thread pools would keep
    curate/ingest/rows.py from forking."""
    import numpy

    return numpy
