"""Scoring rules on small literal cases worked out by hand, and the published scripts'
rules reproduced (mmrb_eval/scoring.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.errors import MmrbError
from curate.judging.records import Judgment
from mmrb_eval.records import EvalPair
from mmrb_eval.scoring import ScoringOptions, parse_subsplit, preset_options, render_text, score


def P(pid, label, cat="X", group=""):
    return EvalPair(pid, "q", "one", "two", label, cat, group=group)


def J(pid, verdict=None, outcome="parsed", order="forward", i=0):
    if verdict is None and outcome == "parsed":
        outcome = "unparsed"
    return Judgment(pid, order, i, verdict, outcome)


# x1, x2 in X; y1, y2 in Y. One forward judgment each:
#   x1 -> first  (label first: right)
#   x2 -> unparsed
#   y1 -> names both answers
#   y2 -> first  (label second: wrong)
PAIRS = [P("x1", "first"), P("x2", "second"), P("y1", "first", "Y"), P("y2", "second", "Y")]
JUDG = [J("x1", "first"), J("x2"), J("y1", outcome="both"), J("y2", "first")]


def run(**kw):
    return score(PAIRS, JUDG, ScoringOptions(bootstrap=200, **kw))


def test_parse_failure_wrong():
    r = run(parse_failure="wrong")
    # x1 1, x2 0, y1 0 (both = a failure), y2 0 -> 1/4; X 1/2, Y 0/2; macro (.5 + 0)/2
    assert (r.overall["correct"], r.overall["n"], r.overall["accuracy"]) == (1, 4, 0.25)
    assert r.overall["correct_n"] == "1/4"
    assert r.categories["X"].accuracy == 0.5 and r.categories["Y"].accuracy == 0.0
    assert r.macro["accuracy"] == 0.25
    assert r.outcomes == {"parsed": 2, "unparsed": 1, "both": 1, "error": 0}
    assert r.parse_failure_rate == {"rate": 0.5, "count": 2, "n": 4}


def test_parse_failure_half():
    r = run(parse_failure="half")
    # 1 + .5 + .5 + 0 = 2/4; X 1.5/2 = .75; Y .5/2 = .25
    assert r.overall["correct_n"] == "2/4" and r.overall["accuracy"] == 0.5
    assert r.categories["X"].correct_n == "1.5/2" and r.categories["X"].accuracy == 0.75
    assert r.categories["Y"].accuracy == 0.25


def test_parse_failure_excluded():
    r = run(parse_failure="excluded")
    # only x1 (1) and y2 (0) count: 1/2; X 1/1; Y 0/1
    assert r.overall["correct_n"] == "1/2"
    assert r.categories["X"].correct_n == "1/1" and r.categories["Y"].correct_n == "0/1"
    assert r.excluded_units == 2


def test_parse_failure_coin_seed_123():
    r = run(parse_failure="coin", seed=123)
    # random.Random(123) draws .052 then .087: both < .5, so A each time, in file order.
    # x2 (forward): A = first, label second -> 0;  y1 (both, a failure): A = first, label first -> 1
    # total 1 + 0 + 1 + 0 = 2/4
    assert r.overall["correct_n"] == "2/4"
    assert r.categories["X"].correct_n == "1/2" and r.categories["Y"].correct_n == "1/2"
    assert r.unit_statuses == {"coin": 2, "correct": 1, "wrong": 1}


def test_coin_respects_the_order_shown():
    # a reverse judgment shows the second response as A: a coin landing on A picks "second"
    pairs = [P("r1", "second")]
    r = score(pairs, [J("r1", order="reverse")], ScoringOptions(parse_failure="coin", seed=123, bootstrap=0))
    assert r.overall["correct_n"] == "1/1"  # draw .052 -> A -> second == label
    r = score(pairs, [J("r1", order="forward")], ScoringOptions(parse_failure="coin", seed=123, bootstrap=0))
    assert r.overall["correct_n"] == "0/1"  # A -> first != label


def test_coin_draws_follow_file_order():
    # draws with seed 123: .052 A, .087 A, .407 A, .108 A, .901 B
    pairs = [P(f"p{i}", "second") for i in range(5)]
    js = [J(f"p{i}") for i in range(5)]
    r = score(pairs, js, ScoringOptions(parse_failure="coin", seed=123, bootstrap=0))
    assert r.overall["correct_n"] == "1/5"  # only the fifth draw (B = second) is right
    r = score(pairs, js[::-1], ScoringOptions(parse_failure="coin", seed=123, bootstrap=0))
    assert r.overall["correct_n"] == "1/5"
    # ...and it is p0 that is right when p0 comes last
    r2 = score(pairs, js[::-1], ScoringOptions(parse_failure="coin", seed=123, bootstrap=0, missing="excluded"))
    assert r2.overall["correct_n"] == "1/5"


def test_mmrb_preset_counts_both_as_a():
    r = score(PAIRS, JUDG, preset_options("mmrb", bootstrap=0))
    # y1 names both: counted as A = first = label -> 1 (no coin drawn); x2 draws .052 -> A -> 0
    assert r.overall["correct_n"] == "2/4"
    assert r.both_counted_as_first_shown == 1 and r.outcomes["both"] == 1
    assert r.unit_statuses == {"coin": 1, "correct": 2, "wrong": 1}
    assert "counted as A" in render_text(r)
    # without the official flaw, y1 is a parse failure like x2
    r = score(PAIRS, JUDG, preset_options("mmrb", both="unparsed", bootstrap=0))
    assert r.both_counted_as_first_shown == 0 and r.unit_statuses["coin"] == 2


def test_ties():
    pairs = [P("a", "first"), P("b", "second")]
    js = [J("a", "tie"), J("b", "second")]
    assert score(pairs, js, ScoringOptions(ties="wrong", bootstrap=0)).overall["correct_n"] == "1/2"
    assert score(pairs, js, ScoringOptions(ties="half", bootstrap=0)).overall["correct_n"] == "1.5/2"
    assert score(pairs, js, ScoringOptions(ties="excluded", bootstrap=0)).overall["correct_n"] == "1/1"
    assert score(pairs, js, ScoringOptions(bootstrap=0)).tie_rate == {"rate": 0.5, "count": 1, "n": 2}


def test_both_orders_mmrb2_rule_and_position_bias():
    pairs = [P("r1", "first"), P("r2", "second")]
    js = [
        J("r1", "first", order="forward"),  # saw A=first, said A: right
        J("r1", "second", order="reverse"),  # saw A=second, said A again: wrong
        J("r2", "second", order="forward"),  # said B = second: right
        J("r2", order="reverse"),  # an answer naming neither response: MMRB2 counts it, wrong
    ]
    r = score(pairs, js, preset_options("mmrb2", bootstrap=0))
    # (1 + 0 + 1 + 0) / 4 judgments
    assert r.overall["correct_n"] == "2/4"
    # leaving unread answers out instead (what MMRB2's judging script does before writing)
    assert (
        score(pairs, js, preset_options("mmrb2", parse_failure="excluded", bootstrap=0)).overall["correct_n"] == "2/3"
    )
    pos = r.position
    assert pos["first_shown_picked"] == {"rate": round(2 / 3, 6), "count": 2, "n": 3}
    # chosen shown first: r1 forward (right) -> 1/1; chosen shown second: r1 reverse (wrong), r2 forward (right)
    assert pos["acc_chosen_shown_first"]["correct_n"] == "1/1"
    assert pos["acc_chosen_shown_second"]["correct_n"] == "1/2"
    # consistency: only r1 has a parsed verdict in both orders, and it flipped with the order
    assert pos["consistency"]["correct_n"] == "0/1"


def test_majority_vote_vlrewardbench_rule():
    # 10 votes each; "right" = the chosen response, "wrong" = the rejected one, "?" = unparsed
    votes = {
        "q1": (6, 0, 4),  # 6 right > 5: right
        "q2": (5, 3, 2),  # no side above half: split, leaves numerator and denominator
        "q3": (4, 0, 6),  # unparsed majority: leaves numerator and denominator
        "q4": (3, 7, 0),  # wrong
        "q5": (5, 5, 0),  # split
    }
    # the preset groups by cal.py's id prefix: wildvision -> general, RLHF -> hallucination, mmmu -> reasoning
    ids = {"q1": "wildvision_1", "q2": "wildvision_2", "q3": "RLHF-3", "q4": "RLHF-4", "q5": "mmmu-5"}
    pairs = [P(ids[q], "first", "ignored") for q in votes]
    js = []
    for q, (right, wrong, unp) in votes.items():
        vs = ["first"] * right + ["second"] * wrong + [None] * unp
        js += [J(ids[q], v, order="forward" if i % 2 else "reverse", i=i) for i, v in enumerate(vs)]
    r = score(pairs, js, preset_options("vlrewardbench", bootstrap=0))
    assert r.overall["correct_n"] == "1/2"  # q1 right, q4 wrong; q2, q3, q5 dropped
    assert r.categories["general"].correct_n == "1/1"
    assert r.categories["hallucination"].correct_n == "0/1"
    assert r.categories["reasoning"].accuracy is None
    assert r.categories["reasoning"].reason == "no scored units"
    assert "ignored" not in r.categories
    # cal.py's macro is the mean of its three groups: with one empty it divides by zero
    assert r.macro["accuracy"] is None and r.macro["reason"] == "no scored units in reasoning"
    # without those rules: the pairs' own category, and the macro over the scored groups
    r2 = score(pairs, js, preset_options("vlrewardbench", grouping="category", macro_groups=(), bootstrap=0))
    assert r2.categories["ignored"].correct_n == "1/2"
    assert r2.macro["accuracy"] == 0.5 and r2.macro["groups"] == 1
    assert r.unit_statuses == {"correct": 1, "wrong": 1}
    assert r.excluded_units == 3
    # the same votes with splits as half credit and unparsed as wrong: (1 + .5 + 0 + 0 + .5) / 5
    r = score(pairs, js, preset_options("vlrewardbench", split="half", parse_failure="wrong", bootstrap=0))
    assert r.overall["correct_n"] == "2/5"
    # unparsed votes left out of the total: q2 becomes 5 of 8 right and q3 4 of 4 right;
    # q1 right, q4 wrong, q5 still split -> 3/4
    r = score(pairs, js, preset_options("vlrewardbench", majority_counts_unparsed=False, bootstrap=0))
    assert r.overall["correct_n"] == "3/4"


def test_samples_used_and_orders_filter():
    pairs = [P("a", "first")]
    js = [J("a", "first", i=0), J("a", "second", i=1), J("a", "second", order="reverse", i=0)]
    assert score(pairs, js, ScoringOptions(samples_used=1, bootstrap=0)).overall["correct_n"] == "1/2"
    assert score(pairs, js, ScoringOptions(orders=("forward",), bootstrap=0)).overall["correct_n"] == "1/2"
    assert score(pairs, js, ScoringOptions(bootstrap=0)).overall["correct_n"] == "1/3"


def test_missing_and_unknown_pairs():
    pairs = [P("a", "first"), P("b", "first")]
    js = [J("a", "first"), J("zzz", "first")]
    r = score(pairs, js, ScoringOptions(bootstrap=0))
    assert r.overall["correct_n"] == "1/1" and r.missing_pairs == 1 and r.unknown_judgments == 1
    r = score(pairs, js, ScoringOptions(missing="wrong", bootstrap=0))
    assert r.overall["correct_n"] == "1/2"


def test_subsplits_and_weights():
    pairs = [
        P("pairs_1", "first", "safety"),
        P("hateful_2", "first", "safety"),
        P("math_3", "first", "reasoning"),
        P("Code_4", "first", "reasoning"),
    ]
    js = [J("pairs_1", "first"), J("hateful_2", "second"), J("math_3", "first"), J("Code_4", "first")]
    r = score(pairs, js, preset_options("mmrb", bootstrap=0))
    assert r.subsplits["safety/bias"].correct_n == "1/1"
    assert r.subsplits["safety/toxicity"].correct_n == "0/1"
    assert r.subsplits["reasoning/math"].correct_n == "1/1"
    assert r.subsplits["reasoning/coding"].correct_n == "1/1"
    assert r.categories["safety"].accuracy == 0.5 and r.categories["reasoning"].accuracy == 1.0
    # safety .5, reasoning 1: macro .75; weighted 3:1 -> (3*.5 + 1)/4 = .625
    assert r.macro["accuracy"] == 0.75
    r = score(pairs, js, preset_options("mmrb", bootstrap=0, weights={"safety": 3, "reasoning": 1}))
    assert r.size_weighted["accuracy"] == 0.625
    assert parse_subsplit("safety:pairs=safety/bias,*=safety/toxicity") == (
        "safety",
        (("pairs", "safety/bias"), ("*", "safety/toxicity")),
    )
    with pytest.raises(MmrbError, match="must look like"):
        parse_subsplit("safety")


def test_size_weighted_uses_dataset_sizes_by_default():
    # X has 3 dataset pairs (one unjudged), Y has 1: weights 3 and 1
    pairs = [P("x1", "first"), P("x2", "first"), P("x3", "first"), P("y1", "first", "Y")]
    js = [J("x1", "first"), J("x2", "second"), J("y1", "first")]
    r = score(pairs, js, ScoringOptions(bootstrap=0))
    # X .5, Y 1 -> macro .75, size-weighted (3*.5 + 1*1)/4 = .625, micro 2/3
    assert r.macro["accuracy"] == 0.75
    assert r.size_weighted["accuracy"] == 0.625
    assert r.overall["correct_n"] == "2/3"


def test_acc_plus():
    # prompt g1: three pairs all right; g2: two pairs, one wrong -> Acc+ 1/2, Acc 4/5
    pairs = [P(f"g1#{i}", "first", group="g1") for i in range(3)] + [
        P(f"g2#{i}", "first", group="g2") for i in range(2)
    ]
    js = [J(p.id, "first") for p in pairs[:4]] + [J("g2#1", "second")]
    r = score(pairs, js, ScoringOptions(bootstrap=0))
    assert r.overall["correct_n"] == "4/5"
    assert r.acc_plus["correct_n"] == "1/2" and r.acc_plus["groups_with_several_pairs"] == 2


def test_bootstrap_intervals_are_seeded_and_bracket_the_estimate():
    pairs = [P(f"p{i}", "first", "X" if i % 3 else "Y") for i in range(60)]
    js = [J(f"p{i}", "first" if i % 4 else "second") for i in range(60)]
    a = score(pairs, js, ScoringOptions(bootstrap=500, bootstrap_seed=1))
    b = score(pairs, js, ScoringOptions(bootstrap=500, bootstrap_seed=1))
    c = score(pairs, js, ScoringOptions(bootstrap=500, bootstrap_seed=2))
    assert a == b and a.overall["ci"] != c.overall["ci"]
    for s in (a.overall, a.categories["X"].to_json(), a.categories["Y"].to_json(), a.macro):
        lo, hi = s["ci"]
        assert lo <= s["accuracy"] <= hi and hi - lo < 0.6
    assert score(pairs, js, ScoringOptions(bootstrap=0)).overall["ci"] is None


def test_empty_and_bad_options():
    r = score([P("a", "first")], [], ScoringOptions(bootstrap=10))
    assert r.overall["accuracy"] is None and r.overall["reason"] == "no scored units"
    assert r.macro["accuracy"] is None and r.parse_failure_rate["rate"] is None
    with pytest.raises(MmrbError, match="parse_failure"):
        ScoringOptions(parse_failure="ignore").check()
    with pytest.raises(MmrbError, match="unknown preset"):
        preset_options("rewardbench")
    # explicit options override a preset, and the report echoes them all
    opts = preset_options("mmrb", parse_failure="half")
    assert opts.parse_failure == "half" and opts.both == "first_shown" and opts.preset == "mmrb"
    r = score(PAIRS, JUDG, opts)
    assert r.options["parse_failure"] == "half" and r.options["seed"] == 123


# -- failed requests -------------------------------------------------------------------------
def F(pid, order="forward", i=0):
    """A failed request (connection, timeout, HTTP error, malformed body)."""
    return Judgment(pid, order, i, None, "error", error="connection refused")


ALL_OPTIONS = [
    *(
        ScoringOptions(parse_failure=pf, missing=m, aggregate=a, bootstrap=0)
        for pf in ("coin", "wrong", "half", "excluded")
        for m in ("excluded", "wrong")
        for a in ("each", "majority")
    ),
    *(
        preset_options(name, bootstrap=0)
        for name in ("mmrb", "vlrewardbench", "mmrb2", "r1-mmrb", "r1-vlrewardbench", "r1-mm-rlhf")
    ),
]


def test_an_unreachable_judge_scores_nothing():
    # mmrb evaluate against a judge that never answered: 66 failed requests
    pairs = [P(f"p{i}", "first" if i % 2 else "second") for i in range(66)]
    js = [F(p.id) for p in pairs]
    for opts in ALL_OPTIONS:
        r = score(pairs, js, opts)
        assert r.overall["accuracy"] is None and r.overall["n"] == 0, opts
        assert r.n_failed == 66 and r.failed_pairs == 66 and r.pairs_without_answer == 66
        assert r.complete is False and r.missing_pairs == 0
        assert r.unit_statuses == {} and r.parse_failure_rate["n"] == 0
        assert r.warnings[0].startswith("incomplete: 66 of 66 judgments failed")
    text = render_text(score(pairs, js, ScoringOptions(parse_failure="half", bootstrap=0)))
    assert "INCOMPLETE: 66 failed judgments" in text and "0.5000" not in text


def test_the_incomplete_note_names_the_causes():
    pairs = [P(f"p{i}", "first") for i in range(4)]
    errors = ["empty response (finish_reason=stop)", "response of 9 characters is over the limit of 5", None]
    js = [Judgment(p.id, "forward", 0, None, "error", error=e) for p, e in zip(pairs, errors, strict=False)]
    r = score(pairs, [*js, J("p3", "first")], ScoringOptions(bootstrap=0))
    assert r.warnings[0].startswith(
        "incomplete: 3 of 4 judgments failed (1 empty response, 1 over the size limit, 1 unknown error) and are in no "
        "figure; 3 pairs have no answer at all."
    )


def test_failed_requests_draw_no_coin_and_cast_no_vote():
    pairs = [P(f"p{i}", "second") for i in range(5)]
    # the coin draws .052 A, .087 A, .407 A, .108 A, .901 B: only the fifth unparsed answer is right
    js = [J(f"p{i}") for i in range(5)]
    with_failures = [js[0], F("p1", i=1), js[1], F("p2", i=1), js[2], js[3], js[4]]
    a = score(pairs, js, ScoringOptions(parse_failure="coin", bootstrap=0))
    b = score(pairs, with_failures, ScoringOptions(parse_failure="coin", bootstrap=0))
    assert a.overall["correct_n"] == b.overall["correct_n"] == "1/5"
    assert b.n_failed == 2 and b.pairs_without_answer == 0 and not b.complete
    # a majority vote over the answers only: 1 right of 1, the two failures do not outvote it
    pairs = [P("v", "first")]
    r = score(
        pairs,
        [F("v"), J("v", "first", i=1), F("v", i=2)],
        preset_options("vlrewardbench", grouping="category", bootstrap=0),
    )
    assert r.overall["correct_n"] == "1/1" and r.excluded_units == 0


OUTCOME = st.sampled_from(["first", "second", "tie", None, "both", "error", "error"])


ROWS = st.lists(
    st.tuples(st.integers(0, 6), OUTCOME, st.sampled_from(["forward", "reverse"]), st.integers(0, 2)), max_size=30
)
LABELS = st.lists(st.sampled_from(["first", "second"]), min_size=7, max_size=7)


def _drawn(rows, labels) -> tuple[list[EvalPair], list[Judgment]]:
    """Seven pairs in two categories and three prompt groups, and the drawn rows' judgments."""
    pairs = [P(f"RLHF-{i}" if i % 3 else f"mmmu_{i}", labels[i], "XY"[i % 2], group=f"g{i // 2}") for i in range(7)]
    js = []
    for i, v, order, k in rows:
        pid = pairs[i].id
        if v == "error":
            js.append(F(pid, order, k))
        elif v == "both":
            js.append(Judgment(pid, order, k, None, "both", raw="[[A]] or [[B]]"))
        else:
            js.append(Judgment(pid, order, k, v, "parsed" if v else "unparsed", raw=f"[[{'AB'[k % 2]}]]"))
    return pairs, js


