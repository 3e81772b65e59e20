"""Writing an import: one transaction that a file streams into, batch by batch.

An import (curate/ingest/importer.py) checks each row and writes the rows in batches as it
goes; any problem stops the writing, and the transaction is rolled back unless the caller
keeps the valid rows. Ids repeated within the file are found before, without the store
(curate/ingest/rows.py); here, ids the store already holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, IntegrityError

from ..images import StoredImage
from ..lookalike import skeleton
from ..model import Label
from . import schema as S
from .base import ConflictError
from .engine import chunks, insert_rows
from .items import CANDIDATE_COLUMNS, IMAGE_COLUMNS, ITEM_COLUMNS, PAIR_COLUMNS, PART_COLUMNS, ItemStore, Row
from .labels import LabelStore
from .people import PeopleStore

# SQLite's page cache while an import runs (KiB): with the default 2 MB, inserts into the
# indexes of a large import read their pages back again and again. At 50,000 pairs 64 MB
# took about 6% off (bench/store.py on a quiet machine, against the tree before in the same
# runs: 0.92x of its speed without, 0.98x with; the import is about twice the turn-2 tree's
# speed only with it), as much as 128 MB; 128 MB took another tenth off at 200,000 pairs
# but put the import's peak over its bound of 450 MB
_IMPORT_CACHE_KIB = {"main": 65536}

_IMPORT_LOCK = 0x6D6D7269  # "mmri": the advisory lock an import holds on PostgreSQL


class ImportConflict(ConflictError):
    """Another import wrote the same rows first; nothing of this one was written."""


class ImportSession:
    """The open transaction of one import (see ``Store.importing``)."""

    def __init__(self, store: ImportStore, conn: Connection):
        self._store = store
        self._conn = conn
        self._pg = conn.dialect.name == "postgresql"
        # The import holds the write lock (SQLite) or the import lock (PostgreSQL) from here
        # on, and only imports make items (pairs need items): if the store holds no item and
        # no pair now, every one it holds until this import ends is this import's, whose ids
        # were checked against the rest of its file already (curate/ingest/rows.py)
        self.fresh = not conn.exec_driver_sql(
            "SELECT EXISTS (SELECT 1 FROM items) OR EXISTS (SELECT 1 FROM pairs)"
        ).scalar()

    def matches(self, item_ids: Iterable[str], pair_ids: Iterable[str]) -> tuple[set[str], dict[tuple[str, str], str]]:
        """Of these item and pair ids: those the store holds (this import's rows included),
        and (kind, id) -> a different stored id of that kind that looks the same (the same
        skeleton, curate/lookalike.py), the first in id order."""
        have: set[str] = set()
        looks: dict[tuple[str, str], str] = {}
        if self.fresh:
            return have, looks
        for kind, table, ids in (("item", "items", item_ids), ("pair", "pairs", pair_ids)):
            wanted: dict[str, list[str]] = {}
            for ident in dict.fromkeys(ids):
                wanted.setdefault(skeleton(ident), []).append(ident)
            if not wanted:
                continue
            sql = f"SELECT id, id_skeleton FROM {table}"
            mine = [i for v in wanted.values() for i in v]
            have.update(i for i, _ in self._where_in(sql, "id", mine))
            for stored, sk in sorted(self._where_in(sql, "id_skeleton", sorted(wanted))):
                for ident in wanted[sk]:
                    if ident != stored:
                        looks.setdefault((kind, ident), stored)
        return have, looks

    def _where_in(self, sql: str, column: str, values: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql`` whose ``column`` is one of ``values``: one statement on
        PostgreSQL (an array parameter), a few on SQLite."""
        c = self._conn
        if self._pg:
            yield from c.exec_driver_sql(f"{sql} WHERE {column} = ANY(%s)", (list(values),))
            return
        for chunk in chunks(values, 500):
            yield from c.exec_driver_sql(f"{sql} WHERE {column} IN ({','.join('?' * len(chunk))})", tuple(chunk))

    def write(
        self,
        *,
        images: Sequence[StoredImage] = (),
        items: Sequence[tuple[Row, Sequence[Row]]] = (),
        candidates: Sequence[tuple[Row, Sequence[Row]]] = (),
        pairs: Sequence[Row] = (),
        labels: Sequence[Label] = (),
    ) -> None:
        """Rows as ``item_rows``, ``candidate_rows`` and ``pair_row`` (curate/store/items.py)
        build them: an item's row with its images', a candidate's with its parts'."""
        s, c = self._store, self._conn
        try:
            s.add_images(images, conn=c)
            insert_rows(c, S.items, ITEM_COLUMNS, [r for r, _ in items])
            insert_rows(c, S.item_images, IMAGE_COLUMNS, [x for _, sub in items for x in sub])
            insert_rows(c, S.candidates, CANDIDATE_COLUMNS, [r for r, _ in candidates])
            insert_rows(c, S.candidate_parts, PART_COLUMNS, [x for _, sub in candidates for x in sub])
            insert_rows(c, S.pairs, PAIR_COLUMNS, pairs)
            s.add_labels(labels, conn=c)
        except IntegrityError as e:  # the whole transaction is rolled back as this leaves importing()
            raise ImportConflict(f"the store refused the import, nothing was written: {e.orig}") from None

    def add_raters(self, names: Iterable[str]) -> None:
        """Annotators for imported labels: created inactive and without a password, since
        imported raters are not app users and nobody should assign them work."""
        for name in names:
            if self._store.ensure_annotator(name, conn=self._conn):
                self._store.update_annotator(name, conn=self._conn, active=False)


# The tables an import fills
_IMPORTED = ("items", "item_images", "candidates", "candidate_parts", "pairs")
# PostgreSQL: how long a first import waits for the locks of its tables before it leaves their
# indexes and checks in place (a reader in a long transaction holds them)
_LOCK_WAIT = "2s"
_LOCK_NOT_AVAILABLE, _INSUFFICIENT_PRIVILEGE = "55P03", "42501"  # PostgreSQL's SQLSTATEs


def _defer_upkeep(conn: Connection) -> list[str]:
    """A store that holds no item and no pair yet: the upkeep its first import can leave to
    its end, dropped in the import's transaction, and the statements that make it again as
    the import ends (a rollback brings it all back). An index built once sorts the rows;
    kept up to date row by row it costs random page reads and writes, which grow with the
    import (SQLite, bench/store.py, rows/s with it over without: 1.03-1.09x at 50,000 pairs,
    1.26x at 200,000, 1.38x at 500,000, where the indexes outgrow the page cache). The
    unique indexes stay: they refuse repeated ids."""
    if conn.dialect.name == "postgresql":
        return _defer_upkeep_pg(conn)
    marks = ",".join("?" * len(_IMPORTED))
    found = list(
        conn.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f"AND sql NOT LIKE 'CREATE UNIQUE%' AND tbl_name IN ({marks}) ORDER BY name",
            _IMPORTED,
        )
    )
    q = conn.dialect.identifier_preparer
    for name, _ in found:
        conn.exec_driver_sql(f"DROP INDEX {q.quote(name)}")
    return [sql for _, sql in found]


