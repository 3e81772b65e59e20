"""Datasets, precomputed-judgment formats, reward models and the evaluate/score commands."""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from curate.errors import InputError, MmrbError
from curate.judging.records import Judgment, RunDataset
from curate.judging.reward_model import RewardModel, fill, pick
from curate.judging.runner import run_judge
from mmrb_eval.datasets import dataset_label, read_dataset
from mmrb_eval.formats import read_judgments, write_judgments
from mmrb_eval.scoring import ScoringOptions, score
from tests.support.command_runner import command
from tests.support.data import shared
from tests.support.fake_openai import FakeOpenAI, Fault, faults_then
from tests.support.fake_reward_model import RM


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# -- datasets ----------------------------------------------------------------------------
def test_mmrb_layout(tmp_path):
    f = tmp_path / "all_data.json"
    f.write_text(
        json.dumps(
            [
                {
                    "ID": "math_1",
                    "Text": "2+2?",
                    "Image": "images/a.jpg",
                    "Output1": "4",
                    "Output2": "5",
                    "Better": "Output1",
                    "Category": "reasoning",
                },
                {
                    "ID": "pairs_2",
                    "Text": "q",
                    "Image": "images/b.jpg",
                    "Output1": "x",
                    "Output2": "y",
                    "Better": "Output2",
                    "Category": "safety",
                },
            ]
        )
    )
    a, b = read_dataset(f)
    assert (a.id, a.first, a.second, a.preferred, a.category) == ("math_1", "4", "5", "first", "reasoning")
    assert a.images == (str(tmp_path / "images/a.jpg"),) and a.chosen == "4" and a.rejected == "5"
    assert (b.preferred, b.chosen) == ("second", "y")


def test_triplet_layout_order_groups_and_categories(tmp_path):
    rows = [
        {
            "id": f"t{i}",
            "prompt": "p",
            "chosen": f"good{i}",
            "rejected": f"bad{i}",
            "category": "vqa",
            "images": [f"img/{i}.png"],
            "source": "mine",
            "chosen_model": "m1",
        }
        for i in range(40)
    ]
    rows += [
        {"id": "dup", "prompt": "p", "chosen": "c1", "rejected": "r1", "image": "long/x.png"},
        {"id": "dup", "prompt": "p", "chosen": "c2", "rejected": "r2", "image": "long/x.png"},
        {"id": "hallucination_pair-1", "prompt": "p", "chosen": "c", "rejected": "r", "image": "x.jpg"},
    ]
    pairs = read_dataset(write_jsonl(tmp_path / "d.jsonl", rows))
    t = pairs[:40]
    # the canonical order is a hash of the id: not always chosen first
    assert 8 < sum(p.preferred == "first" for p in t) < 32
    assert all(p.chosen == f"good{i}" and p.rejected == f"bad{i}" for i, p in enumerate(t))
    assert t[0].images == (str(tmp_path / "img/0.png"),) and t[0].metadata == {"chosen_model": "m1"}
    d0, d1, h = pairs[40:]
    assert (d0.id, d1.id, d0.prompt_group, d1.prompt_group) == ("dup#0", "dup#1", "dup", "dup")
    assert d0.category == "long"  # MM-RLHF: from the image path
    assert h.category == "hallucination"  # VL-RewardBench copies: from the id
    assert read_dataset(tmp_path / "d.jsonl") == pairs  # stable


def test_vlrb_and_mmrb2_layouts(tmp_path):
    v = write_jsonl(
        tmp_path / "vl.jsonl",
        [
            {
                "id": "a",
                "query": "q",
                "response": ["r0", "r1"],
                "human_ranking": [1, 0],
                "image_path": "images/povid/1.jpg",
            },
            {"id": "hallucination_b", "query": "q", "response": ["r0", "r1"], "human_ranking": [0, 1]},
        ],
    )
    p, h = read_dataset(v)
    # cal.py groups by the id, never by the folder of image_path ("a" is VLFeedback's: general)
    assert (p.preferred, p.category, p.chosen, h.category) == ("second", "general", "r1", "hallucination")
    m = tmp_path / "edit_response_only.json"
    m.write_text(
        json.dumps(
            {
                "pairs": [
                    {
                        "id": "e1",
                        "chosen": "B",
                        "response_a": (
                            "{'model_name': 'x', 'response_content': [['text', 'hello'], ['image', 'i.jpg']]}"
                        ),
                        "response_b": "plain",
                    }
                ]
            }
        )
    )
    (e,) = read_dataset(m)
    # one rendering of a response, the importer's (curate/formats/mmrb2.render_text)
    assert (e.category, e.preferred, e.first, e.second) == ("edit", "second", "hello\n\n[image: i.jpg]", "plain")
    m.rename(tmp_path / "ground_truth.json")  # a name that names no task
    with pytest.raises(InputError, match="cannot tell the MMRB2 task from the file name 'ground_truth.json'"):
        read_dataset(tmp_path / "ground_truth.json")


