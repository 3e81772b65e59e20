"""Inference-time scaling: a judge's accuracy against the number of its samples it votes with.

A run judged with K samples per pair and order (``mmrb evaluate --samples K``) is scored at
k = 1, 3, 5, ... samples (odd ks, so that one order's vote has a majority; K itself too when it
is even) as the majority of k samples per pair, with a bootstrap interval over pairs, overall and
per category. Nothing here votes: each point is ``scoring.score`` under the run's options with
``aggregate="majority"`` and ``samples_used=k``, after each pair's samples are renumbered by a
seeded rank, so that "the first k" is a seeded choice of k of its K samples. The rank of a sample
is a stable hash of the seed, the pair id and its sample index (curate/seeding.py), not of k:
the k=3 samples contain the k=1 sample, and a rerun chooses the same ones.

As in every figure, a failed judgment is no vote (scoring keeps it out), and a pair whose k
chosen samples are not all answered is counted per k (``short_pairs``). Each point's interval
is undefined below the bootstrap floor, as the report's are.

VL-RewardBench's cal.py reshuffles its records afresh for each k it prints: its figure for a
given k is what ``mmrb score --preset vlrewardbench --vlrb-k k`` prints. The curve here is
nested instead (one seeded choice, growing with k); at k = K both use every sample and agree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from curate.judging.records import Judgment
from curate.seeding import stable_hash

from .records import EvalPair
from .scoring import Figure, ScoringOptions, figure_text, order_judgments, score

PURPOSE = "scaling samples"  # in the hash that ranks a pair's samples


@dataclass(frozen=True)
class ScalingPoint:
    """The majority of k samples per pair: ``overall`` and ``macro`` as the report writes them
    (``scoring.stat``'s figure; ``pairs`` scored), each category's figure, how many judged pairs
    had fewer than k answered samples among their k, and the scored pairs' statuses (a split
    vote, a tie ...)."""

    k: int
    overall: Figure
    macro: Figure
    categories: dict[str, Figure]
    short_pairs: int
    statuses: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            **self.overall,
            "macro": self.macro,
            "short_pairs": self.short_pairs,
            "statuses": self.statuses,
            "categories": self.categories,
        }


def _used(judgments: Iterable[Judgment], options: ScoringOptions) -> list[Judgment]:
    """The judgments the options let count: the orders scored, the samples under ``samples_used``."""
    cap = options.samples_used
    return [j for j in judgments if j.order in options.orders and (cap is None or j.sample_index < cap)]


def samples_of(judgments: Iterable[Judgment], options: ScoringOptions) -> int:
    """The run's K under these options: one more than its highest sample index scored (0: none)."""
    return max((j.sample_index + 1 for j in _used(judgments, options)), default=0)


def scaling_ks(samples: int) -> tuple[int, ...]:
    """1, 3, 5, ... up to ``samples``, and ``samples`` itself when it is even; nothing below 2
    (one sample has no curve)."""
    if samples < 2:
        return ()
    ks = tuple(range(1, samples + 1, 2))
    return ks if samples % 2 else (*ks, samples)


def sample_ranks(pair_id: str, samples: int, seed: int) -> dict[int, int]:
    """Each of the pair's sample indices 0..samples-1 -> its new index: its rank by a stable hash
    of the seed, the pair and the index (never of k, so the first k contain the first k-1)."""
    ranked = sorted(range(samples), key=lambda i: (stable_hash(seed, PURPOSE, pair_id, i), i))
    return {i: r for r, i in enumerate(ranked)}


def renumbered(judgments: Iterable[Judgment], samples: int, seed: int) -> list[Judgment]:
    """The judgments with each pair's sample indices permuted by ``sample_ranks`` (both orders
    of one sample keep one index)."""
    ranks: dict[str, dict[int, int]] = {}
    out = []
    for j in judgments:
        rank = ranks.get(j.pair_id)
        if rank is None:
            rank = ranks[j.pair_id] = sample_ranks(j.pair_id, samples, seed)
        out.append(replace(j, sample_index=rank[j.sample_index]))
    return out


def _short_pairs(judgments: Sequence[Judgment], k: int) -> int:
    """Judged pairs with fewer than k answered samples among their first k (a sample is answered
    when it has a judgment in the orders scored and none of them failed)."""
    failed: dict[str, set[int]] = defaultdict(set)
    seen: dict[str, set[int]] = {}
    for j in judgments:
        idx = seen.setdefault(j.pair_id, set())  # a judged pair, whatever its indices
        if j.sample_index < k:
            idx.add(j.sample_index)
            if j.outcome == "error":
                failed[j.pair_id].add(j.sample_index)
    return sum(1 for pid, idx in seen.items() if len(idx - failed[pid]) < k)


def scaling(
    pairs: Sequence[EvalPair], judgments: Iterable[Judgment], options: ScoringOptions, *, seed: int | None = None
) -> list[ScalingPoint]:
    """Accuracy against k for a run of K > 1 samples (an empty list for K <= 1). ``seed`` chooses
    which samples come first (default: the options' ``bootstrap_seed``)."""
    used = _used(judgments, options)
    samples = samples_of(used, options)
    ks = scaling_ks(samples)
    if not ks:
        return []
    seed = options.bootstrap_seed if seed is None else seed
    # in dataset order, then new index: the order a coin (split="coin") is drawn in
    ranked = order_judgments(renumbered(used, samples, seed), pairs)
    known = {p.id for p in pairs}
    judged = [j for j in ranked if j.pair_id in known]
    out = []
    for k in ks:
        report = score(pairs, ranked, replace(options, aggregate="majority", samples_used=k))
        out.append(
            ScalingPoint(
                k=k,
                overall=report.overall,
                macro=report.macro,
                categories={c: f.to_json() for c, f in report.categories.items() if f.n},
                short_pairs=_short_pairs(judged, k),
                statuses=report.unit_statuses,
            )
        )
    return out


def scaling_json(points: Sequence[ScalingPoint]) -> list[dict[str, Any]]:
    return [p.to_json() for p in points]


def scaling_lines(points: Sequence[ScalingPoint]) -> list[str]:
    """The terminal's "accuracy against samples" block (nothing for a run of one sample)."""
    if not points:
        return []
    lines = ["accuracy against samples (majority of k seeded samples per pair; nested):"]
    for p in points:
        short = f"; {p.short_pairs} pairs with fewer than {p.k} answered" if p.short_pairs else ""
        lines.append(f"  k={p.k:<3} {figure_text(p.overall)}{short}")
    return lines
