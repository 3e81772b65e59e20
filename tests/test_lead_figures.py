"""The figures behind the lead's pages and the dataset card, on tiny literal fixtures: wording
(plural, percent, seconds), the agreement report as rows (curate/agreement/summary.py), the
Progress page's tables and plot data (annotate/progress.py) and the charts built from them
(annotate/charts.py)."""

from __future__ import annotations

import math
import re
import tokenize
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as hs

from annotate import charts, progress
from annotate.tables import human
from curate.agreement import agreement_report, from_long, summary
from curate.agreement.stats import Estimate
from curate.store.counts import LabelActivity
from curate.wording import EMPTY, percent, plural, seconds, utc_time


# -- wording ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "n, noun, many, text",
    [
        (0, "pair", None, "0 pairs"),
        (1, "pair", None, "1 pair"),
        (2, "pair", None, "2 pairs"),
        (1, "category", "categories", "1 category"),
        (3, "category", "categories", "3 categories"),
    ],
)
def test_plural(n, noun, many, text):
    assert plural(n, noun, many) == text


@given(hs.integers(-(10**6), 10**6), hs.sampled_from(["pair", "label", "annotator", "triplet"]))
def test_plural_is_the_count_then_the_noun_singular_only_for_one(n, noun):
    count, word = plural(n, noun).split(" ")
    assert int(count) == n and word == (noun if n == 1 else noun + "s")


def test_no_output_pluralises_by_hand():
    """Every count in annotate/ and curate/ reads through curate.wording.plural: no string
    says "pair(s)" and none adds an "s" by hand ("'s' if n != 1")."""
    root = Path(__file__).resolve().parents[1]
    by_hand = re.compile(r"[a-z]\(s\)(?=[\s,.;:)])|'s' if|\"s\" if")
    found = []
    for folder in ("annotate", "curate"):
        for p in sorted((root / folder).rglob("*.py")):
            with p.open("rb") as f:
                prev = None
                for tok in tokenize.tokenize(f.readline):
                    text = tok.string.replace("http(s)", "")
                    in_string = tok.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1))
                    # Python 3.12+ tokenizes inside f-strings: 's' then if
                    s_if = prev is not None and prev.string in ("'s'", '"s"') and tok.string == "if"
                    if (in_string and by_hand.search(text)) or s_if:
                        found.append(f"{p.relative_to(root)}:{tok.start[0]}: {tok.line.strip()}")
                    prev = tok
    assert not found, found


@pytest.mark.parametrize(
    "share, text", [(0.0625, "6.2%"), (0.062, "6.2%"), (1.0, "100.0%"), (0.0, "0.0%"), (None, EMPTY)]
)
def test_percent(share, text):
    assert percent(share) == text


@given(hs.floats(0, 1))
def test_percent_reads_back_within_its_precision(share):
    text = percent(share)
    assert text.endswith("%") and abs(float(text[:-1]) - 100 * share) <= 0.05 + 1e-9


@pytest.mark.parametrize(
    "value, text", [(12.345, "12.3"), (12.0, "12"), (0.04, "0"), (59.96, "60"), (None, EMPTY), (math.nan, EMPTY)]
)
def test_seconds_have_at_most_one_decimal(value, text):
    assert seconds(value) == text


@given(hs.floats(0, 10**6))
def test_seconds_round_to_one_decimal(value):
    text = seconds(value)
    assert len(text.partition(".")[2]) <= 1 and abs(float(text) - value) <= 0.05 + 1e-6


@pytest.mark.parametrize(
    "stamp, text",
    [
        ("2026-11-27T03:12:45.123456+00:00", "2026-11-27 03:12 UTC"),
        ("2026-11-27T05:12:59+02:00", "2026-11-27 03:12 UTC"),  # another offset, converted
        ("2026-11-26T23:30:00-04:00", "2026-11-27 03:30 UTC"),  # across midnight
        ("2026-11-27 03:12:45", "2026-11-27 03:12 UTC"),  # no offset: the store writes UTC
        (None, EMPTY),
        ("", EMPTY),
        ("last Tuesday", "last Tuesday"),  # unreadable: as it is, never a traceback
    ],
)
def test_utc_time_says_the_minute_in_utc(stamp, text):
    assert utc_time(stamp) == text