def test_bad_datasets_name_file_line_and_field(tmp_path):
    f = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"id": "a", "prompt": "p", "chosen": "c", "rejected": "r"},
            {"id": "b", "prompt": "p", "chosen": "c"},
        ],
    )
    with pytest.raises(InputError) as e:
        read_dataset(f)
    assert "bad.jsonl:2 field 'rejected': missing" in str(e.value)
    (tmp_path / "broken.jsonl").write_text('{"id": "a", "chosen": "c", "rejected": "r"}\n{oops\n')
    with pytest.raises(InputError, match="broken.jsonl:2: malformed JSON"):
        read_dataset(tmp_path / "broken.jsonl")
    with pytest.raises(InputError, match="unknown dataset layout"):
        read_dataset(write_jsonl(tmp_path / "odd.jsonl", [{"question": "?"}]))
    with pytest.raises(InputError, match="Better.*Output1 or Output2"):
        read_dataset(write_jsonl(tmp_path / "m.jsonl", [{"ID": "1", "Output1": "a", "Output2": "b", "Better": "A"}]))
    with pytest.raises(InputError, match="file not found"):
        read_dataset(tmp_path / "none.jsonl")
    assert RunDataset.files([str(f)], 5) == RunDataset((str(f.resolve()),), 5)
    assert dataset_label([str(f)], 5) == f"{f.resolve()}[:5]"


def test_real_shared_datasets():
    vl = read_dataset(shared("vlrewardbench/pairs.jsonl"))
    assert len(vl) == 1250
    from collections import Counter

    # the paper's group sizes, recovered from the id prefixes of the r1_reward copy
    assert Counter(p.category for p in vl) == {"hallucination": 749, "reasoning": 318, "general": 183}
    mm = read_dataset(shared("mm_rlhf_rewardbench/pairs.jsonl"))
    assert len(mm) == 170 and len({p.prompt_group for p in mm}) == 46 and len({p.id for p in mm}) == 170
    assert {p.category for p in mm} <= {"mcq", "long", "short", "safety", "video"}
    m2 = read_dataset([shared(f"mmrb2/{t}_response_only.json") for t in ("t2i", "edit", "interleaved", "reasoning")])
    assert len(m2) == 4000 and {p.category for p in m2} == {"t2i", "edit", "interleaved", "reasoning"}


def test_acc_plus_on_real_mm_rlhf_groups():
    # a judge that always prefers the chosen response except in the first pair of each prompt
    pairs = read_dataset(shared("mm_rlhf_rewardbench/pairs.jsonl"))
    seen = set()
    js = []
    for p in pairs:
        right = p.prompt_group in seen
        seen.add(p.prompt_group)
        wrong = "second" if p.preferred == "first" else "first"
        js.append(Judgment(p.id, "forward", 0, p.preferred if right else wrong))
    r = score(pairs, js, ScoringOptions(bootstrap=0))
    assert r.overall["correct_n"] == "124/170"  # 170 pairs - 46 first pairs
    assert r.acc_plus["correct_n"] == "0/46"


# -- formats -----------------------------------------------------------------------------
def test_mmrb2_judgements_against_ground_truth(tmp_path):
    gt = tmp_path / "t2i_response_only.json"
    gt.write_text(
        json.dumps(
            {
                "pairs": [
                    {"id": "a", "response_a": "x", "response_b": "y", "chosen": "A"},
                    {"id": "b", "response_a": "x", "response_b": "y", "chosen": "B"},
                    {"id": "c", "response_a": "x", "response_b": "y", "chosen": "A"},
                ]
            }
        )
    )
    preds = tmp_path / "preds.json"
    preds.write_text(
        json.dumps(
            {
                "a": {"forward": [{"judgement": "A"}], "reverse": [{"judgement": "B"}]},  # both right (reverse flipped)
                "b": {"forward": [{"judgement": "A"}], "reverse": [{"judgement": None}]},  # wrong; no verdict
                "zzz": {"forward": [{"judgement": "A"}]},
            }
        )
    )
    js, pairs = read_judgments(preds, "mmrb2", read_dataset(gt))
    from mmrb_eval.scoring import preset_options

    r = score(pairs, js, preset_options("mmrb2", bootstrap=0))
    # (1 + 1 + 0) / 3; c has no judgement: missing; zzz is not in the ground truth
    assert r.overall["correct_n"] == "2/3" and r.missing_pairs == 1 and r.unknown_judgments == 1
    with pytest.raises(InputError, match="need --dataset"):
        read_judgments(preds, "mmrb2")


