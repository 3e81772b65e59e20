"""Pair candidate responses of each item, with automatic correctness where a reference decides.

Strategies (``origin`` = ``pair:<strategy>``):

* ``cross_model``: every pair of candidates from two different models;
* ``correct_incorrect``: one correct and one incorrect candidate (decided from the reference);
  the known preference is the correct one and the task is "correctness";
* ``same_correctness``: both correct or both incorrect, the "preference" task of Multimodal
  RewardBench: humans say which is better.

Rules common to all:

* A pair's id is a hash of (item, the two candidate ids in sorted order), so re-running never
  duplicates a pair; which candidate is ``first`` is a seeded coin flip per pair, so the
  correct answer is not always first.
* Identical or near-identical responses are never paired: normalised texts equal, or the
  Jaccard similarity of their normalised word sets at least ``near_duplicate`` (0.9 by
  default: two 100-word answers sharing 95 words; short answers that differ only in
  punctuation or case are always caught by the normalised equality).
* ``cap_per_item`` keeps at most that many pairs per item, counting pairs already stored;
  the kept ones are a seeded choice.
* Each pair records its lengths (characters and words of both responses) in its metadata; the
  report gives, per category, how often the known-preferred (chosen) response is the longer
  one: a "pick the longer answer" judge would score exactly that. ``balance_length`` stores
  the surplus pairs of the majority direction as ``dropped`` (reason given) so that, within each
  category, chosen is longer in as many kept pairs as it is shorter. Only pairs with a known
  preference can be balanced, and only among the pairs this run creates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from statistics import mean
from typing import TYPE_CHECKING, Literal

from .correctness import CorrectnessVerdict, decide, normalise, options_from_prompt
from .errors import MmrbError
from .model import Candidate, Item, Pair, Preference
from .seeding import hex_hash, unit
from .wording import plural

if TYPE_CHECKING:  # not imported for `mmrb pair --help`
    from .store.protocols import PairingStore

Strategy = Literal["cross_model", "correct_incorrect", "same_correctness"]
STRATEGIES: tuple[str, ...] = ("cross_model", "correct_incorrect", "same_correctness")
DEFAULT_NEAR_DUPLICATE = 0.9


def pair_id(item_id: str, a: str, b: str) -> str:
    x, y = sorted((a, b))
    return "pr-" + hex_hash(item_id, x, y, n=20)


def similarity(a: str, b: str) -> float:
    """1.0 for texts equal after normalisation, else the Jaccard index of their word sets."""
    na, nb = normalise(a), normalise(b)
    if na == nb:
        return 1.0
    sa, sb = set(na.split()), set(nb.split())
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


@dataclass
class CategoryStats:
    pairs: int = 0
    known: int = 0  # pairs with a known preference
    chosen_longer: int = 0
    chosen_shorter: int = 0
    dropped_for_balance: int = 0
    mean_abs_len_diff: float = 0.0  # characters

    @property
    def longer_wins(self) -> float | None:
        """Accuracy of "pick the longer answer" on pairs with a known preference."""
        decided = self.chosen_longer + self.chosen_shorter
        return self.chosen_longer / decided if decided else None

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "longer_wins": self.longer_wins}


@dataclass
class PairingReport:
    strategy: str
    created: int = 0
    existing: int = 0  # already stored, left as they were
    near_duplicates: int = 0
    capped: int = 0  # left out by the per-item cap
    unsure_candidates: int = 0  # candidates no rule could decide: they go to humans
    by_method: dict[str, int] = field(default_factory=dict)  # candidate decisions per method
    categories: dict[str, CategoryStats] = field(default_factory=dict)
    items: int = 0

    def as_dict(self) -> dict[str, object]:
        """Every figure of the report (`mmrb pair --json`)."""
        return {**asdict(self), "categories": {c: s.as_dict() for c, s in sorted(self.categories.items())}}

    def lines(self) -> list[str]:
        out = [
            f"{plural(self.created, 'pair')} created ({self.strategy}) from {plural(self.items, 'item')}; "
            f"{self.existing} already stored, {self.near_duplicates} near-identical skipped, "
            f"{self.capped} over the per-item cap",
            self._correctness_line(),
        ]
        for cat, s in sorted(self.categories.items()):
            if s.longer_wins is None:  # no pair to measure the length bias on: say so, not "n/a of 0"
                lw = "no pair with a known preference and responses of unequal length"
            else:
                lw = f"chosen is longer in {s.longer_wins:.0%} of {s.known} with a known preference"
            bal = f", {s.dropped_for_balance} dropped to balance length" if s.dropped_for_balance else ""
            out.append(
                f"  {cat}: {plural(s.pairs, 'pair')}, mean |length difference| {s.mean_abs_len_diff:.0f} chars, "
                f"{lw}{bal}"
            )
        return out

    def _correctness_line(self) -> str:
        # "none" is the method of a candidate whose item has no reference answer: no rule ran
        ruled = {k: v for k, v in sorted(self.by_method.items()) if k != "none"}
        line = "correctness from the reference answer: " + (
            ", ".join(f"{k} {v}" for k, v in ruled.items()) + f" ({self.unsure_candidates} of them unsure, for humans)"
            if ruled
            else "no candidate"
        )
        without = self.by_method.get("none", 0)
        if without:
            line += f"; {plural(without, 'candidate')} without a reference answer (for humans)"
        return line


def _lengths(a: Candidate, b: Candidate) -> dict:
    return {
        "len_first": len(a.text),
        "len_second": len(b.text),
        "words_first": len(a.text.split()),
        "words_second": len(b.text.split()),
    }


def _method(d1: CorrectnessVerdict, d2: CorrectnessVerdict) -> str | None:
    methods = sorted({d.method for d in (d1, d2) if d.method != "none"})
    return "|".join(methods) or None


def decide_all(item: Item, cands: list[Candidate]) -> dict[str, CorrectnessVerdict]:
    """Automatic correctness of each candidate; a letter reference may also be matched by the
    text of an option the question lists."""
    options = options_from_prompt(item.prompt)
    return {c.id: decide(c.text, item.reference, options=options) for c in cands}


def make_pairs(
    item: Item,
    cands: list[Candidate],
    *,
    strategy: Strategy,
    seed: int = 0,
    near_duplicate: float = DEFAULT_NEAR_DUPLICATE,
    decisions: dict[str, CorrectnessVerdict] | None = None,
) -> tuple[list[Pair], int]:
    """The pairs of one item under a strategy, and how many near-duplicates were skipped."""
    decisions = decisions if decisions is not None else decide_all(item, cands)
    out: list[Pair] = []
    dups = 0
    for a, b in combinations(sorted(cands, key=lambda c: c.id), 2):
        da, db = decisions[a.id], decisions[b.id]
        decided = da.verdict != "unsure" and db.verdict != "unsure"
        if strategy == "cross_model":
            if a.model == b.model:
                continue
        elif strategy == "correct_incorrect":
            if not decided or da.verdict == db.verdict:
                continue
        elif strategy == "same_correctness":
            if not decided or da.verdict != db.verdict:
                continue
        else:
            raise MmrbError(f"unknown pairing strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
        if similarity(a.text, b.text) >= near_duplicate:
            dups += 1
            continue
        pid = pair_id(item.id, a.id, b.id)
        if unit("pairside", seed, pid) < 0.5:
            a_, b_, da_, db_ = a, b, da, db
        else:
            a_, b_, da_, db_ = b, a, db, da
        known: Preference | None = None
        task = None
        if decided:
            task = "correctness" if da_.verdict != db_.verdict else "preference"
            if task == "correctness":
                known = "first" if da_.verdict == "correct" else "second"
        meta = _lengths(a_, b_)
        meta.update(
            extracted_first=da_.extracted,
            extracted_second=db_.extracted,
            models=[a_.model, b_.model],
        )
        out.append(
            Pair(
                id=pid,
                item_id=item.id,
                first_id=a_.id,
                second_id=b_.id,
                origin=f"pair:{strategy}",
                auto_first=da_.verdict if da_.method != "none" else None,
                auto_second=db_.verdict if db_.method != "none" else None,
                auto_method=_method(da_, db_),
                known_preference=known,
                task=task,
                metadata=meta,
            )
        )
    return out, dups


def _chosen_longer(p: Pair) -> bool | None:
    if p.known_preference not in ("first", "second"):
        return None
    lf, ls = p.metadata["len_first"], p.metadata["len_second"]
    if lf == ls:
        return None
    return (lf > ls) == (p.known_preference == "first")


def pair_items(
    store: PairingStore,
    *,
    strategy: Strategy = "cross_model",
    seed: int = 0,
    cap_per_item: int | None = None,
    near_duplicate: float = DEFAULT_NEAR_DUPLICATE,
    balance_length: bool = False,
    item_ids: Iterable[str] | None = None,
    models: Iterable[str] | None = None,
) -> PairingReport:
    if strategy not in STRATEGIES:
        raise MmrbError(f"unknown pairing strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    if cap_per_item is not None and cap_per_item < 1:
        raise MmrbError(f"the cap per item must be at least 1, got {cap_per_item}")
    if not 0 < near_duplicate <= 1:
        raise MmrbError(f"the near-duplicate threshold must be in (0, 1], got {near_duplicate}")
    report = PairingReport(strategy=strategy)
    wanted_models = set(models) if models is not None else None

    with store.transaction() as tx:
        items = store.items(ids=list(item_ids) if item_ids is not None else None, conn=tx)
        by_item: dict[str, list[Candidate]] = defaultdict(list)
        for c in store.candidates(conn=tx):
            if wanted_models is None or c.model in wanted_models:
                by_item[c.item_id].append(c)
        existing = {p.id: p for p in store.pairs(conn=tx)}
        per_item_existing: dict[str, int] = defaultdict(int)
        for p in existing.values():
            per_item_existing[p.item_id] += 1

        new: list[Pair] = []
        category_of: dict[str, str] = {}
        for item in items:
            cands = by_item.get(item.id, [])
            if len(cands) < 2:
                continue
            report.items += 1
            decisions = decide_all(item, cands)
            for d in decisions.values():
                report.by_method[d.method] = report.by_method.get(d.method, 0) + 1
                if d.verdict == "unsure" and d.method != "none":
                    report.unsure_candidates += 1
            made, dups = make_pairs(
                item, cands, strategy=strategy, seed=seed, near_duplicate=near_duplicate, decisions=decisions
            )
            report.near_duplicates += dups
            fresh = [p for p in made if p.id not in existing]
            report.existing += len(made) - len(fresh)
            if cap_per_item is not None:
                room = max(0, cap_per_item - per_item_existing[item.id])
                fresh.sort(key=lambda p: (unit("cap", seed, p.id), p.id))
                report.capped += max(0, len(fresh) - room)
                fresh = fresh[:room]
            for p in fresh:
                category_of[p.id] = item.category
            new += fresh

        if balance_length:
            new = _balance(new, category_of, seed, report)
        for p in new:
            s = report.categories.setdefault(category_of[p.id], CategoryStats())
            if p.status == "dropped":
                continue
            s.pairs += 1
            longer = _chosen_longer(p)
            if p.known_preference in ("first", "second"):
                s.known += 1
            if longer is True:
                s.chosen_longer += 1
            elif longer is False:
                s.chosen_shorter += 1
        for cat, s in report.categories.items():
            diffs = [
                abs(p.metadata["len_first"] - p.metadata["len_second"])
                for p in new
                if category_of[p.id] == cat and p.status != "dropped"
            ]
            s.mean_abs_len_diff = mean(diffs) if diffs else 0.0
        store.add_pairs(new, conn=tx)
        report.created = sum(1 for p in new if p.status != "dropped")
    return report


def _balance(pairs: list[Pair], category_of: dict[str, str], seed: int, report: PairingReport) -> list[Pair]:
    """Drop the surplus of the majority length direction within each category (seeded)."""
    groups: dict[tuple[str, bool], list[Pair]] = defaultdict(list)
    for p in pairs:
        longer = _chosen_longer(p)
        if longer is not None:
            groups[(category_of[p.id], longer)].append(p)
    drop: dict[str, str] = {}
    for cat in {c for c, _ in groups}:
        lo, hi = groups.get((cat, False), []), groups.get((cat, True), [])
        keep = min(len(lo), len(hi))
        for side, group in (("longer", hi), ("shorter", lo)):
            group = sorted(group, key=lambda p: (unit("balance", seed, p.id), p.id))
            for p in group[keep:]:
                drop[p.id] = f"length balance: chosen is {side} in too many pairs of {cat}"
        report.categories.setdefault(cat, CategoryStats()).dropped_for_balance = sum(
            1 for g in (lo, hi) for p in g if p.id in drop
        )
    return [replace(p, status="dropped", reason=drop[p.id]) if p.id in drop else p for p in pairs]


__all__ = ["PairingReport", "STRATEGIES", "make_pairs", "pair_id", "pair_items", "similarity"]
