"""The final benchmark's files. Every file is a pure function of the triplets: no
timestamps, keys in a fixed order, rows sorted by id, so the same inputs give the same bytes.
Each layout is written by its format's module (curate/formats); this module decides what
goes where. Each format the build writes names its writer here in curate/formats/registry.py
(``write_triplets``, ``write_mmrb``, ``write_vlrb``, ``write_mmrb2``: ``(folder, Export) ->
counts``), and the build writes every such format.

* ``triplets.jsonl`` + ``images/<sha256>.<ext>``: one triplet a line, image paths relative
  to the build folder;
* ``data/test-00000-of-00001.parquet``: the triplets with image bytes embedded and the
  Hugging Face features in the schema metadata (``load_dataset("parquet", ...)`` gives an
  Image feature; the Hub reads it through the card's ``configs``);
* ``hf/``: ``Dataset.save_to_disk`` (``datasets.load_from_disk``);
* ``multimodal_rewardbench.jsonl``: ``ID, Text, Image, Output1, Output2, Better, Category``;
* ``vl_rewardbench.jsonl``: ``id, query, response, image, human_ranking, models, judge,
  rationale, query_source, meta, human_error_analysis, ground_truth``;
* ``mmrb2/{task}.json`` with the image files beside them: the triplets of the four MMRB2
  tasks (categories t2i, edit, interleaved, reasoning) in MMRB2's layout (see
  ``write_mmrb2``); other categories have no place in it.

Position: in the three benchmark layouts the chosen response is first for half of the triplets
and second for the other half, the same in each (``Export.chosen_first``, decided by
``curate.sides.export_chosen_first``).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import sides
from ..errors import MmrbError
from ..formats import mmrb, mmrb2, triplets, vlrewardbench
from ..images import ImageStore
from ..model import Label, Part, Side, Triplet
from ..seeding import hex_hash

SPLIT = "test"  # the one split: named so in the card's YAML, its loading example and the saved dataset
PARQUET = f"data/{SPLIT}-00000-of-00001.parquet"
# the raw per-annotator labels of every considered pair (curate/formats/labels.py): config "annotations"
ANNOTATIONS = f"annotations/{SPLIT}-00000-of-00001.parquet"


@dataclass(frozen=True)
class Export:
    """What every layout of the build is written from: the triplets (in id order), where the
    chosen response goes in the benchmark layouts (``curate.sides.export_chosen_first``),
    each triplet's reference answer, the stored side of its chosen response, and its pair's
    labels (MMRB2's ``human_annotations``)."""

    triplets: list[Triplet]
    chosen_first: Mapping[str, bool]
    references: Mapping[str, str | None] = field(default_factory=dict)
    chosen_side: Mapping[str, Side] = field(default_factory=dict)
    labels: Mapping[str, list[Label]] = field(default_factory=dict)

    @staticmethod
    def of(triplets: list[Triplet], seed: int, **more: Any) -> Export:
        """The triplets placed by the build's seed."""
        return Export(triplets, sides.export_chosen_first(triplets, seed), **more)


def copy_images(out: Path, sources: dict[str, Path], images: ImageStore) -> None:
    """sources: relative path in the build -> file in the image store, read through the
    store's checked opener (a regular file inside the image folder, never a link's target)."""
    for rel, src in sorted(sources.items()):
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(images.read_stored(src.relative_to(images.root).as_posix()))


def write_triplets(out: Path, e: Export) -> dict[str, int]:
    """The project's own format: ``triplets.jsonl`` and the Hugging Face dataset."""
    write_jsonl(out, e.triplets)
    write_hf(out, e.triplets)
    return {}


def write_jsonl(out: Path, rows: list[Triplet]) -> None:
    triplets.write(out / "triplets.jsonl", rows)


def write_mmrb(out: Path, e: Export) -> dict[str, int]:
    rows, first = e.triplets, e.chosen_first
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
    return {}


def write_vlrb(out: Path, e: Export) -> dict[str, int]:
    first, references = e.chosen_first, e.references

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

    vlrewardbench.write(out / "vl_rewardbench.jsonl", (record(t) for t in e.triplets))
    return {}


def write_hf(out: Path, rows: list[Triplet]) -> None:
    """The Hugging Face dataset (save_to_disk) and its Parquet file, images embedded."""
    triplets.write_hf(rows, out, out / PARQUET, out / "hf", split=SPLIT)


MMRB2_DIR = "mmrb2"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]|^[._-]")


