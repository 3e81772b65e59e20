"""mmrb_eval/bestofn.py: picks (reward model, knockout, round robin), what they cost, Best-of-N
accuracy beside its baselines, N-subsampling and validity across judges. Tiny literal items
and Hypothesis invariants; the judges are functions of the ids they are shown."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.model import LetterVerdict
from curate.seeding import unit
from mmrb_eval import bestofn as bon
from mmrb_eval.bestofn import BonItem, JudgePoint, Response


def item(iid: str, *correct: bool, cat: str = "c", answers: tuple[str | None, ...] | None = None) -> BonItem:
    answers = answers or (None,) * len(correct)
    rs = tuple(Response(f"{iid}-r{k}", c, a) for k, (c, a) in enumerate(zip(correct, answers, strict=True)))
    return BonItem(iid, cat, rs)


def perfect(items: dict[str, BonItem]) -> bon.MatchFn:
    """Right on every pair whose correctness differs; a tie between two equally correct."""

    def judge(iid: str, a: str, b: str) -> LetterVerdict:
        ca, cb = items[iid].is_correct(a), items[iid].is_correct(b)
        return "tie" if ca == cb else "A" if ca else "B"

    return judge


def right_with(p: float, items: dict[str, BonItem], salt: str = "") -> bon.MatchFn:
    """Right with probability p on each shown pair whose correctness differs (seeded per
    item, pair and order), a coin between two equally correct."""

    def judge(iid: str, a: str, b: str) -> LetterVerdict:
        ca, cb = items[iid].is_correct(a), items[iid].is_correct(b)
        u = unit("test judge", salt, p, iid, a, b)
        if ca == cb:
            return "A" if u < 0.5 else "B"
        right: LetterVerdict = "A" if ca else "B"
        return right if u < p else ("B" if right == "A" else "A")

    return judge


def by_ids(iid: str, a: str, b: str) -> LetterVerdict:
    """A judge of no merit that depends on what it is shown (position included)."""
    return ("A", "B", "tie")[int(unit("ids judge", iid, a, b) * 3)]


def always(v: LetterVerdict) -> bon.MatchFn:
    return lambda iid, a, b: v


# items of 2..9 responses with distinct, non-positional ids
@st.composite
def items_st(draw: st.DrawFn, min_n: int = 2, max_n: int = 9) -> BonItem:
    n = draw(st.integers(min_n, max_n))
    ids = draw(st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=n, max_size=n, unique=True))
    correct = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    iid = draw(st.text("xyz", min_size=1, max_size=3))
    return BonItem(iid, "c", tuple(Response(i, c, str(int(c))) for i, c in zip(ids, correct, strict=True)))


# -- items -----------------------------------------------------------------------------------
def test_item_needs_two_distinct_responses():
    with pytest.raises(ValueError, match="at least 2"):
        item("i", True)
    with pytest.raises(ValueError, match="repeat: a"):
        BonItem("i", "c", (Response("a", True), Response("a", False)))


# -- reward model ----------------------------------------------------------------------------
def test_reward_pick_top_score_and_seeded_tie():
    it = item("i", False, True, False)
    p = bon.reward_pick(it, {"i-r0": 0.1, "i-r1": 0.9, "i-r2": 0.3})
    assert (p.chosen, p.correct, p.tied_top, p.judgments, p.outcome) == ("i-r1", True, 1, 3, "correct")
    tied = bon.reward_pick(it, {"i-r0": 0.9, "i-r1": 0.9, "i-r2": 0.3})
    assert tied.tied_top == 2 and tied.chosen in {"i-r0", "i-r1"}
    # the tie is broken by the ids, not by which is listed first
    flipped = BonItem("i", "c", tuple(reversed(it.responses)))
    assert bon.reward_pick(flipped, {"i-r0": 0.9, "i-r1": 0.9, "i-r2": 0.3}).chosen == tied.chosen
    # some seed breaks it the other way: the rule is seeded, not fixed
    assert {bon.reward_pick(it, {"i-r0": 0.9, "i-r1": 0.9, "i-r2": 0.3}, seed=s).chosen for s in range(20)} == {
        "i-r0",
        "i-r1",
    }


@pytest.mark.parametrize("scores", [{"i-r0": 0.1, "i-r1": None}, {"i-r0": 0.1}, {"i-r0": 0.1, "i-r1": math.nan}])
def test_reward_pick_failed_score_is_incomplete(scores):
    p = bon.reward_pick(item("i", True, False), scores)
    assert p.outcome == "incomplete" and p.chosen is None and "i-r1" in (p.failed or "")


# -- knockout and round robin ----------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(items_st(), st.integers(0, 5))
def test_perfect_judge_knockout_finds_a_correct_response(it, seed):
    pick = bon.knockout(it, perfect({it.id: it}), seed=seed)
    assert pick.correct == any(r.correct for r in it.responses)
    assert pick.judgments == bon.judgments_per_item("knockout", it.n) == 2 * (it.n - 1)


@settings(max_examples=200, deadline=None)
@given(items_st(), st.integers(0, 5))
def test_perfect_judge_round_robin_equals_the_oracle(it, seed):
    pick = bon.round_robin(it, perfect({it.id: it}), seed=seed)
    assert pick.correct == any(r.correct for r in it.responses)
    assert pick.judgments == bon.judgments_per_item("round-robin", it.n) == it.n * (it.n - 1)
    report = bon.best_of_n([it], [pick], resamples=0)
    assert report.overall.accuracy.value == report.overall.baselines["oracle"].value


@settings(max_examples=200, deadline=None)
@given(items_st(), st.integers(0, 5))
def test_always_a_is_position_biased_in_one_order_and_cancelled_in_both(it, seed):
    # one order: the response drawn first in the bracket is shown as A in every match it plays
    single = bon.knockout(it, always("A"), seed=seed, both_orders=False)
    assert single.chosen == bon.bracket(it, seed=seed)[0] and single.split_matches == 0
    # both orders: every match is split and decided by the seeded coin, so the pick is the one
    # any judge with a fixed position (or no opinion) gets
    both = bon.knockout(it, always("A"), seed=seed)
    assert both.split_matches == it.n - 1
    others = {bon.knockout(it, always(v), seed=seed).chosen for v in ("B", "tie")}
    assert others == {both.chosen}
    rr = bon.round_robin(it, always("A"), seed=seed)
    assert rr.split_matches == it.n * (it.n - 1) // 2 and rr.tied_top == it.n
    assert rr.chosen == bon.round_robin(it, always("B"), seed=seed).chosen


def test_always_a_single_order_favours_the_first_shown_over_many_items():
    items = [item(f"i{k}", True, False, False, False) for k in range(200)]
    single = [bon.knockout(it, always("A"), both_orders=False) for it in items]
    both = [bon.knockout(it, always("A")) for it in items]
    first = [bon.bracket(it)[0] for it in items]
    assert all(p.chosen == f for p, f in zip(single, first, strict=True))
    # the coin spreads the both-orders picks: about 1 in 4 is the bracket's first
    share = sum(p.chosen == f for p, f in zip(both, first, strict=True)) / len(items)
    assert 0.15 < share < 0.35


@settings(max_examples=150, deadline=None)
@given(items_st(), st.randoms(use_true_random=False), st.integers(0, 3))
def test_listing_order_changes_no_pick(it, rnd, seed):
    shuffled = list(it.responses)
    rnd.shuffle(shuffled)
    other = BonItem(it.id, it.category, tuple(shuffled))
    scores = {r.id: round(unit("score", r.id), 1) for r in it.responses}  # one decimal: ties happen
    for a, b in [
        (bon.reward_pick(it, scores, seed=seed), bon.reward_pick(other, scores, seed=seed)),
        (bon.knockout(it, by_ids, seed=seed), bon.knockout(other, by_ids, seed=seed)),
        (bon.round_robin(it, by_ids, seed=seed), bon.round_robin(other, by_ids, seed=seed)),
    ]:
        assert a == b
    assert bon.majority_correct(it, seed=seed) == bon.majority_correct(other, seed=seed)


def test_failed_match_makes_the_pick_incomplete():
    it = item("i", True, False, False, False)
    bad = {frozenset(bon.bracket(it)[:2])}

    def judge(iid: str, a: str, b: str) -> LetterVerdict | None:
        return None if frozenset((a, b)) in bad else perfect({"i": it})(iid, a, b)

    ko = bon.knockout(it, judge)
    assert ko.outcome == "incomplete" and ko.correct is None and "failed" in (ko.failed or "")
    rr = bon.round_robin(it, judge)
    assert rr.outcome == "incomplete" and rr.judgments == 12 and "1 match failed" in (rr.failed or "")


@pytest.mark.parametrize(
    ("method", "n", "passes"),
    [("knockout", 2, 1), ("knockout", 4, 2), ("knockout", 5, 3), ("knockout", 8, 3), ("knockout", 9, 4),
     ("round-robin", 2, 1), ("round-robin", 9, 1)],
)  # fmt: skip
def test_pending_matches_are_asked_a_round_at_a_time(method, n, passes):
    """A stored run's loop: a match function that raises Pending for what is not judged yet;
    each pass asks for everything the tournament reached. A knockout needs one pass per
    round (ceil(log2 N)), a round robin one, and the picks equal those of the judge itself."""
    it = item(f"n{n}", *[k % 3 == 1 for k in range(n)])
    judge = right_with(0.7, {it.id: it})
    stored: dict[tuple[str, str], LetterVerdict | None] = {}
    needed: set[tuple[str, str]] = set()

    def from_store(iid: str, a: str, b: str) -> LetterVerdict | None:
        if (a, b) not in stored:
            needed.update({(a, b), (b, a)})
            raise bon.Pending(iid)
        return stored[(a, b)]

    play = bon.knockout if method == "knockout" else bon.round_robin
    rounds = 0
    while True:
        needed.clear()
        try:
            pick = play(it, from_store)
            break
        except bon.Pending:
            rounds += 1
            stored.update({k: judge(it.id, *k) for k in needed})
    assert rounds == passes and pick == play(it, judge)
    assert len(stored) == pick.judgments == bon.judgments_per_item(method, n)


def test_report_counts_incomplete_items_apart():
    items = [item("a", True, False), item("b", False, True), item("c", False, False)]
    judge = perfect({it.id: it for it in items})
    picks = [bon.knockout(items[0], judge), bon.knockout(items[1], lambda i, a, b: None), bon.knockout(items[2], judge)]
    r = bon.best_of_n(items, picks, resamples=0).overall
    assert (r.complete, r.incomplete) == (2, 1)
    assert r.accuracy.value == 0.5  # a right, c has no correct response; b counts nowhere
    assert r.baselines["oracle"].value == 0.5 and r.incomplete_reasons[0].startswith("b: ")
    with pytest.raises(ValueError, match="no pick for 1 item: c"):
        bon.best_of_n(items, picks[:2])


# -- cost ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "n", "both", "cost"),
    [("reward", 4, True, 4), ("knockout", 4, True, 6), ("knockout", 8, False, 7), ("round-robin", 4, True, 12),
     ("round-robin", 16, False, 120), ("knockout", 16, True, 30)],
)  # fmt: skip
def test_judgments_per_item(method, n, both, cost):
    assert bon.judgments_per_item(method, n, both_orders=both) == cost


def test_budget_keeps_a_prefix_of_whole_items():
    items = [item(f"i{k}", True, False, False) for k in range(5)]  # knockout: 4 judgments each
    assert bon.run_cost(items, "knockout") == 20
    kept, left = bon.within_budget(items, "knockout", 11)
    assert [i.id for i in kept] == ["i0", "i1"] and [i.id for i in left] == ["i2", "i3", "i4"]
    assert bon.within_budget(items, "knockout", None) == (tuple(items), ())
    assert bon.within_budget(items, "knockout", 20) == (tuple(items), ())


# -- baselines and intervals -----------------------------------------------------------------
def test_baselines_on_literal_items():
    items = [
        item("a", False, True, True, answers=("1", "2", "2")),  # majority "2": right
        item("b", True, False, False, answers=("1", "3", "3")),  # majority "3": wrong
        item("c", False, False, cat="d", answers=("1", "2")),
    ]
    picks = [bon.Pick(it.id, "reward", it.ids[0], it.responses[0].correct, it.n) for it in items]
    rep = bon.best_of_n(items, picks, resamples=0)
    o = rep.overall
    assert o.accuracy.value == pytest.approx(1 / 3)
    assert o.baselines["random"].value == pytest.approx((2 / 3 + 1 / 3 + 0) / 3)
    assert o.baselines["first"].value == pytest.approx(1 / 3)
    assert o.baselines["majority"].value == pytest.approx(1 / 3)
    assert o.baselines["oracle"].value == pytest.approx(2 / 3)
    assert o.gain.value == pytest.approx(1 / 3 - 1 / 3)
    assert [g.group for g in rep.categories] == ["c", "d"]
    assert rep.categories[1].accuracy.value == 0.0 and rep.categories[0].complete == 2


def test_majority_undefined_without_comparable_answers():
    items = [item("a", True, False, answers=("1", "2")), item("b", True, False)]
    picks = [bon.Pick(it.id, "reward", it.ids[0], True, 2) for it in items]
    maj = bon.best_of_n(items, picks, resamples=0).overall.baselines["majority"]
    assert maj.value is None and maj.undefined == "1 of 2 items have a response without a comparable answer"


def test_majority_tie_between_answers_is_seeded():
    it = item("a", True, False, answers=("x", "y"))
    assert {bon.majority_correct(it, seed=s) for s in range(20)} == {0.0, 1.0}


def test_intervals_over_items():
    items = [item(f"i{k}", k % 3 == 0, k % 2 == 0, False, answers=("1", "2", "2")) for k in range(40)]
    judge = right_with(0.8, {it.id: it for it in items})
    picks = [bon.knockout(it, judge) for it in items]
    r1 = bon.best_of_n(items, picks, seed=3).overall
    assert r1 == bon.best_of_n(items, picks, seed=3).overall  # seeded
    for e in (r1.accuracy, r1.gain, *r1.baselines.values()):
        assert e.low is not None and e.high is not None and e.value is not None
        assert e.low <= e.value <= e.high
    assert r1.baselines["oracle"].low < r1.baselines["oracle"].high
    few = bon.best_of_n(items[:9], picks[:9]).overall.accuracy
    assert few.value is not None and few.low is None and few.undefined == bon.TOO_FEW_ITEMS


# -- N-subsampling ---------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(items_st(min_n=2, max_n=9), st.integers(0, 5), st.randoms(use_true_random=False))
def test_subsampling_is_seeded_nested_and_order_free(it, seed, rnd):
    shuffled = list(it.responses)
    rnd.shuffle(shuffled)
    other = BonItem(it.id, it.category, tuple(shuffled))
    prev: set[str] = set()
    for n in range(2, it.n + 1):
        sub = bon.subsample(it, n, seed=seed)
        assert sub is not None and sub.n == n
        assert set(sub.ids) >= prev  # nested
        assert sub == bon.subsample(it, n, seed=seed)  # seeded
        assert set(sub.ids) == set(bon.subsample(other, n, seed=seed).ids)
        assert list(sub.ids) == [i for i in it.ids if i in sub.ids]  # listed order kept
        prev = set(sub.ids)
    assert bon.subsample(it, it.n + 1, seed=seed) is None


def test_subsample_depends_on_the_seed():
    it = item("i", *([True] * 8))
    assert len({bon.subsample(it, 2, seed=s).ids for s in range(10)}) > 1


def test_subsample_sizes():
    assert bon.subsample_sizes([8]) == (2, 4, 8)
    assert bon.subsample_sizes([6, 6]) == (2, 4, 6)
    assert bon.subsample_sizes([2]) == (2,)
    assert bon.subsample_sizes([3, 3, 4]) == (2, 3, 4)  # each item's own N has its point
    assert bon.subsample_sizes([5, 16]) == (2, 4, 5, 8, 16)
    assert bon.subsample_sizes([1]) == bon.subsample_sizes([]) == ()


def test_scaling_with_a_perfect_judge_follows_the_oracle():
    items = [item(f"i{k}", *[j == k % 8 for j in range(8)]) for k in range(16)]  # one correct in 8
    judge = perfect({it.id: it for it in items})
    curve = bon.scaling(items, lambda it: bon.knockout(it, judge), resamples=0)
    assert [n for n, _ in curve] == [2, 4, 8]
    for _, rep in curve:
        assert rep.overall.accuracy.value == rep.overall.baselines["oracle"].value
    # nested subsets: an item's oracle can only turn correct as N grows
    oracle = [rep.overall.baselines["oracle"].value for _, rep in curve]
    assert oracle == sorted(oracle) and oracle[-1] == 1.0 and oracle[0] < 1.0


# -- judges right with probability p ---------------------------------------------------------
def _figures(p: float, items: list[BonItem], method: str, salt: str = "") -> tuple[float, float, float]:
    """(pairwise benchmark accuracy, Best-of-N accuracy, gain over random) of a p-judge."""
    look = {it.id: it for it in items}
    judge = right_with(p, look, salt)
    play = bon.knockout if method == "knockout" else bon.round_robin
    rep = bon.best_of_n(items, [play(it, judge) for it in items], resamples=0).overall
    right = total = 0
    for it in items:  # the benchmark: every (correct, incorrect) pair once, forward
        for a in it.responses:
            for b in it.responses:
                if a.correct and not b.correct:
                    total += 1
                    right += judge(it.id, a.id, b.id) == "A"
    return right / total, rep.accuracy.value or 0.0, rep.gain.value or 0.0


def _mixed(k: int) -> list[BonItem]:
    return [item(f"i{j}", *[unit("mix", j, r) < 0.3 for r in range(4)]) for j in range(k)]


@pytest.mark.parametrize("method", ["knockout", "round-robin"])
def test_accuracy_rises_with_the_judges_p(method):
    items = _mixed(300)
    accs = [_figures(p, items, method)[1] for p in (0.5, 0.7, 0.9, 1.0)]
    assert accs == sorted(accs) and accs[0] < accs[-1]
    oracle = sum(any(r.correct for r in it.responses) for it in items) / len(items)
    assert accs[-1] == pytest.approx(oracle)


def test_validity_across_p_judges_is_near_one():
    items = _mixed(300)
    points = []
    for p in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        acc, _, gain = _figures(p, items, "knockout")
        points.append(JudgePoint(f"p={p}", acc, gain))
    v = bon.validity(points)
    assert v.pearson.value is not None and v.pearson.value > 0.9
    assert v.spearman.value is not None and v.spearman.value > 0.9
    assert v.pearson.low is not None and v.pearson.low <= v.pearson.value <= (v.pearson.high or 0)


# -- validity --------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.integers(3, 30), st.integers(0, 2**32 - 1), st.booleans())
def test_correlations_equal_scipy(k, seed, coarse):
    rng = np.random.default_rng(seed)
    x, y = rng.random(k), rng.random(k)
    if coarse:  # ties, for Spearman's average ranks
        x, y = np.round(x, 1), np.round(y, 1)
    points = [JudgePoint(f"j{i}", float(a), float(b)) for i, (a, b) in enumerate(zip(x, y, strict=True))]
    v = bon.validity(points, resamples=50)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert v.pearson.value is None and v.spearman.value is None and "does not vary" in (v.pearson.undefined or "")
        return
    assert v.pearson.value == pytest.approx(scipy.stats.pearsonr(x, y).statistic, abs=1e-9)
    assert v.spearman.value == pytest.approx(scipy.stats.spearmanr(x, y).statistic, abs=1e-9)
    # every resample is computed the same way, one row each
    rows_x, rows_y = rng.random((5, k)).round(1), rng.random((5, k)).round(1)
    for fn, ref in ((bon._pearson_rows, scipy.stats.pearsonr), (bon._spearman_rows, scipy.stats.spearmanr)):
        got = fn(rows_x, rows_y)
        for j in range(5):
            if np.ptp(rows_x[j]) and np.ptp(rows_y[j]):
                assert got[j] == pytest.approx(ref(rows_x[j], rows_y[j]).statistic, abs=1e-9)
            else:
                assert math.isnan(got[j])


def test_validity_undefined_below_three_judges():
    v = bon.validity([JudgePoint("a", 0.6, 0.1), JudgePoint("b", 0.7, 0.2)])
    assert v.judges == 2 and v.pearson.value is None and v.pearson.undefined == "2 judges, fewer than 3"
    assert v.spearman.undefined == v.pearson.undefined


def test_validity_per_category_and_interval_over_judges():
    pts = [JudgePoint(f"j{i}", a, g) for i, (a, g) in enumerate([(0.5, 0.0), (0.6, 0.05), (0.7, 0.1), (0.8, 0.3)])]
    out = bon.validity_by_category({"reasoning": pts[:2], bon.OVERALL: pts}, seed=1)
    assert [v.group for v in out] == [bon.OVERALL, "reasoning"]
    assert out[0].pearson.value is not None and out[0].spearman.value == pytest.approx(1.0)
    assert out[1].pearson.value is None
    assert out == bon.validity_by_category({"reasoning": pts[:2], bon.OVERALL: pts}, seed=1)
    lo, hi = out[0].pearson.low, out[0].pearson.high
    assert lo is not None and hi is not None and -1 <= lo <= out[0].pearson.value <= hi <= 1


# -- validity over judges and items ----------------------------------------------------------------
def test_a_point_from_its_parts_has_scorings_accuracy_and_best_of_ns_gain():
    items = [item("a", True, False), item("b", False, False, True), item("c", True, True)]
    picks = [bon.Pick("a", "knockout", "a-r0", True, 2), bon.Pick("b", "knockout", "b-r0", False, 4)]
    picks.append(bon.Pick("c", "knockout", None, None, 2, failed="the match failed"))
    gains = bon.item_gains(items, picks)
    assert gains == pytest.approx({"a": 0.5, "b": -1 / 3})  # the incomplete item is no gain at all
    pt = JudgePoint.of("j", {"p1": (1.0, 1), "p2": (0.5, 2), "p3": (0.0, 1)}, gains)
    assert pt.accuracy == pytest.approx(1.5 / 4) and pt.gain == pytest.approx((0.5 - 1 / 3) / 2)
    report = bon.best_of_n(items, picks, resamples=0)
    assert pt.gain == pytest.approx(report.overall.gain.value)
    with pytest.raises(ValueError, match="judge k: no scored benchmark pair"):
        JudgePoint.of("k", {"p1": (0.0, 0)}, gains)


def _shifted(k: int, n: int, seed: int) -> list[JudgePoint]:
    """Judges j0 < j1 < ... each a constant better than the one before on every pair and item."""
    rng = np.random.default_rng(seed)
    base_p, base_i = rng.random(n), rng.random(n) - 0.5
    return [
        JudgePoint.of(
            f"j{j}",
            {f"p{i}": (float(base_p[i] + 0.1 * j), 1) for i in range(n)},
            {f"i{i}": float(base_i[i] + 0.05 * j) for i in range(n)},
        )
        for j in range(k)
    ]


def test_two_level_resamples_share_one_draw_of_pairs_and_items_among_judges():
    # a judge better by a constant on every unit stays better on any draw shared by all judges:
    # every resample ranks them alike, so Spearman's interval is [1, 1]. Drawn for each judge
    # apart, the draws would reorder them.
    v = bon.validity(_shifted(5, 12, 0), resamples=300, seed=2)
    assert v.resampled == bon.TWO_LEVEL and v.spearman.value == pytest.approx(1.0)
    assert v.spearman.low == pytest.approx(1.0) and v.spearman.high == pytest.approx(1.0)


def test_two_level_intervals_widen_with_item_noise_and_judges_only_form_ignores_it():
    rng = np.random.default_rng(7)
    points = []
    for j, p in enumerate((0.55, 0.65, 0.75, 0.85, 0.95)):
        pairs = {f"p{i}": (float(rng.random() < p), 1) for i in range(15)}
        items = {f"i{i}": float(rng.random() < p) - 0.5 for i in range(15)}
        points.append(JudgePoint.of(f"j{j}", pairs, items))
    two = bon.validity(points, resamples=400)
    flat = [JudgePoint(p.judge, p.accuracy, p.gain) for p in points]
    one = bon.validity(flat, resamples=400)
    assert one.resampled == bon.JUDGES_ONLY and one.pearson.value == two.pearson.value
    # 15 noisy pairs and items per judge: their sampling noise is in the two-level interval only
    assert two.pearson.low is not None and one.pearson.low is not None
    assert two.pearson.low < one.pearson.low
    assert two == bon.validity(points, resamples=400)  # seeded


@settings(max_examples=100, deadline=None)
@given(st.integers(3, 12), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_two_level_correlations_equal_scipy_on_the_points_and_each_resample(k, n, seed):
    rng = np.random.default_rng(seed)
    points = [
        JudgePoint.of(
            f"j{j}",
            {f"p{i}": (float(rng.integers(0, 3)), int(rng.integers(1, 3))) for i in range(n)},
            {f"i{i}": round(float(rng.random()), 1) for i in range(n + 1)},
        )
        for j in range(k)
    ]
    x = np.array([p.accuracy for p in points])
    y = np.array([p.gain for p in points])
    v = bon.validity(points, resamples=20)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert v.pearson.value is None
        return
    assert v.pearson.value == pytest.approx(scipy.stats.pearsonr(x, y).statistic, abs=1e-9)
    assert v.spearman.value == pytest.approx(scipy.stats.spearmanr(x, y).statistic, abs=1e-9)
    # each resample's figures are the drawn judges' figures on the drawn units, recomputed
    judges = rng.integers(0, k, size=(4, k))
    xs, ys = bon._two_level(points, judges, np.random.default_rng(seed))
    again = np.random.default_rng(seed)  # one chunk: the pairs' draws of every resample, then the items'
    wps = again.multinomial(n, np.full(n, 1 / n), size=4)
    wis = again.multinomial(n + 1, np.full(n + 1, 1 / (n + 1)), size=4)
    for row, (wp, wi) in enumerate(zip(wps, wis, strict=True)):
        for col, j in enumerate(judges[row]):
            pt = points[j]
            units = [pt.pairs[f"p{i}"] for i in range(n)]  # type: ignore[index]
            den = sum(w * u for w, (_, u) in zip(wp, units, strict=True))
            acc = sum(w * c for w, (c, _) in zip(wp, units, strict=True)) / den
            gain = sum(w * pt.items[f"i{i}"] for i, w in enumerate(wi)) / wi.sum()  # type: ignore[index]
            assert xs[row, col] == pytest.approx(acc) and ys[row, col] == pytest.approx(gain)
