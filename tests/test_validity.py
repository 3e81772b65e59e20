"""mmrb validity: which runs are paired (literal run lists), the verdict's rule (literal
correlations), and end to end: loopback judges right with probability p evaluated on a small
built benchmark (``mmrb evaluate``) and run through ``mmrb bestofn``, then ``mmrb validity``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curate.benchmark import export
from curate.errors import MmrbError
from curate.model import JudgeRun, Triplet
from curate.seeding import unit
from mmrb_eval.bestofn import Estimate, Validity
from mmrb_eval.bestofn_run import DATASET
from mmrb_eval.validity import JudgeRuns, pick_runs, verdict
from tests.support.command_runner import command, run_command
from tests.support.fake_openai import FakeOpenAI, Fault
from tests.test_bestofn_run import MARK, fill, judge_file


def ev(rid: str, judge: str) -> JudgeRun:
    return JudgeRun(rid, "evaluate", judge, {}, DATASET)


def bo(rid: str, judge: str) -> JudgeRun:
    return JudgeRun(rid, "bestofn", judge, {"bestofn": "matches"}, DATASET)


# -- which runs --------------------------------------------------------------------------------
def test_judges_having_both_runs_are_paired_by_name_and_the_rest_noted():
    got, notes = pick_runs([ev("e1", "a"), ev("e2", "b"), ev("e3", "c")], [bo("b1", "a"), bo("b2", "c"), bo("b3", "d")])
    assert got == [JudgeRuns("a", "e1", "b1"), JudgeRuns("c", "e3", "b2")]
    assert notes == ["judge b has no Best-of-N run", "judge d has no evaluation run"]
    only, _ = pick_runs([ev("e1", "a"), ev("e3", "c")], [bo("b1", "a"), bo("b2", "c")], judges=["c"])
    assert only == [JudgeRuns("c", "e3", "b2")]


def test_two_runs_of_one_kind_are_refused_naming_them_unless_run_picks():
    evs, bos = [ev("e1", "a"), ev("e2", "a")], [bo("b1", "a")]
    with pytest.raises(MmrbError, match=r"judge a has 2 evaluation runs \(e1, e2\): pick one with --run"):
        pick_runs(evs, bos)
    assert pick_runs(evs, bos, runs=["e2"])[0] == [JudgeRuns("a", "e2", "b1")]
    with pytest.raises(MmrbError, match="--run nope: no evaluation or Best-of-N run"):
        pick_runs(evs, bos, runs=["nope"])
    with pytest.raises(MmrbError, match="judge z has no evaluation and no Best-of-N run"):
        pick_runs(evs, bos, judges=["z"], runs=["e1"])


# -- the verdict ---------------------------------------------------------------------------------
def _v(value, low=None, high=None, k=5, why=None) -> Validity:
    e = Estimate(value, low, high, why)
    return Validity("overall", k, e, e)


@pytest.mark.parametrize(
    ("v", "says"),
    [
        (
            _v(0.95, 0.81, 1.0),
            "Benchmark accuracy predicts Best-of-N gain strongly (Pearson 0.95 [0.81, 1.00], 5 judges)",
        ),
        (_v(0.5, 0.1, 0.8), "predicts Best-of-N gain moderately"),
        (_v(0.3, 0.05, 0.6), "predicts Best-of-N gain weakly"),
        (_v(0.4, -0.3, 0.9), "No evidence either way: the interval includes 0 (Pearson 0.40 [-0.30, 0.90], 5 judges)"),
        (_v(-0.8, -1.0, -0.2), "runs against Best-of-N gain"),
        (_v(None, k=2, why="2 judges, fewer than 3"), "undefined: 2 judges, fewer than 3"),
        (_v(0.9), "no verdict without an interval"),
    ],
)
def test_the_verdicts_rule(v, says):
    assert says in verdict(v)


# -- end to end ----------------------------------------------------------------------------------
def benchmark(folder: Path, n: int, *, prompts: list[str] | None = None) -> Path:
    """A built benchmark (the layout mmrb build writes) of n pairs in the Best-of-N items'
    categories; each response marked with its id, so a loopback judge knows the better one."""
    rows = [
        Triplet(
            id=f"t{i}",
            prompt=prompts[i % len(prompts)] if prompts else f"Benchmark question {i}?",
            images=(),
            chosen=f"[c:t{i}-good] the right answer",
            rejected=f"[c:t{i}-bad] a wrong answer",
            category="math" if i % 2 else "count",
        )
        for i in range(n)
    ]
    folder.mkdir(exist_ok=True)
    export.write_jsonl(folder, rows)
    return folder / "triplets.jsonl"


def p_answers(truth: dict[str, bool], p: float, salt: str = ""):
    """Right with probability p on each shown pair whose correctness differs (seeded on the
    salt and what is shown), a coin between two alike; a benchmark response's id says it."""

    def answer(req):
        a, b = MARK.findall(req.prompt_text)
        ta, tb = truth.get(a, a.endswith("-good")), truth.get(b, b.endswith("-good"))
        u = unit("validity judge", salt, p, a, b)
        better_a = ta if ta != tb else u < 0.5
        right = u < p if ta != tb else True
        return f"Overall Judgment: Answer {1 if better_a == right else 2} is better."

    return answer