@settings(max_examples=40, deadline=None)
@given(ROWS, LABELS)
def test_failed_requests_change_no_figure(rows, labels):
    # Under every option, a file with failed requests scores as the same file without them
    # (and without the pairs that have nothing else), and the failures are counted apart.
    pairs, js = _drawn(rows, labels)
    answered = [j for j in js if j.outcome != "error"]
    only_failed = {j.pair_id for j in js} - {j.pair_id for j in answered}
    kept_pairs = [p for p in pairs if p.id not in only_failed]
    for opts in ALL_OPTIONS:
        a = score(pairs, js, opts)
        b = score(kept_pairs, answered, opts)
        used = [
            j for j in js if j.outcome == "error" and (opts.samples_used is None or j.sample_index < opts.samples_used)
        ]
        assert a.n_failed == len(used) and a.complete == (not used)
        # (the mmrb2 rule finds no JSON judgement in these texts: that has a warning of its own)
        assert bool([w for w in a.warnings if "no judgement" not in w]) == bool(used)
        for key in ("overall", "macro", "unit_statuses", "excluded_units", "parse_failure_rate", "tie_rate"):
            if key in ("overall", "macro"):
                assert (getattr(a, key).get("correct"), getattr(a, key).get("n"), getattr(a, key)["accuracy"]) == (
                    getattr(b, key).get("correct"),
                    getattr(b, key).get("n"),
                    getattr(b, key)["accuracy"],
                ), (key, opts)
            else:
                assert getattr(a, key) == getattr(b, key), (key, opts)
        for c, s in b.categories.items():
            assert (a.categories[c].correct, a.categories[c].n) == (s.correct, s.n)
        assert (a.acc_plus["correct"], a.acc_plus["n"]) == (b.acc_plus["correct"], b.acc_plus["n"])


