"""VL-RewardBench (Li et al., 2024): its records in their three published shapes.

- Original records (``parse``, ``write``): ``id, query, response[2], image, human_ranking,
  models, judge, rationale, query_source, meta, human_error_analysis, ground_truth``;
  ``human_ranking`` ``[0, 1]`` means the first response is preferred (the lower rank
  wins). Some copies name it ``ranking`` and give the image as ``image_path`` (whose folder
  is the source dataset); the image may also be a Hugging Face image feature. ``mmrb
  build`` writes this shape with every image and the category in ``meta``.
- The text copy (``parse_text``): ``id, prompt, chosen, rejected, image, chosen_reason,
  rejected_reason``, as in R1-Reward's data.jsonl: a chosen/rejected record (see
  ``triplets``).
- Inference records (``parse_inference``), what ``inference_hf.py`` writes and ``cal.py``
  reads: one per sample, ``id, query, response, ranking, meta.random_number`` (0: response[0]
  was shown as Answer 1) and ``meta.filter_choice`` (the judge's text) or
  ``meta.flag_status``; a record may be wrapped as ``{"0": record}``, or null.

Ids repeat in older copies (25 times in the 1,250 pairs): an item is keyed on id + query +
both responses (``item_key``, cal.py's key).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, InputProblem
from ..model import Order, Side
from ..wording import plural
from .fields import Fields, image_value_problem
from .reader import Row
from .triplets import TripletRecord
from .triplets import parse as parse_triplet
from .writer import write_jsonl

ORIGINAL_FIELDS = ("id", "query", "response", "human_ranking", "models", "image")
TEXT_FIELDS = ("id", "prompt", "chosen", "rejected", "image")
CATEGORIES = ("general", "hallucination", "reasoning")
IMPORT_NEEDS = frozenset({"query", "prompt", "models"})
# the fields the published records carry, in their order (the writer keeps it)
PUBLISHED = (
    "id",
    "query",
    "response",
    "image",
    "human_ranking",
    "models",
    "judge",
    "rationale",
    "query_source",
    "meta",
    "human_error_analysis",
    "ground_truth",
)
_READ = (
    "id",
    "query",
    "response",
    "image",
    "images",
    "image_path",
    "human_ranking",
    "ranking",
    "models",
    "query_source",
    "meta",
)

# The one grouping of VL-RewardBench ids, cal.py's get_dataset_from_id (vl-rewardbench/
# VL_RewardBench @ 9b10abd, as ../shared/official/README.md describes it): the id up to its
# first "_" or "-" names the source dataset, compared exactly (case matters), and anything
# unknown is VLFeedback; the dataset names the paper's group. On the 1,250 public pairs:
# 749 hallucination, 318 reasoning, 183 general, the paper's counts. cal.py reads neither
# ``query_source`` nor the folder of ``image_path``, so no grouping here does either.
PREFIX_DATASETS = {
    "RLAIF": "rlaif-v",
    "RLHF": "rlhf-v",
    "mathverse": "reasoning_tasks",
    "mmmu": "reasoning_tasks",
    "wildvision": "wildvision-battle",
    "hallucination": "povid",
}
DATASET_GROUPS = {
    "vlfeedback": "general",
    "wildvision-battle": "general",
    "povid": "hallucination",
    "rlhf-v": "hallucination",
    "rlaif-v": "hallucination",
    "reasoning_tasks": "reasoning",
}


def dataset_of(rid: str) -> str:
    """cal.py's source dataset of an id."""
    prefix = re.split(r"[_-]", rid, maxsplit=1)[0]
    return PREFIX_DATASETS.get(prefix, "vlfeedback")


def group_of(rid: str) -> str:
    """cal.py's group of an id: general, hallucination or reasoning."""
    return DATASET_GROUPS[dataset_of(rid)]


def category_of(rid: str, stated: str | None = None) -> str:
    """The category of a record in any of this benchmark's shapes: the one the record states
    (``mmrb build`` writes the project's own category into ``meta.category`` of its
    VL-RewardBench export; a chosen/rejected copy may carry ``category``), else cal.py's
    group of its id. The importer and scoring both call this."""
    return stated or group_of(rid)


def item_key(rid: str, query: str, responses: Iterable[str]) -> str:
    """cal.py's key of an item: id + query + the sorted responses."""
    return rid + query + "\t".join(sorted(responses))


