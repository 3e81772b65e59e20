"""Counts of what a store holds: the figures behind ``mmrb status`` (curate/status.py) and
the lead's progress pages (annotate/admin.py)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, fields

from sqlalchemy import Column, Connection, Table, case, func, select

from ..images import stored_name
from . import schema as S
from .base import Conn, StoreBase


@dataclass(frozen=True)
class StageCounts:
    """Rows per stage, in pipeline order."""

    items: int = 0
    candidates: int = 0
    pairs: int = 0
    annotators: int = 0
    assignments: int = 0
    labels: int = 0
    adjudications: int = 0
    gold: int = 0  # pairs with a gold answer in the gold table
    judge_runs: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class CategoryCounts:
    items: int = 0
    candidates: int = 0
    pairs: int = 0
    selected: int = 0
    labels: int = 0  # submitted labels on this category's pairs


@dataclass(frozen=True)
class Tallies:
    pairs_by_status: dict[str, int]
    labels_by_status: dict[str, int]
    label_sources: dict[str, int]
    assignments_by_state: dict[str, int]
    image_refs_by_status: dict[str, int]  # item image references, by status as imported
    response_image_refs_by_status: dict[str, int]  # the images in candidate responses, likewise
    categories: dict[str, CategoryCounts]  # sorted by name
    labels_per_pair: dict[int, int]  # n submitted labels -> n pairs


@dataclass(frozen=True)
class StoredImageUse:
    """A stored image file and how many references (status ok) point at it: items', or
    with ``responses`` candidate responses'. ``path``: its name in the image folder, by its
    content hash and format (``images.stored_name``; "" when these cannot name a file)."""

    sha256: str
    path: str
    bytes: int
    refs: int


@dataclass(frozen=True)
class ImageRefRow:
    item_id: str  # a response image's: its candidate's id
    source: str
    status: str
    sha256: str | None


@dataclass(frozen=True)
class AnnotatorWork:
    """An annotator's assignments, and the labels they gave (submitted or skipped)."""

    annotator: str
    assigned: int
    done: int


@dataclass(frozen=True)
class LabelActivity:
    """One label, as much of it as progress figures need."""

    annotator: str
    status: str
    flag: str | None
    seconds: float | None
    updated_at: str
    created_at: str  # when the annotator first saved it (an edit keeps it)


@dataclass(frozen=True)
class LabelTally:
    """An annotator's labels of one status, and how many of them are flagged."""

    annotator: str
    status: str
    labels: int
    flagged: int


@dataclass(frozen=True)
class CategoryProgress:
    category: str
    state: str
    assignments: int


@dataclass(frozen=True)
class PairOverlap:
    """How many annotators a pair is assigned to, how many submitted, who it waits on."""

    pair_id: str
    assigned: int
    submitted: int
    waiting_on: tuple[str, ...]  # annotators whose assignment is open, sorted