def test_the_scoring_vocabularies_are_written_once():
    """The flags of ``mmrb score`` / ``mmrb evaluate`` and the Leaderboard page take their choices
    from the constants in mmrb_eval/scoring.py: no other module restates one as a literal."""
    import ast
    from pathlib import Path

    from mmrb_eval import scoring

    vocabularies = {
        name: frozenset(getattr(scoring, name))
        for name in ("AGGREGATES", "PARSE_FAILURE", "BOTH_POLICIES", "TIE_POLICIES", "SPLIT_POLICIES")
        + ("MISSING_POLICIES", "EMPTY_GROUP_POLICIES", "VERDICT_RULE_NAMES")
    }
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in [*root.glob("mmrb_eval/**/*.py"), *root.glob("annotate/**/*.py"), root / "app.py"]:
        if path.name == "scoring.py" and path.parent.name == "mmrb_eval":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                words = {w for w in words if not w.startswith("(")}  # a page's "(preset/default)"
                found += [f"{path.relative_to(root)}:{node.lineno} {n}" for n, v in vocabularies.items() if words == v]
    assert found == []


# -- too few pairs for an interval (issue 24) ------------------------------------------------------
def test_a_category_of_one_pair_has_no_interval_and_says_why():
    """`mmrb score` printed `1.0000 [1.000, 1.000]` for a category of one pair: below
    MIN_BOOTSTRAP_PAIRS scored pairs the interval is null beside its reason, in the JSON and
    the text, and so is a macro or size-weighted interval built from that category's."""
    from curate.agreement.limits import MIN_BOOTSTRAP_PAIRS

    assert MIN_BOOTSTRAP_PAIRS == 10  # the agreement's documented minimum, the same constant
    pairs = [P(f"x{i}", "first") for i in range(12)] + [P("s1", "first", "S")]
    js = [J(f"x{i}", "first" if i % 4 else "second") for i in range(12)] + [J("s1", "first")]
    r = score(pairs, js, ScoringOptions(bootstrap=200))
    one = r.to_json()["categories"]["S"]
    assert (one["accuracy"], one["ci"], one["ci_undefined"], one["pairs"]) == (1.0, None, "too few pairs", 1)
    assert r.categories["X"].ci is not None and "ci_undefined" not in r.to_json()["categories"]["X"]
    assert r.overall["ci"] is not None and "ci_undefined" not in r.overall  # 13 pairs
    for avg in (r.macro, r.size_weighted):  # S's replicates would not vary
        assert avg["accuracy"] is not None and avg["ci"] is None and avg["ci_undefined"] == "too few pairs"
    text = render_text(r)
    assert "  S                                    1.0000 [undefined (too few pairs)] (1/1)" in text.splitlines()
    assert "[1.000, 1.000]" not in text
    assert next(line for line in text.splitlines() if "macro" in line).endswith("[undefined (too few pairs)]")
    # no interval asked for: none, and no reason either
    plain = score(pairs, js, ScoringOptions(bootstrap=0))
    assert plain.categories["S"].ci is None and "ci_undefined" not in plain.to_json()["categories"]["S"]
    assert "undefined" not in render_text(plain)


