"""What every part of the store stands on: the engine, the schema check on opening, and
transactions (``write``/``read``, and ``_w``/``_r`` that join a caller's transaction)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from sqlalchemy import Connection

from ..errors import StoreError
from ..images import ImageStore
from .engine import display_name, is_url, make_engine, resolve_db
from .migrations import init_schema


class ConflictError(StoreError):
    """A write that lost a race (e.g. the same pair submitted from two tabs)."""


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
    def write(self) -> Iterator[Connection]:
        """One write transaction; pass it as ``conn=`` to group several calls."""
        with self._writer.begin() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            yield conn

    @contextmanager
    def _w(self, conn: Connection | None) -> Iterator[Connection]:
        if conn is not None:
            yield conn
        else:
            with self.write() as c:
                yield c

    @contextmanager
    def _r(self, conn: Connection | None) -> Iterator[Connection]:
        if conn is not None:
            yield conn
        else:
            with self.read() as c:
                yield c

    @contextmanager
    def _autocommit(self, conn: Connection | None) -> Iterator[Connection]:
        """A single read statement on PostgreSQL needs no transaction: autocommit saves the
        BEGIN and ROLLBACK round trips (bench/store.py). Elsewhere, as ``_r``."""
        if conn is None and self.backend == "postgresql":
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                yield c
        else:
            with self._r(conn) as c:
                yield c
