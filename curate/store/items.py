"""Items, their images, candidate responses and pairs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, fields
from operator import attrgetter
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, delete, insert, select, tuple_, update

from ..images import StoredImage, stored_name
from ..lookalike import skeleton
from ..model import Candidate, ImageRef, Item, Pair, Part, SampleFailure
from ..seeding import hex_hash
from . import schema as S
from .base import Conn, StoreBase
from .engine import chunks, dumps, dumps_mapping, insert_ignoring, insert_rows, loads, now, records

SampleKey = tuple[str, str, str, int]  # item, model label, params_key, sample_index


class ItemStore(StoreBase):
    # -- images --------------------------------------------------------------------------
    def add_images(self, stored: Iterable[StoredImage], conn: Conn | None = None) -> None:
        rows = {s.sha256: asdict(s) for s in stored}
        if not rows:
            return
        with self._w(conn) as c:
            have = set(c.scalars(select(S.images.c.sha256).where(S.images.c.sha256.in_(list(rows)))))
            new = [r for k, r in rows.items() if k not in have]
            if new:
                c.execute(insert(S.images), new)

    def image_hashes(self, conn: Conn | None = None) -> set[str]:
        """Every stored image (its sha256)."""
        with self._r(conn) as c:
            return set(c.scalars(select(S.images.c.sha256)))

    def image_name(self, sha256: str, conn: Conn | None = None) -> str | None:
        """Where the image's file is in the image folder: named by its content hash and its
        format (``images.stored_name``), never by the table's ``path``. None for an image
        the store does not have."""
        with self._r(conn) as c:
            fmt = c.scalar(select(S.images.c.format).where(S.images.c.sha256 == sha256))
        return stored_name(sha256, fmt) if fmt else None

    def image_path(self, sha256: str, conn: Conn | None = None) -> Path | None:
        name = self.image_name(sha256, conn)
        return self.images.path(name) if name else None

    def image_paths(self, sha256s: Iterable[str], conn: Conn | None = None) -> dict[str, Path]:
        """Paths of many images in a few queries (one per image cost 0.35 ms each, which
        was most of a 2,000-item sampling run's start-up). Unknown hashes are left out, and
        so are files that are not regular files inside the image folder (a symbolic link
        planted there is a missing image to every reader: sampling, selection, the build)."""
        shas = sorted({h for h in sha256s if h})
        out: dict[str, Path] = {}
        with self._r(conn) as c:
            for chunk in chunks(shas, 500):
                for sha, fmt in c.execute(
                    select(S.images.c.sha256, S.images.c.format).where(S.images.c.sha256.in_(chunk))
                ):
                    name = stored_name(sha, fmt)
                    if name and self.images.servable(name):
                        out[sha] = self.images.path(name)
        return out

    # -- items ---------------------------------------------------------------------------
    def add_items(self, items: Iterable[Item], conn: Conn | None = None) -> int:
        items = list(items)
        if not items:
            return 0
        ts = now()
        rows = [item_rows(i, ts) for i in items]
        with self._w(conn) as c:
            insert_rows(c, S.items, ITEM_COLUMNS, [r for r, _ in rows])
            insert_rows(c, S.item_images, IMAGE_COLUMNS, [x for _, images in rows for x in images])
        return len(items)

    def item_ids(self, ids: Iterable[str] | None = None, conn: Conn | None = None) -> set[str]:
        with self._r(conn) as c:
            if ids is None:
                return set(c.scalars(select(S.items.c.id)))
            out: set[str] = set()
            for chunk in chunks(list(ids), 500):
                out |= set(c.scalars(select(S.items.c.id).where(S.items.c.id.in_(chunk))))
            return out

    def get_item(self, item_id: str, conn: Conn | None = None) -> Item | None:
        got = self.items(ids=[item_id], conn=conn)
        return got[0] if got else None

    def items(
        self, *, ids: Iterable[str] | None = None, category: str | None = None, conn: Conn | None = None
    ) -> list[Item]:
        q = select(S.items).order_by(S.items.c.id)
        if ids is not None:
            q = q.where(S.items.c.id.in_(list(ids)))
        if category is not None:
            q = q.where(S.items.c.category == category)
        with self._r(conn) as c:
            rows = c.execute(q).mappings().all()
            img_q = select(S.item_images, S.images.c.width, S.images.c.height).join(
                S.images, S.images.c.sha256 == S.item_images.c.sha256, isouter=True
            )
            if ids is not None or category is not None:
                img_q = img_q.where(S.item_images.c.item_id.in_([r["id"] for r in rows]))
            imgs: dict[str, list[ImageRef]] = {}
            for r in c.execute(img_q.order_by(S.item_images.c.item_id, S.item_images.c.position)).mappings():
                imgs.setdefault(r["item_id"], []).append(
                    ImageRef(r["source"], r["sha256"], r["status"], r["width"], r["height"], r["error"])
                )
        return [
            Item(
                id=r["id"],
                prompt=r["prompt"],
                category=r["category"],
                images=tuple(imgs.get(r["id"], ())),
                reference=r["reference"],
                source=r["source"],
                metadata=loads(r["metadata"]),
            )
            for r in rows
        ]

    # -- candidates ----------------------------------------------------------------------
    def add_candidates(self, cands: Iterable[Candidate], conn: Conn | None = None) -> int:
        ts = now()
        rows = [candidate_rows(c, ts) for c in cands]
        with self._w(conn) as c:
            insert_rows(c, S.candidates, CANDIDATE_COLUMNS, [r for r, _ in rows])
            insert_rows(c, S.candidate_parts, PART_COLUMNS, [x for _, ps in rows for x in ps])
        return len(rows)

    def candidates(
        self, *, item_id: str | None = None, ids: Iterable[str] | None = None, conn: Conn | None = None
    ) -> list[Candidate]:
        q = select(S.candidates).order_by(S.candidates.c.item_id, S.candidates.c.id)
        if item_id is not None:
            q = q.where(S.candidates.c.item_id == item_id)
        if ids is not None:
            q = q.where(S.candidates.c.id.in_(list(ids)))
        with self._r(conn) as c:
            rows = c.execute(q).mappings().all()
            parts = self._candidate_parts(c, item_id=item_id, ids=ids, rows=rows)
        return [_candidate(r, parts.get(r["id"], ())) for r in rows]

    def _candidate_parts(
        self, c: Connection, *, item_id: str | None, ids: Iterable[str] | None, rows: Sequence[Mapping]
    ) -> dict[str, tuple[Part, ...]]:
        """The parts of the candidates of ``rows`` that have images, in order."""
        P = S.candidate_parts.c
        q = select(S.candidate_parts, S.images.c.width, S.images.c.height).join(
            S.images, S.images.c.sha256 == P.sha256, isouter=True
        )
        if item_id is not None or ids is not None:
            q = q.where(P.candidate_id.in_([r["id"] for r in rows]))
        out: dict[str, list[Part]] = {}
        for r in c.execute(q.order_by(P.candidate_id, P.position)).mappings():
            if r["kind"] == "image":
                ref = ImageRef(r["source"] or "", r["sha256"], r["status"] or "ok", r["width"], r["height"], r["error"])
                part = Part.of_image(ref)
            else:
                part = Part.of_text(r["text"] or "")
            out.setdefault(r["candidate_id"], []).append(part)
        return {k: tuple(v) for k, v in out.items()}

    # -- sampling: each result is a candidate or a failure (curate/sampling.py) ---------------
    def candidate_keys(self, conn: Conn | None = None) -> set[SampleKey]:
        """(item, model, params_key, sample_index) of every stored candidate."""
        c = S.candidates.c
        with self._r(conn) as cx:
            return {
                (r[0], r[1], r[2], r[3]) for r in cx.execute(select(c.item_id, c.model, c.params_key, c.sample_index))
            }

    def record_samples(
        self,
        answers: Sequence[Candidate],
        failures: Sequence[SampleFailure],
        conn: Conn | None = None,
        *,
        images: Iterable[StoredImage] = (),
    ) -> None:
        """One transaction: the answers as candidates (a key stored already, e.g. by a run in
        parallel, is left as it is) and the failures, each replacing an earlier failure of its
        key; an answer removes its key's failure. An answer with images brings its parts, and
        ``images`` the image files they name (written to the image folder already)."""
        ts = now()
        fc = S.sample_failures.c
        keys = tuple_(fc.item_id, fc.model, fc.params_key, fc.sample_index)
        with self._w(conn) as c:
            with_parts = [a for a in answers if a.content]
            if with_parts:  # parts only for the candidates this call adds (not one stored already)
                self.add_images(images, conn=c)
                ids = [a.id for a in with_parts]
                have = set(c.scalars(select(S.candidates.c.id).where(S.candidates.c.id.in_(ids))))
            if answers:
                rows = [dict(zip(CANDIDATE_COLUMNS, candidate_rows(a, ts)[0], strict=True)) for a in answers]
                c.execute(insert_ignoring(c, S.candidates), rows)
            if with_parts:
                part_rows = [
                    part_row(a.id, n, p) for a in with_parts if a.id not in have for n, p in enumerate(a.content)
                ]
                if part_rows:
                    c.execute(
                        insert_ignoring(c, S.candidate_parts),
                        [dict(zip(PART_COLUMNS, r, strict=True)) for r in part_rows],
                    )
            done = [(a.item_id, a.model, params_key(a.params), a.sample_index) for a in answers]
            done += [(f.item_id, f.model, f.params_key, f.sample_index) for f in failures]
            for chunk in chunks(done, 500):
                c.execute(delete(S.sample_failures).where(keys.in_(list(chunk))))
            if failures:
                c.execute(insert(S.sample_failures), [dict(shallow(f), created_at=ts) for f in failures])

    def sample_failures(self, conn: Conn | None = None) -> list[SampleFailure]:
        fc = S.sample_failures.c
        q = select(fc.item_id, fc.model, fc.params_key, fc.sample_index, fc.attempts, fc.error).order_by(
            fc.item_id, fc.model, fc.params_key, fc.sample_index
        )
        with self._r(conn) as c:
            return [SampleFailure(*r) for r in c.execute(q)]

    # -- pairs ---------------------------------------------------------------------------
    def add_pairs(self, pairs: Iterable[Pair], conn: Conn | None = None) -> int:
        ts = now()
        rows = [pair_row(p, ts) for p in pairs]
        with self._w(conn) as c:
            insert_rows(c, S.pairs, PAIR_COLUMNS, rows)
        return len(rows)

    def get_pair(self, pair_id: str, conn: Conn | None = None) -> Pair | None:
        with self._r(conn) as c:
            r = c.execute(select(S.pairs).where(S.pairs.c.id == pair_id)).mappings().first()
        return _pair(r) if r else None

    def pairs(
        self,
        *,
        status: str | None = None,
        item_id: str | None = None,
        ids: Iterable[str] | None = None,
        conn: Conn | None = None,
    ) -> list[Pair]:
        q = select(S.pairs).order_by(S.pairs.c.id)
        if status is not None:
            q = q.where(S.pairs.c.status == status)
        if item_id is not None:
            q = q.where(S.pairs.c.item_id == item_id)
        if ids is not None:
            q = q.where(S.pairs.c.id.in_(list(ids)))
        with self._r(conn) as c:
            return [_pair(r) for r in records(c.execute(q))]

    def pair_items(self, conn: Conn | None = None) -> dict[str, str]:
        """Every pair's item id (a label file's pairs checked without reading whole pairs)."""
        P = S.pairs.c
        with self._r(conn) as c:
            return {p: i for p, i in c.execute(select(P.id, P.item_id))}

    def update_pair(self, pair_id: str, conn: Conn | None = None, **values: Any) -> None:
        if "metadata" in values:
            values["metadata"] = dumps(dict(values["metadata"]))
        with self._w(conn) as c:
            c.execute(update(S.pairs).where(S.pairs.c.id == pair_id).values(**values))


# -- row <-> model -----------------------------------------------------------------------
def params_key(params: Mapping[str, Any]) -> str:
    return hex_hash(dumps_mapping(params), n=16) if params else _NO_PARAMS


_NO_PARAMS = hex_hash("{}", n=16)


# -- rows as the store writes them -----------------------------------------------------
# Bulk inserts take tuples in these columns' order (engine.insert_rows). An import builds its
# rows where it reads the file (curate/ingest/rows.py), in another process for a large file:
# plain tuples cross over far faster than the objects they come from.
ITEM_COLUMNS = ("id", "prompt", "category", "reference", "source", "metadata", "created_at", "id_skeleton")
IMAGE_COLUMNS = ("item_id", "position", "source", "sha256", "status", "error")
PART_COLUMNS = ("candidate_id", "position", "kind", "text", "source", "sha256", "status", "error")
CANDIDATE_COLUMNS = (
    "id",
    "item_id",
    "model",
    "text",
    "params",
    "params_key",
    "sample_index",
    "prompt_tokens",
    "completion_tokens",
    "created_at",
)
_PAIR_FIELDS = tuple(f.name for f in fields(Pair) if f.name != "metadata")
_pair_values = attrgetter(*_PAIR_FIELDS)
PAIR_COLUMNS = (*_PAIR_FIELDS, "metadata", "created_at", "id_skeleton")

Row = tuple[Any, ...]


def item_rows(i: Item, ts: str) -> tuple[Row, tuple[Row, ...]]:
    """An item's row (ITEM_COLUMNS) and its images' (IMAGE_COLUMNS)."""
    row = (i.id, i.prompt, i.category, i.reference, i.source, dumps_mapping(i.metadata), ts, skeleton(i.id))
    return row, tuple((i.id, n, r.source, r.sha256, r.status, r.error) for n, r in enumerate(i.images))


def candidate_rows(c: Candidate, ts: str) -> tuple[Row, tuple[Row, ...]]:
    """A candidate's row (CANDIDATE_COLUMNS) and its parts' (PART_COLUMNS; none for a
    plain-text response)."""
    params = c.params
    row = (
        c.id,
        c.item_id,
        c.model,
        c.text,
        dumps_mapping(params),
        params_key(params),
        c.sample_index,
        c.prompt_tokens,
        c.completion_tokens,
        ts,
    )
    return row, tuple(part_row(c.id, n, p) for n, p in enumerate(c.content))


def pair_row(p: Pair, ts: str) -> Row:
    """A pair's row (PAIR_COLUMNS)."""
    return (*_pair_values(p), dumps_mapping(p.metadata), ts, skeleton(p.id))


def part_row(candidate_id: str, position: int, p: Part) -> Row:
    im = p.image
    if p.kind == "image" and im is not None:
        return (candidate_id, position, "image", None, im.source, im.sha256, im.status, im.error)
    return (candidate_id, position, "text", p.text, None, None, None, None)


def _candidate(r: Mapping, content: tuple[Part, ...] = ()) -> Candidate:
    return Candidate(
        id=r["id"],
        item_id=r["item_id"],
        model=r["model"],
        text=r["text"],
        params=loads(r["params"]),
        sample_index=r["sample_index"],
        prompt_tokens=r["prompt_tokens"],
        completion_tokens=r["completion_tokens"],
        content=content,
    )


def shallow(obj: Any) -> dict[str, Any]:
    """A dataclass as a dict without asdict's deep copy (slow for big metadata)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def _pair(r: Mapping) -> Pair:
    d = r if isinstance(r, dict) else dict(r)  # a dict here is a row of records(), ours to change
    d.pop("created_at", None)
    d.pop("id_skeleton", None)
    d["metadata"] = loads(d["metadata"])
    d["is_gold"] = bool(d["is_gold"])
    return Pair(**d)
