"""MM-RLHF-RewardBench (as in R1-Reward's mm_reward_bench.jsonl).

``id, image | video, prompt, chosen, rejected, chosen_reason, rejected_reason``: a
chosen/rejected record (see ``triplets``). An id has 2-6 rows: one prompt whose responses
are compared in several pairs (the benchmark's Acc+ asks all pairs of an id to be right).
The category is the benchmark's scoring script's (R1-Reward's MM-RLHF-Reward/get_acc.py):
the first of mcq/long/short/safety/video found anywhere in the image path, or in the video
path when there is no image (``category_of``); the importer and scoring both use it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ..model import MM_RLHF_CATEGORIES
from .fields import Fields
from .triplets import TripletRecord
from .triplets import parse as parse_triplet

FIELDS = ("id", "image", "video", "prompt", "chosen", "rejected")
CATEGORIES = MM_RLHF_CATEGORIES
KEYWORDS = MM_RLHF_CATEGORIES  # in get_acc.py's order: the first one found wins
IMPORT_NEEDS = frozenset({"prompt"})


@dataclass(frozen=True)
class MmRlhfRow:
    row: TripletRecord
    category: str
    video: str | None  # a video row has no image


def category_of(image: str | None, video: str | None = None) -> str | None:
    """get_acc.py's category: the first keyword, in its order, that is a substring (case
    matters) of ``image or video``; None when none is."""
    where = image or video or ""
    return next((k for k in KEYWORDS if k in where), None)


def accuracy_keyword(image: str | None, video: str | None) -> str | None:
    """The keyword whose right answers get_acc.py counts a row in: the first, in its order,
    found in the image path or in the video path (its total goes by ``category_of``)."""
    return next((k for k in KEYWORDS if k in (image or "") or k in (video or "")), None)


def parse(f: Fields, need: Collection[str] = ()) -> MmRlhfRow | None:
    row = parse_triplet(f, need)
    video = f.text("video", required=False)
    where = f.text("image", required=False) or video
    if where is None:
        f.bad("image", "missing required field (or 'video')")
    category = category_of(where) if where else None
    if where and category is None:
        f.bad("image", f"cannot tell the category from {where!r}: expected one of {', '.join(KEYWORDS)} in the path")
    category = f.category("image", category)
    if f.problems or row is None or category is None:
        return None
    return MmRlhfRow(row, category, video)
