"""The evaluator's workflows as typed functions: judge a dataset and score the run, score saved
judgments (a file in a published format, or a stored run), pick the stored runs to compare.
The commands and the Leaderboard page parse, call these and render what they return."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from curate.errors import InputError, MmrbError
from curate.judging.judge import Judge
from curate.judging.records import Judgment, RunDataset
from curate.judging.runner import RunSummary, run_judge
from curate.store import Store
from curate.wording import plural

from .datasets import read_dataset
from .formats import CAL_KS, read_judgment_file, write_judgments
from .leaderboard import estimated_health
from .records import EvalPair
from .runs import RunHealth, load_run, run_health
from .scaling import ScalingPoint, scaling, scaling_json
from .scoring import ScoreReport, ScoringOptions, order_judgments, score

LoadedRun = tuple[str, list[EvalPair], list[Judgment], str]  # what runs.load_run returns


@dataclass(frozen=True)
class Dataset:
    """Dataset pairs, and how a run records them (absolute paths and the limit; read back by
    runs.load_run when a stored run is scored without a dataset)."""

    pairs: list[EvalPair]
    files: RunDataset

    @property
    def label(self) -> str:
        return self.files.label


def open_dataset(paths: Sequence[str], limit: int | None = None, *, to_judge: bool = False) -> Dataset:
    """The pairs of one or more dataset files, the first ``limit`` only when given.
    ``to_judge``: the texts go into a stored run (its prompts), so a NUL, which PostgreSQL
    cannot keep, is refused by file, line and field before any judge is asked."""
    pairs = read_dataset(list(paths), nul=to_judge)
    if limit is not None:
        pairs = pairs[:limit]
    return Dataset(pairs, RunDataset.files(list(paths), limit))


@dataclass(frozen=True)
class ScoredJudgments:
    """A judge's judgments scored against a dataset: ``figures`` is what scoring.score found."""

    judge: str
    dataset: str  # the dataset's label (a run's recorded paths, else the judgment file's)
    pairs: list[EvalPair]
    judgments: list[Judgment]
    figures: ScoreReport
    run_id: str | None = None  # the stored run the report names
    health: RunHealth | None = None  # of a stored run: the leaderboard ranks it only when complete
    options: ScoringOptions | None = None  # what ``figures`` were scored under (for ``scaling``)

    @cached_property
    def scaling(self) -> list[ScalingPoint]:
        """Accuracy against the number of samples (mmrb_eval/scaling.py): empty for a run of one
        sample, or when the options are not known."""
        return scaling(self.pairs, self.judgments, self.options) if self.options else []

    @cached_property
    def report(self) -> dict[str, Any]:
        """The JSON report (``mmrb score --output``, the input of ``mmrb leaderboard``)."""
        out: dict[str, Any] = {"judge": self.judge}
        if self.run_id is not None:
            out["run"] = self.run_id
        out["dataset"] = self.dataset
        out.update(self.figures.to_json())
        if self.scaling:  # a run of K > 1 samples; a run of one has no such key
            out["scaling"] = scaling_json(self.scaling)
        if self.health is not None:
            out["run_health"] = self.health.as_dict()
        return out

    @property
    def complete(self) -> bool:
        """A stored run: every planned judgment has an answer. Judgments from a file: none
        failed and every dataset pair has some (see leaderboard.health_of)."""
        if self.health is not None:
            return self.health.complete
        f = self.figures
        return bool(
            estimated_health(failed=f.outcomes["error"], total=f.judgments, pairs=f.pairs, missing=f.missing_pairs)[
                "complete"
            ]
        )


@dataclass(frozen=True)
class Evaluation:
    """A judged and scored run, and what this pass of the judge did."""

    summary: RunSummary
    health: RunHealth
    scored: ScoredJudgments

    @property
    def complete(self) -> bool:
        """Every planned judgment has an answer (else the run is stored as incomplete)."""
        return self.health.complete

    def run_info(self) -> dict[str, Any]:
        s = self.summary
        return {
            "planned": s.planned,
            "already_stored": s.already_stored,
            "sent": s.sent,
            "sent_outcomes": s.outcomes,
            "seconds": round(s.seconds, 3),
            "judgments_per_second": round(s.per_second, 2),
        }


