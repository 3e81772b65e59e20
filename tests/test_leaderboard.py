"""Leaderboard tables (golden files) and the PNG plot."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from curate.errors import MmrbError
from curate.judging.records import Judgment
from mmrb_eval.leaderboard import health_of, plot, plot_rows, render, table_rows
from mmrb_eval.records import EvalPair
from mmrb_eval.scoring import ScoringOptions, score

GOLDEN = Path(__file__).parent / "golden"


def reports() -> list[dict]:
    pairs = [EvalPair(f"p{i}", "q", "a", "b", "first" if i % 2 else "second", "XY"[i % 2]) for i in range(8)]
    # judge "steady" is right on 6 of 8; judge "biased" always says first (right on the 4 "first" pairs);
    # judge "silent" never gives a verdict; judge "hasty" is right on the 6 pairs it judged, 2 are missing
    steady = [
        Judgment(p.id, "forward", 0, p.preferred if i < 6 else ("first" if p.preferred == "second" else "second"))
        for i, p in enumerate(pairs)
    ]
    biased = [Judgment(p.id, "forward", 0, "first") for p in pairs]
    silent = [Judgment(p.id, "forward", 0, None, "unparsed") for p in pairs]
    hasty = [Judgment(p.id, "forward", 0, p.preferred) for p in pairs[:6]]
    opts = ScoringOptions(bootstrap=200, bootstrap_seed=3)
    out = []
    for name, js in (("biased", biased), ("steady", steady), ("silent", silent), ("hasty", hasty)):
        out.append(
            {
                "judge": name,
                **score(
                    pairs, js, opts if name != "silent" else ScoringOptions(bootstrap=0, parse_failure="excluded")
                ).to_json(),
            }
        )
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
    assert [r["judge"] for r in rows] == ["steady", "biased", "silent", "hasty"]  # undefined accuracy last
    assert [r["rank"] for r in rows] == [1, 2, 3, None]  # the incomplete run is not ranked
    md = render(reports(), "md")
    assert "75.0 [" in md and "(6/8)" in md and "n/a" in md
    assert render(reports(), "md", sort="macro").splitlines()[2].split("|")[2].strip() == "steady"
    with pytest.raises(MmrbError, match="unknown leaderboard format"):
        render(reports(), "xls")


def test_incomplete_runs_are_listed_apart_unless_asked():
    md = render(reports(), "md")
    ranked, apart = md.split("Incomplete runs, not ranked")
    assert "hasty" not in ranked and "| - | hasty (incomplete) | 75.0 | 0.0 | 100.0" in apart  # best accuracy, unranked
    assert "| 1 | steady | 100.0 | 0.0 | 75.0" in ranked
    both = render(reports(), "md", include_incomplete=True)
    assert "Incomplete runs" not in both and "| 1 | hasty (incomplete) |" in both and "| 2 | steady |" in both
    csv = render(reports(), "csv").splitlines()
    assert csv[-1].startswith(",hasty,false,0.75,0.0,1.0,") and csv[1].startswith("1,steady,true,1.0,")
    html = render(reports(), "html")
    assert html.index("<h2>Incomplete runs (not ranked)</h2>") < html.index("hasty (incomplete)")
    drawn, apart = plot_rows(reports())
    assert [r["judge"] for r in drawn] == ["steady", "biased"] and [r["judge"] for r in apart] == ["hasty"]
    drawn, apart = plot_rows(reports(), include_incomplete=True)
    assert [r["judge"] for r in drawn] == ["hasty", "steady", "biased"] and apart == []


def test_health_of_a_report():
    report = {"judgments": 10, "missing_pairs": 0, "pairs": 5, "outcomes": {"parsed": 7, "error": 3}}
    assert health_of(report) == {"complete": False, "completeness": 0.7, "error_rate": 0.3}
    report["outcomes"]["error"] = 0
    assert health_of(report) == {"complete": True, "completeness": 1.0, "error_rate": 0.0}
    # a stored run's own counts win over the estimate
    report["run_health"] = {"complete": False, "completeness": 0.5, "error_rate": 0.5, "planned": 20}
    assert health_of(report) == {"complete": False, "completeness": 0.5, "error_rate": 0.5}


def test_plot_png(tmp_path):
    out = plot(reports(), tmp_path / "board.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
    from PIL import Image

    with Image.open(out) as im:
        assert im.size[0] > 400 and im.size[1] > 100
    only_incomplete = [r for r in reports() if r["judge"] == "hasty"]
    assert plot(only_incomplete, tmp_path / "none.png").read_bytes()[:4] == b"\x89PNG"


def test_leaderboard_command(tmp_path, capsys):
    from mmrb_eval.commands import leaderboard

    files = []
    for r in reports():
        f = tmp_path / f"{r['judge']}.json"
        f.write_text(json.dumps(r))
        files.append(str(f))
    p = argparse.ArgumentParser()
    leaderboard.add_arguments(p)
    rc = leaderboard.run(
        p.parse_args(
            files + ["--format", "csv", "--output", str(tmp_path / "b.csv"), "--plot", str(tmp_path / "b.png")]
        )
    )
    assert rc == 0 and (tmp_path / "b.csv").read_text() == render(reports(), "csv")
    assert (tmp_path / "b.png").exists()
    (tmp_path / "bad.json").write_text("{}")
    from curate.errors import InputError, MmrbError

    with pytest.raises(InputError, match="bad.json field 'overall'"):
        leaderboard.run(p.parse_args([str(tmp_path / "bad.json")]))
    with pytest.raises(MmrbError, match="nothing to compare"):
        leaderboard.run(p.parse_args(["--db", str(tmp_path / "s.db")]))


# -- too few pairs for an interval (issue 24) ------------------------------------------------------
def test_intervals_below_the_minimum_are_undefined_with_a_note_and_shown_at_it():
    from mmrb_eval.dashboard import interval_text
    from mmrb_eval.leaderboard import interval_of

    # X: 12 pairs, the judge wrong on every third; Y: 1 pair, right
    pairs = [EvalPair(f"x{i}", "q", "a", "b", "first", "X") for i in range(12)] + [
        EvalPair("y0", "q", "a", "b", "first", "Y")
    ]
    js = [
        Judgment(p.id, "forward", 0, "second" if p.id[0] == "x" and i % 3 == 0 else "first")
        for i, p in enumerate(pairs)
    ]
    report = {"judge": "j", **score(pairs, js, ScoringOptions(bootstrap=200)).to_json()}
    md = render([report], "md")
    row = md.splitlines()[2].split(" | ")
    x, y = row[7], row[8]
    assert x.startswith("66.7 [") and "undefined" not in x and y == "100.0 [undefined] (1/1)"
    assert "[undefined]" in row[5] and "[undefined]" in row[6]  # macro, size-weighted: built from Y
    assert "[" in row[4] and "undefined" not in row[4]  # overall: 13 pairs
    note = "[undefined] interval: fewer than 10 scored pairs (or, for macro and size-weighted, a category with fewer)"
    assert note in md and note in render([report], "html")
    csv = render([report], "csv").splitlines()
    cells = dict(zip(csv[0].split(","), csv[1].split(","), strict=True))
    assert cells["Y_acc"] == "1.0" and cells["Y_ci_low"] == cells["Y_ci_high"] == ""
    assert cells["X_ci_low"] and cells["overall_ci_low"]
    assert interval_text(report["categories"]["Y"]) == "undefined (too few pairs)"
    assert interval_text(report["categories"]["X"]).startswith("[") and interval_text(None) == ""
    # a report written before the floor held [1.0, 1.0] for Y: not shown either
    old = json.loads(json.dumps(report))
    old["categories"]["Y"] = {k: v for k, v in old["categories"]["Y"].items() if k != "ci_undefined"} | {
        "ci": [1.0, 1.0]
    }
    assert interval_of(old["categories"]["Y"]) == (None, "too few pairs")
    assert render([old], "md").splitlines()[2].split(" | ")[8] == "100.0 [undefined] (1/1)"
    # enough pairs everywhere: intervals, and no note
    big = [EvalPair(f"{c}{i}", "q", "a", "b", "first", c) for c in "XY" for i in range(10)]
    full = {"judge": "k", **score(big, [Judgment(p.id, "forward", 0, "first") for p in big]).to_json()}
    md = render([full], "md")
    assert "undefined" not in md and "100.0 [100.0, 100.0] (10/10)" in md
