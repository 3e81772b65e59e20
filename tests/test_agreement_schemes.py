"""Agreement reads each field at the level its pair's scheme declares (curate/agreement/table.py
declared_fields): scales ordinal on their points, grades from the worst to the best, choices
nominal on their values; --scale and --level still override; stores before schemes as before."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest

from curate import schemes
from curate.agreement import agreement_report, from_store, render_text
from curate.agreement.table import declared_fields
from curate.model import Annotator, Candidate, Item, Pair
from tests.support.data import shared


def _pairs(store, n: int, scheme: schemes.Scheme | None) -> list[str]:
    store.add_items([Item(id=f"i{k}", prompt="q", category="vqa") for k in range(n)])
    store.add_candidates([Candidate(id=f"i{k}/{m}", item_id=f"i{k}", model=m, text=m) for k in range(n) for m in "ab"])
    ids = [f"p{k}" for k in range(n)]
    store.add_pairs(
        [Pair(id=p, item_id=f"i{k}", first_id=f"i{k}/a", second_id=f"i{k}/b", origin="test") for k, p in enumerate(ids)]
    )
    if scheme is not None:
        store.add_scheme(scheme.name, scheme.version, schemes.to_table(scheme))
        store.set_pair_scheme(ids, scheme.name, scheme.version)
    return ids


def _label(store, scheme, pid, who, values, proposal=None):
    store.save_label(schemes.to_label(scheme, pid, who, values, proposal, scheme_version=scheme.version))


def test_aspects_fields_at_their_levels_on_the_whole_scale(sqlite_store):
    s = schemes.BUILT_IN["aspects"]
    ids = _pairs(sqlite_store, 3, s)
    for who in "xy":
        sqlite_store.add_annotator(Annotator(who))
    for k, pid in enumerate(ids):
        for who in "xy":
            _label(
                sqlite_store,
                s,
                pid,
                who,
                {
                    "helpfulness": (2, 3 if who == "x" else 2),
                    "faithfulness": (3, 3),
                    "ethics": (4, 4),
                    "preference": "first" if k else "tie",
                    "rationale": "why",
                },
            )
    table = from_store(sqlite_store)
    h = table.fields["helpfulness_first"].spec
    # the scheme's four points, though only 2 was used: AC1 counts every value of the scale
    assert (h.level, h.values, h.scale_source) == ("ordinal", ("1", "2", "3", "4"), "scheme")
    assert {name for name, fl in table.fields.items() if len(fl.code)} == {
        "preference",
        *(f"{a}_{side}" for a in ("helpfulness", "faithfulness", "ethics") for side in ("first", "second")),
    }  # the preference once (the label's column), no rationale, no correctness given
    assert "the pairs' scheme" in render_text(agreement_report(table, resamples=0))
    # --level and --scale still override
    over = from_store(sqlite_store, levels={"helpfulness_first": "nominal"}, scales={"ethics_first": ("4", "5")})
    assert over.fields["helpfulness_first"].spec.level == "nominal"
    assert over.fields["ethics_first"].spec.values == ("4", "5")


def test_verify_leaves_out_the_proposal_shown_and_reads_the_correction_nominal(sqlite_store):
    s = schemes.BUILT_IN["verify"]
    ids = _pairs(sqlite_store, 2, s)
    for who in "xy":
        sqlite_store.add_annotator(Annotator(who))
        for pid in ids:
            _label(sqlite_store, s, pid, who, {"verdict": "disagree", "corrected": "second", "rationale": "r"}, "first")
    table = from_store(sqlite_store)
    assert "proposal" not in table.fields  # what everyone was shown is no judgement
    assert table.fields["corrected"].spec.values == ("first", "tie", "second")
    assert table.fields["verdict"].spec.level == "nominal"
    assert table.fields["verdict"].spec.values == ("agree", "disagree", "unsure")


def test_grades_run_from_the_worst_to_the_best(sqlite_store):
    s = schemes.from_table(
        {
            "name": "marks",
            "field": [{"name": "mark", "kind": "grades", "values": ["gold", "silver", "bronze"]}],
            "preference": {"rule": "grades", "field": "mark"},
        }
    )
    ids = _pairs(sqlite_store, 1, s)
    sqlite_store.add_annotator(Annotator("x"))
    _label(sqlite_store, s, ids[0], "x", {"mark": ("silver", "gold")})
    spec = from_store(sqlite_store).fields["mark_second"].spec
    assert (spec.level, spec.values) == ("ordinal", ("bronze", "silver", "gold"))


def test_two_schemes_declaring_one_name_differently_read_it_from_the_labels(sqlite_store):
    def scheme(name, points):
        return schemes.from_table(
            {
                "name": name,
                "field": [{"name": "rank", "kind": "scale", "points": points}],
                "preference": {"rule": "none"},
            }
        )

    three, four = scheme("three", ["a", "b", "c"]), scheme("four", ["a", "b", "c", "d"])
    assert declared_fields([three]).scales["rank"] == ("ordinal", ("1", "2", "3"))
    assert "rank" not in declared_fields([three, four]).scales
    ids = _pairs(sqlite_store, 2, three)
    sqlite_store.add_scheme("four", 1, schemes.to_table(four))
    sqlite_store.set_pair_scheme(ids[1:], "four", 1)
    sqlite_store.add_annotator(Annotator("x"))
    _label(sqlite_store, three, ids[0], "x", {"rank": 2})
    _label(sqlite_store, four, ids[1], "x", {"rank": 4})
    spec = from_store(sqlite_store).fields["rank"].spec
    assert (spec.values, spec.scale_source) == (("2", "4"), "observed")  # as before schemes: no guess


def test_multi_select_is_the_set_picked_whatever_the_order(sqlite_store):
    s = schemes.from_table(
        {
            "name": "flags",
            "field": [{"name": "issues", "kind": "multi", "values": ["blur", "text", "hands"]}],
            "preference": {"rule": "none"},
        }
    )
    ids = _pairs(sqlite_store, 1, s)
    for who, picked in (("x", ["text", "blur"]), ("y", ["blur", "text"])):
        sqlite_store.add_annotator(Annotator(who))
        _label(sqlite_store, s, ids[0], who, {"issues": picked})
    fl = from_store(sqlite_store).fields["issues"]
    assert fl.spec.level == "nominal" and list(fl.spec.values) == ["blur+text"] and len(fl.code) == 2


def test_real_mmrb2_t2i_in_the_store_is_ordinal_on_its_scheme_as_the_krippendorff_package(sqlite_store):
    from curate.ingest import ingest_pairs

    src = shared("mmrb2/t2i_response_only.json")
    ingest_pairs(sqlite_store, src, "mmrb2")
    assert {s.name for s in schemes.schemes_in_use(sqlite_store)} == {"mmrb2-pairwise"}
    score = agreement_report(from_store(sqlite_store), resamples=0).fields["score"]
    matrix = np.array([p["human_annotations"] for p in json.loads(src.read_text())["pairs"]], dtype=float).T
    ref = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert (score.level, score.scale, score.scale_source) == ("ordinal", tuple("123456"), "scheme")
    assert score.n_pairs == 1000 and score.alpha.value == pytest.approx(ref, abs=1e-12)
    assert round(score.alpha.value, 4) == 0.7162
