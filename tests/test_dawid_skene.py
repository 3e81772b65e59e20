"""curate/quality/dawid_skene.py against crowd-kit (the reference it replaces): posteriors,
priors, confusion matrices, labels and reliabilities equal within 1e-6 on random labels (with
and without gold) and on MMRB2's three raters; the majority on codes against a plain count."""

from __future__ import annotations

import json
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from curate.quality.aggregate import DS_ITERATIONS, DS_TOLERANCE, aggregate_field, majority
from curate.quality.dawid_skene import dawid_skene
from tests.support.data import shared

TOL = 1e-6


def _crowdkit(frame: pd.DataFrame, gold: dict[str, str] | None = None):
    from crowdkit.aggregation import DawidSkene

    data = frame.rename(columns={"pair": "task", "annotator": "worker", "value": "label"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DawidSkene(n_iter=DS_ITERATIONS, tol=DS_TOLERANCE).fit(
            data, true_labels=pd.Series(gold, dtype=object) if gold else None
        )


def _ours(frame: pd.DataFrame, gold: dict[str, str] | None = None):
    pair, pairs = pd.factorize(frame["pair"], sort=True)
    ann, anns = pd.factorize(frame["annotator"], sort=True)
    value, values = pd.factorize(frame["value"], sort=True)
    known = np.full(len(pairs), -1)
    for p, v in (gold or {}).items():
        known[pairs.get_loc(p)] = values.get_loc(v)
    fit = dawid_skene(
        pair,
        ann,
        value,
        n_tasks=len(pairs),
        n_workers=len(anns),
        n_classes=len(values),
        gold=known if gold else None,
        n_iter=DS_ITERATIONS,
        tol=DS_TOLERANCE,
    )
    return fit, pairs, anns, values


def _reliability(ds) -> dict[str, float]:
    """crowd-kit's figures as reliability: sum over k of prior k * P(label k | true k)."""
    out: dict[str, float] = {}
    for (w, k), row in ds.errors_.iterrows():
        out[str(w)] = out.get(str(w), 0.0) + float(row[k]) * float(ds.priors_[k])
    return out


def assert_same(frame: pd.DataFrame, gold: dict[str, str] | None = None) -> None:
    ds = _crowdkit(frame, gold)
    fit, pairs, anns, values = _ours(frame, gold)
    assert len(ds.loss_history_) == fit.iterations
    np.testing.assert_allclose(fit.posteriors, ds.probas_.reindex(index=pairs, columns=values), atol=TOL, rtol=0)
    np.testing.assert_allclose(fit.priors, ds.priors_.reindex(values), atol=TOL, rtol=0)
    for (w, k), row in ds.errors_.iterrows():
        mine = fit.errors[anns.get_loc(w), values.get_loc(k)]
        np.testing.assert_allclose(mine, row.reindex(values), atol=TOL, rtol=0)
    # on an exact tie of posteriors crowd-kit takes the first value in its frame's column
    # order (an accident of pandas), ours the first in sorted order: compared where one leads
    top = np.sort(fit.posteriors, axis=1)
    clear = top[:, -1] - (top[:, -2] if top.shape[1] > 1 else 0.0) > 1e-9
    assert (values[fit.labels] == ds.labels_.reindex(pairs).to_numpy())[clear].all()
    theirs = _reliability(ds)
    got = aggregate_field(frame, "dawid-skene", gold=gold)
    assert got.reliability.keys() == theirs.keys()
    for a, r in theirs.items():
        assert got.reliability[a] == pytest.approx(r, abs=TOL)
    expected_final = {str(p): str(v) for p, v in ds.labels_.items()} | dict(gold or {})
    led = {str(p) for p in pairs[clear]} | set(gold or {})
    assert {p: v for p, v in got.final.items() if p in led} == {p: v for p, v in expected_final.items() if p in led}
    assert got.final.keys() == expected_final.keys()


@st.composite
def labelled(draw):
    """Up to 40 pairs, 1-5 annotators, 2-4 values; each annotator labels a pair or not; some
    pairs with gold (a value some label holds, as crowd-kit needs)."""
    n_pairs = draw(st.integers(1, 40))
    n_ann = draw(st.integers(1, 5))
    n_values = draw(st.integers(2, 4))
    rows = []
    for p in range(n_pairs):
        given = draw(st.lists(st.booleans(), min_size=n_ann, max_size=n_ann))
        given[draw(st.integers(0, n_ann - 1))] = True  # every pair has a label
        for a in range(n_ann):
            if given[a]:
                rows.append((f"p{p:02d}", f"ann{a}", f"v{draw(st.integers(0, n_values - 1))}"))
    frame = pd.DataFrame(rows, columns=["pair", "annotator", "value"]).astype(object)
    gold = {}
    if draw(st.booleans()):
        for p, part in frame.groupby("pair"):
            if draw(st.integers(0, 4)) == 0:
                gold[str(p)] = str(part["value"].iloc[draw(st.integers(0, len(part) - 1))])
    return frame, gold


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labelled())
def test_equal_to_crowdkit_on_random_labels(case) -> None:
    frame, gold = case
    assert_same(frame, gold or None)


def test_equal_to_crowdkit_seeded_larger() -> None:
    """500 pairs of five annotators of differing accuracy on three values, 2% gold."""
    rng = np.random.default_rng(28)
    truth = rng.integers(0, 3, 500)
    rows = []
    for k, acc in enumerate((0.9, 0.8, 0.7, 0.6, 0.4)):
        wrong = (truth + rng.integers(1, 3, 500)) % 3
        code = np.where(rng.random(500) < acc, truth, wrong)
        keep = rng.random(500) < 0.8
        rows += [(f"p{n:03d}", f"a{k}", f"v{c}") for n, (c, kept) in enumerate(zip(code, keep, strict=True)) if kept]
    frame = pd.DataFrame(rows, columns=["pair", "annotator", "value"]).astype(object)
    pairs = sorted(set(frame["pair"]))
    gold = {p: f"v{truth[int(p[1:])]}" for p in pairs[::50]}
    assert_same(frame, gold)


def _mmrb2_frames() -> dict[str, pd.DataFrame]:
    """MMRB2's real labels: the 1-6 score of t2i, edit and interleaved (six classes), and the
    reasoning task's grade of the first response; raters are positions 1-3 on each pair."""
    out = {}
    for task in ("t2i", "edit", "interleaved"):
        raw = json.loads(shared(f"mmrb2/{task}_response_only.json").read_text())["pairs"]
        rows = [(p["id"], f"rater{i}", str(s)) for p in raw for i, s in enumerate(p["human_annotations"], 1)]
        out[task] = pd.DataFrame(rows, columns=["pair", "annotator", "value"]).astype(object)
    raw = json.loads(shared("mmrb2/reasoning_response_only.json").read_text())["pairs"]
    rows = [
        (p["id"], f"rater{i}", str(g))
        for p in raw
        for i, g in enumerate((p["human_annotations"] or {}).get("response_a_ratings") or [], 1)
    ]
    out["reasoning"] = pd.DataFrame(rows, columns=["pair", "annotator", "value"]).astype(object)
    return out


def test_equal_to_crowdkit_on_mmrb2() -> None:
    frames = _mmrb2_frames()
    for task, frame in frames.items():
        assert len(frame) > 300, task
        assert_same(frame)
    # and with gold: every twentieth pair's first rating taken as known
    frame = frames["t2i"]
    firsts = frame.groupby("pair")["value"].first()
    assert_same(frame, {str(p): str(v) for p, v in firsts.iloc[::20].items()})


def test_gold_value_no_label_holds_is_a_class() -> None:
    """crowd-kit would add a column of missing values; here the pair is that class."""
    frame = pd.DataFrame(
        [("p1", "a", "first"), ("p1", "b", "first"), ("p2", "a", "second"), ("p2", "b", "first")],
        columns=["pair", "annotator", "value"],
    ).astype(object)
    got = aggregate_field(frame, "dawid-skene", gold={"p2": "tie"})
    assert got.final == {"p1": "first", "p2": "tie"}
    assert got.from_gold == 1
    assert all(0.0 <= r <= 1.0 for r in got.reliability.values())


@settings(max_examples=60, deadline=None)
@given(labelled())
def test_majority_on_codes_is_the_unique_mode(case) -> None:
    frame, _ = case
    expected = {}
    for p, part in frame.groupby("pair"):
        top = Counter(part["value"]).most_common()
        if len(top) == 1 or top[0][1] > top[1][1]:
            expected[str(p)] = top[0][0]
    assert majority(frame) == expected
    assert aggregate_field(frame, "majority").final == expected


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(labelled())
def test_majority_reliability_equals_crowdkit(case) -> None:
    from crowdkit.aggregation import MajorityVote

    frame, _ = case
    # on a tie crowd-kit takes the first value in its pandas frame's column order, an accident
    # of pandas; ours takes the first in sorted order: compared where no pair is tied
    assume(set(majority(frame)) == set(frame["pair"]))
    data = frame.rename(columns={"pair": "task", "annotator": "worker", "value": "label"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skills = MajorityVote().fit(data).skills_
    got = aggregate_field(frame, "majority").reliability
    assert got == pytest.approx({str(k): float(v) for k, v in skills.items()}, abs=1e-12)


def test_patterns_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The EM over distinct label patterns equals the EM over every task (the compression
    turned off), with gold on some pairs and a worker labelling a pair twice."""
    import curate.quality.dawid_skene as D

    rng = np.random.default_rng(7)
    rows = [(f"p{int(t)}", f"a{int(w)}", f"v{int(v)}") for t, w, v in rng.integers(0, [60, 4, 3], size=(400, 3))]
    frame = pd.DataFrame(rows, columns=["pair", "annotator", "value"]).astype(object)
    gold = {"p1": "v0", "p2": "v2", "p3": "v0"}
    assert_same(frame, gold)  # crowd-kit counts a repeated label twice, as here
    packed, *_ = _ours(frame, gold)
    monkeypatch.setattr(D, "DENSE_LIMIT", 0)
    plain, *_ = _ours(frame, gold)
    assert plain.iterations == packed.iterations
    np.testing.assert_allclose(packed.posteriors, plain.posteriors, atol=1e-12, rtol=0)
    np.testing.assert_allclose(packed.errors, plain.errors, atol=1e-12, rtol=0)
    assert (packed.labels == plain.labels).all()


def test_bench_quick_runs() -> None:
    """bench/quality.py --quick: both methods run in their children and the figures print."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.quality", "--quick", "--repeat", "1"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "ratio dawid-skene / majority: wall" in proc.stdout
    assert "30,000 labels" in proc.stdout


def test_each_bootstrap_resample_is_the_fit_of_its_resampled_pairs() -> None:
    """The batched EM over resamples gives, for each, the reliability of a fit to that
    resample written out (a pair drawn k times as k pairs), gold kept on its pairs."""
    from curate.quality.dawid_skene import _patterns, bootstrap_reliability

    rng = np.random.default_rng(3)
    n_tasks, n_workers, n_classes = 30, 4, 3
    task = np.repeat(np.arange(n_tasks), n_workers)
    worker = np.tile(np.arange(n_workers), n_tasks)
    keep = rng.random(len(task)) < 0.7
    keep[::n_workers] = True  # every pair keeps a label
    task, worker = task[keep], worker[keep]
    value = rng.integers(0, n_classes, len(task))
    gold = np.full(n_tasks, -1)
    gold[[2, 9]] = [1, 0]
    shape = dict(n_tasks=n_tasks, n_workers=n_workers, n_classes=n_classes)
    draws = bootstrap_reliability(task, worker, value, **shape, gold=gold, resamples=5, seed=11)
    # a resample draws how many pairs of each label pattern it holds (pairs alike in labels
    # and gold), each pattern with its share of the pairs: any of its pairs stands for it
    of_task, size, _ = _patterns(task, worker * n_classes + value, n_tasks, n_workers * n_classes, gold)
    assert len(size) < n_tasks  # some pairs share a pattern: the draws are not per pair
    first = np.array([np.flatnonzero(of_task == p)[0] for p in range(len(size))])
    drawn = np.random.default_rng(11).multinomial(n_tasks, size / n_tasks, size=5)
    for r in range(5):
        copies = np.repeat(first, drawn[r])  # the new pairs, each an old one
        at = [np.flatnonzero(task == t) for t in copies]
        new_task = np.concatenate([np.full(len(i), n) for n, i in enumerate(at)])
        rows = np.concatenate(at)
        present = np.unique(worker[rows])
        w_code = np.searchsorted(present, worker[rows])
        fit = dawid_skene(
            new_task,
            w_code,
            value[rows],
            n_tasks=len(copies),
            n_workers=len(present),
            n_classes=n_classes,
            gold=gold[copies],
        )
        expected = np.full(n_workers, np.nan)
        expected[present] = fit.reliability()
        np.testing.assert_allclose(draws[r], expected, atol=1e-9, rtol=0)


def test_reliability_intervals_are_seeded_and_undefined_on_too_few_pairs() -> None:
    rng = np.random.default_rng(5)
    rows = [(f"p{p:02d}", a, f"v{int(rng.integers(0, 2))}") for p in range(40) for a in ("ann", "bea")]
    rows += [(f"p{p:02d}", "cy", "v0") for p in range(5)]  # five pairs: below the floor
    frame = pd.DataFrame(rows, columns=["pair", "annotator", "value"]).astype(object)
    got = aggregate_field(frame, "dawid-skene", field_name="preference", intervals=True)
    again = aggregate_field(frame, "dawid-skene", field_name="preference", intervals=True)
    assert got.intervals == again.intervals
    assert got.intervals["cy"].low is None and got.intervals["cy"].undefined == "too few pairs"
    for a in ("ann", "bea"):
        span = got.intervals[a]
        assert span.low is not None and span.high is not None
        assert 0.0 <= span.low <= span.high <= 1.0
    assert aggregate_field(frame, "dawid-skene").intervals == {}  # only when asked
    other = aggregate_field(frame, "dawid-skene", field_name="correctness_first", intervals=True)
    assert other.intervals["ann"] != got.intervals["ann"]  # each field its own draws


def test_the_report_the_table_and_the_json_carry_the_interval() -> None:
    from annotate import admin
    from curate.quality.frames import as_frame
    from curate.quality.reliability import reliability_report

    rows = [
        (f"p{i:02d}", who, "preference", ("first", "second")[(i * (1 + n)) % 3 == 0])
        for i in range(14)
        for n, who in enumerate(("ann", "bea"))
    ]
    rows += [("p00", "cat", "preference", "first")]  # cat: one pair
    report = reliability_report(as_frame(rows).assign(control=False, category="vqa"), {})
    figs = report.fields["preference"]
    assert figs["cat"].model_interval is not None and figs["cat"].model_interval.undefined == "too few pairs"
    span = figs["ann"].model_interval
    assert span is not None and span.low is not None and span.high is not None
    assert report.as_dict()["fields"]["preference"]["ann"]["model_interval"]["low"] == span.low
    text = "\n".join(report.lines())
    assert f"dawid-skene {figs['ann'].model:.3f} [{span.low:.3f}, {span.high:.3f}] (n=14)" in text
    assert f"dawid-skene {figs['cat'].model:.3f} [undefined (too few pairs)] (n=1)" in text
    table = admin.quality_table(admin.quality_frame(report)).frame.set_index("Annotator")
    assert table.loc["cat", "Bootstrap interval (95%)"] == "too few pairs"
    assert table.loc["ann", "Bootstrap interval (95%)"] == f"[{100 * span.low:.1f}%, {100 * span.high:.1f}%]"


@given(
    st.integers(1, 10),
    st.lists(st.integers(1, 6), min_size=1, max_size=3),
    st.sampled_from(["C", "F", "swapped"]),
    st.integers(0, 2**32 - 1),
)
@settings(max_examples=60, deadline=None)
def test_the_short_axis_reductions_are_numpys_bit_for_bit(n_classes, shape, order, seed) -> None:
    """The EM's max and sum over the classes (slice by slice, for speed) equal numpy's own
    reductions exactly, whatever the layout: the fits' numbers do not move."""
    from curate.quality.dawid_skene import _last_max, _last_sum

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*shape, n_classes)) * 10.0 ** rng.integers(-8, 8, (*shape, n_classes))
    if order == "F":
        x = np.asfortranarray(x)
    elif order == "swapped" and x.ndim > 2:
        x = np.swapaxes(x, 0, 1)
    assert np.array_equal(_last_sum(x), x.sum(axis=-1, keepdims=True))
    assert np.array_equal(_last_max(x), x.max(axis=-1, keepdims=True))


def test_drawing_patterns_gives_the_intervals_of_drawing_pairs() -> None:
    """Old against new: the bootstrap drew every pair (a multinomial over the pairs, then
    counted per pattern); it now draws the patterns' counts. Same distribution, other draws:
    on a few thousand pairs of five annotators both intervals agree within resampling noise."""
    from curate.quality.dawid_skene import _em, _patterns_matrix, bootstrap_reliability

    rng = np.random.default_rng(8)
    n_tasks, n_workers, n_classes = 3000, 5, 3
    truth = rng.integers(0, n_classes, n_tasks)
    task = np.repeat(np.arange(n_tasks), 3)
    worker = np.concatenate([rng.choice(n_workers, 3, replace=False) for _ in range(n_tasks)])
    right = rng.random(len(task)) < np.array([0.9, 0.8, 0.75, 0.7, 0.55])[worker]
    value = np.where(right, truth[task], rng.integers(0, n_classes, len(task)))
    shape = dict(n_tasks=n_tasks, n_workers=n_workers, n_classes=n_classes)
    new = bootstrap_reliability(task, worker, value, **shape, resamples=400, seed=1)
    of_task, size, A, _ = _patterns_matrix(task, worker * n_classes + value, n_tasks, n_workers * n_classes, None)
    drawn = np.random.default_rng(2).multinomial(n_tasks, np.full(n_tasks, 1 / n_tasks), size=400)
    sizes = np.stack([np.bincount(of_task, weights=d, minlength=len(size)) for d in drawn])
    _, priors, errors, _ = _em(A, sizes, None, n_workers, n_classes, DS_ITERATIONS, DS_TOLERANCE)
    old = np.einsum("rwc,rc->rw", np.diagonal(errors, axis1=2, axis2=3), priors)
    for w in range(n_workers):
        lo_new, hi_new = np.percentile(new[:, w], [2.5, 97.5])
        lo_old, hi_old = np.percentile(old[:, w], [2.5, 97.5])
        width = hi_old - lo_old
        assert abs(lo_new - lo_old) < 0.25 * width and abs(hi_new - hi_old) < 0.25 * width, (w, lo_new, lo_old)
        assert 0.75 < (hi_new - lo_new) / width < 1.33


def test_a_replicate_of_the_batched_em_is_its_own_fit_bit_for_bit() -> None:
    """The batched EM computes only the replicates still running; each one's figures are
    those of an EM of it alone, to the bit, whether its batch mates stop before or after it."""
    from curate.quality.dawid_skene import _em, _patterns_matrix

    rng = np.random.default_rng(4)
    n_tasks, n_workers, n_classes = 400, 4, 3
    task = np.repeat(np.arange(n_tasks), 3)
    worker = rng.integers(0, n_workers, len(task))
    value = rng.integers(0, n_classes, len(task))  # noise: replicates stop at very different steps
    _, size, A, _ = _patterns_matrix(task, worker * n_classes + value, n_tasks, n_workers * n_classes, None)
    sizes = rng.multinomial(n_tasks, size / n_tasks, size=12).astype(float)
    batch = _em(A, sizes, None, n_workers, n_classes, DS_ITERATIONS, DS_TOLERANCE)
    assert len(set(batch[3].tolist())) > 1  # they did stop at different steps
    for r in range(len(sizes)):
        alone = _em(A, sizes[r : r + 1], None, n_workers, n_classes, DS_ITERATIONS, DS_TOLERANCE)
        for got, want in zip(batch, alone, strict=True):
            assert np.array_equal(got[r], want[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_fit_and_its_bootstrap_on_shared_patterns_are_those_made_alone(seed) -> None:
    """The Quality page makes a field's label patterns once for its fit and its bootstrap:
    the same numbers to the bit as each making its own."""
    from curate.quality.dawid_skene import bootstrap_reliability, label_patterns

    rng = np.random.default_rng(seed)
    n_tasks, n_workers, n_classes = 60, 5, 3
    task = np.repeat(np.arange(n_tasks), 3)
    worker = np.concatenate([rng.choice(n_workers, 3, replace=False) for _ in range(n_tasks)])
    value = rng.integers(0, n_classes, len(task))
    gold = np.where(rng.random(n_tasks) < 0.2, rng.integers(0, n_classes, n_tasks), -1)
    shape = dict(n_tasks=n_tasks, n_workers=n_workers, n_classes=n_classes)
    shared = label_patterns(task, worker, value, **shape, gold=gold)
    alone, with_shared = (dawid_skene(task, worker, value, **shape, gold=gold, patterns=p) for p in (None, shared))
    for name in ("posteriors", "priors", "errors", "labels"):
        assert np.array_equal(getattr(alone, name), getattr(with_shared, name))
    assert alone.iterations == with_shared.iterations
    draws = [
        bootstrap_reliability(task, worker, value, **shape, gold=gold, resamples=20, seed=seed, patterns=p)
        for p in (None, shared)
    ]
    assert np.array_equal(draws[0], draws[1], equal_nan=True)
