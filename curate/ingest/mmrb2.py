"""MMRB2 ground truth (curate/formats/mmrb2.py) as items, pairs and labels.

The published files carry no prompt text (only its source and metadata): the item's prompt
is empty and the metadata says where the prompt lives. The files ``mmrb build`` writes also
have the prompt (``prompt_content``, as the benchmark's build_from_hf.py writes it): its
text parts, a line apart, and its images become the item's prompt and images.
The task is ``mmrb2.task_of`` (the file name, or ``--category``). A response's parts become
the candidate's parts: its images are read beside the file (or under ``--images-root``), a
file that is not there is recorded as missing. The candidate's text is
``mmrb2.render_text`` (images as ``[image: name]`` markers), as scoring renders it; the
original content is kept in the pair's metadata.

The three annotators' ``human_annotations`` become labels from ``mmrb2-rater-1..3``
(positions, not people: MMRB2 does not say who rated which pair):
- t2i / edit / interleaved: a 1-6 score each (high = A better); preference ``first``
  when the score is above 3.5, as the benchmark's ``chosen`` is the mean above 3.5;
- reasoning: per-response letter grades (A best, then B, C); the better grade is preferred,
  equal grades are a tie. 373 of the 1,000 pairs grade only response B: those labels keep
  the grade and have no preference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..formats import mmrb2
from ..formats.mmrb2 import Rating
from ..model import Item, Label, Part, Preference
from .common import Context, ImportFields, ImportPlan, ParsedRow, Response, fit_id
from .pairs import ordered_pair

RATERS = tuple(f"mmrb2-rater-{n + 1}" for n in range(mmrb2.RATERS))
CATEGORIES = mmrb2.CATEGORIES


def _label(pair_id: str, rater: str, r: Rating) -> Label:
    if r.score is not None:
        return Label(
            pair_id,
            rater,
            preference="first" if r.score > 3.5 else "second",
            ratings={"score": r.score},
            source="import:mmrb2",
            scheme_version=1,
        )
    pref: Preference | None = None
    if r.grade_a and r.grade_b:  # some pairs grade only one response: the preference stays open
        ia, ib = mmrb2.GRADES.index(r.grade_a), mmrb2.GRADES.index(r.grade_b)
        pref = "first" if ia < ib else "second" if ia > ib else "tie"
    ratings = {k: v for k, v in (("grade_first", r.grade_a), ("grade_second", r.grade_b)) if v}
    return Label(pair_id, rater, preference=pref, ratings=ratings, source="import:mmrb2", scheme_version=1)


def _parts(f: ImportFields, name: str, r: mmrb2.Mmrb2Response) -> Response | None:
    """A response's parts, its images looked up beside the file (or under the images folder)
    and recorded as missing when absent; a text-only response stays its text."""
    if all(p.kind == "text" for p in r.parts):
        return mmrb2.render_text(r)
    out: list[Part] = []
    for n, p in enumerate(r.parts):
        if p.kind == "text":
            out.append(p)
            continue
        ref = f.ctx.image(f, f"{name}.response_content[{n}]", p.value)
        if ref is None:
            return None
        out.append(Part.of_image(ref))
    return tuple(out)


def make_parser(category: str) -> Callable[[ImportFields, Context], ParsedRow]:
    def parse(f: ImportFields, ctx: Context) -> ParsedRow:
        rec = mmrb2.parse(f, mmrb2.IMPORT_NEEDS)
        if rec is None:
            return ParsedRow()
        a, b = rec.response_a, rec.response_b
        ma, mb = a.model or "", b.model or ""  # IMPORT_NEEDS: both are there
        iid = fit_id(f"mmrb2:{category}:{rec.id}", reserve=max(len(ma), len(mb)) + 4)
        ratings = mmrb2.ratings(f, category)
        if ratings is None:
            return ParsedRow()
        meta = f.metadata((*mmrb2.FIELDS, "prompt_content"))
        meta["mmrb2_id"] = rec.id
        images = []
        for n, p in enumerate(rec.prompt_content):
            if p.kind == "image":
                ref = f.ctx.image(f, f"prompt_content[{n}]", p.value)
                if ref is None:
                    return ParsedRow()
                images.append(ref)
        prompt = rec.prompt or "\n".join(p.text.strip() for p in rec.prompt_content if p.text.strip())
        item = Item(iid, prompt, category, images=tuple(images), source="mmrb2", metadata=meta)
        pa, pb = _parts(f, "response_a", a), _parts(f, "response_b", b)
        if pa is None or pb is None:
            return ParsedRow()
        parsed = ordered_pair(
            item,
            (ma, pa),
            (mb, pb),
            origin="import:mmrb2",
            known_preference=rec.preferred,
            metadata={"chosen": rec.chosen, **mmrb2.as_written(f)},
            # the labels below are these schemes' fields (curate/schemes.py)
            scheme="mmrb2-reasoning" if category == "reasoning" else "mmrb2-pairwise",
        )
        # up to three raters: a pair rated by fewer gets fewer labels
        parsed.labels = [_label(iid, rater, r) for rater, r in zip(RATERS, ratings, strict=False)]
        return parsed

    return parse


def plan(path: Path, categories: Iterable[str] | None, category: str | None) -> ImportPlan:
    """The task is the file name's (or ``--category``); the records are the list under
    ``pairs``, the labels its raters'."""
    task = mmrb2.task_of(path, category, option="--category")
    return ImportPlan(make_parser(task), json_key=mmrb2.JSON_KEY, annotators=RATERS)
