"""mmrb_eval/scaling.py: accuracy against the number of judge samples k, each point the majority
of a seeded, nested choice of k samples per pair, scored by scoring.score. Tiny literal
judgments and Hypothesis invariants; a "judge right with probability p" is a seeded coin per
pair and sample, no server."""

from __future__ import annotations

import json
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from curate.judging.records import Judgment
from curate.seeding import unit
from mmrb_eval.records import EvalPair
from mmrb_eval.scaling import renumbered, sample_ranks, samples_of, scaling, scaling_ks, scaling_lines
from mmrb_eval.scoring import SPLIT_POLICIES, TIE_POLICIES, ScoringOptions, order_judgments, preset_options, score


def P(pid: str, label: str = "first", cat: str = "X") -> EvalPair:
    return EvalPair(pid, "q", "one", "two", label, cat)  # type: ignore[arg-type]


def J(pid: str, i: int, verdict: str | None, outcome: str = "parsed", order: str = "forward") -> Judgment:
    if outcome == "parsed" and verdict is None:
        outcome = "unparsed"
    return Judgment(pid, order, i, verdict, outcome, error="HTTP 500" if outcome == "error" else None)  # type: ignore[arg-type]


def right_with(p: float, pairs: list[EvalPair], samples: int, salt: str = "") -> list[Judgment]:
    """A judge right with probability p on each sample of each pair (seeded), else wrong."""
    out = []
    for pair in pairs:
        wrong = "second" if pair.preferred == "first" else "first"
        for i in range(samples):
            out.append(J(pair.id, i, pair.preferred if unit("scaling test", salt, p, pair.id, i) < p else wrong))
    return out


def test_the_ks_are_odd_then_k_itself():
    assert scaling_ks(0) == scaling_ks(1) == ()
    assert scaling_ks(2) == (1, 2)
    assert scaling_ks(5) == (1, 3, 5)
    assert scaling_ks(6) == (1, 3, 5, 6)


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=6), st.integers(1, 12), st.integers(0, 5))
def test_the_choice_of_samples_is_seeded_and_nested(pid, samples, seed):
    ranks = sample_ranks(pid, samples, seed)
    assert sorted(ranks) == sorted(ranks.values()) == list(range(samples))  # a permutation
    assert sample_ranks(pid, samples, seed) == ranks  # the same on every rerun
    js = [J(pid, i, "first") for i in range(samples)]
    chosen = [
        {j.sample_index for j, r in zip(js, renumbered(js, samples, seed), strict=True) if r.sample_index < k}
        for k in range(1, samples + 1)
    ]
    assert all(len(c) == k for k, c in enumerate(chosen, 1))
    assert all(a <= b for a, b in pairwise(chosen))  # k's samples within k+1's (and k+2's)


def test_the_choice_differs_between_pairs():
    firsts = {min(r for r in sample_ranks(f"p{n}", 5, 0).items() if r[1] == 0)[0] for n in range(40)}
    assert len(firsts) > 1  # not the same sample of every pair
    assert sample_ranks("p1", 5, 0) != sample_ranks("p1", 5, 1) or sample_ranks("p2", 5, 0) != sample_ranks("p2", 5, 1)


verdicts = st.sampled_from(["first", "second", "tie", None, "error"])


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[EvalPair], list[Judgment], int]:
    n = draw(st.integers(1, 6))
    samples = draw(st.integers(2, 5))
    both = draw(st.booleans())
    pairs = [P(f"p{i}", draw(st.sampled_from(["first", "second"])), draw(st.sampled_from("XY"))) for i in range(n)]
    js = []
    for p in pairs:
        for i in range(samples):
            for order in ("forward", "reverse") if both else ("forward",):
                if draw(st.integers(0, 9)) == 0:
                    continue  # never judged
                v = draw(verdicts)
                js.append(J(p.id, i, None, "error", order) if v == "error" else J(p.id, i, v, order=order))
    return pairs, draw(st.permutations(js)), samples


options_st = st.one_of(
    st.builds(
        ScoringOptions,
        split=st.sampled_from(SPLIT_POLICIES),
        ties=st.sampled_from(TIE_POLICIES),
        parse_failure=st.sampled_from(["wrong", "half", "excluded", "coin"]),
        majority_counts_unparsed=st.booleans(),
        bootstrap=st.sampled_from([0, 50]),
    ),
    st.just(preset_options("vlrewardbench", bootstrap=50)),
)


