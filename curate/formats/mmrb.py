"""Multimodal RewardBench (Yasunaga et al., 2025): its records and its judges' outputs.

- Records ``{"ID", "Text", "Image", "Output1", "Output2", "Better": "Output1"|"Output2",
  "Category"}`` (a JSON list or JSONL). Output1 is the first response: the official judge
  script always shows it as A. Read by ``parse``, written by ``write`` (``mmrb build``).
- Judge outputs, as ``1_run_model_as_judge_*.py`` writes them and ``2_get_accuracy.py``
  reads them: ``ID, Image, Label ("A"|"B"), output`` (the judge's text; ``outputs``, a list,
  holds several samples) and ``Meta`` (the record's Text, Output1, Output2, Category).
  Read by ``parse_output``.

``need`` names the fields a reader cannot do without beyond the format's own (the
importer needs a prompt, a category and an image; scoring does not). ``reported``: the
file's own categories are what scoring reports, so each row needs one, and none may be one
of the group names ``2_get_accuracy.py`` prints beside the categories (``GROUP_NAMES``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..model import MMRB_CATEGORIES, Letter, Side
from .fields import Fields
from .writer import write_jsonl

FIELDS = ("ID", "Text", "Image", "Output1", "Output2", "Better", "Category")
CATEGORIES = MMRB_CATEGORIES
Better = Literal["Output1", "Output2"]
BETTER: tuple[Better, ...] = ("Output1", "Output2")
IMPORT_NEEDS = frozenset({"Text", "Category", "Image"})
# Group names 2_get_accuracy.py (and R1-Reward's copy) prints besides the categories: a
# category of the same name would be merged into them there.
GROUP_NAMES = ("all", "safety/bias", "safety/toxicity", "reasoning/math", "reasoning/coding")


def better_of(preferred: Side) -> Better:
    """The ``Better`` of a record whose ``preferred`` response is this one."""
    return "Output1" if preferred == "first" else "Output2"


@dataclass(frozen=True)
class MmrbRecord:
    id: str
    output1: str
    output2: str
    better: Better
    text: str | None = None
    images: tuple[Any, ...] = ()  # the Image field: one path as written (or what the reader made of it)
    category: str | None = None

    @property
    def preferred(self) -> Side:
        return "first" if self.better == "Output1" else "second"


@dataclass(frozen=True)
class MmrbJudgeOutput:
    id: str
    outputs: tuple[str, ...]  # ``output``, or the samples of ``outputs``
    label: Letter | None = None  # the better response as shown: A is Output1
    images: tuple[Any, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)  # Meta as written

    # the judged record, as Meta restates it
    @property
    def text(self) -> str:
        return str(self.meta.get("Text", ""))

    @property
    def output1(self) -> str:
        return str(self.meta.get("Output1", ""))

    @property
    def output2(self) -> str:
        return str(self.meta.get("Output2", ""))

    @property
    def category(self) -> str | None:
        value = self.meta.get("Category")
        return str(value) if value else None


def parse(f: Fields, need: Collection[str] = (), *, reported: bool = False) -> MmrbRecord | None:
    rid = f.ident("ID")
    text = f.text("Text", required="Text" in need, allow_empty="Text" not in need)
    out1 = f.text("Output1", allow_empty=True)
    out2 = f.text("Output2", allow_empty=True)
    better = f.text("Better")
    if better is not None and better not in BETTER:
        f.bad("Better", f"expected 'Output1' or 'Output2', got {better!r}: the better response is Output1 or Output2")
    category = f.category(
        "Category", f.text("Category", required="Category" in need, allow_empty="Category" not in need)
    )
    images = f.images("Image", required="Image" in need)
    if reported:
        check_reported_category(f, f.data.get("Category"), "Category")
    if f.problems or rid is None or out1 is None or out2 is None or images is None:
        return None
    return MmrbRecord(rid, out1, out2, "Output1" if better == "Output1" else "Output2", text, images, category)


def parse_output(f: Fields, *, labelled: bool, reported: bool = False) -> MmrbJudgeOutput | None:
    """A judge output; ``labelled``: the file itself is what the judge is scored against,
    so ``Label`` is required (a dataset given beside it carries the labels otherwise);
    ``reported``: its ``Meta.Category`` is what scoring reports."""
    rid = f.ident("ID")
    label = f.text("Label", required=labelled)
    if label is not None and label not in ("A", "B"):
        f.bad("Label", f"must be A or B, not {label!r}")
    outputs: tuple[str, ...] = ()
    if "output" in f.data:
        if not isinstance(f.data["output"], str):
            f.bad("output", "must be the judge's text (a string)")
        else:
            outputs = (f.data["output"],)
    else:
        many = f.data.get("outputs")
        if isinstance(many, list) and many and all(isinstance(x, str) for x in many):
            outputs = tuple(many)
        else:
            f.bad("output", "missing (a judge output string, or outputs: a list of them)")
    meta = f.data.get("Meta")
    images = f.images("Image")
    if reported:
        check_reported_category(f, meta.get("Category") if isinstance(meta, dict) else None, "Meta.Category")
    if f.problems or rid is None or images is None:
        return None
    return MmrbJudgeOutput(
        rid,
        outputs,
        "A" if label == "A" else "B" if label == "B" else None,
        images,
        meta if isinstance(meta, dict) else {},
    )


def check_reported_category(f: Fields, value: Any, name: str) -> None:
    if not isinstance(value, str) or not value:
        f.bad(name, "missing (the row's category, a string)")
    elif value in GROUP_NAMES:
        f.bad(name, f"{value!r} is also one of the scoring script's group names, which would merge them")


def write(path: Path, records: Iterable[MmrbRecord]) -> None:
    write_jsonl(
        path,
        (
            {
                "ID": r.id,
                "Text": r.text or "",
                "Image": r.images[0] if r.images else "",
                "Output1": r.output1,
                "Output2": r.output2,
                "Better": r.better,
                "Category": r.category or "",
            }
            for r in records
        ),
    )
