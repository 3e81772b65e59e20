"""Agreement on the store (both backends) and on the real MMRB2 three-annotator labels."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from curate.agreement import agreement_report, from_long, from_store, read_labels_file
from curate.model import Annotator, Candidate, Item, Label, Pair
from tests.support.data import shared

MMRB2 = ("t2i", "edit", "interleaved", "reasoning")


def _mmrb2_long(tmp_path):
    """MMRB2 ground truth as a long table: the 1-6 score (t2i/edit/interleaved; high = A
    better) and the reasoning letter grades of each response. Annotator identities are not
    published, so the three positions stand in for annotators."""
    rows = []
    raw = {}
    for name in MMRB2:
        pairs = json.loads(shared(f"mmrb2/{name}_response_only.json").read_text())["pairs"]
        raw[name] = pairs
        for p in pairs:
            h = p["human_annotations"]
            if isinstance(h, list):
                rows += [
                    dict(item=p["id"], annotator=f"r{k}", field="score", value=v, category=name)
                    for k, v in enumerate(h)
                ]
            else:
                for side, key in (("first", "response_a_ratings"), ("second", "response_b_ratings")):
                    rows += [
                        dict(item=p["id"], annotator=f"r{k}", field=f"grade_{side}", value=v, category=name)
                        for k, v in enumerate(h.get(key, []))
                    ]
    path = tmp_path / "mmrb2_labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, raw


def test_mmrb2_real_labels(tmp_path):
    path, raw = _mmrb2_long(tmp_path)
    scales = {"score": tuple("123456"), "grade_first": ("C", "B", "A"), "grade_second": ("C", "B", "A")}
    table = read_labels_file(path, scales=scales)
    rep = agreement_report(table, per_category=True, resamples=300)
    score = rep.fields["score"]
    # independent reference: the krippendorff package on the raw 3 x 3000 matrix
    scored = [p for n in ("t2i", "edit", "interleaved") for p in raw[n]]
    matrix = np.array([p["human_annotations"] for p in scored], dtype=float).T
    ref = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert score.level == "ordinal" and score.n_pairs == 3000 and score.labels_per_pair == {3: 3000}
    assert score.alpha.value == pytest.approx(ref, abs=1e-12)
    assert score.alpha.low < score.alpha.value < score.alpha.high
    # complete data (three labels everywhere): statsmodels' Fleiss is defined and is ours
    table_counts, _ = aggregate_raters(matrix.T.astype(int))
    assert score.fleiss_kappa.value == pytest.approx(fleiss_kappa(table_counts), abs=1e-12)
    assert score.fleiss_kappa_missing.value == pytest.approx(score.fleiss_kappa.value, abs=1e-12)
    # per category, against the package on that category's matrix
    for name in ("t2i", "edit", "interleaved"):
        m = np.array([p["human_annotations"] for p in raw[name]], dtype=float).T
        got = rep.categories[name].fields["score"].alpha
        assert got.value == pytest.approx(
            krippendorff.alpha(reliability_data=m, level_of_measurement="ordinal"), abs=1e-12
        )
    # reasoning grades: pairs without grades are missing, not zero; three letters where present
    g = rep.fields["grade_first"]
    n_graded = sum(1 for p in raw["reasoning"] if p["human_annotations"].get("response_a_ratings"))
    assert g.n_pairs == n_graded and g.scale == ("C", "B", "A")
    grades = np.array(
        [
            [{"C": 0, "B": 1, "A": 2}[v] for v in p["human_annotations"]["response_a_ratings"]]
            for p in raw["reasoning"]
            if p["human_annotations"].get("response_a_ratings")
        ],
        dtype=float,
    ).T
    assert g.alpha.value == pytest.approx(
        krippendorff.alpha(reliability_data=grades, level_of_measurement="ordinal"), abs=1e-12
    )
    assert "score" not in rep.categories["reasoning"].fields  # no score labels there: left out


def test_mmrb2_score_is_consistent_with_chosen(tmp_path):
    """Per-pair summaries on real data: MMRB2's chosen is A exactly when the mean score is
    above 3.5, so a unanimous pair's majority score sits on the chosen side."""
    path, raw = _mmrb2_long(tmp_path)
    table = read_labels_file(path, scales={"score": tuple("123456")})
    pairs = agreement_report(table, pairs=True, resamples=0).pairs
    score = pairs[pairs.field == "score"].set_index("pair")
    chosen = {p["id"]: p["chosen"] for n in ("t2i", "edit", "interleaved") for p in raw[n]}
    unanimous = score[score.agreement == 1.0]
    assert len(unanimous) > 100 and (unanimous.entropy == 0).all()
    for pid, r in unanimous.iterrows():
        assert (int(r.majority) > 3.5) == (chosen[pid] == "A")


