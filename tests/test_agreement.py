"""Agreement statistics against published reference values (REFERENCE.md section 3)."""

from __future__ import annotations

import json
import re

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from curate.agreement import agreement_report, from_long, read_labels_file, render_text
from curate.agreement import stats as st
from curate.agreement.table import FieldSpec
from curate.errors import InputError, MmrbError
from curate.formats.reader import MALFORMED


def main(argv: list[str]) -> int:
    """`mmrb agreement ...` through the command module alone (as curate.cli.main runs it),
    so other stages' parsers cannot break these tests."""
    import argparse
    import sys

    from curate.commands import agreement
    from curate.errors import MmrbError

    assert argv[0] == "agreement"
    p = argparse.ArgumentParser(prog="mmrb agreement")
    agreement.add_arguments(p)
    try:
        return agreement.run(p.parse_args(argv[1:]))
    except MmrbError as e:
        print(f"mmrb agreement: error: {e}", file=sys.stderr)
        return 1


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", 4 observers x 12 units
K2011 = """A: 1 2 3 3 2 1 4 1 2 . . .
B: 1 2 3 3 2 2 4 1 2 5 . 3
C: . 3 3 3 2 3 4 2 2 5 1 .
D: 1 2 3 3 2 4 4 1 2 5 1 ."""


def k2011_frame(field: str = "x") -> pd.DataFrame:
    rows = []
    for line in K2011.splitlines():
        who, vals = line.split(":")
        rows += [(f"u{u:02d}", who, field, v) for u, v in enumerate(vals.split()) if v != "."]
    return pd.DataFrame(rows, columns=["unit", "annotator", "field", "value"])


def k2011_matrix() -> np.ndarray:
    return np.array(
        [[np.nan if v == "." else float(v) for v in line.split(":")[1].split()] for line in K2011.splitlines()]
    )


