"""The build's majority from a LabelTable's codes (curate.quality.aggregate.table_majority)
against the frame path it replaced, kept as the reference: ``aggregate`` of the long frame
``table_frame`` makes, on random tables (ties, unsorted scales, fields and pairs left out)."""

from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.agreement.table import from_long
from curate.model import CORRECTNESS, LABEL_FIELDS, PREFERENCES
from curate.quality.aggregate import aggregate, table_majority
from curate.quality.frames import table_frame

VALUES = {"preference": PREFERENCES, "correctness_first": CORRECTNESS, "correctness_second": CORRECTNESS}
UNITS = [f"p{n}" for n in range(8)] + ["P", "p10", "ä"]  # ids whose order is not their number's
ANNOTATORS = ["b", "a", "Zed", "c"]


@st.composite
def labels(draw):
    keys = draw(
        st.lists(
            st.tuples(st.sampled_from(UNITS), st.sampled_from(ANNOTATORS), st.sampled_from(LABEL_FIELDS)),
            unique=True,
            max_size=40,
        )
    )
    return [(u, a, f, draw(st.sampled_from(VALUES[f]))) for u, a, f in keys]


scales = st.fixed_dictionaries({f: st.permutations(v).map(tuple) for f, v in VALUES.items()})


@settings(max_examples=200, deadline=None)
@given(labels(), st.sets(st.sampled_from(UNITS)), st.lists(st.sampled_from(LABEL_FIELDS), unique=True), scales)
def test_table_majority_is_the_frame_majority(rows, pairs, fields, scale):
    # a scale in any order: the table codes values in its order, the frame's majority sorts them
    table = from_long(pd.DataFrame(rows, columns=["unit", "annotator", "field", "value"]), scales=scale)
    ordered = sorted(pairs)
    expected = aggregate(table_frame(table, fields, ordered), "majority")
    got = table_majority(table, fields, pairs)
    assert list(got.fields) == list(expected.fields)
    for name, fa in expected.fields.items():
        mine = got.fields[name]
        # the same values in the same order (the card and build.json write them in it)
        assert list(mine.final.items()) == list(fa.final.items())
        assert list(mine.majority.items()) == list(fa.majority.items())
        assert list(mine.reliability.items()) == list(fa.reliability.items())
        assert (mine.from_gold, mine.differ, mine.decided_ties) == (fa.from_gold, fa.differ, fa.decided_ties)