# -- the store ---------------------------------------------------------------------------------
def _seed_store(store):
    store.add_items([Item(id=f"i{n}", prompt="q", category="vqa" if n % 2 else "safety") for n in range(6)])
    store.add_candidates([Candidate(id=f"i{n}/{m}", item_id=f"i{n}", model=m, text=m) for n in range(6) for m in "ab"])
    store.add_pairs(
        [
            Pair(
                id=f"p{n}",
                item_id=f"i{n}",
                first_id=f"i{n}/a",
                second_id=f"i{n}/b",
                origin="test",
                is_gold=n == 0,
                known_preference="first" if n == 0 else None,
                auto_first="correct" if n == 0 else None,
            )
            for n in range(6)
        ]
    )
    prefs = {"x": "fffstf", "y": "ffssst", "z": "fsfs.f"}
    rows = []
    for who, ps in prefs.items():
        store.add_annotator(Annotator(who))
        for n, c in enumerate(ps):
            if c == ".":
                continue
            pref = {"f": "first", "s": "second", "t": "tie"}[c]
            lab = Label(
                f"p{n}",
                who,
                correctness_first="correct" if c == "f" else "incorrect",
                correctness_second="unsure" if n == 3 else "correct",
                preference=pref,
                ratings={"score": (n + len(who)) % 4 + 1} if n != 5 else {},
            )
            store.save_label(lab)
            rows += [
                (f"p{n}", who, "preference", pref),
                (f"p{n}", who, "correctness_first", lab.correctness_first),
                (f"p{n}", who, "correctness_second", lab.correctness_second),
            ]
            if lab.ratings:
                rows.append((f"p{n}", who, "score", str(lab.ratings["score"])))
    # a draft is not a label yet
    store.add_annotator(Annotator("w"))
    store.save_label(Label("p1", "w", preference="tie", status="draft"))
    df = pd.DataFrame(rows, columns=["unit", "annotator", "field", "value"])
    df["category"] = df["unit"].map(lambda u: "vqa" if int(u[1:]) % 2 else "safety")
    return df


@pytest.mark.both_backends
def test_store_reads_like_the_equivalent_long_table(store):
    df = _seed_store(store)
    table = from_store(store)
    assert list(table.units) == [f"p{n}" for n in range(6)] and table.annotators == ("x", "y", "z")
    # "score" is MMRB2's known 1-6 scale (every value here fits it)
    assert table.fields["score"].spec.level == "ordinal" and table.fields["score"].spec.values == tuple("123456")
    assert table.gold == {"preference": {0: 0}, "correctness_first": {0: 0}}
    expected = from_long(df, scales={"score": tuple("123456")})  # a file states the scale itself
    # six pairs: lower the interval minimum so the intervals are compared too
    a = agreement_report(table, per_category=True, pairs=True, resamples=200, min_shared=3, min_pairs=2).as_dict()
    b = agreement_report(expected, per_category=True, pairs=True, resamples=200, min_shared=3, min_pairs=2).as_dict()
    for d in (a, b):
        d.pop("source")
        for fields in [d["fields"]] + [c["fields"] for c in d["categories"].values()]:
            for f in fields.values():
                f.pop("scale_source")  # "known" from the store, "given" for the file
    assert a == b
    assert a["fields"]["preference"]["krippendorff_alpha"]["value"] is not None
    assert set(a["categories"]) == {"safety", "vqa"}


