"""Multimodal RewardBench 2 (facebookresearch/MMRB2): ground truth and judgements.

- Ground truth (``parse``), the ``{t2i,edit,interleaved,reasoning}_response_only.json``
  files: ``{"pairs": [{"id", "response_a": {"model_name", "response_content": [[kind,
  value], ...]}, "response_b", "chosen": "A"|"B", "human_annotations", "prompt_source",
  "prompt_metadata"}]}``. The published files carry no prompt text; the files the
  benchmark's ``build_from_hf.py`` writes add ``prompt_content`` (the prompt's parts, images
  relative to the file), read when present. A response's parts are text or
  images (file names only). Some copies store a response as its Python repr, or as plain
  text; both read here. ``human_annotations``: three raters' 1-6 scores
  for t2i / edit / interleaved (high = A better; ``chosen`` is A exactly when the mean is
  above 3.5), per-response letter grades for reasoning (A best; in 373 of the 1,000 pairs
  only response B is graded); read by ``ratings``.
- Written (``write``) by ``mmrb build`` for the triplets of the four tasks: one
  ``{task}.json`` per task (the names the benchmark's compute_accuracy.py reads), the same
  fields with ``prompt_content`` (the prompt's images, then its text), image file names
  relative to the file (the files beside it).
- Judgements (``read_judgements``), what the benchmark's judge runs write and
  compute_accuracy.py reads: ``{pair_id: {"forward": [{"judgement": "A"|"B"}], "reverse":
  [...]}}``; a reverse judgement names the responses as shown, so "A" there is response_b.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, InputProblem
from ..model import MMRB2_CATEGORIES, MMRB2_GRADES, Letter, Order, Part, Side, render_parts
from .fields import Fields
from .reader import MALFORMED, json_problem, unreadable_member

FIELDS = ("id", "response_a", "response_b", "chosen", "human_annotations")
CATEGORIES = MMRB2_CATEGORIES
GRADES = MMRB2_GRADES  # best first
RATERS = 3
JSON_KEY = "pairs"
IMPORT_NEEDS = frozenset({"model_name"})  # candidate ids need the model, without ':'
_ORDERS: tuple[Order, Order] = ("forward", "reverse")


@dataclass(frozen=True)
class Rating:
    """One rater position's annotation of a pair (positions, not people)."""

    score: float | None = None  # t2i / edit / interleaved: 1-6, high = A better
    grade_a: str | None = None  # reasoning: letter grades, A best
    grade_b: str | None = None


@dataclass(frozen=True)
class Mmrb2Response:
    parts: tuple[Part, ...]  # in order, each image by its file name (relative to the file)
    model: str | None = None  # None: a copy that kept only the text


@dataclass(frozen=True)
class Mmrb2Pair:
    id: str
    response_a: Mmrb2Response
    response_b: Mmrb2Response
    chosen: Letter
    prompt: str = ""  # the published files have none
    prompt_source: str | None = None
    # the files the benchmark's build_from_hf.py writes: the prompt's text and images in order
    prompt_content: tuple[Part, ...] = ()
    # what ``write`` writes beyond the parsed fields (the raters' annotations are read by
    # ``ratings``, which needs the task)
    prompt_metadata: Mapping[str, Any] | None = None
    ratings: tuple[Rating, ...] = ()

    @property
    def preferred(self) -> Side:
        return "first" if self.chosen == "A" else "second"


@dataclass(frozen=True)
class Judgement:
    pair_id: str  # as the file names it
    order: Order
    index: int  # its place in the order's list
    value: Any  # the judgement as written: "A"/"B", or anything else (read as no answer)


@dataclass(frozen=True)
class Judgements:
    judgements: list[Judgement]  # non-empty judgements, in file order
    listed: tuple[str, ...]  # every pair id the file names, judged or not


def task_from_filename(name: str) -> str | None:
    """``t2i_response_only.json`` -> t2i: the first word of the name that is a task."""
    for word in re.split(r"[^a-z0-9]+", name.lower()):
        if word in MMRB2_CATEGORIES:
            return word
    return None


def task_of(path: Path, given: str | None = None, *, option: str | None = None) -> str:
    """The task of a ground-truth file (its pairs' category): ``given``, else the first word
    of the file name that is a task. The importer and scoring both ask this; a file name that
    names no task is an error (``option`` names how to give it instead)."""
    task = given or task_from_filename(path.name)
    if task in CATEGORIES:
        return task
    tasks = ", ".join(CATEGORIES)
    if given:
        message = f"unknown MMRB2 task {given!r}: expected one of {tasks}"
    else:
        how = (
            f"pass {option}"
            if option
            else "name the file after its task as the benchmark does (t2i_response_only.json)"
        )
        message = (
            f"cannot tell the MMRB2 task from the file name {path.name!r} (no word of it is one of {tasks}); {how}"
        )
    raise InputError([InputProblem(str(path), None, None, message)])


