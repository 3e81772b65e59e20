"""Multimodal RewardBench records (curate/formats/mmrb.py) as items and pairs.

Output1 is the benchmark's first response and stays first. The category names the judge
task only for open generation (``.../correctness_task``, ``.../preference_task``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..formats import mmrb
from ..model import Item
from .common import Context, ImportFields, ImportPlan, ParsedRow, fit_id
from .pairs import UNKNOWN_MODEL, ordered_pair

CATEGORIES = mmrb.CATEGORIES


def task_of(category: str) -> str | None:
    if category.endswith("correctness_task"):
        return "correctness"
    if category.endswith("preference_task"):
        return "preference"
    return None


def parse(f: ImportFields, ctx: Context) -> ParsedRow:
    rec = mmrb.parse(f, mmrb.IMPORT_NEEDS)
    if rec is None:
        return ParsedRow()
    meta = f.metadata(mmrb.FIELDS)
    meta["mmrb_id"] = rec.id
    item = Item(
        id=fit_id(f"mmrb:{rec.id}", len(UNKNOWN_MODEL) + 4),
        prompt=rec.text or "",
        category=rec.category or "",
        images=rec.images,
        source="multimodal-rewardbench",
        metadata=meta,
    )
    return ordered_pair(
        item,
        (UNKNOWN_MODEL, rec.output1),
        (UNKNOWN_MODEL, rec.output2),
        origin="import:mmrb",
        known_preference=rec.preferred,
        task=task_of(rec.category or ""),
        metadata={"Better": rec.better},
    )


def plan(path: Path, categories: Iterable[str] | None, category: str | None) -> ImportPlan:
    """A record's category is one of the six areas, or of ``--categories``."""
    return ImportPlan(parse, categories=categories or CATEGORIES)
