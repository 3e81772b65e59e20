"""Inter-annotator agreement: Krippendorff's alpha with bootstrap intervals, percent
agreement, Gwet's AC1, Fleiss' and Cohen's kappa, per field and per category.

The names below load their module (numpy, pandas) when first used, so that ``limits``, which
``mmrb agreement --help`` reads, is importable without them."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .report import AgreementReport, agreement_report, pair_table, render_text
    from .stats import Estimate
    from .table import FieldSpec, LabelTable, from_long, from_store, parse_levels, parse_scales, read_labels_file

_MODULE_OF = {
    "AgreementReport": "report",
    "agreement_report": "report",
    "pair_table": "report",
    "render_text": "report",
    "Estimate": "stats",
    "FieldSpec": "table",
    "LabelTable": "table",
    "from_long": "table",
    "from_store": "table",
    "parse_levels": "table",
    "parse_scales": "table",
    "read_labels_file": "table",
}


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)


__all__ = [
    "Estimate",
    "FieldSpec",
    "LabelTable",
    "AgreementReport",
    "agreement_report",
    "from_long",
    "from_store",
    "pair_table",
    "parse_levels",
    "parse_scales",
    "read_labels_file",
    "render_text",
]
