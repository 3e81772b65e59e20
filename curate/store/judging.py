"""Judge runs and their judgments (evaluation and AI-assisted selection share them)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from sqlalchemy import delete, insert, select, tuple_, update

from ..model import JudgeRun, Judgment, JudgmentKey, Outcome, RunStatus
from . import schema as S
from .base import Conn, StoreBase
from .engine import chunks, dumps, insert_chunked, insert_ignoring, loads, now
from .rows import dataset_from_json, dataset_json

J = S.judgments.c
R = S.judge_runs.c
RO = S.run_orientations.c


class JudgingStore(StoreBase):
    # -- runs ----------------------------------------------------------------------------
    def judge_run(self, run_id: str, conn: Conn | None = None) -> JudgeRun | None:
        with self._r(conn) as c:
            r = c.execute(select(S.judge_runs).where(R.id == run_id)).mappings().first()
        return _run(r) if r else None

    def judge_runs(self, purpose: str | None = None, conn: Conn | None = None) -> list[JudgeRun]:
        """Every run, oldest first (of one purpose when given)."""
        q = select(S.judge_runs).order_by(R.created_at)
        if purpose:
            q = q.where(R.purpose == purpose)
        with self._r(conn) as c:
            return [_run(r) for r in c.execute(q).mappings()]

    def add_judge_run(self, run: JudgeRun, conn: Conn | None = None) -> tuple[JudgeRun, bool]:
        """Store a new run, status "incomplete" until a pass ends with every answer; when a
        run of that id exists, leave it. Returns (the stored run, whether it is new)."""
        with self._w(conn) as c:
            r = c.execute(select(S.judge_runs).where(R.id == run.id)).mappings().first()
            if r is not None:
                return _run(r), False
            row = dict(
                id=run.id,
                purpose=run.purpose,
                judge=run.judge,
                config=dumps(dict(run.config)),
                dataset=dataset_json(run.dataset),
                created_at=run.created_at or now(),
                status="incomplete",
                planned=run.planned,
                failed=run.failed,
            )
            c.execute(insert(S.judge_runs).values(**row))
        return _run(row), True

    def set_judge_run_status(
        self,
        run_id: str,
        status: RunStatus,
        *,
        planned: int | None = None,
        failed: int | None = None,
        conn: Conn | None = None,
    ) -> None:
        """The run's status; with ``planned``, also what its last pass planned and how many
        of those are stored as failures."""
        values: dict[str, Any] = {"status": status}
        if planned is not None:
            values.update(planned=planned, failed=failed)
        with self._w(conn) as c:
            c.execute(update(S.judge_runs).where(R.id == run_id).values(**values))

    # -- judgments -----------------------------------------------------------------------
    def judgment_outcomes(self, run_id: str, conn: Conn | None = None) -> dict[JudgmentKey, Outcome]:
        q = select(J.pair_id, J.order, J.sample_index, J.outcome).where(J.run_id == run_id)
        with self._r(conn) as c:
            return {(r[0], r[1], r[2]): r[3] for r in c.execute(q)}

    def judgment_errors(self, run_id: str, conn: Conn | None = None) -> dict[JudgmentKey, str | None]:
        """The error message of each judgment stored as a failure."""
        q = select(J.pair_id, J.order, J.sample_index, J.error).where(J.run_id == run_id, J.outcome == "error")
        with self._r(conn) as c:
            return {(r[0], r[1], r[2]): r[3] for r in c.execute(q)}

    def judgments(self, run_id: str, conn: Conn | None = None) -> list[Judgment]:
        with self._r(conn) as c:
            rows = c.execute(select(S.judgments).where(J.run_id == run_id)).mappings().all()
        return [_judgment(r) for r in rows]

    def add_judgments(
        self,
        run_id: str,
        judgments: Iterable[Judgment],
        *,
        replace: Collection[JudgmentKey] = (),
        conn: Conn | None = None,
    ) -> int:
        """Store judgments of a run in one transaction; the stored rows of the keys in
        ``replace`` (earlier failures that these judgments answer) are removed first."""
        ts = now()
        rows = [_judgment_row(run_id, j, ts) for j in judgments]
        stale = sorted({(r["pair_id"], r["order"], r["sample_index"]) for r in rows} & set(replace))
        with self._w(conn) as c:
            for chunk in chunks(stale, 500):
                c.execute(
                    delete(S.judgments).where(
                        J.run_id == run_id, tuple_(J.pair_id, J.order, J.sample_index).in_(list(chunk))
                    )
                )
            insert_chunked(c, S.judgments, rows)
        return len(rows)

    # -- the orientation a run showed ----------------------------------------------------
    def record_run_orientation(self, run_id: str, chosen: Mapping[str, str], conn: Conn | None = None) -> int:
        """Record which stored side (``first`` / ``second``) held the chosen response of each
        pair as the run showed it. A pair recorded already keeps its record (the run's stored
        verdicts were given in it). Returns how many pairs were recorded now."""
        with self._w(conn) as c:
            have = set(c.execute(select(RO.pair_id).where(RO.run_id == run_id)).scalars())
            rows = [dict(run_id=run_id, pair_id=p, chosen=s) for p, s in chosen.items() if p not in have]
            for chunk in chunks(rows, 1000):
                c.execute(insert_ignoring(c, S.run_orientations), list(chunk))
        return len(rows)

    def run_orientation(self, run_id: str, conn: Conn | None = None) -> dict[str, str]:
        """The stored side of each pair's chosen response as the run showed it (empty: a run
        stored before runs recorded it)."""
        with self._r(conn) as c:
            return {p: s for p, s in c.execute(select(RO.pair_id, RO.chosen).where(RO.run_id == run_id))}


# -- row <-> record ----------------------------------------------------------------------
def _run(r: Mapping[Any, Any]) -> JudgeRun:
    return JudgeRun(
        id=r["id"],
        purpose=r["purpose"],
        judge=r["judge"],
        config=loads(r["config"]),
        dataset=dataset_from_json(r["dataset"]),
        created_at=r["created_at"],
        status=r.get("status"),
        planned=r.get("planned"),
        failed=r.get("failed"),
    )


def _judgment_row(run_id: str, j: Judgment, ts: str) -> dict[str, Any]:
    return dict(
        run_id=run_id,
        pair_id=j.pair_id,
        order=j.order,
        sample_index=j.sample_index,
        prompt=j.prompt,
        raw=j.raw,
        verdict=j.verdict,
        outcome=j.outcome,
        score_first=j.score_first,
        score_second=j.score_second,
        prompt_tokens=j.prompt_tokens,
        completion_tokens=j.completion_tokens,
        error=j.error,
        created_at=ts,
    )


def _judgment(r: Mapping[Any, Any]) -> Judgment:
    return Judgment(
        pair_id=r["pair_id"],
        order=r["order"],
        sample_index=r["sample_index"],
        verdict=r["verdict"],
        outcome=r["outcome"],
        raw=r["raw"],
        prompt=r["prompt"],
        score_first=r["score_first"],
        score_second=r["score_second"],
        prompt_tokens=r["prompt_tokens"],
        completion_tokens=r["completion_tokens"],
        error=r["error"],
    )
