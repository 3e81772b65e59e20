"""This project's judgments as JSONL (``--format mmrb-studio``): one stored judgment a line,
``pair_id, order, sample_index, verdict, outcome, raw, prompt, score_first, score_second,
prompt_tokens, completion_tokens, error``, verdicts in the pair's stored order."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from ..judging.records import OUTCOMES, Judgment
from ..model import ORDERS
from .fields import Fields, parse_rows
from .reader import load_rows

_STORED = tuple(k for k in Judgment.__dataclass_fields__ if k != "extra")


# the type of each stored field but the checked words (a value of another type is refused:
# a list as pair_id, a number as raw, would fail far from the file)
_TYPES: dict[str, tuple[type, ...]] = {
    "sample_index": (int,),
    "raw": (str,),
    "prompt": (str,),
    "score_first": (int, float),
    "score_second": (int, float),
    "prompt_tokens": (int,),
    "completion_tokens": (int,),
    "error": (str,),
}


def parse(f: Fields) -> Judgment | None:
    if "pair_id" not in f.data:
        f.bad("pair_id", "missing")
    elif f.data.get("outcome", "parsed") not in OUTCOMES:
        f.bad("outcome", f"must be one of {', '.join(OUTCOMES)}")
    elif f.data.get("order", "forward") not in ORDERS:
        f.bad("order", "must be forward or reverse")
    elif f.data.get("verdict") not in (None, "first", "second", "tie"):
        f.bad("verdict", "must be first, second, tie or null")
    else:
        pair_id = f.ident("pair_id")
        typed = {k: f.value(k, t, required=False) for k, t in _TYPES.items() if f.has(k)}
        if pair_id is None or f.problems:
            return None
        stored = {k: f.data[k] for k in _STORED if k in f.data}
        return Judgment(**{**stored, **typed, "pair_id": pair_id})
    return None


def read(path: Path) -> list[Judgment]:
    return [j for _, j in parse_rows(path, load_rows(path), parse)]


def write(path: Path, judgments: Iterable[Judgment]) -> int:
    """Written to a temporary file first, so a failure leaves no half-written output."""
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as f:
        for j in judgments:
            d = asdict(j)
            d.pop("extra", None)
            f.write(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
    tmp.replace(path)
    return n