@pytest.mark.parametrize(
    "level,expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_2011_at_every_level(level, expected):
    table = from_long(k2011_frame(), scales={"x": ("1", "2", "3", "4", "5")}, levels={"x": level})
    f = agreement_report(table, resamples=200).fields["x"]
    assert f.level == level
    assert f.alpha.value == pytest.approx(expected, abs=5e-4)
    assert f.alpha.low <= f.alpha.value <= f.alpha.high


def test_exact_fractions_and_other_coefficients():
    f = agreement_report(from_long(k2011_frame(), levels={"x": "nominal"}), resamples=0).fields["x"]
    assert f.alpha.value == pytest.approx(113 / 152, abs=1e-12)
    assert f.percent_agreement.value == pytest.approx(0.8182, abs=5e-5)
    assert f.ac1.value == pytest.approx(0.77544, abs=5e-6)
    assert f.fleiss_kappa_missing.value == pytest.approx(0.76117, abs=5e-6)
    # units carry 1 to 4 labels: the complete-data Fleiss kappa is undefined, with the reason
    assert f.fleiss_kappa.value is None and "different numbers of labels" in f.fleiss_kappa.undefined
    interval = from_long(k2011_frame(), scales={"x": tuple("12345")}, levels={"x": "interval"})
    assert agreement_report(interval, resamples=0).fields["x"].alpha.value == pytest.approx(951 / 1120, abs=1e-12)


def test_fleiss_wikipedia_example_and_complete_data_forms_agree():
    counts = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    assert st.fleiss_kappa(counts).value == pytest.approx(0.210, abs=5e-4)
    # with every unit rated by the same number of raters the missing-data form is Fleiss'
    assert st.coefficients(counts, counts.shape[1])[2].value == pytest.approx(st.fleiss_kappa(counts).value, abs=1e-12)


def _random_counts(rng, units, values, max_raters):
    m = rng.integers(1, max_raters + 1, size=units)
    codes = [rng.integers(0, values, size=k) for k in m]
    return np.array([np.bincount(c, minlength=values) for c in codes])


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_vectorised_alpha_equals_the_krippendorff_package(level):
    """The bootstrap's matrix product, with the observed multiplicities as weights, gives
    krippendorff.alpha exactly: the resampled alphas are the same statistic."""
    rng = np.random.default_rng(7)
    spec = FieldSpec("s", level, ("1", "2", "3", "4", "6"))
    for _ in range(5):
        counts = _random_counts(rng, 300, 5, 5)
        patterns, mult, inverse = st.distinct_rows(counts)
        assert (patterns[inverse] == counts).all()
        o = (mult @ st.unit_coincidences(patterns)).reshape(5, 5)
        mine = float(st.alpha_from_coincidences(spec, o))
        ref = krippendorff.alpha(value_counts=counts, value_domain=spec.numeric, level_of_measurement=level)
        assert mine == pytest.approx(ref, abs=1e-12)
        assert st.kripp_alpha(spec, counts).value == pytest.approx(ref, abs=1e-12)


def test_bootstrap_is_seeded_and_covers_the_estimate():
    rng = np.random.default_rng(3)
    spec = FieldSpec("p", "nominal", ("first", "second", "tie"))
    truth = rng.integers(0, 2, size=400)
    counts = np.array(
        [np.bincount(np.where(rng.random(3) < 0.8, t, rng.integers(0, 3, 3)), minlength=3) for t in truth]
    )
    a = st.bootstrap(spec, counts, resamples=500, seed=1)
    assert a == st.bootstrap(spec, counts, resamples=500, seed=1)
    assert a != st.bootstrap(spec, counts, resamples=500, seed=2)
    point = st.kripp_alpha(spec, counts).value
    assert a.alpha[0] < point < a.alpha[1] and a.alpha[1] - a.alpha[0] < 0.2


def test_undefined_cases_are_values_with_reasons():
    # one category only
    df = pd.DataFrame(
        [(u, a, "preference", "first") for u in "pq" for a in "abc"], columns=["unit", "annotator", "field", "value"]
    )
    f = agreement_report(from_long(df), resamples=50, min_shared=1).fields["preference"]
    assert f.alpha.value is None and "no variation" in f.alpha.undefined
    assert f.percent_agreement.value == 1.0
    assert f.fleiss_kappa.value is None and f.fleiss_kappa_missing.value is None
    assert all(c["kappa"].value is None for c in f.cohen)
    # a single label per pair
    df = pd.DataFrame(
        [("p", "a", "preference", "first"), ("q", "b", "preference", "second")],
        columns=["unit", "annotator", "field", "value"],
    )
    f = agreement_report(from_long(df), resamples=50).fields["preference"]
    for e in (f.alpha, f.percent_agreement, f.ac1, f.fleiss_kappa_missing):
        assert e.value is None and "two or more labels" in e.undefined
    assert f.fleiss_kappa.undefined == "every pair has a single label"
    d = f.alpha.as_dict()
    assert d == {"value": None, "undefined": "no pair has two or more labels"}


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_cohen_kappa_is_sklearns(level):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(11)
    spec = FieldSpec("s", level, tuple("abcd"))
    for _ in range(10):
        x = rng.integers(0, 4, size=60)
        y = np.where(rng.random(60) < 0.6, x, rng.integers(0, 3, size=60))
        ref = cohen_kappa_score(x, y, labels=np.arange(4), weights=None if level == "nominal" else "quadratic")
        assert st.cohen_kappa(x, y, spec).value == pytest.approx(ref, abs=1e-12)


# -- too few pairs for an interval -------------------------------------------------------------
def test_the_minimum_for_an_interval_is_stated_in_the_readme_and_the_help():
    import argparse
    import re
    from pathlib import Path

    from curate.commands import agreement as command

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    said = " ".join(readme.split())
    assert f"at least {st.MIN_BOOTSTRAP_PAIRS} pairs with two or more labels for an interval" in said
    assert "`MIN_BOOTSTRAP_PAIRS`" in said and '"undefined (too few pairs)"' in said
    p = argparse.ArgumentParser(prog="mmrb agreement")
    command.add_arguments(p)
    text = " ".join(p.format_help().split())
    assert re.search(rf"fewer than {st.MIN_BOOTSTRAP_PAIRS} pairs with two or more labels gets no interval", text)
    assert "undefined (too few pairs)" in text


def _pairs_frame(n_pairable: int, n_single: int = 0) -> pd.DataFrame:
    """n_pairable pairs labelled by a and b (they disagree on every third), plus pairs
    labelled by a alone."""
    rows = []
    for u in range(n_pairable):
        rows += [
            (f"p{u:02d}", "a", "preference", "first" if u % 2 else "second"),
            (
                f"p{u:02d}",
                "b",
                "preference",
                ("second" if u % 2 else "first") if u % 3 == 0 else ("first" if u % 2 else "second"),
            ),
        ]
    rows += [(f"s{u:02d}", "a", "preference", "first") for u in range(n_single)]
    return pd.DataFrame(rows, columns=["unit", "annotator", "field", "value"])


ONE_PAIR_WHY = "only 1 pair with two or more labels (at least 2 needed)"


def test_one_pair_gives_no_statistic_only_the_count_and_the_minimum():
    """Issue 24: one pair, three annotators split 2:1. Alpha was 0.000 (0 by construction: its
    expected disagreement is that pair's own), Fleiss -0.500, kappas 0.000: now every statistic
    is undefined, with the count and the minimum, in the JSON and in the text."""
    df = pd.DataFrame(
        [("p1", "a", "preference", "first"), ("p1", "b", "preference", "second"), ("p1", "c", "preference", "first")],
        columns=["unit", "annotator", "field", "value"],
    )
    rep = agreement_report(from_long(df), resamples=200, min_shared=1, per_category=True)
    assert st.MIN_PAIRABLE_PAIRS == 2  # the documented floor (curate/agreement/limits.py)
    for f in (rep.fields["preference"], rep.categories["(none)"].fields["preference"]):
        kappas = [c["kappa"] for c in f.cohen]
        assert len(kappas) == 3
        for e in (f.alpha, f.percent_agreement, f.ac1, f.fleiss_kappa, f.fleiss_kappa_missing, *kappas):
            assert e.value is None and e.undefined == ONE_PAIR_WHY and e.low is None and e.interval_undefined is None
        assert f.note == f"every statistic is undefined: {ONE_PAIR_WHY}"
    d = rep.as_dict()["fields"]["preference"]
    for key in ("krippendorff_alpha", "percent_agreement", "gwet_ac1", "fleiss_kappa", "fleiss_kappa_missing_data"):
        assert d[key] == {"value": None, "undefined": ONE_PAIR_WHY}, key
    assert d["note"] == f"every statistic is undefined: {ONE_PAIR_WHY}"
    text = render_text(rep)
    row = next(line for line in text.splitlines() if line.startswith("  preference "))
    assert row.split()[4:] == ["undefined", "-", "-", "-"]
    assert f"  preference: every statistic is undefined: {ONE_PAIR_WHY}" in text
    assert "0.000" not in text and "-0.500" not in text
    # the statistics themselves, called alone
    spec = FieldSpec("p", "nominal", ("first", "second", "tie"))
    counts = np.array([[2, 1, 0], [1, 0, 0]])  # a second pair with one label adds nothing
    assert st.kripp_alpha(spec, counts).undefined == ONE_PAIR_WHY
    assert {e.undefined for e in st.coefficients(counts, 3)} == {ONE_PAIR_WHY}
    assert st.fleiss_kappa(counts[:1]).undefined == ONE_PAIR_WHY
    # one shared pair for a Cohen kappa, when --min-shared goes below the floor
    two = _pairs_frame(4)
    two = two[~((two["unit"] != "p00") & (two["annotator"] == "b"))]  # b shares p00 alone with a
    two = pd.concat([two, two[two["annotator"] == "a"].assign(annotator="c")])
    cohen = {
        (c["a"], c["b"]): c["kappa"] for c in agreement_report(from_long(two), min_shared=1).fields["preference"].cohen
    }
    assert cohen["a", "b"].undefined == "only 1 shared pair (at least 2 needed)" and cohen["a", "c"].value == 1.0


def test_two_pairs_give_values_but_no_interval():
    """Two pairs, two annotators who disagree on both: values (2 is the floor of a statistic),
    but the bootstrap could only resample those two pairs: the interval is undefined."""
    df = pd.DataFrame(
        [
            ("p1", "a", "preference", "first"),
            ("p1", "b", "preference", "second"),
            ("p2", "a", "preference", "second"),
            ("p2", "b", "preference", "first"),
        ],
        columns=["unit", "annotator", "field", "value"],
    )
    rep = agreement_report(from_long(df), resamples=200)
    f = rep.fields["preference"]
    assert st.MIN_BOOTSTRAP_PAIRS == rep.min_pairs == 10  # the documented minimum
    for e, value in ((f.alpha, -0.5), (f.percent_agreement, 0.0), (f.ac1, -1 / 3)):
        assert e.value == pytest.approx(value) and e.low is None and e.high is None
        assert e.interval_undefined == "too few pairs"
    assert f.note is None and "note" not in rep.as_dict()["fields"]["preference"]
    assert str(f.alpha) == "-0.500 [undefined (too few pairs)]"
    assert f.alpha.as_dict() == {"value": -0.5, "ci95": None, "ci95_undefined": "too few pairs"}
    assert rep.as_dict()["bootstrap"]["min_pairs"] == 10
    text = render_text(rep)
    assert "-0.500 [undefined (too few pairs)]" in text
    assert "intervals are undefined below 10 pairs with two or more labels" in text
    # the bootstrap itself says why
    counts = np.array([[1, 1, 0]])
    assert st.bootstrap(FieldSpec("p", "nominal", ("first", "second", "tie")), counts).undefined == "too few pairs"


def test_identical_labels_say_why_alpha_fleiss_and_cohen_are_undefined():
    """Issue 24: every label 'first' on 12 pairs. Alpha, Fleiss and Cohen are undefined (right);
    percent agreement and AC1 are 1.000, and the report (JSON and text) says why both hold."""
    df = pd.DataFrame(
        [(f"p{u:02d}", a, "preference", "first") for u in range(12) for a in "abc"],
        columns=["unit", "annotator", "field", "value"],
    )
    rep = agreement_report(from_long(df), resamples=200, per_category=True)
    note = (
        "every pairable label is 'first': no variation, so Krippendorff's alpha, Fleiss' kappa and Cohen's "
        "kappa are undefined (each divides by the disagreement expected by chance, zero when a single value "
        "is used); percent agreement and Gwet's AC1 are still defined"
    )
    for f in (rep.fields["preference"], rep.categories["(none)"].fields["preference"]):
        assert f.alpha.value is None and "no variation" in f.alpha.undefined
        assert f.fleiss_kappa.value is None and f.fleiss_kappa_missing.value is None
        assert len(f.cohen) == 3 and all(c["kappa"].value is None for c in f.cohen)
        assert f.percent_agreement.value == 1.0 and f.ac1.value == 1.0
        assert f.note == note
    assert rep.as_dict()["fields"]["preference"]["note"] == note
    text = render_text(rep)
    assert f"  preference: {note}" in text
    row = next(line for line in text.splitlines() if line.startswith("  preference "))
    assert row.split()[4:] == ["undefined", "1.000", "1.000", "-"]
    # variation among the labels: no note
    df.loc[0, "value"] = "second"
    assert agreement_report(from_long(df), resamples=0).fields["preference"].note is None


@pytest.mark.parametrize(
    "n_pairable, n_single, defined",
    [
        (9, 0, False),
        (9, 5, False),  # a pair with one label adds nothing to agreement: not counted
        (10, 0, True),
        (12, 3, True),
    ],
)
def test_the_minimum_counts_pairs_with_two_or_more_labels(n_pairable, n_single, defined):
    rep = agreement_report(from_long(_pairs_frame(n_pairable, n_single)), resamples=200, per_category=True)
    for f in (rep.fields["preference"], rep.categories["(none)"].fields["preference"]):
        assert f.n_pairable == n_pairable
        for e in (f.alpha, f.percent_agreement, f.ac1):
            assert e.value is not None
            assert (e.low is not None) == defined and (e.high is not None) == defined
            assert e.interval_undefined == (None if defined else "too few pairs")


INTERVAL = re.compile(r"\[-?\d\.\d{3}, -?\d\.\d{3}\]")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hs.integers(0, 14).flatmap(
        lambda n: hs.tuples(hs.just(n), hs.lists(hs.sampled_from(["first", "second"]), min_size=2 * n, max_size=2 * n))
    ),
    hs.integers(0, 3),
)
def test_below_each_minimum_nothing_is_printed_and_from_it_the_figure_is(case, singles):
    """Every statistic needs MIN_PAIRABLE_PAIRS pairs with two or more labels, every interval
    MIN_BOOTSTRAP_PAIRS: below, the report holds a reason and the text prints no number (no
    interval); from them on, a value (unless no variation says why not) and an interval."""
    n, values = case
    rows = [(f"p{u:02d}", who, "preference", values[2 * u + k]) for u in range(n) for k, who in enumerate("ab")]
    rows += [(f"s{u}", "a", "preference", "tie") for u in range(singles)]  # one label: not pairable
    if not rows:
        return
    rep = agreement_report(from_long(pd.DataFrame(rows, columns=["unit", "annotator", "field", "value"])), resamples=50)
    f = rep.fields["preference"]
    row = next(line for line in render_text(rep).splitlines() if line.startswith("  preference "))
    estimates = (f.alpha, f.percent_agreement, f.ac1, f.fleiss_kappa_missing)
    if n < st.MIN_PAIRABLE_PAIRS:
        assert all(e.value is None and e.low is None for e in estimates)
        assert row.split()[4:] == ["undefined", "-", "-", "-"]
        return
    assert f.percent_agreement.value is not None and f.ac1.value is not None
    varied = len(set(values)) > 1
    assert (f.alpha.value is not None) == varied and (f.note is None) == varied
    enough = n >= st.MIN_BOOTSTRAP_PAIRS
    for e in (f.alpha, f.percent_agreement, f.ac1):
        if e.value is not None:
            assert (e.low is not None) == enough and e.interval_undefined == (None if enough else "too few pairs")
    assert bool(INTERVAL.search(row)) == (enough and varied)
    assert ("[undefined (too few pairs)]" in row) == (varied and not enough)


