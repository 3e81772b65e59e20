"""A judge run stores the orientation it showed each pair, and reading it back never computes it
again: ``mmrb score --run`` of a chosen/rejected dataset takes the run's record (schema version
10, ``run_orientations``); a run stored before has none and is read as before."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import delete, update

from curate import sides
from curate.store import Store
from curate.store import migrations as M
from curate.store import schema as S
from mmrb_eval import datasets
from mmrb_eval.records import EvalPair
from mmrb_eval.runs import as_shown, load_run
from tests.support.command_runner import command
from tests.support.fake_openai import FakeOpenAI

ROWS = [{"id": f"t{i}", "prompt": "p", "chosen": f"good {i}", "rejected": f"bad {i}"} for i in range(8)]
# scoring's orientation of these rows: the chosen response is first in 3 of the 8
CHOSEN_FIRST = [False, True, False, False, False, False, True, True]


def always_a(req) -> str:
    return "[[A]]"


@pytest.fixture
def srv():
    with FakeOpenAI(always_a) as s:
        yield s


def evaluate(tmp_path, db_url: str, run_id: str, srv: FakeOpenAI, capsys) -> dict:
    """An always-A judge's run on ROWS, shown in the fixed order: right exactly where the
    chosen response is first."""
    ds = tmp_path / "d.jsonl"
    ds.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    judge = tmp_path / "judge.toml"
    judge.write_text(f'name = "a"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb"\n')
    argv = ["--dataset", str(ds), "--judge", str(judge), "--order", "fixed", "--run", run_id, "--db", db_url]
    rc, out = command("evaluate", [*argv, "--images", str(tmp_path / "img"), "--json", "--quiet"], capsys)
    assert rc == 0
    return json.loads(out)


def score_run(tmp_path, db_url: str, run_id: str, capsys) -> str:
    argv = ["--run", run_id, "--db", db_url, "--images", str(tmp_path / "img"), "--json", "--bootstrap", "0"]
    rc, out = command("score", argv, capsys)
    assert rc == 0
    return json.loads(out)["overall"]["correct_n"]


def test_assumed_orientation_is_pinned():
    assert [sides.copy_chosen_first(r["id"]) for r in ROWS] == CHOSEN_FIRST


@pytest.mark.both_backends
def test_a_run_records_its_orientation_and_score_run_reads_it_back(tmp_path, db_url, srv, capsys, monkeypatch):
    report = evaluate(tmp_path, db_url, "now", srv, capsys)
    assert report["overall"]["correct_n"] == "3/8"
    with Store(db_url, images=tmp_path / "img") as s:
        assert s.run_orientation("now") == {
            r["id"]: "first" if f else "second" for r, f in zip(ROWS, CHOSEN_FIRST, strict=True)
        }
    evaluate(tmp_path, db_url, "old", srv, capsys)
    with Store(db_url, images=tmp_path / "img") as s, s.write() as c:  # as stored before version 10
        c.execute(delete(S.run_orientations).where(S.run_orientations.c.run_id == "old"))
    assert score_run(tmp_path, db_url, "now", capsys) == score_run(tmp_path, db_url, "old", capsys) == "3/8"

    flip = lambda rid: not sides.copy_chosen_first(rid)  # noqa: E731
    monkeypatch.setattr(datasets, "copy_chosen_first", flip)  # the coin changed since the runs
    # the run's record wins: its verdicts are read in the orientation it showed
    assert score_run(tmp_path, db_url, "now", capsys) == "3/8"
    # a run without a record is read with the orientation computed now
    assert score_run(tmp_path, db_url, "old", capsys) == "5/8"
    # and so is a dataset given beside the run
    with Store(db_url, images=tmp_path / "img") as s:
        _, pairs, judgments, _ = load_run(s, "now", datasets.read_dataset(tmp_path / "d.jsonl"))
    assert [p.preferred for p in pairs] == ["first" if f else "second" for f in CHOSEN_FIRST]
    assert [p.first.startswith("good") for p in pairs] == CHOSEN_FIRST
    assert {j.verdict for j in judgments} == {"first"}


def test_a_resumed_run_keeps_the_orientation_it_recorded_first(tmp_path, db_url):
    from curate.judging.records import JudgeRun, RunDataset

    with Store(db_url, images=tmp_path / "img") as s:
        s.add_judge_run(JudgeRun("r", "evaluate", "j", {}, RunDataset(("d.jsonl",))))
        assert s.record_run_orientation("r", {"a": "first", "b": "second"}) == 2
        assert s.record_run_orientation("r", {"a": "second", "c": "first"}) == 1
        assert s.run_orientation("r") == {"a": "first", "b": "second", "c": "first"}
        assert s.run_orientation("other") == {}


@pytest.mark.both_backends
def test_a_store_of_version_9_is_migrated_and_its_runs_read_as_before(tmp_path, db_url, srv, capsys):
    evaluate(tmp_path, db_url, "old", srv, capsys)
    with Store(db_url, images=tmp_path / "img") as s, s.write() as c:
        S.run_orientations.drop(c)
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="9"))
    s = Store(db_url, images=tmp_path / "img", create=False)  # migrations alone must add the table
    with s:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION) and M.SCHEMA_VERSION >= 10
        assert s.run_orientation("old") == {}
    assert score_run(tmp_path, db_url, "old", capsys) == "3/8"
    assert evaluate(tmp_path, db_url, "old", srv, capsys)["run_info"]["sent"] == 0  # resumed: records it
    with Store(db_url, images=tmp_path / "img") as s:
        assert len(s.run_orientation("old")) == 8


def test_only_a_seeded_orientation_is_taken_from_the_run():
    seeded = EvalPair("s", "p", "good", "bad", "first", seeded_order=True)
    listed = EvalPair("l", "p", "good", "bad", "first")
    unrecorded = EvalPair("u", "p", "good", "bad", "first", seeded_order=True)
    out = as_shown([seeded, listed, unrecorded], {"s": "second", "l": "second", "x": "first"})
    assert (out[0].first, out[0].second, out[0].preferred, out[0].chosen) == ("bad", "good", "second", "good")
    assert out[1:] == [listed, unrecorded]  # a file's own order, and a pair the run did not record
    assert seeded.with_chosen("first") is seeded and seeded.with_chosen("second").with_chosen("first") == seeded
