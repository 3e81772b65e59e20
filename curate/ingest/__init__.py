"""Importing items and existing benchmark pairs into the store.

``ingest_items`` reads the project's items format; ``ingest_pairs`` reads one of
``curate.model.PAIR_FORMATS`` (a benchmark's own, read by its module in curate/formats, or
the generic one). Both check every row and write the whole file in one transaction, all or nothing (see
``importer.run_import``); docs/formats.md describes each format.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError, InputProblem
from ..formats.mmrb2 import JSON_KEY as MMRB2_KEY
from ..formats.mmrb2 import task_of
from ..model import DEFAULT_CATEGORIES, PAIR_FORMATS, PairFormat
from . import generic, mm_rlhf, mmrb, mmrb2, vlrewardbench
from .common import IngestReport
from .importer import run_import
from .items import ingest_items


def ingest_pairs(
    store,
    path: str | Path,
    format: PairFormat,
    *,
    images_root: str | Path | None = None,
    skip_invalid: str | Path | None = None,
    categories: Iterable[str] | None = None,
    category: str | None = None,
) -> IngestReport:
    """Import a benchmark's pairs. Images that are not shipped (the usual case for these
    benchmarks) are recorded as missing and counted, not an error; corrupt or oversized
    ones are errors. ``category`` names the MMRB2 task when the file name does not.
    Image paths resolve inside ``images_root`` (default: the file's folder)."""
    path = Path(path)
    kw: dict = dict(format=format, images_root=images_root, skip_invalid=skip_invalid, missing_images_ok=True)
    if format == "mmrb":
        return run_import(store, path, mmrb.parse, categories=categories or mmrb.CATEGORIES, **kw)
    # a category a VL-RewardBench-shaped record states (mmrb build's export) must be a known one
    if format == "vlrewardbench":
        return run_import(store, path, vlrewardbench.parse_original, categories=DEFAULT_CATEGORIES, **kw)
    if format == "vlrewardbench-text":
        return run_import(store, path, vlrewardbench.parse_text, categories=DEFAULT_CATEGORIES, **kw)
    if format == "mm-rlhf":
        return run_import(store, path, mm_rlhf.parse, shared_items=True, **kw)
    if format == "mmrb2":
        task = task_of(path, category, option="--category")
        return run_import(store, path, mmrb2.make_parser(task), json_key=MMRB2_KEY, annotators=mmrb2.RATERS, **kw)
    if format == "generic":
        return run_import(store, path, generic.parse, categories=categories or DEFAULT_CATEGORIES, **kw)
    raise InputError(
        [InputProblem(str(path), None, None, f"unknown format {format!r}; known: {', '.join(PAIR_FORMATS)}")]
    )


__all__ = ["IngestReport", "ingest_items", "ingest_pairs"]
