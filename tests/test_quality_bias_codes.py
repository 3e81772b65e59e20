"""The bias diagnostics read as categories and summed by integer codes (curate.quality.bias)
against the frame-of-strings computation they replaced, kept here as the reference: the
same report on random stores (untimed labels, unsure answers, labels without an assignment)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from curate.model import Annotator, Label
from curate.quality import bias as B
from curate.sides import side_index


def old_store_facts(rows) -> pd.DataFrame:
    names = ["annotator", "pair", "preference", "seconds", "unsure", "left"]
    frame = pd.DataFrame.from_records(rows.labels, columns=names, coerce_float=True)
    codes, distinct = pd.factorize(frame["pair"])
    pairs = pd.Index([r[0] for r in rows.lengths], dtype=object)
    at = pairs.get_indexer(distinct)[codes] if len(pairs) else np.full(len(frame), -1)
    lengths = np.array([(r[1] or 0, r[2] or 0) for r in rows.lengths] or [(0, 0)], dtype=np.int64)
    found = at >= 0
    frame["length_first"] = np.where(found, lengths[at, 0], 0)
    frame["length_second"] = np.where(found, lengths[at, 1], 0)
    frame["unsure"] = frame["unsure"].astype(bool)
    frame["seconds"] = pd.to_numeric(frame["seconds"])
    return frame.reindex(columns=list(B.FACT_COLUMNS))


def old_counts(frame: pd.DataFrame, limits) -> pd.DataFrame:
    pref = frame["preference"].to_numpy(dtype=object)
    left = frame["left"].to_numpy(dtype=object)
    picked = (pref == "first") | (pref == "second")
    shown = picked & ((left == "first") | (left == "second"))
    position = side_index((left == "second").astype(np.int64), (pref == "second").astype(np.int64))
    n1 = pd.to_numeric(frame["length_first"]).fillna(0).to_numpy()
    n2 = pd.to_numeric(frame["length_second"]).fillna(0).to_numpy()
    compared = picked & (n1 != n2)
    secs = pd.to_numeric(frame["seconds"]).to_numpy(dtype=float)
    timed = np.nan_to_num(secs, nan=0.0) > 0
    who = frame["annotator"].astype(str).to_numpy()
    median = pd.Series(np.where(timed, secs, np.nan)).groupby(who).transform("median").to_numpy()
    table = pd.DataFrame(
        {
            "annotator": who,
            "labels": 1,
            "left_k": shown & (position == 0),
            "left_n": shown,
            "unseen": picked & ~shown,
            "tie_k": pref == "tie",
            "tie_n": pd.notna(frame["preference"]).to_numpy(),
            "unsure_k": frame["unsure"].to_numpy(dtype=bool),
            "unsure_n": True,
            "longer_k": compared & ((pref == "first") == (n1 > n2)),
            "longer_n": compared,
            "fast_k": timed & (secs < limits.fast_fraction * median),
            "fast_n": timed,
        }
    )
    sums = table.groupby("annotator", sort=True).sum()
    medians = pd.Series(median).groupby(who).first()
    return sums.assign(median=medians.reindex(sums.index))


@pytest.mark.parametrize("seed", [0, 1])
def test_bias_on_random_stores_is_the_frame_computation(tmp_path, seed, monkeypatch) -> None:
    from bench.pages import build_store
    from curate.store import Store

    db = tmp_path / "store.db"
    build_store(db, 150 + 60 * seed, seed=seed)
    rng = random.Random(seed)
    with Store(str(db), tmp_path / "images") as store:
        for lab in rng.sample(store.labels(), 40):  # untimed, unsure, a tie
            store.save_label(
                Label(
                    lab.pair_id, lab.annotator, "unsure", preference=rng.choice(["tie", "first", None]), seconds=None
                ),
                expected_revision=lab.revision,
            )
        store.add_annotator(Annotator("importer"))
        store.add_labels([Label(f"p{n:07d}", "importer", preference="first", seconds=3.5) for n in range(20)])
        rows = store.label_fact_rows()
        cols = store.label_fact_columns()
        # the facts themselves, label by label, read as columns and as rows
        by_label = ["pair", "annotator"]
        got = B.store_facts(cols).assign(pair=cols.pair.values[cols.pair.codes])
        want = old_store_facts(rows).assign(pair=[r[1] for r in rows.labels])
        for frame in (got, want):
            for name in ("annotator", "preference", "left"):
                frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
        pd.testing.assert_frame_equal(
            got.sort_values(by_label).reset_index(drop=True),
            want.sort_values(by_label).reset_index(drop=True),
            check_dtype=False,
        )
        new = B.bias_report(B.store_facts(cols))
        monkeypatch.setattr(B, "_counts", old_counts)
        old = B.bias_report(old_store_facts(rows))
    assert new == old and new.annotators["importer"].unseen == 20