@given(hs.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1), timezones=hs.timezones()))
def test_utc_time_is_the_same_instant_read_back(when):
    text = utc_time(when.isoformat())
    assert text.endswith(" UTC")
    back = datetime.strptime(text, "%Y-%m-%d %H:%M UTC").replace(tzinfo=UTC)
    assert timedelta(0) <= when - back < timedelta(minutes=1)


# -- the agreement report as rows -------------------------------------------------------------------------
# pair: category, {annotator: preference}; correctness_first is "correct" from everyone (no variation)
PAIRS = {
    "u1": ("vqa", {"a": "first", "b": "first"}),
    "u2": ("vqa", {"a": "first", "b": "second"}),
    "u3": ("safety", {"a": "tie", "b": "tie", "c": "tie"}),
    "u4": ("safety", {"c": "second"}),
}


def tiny_report():
    rows = []
    for unit, (cat, votes) in PAIRS.items():
        for who, pref in votes.items():
            rows += [(unit, who, "preference", pref, cat), (unit, who, "correctness_first", "correct", cat)]
    frame = pd.DataFrame(rows, columns=["unit", "annotator", "field", "value", "category"])
    return agreement_report(from_long(frame), per_category=True, resamples=50, min_shared=1)


def test_alpha_rows_cover_every_field_overall_then_per_category():
    rows = summary.alpha_rows(tiny_report())
    assert [(r.category, r.field) for r in rows] == [
        (summary.ALL, "correctness_first"),
        (summary.ALL, "preference"),
        ("safety", "correctness_first"),
        ("safety", "preference"),
        ("vqa", "correctness_first"),
        ("vqa", "preference"),
    ]
    by = {(r.category, r.field): r for r in rows}
    # undefined stays undefined (None with the report's reason), never 0
    assert by[(summary.ALL, "correctness_first")].alpha is None
    assert "no variation" in by[(summary.ALL, "correctness_first")].undefined
    pref = by[(summary.ALL, "preference")]
    assert pref.pairs == 3 and pref.labels == 8 and pref.alpha is not None
    assert pref.low is None and pref.interval_undefined == "too few pairs"  # 3 pairs with 2+ labels
    assert by[("vqa", "preference")].percent == 0.5


def test_kappa_cells_are_symmetric_and_majority_rows_say_who_was_compared():
    rep = tiny_report()
    cells = [c for c in summary.kappa_cells(rep) if c.field == "preference"]
    assert {(c.a, c.b) for c in cells} == {("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")}
    ab = [c for c in cells if {c.a, c.b} == {"a", "b"}]
    assert ab[0].kappa == ab[1].kappa and ab[0].shared == 3  # u1, u2, u3
    # a and c share only u3, where both said "tie": a single category, kappa undefined
    ac = next(c for c in cells if (c.a, c.b) == ("a", "c"))
    assert ac.kappa is None and ac.undefined == "both annotators used a single category"
    majority = {(m.field, m.annotator): m for m in summary.majority_rows(rep)}
    # c's pairs: u3 (the others agree on tie: c agrees) and u4 (no others: not compared)
    assert (majority["preference", "c"].compared, majority["preference", "c"].agreement) == (1, 1.0)
    # a: u3 agrees; u1, u2 have one other label each (b's), which is then the majority
    assert (majority["preference", "a"].compared, majority["preference", "a"].agreement) == (3, pytest.approx(2 / 3))


