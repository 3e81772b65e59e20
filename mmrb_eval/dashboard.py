"""What the Leaderboard page shows, as plain functions (the page only renders them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from curate.errors import MmrbError
from curate.model import Letter, Order, category_title
from curate.sides import to_letter
from curate.store import Store

from .bestofn import OVERALL, Estimate, estimate_text
from .bestofn_run import BestOfNRun, bestofn_runs, stored_bestofn
from .leaderboard import categories_of, display_name, interval_of, plot_rows, table_rows
from .runs import load_run
from .scoring import ScoringOptions
from .validity import ValidityReport, pick_runs, validity_report
from .workflow import ScoredJudgments, score_loaded_run


def scored_runs(store: Store, options: ScoringOptions) -> tuple[list[ScoredJudgments], list[str]]:
    """Every stored evaluation run scored under ``options``, and a message per run that
    could not be scored (e.g. its dataset file is gone)."""
    out, problems = [], []
    for run in store.judge_runs("evaluate"):
        try:
            loaded = load_run(store, run.id)
        except Exception as e:  # one unreadable dataset must not hide the other runs
            problems.append(f"run {run.id}: {e}")
            continue
        out.append(score_loaded_run(store, run.id, loaded, options))
    return out, problems


def interval_text(s: dict | None) -> str:
    """A figure's 95% interval in %, "undefined (too few pairs)" below the floor, else empty."""
    ci, why = interval_of(s)
    if ci:
        return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    return f"undefined ({why})" if why and s and s.get("accuracy") is not None else ""


def board_rows(runs: Sequence[ScoredJudgments], include_incomplete: bool = False) -> tuple[list[dict], list[dict]]:
    """The page's table: (ranked rows, incomplete runs listed apart), each with completeness
    and error rate; with ``include_incomplete`` everything is ranked and nothing is apart."""

    def pct(x: float | None) -> float | None:
        return None if x is None else round(100 * x, 1)

    ranked: list[dict[str, Any]] = []
    apart: list[dict[str, Any]] = []
    for r in table_rows([x.report for x in runs], include_incomplete=include_incomplete):
        o = r["overall"]
        row = {
            "#": r["rank"],
            "judge": r["judge"] if r["complete"] else f"{r['judge']} (incomplete)",
            "complete %": pct(r["completeness"]),
            "error %": pct(r["error_rate"]),
            "accuracy %": pct(o["accuracy"]),
            "95% CI": interval_text(o),
            "correct/n": o["correct_n"],
            "macro %": pct(r["macro"]["accuracy"]),
            "parse failures %": pct(r["parse_failure_rate"]),
            "consistency %": pct(r["consistency"]),
        }
        (ranked if r["rank"] is not None else apart).append(row)
    return ranked, apart


def category_rows(runs: Sequence[ScoredJudgments], category: str) -> list[dict]:
    """One row per judge for one category (and its sub-splits); incomplete runs are marked."""
    rows = []
    for r in sorted(runs, key=lambda r: not r.complete):
        groups = {category: r.figures.categories.get(category)}
        groups.update({k: v for k, v in r.figures.subsplits.items() if k.startswith(category + "/")})
        row: dict[str, str | float | None] = {
            "judge": r.judge if r.complete else f"{r.judge} (incomplete)",
            "run": r.run_id,
        }
        for name, g in groups.items():
            if g is None:
                continue
            row[name] = None if g.accuracy is None else round(100 * g.accuracy, 1)
            row[f"{name} correct/n"] = g.correct_n
            row[f"{name} 95% CI"] = interval_text(g.to_json())
        rows.append(row)
    return rows


@dataclass(frozen=True)
class Mistake:
    """A judgment that picked the rejected response (or gave no verdict), with what the judge
    was shown and said."""

    pair: str
    category: str
    order: Order
    sample: int
    chosen_shown_as: Letter
    mistake: str  # what went wrong, in words
    prompt: str
    chosen: str
    rejected: str
    images: tuple[str, ...]
    judge_output: str


