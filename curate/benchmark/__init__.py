"""From labels to the final benchmark: filter rules, triplets, exports, dataset card.

The build is written to a temporary folder beside ``out`` and moved into place only when
every file is complete; a failed or interrupted build leaves the previous one as it was
(a full disk is said so: ``DiskFullError``). Builds of one ``out`` may run at once: each
writes its own folder, and they take turns to swap it in (``_out_lock``), so ``out`` is
always one whole build, the last one swapped in. A build that was killed cannot remove its
temporary folder: the next build of the same ``out`` does (see ``remove_leftovers``).
A build whose rules keep no pair fails (``NoTriplets``, naming the rules that removed them)
and writes nothing.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agreement import agreement_report, from_store
from ..agreement.table import LabelTable
from ..collector import fewer_collections
from ..errors import DiskFullError, MmrbError, is_disk_full
from ..formats.labels import write_parquet_table
from ..formats.registry import EXPORTED
from ..model import Candidate, Part, Triplet, render_parts
from ..quality.aggregate import Aggregated
from ..rawlabels import label_table, of_pairs, source_counts
from ..schemes import Scheme
from ..sides import is_side
from . import export
from .card import aggregation_summary, card_text, dataset_info, write_card, write_croissant
from .filter import BuildDecision, BuildInputs, FilterResult, apply_rules
from .rules import Rules, load_rules

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from ..agreement.report import AgreementReport
    from ..store import Store

MANIFEST = "build.json"


@dataclass
class BuildResult:
    out: Path
    result: FilterResult
    triplets: list[Triplet]
    missing_images: list[str]  # ids of triplets with an image missing from the store
    aggregated: Aggregated | None = None  # the labels as rules.aggregation made them one
    mmrb2: dict[str, int] = field(default_factory=dict)  # triplets in the MMRB2 layout, per task
    # MMRB2 tasks not written: their pairs whose labels have no score (export.mmrb2_refused)
    mmrb2_refused: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """`mmrb build --json` (docs/json.md): the filter's table, then what was written."""
        agg = self.aggregated
        return {
            **self.result.as_dict(),
            "out": str(self.out),
            "triplets": len(self.triplets),
            "missing_images": list(self.missing_images),
            "mmrb2": dict(self.mmrb2),
            "mmrb2_refused": {task: list(ids) for task, ids in self.mmrb2_refused.items()},
            "aggregation": None
            if agg is None
            else {
                "method": agg.method,
                "fields": {
                    name: {
                        "decided": len(fa.final),
                        "differ": fa.differ,
                        "decided_ties": fa.decided_ties,
                        "from_gold": fa.from_gold,
                    }
                    for name, fa in agg.fields.items()
                },
            },
        }


class NoTriplets(MmrbError):
    """The rules kept no pair: a benchmark of nothing is not written (nor is an empty folder
    swapped in for a previous build). ``result`` says which rule removed each pair."""

    def __init__(self, result: FilterResult, out: Path):
        self.result = result
        removed = {r: sum(row.values()) for r, row in result.removed().items()}
        named = ", ".join(f"{r}: {n}" for r, n in removed.items() if n)
        n = len(result.decisions)
        why = (
            f"the rules removed {'the one pair' if n == 1 else f'all {n} pairs'} considered ({named})"
            if n
            else "no pair has one of the statuses the rules consider"
        )
        kept = f"; the previous build in {out} is kept" if (out / MANIFEST).is_file() else ""
        super().__init__(f"no triplets: {why}; nothing was written{kept}")


