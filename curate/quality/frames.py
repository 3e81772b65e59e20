"""The store's labels and gold as the long frames quality control works on: one row a
label field, columns ``pair``, ``annotator``, ``field``, ``value`` (and, read from the store,
``control``: the label is a control task's, and ``category``). Aggregation
(curate/quality/aggregate.py) and reliability (curate/quality/reliability.py) both read them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..agreement.table import declared_fields, rating_value
from ..model import LABEL_FIELDS
from ..schemes import schemes_in_use

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from ..agreement.table import LabelTable
    from ..model import Gold, Label
    from ..store.columns import CodedColumn
    from ..store.protocols import LabelFrameStore

COLUMNS = ("pair", "annotator", "field", "value", "control", "category")


@dataclass(frozen=True)
class LongCodes:
    """The long frame as integer codes, one row a label field: each column's codes into its
    distinct values in sorted (codepoint) order, ``control`` as booleans. Reliability works on
    these: 600,000 labels as a frame of strings cost seconds per grouping, as codes
    milliseconds."""

    pair: np.ndarray
    pairs: np.ndarray
    annotator: np.ndarray
    annotators: np.ndarray
    field: np.ndarray
    fields: np.ndarray
    value: np.ndarray
    values: np.ndarray
    control: np.ndarray
    category: np.ndarray
    categories: np.ndarray

    def with_values(self, recode: np.ndarray, values: np.ndarray) -> LongCodes:
        """The same rows, each value code recoded (``recode``: old code -> new) into ``values``."""
        return replace(self, value=recode[self.value], values=values)

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> LongCodes:
        """A long frame (``COLUMNS``) coded; a missing category is ``""``."""

        def coded(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
            codes, uniques = pd.factorize(column.astype(object).to_numpy(), sort=True)
            return codes.astype(np.int64), np.asarray(uniques, dtype=object)

        category = frame["category"].astype(object).where(frame["category"].notna(), "").astype(str)
        return cls(
            *coded(frame["pair"]),
            *coded(frame["annotator"]),
            *coded(frame["field"]),
            *coded(frame["value"]),
            frame["control"].to_numpy(dtype=bool),
            *coded(category),
        )


def store_codes(store: LabelFrameStore) -> LongCodes:
    """:func:`labels_frame` as codes, straight from the store's columns of codes (a store
    with pairs on other schemes than mmrb, whose ratings are parsed per distinct text: through
    the frame)."""
    if store.scheme_keys() - {(None, None)}:
        return LongCodes.of_frame(labels_frame(store))
    cols = store.label_columns()
    (pair, pairs), (annotator, annotators) = cols.pair, cols.annotator
    control = store.control_keys()
    if control:
        keys = list(control)
        at_pair = pd.Index(pairs).get_indexer([p for p, _ in keys])
        at_ann = pd.Index(annotators).get_indexer([a for _, a in keys])
        found = (at_pair >= 0) & (at_ann >= 0)
        wanted = at_pair[found] * len(annotators) + at_ann[found]
        is_control = np.isin(pair * len(annotators) + annotator, wanted)
    else:
        is_control = np.zeros(len(pair), dtype=bool)
    (id_codes, ids), (cat_codes, cats) = store.pair_category_columns()
    at = pd.Index(ids[id_codes]).get_indexer(pairs) if len(id_codes) else np.full(len(pairs), -1)
    of_pair = np.where(at >= 0, cats[cat_codes][np.maximum(at, 0)] if len(id_codes) else "", "")
    pair_category, categories = pd.factorize(of_pair.astype(object), sort=True)
    names = [n for n in LABEL_FIELDS if len(cols.fields[n].codes)]
    values = np.asarray(sorted({v for n in names for v in cols.fields[n].values.tolist()} - {""}), dtype=object)
    fields = np.asarray(sorted(names), dtype=object)
    parts = []
    for name in names:
        codes, distinct = cols.fields[name]
        given = (distinct != "")[codes]
        recode = pd.Index(values).get_indexer(distinct)
        parts.append((np.flatnonzero(given), int(np.searchsorted(fields, name)), recode[codes[given]]))
    rows = np.concatenate([r for r, _, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
    return LongCodes(
        pair[rows],
        pairs,
        annotator[rows],
        annotators,
        np.concatenate([np.full(len(r), f, dtype=np.int64) for r, f, _ in parts]) if parts else rows,
        fields,
        np.concatenate([v for _, _, v in parts]).astype(np.int64) if parts else rows,
        values,
        is_control[rows],
        pair_category[pair[rows]].astype(np.int64),
        np.asarray(categories, dtype=object),
    )


def labels_frame(store: LabelFrameStore) -> pd.DataFrame:
    """The store's submitted labels as the long frame of this module (the three label
    fields, and where pairs are on other schemes than mmrb, each judged field of
    ``Label.ratings`` by its key), control tasks marked. Read as columns of codes in one scan
    (Store.label_columns, the agreement's fast path): no Label object per row."""
    cols = store.label_columns()
    control = store.control_keys()
    (unit_codes, units), (ann_codes, names) = cols.pair, cols.annotator
    (id_codes, ids), (cat_codes, cats) = store.pair_category_columns()
    category = pd.Series(cats[cat_codes], index=ids[id_codes]) if len(id_codes) else pd.Series(dtype=object)
    pair = units[unit_codes]
    annotator = names[ann_codes]
    is_control = (
        np.fromiter(((p, a) in control for p, a in zip(pair, annotator, strict=True)), bool, len(pair))
        if control
        else np.zeros(len(pair), dtype=bool)
    )
    parts = []
    for name in LABEL_FIELDS:
        codes, values = cols.fields[name]
        value = values[codes]
        given = value != ""
        parts.append(
            pd.DataFrame(
                {
                    "pair": pair[given],
                    "annotator": annotator[given],
                    "field": name,
                    "value": value[given],
                    "control": is_control[given],
                }
            )
        )
    parts += _rating_parts(store, cols.ratings, pair, annotator, is_control)
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(COLUMNS[:5]))
    frame["category"] = frame["pair"].map(category).fillna("").to_numpy(dtype=object)
    return frame.astype({"control": bool}).reset_index(drop=True)


