"""Assignments (annotators' queues), labels with their history, and adjudications."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Final, Literal

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from ..errors import InputError, InputProblem
from ..lookalike import text_problem
from ..model import Adjudication, Assignment, Label, LabelHistoryEntry
from . import schema as S
from .base import ConflictError, Conn, StoreBase
from .engine import dumps, dumps_mapping, insert_chunked, insert_ignoring, loads, now, records
from .items import shallow

NewLabel = Literal["new"]
NEW_LABEL: Final[NewLabel] = "new"  # save_label: the annotator has no label on the pair yet


@dataclass(frozen=True)
class QueueProgress:
    """One annotator's queue: pairs assigned, done (labelled or skipped), and of those skipped."""

    done: int
    skipped: int
    assigned: int

    @property
    def labelled(self) -> int:
        """Done with a label, not a skip: a skip is no label."""
        return self.done - self.skipped


class LabelStore(StoreBase):
    # -- assignments ---------------------------------------------------------------------
    def add_assignments(self, assignments: Iterable[Assignment], conn: Conn | None = None) -> int:
        ts = now()
        rows = [
            dict(
                pair_id=a.pair_id,
                annotator=a.annotator,
                left=a.left,
                seq=a.seq,
                batch=a.batch,
                is_gold=a.is_gold,
                state=a.state,
                created_at=ts,
                qualification=a.qualification,
            )
            for a in assignments
        ]
        with self._w(conn) as c:
            insert_chunked(c, S.assignments, rows)
        return len(rows)

    def get_assignment(self, pair_id: str, annotator: str, conn: Conn | None = None) -> Assignment | None:
        with self._r(conn) as c:
            r = (
                c.execute(
                    select(S.assignments).where(
                        S.assignments.c.pair_id == pair_id, S.assignments.c.annotator == annotator
                    )
                )
                .mappings()
                .first()
            )
        return _assignment(r) if r else None

    def assignments(
        self, *, annotator: str | None = None, pair_id: str | None = None, conn: Conn | None = None
    ) -> list[Assignment]:
        q = select(S.assignments).order_by(S.assignments.c.annotator, S.assignments.c.seq)
        if annotator is not None:
            q = q.where(S.assignments.c.annotator == annotator)
        if pair_id is not None:
            q = q.where(S.assignments.c.pair_id == pair_id)
        with self._r(conn) as c:
            return [_assignment(r) for r in c.execute(q).mappings()]

    def next_assignment(
        self, annotator: str, conn: Conn | None = None, *, after_seq: int | None = None
    ) -> Assignment | None:
        """The annotator's next open pair, straight from the (annotator, state, seq) index;
        ``after_seq``: the one after that place in the queue (the app warms its images)."""
        q = (
            select(S.assignments)
            .where(S.assignments.c.annotator == annotator, S.assignments.c.state == "open")
            .order_by(S.assignments.c.seq)
            .limit(1)
        )
        if after_seq is not None:
            q = q.where(S.assignments.c.seq > after_seq)
        with self._autocommit(conn) as c:
            r = c.execute(q).mappings().first()
        return _assignment(r) if r else None

    def progress(self, annotator: str, conn: Conn | None = None) -> tuple[int, int]:
        """(done, assigned) for one annotator."""
        with self._r(conn) as c:
            rows = c.execute(
                select(S.assignments.c.state, func.count())
                .where(S.assignments.c.annotator == annotator)
                .group_by(S.assignments.c.state)
            ).all()
        counts: dict[str, int] = dict(rows)
        return counts.get("done", 0), sum(counts.values())

    def queue_progress(self, annotator: str, conn: Conn | None = None) -> QueueProgress:
        """``progress`` with the skips among the done pairs counted apart (one read)."""
        a, lab = S.assignments.c, S.labels.c
        with self._r(conn) as c:
            done, assigned = self.progress(annotator, conn=c)
            skipped = c.execute(
                select(func.count())
                .select_from(S.labels.join(S.assignments, (a.pair_id == lab.pair_id) & (a.annotator == lab.annotator)))
                .where(lab.annotator == annotator, lab.status == "skipped", a.state == "done")
            ).scalar_one()
        return QueueProgress(done, int(skipped), assigned)

    # -- labels --------------------------------------------------------------------------
    def get_label(self, pair_id: str, annotator: str, conn: Conn | None = None) -> Label | None:
        with self._r(conn) as c:
            r = (
                c.execute(select(S.labels).where(S.labels.c.pair_id == pair_id, S.labels.c.annotator == annotator))
                .mappings()
                .first()
            )
        return _label(r) if r else None

    def labels(
        self,
        *,
        pair_id: str | None = None,
        annotator: str | None = None,
        status: str | None = "submitted",
        control: bool | None = None,
        conn: Conn | None = None,
    ) -> list[Label]:
        """Labels in (pair, annotator) order. ``control``: True only the labels of control
        tasks, False none of them (what overlap, agreement and the build count), None all."""
        q = select(S.labels).order_by(S.labels.c.pair_id, S.labels.c.annotator)
        if control is not None:
            a = S.assignments.c
            is_control = (
                select(a.pair_id)
                .where(a.pair_id == S.labels.c.pair_id, a.annotator == S.labels.c.annotator, a.is_gold.is_(True))
                .exists()
            )
            q = q.where(is_control if control else ~is_control)
        if pair_id is not None:
            q = q.where(S.labels.c.pair_id == pair_id)
        if annotator is not None:
            q = q.where(S.labels.c.annotator == annotator)
        if status is not None:
            q = q.where(S.labels.c.status == status)
        with self._r(conn) as c:
            return [_label(r) for r in records(c.execute(q))]

    def labelled_annotators(self, conn: Conn | None = None) -> set[str]:
        """Every annotator with a label (any status)."""
        with self._r(conn) as c:
            return set(c.scalars(select(S.labels.c.annotator).distinct()))

    def add_labels(self, labels: Iterable[Label], conn: Conn | None = None) -> int:
        """Bulk insert of new labels (imports): revision 1, no history, assignments untouched."""
        labels = list(labels)
        for lb in labels:
            refuse_unstorable(f"label of pair {lb.pair_id!r} by {lb.annotator!r}", lb)
        ts = now()
        rows = [
            _label_row(replace(lb, revision=1, created_at=lb.created_at or ts, updated_at=lb.updated_at or ts))
            for lb in labels
        ]
        with self._w(conn) as c:
            insert_chunked(c, S.labels, rows)
        return len(rows)

    def import_labels(self, labels: Iterable[Label], conn: Conn | None = None) -> int:
        """``add_labels``, and each submitted or skipped label closes its annotator's open
        assignment of the pair, as ``save_label`` does (a label file: ``mmrb labels import``)."""
        labels = list(labels)
        n = self.add_labels(labels, conn=conn)
        a = S.assignments.c
        done = [{"p": lb.pair_id, "n": lb.annotator} for lb in labels if lb.status in ("submitted", "skipped")]
        if done:
            stmt = (
                update(S.assignments)
                .where(a.pair_id == bindparam("p"), a.annotator == bindparam("n"), a.state == "open")
                .values(state="done")
            )
            with self._w(conn) as c:
                c.execute(stmt, done)
        return n

    def label_keys(self, conn: Conn | None = None) -> set[tuple[str, str]]:
        """(pair id, annotator) of every label, drafts included."""
        L = S.labels.c
        with self._r(conn) as c:
            return {(p, n) for p, n in c.execute(select(L.pair_id, L.annotator))}

    def raw_labels(self, conn: Conn | None = None) -> list[tuple[Label, str, str | None, bool]]:
        """Every submitted or skipped label (drafts never) with its pair's item, the item's
        category and whether it was a control task, in (pair, annotator) order: the raw-label
        export (curate/rawlabels.py)."""
        L, P, It, A = S.labels.c, S.pairs.c, S.items.c, S.assignments.c
        control = (
            select(A.pair_id)
            .where(A.pair_id == L.pair_id, A.annotator == L.annotator, A.is_gold.is_(True))
            .exists()
            .label("_control")
        )
        q = (
            select(S.labels, P.item_id.label("_item"), It.category.label("_category"), control)
            .select_from(S.labels.join(S.pairs, P.id == L.pair_id).join(S.items, It.id == P.item_id))
            .where(L.status.in_(("submitted", "skipped")))
            .order_by(L.pair_id, L.annotator)
        )
        out = []
        with self._r(conn) as c:
            for r in records(c.execute(q)):
                item, category, is_control = r.pop("_item"), r.pop("_category"), bool(r.pop("_control"))
                out.append((_label(r), item, category, is_control))
        return out

    def save_label(
        self, label: Label, *, expected_revision: int | NewLabel = NEW_LABEL, conn: Conn | None = None
    ) -> Label:
        """Save a label; an earlier version goes to the history.

        ``expected_revision`` is ``NEW_LABEL`` for a first label (a label of that annotator
        on that pair already there means another tab saved first), else the revision the
        caller opened and edited (another revision, or no label any more, means someone else
        saved or withdrew it since). Either conflict raises ConflictError and writes nothing.
        Submitting or skipping closes the assignment in the same transaction. A text no
        store can keep (a NUL) raises InputError on both backends, and writes nothing.
        """
        refuse_unstorable(f"label of pair {label.pair_id!r} by {label.annotator!r}", label)
        ts = now()
        if expected_revision == NEW_LABEL:
            return self._save_new_label(label, ts, conn)
        where = (S.labels.c.pair_id == label.pair_id, S.labels.c.annotator == label.annotator)
        with self._w(conn) as c:
            cur = c.execute(select(S.labels).where(*where)).mappings().first()
            if cur is None:
                raise ConflictError(f"label for pair {label.pair_id} by {label.annotator} no longer exists")
            if cur["revision"] != expected_revision:
                raise ConflictError(
                    f"label for pair {label.pair_id} changed since it was opened "
                    f"(revision {cur['revision']}, expected {expected_revision})"
                )
            c.execute(
                insert(S.label_history).values(
                    pair_id=label.pair_id,
                    annotator=label.annotator,
                    revision=cur["revision"],
                    snapshot=dumps(asdict(_label(cur))),
                    replaced_at=ts,
                    action="edit",
                )
            )
            saved = replace(
                label, revision=cur["revision"] + 1, created_at=cur["created_at"], updated_at=label.updated_at or ts
            )
            n = c.execute(
                update(S.labels).where(*where, S.labels.c.revision == cur["revision"]).values(**_label_row(saved))
            ).rowcount
            if n != 1:
                raise ConflictError(f"label for pair {label.pair_id} changed while saving")
            state = "done" if saved.status in ("submitted", "skipped") else "open"
            c.execute(
                update(S.assignments)
                .where(S.assignments.c.pair_id == label.pair_id, S.assignments.c.annotator == label.annotator)
                .values(state=state)
            )
        return saved

    def _save_new_label(self, label: Label, ts: str, conn: Conn | None) -> Label:
        """The common case (a first submit): one INSERT ... ON CONFLICT DO NOTHING instead
        of SELECT + SAVEPOINT + INSERT + RELEASE; on PostgreSQL each is a round trip, and
        together they missed the 5 ms target (bench/store.py)."""
        saved = replace(label, revision=1, created_at=label.created_at or ts, updated_at=label.updated_at or ts)
        with self._w(conn) as c:
            # RETURNING: rowcount is not reliable here on psycopg
            stmt = insert_ignoring(c, S.labels).values(**_label_row(saved)).returning(S.labels.c.revision)
            try:
                inserted = c.execute(stmt).first()
            except IntegrityError:  # e.g. the pair is gone
                raise ConflictError(f"pair {label.pair_id} can no longer be labelled by {label.annotator}") from None
            if inserted is None:
                raise ConflictError(f"pair {label.pair_id} was already labelled by {label.annotator} (another tab?)")
            if saved.status in ("submitted", "skipped"):
                c.execute(
                    update(S.assignments)
                    .where(S.assignments.c.pair_id == label.pair_id, S.assignments.c.annotator == label.annotator)
                    .values(state="done")
                )
        return saved

    def undo_last(self, annotator: str, conn: Conn | None = None) -> Label | None:
        """Withdraw the annotator's most recent label; it goes to the history and the pair
        returns to the front of their queue. Returns the withdrawn label."""
        with self._w(conn) as c:
            r = (
                c.execute(
                    select(S.labels)
                    .where(S.labels.c.annotator == annotator, S.labels.c.source == "app")
                    .order_by(S.labels.c.updated_at.desc())
                    .limit(1)
                )
                .mappings()
                .first()
            )
            if r is None:
                return None
            last = _label(r)
            c.execute(
                insert(S.label_history).values(
                    pair_id=last.pair_id,
                    annotator=annotator,
                    revision=last.revision,
                    snapshot=dumps(asdict(last)),
                    replaced_at=now(),
                    action="undo",
                )
            )
            c.execute(S.labels.delete().where(S.labels.c.pair_id == last.pair_id, S.labels.c.annotator == annotator))
            c.execute(
                update(S.assignments)
                .where(S.assignments.c.pair_id == last.pair_id, S.assignments.c.annotator == annotator)
                .values(state="open")
            )
            return last

    def label_history(
        self, pair_id: str | None = None, annotator: str | None = None, conn: Conn | None = None
    ) -> list[LabelHistoryEntry]:
        """Earlier versions of labels, oldest first (of one pair and/or annotator when given)."""
        h = S.label_history.c
        q = select(S.label_history).order_by(h.id)
        if pair_id is not None:
            q = q.where(h.pair_id == pair_id)
        if annotator is not None:
            q = q.where(h.annotator == annotator)
        with self._r(conn) as c:
            return [
                LabelHistoryEntry(
                    r["pair_id"],
                    r["annotator"],
                    r["revision"],
                    Label(**loads(r["snapshot"])),
                    r["replaced_at"],
                    r["action"],
                )
                for r in c.execute(q).mappings()
            ]

    # -- adjudication --------------------------------------------------------------------
    def set_adjudication(self, adj: Adjudication, conn: Conn | None = None) -> None:
        refuse_unstorable(f"adjudication of pair {adj.pair_id!r}", adj)
        row = dict(asdict(adj), created_at=adj.created_at or now())
        row["ratings"] = dumps_mapping(adj.ratings) if adj.ratings else None
        with self._w(conn) as c:
            c.execute(S.adjudications.delete().where(S.adjudications.c.pair_id == adj.pair_id))
            c.execute(insert(S.adjudications).values(**row))

    def adjudications(self, conn: Conn | None = None) -> dict[str, Adjudication]:
        with self._r(conn) as c:
            rows = c.execute(select(S.adjudications)).mappings().all()
        return {
            r["pair_id"]: Adjudication(
                **{**r, "exclude": bool(r["exclude"]), "ratings": loads(r["ratings"]) if r["ratings"] else {}}
            )
            for r in rows
        }


