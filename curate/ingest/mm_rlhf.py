"""MM-RLHF-RewardBench rows (curate/formats/mm_rlhf.py) as items and pairs.

An id has 2-6 rows sharing one prompt: an id is one item; each distinct response text is
one candidate; each row is one pair ``{item}:{k}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..formats import mm_rlhf
from ..model import Candidate, Item, Pair
from ..sides import imported_chosen_first
from .common import Context, ImportFields, ImportPlan, ParsedRow, fit_id
from .pairs import UNKNOWN_MODEL

CATEGORIES = mm_rlhf.CATEGORIES


def parse(f: ImportFields, ctx: Context) -> ParsedRow:
    rec = mm_rlhf.parse(f, mm_rlhf.IMPORT_NEEDS)
    if rec is None:
        return ParsedRow()
    row = rec.row
    iid = fit_id(f"mm-rlhf:{row.id}", reserve=len(UNKNOWN_MODEL) + 6)
    # candidate numbering and pair numbering run across the rows of one id
    texts: dict[str, int] = ctx.state.setdefault(f"texts:{iid}", {})
    k = ctx.state.get(f"pairs:{iid}", 0)
    ctx.state[f"pairs:{iid}"] = k + 1
    cands = []
    for t in (row.chosen, row.rejected):
        if t not in texts:
            texts[t] = len(texts)
        n = texts[t]
        cands.append(
            Candidate(id=f"{iid}:{UNKNOWN_MODEL}:{n}", item_id=iid, model=UNKNOWN_MODEL, text=t, sample_index=n)
        )
    meta = {"mm_rlhf_id": row.id}
    if rec.video:
        meta["video"] = rec.video
    item = Item(
        id=iid, prompt=row.prompt, category=rec.category, images=row.images, source="mm-rlhf-rewardbench", metadata=meta
    )
    pair_id = f"{iid}:{k}"
    c_chosen, c_rejected = cands
    if c_chosen.id == c_rejected.id:
        f.bad("rejected", "identical to 'chosen'")
        return ParsedRow()
    chosen_first = imported_chosen_first(pair_id)
    first, second = (c_chosen, c_rejected) if chosen_first else (c_rejected, c_chosen)
    pair = Pair(
        id=pair_id,
        item_id=iid,
        first_id=first.id,
        second_id=second.id,
        origin="import:mm-rlhf",
        known_preference="first" if chosen_first else "second",
        metadata=f.metadata(mm_rlhf.FIELDS),
    )
    return ParsedRow(items=[item], candidates=cands, pairs=[pair])


def plan(path: Path, categories: Iterable[str] | None, category: str | None) -> ImportPlan:
    """The rows of one id share their item (its category is the image path's keyword)."""
    return ImportPlan(parse, shared_items=True)
