"""Connections: the SQLite and PostgreSQL engines, the dialect-specific insert, and the
small helpers every aggregate module of the store shares."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import Connection, Table, create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.dml import Insert

from ..errors import StoreError

if TYPE_CHECKING:
    import psycopg

DEFAULT_DB = "mmrb.db"

T = TypeVar("T")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


# One encoder for every call: json.dumps builds a new one for each call with options (a third
# of the time of a small mapping, and an import encodes one or two a row)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def dumps(obj: Any) -> str:
    """Canonical JSON: the same value always gives the same bytes."""
    return _CANONICAL.encode(obj)


def dumps_mapping(obj: Mapping[str, Any]) -> str:
    """``dumps`` of a mapping, without encoding the common empty one."""
    return dumps(dict(obj)) if obj else "{}"


def loads(text: str | None) -> Any:
    if not text or text == "{}":  # the common empty mapping, a new dict each time without parsing
        return {}
    return json.loads(text)


def records(result: Any) -> Iterator[dict[str, Any]]:
    """A result's rows as dicts, the column names read once (``.mappings()`` and ``dict(row)``
    ask the result for them per row: 0.7 s of 280,000 rows in a build)."""
    keys = tuple(result.keys())
    for row in result:
        yield dict(zip(keys, row, strict=True))


def resolve_db(db: str | None) -> str:
    return db or os.environ.get("MMRB_DB") or DEFAULT_DB


def is_url(db: str) -> bool:
    return "://" in db


def display_name(db: str) -> str:
    return make_url(db).render_as_string(hide_password=True) if is_url(db) else db


def make_engine(db: str) -> Engine:
    if not is_url(db):
        Path(db).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(f"sqlite:///{db}", connect_args={"timeout": 60})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _rec: Any) -> None:  # pragma: no cover - exercised by every test
            dbapi_conn.isolation_level = None  # SQLAlchemy's begin event drives transactions
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=60000")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            # Writes take the write lock up front (BEGIN IMMEDIATE): no upgrade deadlocks, and
            # concurrent writers queue on busy_timeout instead of failing.
            write = conn.get_execution_options().get("mmrb_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine
    url = make_url(db)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if not url.drivername.startswith("postgresql"):
        raise StoreError(f"unsupported database URL {db!r}: use a file path (SQLite) or postgresql://")
    # a connect timeout: a database host that drops packets must fail, not hang a page; 10 s
    # unless the URL names its own (?connect_timeout=N), which connect_args would override
    connect_args = {} if "connect_timeout" in url.query else {"connect_timeout": 10}
    return create_engine(url, pool_size=5, max_overflow=10, pool_pre_ping=True, connect_args=connect_args)


def insert_ignoring(conn: Connection, table: Table) -> Insert:
    """INSERT ... ON CONFLICT DO NOTHING in the connection's dialect (the one place that
    chooses between SQLite's and PostgreSQL's)."""
    if conn.dialect.name == "postgresql":
        # the backend's own dialect only
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing()
    # the backend's own dialect only
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table).on_conflict_do_nothing()


def chunks(seq: Sequence[T], n: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def insert_chunked(conn: Connection, table: Table, rows: Sequence[dict], size: int = 2000) -> None:
    """Insert rows that each give every column of ``table`` they set (the same keys), through
    ``insert_rows``."""
    if not rows:
        return
    cols = list(rows[0])
    if len(cols) == 1:
        (col,) = cols
        insert_rows(conn, table, cols, [(r[col],) for r in rows], size)
    else:
        get = itemgetter(*cols)
        insert_rows(conn, table, cols, [get(r) for r in rows], size)


def insert_rows(
    conn: Connection, table: Table, cols: Sequence[str], rows: Sequence[Sequence[Any]], size: int = 2000
) -> None:
    """Insert rows given as tuples in the order of ``cols``, past SQLAlchemy's per-row
    parameter processing (it cost more than the database's own work on a large import,
    bench/store.py): the driver's executemany on SQLite, COPY on PostgreSQL. A row that breaks
    a constraint raises sqlalchemy's IntegrityError either way."""
    if not rows:
        return
    q = conn.dialect.identifier_preparer
    names = f"{q.format_table(table)} ({', '.join(q.quote(c) for c in cols)})"
    if conn.dialect.name == "postgresql":
        sql = f"COPY {names} FROM STDIN"
        dbapi = cast("psycopg.Connection", conn.connection.dbapi_connection)
        try:
            with dbapi.cursor() as cur, cur.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
        except conn.dialect.loaded_dbapi.IntegrityError as e:
            raise IntegrityError(sql, None, e) from None
        return
    sql = f"INSERT INTO {names} VALUES ({', '.join(['?'] * len(cols))})"
    for chunk in chunks(rows, size):
        conn.exec_driver_sql(sql, list(chunk))