def refuse_unstorable(what: str, record: object) -> None:
    """An InputError naming each text field of ``record`` (a dataclass) that the store cannot
    keep alike on both backends (curate/lookalike.py: ``text_problem``): PostgreSQL refuses a
    NUL with a DataError, which the app would take for a failure of the database, and SQLite
    would keep it. ``what`` names the record where a file would be named."""
    problems = [
        InputProblem(what, None, f.name, why)
        for f in fields(record)  # type: ignore[arg-type]
        if isinstance(v := getattr(record, f.name), str) and (why := text_problem(v))
    ]
    if problems:
        raise InputError(problems)


def _assignment(r: Mapping) -> Assignment:
    return Assignment(
        pair_id=r["pair_id"],
        annotator=r["annotator"],
        left=r["left"],
        seq=r["seq"],
        batch=r["batch"],
        is_gold=bool(r["is_gold"]),
        state=r["state"],
        qualification=bool(r["qualification"]),
    )


def _label_row(label: Label) -> dict:
    row = shallow(label)
    row["ratings"] = dumps_mapping(label.ratings)
    return row


def _label(r: Mapping) -> Label:
    d = r if isinstance(r, dict) else dict(r)  # a dict here is a row of records(), ours to change
    d["ratings"] = loads(d["ratings"])
    return Label(**d)