@settings(max_examples=80, deadline=None)
@given(runs(), options_st)
def test_at_k_equal_to_the_samples_it_is_the_majority_scoring(run, opts):
    pairs, js, samples = run
    points = scaling(pairs, js, opts)
    if max((j.sample_index for j in js), default=0) + 1 < 2:
        assert points == []
        return
    last = points[-1]
    assert [p.k for p in points] == list(scaling_ks(last.k))
    # in dataset order, as a stored run is scored: a coin (split or unparsed) is drawn pair by pair
    majority = ScoringOptions(**{**opts.__dict__, "aggregate": "majority", "samples_used": last.k})
    whole = score(pairs, order_judgments(js, pairs), majority)
    assert last.overall == whole.overall and last.statuses == whole.unit_statuses and last.macro == whole.macro
    assert last.categories == {c: f.to_json() for c, f in whole.categories.items() if f.n}


@settings(max_examples=80, deadline=None)
@given(runs(), options_st)
def test_a_failed_judgment_is_never_a_vote(run, opts):
    pairs, js, _ = run
    without = [j for j in js if j.outcome != "error"]
    if samples_of(without, opts) != samples_of(js, opts):
        return  # the failed ones were the run's last samples: another K ranks the samples anew
    for a, b in zip(scaling(pairs, js, opts), scaling(pairs, without, opts), strict=True):
        assert (a.k, a.overall, a.categories, a.statuses) == (b.k, b.overall, b.categories, b.statuses)
        assert a.short_pairs >= b.short_pairs


@settings(max_examples=40, deadline=None)
@given(runs(), options_st, st.integers(0, 3))
def test_a_rerun_gives_the_same_curve(run, opts, seed):
    pairs, js, _ = run
    assert scaling(pairs, js, opts, seed=seed) == scaling(pairs, list(reversed(js)), opts, seed=seed)


def test_short_pairs_count_the_failed_and_the_unjudged_samples():
    pairs = [P("a"), P("b"), P("c")]
    js = [J("a", i, "first") for i in range(3)]
    js += [J("b", 0, "first"), J("b", 1, None, "error"), J("b", 2, "first")]
    js += [J("c", 0, "first"), J("c", 2, "first")]  # c's sample 1 never judged
    points = {p.k: p for p in scaling(pairs, js, ScoringOptions(bootstrap=0))}
    assert points[3].short_pairs == 2
    # at k=1: b and c are short only when their seeded first sample is the missing one
    expected = sum(1 for pid in "bc" if sample_ranks(pid, 3, 0)[1] == 0)
    assert points[1].short_pairs == expected
    assert points[3].overall["correct_n"] == "3/3"  # b and c: 2 of 2 answered votes say first


def test_a_judge_right_more_often_than_not_gains_with_samples():
    pairs = [P(f"p{i}", "first" if i % 2 else "second", "XY"[i % 2]) for i in range(400)]
    opts = ScoringOptions(bootstrap=200)
    for p, rises in ((0.7, True), (0.3, False)):
        points = scaling(pairs, right_with(p, pairs, 9), opts)
        accs = [x.overall["accuracy"] for x in points]
        assert [x.k for x in points] == [1, 3, 5, 7, 9]
        assert abs(accs[0] - p) < 0.06  # one sample: about p
        if rises:
            assert accs[-1] > accs[0] + 0.1 and all(b > a - 0.02 for a, b in pairwise(accs))
        else:
            assert accs[-1] < accs[0] - 0.1 and all(b < a + 0.02 for a, b in pairwise(accs))
        assert all(x.overall["ci"][0] <= x.overall["accuracy"] <= x.overall["ci"][1] for x in points)
        assert set(points[0].categories) == {"X", "Y"}


def test_one_sample_has_no_curve_and_presets_of_one_sample_none():
    pairs = [P("a"), P("b")]
    assert scaling(pairs, [J("a", 0, "first"), J("b", 0, "second")], ScoringOptions()) == []
    three = [J(pid, i, "first") for pid in "ab" for i in range(3)]
    assert scaling(pairs, three, preset_options("mmrb")) == []  # the script counts sample 0 only
    assert [p.k for p in scaling(pairs, three, ScoringOptions(samples_used=2))] == [1, 2]


def test_below_the_bootstrap_floor_the_interval_is_undefined():
    pairs = [P("a"), P("b")]
    js = [J(pid, i, "first") for pid in "ab" for i in range(3)]
    (one, three) = scaling(pairs, js, ScoringOptions(bootstrap=100))
    assert one.overall["ci"] is None and one.overall["ci_undefined"] == "too few pairs"
    assert json.loads(json.dumps([one.to_json()]))[0]["k"] == 1
    assert "accuracy against samples" in scaling_lines([one, three])[0]
    assert scaling_lines([]) == []


