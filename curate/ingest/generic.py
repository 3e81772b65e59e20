"""The generic pairs format: for pairs from anywhere else.

One record per pair (JSONL, CSV or Parquet)::

    {"id": "p1", "prompt": "...", "images": ["img/a.png"], "category": "vqa",
     "reference": null, "response_1": "...", "response_2": "...",
     "model_1": "vlm-a", "model_2": "vlm-b", "preference": "1" | "2" | "tie" | null,
     "task": "correctness" | "preference" | null}

A response is a text, or a list of parts in order, each a text (``"..."`` or ``{"text":
"..."}``) or an image (``{"image": "img/out.png"}``, a path or data URI like ``images``).
``image`` may stand for ``images``; paths are relative to ``--images-root`` (default: the
file's folder) and must stay inside it. ``model_*`` default to "unknown". Other fields go to the item's metadata.
The pair keeps the order given: response_1 is ``first``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..model import DEFAULT_CATEGORIES, Item, Preference
from .common import Context, ImportFields, ImportPlan, ParsedRow
from .pairs import UNKNOWN_MODEL, ordered_pair

FIELDS = (
    "id",
    "prompt",
    "images",
    "image",
    "category",
    "reference",
    "source",
    "response_1",
    "response_2",
    "model_1",
    "model_2",
    "preference",
    "task",
)
PREFERENCES: dict[str, Preference] = {"1": "first", "2": "second", "tie": "tie", "first": "first", "second": "second"}
TASKS = ("correctness", "preference")


def parse(f: ImportFields, ctx: Context) -> ParsedRow:
    rid = f.ident("id")
    prompt = f.text("prompt")
    category = ctx.check_category(f, "category", f.text("category"))
    reference = f.text("reference", required=False, allow_empty=True)
    r1 = f.response("response_1")
    r2 = f.response("response_2")
    models = []
    for name in ("model_1", "model_2"):
        m = f.text(name, required=False) or UNKNOWN_MODEL
        if ":" in m:
            f.bad(name, "must not contain ':'")
        models.append(f.check_ident(name, m) or UNKNOWN_MODEL)
    pref = f.text("preference", required=False)
    if pref is not None and pref.lower() not in PREFERENCES:
        f.bad("preference", f"expected 1, 2, tie or empty, got {pref!r}")
    task = f.text("task", required=False)
    if task is not None and task not in TASKS:
        f.bad("task", f"expected {' or '.join(TASKS)}, got {task!r}")
    images = f.images("images", "image")
    source = f.text("source", required=False) or ctx.file.stem
    if f.problems:
        return ParsedRow()
    # read without a problem: every required field is there
    assert rid is not None and prompt is not None and category is not None and images is not None
    assert r1 is not None and r2 is not None
    item = Item(
        id=rid,
        prompt=prompt,
        category=category,
        images=images,
        reference=reference,
        source=source,
        metadata=f.metadata(FIELDS),
    )
    return ordered_pair(
        item,
        (models[0], r1),
        (models[1], r2),
        origin="import:generic",
        known_preference=PREFERENCES[pref.lower()] if pref else None,
        task=task,
    )


def plan(path: Path, categories: Iterable[str] | None, category: str | None) -> ImportPlan:
    """A record's category is any known one, or one of ``--categories``."""
    return ImportPlan(parse, categories=categories or DEFAULT_CATEGORIES)