def _labels_csv(store, path):
    """The store's submitted labels and gold values as a ``--labels`` CSV written from the
    store's records; annotator y's preferences and correctness as screen sides (y saw the
    second response on the left), which the reader maps back."""
    import csv

    pairs = {p.id: p for p in store.pairs()}
    category = {p.id: store.get_item(p.item_id).category for p in pairs.values()}
    rows = []
    for lab in store.labels():
        cat = category[lab.pair_id]
        if lab.annotator == "y":
            screen = {"first": "right", "second": "left"}.get(lab.preference, lab.preference)
            rows += [
                (lab.pair_id, "y", "preference", screen, "second", cat),
                (lab.pair_id, "y", "correctness_left", lab.correctness_second, "second", cat),
                (lab.pair_id, "y", "correctness_right", lab.correctness_first, "second", cat),
            ]
        else:
            rows += [
                (lab.pair_id, lab.annotator, f, getattr(lab, f), "", cat)
                for f in ("preference", "correctness_first", "correctness_second")
            ]
        rows += [(lab.pair_id, lab.annotator, k, str(v), "", cat) for k, v in lab.ratings.items()]
    for p in pairs.values():
        if p.is_gold:
            rows += [
                (p.id, "@gold", f, v, "", category[p.id])
                for f, v in (
                    ("preference", p.known_preference),
                    ("correctness_first", p.auto_first),
                    ("correctness_second", p.auto_second),
                )
                if v
            ]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item", "annotator", "field", "value", "left", "category"])
        w.writerows(rows[::-1])  # another order than the store's
    return path


@pytest.mark.both_backends
def test_the_same_labels_from_the_store_and_from_a_csv_give_identical_statistics(store, tmp_path):
    _seed_store(store)
    from_db = from_store(store)
    from_file = read_labels_file(_labels_csv(store, tmp_path / "labels.csv"))
    assert list(from_file.units) == list(from_db.units) and from_file.annotators == from_db.annotators
    assert list(from_file.category) == list(from_db.category) and from_file.gold == from_db.gold
    kw = dict(per_category=True, pairs=True, resamples=200, min_shared=3, min_pairs=2)
    a, b = agreement_report(from_db, **kw).as_dict(), agreement_report(from_file, **kw).as_dict()
    assert a.pop("source") != b.pop("source")
    assert a == b  # every statistic, interval, per-annotator, per-category and per-pair figure
    from curate.quality.reliability import store_report, table_report

    # the reliability section from the file and from the store (the figures of mmrb quality)
    rel_db = store_report(store, min_n=1).as_dict()
    rel_file = table_report(from_file, min_n=1).as_dict()
    rel_file["fields"] = {k: v for k, v in rel_file["fields"].items() if k in rel_db["fields"]}
    rel_file["categories"] = {
        c: {k: v for k, v in fs.items() if k in rel_db["fields"]} for c, fs in rel_file["categories"].items()
    }
    rel_file["alerts"] = [x for x in rel_file["alerts"] if x["field"] in rel_db["fields"]]
    assert rel_db["fields"]["preference"]["x"]["gold"]["n"] == 1
    assert _rounded(rel_db) == _rounded(rel_file)  # Dawid-Skene's last bits follow the row order


def _rounded(x):
    if isinstance(x, float):
        return round(x, 9)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_rounded(v) for v in x]
    return x


@pytest.mark.both_backends
def test_store_values_containing_the_column_separator_fall_back_to_rows(store, monkeypatch):
    """Columns come back as one delimited string each; a value containing the separator
    (here "p", in every pair id) must not shift labels between pairs."""
    from curate.store import columns

    _seed_store(store)
    fast = from_store(store)
    monkeypatch.setattr(columns, "_SEP", "p")
    slow = from_store(store)
    assert list(slow.units) == list(fast.units) and slow.annotators == fast.annotators
    assert list(slow.category) == list(fast.category) and slow.gold == fast.gold
    a = agreement_report(fast, per_category=True, pairs=True, resamples=50, min_shared=3, min_pairs=2).as_dict()
    b = agreement_report(slow, per_category=True, pairs=True, resamples=50, min_shared=3, min_pairs=2).as_dict()
    assert a == b and a["fields"]["score"]["n_labels"] > 0


@pytest.mark.both_backends
def test_store_with_an_explicit_scale_and_an_empty_store(store):
    empty = agreement_report(from_store(store), resamples=10, per_category=True, pairs=True)
    assert empty.fields == {} and empty.n_labels == 0 and empty.categories == {} and len(empty.pairs) == 0
    _seed_store(store)
    t = from_store(store, scales={"score": ("1", "2", "3", "4", "5", "6")}, levels={"preference": "nominal"})
    assert t.fields["score"].spec.values == tuple("123456") and t.fields["score"].spec.scale_source == "given"


