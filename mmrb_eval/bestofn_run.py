"""Best-of-N on the store's items, stored and resumable: ``mmrb bestofn``'s workflow.

The responses. Each item with at least two candidates (``mmrb ingest``, ``mmrb sample``) whose
correctness is known is an item of N responses. Correctness comes from the item's reference,
decided as ``mmrb pair`` decides it (``curate.pairing.decide_all``, the normalised answer read
from each response kept for the majority baseline), or from the expert labels of the pairs each
candidate appears in (``label_correctness``: an adjudication first, else the majority of the
annotators' votes; such a response has no normalised answer). ``Correctness``: ``reference``,
``labels``, or ``auto`` (the reference where the item has one, else the labels). An item whose
correctness is not known for every response is left out and counted by reason.

The judgments. Every score and match a judge is asked for is stored in a judge run (purpose
``bestofn``) through the judge runner's own pieces (curate/judging/runner.py), so that a rerun
sends only what is not stored, and the failed requests again. A match between responses x and
y of an item is one pair, ``match_id``, whose stored order is the ids' sorted order: its
``forward`` judgment shows the lower id as A, its ``reverse`` the other (curate/sides.py). The
pair depends on neither the method nor the seed, so a knockout, a round robin and a knockout
under another seed share the matches they have in common. A reward model scores the responses
two at a time (the sorted ids paired off, the odd one out with itself), one stored judgment
holding both scores.

A knockout is asked round by round: each pass picks again from what is stored
(mmrb_eval/bestofn.py, whose tournaments raise ``Pending`` for a match not stored yet), asks
every match the items' current rounds need, together, and stops when no item waits. A failed
request makes its item's pick incomplete (never a win or a loss) and the run incomplete;
``--max-judgments`` judges a prefix of the items whose cost fits and leaves the rest unjudged.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Literal, get_args

from curate.errors import MmrbError
from curate.judging.judge import Judge
from curate.judging.records import JudgeTask, Judgment, JudgmentKey, RunDataset, task_parts
from curate.judging.runner import RunSummary, default_run_id, ensure_run, execute, finish_run, judge_all
from curate.llm import Endpoint, LLMClient
from curate.model import Adjudication, Candidate, Item, JudgeRun, Label, LetterVerdict, Order, Pair
from curate.seeding import hex_hash
from curate.wording import plural

from . import bestofn as bon
from .bestofn import BestOfNReport, BonItem, Method, Pick, Response

if TYPE_CHECKING:  # the store is opened by the command
    from curate.store.protocols import BestOfNStore

DATASET = RunDataset(name="bestofn")  # the store's own items: the pairs are the matches' ids
BOTH: tuple[Order, Order] = ("forward", "reverse")


Correctness = Literal["auto", "reference", "labels"]
CORRECTNESS: tuple[Correctness, ...] = get_args(Correctness)

# why a candidate's correctness is not known from the labels, in the order an item's reason is
# taken from its candidates' (the first that applies names the item)
NO_LABEL = "without expert labels"
ADJ_DISAGREE = "whose adjudications disagree"
ADJ_UNSURE = "adjudicated unsure"
VOTES_TIE = "whose expert labels tie"
ALL_UNSURE = "whose expert labels are all unsure"
UNKNOWN_ORDER = (NO_LABEL, ADJ_DISAGREE, ADJ_UNSURE, VOTES_TIE, ALL_UNSURE)


@dataclass(frozen=True)
class LabelVerdict:
    """A candidate's correctness from the expert labels, or why it is unknown."""

    correct: bool | None
    unknown: str | None = None  # one of UNKNOWN_ORDER when ``correct`` is None
    adjudicated: bool = False
    votes: int = 0  # annotators' correct / incorrect votes counted (an adjudicated one: none needed)