def test_the_minimum_can_be_lowered_and_is_per_category():
    df = _pairs_frame(12)
    df["category"] = ["big" if int(u[1:]) < 10 else "small" for u in df["unit"]]
    rep = agreement_report(from_long(df), resamples=200, per_category=True)
    assert rep.fields["preference"].alpha.low is not None  # 12 pairs overall
    assert rep.categories["big"].fields["preference"].alpha.low is not None  # 10
    assert rep.categories["small"].fields["preference"].percent_agreement.interval_undefined == "too few pairs"
    low = agreement_report(from_long(df), resamples=200, per_category=True, min_pairs=2)
    assert low.categories["small"].fields["preference"].percent_agreement.low is not None
    assert low.as_dict()["bootstrap"]["min_pairs"] == 2


# -- invariants ------------------------------------------------------------------------------
label_rows = hs.lists(
    hs.tuples(
        hs.integers(0, 12),
        hs.sampled_from("abcd"),
        hs.sampled_from(["first", "second", "tie"]),
        hs.sampled_from(["correct", "incorrect", "unsure"]),
        hs.sampled_from(["correct", "incorrect"]),
        hs.sampled_from("ABC"),
        hs.sampled_from("AB"),
        hs.sampled_from("xyz"),
    ),
    min_size=1,
    max_size=50,
    unique_by=lambda r: (r[0], r[1]),
)
# small enough that the invariants compare intervals, not only "too few pairs"
INVARIANT_MIN_PAIRS = 2


