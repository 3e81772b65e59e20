"""The store: one API over SQLite (embedded default) and PostgreSQL (teams), and the only
way into the database: no module outside this package imports the schema or writes SQL.

One module per aggregate: ``items`` (images, items, candidates, pairs), ``imports`` (an
import's transaction), ``labels`` (assignments, labels and their history, adjudications),
``gold`` (gold answers, which labels are control tasks), ``schemes`` (annotation schemes as
assigned: each version's table, each pair's scheme), ``people`` (annotators, sessions,
sign-in attempts), ``judging`` (judge runs and judgments), ``counts``, ``columns`` (the
agreement fast path), ``settings``, ``guidelines`` (the labelling guidelines'
versions), ``audit`` (who changed what);
``engine`` and ``migrations`` open it, and ``writer`` commits a run's results in batches.

Every public method that writes more than one row runs in one transaction. Methods take an
optional ``conn`` so that a stage can group several calls into a single unit of work, a
:class:`Transaction` (``Store.snapshot`` for reads only)::

    with store.transaction() as tx:
        store.add_items(items, conn=tx)
        store.add_candidates(cands, conn=tx)

A stage names the store methods it uses in a ``typing.Protocol`` of its own
(``curate/store/protocols.py``), which ``Store`` satisfies: a stage sees only what it uses.
"""

from __future__ import annotations

from ..errors import StoreError
from .base import ConflictError, Transaction
from .columns import ColumnStore
from .counts import CountStore
from .engine import DEFAULT_DB, dumps, is_url, loads, now, resolve_db
from .gold import GoldStore
from .guidelines import GuidelinesStore, QueueHead
from .imports import ImportConflict, ImportSession, ImportStore
from .items import ItemStore, candidate_rows, item_rows, pair_row, params_key
from .judging import JudgingStore
from .labels import NEW_LABEL, LabelStore, NewLabel, QueueProgress
from .people import PeopleStore
from .schemes import SchemeStore
from .settings import SettingsStore


class Store(
    ImportStore,
    ItemStore,
    LabelStore,
    PeopleStore,
    JudgingStore,
    CountStore,
    ColumnStore,
    SettingsStore,
    GoldStore,
    SchemeStore,
    GuidelinesStore,
):
    """Everything a stage reads or writes (see the modules of this package)."""


__all__ = [
    "DEFAULT_DB",
    "NEW_LABEL",
    "ConflictError",
    "ImportConflict",
    "ImportSession",
    "candidate_rows",
    "item_rows",
    "pair_row",
    "NewLabel",
    "QueueHead",
    "QueueProgress",
    "Store",
    "StoreError",
    "Transaction",
    "dumps",
    "is_url",
    "loads",
    "now",
    "params_key",
    "resolve_db",
]