@dataclass(frozen=True)
class VlrbRecord:
    id: str
    query: str
    response: tuple[str, str]
    ranking: tuple[float, float]  # human_ranking: the lower rank is preferred
    images: tuple[Any, ...] = ()
    models: tuple[str, str] | None = None
    query_source: str | None = None
    image_path: str | None = None  # as written; its folder is the source dataset
    meta: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)  # judge, rationale, ground_truth ...

    @property
    def stated_category(self) -> str | None:
        """``category``, or ``meta.category`` as ``mmrb build`` writes it (the published
        ``meta`` is a string: it states none)."""
        value = self.extra.get("category") or self.meta.get("category")
        return value if isinstance(value, str) and value else None

    @property
    def category(self) -> str:
        return category_of(self.id, self.stated_category)

    @property
    def preferred(self) -> Side | None:
        """The preferred response (the lower rank); None when the ranks are equal."""
        r0, r1 = self.ranking
        return "first" if r0 < r1 else "second" if r0 > r1 else None

    @property
    def all_images(self) -> Any:
        """Every image of the record as written: ``meta.images`` (``mmrb build`` lists them
        all there), else ``image_path``, else the image fields."""
        return self.meta.get("images") or self.image_path or self.images


@dataclass(frozen=True)
class VlrbInference:
    id: str
    query: str
    response: tuple[str, str]
    ranking: tuple[int, int]  # a permutation of 0, 1
    random_number: Any  # 0: response[0] was shown as Answer 1; anything else: response[1]
    filter_choice: str | None  # the judge's text
    flag_status: Any = None
    filter_prompt: str = ""

    @property
    def key(self) -> str:
        return item_key(self.id, self.query, self.response)

    @property
    def preferred(self) -> Side:
        """The chosen response in the record's own list (rank 0 is chosen)."""
        return "first" if self.ranking[0] == 0 else "second"

    @property
    def shown(self) -> Order:
        """How cal.py showed the record's list: ``random_number`` 0 puts response[0] as
        Answer 1, anything else response[1]."""
        return "forward" if self.random_number == 0 else "reverse"


def parse(f: Fields, need: Collection[str] = ()) -> VlrbRecord | None:
    """An original record. ``need``: ``query`` must not be empty, ``models`` (when given)
    must be usable in candidate ids (no ':')."""
    rid = f.ident("id")
    query = f.text("query", allow_empty="query" not in need)
    responses = f.value("response", (list,), what="a list of two responses")
    if responses is not None and (len(responses) != 2 or not all(isinstance(r, str) for r in responses)):
        f.bad("response", f"expected a list of two texts, got {plural(len(responses), 'value')}")
    rank_field = "ranking" if f.has("ranking") and not f.has("human_ranking") else "human_ranking"
    ranking = f.value(rank_field, (list,), what="a list of two ranks")
    if ranking is not None and (len(ranking) != 2 or not all(isinstance(r, (int, float)) for r in ranking)):
        f.bad(rank_field, "expected two numeric ranks such as [0, 1]")
    models = f.value("models", (list,), required=False)
    if models is not None and (
        len(models) != 2 or not all(isinstance(m, str) and (m and ":" not in m or "models" not in need) for m in models)
    ):
        f.bad("models", "expected two model names (without ':')" if "models" in need else "expected two model names")
    elif models is not None:
        models = [f.check_ident(f"models[{n}]", m) for n, m in enumerate(models)]
    qsource = f.text("query_source", required=False)
    images = f.images("image", "images")
    image_path = f.data.get("image_path")
    meta = f.data.get("meta")
    listed = meta.get("images") if isinstance(meta, dict) else None  # every image, read by all_images
    if listed is not None and not isinstance(listed, list):
        f.bad("meta.images", f"expected a list of images, got {type(listed).__name__}")
    for n, x in enumerate(listed if isinstance(listed, list) else []):
        why = image_value_problem(x)
        if why:
            f.bad(f"meta.images[{n}]", why)
    if f.problems or rid is None or query is None or images is None:
        return None
    a, b = responses
    return VlrbRecord(
        rid,
        query,
        (a, b),
        (ranking[0], ranking[1]),
        images,
        (models[0], models[1]) if models else None,
        qsource,
        image_path if isinstance(image_path, str) else None,
        meta if isinstance(meta, dict) else {},
        f.metadata(_READ),
    )


def build_meta(category: str, images: Iterable[str], **more: Any) -> dict[str, Any]:
    """The ``meta`` of a record ``mmrb build`` writes: the project's category (read back by
    ``stated_category``), its other figures, and every image (read back by ``all_images``)."""
    return {"category": category, **more, "images": list(images)}


def parse_preferring(f: Fields) -> VlrbRecord | None:
    """An original record whose ranks prefer one response (``[0, 1]`` or ``[1, 0]``), as
    scoring needs: a tie or other ranks are a problem of the record."""
    rec = parse(f)
    if rec is not None and sorted(rec.ranking) != [0, 1]:
        f.bad("human_ranking", f"must be [0, 1] or [1, 0], not {list(rec.ranking)!r}")
        return None
    return rec


def parse_text(f: Fields, need: Collection[str] = ()) -> TripletRecord | None:
    return parse_triplet(f, need)


