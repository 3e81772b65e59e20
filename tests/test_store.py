"""The store behaves the same on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, update
from sqlalchemy.exc import IntegrityError

from curate.errors import StoreError
from curate.model import Adjudication, Annotator, Assignment, Candidate, ImageRef, Item, Label, Pair
from curate.store import ConflictError, QueueProgress, Store
from curate.store import migrations as M
from curate.store import schema as S
from tests.ingest_helpers import text_pairs_file, upkeep

pytestmark = pytest.mark.both_backends  # the store itself: every test on SQLite and PostgreSQL


def _seed(store: Store, n_pairs: int = 3) -> None:
    store.add_items(
        [
            Item(id=f"i{n}", prompt=f"What is {n}?", category="vqa", images=(ImageRef("x.png", None, "missing"),))
            for n in range(n_pairs)
        ]
    )
    store.add_candidates(
        [
            Candidate(id=f"i{n}/{m}", item_id=f"i{n}", model=m, text=f"{m} says {n}")
            for n in range(n_pairs)
            for m in "ab"
        ]
    )
    store.add_pairs(
        [
            Pair(id=f"p{n}", item_id=f"i{n}", first_id=f"i{n}/a", second_id=f"i{n}/b", origin="test")
            for n in range(n_pairs)
        ]
    )
    store.add_annotator(Annotator("ann"))
    store.add_assignments(
        [
            Assignment(pair_id=f"p{n}", annotator="ann", left="first" if n % 2 else "second", seq=n)
            for n in range(n_pairs)
        ]
    )


def test_round_trip_of_every_noun(store):
    _seed(store)
    item = store.get_item("i1")
    assert item == Item(id="i1", prompt="What is 1?", category="vqa", images=(ImageRef("x.png", None, "missing"),))
    assert store.get_pair("p2") == Pair(id="p2", item_id="i2", first_id="i2/a", second_id="i2/b", origin="test")
    assert [c.model for c in store.candidates(item_id="i0")] == ["a", "b"]
    assert store.get_annotator("ann") == Annotator("ann")
    assert store.get_assignment("p1", "ann") == Assignment("p1", "ann", "first", 1)
    adj = Adjudication(pair_id="p0", admin="lead", preference="tie", note="both fine")
    store.set_adjudication(adj)
    assert store.adjudications()["p0"].preference == "tie"


def test_next_assignment_and_label_lifecycle(store):
    _seed(store)
    assert store.next_assignment("ann").pair_id == "p0"
    saved = store.save_label(Label("p0", "ann", "correct", "incorrect", "first", rationale="a is right", seconds=3.5))
    assert saved.revision == 1
    assert store.next_assignment("ann").pair_id == "p1"
    assert store.progress("ann") == (1, 3)
    # a second tab that opened the same pair cannot submit it again
    with pytest.raises(ConflictError):
        store.save_label(Label("p0", "ann", preference="second"))
    # an edit of one's own label keeps history
    edited = store.save_label(Label("p0", "ann", "correct", "correct", "tie", rationale="both"), expected_revision=1)
    assert edited.revision == 2 and store.get_label("p0", "ann").preference == "tie"
    hist = store.label_history("p0", "ann")
    assert [h.snapshot.preference for h in hist] == ["first"]
    # undo withdraws the latest label and reopens the pair at the front of the queue
    store.save_label(Label("p1", "ann", preference="second"))
    undone = store.undo_last("ann")
    assert undone.pair_id == "p1" and store.get_label("p1", "ann") is None
    assert store.next_assignment("ann").pair_id == "p1"
    assert [h.action for h in store.label_history("p1", "ann")] == ["undo"]


def test_queue_progress_counts_a_skip_as_done_but_not_labelled(store):
    _seed(store, 4)
    store.add_annotator(Annotator("other"))
    store.add_assignments([Assignment("p0", "other", "first", 0)])
    assert store.queue_progress("ann") == QueueProgress(done=0, skipped=0, assigned=4)
    store.save_label(Label("p0", "ann", preference="first"))
    store.save_label(Label("p1", "ann", status="skipped"))
    store.save_label(Label("p0", "other", status="skipped"))  # another annotator's skip is not hers
    got = store.queue_progress("ann")
    assert got == QueueProgress(done=2, skipped=1, assigned=4) and got.labelled == 1
    assert (got.done, got.assigned) == store.progress("ann")
    store.undo_last("ann")  # the withdrawn skip reopens its pair: neither done nor skipped
    assert store.queue_progress("ann") == QueueProgress(done=1, skipped=0, assigned=4)


def test_import_is_one_transaction(store):
    _seed(store, 1)
    with pytest.raises(IntegrityError):  # the duplicate id: the whole import rolls back
        with store.write() as conn:
            store.add_items([Item(id="new", prompt="q", category="vqa")], conn=conn)
            store.add_items([Item(id="i0", prompt="duplicate", category="vqa")], conn=conn)
    assert store.get_item("new") is None
    assert store.counts().items == 1


@pytest.mark.both_backends
def test_a_stage_s_unit_of_work_is_a_transaction(store):
    """``transaction`` commits its calls together or not at all; ``snapshot`` reads and
    refuses a write (on SQLite it would not hold the write lock)."""
    with store.transaction() as tx:
        store.add_items([Item(id="t1", prompt="q", category="vqa")], conn=tx)
        assert store.item_ids(conn=tx) == {"t1"}
    with pytest.raises(IntegrityError), store.transaction() as tx:
        store.add_items([Item(id="t2", prompt="q", category="vqa")], conn=tx)
        store.add_items([Item(id="t1", prompt="again", category="vqa")], conn=tx)
    assert store.item_ids() == {"t1"}
    with store.snapshot() as tx:
        assert [i.id for i in store.items(conn=tx)] == ["t1"]
        with pytest.raises(TypeError, match="read-only"):
            store.add_items([Item(id="t3", prompt="q", category="vqa")], conn=tx)
    assert store.item_ids() == {"t1"}


def test_newer_schema_is_refused(db_url, tmp_path):
    s = Store(db_url, images=tmp_path / "im")
    with s.write() as c:
        c.execute(
            update(S.settings).where(S.settings.c.key == "schema_version").values(value=str(M.SCHEMA_VERSION + 1))
        )
    s.close()
    with pytest.raises(StoreError, match="newer mmrb-studio"):
        Store(db_url, images=tmp_path / "im")


def test_unreachable_database_gets_clear_error(tmp_path):
    with pytest.raises(StoreError, match="cannot open the store"):
        Store("postgresql://nobody:pw@127.0.0.1:1/none", images=tmp_path)


def test_sqlite_pragmas(sqlite_store):
    with sqlite_store.read() as c:
        assert c.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_older_store_is_migrated_in_place(db_url, tmp_path, monkeypatch):
    s = Store(db_url, images=tmp_path / "im")
    _seed(s, 1)
    with s.write() as c:  # make it look like a store written before `pairs.reason` existed
        c.exec_driver_sql("ALTER TABLE pairs DROP COLUMN reason")
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="1"))
    s.close()
    monkeypatch.setattr(M, "MIGRATIONS", {2: [M.AddColumn("pairs", "reason")]})
    monkeypatch.setattr(M, "SCHEMA_VERSION", 2)
    s = Store(db_url, images=tmp_path / "im")
    assert s.get_setting("schema_version") == "2"
    assert [p.reason for p in s.pairs()] == [None]
    s.update_pair(s.pairs()[0].id, reason="kept")
    assert s.pairs()[0].reason == "kept"
    s.close()
    Store(db_url, images=tmp_path / "im").close()  # a second open finds nothing to do


def test_processes_opening_a_new_store_at_once_all_succeed(db_url, tmp_path):
    # a brand-new PostgreSQL database opened by several processes at the same moment raced on
    # the catalog (pg_type UniqueViolation) while creating the tables
    import subprocess
    import sys

    code = "import sys\nfrom curate.store import Store\nStore(sys.argv[1], images=sys.argv[2]).close()\nprint('ok')"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, db_url, str(tmp_path / "im")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err for _, err in results]
    with Store(db_url, images=tmp_path / "im") as s:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION)


@pytest.mark.parametrize(
    "query, limit",
    [
        pytest.param("?connect_timeout=1", 8, id="the-urls-timeout"),
        pytest.param("", 30, marks=pytest.mark.slow, id="the-default-10s"),
    ],
)
def test_a_database_host_that_never_answers_fails_instead_of_hanging(tmp_path, query, limit):
    import socket
    import time

    with socket.socket() as silent:  # accepts the TCP connection (kernel backlog), never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        t0 = time.monotonic()
        with pytest.raises(StoreError, match="cannot open the store"):
            Store(f"postgresql://u:pw@127.0.0.1:{port}/db{query}", images=tmp_path)
        assert time.monotonic() - t0 < limit


def test_save_label_new_and_edit_conflicts(store):
    from curate.store import NEW_LABEL

    _seed(store, 2)
    first = store.save_label(Label("p0", "ann", preference="first"), expected_revision=NEW_LABEL)
    assert first.revision == 1 and store.get_assignment("p0", "ann").state == "done"
    with pytest.raises(ConflictError, match="already labelled"):
        store.save_label(Label("p0", "ann", preference="second"))  # a new label by default
    with pytest.raises(ConflictError, match=r"changed since it was opened \(revision 1, expected 5\)"):
        store.save_label(Label("p0", "ann", preference="second"), expected_revision=5)
    with pytest.raises(ConflictError, match="no longer exists"):
        store.save_label(Label("p1", "ann", preference="second"), expected_revision=1)
    draft = store.save_label(Label("p0", "ann", preference="tie", status="draft"), expected_revision=1)
    assert draft.revision == 2 and store.get_assignment("p0", "ann").state == "open"  # a draft reopens it
    assert store.get_label("p0", "ann").preference == "tie" and store.get_label("p1", "ann") is None
    (h,) = store.label_history()
    assert (h.pair_id, h.annotator, h.revision, h.action, h.snapshot) == ("p0", "ann", 1, "edit", first)


def test_counts_and_tallies(store):
    _seed(store, 3)
    store.save_label(Label("p0", "ann", preference="first"))
    store.save_label(Label("p1", "ann", status="skipped"))
    c = store.counts()
    assert (c.items, c.candidates, c.pairs, c.annotators, c.assignments, c.labels, c.adjudications, c.judge_runs) == (
        3,
        6,
        3,
        1,
        3,
        2,
        0,
        0,
    )
    assert list(c.as_dict()) == [
        "items",
        "candidates",
        "pairs",
        "annotators",
        "assignments",
        "labels",
        "adjudications",
        "gold",
        "judge_runs",
    ]
    t = store.tallies()
    assert t.pairs_by_status == {"candidate": 3} and t.labels_by_status == {"submitted": 1, "skipped": 1}
    assert t.assignments_by_state == {"done": 2, "open": 1} and t.image_refs_by_status == {"missing": 3}
    assert t.labels_per_pair == {0: 2, 1: 1} and t.label_sources == {"app": 2}
    vqa = t.categories["vqa"]
    assert (vqa.items, vqa.candidates, vqa.pairs, vqa.selected, vqa.labels) == (3, 6, 3, 0, 1)
    assert [(r.item_id, r.status) for r in store.image_refs(stored=False, limit=2)] == [
        ("i0", "missing"),
        ("i1", "missing"),
    ]
    assert store.stored_image_uses() == []
    (w,) = store.annotator_work()
    assert (w.annotator, w.assigned, w.done) == ("ann", 3, 2)
    assert sorted((o.pair_id, o.assigned, o.submitted, o.waiting_on) for o in store.pair_overlap()) == [
        ("p0", 1, 1, ()),
        ("p1", 1, 0, ()),
        ("p2", 1, 0, ("ann",)),
    ]
    assert sorted((r.category, r.state, r.assignments) for r in store.progress_by_category()) == [
        ("vqa", "done", 2),
        ("vqa", "open", 1),
    ]


def test_sample_results_and_failures(store):
    from curate.model import SampleFailure
    from curate.store import params_key

    _seed(store, 2)
    pk = params_key({"t": 1})
    store.record_samples([], [SampleFailure("i0", "m", pk, 0, 3, "HTTP 500"), SampleFailure("i1", "m", pk, 0, 1, "x")])
    answer = Candidate(id="c0", item_id="i0", model="m", text="hi", params={"t": 1})
    store.record_samples([answer], [SampleFailure("i1", "m", pk, 0, 2, "timeout")])
    assert store.sample_failures() == [SampleFailure("i1", "m", pk, 0, 2, "timeout")]  # replaced, and i0's removed
    store.record_samples([Candidate(id="c0", item_id="i0", model="m", text="again", params={"t": 1})], [])
    assert ("i0", "m", pk, 0) in store.candidate_keys() and store.candidates(ids=["c0"])[0].text == "hi"


def test_the_queue_table_is_vacuumed_at_a_fixed_threshold(db_url, tmp_path):
    # dead queue-index entries slowed "next pair" on PostgreSQL as the store grew (see
    # store/migrations.QUEUE_VACUUM): new stores and migrated ones both get the fixed threshold
    s = Store(db_url, images=tmp_path / "im")
    with s.write() as c:
        if s.backend == "postgresql":
            c.exec_driver_sql(
                "ALTER TABLE assignments RESET (autovacuum_vacuum_threshold, "
                "autovacuum_vacuum_scale_factor, autovacuum_analyze_threshold, "
                "autovacuum_analyze_scale_factor, vacuum_index_cleanup)"
            )
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="3"))
    s.close()
    s = Store(db_url, images=tmp_path / "im")
    try:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION)
        if s.backend == "postgresql":
            with s.read() as c:
                opts = c.exec_driver_sql("SELECT reloptions FROM pg_class WHERE relname = 'assignments'").scalar()
            assert {
                "autovacuum_vacuum_scale_factor=0",
                "autovacuum_vacuum_threshold=1000",
                "vacuum_index_cleanup=on",
            } <= set(opts)
    finally:
        s.close()


def test_a_migrated_store_loses_the_redundant_candidate_index(db_url, tmp_path):
    # uq_candidate_key leads with item_id: stores made before version 8 also had an index on
    # item_id alone, which every imported candidate paid for
    s = Store(db_url, images=tmp_path / "im")
    _seed(s, 1)
    with s.write() as c:
        c.exec_driver_sql("CREATE INDEX ix_candidates_item ON candidates (item_id)")
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="7"))
    s.close()

    def candidate_indexes(store: Store) -> set[str]:
        with store.read() as c:
            return {i["name"] for i in inspect(c).get_indexes("candidates")}

    s = Store(db_url, images=tmp_path / "im")
    try:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION)
        assert "ix_candidates_item" not in candidate_indexes(s)
        assert [c.id for c in s.candidates(item_id="i0")] == ["i0/a", "i0/b"]  # found through uq_candidate_key
    finally:
        s.close()
    with Store(db_url, images=tmp_path / "im2") as fresh:  # the same database: nothing left to drop
        assert "ix_candidates_item" not in candidate_indexes(fresh)


@pytest.mark.slow
def test_a_first_import_waits_briefly_for_a_reader_then_keeps_the_indexes(pg_url, tmp_path):
    """PostgreSQL: a first import drops the indexes and keys of the tables it fills (their
    locks held until it ends). A reader in an open transaction holds a lock on one of them:
    the import does not wait for it past a moment, and runs with every index and key kept.
    Without that bound it would wait until the reader ends (here: never)."""
    import threading

    import psycopg

    from curate.ingest import ingest_pairs

    store = Store(pg_url, images=tmp_path / "images")
    before = upkeep(store)
    reader = psycopg.connect(pg_url)
    reader.execute("SELECT count(*) FROM pairs")  # its transaction stays open
    done: list[object] = []
    path = text_pairs_file(tmp_path / "p.jsonl")
    t = threading.Thread(target=lambda: done.append(ingest_pairs(store, path, "vlrewardbench-text")))
    t.start()
    t.join(30)
    finished = not t.is_alive()
    reader.close()  # lets a stuck import go on, so the test ends either way
    t.join()
    assert finished, "the import waited for the reader"
    assert done[0].pairs == 5
    assert store.counts().pairs == 5 and upkeep(store) == before
    store.close()


def test_a_first_import_by_a_role_that_may_not_alter_the_tables_keeps_the_indexes(pg_url, tmp_path):
    """PostgreSQL: a role that may write the store's rows but not alter its tables (a team's
    app role) imports into an empty store with every index and key kept."""
    import uuid

    import psycopg

    from curate.ingest import ingest_pairs

    owner = Store(pg_url, images=tmp_path / "images")  # the tables, made by their owner
    before = upkeep(owner)
    role = "mmrb_t_writer_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
        c.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
        c.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    try:
        user_url = pg_url.replace(pg_url.split("//", 1)[1].split("@", 1)[0], f"{role}:pw", 1)
        with Store(user_url, images=tmp_path / "images") as store:
            assert ingest_pairs(store, text_pairs_file(tmp_path / "p.jsonl"), "vlrewardbench-text").pairs == 5
            assert store.counts().pairs == 5
        assert upkeep(owner) == before
    finally:
        owner.close()
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute(f"REASSIGN OWNED BY {role} TO CURRENT_USER")
            c.execute(f"DROP OWNED BY {role}")
            c.execute(f"DROP ROLE {role}")


@pytest.mark.slow
def test_a_first_import_killed_on_postgresql_leaves_the_indexes_and_keys(pg_url, tmp_path):
    """`mmrb ingest` killed (SIGKILL, no clean-up) while its first import into an empty
    PostgreSQL store holds the tables without their indexes and keys: the server rolls the
    transaction back, and the store has every index and key and no row."""
    import subprocess
    import sys
    import time

    import psycopg

    store = Store(pg_url, images=tmp_path / "images")
    before = upkeep(store)
    path = text_pairs_file(tmp_path / "p.jsonl", n=100_000)
    cmd = [sys.executable, "-m", "curate.cli", "ingest", "pairs", str(path), "--format", "vlrewardbench-text"]
    cmd += ["--db", pg_url, "--images", str(tmp_path / "images")]
    held = (
        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
        " WHERE c.relname = 'pairs' AND l.mode = 'AccessExclusiveLock' AND l.granted"
    )
    importer = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with psycopg.connect(pg_url, autocommit=True) as c:
        deadline = time.monotonic() + 60
        while not c.execute(held).fetchone()[0] and importer.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        running = importer.poll() is None
        importer.kill()
        importer.wait()
        assert running, "the import ended before it could be killed"
        deadline = time.monotonic() + 30
        while c.execute(held).fetchone()[0] and time.monotonic() < deadline:  # the server notices
            time.sleep(0.05)
    assert upkeep(store) == before
    assert store.counts().pairs == 0
    store.close()


def test_label_counts_agree_with_the_labels_they_count(store):
    """label_counts is labels() counted per pair (its status and control filters included),
    and the categories filter keeps the labels of those categories' pairs only."""
    _seed(store, 3)
    store.add_items([Item(id="i9", prompt="?", category="reasoning")])
    store.add_candidates([Candidate(id=f"i9/{m}", item_id="i9", model=m, text=m) for m in "ab"])
    store.add_pairs([Pair(id="p9", item_id="i9", first_id="i9/a", second_id="i9/b", origin="test")])
    for who in ("b", "c", "d"):
        store.add_annotator(Annotator(who))
    store.add_assignments([Assignment("p1", "d", "first", 9, is_gold=True)])  # d's label of p1 is a control task
    store.add_labels(
        [
            Label("p0", "ann", preference="first"),
            Label("p0", "b", preference="second", flag="broken_image"),
            Label("p1", "ann", preference="first", flag=""),  # an empty flag is no flag
            Label("p1", "d", preference="first", flag="unsafe"),
            Label("p2", "b", preference="tie", status="draft"),
            Label("p9", "c", preference="second"),
            Label("p9", "b", preference="first"),
        ]
    )
    for status in ("submitted", "draft", None):
        for control in (False, True, None):
            labels = store.labels(status=status, control=control)
            expect: dict[str, tuple[int, bool]] = {}
            for lab in labels:
                n, flagged = expect.get(lab.pair_id, (0, False))
                expect[lab.pair_id] = (n + 1, flagged or bool(lab.flag))
            assert store.label_counts(status=status, control=control) == expect
    counted = store.label_counts(status="submitted", control=False)
    assert counted == {"p0": (2, True), "p1": (1, False), "p9": (2, False)}
    reasoning = store.labels(categories=["reasoning"])
    assert [(lab.pair_id, lab.annotator) for lab in reasoning] == [("p9", "b"), ("p9", "c")]
    assert store.labels(categories=[]) == []
