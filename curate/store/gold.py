"""Gold answers (model.Gold) and which labels are control tasks.

Gold is read by the lead's figures, the control tasks' scoring and the build only: nothing
here is called on an annotator's path (annotate/queue.py reads assignments and pairs, never
this table).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import func, select

from ..model import Gold
from . import schema as S
from .base import Conn, StoreBase
from .engine import dumps_mapping, insert_chunked, loads, now
from .labels import refuse_unstorable


class GoldStore(StoreBase):
    def set_gold(self, golds: Iterable[Gold], conn: Conn | None = None) -> int:
        """Store gold answers, replacing a pair's earlier one, all in one transaction. A text
        no store can keep (a NUL) raises InputError on both backends, and writes nothing."""
        golds = list(golds)
        for g in golds:
            refuse_unstorable(f"gold of pair {g.pair_id!r}", g)
        ts = now()
        rows = [
            dict(
                pair_id=g.pair_id,
                source=g.source,
                preference=g.preference,
                correctness_first=g.correctness_first,
                correctness_second=g.correctness_second,
                note=g.note,
                created_at=g.created_at or ts,
                ratings=dumps_mapping(g.ratings) if g.ratings else None,
            )
            for g in golds
        ]
        with self._w(conn) as c:
            ids = [r["pair_id"] for r in rows]
            for start in range(0, len(ids), 500):
                c.execute(S.gold.delete().where(S.gold.c.pair_id.in_(ids[start : start + 500])))
            insert_chunked(c, S.gold, rows)
        return len(rows)

    def delete_gold(self, pair_ids: Iterable[str], conn: Conn | None = None) -> int:
        ids = list(pair_ids)
        n = 0
        with self._w(conn) as c:
            for start in range(0, len(ids), 500):
                n += c.execute(S.gold.delete().where(S.gold.c.pair_id.in_(ids[start : start + 500]))).rowcount
        return n

    def gold(self, conn: Conn | None = None) -> dict[str, Gold]:
        """Every pair's gold answer. A pair marked gold before the gold table existed
        (``Pair.is_gold``) and without a row of its own gives its known preference and the
        reference's correctness, as an import."""
        P = S.pairs.c
        with self._r(conn) as c:
            out = {r["pair_id"]: _gold(r) for r in c.execute(select(S.gold)).mappings()}
            legacy = c.execute(
                select(P.id, P.known_preference, P.auto_first, P.auto_second).where(P.is_gold.is_(True))
            ).all()
        for pair_id, pref, first, second in legacy:
            if pair_id not in out and (pref or first or second):
                out[pair_id] = Gold(pair_id, "import", pref, first, second, note="Pair.is_gold")
        return out

    def control_keys(self, conn: Conn | None = None) -> set[tuple[str, str]]:
        """(pair id, annotator) of every control task: their labels count toward no overlap,
        agreement or build."""
        a = S.assignments.c
        with self._r(conn) as c:
            return {(p, n) for p, n in c.execute(select(a.pair_id, a.annotator).where(a.is_gold.is_(True)))}

    def control_labels(self, conn: Conn | None = None) -> int:
        """Submitted labels of control tasks, counted from the control assignments, each one's
        label looked up by its key (as a join, SQLite scanned the 600,000 labels and looked up
        each one's assignment: 0.19 s against 0.03 s)."""
        a, lc = S.assignments.c, S.labels.c
        submitted = select(lc.pair_id).where(
            lc.pair_id == a.pair_id, lc.annotator == a.annotator, lc.status == "submitted"
        )
        q = select(func.count()).select_from(S.assignments).where(a.is_gold.is_(True), submitted.exists())
        with self._r(conn) as c:
            return int(c.execute(q).scalar_one())

    def gold_categories(self, conn: Conn | None = None) -> dict[str, int]:
        """Pairs with gold per category of their item (``""``: none), counted in the database
        (every pair's category read as columns took 0.25 s at 200,000 pairs)."""
        cat = func.coalesce(S.items.c.category, "")
        q = (
            select(cat, func.count())
            .select_from(S.gold.join(S.pairs, S.pairs.c.id == S.gold.c.pair_id).join(S.items))
            .group_by(cat)
        )
        with self._r(conn) as c:
            return {str(k): int(n) for k, n in c.execute(q).all()}


def _gold(r: Mapping) -> Gold:
    return Gold(
        pair_id=r["pair_id"],
        source=r["source"],
        preference=r["preference"],
        correctness_first=r["correctness_first"],
        correctness_second=r["correctness_second"],
        note=r["note"],
        created_at=r["created_at"],
        ratings=loads(r["ratings"]) if r["ratings"] else {},
    )
