"""The ids an import has taken so far, for finding ids repeated anywhere in its file.

Each id a row takes is registered as a 16-byte key (a digest of its skeleton, so ids that
look alike share a key; curate/lookalike.py) with the row's line, a digest of what it named
and the id itself. They live in a private temporary SQLite database, not in the store: the
check is about the file alone, so it needs no store transaction and can run in the process
that reads the file (curate/ingest/rows.py), on either backend. Memory stays flat: SQLite
keeps a bounded page cache and spills the rest to its temporary file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import NamedTuple


class SeenKey(NamedTuple):
    """Where an id was first seen in this import, a digest of what it named, and the id
    itself: one key stands for every id that looks like it, and the id tells a repeat from
    a look-alike. (A named tuple: an import makes one per id.)"""

    line: int
    content: bytes | None
    ident: str


KeyEntry = tuple[bytes, int, bytes | None, str]  # key, line, content digest, id

# Past this cache the table spills to its file: 64 or 96 MB gained 2-4% at 500,000 pairs.
# Pages of 16 KB took a tenth off the inserts against the default 4 KB
_CACHE_KIB = 32768
_PAGE_SIZE = 16384


class KeyRegistry:
    """The keys of one import (see the module's docstring)."""

    def __init__(self) -> None:
        # "": a private database on disk, deleted when it is closed
        self._db = sqlite3.connect("", isolation_level=None)
        for pragma in (f"page_size = {_PAGE_SIZE}", f"cache_size = -{_CACHE_KIB}", "journal_mode = MEMORY"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("BEGIN")  # never committed: nothing of it outlives the import
        self._db.execute("CREATE TABLE keys (key BLOB PRIMARY KEY, line INTEGER, content BLOB, ident TEXT)")

    def claim(self, entries: Sequence[KeyEntry]) -> bool:
        """Register these keys if none of them was registered before (one insert, the usual
        case). When one was, nothing is registered and the answer is False: the caller asks
        ``seen`` and ``register``s what it then accepts."""
        if not entries:
            return True
        self._db.execute("SAVEPOINT claim")
        try:
            # in key order: each insert lands next to the one before, in pages still cached
            self._db.executemany("INSERT INTO keys VALUES (?, ?, ?, ?)", sorted(entries))
        except sqlite3.IntegrityError:
            self._db.execute("ROLLBACK TO claim")
            self._db.execute("RELEASE claim")
            return False
        self._db.execute("RELEASE claim")
        return True

    def seen(self, keys: Iterable[bytes]) -> dict[bytes, SeenKey]:
        """The keys registered before, of these."""
        wanted = sorted(set(keys))
        out: dict[bytes, SeenKey] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for key, line, content, ident in self._db.execute(
                f"SELECT key, line, content, ident FROM keys WHERE key IN ({marks})", chunk
            ):
                out[key] = SeenKey(line, content, ident)
        return out

    def register(self, entries: Sequence[KeyEntry]) -> None:
        self._db.executemany("INSERT INTO keys VALUES (?, ?, ?, ?)", sorted(entries))

    def close(self) -> None:
        self._db.close()
