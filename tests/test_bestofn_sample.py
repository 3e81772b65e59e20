"""The bundled sample runs ``mmrb bestofn``: ingested as the README's walkthrough does, judged
by the loopback judge with scripted accuracy (tests/support/bestofn_judge.py) through the
sample's own judge file, every figure of the report over the items the sample's references
decide, the rest left out by reason.

The README's plot, docs/bestofn-sample.png, comes from here (a judge right 80% of the time,
``--curve``): ``MMRB_SCREENSHOTS=/tmp/shots .venv/bin/python -m pytest tests/test_bestofn_sample.py``
writes it as /tmp/shots/bestofn-sample.png; copy it to docs/.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from PIL import Image

from curate.cli import main
from curate.store import Store
from mmrb_eval.bestofn_run import pool
from tests.support.bestofn_judge import scripted_judge
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
NO_LABELS = "no reference answer and a candidate without expert labels"
UNSURE = "a candidate whose correctness is unsure"


@pytest.fixture
def sample(tmp_path, capsys) -> tuple[list[str], dict[str, bool], int]:
    """The sample ingested as the walkthrough does; returns the store options, each response
    text's correctness (where a reference decides it) and how many items are left unsure."""
    where = ["--db", str(tmp_path / "sample.db"), "--images", str(tmp_path / "images")]
    assert main(["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *where]) == 0
    capsys.readouterr()
    with Store(where[1], tmp_path / "images") as store:
        got = pool(store, correctness="reference")
        cands = {c.id: c.text for c in store.candidates()}
    correct = {cands[r.id]: r.correct for it in got.items for r in it.responses}
    return where, correct, got.left_out.get(UNSURE, 0)


def judge_file(tmp_path: Path, url: str, name: str) -> str:
    """data/sample/judge.toml pointed at the loopback server: the one edit a user makes too."""
    text = (SAMPLE / "judge.toml").read_text(encoding="utf-8")
    text = re.sub(r'base_url = "[^"]+"', f'base_url = "{url}"', text)
    f = tmp_path / f"{name}.toml"
    f.write_text(re.sub(r'name = "[^"]+"', f'name = "{name}"', text, count=1), encoding="utf-8")
    return str(f)


def test_the_sample_runs_bestofn_on_the_items_its_references_decide(sample, tmp_path, capsys):
    where, correct, unsure = sample
    rows = [json.loads(line) for line in (SAMPLE / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    with_ref = [r for r in rows if (r.get("reference") or "").strip() and len(r["responses"]) >= 2]
    shots = os.environ.get("MMRB_SCREENSHOTS")
    png = Path(shots) / "bestofn-sample.png" if shots else tmp_path / "bestofn-sample.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    with FakeOpenAI(scripted_judge(correct, 0.8)) as srv:
        argv = ["bestofn", "--judge", judge_file(tmp_path, srv.url, "loopback-p0.8"), *where]
        argv += ["--allow-missing-images", "--curve", "--plot", str(png)]
        assert main(argv) == 0
        text = capsys.readouterr()
        assert main([*argv[:-2], "--json"]) == 0  # the same run again: nothing more asked
        rep = json.loads(capsys.readouterr().out)
        sent = srv.count()
    with FakeOpenAI(scripted_judge(correct, 1.0)) as srv:
        perfect = ["bestofn", "--judge", judge_file(tmp_path, srv.url, "loopback-p1"), *where, "--json"]
        assert main([*perfect, "--allow-missing-images", "--resamples", "0"]) == 0
        best = json.loads(capsys.readouterr().out)
    cats = sorted({r["category"] for r in with_ref})
    assert rep["complete"] and rep["overall"]["items"] == len(with_ref) - unsure > 0
    assert rep["left_out"] == {NO_LABELS: len(rows) - len(with_ref), UNSURE: unsure}
    assert rep["correctness"] == {"source": "auto", "items": {"reference": len(with_ref) - unsure}}
    assert [g["group"] for g in rep["categories"]] == cats and rep["run_info"]["sent"] == 0
    assert sent == rep["run_info"]["already_stored"] and text.err.startswith("knockout: ")
    assert "Best-of-N accuracy" in text.out and "accuracy against N (overall):" in text.out
    o = rep["overall"]
    assert o["baselines"]["random"]["value"] < o["accuracy"]["value"] <= o["baselines"]["oracle"]["value"]
    # a perfect judge finds a correct response wherever there is one
    assert best["overall"]["accuracy"]["value"] == best["overall"]["baselines"]["oracle"]["value"]
    assert Image.open(png).format == "PNG"
    # the README's excerpt of this run's output is what it printed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    excerpt = re.search(r"```text\n(loopback-p0\.8, knockout.*?)```", readme, re.S)
    assert excerpt, "the README shows this run's output"
    assert excerpt.group(1) in text.out
    cost = re.search(r"\(`(knockout: [^`]+)` on the\s+sample as step 1 ingests it\)", readme)
    assert cost and re.sub(r"\s+", " ", cost.group(1)) in text.err


def test_expert_labels_are_asked_for_where_the_fresh_sample_has_none(sample, capsys):
    where, _, _ = sample
    argv = ["bestofn", "--judge", str(SAMPLE / "judge.toml"), *where, "--correctness", "labels"]
    assert main(argv) == 1  # refused before the judge is called: no item has labels yet
    err = capsys.readouterr().err
    assert "no item has 2 or more candidates with known correctness" in err
    assert "a candidate without expert labels" in err and "Traceback" not in err


def test_the_readme_shows_the_samples_plot_and_how_it_is_made():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/bestofn-sample.png)" in readme and (ROOT / "docs" / "bestofn-sample.png").stat().st_size > 10_000
    assert "tests/test_bestofn_sample.py" in readme and "bestofn-sample.png docs/" in readme