class CountStore(StoreBase):
    def counts(self, conn: Conn | None = None) -> StageCounts:
        tables = [S.metadata.tables[f.name] for f in fields(StageCounts)]
        q = select(*(select(func.count()).select_from(t).scalar_subquery() for t in tables))
        with self._r(conn) as c:
            return StageCounts(*c.execute(q).one())

    def change_stamp(self, conn: Conn | None = None) -> tuple:
        """A value that changes whenever a row is added to or removed from any stage, or a
        label is edited: a cache key for figures computed over the labels."""
        latest = select(func.max(S.labels.c.updated_at)).scalar_subquery()
        edits = select(func.count()).select_from(S.label_history).scalar_subquery()
        with self._r(conn) as c:
            counts = self.counts(conn=c)
            return (*counts.as_dict().values(), *c.execute(select(latest, edits)).one())

    def tallies(self, conn: Conn | None = None) -> Tallies:
        cat = S.items.c.category
        per_category = {
            "items": select(cat, func.count()).group_by(cat),
            "candidates": select(cat, func.count()).select_from(S.candidates.join(S.items)).group_by(cat),
            "pairs": select(cat, func.count()).select_from(S.pairs.join(S.items)).group_by(cat),
            "selected": select(cat, func.count())
            .select_from(S.pairs.join(S.items))
            .where(S.pairs.c.status == "selected")
            .group_by(cat),
            "labels": select(cat, func.count())
            .select_from(S.labels.join(S.pairs).join(S.items))
            .where(S.labels.c.status == "submitted")
            .group_by(cat),
        }
        per_pair = (
            select(S.pairs.c.id, func.count(S.labels.c.pair_id).label("n"))
            .select_from(
                S.pairs.outerjoin(S.labels, (S.labels.c.pair_id == S.pairs.c.id) & (S.labels.c.status == "submitted"))
            )
            .group_by(S.pairs.c.id)
            .subquery()
        )
        with self._r(conn) as c:
            per: dict[str, dict[str, int]] = {}
            for name, q in per_category.items():
                for k, v in c.execute(q).all():
                    per.setdefault(k, {})[name] = v
            return Tallies(
                pairs_by_status=_grouped(c, S.pairs, S.pairs.c.status),
                labels_by_status=_grouped(c, S.labels, S.labels.c.status),
                label_sources=_grouped(c, S.labels, S.labels.c.source),
                assignments_by_state=_grouped(c, S.assignments, S.assignments.c.state),
                image_refs_by_status=_grouped(c, S.item_images, S.item_images.c.status),
                response_image_refs_by_status={
                    k: v
                    for k, v in c.execute(
                        select(S.candidate_parts.c.status, func.count())
                        .where(S.candidate_parts.c.kind == "image")
                        .group_by(S.candidate_parts.c.status)
                    ).all()
                },
                categories={k: CategoryCounts(**v) for k, v in sorted(per.items())},
                labels_per_pair={
                    int(n): k
                    for n, k in c.execute(
                        select(per_pair.c.n, func.count()).group_by(per_pair.c.n).order_by(per_pair.c.n)
                    ).all()
                },
            )

    # -- images behind item references ---------------------------------------------------
    def stored_image_uses(self, conn: Conn | None = None, *, responses: bool = False) -> list[StoredImageUse]:
        i = S.images.c
        refs = S.candidate_parts if responses else S.item_images
        q = (
            select(i.sha256, i.format, i.bytes, func.count())
            .select_from(refs.join(S.images, i.sha256 == refs.c.sha256))
            .where(refs.c.status == "ok")
            .group_by(i.sha256, i.format, i.bytes)
        )
        if responses:
            q = q.where(refs.c.kind == "image")
        with self._r(conn) as c:
            return [StoredImageUse(sha, stored_name(sha, fmt) or "", size, n) for sha, fmt, size, n in c.execute(q)]

    def image_refs(
        self,
        *,
        stored: bool,
        sha256s: Collection[str] | None = None,
        limit: int,
        responses: bool = False,
        conn: Conn | None = None,
    ) -> list[ImageRefRow]:
        """The first ``limit`` item image references (by item, then position): with
        ``stored``, those stored as ok (of the given files when ``sha256s``); else those
        recorded as missing, corrupt or too large. ``responses``: the images of candidate
        responses instead (by candidate, then position)."""
        if responses:
            p = S.candidate_parts.c
            q = select(p.candidate_id, p.source, p.status, p.sha256).where(p.kind == "image")
            q = q.where(p.status == "ok") if stored else q.where(p.status != "ok")
            if sha256s is not None:
                q = q.where(p.sha256.in_(sorted(sha256s)))
            with self._r(conn) as c:
                return [ImageRefRow(*row) for row in c.execute(q.order_by(p.candidate_id, p.position).limit(limit))]
        r = S.item_images.c
        q = select(r.item_id, r.source, r.status, r.sha256)
        q = q.where(r.status == "ok") if stored else q.where(r.status != "ok")
        if sha256s is not None:
            q = q.where(r.sha256.in_(sorted(sha256s)))
        with self._r(conn) as c:
            return [ImageRefRow(*row) for row in c.execute(q.order_by(r.item_id, r.position).limit(limit))]

    # -- the lead's progress pages ---------------------------------------------------------
    def annotator_work(self, conn: Conn | None = None) -> list[AnnotatorWork]:
        a = S.assignments.c
        q = (
            select(a.annotator, func.count(), func.sum(case((a.state == "done", 1), else_=0)))
            .group_by(a.annotator)
            .order_by(a.annotator)
        )
        with self._r(conn) as c:
            return [AnnotatorWork(name, n, int(done or 0)) for name, n, done in c.execute(q)]

    def label_activity(self, conn: Conn | None = None) -> list[LabelActivity]:
        lc = S.labels.c
        with self._r(conn) as c:
            return [
                LabelActivity(*row)
                for row in c.execute(select(lc.annotator, lc.status, lc.flag, lc.seconds, lc.updated_at, lc.created_at))
            ]

    def label_tallies(self, conn: Conn | None = None, *, plain_submitted: bool = True) -> list[LabelTally]:
        """Labels per annotator and status, counted in the database (not a row per label).
        Without ``plain_submitted``, submitted labels without a flag are left out (whoever
        has counted the submitted labels already: the grouping of the rest is cheap)."""
        lc = S.labels.c
        is_flagged = (lc.flag.is_not(None)) & (lc.flag != "")
        flagged = func.sum(case((is_flagged, 1), else_=0))
        q = select(lc.annotator, lc.status, func.count(), flagged).group_by(lc.annotator, lc.status)
        if not plain_submitted:
            q = q.where((lc.status != "submitted") | is_flagged)
        with self._r(conn) as c:
            return [LabelTally(a, st, int(n), int(f or 0)) for a, st, n, f in c.execute(q)]

    def submitted_since(self, since: str, conn: Conn | None = None) -> list[tuple[str, str]]:
        """(annotator, updated_at) of the submitted labels whose ``updated_at`` text sorts at or
        after ``since`` (a date, ``YYYY-MM-DD``: every ISO time of that day or later does)."""
        lc = S.labels.c
        q = select(lc.annotator, lc.updated_at).where(lc.status == "submitted", lc.updated_at >= since)
        with self._r(conn) as c:
            return [(a, t) for a, t in c.execute(q)]

    def progress_by_category(self, conn: Conn | None = None) -> list[CategoryProgress]:
        q = (
            select(S.items.c.category, S.assignments.c.state, func.count())
            .select_from(
                S.assignments.join(S.pairs, S.pairs.c.id == S.assignments.c.pair_id).join(
                    S.items, S.items.c.id == S.pairs.c.item_id
                )
            )
            .group_by(S.items.c.category, S.assignments.c.state)
        )
        with self._r(conn) as c:
            return [CategoryProgress(*row) for row in c.execute(q)]

    def pair_overlap(self, conn: Conn | None = None) -> list[PairOverlap]:
        """Every assigned pair, in the order the database groups them. Control tasks and
        their labels count toward no pair's overlap."""
        a, lc = S.assignments.c, S.labels.c
        regular = a.is_gold.is_(False)
        control_label = (
            select(a.pair_id).where(a.pair_id == lc.pair_id, a.annotator == lc.annotator, a.is_gold.is_(True)).exists()
        )
        with self._r(conn) as c:
            assigned = c.execute(select(a.pair_id, func.count()).where(regular).group_by(a.pair_id)).all()
            submitted: dict[str, int] = dict(
                c.execute(
                    select(lc.pair_id, func.count())
                    .where(lc.status == "submitted", ~control_label)
                    .group_by(lc.pair_id)
                ).all()
            )
            waiting: dict[str, list[str]] = {}
            for pid, who in c.execute(select(a.pair_id, a.annotator).where(a.state == "open", regular)):
                waiting.setdefault(pid, []).append(who)
        return [PairOverlap(pid, n, submitted.get(pid, 0), tuple(sorted(waiting.get(pid, ())))) for pid, n in assigned]

    def short_pairs(self, k: int | None = None, conn: Conn | None = None) -> list[PairOverlap]:
        """The assigned pairs with fewer submitted labels than ``k`` (else than annotators
        assigned), in pair id order, counted as :meth:`pair_overlap` counts them: the
        comparison in the database, so a store of 200,000 pairs, all but a few complete,
        sends a few rows rather than a row per pair."""
        a, lc = S.assignments.c, S.labels.c
        regular = a.is_gold.is_(False)
        assigned = select(a.pair_id, func.count().label("n")).where(regular).group_by(a.pair_id).subquery()
        # every submitted label less those of control tasks, the latter counted from the few
        # control assignments by key (a test per label of whether its assignment is a control
        # task cost 0.12 s more at 600,000 labels)
        submitted = (
            select(lc.pair_id, func.count().label("n")).where(lc.status == "submitted").group_by(lc.pair_id).subquery()
        )
        label_of = select(lc.pair_id).where(
            lc.pair_id == a.pair_id, lc.annotator == a.annotator, lc.status == "submitted"
        )
        control = (
            select(a.pair_id, func.count().label("n"))
            .where(a.is_gold.is_(True), label_of.exists())
            .group_by(a.pair_id)
            .subquery()
        )
        done = func.coalesce(submitted.c.n, 0) - func.coalesce(control.c.n, 0)
        q = (
            select(assigned.c.pair_id, assigned.c.n, done)
            .select_from(
                assigned.outerjoin(submitted, submitted.c.pair_id == assigned.c.pair_id).outerjoin(
                    control, control.c.pair_id == assigned.c.pair_id
                )
            )
            .where(done < (assigned.c.n if k is None else k))
            .order_by(assigned.c.pair_id)
        )
        with self._r(conn) as c:
            short = c.execute(q).all()
            wanted = {pid for pid, _, _ in short}
            waiting: dict[str, list[str]] = {}
            for pid, who in c.execute(select(a.pair_id, a.annotator).where(a.state == "open", regular)):
                if pid in wanted:
                    waiting.setdefault(pid, []).append(who)
        return [PairOverlap(pid, n, done, tuple(sorted(waiting.get(pid, ())))) for pid, n, done in short]


def _grouped(conn: Connection, table: Table, col: Column) -> dict[str, int]:
    return {k: v for k, v in conn.execute(select(col, func.count()).select_from(table).group_by(col)).all()}
