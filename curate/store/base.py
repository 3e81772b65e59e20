"""What every part of the store stands on: the engine, the schema check on opening, and
transactions: a stage's unit of work (``transaction``/``snapshot``, a :class:`Transaction`),
the raw connections of the store's own code and of tests (``write``/``read``), and
``_w``/``_r`` that join a caller's transaction."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self, TypeAlias

from sqlalchemy import Connection

from ..errors import StoreError
from ..images import ImageStore
from .engine import display_name, is_url, make_engine, resolve_db
from .migrations import init_schema


class ConflictError(StoreError):
    """A write that lost a race (e.g. the same pair submitted from two tabs)."""


class Transaction:
    """A unit of work on the store: what a stage holds between store calls, passed to them as
    ``conn=`` so that they share one transaction. It wraps the database connection privately:
    outside the store nothing speaks SQL. From ``Store.transaction`` (it may write, committed
    when the block ends, rolled back on an error) or ``Store.snapshot`` (reads only)."""

    __slots__ = ("_conn", "writes")

    def __init__(self, conn: Connection, *, writes: bool) -> None:
        self._conn = conn
        self.writes = writes


# what the store's methods accept as ``conn``: a stage's Transaction, or a connection of the
# store's own (``write``/``read``: migrations, the importer, tests that write old layouts)
Conn: TypeAlias = Connection | Transaction


def _connection(conn: Conn, *, write: bool) -> Connection:
    if isinstance(conn, Transaction):
        if write and not conn.writes:  # a bug: SQLite would not hold the write lock up front
            raise TypeError("a write in a read-only transaction (Store.snapshot): use Store.transaction")
        return conn._conn
    return conn


class StoreBase:
    def __init__(self, db: str | None = None, images: str | Path | None = None, *, create: bool = True):
        self.db = resolve_db(db)
        self.engine = make_engine(self.db)
        # writes on SQLite take the write lock up front (see engine.make_engine)
        self._writer = self.engine.execution_options(mmrb_write=True)
        image_root = images or os.environ.get("MMRB_IMAGES")
        if image_root is None:
            image_root = Path(self.db + ".images") if not is_url(self.db) else Path("mmrb-images")
        self.images = ImageStore(image_root)
        try:
            with self._writer.begin() as conn:
                init_schema(conn, create, self.display_name)
        except StoreError:
            self.engine.dispose()
            raise
        except Exception as e:  # connection refused, bad credentials, unreadable file
            self.engine.dispose()
            raise StoreError(f"cannot open the store {self.display_name}: {e.__class__.__name__}: {e}") from e

    @property
    def display_name(self) -> str:
        return display_name(self.db)

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    def checkpoint(self) -> None:
        """SQLite: fold the write-ahead log into the database file (before the file is
        copied or renamed); nothing to do on PostgreSQL."""
        if self.backend == "sqlite":
            with self.engine.connect() as c:
                c.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A stage's unit of work that writes: pass it as ``conn=`` to group several calls;
        committed when the block ends."""
        with self.write() as conn:
            yield Transaction(conn, writes=True)

    @contextmanager
    def snapshot(self) -> Iterator[Transaction]:
        """A stage's unit of work that only reads: pass it as ``conn=`` to group reads."""
        with self.read() as conn:
            yield Transaction(conn, writes=False)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction as a raw connection (the store's own code and tests that
        write SQL); stages use ``transaction``."""
        with self._writer.begin() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            yield conn

    @contextmanager
    def _w(self, conn: Conn | None) -> Iterator[Connection]:
        if conn is not None:
            yield _connection(conn, write=True)
        else:
            with self.write() as c:
                yield c

    @contextmanager
    def _r(self, conn: Conn | None) -> Iterator[Connection]:
        if conn is not None:
            yield _connection(conn, write=False)
        else:
            with self.read() as c:
                yield c

    @contextmanager
    def _autocommit(self, conn: Conn | None) -> Iterator[Connection]:
        """A single read statement on PostgreSQL needs no transaction: autocommit saves the
        BEGIN and ROLLBACK round trips (bench/store.py). Elsewhere, as ``_r``."""
        if conn is None and self.backend == "postgresql":
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                yield c
        else:
            with self._r(conn) as c:
                yield c