def test_own_format_roundtrip_and_errors(tmp_path):
    js = [
        Judgment("a", "reverse", 2, "first", "parsed", "[[B]]", "prompt", 1.0, 2.0, 10, 5),
        Judgment("b", "forward", 0, None, "error", None, "p", error="HTTP 500"),
    ]
    f = tmp_path / "j.jsonl"
    assert write_judgments(f, js) == 2
    back, _ = read_judgments(f, "mmrb-studio", [])
    assert back == js
    write_jsonl(f, [{"pair_id": "a", "verdict": "left"}])
    with pytest.raises(InputError, match="j.jsonl:1 field 'verdict'"):
        read_judgments(f, "mmrb-studio", [])
    with pytest.raises(InputError, match="unknown judgment format"):
        read_judgments(f, "nope", [])


def test_mmrb_outputs_with_a_dataset_and_several_samples(tmp_path):
    ds = tmp_path / "all_data.json"
    ds.write_text(
        json.dumps([{"ID": "v_1", "Text": "q", "Output1": "a", "Output2": "b", "Better": "Output2", "Category": "vqa"}])
    )
    out = write_jsonl(
        tmp_path / "o.jsonl", [{"ID": "v_1", "Label": "B", "outputs": ["[[B]]", "[[A]]", "hmm"], "Meta": {}}]
    )
    js, pairs = read_judgments(out, "mmrb", read_dataset(ds))
    assert [(j.sample_index, j.verdict, j.outcome) for j in js] == [
        (0, "second", "parsed"),
        (1, "first", "parsed"),
        (2, None, "unparsed"),
    ]
    assert pairs[0].category == "vqa"


def test_fill_and_pick():
    t = {"input": {"q": "{prompt}", "text": "{response}", "imgs": "{images}", "img": "{image}"}, "n": 1}
    assert fill(t, {"prompt": "Q", "response": "R", "images": ["u1"], "image": "u1"}) == {
        "input": {"q": "Q", "text": "R", "imgs": ["u1"], "img": "u1"},
        "n": 1,
    }
    assert pick({"a": {"b": [1, 2.5]}}, "a.b.1") == 2.5
    assert pick({"score": [0.3]}, "score") == 0.3
    with pytest.raises(ValueError, match="no field"):
        pick({"a": 1}, "b")
    with pytest.raises(ValueError, match="not a number"):
        pick({"a": "x"}, "a")


def test_reward_model_pairs_ties_retries_and_resume(sqlite_store):
    from mmrb_eval.records import EvalPair

    rm = RM(fail_first=1)
    try:
        cfg = RewardModel(
            name="rm",
            url=rm.url,
            request={"input": {"q": "{prompt}", "text": "{response}"}},
            response_field="out.rewards.0",
            backoff_base=0.01,
            concurrency=2,
        )
        pairs = [
            EvalPair("a", "q", "good good", "good", "first"),  # 2 > 1: first
            EvalPair("b", "q", "bad", "good", "second"),  # 0 < 1: second
            EvalPair("c", "q", "good", "good", "first"),
        ]  # 1 = 1: a tie
        s = run_judge(sqlite_store, [p.task() for p in pairs], cfg, run_id="rm1", dataset=RunDataset(("d",)))
        assert s.outcomes == {"parsed": 3} and len(rm.bodies) == 7  # 6 + one 503 retried
        js = {j.pair_id: j for j in sqlite_store.judgments("rm1")}
        assert (js["a"].verdict, js["a"].score_first, js["a"].score_second) == ("first", 2.0, 1.0)
        assert js["b"].verdict == "second" and js["c"].verdict == "tie"
        r = score(pairs, list(js.values()), ScoringOptions(bootstrap=0))
        assert r.overall["correct_n"] == "2/3" and r.tie_rate["count"] == 1  # ties wrong (RewardBench)
        assert (
            run_judge(sqlite_store, [p.task() for p in pairs], cfg, run_id="rm1", dataset=RunDataset(("d",))).sent == 0
        )
        assert len(rm.bodies) == 7
        bad = RewardModel(name="rm", url=rm.url, request={"input": {"text": "{response}"}}, response_field="nope")
        s = run_judge(sqlite_store, [pairs[0].task()], bad, run_id="rm2", dataset=RunDataset(("d",)))
        assert s.outcomes == {"error": 1}
        assert "no field 'nope'" in sqlite_store.judgments("rm2")[0].error
    finally:
        rm.close()


