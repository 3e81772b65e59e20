"""AI-assisted pre-selection of hard pairs, as VL-RewardBench built its set.

1. Duplicates (``dedup``): reported; pairs of duplicate items dropped on request.
2. An ensemble of n judges judges every pair whose answer is known (``Pair.known_preference``
   first/second, from reference answers or imported preferences) in both orders, through
   ``curate.judging`` (stored as judge runs with purpose "select", so a rerun resumes).
3. Per judge and pair: *right* (same verdict in both orders, the known one), *wrong* (same
   verdict, not the known one; a tie counts as wrong), *inconsistent* (the verdict flips with
   the order), or no verdict: *failed* (a request failed: no answer), *unparsed* (an answer
   without a readable verdict) or *unjudged* (never asked).
4. A pair is hard when at least m judges are wrong or inconsistent on it (default: a
   majority, ``m = n // 2 + 1``); easy pairs are dropped. A pair is decided only from valid
   verdicts: hard when the valid ones already make m, easy when even the judges without a
   verdict could not make m; otherwise it is left as it was and listed as unjudged (a
   failed request never drops or keeps a pair; rerunning resends only the failed ones).
5. Stratified sampling: within each category at most ``target_per_category`` hard pairs are
   kept, a seeded choice; the rest are dropped. A hard pair whose place depends on unjudged
   pairs of its category ranked before it is held (left as it was) too.

Every decided pair gets ``status`` and a ``reason`` starting with "select:" and its per-judge
outcomes in ``metadata["selection"]``, and the judges' majority verdict, when they have one, in
``metadata["proposal"]`` (``proposal``: what a ``verify`` scheme shows annotators). A rerun
re-decides the pairs that are candidates or were decided by ``select`` before; pairs dropped by
other stages are left alone. Pairs with no known answer are left as candidates (for humans),
with a reason saying so.

The judges are read by ``load_judges`` (a models file, through curate/judging/config.py as
every judge is) and must judge each pair in both orders. The judge step is replaceable: pass
``verdicts`` (judge -> pair -> order -> verdict, the verdict ``None`` for an answer without one
and ``FAILED`` for a failed request) to select on judgments obtained elsewhere, e.g. an
earlier ``mmrb evaluate`` run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .dedup import DEFAULT_MAX_DISTANCE, DuplicateGroup, duplicate_lines, find_duplicates
from .errors import MmrbError
from .model import PREFERENCES, Item, Pair, Preference, word_of
from .seeding import unit
from .wording import plural

if TYPE_CHECKING:  # not imported for `mmrb select --help`, which shows this module's defaults
    from .judging.judge import Judge
    from .store.protocols import SelectionStore

JudgeOutcome = Literal["right", "wrong", "inconsistent", "failed", "unparsed", "unjudged"]
Verdicts = Mapping[str, Mapping[str, Mapping[str, str | None]]]  # judge -> pair -> order -> verdict
PREFIX = "select:"
DEFAULT_TEMPLATE = "vlrewardbench"
FAILED = "error"  # the verdict of a failed request (the judgment outcome's own name)
MISSING = "missing"  # no judgment at all
VALID: tuple[str, ...] = ("right", "wrong", "inconsistent")
HARD: tuple[str, ...] = ("wrong", "inconsistent")


def judge_outcome(known: str, forward: str | None, reverse: str | None) -> JudgeOutcome:
    """One judge on one pair from its verdicts in both orders (``None``: an answer without a
    verdict, ``FAILED``: a failed request, ``MISSING``: not asked)."""
    if FAILED in (forward, reverse):
        return "failed"
    if MISSING in (forward, reverse):
        return "unjudged"
    if forward is None or reverse is None:
        return "unparsed"
    if forward != reverse:
        return "inconsistent"
    return "right" if forward == known else "wrong"


def proposal(verdicts: Verdicts, pair_id: str) -> Preference | None:
    """The judges' proposed preference of a pair (VL-RewardBench's AI-assisted labelling, which
    humans then verify: the ``verify`` scheme shows it): a verdict that more than half of all
    the judges gave in both orders. A judge that failed, did not answer or contradicted itself
    proposes nothing, and cannot tip the majority either way; no majority, no proposal."""
    votes: Counter[str] = Counter()
    for by_pair in verdicts.values():
        got = by_pair.get(pair_id, {})
        forward, reverse = got.get("forward"), got.get("reverse")
        if forward == reverse and forward in PREFERENCES:
            votes[str(forward)] += 1
    best = votes.most_common(1)
    if best and best[0][1] * 2 > len(verdicts):
        return word_of(PREFERENCES, best[0][0])
    return None


def _without_verdict(outcomes: Mapping[str, str]) -> str:
    counts: dict[str, int] = {}
    for o in outcomes.values():
        if o not in VALID:
            counts[o] = counts.get(o, 0) + 1
    return ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))


@dataclass(frozen=True)
class SelectionDecision:
    pair_id: str
    status: str  # "selected", "dropped" or "candidate"
    reason: str
    outcomes: Mapping[str, str] = field(default_factory=dict)  # judge -> outcome


@dataclass
class SelectReport:
    considered: int = 0
    no_known_answer: int = 0
    judged: int = 0
    kept: int = 0
    easy: int = 0
    over_target: int = 0
    duplicates_dropped: int = 0
    m: int = 0
    n: int = 0
    duplicates: list[DuplicateGroup] = field(default_factory=list)
    per_category: dict[str, dict[str, int]] = field(default_factory=dict)  # cat -> hard/kept/target
    judge_outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    judge_runs: dict[str, str] = field(default_factory=dict)
    # pair -> judge -> outcome, left as it was
    unjudged: dict[str, dict[str, JudgeOutcome]] = field(default_factory=dict)
    held: dict[str, str] = field(default_factory=dict)  # hard pair -> why its place is not known yet
    incomplete: list[str] = field(default_factory=list)  # per judge run with failed requests: what and how to resume

    @property
    def complete(self) -> bool:
        return not self.incomplete

    def as_dict(self) -> dict[str, Any]:
        """`mmrb select --json` (docs/json.md): every field, and ``complete``."""
        return {**asdict(self), "complete": self.complete}

    def lines(self) -> list[str]:
        out = [
            f"{plural(self.considered, 'pair')} considered: {self.judged} judged by {plural(self.n, 'judge')} "
            f"(hard = at least {self.m} wrong or inconsistent), {self.no_known_answer} without a known answer left "
            "for humans",
            f"kept {self.kept}; dropped {self.easy} easy, {self.over_target} over the category target, "
            f"{plural(self.duplicates_dropped, 'duplicate')}",
        ]
        if self.unjudged or self.held:
            out.append(
                f"left as they were: {len(self.unjudged)} unjudged (the judges without a verdict could "
                f"change the decision), {len(self.held)} hard pairs held (their category's target depends "
                "on unjudged pairs)"
            )
            for pid, outcomes in list(self.unjudged.items())[:5]:
                out.append(f"  unjudged {pid}: " + ", ".join(f"{j} {o}" for j, o in sorted(outcomes.items())))
            if len(self.unjudged) > 5:
                out.append(f"  ... and {len(self.unjudged) - 5} more unjudged")
        for name, c in self.judge_outcomes.items():
            out.append(f"  judge {name}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
        for cat, c in sorted(self.per_category.items()):
            tgt = c.get("target")
            short = " (short of target)" if tgt is not None and c["kept"] < tgt else ""
            out.append(
                f"  {cat}: {c['hard']} hard, {c['kept']} kept" + (f" of target {tgt}{short}" if tgt is not None else "")
            )
        return out + duplicate_lines(self.duplicates)


def decide(
    pairs: Sequence[Pair],
    category_of: Mapping[str, str],
    verdicts: Verdicts,
    *,
    m: int | None = None,
    target_per_category: int | None = None,
    seed: int = 0,
    report: SelectReport | None = None,
) -> list[SelectionDecision]:
    """The pure selection rule over judged pairs (pairs without a known answer are skipped)."""
    report = report if report is not None else SelectReport()
    judges = sorted(verdicts)
    n = len(judges)
    if n == 0:
        raise MmrbError("selection needs at least one judge")
    m = m if m is not None else n // 2 + 1
    if not 1 <= m <= n:
        raise MmrbError(f"m must be between 1 and the number of judges ({n}), got {m}")
    report.m, report.n = m, n
    out: list[SelectionDecision] = []
    hard_by_cat: dict[str, list[tuple[Pair, dict[str, JudgeOutcome], int]]] = defaultdict(list)
    open_by_cat: dict[str, list[Pair]] = defaultdict(list)  # unjudged pairs that could still be hard
    for p in pairs:
        if p.known_preference not in ("first", "second"):
            continue
        report.judged += 1
        outcomes: dict[str, JudgeOutcome] = {}
        for j in judges:
            got = verdicts[j].get(p.id, {})
            outcomes[j] = judge_outcome(p.known_preference, got.get("forward", MISSING), got.get("reverse", MISSING))
        for j, o in outcomes.items():
            report.judge_outcomes.setdefault(j, {})
            report.judge_outcomes[j][o] = report.judge_outcomes[j].get(o, 0) + 1
        hard = sum(1 for o in outcomes.values() if o in HARD)
        open_ = sum(1 for o in outcomes.values() if o not in VALID)
        cat = category_of[p.id]
        stats = report.per_category.setdefault(cat, {"hard": 0, "kept": 0})
        if target_per_category is not None:
            stats["target"] = target_per_category
        if hard >= m:  # the valid verdicts already make it hard
            stats["hard"] += 1
            hard_by_cat[cat].append((p, outcomes, hard))
        elif hard + open_ < m:  # easy whatever the missing verdicts would have been
            report.easy += 1
            extra = f"; {_without_verdict(outcomes)}, which could not change that" if open_ else ""
            out.append(
                SelectionDecision(
                    p.id,
                    "dropped",
                    f"{PREFIX} easy: {hard} of {plural(n, 'judge')} wrong or inconsistent, need {m}{extra}",
                    outcomes,
                )
            )
        else:  # the judges without a verdict decide it: not decided
            report.unjudged[p.id] = outcomes
            open_by_cat[cat].append(p)
    for cat in sorted(set(hard_by_cat) | set(open_by_cat)):
        ranked: list[tuple[Pair, dict[str, JudgeOutcome] | None, int]] = list(hard_by_cat.get(cat, []))
        ranked += [(p, None, 0) for p in open_by_cat.get(cat, [])]
        ranked.sort(key=lambda t: (unit("select", seed, t[0].id), t[0].id))
        hard_before = open_before = 0
        for p, judged, h in ranked:
            if judged is None:
                open_before += 1
                continue
            names = ", ".join(j for j, o in sorted(judged.items()) if o in HARD)
            if target_per_category is None or hard_before + open_before < target_per_category:
                report.kept += 1
                report.per_category[cat]["kept"] += 1
                out.append(
                    SelectionDecision(
                        p.id,
                        "selected",
                        f"{PREFIX} hard: {h} of {plural(n, 'judge')} wrong or inconsistent ({names})",
                        judged,
                    )
                )
            elif hard_before >= target_per_category:
                report.over_target += 1
                out.append(
                    SelectionDecision(
                        p.id,
                        "dropped",
                        f"{PREFIX} hard ({h} of {n}) but over the target of {target_per_category} for {cat}",
                        judged,
                    )
                )
            else:  # kept or over the target depending on unjudged pairs ranked before it
                report.held[p.id] = f"{open_before} unjudged pairs of {cat} rank before it"
            hard_before += 1
    return out


def _owned(p: Pair) -> bool:
    return p.status == "candidate" or (p.reason or "").startswith(PREFIX)


def load_judges(
    path: str | Path,
    *,
    template: str = DEFAULT_TEMPLATE,
    max_image_side: int | None = 1024,
    allow_missing_images: bool = False,
    max_response_chars: int | None = None,
) -> list[Judge]:
    """The judges of a models file, each asked in both orders: ``template`` and
    ``max_image_side`` for the entries that name none, ``allow_missing_images`` and
    ``max_response_chars`` (when given) for every one."""
    # here, not at the top: `mmrb select --help` imports this module for its defaults
    from .judging.config import load_judges as load
    from .judging.templates import get_template

    return load(
        path,
        defaults={"template": get_template(template), "max_image_side": max_image_side},
        overrides={
            "order": "both",
            "samples": 1,
            "allow_missing_images": allow_missing_images or None,
            "max_response_chars": max_response_chars,
        },
    )


def both_orders(judges: Sequence[Judge], pair_ids: Sequence[str]) -> None:
    """Refuse a judge that does not judge each pair in both orders (a reward model scores
    each response alone): selection reads the first sample's verdict in each."""
    for j in judges:
        if any(not {("forward", 0), ("reverse", 0)} <= set(j.plan(pid)) for pid in pair_ids):
            raise MmrbError(f"judge {j.name!r} does not judge each pair in both orders, which selection needs")


