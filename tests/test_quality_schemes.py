"""Quality control per field of a pair's scheme: gold values of a scheme's fields (a gold
file, the Quality page's upload, adjudication), control tasks and reliability scored per field
against them; a store whose pairs are all mmrb's is scored as before schemes."""

from __future__ import annotations

import pytest

from curate import schemes
from curate.errors import InputError
from curate.model import Adjudication, Annotator, Gold, Label
from curate.quality import gold as G
from curate.quality import qualification as Q
from curate.quality.frames import labels_frame
from curate.quality.reliability import store_report
from tests.support.pairs import seed

PAIRWISE, REASONING, VERIFY = (schemes.BUILT_IN[n] for n in ("mmrb2-pairwise", "mmrb2-reasoning", "verify"))


def _on(store, ids, scheme):
    store.set_pair_scheme(ids, scheme.name, scheme.version)


def _store(store, n=4):
    """p0, p1 on mmrb2-pairwise, p2 on mmrb2-reasoning, the rest mmrb."""
    ids = seed(store, n)
    _on(store, ids[:2], PAIRWISE)
    _on(store, ids[2:3], REASONING)
    return ids


@pytest.mark.both_backends
def test_a_gold_file_gives_a_schemes_fields_by_their_label_names(store, tmp_path):
    _store(store)
    f = tmp_path / "gold.csv"
    f.write_text("pair_id,preference,score,grade_second\np0,,5,\np1,second,2,\np2,,,B\np3,tie,,\n")
    assert G.import_gold(store, f).written == 4
    got = store.gold()
    assert got["p0"].ratings == {"score": 5} and got["p0"].value("score") == "5"
    assert (got["p1"].preference, got["p1"].ratings) == ("second", {"score": 2})
    assert got["p2"].ratings == {"grade_second": "B"} and got["p3"].ratings == {}
    j = tmp_path / "gold.jsonl"
    j.write_text('{"pair": "p0", "score": 6}\n')
    G.import_gold(store, j)
    assert store.gold()["p0"].ratings == {"score": 6}


@pytest.mark.parametrize(
    "text, line, field, words",
    [
        ("pair_id,score\np0,7\n", 2, "score", "'7' is not a whole number from 1 to 6"),
        ("pair_id,score\np0,4.5\n", 2, "score", "not a whole number"),
        ("pair_id,score\np0,5\np3,5\n", 3, "score", "pair 'p3' is on scheme 'mmrb', which has no field 'score'"),
        ("pair_id,grade_first\np2,D\n", 2, "grade_first", "'D' is not one of A, B, C"),
        ("pair_id,grade_first\np0,A\n", 2, "grade_first", "scheme 'mmrb2-pairwise', which has no field 'grade_first'"),
        ("pair_id,rationale\np0,because\n", 2, "rationale", "unknown column"),
        ("pair_id,score,note\np0,,n\n", 2, None, "no gold value"),
    ],
)
def test_scheme_gold_errors_name_file_line_field_and_write_nothing(sqlite_store, tmp_path, text, line, field, words):
    _store(sqlite_store)
    f = tmp_path / "gold.csv"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        G.import_gold(sqlite_store, f)
    problem = e.value.problems[0]
    assert (problem.file, problem.line, problem.field) == (str(f), line, field), problem
    assert words in problem.message
    assert sqlite_store.gold() == {}


def test_an_upload_takes_the_schemes_fields_like_the_command(sqlite_store):
    _store(sqlite_store)
    assert G.import_gold_upload(sqlite_store, "mine.csv", b"pair_id,score\np1,1\n").written == 1
    assert sqlite_store.gold()["p1"].ratings == {"score": 1}


def test_gold_derived_from_an_adjudication_keeps_its_decided_fields(sqlite_store):
    _store(sqlite_store)
    sqlite_store.set_adjudication(Adjudication("p0", "lead", preference="second", ratings={"score": 2}))
    sqlite_store.set_adjudication(Adjudication("p2", "lead", ratings={"grade_first": "A", "grade_second": "C"}))
    (adj,) = G.derive_gold(sqlite_store, ["adjudication"])
    assert adj.written == 2
    got = sqlite_store.gold()
    assert got["p0"].ratings == {"score": 2}
    assert (got["p2"].preference, got["p2"].ratings) == (None, {"grade_first": "A", "grade_second": "C"})


def _labels(store, scheme, pid, answers):
    for who, values in answers.items():
        if store.get_annotator(who) is None:
            store.add_annotator(Annotator(who))
        store.save_label(schemes.to_label(scheme, pid, who, values, scheme_version=scheme.version))


def test_reliability_scores_each_field_against_its_gold(sqlite_store):
    ids = seed(sqlite_store, 3)
    _on(sqlite_store, ids, PAIRWISE)
    sqlite_store.set_gold([Gold(p, "import", ratings={"score": 5}) for p in ids])
    for p in ids:
        _labels(sqlite_store, PAIRWISE, p, {"x": {"score": 5}, "y": {"score": 2}})
    report = store_report(sqlite_store, min_n=1)
    score = report.fields["score"]
    assert (score["x"].gold.k, score["x"].gold.n) == (3, 3)
    assert (score["y"].gold.k, score["y"].gold.n) == (0, 3)
    assert [(a.annotator, a.field, a.basis) for a in report.alerts if a.basis == "gold" and a.category is None] == [
        ("y", "score", "gold")
    ]
    # the preference the rule derived is scored too, against the preference gold (none here)
    assert report.fields["preference"]["x"].gold.n == 0


def test_a_qualification_on_a_scheme_is_scored_on_its_fields(sqlite_store):
    ids = seed(sqlite_store, 2)
    _on(sqlite_store, ids, REASONING)
    sqlite_store.set_gold([Gold(p, "import", ratings={"grade_first": "A", "grade_second": "C"}) for p in ids])
    Q.set_qualification(sqlite_store, ids, 0.75)
    from curate.assign import assign

    assign(sqlite_store, k=1, annotators=["z"], pair_ids=[], seed=1)
    _labels(sqlite_store, REASONING, ids[0], {"z": {"grade": ("A", "C")}})
    _labels(sqlite_store, REASONING, ids[1], {"z": {"grade": ("A", "B")}})
    assert Q.score(sqlite_store, "z") == (3, 4)


def test_a_verify_labels_proposal_and_rationale_are_no_field_of_quality(sqlite_store):
    ids = seed(sqlite_store, 1)
    _on(sqlite_store, ids, VERIFY)
    for who in "xy":
        sqlite_store.add_annotator(Annotator(who))
        lab = schemes.to_label(VERIFY, ids[0], who, {"verdict": "agree", "rationale": "ok"}, "first")
        sqlite_store.save_label(lab)
    assert set(labels_frame(sqlite_store)["field"]) == {"preference", "verdict"}


def test_a_store_of_mmrb_pairs_is_scored_on_the_three_label_fields_as_before(sqlite_store):
    ids = seed(sqlite_store, 1)
    sqlite_store.add_annotator(Annotator("x"))
    sqlite_store.save_label(Label(ids[0], "x", preference="first", ratings={"score": 3}))
    assert set(labels_frame(sqlite_store)["field"]) == {"preference"}