def _mmrb2_score(lab: Label) -> float | None:
    """A label's MMRB2 score (``ratings.score``, 1-6, high = first better: the ``mmrb2-pairwise``
    scheme's field, as its import and ``curate.schemes.to_label`` keep it), or None."""
    score = (lab.ratings or {}).get("score")
    if isinstance(score, (int, float)) and not isinstance(score, bool) and 1 <= score <= 6:
        return score
    return None


def _mmrb2_grades(lab: Label) -> dict[str, str | None]:
    """A label's letter grades by stored side (``mmrb2-reasoning``'s ``grade_first`` / ``grade_second``)."""
    r = lab.ratings or {}
    return {side: g if (g := r.get(f"grade_{side}")) in mmrb2.GRADES else None for side in ("first", "second")}


def _unwritable(task: str, lab: Label) -> bool:
    """A label that says a preference but has no score (or, for reasoning, no grade): MMRB2's
    layout could hold it only as a score or grades made up from the preference."""
    if task == "reasoning":
        return lab.preference is not None and not any(_mmrb2_grades(lab).values())
    return lab.preference in ("first", "second") and _mmrb2_score(lab) is None


def mmrb2_unscored(e: Export) -> dict[str, list[str]]:
    """The MMRB2 layout's triplets whose labels cannot be written without inventing a score or
    a grade: pair id -> the annotators of those labels."""
    out: dict[str, list[str]] = {}
    for t in e.triplets:
        if t.category in mmrb2.CATEGORIES:
            who = sorted(lab.annotator for lab in e.labels.get(t.id, ()) if _unwritable(t.category, lab))
            if who:
                out[t.id] = who
    return out


def mmrb2_refused(e: Export) -> dict[str, list[str]]:
    """The MMRB2 tasks whose file the build does not write, and why: task -> its pairs with a
    label that has a preference but no 1-6 score or letter grade (made on another scheme).
    MMRB2's file holds each rater's score; one made up from a preference is never written,
    and a task is written whole or not at all (the build's other layouts hold every triplet)."""
    out: dict[str, list[str]] = {}
    category = {t.id: t.category for t in e.triplets}
    for pid in mmrb2_unscored(e):
        out.setdefault(category[pid], []).append(pid)
    return out


def mmrb2_ratings(task: str, labels: Iterable[Label], a_side: Side) -> tuple[mmrb2.Rating, ...]:
    """A pair's labels as MMRB2's ``human_annotations`` with ``a_side`` (the stored side) as
    response A: at most three (the format's raters), in annotator order, those that say
    something. A score (``ratings.score``, 1-6, high = first better) or grades
    (``grade_first`` / ``grade_second``) are written as they are, turned to A's point of view.
    A label with a preference but no score or grade is refused (its task is not written,
    ``mmrb2_refused``): no score is made up from a preference. A label that says nothing on the
    scale (a tie, no answer) is left out."""
    out: list[mmrb2.Rating] = []
    b_side = sides.other(a_side)
    for lab in sorted(labels, key=lambda lab: lab.annotator):
        if len(out) == mmrb2.RATERS:
            break
        if _unwritable(task, lab):
            raise MmrbError(f"pair {lab.pair_id!r}: {lab.annotator!r}'s label has a preference but no MMRB2 score")
        if task == "reasoning":
            grades = _mmrb2_grades(lab)
            if any(grades.values()):
                out.append(mmrb2.Rating(grade_a=grades[a_side], grade_b=grades[b_side]))
            continue
        score = _mmrb2_score(lab)
        if score is not None:
            out.append(mmrb2.Rating(score=score if a_side == "first" else 7 - score))
    if task == "reasoning":
        # the format lists each response's grades apart, so a response that some raters did
        # not grade cannot say whose grades it has: its grades are left out
        keep_a = all(x.grade_a for x in out)
        keep_b = all(x.grade_b for x in out)
        out = [
            mmrb2.Rating(grade_a=x.grade_a if keep_a else None, grade_b=x.grade_b if keep_b else None)
            for x in out
            if (keep_a and x.grade_a) or (keep_b and x.grade_b)
        ]
    return tuple(out)