def judge_verdicts(
    store: SelectionStore,
    pairs: Sequence[Pair],
    items: Mapping[str, Item],
    judges: Sequence[Judge],
    *,
    progress: Callable[[str, int, int], None] | None = None,
    report: SelectReport | None = None,
) -> dict[str, dict[str, dict[str, str | None]]]:
    """Run each judge on the pairs in both orders (resumable judge runs) and read back the
    verdicts: ``FAILED`` for a failed request, ``None`` for an answer without a verdict."""
    from .judging import JudgeTask  # as in load_judges: not for `mmrb select --help`
    from .judging.records import RunDataset, task_parts
    from .judging.runner import run_judge

    both_orders(judges, [p.id for p in pairs])
    cands = {c.id: c for c in store.candidates(ids=sorted({x for p in pairs for x in (p.first_id, p.second_id)}))}
    tasks = []
    known = store.image_paths(
        [ref.sha256 for p in pairs for ref in items[p.item_id].images if ref.sha256]
        + [ref.sha256 for c in cands.values() for ref in c.images if ref.sha256]
    )
    for p in pairs:
        item = items[p.item_id]
        imgs = []
        for ref in item.images:
            path = known.get(ref.sha256) if ref.sha256 else None
            imgs.append(str(path) if path is not None else ref.source)
        first, second = cands[p.first_id], cands[p.second_id]
        tasks.append(
            JudgeTask(
                p.id,
                item.prompt,
                first.text,
                second.text,
                tuple(imgs),
                task_parts(first.content, known),
                task_parts(second.content, known),
                item.category,
            )
        )
    out: dict[str, dict[str, dict[str, str | None]]] = {}
    seen: set[str] = set()
    for judge in judges:
        if judge.name in seen:
            raise MmrbError(f"judge {judge.name!r} is listed twice: give each a distinct name")
        seen.add(judge.name)
        summary = run_judge(
            store,
            tasks,
            judge,
            purpose="select",
            dataset=RunDataset(name="select"),
            progress=partial(progress, judge.name) if progress else None,
        )
        if report is not None:
            report.judge_runs[judge.name] = summary.run_id
            if not summary.complete:
                report.incomplete.append(summary.failure_line())
        got: dict[str, dict[str, str | None]] = defaultdict(dict)
        for j in store.judgments(summary.run_id):
            if j.sample_index == 0:
                got[j.pair_id][j.order] = (
                    FAILED if j.outcome == "error" else j.verdict if j.outcome == "parsed" else None
                )
        out[judge.name] = dict(got)
    return out


