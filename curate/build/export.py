"""The final benchmark's files. Every file is a pure function of the triplets: no
timestamps, keys in a fixed order, rows sorted by id, so the same inputs give the same bytes.
Each layout is written by its format's module (curate/formats); this module decides what
goes where and which response comes first.

* ``triplets.jsonl`` + ``images/<sha256>.<ext>``: one triplet a line, image paths relative
  to the build folder;
* ``data/test-00000-of-00001.parquet``: the triplets with image bytes embedded and the
  Hugging Face features in the schema metadata (``load_dataset("parquet", ...)`` gives an
  Image feature; the Hub reads it through the card's ``configs``);
* ``hf/``: ``Dataset.save_to_disk`` (``datasets.load_from_disk``);
* ``multimodal_rewardbench.jsonl``: ``ID, Text, Image, Output1, Output2, Better, Category``;
* ``vl_rewardbench.jsonl``: ``id, query, response, image, human_ranking, models, judge,
  rationale, query_source, meta, human_error_analysis, ground_truth``.

Position: in the two benchmark layouts the chosen response is first for half of the triplets
and second for the other half. Triplets are ordered by sha256(seed, id) within each category
and alternate; the alternation carries over between categories, so each category and the
whole set differ by at most one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..formats import mmrb, triplets, vlrewardbench
from ..model import Triplet
from ..seeding import digest

SPLIT = "test"  # the one split: named so in the card's YAML, its loading example and the saved dataset
PARQUET = f"data/{SPLIT}-00000-of-00001.parquet"


def chosen_first(triplets: list[Triplet], seed: int) -> dict[str, bool]:
    """Seeded, balanced placement of the chosen response (see the module doc)."""
    out: dict[str, bool] = {}
    k = 0
    for cat in sorted({t.category for t in triplets}):
        group = sorted((t for t in triplets if t.category == cat), key=lambda t: digest(seed, t.id))
        for t in group:
            out[t.id] = k % 2 == 0
            k += 1
    return out


def copy_images(out: Path, sources: dict[str, Path]) -> None:
    """sources: relative path in the build -> file in the image store."""
    for rel, src in sorted(sources.items()):
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


def write_jsonl(out: Path, rows: list[Triplet]) -> None:
    triplets.write(out / "triplets.jsonl", rows)


def write_mmrb(out: Path, rows: list[Triplet], first: dict[str, bool]) -> None:
    mmrb.write(
        out / "multimodal_rewardbench.jsonl",
        (
            mmrb.MmrbRecord(
                id=t.id,
                output1=t.chosen if first[t.id] else t.rejected,
                output2=t.rejected if first[t.id] else t.chosen,
                better=mmrb.better_of("first" if first[t.id] else "second"),
                text=t.prompt,
                images=t.images[:1],
                category=t.category,
            )
            for t in rows
        ),
    )


def write_vlrb(out: Path, rows: list[Triplet], first: dict[str, bool], references: dict[str, str | None]) -> None:
    def record(t: Triplet) -> vlrewardbench.VlrbRecord:
        f = first[t.id]
        return vlrewardbench.VlrbRecord(
            id=t.id,
            query=t.prompt,
            response=(t.chosen, t.rejected) if f else (t.rejected, t.chosen),
            ranking=(0, 1) if f else (1, 0),  # rank 0 = preferred
            images=t.images[:1],
            models=(t.chosen_model, t.rejected_model) if f else (t.rejected_model, t.chosen_model),
            query_source=t.source,
            meta=vlrewardbench.build_meta(
                t.category, t.images, task=t.task, n_labels=t.n_labels, agreement=t.agreement
            ),
            extra={
                "judge": "human",
                "rationale": "",
                "human_error_analysis": "",
                "ground_truth": references.get(t.id) or "",
            },
        )

    vlrewardbench.write(out / "vl_rewardbench.jsonl", (record(t) for t in rows))


def write_hf(out: Path, rows: list[Triplet]) -> None:
    """The Hugging Face dataset (save_to_disk) and its Parquet file, images embedded."""
    triplets.write_hf(rows, out, out / PARQUET, out / "hf", split=SPLIT)