def label_correctness(
    pairs: Iterable[Pair], labels: Iterable[Label], adjudications: Mapping[str, Adjudication]
) -> dict[str, LabelVerdict]:
    """Each labelled candidate's correctness from the pairs it appears in (candidates of no
    labelled pair are absent: unknown, NO_LABEL). A label's ``correctness_first`` and
    ``correctness_second`` are of the pair's stored first and second responses, so they map to
    ``Pair.first_id`` and ``second_id`` directly (the screen's sides were undone when it was
    saved, curate/sides.py).

    An adjudicated correctness wins over votes, as in the build (curate/benchmark/filter.py):
    the lead's decisions on the candidate across its pairs, when they agree ("unsure" among
    them leaves it unknown). Otherwise each submitted label is a vote, counted by the project's
    majority rule (``curate.quality.aggregate.majority``: a unique modal value, a tie decides
    nothing); "unsure" is an abstention, not a vote, so a candidate whose votes tie or are all
    "unsure" is unknown. A pair the lead excluded counts for nothing, as in the build. The
    caller passes regular labels only (no control task)."""
    import pandas as pd  # deferred: pandas loads in a while, and only the labels' correctness needs it

    from curate.quality.aggregate import majority  # deferred with pandas, which it loads

    by_pair = {p.id: p for p in pairs}
    adjudged: dict[str, set[str]] = defaultdict(set)
    votes: list[tuple[str, str]] = []
    unsure: set[str] = set()  # candidates with at least one label (every vote may be "unsure")
    for pid, a in adjudications.items():
        pair = by_pair.get(pid)
        if pair is None or a.exclude:
            continue
        for cid, value in ((pair.first_id, a.correctness_first), (pair.second_id, a.correctness_second)):
            if value is not None:
                adjudged[cid].add(value)
    for lab in labels:
        pair = by_pair.get(lab.pair_id)
        if pair is None or (lab.pair_id in adjudications and adjudications[lab.pair_id].exclude):
            continue
        for cid, value in ((pair.first_id, lab.correctness_first), (pair.second_id, lab.correctness_second)):
            if value is None:
                continue
            if value == "unsure":
                unsure.add(cid)
            else:
                votes.append((cid, value))
    frame = pd.DataFrame(votes, columns=["pair", "value"])  # the majority's key column is named "pair"
    won = majority(frame)
    counted = Counter(cid for cid, _ in votes)
    out: dict[str, LabelVerdict] = {}
    for cid in sorted(set(counted) | unsure | set(adjudged)):
        decided = adjudged.get(cid)
        if decided:
            if len(decided) > 1:
                out[cid] = LabelVerdict(None, ADJ_DISAGREE, adjudicated=True)
            else:
                (verdict,) = decided
                ok = None if verdict == "unsure" else verdict == "correct"
                out[cid] = LabelVerdict(ok, ADJ_UNSURE if ok is None else None, adjudicated=True)
        elif not counted[cid]:
            out[cid] = LabelVerdict(None, ALL_UNSURE)
        elif cid not in won:
            out[cid] = LabelVerdict(None, VOTES_TIE, votes=counted[cid])
        else:
            out[cid] = LabelVerdict(won[cid] == "correct", votes=counted[cid])
    return out


@dataclass(frozen=True)
class Pool:
    """The items a Best-of-N run can judge, what a judge is shown of them, and what was left out."""

    items: tuple[BonItem, ...]
    prompts: Mapping[str, Item]
    candidates: Mapping[str, Candidate]
    left_out: Mapping[str, int] = field(default_factory=dict)  # reason -> items
    decided_by: Mapping[str, int] = field(default_factory=dict)  # "reference" / "labels" -> items kept
    category: str | None = None  # the one category asked for (None: every category)
    correctness: Correctness = "auto"  # where correctness was asked to come from

    @property
    def has_response_images(self) -> bool:
        return any(c.content and c.images for c in self.candidates.values())


