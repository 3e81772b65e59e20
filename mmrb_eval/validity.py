"""Does the benchmark predict usefulness? ``mmrb validity``'s workflow: judges paired by name,
each with an evaluation run on a built benchmark (``mmrb evaluate``) and a stored Best-of-N run
(``mmrb bestofn``, read back offline), their benchmark accuracy correlated with their Best-of-N
gain over random across judges (``mmrb_eval.bestofn.validity``: intervals over judges, the
benchmark's pairs and the Best-of-N items), overall and per category present in both, with a
plain-language verdict and its caveats.

Failures never decide: a judge whose run is incomplete is listed, with why, and not used, and
the result is incomplete. The rule of the verdict is ``verdict``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate.errors import MmrbError
from curate.model import JudgeRun
from curate.store import Store
from curate.wording import plural

from . import bestofn as bon
from .bestofn import Estimate, JudgePoint, Method, Validity
from .bestofn_run import BestOfNRun, stored_bestofn
from .leaderboard import saved_plot
from .scoring import ScoringOptions, pair_credits
from .workflow import ScoredJudgments, score_run

FEW_JUDGES = 10  # below it the interval over judges is wide: said in the caveats
STRONG, MODERATE = 0.7, 0.4  # |r| from which the verdict says "strongly", "moderately"


# -- which runs --------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeRuns:
    judge: str
    evaluation: str  # run id
    bestofn: str  # run id


def pick_runs(
    evaluations: Sequence[JudgeRun],
    bestofns: Sequence[JudgeRun],
    *,
    judges: Sequence[str] = (),
    runs: Sequence[str] = (),
) -> tuple[list[JudgeRuns], list[str]]:
    """Each judge's evaluation run and Best-of-N run, paired by judge name: every judge having
    both, or the ``judges`` named (each must have both). A judge with two runs of one kind is
    refused, naming them, unless ``runs`` names one of them. Returns the pairs (by judge name)
    and notes on the judges left out for want of a run of one kind."""
    known = {r.id for r in (*evaluations, *bestofns)}
    unknown = [r for r in runs if r not in known]
    if unknown:
        raise MmrbError(f"--run {', '.join(unknown)}: no evaluation or Best-of-N run of that id in the store")
    by_kind: dict[str, dict[str, list[str]]] = {"evaluation": defaultdict(list), "Best-of-N": defaultdict(list)}
    for kind, stored in (("evaluation", evaluations), ("Best-of-N", bestofns)):
        for r in stored:
            by_kind[kind][r.judge].append(r.id)
    ev, bo = by_kind["evaluation"], by_kind["Best-of-N"]
    names = list(dict.fromkeys(judges)) or sorted(set(ev) | set(bo))
    out: list[JudgeRuns] = []
    notes: list[str] = []
    problems: list[str] = []
    for name in names:
        lacking = [kind for kind, table in by_kind.items() if not table.get(name)]
        if lacking:
            why = f"judge {name} has no {' and no '.join(lacking)} run"
            (problems if judges else notes).append(why)
            continue
        chosen = []
        for kind, table in by_kind.items():
            ids = table[name]
            picked = [r for r in ids if r in runs]
            if len(picked) == 1 or len(ids) == 1:
                chosen.append(picked[0] if picked else ids[0])
            else:
                problems.append(
                    f"judge {name} has {len(picked or ids)} {kind} runs ({', '.join(picked or ids)}): "
                    "pick one with --run"
                )
        if len(chosen) == 2:
            out.append(JudgeRuns(name, chosen[0], chosen[1]))
    if problems:
        raise MmrbError("; ".join(problems))
    return out, notes


# -- the figures -------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeRow:
    judge: str
    runs: JudgeRuns
    benchmark: Estimate  # accuracy on the benchmark, scoring's interval
    bestofn: Estimate  # Best-of-N accuracy, interval over items
    gain: Estimate  # over random, paired interval over items
    method: Method
    used: bool
    why_not: str | None = None  # an incomplete run: listed, not used


@dataclass(frozen=True)
class ValidityReport:
    rows: tuple[JudgeRow, ...]
    groups: tuple[Validity, ...]  # overall first, then the categories present in both
    verdict: str
    caveats: tuple[str, ...]
    shared_prompts: int = 0  # Best-of-N items whose prompt is also a benchmark prompt
    notes: tuple[str, ...] = ()  # judges left out for want of a run

    @property
    def complete(self) -> bool:
        """Every run used is complete and the overall correlation is defined."""
        return all(r.used for r in self.rows) and self.groups[0].pearson.value is not None

    @property
    def overall(self) -> Validity:
        return self.groups[0]


def _estimate(figure: Mapping[str, Any]) -> Estimate:
    """Scoring's JSON figure (accuracy, ci, ci_undefined / reason) as an Estimate."""
    ci = figure.get("ci")
    if figure.get("accuracy") is None:
        return Estimate(None, undefined=figure.get("reason") or "no scored units")
    low, high = (ci[0], ci[1]) if ci else (None, None)
    return Estimate(figure["accuracy"], low, high, figure.get("ci_undefined"))


