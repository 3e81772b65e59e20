"""Writing an import: one transaction that a file streams into, batch by batch.

An import (curate/ingest/importer.py) checks each row and writes the rows in batches as it
goes; any problem stops the writing, and the transaction is rolled back unless the caller
keeps the valid rows. To find ids repeated across the whole file without holding the file
in memory, each row's ids go, as 16-byte digests with the row's line, into a temporary
table of the same transaction: memory stays flat however long the file is.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Column, Connection, Integer, LargeBinary, MetaData, Table, Text, select
from sqlalchemy.exc import IntegrityError

from ..images import StoredImage
from ..lookalike import skeleton
from ..model import Candidate, Item, Label, Pair
from . import schema as S
from .base import ConflictError
from .engine import chunks, insert_chunked
from .items import ItemStore
from .labels import LabelStore
from .people import PeopleStore


@dataclass(frozen=True)
class SeenKey:
    """Where an id was first seen in this import, a digest of what it named, and the id
    itself: keys are digests of skeletons (curate/lookalike.py), so one key stands for every
    id that looks like it, and the id tells a repeat from a look-alike."""

    line: int
    content: bytes | None
    ident: str


class ImportConflict(ConflictError):
    """Another import wrote the same rows first; nothing of this one was written."""


class ImportSession:
    """The open transaction of one import (see ``Store.importing``)."""

    def __init__(self, store: ImportStore, conn: Connection, keys: Table):
        self._store = store
        self._conn = conn
        self._keys = keys

    def seen(self, keys: Sequence[bytes]) -> dict[bytes, SeenKey]:
        """The keys registered earlier in this import."""
        k = self._keys.c
        out: dict[bytes, SeenKey] = {}
        for chunk in chunks(sorted(set(keys)), 500):
            q = select(k.key, k.line, k.content, k.ident).where(k.key.in_(chunk))
            for key, line, content, ident in self._conn.execute(q):
                out[bytes(key)] = SeenKey(line, None if content is None else bytes(content), ident)
        return out

    def register(self, entries: Iterable[tuple[bytes, int, bytes | None, str]]) -> None:
        """(key, line, content digest, id) of ids now taken by a row of this import."""
        insert_chunked(
            self._conn, self._keys, [{"key": k, "line": n, "content": c, "ident": i} for k, n, c, i in entries]
        )

    def existing(self, item_ids: Iterable[str], pair_ids: Iterable[str]) -> set[str]:
        """Of these item and pair ids, those the store holds (this import's rows included)."""
        out = self._store.item_ids(item_ids, conn=self._conn)
        for chunk in chunks(sorted(set(pair_ids)), 500):
            out |= set(self._conn.scalars(select(S.pairs.c.id).where(S.pairs.c.id.in_(chunk))))
        return out

    def lookalikes(self, item_ids: Iterable[str], pair_ids: Iterable[str]) -> dict[tuple[str, str], str]:
        """(kind, id) -> a different stored id of that kind that looks the same (the same
        skeleton, curate/lookalike.py), for these item and pair ids."""
        out: dict[tuple[str, str], str] = {}
        for kind, table, ids in (("item", S.items, item_ids), ("pair", S.pairs, pair_ids)):
            wanted: dict[str, list[str]] = {}
            for ident in ids:
                wanted.setdefault(skeleton(ident), []).append(ident)
            t = table.c
            for chunk in chunks(sorted(wanted), 500):
                q = select(t.id, t.id_skeleton).where(t.id_skeleton.in_(chunk)).order_by(t.id)
                for stored, sk in self._conn.execute(q):
                    for ident in wanted[sk]:
                        if ident != stored:
                            out.setdefault((kind, ident), stored)
        return out

    def write(
        self,
        *,
        images: Sequence[StoredImage] = (),
        items: Sequence[Item] = (),
        candidates: Sequence[Candidate] = (),
        pairs: Sequence[Pair] = (),
        labels: Sequence[Label] = (),
    ) -> None:
        s, c = self._store, self._conn
        try:
            s.add_images(images, conn=c)
            s.add_items(items, conn=c)
            s.add_candidates(candidates, conn=c)
            s.add_pairs(pairs, conn=c)
            s.add_labels(labels, conn=c)
        except IntegrityError as e:  # the whole transaction is rolled back as this leaves importing()
            raise ImportConflict(f"the store refused the import, nothing was written: {e.orig}") from None

    def add_raters(self, names: Iterable[str]) -> None:
        """Annotators for imported labels: created inactive and without a password, since
        imported raters are not app users and nobody should assign them work."""
        for name in names:
            if self._store.ensure_annotator(name, conn=self._conn):
                self._store.update_annotator(name, conn=self._conn, active=False)


class ImportStore(ItemStore, LabelStore, PeopleStore):  # an import writes items, pairs, labels and raters
    @contextmanager
    def importing(self) -> Iterator[ImportSession]:
        """One write transaction for an import: committed when the block ends, rolled back
        (nothing written) when it raises; ImportConflict when another import committed the
        same ids first."""
        keys = Table(
            f"import_keys_{uuid.uuid4().hex[:12]}",
            MetaData(),
            Column("key", LargeBinary(16), primary_key=True),
            Column("line", Integer, nullable=False),
            Column("content", LargeBinary(16)),
            Column("ident", Text, nullable=False),
            prefixes=["TEMPORARY"],
        )
        try:
            with self.write() as conn:
                keys.create(conn)  # a failed import's rollback removes it
                yield ImportSession(self, conn, keys)
                keys.drop(conn)
        except IntegrityError as e:  # at commit (a deferred check)
            raise ImportConflict(f"the store refused the import, nothing was written: {e.orig}") from None