def pool(store: BestOfNStore, *, category: str | None = None, correctness: Correctness = "auto") -> Pool:
    """The store's items with N >= 2 candidates whose correctness is known (``correctness``:
    from the reference, the expert labels, or ``auto``: the reference where the item has one)."""
    # the reference grader: deferred, not for `mmrb bestofn --help`
    from curate.correctness import normalise
    from curate.pairing import decide_all

    if correctness not in CORRECTNESS:
        raise MmrbError(f"correctness must be one of {', '.join(CORRECTNESS)}, got {correctness!r}")
    items = {it.id: it for it in store.items(category=category)}
    by_item: dict[str, list[Candidate]] = {}
    for c in store.candidates():
        if c.item_id in items:
            by_item.setdefault(c.item_id, []).append(c)
    from_labels: dict[str, LabelVerdict] = {}
    if correctness != "reference":
        from_labels = label_correctness(
            store.pairs(), store.labels(status="submitted", control=False), store.adjudications()
        )
    kept, left, decided_by = [], Counter[str](), Counter[str]()
    cands: dict[str, Candidate] = {}
    for iid, item in items.items():
        cs = by_item.get(iid, [])
        if len(cs) < 2:
            left["fewer than 2 candidates"] += 1
            continue
        has_reference = bool((item.reference or "").strip())
        if correctness == "labels" or (correctness == "auto" and not has_reference):
            known = [from_labels.get(c.id, LabelVerdict(None, NO_LABEL)) for c in cs]
            unknown = {v.unknown for v in known if v.correct is None}
            if unknown:
                why = "a candidate " + next(u for u in UNKNOWN_ORDER if u in unknown)
                left[why if correctness == "labels" else f"no reference answer and {why}"] += 1
                continue
            responses = [Response(c.id, bool(v.correct)) for c, v in zip(cs, known, strict=True)]
            decided_by["labels"] += 1
        elif not has_reference:
            left["no reference answer"] += 1
            continue
        else:
            verdicts = decide_all(item, cs)
            if any(verdicts[c.id].verdict == "unsure" for c in cs):
                left["a candidate whose correctness is unsure"] += 1
                continue
            responses = []
            for c in cs:
                v = verdicts[c.id]
                answer = normalise(v.extracted) if v.extracted else None
                responses.append(Response(c.id, v.verdict == "correct", answer or None))
            decided_by["reference"] += 1
        cands.update((c.id, c) for c in cs)
        kept.append(BonItem(iid, item.category, tuple(responses)))
    prompts = {it.id: items[it.id] for it in kept}
    return Pool(tuple(kept), prompts, cands, dict(left), dict(decided_by), category, correctness)


def match_id(item: str, a: str, b: str) -> str:
    """The stored pair of a match (or of a reward model's two scores): the same whichever of
    the two is named first."""
    lo, hi = sorted((a, b))
    return "bon-" + hex_hash("bestofn", item, lo, hi, n=24)


def score_pairs(item: BonItem) -> list[tuple[str, str]]:
    """A reward model's requests for an item: its sorted ids two at a time, the odd one out
    with itself (each stored judgment holds two scores)."""
    ids = sorted(item.ids)
    return [(ids[k], ids[min(k + 1, len(ids) - 1)]) for k in range(0, len(ids), 2)]