def unwrap_inferences(path: str | Path, rows: Sequence[Row]) -> list[tuple[int, Any]]:
    """(line, record or None) of an inference file's rows, unwrapped as cal.py unwraps them:
    every row as ``row["0"]`` when the first row has a key "0", else every row as it is.
    Where cal.py would stop instead (a null first row: TypeError; a row of the other shape
    than the first: KeyError), the file is refused, naming the line."""
    if not rows:
        raise InputError([InputProblem(str(path), None, None, "no records")])
    first = rows[0]
    if first.data is None:
        raise InputError(
            [
                InputProblem(
                    str(path),
                    first.line,
                    None,
                    'the first record is null: cal.py stops on it (it looks for a key "0" in the first '
                    "record); remove the line",
                )
            ]
        )
    wrapped = "0" in first.data
    out: list[tuple[int, Any]] = []
    problems: list[InputProblem] = []
    for row in rows:
        data = row.data
        if wrapped and (data is None or "0" not in data):
            problems.append(
                InputProblem(
                    str(path),
                    row.line,
                    "0",
                    f'not wrapped as {{"0": record}} while the first record (line {first.line}) is: '
                    "cal.py unwraps every record when the first one is wrapped, and stops on this one",
                )
            )
        elif not wrapped and data is not None and "0" in data and "id" not in data:
            problems.append(
                InputProblem(
                    str(path),
                    row.line,
                    "0",
                    f'wrapped as {{"0": record}} while the first record (line {first.line}) is not: cal.py '
                    "unwraps records only when the first one is wrapped, and stops on this one",
                )
            )
        else:
            out.append((row.line, data["0"] if wrapped and data is not None else data))
    if problems:
        raise InputError(problems)
    return out


def key_collisions(path: str | Path, records: Iterable[tuple[int, VlrbInference]]) -> list[InputProblem]:
    """Records of different items whose cal.py keys are the same text (``RLHF`` + ``x-q`` and
    ``RLHFx`` + ``-q``): cal.py counts them as one item, in the group of whichever it meets
    first after its shuffle. One problem per record that collides with an earlier one."""
    seen: dict[str, tuple[int, tuple[str, str, tuple[str, ...]]]] = {}
    problems = []
    for line, rec in records:
        item = (rec.id, rec.query, tuple(sorted(rec.response)))
        first = seen.setdefault(rec.key, (line, item))
        if first[1] != item:
            problems.append(
                InputProblem(
                    str(path),
                    line,
                    "id",
                    f"{rec.id!r} with query {rec.query!r} has the same id + query + responses text as "
                    f"{first[1][0]!r} with query {first[1][1]!r} (line {first[0]}): cal.py counts the two "
                    "as one item, grouped by whichever it meets first after its shuffle; give them distinct ids",
                )
            )
    return problems


def parse_inference(f: Fields, *, trust_flag: bool = False) -> VlrbInference | None:
    """An inference record (unwrapped by ``unwrap_inferences``). ``trust_flag``:
    the verdict is ``meta.flag_status``, else it is re-read from ``meta.filter_choice``."""
    d = f.data
    for name in ("id", "query", "response", "ranking", "meta"):
        if name not in d:
            f.bad(name, "missing")
            return None
    if not isinstance(d["id"], str) or not isinstance(d["query"], str):
        f.bad("id" if not isinstance(d["id"], str) else "query", "must be a string")
        return None
    resp = d["response"]
    if not (isinstance(resp, list) and len(resp) == 2 and all(isinstance(x, str) for x in resp)):
        f.bad("response", "must be a list of two responses")
        return None
    ranking = d["ranking"]
    if not (isinstance(ranking, list) and sorted(ranking) == [0, 1]):
        f.bad("ranking", f"must be [0, 1] or [1, 0], not {ranking!r}")
        return None
    meta = d["meta"]
    if not isinstance(meta, dict):
        f.bad("meta", "must be an object")
        return None
    for name in ("random_number", "flag_status" if trust_flag else "filter_choice"):
        if name not in meta:
            f.bad(f"meta.{name}", "missing")
            return None
    choice = meta.get("filter_choice")
    if not trust_flag and not isinstance(choice, str):
        f.bad("meta.filter_choice", "must be the judge's text (a string)")
        return None
    return VlrbInference(
        d["id"],
        d["query"],
        (resp[0], resp[1]),
        (ranking[0], ranking[1]),
        meta["random_number"],
        choice if isinstance(choice, str) else None,
        meta.get("flag_status"),
        str(meta.get("filter_prompt", "")),
    )


def write(path: Path, records: Iterable[VlrbRecord]) -> None:
    def row(r: VlrbRecord) -> dict[str, Any]:
        known: dict[str, Any] = {
            "id": r.id,
            "query": r.query,
            "response": list(r.response),
            "image": r.images[0] if r.images else "",
            "human_ranking": list(r.ranking),
            "query_source": r.query_source,
            "meta": dict(r.meta),
        }
        if r.models is not None:
            known["models"] = list(r.models)
        values = {**r.extra, **known}
        return {k: values[k] for k in (*PUBLISHED, *r.extra) if k in values}

    write_jsonl(path, (row(r) for r in records))
