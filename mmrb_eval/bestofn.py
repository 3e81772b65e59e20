"""Best-of-N: does a judge pick a correct response among N? The pure core of ``mmrb bestofn``
(no I/O, no store): the picks, what they cost, their accuracy beside baselines, accuracy against
N, and the validity of a benchmark across judges.

The method follows VL-RewardBench's Best-of-N analysis (Li et al., 2024, arXiv 2411.17451): a
judge picks one of N sampled responses per item whose correctness is known, Best-of-N accuracy
is the share of items whose pick is correct, and a benchmark is valid when judges' accuracy on
it correlates with how much they gain over a random pick (the paper reports Pearson r > 0.9
against MMMU-Pro Best-of-N accuracy).

- A reward model scores every response; the top score wins. A tie at the top is broken by a
  seeded rule over the tied responses' ids (``tied_top`` says how many shared it).
- A pairwise judge plays matches. Each match is judged in both orders (each response shown
  as A once) to cancel position bias: when the orders agree the match has a winner, when they
  disagree (or either says tie) it is split (``split_matches`` counts them). A knockout
  decides a split match by a seeded coin over the two ids; a round robin gives each half a
  win, and the most wins take the item (a tie at the top seeded as above).
- Every seeded decision hashes stable ids (curate/seeding.py), never positions: listing an
  item's responses in another order changes no pick (only the first-response baseline).
- Failures never decide: a score or a judgment that failed (None) makes the item's pick
  incomplete, its own outcome, counted apart and never correct or incorrect. Accuracy is over
  complete items only, and every baseline is measured on those same items.

Baselines: random (the expected value of a uniform pick: the item's share of correct
responses), the first response as listed, the majority answer (self-consistency: the modal
normalised final answer, a tie between answers seeded; undefined, with the reason, where a
response has no comparable answer) and the oracle (any correct response). Intervals are 95%
percentile bootstraps over items, one resample of items shared by the pick and the baselines
(so the gain over random has its own paired interval), undefined below ``MIN_BOOTSTRAP_PAIRS``
items as scoring's are (curate/agreement/limits.py). Validity intervals resample judges, and,
given each judge's per-pair credit and per-item gain, the benchmark's pairs and the Best-of-N
items too (one draw of each shared by every judge of a resample).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Literal

import numpy as np

from curate.agreement.limits import MIN_BOOTSTRAP_PAIRS
from curate.model import LetterVerdict
from curate.seeding import coin, stable_hash
from curate.wording import plural

Method = Literal["reward", "knockout", "round-robin"]
PickOutcome = Literal["correct", "incorrect", "incomplete"]
Baseline = Literal["random", "first", "majority", "oracle"]
BASELINES: tuple[Baseline, ...] = ("random", "first", "majority", "oracle")
OVERALL = "overall"
MIN_JUDGES = 3  # below it a correlation across judges is undefined
TOO_FEW_ITEMS = "too few items"
DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95

# (item id, response shown as A, response shown as B) -> which shown response is better, or
# None when the judgment failed. A stored run answers it from its judgments of pairs, and
# raises Pending for one not asked yet.
MatchFn = Callable[[str, str, str], LetterVerdict | None]


class Pending(Exception):
    """A match function's judgment is not there yet. A tournament plays every other match it
    can play now (the rest of a knockout round, the whole round robin) and then raises it, so
    that a stored run asks for a round's matches together and picks again once they are in."""


# -- items -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Response:
    """One of an item's N candidate responses, with its known correctness."""

    id: str
    correct: bool
    answer: str | None = None  # its normalised final answer, for the majority baseline; None: not comparable


@dataclass(frozen=True)
class BonItem:
    """A prompt with N >= 2 candidate responses (ids unique within the item)."""

    id: str
    category: str
    responses: tuple[Response, ...]

    def __post_init__(self) -> None:
        ids = [r.id for r in self.responses]
        if len(ids) < 2:
            raise ValueError(f"item {self.id}: Best-of-N needs at least 2 responses, got {len(ids)}")
        if len(set(ids)) != len(ids):
            dup = sorted(i for i, k in Counter(ids).items() if k > 1)
            raise ValueError(f"item {self.id}: response ids repeat: {', '.join(dup)}")

    @property
    def n(self) -> int:
        return len(self.responses)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.responses)

    def is_correct(self, response_id: str) -> bool:
        return next(r.correct for r in self.responses if r.id == response_id)


