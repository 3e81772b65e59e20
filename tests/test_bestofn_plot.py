"""mmrb bestofn --plot: the figure's data comes from the report (every bar and point the
report's estimate, an undefined one undefined), the PNG opens, and the command writes it whole,
refusing a path it cannot write before asking any judgment."""

from __future__ import annotations

import errno
import io
from pathlib import Path

from PIL import Image

from mmrb_eval import bestofn as bon
from mmrb_eval.bestofn_plot import SERIES, plot_data, plot_png
from tests.support.command_runner import run_command
from tests.support.fake_openai import FakeOpenAI
from tests.test_bestofn_run import fill, judge_file, p_judge


def items() -> list[bon.BonItem]:
    r = bon.Response
    return [
        bon.BonItem("q1", "math", (r("a", True, "4"), r("b", False, "5"), r("c", True, "4"), r("d", False, "5"))),
        bon.BonItem("q2", "math", (r("a", False, "1"), r("b", True, "2"), r("c", False, "1"), r("d", False, "3"))),
        bon.BonItem("q3", "open", (r("a", True), r("b", False), r("c", False))),  # no answers: majority undefined
    ]


def test_every_bar_and_point_is_the_reports_own_figure():
    its = items()
    picks = [bon.Pick("q1", "knockout", "b", False, 6), bon.Pick("q2", "knockout", "b", True, 6)]
    picks.append(bon.Pick("q3", "knockout", None, None, 2, failed="the match a vs b failed"))
    report = bon.best_of_n(its, picks, resamples=0)
    curve = bon.scaling(its[:2], lambda it: bon.Pick(it.id, "knockout", it.ids[0], it.responses[0].correct, 2))
    data = plot_data(report, curve, title="t")
    assert data.title == "t" and [g.group for g in data.groups] == ["overall", "math", "open"]
    for g, rep in zip(data.groups, (report.overall, *report.categories), strict=True):
        assert (g.items, g.incomplete) == (rep.complete, rep.incomplete)
        assert [name for name, _ in g.bars] == list(SERIES)
        assert dict(g.bars) == {"Best-of-N": rep.accuracy, **rep.baselines}
    overall = dict(data.groups[0].bars)
    assert overall["Best-of-N"].value == 0.5 and overall["oracle"].value == 1.0  # q3 incomplete: not counted
    assert dict(data.groups[2].bars)["Best-of-N"].undefined == "no complete item"
    assert [s for s, _ in data.curve] == list(SERIES)
    assert data.curve_items == tuple((n, r.overall.complete) for n, r in curve)
    for s, points in data.curve:
        assert [n for n, _ in points] == [n for n, _ in curve]
        assert [e for _, e in points] == [dict(plot_data(r).groups[0].bars)[s] for _, r in curve]


def test_the_png_opens_and_a_curve_adds_a_panel():
    its = items()
    picks = [bon.Pick(it.id, "knockout", it.ids[1], it.responses[1].correct, 6) for it in its]
    report = bon.best_of_n(its, picks, resamples=0)  # majority undefined overall (q3 has no answers)
    curve = bon.scaling(its, lambda it: bon.Pick(it.id, "knockout", it.ids[0], it.responses[0].correct, 2))
    one = Image.open(io.BytesIO(plot_png(plot_data(report))))
    two = Image.open(io.BytesIO(plot_png(plot_data(report, curve))))
    assert one.format == two.format == "PNG" and two.width > one.width and one.height == two.height


def test_the_command_writes_the_plot_whole(store, db_url, tmp_path, capsys):
    truth = fill(store, 12)
    png = tmp_path / "bon.png"
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        argv = ["--judge", judge_file(tmp_path, srv.url), "--db", db_url, "--images", str(tmp_path / "images")]
        for bad, why in ((tmp_path / "no" / "x.png", "no folder"), (tmp_path, "is a folder")):
            assert run_command("bestofn", [*argv, "--plot", str(bad)], package="mmrb_eval.commands") == 1
            assert why in capsys.readouterr().err and srv.count() == 0  # refused before anything is asked
        rc = run_command("bestofn", [*argv, "--curve", "--plot", str(png)], package="mmrb_eval.commands")
    assert rc == 0 and f"plot: {png}" in capsys.readouterr().err
    assert Image.open(png).format == "PNG" and [p.name for p in tmp_path.glob("bon.png*")] == ["bon.png"]


def test_a_plot_the_disk_cannot_take_leaves_the_previous_one_whole(store, db_url, tmp_path, capsys, monkeypatch):
    truth = fill(store, 3)
    png = tmp_path / "bon.png"
    png.write_bytes(b"the previous plot")
    real = Path.write_bytes

    def half_then_full(self: Path, data: bytes) -> int:
        real(self, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", half_then_full)
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        argv = ["--judge", judge_file(tmp_path, srv.url), "--db", db_url, "--images", str(tmp_path / "images")]
        rc = run_command("bestofn", [*argv, "--resamples", "0", "--plot", str(png)], package="mmrb_eval.commands")
    err = capsys.readouterr().err
    assert rc == 1 and f"cannot write --plot {png}: No space left on device" in err
    assert png.read_bytes() == b"the previous plot" and [p.name for p in tmp_path.glob("bon.png*")] == ["bon.png"]