def render_text(r: Mmrb2Response) -> str:
    """A response's parts as one text: each text part stripped, each image as an ``[image:
    NAME]`` marker (the files ship names, not images), blank lines between, empty parts left
    out. The one rendering of a response: the importer's candidates and scoring's pairs."""
    return render_parts(r.parts)


def parse(f: Fields, need: Collection[str] = ()) -> Mmrb2Pair | None:
    rid = f.ident("id")
    a = _response(f, "response_a", need)
    b = _response(f, "response_b", need)
    chosen = f.text("chosen")
    if chosen is not None and chosen not in ("A", "B"):
        f.bad("chosen", f"expected 'A' or 'B', got {chosen!r}")
    prompt = f.text("prompt", required=False, allow_empty=True, default="")
    source = f.text("prompt_source", required=False, allow_empty=True)
    prompt_content = _parts(f, "prompt_content", f.data["prompt_content"]) if "prompt_content" in f.data else ()
    if f.problems or rid is None or a is None or b is None or prompt_content is None:
        return None
    return Mmrb2Pair(
        rid,
        a,
        b,
        "A" if chosen == "A" else "B",
        prompt or "",
        source,
        prompt_content=prompt_content,
    )


def _response(f: Fields, name: str, need: Collection[str]) -> Mmrb2Response | None:
    strict = "model_name" in need
    v = f.data.get(name)
    if isinstance(v, str):
        v = _object_text(v)
        if isinstance(v, str):
            if strict:
                f.bad(name, "expected an object with model_name and response_content, got str")
                return None
            return Mmrb2Response((Part.of_text(v),))
    if v is None:
        f.bad(name, "missing required field")
        return None
    if not isinstance(v, dict):
        f.bad(name, f"expected an object with model_name and response_content, got {type(v).__name__}")
        return None
    model = v.get("model_name")
    if strict or model is not None:
        if not isinstance(model, str) or not model or (strict and ":" in model):
            f.bad(f"{name}.model_name", "expected a model name (without ':')" if strict else "expected a model name")
            return None
        model = f.check_ident(f"{name}.model_name", model)
        if model is None:
            return None
    parts = _parts(f, f"{name}.response_content", v.get("response_content"))
    return None if parts is None else Mmrb2Response(parts, model)


def _parts(f: Fields, name: str, content: Any) -> tuple[Part, ...] | None:
    """A list of ``[kind, value]`` parts (a response's content, or the prompt's) as Parts."""
    if not isinstance(content, list):
        f.bad(name, "expected a list of [kind, value] parts")
        return None
    parts = []
    for n, part in enumerate(content):
        if not (
            isinstance(part, list) and len(part) == 2 and part[0] in ("text", "image") and isinstance(part[1], str)
        ):
            f.bad(f"{name}[{n}]", 'expected ["text", str] or ["image", file name]')
            return None
        parts.append(Part.of_text(part[1]) if part[0] == "text" else Part.of_image(part[1]))
    return tuple(parts)


def _object_text(text: str) -> Any:
    """A response written as text: the object it spells (JSON, or the Python repr some
    copies hold), else the text itself."""
    if text.strip().startswith("{"):
        for read in (json.loads, ast.literal_eval):
            try:
                v = read(text)
            # not an object: malformed, nested past the parsers' depth, or a Python dict
            # with an unhashable key ({[1]: 2})
            except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                continue
            if isinstance(v, dict):
                return v
    return text


def ratings(f: Fields, task: str) -> tuple[Rating, ...] | None:
    """The raters' ``human_annotations`` of a pair of ``task``."""
    ann = f.data.get("human_annotations")
    if task == "reasoning":
        if not isinstance(ann, dict):
            f.bad("human_annotations", "expected {response_a_ratings: [...], response_b_ratings: [...]}")
            return None
        ra, rb = ann.get("response_a_ratings") or [], ann.get("response_b_ratings") or []
        if (
            (ra and rb and len(ra) != len(rb))
            or max(len(ra), len(rb)) > RATERS
            or not all(g in GRADES for g in ra + rb)
        ):
            f.bad(
                "human_annotations",
                f"expected up to 3 letter grades {'/'.join(GRADES)} per response "
                "(the same number for both, or none for one)",
            )
            return None
        return tuple(
            Rating(grade_a=ra[n] if ra else None, grade_b=rb[n] if rb else None) for n in range(max(len(ra), len(rb)))
        )
    if (
        not isinstance(ann, list)
        or len(ann) > RATERS
        or not all(isinstance(s, (int, float)) and not isinstance(s, bool) and 1 <= s <= 6 for s in ann)
    ):
        f.bad("human_annotations", "expected up to 3 scores from 1 to 6")
        return None
    return tuple(Rating(score=s) for s in ann)


