"""What the Leaderboard page shows, as plain functions (the page only renders them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from curate.judging.records import Judgment
from curate.judging.runner import judge_runs
from curate.store import Store

from .records import EvalPair
from .runs import load_run
from .scoring import ScoringOptions, score


@dataclass
class ScoredRun:
    run_id: str
    judge: str
    dataset: str
    pairs: list[EvalPair]
    judgments: list[Judgment]
    report: dict


def scored_runs(store: Store, options: ScoringOptions) -> tuple[list[ScoredRun], list[str]]:
    """Every stored evaluation run scored under ``options``, and a message per run that
    could not be scored (e.g. its dataset file is gone)."""
    out, problems = [], []
    for row in judge_runs(store, "evaluate"):
        try:
            judge, pairs, judgments, label = load_run(store, row["id"])
        except Exception as e:  # one unreadable dataset must not hide the other runs
            problems.append(f"run {row['id']}: {e}")
            continue
        report = {"judge": judge, "run": row["id"], "dataset": label, **score(pairs, judgments, options)}
        out.append(ScoredRun(row["id"], judge, label, pairs, judgments, report))
    return out, problems


def category_rows(runs: Sequence[ScoredRun], category: str) -> list[dict]:
    """One row per judge for one category (and its sub-splits)."""
    rows = []
    for r in runs:
        groups = {category: r.report["categories"].get(category)}
        groups.update({k: v for k, v in r.report["subsplits"].items() if k.startswith(category + "/")})
        row = {"judge": r.judge, "run": r.run_id}
        for name, s in groups.items():
            if s is None:
                continue
            acc = s["accuracy"]
            row[name] = None if acc is None else round(100 * acc, 1)
            row[f"{name} correct/n"] = s["correct_n"]
            row[f"{name} 95% CI"] = f"[{100 * s['ci'][0]:.1f}, {100 * s['ci'][1]:.1f}]" if s.get("ci") else ""
        rows.append(row)
    return rows


def mistakes(run: ScoredRun, category: str | None = None, limit: int = 20) -> list[dict]:
    """Judgments that picked the rejected response (or gave no verdict), with what the
    judge was shown and said."""
    by_id = {p.id: p for p in run.pairs}
    out = []
    for j in run.judgments:
        p = by_id.get(j.pair_id)
        if p is None or (category and p.category != category):
            continue
        if j.outcome == "parsed" and j.verdict == p.label:
            continue
        kind = "picked the rejected response" if j.outcome == "parsed" and j.verdict != "tie" else (
            "tie" if j.verdict == "tie" else f"no verdict ({j.outcome})")
        out.append(
            {
                "pair": p.id,
                "category": p.category,
                "order": j.order,
                "sample": j.sample_index,
                "chosen shown as": "A" if (p.label == "first") == (j.order == "forward") else "B",
                "mistake": kind,
                "prompt": p.prompt,
                "chosen": p.chosen,
                "rejected": p.rejected,
                "images": list(p.images),
                "judge output": j.raw if j.raw is not None else (j.error or ""),
            }
        )
        if len(out) >= limit:
            break
    return out