def stored_run(store, tmp_path, run_id: str, samples: int) -> None:
    """A run of ``samples`` samples per pair on a six-pair dataset, right on two samples of three."""
    from curate.judging.records import RunDataset
    from curate.judging.runner import ensure_run
    from mmrb_eval.datasets import read_dataset

    ds = tmp_path / "d.jsonl"
    rows = [{"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": f"bad {i}"} for i in range(6)]
    ds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ensure_run(store, run_id, purpose="evaluate", judge="j", identity={"kind": "test"}, dataset=RunDataset.files(ds))
    js = []
    for p in read_dataset(ds):
        wrong = "second" if p.preferred == "first" else "first"
        js += [J(p.id, i, wrong if i == 1 else p.preferred) for i in range(samples)]
    store.add_judgments(run_id, js)


def test_mmrb_score_reports_the_curve_of_a_run_of_several_samples(sqlite_store, tmp_path, capsys):
    from curate.cli import main

    stored_run(sqlite_store, tmp_path, "three", 3)
    stored_run(sqlite_store, tmp_path, "one", 1)
    db = ["--db", sqlite_store.db, "--images", str(tmp_path / "images"), "--bootstrap", "0"]
    out = tmp_path / "three.json"
    assert main(["score", "--run", "three", "--json", "--output", str(out), *db]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads(out.read_text())
    curve = report["scaling"]
    assert [p["k"] for p in curve] == [1, 3] and all(p["short_pairs"] == 0 for p in curve)
    # k=3: two right votes of three on every pair; k=1: right unless the seeded first sample is sample 1
    assert curve[1]["correct_n"] == "6/6"
    firsts = sum(1 for i in range(6) if sample_ranks(f"t{i}", 3, 0)[1] != 0)
    assert curve[0]["correct_n"] == f"{firsts}/6"
    assert main(["score", "--run", "one", "--json", *db]) == 0
    assert "scaling" not in json.loads(capsys.readouterr().out)  # one sample: no curve, no key
    assert main(["score", "--run", "three", *db]) == 0
    text = capsys.readouterr().out
    assert "accuracy against samples" in text and "k=3" in text and f"({firsts}/6)" in text
    assert main(["score", "--run", "one", *db]) == 0
    assert "accuracy against samples" not in capsys.readouterr().out


def test_mmrb_evaluate_with_samples_through_the_loopback_server(tmp_path, capsys):
    """End to end: `mmrb evaluate --samples 5` on 200 pairs against the loopback server, a
    judge right with probability 0.75 on each request (a coin seeded on the request's id:
    run, pair, order, sample; the run's id fixed, so the same coins every time), prints and
    reports a curve that rises with k."""
    from curate.cli import main
    from tests.support.fake_openai import FakeOpenAI

    rows = [{"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": f"bad {i}"} for i in range(200)]
    ds = tmp_path / "d.jsonl"
    ds.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def judge(req) -> str:
        a_good = req.prompt_text.split("[The Start of Assistant A's Answer]\n", 1)[1].startswith("good")
        right = unit("loopback judge", req.key) < 0.75
        return "[[A]]" if a_good == right else "[[B]]"

    with FakeOpenAI(judge) as srv:
        cfg = tmp_path / "judge.toml"
        cfg.write_text(f'name = "p75"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb"\nconcurrency = 8\n')
        # a fixed run id: the coins hash it, and the default id hashes the server's (random) port
        argv = ["evaluate", "--dataset", str(ds), "--judge", str(cfg), "--order", "random", "--samples", "5"]
        argv += ["--run", "p75"]
        argv += ["--db", str(tmp_path / "s.db"), "--images", str(tmp_path / "img"), "--quiet", "--bootstrap", "200"]
        assert main([*argv, "--json"]) == 0
        curve = json.loads(capsys.readouterr().out)["scaling"]
        assert len(srv.requests) == 1000
        assert main(argv) == 0  # resumed: nothing sent, the same curve printed
        text = capsys.readouterr().out
    assert [p["k"] for p in curve] == [1, 3, 5] and all(p["short_pairs"] == 0 for p in curve)
    accs = [p["accuracy"] for p in curve]
    assert 0.6 < accs[0] < 0.9 and accs[2] > accs[0] + 0.05, accs
    assert "accuracy against samples" in text and f"k=5   {accs[2]:.4f}" in text
