"""Evaluation pairs from benchmark files: what ``mmrb build`` writes and the published layouts.

The files are read by ``curate.formats`` (one module per format, shared with the importer
and the build); this module turns their records into EvalPairs, one ``PairReader`` per layout,
which the layout's format names in curate/formats/registry.py. The layout comes from the
fields of the first record (``curate.formats.detect_layout``):

- ``triplet``: the project's triplets (``mmrb build``), and the r1_reward copies of
  VL-RewardBench and MM-RLHF-RewardBench (``id, prompt, chosen, rejected, image``); the
  category by ``copy_category``'s order;
- ``mmrb``: Multimodal RewardBench records; Output1 is the first response, as the official
  script shows it;
- ``mmrb_outputs``: Multimodal RewardBench judge outputs (``ID, Label, output, Meta``): labels only;
- ``vlrewardbench``: VL-RewardBench records (``human_ranking`` ``[0, 1]`` = the first
  response preferred; scoring needs one of them preferred, so a tie is refused); the
  category is the one the record states (``mmrb build``), else cal.py's group of the id;
- ``mmrb2``: MMRB2 ground truth, the category is the task the file name names
  (``t2i_response_only.json`` -> ``t2i``; a name that names none is an error).

A triplet has no display order of its own, so its canonical order is chosen-first or
rejected-first by a hash of its id (``curate.sides.copy_chosen_first``): "fixed" order then
does not always show the chosen response first (the flaw that inflates R1-Reward's own
numbers). Such a pair is marked ``seeded_order``: a judge run records the order it showed,
and reading the run back takes that record instead (mmrb_eval/runs.py).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate.errors import InputError, InputProblem
from curate.formats import detect_layout, mm_rlhf, mmrb, mmrb2, triplets
from curate.formats import vlrewardbench as vlrb
from curate.formats.fields import Fields, parse_rows
from curate.formats.reader import Row, load_rows
from curate.judging.records import RunDataset
from curate.llm import encode_image
from curate.model import Part
from curate.sides import copy_chosen_first, from_letter

from .records import EvalPair


def unique_ids(ids: list[str]) -> list[str]:
    """Repeated ids become ``id#0``, ``id#1``... in order, never colliding with another id."""
    counts = Counter(ids)
    taken = set(ids)
    nth: Counter = Counter()
    out = []
    for i in ids:
        if counts[i] <= 1:
            out.append(i)
            continue
        while True:
            new = f"{i}#{nth[i]}"
            nth[i] += 1
            if new not in taken:
                break
        taken.add(new)
        out.append(new)
    return out


def copy_category(rec: triplets.TripletRecord) -> str:
    """The category of a chosen/rejected row. Such a file does not say which benchmark it
    copies, so the first of these that applies decides, in this order:

    1. the ``category`` the row states (the project's triplets, ``mmrb build``);
    2. MM-RLHF-RewardBench's rule (its get_acc.py): the first of its keywords in the image
       path, or the video path without an image (VL-RewardBench's copy names none: its
       paths are ``vl_reward/img/...``);
    3. VL-RewardBench's rule (cal.py): the group of the id's prefix; every id has one.

    Presets group by their script's own rule, whatever this gives (mmrb_eval/rules.py)."""
    return rec.category or mm_rlhf.category_of(rec.image, rec.video) or vlrb.group_of(rec.id)


def _images(value: Any, base: Path) -> tuple[str, ...]:
    if value in (None, "", [], ()):
        return ()
    vals = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for v in vals:
        s = str(v.get("path") or v.get("source") or "") if isinstance(v, dict) else str(v)
        if not s:
            continue
        if "://" in s or s.startswith("data:") or Path(s).is_absolute():
            out.append(s)
        else:
            out.append(str(base / s))
    return tuple(out)


def _local(s: str, base: Path) -> str:
    return s if "://" in s or s.startswith("data:") or Path(s).is_absolute() else str(base / s)


def _located(parts: Iterable[Part], base: Path) -> tuple[Part, ...]:
    """Parts with each image's file name relative to ``base`` made a path (URLs as they are)."""
    return tuple(Part.of_image(_local(p.value, base)) if p.kind == "image" else p for p in parts)