def test_acc_plus_needs_as_many_prompt_groups_for_an_interval():
    few = [P(f"g{g}#{i}", "first", group=f"g{g}") for g in range(3) for i in range(2)]
    r = score(few, [J(p.id, "first") for p in few], ScoringOptions(bootstrap=100))
    assert r.acc_plus["n"] == 3 and r.acc_plus["ci"] is None and r.acc_plus["ci_undefined"] == "too few prompt groups"
    assert "Acc+ over prompt groups: 1.0000 [undefined (too few prompt groups)] (3/3)" in render_text(r)
    many = [P(f"g{g}#{i}", "first", group=f"g{g}") for g in range(10) for i in range(2)]
    r = score(many, [J(p.id, "first") for p in many], ScoringOptions(bootstrap=100))
    assert r.acc_plus["ci"] == [1.0, 1.0] and "ci_undefined" not in r.acc_plus


def test_mmrb_score_on_a_one_pair_category(tmp_path, capsys):
    """The issue's command: Multimodal RewardBench judge outputs, 12 pairs in one category and
    one in another, scored with the benchmark's preset."""
    import json

    from curate.cli import main

    rows = [
        {"ID": f"vqa_{i}", "Text": "q", "Image": None, "Output1": "a", "Output2": "b", "Label": "A"}
        | {"output": "[[A]]" if i % 4 else "[[B]]", "Meta": {"Category": "general_correctness"}}
        for i in range(12)
    ]
    rows.append(
        {"ID": "safety_1", "Text": "q", "Image": None, "Output1": "a", "Output2": "b", "Label": "A"}
        | {"output": "[[A]]", "Meta": {"Category": "safety"}}
    )
    f = tmp_path / "outputs.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["score", "--judgments", str(f), "--format", "mmrb", "--preset", "mmrb"]
    assert main([*argv, "--bootstrap", "200"]) == 0
    text = capsys.readouterr().out
    assert "safety                               1.0000 [undefined (too few pairs)] (1/1)" in text
    assert "safety/toxicity                    1.0000 [undefined (too few pairs)] (1/1)" in text
    assert "[1.000, 1.000]" not in text
    assert main([*argv, "--bootstrap", "200", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for s in (report["categories"]["safety"], report["subsplits"]["safety/toxicity"], report["macro"]):
        assert s["ci"] is None and s["ci_undefined"] == "too few pairs"
    assert len(report["categories"]["general_correctness"]["ci"]) == 2


INTERVAL = re.compile(r"\[-?\d\.\d{3}, -?\d\.\d{3}\]")


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_below_the_minimum_no_interval_is_printed_and_at_it_there_is_one(data):
    from curate.agreement.limits import MIN_BOOTSTRAP_PAIRS

    sizes = data.draw(st.lists(st.integers(1, 2 * MIN_BOOTSTRAP_PAIRS), min_size=1, max_size=3), label="sizes")
    pairs, js = [], []
    for c, n in enumerate(sizes):
        right = data.draw(st.lists(st.booleans(), min_size=n, max_size=n), label=f"right c{c}")
        for i, ok in enumerate(right):
            pairs.append(P(f"c{c}-{i}", "first", f"c{c}"))
            js.append(J(f"c{c}-{i}", "first" if ok else "second"))
    r = score(pairs, js, ScoringOptions(bootstrap=50))
    lines = render_text(r).splitlines()

    def check(s: dict, line: str, enough: bool) -> None:
        assert (s["ci"] is not None) == enough and s.get("ci_undefined") == (None if enough else "too few pairs")
        assert bool(INTERVAL.search(line)) == enough and ("[undefined (too few pairs)]" in line) == (not enough)

    for c, n in enumerate(sizes):
        line = next(x for x in lines if x.startswith(f"  c{c} "))
        check(r.categories[f"c{c}"].to_json(), line, n >= MIN_BOOTSTRAP_PAIRS)
    line_of = {x.split("  ")[1].strip(): x for x in lines if x.startswith("  ") and not x.startswith("   ")}
    check(r.overall, line_of["overall (micro)"], sum(sizes) >= MIN_BOOTSTRAP_PAIRS)
    for name, label in (("macro", "macro"), ("size_weighted", "size-weighted")):
        check(getattr(r, name), line_of[label], min(sizes) >= MIN_BOOTSTRAP_PAIRS)


@settings(max_examples=60, deadline=None)
@given(ROWS, LABELS)
def test_pair_credits_add_up_to_the_overall_and_each_categorys_accuracy(rows, labels):
    from mmrb_eval.scoring import pair_credits

    pairs, js = _drawn(rows, labels)
    for opts in ALL_OPTIONS:
        got = pair_credits(pairs, js, opts)
        report = score(pairs, js, opts)
        assert sum(n for _, _, n in got.values()) == report.overall["n"]
        assert sum(c for _, c, _ in got.values()) == pytest.approx(report.overall["correct"])
        for cat, fig in report.categories.items():
            mine = [(c, n) for g, c, n in got.values() if g == cat]
            assert sum(n for _, n in mine) == fig.n and sum(c for c, _ in mine) == pytest.approx(fig.correct)
