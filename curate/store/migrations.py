"""Creating a store's tables and bringing an older store up to this version.

New tables come from ``create_all``; anything else an existing store lacks is a step here.
``MIGRATIONS[v]`` brings a store from version v - 1 to v. Every step checks first and does
nothing when its change is already there (two processes may open an old store at once), and
all of them run in the transaction that opens the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, insert, inspect, select, update
from sqlalchemy.schema import CreateColumn

from ..errors import StoreError
from ..lookalike import skeleton
from ..model import RunDataset
from . import schema as S
from .engine import now
from .rows import dataset_json

_SCHEMA_LOCK = 0x6D6D7262  # "mmrb": the advisory lock held while a store's schema is created


@dataclass(frozen=True)
class AddColumn:
    """A new column of an existing table. It must be nullable or carry a server default,
    since existing rows get no value from Python."""

    table: str
    column: str

    def apply(self, conn: Connection) -> None:
        if self.column in {c["name"] for c in inspect(conn).get_columns(self.table)}:
            return
        col = S.metadata.tables[self.table].c[self.column]
        ddl = CreateColumn(col).compile(dialect=conn.dialect)
        conn.exec_driver_sql(f"ALTER TABLE {conn.dialect.identifier_preparer.quote(self.table)} ADD COLUMN {ddl}")


@dataclass(frozen=True)
class RunDatasets:
    """Judge runs stored their dataset packed into one string, ``"/a.jsonl;/b.jsonl[:N]"``
    (``mmrb select`` runs: ``"select"``); now it is structured JSON (store/judging.py)."""

    def apply(self, conn: Connection) -> None:
        R = S.judge_runs.c
        for run_id, purpose, text in conn.execute(select(R.id, R.purpose, R.dataset)).all():
            if text.startswith("{"):
                continue  # converted already
            conn.execute(
                update(S.judge_runs).where(R.id == run_id).values(dataset=dataset_json(_packed_dataset(text, purpose)))
            )


def _packed_dataset(text: str, purpose: str) -> RunDataset:
    if purpose == "select":
        return RunDataset(name=text)
    limit = None
    if text.endswith("]") and "[:" in text:
        text, _, n = text.rpartition("[:")
        limit = int(n[:-1])
    return RunDataset(tuple(p for p in text.split(";") if p), limit)


@dataclass(frozen=True)
class FillSkeletons:
    """The look-alike form of each stored id (``id_skeleton``, curate/lookalike.py), for rows
    written before imports compared ids by it. Walks the table by id, a batch at a time.
    ``refresh``: also rows whose stored form an older skeleton computed (one that kept the
    invisible characters it now drops)."""

    table: str
    batch: int = 1000
    refresh: bool = False

    def apply(self, conn: Connection) -> None:
        t = S.metadata.tables[self.table]
        fill = update(t).where(t.c.id == bindparam("row_id")).values(id_skeleton=bindparam("row_skeleton"))
        last = ""
        while True:
            q = select(t.c.id, t.c.id_skeleton).where(t.c.id > last).order_by(t.c.id).limit(self.batch)
            rows = conn.execute(q).all()
            if not rows:
                return
            todo = [
                {"row_id": i, "row_skeleton": new}
                for i, sk in rows
                if (new := skeleton(i)) != sk and (sk is None or self.refresh)
            ]
            if todo:
                conn.execute(fill, todo)
            last = rows[-1][0]


@dataclass(frozen=True)
class AddIndex:
    """An index of the schema that an existing table lacks."""

    table: str
    name: str

    def apply(self, conn: Connection) -> None:
        (index,) = (i for i in S.metadata.tables[self.table].indexes if i.name == self.name)
        index.create(conn, checkfirst=True)


@dataclass(frozen=True)
class DropIndex:
    """An index the schema no longer has."""

    name: str

    def apply(self, conn: Connection) -> None:
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {conn.dialect.identifier_preparer.quote(self.name)}")


@dataclass(frozen=True)
class AddTable:
    """A table of the schema that an existing store lacks (a store opened without create)."""

    table: str

    def apply(self, conn: Connection) -> None:
        S.metadata.tables[self.table].create(conn, checkfirst=True)


@dataclass(frozen=True)
class GuidelinesFromSetting:
    """Stores before version 12 kept their guidelines as the setting ``guidelines_md``: it
    becomes version 1 (author ``settings``), and the setting goes, so there is one source."""

    def apply(self, conn: Connection) -> None:
        key = S.settings.c.key == "guidelines_md"
        text = conn.scalar(select(S.settings.c.value).where(key))
        if text and conn.scalar(select(S.guidelines.c.version).limit(1)) is None:
            conn.execute(insert(S.guidelines).values(version=1, text=text, author="settings", created_at=now()))
        conn.execute(S.settings.delete().where(key))


@dataclass(frozen=True)
class TableOptions:
    """PostgreSQL storage options of a table (nothing to do on SQLite)."""

    table: str
    options: tuple[tuple[str, str], ...]

    def apply(self, conn: Connection) -> None:
        if conn.dialect.name == "postgresql":
            opts = ", ".join(f"{k} = {v}" for k, v in self.options)
            conn.exec_driver_sql(f"ALTER TABLE {conn.dialect.identifier_preparer.quote(self.table)} SET ({opts})")


# Closing an assignment updates its ``state``, which the queue index holds: PostgreSQL keeps
# the old (annotator, 'open', seq) entry until VACUUM, and "next open pair" steps over every
# such entry at the front of the annotator's queue (EXPLAIN ANALYZE at 500,000 pairs: 337
# buffers and 1.9 ms, against 6 buffers and 0.08 ms once vacuumed). Autovacuum's default
# trigger is 20% of the table, so those entries grew with the store; a fixed threshold keeps
# them to about a thousand at any size, and index cleanup is never skipped for this table.
QUEUE_VACUUM = TableOptions(
    "assignments",
    (
        ("autovacuum_vacuum_scale_factor", "0"),
        ("autovacuum_vacuum_threshold", "1000"),
        ("autovacuum_analyze_scale_factor", "0"),
        ("autovacuum_analyze_threshold", "1000"),
        ("vacuum_index_cleanup", "on"),
    ),
)
ON_CREATE: list[Step] = [QUEUE_VACUUM]  # what create_all does not express

Step = AddColumn | RunDatasets | TableOptions | FillSkeletons | AddIndex | DropIndex | AddTable | GuidelinesFromSetting

MIGRATIONS: dict[int, list[Step]] = {
    2: [
        AddColumn("judge_runs", "status"),
        AddColumn("judge_runs", "planned"),
        AddColumn("judge_runs", "failed"),
        AddColumn("annotators", "sessions_not_before"),
    ],
    3: [RunDatasets()],
    4: [QUEUE_VACUUM],
    5: [
        AddColumn("items", "id_skeleton"),
        AddColumn("pairs", "id_skeleton"),
        FillSkeletons("items"),
        FillSkeletons("pairs"),
        AddIndex("items", "ix_items_skeleton"),
        AddIndex("pairs", "ix_pairs_skeleton"),
    ],
    # quality control: gold answers, qualification, paused accounts
    6: [
        AddTable("gold"),
        AddColumn("assignments", "qualification"),
        AddColumn("annotators", "qualification"),
        AddColumn("annotators", "paused"),
    ],
    # responses with images: a candidate's parts in order
    7: [AddTable("candidate_parts")],
    # an item's candidates are found through uq_candidate_key, which leads with item_id: the
    # index on item_id alone only cost every import an index entry per candidate (about 3% of
    # an import's time on PostgreSQL at 50,000 pairs, bench/store.py)
    8: [DropIndex("ix_candidates_item")],
    # the skeleton drops default-ignorable characters (UTS #39 since Unicode 15.1): ids stored
    # with one (U+FE0F, a Hangul filler...) before the identifier policy refused them get the
    # form that later imports compare against
    9: [FillSkeletons("items", refresh=True), FillSkeletons("pairs", refresh=True)],
    # a judge run records the orientation it showed each pair (store/judging.py): runs stored
    # before have none, and are read back with the orientation computed as before
    10: [AddTable("run_orientations")],
    # annotation schemes (curate/schemes.py): a pair's scheme, the version a label was made
    # under, the decided and gold values of a scheme's other fields; pairs and labels stored
    # before keep NULL, which is the mmrb scheme they were made with
    11: [
        AddTable("schemes"),
        AddColumn("pairs", "scheme"),
        AddColumn("pairs", "scheme_version"),
        AddColumn("labels", "scheme_version"),
        AddColumn("adjudications", "ratings"),
        AddColumn("gold", "ratings"),
    ],
    # guidelines with versions and the audit trail; the guidelines a store kept as its one
    # setting become version 1, and labels made before keep NULL (no version recorded)
    12: [AddTable("guidelines"), AddTable("audit"), AddColumn("labels", "guidelines_version"), GuidelinesFromSetting()],
}

SCHEMA_VERSION = max(MIGRATIONS, default=1)


def init_schema(conn: Connection, create: bool, name: str) -> None:
    """Create what is missing and migrate, in the caller's (write) transaction."""
    if conn.dialect.name == "postgresql":
        # two processes creating or migrating one database at once would race on the
        # catalog (pg_type UniqueViolation); SQLite's BEGIN IMMEDIATE serialises
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})")
    if create:
        S.metadata.create_all(conn, checkfirst=True)
    row = conn.execute(select(S.settings.c.value).where(S.settings.c.key == "schema_version")).first()
    if row is None:
        for step in ON_CREATE:
            step.apply(conn)
        conn.execute(insert(S.settings).values(key="schema_version", value=str(SCHEMA_VERSION)))
    elif int(row[0]) > SCHEMA_VERSION:
        raise StoreError(
            f"the store {name} has schema version {row[0]}, made by a newer "
            f"mmrb-studio; this version reads up to {SCHEMA_VERSION}: upgrade mmrb-studio"
        )
    elif int(row[0]) < SCHEMA_VERSION:
        migrate(conn, int(row[0]))


def migrate(conn: Connection, version: int) -> None:
    """Bring a store at ``version`` up to ``SCHEMA_VERSION``."""
    for v in range(version + 1, SCHEMA_VERSION + 1):
        for step in MIGRATIONS.get(v, []):
            step.apply(conn)
    conn.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))
