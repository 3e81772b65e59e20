"""Building an imported pair: one item, two candidates, one pair.

Benchmarks give a pair per record. The pair keeps the benchmark's own order where it has
one (MMRB ``Output1``/``Output2``, MMRB2 ``response_a``/``response_b``, VL-RewardBench
``response[0..1]``); formats that only say ``chosen``/``rejected`` get an order seeded from
the pair id (``curate.sides.imported_chosen_first``), so the chosen response is not always first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Candidate, Item, Pair, Preference
from ..sides import imported_chosen_first
from .common import ParsedRow, Response, response_fields

UNKNOWN_MODEL = "unknown"


def candidate_ids(item_id: str, models: tuple[str, str]) -> list[tuple[str, str, int]]:
    """(id, model, n): the n-th response of that model in this item."""
    seen: dict[str, int] = {}
    out = []
    for m in models:
        n = seen.get(m, 0)
        seen[m] = n + 1
        out.append((f"{item_id}:{m}:{n}", m, n))
    return out


def ordered_pair(
    item: Item,
    first: tuple[str, Response],
    second: tuple[str, Response],
    *,
    origin: str,
    known_preference: Preference | None,
    task: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    pair_id: str | None = None,
    scheme: str | None = None,
) -> ParsedRow:
    """An item with two responses ((model, response), (model, response)) in the given order;
    a response is its text or its parts (``common.response_fields``). ``scheme``: the
    built-in annotation scheme its imported labels follow (None: mmrb)."""
    (id1, m1, n1), (id2, m2, n2) = candidate_ids(item.id, (first[0], second[0]))
    t1, p1 = response_fields(first[1])
    t2, p2 = response_fields(second[1])
    c1 = Candidate(id=id1, item_id=item.id, model=m1, text=t1, sample_index=n1, content=p1)
    c2 = Candidate(id=id2, item_id=item.id, model=m2, text=t2, sample_index=n2, content=p2)
    pair = Pair(
        id=pair_id or item.id,
        item_id=item.id,
        first_id=c1.id,
        second_id=c2.id,
        origin=origin,
        known_preference=known_preference,
        task=task,
        metadata=dict(metadata or {}),
        scheme=scheme,
        scheme_version=None if scheme is None else 1,
    )
    return ParsedRow(items=[item], candidates=[c1, c2], pairs=[pair])


def chosen_rejected_pair(
    item: Item,
    chosen: tuple[str, Response],
    rejected: tuple[str, Response],
    **kw: Any,
) -> ParsedRow:
    if imported_chosen_first(kw.get("pair_id") or item.id):
        return ordered_pair(item, chosen, rejected, known_preference="first", **kw)
    return ordered_pair(item, rejected, chosen, known_preference="second", **kw)
