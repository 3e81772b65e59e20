"""The ids an import has taken so far, for finding ids repeated anywhere in its file.

Each id a row takes is registered under a key (its kind and skeleton, so ids that look alike
share a key; curate/lookalike.py) with the row's line, a digest of what it named and the id
itself. The newest keys are held in a dict; past a bound they move to a private temporary
file, not the store: the check is about the file alone, so it needs no store transaction
(curate/ingest/rows.py). Memory stays flat: the dict is bounded, and the keys moved out are
read back from their file only where a lookup may find one.
"""

from __future__ import annotations

import marshal
import tempfile
from collections.abc import Iterable, Sequence
from contextlib import suppress
from typing import Any, NamedTuple

from ..errors import disk_full_reported


class SeenKey(NamedTuple):
    """Where an id was first seen in this import, a digest of what it named, and the id
    itself: one key stands for every id that looks like it, and the id tells a repeat from
    a look-alike. (A named tuple: an import makes one per id.)"""

    line: int
    content: bytes | None
    ident: str


KeyEntry = tuple[str, int, bytes | None, str]  # key, line, content digest, id

# Keys held in memory (about 400 bytes each with their ids: some 100 MB) before they move out.
# A key in a dict costs a tenth of a microsecond, so an import of up to 62,500 pairs (4 keys
# each) never moves any
MEMORY_KEYS = 250_000
# The keys moved out are also marked in a Bloom filter of this many bits (32 MB), so a key that
# is new (nearly all of them) is known to be new without reading the file: with 2 million keys
# moved, one new key in a million still needs a look, with 20 million one in 230
_FILTER_BITS = 1 << 28
_CHUNK = 256  # entries read back together: a lookup that lands reads one chunk
_hash = hash  # a key's hash (Python's, the same for a text all through this process); tests vary it


class _Run:
    """The keys of one move: their hashes sorted, with the place of each key's entry, in a
    file mapped into memory (a lookup reads a few of its pages), and their entries in chunks of
    a second file, in the order they came."""

    def __init__(self, hashes: Any, places: Any, chunks: list[int], entries: Any):
        self.hashes, self.places, self.chunks, self.entries = hashes, places, chunks, entries

    def find(self, key: str, h: int) -> KeyEntry | None:
        np = _numpy()
        i = int(np.searchsorted(self.hashes, h))
        while i < len(self.hashes) and self.hashes[i] == h:  # hashes of different keys may be equal
            chunk, n = divmod(int(self.places[i]), _CHUNK)
            start, end = self.chunks[chunk], self.chunks[chunk + 1]
            self.entries.seek(start)
            entry: KeyEntry = marshal.loads(self.entries.read(end - start))[n]
            if entry[0] == key:
                return entry
            i += 1
        return None


class KeyRegistry:
    """The keys of one import (see the module's docstring)."""

    def __init__(self, memory_keys: int | None = None) -> None:
        self._recent: dict[str, KeyEntry] = {}
        self._limit = memory_keys or MEMORY_KEYS
        self._runs: list[_Run] = []
        self._files: list[Any] = []  # opened when the dict first fills: hashes, entries
        self._filter: Any = None  # the Bloom filter's bits (see _FILTER_BITS)

    def claim(self, entries: Sequence[KeyEntry]) -> bool:
        """Register these keys (different from each other) if none of them was registered
        before, the usual case. When one was, nothing is registered and the answer is False:
        the caller asks ``seen`` and ``register``s what it then accepts."""
        keys = [e[0] for e in entries]
        if not self._recent.keys().isdisjoint(keys) or self._moved(keys):
            return False
        self.register(entries)
        return True

    def seen(self, keys: Iterable[str]) -> dict[str, SeenKey]:
        """The keys registered before, of these."""
        recent = self._recent
        out: dict[str, SeenKey] = {}
        older = []
        for k in set(keys):
            if (e := recent.get(k)) is not None:
                out[k] = SeenKey(*e[1:])
            else:
                older.append(k)
        for e in self._moved(older):
            out[e[0]] = SeenKey(*e[1:])
        return out

    def register(self, entries: Sequence[KeyEntry]) -> None:
        """Register these keys, none of them registered before."""
        self._recent.update(zip([e[0] for e in entries], entries, strict=True))
        if len(self._recent) >= self._limit:
            with disk_full_reported(f"temporary files in {tempfile.gettempdir()}"):
                self._move()

    def close(self) -> None:
        self._recent, self._runs = {}, []
        for f in self._files:
            with suppress(OSError):  # a full disk again as its buffer is flushed: the file goes all the same
                f.close()

    def _moved(self, keys: Sequence[str]) -> list[KeyEntry]:
        """The entries of the keys moved out of memory, of these."""
        if not self._runs or not keys:
            return []
        h = self._hashes(keys)
        out = []
        for i in _numpy().flatnonzero(self._in_filter(h)).tolist():
            for run in self._runs:
                if (e := run.find(keys[i], int(h[i]))) is not None:
                    out.append(e)
                    break
        return out

    def _move(self) -> None:
        """The keys in memory, moved to the files as a run of their own, sorted by hash."""
        np = _numpy()
        if not self._files:
            # deleted when closed, and by the system if the process dies
            self._files = [tempfile.TemporaryFile(prefix="mmrb-keys-") for _ in range(2)]
            self._filter = np.zeros(_FILTER_BITS // 8, dtype="uint8")
        hash_file, entry_file = self._files
        recent, self._recent = list(self._recent.values()), {}
        h = self._hashes([e[0] for e in recent])
        order = np.argsort(h, kind="stable")
        h, places = h[order], order.astype(np.int64)
        offset = hash_file.seek(0, 2)
        hash_file.write(h.tobytes() + places.tobytes())
        hash_file.flush()
        chunks = [entry_file.seek(0, 2)]
        for i in range(0, len(recent), _CHUNK):
            chunks.append(chunks[-1] + entry_file.write(marshal.dumps(recent[i : i + _CHUNK])))
        entry_file.flush()
        both = np.memmap(hash_file, dtype=np.int64, mode="r", offset=offset, shape=(2, len(h)))
        self._runs.append(_Run(both[0], both[1], chunks, entry_file))
        byte, bit = self._probes(h)
        np.bitwise_or.at(self._filter, byte, np.left_shift(1, bit, dtype=np.uint8))

    def _in_filter(self, h: Any) -> Any:
        """For each hash, whether its key may have moved out (False: it has not)."""
        byte, bit = self._probes(h)
        return ((self._filter[byte] >> bit) & 1).all(axis=1)

    @staticmethod
    def _hashes(keys: Sequence[str]) -> Any:
        np = _numpy()
        return np.fromiter(map(_hash, keys), dtype=np.int64, count=len(keys))

    @staticmethod
    def _probes(h: Any) -> tuple[Any, Any]:
        """The filter's four bits of each key's hash, one row a key, as (byte, bit in it):
        h1 + i * h2 from the hash's two halves."""
        np = _numpy()
        u = h.view(np.uint64)
        h1, h2 = u & np.uint64(0xFFFFFFFF), (u >> np.uint64(32)) | np.uint64(1)
        slots = (h1[:, None] + h2[:, None] * np.arange(4, dtype=np.uint64)) & np.uint64(_FILTER_BITS - 1)
        return slots >> np.uint64(3), (slots & np.uint64(7)).astype(np.uint8)


def _numpy() -> Any:
    """numpy, imported once keys move, not with this module: its thread pools would keep
    curate/ingest/rows.py from forking."""
    import numpy

    return numpy