def test_store_letter_grades_use_the_known_ordinal_scale(sqlite_store):
    s = sqlite_store
    s.add_items([Item(id="i", prompt="q", category="reasoning")])
    s.add_candidates([Candidate(id=f"i/{m}", item_id="i", model=m, text=m) for m in "ab"])
    s.add_pairs([Pair(id=f"p{n}", item_id="i", first_id="i/a", second_id="i/b", origin="t") for n in range(3)])
    for n, grades in enumerate(["AAB", "BCC", "AAA"]):
        for who, g in zip("xyz", grades, strict=True):
            s.ensure_annotator(who)
            s.save_label(Label(f"p{n}", who, ratings={"grade_first": g, "other": g.lower()}))
    t = from_store(s)
    assert t.fields["grade_first"].spec.level == "ordinal" and t.fields["grade_first"].spec.scale_source == "known"
    assert t.fields["grade_first"].spec.values == ("C", "B", "A")  # curate.model.MMRB2_GRADES, low to high
    assert t.fields["other"].spec.level == "nominal"  # unknown text: nominal unless --scale is given
    rep = agreement_report(t, resamples=0)
    ref = krippendorff.alpha(
        reliability_data=np.array([[2, 1, 2], [2, 0, 2], [1, 0, 2]], dtype=float), level_of_measurement="ordinal"
    )
    assert rep.fields["grade_first"].alpha.value == pytest.approx(ref, abs=1e-12)


# -- MMRB2 letter grades: the store and a file give the same numbers -----------------------------
# Literal MMRB2 reasoning pairs (the published layout). grade_first uses only A and B, so a
# scale taken from the values seen (2 letters) or a longer one (6 letters) would change AC1.
GRADED = [  # (response A's grades, response B's grades)
    (["A", "A", "B"], ["B", "B", "B"]),
    (["A", "B", "B"], ["C", "C", "B"]),
    (["B", "B", "B"], ["A", "A", "A"]),
    ([], ["A", "B", "C"]),
    (["A", "A", "A"], ["C", "B", "C"]),
]


def _reasoning_file(path, graded):
    pairs = [
        {
            "id": f"g{n}",
            "response_a": {"model_name": "agent-a", "response_content": [["text", f"a{n}"]]},
            "response_b": {"model_name": "agent-b", "response_content": [["text", f"b{n}"]]},
            "chosen": "A",
            "human_annotations": {"response_a_ratings": ga, "response_b_ratings": gb},
            "prompt_source": "fixture",
            "prompt_metadata": {},
        }
        for n, (ga, gb) in enumerate(graded)
    ]
    path.write_text(json.dumps({"pairs": pairs}))
    return pairs


def _grades_csv(path, pairs):
    """The same grades as a label file (the ids the importer gives the pairs, so even the
    seeded bootstrap draws line up)."""
    rows = ["item,annotator,field,value"]
    for p in pairs:
        h = p["human_annotations"]
        for field, key in (("grade_first", "response_a_ratings"), ("grade_second", "response_b_ratings")):
            rows += [
                f"mmrb2:reasoning:{p['id']},mmrb2-rater-{k + 1},{field},{g}" for k, g in enumerate(h.get(key) or [])
            ]
    path.write_text("\n".join(rows) + "\n")
    return path


def _ac1_by_hand(grade_lists: list[list[str]], q: int) -> float:
    """Gwet's AC1 straight from the formula, one pair at a time (every pair here has 2+ grades)."""
    pa = sum(sum(g.count(c) * (g.count(c) - 1) for c in set(g)) / (len(g) * (len(g) - 1)) for g in grade_lists)
    pa /= len(grade_lists)
    pi = {c: sum(g.count(c) / len(g) for g in grade_lists) / len(grade_lists) for c in "ABC"}
    pe = sum(p * (1 - p) for p in pi.values()) / (q - 1)
    return (pa - pe) / (1 - pe)


def _store_and_file(store, tmp_path, src, pairs):
    from curate.ingest import ingest_pairs

    ingest_pairs(store, src, "mmrb2", category="reasoning")
    kw = dict(resamples=200)
    return (
        agreement_report(from_store(store), **kw),
        agreement_report(read_labels_file(_grades_csv(tmp_path / "grades.csv", pairs)), **kw),
    )