def fair(req) -> str:
    a = req.prompt_text.split("[The Start of Assistant A's Answer]\n", 1)[1]
    return "[[A]]" if a.startswith("good") else "[[B]]"


def test_evaluate_then_rescore_and_resume(tmp_path, capsys, db_url):
    ds = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": f"bad {i}", "category": "AB"[i % 2]}
            for i in range(6)
        ],
    )
    with FakeOpenAI(fair, latency=0.01) as srv:
        judge = tmp_path / "judge.toml"
        judge.write_text(f'name = "fair"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb"\nconcurrency = 3\n')
        argv = [
            "--dataset",
            str(ds),
            "--judge",
            str(judge),
            "--order",
            "both",
            "--db",
            db_url,
            "--images",
            str(tmp_path / "img"),
            "--json",
            "--quiet",
            "--bootstrap",
            "50",
        ]
        rc, out = command("evaluate", argv, capsys)
        report = json.loads(out)
        assert rc == 0 and report["overall"]["correct_n"] == "12/12" and report["judge"] == "fair"
        assert report["run_info"]["sent"] == 12 and report["position"]["consistency"]["correct_n"] == "6/6"
        rc, out = command("evaluate", argv, capsys)
        again = json.loads(out)
        assert again["run_info"]["sent"] == 0 and again["run_info"]["already_stored"] == 12
        assert srv.count() == 12
        assert {k: v for k, v in again.items() if k != "run_info"} == {
            k: v for k, v in report.items() if k != "run_info"
        }

        # rescore the stored run under other rules, without calling the judge
        rc, out = command(
            "score",
            [
                "--run",
                report["run"],
                "--db",
                db_url,
                "--images",
                str(tmp_path / "img"),
                "--orders",
                "forward",
                "--json",
                "--bootstrap",
                "0",
            ],
            capsys,
        )
        assert json.loads(out)["overall"]["correct_n"] == "6/6"
        assert srv.count() == 12
        rc, out = command("score", ["--run", report["run"], "--db", db_url, "--images", str(tmp_path / "img")], capsys)
        assert "overall (micro)" in out and "consistency" in out

        # the same through the mmrb entry point: a leaderboard of every stored run
        from curate.cli import main

        assert (
            main(
                [
                    "leaderboard",
                    "--all-runs",
                    "--db",
                    db_url,
                    "--images",
                    str(tmp_path / "img"),
                    "--format",
                    "csv",
                    "--bootstrap",
                    "0",
                ]
            )
            == 0
        )
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 2 and lines[1].startswith("1,fair,true,1.0,0.0,1.0,")
        assert srv.count() == 12


