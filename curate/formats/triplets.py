"""The project's triplets: ``(prompt, images, chosen, rejected)`` and what ``mmrb build``
knows about them; and the chosen/rejected copies of other benchmarks read the same way.

- ``triplets.jsonl`` (``mmrb build``): ``id, prompt, images, chosen, rejected, category,
  source, chosen_model, rejected_model, task, n_labels, agreement``, image paths relative
  to the build folder; a response with images adds ``chosen_parts`` / ``rejected_parts``
  (its parts in order: ``{"text": ...}``, ``{"image": "images/<sha256>.<ext>"}``, or
  ``{"image": null, "missing": source}``), while ``chosen`` / ``rejected`` hold its text
  rendering with ``[image: images/FILE]`` markers naming the build's files. Written by
  ``write``; ``write_hf`` writes the same columns as a Hugging Face dataset and its Parquet
  file, images embedded.
- chosen/rejected copies: R1-Reward's VL-RewardBench ``data.jsonl`` and MM-RLHF-RewardBench
  ``mm_reward_bench.jsonl`` (``id, prompt, chosen, rejected, image | video, ...``; see
  ``vlrewardbench`` and ``mm_rlhf``). ``group`` (or ``prompt_id``) gathers the pairs of
  one prompt.

``parse`` reads any of them. A triplet has no order of its own: whoever needs one (the
importer, scoring, the build's layouts) takes it from curate/sides.py, seeded from an id.
"""

from __future__ import annotations

import pickle
import struct
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

from ..model import Part, Triplet
from .fields import Fields
from .writer import write_jsonl

FIELDS = (
    "id",
    "prompt",
    "images",
    "chosen",
    "rejected",
    "category",
    "source",
    "chosen_model",
    "rejected_model",
    "task",
    "n_labels",
    "agreement",
    "chosen_parts",
    "rejected_parts",
)
# kept as written for whoever needs them (scoring reports them per pair)
EXTRA = ("chosen_model", "rejected_model", "task", "n_labels", "agreement")

# what each column of the build's Parquet file holds (``write_hf``), as its Croissant
# description (curate/formats/croissant.py) says it; a struct's sub-field as ``column.sub``
_PART = {
    "text": "A text part (null for an image part).",
    "image": "An image part, embedded (null for a text part or a missing image).",
    "missing": "The source of an image part missing from the store (its file is in no build), else null.",
}
COLUMN_DESCRIPTIONS = {
    "id": "The pair's id: unique, the records' key.",
    "prompt": "The prompt's text.",
    "images": "The prompt's images, embedded (an empty list: none, or missing from the store).",
    "chosen": "The preferred response's text; a response with images holds `[image: name]` markers where they are "
    "(its parts are in chosen_parts).",
    "rejected": "The other response's text, as chosen.",
    "category": "The pair's category (vqa, safety, reasoning, t2i, ...).",
    "source": "Where the prompt came from, when known.",
    "chosen_model": "The model that wrote the chosen response, when known.",
    "rejected_model": "The model that wrote the rejected response, when known.",
    "task": "The pair's task (correctness or preference), when set.",
    "n_labels": "The expert labels the pair had.",
    "agreement": "The share of the pair's labels on the decided preference; null when the labels' preference did not "
    "decide it (an adjudication or the correctness task did).",
    "chosen_parts": "The chosen response's parts in order, when some response of the build has images (an empty "
    "list: a plain-text response, whose text is chosen).",
    **{f"chosen_parts.{k}": v for k, v in _PART.items()},
    "rejected_parts": "The rejected response's parts in order, as chosen_parts.",
    **{f"rejected_parts.{k}": v for k, v in _PART.items()},
}


@dataclass(frozen=True)
class TripletRecord:
    id: str
    prompt: str
    chosen: str
    rejected: str
    images: tuple[Any, ...] = ()
    category: str | None = None
    source: str | None = None
    group: str | None = None  # the prompt the pair belongs to (Acc+), if the file says
    image: str | None = None  # the image and video fields as written: MM-RLHF's category
    video: str | None = None  # is a keyword in them
    extra: Mapping[str, Any] = field(default_factory=dict)
    chosen_parts: tuple[Part, ...] = ()  # a response with images (see ``write``)
    rejected_parts: tuple[Part, ...] = ()


