"""The import itself: a file streams batch by batch into one store transaction.

A format module supplies ``parse(fields, ctx) -> ParsedRow`` for one row; ``run_import``
reads the file once, checks each row (its fields, ids repeated anywhere in the file or
looking like another of its ids: curate/ingest/rows.py; ids already in the store or looking
like a stored one: here) and writes the rows in batches as they come. The first problem
stops the writing but not the checking, so every problem of the file is reported, and the
transaction is rolled back: nothing is written. With ``skip_invalid`` the valid rows are
kept and the rejected ones go to a JSONL file with their reasons. Memory holds a few
batches of rows, and the ids taken so far (curate/ingest/rows.py).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import BinaryIO

from ..collector import fewer_collections
from ..errors import DiskFullError, InputError, InputProblem, MmrbError, disk_full_reported, is_disk_full
from ..formats.fields import jsonable
from ..formats.reader import read_rows
from ..images import ImageProblem, StoredImage
from ..model import Label
from ..store import ImportConflict, ImportSession, Store
from .common import Context, IngestReport
from .rows import Checked, Entry, ParseFn, checked_batches

_ATTEMPTS = 3  # races lost to other imports before giving up


def run_import(
    store: Store,
    path: str | Path,
    parse: ParseFn,
    *,
    format: str,
    json_key: str | None = None,
    skip_invalid: str | Path | None = None,
    images_root: str | Path | None = None,
    missing_images_ok: bool = False,
    categories: Iterable[str] | None = None,
    shared_items: bool = False,
    annotators: Iterable[str] = (),
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Check every row of ``path`` and write all of it in one transaction.

    ``shared_items``: several rows may carry the same item (and candidates), e.g. one
    prompt with several pairs; identical repeats are merged, different ones are an error.
    ``annotators``: names created (inactive, without password) for imported labels.
    ``images_root``: the folder image paths resolve in (default: the file's folder).
    ``progress(rows)``: the rows read so far, after each batch (a retried import starts again at 0).
    """
    path = Path(path)
    for attempt in range(1, _ATTEMPTS + 1):
        run = _Import(
            store,
            path,
            parse,
            json_key=json_key,
            rejects=Path(skip_invalid) if skip_invalid is not None else None,
            shared=shared_items,
            raters=tuple(annotators),
            progress=progress,
            ctx=Context(
                store,
                path,
                images_root=Path(images_root) if images_root else None,
                missing_images_ok=missing_images_ok,
                categories=categories,
            ),
        )
        try:
            with fewer_collections():
                report = run.execute(format)
            break
        except ImportConflict as e:
            # Another import committed the same ids first. Reading the file again makes them
            # "already in the store" like any other (an error, or rejects with --skip-invalid).
            if attempt == _ATTEMPTS:
                raise MmrbError(f"{path}: {e}") from None
    if run.rejected:
        report.rejected = len(run.rejected)
        report.rejects_file = str(skip_invalid)
        report.problems = run.problems()
    if run.rejects_tmp is not None:  # written before the commit (see _Import.execute)
        os.replace(run.rejects_tmp, Path(str(skip_invalid)))
    return report


