"""Annotation schemes as assigned: each version's definition, and which scheme (name and
version) each pair is labelled with. What a scheme means is curate/schemes.py's; here it is a
name, a version and a canonical JSON table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any

from sqlalchemy import insert, select, update

from . import schema as S
from .base import Conn, StoreBase
from .engine import dumps, dumps_mapping, loads, now
from .labels import _label

SchemeKey = tuple[str, int]  # (name, version)
_CHUNK = 500


class SchemeStore(StoreBase):
    def scheme_definitions(self, conn: Conn | None = None) -> dict[SchemeKey, dict[str, Any]]:
        """Every stored scheme version's table."""
        with self._r(conn) as c:
            rows = c.execute(select(S.schemes.c.name, S.schemes.c.version, S.schemes.c.definition)).all()
        return {(n, v): loads(d) for n, v, d in rows}

    def add_scheme(self, name: str, version: int, definition: Mapping[str, Any], conn: Conn | None = None) -> None:
        """Keep a scheme version's table (a version is written once: it never changes)."""
        with self._w(conn) as c:
            there = c.execute(
                select(S.schemes.c.name).where(S.schemes.c.name == name, S.schemes.c.version == version)
            ).first()
            if there is None:
                c.execute(
                    insert(S.schemes).values(
                        name=name, version=version, definition=dumps_mapping(definition), created_at=now()
                    )
                )

    def pair_schemes(
        self, ids: Iterable[str] | None = None, conn: Conn | None = None
    ) -> dict[str, tuple[str | None, int | None]]:
        """Each pair's (scheme, version); (None, None) for a pair on the default scheme. All
        pairs, or those of ``ids``."""
        P = S.pairs.c
        q = select(P.id, P.scheme, P.scheme_version)
        with self._r(conn) as c:
            if ids is None:
                return {r[0]: (r[1], r[2]) for r in c.execute(q)}
            ids = list(ids)
            out: dict[str, tuple[str | None, int | None]] = {}
            for start in range(0, len(ids), _CHUNK):
                out |= {r[0]: (r[1], r[2]) for r in c.execute(q.where(P.id.in_(ids[start : start + _CHUNK])))}
            return out

    def scheme_keys(self, conn: Conn | None = None) -> set[tuple[str | None, int | None]]:
        """The distinct (scheme, version) of the pairs, (None, None) for the default: which
        schemes a store's labels can be under, without a row per pair."""
        P = S.pairs.c
        with self._r(conn) as c:
            return {(r[0], r[1]) for r in c.execute(select(P.scheme, P.scheme_version).distinct())}

    def set_pair_scheme(
        self,
        pair_ids: Iterable[str],
        name: str | None,
        version: int | None,
        *,
        relabel: bool = False,
        conn: Conn | None = None,
    ) -> int:
        """Label these pairs with scheme ``name`` at ``version`` (None: the default, mmrb). ``relabel``: their labels
        were made under a form the new one cannot read; each goes to the history (action
        "rescheme", kept under its own version) and its assignment opens again. Returns how
        many labels were moved."""
        ids = list(pair_ids)
        L = S.labels.c
        moved = 0
        ts = now()
        with self._w(conn) as c:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                c.execute(update(S.pairs).where(S.pairs.c.id.in_(chunk)).values(scheme=name, scheme_version=version))
                if not relabel:
                    continue
                rows = c.execute(select(S.labels).where(L.pair_id.in_(chunk))).mappings().all()
                for r in rows:
                    old = _label(r)
                    c.execute(
                        insert(S.label_history).values(
                            pair_id=old.pair_id,
                            annotator=old.annotator,
                            revision=old.revision,
                            snapshot=dumps(asdict(old)),
                            replaced_at=ts,
                            action="rescheme",
                        )
                    )
                if rows:
                    c.execute(S.labels.delete().where(L.pair_id.in_(chunk)))
                    c.execute(update(S.assignments).where(S.assignments.c.pair_id.in_(chunk)).values(state="open"))
                moved += len(rows)
        return moved