def test_evaluate_stops_at_the_first_refusals_of_a_judge_that_is_not_there(tmp_path, capsys):
    import socket
    import time

    from curate.cli import main

    ds = write_jsonl(
        tmp_path / "d.jsonl", [{"id": f"t{i}", "prompt": "p", "chosen": "a", "rejected": "b"} for i in range(20)]
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    judge = tmp_path / "judge.toml"
    # a backoff of 20-40 s: one retry would show in the time (evaluate waited 29 s before)
    judge.write_text(f'name = "j"\nbase_url = "{url}"\nmodel = "m"\nconcurrency = 2\nbackoff_base = 40\n')
    t0 = time.perf_counter()
    rc = main(["evaluate", "--dataset", str(ds), "--judge", str(judge), "--db", str(tmp_path / "s.db"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1 and time.perf_counter() - t0 < 20
    assert (
        f"mmrb evaluate: error: judge j: cannot connect to {url}" in err and "stopped after the first 4 requests" in err
    )
    assert "Traceback" not in err


def test_score_command_files(tmp_path, capsys):
    path = shared("multimodal_rewardbench/example_judge_outputs.jsonl")
    rc, out = command(
        "score",
        [
            "--judgments",
            str(path),
            "--format",
            "mmrb",
            "--preset",
            "mmrb",
            "--json",
            "--output",
            str(tmp_path / "r.json"),
        ],
        capsys,
    )
    r = json.loads(out)
    assert rc == 0 and r["overall"]["accuracy"] == 0.5 and r["options"]["preset"] == "mmrb"
    assert json.loads((tmp_path / "r.json").read_text()) == r
    with pytest.raises(MmrbError, match="needs --dataset"):
        command("score", ["--judgments", str(path), "--format", "mmrb2"], capsys)
    with pytest.raises(MmrbError, match="no store at"):  # a mistyped --db is not an empty store
        command("score", ["--run", "nope", "--db", str(tmp_path / "s.db")], capsys)
    from curate.store import Store

    Store(str(tmp_path / "s.db"), tmp_path / "im").close()
    with pytest.raises(MmrbError, match="no judge run"):
        command("score", ["--run", "nope", "--db", str(tmp_path / "s.db"), "--images", str(tmp_path / "im")], capsys)


def test_reads_every_layout_mmrb_build_writes(tmp_path):
    """The contract with curate/benchmark/export.py: its three layouts read back as the same pairs."""
    from curate.benchmark import export
    from curate.model import Triplet

    triplets = [
        Triplet(
            id=f"t{i}",
            prompt=f"q{i}",
            images=(f"images/{i}.png",),
            chosen=f"good{i}",
            rejected=f"bad{i}",
            category=["vqa", "safety"][i % 2],
            source="s",
            chosen_model="m1",
            rejected_model="m2",
            task="preference",
        )
        for i in range(6)
    ]
    rows = export.Export.of(triplets, seed=0)
    first = rows.chosen_first
    export.write_jsonl(tmp_path, triplets)
    export.write_mmrb(tmp_path, rows)
    export.write_vlrb(tmp_path, rows)
    views = {}
    for name in ("triplets.jsonl", "multimodal_rewardbench.jsonl", "vl_rewardbench.jsonl"):
        pairs = read_dataset(tmp_path / name)
        views[name] = {(p.id, p.chosen, p.rejected, p.category, p.images) for p in pairs}
    expected = {(t.id, t.chosen, t.rejected, t.category, (str(tmp_path / t.images[0]),)) for t in triplets}
    assert all(v == expected for v in views.values()), views
    # the benchmark layouts keep the build's balanced placement of the chosen response
    mm = read_dataset(tmp_path / "multimodal_rewardbench.jsonl")
    assert [p.preferred == "first" for p in mm] == [first[p.id] for p in mm]


# -- failed requests: never scored as answers, the run is incomplete, not ranked ---------------
def test_failed_requests_leave_the_run_incomplete_exit_1_and_resume_only_them(tmp_path, capsys):
    from curate.store import Store

    ds = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": f"bad {i}", "category": "AB"[i % 2]}
            for i in range(6)
        ],
    )
    db, img = str(tmp_path / "s.db"), str(tmp_path / "img")
    mode = {"broken": ("good 1", "good 4")}

    def answer(req):
        return Fault("500") if any(b in req.prompt_text for b in mode["broken"]) else fair(req)

    with FakeOpenAI(answer) as srv:
        judge = tmp_path / "judge.toml"
        judge.write_text(
            f'name = "flaky"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb"\nmax_retries = 1\n'
            "backoff_base = 0.001\n"
        )
        argv = [
            "--dataset",
            str(ds),
            "--judge",
            str(judge),
            "--order",
            "both",
            "--db",
            db,
            "--images",
            img,
            "--quiet",
            "--bootstrap",
            "0",
            "--run",
            "flaky-1",
        ]
        rc, out = command("evaluate", argv, capsys)
        assert rc == 1 and "INCOMPLETE: 8 of 12 judgments answered" in out
        rc, out = command("evaluate", argv + ["--json", "--no-retry-errors"], capsys)
        health = json.loads(out)["run_health"]
        assert rc == 1 and health == {
            "complete": False,
            "planned": 12,
            "answered": 8,
            "failed": 4,
            "missing": 0,
            "completeness": 8 / 12,
            "error_rate": 4 / 12,
            "status": "incomplete",
        }
        with Store(db, images=img) as s:
            assert [(r.status, r.planned, r.failed) for r in s.judge_runs()] == [("incomplete", 12, 4)]
        assert srv.count() == 16  # 4 failed judgments x 2 attempts, not resent with --no-retry-errors
        rc, out = command(
            "score", ["--run", "flaky-1", "--db", db, "--images", img, "--json", "--bootstrap", "0"], capsys
        )
        rescored = json.loads(out)  # a rescore carries the run's health, so the leaderboard keeps it apart
        assert rescored["run_health"]["complete"] is False and rescored["run_health"]["failed"] == 4

        mode["broken"] = ()
        srv.reset()
        rc, out = command("evaluate", argv + ["--json"], capsys)
        assert rc == 0 and srv.count() == 4  # only the failed ones are sent again
        report = json.loads(out)
        assert report["run_health"]["complete"] and report["overall"]["correct_n"] == "12/12"


def test_evaluate_failure_messages_name_the_judge_and_the_resume(tmp_path, capsys):
    ds = write_jsonl(tmp_path / "d.jsonl", [{"id": "t0", "prompt": "p", "chosen": "good", "rejected": "bad"}])
    judge = tmp_path / "judge.toml"
    down = FakeOpenAI(lambda req: Fault("500")).start()
    judge.write_text(f'name = "far"\nbase_url = "{down.url}"\nmodel = "m"\nmax_retries = 0\n')
    import importlib

    mod = importlib.import_module("mmrb_eval.commands.evaluate")
    p = argparse.ArgumentParser()
    mod.add_arguments(p)
    rc = mod.run(
        p.parse_args(
            [
                "--dataset",
                str(ds),
                "--judge",
                str(judge),
                "--db",
                str(tmp_path / "s.db"),
                "--quiet",
                "--bootstrap",
                "0",
                "--run",
                "far-1",
            ]
        )
    )
    down.stop()
    out, err = capsys.readouterr()
    assert rc == 1 and "INCOMPLETE: 0 of 1 judgments answered" in out
    assert "judge far: 1 of 1 judgment failed after retries (1 HTTP 500; e.g. HTTP 500: server error)" in err
    assert "run far-1 is stored as incomplete; rerun the same command to send only those" in err


def test_response_size_limit_from_judge_file_and_command_line(tmp_path, capsys):
    ds = write_jsonl(
        tmp_path / "d.jsonl",
        [{"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": "bad"} for i in range(2)],
    )
    with FakeOpenAI(lambda req: "[[A]] " + "because " * 10) as srv:
        judge = tmp_path / "judge.toml"
        judge.write_text(f'name = "wordy"\nbase_url = "{srv.url}"\nmodel = "m"\nmax_response_chars = 20\n')
        argv = [
            "--dataset",
            str(ds),
            "--judge",
            str(judge),
            "--db",
            str(tmp_path / "s.db"),
            "--quiet",
            "--bootstrap",
            "0",
            "--json",
        ]
        rc, out = command("evaluate", argv, capsys)
        assert rc == 1 and json.loads(out)["run_health"]["failed"] == 2 and srv.count() == 2
        rc, out = command("evaluate", argv + ["--max-response-chars", "1000"], capsys)
        assert rc == 0 and json.loads(out)["run_health"]["complete"] and srv.count() == 4


def test_the_incomplete_warning_names_the_causes_of_the_failures(tmp_path, capsys):
    # it said "failed (connection, timeout, HTTP error or malformed response)" whatever the cause
    ds = write_jsonl(
        tmp_path / "d.jsonl",
        [{"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": "bad"} for i in range(3)],
    )

    def answer(req):
        return "" if "good 0" in req.prompt_text else "[[A]] " + "because " * 10

    with FakeOpenAI(answer) as srv:
        judge = tmp_path / "judge.toml"
        judge.write_text(
            f'name = "odd"\nbase_url = "{srv.url}"\nmodel = "m"\nmax_response_chars = 20\nmax_retries = 0\n'
        )
        argv = ["--dataset", str(ds), "--judge", str(judge), "--db", str(tmp_path / "s.db"), "--quiet"]
        rc, out = command("evaluate", [*argv, "--bootstrap", "0"], capsys)
    assert rc == 1
    (line,) = [x for x in out.splitlines() if "judgments failed" in x]
    assert "3 of 3 judgments failed (2 over the size limit, 1 empty response) and are in no figure" in line
    assert "connection" not in line


def test_reward_model_oversized_or_unreachable_is_a_failure(sqlite_store):
    from mmrb_eval.records import EvalPair

    rm = RM()
    try:
        pairs = [EvalPair("a", "q", "good good", "good", "first")]
        cfg = RewardModel(
            name="rm",
            url=rm.url,
            request={"input": {"text": "{response}"}},
            response_field="out.rewards.0",
            max_response_chars=10,
        )
        s = run_judge(sqlite_store, [p.task() for p in pairs], cfg, run_id="rm", dataset=RunDataset(("d",)))
        (j,) = sqlite_store.judgments("rm")
        assert s.outcomes == {"error": 1} and not s.complete
        assert json.loads(j.raw) == {"first": None, "second": None}  # nothing of the oversized body is kept
        assert "response body of 27 bytes is over the limit of 10 (max_response_chars 10)" in j.error
        assert j.failure.kind == "over the size limit" and len(rm.bodies) == 2  # not retried
        ok = RewardModel(
            name="rm", url=rm.url, request={"input": {"text": "{response}"}}, response_field="out.rewards.0"
        )
        s = run_judge(sqlite_store, [p.task() for p in pairs], ok, run_id="rm", dataset=RunDataset(("d",)))
        assert s.complete and s.sent == 1
        dead = RewardModel(name="far", url="http://127.0.0.1:9/score", max_retries=2)
        with pytest.raises(MmrbError, match="judge far: cannot connect to http://127.0.0.1:9/score"):
            run_judge(sqlite_store, [p.task() for p in pairs], dead, run_id="far", dataset=RunDataset(("d",)))
        (j,) = sqlite_store.judgments("far")  # one attempt, stored as a failure: a rerun resends it
        assert j.outcome == "error" and "not retried: it has never answered" in (j.error or "")
    finally:
        rm.close()


class PairwiseRM:
    """A kind of judge the project does not have: a reward model over HTTP that scores both
    responses of a pair in one request, as shown (A, B). Adding it takes this class and one
    entry in ``JUDGE_KINDS``: reading it from a judge file, running, storing, resuming,
    counting failures and planning its stored runs are the project's as for every judge."""

    def __init__(self, name: str, url: str):
        from curate.llm import Endpoint

        self.name = name
        self.endpoint = Endpoint(base_url=url, model="", name=name, max_retries=0)

    def identity(self) -> dict:
        return {"kind": "pairwise_rm", "url": self.endpoint.base_url}

    def plan(self, pair_id: str) -> list:
        return [("forward", 0), ("reverse", 0)]

    def check(self, tasks) -> None:
        pass

    async def judge(self, client, task, order, index, request_id) -> Judgment:
        from curate.sides import shown_first, shown_pair, stored_pair

        a, b = shown_pair(task.first, task.second, shown_first(order))
        r = await client.post({"a": a, "b": b}, limit=1000, request_id=request_id)
        if not r.ok:
            return Judgment(task.pair_id, order, index, None, "error", error=r.failure.message)
        first, second = stored_pair(*r.data["scores"], shown_first(order))
        verdict = "first" if first > second else "second" if second > first else "tie"
        return Judgment(task.pair_id, order, index, verdict, "parsed", r.text, "", first, second)


def test_a_new_judge_kind_is_one_class_and_one_entry(tmp_path, capsys, monkeypatch):
    from curate.judging.config import JUDGE_KINDS, JudgeKind
    from curate.store import Store

    plan_both = PairwiseRM("", "http://x").plan
    monkeypatch.setitem(
        JUDGE_KINDS,
        "pairwise_rm",
        JudgeKind(
            frozenset({"kind", "name", "url"}),
            lambda t: [],
            lambda t, src: PairwiseRM(t.get("name") or t["url"], t["url"]),
            lambda identity: plan_both,
        ),
    )
    sent: list[dict] = []

    class H(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            sent.append(body)
            if len(sent) == 1:  # the first request fails: a failure, stored, resent by a rerun
                self.send_response(500)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            data = json.dumps({"scores": [body["a"].count("good"), body["b"].count("good")]}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ds = write_jsonl(
            tmp_path / "d.jsonl",
            [{"id": f"t{i}", "prompt": "p", "chosen": "good", "rejected": "bad", "category": "A"} for i in range(3)],
        )
        judge = tmp_path / "judge.toml"
        judge.write_text(f'kind = "pairwise_rm"\nname = "duo"\nurl = "http://127.0.0.1:{server.server_address[1]}/"\n')
        db, img = str(tmp_path / "s.db"), str(tmp_path / "img")
        argv = ["--dataset", str(ds), "--judge", str(judge), "--db", db, "--images", img, "--json", "--quiet"]
        rc, out = command("evaluate", [*argv, "--bootstrap", "0"], capsys)
        assert rc == 1 and json.loads(out)["outcomes"]["error"] == 1 and len(sent) == 6
        rc, out = command("evaluate", [*argv, "--bootstrap", "0"], capsys)
        report = json.loads(out)
        assert rc == 0 and len(sent) == 7 and report["run_info"]["sent"] == 1  # only the failure again
        assert report["overall"]["correct_n"] == "6/6" and report["run_health"]["planned"] == 6
        with Store(db, images=img) as st:
            (run,) = st.judge_runs("evaluate")
            assert run.config == {"kind": "pairwise_rm", "url": judge.read_text().split('"')[5]}
            js = st.judgments(run.id)
            assert sorted(j.order for j in js) == ["forward"] * 3 + ["reverse"] * 3
            assert all({j.score_first, j.score_second} == {0, 1} and j.outcome == "parsed" for j in js)
    finally:
        server.shutdown()
        server.server_close()


def test_reward_model_caps_a_servers_retry_after_like_the_llm_client():
    """A reward model answering ``Retry-After: 3600`` waits at most ``RETRY_AFTER_CAP``, not an
    hour: its requests go through ``curate.llm``'s one client and retry policy."""
    import asyncio
    import random

    from curate.llm import RETRY_AFTER_CAP, LLMClient

    delays: list[float] = []

    async def sleep(d: float) -> None:
        delays.append(d)

    async def go(rm: RewardModel):
        async with LLMClient(rm.endpoint, sleep=sleep, rng=random.Random(0)) as client:
            body = {"messages": [{"role": "user", "content": "two words"}]}
            return rm.score(await client.post(body, limit=rm.max_response_chars))

    answer = faults_then([Fault("429", retry_after=3600), Fault("429", retry_after=0.5)], lambda r: "ok")
    with FakeOpenAI(answer) as srv:
        cfg = RewardModel(name="rm", url=srv.url + "/chat/completions", response_field="usage.prompt_tokens")
        got, _, err = asyncio.run(go(cfg))
        assert (got, err) == (2.0, None) and srv.count() == 3
    assert len(delays) == 2
    assert RETRY_AFTER_CAP <= delays[0] <= RETRY_AFTER_CAP + 0.1 * cfg.backoff_base  # capped, not 3600
    assert 0.5 <= delays[1] <= 0.5 + 0.1 * cfg.backoff_base  # a short Retry-After is honoured


def test_leaderboard_lists_incomplete_runs_apart(tmp_path, capsys):
    from curate.cli import main

    ds = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": f"bad {i}", "category": "AB"[i % 2]}
            for i in range(6)
        ],
    )
    db, img = str(tmp_path / "s.db"), str(tmp_path / "img")
    with FakeOpenAI(fair) as srv, FakeOpenAI(lambda req: Fault("500")) as down:
        for name, url in (("fair", srv.url), ("dead", down.url)):
            judge = tmp_path / f"{name}.toml"
            judge.write_text(f'name = "{name}"\nbase_url = "{url}"\nmodel = "m"\nmax_retries = 0\n')
            command(
                "evaluate",
                [
                    "--dataset",
                    str(ds),
                    "--judge",
                    str(judge),
                    "--order",
                    "both",
                    "--db",
                    db,
                    "--images",
                    img,
                    "--quiet",
                    "--bootstrap",
                    "0",
                    "--run",
                    name,
                ],
                capsys,
            )
    base = ["leaderboard", "--all-runs", "--db", db, "--images", img, "--bootstrap", "0"]
    for extra in ([], ["--parse-failure", "half"], ["--parse-failure", "coin"]):
        assert main(base + extra + ["--plot", str(tmp_path / "b.png")]) == 0
        out, err = capsys.readouterr()
        ranked, apart = out.split("Incomplete runs, not ranked")
        assert "| 1 | fair | 100.0 | 0.0 |" in ranked and "dead" not in ranked
        assert "| - | dead (incomplete) | 0.0 | 100.0 |" in apart
        assert "1 incomplete run (dead) listed apart, not ranked" in err
    assert main(base + ["--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("1,fair,true,1.0,0.0,") and lines[2].startswith(",dead,false,0.0,1.0,")
    assert main(base + ["--include-incomplete"]) == 0
    out = capsys.readouterr().out
    assert "Incomplete runs" not in out and "| 2 | dead (incomplete) |" in out
