"""The Leaderboard page (annotate/views/leaderboard.py) and the functions behind it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curate.judging.records import Judgment, RunDataset
from curate.judging.runner import ensure_run
from mmrb_eval.dashboard import category_rows, mistakes, scored_runs
from mmrb_eval.scoring import ScoringOptions
from tests.support.apptest import app_test


def seed(store, tmp_path) -> Path:
    """Two judges on a four-pair dataset; 'sharp' is right on all, 'lazy' always says first."""
    ds = tmp_path / "d.jsonl"
    ds.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"t{i}",
                    "prompt": f"question {i}",
                    "chosen": f"good {i}",
                    "rejected": f"bad {i}",
                    "category": "vqa" if i < 2 else "safety",
                }
            )
            + "\n"
            for i in range(4)
        )
    )
    from mmrb_eval.datasets import read_dataset

    pairs = read_dataset(ds)
    label = RunDataset.files([str(ds)])
    for run, verdict in (("sharp-1", None), ("lazy-1", "first")):
        ensure_run(store, run, purpose="evaluate", judge=run.split("-")[0], identity={"kind": "test"}, dataset=label)
        js = []
        for p in pairs:
            v = verdict or p.preferred
            js.append(Judgment(p.id, "forward", 0, v, "parsed", f"I pick [[{'A' if v == 'first' else 'B'}]]", "prompt"))
        store.add_judgments(run, js)
    ensure_run(
        store, "orphan", purpose="evaluate", judge="x", identity={}, dataset=RunDataset.files(tmp_path / "gone.jsonl")
    )
    return ds


def page_script(store, tmp_path) -> Path:
    """A script that draws the page over ``store`` (for AppTest)."""
    script = tmp_path / "page.py"
    script.write_text(
        "from curate.store import Store\n"
        "from annotate.views.leaderboard import render\n"
        f"render(Store({store.db!r}, {str(tmp_path / 'images')!r}))\n"
    )
    return script


def test_dashboard_functions(store, tmp_path):
    seed(store, tmp_path)
    runs, problems = scored_runs(store, ScoringOptions(bootstrap=0))
    assert len(problems) == 1 and "orphan" in problems[0] and "file not found" in problems[0]
    by = {r.judge: r for r in runs}
    assert by["sharp"].report["overall"]["correct_n"] == "4/4"
    lazy = by["lazy"]
    wrong = [p.id for p in lazy.pairs if p.preferred == "second"]
    assert lazy.report["overall"]["correct_n"] == f"{4 - len(wrong)}/4"
    found = mistakes(lazy)
    assert [m.pair for m in found] == wrong and all(m.mistake == "picked the rejected response" for m in found)
    assert all(m.chosen_shown_as == "B" and m.judge_output == "I pick [[A]]" for m in found)
    assert mistakes(by["sharp"]) == []
    rows = category_rows(runs, "vqa")
    assert {r["judge"] for r in rows} == {"sharp", "lazy"} and rows[0]["vqa correct/n"].endswith("/2")


@pytest.mark.slow
def test_page_renders(sqlite_store, tmp_path):
    seed(sqlite_store, tmp_path)
    script = page_script(sqlite_store, tmp_path)
    at = app_test(str(script), timeout=60).run()
    assert not at.exception
    assert any("orphan" in w.value for w in at.warning)
    assert len(at.dataframe) == 2  # the board and the category table
    board = at.dataframe[0].value
    assert list(board["judge"]) == ["sharp", "lazy"] and list(board["correct/n"])[0] == "4/4"
    (chart,) = at.get("vega_lite_chart")  # Altair, as the other pages: bars, intervals, chance
    spec = json.loads(chart.proto.spec)
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["bar", "rule", "rule"]
    assert any("Dashed: chance (50%)" in c.value for c in at.caption)
    at.selectbox(key="lb_judge").select(
        next(o for o in at.selectbox(key="lb_judge").options if o.startswith("lazy"))
    ).run()
    assert not at.exception and len(at.expander) >= 2  # the rules + one per mistake
    assert all(" · " in e.label and not e.label.startswith("p") for e in at.expander[1:])  # named by prompt
    at.selectbox(key="lb_judge").select(
        next(o for o in at.selectbox(key="lb_judge").options if o.startswith("sharp"))
    ).run()
    assert any("No mistakes" in s.value for s in at.success)
    at.selectbox(key="lb_preset").select("mmrb").run()
    assert not at.exception


def test_page_without_runs(sqlite_store, tmp_path):
    script = page_script(sqlite_store, tmp_path)
    at = app_test(str(script), timeout=60).run()
    assert not at.exception and "No evaluation runs yet" in at.info[0].value


def seed_broken(store, ds: Path) -> None:
    """A third run whose requests failed on three of the four pairs."""
    from mmrb_eval.datasets import read_dataset

    pairs = read_dataset(ds)
    ensure_run(
        store,
        "broken-1",
        purpose="evaluate",
        judge="broken",
        identity={"kind": "vlm", "order": "fixed"},
        dataset=RunDataset.files([str(ds)]),
    )
    store.add_judgments(
        "broken-1",
        [
            Judgment(p.id, "forward", 0, p.preferred, "parsed", "[[A]]", "prompt")
            if i == 0
            else Judgment(p.id, "forward", 0, None, "error", None, "prompt", error="HTTP 500: server error")
            for i, p in enumerate(pairs)
        ],
    )


def test_incomplete_runs_apart_on_the_board(store, tmp_path):
    from mmrb_eval.dashboard import board_rows

    ds = seed(store, tmp_path)
    seed_broken(store, ds)
    runs, _ = scored_runs(store, ScoringOptions(bootstrap=0))
    by = {r.judge: r for r in runs}
    assert by["broken"].health.as_dict() | {"status": None} == {
        "complete": False,
        "planned": 4,
        "answered": 1,
        "failed": 3,
        "missing": 0,
        "completeness": 0.25,
        "error_rate": 0.75,
        "status": None,
    }
    assert by["sharp"].health.complete and by["lazy"].health.complete
    ranked, apart = board_rows(runs)
    assert [r["judge"] for r in ranked] == ["sharp", "lazy"] and [r["#"] for r in ranked] == [1, 2]
    assert apart == [{**apart[0], "#": None, "judge": "broken (incomplete)", "complete %": 25.0, "error %": 75.0}]
    ranked, apart = board_rows(runs, include_incomplete=True)  # ranked by accuracy, whatever it is
    assert sorted(r["judge"] for r in ranked) == ["broken (incomplete)", "lazy", "sharp"] and apart == []
    assert sorted(r["#"] for r in ranked) == [1, 2, 3]
    # a failed request is not a mistake of the judge
    assert mistakes(by["broken"]) == []
    assert [r["judge"] for r in category_rows(runs, "vqa")][-1] == "broken (incomplete)"


@pytest.mark.slow
def test_page_lists_incomplete_runs_apart(sqlite_store, tmp_path):
    ds = seed(sqlite_store, tmp_path)
    seed_broken(sqlite_store, ds)
    script = page_script(sqlite_store, tmp_path)
    at = app_test(str(script), timeout=60).run()
    assert not at.exception
    assert len(at.dataframe) == 3  # the board, the incomplete runs apart, the category table
    board, apart = at.dataframe[0].value, at.dataframe[1].value
    assert list(board["judge"]) == ["sharp", "lazy"] and list(board["#"]) == [1, 2]
    assert list(apart["judge"]) == ["broken (incomplete)"] and list(apart["complete %"]) == [25.0]
    assert list(apart["error %"]) == [75.0]
    assert any("Incomplete runs (not ranked)" in m.value for m in at.markdown)
    at.checkbox(key="lb_incomplete").check().run()
    assert not at.exception and len(at.dataframe) == 2
    assert sorted(at.dataframe[0].value["judge"]) == ["broken (incomplete)", "lazy", "sharp"]
    assert list(at.dataframe[0].value["#"]) == [1, 2, 3]


def test_board_frame_puts_each_category_beside_the_overall_with_its_interval():
    from mmrb_eval.dashboard import board_frame

    def figure(acc, ci=None, pairs=50):
        return {"accuracy": acc, "pairs": pairs, **({"ci": ci} if ci else {})}

    report = {
        "judge": "j",
        "overall": figure(0.75, [0.6, 0.9]),
        "macro": figure(0.7),
        "size_weighted": figure(0.75),
        "categories": {"vqa": figure(0.5, [0.2, 0.8]), "safety": figure(1.0, [0.9, 1.0], pairs=3)},
        "judgments": 100,
        "pairs": 50,
    }
    rows = board_frame([report])
    assert [(r["group"], r["accuracy"], r["lo"], r["hi"]) for r in rows] == [
        ("overall", 75.0, 60.0, 90.0),
        ("vqa", 50.0, 20.0, 80.0),
        ("safety", 100.0, None, None),  # too few pairs for an interval: the bar without its line
    ]


# -- Best-of-N and validity ------------------------------------------------------------------------
def seed_bestofn(store, tmp_path) -> None:
    """Best-of-N runs (knockout) for 'sharp' (always right) and 'lazy' (right half the time)
    on twelve items of four candidates, through the loopback server."""
    from mmrb_eval.bestofn_run import pool, run_bestofn
    from tests.support.fake_openai import FakeOpenAI
    from tests.test_bestofn_run import fill, p_judge, vlm

    truth = fill(store, 12)
    for name, p in (("sharp", 1.0), ("lazy", 0.5)):
        with FakeOpenAI(p_judge(truth, p)) as srv:
            run = run_bestofn(store, pool(store), vlm(tmp_path, srv.url, name), method="knockout", resamples=0)
        assert run.complete


def test_bestofn_and_validity_figures_for_the_page(store, tmp_path):
    from mmrb_eval.dashboard import (
        bestofn_frame,
        bestofn_table,
        store_validity,
        stored_bestofn_runs,
        validity_points,
        validity_rows,
    )

    seed(store, tmp_path)
    opts = ScoringOptions(bootstrap=50)
    assert store_validity(store, opts) == (None, "no judge has both an evaluation run and a Best-of-N run")
    seed_bestofn(store, tmp_path)
    runs, problems = stored_bestofn_runs(store, 50)
    assert problems == [] and [r.judge for r in runs] == ["sharp", "lazy"]
    table = bestofn_table(runs)
    assert [r["judge"] for r in table] == ["sharp", "lazy"] and all(r["items"] == 12 for r in table)
    assert table[0]["Best-of-N %"] == table[0]["oracle %"]  # the perfect judge picks as the oracle
    assert table[0]["random %"] == table[1]["random %"] and table[0]["95% CI"].startswith("[")
    groups = [(r["judge"], r["group"]) for r in bestofn_frame(runs)]
    assert groups[:5] == [("sharp (knockout)", g) for g in ("Best-of-N", "random", "first", "majority", "oracle")]
    report, why = store_validity(store, opts)
    assert why is None and report is not None and report.verdict == "undefined: 2 judges, fewer than 3"
    assert [p["judge"] for p in validity_points(report)] == ["lazy", "sharp"]
    assert validity_points(report)[1]["accuracy"] == 100.0
    rows = validity_rows(report)
    assert rows[0]["group"] == "overall" and rows[0]["judges"] == 2
    assert rows[0]["Pearson"].startswith("–") and "fewer than 3" in rows[0]["Pearson"]


def test_validity_on_the_page_reuses_its_scored_and_read_back_runs(store, tmp_path, monkeypatch):
    import mmrb_eval.validity as validity
    from mmrb_eval.dashboard import store_validity, stored_bestofn_runs

    seed(store, tmp_path)
    seed_bestofn(store, tmp_path)
    opts = ScoringOptions(bootstrap=50)
    fresh, _ = store_validity(store, opts)
    scored, _ = scored_runs(store, opts)
    read_back, _ = stored_bestofn_runs(store, 50)

    def redone(*args, **kwargs):
        raise AssertionError("scored or read back again")

    monkeypatch.setattr(validity, "score_run", redone)
    monkeypatch.setattr(validity, "stored_bestofn", redone)
    reused, why = store_validity(store, opts, scored=scored, read_back=read_back)
    assert why is None and reused == fresh


@pytest.mark.slow
def test_page_draws_bestofn_and_validity(sqlite_store, tmp_path):
    seed(sqlite_store, tmp_path)
    seed_bestofn(sqlite_store, tmp_path)
    at = app_test(str(page_script(sqlite_store, tmp_path)), timeout=60).run()
    assert not at.exception
    assert len(at.dataframe) == 4  # the board, the category table, Best-of-N, validity per category
    assert list(at.dataframe[2].value["judge"]) == ["sharp", "lazy"]
    assert list(at.dataframe[3].value["group"])[0] == "overall"
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert len(charts) == 3  # the board, Best-of-N beside its baselines (no chance line), the validity scatter
    assert [layer["mark"]["type"] for layer in charts[1]["layer"]] == ["bar", "rule"]
    assert charts[2]["title"] == "Pearson r undefined"
    shown = [i.value.replace("\\", "") for i in at.info] + [c.value.replace("\\", "") for c in at.caption]
    assert "Verdict: undefined: 2 judges, fewer than 3" in shown
    assert any(c.startswith("Caveat: few judges (2, fewer than 10)") for c in shown)


def test_page_without_runs_says_how_to_make_bestofn_runs(sqlite_store, tmp_path):
    at = app_test(str(page_script(sqlite_store, tmp_path)), timeout=60).run()
    assert not at.exception and any("No Best-of-N runs yet" in i.value for i in at.info)


def seed_samples(store, ds: Path, run: str = "voter-1", samples: int = 3) -> None:
    """A run of ``samples`` samples per pair: sample 1 picks the rejected response, the others the chosen."""
    from mmrb_eval.datasets import read_dataset

    ensure_run(
        store, run, purpose="evaluate", judge="voter", identity={"kind": "test"}, dataset=RunDataset.files([str(ds)])
    )
    js = []
    for p in read_dataset(ds):
        wrong = "second" if p.preferred == "first" else "first"
        verdicts = [wrong if i == 1 else p.preferred for i in range(samples)]
        js += [Judgment(p.id, "forward", i, v, "parsed", "", "p") for i, v in enumerate(verdicts)]
    store.add_judgments(run, js)


def test_scaling_frame_draws_runs_of_several_samples_only(store, tmp_path):
    from mmrb_eval.dashboard import scaling_frame
    from mmrb_eval.scaling import sample_ranks

    ds = seed(store, tmp_path)
    seed_samples(store, ds)
    runs, _ = scored_runs(store, ScoringOptions(bootstrap=0))
    rows = scaling_frame(runs)
    assert {r["judge"] for r in rows} == {"voter"} and [r["k"] for r in rows] == [1, 3]
    right_first = sum(1 for i in range(4) if sample_ranks(f"t{i}", 3, 0)[1] != 0)
    assert [r["accuracy"] for r in rows] == [100 * right_first / 4, 100.0]
    assert all(r["lo"] is None and r["short_pairs"] == 0 and r["pairs"] == 4 for r in rows)  # bootstrap 0
    seed_samples(store, ds, "voter-2")
    runs, _ = scored_runs(store, ScoringOptions(bootstrap=0))
    assert {r["judge"] for r in scaling_frame(runs)} == {"voter (voter-1)", "voter (voter-2)"}


@pytest.mark.slow
def test_page_shows_the_scaling_section_for_a_run_of_several_samples(sqlite_store, tmp_path):
    ds = seed(sqlite_store, tmp_path)
    script = page_script(sqlite_store, tmp_path)
    at = app_test(str(script), timeout=60).run()
    assert not at.exception and not any("Inference-time scaling" in m.value for m in at.markdown)
    seed_samples(sqlite_store, ds)
    at = app_test(str(script), timeout=60).run()
    assert not at.exception
    assert any("Inference-time scaling" in m.value for m in at.markdown)
    assert any("A flat one" in c.value for c in at.caption)
    board, curve = at.get("vega_lite_chart")
    spec = json.loads(curve.proto.spec)
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["line", "rule", "rule"]
    import pyarrow as pa

    tables = [pa.ipc.open_stream(d.data.data).read_all().to_pylist() for d in curve.proto.datasets]  # Arrow
    (rows,) = [t for t in tables if t and "judge" in t[0]]  # the curve's (the other: the chance line)
    assert [(r["judge"], r["k"], r["accuracy"]) for r in rows][-1] == ("voter", 3, 100.0)
    assert [r["k"] for r in rows] == [1, 3]
