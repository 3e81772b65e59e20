"""``mmrb ingest items``: prompts with images and (optionally) candidate responses.

One record per item (JSONL, CSV or Parquet)::

    {"id": "vqa-01", "prompt": "How many circles?", "images": ["images/shapes.png"],
     "reference": "5", "category": "vqa", "source": "my-set",
     "responses": [{"model": "vlm-alpha", "text": "There are 5."},
                   {"model": "painter", "text": ["Here:", {"image": "out/1.png"}]}, ...],
     "metadata": {...}}

``image`` (one path) may stand for ``images``; paths are relative to the file's folder (or
``--images-root``) and must stay inside it, or data URIs. The n-th response of a model becomes
candidate ``{id}:{model}:{n}`` (n from 0). A response's ``text`` may be a list of parts in
order (texts and ``{"image": path}``, see ``common.ImportFields.response``). Any other
field is kept in the item's metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..model import DEFAULT_CATEGORIES, Candidate, Item, Part
from .common import Context, ImportFields, IngestReport, ParsedRow, response_fields
from .importer import run_import

FIELDS = ("id", "prompt", "images", "image", "reference", "category", "source", "responses", "metadata")


def parse_item(f: ImportFields, ctx: Context) -> ParsedRow:
    item_id = f.ident("id")
    prompt = f.text("prompt")
    category = ctx.check_category(f, "category", f.text("category"))
    reference = f.text("reference", required=False, allow_empty=True)
    source = f.text("source", required=False) or ctx.file.stem
    images = f.images("images", "image")
    meta = f.value("metadata", (dict,), required=False) or {}
    meta = {**f.metadata(FIELDS), **meta}
    responses = f.value("responses", (list,), required=False, what="a list of {model, text}") or []
    cands: list[Candidate] = []
    per_model: dict[str, int] = {}
    for n, r in enumerate(responses):
        where = f"responses[{n}]"
        if not isinstance(r, dict):
            f.bad(where, "expected an object with 'model' and 'text'")
            continue
        model, text = r.get("model"), r.get("text")
        if not isinstance(model, str) or not model.strip():
            f.bad(f"{where}.model", "missing required field" if model is None else "expected a non-empty string")
            continue
        if ":" in model:  # keeps candidate ids "{item}:{model}:{n}" unambiguous
            f.bad(f"{where}.model", "must not contain ':'")
            continue
        model = f.check_ident(f"{where}.model", model)
        if model is None:
            continue
        content: tuple[Part, ...] = ()
        if isinstance(text, list):  # a response with images: its parts in order (see common.ImportFields.response)
            parts = f.parts(f"{where}.text", text)
            if parts is None:
                continue
            text, content = response_fields(parts)
        if not isinstance(text, str):
            f.bad(f"{where}.text", "missing required field" if text is None else "expected text or a list of parts")
            continue
        params = r.get("params") or {}
        if not isinstance(params, dict):
            f.bad(f"{where}.params", "expected an object")
            continue
        k = per_model.get(model, 0)
        per_model[model] = k + 1
        cands.append(
            Candidate(
                id=f"{item_id}:{model}:{k}",
                item_id=item_id or "",
                model=model,
                text=text,
                params=params,
                sample_index=k,
                content=content,
            )
        )
    if f.problems:
        return ParsedRow()
    # read without a problem: every required field is there
    assert item_id is not None and prompt is not None and category is not None and images is not None
    item = Item(
        id=item_id, prompt=prompt, category=category, images=images, reference=reference, source=source, metadata=meta
    )
    return ParsedRow(items=[item], candidates=cands)


def ingest_items(
    store,
    path: str | Path,
    *,
    categories: Iterable[str] | None = None,
    skip_invalid: str | Path | None = None,
    allow_missing_images: bool = False,
    images_root: str | Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Import items (and their responses) from ``path`` in one transaction.

    A missing image file is an error by default (in your own data it is usually a wrong
    path); ``allow_missing_images`` records it as missing instead, and the app shows a
    placeholder. Image paths resolve inside ``images_root`` (default: the file's folder);
    one that leads outside it is refused.
    """
    return run_import(
        store,
        path,
        parse_item,
        format="items",
        skip_invalid=skip_invalid,
        missing_images_ok=allow_missing_images,
        images_root=images_root,
        categories=tuple(categories) if categories else DEFAULT_CATEGORIES,
        progress=progress,
    )
