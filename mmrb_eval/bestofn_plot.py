"""The figure of ``mmrb bestofn --plot``: Best-of-N accuracy with its interval beside the
baselines (random, first, majority, oracle), overall and per category, and with a curve against
N a second panel of each one's accuracy against N.

``plot_data`` takes what is drawn from the report (every value and interval as the report has
it, an undefined one as undefined: no bar, its reason written in its place) and is what the
tests check; ``plot_png`` only draws it (matplotlib, Agg, imported when drawing as
mmrb_eval/leaderboard.py does) and returns the PNG's bytes, which the command writes whole.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from curate.wording import plural

from .bestofn import BASELINES, BestOfNReport, Estimate, GroupReport

SERIES: tuple[str, ...] = ("Best-of-N", *BASELINES)
COLORS = {"Best-of-N": "#4c72b0", "random": "#999999", "first": "#dd8452", "majority": "#55a868", "oracle": "#c44e52"}


@dataclass(frozen=True)
class GroupBars:
    group: str
    items: int  # complete items: what every bar of the group is over
    incomplete: int
    bars: tuple[tuple[str, Estimate], ...]  # (series, estimate) in SERIES order


@dataclass(frozen=True)
class PlotData:
    title: str
    groups: tuple[GroupBars, ...]  # overall first, then the categories
    curve: tuple[tuple[str, tuple[tuple[int, Estimate], ...]], ...] = ()  # series -> (N, estimate), overall
    curve_items: tuple[tuple[int, int], ...] = ()  # (N, complete items at N): an item counts at each N it reaches


def _bars(g: GroupReport) -> GroupBars:
    return GroupBars(g.group, g.complete, g.incomplete, (("Best-of-N", g.accuracy), *g.baselines.items()))


def plot_data(
    report: BestOfNReport, curve: Sequence[tuple[int, BestOfNReport]] = (), *, title: str = "Best-of-N"
) -> PlotData:
    """What the figure draws, read from the report (and the curve's reports, overall)."""
    # one line per series, each point the overall figure at that N
    lines = tuple((s, tuple((n, dict(_bars(r.overall).bars)[s]) for n, r in curve)) for s in SERIES) if curve else ()
    counts = tuple((n, r.overall.complete) for n, r in curve)
    return PlotData(title, tuple(_bars(g) for g in (report.overall, *report.categories)), lines, counts)


def plot_png(data: PlotData) -> bytes:
    """The figure as PNG bytes."""
    # deferred: matplotlib takes 0.6 s to import, and only the plot needs it
    import matplotlib

    matplotlib.use("Agg")
    # deferred, as matplotlib above
    import matplotlib.pyplot as plt

    panels = 2 if data.curve else 1
    width = max(6.5, 1.4 * len(data.groups) + 2.5)
    fig, axes = plt.subplots(1, panels, figsize=(width + 4.5 * (panels - 1), 4.2), squeeze=False)
    try:
        _draw_bars(axes[0][0], data.groups)
        if data.curve:
            _draw_curve(axes[0][1], data.curve, dict(data.curve_items))
        fig.suptitle(data.title, fontsize=10)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=120)
    finally:
        plt.close(fig)
    return buf.getvalue()


def _draw_bars(ax, groups: Sequence[GroupBars]) -> None:
    k = len(SERIES)
    width = 0.8 / k
    hatched = False
    for gi, g in enumerate(groups):
        for si, (name, e) in enumerate(g.bars):
            x = gi + (si - (k - 1) / 2) * width
            if e.value is None:  # undefined: no bar, a dash where it would stand
                ax.text(x, 0.02, "–", ha="center", va="bottom", color="#333333", fontsize=11)
                continue
            err = None
            if e.low is not None and e.high is not None:
                err = [[e.value - e.low], [e.high - e.value]]
            bar = ax.bar(x, e.value, width, yerr=err, color=COLORS[name], ecolor="black", capsize=2, linewidth=0)
            if err is None:  # no interval (too few items or no resamples): hatched, as the leaderboard's
                bar[0].set_hatch("//")
                bar[0].set_edgecolor("white")
                hatched = True
    ax.set_xticks(range(len(groups)))
    names = [f"{g.group}\n{plural(g.items, 'item')}" for g in groups]
    names = [n + (f"\n{g.incomplete} incomplete" if g.incomplete else "") for n, g in zip(names, groups, strict=True)]
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylim(0, 1.18)  # room above 1 for the legend
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("share of items correct" + ("\n(hatched: no interval)" if hatched else ""), fontsize=8)
    handles = [_patch(COLORS[s], s) for s in SERIES]
    ax.legend(handles=handles, fontsize=7, loc="upper left", ncols=len(SERIES), frameon=False)
    ax.set_title("accuracy with 95% interval; –: undefined", fontsize=8, loc="left")


def _patch(color: str, label: str):
    # deferred, as in plot_png: only drawing needs matplotlib
    from matplotlib.patches import Patch

    return Patch(color=color, label=label)


def _draw_curve(ax, curve: Sequence[tuple[str, Sequence[tuple[int, Estimate]]]], items: Mapping[int, int]) -> None:
    ns: list[int] = []
    for name, points in curve:
        shown = [(n, e) for n, e in points if e.value is not None]
        ns = sorted({*ns, *(n for n, _ in points)})
        if not shown:
            continue
        xs = [n for n, _ in shown]
        ys = [e.value for _, e in shown]
        style = "-" if name == "Best-of-N" else "--"
        ax.plot(xs, ys, style, marker="o", color=COLORS[name], label=name, linewidth=2 if name == "Best-of-N" else 1)
        band = [(n, e.low, e.high) for n, e in shown if e.low is not None and e.high is not None]
        if name == "Best-of-N" and band:
            xs_, lo, hi = zip(*band, strict=True)
            ax.fill_between(xs_, lo, hi, color=COLORS[name], alpha=0.2)
    if ns:
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns)
        ax.set_xticklabels([f"{n}\n{plural(items.get(n, 0), 'item')}" for n in ns], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("N (candidates per item)", fontsize=8)
    ax.set_title("overall, against N (band: Best-of-N's 95% interval)", fontsize=8, loc="left")
    ax.legend(fontsize=7, frameon=False)


__all__ = ["SERIES", "GroupBars", "PlotData", "plot_data", "plot_png"]