def _incomplete(scored: ScoredJudgments, run: BestOfNRun) -> str | None:
    why = []
    if not scored.complete:
        why.append(f"its evaluation run {scored.run_id} is incomplete")
    if not run.complete:
        s = run.summary
        parts = [f"{n} {what}" for n, what in ((s.failed, "failed"), (s.missing, "never sent")) if n]
        why.append(f"its Best-of-N run {run.run_id} is incomplete ({', '.join(parts) or 'items not judged'})")
    return "; ".join(why) or None


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def validity_report(
    store: Store,
    chosen: Sequence[JudgeRuns],
    options: ScoringOptions,
    *,
    method: Method | None = None,
    seed: int = 0,
    resamples: int = bon.DEFAULT_RESAMPLES,
    notes: Sequence[str] = (),
    scored: Mapping[str, ScoredJudgments] | None = None,
    read_back: Mapping[str, BestOfNRun] | None = None,
) -> ValidityReport:
    """Each judge's figures from its two stored runs (nothing is sent), and the correlation
    across the judges whose runs are complete, overall and per category present in both.
    ``scored`` (by run id: evaluation runs already scored under ``options``) and ``read_back``
    (by run id: Best-of-N runs already read back with their recipe and ``resamples``) spare a
    caller that has them, like the Leaderboard page, doing it again."""
    rows, points, by_group = [], [], defaultdict(list)
    bench_prompts: set[str] = set()
    bon_prompts: dict[str, str] = {}
    for jr in chosen:
        done = (scored or {}).get(jr.evaluation)
        scored_run = done if done is not None else score_run(store, jr.evaluation, options)
        stored = store.judge_run(jr.bestofn)
        scores = stored is not None and stored.config.get("bestofn") == "scores"
        how = None if scores else method  # a reward model's run holds scores: always read as "reward"
        run = (read_back or {}).get(jr.bestofn) if how is None else None
        if run is None:
            run = stored_bestofn(store, jr.bestofn, method=how, resamples=resamples)
        why = _incomplete(scored_run, run)
        credits = pair_credits(scored_run.pairs, scored_run.judgments, options)
        gains = bon.item_gains(run.items, run.picks)
        if why is None and not (sum(n for _, _, n in credits.values()) and gains):
            # complete, and yet nothing to measure (e.g. every verdict unreadable and excluded)
            why = "no scored benchmark pair" if gains else "no complete Best-of-N item"
        o = run.report.overall
        bench = _estimate(scored_run.figures.overall)
        rows.append(JudgeRow(jr.judge, jr, bench, o.accuracy, o.gain, run.method, why is None, why))
        if why is not None:
            continue
        points.append(JudgePoint.of(jr.judge, {p: (c, n) for p, (_, c, n) in credits.items()}, gains))
        bench_prompts |= {_norm(p.prompt) for p in scored_run.pairs}
        bon_prompts.update({i: _norm(t) for i, t in run.prompts.items()})
        cat_of = {it.id: it.category for it in run.items}
        for cat in {g for g, _, _ in credits.values()} & set(cat_of.values()):
            pairs = {p: (c, n) for p, (g, c, n) in credits.items() if g == cat}
            items = {i: v for i, v in gains.items() if cat_of[i] == cat}
            if pairs and items and sum(n for _, n in pairs.values()):
                by_group[cat].append(JudgePoint.of(jr.judge, pairs, items))
    groups = bon.validity_by_category(
        {bon.OVERALL: points, **{c: ps for c, ps in by_group.items()}}, seed=seed, resamples=resamples
    )
    shared = sum(t in bench_prompts for t in bon_prompts.values())
    caveats = _caveats(groups[0], rows, shared, len(bon_prompts))
    return ValidityReport(tuple(rows), groups, verdict(groups[0]), tuple(caveats), shared, tuple(notes))


# -- the verdict -------------------------------------------------------------------------------
def _r(e: Estimate) -> str:
    if e.value is None:
        return "–"
    ci = f" [{e.low:.2f}, {e.high:.2f}]" if e.low is not None and e.high is not None else ""
    return f"{e.value:.2f}{ci}"


def verdict(v: Validity) -> str:
    """The rule: undefined below 3 judges (or when a figure does not vary); with Pearson's
    interval wholly above 0, benchmark accuracy predicts Best-of-N gain, strongly from r 0.7,
    moderately from 0.4, else weakly; wholly below 0, it runs against it; an interval that
    includes 0 is no evidence either way; no interval (no resamples) is no verdict."""
    p, k = v.pearson, plural(v.judges, "judge")
    if p.value is None:
        return f"undefined: {p.undefined}"
    said = f"Pearson {_r(p)}, {k}"
    if p.low is None or p.high is None:
        return f"no verdict without an interval ({said}; {p.undefined or 'no resamples'})"
    if p.low > 0:
        strength = "strongly" if p.value >= STRONG else "moderately" if p.value >= MODERATE else "weakly"
        return f"Benchmark accuracy predicts Best-of-N gain {strength} ({said})"
    if p.high < 0:
        return f"Benchmark accuracy runs against Best-of-N gain: the better judge on it gains less ({said})"
    return f"No evidence either way: the interval includes 0 ({said})"