def mmrb2_parts(r: mmrb2.Mmrb2Response, base: Path) -> tuple[Part, ...]:
    """An MMRB2 response's parts for the judge, its images beside the file (as the
    benchmark's evaluate.py finds them); a text-only response has none (its text is enough)."""
    if all(p.kind == "text" for p in r.parts):
        return ()
    return _located(r.parts, base)


def triplet_parts(parts: Iterable[Part], base: Path) -> tuple[Part, ...]:
    """A triplet's ``chosen_parts`` / ``rejected_parts`` (curate/formats/triplets.py): images
    relative to the build folder, or embedded (the Parquet file: its image file in the build
    folder when there, else a data URL of its bytes, downscaled when sent as files are); an
    image the build recorded as missing stays missing."""
    out = []
    for p in parts:
        if p.kind == "text" or p.missing:
            out.append(p)
        elif p.data:  # embedded (the build's Parquet file, in data/ below the build folder)
            beside = [q for q in (base / p.value, base.parent / p.value) if p.value and q.is_file()]
            out.append(Part.of_image(str(beside[0]) if beside else encode_image(p.data, None)))
        else:
            out.append(Part.of_image(_local(p.value, base)))
    return tuple(out)


# -- records -> pairs, per layout ----------------------------------------------------------
def mmrb_pair(rec: mmrb.MmrbRecord, p: Path) -> EvalPair:
    return EvalPair(
        id=rec.id,
        prompt=rec.text or "",
        first=rec.output1,
        second=rec.output2,
        preferred=rec.preferred,
        category=rec.category or "all",
        images=_images(rec.images, p.parent),
        source="mmrb",
    )


def judge_output_pair(rec: mmrb.MmrbJudgeOutput, p: Path) -> EvalPair:
    """The pair a labelled judge output describes (read with ``parse_output(labelled=True)``):
    its Label is the better response as the script showed it, Output1 as A."""
    assert rec.label is not None, "read with labelled=True: Label is required"
    return EvalPair(
        id=rec.id,
        prompt=rec.text,
        first=rec.output1,
        second=rec.output2,
        preferred=from_letter(rec.label, "forward"),
        category=rec.category or "all",
        images=_images(rec.images, p.parent),
        source="mmrb",
    )


def mmrb2_pair(rec: mmrb2.Mmrb2Pair, p: Path) -> EvalPair:
    """A ground-truth pair. With ``prompt_content`` (the files the benchmark's
    build_from_hf.py writes) the prompt is its text parts, a line apart, and its images,
    beside the file; a judge of a pair with image responses sees them interleaved as
    written (``prompt_parts``)."""
    texts = [x.text.strip() for x in rec.prompt_content if x.text.strip()]
    prompt_parts = _located(rec.prompt_content, p.parent)
    return EvalPair(
        id=rec.id,
        prompt=rec.prompt or "\n".join(texts),
        images=tuple(x.value for x in prompt_parts if x.kind == "image"),
        first=mmrb2.render_text(rec.response_a),
        second=mmrb2.render_text(rec.response_b),
        preferred=rec.preferred,
        category=mmrb2.task_of(p),
        source=rec.prompt_source if rec.prompt_source is not None else "mmrb2",
        first_parts=mmrb2_parts(rec.response_a, p.parent),
        second_parts=mmrb2_parts(rec.response_b, p.parent),
        prompt_parts=prompt_parts if any(x.kind == "image" for x in prompt_parts) else (),
    )


def vlrb_pair(rec: vlrb.VlrbRecord, p: Path) -> EvalPair:
    preferred = rec.preferred
    assert preferred is not None, "read with parse_preferring: the ranks are [0, 1] or [1, 0]"
    return EvalPair(
        id=rec.id,
        prompt=rec.query,
        first=rec.response[0],
        second=rec.response[1],
        preferred=preferred,
        category=rec.category,
        images=_images(rec.all_images, p.parent),
        source="vlrewardbench",
        metadata={"vlrb_key": vlrb.item_key(rec.id, rec.query, rec.response)},
    )


