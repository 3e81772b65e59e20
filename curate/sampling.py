"""Sample candidate responses from VLM endpoints, committing each one as it arrives.

A response is keyed by (item, model, params_key, sample_index) (a unique constraint of the
``candidates`` table). A run first reads which keys are stored and sends only the missing
ones, so a run killed at any moment and started again loses nothing and never asks twice for
a stored key. Requests that still fail after their retries (and empty or oversized answers)
go to ``sample_failures``, never to ``candidates``: the run is incomplete until a later run
sends them again and succeeds, which removes them.

Writes go through the store's batch writer (curate/store/writer.py), which commits what has
arrived every ``flush_every`` responses or ``flush_interval`` seconds, whichever comes first,
in its own thread so the event loop keeps sending. That is the durability window: a SIGKILL
loses at most the responses of the last ``flush_interval`` (50 ms by default) plus one commit,
and those keys are simply asked again on resume. A key stored already is left as it is
(ON CONFLICT DO NOTHING), so two runs over the same store cannot collide either.

Models file (TOML, or YAML with the same structure)::

    [defaults]                 # optional, applies to every model
    concurrency = 8
    [[models]]
    name = "qwen2-vl-7b"       # label in the store (default: model)
    base_url = "http://127.0.0.1:8000/v1"
    model = "Qwen/Qwen2-VL-7B-Instruct"
    api_key_env = "VLLM_API_KEY"   # optional: the variable holding the key
    samples = 2                # responses per prompt
    concurrency = 16           # requests in flight to this endpoint
    timeout = 120              # seconds per attempt
    max_retries = 4
    max_response_chars = 200000  # longer (and empty) answers are failures, not candidates
    [models.params]            # sent as-is with each request
    temperature = 0.7
    max_tokens = 512

With ``samples > 1`` and a ``seed`` parameter, sample i is sent with ``seed + i`` so the
samples differ.

An answer whose content is a list of parts with images (omni models that draw: text parts
and ``image_url`` data URLs, see curate/llm.py) is stored as the candidate's parts in order,
its images content-addressed in the store's image folder like an imported image
(``ImageStore.prepare`` checks each one first; an image that cannot be read makes the
request a failure, asked again by a rerun). ``max_response_chars`` bounds the whole answer,
images included: raise it for models that draw.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import aiohttp  # noqa: F401  the transport of .llm: imported with this module (0.4 s), not mid-run

from .errors import InputError, InputProblem, MmrbError
from .images import ImageProblem, ImageStore, StoredImage
from .llm import (
    ENDPOINT_KEYS,
    Completion,
    Endpoint,
    LLMClient,
    endpoint_problems,
    image_data_url,
    read_models_file,
    user_message,
)
from .model import Candidate, Failure, ImageRef, Item, Part, SampleFailure, count_failures, render_parts
from .seeding import hex_hash
from .store import params_key
from .store.items import SampleKey
from .store.protocols import SamplingStore
from .store.writer import BatchWriter
from .wording import plural

DEFAULT_MAX_SIDE = 1024


@dataclass(frozen=True)
class ModelSpec:
    endpoint: Endpoint
    samples: int = 1

    @property
    def label(self) -> str:
        return self.endpoint.label

    @property
    def params_key(self) -> str:
        return params_key(self.endpoint.params)


# -- the models file -------------------------------------------------------------------------
_MODEL_KEYS = ENDPOINT_KEYS | {"samples"}


def load_models(path: str | Path) -> list[ModelSpec]:
    """Read and check a models file; every problem is reported at once, naming the field."""
    entries, problems = read_models_file(path)
    fname = str(path)
    specs: list[ModelSpec] = []
    seen: dict[str, str] = {}
    for e in entries:
        entry, line, where = dict(e.table), e.line, e.where
        for k in sorted(set(entry) - _MODEL_KEYS):
            problems.append(
                InputProblem(fname, line, f"{where}.{k}", f"unknown key (known: {', '.join(sorted(_MODEL_KEYS))})")
            )
        bad = endpoint_problems(entry)
        samples = entry.pop("samples", 1)
        if isinstance(samples, bool) or not isinstance(samples, int):
            bad.append(("samples", f"must be an integer, got {samples!r}"))
        elif samples < 1:
            bad.append(("samples", f"must be at least 1, got {samples}"))
        if bad:
            problems += [InputProblem(fname, line, f"{where}.{k}", message) for k, message in bad]
            continue
        ep = Endpoint(**{k: v for k, v in entry.items() if k in ENDPOINT_KEYS})
        if ep.label in seen:
            problems.append(
                InputProblem(
                    fname,
                    line,
                    f"{where}.name",
                    f"model label {ep.label!r} is used twice (also {seen[ep.label]}): give each a distinct name",
                )
            )
            continue
        seen[ep.label] = where
        specs.append(ModelSpec(ep, samples))
    if problems:
        raise InputError(problems)
    return specs


# -- the run ---------------------------------------------------------------------------------
Key = SampleKey  # item, model label, params_key, sample_index


def candidate_id(key: Key) -> str:
    return "cd-" + hex_hash(*key, n=20)


def request_id(key: Key) -> str:
    return "/".join(map(str, key))


@dataclass
class ModelStats:
    wanted: int = 0
    stored_before: int = 0
    done: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retried: int = 0  # responses that needed more than one attempt
    errors: list[str] = field(default_factory=list)  # of this run's failed requests, to name their causes


@dataclass
class SampleReport:
    models: dict[str, ModelStats] = field(default_factory=dict)
    skipped_items: dict[str, str] = field(default_factory=dict)  # item -> why (e.g. image missing)
    seconds: float = 0.0
    interrupted: bool = False

    @property
    def done(self) -> int:
        return sum(s.done for s in self.models.values())

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.models.values())

    @property
    def complete(self) -> bool:
        return not self.failed and not self.interrupted

    def as_dict(self) -> dict[str, Any]:
        """`mmrb sample --json` (docs/json.md): every field, and the totals."""
        return {**asdict(self), "done": self.done, "failed": self.failed, "complete": self.complete}

    def failure_lines(self) -> list[str]:
        """What failed, per model, and how to resume; empty when nothing failed."""
        if not self.failed:
            return []
        per = ", ".join(f"{name}: {s.failed}" for name, s in self.models.items() if s.failed)
        out = [
            f"incomplete: {plural(self.failed, 'request')} still failed after retries ({per}); "
            "they are kept in sample_failures, not stored as candidates"
        ]
        for name, s in self.models.items():
            if s.failed:
                out.append(f"  {name}: {count_failures(map(Failure.read, s.errors))}; e.g. {s.errors[0]}")
        out.append("rerun the same command to send only those requests")
        return out

    def lines(self) -> list[str]:
        rate = self.done / self.seconds if self.seconds else 0.0
        head = "interrupted" if self.interrupted else "finished"
        out = [
            f"{head}: {plural(self.done, 'response')} stored, {self.failed} failed, in {self.seconds:.1f} s "
            f"({rate:.1f}/s)"
        ]
        for name, s in self.models.items():
            out.append(
                f"  {name}: {s.done} new, {s.stored_before} already stored, {s.failed} failed; "
                f"tokens {s.prompt_tokens} prompt + {s.completion_tokens} completion"
            )
        if self.skipped_items:
            first = next(iter(self.skipped_items.items()))
            out.append(f"{plural(len(self.skipped_items), 'item')} skipped, e.g. {first[0]}: {first[1]}")
        return out


def stored_keys(store: SamplingStore) -> set[Key]:
    return store.candidate_keys()


def plan_requests(
    items: Sequence[Item], specs: Sequence[ModelSpec], have: set[Key]
) -> dict[str, list[tuple[Item, Key]]]:
    """Missing keys per model, items in order (so models move through images together)."""
    todo: dict[str, list[tuple[Item, Key]]] = {s.label: [] for s in specs}
    keyed = [(s.label, s.params_key, s.samples) for s in specs]  # params_key hashes JSON: once per model
    for item in items:
        for label, pk, samples in keyed:
            for i in range(samples):
                key = (item.id, label, pk, i)
                if key not in have:
                    todo[label].append((item, key))
    return todo


# An answer's parts with each image decoded and checked: its bytes in ``Part.data``
Decoded = tuple[Part, ...]


def decode_parts(images: ImageStore, parts: Sequence[Part]) -> Decoded:
    """An answer's parts (curate/llm.py: text, image data URLs) with each image decoded and
    checked as an imported one is (``ImageStore.prepare``); raises ImageProblem naming the
    image (``response image 2: ...``)."""
    out: list[Part] = []
    n = 0
    for p in parts:
        if p.kind != "image":
            out.append(p)
            continue
        n += 1
        name = f"response image {n}"
        try:
            out.append(Part.of_image(name, data=images.prepare(images.read_source(p.value, images.root), name)[0]))
        except ImageProblem as e:
            raise ImageProblem(e.status, f"{name}: {e}") from None
    return tuple(out)


def _stored_parts(images: ImageStore, decoded: Decoded) -> tuple[tuple[Part, ...], list[StoredImage]]:
    """The parts of a candidate, each image written to the image folder (call it inside
    ``images.writing()``, until the rows are committed)."""
    parts: list[Part] = []
    stored: list[StoredImage] = []
    for p in decoded:
        if p.data is not None:
            im = images.put(p.data)
            stored.append(im)
            source = f"image-{len(stored)}.{im.path.rsplit('.', 1)[-1]}"
            parts.append(Part.of_image(ImageRef(source, im.sha256, "ok", im.width, im.height)))
        else:
            parts.append(p)
    return tuple(parts), stored


def result_writer(
    store: SamplingStore, specs: dict[str, ModelSpec], flush_every: int, flush_interval: float
) -> BatchWriter[tuple[Key, Completion, Decoded]]:
    """Commits each (key, completion, decoded parts) as a candidate (with its parts and
    images when the answer has images) or, when the request failed, a failure."""

    def commit(batch: list[tuple[Key, Completion, Decoded]]) -> None:
        if not any(decoded for _, _, decoded in batch):  # text answers: as they always were
            answers, failures, _ = _rows(batch, store.images)
            store.record_samples(answers, failures)
            return
        with store.images.writing():  # no clean-up removes a file before its row is committed
            answers, failures, stored = _rows(batch, store.images)
            store.record_samples(answers, failures, images=stored)

    def _rows(
        batch: list[tuple[Key, Completion, Decoded]], images: ImageStore
    ) -> tuple[list[Candidate], list[SampleFailure], list[StoredImage]]:
        answers, failures, stored = [], [], []
        for key, comp, decoded in batch:
            if comp.ok and comp.text is not None:  # an answered request has its text
                content, written = _stored_parts(images, decoded) if decoded else ((), [])
                stored += written
                answers.append(
                    Candidate(
                        id=candidate_id(key),
                        item_id=key[0],
                        model=key[1],
                        text=render_parts(content) if content else comp.text,
                        params=specs[key[1]].endpoint.params,
                        sample_index=key[3],
                        prompt_tokens=comp.prompt_tokens,
                        completion_tokens=comp.completion_tokens,
                        content=content,
                    )
                )
            else:
                failures.append(SampleFailure(*key, attempts=comp.attempts, error=comp.error or "unknown error"))
        return answers, failures, stored

    return BatchWriter(commit, flush_every=flush_every, flush_interval=flush_interval, name="sample-writer")


async def _with_images(images: ImageStore, comp: Completion) -> tuple[Completion, Decoded]:
    """An answer with images: its parts decoded in a worker thread (not the event loop), or
    the request made a failure when an image cannot be read."""
    if not (comp.ok and comp.parts):
        return comp, ()
    try:
        return comp, await asyncio.to_thread(decode_parts, images, comp.parts)
    except ImageProblem as e:
        return replace(comp, ok=False, text=None, parts=(), failure=Failure("other", str(e))), ()


class _ImageCache:
    """Data URLs of recent images: every model asks for the same item's image in turn, and a
    hit skips the worker-thread hop (encoding a big image would stall the event loop)."""

    def __init__(self, size: int = 256):
        self.size = size
        self._urls: OrderedDict[tuple[str, int | None], str] = OrderedDict()

    async def get(self, path: Path, max_side: int | None) -> str:
        key = (str(path), max_side)
        url = self._urls.get(key)
        if url is None:
            url = await asyncio.to_thread(image_data_url, str(path), max_side)
            self._urls[key] = url
            if len(self._urls) > self.size:
                self._urls.popitem(last=False)
        else:
            self._urls.move_to_end(key)
        return url


def _image_sources(known: dict[str, Path], item: Item) -> tuple[list[Path], str | None]:
    paths = []
    for ref in item.images:
        if ref.status != "ok" or not ref.sha256:
            return [], f"image {ref.source} is {ref.status}"
        p = known.get(ref.sha256)
        if p is None or not p.exists():
            return [], f"image {ref.source} is not in the image folder"
        paths.append(p)
    return paths, None


async def sample_async(
    store: SamplingStore,
    specs: Sequence[ModelSpec],
    *,
    item_ids: Iterable[str] | None = None,
    max_side: int | None = DEFAULT_MAX_SIDE,
    check: bool = True,
    flush_every: int = 64,
    flush_interval: float = 0.05,
    on_progress: Callable[[str, int, int], None] | None = None,
    on_start: Callable[[dict[str, int]], None] | None = None,
) -> SampleReport:
    """Send every missing request; ``on_progress(model, n_ok, n_failed)`` after each result."""
    t0 = time.perf_counter()
    report = SampleReport(models={s.label: ModelStats() for s in specs})
    items = store.items(ids=list(item_ids) if item_ids is not None else None)
    if item_ids is not None:
        missing = set(item_ids) - {i.id for i in items}
        if missing:
            raise MmrbError(
                f"{plural(len(missing), 'item id', verb=('is', 'are'))} not in the store, e.g. {sorted(missing)[0]!r}"
            )
    usable: list[Item] = []
    paths: dict[str, list[Path]] = {}
    known = store.image_paths(ref.sha256 for item in items for ref in item.images if ref.sha256)
    for item in items:
        p, why = _image_sources(known, item)
        if why:
            report.skipped_items[item.id] = why
        else:
            usable.append(item)
            paths[item.id] = p
    have = stored_keys(store)
    todo = plan_requests(usable, specs, have)
    for s in specs:
        st = report.models[s.label]
        st.wanted = len(usable) * s.samples
        st.stored_before = st.wanted - len(todo[s.label])
    if on_start:
        on_start({k: len(v) for k, v in todo.items()})

    clients = {s.label: LLMClient(s.endpoint) for s in specs}
    try:
        if check and any(todo.values()):
            await _check_endpoints(clients, [s for s in specs if todo[s.label]])
        writer = result_writer(store, {s.label: s for s in specs}, flush_every, flush_interval)
        images = _ImageCache()

        async def worker(spec: ModelSpec, queue: Iterator[tuple[Item, Key]]) -> None:
            client = clients[spec.label]
            st = report.models[spec.label]
            base_seed = spec.endpoint.params.get("seed")
            for item, key in queue:
                if writer.error is not None:
                    return
                urls = [await images.get(p, max_side) for p in paths[item.id]]
                extra = {"seed": base_seed + key[3]} if isinstance(base_seed, int) and key[3] else None
                comp = await client.complete(
                    [user_message(item.prompt, urls)], params=extra, request_id=request_id(key)
                )
                comp, decoded = await _with_images(store.images, comp)
                if comp.ok:
                    st.done += 1
                    st.prompt_tokens += comp.prompt_tokens or 0
                    st.completion_tokens += comp.completion_tokens or 0
                else:
                    st.failed += 1
                    st.errors.append(comp.error or "unknown error")
                if comp.attempts > 1:
                    st.retried += 1
                writer.put((key, comp, decoded))
                if on_progress:
                    on_progress(spec.label, int(comp.ok), int(not comp.ok))

        workers = []
        for s in specs:
            it = iter(todo[s.label])  # shared by the endpoint's workers
            workers += [asyncio.create_task(worker(s, it)) for _ in range(max(1, s.endpoint.concurrency))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            report.interrupted = True
            for w in workers:
                w.cancel()
            raise
        finally:
            try:
                await asyncio.to_thread(writer.close)  # flush what has arrived, even when interrupted
            except Exception as e:
                raise MmrbError(
                    f"could not store responses in {store.display_name}: {e.__class__.__name__}: {e} "
                    f"({writer.committed} stored before the failure; run again to resume)"
                ) from e
    finally:
        for c in clients.values():
            await c.aclose()
        report.seconds = time.perf_counter() - t0
    return report


async def _check_endpoints(clients: dict[str, LLMClient], specs: Sequence[ModelSpec]) -> None:
    seen: dict[str, list[str]] = {}
    for s in specs:
        url = s.endpoint.base_url
        if url not in seen:
            seen[url] = await clients[s.label].list_models()
        names = seen[url]
        if names and s.endpoint.model not in names:
            raise MmrbError(
                f"model {s.endpoint.model!r} ({s.label}) is not served at {url}; it serves: {', '.join(names[:10])}"
            )


def sample(store: SamplingStore, specs: Sequence[ModelSpec], **kw: Any) -> SampleReport:
    return asyncio.run(sample_async(store, specs, **kw))


__all__ = [
    "ModelSpec",
    "SampleReport",
    "candidate_id",
    "load_models",
    "plan_requests",
    "sample",
    "sample_async",
    "stored_keys",
]