def judged(tmp_path, db_url, truth, bench: Path, judges: dict[str, object], bestofn_argv=()) -> None:
    """Each judge evaluated on the benchmark and run through mmrb bestofn (knockout)."""
    store = ["--db", db_url, "--images", str(tmp_path / "images")]
    for name, answer in judges.items():
        with FakeOpenAI(answer) as srv:
            f = judge_file(tmp_path, srv.url, name)
            argv = ["--dataset", str(bench), "--judge", f, "--order", "both", "--bootstrap", "50", "--quiet", *store]
            run_command("evaluate", argv, package="mmrb_eval.commands")  # complete or not: validity says
            argv = ["--judge", f, "--resamples", "0", "--quiet", *store, *bestofn_argv]
            run_command("bestofn", argv, package="mmrb_eval.commands")


def validity(tmp_path, db_url, capsys, *extra: str) -> tuple[int, dict]:
    argv = ["--db", db_url, "--images", str(tmp_path / "images"), "--resamples", "300", "--json", *extra]
    capsys.readouterr()
    rc, out = command("validity", argv, capsys)
    return rc, json.loads(out)


def test_five_judges_of_rising_accuracy_validate_the_benchmark(store, db_url, tmp_path, capsys):
    truth = fill(store, 40)
    bench = benchmark(tmp_path / "bench", 40)
    judged(tmp_path, db_url, truth, bench, {f"p{p}": p_answers(truth, p) for p in (0.6, 0.7, 0.8, 0.9, 1.0)})
    rc, rep = validity(tmp_path, db_url, capsys, "--plot", str(tmp_path / "v.png"))
    assert (
        rc == 0 and rep["complete"] and [j["judge"] for j in rep["judges"]] == ["p0.6", "p0.7", "p0.8", "p0.9", "p1.0"]
    )
    overall = rep["validity"][0]
    assert overall["group"] == "overall" and overall["judges"] == 5
    assert overall["pearson"]["value"] > 0.9 and overall["pearson"]["ci"][0] > 0
    assert overall["resampled"] == "judges, benchmark pairs and Best-of-N items"
    assert [g["group"] for g in rep["validity"]] == ["overall", "count", "math"]
    assert rep["verdict"].startswith("Benchmark accuracy predicts Best-of-N gain")
    assert any("few judges (5, fewer than 10)" in c for c in rep["caveats"]) and rep["shared_prompts"] == 0
    best = rep["judges"][-1]
    assert best["benchmark_accuracy"]["value"] == 1.0 and best["gain_over_random"]["value"] > 0
    assert (tmp_path / "v.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the text report, and --output
    rc, _ = command(
        "validity", ["--db", db_url, "--images", str(tmp_path / "images"), "--output", str(tmp_path / "v.txt")], capsys
    )
    text = (tmp_path / "v.txt").read_text()
    assert rc == 0 and text.startswith("judge ") and "verdict: Benchmark accuracy predicts" in text
    assert "  count: 5 judges, Pearson" in text and "caveat: few judges" in text


def test_random_judges_give_no_evidence_either_way(store, db_url, tmp_path, capsys):
    truth = fill(store, 40)
    bench = benchmark(tmp_path / "bench", 40)
    judged(tmp_path, db_url, truth, bench, {f"coin{k}": p_answers(truth, 0.5, f"s{k}") for k in range(5)})
    rc, rep = validity(tmp_path, db_url, capsys)
    lo, hi = rep["validity"][0]["pearson"]["ci"]
    assert rc == 0 and lo < 0 < hi and rep["verdict"].startswith("No evidence either way")


def test_shared_prompts_incomplete_runs_and_too_few_judges(store, db_url, tmp_path, capsys):
    truth = fill(store, 12)
    prompts = [f"What is {10 + k} plus zero?" for k in range(12)]  # the Best-of-N items' own prompts
    bench = benchmark(tmp_path / "bench", 12, prompts=prompts)
    judged(tmp_path, db_url, truth, bench, {f"p{p}": p_answers(truth, p) for p in (0.7, 1.0)})
    rc, rep = validity(tmp_path, db_url, capsys)
    assert rc == 1 and not rep["complete"] and rep["verdict"] == "undefined: 2 judges, fewer than 3"
    assert rep["shared_prompts"] == 12 and any("inflates the correlation" in c for c in rep["caveats"])
    # a third judge whose Best-of-N run failed: listed, not used, and the command exits 1
    good = p_answers(truth, 0.9)

    def broken(req):  # right on the benchmark, a failed request on every Best-of-N match
        return good(req) if "-good]" in req.prompt_text else Fault("500")

    judged(tmp_path, db_url, truth, bench, {"broken": broken}, ["--method", "round-robin"])
    rc, rep = validity(tmp_path, db_url, capsys)
    (broken,) = [j for j in rep["judges"] if j["judge"] == "broken"]
    assert rc == 1 and not broken["used"] and "incomplete" in broken["not_used"]
    assert rep["validity"][0]["judges"] == 2 and any("judge broken not used" in c for c in rep["caveats"])
    rc, rep = validity(tmp_path, db_url, capsys, "--judge", "p1.0", "--judge", "p0.7")
    assert [j["judge"] for j in rep["judges"]] == ["p1.0", "p0.7"]
    # a judge whose benchmark judgments failed: not used either, whatever its Best-of-N
    judged(
        tmp_path, db_url, truth, bench, {"mute": lambda req: Fault("500") if "-good]" in req.prompt_text else good(req)}
    )
    rc, rep = validity(tmp_path, db_url, capsys, "--judge", "mute", "--judge", "p1.0", "--judge", "p0.7")
    (mute,) = [j for j in rep["judges"] if j["judge"] == "mute"]
    assert rc == 1 and not mute["used"] and mute["not_used"].startswith("its evaluation run mute-")
    assert mute["bestofn_accuracy"]["value"] is not None and rep["validity"][0]["judges"] == 2

    # a complete run with nothing to measure: every benchmark answer unreadable, and excluded
    def unsure(req):
        return "I cannot tell." if "-good]" in req.prompt_text else good(req)

    judged(tmp_path, db_url, truth, bench, {"unsure": unsure})
    rc, rep = validity(tmp_path, db_url, capsys, "--judge", "unsure", "--parse-failure", "excluded")
    assert rc == 1 and rep["judges"][0]["not_used"] == "no scored benchmark pair"
    # --method re-picks the matches: a knockout's run read as a round robin lacks matches it never played
    rc, rep = validity(tmp_path, db_url, capsys, "--judge", "p1.0", "--method", "round-robin")
    assert rc == 1 and rep["judges"][0]["method"] == "round-robin" and "never sent" in rep["judges"][0]["not_used"]


def test_nothing_to_correlate_is_an_error_not_a_table(store, db_url, tmp_path, capsys):
    rc = run_command("validity", ["--db", db_url, "--images", str(tmp_path / "i")], package="mmrb_eval.commands")
    err = capsys.readouterr().err
    assert rc == 1 and "nothing to correlate: no judge has both an evaluation run and a Best-of-N run" in err