# -- picks -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pick:
    """A judge's pick on one item, or why it has none (``chosen`` None: incomplete)."""

    item: str
    method: Method
    chosen: str | None
    correct: bool | None
    judgments: int  # scores or judgments it asked for
    tied_top: int = 1  # responses that shared the top score or wins (> 1: the seeded rule chose)
    split_matches: int = 0  # matches whose two orders disagreed
    failed: str | None = None  # why the pick is incomplete

    @property
    def outcome(self) -> PickOutcome:
        if self.correct is None:
            return "incomplete"
        return "correct" if self.correct else "incorrect"


def _seeded_first(ids: Iterable[str], *, seed: int, item: str, purpose: str) -> str:
    """The seeded choice among ids: the lowest stable hash, whatever order they come in."""
    return min(ids, key=lambda c: (stable_hash(seed, purpose, item, c), c))


def _chosen(item: BonItem, method: Method, tops: Sequence[str], *, seed: int, judgments: int, split: int = 0) -> Pick:
    """The one top response, or the seeded rule's among those tied at the top."""
    best = tops[0] if len(tops) == 1 else _seeded_first(tops, seed=seed, item=item.id, purpose="bestofn top tie")
    return Pick(item.id, method, best, item.is_correct(best), judgments, tied_top=len(tops), split_matches=split)


def reward_pick(item: BonItem, scores: Mapping[str, float | None], *, seed: int = 0) -> Pick:
    """The top-scored response; incomplete when a response's score failed or is missing."""
    got = [scores.get(r) for r in item.ids]
    asked = sum(s is not None for s in got)
    bad = [r for r, s in zip(item.ids, got, strict=True) if s is None or not math.isfinite(s)]
    if bad:
        why = f"no score for {plural(len(bad), 'response')} ({', '.join(bad)})"
        return Pick(item.id, "reward", None, None, judgments=asked, failed=why)
    top = max(s for s in got if s is not None)
    tops = [r for r, s in zip(item.ids, got, strict=True) if s == top]
    return _chosen(item, "reward", tops, seed=seed, judgments=asked)


@dataclass(frozen=True)
class Match:
    winner: str | None  # None: a judgment failed
    split: bool  # the orders disagreed (or one said tie): the winner is the seeded rule's
    judgments: int


def _shown_winner(verdict: LetterVerdict, a: str, b: str) -> str | None:
    return a if verdict == "A" else b if verdict == "B" else None


def play(item: str, x: str, y: str, judge: MatchFn, *, both_orders: bool = True, seed: int = 0) -> Match:
    """One match: ``x`` shown as A, then (both orders) ``y`` as A. A split match's winner is a
    seeded coin over the two ids (the round robin counts it as half a win each instead)."""
    first = judge(item, x, y)
    second = judge(item, y, x) if both_orders else first
    asked = 2 if both_orders else 1
    if first is None or second is None:
        return Match(None, False, asked)
    w1 = _shown_winner(first, x, y)
    w2 = _shown_winner(second, y, x) if both_orders else w1
    if w1 is not None and w1 == w2:
        return Match(w1, False, asked)
    lo, hi = sorted((x, y))
    return Match(hi if coin(seed, "bestofn match", item, lo, hi) else lo, True, asked)


def bracket(item: BonItem, *, seed: int = 0) -> tuple[str, ...]:
    """The knockout's seeded draw: ids ordered by a stable hash (never by position)."""
    return tuple(sorted(item.ids, key=lambda c: (stable_hash(seed, "bestofn bracket", item.id, c), c)))


def _play_all(
    item: str, matches: Iterable[tuple[str, str]], judge: MatchFn, both_orders: bool, seed: int
) -> list[tuple[str, str, Match]]:
    """Every match that can be played now, in order; Pending after them when one cannot."""
    played, waiting = [], False
    for a, b in matches:
        try:
            played.append((a, b, play(item, a, b, judge, both_orders=both_orders, seed=seed)))
        except Pending:
            waiting = True
    if waiting:
        raise Pending(item)
    return played