def _frame(rows, swap=False, rename=None):
    flip = {"first": "second", "second": "first", "tie": "tie"}
    out = []
    for u, a, pref, c1, c2, g1, g2, cat in rows:
        a = rename[a] if rename else a
        if swap:
            pref, c1, c2, g1, g2 = flip[pref], c2, c1, g2, g1
        unit = f"p{u:02d}"
        out += [
            (unit, a, "preference", pref, cat),
            (unit, a, "correctness_first", c1, cat),
            (unit, a, "correctness_second", c2, cat),
            (unit, a, "grade_first", g1, cat),
            (unit, a, "grade_second", g2, cat),
        ]
    df = pd.DataFrame(out, columns=["unit", "annotator", "field", "value", "category"])
    df["category"] = df.groupby("unit")["category"].transform("first")  # one category per pair
    return df


def _stats(f):
    return [
        f.alpha.value,
        f.alpha.low,
        f.alpha.high,
        f.alpha.interval_undefined,
        f.percent_agreement.value,
        f.percent_agreement.low,
        f.percent_agreement.high,
        f.percent_agreement.interval_undefined,
        f.ac1.value,
        f.ac1.low,
        f.ac1.high,
        f.ac1.interval_undefined,
        f.fleiss_kappa.value,
        f.fleiss_kappa_missing.value,
        f.n_pairs,
        f.n_pairable,
        f.n_labels,
        f.labels_per_pair,
        f.scale,
        f.level,
    ]


