"""Hypothesis over generated schemes, the whole way: answers on screen -> stored values
(stored_values) -> Label (to_label) -> store -> agreement -> build. Showing every pair the
other way round (sides swapped, a pairwise scale mirrored) changes no stored value, no
statistic and no triplet."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from curate import schemes
from curate.agreement import agreement_report, from_store
from curate.benchmark import dry_run
from curate.benchmark.rules import Rules
from curate.errors import InputError
from curate.model import Annotator, Candidate, Item, Pair
from curate.store import Store
from tests.test_schemes import _answer, _tables

OTHER = {"first": "second", "second": "first"}


@st.composite
def _cases(draw):
    if draw(st.booleans()):
        scheme = schemes.BUILT_IN[draw(st.sampled_from(sorted(schemes.BUILT_IN)))]
    else:
        try:
            scheme = schemes.from_table(draw(_tables()))
        except InputError:  # a generated form with more answers than the keyboard has keys
            assume(False)
    pairs = [f"p{n}" for n in range(draw(st.integers(1, 3)))]
    annotators = ["a", "b", "c"][: draw(st.integers(1, 3))]
    answers = {}
    for pid in pairs:
        for who in annotators:
            values = {f.name: _answer(f, draw) for f in scheme.fields if f.required or draw(st.booleans())}
            left = draw(st.sampled_from(["first", "second"]))
            answers[pid, who] = ({k: v for k, v in values.items() if v not in ("", [])}, left)
    return scheme, answers, draw(st.sampled_from(["first", "second", "tie"]))


def _through_the_pipeline(folder: Path, scheme, answers, proposal, flipped: bool):
    """What the store, agreement and the build make of the answers, each shown with the
    stored first response on the left as drawn (or, ``flipped``, on the other side)."""
    with Store(str(folder / "store.db"), images=folder / "images") as store:
        ids = sorted({pid for pid, _ in answers})
        store.add_items([Item(id=f"i{p}", prompt="q", category="vqa") for p in ids])
        store.add_candidates([Candidate(id=f"{p}/{m}", item_id=f"i{p}", model=m, text=m) for p in ids for m in "xy"])
        store.add_pairs(
            [
                Pair(
                    id=p,
                    item_id=f"i{p}",
                    first_id=f"{p}/x",
                    second_id=f"{p}/y",
                    origin="t",
                    metadata={"proposal": proposal},
                )
                for p in ids
            ]
        )
        name, version = schemes.stored_key(scheme)
        if name is not None:
            store.add_scheme(scheme.name, scheme.version, schemes.to_table(scheme))
            store.set_pair_scheme(ids, name, version)
        pairs = {p.id: p for p in store.pairs()}
        for who in sorted({w for _, w in answers}):
            store.add_annotator(Annotator(who))
        for (pid, who), (stored, left) in answers.items():
            left = OTHER[left] if flipped else left
            on_screen = schemes.shown_values(scheme, stored, left)  # what the annotator picked, as shown
            values = schemes.stored_values(scheme, on_screen, left)
            assert values == stored
            label = schemes.to_label(
                scheme, pid, who, values, schemes.proposal_of(pairs[pid]), scheme_version=scheme.version
            )
            store.save_label(label)
        labels = sorted(
            (lab.pair_id, lab.annotator, schemes.label_values(scheme, lab) == answers[lab.pair_id, lab.annotator][0])
            + tuple(json.dumps(x, sort_keys=True) for x in (lab.preference, lab.correctness_first, lab.ratings))
            for lab in store.labels()
        )
        report = agreement_report(from_store(store), per_category=True, pairs=True, resamples=20, seed=0).as_dict()
        report.pop("source")
        build = [
            (d.pair.id, d.removed_by, d.chosen, d.n_labels, d.agreement)
            for d in dry_run(store, Rules(resamples=0)).decisions
        ]
    return labels, json.dumps(report, sort_keys=True, default=str), build


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_cases())
def test_the_display_order_changes_no_stored_value_statistic_or_triplet(case):
    scheme, answers, proposal = case
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        as_drawn = _through_the_pipeline(Path(a), scheme, answers, proposal, flipped=False)
        other_way = _through_the_pipeline(Path(b), scheme, answers, proposal, flipped=True)
    assert all(row[2] for row in as_drawn[0])  # every label reads back the values given
    assert as_drawn == other_way