def knockout(item: BonItem, judge: MatchFn, *, seed: int = 0, both_orders: bool = True) -> Pick:
    """A single-elimination tournament over the seeded bracket: neighbours meet, the winner
    goes on, an odd one out has a bye. N - 1 matches. A failed match stops the item after its
    round: the rest of its bracket depends on it. So does a pending one (Pending is raised)."""
    alive, asked, split = list(bracket(item, seed=seed)), 0, 0
    while len(alive) > 1:
        played = _play_all(item.id, zip(alive[0::2], alive[1::2], strict=False), judge, both_orders, seed)
        asked += sum(m.judgments for _, _, m in played)
        split += sum(m.split for _, _, m in played)
        failed = [f"{a} vs {b}" for a, b, m in played if m.winner is None]
        if failed:
            why = f"the match {failed[0]} failed"
            return Pick(item.id, "knockout", None, None, asked, split_matches=split, failed=why)
        alive = [m.winner for _, _, m in played if m.winner is not None] + alive[len(alive) - len(alive) % 2 :]
    return Pick(item.id, "knockout", alive[0], item.is_correct(alive[0]), asked, split_matches=split)


def round_robin(item: BonItem, judge: MatchFn, *, seed: int = 0, both_orders: bool = True) -> Pick:
    """Every response meets every other (in id order: the lower id shown as A first); a won
    match is a win, a split one half a win each; most wins take the item. N(N-1)/2 matches."""
    wins = dict.fromkeys(item.ids, 0.0)
    played = _play_all(item.id, combinations(sorted(item.ids), 2), judge, both_orders, seed)
    asked = sum(m.judgments for _, _, m in played)
    split = sum(m.split for _, _, m in played)
    failed = [f"{a} vs {b}" for a, b, m in played if m.winner is None]
    for a, b, m in played:
        if m.split:
            wins[a] += 0.5
            wins[b] += 0.5
        elif m.winner is not None:
            wins[m.winner] += 1
    if failed:
        why = f"{plural(len(failed), 'match', 'matches')} failed ({', '.join(failed)})"
        return Pick(item.id, "round-robin", None, None, asked, split_matches=split, failed=why)
    top = max(wins.values())
    tops = [r for r in item.ids if wins[r] == top]
    return _chosen(item, "round-robin", tops, seed=seed, judgments=asked, split=split)


# -- cost ------------------------------------------------------------------------------------
def judgments_per_item(method: Method, n: int, *, both_orders: bool = True) -> int:
    """What one item of N responses costs: N scores, or 1 (2 in both orders) per match."""
    if method == "reward":
        return n
    matches = n - 1 if method == "knockout" else n * (n - 1) // 2
    return matches * (2 if both_orders else 1)


def run_cost(items: Iterable[BonItem], method: Method, *, both_orders: bool = True) -> int:
    return sum(judgments_per_item(method, it.n, both_orders=both_orders) for it in items)


def within_budget(
    items: Sequence[BonItem], method: Method, max_judgments: int | None, *, both_orders: bool = True
) -> tuple[tuple[BonItem, ...], tuple[BonItem, ...]]:
    """The longest prefix of items whose judgments fit in ``max_judgments`` (None: all), and
    the rest, left unjudged: a rerun with a larger cap goes on where this one stopped."""
    if max_judgments is None:
        return tuple(items), ()
    spent = 0
    for k, it in enumerate(items):
        spent += judgments_per_item(method, it.n, both_orders=both_orders)
        if spent > max_judgments:
            return tuple(items[:k]), tuple(items[k:])
    return tuple(items), ()


# -- N-subsampling ---------------------------------------------------------------------------
def subsample(item: BonItem, n: int, *, seed: int = 0) -> BonItem | None:
    """The item's n responses kept for a curve against N (None when it has fewer). Each
    response's rank is a stable hash of the seed and its ids, not of n, so the subsets are
    nested (the 4 kept contain the 2 kept); the kept keep their listed order."""
    if n < 2:
        raise ValueError(f"Best-of-N needs N >= 2, got {n}")
    if item.n < n:
        return None
    ranked = sorted(item.ids, key=lambda c: (stable_hash(seed, "bestofn subsample", item.id, c), c))
    keep = set(ranked[:n])
    return replace(item, responses=tuple(r for r in item.responses if r.id in keep))