def parse(f: Fields, need: Collection[str] = ()) -> TripletRecord | None:
    rid = f.ident("id")
    if f.has("prompt") or "prompt" in need:
        prompt = f.text("prompt", allow_empty="prompt" not in need)
    else:
        prompt = f.text("query", required=False, allow_empty=True, default="")
    chosen = f.text("chosen", allow_empty=True)
    rejected = f.text("rejected", allow_empty=True)
    images = f.images("images", "image")
    category = f.category("category", f.text("category", required=False, allow_empty=True))
    source = f.text("source", required=False, allow_empty=True)
    group = f.text("group", required=False, allow_empty=True) or f.text("prompt_id", required=False, allow_empty=True)
    where = {k: v for k in ("image", "video") if isinstance(v := f.data.get(k), str)}
    chosen_parts, rejected_parts = response_parts(f, "chosen_parts"), response_parts(f, "rejected_parts")
    if f.problems or rid is None or prompt is None or chosen is None or rejected is None or images is None:
        return None
    extra = {k: f.data[k] for k in EXTRA if k in f.data}
    return TripletRecord(
        rid,
        prompt,
        chosen,
        rejected,
        images,
        category,
        source,
        group or None,
        where.get("image"),
        where.get("video"),
        extra,
        chosen_parts or (),
        rejected_parts or (),
    )


PARTS = ("chosen_parts", "rejected_parts")


def write(path: Path, triplets: Iterable[Triplet]) -> None:
    """One triplet a line; ``chosen_parts`` / ``rejected_parts`` only for a response with
    images (a plain-text response is its ``chosen`` / ``rejected`` text, as before)."""
    write_jsonl(path, (_row(t) for t in triplets))


_FIELDS = tuple(f.name for f in fields(Triplet))


def _row(t: Triplet) -> dict[str, Any]:
    # a shallow dict of the fields (asdict's deep copy, Parts included, was half the writer's time
    # at 40,000 triplets): every field is a str, number or None but images, a list here, and the
    # parts, written below
    row = {k: getattr(t, k) for k in _FIELDS}
    row["images"] = list(t.images)
    for k in PARTS:
        if row[k]:
            row[k] = [_written(p) for p in getattr(t, k)]
        else:
            del row[k]
    return row


def _written(p: Part) -> dict[str, str | None]:
    """A part as ``triplets.jsonl`` writes it (``_read`` reads it back)."""
    if p.kind == "text":
        return {"text": p.value}
    return {"image": None, "missing": p.value} if p.missing else {"image": p.value}


def _read(p: Mapping[str, Any]) -> Part:
    """A part as written (checked by ``response_parts``); an embedded image keeps its bytes."""
    if set(p) == {"text"}:
        return Part.of_text(p["text"])
    if p["image"] or p.get("bytes"):
        return Part.of_image(p["image"] or "", data=p.get("bytes"))
    return Part.of_image(p.get("missing") or "image", missing=True)


def response_parts(f: Fields, name: str) -> tuple[Part, ...] | None:
    """A triplet's ``chosen_parts`` / ``rejected_parts`` as written (absent: a plain-text
    response, ``()``): a list of ``{"text": str}`` and ``{"image": relative path | null,
    "missing"?: source}``; from the build's Parquet file, ``{"image": path, "bytes": ...}``
    for an embedded image. Read as Parts: an image at its path as written, or missing."""
    v = f.data.get(name)
    if v is None:
        return ()
    if isinstance(v, list):
        v = [_struct_part(p) for p in v]
    ok = isinstance(v, list) and all(
        isinstance(p, dict)
        and (
            (set(p) == {"text"} and isinstance(p["text"], str))
            or (
                "image" in p
                and set(p) <= {"image", "missing", "bytes"}
                and (p["image"] is None or isinstance(p["image"], str))
                and isinstance(p.get("bytes"), (bytes, type(None)))
            )
        )
        for p in v
    )
    if not ok:
        f.bad(name, 'expected a list of {"text": ...} or {"image": path}')
        return None
    return tuple(_read(p) for p in v)


def _struct_part(p: Any) -> Any:
    """A part as the build's Parquet file (or HF dataset) holds it, ``{text, image: {bytes,
    path} | null, missing}``, in the JSONL's terms; an embedded image keeps its ``bytes``."""
    if not (isinstance(p, dict) and set(p) == {"text", "image", "missing"}):
        return p
    if p["image"] is None and p["missing"] is None:
        return {"text": p["text"]}
    image = p["image"]
    if isinstance(image, dict):
        return {"image": image.get("path"), "bytes": image.get("bytes")}
    return {"image": image, **({"missing": p["missing"]} if p["missing"] is not None else {})}


def _hf_part(p: Part, read: Callable[[str], bytes]) -> dict[str, Any]:
    image = p.value if p.kind == "image" and not p.missing else None
    return {
        "text": p.value if p.kind == "text" else None,
        "image": {"bytes": read(image), "path": image} if image else None,
        "missing": p.value if p.missing else None,
    }