def test_the_agreement_page_says_why_a_single_pair_gives_no_statistic():
    """Issue 24: one pair with two or more labels. The page's rows, table, notes and charts say
    "undefined" with the count and the minimum, never 0.000 and never an empty cell alone."""
    from annotate import admin

    df = pd.DataFrame(
        [("p1", "a", "preference", "first"), ("p1", "b", "preference", "second"), ("p1", "c", "preference", "first")],
        columns=["unit", "annotator", "field", "value"],
    )
    rep = agreement_report(from_long(df), per_category=True, resamples=50, min_shared=1)
    rows = summary.alpha_rows(rep)
    why = "only 1 pair with two or more labels (at least 2 needed)"
    assert [(r.alpha, r.percent, r.undefined) for r in rows] == [(None, None, why)] * 2
    table = admin.alpha_table(rows).frame
    assert table["Alpha"].isna().all()  # empty, its reason in the notes below
    matrix = admin.alpha_matrix(rows).frame
    assert matrix["Preference"].isna().all()
    assert admin.alpha_notes(rows, min_pairs=rep.min_pairs) == [f"Undefined (Preference; Preference in (none)): {why}."]
    cells = summary.kappa_cells(rep)
    assert len(cells) == 6 and {(c.kappa, c.undefined) for c in cells} == {(None, why)}
    # the page itself says what it needs instead of these charts (issue 28)
    wanting = admin.agreement_wanting(rep)
    assert wanting and "at least 2 pairs labelled by two or more annotators; so far 1 pair (3 submitted" in wanting
    assert admin.agreement_wanting(tiny_report()) is None
    for chart in (
        charts.alpha_per_category(rows),
        charts.kappa_heatmap(cells),
        charts.majority_agreement(summary.majority_rows(rep)),
    ):
        assert charts.spec(chart)


def test_value_counts_in_scale_order_with_unused_values():
    counts = [(v.value, v.labels) for v in summary.value_counts(tiny_report()) if v.field == "preference"]
    assert counts == [("first", 3), ("second", 2), ("tie", 3)]


@pytest.mark.parametrize(
    "estimate, cell",
    [
        (Estimate(0.7481, low=0.24, high=1.0), "0.748 [0.240, 1.000]"),
        (Estimate(0.375, interval_undefined="too few pairs"), "0.375 [undefined]"),
        (Estimate(0.5), "0.500"),
        (Estimate.none("every pairable label is 'first': no variation, alpha is undefined"), "undefined"),
    ],
)
def test_estimate_cell(estimate, cell):
    assert summary.estimate_cell(estimate) == cell


def test_undefined_notes_say_each_reason_once_with_its_places():
    odd = "every pairable label is 'first': no variation, alpha is undefined"
    cells = [
        ("preference in a", Estimate.none(odd)),
        ("preference in b", Estimate.none(odd)),
        ("preference in b", Estimate.none(odd)),  # the same place twice (alpha, AC1): named once
        ("correctness in a", Estimate.none("no pair has two or more labels")),
        ("preference", Estimate(0.3, interval_undefined="too few pairs")),
        ("correctness", Estimate(0.2, interval_undefined="too few pairs")),
        ("fine", Estimate(0.9, low=0.8, high=1.0)),
    ]
    assert summary.undefined_notes(cells, min_pairs=10) == [
        f"undefined (preference in a; preference in b): {odd}.",
        "undefined (correctness in a): no pair has two or more labels.",
        "[undefined] interval: fewer than 10 pairs with two or more labels, too few for a bootstrap interval.",
    ]
    many = [(f"c{n}", Estimate.none(odd)) for n in range(9)]
    assert summary.undefined_notes(many, min_pairs=10, shown=2) == [f"undefined (c0; c1 and 7 more): {odd}."]


def test_fields_read_preference_first():
    assert summary.ordered_fields(["score", "correctness_second", "preference", "correctness_first"]) == [
        "preference",
        "correctness_first",
        "correctness_second",
        "score",
    ]
    assert summary.field_title("correctness_first") == "Correctness, first response"
    assert summary.field_title("score") == "score"


# -- Progress -------------------------------------------------------------------------------------------
def act(who: str, at: str, secs: float | None = 10.0, status: str = "submitted") -> LabelActivity:
    return LabelActivity(who, status, None, secs, at, at)


ACTIVITY = [
    act("bob", "2025-01-01T10:05:00+00:00", 30.0),
    act("alice", "2025-01-01T10:00:00+00:00", 10.0),
    act("alice", "2025-01-01T10:02:00+00:00", 20.0),
    act("alice", "2025-01-01T10:01:00+00:00", None),  # untimed: counted, not timed
    act("bob", "2025-01-01T10:03:00+00:00", 99.0, status="skipped"),  # a skip is no label
]


def test_labels_over_time_counts_up_per_annotator_in_time_order():
    f = progress.labels_over_time(ACTIVITY)
    assert f.to_dict("list") == {
        "annotator": ["alice", "alice", "alice", "bob"],
        "time": [datetime(2025, 1, 1, 10, m, tzinfo=UTC) for m in (0, 1, 2, 5)],
        "labels": [1, 2, 3, 1],
    }
    assert progress.labels_over_time([]).empty