def subsample_sizes(ns: Iterable[int]) -> tuple[int, ...]:
    """The sizes of a curve against N over items of sizes ``ns``: 2, 4, 8, ... below the
    largest, and each item's own N (so that items of 3 candidates have a point at 3 with every
    item in it, not only at 2 and at a 4 that few items reach)."""
    own = {n for n in ns if n >= 2}
    if not own:
        return ()
    sizes, n = set(own), 2
    while n < max(own):
        sizes.add(n)
        n *= 2
    return tuple(sorted(sizes))


# -- accuracy and baselines ------------------------------------------------------------------
@dataclass(frozen=True)
class Estimate:
    """A figure with its bootstrap interval; ``undefined`` says why the value (value None) or
    only the interval (low/high None) is missing."""

    value: float | None
    low: float | None = None
    high: float | None = None
    undefined: str | None = None


@dataclass(frozen=True)
class GroupReport:
    group: str  # a category, or OVERALL
    complete: int  # items with a pick: the items every figure below is over
    incomplete: int
    accuracy: Estimate
    gain: Estimate  # accuracy minus the random baseline (a paired interval)
    baselines: Mapping[Baseline, Estimate]
    tied_picks: int  # picks the seeded tie rule made
    split_matches: int
    incomplete_reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class BestOfNReport:
    overall: GroupReport
    categories: tuple[GroupReport, ...]


def majority_correct(item: BonItem, *, seed: int = 0) -> float | None:
    """Self-consistency: the share of correct responses among those giving the modal answer
    (ties between answers seeded); None when a response has no comparable answer."""
    answers = [r.answer for r in item.responses]
    if any(a is None for a in answers):
        return None
    counts = Counter(answers)
    top = max(counts.values())
    modal = [a for a, k in counts.items() if k == top and a is not None]
    answer = _seeded_first(modal, seed=seed, item=item.id, purpose="bestofn majority tie")
    held = [r.correct for r in item.responses if r.answer == answer]
    return sum(held) / len(held)


def _columns(items: Sequence[BonItem], picks: Mapping[str, Pick], seed: int) -> np.ndarray:
    """Per complete item: pick, random, first, majority (NaN: undefined), oracle."""
    rows = []
    for it in items:
        maj = majority_correct(it, seed=seed)
        rows.append(
            (
                float(bool(picks[it.id].correct)),
                sum(r.correct for r in it.responses) / it.n,
                float(it.responses[0].correct),
                math.nan if maj is None else maj,
                float(any(r.correct for r in it.responses)),
            )
        )
    return np.array(rows, dtype=float).reshape(len(rows), 5)


