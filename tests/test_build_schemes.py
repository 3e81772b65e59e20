"""The build reads each pair's scheme: the triplet's chosen response from the scheme's
preference rule (a scale: the mean against its midpoint; verify: the proposal when agreed, else
the correction), rules by field name (agreement, margin from the midpoint, alpha floor), and
the card states each scheme used (curate/benchmark/filter.py, rules.py, card.py)."""

from __future__ import annotations

import pytest

from curate import schemes
from curate.benchmark import build, dry_run
from curate.benchmark.card import PROPOSAL_SHOWN
from curate.benchmark.rules import Rules, Threshold, load_rules
from curate.errors import InputError, MmrbError
from curate.model import Annotator
from tests.support.pairs import seed

PAIRWISE, VERIFY = schemes.BUILT_IN["mmrb2-pairwise"], schemes.BUILT_IN["verify"]
# pair -> the three raters' scores (high: the first response better)
SCORES = {"p0": (6, 3, 3), "p1": (1, 2, 5), "p2": (6, 6, 5), "p3": (6, 6, 6), "p4": (2, 5, 1), "p5": (1, 1, 2)}


def _label(store, scheme, pid, who, values, proposal=None):
    if store.get_annotator(who) is None:
        store.add_annotator(Annotator(who))
    store.save_label(schemes.to_label(scheme, pid, who, values, proposal, scheme_version=scheme.version))


@pytest.fixture
def scored(sqlite_store):
    ids = seed(sqlite_store, len(SCORES))
    sqlite_store.set_pair_scheme(ids, PAIRWISE.name, PAIRWISE.version)
    for pid, scores in SCORES.items():
        for who, score in zip("xyz", scores, strict=True):
            _label(sqlite_store, PAIRWISE, pid, who, {"score": score})
    return sqlite_store


def _decided(store, rules=None):
    return {d.pair.id: (d.removed_by, d.chosen) for d in dry_run(store, rules or Rules(resamples=0)).decisions}


def test_a_scale_decides_by_the_mean_against_its_midpoint_not_by_a_vote(scored):
    got = _decided(scored)
    # p0: 6, 3, 3: two of three labels say the second is better, but the mean 4 is above 3.5 (MMRB2's rule)
    assert got["p0"] == (None, "first") and got["p1"] == (None, "second") and got["p4"] == (None, "second")
    rows = dry_run(scored, Rules(resamples=0)).kept
    assert {d.pair.id: d.agreement for d in rows}["p0"] == pytest.approx(1 / 3)  # the share on the chosen side


def test_rules_by_field_name_margin_agreement_and_alpha(scored):
    margin = _decided(scored, Rules(resamples=0, margin={"score": 1.5}))
    # means 4, 2.67, 5.67, 6, 2.67, 1.33: at least 1.5 from 3.5 are p2, p3, p5
    assert {p for p, (why, _) in margin.items() if why is None} == {"p2", "p3", "p5"}
    assert margin["p0"][0] == margin["p1"][0] == "margin:score"
    unanimous = _decided(scored, Rules(resamples=0, agreement={"score": Threshold(1.0)}))
    assert {p for p, (why, _) in unanimous.items() if why is None} == {"p3"}
    assert unanimous["p2"][0] == "agreement:score"
    high = _decided(scored, Rules(resamples=0, alpha={"score": 0.99}))
    assert {why for why, _ in high.values()} == {"alpha:score"}  # the one category's alpha is below
    low = _decided(scored, Rules(resamples=0, alpha={"score": -1.0}))
    assert low == _decided(scored)


def test_a_rule_naming_no_field_of_the_pairs_is_an_error(scored):
    with pytest.raises(MmrbError, match=r"filter\.agreement\.scroe: no field of that name.*score"):
        dry_run(scored, Rules(resamples=0, agreement={"scroe": Threshold(0.5)}))
    with pytest.raises(MmrbError, match=r"filter\.margin\.preference: not a scale"):
        dry_run(scored, Rules(resamples=0, margin={"preference": 1.0}))


def test_rules_file_takes_margin_and_alpha_by_field(tmp_path):
    f = tmp_path / "rules.toml"
    f.write_text("[filter.margin]\nscore = 1.5\n[filter.alpha]\nscore = 0.667\n")
    rules = load_rules(f)
    assert (rules.margin, rules.alpha) == ({"score": 1.5}, {"score": 0.667})
    assert rules.as_dict()["filter"]["margin"] == {"score": 1.5}
    assert "margin" not in Rules().as_dict()["filter"]  # a build without them: the manifest it had
    f.write_text("[filter.margin]\nscore = -1\n[filter.alpha]\nscore = 2\n")
    with pytest.raises(InputError) as e:
        load_rules(f)
    assert [p.field for p in e.value.problems] == ["filter.margin.score", "filter.alpha.score"]


def test_verify_takes_the_proposal_when_agreed_else_the_correction_and_the_card_says_it_was_shown(
    sqlite_store, tmp_path
):
    ids = seed(sqlite_store, 3)
    sqlite_store.set_pair_scheme(ids, VERIFY.name, VERIFY.version)
    for pid in ids:
        sqlite_store.update_pair(pid, metadata={"proposal": "first"})
    pairs = {p.id: p for p in sqlite_store.pairs()}
    answers = {
        "p0": {"verdict": "agree"},
        "p1": {"verdict": "disagree", "corrected": "second", "rationale": "the second reads the chart right"},
        "p2": {"verdict": "unsure", "rationale": "cannot tell"},
    }
    for pid, values in answers.items():
        _label(sqlite_store, VERIFY, pid, "x", values, schemes.proposal_of(pairs[pid]))
    got = _decided(sqlite_store)
    assert got == {"p0": (None, "first"), "p1": (None, "second"), "p2": ("no_preference", None)}
    res = build(sqlite_store, Rules(resamples=0), tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "## Annotation schemes" in card and PROPOSAL_SHOWN in card
    assert "`verdict` (choice, nominal, required): Do you agree with the judges' proposal?: agree, disagree" in card
    assert "the judges' proposal when agreed, else corrected" in card
    assert len(res.triplets) == 2


def test_the_card_states_the_scale_its_point_labels_and_rule(scored, tmp_path):
    build(scored, Rules(resamples=0, margin={"score": 1.5}), tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "### MMRB2: which response is better, on six points (`mmrb2-pairwise`, version 1)" in card
    assert "6 pairs considered, 3 kept." in card
    assert "1 right much better; 2 right better" in card and "6 left much better" in card
    assert "score above 3.5: the first response; below: the second; of several labels, the mean" in card
    assert "score: mean at least 1.5 from the midpoint" in card and PROPOSAL_SHOWN not in card


def test_a_build_of_mmrb_pairs_states_no_scheme(sqlite_store, tmp_path):
    from curate.model import Label

    ids = seed(sqlite_store, 1)
    sqlite_store.add_annotator(Annotator("x"))
    sqlite_store.save_label(Label(ids[0], "x", preference="first"))
    build(sqlite_store, Rules(resamples=0), tmp_path / "out")
    assert "## Annotation schemes" not in (tmp_path / "out" / "README.md").read_text()
