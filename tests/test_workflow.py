"""The evaluator's workflows (mmrb_eval/workflow.py) without the commands around them."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from curate.errors import InputError, MmrbError
from curate.judging.config import load_judge
from curate.judging.records import Judgment
from curate.judging.runner import ensure_run
from mmrb_eval.formats import write_judgments
from mmrb_eval.leaderboard import incomplete_runs, read_report
from mmrb_eval.runs import RunHealth
from mmrb_eval.scoring import ScoreReport, ScoringOptions, score
from mmrb_eval.workflow import (
    ScoredJudgments,
    evaluate,
    evaluation_runs,
    open_dataset,
    score_file,
    score_run,
)
from tests.support.fake_openai import FakeOpenAI

OPTS = ScoringOptions(bootstrap=0)


def figures(**kw) -> ScoreReport:
    """A score report with these figures (the others those of scoring nothing)."""
    return replace(score([], [], OPTS), **kw)


def fair(req) -> str:
    a = req.prompt_text.split("[The Start of Assistant A's Answer]\n", 1)[1]
    return "[[A]]" if a.startswith("good") else "[[B]]"


def dataset_file(tmp_path, n=4):
    ds = tmp_path / "d.jsonl"
    ds.write_text(
        "".join(
            json.dumps(
                {"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": f"bad {i}", "category": "AB"[i % 2]}
            )
            + "\n"
            for i in range(n)
        )
    )
    return ds


def test_open_dataset_keeps_the_first_pairs_and_records_paths_and_limit(tmp_path):
    ds = dataset_file(tmp_path)
    whole, head = open_dataset([str(ds)]), open_dataset([str(ds)], 3)
    assert [p.id for p in whole.pairs] == ["t0", "t1", "t2", "t3"] and whole.label == str(ds.resolve())
    assert [p.id for p in head.pairs] == ["t0", "t1", "t2"] and head.label == f"{ds.resolve()}[:3]"


def test_report_names_the_run_and_its_health_only_when_known():
    health = RunHealth(planned=2, answered=1, failed=1, missing=0)
    base = ScoredJudgments("j", "d", [], [], figures(overall={"accuracy": 1.0}, judgments=2))
    keys = list(base.figures.to_json())  # options, pairs, judgments ... warnings
    assert list(base.report) == ["judge", "dataset", *keys]
    run = replace(base, run_id="r1", health=health)
    assert list(run.report) == ["judge", "run", "dataset", *keys, "run_health"]
    assert run.report["run"] == "r1" and run.report["run_health"]["failed"] == 1 and not run.complete
    assert replace(run, health=RunHealth(2, 2, 0, 0)).complete


def test_report_of_a_file_is_complete_unless_judgments_failed_or_pairs_are_missing():
    ok = ScoredJudgments("j", "d", [], [], figures(outcomes={"error": 0}, judgments=4, pairs=4, missing_pairs=0))
    assert ok.complete
    assert not replace(ok, figures=replace(ok.figures, outcomes={"error": 1})).complete
    assert not replace(ok, figures=replace(ok.figures, missing_pairs=1)).complete


def test_score_file_names_the_judge_after_the_file_and_the_dataset_after_the_file_without_one(tmp_path):
    ds = dataset_file(tmp_path)
    dataset = open_dataset([str(ds)])
    f = tmp_path / "my-judge.jsonl"
    write_judgments(f, [Judgment(p.id, "forward", 0, p.preferred, "parsed", "", "prompt") for p in dataset.pairs])
    got = score_file(f, "mmrb-studio", OPTS, dataset)
    assert (got.judge, got.dataset, got.run_id, got.health) == ("my-judge", dataset.label, None, None)
    assert got.report["overall"]["correct_n"] == "4/4" and "run" not in got.report


def stored_run(store, tmp_path, run_id: str, verdict_of) -> None:
    dataset = open_dataset([str(dataset_file(tmp_path))])
    ensure_run(
        store, run_id, purpose="evaluate", judge=run_id.split("-")[0], identity={"kind": "test"}, dataset=dataset.files
    )
    store.add_judgments(
        run_id, [Judgment(p.id, "forward", 0, verdict_of(p), "parsed", "", "prompt") for p in dataset.pairs]
    )


def test_score_run_reads_the_recorded_dataset_or_the_pairs_given(sqlite_store, tmp_path):
    stored_run(sqlite_store, tmp_path, "sharp-1", lambda p: p.preferred)
    got = score_run(sqlite_store, "sharp-1", OPTS)
    assert (got.judge, got.run_id, got.health.complete) == ("sharp", "sharp-1", True)
    assert got.report["overall"]["correct_n"] == "4/4" and got.report["run_health"]["planned"] == 4
    two = score_run(sqlite_store, "sharp-1", OPTS, open_dataset([str(tmp_path / "d.jsonl")], 2).pairs)
    assert two.report["overall"]["correct_n"] == "2/2" and len(two.pairs) == 2


def test_evaluation_runs_named_first_then_every_other_once(sqlite_store, tmp_path):
    for run_id in ("a-1", "b-1", "c-1"):
        stored_run(sqlite_store, tmp_path, run_id, lambda p: "first")
    assert evaluation_runs(sqlite_store, ["b-1"]) == ["b-1"]
    assert evaluation_runs(sqlite_store, ["b-1"], every=True) == ["b-1", "a-1", "c-1"]
    assert evaluation_runs(sqlite_store, [], every=True) == ["a-1", "b-1", "c-1"]


def test_evaluate_judges_exports_scores_and_resumes(sqlite_store, tmp_path):
    dataset = open_dataset([str(dataset_file(tmp_path))])
    seen = []
    with FakeOpenAI(fair) as srv:
        judge = tmp_path / "judge.toml"
        judge.write_text(f'name = "fair"\nbase_url = "{srv.url}"\nmodel = "m"\nmax_retries = 0\n')
        cfg = load_judge(judge)
        ev = evaluate(
            sqlite_store,
            dataset,
            cfg,
            OPTS,
            run_id="fair-1",
            export=tmp_path / "out.jsonl",
            progress=lambda done, total: seen.append((done, total)),
        )
        assert ev.complete and ev.summary.sent == 4 and ev.run_info()["sent"] == 4 and seen[-1] == (4, 4)
        assert ev.scored.report["run"] == "fair-1" and ev.scored.report["overall"]["correct_n"] == "4/4"
        assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 4
        again = evaluate(sqlite_store, dataset, cfg, OPTS, run_id="fair-1")
        assert again.summary.sent == 0 and again.summary.already_stored == 4 and srv.count() == 4
        assert again.scored.figures == ev.scored.figures


def test_evaluate_an_unreachable_judge_stops_and_leaves_an_incomplete_run(sqlite_store, tmp_path):
    dataset = open_dataset([str(dataset_file(tmp_path, 1))])
    judge = tmp_path / "judge.toml"
    judge.write_text('name = "far"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nmax_retries = 3\n')
    with pytest.raises(MmrbError, match="judge far: cannot connect to http://127.0.0.1:9/v1 .*it resumes"):
        evaluate(sqlite_store, dataset, load_judge(judge), OPTS, run_id="far-1")
    (run,) = sqlite_store.judge_runs("evaluate")
    assert (run.id, run.status) == ("far-1", "incomplete")
    assert all(j.outcome == "error" for j in sqlite_store.judgments("far-1"))


def test_the_response_limit_reaches_the_endpoint_of_either_kind(tmp_path):
    judge = tmp_path / "judge.toml"
    judge.write_text('name = "j"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nmax_response_chars = 50\n')
    assert load_judge(judge).endpoint.max_response_chars == 50
    assert load_judge(judge, max_response_chars=None).endpoint.max_response_chars == 50
    assert load_judge(judge, max_response_chars=7).endpoint.max_response_chars == 7
    rm = tmp_path / "rm.toml"
    rm.write_text('kind = "reward_model"\nname = "rm"\nurl = "http://x"\n')
    assert load_judge(rm, max_response_chars=9).endpoint.max_response_chars == 9


def test_read_report_and_the_incomplete_ones(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"overall": {}, "run_health": {"complete": False}, "run": "r7"}))
    named = tmp_path / "named.json"
    named.write_text(json.dumps({"overall": {}, "judge": "x", "run_health": {"complete": True}}))
    reports = [read_report(good), read_report(named)]
    assert [r["judge"] for r in reports] == ["good", "x"]
    assert incomplete_runs(reports) == ["r7"]
    assert incomplete_runs([{**reports[0], "run": None}]) == ["good"]
    bad = tmp_path / "bad.json"
    for text, message in (("{", "malformed JSON"), ("[1]", "not a report of mmrb score --output")):
        bad.write_text(text)
        with pytest.raises(InputError, match=message):
            read_report(bad)
    with pytest.raises(InputError, match="file not found"):
        read_report(tmp_path / "gone.json")