class _HashingFile:
    """A file that hashes what is written to it (xxh64, as datasets' ``Hasher``) and keeps nothing."""

    def __init__(self) -> None:
        import xxhash  # deferred: datasets' own dependency, imported where datasets is

        self.hash = xxhash.xxh64()

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        return len(data)


@cache
def _pickler() -> type:
    """datasets' Pickler, except that an Arrow buffer is written without being copied.

    A buffer pickles (protocol 4) as ``py_buffer(bytearray(bytes))``: two copies of it, each
    memoized with its argument tuple, and the memo keeps them, and so two copies of every
    buffer of the table, until the pickle ends (at 100,000 triplets 290 MB over the table).
    ``save_buffer`` writes the very opcodes pickle writes for that reduce, the data straight
    from the buffer, and numbers the memo as pickle does (placeholders for the copies and
    tuples, which nothing later can refer to: they were made by the reduce and die with it)."""
    import pyarrow as pa  # deferred, as datasets below
    from datasets.utils._dill import Pickler

    class StreamPickler(Pickler):
        dispatch = Pickler.dispatch.copy()

        def placeholder(self) -> None:
            """``memoize`` of an object made by the reduce: its number, not the object."""
            idx = len(self.memo)
            self.write(self.put(idx))
            self.memo[("transient", idx)] = idx, None

        def save_buffer(self, buf: pa.Buffer) -> None:
            # pickle's save_reduce(py_buffer, (copy,), obj=buf) for protocol 4, the copy a
            # bytearray (a mutable buffer: save_bytearray -> save_reduce(bytearray, (bytes,)))
            # or bytes, each save() of an object the reduce makes reduced to its frame commit.
            # A buffer under a frame's size is pickled as it is (its copy is small, and may be
            # one of Python's shared one-byte objects, which pickle memoizes as such)
            n = buf.size
            if self.proto != 4 or n < self.framer._FRAME_SIZE_TARGET or n > 0xFFFFFFFF:
                return self.save_reduce(*buf.__reduce_ex__(self.proto), obj=buf)
            commit = self.framer.commit_frame
            self.save(pa.py_buffer)
            commit()  # save((copy,))
            if buf.is_mutable:
                commit()  # save(the bytearray)
                self.save(bytearray)
                commit()  # save((bytes,))
            commit()  # save(bytes)
            self._write_large_bytes(pickle.BINBYTES + struct.pack("<I", n), memoryview(buf))
            self.placeholder()  # the bytes
            if buf.is_mutable:
                self.write(pickle.TUPLE1)
                self.placeholder()  # (bytes,)
                self.write(pickle.REDUCE)
                self.placeholder()  # the bytearray
            self.write(pickle.TUPLE1)
            self.placeholder()  # (copy,)
            self.write(pickle.REDUCE)
            self.memoize(buf)

        def save_table(self, table: pa.Table) -> None:
            # datasets pickles a table as (schema, [each column's combine_chunks()]): a copy of
            # every column at once, and the memo keeps them to the end (142 MB at 100,000
            # triplets). Its own reducer is called with columns that combine as they are pickled
            # (``save_column``), each copy gone once written
            view = _TableView(table.schema, [_Lazy(c) for c in table.columns])
            save_arrow_table(self, view)
            idx, _ = self.memo.pop(id(view))
            self.memo[id(table)] = idx, table  # the table is the one memoized, as in datasets

        def save_column(self, lazy: _Lazy) -> None:
            column, lazy.column = lazy.column, None
            before = set(self.memo)
            self.save(column.combine_chunks())  # what datasets' reducer puts in its list
            self.drop_transient(set(self.memo) - before)

        def drop_transient(self, keys: set[Any]) -> None:
            """Numbers only for the memo's objects that nothing but the memo refers to: the copy
            and what its reduce made (pickle can meet them again only through the memo)."""
            while keys:
                gone = {k for k in keys if sys.getrefcount(self.memo[k][1]) <= _MEMO_ONLY}
                for k in gone:
                    idx = self.memo.pop(k)[0]
                    self.memo[("transient", idx)] = idx, None
                keys -= gone
                if not gone:
                    break

    save_arrow_table = Pickler.dispatch[pa.Table]
    StreamPickler.dispatch[pa.Buffer] = StreamPickler.save_buffer
    StreamPickler.dispatch[pa.Table] = StreamPickler.save_table
    StreamPickler.dispatch[_Lazy] = StreamPickler.save_column
    return StreamPickler


