"""Importing items and existing benchmark pairs into the store.

``ingest_items`` reads the project's items format; ``ingest_pairs`` reads a format of
``curate.formats.registry.PAIR_FORMATS`` (a benchmark's own, read by its module in
curate/formats, or the generic one), looked up in the registry, whose entry names the
format's ``plan`` here. Both check every row and write the whole file in one transaction,
all or nothing (see ``importer.run_import``); docs/formats.md describes each format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..formats.registry import lookup
from .common import IngestReport, Planner
from .importer import run_import
from .items import ingest_items


def ingest_pairs(
    store,
    path: str | Path,
    format: str,
    *,
    images_root: str | Path | None = None,
    skip_invalid: str | Path | None = None,
    categories: Iterable[str] | None = None,
    category: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Import a benchmark's pairs (``format``: a name or an alias of one). Images that are
    not shipped (the usual case for these benchmarks) are recorded as missing and counted,
    not an error; corrupt or oversized ones are errors. ``category`` names the MMRB2 task
    when the file name does not. Image paths resolve inside ``images_root`` (default: the
    file's folder). ``progress(rows)``: see ``run_import``."""
    path = Path(path)
    fmt = lookup(format, "ingest", path)
    planner: Planner = fmt.load("ingest")
    plan = planner(path, categories, category)
    return run_import(
        store,
        path,
        plan.parse,
        format=fmt.name,
        images_root=images_root,
        skip_invalid=skip_invalid,
        missing_images_ok=True,
        categories=plan.categories,
        json_key=plan.json_key,
        annotators=plan.annotators,
        shared_items=plan.shared_items,
        progress=progress,
    )


__all__ = ["IngestReport", "ingest_items", "ingest_pairs"]
