"""The lead's plots as Altair (Vega-Lite) charts, drawn as their specs (annotate/figures.py
caches them); built from the figures of annotate/progress.py and curate/agreement/summary.py,
computing nothing new.

An undefined value is written "undefined" where its bar would be, never drawn as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import altair as alt
import pandas as pd

from curate.agreement.summary import (
    ALL,
    THRESHOLDS,
    UNDEFINED,
    AlphaRow,
    KappaCell,
    MajorityRow,
    field_title,
    ordered_fields,
)
from curate.model import category_title
from curate.quality.bias import DIAGNOSTICS, TITLES

SHORT_BAR = 0.02  # an alpha this close to 0 draws a bar of about a pixel: its value is written beside it
HEIGHT = 320  # of the plot: the axes and legends come on top (FIT_WIDTH)
# Streamlit would fit the whole chart, axes and legends included, into its height
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")


def spec(chart: alt.TopLevelMixin) -> dict:
    """The chart as the Vega-Lite spec st.vega_lite_chart draws, its data inlined. Altair's
    default theme only adds a 300 x 300 view size, which st.altair_chart leaves out too: so
    does this (none of these charts sets a config of its own)."""
    out = chart.to_dict()
    out.pop("config", None)
    return out


def _field_colors(titles: Sequence[str]) -> alt.Scale:
    """One colour per field on every chart (Altair's default category palette)."""
    return alt.Scale(domain=list(titles), scheme="tableau10")


def _count_axis() -> alt.Axis:
    """An axis of counts: whole numbers only (Vega would tick 0.1 ... 0.9 for a count up to 1)."""
    return alt.Axis(tickMinStep=1, format="d")


def _legend(title: str | None) -> alt.Legend:
    return alt.Legend(title=title, orient="top", labelLimit=320)


def _per_annotator(data: pd.DataFrame, group: str, order: Sequence[str], tips: list) -> alt.Chart:
    """Bars per annotator, side by side by ``group`` (a field, a diagnostic) in ``order``, one
    colour each, the legend on top."""
    return alt.Chart(data).encode(
        x=alt.X("annotator:N", title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset(f"{group}:N", sort=list(order)),
        color=_group_colour(group, order),
        tooltip=tips,
    )


def _group_colour(group: str, order: Sequence[str]) -> alt.Color:
    return alt.Color(f"{group}:N", scale=_field_colors(order), sort=list(order), legend=_legend(None))


def _reference_lines() -> alt.LayerChart:
    """Krippendorff's reliable and tentative thresholds, each line labelled to the right of
    the plot, where no bar can hide the label."""
    ref = pd.DataFrame({"y": [y for y, _ in THRESHOLDS], "label": [t for _, t in THRESHOLDS]})
    base = alt.Chart(ref)
    rule = base.mark_rule(color="grey", strokeDash=[5, 3]).encode(y="y:Q")
    text = base.mark_text(align="left", baseline="middle", dx=6, color="dimgrey").encode(
        y="y:Q", x=alt.value("width"), text="label:N"
    )
    return rule + text


# -- Progress ---------------------------------------------------------------------------------------
def time_format(frame: pd.DataFrame) -> str:
    """The time axis's labels for the span the frame covers: hours and minutes within a day,
    the day too beyond (labels of several days each read "00:00" with the hours alone)."""
    if frame.empty:
        return "%H:%M"
    span = frame["time"].max() - frame["time"].min()
    return "%H:%M" if span <= pd.Timedelta(days=1) else "%b %d %H:%M" if span <= pd.Timedelta(days=3) else "%b %d"


def labels_over_time(frame: pd.DataFrame) -> alt.Chart:
    """Cumulative submitted labels per annotator (progress.labels_over_time)."""
    return (
        alt.Chart(frame, height=HEIGHT, autosize=FIT_WIDTH)
        .mark_line(interpolate="step-after", point=len(frame) <= 200)
        .encode(
            x=alt.X("time:T", title="Time (UTC)", axis=alt.Axis(format=time_format(frame))),
            y=alt.Y("labels:Q", title="Submitted labels (cumulative)", axis=_count_axis()),
            color=alt.Color("annotator:N", legend=_legend("Annotator")),
            tooltip=[
                alt.Tooltip("annotator:N", title="Annotator"),
                alt.Tooltip("time:T", title="Time (UTC)", format="%Y-%m-%d %H:%M"),
                alt.Tooltip("labels:Q", title="Labels"),
            ],
        )
    )


def seconds_per_label(frame: pd.DataFrame) -> alt.LayerChart:
    """Per annotator: box from the 25th to the 75th percentile, whiskers from the 10th to the
    90th, a tick at the median (progress.seconds_per_label)."""
    base = alt.Chart(frame).encode(y=alt.Y("annotator:N", title="Annotator"))
    tips = [
        alt.Tooltip("annotator:N", title="Annotator"),
        alt.Tooltip("labels:Q", title="Timed labels"),
        *(alt.Tooltip(f"{k}:Q", title=t, format=".1f") for k, t in _PERCENTILES),
    ]
    whisker = base.mark_rule().encode(x=alt.X("p10:Q", title="Seconds per label"), x2="p90:Q", tooltip=tips)
    box = base.mark_bar(size=18).encode(x="q1:Q", x2="q3:Q", tooltip=tips)
    median = base.mark_tick(color="black", size=18, thickness=2).encode(x="median:Q", tooltip=tips)
    return alt.LayerChart(layer=[whisker, box, median], height=max(90, 40 * len(frame)), autosize=FIT_WIDTH)


_PERCENTILES = (
    ("p10", "10th percentile (s)"),
    ("q1", "25th percentile (s)"),
    ("median", "Median (s)"),
    ("q3", "75th percentile (s)"),
    ("p90", "90th percentile (s)"),
)


def label_distribution(frame: pd.DataFrame) -> alt.FacetChart:
    """Submitted labels per value, one panel per field (progress.label_distribution)."""
    fields = list(dict.fromkeys(frame["field"]))
    base = alt.Chart().encode(
        x=alt.X("value:N", title=None, sort=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("labels:Q", title="Submitted labels", axis=_count_axis()),
    )
    bars = base.mark_bar().encode(
        color=alt.Color("field:N", scale=_field_colors(fields), legend=None),
        tooltip=[
            alt.Tooltip("field:N", title="Field"),
            alt.Tooltip("value:N", title="Value"),
            alt.Tooltip("labels:Q", title="Labels"),
            alt.Tooltip("share:Q", title="Share", format=".1%"),
        ],
    )
    text = base.mark_text(baseline="bottom", dy=-2).encode(text="labels:Q")
    return (
        alt.layer(bars, text, data=frame, height=HEIGHT - 60, width=220)
        .facet(column=alt.Column("field:N", title=None, sort=fields))
        .resolve_scale(x="independent")
    )


# -- Agreement ------------------------------------------------------------------------------------
def _alpha_frame(rows: Sequence[AlphaRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "field": field_title(r.field),
                "category": r.category if r.category == ALL else category_title(r.category),
                "pairs": r.pairs,
                "alpha": r.alpha,
                "low": r.low,
                "high": r.high,
                "interval": "95% interval" if r.low is not None else "no interval (too few pairs)",
                "undefined": UNDEFINED if r.alpha is None else None,
                "why": r.undefined or r.interval_undefined or "",
            }
            for r in rows
        ],
        columns=["field", "category", "pairs", "alpha", "low", "high", "interval", "undefined", "why"],
    )


def alpha_per_category(rows: Sequence[AlphaRow]) -> alt.LayerChart:
    """Krippendorff's alpha per category (and over all of them) and field, 95% intervals as
    error bars, a bar without an interval paler, the reference lines labelled."""
    frame = _alpha_frame(rows)
    fields = [field_title(f) for f in ordered_fields({r.field for r in rows})]
    categories = list(dict.fromkeys(frame["category"]))
    # a category's whole name: no label limit (Vega cuts at 180 px by default)
    axis = alt.Axis(labelAngle=-20, labelLimit=0, labelOverlap=False)
    x = alt.X("category:N", title=None, sort=categories, axis=axis)
    offset = alt.XOffset("field:N", sort=fields)
    tips = [
        alt.Tooltip("category:N", title="Category"),
        alt.Tooltip("field:N", title="Field"),
        alt.Tooltip("alpha:Q", title="Alpha", format=".3f"),
        alt.Tooltip("low:Q", title="95% low", format=".3f"),
        alt.Tooltip("high:Q", title="95% high", format=".3f"),
        alt.Tooltip("pairs:Q", title="Pairs with 2+ labels"),
        alt.Tooltip("why:N", title="Note"),
    ]
    base = alt.Chart(frame).encode(x=x, xOffset=offset)
    bars = (
        base.transform_filter("isValid(datum.alpha)")
        .mark_bar(strokeWidth=2)
        .encode(
            y=alt.Y("alpha:Q", title="Krippendorff's alpha (95% CI)", scale=alt.Scale(domainMax=1)),
            color=alt.Color("field:N", scale=_field_colors(fields), sort=fields, legend=_legend(None)),
            stroke=alt.Stroke("field:N", scale=_field_colors(fields), legend=None),
            opacity=alt.Opacity(
                "interval:N",
                scale=alt.Scale(domain=["95% interval", "no interval (too few pairs)"], range=[1.0, 0.4]),
                # below the plot: beside the fields' on top it runs past the right edge at 1366 px
                legend=alt.Legend(title=None, orient="bottom", labelLimit=320),
            ),
            tooltip=tips,
        )
    )
    errors = base.transform_filter("isValid(datum.low)").mark_rule(strokeWidth=1.5).encode(y="low:Q", y2="high:Q")
    # a bar of (nearly) 0 has no height: its outline (the bars') still draws a line there, and its value is written
    short = (
        base.transform_filter(f"isValid(datum.alpha) && abs(datum.alpha) < {SHORT_BAR}")
        .mark_text(angle=270, align="left", dx=4, fontSize=11)
        .encode(
            y="alpha:Q",
            text=alt.Text("alpha:Q", format=".3f"),
            color=alt.Color("field:N", scale=_field_colors(fields)),
            tooltip=tips,
        )
    )
    undefined = (
        base.transform_filter("!isValid(datum.alpha)")
        .mark_text(angle=270, align="left", dx=-4, fontSize=11)
        .encode(
            y=alt.datum(0), text="undefined:N", color=alt.Color("field:N", scale=_field_colors(fields)), tooltip=tips
        )
    )
    return alt.LayerChart(layer=[bars, errors, short, undefined, _reference_lines()], height=HEIGHT, autosize=FIT_WIDTH)


# Cohen's kappa from -1 to 1 on a diverging scheme safe for colour blindness (blue below chance,
# white at 0, orange above); its darkest ends take white text
KAPPA_SCHEME: Final = "blueorange"
DARK_KAPPA = 0.6


def kappa_heatmap(cells: Sequence[KappaCell]) -> alt.FacetChart:
    """Cohen's kappa of each pair of annotators, one panel per field, each cell with its kappa
    and the number of pairs both labelled (n); an undefined cell grey, saying so."""
    frame = pd.DataFrame(
        [
            {
                "field": field_title(c.field),
                "a": c.a,
                "b": c.b,
                "shared": c.shared,
                "kappa": c.kappa,
                "text": UNDEFINED if c.kappa is None else f"{c.kappa:.2f}",
                "n": f"n={c.shared}",
                "why": c.undefined or "",
            }
            for c in cells
        ],
        columns=["field", "a", "b", "shared", "kappa", "text", "n", "why"],
    )
    fields = [field_title(f) for f in ordered_fields({c.field for c in cells})]
    people = sorted(set(frame["a"]))
    base = alt.Chart().encode(
        x=alt.X("a:N", title=None, sort=people, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("b:N", title=None, sort=people),
        tooltip=[
            alt.Tooltip("a:N", title="Annotator"),
            alt.Tooltip("b:N", title="with"),
            alt.Tooltip("kappa:Q", title="Cohen's kappa", format=".3f"),
            alt.Tooltip("shared:Q", title="Pairs both labelled"),
            alt.Tooltip("why:N", title="Note"),
        ],
    )
    defined = (
        base.transform_filter("isValid(datum.kappa)")
        .mark_rect()
        .encode(
            color=alt.Color(
                "kappa:Q",
                title="Cohen's kappa",
                scale=alt.Scale(scheme=KAPPA_SCHEME, domain=[-1, 1], domainMid=0),
                # below the panels: beside them it would be cut off at 1366 px with four fields
                legend=alt.Legend(orient="bottom", direction="horizontal", gradientLength=240),
            )
        )
    )
    undefined = base.transform_filter("!isValid(datum.kappa)").mark_rect(color="#e6e6e6")
    ink = alt.condition(
        f"isValid(datum.kappa) && abs(datum.kappa) >= {DARK_KAPPA}", alt.value("white"), alt.value("black")
    )
    text = base.mark_text(fontSize=11, dy=-7).encode(text="text:N", color=ink)
    n = base.mark_text(fontSize=10, dy=8).encode(text="n:N", color=ink)
    side = max(150, 56 * len(people))
    return (
        alt.layer(defined, undefined, text, n, data=frame, width=side, height=side)
        .facet(column=alt.Column("field:N", title=None, sort=fields))
        .resolve_scale(x="independent", y="independent")
    )


def majority_agreement(rows: Sequence[MajorityRow]) -> alt.LayerChart:
    """Each annotator's agreement with the others' majority, per field."""
    frame = pd.DataFrame(
        [
            {
                "field": field_title(r.field),
                "annotator": r.annotator,
                "agreement": r.agreement,
                "compared": r.compared,
                "labels": r.labels,
                "undefined": UNDEFINED if r.agreement is None else None,
            }
            for r in rows
        ],
        columns=["field", "annotator", "agreement", "compared", "labels", "undefined"],
    )
    fields = [field_title(f) for f in ordered_fields({r.field for r in rows})]
    tips = [
        alt.Tooltip("annotator:N", title="Annotator"),
        alt.Tooltip("field:N", title="Field"),
        alt.Tooltip("agreement:Q", title="Agrees with the majority", format=".1%"),
        alt.Tooltip("compared:Q", title="Labels compared"),
        alt.Tooltip("labels:Q", title="Labels"),
    ]
    base = _per_annotator(frame, "field", fields, tips)
    bars = (
        base.transform_filter("isValid(datum.agreement)")
        .mark_bar()
        .encode(
            y=alt.Y(
                "agreement:Q",
                title="Agreement with the others' majority",
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1]),
            )
        )
    )
    undefined = (
        base.transform_filter("!isValid(datum.agreement)")
        .mark_text(angle=270, align="left", dx=-4, fontSize=11)
        .encode(y=alt.datum(0), text="undefined:N")
    )
    return alt.LayerChart(layer=[bars, undefined], height=HEIGHT - 60, autosize=FIT_WIDTH)


# -- Quality ----------------------------------------------------------------------------------------
# The three per-annotator figures of curate/quality/reliability.py, as admin.quality_frame
# gives them: (column, interval columns or None, labels column, axis title, what a label is)
RELIABILITY = {
    "gold": ("gold", ("gold_low", "gold_high"), "gold_n", "Accuracy on gold (95% Wilson interval)", "Gold labels"),
    "majority": (
        "majority",
        ("majority_low", "majority_high"),
        "majority_n",
        "Agreement with the others' majority (95% Wilson interval)",
        "Labels compared",
    ),
    "model": (
        "model",
        ("model_low", "model_high"),
        "model_n",
        "Dawid-Skene reliability (95% bootstrap interval)",
        "Labels in the model",
    ),
}


GREYED = "#bdbdbd"  # a share on fewer labels than the page's minimum


def _threshold_line(threshold: float) -> alt.LayerChart:
    """The alert threshold, labelled to the right of the plot."""
    ref = pd.DataFrame({"y": [threshold], "label": [f"alert below {threshold:.0%}"]})
    base = alt.Chart(ref)
    rule = base.mark_rule(color="firebrick", strokeDash=[5, 3]).encode(y="y:Q")
    text = base.mark_text(align="left", baseline="middle", dx=6, color="firebrick").encode(
        y="y:Q", x=alt.value("width"), text="label:N"
    )
    return rule + text


def annotator_reliability(frame: pd.DataFrame, kind: str, *, threshold: float, min_n: int) -> alt.LayerChart:
    """One of the per-annotator figures (``kind``: gold, majority or model) per field, its
    interval as an error bar where it has one, the alert threshold as a labelled line. A
    share resting on fewer than ``min_n`` labels is drawn greyed, with its interval and "n=K"
    (issue 28: a few labels still say something, and a gold alert may rest on them); a field
    without any label reads "none", never a bar of 0."""
    value, interval, n, title, n_title = RELIABILITY[kind]
    data = frame.assign(field=frame["field"].astype(str))
    data["shown"] = [bool(pd.notna(v)) for v in frame[value]]
    data["greyed"] = [bool(shown and k < min_n) for shown, k in zip(data["shown"], frame[n], strict=True)]
    data["note"] = pd.Series(
        [
            "none" if not shown else (f"n={k}" if greyed else None)
            for shown, greyed, k in zip(data["shown"], data["greyed"], frame[n], strict=True)
        ],
        index=frame.index,
        dtype=object,
    )
    fields = list(dict.fromkeys(data["field"]))
    tips = [
        alt.Tooltip("annotator:N", title="Annotator"),
        alt.Tooltip("field:N", title="Field"),
        alt.Tooltip(f"{value}:Q", title=title.split(" (")[0], format=".1%"),
        *(
            [
                alt.Tooltip(f"{interval[0]}:Q", title="Interval from", format=".1%"),
                alt.Tooltip(f"{interval[1]}:Q", title="Interval to", format=".1%"),
            ]
            if interval
            else []
        ),
        alt.Tooltip(f"{n}:Q", title=n_title),
    ]
    base = _per_annotator(data, "field", fields, tips)
    scale = alt.Scale(domain=[0, 1])
    shown = base.transform_filter("datum.shown")
    layers: list = [
        shown.mark_bar().encode(
            y=alt.Y(f"{value}:Q", title=title, axis=alt.Axis(format="%"), scale=scale),
            color=alt.condition("datum.greyed", alt.value(GREYED), _group_colour("field", fields)),
        )
    ]
    if interval:
        layers.append(
            shown.transform_filter(f"isValid(datum.{interval[0]})")
            .mark_rule(strokeWidth=1.5)
            .encode(y=alt.Y(f"{interval[0]}:Q", scale=scale), y2=f"{interval[1]}:Q", color=alt.value("black"))
        )
    layers.append(
        base.transform_filter("isValid(datum.note)")
        .mark_text(angle=270, align="left", dx=-4, fontSize=11)
        .encode(y=alt.datum(0), text="note:N", color=alt.value("black"))
    )
    layers.append(_threshold_line(threshold))
    return alt.LayerChart(layer=layers, height=HEIGHT - 60, autosize=FIT_WIDTH)


def leaderboard(rows: Sequence[dict], chance: float | None = 50) -> alt.LayerChart:
    """Each judge's accuracy overall and per category side by side (mmrb_eval.dashboard.board_frame),
    with its 95% interval where defined and the chance line at 50% (``chance`` None: none, as
    for Best-of-N, whose random baseline is a bar of its own: mmrb_eval.dashboard.bestofn_frame)."""
    frame = pd.DataFrame(rows, columns=["judge", "group", "accuracy", "lo", "hi", "complete"])
    judges = list(dict.fromkeys(frame["judge"]))
    groups = list(dict.fromkeys(frame["group"]))
    y = alt.Y("judge:N", title=None, sort=judges, axis=alt.Axis(labelLimit=320))
    offset = alt.YOffset("group:N", sort=groups)
    x = alt.X("accuracy:Q", title="Accuracy (%) with 95% interval", scale=alt.Scale(domain=[0, 100]))
    tips = [
        alt.Tooltip("judge:N", title="Judge"),
        alt.Tooltip("group:N", title="Of"),
        alt.Tooltip("accuracy:Q", title="Accuracy (%)", format=".1f"),
        alt.Tooltip("lo:Q", title="95% from", format=".1f"),
        alt.Tooltip("hi:Q", title="95% to", format=".1f"),
    ]
    color = alt.Color("group:N", sort=groups, scale=_field_colors(groups), legend=_legend(None))
    base = alt.Chart(frame).encode(y=y, yOffset=offset)
    bars = base.mark_bar().encode(x=x, color=color, tooltip=tips)
    whiskers = base.transform_filter("isValid(datum.lo)").mark_rule(color="black").encode(x="lo:Q", x2="hi:Q")
    line = (
        alt.Chart(pd.DataFrame({"x": [chance]}))
        .mark_rule(color="grey", strokeDash=[4, 4])
        .encode(x="x:Q", tooltip=[alt.Tooltip("x:Q", title="Chance (%)")])
    )
    height = max(90, 18 * len(groups) * max(len(judges), 1))
    layers = [bars, whiskers] if chance is None else [bars, whiskers, line]
    return alt.LayerChart(layer=layers, height=height, autosize=FIT_WIDTH)


def validity_scatter(points: Sequence[dict], title: str) -> alt.LayerChart:
    """mmrb validity's scatter (mmrb_eval.dashboard.validity_points): each judge's benchmark
    accuracy against its Best-of-N gain over random, labelled, with both 95% intervals where
    defined, no gain dashed, Pearson's r in the title."""
    frame = pd.DataFrame(points, columns=["judge", "accuracy", "gain", "acc_lo", "acc_hi", "gain_lo", "gain_hi"])
    x = alt.X("accuracy:Q", title="Benchmark accuracy (%)", scale=alt.Scale(zero=False))
    y = alt.Y("gain:Q", title="Best-of-N gain over random (points)", scale=alt.Scale(padding=16))
    tips = [
        alt.Tooltip("judge:N", title="Judge"),
        alt.Tooltip("accuracy:Q", title="Benchmark accuracy (%)", format=".1f"),
        alt.Tooltip("gain:Q", title="Gain (points)", format=".1f"),
    ]
    base = alt.Chart(frame)
    dots = base.mark_circle(size=70).encode(x=x, y=y, tooltip=tips)
    # a name right of its point, or left of it near the right edge (where it would be cut)
    lo, hi = (frame["accuracy"].min(), frame["accuracy"].max()) if len(frame) else (0.0, 0.0)
    right_edge = f"datum.accuracy > {0.85 * hi + 0.15 * lo}"
    names = alt.layer(
        base.transform_filter(f"!({right_edge})").mark_text(align="left", dx=7, dy=-7),
        base.transform_filter(right_edge).mark_text(align="right", dx=-7, dy=-7),
    ).encode(x=x, y=y, text="judge:N")
    across = (
        base.transform_filter("isValid(datum.acc_lo)")
        .mark_rule(color="grey")
        .encode(x="acc_lo:Q", x2="acc_hi:Q", y="gain:Q")
    )
    up = (
        base.transform_filter("isValid(datum.gain_lo)")
        .mark_rule(color="grey")
        .encode(y="gain_lo:Q", y2="gain_hi:Q", x="accuracy:Q")
    )
    zero = alt.Chart(pd.DataFrame({"y": [0]})).mark_rule(color="grey", strokeDash=[4, 4]).encode(y="y:Q")
    return alt.LayerChart(layer=[across, up, zero, dots, names], height=HEIGHT, autosize=FIT_WIDTH, title=title)


def scaling(rows: Sequence[dict]) -> alt.LayerChart:
    """Accuracy against k judge samples (mmrb_eval.dashboard.scaling_frame): one line per judge,
    its 95% interval as a bar at each k where defined, the chance line at 50%."""
    frame = pd.DataFrame(rows, columns=["judge", "k", "accuracy", "lo", "hi", "pairs", "short_pairs"])
    judges = list(dict.fromkeys(frame["judge"]))
    ks = sorted(set(frame["k"]))
    # half a step beyond the first and last k: their points and intervals are not cut in half at the edge
    scale = alt.Scale(domain=[min(ks, default=1) - 0.5, max(ks, default=1) + 0.5], nice=False, zero=False)
    x = alt.X("k:Q", title="Samples per pair (k, majority vote)", axis=alt.Axis(values=ks, format="d"), scale=scale)
    y = alt.Y("accuracy:Q", title="Accuracy (%) with 95% interval", scale=alt.Scale(domain=[0, 100]))
    color = alt.Color("judge:N", sort=judges, scale=_field_colors(judges), legend=_legend(None))
    tips = [
        alt.Tooltip("judge:N", title="Judge"),
        alt.Tooltip("k:Q", title="Samples (k)"),
        alt.Tooltip("accuracy:Q", title="Accuracy (%)", format=".1f"),
        alt.Tooltip("lo:Q", title="95% from", format=".1f"),
        alt.Tooltip("hi:Q", title="95% to", format=".1f"),
        alt.Tooltip("pairs:Q", title="Pairs scored"),
        alt.Tooltip("short_pairs:Q", title="Pairs short of k answered samples"),
    ]
    base = alt.Chart(frame).encode(x=x, color=color)
    line = base.mark_line(point=True).encode(y=y, tooltip=tips)
    bars = base.transform_filter("isValid(datum.lo)").mark_rule().encode(y="lo:Q", y2="hi:Q", tooltip=tips)
    chance = (
        alt.Chart(pd.DataFrame({"y": [50]}))
        .mark_rule(color="grey", strokeDash=[4, 4])
        .encode(y="y:Q", tooltip=[alt.Tooltip("y:Q", title="Chance (%)")])
    )
    return alt.LayerChart(layer=[line, bars, chance], height=HEIGHT, autosize=FIT_WIDTH)


def annotator_bias(frame: pd.DataFrame) -> alt.LayerChart:
    """The bias diagnostics of curate/quality/bias.py (``admin.bias_frame``): per annotator,
    each share as a bar with its Wilson interval, a share that alerts outlined in firebrick,
    50% as a dashed line (a side or the longer response picked at random). An empty share
    reads "none" (or why it is undefined), never a bar of 0."""
    data = frame.assign(shown=[pd.notna(v) for v in frame["share"]])
    data["label"] = [
        None if shown else (note if isinstance(note, str) else "none")
        for shown, note in zip(data["shown"], frame["note"], strict=True)
    ]
    order = [TITLES[d] for d in DIAGNOSTICS]
    tips = [
        alt.Tooltip("annotator:N", title="Annotator"),
        alt.Tooltip("diagnostic:N", title="Diagnostic"),
        alt.Tooltip("share:Q", title="Share", format=".1%"),
        alt.Tooltip("low:Q", title="Interval from", format=".1%"),
        alt.Tooltip("high:Q", title="Interval to", format=".1%"),
        alt.Tooltip("n:Q", title="Labels counted"),
    ]
    base = _per_annotator(data, "diagnostic", order, tips)
    scale = alt.Scale(domain=[0, 1])
    shown = base.transform_filter("datum.shown")
    bars = shown.mark_bar().encode(
        y=alt.Y("share:Q", title="Share (95% Wilson interval)", axis=alt.Axis(format="%"), scale=scale),
        stroke=alt.condition("datum.alert", alt.value("firebrick"), alt.value(None)),
        strokeWidth=alt.condition("datum.alert", alt.value(2.5), alt.value(0)),
    )
    rules = (
        shown.transform_filter("isValid(datum.low)")
        .mark_rule(strokeWidth=1.5)
        .encode(y=alt.Y("low:Q", scale=scale), y2="high:Q", color=alt.value("black"))
    )
    notes = (
        base.transform_filter("!datum.shown")
        .mark_text(angle=270, align="left", dx=-4, fontSize=11)
        .encode(y=alt.datum(0), text="label:N", color=alt.value("black"))
    )
    half = pd.DataFrame({"y": [0.5], "label": ["50%"]})
    line = alt.Chart(half).mark_rule(color="grey", strokeDash=[5, 3]).encode(y="y:Q")
    return alt.LayerChart(layer=[bars, rules, notes, line], height=HEIGHT - 60, autosize=FIT_WIDTH)