# sys.getrefcount of an object held by a memo entry alone: the entry's tuple and the call's argument
_MEMO_ONLY = 2


@dataclass
class _Lazy:
    """A column that datasets' table reducer asks to combine: combined when pickled (``save_column``)."""

    column: Any

    def combine_chunks(self) -> _Lazy:
        return self


@dataclass(frozen=True)
class _TableView:
    """What datasets' table reducer reads of a table: its schema and columns."""

    schema: Any
    columns: list[_Lazy]


def _streamed_hash(value: Any) -> str:
    """``datasets.fingerprint.Hasher.hash``: the xxh64 of the value's pickle (datasets'
    Pickler), the pickle streamed into the hash instead of made whole in memory, and the
    buffers' pickled copies not kept (``_pickler``)."""
    out = _HashingFile()
    _pickler()(out, recurse=True).dump(value)
    return out.hash.hexdigest()


@contextmanager
def streamed_fingerprint() -> Iterator[None]:
    """datasets names an in-memory dataset by a hash of the pickle of its whole table, which
    it builds in memory and then copies (``Hasher.hash``): at 100,000 triplets 440 MB at the
    export's peak, over the table itself. The same hash, the same bytes hashed, streamed
    (``_streamed_hash``), each buffer's pickled copies dropped once written (``_pickler``):
    the saved dataset's ``state.json`` is unchanged (tested against datasets' own)."""
    from datasets.fingerprint import Hasher  # deferred, as datasets above

    original = Hasher.__dict__["hash"]
    Hasher.hash = classmethod(lambda cls, value: _streamed_hash(value))
    try:
        yield
    finally:
        Hasher.hash = original


def write_hf(triplets: list[Triplet], root: Path, parquet: Path, hf_dir: Path, *, split: str) -> None:
    """The Hugging Face dataset (``save_to_disk`` into ``hf_dir``, as ``split``) and its Parquet
    file, the images (paths relative to ``root``) embedded. When a response has images,
    ``chosen_parts`` / ``rejected_parts`` hold every response's parts (``{text, image,
    missing}``, an ``Image`` feature; empty for a plain-text response)."""
    # deferred: Hugging Face's datasets takes about 1 s to import, and only this export needs it
    import datasets
    import pyarrow as pa
    from datasets import Dataset, Features, Image, List, Value

    features = Features(
        {
            "id": Value("string"),
            "prompt": Value("string"),
            "images": List(Image()),
            "chosen": Value("string"),
            "rejected": Value("string"),
            "category": Value("string"),
            "source": Value("string"),
            "chosen_model": Value("string"),
            "rejected_model": Value("string"),
            "task": Value("string"),
            "n_labels": Value("int32"),
            "agreement": Value("float64"),
        }
    )
    # responses with images: their parts, images embedded (the columns exist only when some
    # response has images, so a plain-text build is the same as before)
    with_parts = any(t.chosen_parts or t.rejected_parts for t in triplets)
    if with_parts:
        part = {"text": Value("string"), "image": Image(), "missing": Value("string")}
        for k in PARTS:
            features[k] = List(part)
    files: dict[str, bytes] = {}

    def read(rel: str) -> bytes:
        """Each file read once: triplets share images (40,000 reads of 50 files before), and
        the rows then share one bytes object per file."""
        if rel not in files:
            files[rel] = (root / rel).read_bytes()
        return files[rel]

    def column(k: str) -> list:
        """A column's values as Python lists (one comprehension a column, not a branch per cell)."""
        if k == "images":
            return [[{"bytes": read(p), "path": p} for p in t.images] for t in triplets]
        if k in PARTS:
            return [[_hf_part(p, read) for p in getattr(t, k)] for t in triplets]
        return [getattr(t, k) for t in triplets]

    was_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        # Arrow arrays of the features' own types: from_dict then only checks them, where from
        # Python lists it encodes every value through the features first (1.5 s of 40,000
        # triplets). The values already are the stored form ({bytes, path} for an image); and
        # an image's bytes are embedded even when a file of its relative path happens to exist
        # in the working folder (Image.encode_example keeps the path alone then). Each column's
        # list lives only until it is its array
        schema = features.arrow_schema
        arrays = {k: pa.array(column(k), type=schema.field(k).type) for k in features}
        with streamed_fingerprint():
            ds = Dataset.from_dict(arrays, features=features, split=split)
        parquet.parent.mkdir(parents=True, exist_ok=True)
        ds.to_parquet(str(parquet))
        ds.save_to_disk(str(hf_dir))
    finally:
        if was_enabled:
            datasets.enable_progress_bars()