def test_the_time_axis_names_the_day_when_the_labels_span_days():
    """Example labels made weeks before the annotators' own read "00:00" on every tick."""
    later = [*ACTIVITY, act("carol", "2025-01-03T09:00:00+00:00"), act("dave", "2025-02-01T09:00:00+00:00")]
    assert charts.time_format(progress.labels_over_time(ACTIVITY)) == "%H:%M"
    assert charts.time_format(progress.labels_over_time(later[:-1])) == "%b %d %H:%M"
    assert charts.time_format(progress.labels_over_time(later)) == "%b %d"
    assert charts.time_format(progress.labels_over_time([])) == "%H:%M"


def test_labels_over_time_is_thinned_but_keeps_the_first_and_last():
    many = [act("a", f"2025-01-01T{h:02d}:{m:02d}:00+00:00") for h in range(20) for m in range(60)]
    f = progress.labels_over_time(many)
    assert len(f) <= progress.MAX_POINTS and f["labels"].iloc[0] == 1 and f["labels"].iloc[-1] == 1200
    assert f["labels"].is_monotonic_increasing


def test_seconds_per_label_percentiles_of_timed_submitted_labels():
    f = progress.seconds_per_label(ACTIVITY).set_index("annotator")
    assert f.loc["alice", "labels"] == 2 and f.loc["alice", "median"] == 15.0 and f.loc["alice", "p10"] == 11.0
    assert f.loc["bob", "labels"] == 1 and f.loc["bob", "p90"] == 30.0  # the skip's 99 s is not a label's
    assert list(progress.seconds_per_label([]).columns) == ["annotator", "labels", *progress.QUANTILES]


def test_label_distribution_reads_preference_first_with_shares():
    f = progress.label_distribution(tiny_report())
    assert list(f["field"].unique()) == ["Preference", "Correctness, first response"]
    pref = f[f["field"] == "Preference"]
    assert pref["value"].tolist() == ["first", "second", "tie"] and pref["share"].sum() == pytest.approx(1)


def test_tables_have_human_headers_and_no_missing_value_but_none():
    people = pd.DataFrame(
        [
            dict(
                annotator="alice",
                role="annotator",
                active=True,
                assigned=4,
                done=1,
                submitted=1,
                skipped=0,
                flagged=0,
                last_hour=1,
                labels_per_hour=float("nan"),
                median_seconds=None,
            )
        ]
    )
    t = progress.annotator_table(people)
    assert all("_" not in h and h[0].isupper() for h in t.frame.columns)
    assert t.frame.loc[0, "Labels per labelling hour"] is None and t.frame.loc[0, "Median s per label"] is None
    assert t.formats == {"Labels per labelling hour": "%.1f", "Median s per label": "%.1f"}
    # a lead with nothing assigned is left out; one who labels is a row; an account's state in words
    lead = people.assign(annotator="lead", role="admin", assigned=0, done=0, submitted=0, last_hour=0)
    off = people.assign(annotator="bob", active=False)
    t = progress.annotator_table(pd.concat([people, lead, off], ignore_index=True))
    assert t.frame[["Annotator", "Account"]].values.tolist() == [["alice", "active"], ["bob", "disabled"]]
    labelling_lead = lead.assign(assigned=3)
    assert progress.annotator_table(labelling_lead).frame["Annotator"].tolist() == ["lead"]
    assert progress.annotator_table(people.iloc[:0]).frame.empty
    cats = progress.category_table(pd.DataFrame([dict(category="vqa", assigned=16, done=1, share_done=0.062)]))
    assert cats.frame.loc[0, "Share done"] == 6.25 and cats.formats["Share done"] == "%.1f%%"
    assert cats.frame.loc[0, "Category"] == "Visual question answering"  # the title, not the id
    assert list(progress.short_table(pd.DataFrame(columns=["pair"])).frame.columns) == [
        "Pair",
        "Labels wanted",
        "Assigned",
        "Labelled",
        "Waiting on",
    ]
    assert human(pd.DataFrame({"a": [1.5, None]}), {"a": "A"}).frame["A"].tolist() == [1.5, None]