def _close(x, y):
    assert len(x) == len(y)
    for a, b in zip(x, y, strict=True):
        if isinstance(a, (str, tuple, dict)) or a is None or b is None:
            assert a == b
        else:
            assert a == pytest.approx(b, abs=1e-9)


SWAPPED = {
    "preference": "preference",
    "correctness_first": "correctness_second",
    "correctness_second": "correctness_first",
    "grade_first": "grade_second",
    "grade_second": "grade_first",
}


def _same_field(fa, fb):
    _close(_stats(fa), _stats(fb))
    assert fa.annotators == fb.annotators
    _close([c["kappa"].value for c in fa.cohen], [c["kappa"].value for c in fb.cohen])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(label_rows)
def test_swapping_responses_and_flipping_labels_changes_no_statistic(rows):
    """Swapping first/second and flipping every label that names a response (preference,
    correctness and grades of each response) swaps the fields' reports and changes no
    statistic: values, intervals (or why there is none), kappas, per category too."""
    kw = dict(resamples=100, min_shared=2, min_pairs=INVARIANT_MIN_PAIRS, per_category=True, pairs=True)
    a = agreement_report(from_long(_frame(rows)), **kw)
    b = agreement_report(from_long(_frame(rows, swap=True)), **kw)
    assert set(a.fields) == set(b.fields) == set(SWAPPED)
    for name, other in SWAPPED.items():
        _same_field(a.fields[name], b.fields[other])
    assert a.categories.keys() == b.categories.keys()
    for cat in a.categories:
        fa, fb = a.categories[cat].fields, b.categories[cat].fields
        assert {SWAPPED[k] for k in fa} == set(fb)
        for name in fa:
            _same_field(fa[name], fb[SWAPPED[name]])
    # per pair: the same agreement and entropy, the majority flipped
    flip = {"first": "second", "second": "first"}
    pa = a.pairs.assign(field=a.pairs["field"].astype(str).map(SWAPPED)).set_index(["pair", "field"]).sort_index()
    pb = b.pairs.assign(field=b.pairs["field"].astype(str)).set_index(["pair", "field"]).sort_index()
    assert pa[["n_labels", "agreement", "entropy"]].equals(pb[["n_labels", "agreement", "entropy"]])
    maj_a = [flip.get(v, v) if f == "preference" else v for (_, f), v in pa["majority"].items()]
    assert maj_a == pb["majority"].tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(label_rows, hs.permutations("wxyz"))