def _caveats(v: Validity, rows: Sequence[JudgeRow], shared: int, items: int) -> list[str]:
    out = []
    if 0 < v.judges < FEW_JUDGES:
        out.append(f"few judges ({v.judges}, fewer than {FEW_JUDGES}): the interval is wide; more judges narrow it")
    for r in rows:
        if not r.used:
            out.append(f"judge {r.judge} not used: {r.why_not}")
    if shared:
        out.append(
            f"{shared} of {plural(items, 'Best-of-N item')} also {'is a' if shared == 1 else 'are'} benchmark "
            "prompt(s): the same noise drives both figures and inflates the correlation (docs/bestofn.md); "
            "measure Best-of-N on other items"
        )
    return out


# -- rendering ---------------------------------------------------------------------------------
def report_json(r: ValidityReport) -> dict[str, Any]:
    return {
        "complete": r.complete,
        "verdict": r.verdict,
        "caveats": list(r.caveats),
        "judges": [
            {
                "judge": row.judge,
                "evaluation_run": row.runs.evaluation,
                "bestofn_run": row.runs.bestofn,
                "method": row.method,
                "used": row.used,
                **({"not_used": row.why_not} if row.why_not else {}),
                "benchmark_accuracy": bon.estimate_json(row.benchmark),
                "bestofn_accuracy": bon.estimate_json(row.bestofn),
                "gain_over_random": bon.estimate_json(row.gain),
            }
            for row in r.rows
        ],
        "validity": [
            {
                "group": v.group,
                "judges": v.judges,
                "pearson": bon.estimate_json(v.pearson),
                "spearman": bon.estimate_json(v.spearman),
                "resampled": v.resampled,
            }
            for v in r.groups
        ],
        "shared_prompts": r.shared_prompts,
        "left_out": list(r.notes),
    }


def report_lines(r: ValidityReport) -> list[str]:
    """The table of judges, the correlations, the verdict and its caveats."""
    et = bon.estimate_text
    head = ("judge", "benchmark accuracy", "Best-of-N accuracy", "gain over random")
    body = [
        (
            row.judge + ("" if row.used else " (not used)"),
            et(row.benchmark),
            et(row.bestofn),
            et(row.gain, signed=True),
        )
        for row in r.rows
    ]
    widths = [max(len(x[i]) for x in (head, *body)) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in (head, *body)]
    out.append("")
    over = r.overall.resampled
    out.append(f"Pearson and Spearman across judges (95% intervals, resampling {over}):")
    for v in r.groups:
        out.append(f"  {v.group}: {plural(v.judges, 'judge')}, Pearson {et(v.pearson)}, Spearman {et(v.spearman)}")
    out.append("")
    out.append(f"verdict: {r.verdict}")
    out += [f"caveat: {c}" for c in r.caveats]
    out += [f"left out: {n}" for n in r.notes]
    return out


def plot(r: ValidityReport, path: str | Path) -> Path:
    """A scatter of the judges used: benchmark accuracy (x) against Best-of-N gain over random
    (y), each point labelled with its judge, error bars from the intervals, Pearson's r in
    the title (matplotlib, as the leaderboard's plot)."""
    used = [row for row in r.rows if row.used and row.benchmark.value is not None and row.gain.value is not None]

    def draw(ax: Any) -> None:
        for row in used:
            x, y = 100 * (row.benchmark.value or 0), 100 * (row.gain.value or 0)
            ax.errorbar(
                x,
                y,
                xerr=_bar(row.benchmark),
                yerr=_bar(row.gain),
                fmt="o",
                color="#4c72b0",
                ecolor="#888888",
                capsize=3,
            )
            ax.annotate(row.judge, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
        ax.axhline(0, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel("benchmark accuracy (%) with 95% interval")
        ax.set_ylabel("Best-of-N gain over random (points) with 95% interval")
        p = r.overall.pearson
        title = f"Pearson r = {_r(p)}, {plural(r.overall.judges, 'judge')}" if p.value is not None else p.undefined
        ax.set_title(title or "", fontsize=10)
        if not used:
            ax.text(0.5, 0.5, "no judge with complete runs", ha="center", va="center", color="grey")
            ax.set_axis_off()

    return saved_plot(path, (6.5, 5), draw)


def _bar(e: Estimate) -> list[list[float]] | None:
    if e.value is None or e.low is None or e.high is None:
        return None
    return [[100 * max(0.0, e.value - e.low)], [100 * max(0.0, e.high - e.value)]]


__all__ = [
    "JudgeRow",
    "JudgeRuns",
    "ValidityReport",
    "pick_runs",
    "plot",
    "report_json",
    "report_lines",
    "validity_report",
    "verdict",
]