class _Import:
    """One pass over the file into one transaction."""

    def __init__(
        self,
        store: Store,
        path: Path,
        parse: ParseFn,
        *,
        json_key: str | None,
        rejects: Path | None,
        shared: bool,
        raters: tuple[str, ...],
        ctx: Context,
        progress: Callable[[int], None] | None = None,
    ):
        self.store, self.path, self.parse, self.json_key = store, path, parse, json_key
        self.rejects, self.skip = rejects, rejects is not None  # with --skip-invalid: where rejected rows go
        self.shared, self.raters, self.ctx, self.progress = shared, raters, ctx, progress
        self.rejects_tmp: Path | None = None  # the rejects file, written before the commit, moved in after it
        self.rejected: dict[int, list[InputProblem]] = {}  # line -> problems
        self.writing = True  # until a problem, unless invalid rows are skipped
        self.stored: dict[str, StoredImage] = {}  # images copied by this import
        self.created: list[StoredImage] = []  # of those, the files this import created
        self.unwritten: set[tuple[str, str]] = set()  # (kind, id) a row took but did not write (rejected later)
        self.raters_added = False

    def problems(self) -> list[InputProblem]:
        return sorted((p for ps in self.rejected.values() for p in ps), key=lambda p: p.line or 0)

    def execute(self, format: str) -> IngestReport:
        report = IngestReport(file=str(self.path), format=format)
        missing: list[str] = []
        try:
            with ExitStack() as images_lock:  # released before any clean-up, which locks the folder
                self.images_lock = images_lock
                with self.store.importing() as session:
                    for batch in checked_batches(self.path, self.json_key, self.parse, self.ctx, self.shared):
                        report.rows += len(batch)
                        for c in batch:
                            if c.problems:
                                self.reject(c.line, c.problems)
                        self.flush(session, [c for c in batch if not c.problems], report, missing)
                        if self.progress:
                            self.progress(report.rows)
                    if not report.rows:
                        raise InputError([InputProblem(str(self.path), None, None, "no records found")])
                    if self.rejected and not self.skip:
                        raise InputError(self.problems())  # rolls the transaction back
                    if self.rejected and self.rejects is not None:
                        # before the commit: a full disk here still leaves the store as it was
                        with disk_full_reported(f"the rejects file {self.rejects}"):
                            self.rejects_tmp = _stage_rejects(self.rejects, self.path, self.json_key, self.rejected)
        except BaseException as e:
            self.store.images.remove_unreferenced(self.created, lambda shas: set(self.store.image_paths(shas)))
            if self.rejects_tmp is not None:
                with suppress(OSError):
                    self.rejects_tmp.unlink()
            if isinstance(e, ImageProblem):  # the file changed between the check and the copy
                raise MmrbError(f"{self.ctx.name}: {e}; nothing was written") from e
            if isinstance(e, Exception) and is_disk_full(e):
                # files are reported where they are written (images, rejects, ids taken): what
                # is left is the store, but for a file written somewhere unforeseen
                store = f"to the store {self.store.display_name}"
                raise DiskFullError((e.filename or "a file") if isinstance(e, OSError) else store) from e
            raise
        report.images_stored = len(self.stored)
        report.missing_examples = missing
        if self.skip and self.created:  # files of rows that were rejected after their images were copied
            self.store.images.remove_unreferenced(self.created, lambda shas: set(self.store.image_paths(shas)))
        return report

    def reject(self, line: int, problems: list[InputProblem]) -> None:
        self.rejected.setdefault(line, []).extend(problems)
        if not self.skip:
            self.writing = False

    def flush(self, session: ImportSession, accepted: list[Checked], report: IngestReport, missing: list[str]) -> None:
        """Write the rows of a batch whose ids are new to the file (curate/ingest/rows.py)
        and to the store."""
        if not accepted:
            return
        # Ids already in the store (an earlier import of the same file, usually), or looking
        # like a stored id; a repeat is checked and written only when the row that took its id
        # was not written
        new_items = (e[1] for c in accepted for e in c.fresh + c.repeats if e[0] == "item")
        new_pairs = (e[1] for c in accepted for e in c.fresh if e[0] == "pair")
        have, looks = session.matches(new_items, new_pairs)
        rows: list[tuple[list[Entry], list[Label]]] = []
        if not have and not looks and not self.unwritten:  # the usual case: every row as it is
            rows = [(c.fresh, c.labels) for c in accepted]
            accepted = []
        for c in accepted:
            mine = c.fresh + [e for e in c.repeats if (e[0], e[1]) in self.unwritten]
            dup = [ident for kind, ident, *_ in mine if kind in ("item", "pair") and ident in have]
            alike = [(kind, ident, looks[kind, ident]) for kind, ident, *_ in mine if (kind, ident) in looks]
            if dup or alike:
                if dup:
                    msg = (
                        f"id {dup[0]!r} is already in the store "
                        "(imported before, or by an import running at the same time)"
                    )
                else:
                    kind, ident, stored = alike[0]
                    msg = f"{kind} id {ident!r} looks like {kind} id {stored!r}, which is already in the store"
                self.reject(c.line, [InputProblem(self.ctx.name, c.line, "id", msg)])
                self.unwritten.update((e[0], e[1]) for e in c.fresh)
            else:
                self.unwritten.difference_update((e[0], e[1]) for e in mine)
                rows.append((mine, c.labels))
        if not self.writing:
            self.ctx.staged.clear()  # nothing will be written: no image is needed any more
            return
        # the batch (curate/ingest/rows.py's Entry: kind, id, content digest, rows, images)
        written = [e for mine, _ in rows for e in mine]
        items = [e for e in written if e[0] == "item"]
        cands = [e for e in written if e[0] == "candidate"]
        pairs = [e[3] for e in written if e[0] == "pair"]
        labels = [x for _, labels in rows for x in labels]
        if labels and not self.raters_added:
            session.add_raters(self.raters)
            self.raters_added = True
        session.write(
            images=self.copy_images([sha for e in items + cands for sha, _, _ in e[4] if sha]),
            items=[e[3] for e in items],
            candidates=[e[3] for e in cands],
            pairs=pairs,
            labels=labels,
        )
        report.items += len(items)
        report.candidates += len(cands)
        report.pairs += len(pairs)
        report.labels += len(labels)
        report.item_images += sum(1 for e in items for sha, _, _ in e[4] if sha)
        report.response_images += sum(1 for e in cands for sha, _, _ in e[4] if sha)
        gone = [f"{e[1]}: {source}" for e in items + cands for _, status, source in e[4] if status == "missing"]
        report.images_missing += len(gone)
        missing += gone[: 5 - len(missing)]  # a few examples

    def copy_images(self, shas: list[str]) -> list[StoredImage]:
        """Copy the images the batch names (its items' and responses', by their sha256) into
        the image folder (once each)."""
        new = []
        images = self.store.images
        for sha in dict.fromkeys(shas):
            if sha in self.stored:
                continue
            if not self.stored:
                # held until the rows naming the files are committed (see ImageStore.writing)
                self.images_lock.enter_context(images.writing())
            st = self.ctx.staged.pop(sha)
            data = st.data if st.data is not None else images.read_source(st.source, st.root)
            with disk_full_reported(f"image files into {images.root}"):
                s, created = images.add(data, st.source)
            if created:
                self.created.append(s)
            if s.sha256 != sha:
                raise ImageProblem("corrupt", f"image {st.source} changed while it was being imported")
            self.stored[sha] = s
            new.append(s)
        return new


