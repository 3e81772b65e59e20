"""Every ``[image: NAME]`` marker in the texts of a build, and the file each one names: the
markers of a built text must name files of the build (issue 30)."""

from __future__ import annotations

import json
import re
from pathlib import Path

MARKER = re.compile(r"\[image: ([^\]\n]+)\]")
# the texts of each layout that hold a response: (file, its fields)
JSONL_TEXTS = {
    "triplets.jsonl": ("chosen", "rejected"),
    "multimodal_rewardbench.jsonl": ("Output1", "Output2"),
}


def built_texts(out: Path) -> list[tuple[str, str]]:
    """(where, text) of every response text the build wrote: the JSONL layouts, VL-RewardBench's
    responses, the Parquet file's and the Hugging Face dataset's chosen / rejected columns."""
    import pyarrow.parquet as pq
    from datasets import load_from_disk

    from curate.benchmark.export import PARQUET

    texts: list[tuple[str, str]] = []
    for name, fields in JSONL_TEXTS.items():
        for n, line in enumerate((out / name).read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            texts += [(f"{name}:{n}:{f}", row[f]) for f in fields]
    for n, line in enumerate((out / "vl_rewardbench.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        texts += [(f"vl_rewardbench.jsonl:{n}:response[{k}]", r) for k, r in enumerate(json.loads(line)["response"])]
    table = pq.read_table(out / PARQUET, columns=["chosen", "rejected"]).to_pydict()
    hf = load_from_disk(str(out / "hf")).select_columns(["chosen", "rejected"]).to_dict()
    for where, cols in ((PARQUET, table), ("hf", hf)):
        for f in ("chosen", "rejected"):
            texts += [(f"{where}:{n}:{f}", t) for n, t in enumerate(cols[f], 1)]
    return texts


def markers(out: Path) -> list[tuple[str, str]]:
    """(where, name) of every image marker in the build's texts."""
    return [(where, m) for where, text in built_texts(out) for m in MARKER.findall(text)]


def unresolved(out: Path) -> list[tuple[str, str]]:
    """The markers naming no file of the build (none, in a good build)."""
    return [(where, name) for where, name in markers(out) if not (out / name).is_file()]