def annotations_value(task: str, ratings: Iterable[Rating]) -> Any:
    """``human_annotations`` as the benchmark writes it for ``task`` (see ``ratings``): a
    list of scores, or for reasoning ``{response_a_ratings, response_b_ratings}``."""
    rs = list(ratings)
    if task == "reasoning":
        return {
            "response_a_ratings": [r.grade_a for r in rs if r.grade_a],
            "response_b_ratings": [r.grade_b for r in rs if r.grade_b],
        }
    return [int(r.score) if float(r.score).is_integer() else r.score for r in rs if r.score is not None]


def record(task: str, pair: Mmrb2Pair) -> dict[str, Any]:
    """One pair as the benchmark's files hold it (``prompt_content`` as its build_from_hf.py
    writes it, when the pair has a prompt)."""

    def response(r: Mmrb2Response) -> dict[str, Any]:
        return {"model_name": r.model or "", "response_content": _written(r.parts)}

    return {
        "id": pair.id,
        "response_a": response(pair.response_a),
        "response_b": response(pair.response_b),
        "chosen": pair.chosen,
        "human_annotations": annotations_value(task, pair.ratings),
        "prompt_source": pair.prompt_source or "",
        "prompt_metadata": dict(pair.prompt_metadata or {}),
        **({"prompt_content": _written(pair.prompt_content)} if pair.prompt_content else {}),
    }


def _written(parts: Iterable[Part]) -> list[list[str]]:
    """Parts as the benchmark's files write them, ``[kind, value]`` (``_parts`` reads them)."""
    return [[p.kind, p.value] for p in parts]


def file_name(task: str) -> str:
    """The file ``write`` writes a task to: the name compute_accuracy.py reads (``t2i.json``),
    which ``task_of`` reads back."""
    return f"{task}.json"


def write(path: Path, task: str, pairs: Iterable[Mmrb2Pair]) -> None:
    """``{"pairs": [...]}``, indented as the published files are; the same pairs give the
    same bytes."""
    data = {JSON_KEY: [record(task, p) for p in pairs]}
    with path.open("w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def as_written(f: Fields) -> dict[str, Any]:
    """The fields the importer keeps in a pair's metadata as the file wrote them (after
    ``parse``: both responses are there): the annotations and both responses."""
    return {
        "human_annotations": f.data.get("human_annotations"),
        "response_a": f.data["response_a"],
        "response_b": f.data["response_b"],
    }


def read_judgements(path: Path) -> Judgements:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")  # a leading BOM is skipped, as everywhere
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        why = f"not valid UTF-8 (byte 0x{raw[e.start]:02x})"
        raise InputError([InputProblem(str(path), line, None, why)]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError([InputProblem(str(path), e.lineno, None, f"{MALFORMED}: {e.msg}")]) from None
    except (ValueError, RecursionError) as e:  # nested too deeply, an integer past the digit limit
        line, pid = unreadable_member(text)
        raise InputError([InputProblem(str(path), line, pid, json_problem(e))]) from None
    if not isinstance(data, dict):
        raise InputError([InputProblem(str(path), None, None, "expected an object from pair id to {forward, reverse}")])
    out: list[Judgement] = []
    problems: list[InputProblem] = []
    for pid, pred in data.items():
        if not isinstance(pred, dict):
            problems.append(InputProblem(str(path), None, pid, "expected {forward: [...], reverse: [...]}"))
            continue
        for order in _ORDERS:
            if order not in pred:
                continue
            entries = pred[order]
            if not isinstance(entries, list):
                problems.append(InputProblem(str(path), None, f"{pid}.{order}", "must be a list of {judgement: ...}"))
                continue
            for i, entry in enumerate(entries):
                if not isinstance(entry, dict):
                    problems.append(
                        InputProblem(str(path), None, f"{pid}.{order}[{i}]", "must be an object with a judgement")
                    )
                    continue
                if entry.get("judgement"):  # compute_accuracy.py skips an empty judgement: nothing was judged
                    out.append(Judgement(pid, order, i, entry["judgement"]))
    if problems:
        raise InputError(problems)
    return Judgements(out, tuple(data))