def evaluate(
    store: Store,
    dataset: Dataset,
    judge: Judge,
    options: ScoringOptions,
    *,
    run_id: str | None = None,
    retry_errors: bool = True,
    progress: Callable[[int, int], None] | None = None,
    export: str | Path | None = None,
) -> Evaluation:
    """Judge every pair of ``dataset`` (resuming the run: stored judgments are not sent again),
    write the run's judgments to ``export`` when given, and score them."""
    tasks = [p.task() for p in dataset.pairs]
    summary = run_judge(
        store, tasks, judge, run_id=run_id, dataset=dataset.files, retry_errors=retry_errors, progress=progress
    )
    # the orientation each pair was shown in: reading the run back takes it (runs.load_run)
    store.record_run_orientation(summary.run_id, {p.id: p.preferred for p in dataset.pairs})
    judgments = order_judgments(store.judgments(summary.run_id), dataset.pairs)
    health = run_health(store, summary.run_id, dataset.pairs, judgments)
    if export:
        write_judgments(export, judgments)
    figures = score(dataset.pairs, judgments, options)
    return Evaluation(
        summary,
        health,
        ScoredJudgments(judge.name, dataset.label, dataset.pairs, judgments, figures, summary.run_id, health, options),
    )


def score_file(
    path: str | Path,
    fmt: str,
    options: ScoringOptions,
    dataset: Dataset | None = None,
    *,
    vlrb_k: int | None = None,
    trust_flag: bool = False,
    strict: bool = False,
) -> ScoredJudgments:
    """A file of saved judgments scored against ``dataset`` (formats that carry their labels
    need none). The judge is named after the file. ``strict``: rows that disagree with the
    dataset (an id it does not have, another label) refuse the file instead of a warning."""
    f = read_judgment_file(path, fmt, dataset.pairs if dataset else None, vlrb_k=vlrb_k, trust_flag=trust_flag)
    if strict and f.doubts:
        raise InputError(list(f.doubts))
    if options.preset == "vlrewardbench" and fmt == "vlrewardbench" and vlrb_k is None:
        most = max(Counter(j.pair_id for j in f.judgments).values(), default=0)
        if most > 1:
            raise MmrbError(
                f"{path}: items have up to {most} records (samples) each, and cal.py prints its figures for "
                f"k = {', '.join(map(str, CAL_KS))} samples per item only: give --vlrb-k K for the figures it prints "
                "for that k (or score without --preset to let every sample vote)"
            )
    label = dataset.label if dataset else str(Path(path).resolve())
    figures = score(f.pairs, f.judgments, options, listed=f.listed, warnings=f.warnings)
    return ScoredJudgments(Path(path).stem, label, f.pairs, f.judgments, figures, options=options)


def score_run(
    store: Store,
    run_id: str,
    options: ScoringOptions,
    pairs: Sequence[EvalPair] | None = None,
    *,
    strict: bool = False,
) -> ScoredJudgments:
    """A stored run scored on ``pairs``, else on the dataset it recorded. ``strict``: a
    judgment of a pair that ``pairs`` does not have is an error, not a warning."""
    scored = score_loaded_run(store, run_id, load_run(store, run_id, pairs), options)
    if strict and scored.figures.unknown_judgments:
        raise MmrbError(
            f"run {run_id}: {plural(scored.figures.unknown_judgments, 'judgment', verb=('names', 'name'))} a pair "
            "the dataset does not have (--strict)"
        )
    return scored


def score_loaded_run(store: Store, run_id: str, loaded: LoadedRun, options: ScoringOptions) -> ScoredJudgments:
    """A run runs.load_run has read, with its health on those pairs, scored."""
    judge, pairs, judgments, label = loaded
    health = run_health(store, run_id, pairs, judgments)
    figures = score(pairs, judgments, options)
    return ScoredJudgments(judge, label, pairs, judgments, figures, run_id, health, options)


def evaluation_runs(store: Store, named: Sequence[str], every: bool = False) -> list[str]:
    """The runs to compare: those ``named``, then with ``every`` each other stored evaluation run."""
    ids = list(named)
    if every:
        ids += [r.id for r in store.judge_runs("evaluate") if r.id not in ids]
    return ids