def _rating_parts(
    store: LabelFrameStore, ratings: CodedColumn, pair: np.ndarray, annotator: np.ndarray, is_control: np.ndarray
) -> list[pd.DataFrame]:
    """The judged fields of ``Label.ratings`` as frame parts (none in a store whose pairs are
    all mmrb's: its figures are the three label fields, as before schemes)."""
    if not store.scheme_keys() - {(None, None)}:
        return []
    skipped = declared_fields(schemes_in_use(store)).skipped  # free text, the proposal shown
    text_codes, texts = ratings
    parsed = [json.loads(t) if t not in ("", "{}") else None for t in texts]
    parts = []
    for key in sorted({k for d in parsed if isinstance(d, dict) for k in d} - skipped):
        per_text = np.array([rating_value(d.get(key)) if isinstance(d, dict) else None for d in parsed], dtype=object)
        value = per_text[text_codes]
        given = pd.notna(value)
        name = key if key not in LABEL_FIELDS else f"ratings.{key}"  # never shadow a label field (as agreement)
        parts.append(
            pd.DataFrame(
                {
                    "pair": pair[given],
                    "annotator": annotator[given],
                    "field": name,
                    "value": value[given],
                    "control": is_control[given],
                }
            )
        )
    return parts


def store_frame(store: LabelFrameStore, pair_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """The store's regular submitted labels (no control task) as a long frame, optionally of some pairs."""
    frame = labels_frame(store)
    keep = ~frame["control"].to_numpy(dtype=bool)
    if pair_ids is not None:
        keep &= frame["pair"].isin(set(pair_ids)).to_numpy()
    return frame.loc[keep, ["pair", "annotator", "field", "value"]].astype(object).reset_index(drop=True)


def gold_by_field(golds: Iterable[Gold]) -> dict[str, dict[str, str]]:
    """field -> pair -> gold value, from model.Gold rows."""
    out: dict[str, dict[str, str]] = {name: {} for name in LABEL_FIELDS}
    for g in golds:
        for name in LABEL_FIELDS:
            v = g.value(name)
            if v:
                out[name][g.pair_id] = v
        for key, raw in (g.ratings or {}).items():  # a scheme's fields, as the labels' frame words them
            word = rating_value(raw)
            if word is not None:
                out.setdefault(key if key not in LABEL_FIELDS else f"ratings.{key}", {})[g.pair_id] = word
    return out


def label_values(lab: Label) -> dict[str, str]:
    """One label's given fields by name (of LABEL_FIELDS): the one reading of a Label's
    fields by their names, for code that holds Label records rather than a table."""
    values = {
        "preference": lab.preference,
        "correctness_first": lab.correctness_first,
        "correctness_second": lab.correctness_second,
    }
    return {name: v for name, v in values.items() if v}


def table_frame(table: LabelTable, fields: Sequence[str], pairs: Sequence[str]) -> pd.DataFrame:
    """The labels of ``pairs`` in a LabelTable (curate/agreement/table.py) as the long frame
    crowd-kit takes: rows in the order of ``pairs``, then annotator, then ``fields``."""
    position = {p: n for n, p in enumerate(pairs)}
    order = {f: n for n, f in enumerate(fields)}
    names = np.asarray(table.annotators, dtype=object)
    parts = []
    for name in fields:
        fl = table.fields.get(name)
        if fl is None:
            continue
        unit = table.units[fl.unit]
        at = np.fromiter((position.get(u, -1) for u in unit), dtype=np.int64, count=len(unit))
        sel = at >= 0
        parts.append(
            pd.DataFrame(
                {
                    "pair": unit[sel],
                    "annotator": names[fl.annotator[sel]],
                    "field": name,
                    "value": np.asarray(fl.spec.values, dtype=object)[fl.code[sel]],
                    "_at": at[sel],
                    "_ann": fl.annotator[sel],  # the table's annotators are sorted
                    "_field": order[name],
                }
            )
        )
    if not parts:
        return as_frame(())
    frame = pd.concat(parts, ignore_index=True).sort_values(["_at", "_ann", "_field"], kind="stable")
    return frame[["pair", "annotator", "field", "value"]].astype(object).reset_index(drop=True)


def as_frame(rows: Iterable[tuple[str, str, str, str]]) -> pd.DataFrame:
    """A long frame from (pair, annotator, field, value) tuples."""
    return pd.DataFrame(list(rows), columns=["pair", "annotator", "field", "value"]).astype(object)


__all__ = [
    "COLUMNS",
    "LongCodes",
    "as_frame",
    "gold_by_field",
    "label_values",
    "labels_frame",
    "store_codes",
    "store_frame",
    "table_frame",
]