def test_relabelling_annotators_changes_nothing(rows, names):
    rename = dict(zip("abcd", names, strict=True))
    a = agreement_report(from_long(_frame(rows)), resamples=100, min_shared=2, min_pairs=INVARIANT_MIN_PAIRS)
    b = agreement_report(
        from_long(_frame(rows, rename=rename)), resamples=100, min_shared=2, min_pairs=INVARIANT_MIN_PAIRS
    )
    for name in a.fields:
        _close(_stats(a.fields[name]), _stats(b.fields[name]))
        assert {rename[k]: v for k, v in a.fields[name].annotators.items()} == b.fields[name].annotators
        ka = {frozenset((rename[c["a"]], rename[c["b"]])): (c["n"], c["kappa"].value) for c in a.fields[name].cohen}
        kb = {frozenset((c["a"], c["b"])): (c["n"], c["kappa"].value) for c in b.fields[name].cohen}
        assert ka.keys() == kb.keys()
        for k in ka:
            _close(ka[k], kb[k])


# -- per pair, majority, gold --------------------------------------------------------------------
def test_per_pair_majority_and_gold():
    rows = [
        ("p1", "a", "first"),
        ("p1", "b", "first"),
        ("p1", "c", "second"),
        ("p2", "a", "tie"),
        ("p2", "b", "first"),
        ("p3", "a", "second"),
        ("p3", "b", "second"),
        ("p3", "c", "second"),
        ("p1", "@gold", "first"),
        ("p3", "@gold", "first"),
    ]
    df = pd.DataFrame([(u, a, "preference", v) for u, a, v in rows], columns=["unit", "annotator", "field", "value"])
    rep = agreement_report(from_long(df), pairs=True, resamples=50)
    pairs = rep.pairs.set_index("pair")
    assert pairs.loc["p1", "majority"] == "first" and pairs.loc["p1", "agreement"] == pytest.approx(2 / 3)
    assert pairs.loc["p1", "entropy"] == pytest.approx(-(2 / 3) * np.log2(2 / 3) - (1 / 3) * np.log2(1 / 3), abs=1e-6)
    assert pd.isna(pairs.loc["p2", "majority"]) and pairs.loc["p2", "entropy"] == pytest.approx(1.0)
    assert pairs.loc["p3", "n_labels"] == 3 and pairs.loc["p3", "entropy"] == 0
    ann = rep.fields["preference"].annotators
    # c: on p1 the others say first (c said second); on p3 the others say second (agree)
    assert ann["c"]["majority"] == {"n": 2, "agreement": 0.5}
    # a: on p1 the others split (no majority, not counted); on p2 b alone says first, a said
    # tie; on p3 the others agree with a
    assert ann["a"]["majority"] == {"n": 2, "agreement": 0.5}
    assert "gold" not in ann["a"]  # accuracy on gold is the reliability section's (curate/quality)
    from curate.quality.reliability import table_report

    rel = table_report(from_long(df), per_category=False).fields["preference"]
    assert (rel["a"].gold.n, rel["a"].gold.k, rel["c"].gold.n, rel["c"].gold.k) == (2, 1, 2, 0)
    assert (rel["a"].majority.n, rel["a"].majority.k, rel["c"].majority.n, rel["c"].majority.k) == (2, 1, 2, 1)
    assert "@gold" not in rep.annotators


