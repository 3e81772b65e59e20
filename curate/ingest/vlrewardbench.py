"""VL-RewardBench records (curate/formats/vlrewardbench.py) as items and pairs.

- ``vlrewardbench``: the original records; ``human_ranking`` [0, 1] means the first
  response is preferred (equal ranks are a tie). The image may be a path or a Hugging Face
  image feature (bytes).
- ``vlrewardbench-text``: the text copy ``id, prompt, chosen, rejected, image``; its images
  are usually not shipped.

Ids repeat in older copies, so an item is keyed on id + query + both responses. The
category is ``vlrb.category_of``, as scoring reads it: the one a record states (``mmrb
build``'s export does), else cal.py's group (general / hallucination / reasoning) of the id.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..formats import vlrewardbench as vlrb
from ..model import DEFAULT_CATEGORIES, Item
from .common import Context, ImportFields, ImportPlan, ParsedRow, fit_id, id_hash
from .pairs import UNKNOWN_MODEL, chosen_rejected_pair, ordered_pair

CATEGORIES = vlrb.CATEGORIES


def item_id(rid: str, query: str, a: str, b: str, reserve: int = len(UNKNOWN_MODEL) + 4) -> str:
    return fit_id(f"vlrewardbench:{rid}:{id_hash(rid, query, a, b, n=8)}", reserve)


def parse_text(f: ImportFields, ctx: Context) -> ParsedRow:
    rec = vlrb.parse_text(f, vlrb.IMPORT_NEEDS)
    if rec is None:
        return ParsedRow()
    meta = f.metadata(vlrb.TEXT_FIELDS)
    meta["vlrb_id"] = rec.id
    lo, hi = sorted((rec.chosen, rec.rejected))
    item = Item(
        id=item_id(rec.id, rec.prompt, lo, hi),
        prompt=rec.prompt,
        category=vlrb.category_of(rec.id, rec.category),
        images=rec.images,
        source="vl-rewardbench",
        metadata=meta,
    )
    return chosen_rejected_pair(
        item, (UNKNOWN_MODEL, rec.chosen), (UNKNOWN_MODEL, rec.rejected), origin="import:vlrewardbench"
    )


def parse_original(f: ImportFields, ctx: Context) -> ParsedRow:
    rec = vlrb.parse(f, vlrb.IMPORT_NEEDS)
    if rec is None:
        return ParsedRow()
    stated = rec.stated_category
    if stated and f.category("category" if rec.extra.get("category") else "meta.category", stated) is None:
        return ParsedRow()
    a, b = rec.response
    meta = f.metadata(vlrb.ORIGINAL_FIELDS)
    meta["vlrb_id"] = rec.id
    models = rec.models or (UNKNOWN_MODEL, UNKNOWN_MODEL)
    lo, hi = sorted((a, b))
    item = Item(
        id=item_id(rec.id, rec.query, lo, hi, reserve=max(map(len, models)) + 4),
        prompt=rec.query,
        category=rec.category,
        images=rec.images,
        source="vl-rewardbench",
        metadata=meta,
    )
    return ordered_pair(
        item,
        (models[0], a),
        (models[1], b),
        origin="import:vlrewardbench",
        known_preference=rec.preferred or "tie",
        metadata={"human_ranking": list(rec.ranking), "models": list(rec.models or [])},
    )


# a category a record states (mmrb build's export writes the project's) must be a known one
def plan_original(path: Path, categories: Iterable[str] | None, category: str | None) -> ImportPlan:
    return ImportPlan(parse_original, categories=DEFAULT_CATEGORIES)


def plan_text(path: Path, categories: Iterable[str] | None, category: str | None) -> ImportPlan:
    return ImportPlan(parse_text, categories=DEFAULT_CATEGORIES)