def triplet_pair(rec: triplets.TripletRecord, p: Path) -> EvalPair:
    chosen_first = copy_chosen_first(rec.id)
    chosen_parts, rejected_parts = (
        triplet_parts(rec.chosen_parts, p.parent),
        triplet_parts(rec.rejected_parts, p.parent),
    )
    extra = dict(rec.extra)
    # the paths as written: MM-RLHF's categories are keywords found in them
    extra.update({f"{k}_field": v for k, v in (("image", rec.image), ("video", rec.video)) if v is not None})
    return EvalPair(
        id=rec.id,
        prompt=rec.prompt,
        first=rec.chosen if chosen_first else rec.rejected,
        second=rec.rejected if chosen_first else rec.chosen,
        preferred="first" if chosen_first else "second",
        category=copy_category(rec),
        images=_images(rec.images, p.parent),
        source=rec.source or "",
        group=rec.group or "",
        metadata=extra,
        first_parts=chosen_parts if chosen_first else rejected_parts,
        second_parts=rejected_parts if chosen_first else chosen_parts,
        seeded_order=True,
    )


def mmrb2_ground_truth(f: Fields) -> mmrb2.Mmrb2Pair | None:
    """An MMRB2 ground-truth pair for scoring. Its id must be written as text: a judgement
    file's keys are JSON strings and compute_accuracy.py looks each pair up by its id as the
    ground truth wrote it, so a number there is a pair it counts missing whatever was judged.
    Rather than print that figure, the file is refused (the importer takes such ids)."""
    rid = f.data.get("id")
    if rid is not None and not isinstance(rid, str):
        f.bad(
            "id",
            f"{json.dumps(rid)} is not a string: compute_accuracy.py looks pairs up by string keys and would "
            "count this pair missing; write the id in quotes",
        )
        return None
    return mmrb2.parse(f)


@dataclass(frozen=True)
class PairReader:
    """How the records of a layout are read (``parse``) and made pairs (``to_pair``)."""

    parse: Callable[[Fields], Any]
    to_pair: Callable[[Any, Path], EvalPair]


# the readers the layouts of curate/formats/registry.py name
MMRB_RECORDS = PairReader(mmrb.parse, mmrb_pair)
MMRB_OUTPUTS = PairReader(lambda f: mmrb.parse_output(f, labelled=True), judge_output_pair)
MMRB2_GROUND_TRUTH = PairReader(mmrb2_ground_truth, mmrb2_pair)
VLRB_RECORDS = PairReader(vlrb.parse_preferring, vlrb_pair)
TRIPLETS = PairReader(triplets.parse, triplet_pair)


def first_record(p: Path, rows: list[Row]) -> Row:
    row = next((r for r in rows if r.data is not None), None)
    if row is None:
        raise InputError([InputProblem(str(p), None, None, "no records")])
    return row


def read_pairs(p: Path, *, nul: bool = False) -> list[EvalPair]:
    """The pairs of one file, under the ids it gives them."""
    rows = load_rows(p)
    reader: PairReader = detect_layout(first_record(p, rows).data, p).reader()
    return [reader.to_pair(rec, p) for _, rec in parse_rows(p, rows, reader.parse, nul=nul)]


def read_dataset(paths: str | Path | Iterable[str | Path], *, nul: bool = False) -> list[EvalPair]:
    """All pairs of one or more dataset files, in file order; duplicate ids within a file
    become ``id#0``, ``id#1``... with ``group`` = the shared id (Acc+)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[EvalPair] = []
    problems: list[InputProblem] = []
    seen: set[str] = set()
    for p in map(Path, paths):
        try:
            pairs = read_pairs(p, nul=nul)
        except InputError as e:
            problems += e.problems
            continue
        for x, new in zip(pairs, unique_ids([x.id for x in pairs]), strict=True):
            if new != x.id:
                x = renamed(x, new)
            if x.id in seen:
                problems.append(InputProblem(str(p), None, "id", f"pair id {x.id!r} also appears in an earlier file"))
            seen.add(x.id)
            out.append(x)
    if problems:
        raise InputError(problems)
    return out


def renamed(x: EvalPair, new: str) -> EvalPair:
    """A pair whose id repeats in its file, under its new id: the file's id stays its prompt
    group (Acc+) and its ``source_id`` (groupings by id)."""
    meta = {**x.metadata, "source_id": x.id}
    return EvalPair(**{**x.__dict__, "id": new, "group": x.group or x.id, "metadata": meta})


def dataset_label(paths: list[str] | str, limit: int | None = None) -> str:
    """How a report names its dataset files (as a judge run does: RunDataset.label)."""
    return RunDataset.files(paths, limit).label