# -- files -------------------------------------------------------------------------------------------
def test_file_with_screen_sides_is_mapped_to_responses(tmp_path):
    f = tmp_path / "labels.csv"
    f.write_text(
        "item,annotator,field,value,left\n"
        "p1,a,preference,left,first\n"
        "p1,b,preference,right,second\n"  # b saw them swapped: right = first
        "p1,c,preference,first,\n"
        "p1,a,correctness_left,correct,first\n"
        "p1,b,correctness_left,incorrect,second\n"
    )
    t = read_labels_file(f)
    rep = agreement_report(t, pairs=True, resamples=0)
    assert rep.pairs.set_index("field").loc["preference", "agreement"] == 1.0
    assert rep.fields["correctness_first"].value_counts["correct"] == 1
    assert rep.fields["correctness_second"].value_counts["incorrect"] == 1


def test_file_errors_name_file_line_and_field(tmp_path, capsys):
    f = tmp_path / "labels.csv"
    f.write_text("item,annotator,field,value\np1,a,preference,first\np1,b,preference,left\n")
    with pytest.raises(InputError) as e:
        read_labels_file(f)
    assert f"{f}:3 field 'left'" in str(e.value)
    j = tmp_path / "labels.jsonl"
    j.write_text(
        '{"item": "p1", "annotator": "a", "field": "score", "value": 7}\n'
        '{"item": "p1", "annotator": "a", "field": "score", "value": 2}\nnot json\n'
    )
    with pytest.raises(InputError) as e:
        read_labels_file(j, scales={"score": ("1", "2", "3")})
    msg = str(e.value)
    assert f"{j}:3: {MALFORMED}: Expecting value at column 1" in msg  # the wording of every reader
    j.write_bytes(
        b'\xef\xbb\xbf{"item": "p1", "annotator": "a", "field": "score", "value": 2}\n'  # a BOM, as load_rows takes
        b'{"item": "p\xff", "annotator": "a", "field": "score", "value": 2}\n["p1"]\n'
    )
    with pytest.raises(InputError) as e:
        read_labels_file(j, scales={"score": ("1", "2", "3")})
    assert [(p.line, p.field) for p in e.value.problems] == [(2, "item"), (3, None)]
    assert "not valid UTF-8 (byte 0xff" in str(e.value) and "expected a JSON object, got list" in str(e.value)
    j.write_text(
        '{"item": "p1", "annotator": "a", "field": "score", "value": 7}\n'
        '{"item": "p1", "annotator": "a", "field": "score", "value": 2}\n'
    )
    with pytest.raises(InputError) as e:
        read_labels_file(j, scales={"score": ("1", "2", "3")})
    assert f"{j}:1 field 'value': '7' is not on the scale" in str(e.value)
    assert f"{j}:2 field 'value': second label by 'a'" in str(e.value)
    assert main(["agreement", "--labels", str(j), "--scale", "score"]) == 1
    assert "--scale 'score': expected FIELD=v1,v2" in capsys.readouterr().err