def make_triplets(
    store: Store, kept: list[BuildDecision], inputs: BuildInputs
) -> tuple[list[Triplet], dict[str, Path], list[str]]:
    """Triplets in pair-id order, the image files they need (the prompts' and the responses'),
    and the ids missing a prompt image (those keep only the images that exist: see
    missing_images in the rules). A response image missing from the store stays in its
    response's parts as missing under its source."""
    items, cands, image_ok = inputs.items, inputs.candidates, inputs.image_ok
    triplets: list[Triplet] = []
    sources: dict[str, Path] = {}
    missing: list[str] = []
    known = store.image_paths(im.sha256 for d in kept for im in items[d.pair.item_id].images if im.sha256)
    answers = store.image_paths(
        im.sha256 for d in kept for cid in (d.pair.first_id, d.pair.second_id) for im in cands[cid].images if im.sha256
    )
    answer_ok = {sha: image_ok.get(sha, False) for sha in answers}  # as the filter saw them
    # each file's name in the build, made once per file (not per triplet that shows it)
    names = {sha: f"images/{sha}{src.suffix.lower()}" for sha, src in (*known.items(), *answers.items())}

    def parts(c: Candidate) -> tuple[Part, ...]:
        """A response's parts with its images as files of the build (empty: plain text)."""
        out: list[Part] = []
        for part in c.content:
            im = part.image
            if im is None:
                out.append(Part.of_text(part.text))
            elif im.sha256 and answer_ok.get(im.sha256):
                rel = names[im.sha256]
                sources[rel] = answers[im.sha256]
                out.append(Part.of_image(rel))
            else:
                out.append(Part.of_image(im.source, missing=True))
        return tuple(out)

    def text(c: Candidate, built: tuple[Part, ...]) -> str:
        """A response's text in the build: a response with images has its markers name the
        build's files (the stored text names the images' sources, files the build does not have)."""
        return render_parts(built, say_missing=True) if c.content else c.text

    for d in sorted(kept, key=lambda d: d.pair.id):
        p, item = d.pair, items[d.pair.item_id]
        chosen, rejected = (
            (cands[p.first_id], cands[p.second_id]) if d.chosen == "first" else (cands[p.second_id], cands[p.first_id])
        )
        rels = []
        for im in item.images:
            if im.sha256 and image_ok.get(im.sha256):
                rel = names[im.sha256]
                sources[rel] = known[im.sha256]
                rels.append(rel)
        if len(rels) < len(item.images):
            missing.append(p.id)
        chosen_parts, rejected_parts = parts(chosen), parts(rejected)
        triplets.append(
            Triplet(
                id=p.id,
                prompt=item.prompt,
                images=tuple(rels),
                chosen=text(chosen, chosen_parts),
                rejected=text(rejected, rejected_parts),
                category=item.category,
                source=item.source,
                chosen_model=chosen.model,
                rejected_model=rejected.model,
                task=p.task,
                n_labels=d.n_labels,
                agreement=None if d.agreement is None else round(d.agreement, 6),
                chosen_parts=chosen_parts,
                rejected_parts=rejected_parts,
            )
        )
    return triplets, sources, missing


def _agreement(table: LabelTable, considered: set[str], rules: Rules) -> AgreementReport:
    report = agreement_report(table.only(considered), per_category=True, resamples=rules.resamples, seed=rules.seed)
    if report.categories is not None:
        report.categories = {c: v for c, v in report.categories.items() if any(f.n_labels for f in v.fields.values())}
    return report


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# Temporary folders beside ``out`` are held with a lock (flock on the folder) for as long as
# their build runs; the lock ends with the process, however it ends. So a folder whose lock
# can be taken belongs to a build that is gone. Creating a folder and locking it happen under
# a shared lock of the parent folder, and clean-up takes it exclusively, so a folder is never
# seen between the two.
def _lock_dir(path: Path, how: int) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, how)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _held_tmp(out: Path, kind: str) -> tuple[Path, int]:
    """A new hidden folder beside ``out`` and the descriptor holding its lock (close it when done)."""
    parent = _lock_dir(out.parent, fcntl.LOCK_SH)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.{kind}-", dir=out.parent))
        return tmp, _lock_dir(tmp, fcntl.LOCK_EX)
    finally:
        os.close(parent)


