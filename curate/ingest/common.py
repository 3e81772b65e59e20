"""What every importer shares: a row's fields as the importer reads them (store ids,
allowed categories, staged images), duplicate-id rules and the import's report.

A format module supplies ``parse(fields, ctx) -> ParsedRow`` for one row, reading it with its
format's module (curate/formats) and turning the record into items, candidates, pairs and
labels, and a ``plan`` of how its files are read (``ImportPlan``), which the format's entry
in curate/formats/registry.py names; ``importer.run_import`` reads the file and writes it
(all or nothing).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputProblem
from ..formats.fields import Fields, image_value_problem
from ..images import ImageProblem
from ..lookalike import check_identifier
from ..model import Candidate, ImageRef, Item, Label, Pair, Part, render_parts
from ..seeding import hex_hash
from ..wording import plural


def id_hash(*parts: str, n: int = 10) -> str:
    """A short hash for ids; each part ends with NUL, as in every id imported so far."""
    return hex_hash(*parts, "", sep="\x00", n=n)


MAX_ID = 200  # the store's id columns (String(200))


def fit_id(text: str, reserve: int = 0) -> str:
    """``text`` if it fits (leaving ``reserve`` characters for a candidate suffix), else a
    stable shortened form: its start, '~' and a hash of the whole."""
    if len(text) + reserve <= MAX_ID:
        return text
    return text[: MAX_ID - reserve - 11] + "~" + id_hash(text)


def normalise_id(text: str) -> tuple[str, str | None]:
    """(``text`` in NFKC without surrounding whitespace, why it cannot be an id or None): the
    one identifier policy of curate/lookalike.py, which account names follow too."""
    return check_identifier(text, "an id")


Response = str | tuple[Part, ...]  # a response as read: its text, or its parts in order


def response_fields(response: Response) -> tuple[str, tuple[Part, ...]]:
    """A response as a Candidate holds it: (text, content). Parts without an image are plain
    text, stored exactly as a text response is; with an image, ``text`` is their rendering."""
    if isinstance(response, str):
        return response, ()
    if not any(p.kind == "image" for p in response):
        return render_parts(response), ()
    return render_parts(response), response


@dataclass
class ParsedRow:
    """What one input row turns into."""

    items: list[Item] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)


@dataclass(frozen=True)
class ImportPlan:
    """How ``importer.run_import`` reads one format's file (see ``run_import``): each row
    with ``parse``, the categories a row may have (None: any), the JSON key of the records'
    list, the annotators its labels come from, whether rows share items."""

    parse: Callable[[ImportFields, Context], ParsedRow]
    categories: Iterable[str] | None = None
    json_key: str | None = None
    annotators: tuple[str, ...] = ()
    shared_items: bool = False


# A format's plan for a file: (path, --categories, --category) -> ImportPlan.
Planner = Callable[[Path, Iterable[str] | None, str | None], ImportPlan]


@dataclass
class _Staged:
    source: str
    root: Path
    data: bytes | None  # raw bytes (embedded images); None: read from source again


@dataclass
class IngestReport:
    file: str
    format: str
    rows: int = 0
    items: int = 0
    candidates: int = 0
    pairs: int = 0
    labels: int = 0
    images_stored: int = 0  # distinct files, the items' and the responses' together
    images_missing: int = 0  # references
    # references to a stored file, as `mmrb status` counts them (a file named twice is two)
    item_images: int = 0
    response_images: int = 0
    rejected: int = 0
    rejects_file: str | None = None
    missing_examples: list[str] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)  # of rejected rows

    def as_dict(self) -> dict[str, Any]:
        """Every figure of the report (`mmrb ingest --json`; the text shows the first problems only)."""
        return asdict(self)

    def summary(self) -> str:
        parts = [plural(self.items, "item"), plural(self.candidates, "candidate")]
        if self.pairs or self.format != "items":
            parts.append(plural(self.pairs, "pair"))
        if self.labels:
            parts.append(plural(self.labels, "label"))
        text = f"imported {self.file} ({self.format}): " + ", ".join(parts) + "; " + self.images_line()
        if self.images_missing:
            text += (
                f"; {plural(self.images_missing, 'image reference')} missing "
                "(recorded as missing, shown as placeholders)"
            )
        if self.rejected:
            text += f"; {plural(self.rejected, 'row')} rejected, written with reasons to {self.rejects_file}"
        return text

    def images_line(self) -> str:
        """The images in `mmrb status`'s terms: references (of items, of responses), then files
        (it said "28 images stored" where status said "27 references, 26 stored")."""
        refs = [
            f"{n} of {whose}" for n, whose in ((self.item_images, "items"), (self.response_images, "responses")) if n
        ]
        if not refs:
            return "no image stored"
        files = plural(self.images_stored, "distinct file")
        return f"image references stored: {' and '.join(refs)} ({files})"


class Context:
    """Per-file state handed to the row parsers."""

    def __init__(
        self,
        store,
        file: Path,
        *,
        images_root: Path | None = None,
        missing_images_ok: bool = False,
        categories: Iterable[str] | None = None,
    ):
        self.store = store
        self.file = file
        self.name = str(file)
        # image paths resolve inside this folder, never outside it (see ImageStore.read_source)
        self.images_root = images_root if images_root is not None else file.parent
        self.missing_images_ok = missing_images_ok
        self.categories = tuple(categories) if categories is not None else None
        self.staged: dict[str, _Staged] = {}
        self._image_cache: dict[str, ImageRef | ImageProblem] = {}  # a problem is reported at each use
        self.state: dict[str, Any] = {}  # free for a format's cross-row bookkeeping

    # images are checked now and copied only when the whole import is accepted
    def image(self, f: ImportFields, name: str, value: Any) -> ImageRef | None:
        if isinstance(value, dict):  # a Hugging Face image feature: {"bytes": ..., "path": ...}
            why = image_value_problem(value)
            if why:
                f.bad(name, why)
                return None
        if isinstance(value, dict) and (value.get("bytes") or value.get("path")):
            data = value.get("bytes")
            if data:
                if isinstance(data, str):
                    try:
                        data = base64.b64decode(data)
                    except ValueError:
                        f.bad(name, "image bytes are not valid base64")
                        return None
                return self._check(f, name, value.get("path") or f"{self.name}:{f.line}:{name}", bytes(data))
            value = value["path"]
        if isinstance(value, (bytes, bytearray)):
            return self._check(f, name, f"{self.name}:{f.line}:{name}", bytes(value))
        if not isinstance(value, str) or not value.strip():
            f.bad(name, "expected an image path or data URI")
            return None
        return self._check(f, name, value, None)

    def _check(self, f: ImportFields, name: str, source: str, data: bytes | None) -> ImageRef | None:
        key = source if data is None else hashlib.sha256(data).hexdigest()
        ref = self._image_cache.get(key)
        if ref is None:
            images = self.store.images
            shown = source if not source.startswith("data:") else _short_uri(source)
            try:
                raw = data if data is not None else images.read_source(source, self.images_root)
                prepared, _fmt, w, h = images.prepare(raw, shown)
                sha = hashlib.sha256(prepared).hexdigest()
                ref = ImageRef(shown, sha, "ok", w, h)
                self.staged.setdefault(sha, _Staged(source, self.images_root, data))
            except ImageProblem as e:
                missing_ok = e.status == "missing" and self.missing_images_ok
                ref = ImageRef(shown, None, "missing", error=str(e)) if missing_ok else e
            self._image_cache[key] = ref
        if isinstance(ref, ImageRef):
            return ref
        hint = " (pass --allow-missing-images to record it as missing)" if ref.status == "missing" else ""
        f.bad(name, f"{ref}{hint}")
        return None

    def check_category(self, f: ImportFields, name: str, value: str | None) -> str | None:
        if value is None:
            return None
        if self.categories is not None and value not in self.categories:
            f.bad(name, f"unknown category {value!r}; allowed: {', '.join(self.categories)}")
            return None
        return value


def _short_uri(uri: str) -> str:
    return uri[: uri.find(",") + 1] + "..." if "," in uri else uri[:40]


class ImportFields(Fields):
    """A row's fields as the importer reads them: ids normalised for the store, categories
    from the allowed list, images checked and staged (see ``Context``)."""

    def __init__(self, ctx: Context, line: int, data: dict[str, Any]):
        super().__init__(ctx.name, line, data)
        self.ctx = ctx

    def check_ident(self, name: str, value: str) -> str | None:
        """An id (or a model name, which is part of candidate ids), normalised by
        ``normalise_id``; a refused one is a problem of ``name``."""
        norm, why = normalise_id(value)
        if why:
            self.bad(name, f"{why}: {value!r}")
            return None
        return norm

    def category(self, name: str, value: str | None) -> str | None:
        return self.ctx.check_category(self, name, value)

    def response(self, name: str, *, allow_empty: bool = True) -> Response | None:
        """A response: a text, or a list of parts, each a text or ``{"text": ...}`` or
        ``{"image": path | data URI | image feature}`` (images checked and staged as a
        prompt's are). A problem names the part, e.g. ``response_1[2].image``."""
        v = self.data.get(name)
        if not isinstance(v, list):
            return self.text(name, allow_empty=allow_empty)
        return self.parts(name, v)

    def parts(self, name: str, value: list) -> tuple[Part, ...] | None:
        """``value`` (a list of parts, see ``response``) as Parts."""
        out: list[Part] = []
        ok = True
        for n, part in enumerate(value):
            where = f"{name}[{n}]"
            if isinstance(part, dict):  # a Parquet struct has every key, those it does not use null
                part = {k: v for k, v in part.items() if v is not None}
            if isinstance(part, str):
                out.append(Part.of_text(part))
            elif isinstance(part, dict) and len(part) == 1 and isinstance(part.get("text"), str):
                out.append(Part.of_text(part["text"]))
            elif isinstance(part, dict) and len(part) == 1 and "image" in part:
                ref = self.ctx.image(self, f"{where}.image", part["image"])
                if ref is None:
                    ok = False
                else:
                    out.append(Part.of_image(ref))
            else:
                self.bad(where, 'expected a text, {"text": "..."} or {"image": "path"}')
                ok = False
        return tuple(out) if ok else None

    def images(self, *names: str, required: bool = False) -> tuple[ImageRef, ...] | None:
        """Paths relative to the images folder, data URIs or image features, as ImageRefs."""
        found = self.image_values(*names, required=required)
        if found is None:
            return None
        refs = []
        for name, x in found:
            ref = self.ctx.image(self, name, x)
            if ref is None:
                return None
            refs.append(ref)
        return tuple(refs)