@dataclass
class BestOfNRun:
    run_id: str
    judge: str
    method: Method
    picks: tuple[Pick, ...]
    report: BestOfNReport
    summary: RunSummary  # over every pass: planned, already stored, sent, seconds, failed
    cost: int  # judgments the judged items cost with this method
    over_budget: int = 0  # items --max-judgments left unjudged
    passes: int = 0
    left_out: Mapping[str, int] = field(default_factory=dict)
    curve: tuple[tuple[int, BestOfNReport], ...] = ()  # accuracy against N (nested seeded subsamples)
    items: tuple[BonItem, ...] = ()  # read back (stored_bestofn): the items picked from, and their prompts
    prompts: Mapping[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.summary.complete and not self.over_budget

    def lines(self) -> list[str]:
        """What the command prints after the figures when something is missing."""
        out = []
        if not self.summary.complete:
            out.append(self.summary.failure_line())
        if self.over_budget:
            out.append(
                f"{plural(self.over_budget, 'item')} not judged (over --max-judgments); rerun with a larger cap "
                "to judge them"
            )
        return out


def default_method(judge: Judge) -> Method:
    """A reward model's scores, else a knockout (the cheaper tournament: 2(N-1) judgments)."""
    return "reward" if judge.identity().get("kind") == "reward_model" else "knockout"


def check_method(judge: Judge, method: Method) -> None:
    """A reward model picks by its scores; a pairwise judge must judge each pair in both orders."""
    is_rm = judge.identity().get("kind") == "reward_model"
    if method == "reward" and not is_rm:
        raise MmrbError(f"judge {judge.name!r} is not a reward model: use --method knockout or round-robin")
    if method != "reward":
        if is_rm:
            raise MmrbError(f"judge {judge.name!r} is a reward model: use --method reward")
        if not {("forward", 0), ("reverse", 0)} <= set(judge.plan("bestofn")):
            raise MmrbError(f"judge {judge.name!r} does not judge each pair in both orders, which matches need")


class _Pass:
    """One pass over the items: picks from what is stored, noting each task still to ask
    (``task`` None: read back offline, where nothing will be asked and a judgment not stored
    is only noted in ``missing``)."""

    def __init__(
        self,
        stored: Mapping[JudgmentKey, Judgment],
        task: Callable[[str, str, str], JudgeTask] | None,
        retry: Callable[[JudgmentKey, Judgment], bool],
        visited: set[JudgmentKey],
        whole: Mapping[str, BonItem],
    ):
        self.stored, self.task, self.retry, self.visited, self.whole = stored, task, retry, visited, whole
        self.needed: dict[str, JudgeTask] = {}
        self.missing: set[JudgmentKey] = set()

    def final(self, item: str, a: str, b: str, order: Order) -> Judgment:
        """The stored judgment, or Pending (after noting its task) when it is still to ask."""
        key: JudgmentKey = (match_id(item, a, b), order, 0)
        j = self.stored.get(key)
        if j is None or (j.outcome == "error" and self.retry(key, j)):
            self.missing.add(key)
            if self.task is not None:
                self.needed.setdefault(key[0], self.task(item, a, b))
            raise bon.Pending(item)
        self.visited.add(key)
        return j

    def match(self, item: str, a: str, b: str) -> LetterVerdict | None:
        lo, hi = sorted((a, b))
        j = self.final(item, a, b, "forward" if a == lo else "reverse")
        if j.outcome == "error":
            return None
        # an answer the parser could not read shows no preference: like "tie", it splits the match
        winner = {"first": lo, "second": hi}.get(j.verdict or "")
        return "tie" if winner is None else "A" if winner == a else "B"

    def scores(self, item: BonItem) -> dict[str, float | None]:
        """Its responses' scores, from the requests of the whole item (a subsample's too)."""
        out: dict[str, float | None] = {}
        for a, b in score_pairs(self.whole[item.id]):
            j = self.final(item.id, a, b, "forward")
            out[a], out[b] = (j.score_first, j.score_second) if j.outcome != "error" else (None, None)
        return out

    def pick(self, item: BonItem, method: Method, seed: int) -> Pick | None:
        """The item's pick, or None while a judgment it needs is still to ask."""
        try:
            if method == "reward":
                return bon.reward_pick(item, self.scores(item), seed=seed)
            if method == "knockout":
                return bon.knockout(item, self.match, seed=seed)
            return bon.round_robin(item, self.match, seed=seed)
        except bon.Pending:
            return None


def run_bestofn(
    store: BestOfNStore,
    items: Pool,
    judge: Judge,
    *,
    method: Method,
    seed: int = 0,
    max_judgments: int | None = None,
    run_id: str | None = None,
    retry_errors: bool = True,
    resamples: int = bon.DEFAULT_RESAMPLES,
    progress: Callable[[int, int], None] | None = None,
    client_factory: Callable[[Endpoint], LLMClient] = LLMClient,
    curve: bool = False,
) -> BestOfNRun:
    """Pick one response per item with ``judge`` (resuming the run), and report the picks'
    accuracy beside the baselines. ``curve``: also at N = 2, 4, 8, ... and each item's own N,
    on nested seeded subsamples of each item's responses (a round robin's and a reward model's come from the
    whole item's judgments; a knockout of a subsample plays matches of its own)."""
    check_method(judge, method)
    identity = {**judge.identity(), "bestofn": "scores" if method == "reward" else "matches"}
    if items.has_response_images:
        identity["response_images"] = "shown"  # as the runner marks a run whose responses' images are shown
    rid = run_id or default_run_id(judge.name, identity, DATASET)
    paths = store.image_paths(
        [r.sha256 for it in items.prompts.values() for r in it.images if r.sha256]
        + [r.sha256 for c in items.candidates.values() for r in c.images if r.sha256]
    )

    def task(item: str, a: str, b: str) -> JudgeTask:
        lo, hi = sorted((a, b))
        it, first, second = items.prompts[item], items.candidates[lo], items.candidates[hi]
        shown = tuple(str(paths[r.sha256]) if r.sha256 in paths else r.source for r in it.images)
        parts = task_parts(first.content, paths), task_parts(second.content, paths)
        return JudgeTask(match_id(item, lo, hi), it.prompt, first.text, second.text, shown, *parts, it.category)

    # refused before anything is sent (images it cannot show): every response, each once
    judge.check([task(it.id, a, a) for it in items.items for a in it.ids])
    ensure_run(store, rid, purpose="bestofn", judge=judge.name, identity=identity, dataset=DATASET)
    record_recipe(store, rid, Recipe(method, seed, items.category, items.correctness))
    judged, unjudged = bon.within_budget(items.items, method, max_judgments)
    whole = {it.id: it for it in judged}
    sizes = bon.subsample_sizes(it.n for it in judged) if curve else ()
    subsets = [(n, sub) for n in sizes for it in judged if it.n > n and (sub := bon.subsample(it, n, seed=seed))]
    plan: list[tuple[Order, int]] = [("forward", 0)] if method == "reward" else [(o, 0) for o in BOTH]
    total = RunSummary(rid, judge=judge.name)
    sent_now: set[JudgmentKey] = set()  # asked in this command: a failure among them is final
    visited: set[JudgmentKey] = set()
    passes = 0

    def retry(key: JudgmentKey, j: Judgment) -> bool:
        return retry_errors and key not in sent_now

    while True:
        stored = {j.key: j for j in store.judgments(rid) if j.sample_index == 0}
        this = _Pass(stored, task, retry, visited, whole)
        picks = {it.id: this.pick(it, method, seed) for it in judged}
        sub_picks = [(n, sub, this.pick(sub, method, seed)) for n, sub in subsets]
        if not this.needed:
            break
        passes += 1
        # a match's order already answered is kept (a run stopped between its two orders): only
        # what is missing, or a failure to retry, is asked
        todo = [
            (t, o, i)
            for t in this.needed.values()
            for o, i in plan
            if (j := stored.get(key := (t.pair_id, o, i))) is None or (j.outcome == "error" and retry(key, j))
        ]
        lost = [key for t, o, i in todo if (key := (t.pair_id, o, i)) in sent_now and key not in stored]
        if lost:  # asked in an earlier pass and not stored: asking again would never end
            raise MmrbError(f"run {rid}: {plural(len(lost), 'judgment')} sent in this run were not stored")
        outcomes = {k: j.outcome for k, j in stored.items() if k[0] in this.needed}
        # one count over the passes (a knockout's rounds): the total grows as a round's matches are known
        counted = partial(_counted, progress, len(sent_now)) if progress else None
        done = _ask(store, judge, rid, todo, outcomes, client_factory, counted)
        sent_now.update((t.pair_id, o, i) for t, o, i in todo)
        total.sent += done.sent
        total.seconds += done.seconds
        for k, n in done.outcomes.items():
            total.outcomes[k] = total.outcomes.get(k, 0) + n
    total.planned = len(visited)
    total.already_stored = len(visited - sent_now)
    finish_run(store, total, sorted(visited))
    if unjudged:
        store.set_judge_run_status(rid, "incomplete")
    why = f"not judged: over --max-judgments {max_judgments}"
    made = [p for p in picks.values() if p is not None]  # the last pass needed nothing: every item has one
    every = made + [Pick(it.id, method, None, None, 0, failed=why) for it in unjudged]
    points = []
    for n in sizes:
        at_n = [(sub, p) for m, sub, p in sub_picks if m == n and p is not None]
        at_n += [(it, p) for it in judged if it.n == n and (p := picks[it.id]) is not None]
        points.append((n, bon.best_of_n([s for s, _ in at_n], [p for _, p in at_n], seed=seed, resamples=resamples)))
    return BestOfNRun(
        rid,
        judge.name,
        method,
        tuple(every),
        bon.best_of_n(items.items, every, seed=seed, resamples=resamples),
        total,
        bon.run_cost(judged, method),
        len(unjudged),
        passes,
        items.left_out,
        tuple(points),
    )


# -- read back offline ------------------------------------------------------------------------
@dataclass(frozen=True)
class Recipe:
    """How a run was last made: what reading it back picks with, so that it needs no flag. A
    setting beside the run, not its identity: the identity names the run (its default id) and
    is the same for every method and seed, which share their matches."""

    method: Method
    seed: int = 0
    category: str | None = None
    correctness: Correctness = "auto"  # where the items' correctness came from (pool's setting)


def _recipe_key(run_id: str) -> str:
    # settings keys are at most 100 characters, as run ids are: a hash of the id
    return "bestofn recipe " + hex_hash("bestofn recipe", run_id, n=24)


def record_recipe(store: BestOfNStore, run_id: str, recipe: Recipe) -> None:
    value = {
        "run": run_id,
        "method": recipe.method,
        "seed": recipe.seed,
        "category": recipe.category,
        "correctness": recipe.correctness,
    }
    store.set_setting(_recipe_key(run_id), json.dumps(value, sort_keys=True))


def recipe(store: BestOfNStore, run: JudgeRun) -> Recipe:
    """The method, seed, category and correctness source ``run`` was last made with; for a run
    stored before they were recorded: a reward model's scores, else a knockout, seed 0, every
    category, correctness "auto"."""
    raw = store.get_setting(_recipe_key(run.id))
    by_kind: Method = "reward" if run.config.get("bestofn") == "scores" else "knockout"
    if raw is None:
        return Recipe(by_kind)
    got = json.loads(raw)
    method = got.get("method")
    return Recipe(
        method if method in ("reward", "knockout", "round-robin") else by_kind,
        int(got.get("seed") or 0),
        got.get("category"),
        got["correctness"] if got.get("correctness") in CORRECTNESS else "auto",
    )


def bestofn_runs(store: BestOfNStore) -> list[JudgeRun]:
    """The store's Best-of-N runs, oldest first."""
    return store.judge_runs("bestofn")


def stored_bestofn(
    store: BestOfNStore,
    run_id: str,
    *,
    method: Method | None = None,
    seed: int | None = None,
    resamples: int = bon.DEFAULT_RESAMPLES,
) -> BestOfNRun:
    """A stored run's picks and report, from its judgments alone: nothing is sent. A judgment
    not stored, or stored as a failure, makes its item's pick incomplete (never a win or a
    loss) and the result incomplete. ``method`` and ``seed`` default to those the run was last
    made with (``recipe``)."""
    run = store.judge_run(run_id)
    if run is None or run.purpose != "bestofn":
        known = ", ".join(r.id for r in bestofn_runs(store)) or "none"
        raise MmrbError(f"no Best-of-N run {run_id!r} in the store (its Best-of-N runs: {known})")
    made = recipe(store, run)
    how: Method = method or made.method
    scores = run.config.get("bestofn") == "scores"
    if scores != (how == "reward"):
        what = "a reward model's scores" if scores else "matches"
        raise MmrbError(f"run {run_id} holds {what}: it cannot be read back as {how}")
    seed = made.seed if seed is None else seed
    items = pool(store, category=made.category, correctness=made.correctness)
    stored = {j.key: j for j in store.judgments(run_id) if j.sample_index == 0}
    visited: set[JudgmentKey] = set()
    whole = {it.id: it for it in items.items}
    this = _Pass(stored, None, lambda key, j: False, visited, whole)
    why = "not judged: its judgments are not stored"
    picks = [this.pick(it, how, seed) or Pick(it.id, how, None, None, 0, failed=why) for it in items.items]
    failed = sorted(k for k in visited if stored[k].outcome == "error")
    summary = RunSummary(
        run_id,
        planned=len(visited | this.missing),
        already_stored=len(visited),
        judge=run.judge,
        failed=len(failed),
        missing=len(this.missing),
        errors=[stored[k].error or "unknown error" for k in failed],
    )
    report = bon.best_of_n(items.items, picks, seed=seed, resamples=resamples)
    return BestOfNRun(
        run_id,
        run.judge,
        how,
        tuple(picks),
        report,
        summary,
        bon.run_cost(items.items, how),
        left_out=items.left_out,
        items=items.items,
        prompts={i: it.prompt for i, it in items.prompts.items()},
    )


def _counted(progress: Callable[[int, int], None], before: int, done: int, total: int) -> None:
    progress(before + done, before + total)


def _ask(
    store: BestOfNStore,
    judge: Judge,
    run_id: str,
    todo: Sequence[tuple[JudgeTask, Order, int]],
    stored: Mapping[JudgmentKey, str],
    client_factory: Callable[[Endpoint], LLMClient],
    progress: Callable[[int, int], None] | None,
) -> RunSummary:
    """One pass's judgments sent and stored as they come (the runner's ``execute``)."""

    async def work(client: LLMClient, sink: Callable[[Judgment], None]) -> dict[str, int]:
        return await judge_all(client, judge, todo, sink, run_id=run_id, progress=progress)

    return execute(
        store, RunSummary(run_id, judge=judge.name), stored, len(todo), lambda: client_factory(judge.endpoint), work
    )


def cost_lines(
    items: Sequence[BonItem], method: Method, max_judgments: int | None, *, curve: bool = False
) -> list[str]:
    """What a run will cost, printed before it starts: judgments per item for each N, the total,
    what the cap keeps, and at most how many more a knockout's curve against N asks."""
    by_n = Counter(it.n for it in items)
    each = ", ".join(
        f"{plural(k, 'item')} of N={n}: {bon.judgments_per_item(method, n)} each" for n, k in sorted(by_n.items())
    )
    total = bon.run_cost(items, method)
    out = [f"{method}: {plural(total, 'judgment')} for {plural(len(items), 'item')} ({each})"]
    if max_judgments is not None and total > max_judgments:
        kept, _ = bon.within_budget(items, method, max_judgments)
        out.append(
            f"--max-judgments {max_judgments}: the first {plural(len(kept), 'item')} "
            f"({bon.run_cost(kept, method)} judgments)"
        )
        items = kept
    if curve and method == "knockout":
        sizes = bon.subsample_sizes(it.n for it in items)
        extra = sum(bon.judgments_per_item(method, n) for it in items for n in sizes if n < it.n)
        out.append(f"curve against N: at most {plural(extra, 'judgment')} more (a subsample's own matches)")
    return out


__all__ = [
    "CORRECTNESS",
    "DATASET",
    "BestOfNRun",
    "Correctness",
    "LabelVerdict",
    "Pool",
    "Recipe",
    "bestofn_runs",
    "check_method",
    "cost_lines",
    "default_method",
    "label_correctness",
    "match_id",
    "pool",
    "recipe",
    "record_recipe",
    "run_bestofn",
    "score_pairs",
    "stored_bestofn",
]
