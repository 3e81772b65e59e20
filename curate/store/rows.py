"""Stored forms of values that more than one part of the store writes (the aggregate
modules and the migrations that convert older stores)."""

from __future__ import annotations

from ..model import RunDataset
from .engine import dumps, loads


def dataset_json(ds: RunDataset) -> str:
    """A judge run's dataset as canonical JSON (schema version 3; earlier stores packed it
    into one string, which migrations.RunDatasets converts)."""
    return dumps({"paths": list(ds.paths), "limit": ds.limit, "name": ds.name})


def dataset_from_json(text: str) -> RunDataset:
    d = loads(text)
    return RunDataset(tuple(d.get("paths", ())), d.get("limit"), d.get("name", ""))