class _QuietAbortedPipeline(logging.Filter):
    """psycopg warns ("error ignored terminating <Pipeline ...>") when a batch insert that
    lost a race ends its pipeline; the failure itself is handled by run_import."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error ignored terminating")


logging.getLogger("psycopg").addFilter(_QuietAbortedPipeline())


def _stage_rejects(path: Path, source: Path, json_key: str | None, rejected: dict[int, list[InputProblem]]) -> Path:
    """The rejected rows, read again from the file, each with its reasons (in file order),
    in a temporary file beside ``path`` (removed if writing it fails): the caller moves it in."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=".rejects-")
    tmp = Path(name)
    try:
        _write_rejects(os.fdopen(fd, "wb"), source, json_key, rejected)
    except BaseException:
        with suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def _write_rejects(out: BinaryIO, source: Path, json_key: str | None, rejected: dict[int, list[InputProblem]]) -> None:
    with out:
        for row in read_rows(source, json_key):
            problems = rejected.get(row.line)
            if problems is None:
                continue
            rec = {
                "file": problems[0].file,
                "line": row.line,
                "problems": [{"field": p.field, "message": p.message} for p in problems],
                "row": jsonable(row.data) if row.data is not None else row.raw,
            }
            try:
                line = json.dumps(rec, ensure_ascii=False, default=str).encode("utf-8")
            except UnicodeEncodeError:  # text that was not valid UTF-8: kept as \\udcXX escapes
                line = json.dumps(rec, default=str).encode("ascii")
            out.write(line + b"\n")