def _percentiles(reps: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column of replicates, the percentile interval over its finite values."""
    a = (1 - confidence) / 2
    lo, hi = np.full(reps.shape[1], np.nan), np.full(reps.shape[1], np.nan)
    for j in range(reps.shape[1]):
        col = reps[:, j][np.isfinite(reps[:, j])]
        if len(col):
            lo[j], hi[j] = np.quantile(col, [a, 1 - a])
    return lo, hi


def _item_replicates(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Column means over ``resamples`` resamples of the rows (items), in chunks."""
    k = len(values)
    out = np.empty((resamples, values.shape[1]))
    step = max(1, 2_000_000 // max(1, k * values.shape[1]))
    for start in range(0, resamples, step):
        idx = rng.integers(0, k, size=(min(step, resamples - start), k))
        out[start : start + len(idx)] = values[idx].mean(axis=1)
    return out


def _group(
    group: str,
    items: Sequence[BonItem],
    picks: Mapping[str, Pick],
    *,
    seed: int,
    resamples: int,
    confidence: float,
) -> GroupReport:
    done = [it for it in items if picks[it.id].correct is not None]
    open_ = [picks[it.id] for it in items if picks[it.id].correct is None]
    reasons = tuple(f"{p.item}: {p.failed or 'no pick'}" for p in open_)
    ties = sum(picks[it.id].tied_top > 1 for it in done)
    split = sum(picks[it.id].split_matches for it in items)
    if not done:
        none = Estimate(None, undefined="no complete item")
        return GroupReport(group, 0, len(open_), none, none, dict.fromkeys(BASELINES, none), ties, split, reasons)
    cols = _columns(done, picks, seed)
    maj_missing = int(np.isnan(cols[:, 3]).sum())
    # the gain is a column of its own so that its interval comes from the same resamples
    values = np.column_stack([cols, cols[:, 0] - cols[:, 1]])
    point = values.mean(axis=0)
    k = len(done)
    lo = hi = np.full(values.shape[1], np.nan)
    ci_why = None
    if resamples > 0 and k < MIN_BOOTSTRAP_PAIRS:
        ci_why = TOO_FEW_ITEMS
    elif resamples > 0:
        rng = np.random.default_rng(stable_hash(seed, "bestofn bootstrap", group))
        lo, hi = _percentiles(_item_replicates(values, resamples, rng), confidence)

    def est(j: int) -> Estimate:
        if not math.isfinite(point[j]):
            return Estimate(None)
        low, high = (float(lo[j]), float(hi[j])) if math.isfinite(lo[j]) else (None, None)
        return Estimate(float(point[j]), low, high, ci_why)

    base: dict[Baseline, Estimate] = {"random": est(1), "first": est(2), "majority": est(3), "oracle": est(4)}
    if maj_missing:
        base["majority"] = Estimate(
            None, undefined=f"{maj_missing} of {plural(k, 'item')} have a response without a comparable answer"
        )
    return GroupReport(group, k, len(open_), est(0), est(5), base, ties, split, reasons)


def best_of_n(
    items: Sequence[BonItem],
    picks: Iterable[Pick],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> BestOfNReport:
    """Best-of-N accuracy beside the baselines, overall and per category (sorted). An item
    without a pick is an error of the caller: a pick not made is an incomplete ``Pick``."""
    by_item = {p.item: p for p in picks}
    missing = [it.id for it in items if it.id not in by_item]
    if missing:
        raise ValueError(f"no pick for {plural(len(missing), 'item')}: {', '.join(missing[:5])}")
    cats: dict[str, list[BonItem]] = defaultdict(list)
    for it in items:
        cats[it.category].append(it)

    def group(name: str, members: Sequence[BonItem]) -> GroupReport:
        return _group(name, members, by_item, seed=seed, resamples=resamples, confidence=confidence)

    return BestOfNReport(group(OVERALL, items), tuple(group(c, cats[c]) for c in sorted(cats)))


def scaling(
    items: Sequence[BonItem],
    pick: Callable[[BonItem], Pick],
    *,
    sizes: Sequence[int] | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[tuple[int, BestOfNReport], ...]:
    """Accuracy against N: at each size, the items with at least N responses, subsampled
    (nested, seeded), each picked again by ``pick``."""
    if sizes is None:
        sizes = subsample_sizes(it.n for it in items)
    out = []
    for n in sizes:
        sub = [s for it in items if (s := subsample(it, n, seed=seed)) is not None]
        report = best_of_n(sub, [pick(s) for s in sub], seed=seed, resamples=resamples, confidence=confidence)
        out.append((n, report))
    return tuple(out)


# -- validity across judges ------------------------------------------------------------------
@dataclass(frozen=True)
class JudgePoint:
    """A judge's two figures; with ``pairs`` and ``items`` (``JudgePoint.of``) also what they
    are made of, so that a resample can draw the benchmark's pairs and the Best-of-N items."""

    judge: str
    accuracy: float  # on the benchmark
    gain: float  # Best-of-N accuracy minus the random baseline
    pairs: Mapping[str, tuple[float, int]] | None = None  # benchmark pair -> (its credit, its scored units)
    items: Mapping[str, float] | None = None  # Best-of-N item -> pick correct (1/0) minus its random baseline

    @classmethod
    def of(cls, judge: str, pairs: Mapping[str, tuple[float, int]], items: Mapping[str, float]) -> JudgePoint:
        """The figures from their parts: credit over scored units (as scoring's overall
        accuracy), the mean gain over the complete items (as ``best_of_n``'s)."""
        units = sum(n for _, n in pairs.values())
        if not units or not items:
            raise ValueError(f"judge {judge}: no scored benchmark pair or no complete Best-of-N item")
        accuracy = sum(c for c, _ in pairs.values()) / units
        return cls(judge, accuracy, sum(items.values()) / len(items), dict(pairs), dict(items))


def item_gains(items: Sequence[BonItem], picks: Iterable[Pick]) -> dict[str, float]:
    """Per complete item: its pick's correctness minus its random baseline (``JudgePoint.items``)."""
    by_item = {p.item: p for p in picks}
    out = {}
    for it in items:
        p = by_item.get(it.id)
        if p is not None and p.correct is not None:
            out[it.id] = float(p.correct) - sum(r.correct for r in it.responses) / it.n
    return out


JUDGES_ONLY = "judges"
TWO_LEVEL = "judges, benchmark pairs and Best-of-N items"


@dataclass(frozen=True)
class Validity:
    group: str
    judges: int
    pearson: Estimate
    spearman: Estimate
    resampled: str = JUDGES_ONLY  # what the intervals' resamples draw


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each row of x with the same row of y; NaN where a row is constant.
    Vectorised over rows so that every bootstrap resample is one row (scipy's pearsonr takes
    one sample per call)."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / den
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho: Pearson's r of the ranks (ties get their average rank, as scipy's)."""
    from scipy.stats import rankdata  # deferred: scipy.stats takes a while to load and only validity needs it

    return _pearson_rows(rankdata(x, axis=1), rankdata(y, axis=1))


def _weighted_means(weights: np.ndarray, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per resample (row of ``weights``, how often each unit is drawn) and judge (row of
    ``sums`` / ``counts`` over the same units): the judge's figure on the drawn units. NaN
    where a judge has none of them."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights @ sums.T) / (weights @ counts.T)


def _two_level(points: Sequence[JudgePoint], judges: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Each resample's benchmark accuracy and Best-of-N gain of its drawn judges (rows), each
    recomputed on one draw of the benchmark's pairs and one of the Best-of-N items, both
    shared by every judge of the resample (the same pair is hard for every judge: drawing it
    for each judge apart would hide that). A unit a judge lacks weighs nothing in its figure."""
    pair_ids = sorted({p for pt in points for p in pt.pairs or {}})
    item_ids = sorted({i for pt in points for i in pt.items or {}})
    credit = np.array([[(pt.pairs or {}).get(p, (0.0, 0))[0] for p in pair_ids] for pt in points], dtype=float)
    units = np.array([[(pt.pairs or {}).get(p, (0.0, 0))[1] for p in pair_ids] for pt in points], dtype=float)
    gain = np.array([[(pt.items or {}).get(i, 0.0) for i in item_ids] for pt in points], dtype=float)
    has = np.array([[i in (pt.items or {}) for i in item_ids] for pt in points], dtype=float)
    resamples = len(judges)
    xs, ys = np.empty(judges.shape), np.empty(judges.shape)
    step = max(1, 2_000_000 // max(1, len(pair_ids), len(item_ids)))
    for start in range(0, resamples, step):
        c = min(step, resamples - start)
        wp = rng.multinomial(len(pair_ids), np.full(len(pair_ids), 1 / len(pair_ids)), size=c)
        wi = rng.multinomial(len(item_ids), np.full(len(item_ids), 1 / len(item_ids)), size=c)
        rows = judges[start : start + c]
        xs[start : start + c] = np.take_along_axis(_weighted_means(wp, credit, units), rows, axis=1)
        ys[start : start + c] = np.take_along_axis(_weighted_means(wi, gain, has), rows, axis=1)
    return xs, ys


def validity(
    points: Sequence[JudgePoint],
    *,
    group: str = OVERALL,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Validity:
    """Pearson and Spearman correlation between judges' benchmark accuracy and their Best-of-N
    gain over random, with percentile intervals (a resample where either is constant has no
    correlation and is left out). When every point carries its pairs and items, a resample
    draws judges, benchmark pairs and Best-of-N items, and recomputes each drawn judge's two
    figures (``_two_level``); else it draws judges only. Undefined below ``MIN_JUDGES`` judges,
    or when either figure does not vary across them."""
    k = len(points)
    if len({p.judge for p in points}) != k:
        raise ValueError(f"{group}: a judge appears twice")
    x = np.array([[p.accuracy for p in points]], dtype=float)
    y = np.array([[p.gain for p in points]], dtype=float)
    why = None
    if k < MIN_JUDGES:
        why = f"{plural(k, 'judge')}, fewer than {MIN_JUDGES}"
    elif np.ptp(x) == 0:
        why = "benchmark accuracy does not vary across judges"
    elif np.ptp(y) == 0:
        why = "Best-of-N gain does not vary across judges"
    if why:
        return Validity(group, k, Estimate(None, undefined=why), Estimate(None, undefined=why))
    levels = all(p.pairs and p.items for p in points)
    xs = ys = None  # each row: the drawn judges' figures in one resample
    if resamples > 0:
        rng = np.random.default_rng(stable_hash(seed, "bestofn validity", group))
        reps = rng.integers(0, k, size=(resamples, k))
        if levels:
            xs, ys = _two_level(points, reps, np.random.default_rng(stable_hash(seed, "bestofn validity units", group)))
        else:
            xs, ys = x[0][reps], y[0][reps]
    out = []
    for fn in (_pearson_rows, _spearman_rows):
        value = float(fn(x, y)[0])
        if xs is None or ys is None:
            out.append(Estimate(value))
            continue
        r = fn(xs, ys)[:, None]
        lo, hi = _percentiles(r, confidence)
        low, high = (float(lo[0]), float(hi[0])) if math.isfinite(lo[0]) else (None, None)
        out.append(Estimate(value, low, high, None if low is not None else "no resample varies"))
    return Validity(group, k, out[0], out[1], TWO_LEVEL if levels else JUDGES_ONLY)


def validity_by_category(
    points: Mapping[str, Sequence[JudgePoint]],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[Validity, ...]:
    """``validity`` for each group (OVERALL first, then categories sorted)."""
    order = sorted(points, key=lambda g: (g != OVERALL, g))
    return tuple(validity(points[g], group=g, seed=seed, resamples=resamples, confidence=confidence) for g in order)


# -- reports ---------------------------------------------------------------------------------
def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def estimate_json(e: Estimate) -> dict[str, object]:
    out: dict[str, object] = {"value": _round(e.value), "ci": None}
    if e.low is not None and e.high is not None:
        out["ci"] = [_round(e.low), _round(e.high)]
    if e.undefined:
        out["undefined"] = e.undefined
    return out


def group_json(g: GroupReport) -> dict[str, object]:
    return {
        "group": g.group,
        "items": g.complete,
        "incomplete": g.incomplete,
        "accuracy": estimate_json(g.accuracy),
        "gain_over_random": estimate_json(g.gain),
        "baselines": {b: estimate_json(e) for b, e in g.baselines.items()},
        "tied_picks": g.tied_picks,
        "split_matches": g.split_matches,
        "incomplete_reasons": list(g.incomplete_reasons),
    }


def report_json(r: BestOfNReport) -> dict[str, object]:
    return {"overall": group_json(r.overall), "categories": [group_json(g) for g in r.categories]}


def estimate_text(e: Estimate, signed: bool = False) -> str:
    """``0.625 [0.500, 0.750]``; ``–`` with the reason when undefined."""
    if e.value is None:
        return f"– ({e.undefined})" if e.undefined else "–"
    v = f"{e.value:+.3f}" if signed else f"{e.value:.3f}"
    if e.low is not None and e.high is not None:
        return f"{v} [{e.low:.3f}, {e.high:.3f}]"
    return f"{v} [{e.undefined}]" if e.undefined else v


def report_lines(r: BestOfNReport) -> list[str]:
    """The report as text: one block per group (overall first)."""
    out = []
    for g in (r.overall, *r.categories):
        head = f"{g.group}: {plural(g.complete, 'item')}"
        if g.incomplete:
            head += f", {g.incomplete} incomplete (not counted)"
        out.append(head)
        out.append(f"  Best-of-N accuracy  {estimate_text(g.accuracy)}")
        out.append(f"  gain over random    {estimate_text(g.gain, signed=True)}")
        for b, e in g.baselines.items():
            out.append(f"  {b:<19} {estimate_text(e)}")
        if g.tied_picks or g.split_matches:
            split = plural(g.split_matches, "split match", "split matches")
            out.append(f"  seeded: {plural(g.tied_picks, 'tie')} at the top, {split}")
    return out


def curve_lines(curve: Sequence[tuple[int, BestOfNReport]]) -> list[str]:
    """Accuracy against N, overall: one line per N beside the random pick and the oracle."""
    out = ["accuracy against N (overall):"]
    for n, r in curve:
        o = r.overall
        out.append(
            f"  N={n:<3} {estimate_text(o.accuracy)}  random {estimate_text(o.baselines['random'])}  "
            f"oracle {estimate_text(o.baselines['oracle'])}  ({plural(o.complete, 'item')})"
        )
    return out