def mistakes(run: ScoredJudgments, category: str | None = None, limit: int = 20) -> list[Mistake]:
    """Judgments that picked the rejected response (or gave no verdict), with what the
    judge was shown and said. A failed request is not a mistake of the judge: it is left out
    (the run's completeness counts it)."""
    by_id = {p.id: p for p in run.pairs}
    out = []
    for j in run.judgments:
        p = by_id.get(j.pair_id)
        if p is None or (category and p.category != category):
            continue
        if j.outcome == "error" or (j.outcome == "parsed" and j.verdict == p.preferred):
            continue
        kind = (
            "picked the rejected response"
            if j.outcome == "parsed" and j.verdict != "tie"
            else ("tie" if j.verdict == "tie" else f"no verdict ({j.outcome})")
        )
        out.append(
            Mistake(
                pair=p.id,
                category=p.category,
                order=j.order,
                sample=j.sample_index,
                chosen_shown_as=to_letter(p.preferred, j.order),
                mistake=kind,
                prompt=p.prompt,
                chosen=p.chosen,
                rejected=p.rejected,
                images=tuple(p.images),
                judge_output=j.raw if j.raw is not None else (j.error or ""),
            )
        )
        if len(out) >= limit:
            break
    return out


def board_frame(reports: Sequence[dict], include_incomplete: bool = False) -> list[dict]:
    """What the Leaderboard page draws: for each ranked judge with an accuracy, its overall
    accuracy and each category's (percent), side by side, with the 95% interval where one is
    defined (``lo`` / ``hi`` None where it is not: too few pairs, or none asked for)."""
    rows, _ = plot_rows(reports, include_incomplete=include_incomplete)
    groups = ["overall", *categories_of(reports)]
    out = []
    for r in rows:
        for g in groups:
            s = r["overall"] if g == "overall" else r["categories"].get(g)
            if not s or s.get("accuracy") is None:
                continue
            ci, _why = interval_of(s)
            out.append(
                {
                    "judge": display_name(r),
                    "group": g,
                    "accuracy": 100 * s["accuracy"],
                    "lo": 100 * ci[0] if ci else None,
                    "hi": 100 * ci[1] if ci else None,
                    "complete": r["complete"],
                }
            )
    return out


# -- Best-of-N and validity ----------------------------------------------------------------------
def stored_bestofn_runs(store: Store, resamples: int) -> tuple[list[BestOfNRun], list[str]]:
    """Every stored Best-of-N run read back (nothing sent), and a message per run that could
    not be read (e.g. its items are gone)."""
    out, problems = [], []
    for run in bestofn_runs(store):
        try:
            out.append(stored_bestofn(store, run.id, resamples=resamples))
        except MmrbError as e:  # one unreadable run must not hide the others
            problems.append(f"run {run.id}: {e}")
    return out, problems


def _pct(e: Estimate) -> float | None:
    return None if e.value is None else round(100 * e.value, 1)


def _ci(e: Estimate) -> str:
    if e.low is None or e.high is None:
        return f"undefined ({e.undefined})" if e.undefined and e.value is not None else ""
    return f"[{100 * e.low:.1f}, {100 * e.high:.1f}]"


def bestofn_table(runs: Sequence[BestOfNRun]) -> list[dict]:
    """One row per Best-of-N run: its accuracy beside the baselines on the same items (%)."""
    rows = []
    for r in runs:
        o = r.report.overall
        row: dict[str, Any] = {
            "judge": r.judge if r.complete else f"{r.judge} (incomplete)",
            "run": r.run_id,
            "method": r.method,
            "items": o.complete,
            "incomplete": o.incomplete,
            "Best-of-N %": _pct(o.accuracy),
            "95% CI": _ci(o.accuracy),
            "gain (points)": _pct(o.gain),
        }
        row.update({f"{b} %": _pct(e) for b, e in o.baselines.items()})
        rows.append(row)
    return rows


def bestofn_frame(runs: Sequence[BestOfNRun]) -> list[dict]:
    """What the page draws: each run's Best-of-N accuracy and its baselines (percent), side by
    side, with their 95% intervals where defined (the leaderboard chart's rows)."""
    out = []
    for r in runs:
        o = r.report.overall
        for group, e in (("Best-of-N", o.accuracy), *o.baselines.items()):
            if e.value is None:
                continue
            out.append(
                {
                    "judge": f"{r.judge} ({r.method})",
                    "group": group,
                    "accuracy": 100 * e.value,
                    "lo": None if e.low is None else 100 * e.low,
                    "hi": None if e.high is None else 100 * e.high,
                    "complete": r.complete,
                }
            )
    return out