def _mmrb2_name(pair_id: str) -> str:
    """The stem of a pair's image files: its id, or when the id holds characters other than
    letters, digits, ``.``, ``_`` and ``-`` (or is long), the id with those made ``_`` and
    a short hash of the id after it (two ids never share a stem)."""
    stem = _UNSAFE.sub("_", pair_id)[:100]
    return pair_id if stem == pair_id else f"{stem}-{hex_hash(pair_id, n=8)}"


def _place(src: Path, dst: Path) -> None:
    """``src`` (a file of the build) also as ``dst``: a hard link (the same bytes once on
    disk, and thousands of links take a fraction of the copies' time), a copy where the file
    system has no links."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _suffix(name: str) -> str:
    """A file name's extension, lower case (``.png`` when it has none that looks like one)."""
    ext = Path(name).suffix.lower()
    return ext if re.fullmatch(r"\.[a-z0-9]{1,5}", ext) else ".png"


def _mmrb2_response(
    out: Path,
    folder: Path,
    stem: str,
    counter: Iterator[int],
    model: str,
    text: str,
    parts: tuple[Part, ...],
) -> mmrb2.Mmrb2Response:
    """A triplet's response in MMRB2's parts, its images placed in ``folder`` (``_place``)."""
    if not parts:
        return mmrb2.Mmrb2Response((Part.of_text(text),), model)
    written: list[Part] = []
    for part in parts:
        if part.kind == "text":
            written.append(part)
            continue
        name = f"{stem}_{next(counter)}{_suffix(part.value)}"
        if not part.missing:  # missing from the store: the name of a file that is not there
            _place(out / part.value, folder / name)
        written.append(Part.of_image(name))
    return mmrb2.Mmrb2Response(tuple(written), model)


def write_mmrb2(out: Path, e: Export) -> dict[str, int]:
    """MMRB2's layout (curate/formats/mmrb2.py): ``mmrb2/{task}.json`` per task, response A
    the chosen response where ``e.chosen_first`` says so (the placement of the other layouts),
    images beside the file (``_place``) as ``{id}_{n}.{ext}`` (n counts A's images, then B's, as
    the benchmark names them; the prompt's ``{id}_prompt{n}.{ext}``: no two names of
    different images are the same, whatever the ids). A response image
    missing from the store keeps a name whose file is not there, so an import records it as
    missing. ``e.chosen_side``: the stored side of each triplet's chosen response (to turn
    labels to A and B). Returns the triplets written per task (none: no folder); a task with a
    label that has no score is not written (``mmrb2_refused``)."""
    refused = mmrb2_refused(e)
    rows, first, chosen_side, labels = e.triplets, e.chosen_first, e.chosen_side, e.labels
    counts: dict[str, int] = {}
    for task in mmrb2.CATEGORIES:
        group = [t for t in rows if t.category == task]
        if not group or task in refused:
            continue
        folder = out / MMRB2_DIR
        folder.mkdir(parents=True, exist_ok=True)
        records = []
        for t in group:
            stem = _mmrb2_name(t.id)
            a_is_chosen = first[t.id]
            a_side = chosen_side[t.id] if a_is_chosen else sides.other(chosen_side[t.id])
            counter = itertools.count()  # A's images are numbered first, then B's
            shown = [(t.chosen_model, t.chosen, t.chosen_parts), (t.rejected_model, t.rejected, t.rejected_parts)]
            if not a_is_chosen:
                shown.reverse()
            response_a, response_b = (_mmrb2_response(out, folder, stem, counter, *r) for r in shown)
            prompt: list[Part] = []  # the prompt's images, then its text (as sent to models)
            for k, rel in enumerate(t.images):
                name = f"{stem}_prompt{k}{_suffix(rel)}"
                _place(out / rel, folder / name)
                prompt.append(Part.of_image(name))
            if t.prompt:
                prompt.append(Part.of_text(t.prompt))
            records.append(
                mmrb2.Mmrb2Pair(
                    id=t.id,
                    response_a=response_a,
                    response_b=response_b,
                    chosen="A" if a_is_chosen else "B",
                    prompt_source=t.source,
                    prompt_content=tuple(prompt),
                    ratings=mmrb2_ratings(task, labels.get(t.id, ()), a_side),
                )
            )
        mmrb2.write(folder / mmrb2.file_name(task), task, records)
        counts[task] = len(group)
    return counts
