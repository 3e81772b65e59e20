"""The lead's adjudication, without Streamlit: which pairs disagree and on what, the filters
and the walk through them, and everything one pair's decision needs.

Admin pages are unblinded: they may show model names, gold answers and every label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from curate.model import Adjudication, Candidate, Correctness, ImageRef, Item, Label, Pair, Side
from curate.store import Store

Field = Literal["correctness_first", "correctness_second", "preference"]
FIELDS: tuple[Field, ...] = ("correctness_first", "correctness_second", "preference")
FIELD_TITLES: dict[Field, str] = {
    "correctness_first": "correctness of first",
    "correctness_second": "correctness of second",
    "preference": "preference",
}


@dataclass(frozen=True)
class Disagreement:
    """A pair whose submitted labels differ, on which fields, with the lead's decision if any."""

    pair_id: str
    category: str
    labels: tuple[Label, ...]
    adjudication: Adjudication | None
    fields: tuple[Field, ...]  # the decisions the labels differ on, in FIELDS order

    @property
    def pending(self) -> bool:
        return self.adjudication is None


def differing(labels: Sequence[Label]) -> tuple[Field, ...]:
    """The fields on which the labels do not all agree (a missing answer differs from any)."""
    return tuple(f for f in FIELDS if len({getattr(lab, f) for lab in labels}) > 1)


def disagreements(store: Store) -> list[Disagreement]:
    """Pairs with two or more submitted labels that differ, by pair id, with any adjudication."""
    by: dict[str, list[Label]] = {}
    for lab in store.labels(status="submitted", control=False):
        by.setdefault(lab.pair_id, []).append(lab)
    split = {pid: (labs, fields) for pid, labs in by.items() if len(labs) >= 2 and (fields := differing(labs))}
    if not split:
        return []
    with store.read() as c:
        item_of = {p.id: p.item_id for p in store.pairs(ids=split, conn=c)}
        category = {i.id: i.category for i in store.items(ids=set(item_of.values()), conn=c)}
        adj = store.adjudications(conn=c)
    return [
        Disagreement(pid, category.get(item_of.get(pid, ""), ""), tuple(labs), adj.get(pid), fields)
        for pid, (labs, fields) in sorted(split.items())
    ]


def narrow(
    rows: Iterable[Disagreement], *, categories: Iterable[str] = (), fields: Iterable[str] = ()
) -> list[Disagreement]:
    """The rows in any of ``categories`` that differ on any of ``fields`` (an empty filter keeps all)."""
    cats, want = set(categories), set(fields)
    return [r for r in rows if (not cats or r.category in cats) and (not want or want & set(r.fields))]


def next_pending(rows: Sequence[Disagreement], after: str | None, *, again: bool = True) -> str | None:
    """The first undecided pair after ``after`` in ``rows``, wrapping round, ``after`` itself
    last (never, unless ``again``: it has just been decided); None when none is left."""
    ids = [r.pair_id for r in rows]
    start = ids.index(after) + 1 if after in ids else 0
    for r in [*rows[start:], *rows[:start]]:
        if r.pending and (again or r.pair_id != after):
            return r.pair_id
    return None


@dataclass(frozen=True)
class AutoCheck:
    """The automatic correctness of the pair's responses, where the item's reference decided
    it (curate/pairing.py), with what was read from each response."""

    first: Correctness | None
    second: Correctness | None
    method: str | None
    read_first: str | None
    read_second: str | None


@dataclass(frozen=True)
class Case:
    """Everything about one pair the lead decides on (model names included)."""

    pair: Pair
    item: Item | None
    first: Candidate | None
    second: Candidate | None
    auto: AutoCheck | None  # None when no reference decided either response
    left_of: Mapping[str, Side] = field(default_factory=dict)  # annotator -> the response they saw on the left

    @property
    def image(self) -> ImageRef | None:
        return self.item.images[0] if self.item and self.item.images else None


def case(store: Store, pair_id: str) -> Case | None:
    with store.read() as c:
        pair = store.get_pair(pair_id, conn=c)
        if pair is None:
            return None
        cands = {x.id: x for x in store.candidates(ids=[pair.first_id, pair.second_id], conn=c)}
        item = store.get_item(pair.item_id, conn=c)
        left_of = {a.annotator: a.left for a in store.assignments(pair_id=pair_id, conn=c)}
    auto = None
    if pair.auto_first is not None or pair.auto_second is not None:
        meta = pair.metadata

        def read(key: str) -> str | None:
            v = meta.get(key)
            return None if v is None else str(v)

        auto = AutoCheck(
            pair.auto_first, pair.auto_second, pair.auto_method, read("extracted_first"), read("extracted_second")
        )
    return Case(pair, item, cands.get(pair.first_id), cands.get(pair.second_id), auto, left_of)
