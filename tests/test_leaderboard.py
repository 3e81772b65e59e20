"""Leaderboard tables (golden files) and the PNG plot."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from curate.judging.records import Judgment
from evaluate.leaderboard import plot, render, table_rows
from evaluate.records import EvalPair
from evaluate.scoring import ScoringOptions, score

GOLDEN = Path(__file__).parent / "golden"


def reports() -> list[dict]:
    pairs = [EvalPair(f"p{i}", "q", "a", "b", "first" if i % 2 else "second", "XY"[i % 2]) for i in range(8)]
    # judge "steady" is right on 6 of 8; judge "biased" always says first (right on the 4 "first" pairs);
    # judge "silent" never gives a verdict
    steady = [Judgment(p.id, "forward", 0, p.label if i < 6 else ("first" if p.label == "second" else "second"))
              for i, p in enumerate(pairs)]
    biased = [Judgment(p.id, "forward", 0, "first") for p in pairs]
    silent = [Judgment(p.id, "forward", 0, None, "unparsed") for p in pairs]
    opts = ScoringOptions(bootstrap=200, bootstrap_seed=3)
    out = []
    for name, js in (("biased", biased), ("steady", steady), ("silent", silent)):
        out.append({"judge": name, **score(pairs, js, opts if name != "silent" else ScoringOptions(bootstrap=0, parse_failure="excluded"))})
    return out


@pytest.mark.parametrize("fmt, ext", [("md", "md"), ("csv", "csv"), ("html", "html")])
def test_tables_match_golden_files(fmt, ext):
    text = render(reports(), fmt)
    path = GOLDEN / f"leaderboard.{ext}"
    if os.environ.get("MMRB_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert text == path.read_text()


def test_order_and_content():
    rows = table_rows(reports())
    assert [r["judge"] for r in rows] == ["steady", "biased", "silent"]  # undefined accuracy last
    md = render(reports(), "md")
    assert "75.0 [" in md and "(6/8)" in md and "n/a" in md
    assert render(reports(), "md", sort="macro").splitlines()[2].split("|")[2].strip() == "steady"
    with pytest.raises(ValueError):
        render(reports(), "xls")


def test_plot_png(tmp_path):
    out = plot(reports(), tmp_path / "board.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
    from PIL import Image

    with Image.open(out) as im:
        assert im.size[0] > 400 and im.size[1] > 100


def test_leaderboard_command(tmp_path, capsys):
    from evaluate.commands import leaderboard

    files = []
    for r in reports():
        f = tmp_path / f"{r['judge']}.json"
        f.write_text(json.dumps(r))
        files.append(str(f))
    p = argparse.ArgumentParser()
    leaderboard.add_arguments(p)
    rc = leaderboard.run(p.parse_args(files + ["--format", "csv", "--output", str(tmp_path / "b.csv"),
                                               "--plot", str(tmp_path / "b.png")]))
    assert rc == 0 and (tmp_path / "b.csv").read_text() == render(reports(), "csv")
    assert (tmp_path / "b.png").exists()
    (tmp_path / "bad.json").write_text("{}")
    from curate.errors import InputError, MmrbError

    with pytest.raises(InputError, match="bad.json field 'overall'"):
        leaderboard.run(p.parse_args([str(tmp_path / "bad.json")]))
    with pytest.raises(MmrbError, match="nothing to compare"):
        leaderboard.run(p.parse_args(["--db", str(tmp_path / "s.db")]))