# -- charts: Vega-Lite specs of the figures above ------------------------------------------------------------
def layers(spec: dict) -> list[dict]:
    inner = spec.get("spec", spec)
    out = []
    for layer in inner.get("layer", [inner]):
        out += layers(layer) if "layer" in layer else [layer]
    return out


def test_alpha_chart_has_error_bars_labelled_reference_lines_and_writes_undefined():
    spec = charts.alpha_per_category(summary.alpha_rows(tiny_report())).to_dict()
    marks = [(layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]) for layer in layers(spec)]
    # bars, error bars, short bars' values, "undefined", the reference lines and their labels
    assert marks.count("bar") == 1 and marks.count("rule") == 2
    assert marks.count("text") == 3
    datasets = spec["datasets"].values()
    ref = next(d for d in datasets if d and "label" in d[0])
    assert [(r["y"], r["label"]) for r in ref] == [(0.8, "0.8: reliable"), (0.667, "0.667: tentative")]
    rows = next(d for d in datasets if d and "alpha" in d[0])
    undefined = [r for r in rows if r["alpha"] is None]
    assert undefined and all(r["undefined"] == "undefined" for r in undefined)  # written, not a 0 bar


def mark_type(layer: dict) -> str:
    return layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]


def _alpha_row(category: str, field: str, alpha: float | None) -> summary.AlphaRow:
    return summary.AlphaRow(field, category, 12, 24, alpha, None, None, None, None if alpha is not None else "x", None)


def test_an_alpha_of_zero_is_a_visible_tick_with_its_value_and_categories_by_their_whole_names():
    rows = [
        _alpha_row(summary.ALL, "preference", 0.4),
        _alpha_row("edit", "preference", 0.0),
        _alpha_row("open_generation/correctness_task", "preference", -0.01),
    ]
    spec = charts.alpha_per_category(rows).to_dict()
    # a bar is outlined in its colour: at 0 it has no height, but its outline is a line there
    bar = next(m for m in layers(spec) if mark_type(m) == "bar")
    assert bar["mark"]["strokeWidth"] >= 1.5 and bar["encoding"]["stroke"]["field"] == "field"
    # the value written beside a bar too short to see
    short = next(m for m in layers(spec) if m["encoding"].get("text", {}).get("field") == "alpha")
    expr = short["transform"][0]["filter"]
    assert f"abs(datum.alpha) < {charts.SHORT_BAR}" in expr and short["encoding"]["text"]["format"] == ".3f"
    data = next(d for d in spec["datasets"].values() if d and "alpha" in d[0])
    near_zero = [r for r in data if r["alpha"] is not None and abs(r["alpha"]) < charts.SHORT_BAR]
    assert [r["category"] for r in near_zero] == ["Image editing", "Open-ended generation (correctness)"]
    axes = [m["encoding"]["x"]["axis"] for m in layers(spec) if "axis" in m.get("encoding", {}).get("x", {})]
    assert axes and all(a["labelLimit"] == 0 for a in axes)  # no category name cut


def test_the_kappa_heatmap_is_colour_blind_safe_and_writes_kappa_and_n_in_each_cell():
    cells = summary.kappa_cells(tiny_report())
    spec = charts.kappa_heatmap(cells).to_dict()
    inner = layers(spec)
    rect = next(m for m in inner if "color" in m.get("encoding", {}) and m["encoding"]["color"].get("field") == "kappa")
    scale = rect["encoding"]["color"]["scale"]
    # blue-orange, viridis and cividis read apart in every common colour blindness (red-green does not)
    assert scale["scheme"] in {"blueorange", "viridis", "cividis"} and scale["domain"] == [-1, 1]
    texts = [m["encoding"]["text"]["field"] for m in inner if mark_type(m) == "text"]
    assert sorted(texts) == ["n", "text"]
    data = next(iter(spec["datasets"].values()))
    assert {r["n"] for r in data} == {f"n={c.shared}" for c in cells}
    undefined = [r for r in data if r["kappa"] is None]
    assert undefined and all(r["text"] == "undefined" for r in undefined)  # never coloured as a 0