def _assert_same_grades(a, b):
    for name in ("grade_first", "grade_second"):
        fa, fb = a.fields[name], b.fields[name]
        assert fa.scale == fb.scale == ("C", "B", "A") and fa.level == fb.level == "ordinal"
        # the store's pairs are on mmrb2-reasoning: its grades are the scale; a file has no scheme
        assert (fa.scale_source, fb.scale_source) == ("scheme", "known")
        da, db = fa.as_dict(), fb.as_dict()
        da.pop("annotators"), db.pop("annotators"), da.pop("scale_source"), db.pop("scale_source")
        assert da == db, name


@pytest.mark.both_backends
def test_mmrb2_letter_grades_same_ac1_from_store_and_file(store, tmp_path):
    pairs = _reasoning_file(tmp_path / "reasoning.json", GRADED)
    a, b = _store_and_file(store, tmp_path, tmp_path / "reasoning.json", pairs)
    _assert_same_grades(a, b)
    # the convention: q = the three letters A, B, C (5/9 here; 2 letters would give 1/3, 6 give 17/27)
    first = [ga for ga, _ in GRADED if ga]
    assert _ac1_by_hand(first, 3) == pytest.approx(5 / 9)
    assert a.fields["grade_first"].ac1.value == pytest.approx(5 / 9, abs=1e-12)
    assert a.fields["grade_second"].ac1.value == pytest.approx(_ac1_by_hand([gb for _, gb in GRADED], 3), abs=1e-12)


def test_mmrb2_grade_off_the_scale_is_an_input_error(sqlite_store, tmp_path):
    from curate.errors import InputError
    from curate.ingest import ingest_pairs

    _reasoning_file(tmp_path / "reasoning.json", [(["A", "D", "B"], ["B", "B", "B"])])
    with pytest.raises(InputError, match="human_annotations.*A/B/C"):
        ingest_pairs(sqlite_store, tmp_path / "reasoning.json", "mmrb2", category="reasoning")
    assert sqlite_store.labels() == []


def test_mmrb2_real_letter_grades_same_ac1_from_store_and_file(sqlite_store, tmp_path):
    src = shared("mmrb2/reasoning_response_only.json")
    pairs = json.loads(src.read_text())["pairs"]
    a, b = _store_and_file(sqlite_store, tmp_path, src, pairs)
    _assert_same_grades(a, b)
    for name, key in (("grade_first", "response_a_ratings"), ("grade_second", "response_b_ratings")):
        grades = [p["human_annotations"][key] for p in pairs if p["human_annotations"].get(key)]
        assert a.fields[name].ac1.value == pytest.approx(_ac1_by_hand(grades, 3), abs=1e-12)


def test_cli_on_the_store(tmp_path, capsys):
    import argparse

    from curate.commands import agreement
    from curate.store import Store

    db = tmp_path / "s.db"
    with Store(str(db), images=tmp_path / "img") as s:
        _seed_store(s)
    p = argparse.ArgumentParser()
    agreement.add_arguments(p)
    args = p.parse_args(
        [
            "--db",
            str(db),
            "--images",
            str(tmp_path / "img"),
            "--json",
            "--category",
            "--resamples",
            "50",
            "--min-shared",
            "3",
        ]
    )
    assert agreement.run(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["fields"]) == {"preference", "correctness_first", "correctness_second", "score"}
    assert set(out["categories"]) == {"safety", "vqa"}
    assert {r["field"] for r in out["pairs"]} == set(out["fields"])
    assert out["fields"]["preference"]["cohen_kappa"][0]["a"] == "x"
    args = p.parse_args(["--db", str(db), "--images", str(tmp_path / "img"), "--category", "--resamples", "50"])
    assert agreement.run(args) == 0
    text = capsys.readouterr().out
    assert "Category safety" in text and "preference" in text


def _complete_rows(raters: int):
    """Rows of four category counts, each summing to ``raters`` (cut points of 0..raters)."""
    cuts = hs.lists(hs.integers(0, raters), min_size=3, max_size=3).map(sorted)
    row = cuts.map(lambda c: [c[0], c[1] - c[0], c[2] - c[1], raters - c[2]])
    return hs.lists(row, min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(hs.integers(2, 6).flatmap(_complete_rows))
def test_our_fleiss_arithmetic_is_statsmodels_float_for_float(rows) -> None:
    """The build's Fleiss kappa (without importing statsmodels) is statsmodels' own float."""
    from curate.agreement.stats import sm_fleiss

    table = np.array(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        ours, theirs = sm_fleiss(table), float(fleiss_kappa(table, method="fleiss"))
    assert ours == theirs or (np.isnan(ours) and np.isnan(theirs))