def validity_points(report: ValidityReport) -> list[dict]:
    """The validity scatter's points: each judge used, benchmark accuracy against Best-of-N
    gain over random (percent), with their intervals where defined."""
    out = []
    for row in report.rows:
        b, g = row.benchmark, row.gain
        if not row.used or b.value is None or g.value is None:
            continue
        out.append(
            {
                "judge": row.judge,
                "accuracy": 100 * b.value,
                "gain": 100 * g.value,
                "acc_lo": None if b.low is None else 100 * b.low,
                "acc_hi": None if b.high is None else 100 * b.high,
                "gain_lo": None if g.low is None else 100 * g.low,
                "gain_hi": None if g.high is None else 100 * g.high,
            }
        )
    return out


def validity_rows(report: ValidityReport) -> list[dict]:
    """The correlation per group (overall first, then each category in both the benchmark and
    the Best-of-N items): judges, Pearson and Spearman with their intervals, or why undefined."""
    return [
        {
            "group": v.group if v.group == OVERALL else category_title(v.group),
            "judges": v.judges,
            "Pearson": estimate_text(v.pearson),
            "Spearman": estimate_text(v.spearman),
        }
        for v in report.groups
    ]


def store_validity(
    store: Store,
    options: ScoringOptions,
    *,
    scored: Sequence[ScoredJudgments] = (),
    read_back: Sequence[BestOfNRun] = (),
) -> tuple[ValidityReport | None, str | None]:
    """``mmrb validity``'s report for every judge with both kinds of run, under ``options``
    (its bootstrap resamples too); None with why when there is none to make. ``scored`` and
    ``read_back``: the page's runs already scored under ``options`` and read back, not redone."""
    try:
        chosen, notes = pick_runs(store.judge_runs("evaluate"), bestofn_runs(store))
        if not chosen:
            return None, "no judge has both an evaluation run and a Best-of-N run"
        report = validity_report(
            store,
            chosen,
            options,
            resamples=options.bootstrap,
            notes=notes,
            scored={r.run_id: r for r in scored if r.run_id},
            read_back={r.run_id: r for r in read_back},
        )
        return report, None
    except MmrbError as e:  # e.g. a judge with two runs of one kind: the command's --run picks
        return None, str(e)


SCALING_CAPTION = (
    "Accuracy of the majority of k samples per pair (k = 1, 3, 5, ...: a seeded choice of k of each "
    "pair's samples, nested, so each point adds samples to the last), with its 95% interval over pairs. "
    "A rising curve: more samples help this judge. A flat one: its samples agree with each other, right "
    "or wrong alike, so sampling more costs requests and buys no accuracy. Dashed: chance (50%)."
)


def scaling_frame(runs: Sequence[ScoredJudgments], include_incomplete: bool = False) -> list[dict]:
    """What the page's inference-time scaling plot draws: for each run of K > 1 samples (complete
    ones, or all with ``include_incomplete``), its accuracy (percent) at each k with the 95%
    interval where defined, the pairs scored and those short of k answered samples. A judge with
    several such runs is named with the run's id. A point without an accuracy is not drawn."""
    shown = [r for r in runs if r.scaling and (r.complete or include_incomplete)]
    names = Counter(r.judge for r in shown)
    out = []
    for r in shown:
        name = r.judge if names[r.judge] == 1 else f"{r.judge} ({r.run_id})"
        name = name if r.complete else f"{name} (incomplete)"
        for p in r.scaling:
            o = p.overall
            if o.get("accuracy") is None:
                continue
            ci, _why = interval_of(o)
            out.append(
                {
                    "judge": name,
                    "k": p.k,
                    "accuracy": 100 * o["accuracy"],
                    "lo": 100 * ci[0] if ci else None,
                    "hi": 100 * ci[1] if ci else None,
                    "pairs": o.get("pairs", o["n"]),
                    "short_pairs": p.short_pairs,
                }
            )
    return out