def test_the_other_charts_build_from_their_figures():
    rep = tiny_report()
    for chart in (
        charts.labels_over_time(progress.labels_over_time(ACTIVITY)),
        charts.seconds_per_label(progress.seconds_per_label(ACTIVITY)),
        charts.label_distribution(progress.label_distribution(rep)),
        charts.kappa_heatmap(summary.kappa_cells(rep)),
        charts.majority_agreement(summary.majority_rows(rep)),
    ):
        spec = chart.to_dict()
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        assert any(d for d in spec["datasets"].values())


def test_the_quality_charts_grey_a_share_under_min_n_labels_with_its_interval_and_label_the_threshold():
    from annotate import admin
    from curate.quality.frames import as_frame
    from curate.quality.reliability import reliability_report

    rows = [
        (f"p{i}", who, "preference", "first" if who != "dan" or i % 2 else "second")
        for i in range(12)
        for who in ("ann", "bea", "cat", "dan")
    ]
    rows += [("p99", "eve", "preference", "first")]  # one label: no gold, no majority
    rows += [(f"p{i}", "fay", "preference", "first") for i in range(3)]  # 3 gold labels: greyed
    gold = {"preference": {f"p{i}": "first" for i in range(12)}}
    labels = as_frame(rows).assign(control=False, category="vqa")
    frame = admin.quality_frame(reliability_report(labels, gold, threshold=0.8, min_n=10))
    for kind in ("gold", "majority", "model"):
        spec = charts.annotator_reliability(frame, kind, threshold=0.8, min_n=10).to_dict()
        marks = [(la["mark"]["type"] if isinstance(la["mark"], dict) else la["mark"]) for la in layers(spec)]
        assert marks.count("bar") == 1 and marks.count("rule") == 2, kind  # the interval, the threshold
        data = [d for d in spec["datasets"].values() if d and "annotator" in d[0]][0]
        drawn = {r["annotator"]: (r["shown"], r["greyed"]) for r in data}
        full = {a: (True, False) for a in ("ann", "bea", "cat", "dan")}
        assert drawn == {**full, "eve": (kind == "model", kind == "model"), "fay": (True, True)}, kind
        assert [r["note"] for r in data if r["annotator"] == "eve"] == ["none" if kind != "model" else "n=1"], kind
        assert [r["note"] for r in data if r["annotator"] == "fay"] == ["n=3"], kind
        if kind == "gold":  # the greyed bar keeps its interval
            (fay,) = [r for r in data if r["annotator"] == "fay"]
            assert fay["gold_low"] == pytest.approx(0.4385, abs=1e-4) and fay["gold_high"] == 1.0
        bar = next(la for la in layers(spec) if la["mark"] in ("bar", {"type": "bar"}))
        assert bar["encoding"]["color"]["condition"] == {"test": "datum.greyed", "value": charts.GREYED}, kind
        ref = [d for d in spec["datasets"].values() if d and "label" in d[0]]
        assert [(r["y"], r["label"]) for r in ref[0]] == [(0.8, "alert below 80%")]
        y = next(la["encoding"]["y"] for la in layers(spec) if la["mark"] in ("bar", {"type": "bar"}))
        assert y["title"].startswith(charts.RELIABILITY[kind][3].split(" (")[0])


def _position_encodings(spec):
    """Every x / y encoding anywhere in a Vega-Lite spec (layers, facets included)."""
    if isinstance(spec, dict):
        for channel in ("x", "y"):
            enc = spec.get("encoding", {}).get(channel)
            if isinstance(enc, dict):
                yield enc
        for value in spec.values():
            yield from _position_encodings(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from _position_encodings(value)


def test_count_axes_tick_whole_numbers_only():
    """A count of one label must not be ticked 0.1 ... 0.9: every axis of label counts has
    integer ticks (tickMinStep 1, format "d")."""
    one = [r for r in ACTIVITY if r.status == "submitted"][:1]
    for chart in (
        charts.labels_over_time(progress.labels_over_time(one)),
        charts.label_distribution(progress.label_distribution(tiny_report())),
    ):
        counts = [e for e in _position_encodings(chart.to_dict()) if e.get("field") == "labels"]
        assert counts and all(
            e.get("type") == "quantitative" and e["axis"]["tickMinStep"] == 1 and e["axis"]["format"] == "d"
            for e in counts
        ), counts