def _defer_upkeep_pg(conn: Connection) -> list[str]:
    """PostgreSQL (see ``_defer_upkeep``): the plain indexes and the foreign keys of the
    tables an import fills, as PostgreSQL's guide to populating a database advises. Each
    foreign key checked its row with a query of its own (five for an imported pair), where
    adding the key again checks every row with one join.
    Dropping them locks the tables until the import ends, so readers of the (empty) store
    wait for it; when the locks are not granted within _LOCK_WAIT (a reader in a long
    transaction) or the role may not alter the tables, the import keeps them all and runs
    as into any other store."""
    tables = [f"{conn.dialect.default_schema_name}.{t}" for t in _IMPORTED]
    fks = list(
        conn.exec_driver_sql(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE contype = 'f' AND conrelid = ANY(%s::regclass[]) ORDER BY 1, 2",
            (tables,),
        )
    )
    indexes = list(
        conn.exec_driver_sql(
            "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
            "WHERE indrelid = ANY(%s::regclass[]) AND NOT indisunique ORDER BY 1",
            (tables,),
        )
    )
    q = conn.dialect.identifier_preparer
    before = conn.exec_driver_sql("SHOW lock_timeout").scalar_one()
    conn.exec_driver_sql("SAVEPOINT mmrb_defer_upkeep")
    try:
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{_LOCK_WAIT}'")
        for table, name, _ in fks:
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP CONSTRAINT {q.quote(name)}")
        for name, _ in indexes:
            conn.exec_driver_sql(f"DROP INDEX {name}")
    except DBAPIError as e:
        if getattr(e.orig, "sqlstate", None) not in (_LOCK_NOT_AVAILABLE, _INSUFFICIENT_PRIVILEGE):
            raise
        conn.exec_driver_sql("ROLLBACK TO SAVEPOINT mmrb_defer_upkeep")  # the setting too
        return []
    conn.exec_driver_sql("RELEASE SAVEPOINT mmrb_defer_upkeep")
    conn.exec_driver_sql("SELECT set_config('lock_timeout', %s, true)", (before,))
    # indexes first: checking a foreign key again reads the table it names
    return [sql for _, sql in indexes] + [f"ALTER TABLE {t} ADD CONSTRAINT {q.quote(n)} {d}" for t, n, d in fks]


class ImportStore(ItemStore, LabelStore, PeopleStore):  # an import writes items, pairs, labels and raters
    @contextmanager
    def importing(self) -> Iterator[ImportSession]:
        """One write transaction for an import: committed when the block ends, rolled back
        (nothing written) when it raises; ImportConflict when another import committed the
        same ids first."""
        try:
            with self.write() as conn, self._import_cache(conn):
                pg = conn.dialect.name == "postgresql"
                if pg:  # one import at a time, as SQLite's write lock does
                    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_IMPORT_LOCK})")
                session = ImportSession(self, conn)
                rebuild = _defer_upkeep(conn) if session.fresh else []
                yield session
                for sql in rebuild:
                    conn.exec_driver_sql(sql)
        except IntegrityError as e:  # at commit (a deferred check)
            raise ImportConflict(f"the store refused the import, nothing was written: {e.orig}") from None

    @contextmanager
    def _import_cache(self, conn: Connection) -> Iterator[None]:
        """A larger SQLite page cache for the import's transaction (bounded: memory stays
        flat), the connection's own size again afterwards."""
        if conn.dialect.name != "sqlite":
            yield
            return
        before = {db: int(conn.exec_driver_sql(f"PRAGMA {db}.cache_size").scalar_one()) for db in _IMPORT_CACHE_KIB}
        for db, kib in _IMPORT_CACHE_KIB.items():
            conn.exec_driver_sql(f"PRAGMA {db}.cache_size = -{kib}")
        try:
            yield
        finally:
            for db, size in before.items():
                conn.exec_driver_sql(f"PRAGMA {db}.cache_size = {size}")