def select(
    store: SelectionStore,
    judges: Sequence[Judge] = (),
    *,
    verdicts: Verdicts | None = None,
    m: int | None = None,
    target_per_category: int | None = None,
    seed: int = 0,
    drop_duplicate_images: bool = False,
    drop_duplicate_prompts: bool = False,
    max_distance: int = DEFAULT_MAX_DISTANCE,
    progress: Callable[[str, int, int], None] | None = None,
    fingerprints: Callable[[int, int], None] | None = None,  # (items done, items) of the duplicate check
) -> SelectReport:
    if not judges and verdicts is None:
        raise MmrbError("selection needs judges (a models file) or stored verdicts")
    if target_per_category is not None and target_per_category < 0:
        raise MmrbError(f"the target per category must be at least 0, got {target_per_category}")
    report = SelectReport()
    pairs = [p for p in store.pairs() if _owned(p)]
    items = {i.id: i for i in store.items(ids=sorted({p.item_id for p in pairs}))} if pairs else {}
    report.considered = len(pairs)

    report.duplicates = find_duplicates(store, list(items.values()), max_distance=max_distance, progress=fingerprints)
    dup_of: dict[str, str] = {}
    for g in report.duplicates:
        if (g.kind == "image" and drop_duplicate_images) or (g.kind == "prompt" and drop_duplicate_prompts):
            for dup in g.duplicates:
                dup_of.setdefault(
                    dup, f"{PREFIX} duplicate {'image' if g.kind == 'image' else 'prompt and image'} of item {g.keep}"
                )

    decisions: list[SelectionDecision] = []
    to_judge: list[Pair] = []
    for p in pairs:
        if p.item_id in dup_of:
            report.duplicates_dropped += 1
            decisions.append(SelectionDecision(p.id, "dropped", dup_of[p.item_id]))
        elif p.known_preference not in ("first", "second"):
            report.no_known_answer += 1
            why = f"{PREFIX} not judged: no known answer, left for humans"
            decisions.append(SelectionDecision(p.id, "candidate", why))
        else:
            to_judge.append(p)

    if verdicts is None:
        verdicts = judge_verdicts(store, to_judge, items, judges, progress=progress, report=report)
    category_of = {p.id: items[p.item_id].category for p in to_judge}
    decisions += decide(
        to_judge, category_of, verdicts, m=m, target_per_category=target_per_category, seed=seed, report=report
    )

    by_id = {p.id: p for p in pairs}
    with store.transaction() as tx:
        for d in decisions:
            meta = dict(by_id[d.pair_id].metadata)
            if d.outcomes:
                meta["selection"] = dict(d.outcomes)
            else:
                meta.pop("selection", None)
            proposed = proposal(verdicts, d.pair_id) if d.outcomes else None
            if proposed is not None:
                meta["proposal"] = proposed  # what a verify scheme shows (curate.schemes.proposal_of)
            else:
                meta.pop("proposal", None)
            store.update_pair(d.pair_id, conn=tx, status=d.status, reason=d.reason, metadata=meta)
    return report


__all__ = [
    "FAILED",
    "MISSING",
    "SelectionDecision",
    "SelectReport",
    "decide",
    "judge_outcome",
    "both_orders",
    "judge_verdicts",
    "load_judges",
    "select",
]