def test_csv_cells_are_read_as_the_csv_module_reads_them(tmp_path):
    f = tmp_path / "labels.csv"
    # a byte-order mark, quoted commas and line breaks, blank lines, padding, an empty value (no label)
    f.write_bytes(
        "\ufeffitem,annotator,field,value,category\n"
        '"p,1", a ,preference, first ,"multi\nline"\n\n'
        "p2,a,preference,,vqa\n"
        "p2,b,preference,second,vqa\n".encode()
    )
    t = read_labels_file(f)
    assert list(t.units) == ["p,1", "p2"] and t.annotators == ("a", "b")
    assert list(t.category) == ["multi\nline", "vqa"] and t.n_labels == 2
    f.write_text("item,annotator,field,value\n\n\n" + "p1,a,preference,first\n" * 2)
    with pytest.raises(InputError, match=f"{f}:3 field 'value': second label by 'a'"):
        read_labels_file(f)  # lines count records, as csv.DictReader numbered them


def test_csv_rows_that_do_not_fit_the_header_are_errors(tmp_path):
    f = tmp_path / "labels.csv"
    f.write_text("item,annotator,field,value\np1,a,preference,first\np1,b,preference\np1,c,note,a, b\n")
    with pytest.raises(InputError) as e:
        read_labels_file(f)
    assert [(p.line, p.message) for p in e.value.problems] == [
        (3, "3 fields where the header has 4"),
        (4, "5 fields where the header has 4"),
    ]
    f.write_text("item,annotator,field\np1,a,preference\n")
    with pytest.raises(InputError, match=f"{f}:1 field 'value': missing column"):
        read_labels_file(f)
    f.write_bytes(b"item,annotator,field,value\np1,a,preference,\xff\n")
    with pytest.raises(InputError, match=re.escape(f"{f}:2 field 'value': not valid UTF-8 (byte 0xff")):
        read_labels_file(f)
    f.write_text("item,annotator,field,value\n")
    with pytest.raises(MmrbError, match="no labels"):
        read_labels_file(f)


def test_cli_text_and_json(tmp_path, capsys):
    f = tmp_path / "k.csv"
    k2011_frame("score").rename(columns={"unit": "item"}).to_csv(f, index=False)
    assert (
        main(
            [
                "agreement",
                "--labels",
                str(f),
                "--scale",
                "score=1,2,3,4,5",
                "--level",
                "score=interval",
                "--json",
                "--resamples",
                "100",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    fs = out["fields"]["score"]
    assert fs["level"] == "interval" and fs["krippendorff_alpha"]["value"] == pytest.approx(0.849, abs=5e-4)
    assert len(fs["krippendorff_alpha"]["ci95"]) == 2 and len(out["pairs"]) == 12
    assert main(["agreement", "--labels", str(f), "--scale", "score=1,2,3,4,5", "--resamples", "100"]) == 0
    text = capsys.readouterr().out
    assert "score" in text and "ordinal" in text and "0.815" in text
    assert main(["agreement", "--labels", str(tmp_path / "none.csv")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_bench_quick_runs(tmp_path):
    """bench/agreement.py --quick: builds a small store, times the report, checks its anchors."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.agreement",
            "--quick",
            "--pairs",
            "300",
            "--resamples",
            "100",
            "--nltk-pairs",
            "100",
            "--cache",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
    )
    assert r.returncode == 0, r.stderr
    assert "full agreement report" in r.stdout and "NLTK AnnotationTask alpha" in r.stdout


def test_a_label_file_gets_the_reliability_section_with_its_gold_rows(tmp_path, capsys):
    from curate.cli import main

    f = tmp_path / "labels.csv"
    f.write_text(
        "item,annotator,field,value\n"
        "p1,a,preference,first\np1,b,preference,second\np1,@gold,preference,first\n"
        "p2,a,preference,second\np2,b,preference,second\np2,@gold,preference,first\n"
    )
    argv = ["agreement", "--labels", str(f), "--resamples", "10", "--min-n", "2", "--threshold", "0.7"]
    assert main([*argv, "--reliability"]) == 0
    out = capsys.readouterr().out
    # two gold pairs: the shares with their Wilson intervals, wide (issue 28: defined from one label on)
    assert "  a: gold 50.0% [9.5%, 90.5%] (n=2); majority 50.0% [9.5%, 90.5%] (n=2)" in out
    assert "ALERT b: gold 0.0% [0.0%, 65.8%] below 70.0% on preference (2 labels)" in out
    assert main(argv) == 0  # without --reliability: no Dawid-Skene fits, only a pointer to them
    out = capsys.readouterr().out
    assert "gold 50.0%" not in out and "ALERT" not in out and "--reliability or mmrb quality" in out