def remove_leftovers(out: Path) -> list[Path]:
    """Remove the temporary folders that killed builds of ``out`` left beside it (a build
    still running keeps its own). A build killed while swapping folders may have left the
    previous build only in its ``.old-`` folder: that one is moved back to ``out`` first."""
    removed = []
    parent = _lock_dir(out.parent, fcntl.LOCK_EX)
    try:
        name = glob.escape(out.name)
        for p in sorted(out.parent.glob(f".{name}.tmp-*")) + sorted(out.parent.glob(f".{name}.old-*")):
            try:
                fd = _lock_dir(p, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # held by a running build, or not a folder
                continue
            try:
                if p.name.startswith(f".{out.name}.old-") and not out.exists() and (p / out.name / MANIFEST).is_file():
                    os.rename(p / out.name, out)
                shutil.rmtree(p, ignore_errors=True)
                removed.append(p)
            finally:
                os.close(fd)
    finally:
        os.close(parent)
    return removed


@contextmanager
def _out_lock(out: Path) -> Iterator[None]:
    """``out`` to this process alone: an exclusive flock on the file ``.NAME.lock`` beside
    it, which builds of ``out`` hold while they swap their folder in. The holder removes the
    file as it lets go, so none stays behind; a process that was waiting for the removed file
    finds the name gone or naming another file, and tries again. A process killed while
    holding it leaves the file, whose lock ended with the process: the next build takes it."""
    path = out.parent / f".{out.name}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            mine, there = os.fstat(fd), os.stat(path)
            if (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino):
                break
        except FileNotFoundError:  # removed by the holder before: the next one
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield
    finally:
        with suppress(OSError):
            os.unlink(path)  # still held: whoever waits on this file sees it gone and tries again
        os.close(fd)


def _replace_dir(tmp: Path, out: Path) -> None:
    """Move the finished build into place; the previous build is removed only afterwards.
    Builds of one ``out`` do it one at a time: each finds ``out`` whole, and leaves it so."""
    with _out_lock(out):
        if not out.exists():
            os.rename(tmp, out)
            return
        if not (out / MANIFEST).is_file():
            raise MmrbError(f"{out} exists and is not an mmrb build (no {MANIFEST}): refusing to replace it")
        old, hold = _held_tmp(out, "old")
        try:
            os.rename(out, old / out.name)
            try:
                os.rename(tmp, out)
            except BaseException:
                os.rename(old / out.name, out)
                raise
        except BaseException:
            if not (old / out.name).exists():  # the previous build is back in place: its empty folder goes
                shutil.rmtree(old, ignore_errors=True)
            raise
        else:
            shutil.rmtree(old, ignore_errors=True)
        finally:
            os.close(hold)


@dataclass(frozen=True)
class CardInputs:
    """What the card and the manifest need of the build's inputs (``BuildInputs``)."""

    aggregated: Aggregated | None
    schemes: Mapping[str, Scheme]


Step = Callable[[str], None]


def _no_step(name: str) -> None:
    pass


def build_steps() -> int:
    """How many times ``build`` calls its ``step``: a command's progress bar over them."""
    return 7 + len(EXPORTED)


def build(store: Store, rules: Rules, out: str | Path, *, step: Step = _no_step) -> BuildResult:
    """``step(name)`` as each stage starts (``build_steps`` of them when the build completes)."""
    with fewer_collections():
        return _build(store, rules, Path(out).resolve(), step)


def _build(store: Store, rules: Rules, out: Path, step: Step) -> BuildResult:
    step("reading labels")
    # every label as the annotations config writes it, first: its rows are made while little else is in memory
    annotations = label_table(store)
    table = from_store(store)  # the build's labels, read once: the rules, aggregation and agreement read this table
    step("filtering pairs")
    result, inputs = apply_rules(store, rules, table)
    if not result.kept:
        raise NoTriplets(result, out)
    step("making triplets")
    triplets, sources, missing = make_triplets(store, result.kept, inputs)
    step("agreement")
    report = _agreement(table, {d.pair.id for d in result.decisions}, rules)
    rows = export.Export.of(
        triplets,
        rules.seed,
        references={d.pair.id: inputs.items[d.pair.item_id].reference for d in result.kept},
        chosen_side={d.pair.id: d.chosen for d in result.kept if is_side(d.chosen)},
        labels=inputs.labels,
    )
    # the files are written from the triplets (which share the texts): the store's items and
    # candidates and the label table go before the writers run (a fifth of the peak memory)
    card_inputs = CardInputs(inputs.aggregated, inputs.schemes)
    del table, inputs
    try:
        mmrb2_counts, refused = _write(
            out, store, rules, result, rows, card_inputs, sources, missing, report, annotations, step
        )
    except Exception as e:
        if is_disk_full(e):  # _write removed its folder: the previous build is as it was
            kept = f" (the previous build in {out} is kept)" if (out / MANIFEST).is_file() else ""
            raise DiskFullError(f"the build {out}", kept) from e
        raise
    return BuildResult(out, result, triplets, missing, card_inputs.aggregated, mmrb2_counts, refused)


def _write(
    out: Path,
    store: Store,
    rules: Rules,
    result: FilterResult,
    rows: export.Export,
    inputs: CardInputs,
    sources: dict[str, Path],
    missing: list[str],
    report: AgreementReport,
    annotations: Any,
    step: Step = _no_step,
) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Every file of the build in a folder of its own beside ``out``, swapped in when
    complete (removed when not); the MMRB2 layout's triplets per task, and its tasks not
    written with their unscored pairs."""
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(out)
    tmp, hold = _held_tmp(out, "tmp")
    try:
        triplets = rows.triplets
        refused = export.mmrb2_refused(rows)  # labels MMRB2's layout cannot hold without a made-up score
        step("copying images")
        export.copy_images(tmp, sources, store.images)
        # every format the build writes (curate/formats/registry.py): its layout's files
        written: dict[str, Any] = {}
        for fmt in EXPORTED:
            step(f"writing {fmt.name}")
            written[fmt.name] = fmt.load("export")(tmp, rows)
        mmrb2_counts = written.get("mmrb2", {})
        step("writing labels")
        # every label of every considered pair, so others can recompute agreement (the dropped pairs' too)
        (tmp / export.ANNOTATIONS).parent.mkdir(parents=True, exist_ok=True)
        write_parquet_table(tmp / export.ANNOTATIONS, of_pairs(annotations, (d.pair.id for d in result.decisions)))
        label_sources = source_counts(annotations, (t.id for t in triplets))
        step("writing the card")
        if (tmp / export.PARQUET).is_file():  # described beside the card: its files, fields and types
            write_croissant(tmp, rules, len(triplets))
        text = card_text(
            rules=rules,
            result=result,
            triplets=triplets,
            report=report,
            n_annotators=len(report.annotators),
            missing_image_triplets=len(missing),
            aggregated=inputs.aggregated,
            mmrb2_counts=mmrb2_counts,
            mmrb2_refused=refused,
            schemes=inputs.schemes,
            dataset_info=dataset_info(tmp / export.PARQUET, tmp / export.ANNOTATIONS),
            label_sources=label_sources,
        )
        write_card(tmp, report, text)
        files = {p.relative_to(tmp).as_posix(): _sha256(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
        manifest = {
            "rules": rules.as_dict(),
            "pairs_considered": len(result.decisions),
            "triplets": len(triplets),
            "per_category": result.kept_per_category(),
            "removed": result.removed(),
            "missing_images": missing,
            **({"mmrb2_not_written": refused} if refused else {}),
            "aggregation": aggregation_summary(inputs.aggregated, result),
            "files": files,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(hold)
    return mmrb2_counts, refused


def dry_run(store: Store, rules: Rules) -> FilterResult:
    with fewer_collections():
        return apply_rules(store, rules, from_store(store))[0]


__all__ = [
    "BuildInputs",
    "BuildResult",
    "NoTriplets",
    "Rules",
    "build",
    "build_steps",
    "dry_run",
    "load_rules",
    "make_triplets",
]
