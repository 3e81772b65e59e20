"""Qualification: an optional set of gold pairs that a new annotator labels before any other
work, and the score they must reach.

``set_qualification`` stores the set and the minimum score (settings ``quality.qualification``).
``mmrb assign`` then puts the set at the front of the queue of each annotator who has no
label yet (control tasks marked ``qualification``, numbered before their other work) and
marks the account ``pending``. When the queue reaches the first pair after the set,
``gate`` scores the set: the share of gold values the annotator matched (a skipped pair
matches nothing). At or above the minimum the account is ``passed``; below it, ``failed``,
and the queue serves nothing else until the lead decides (``mmrb annotators`` or
``resume``); ``mmrb quality`` lists who failed.

The gate also closes the queue of a paused account (automatic pause on low reliability,
curate/quality/reliability.py). It reads gold on the server's side only to score: what it
returns is whether the queue is open, and why not, never a gold value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..agreement.table import rating_value
from ..audit import SYSTEM
from ..errors import MmrbError
from ..model import LABEL_FIELDS, Annotator, Assignment
from ..seeding import unit
from ..sides import annotator_left
from ..wording import plural
from .frames import label_values

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from ..store import Transaction
    from ..store.protocols import QualificationSetStore, QualificationStore

SETTING = "quality.qualification"
Closed = Literal["paused", "qualification_failed"]


@dataclass(frozen=True)
class Gate:
    open: bool
    reason: Closed | None = None
    message: str = ""


OPEN = Gate(True)


def set_qualification(store: QualificationStore, pair_ids: list[str], min_score: float) -> int:
    """Store the qualification set: pairs that must have gold. Returns its size."""
    if not 0.0 <= min_score <= 1.0:
        raise MmrbError(f"the minimum qualification score must be in [0, 1], got {min_score}")
    ids = list(dict.fromkeys(pair_ids))
    if not ids:
        raise MmrbError("the qualification set is empty")
    with store.transaction() as tx:
        gold = store.gold(conn=tx)
        missing = [p for p in ids if p not in gold]
        if missing:
            raise MmrbError(
                f"{plural(len(missing), 'qualification pair', verb=('has', 'have'))} no gold answer, e.g. "
                f"{missing[0]!r}: add gold first (mmrb gold import / derive)"
            )
        store.set_setting(SETTING, json.dumps({"pairs": ids, "min_score": min_score}), conn=tx)
    return len(ids)


def qualification_pairs(
    store: QualificationSetStore, conn: Transaction | None = None
) -> tuple[tuple[str, ...], float] | None:
    """(the set, the minimum score), or None when no qualification is asked."""
    text = store.get_setting(SETTING, conn=conn)
    if not text:
        return None
    data = json.loads(text)
    return tuple(data["pairs"]), float(data["min_score"])


def qualification_assignments(
    store: QualificationStore, annotators: list[str], seed: int, conn: Transaction
) -> list[Assignment]:
    """The qualification set at the front of the queue of each annotator who has no label
    and no qualification yet; marks them ``pending``. Called by ``assign`` in its transaction."""
    qual = qualification_pairs(store, conn=conn)
    if qual is None:
        return []
    pairs, _ = qual
    labelled = store.labelled_annotators(conn=conn)
    rows: list[Assignment] = []
    for name in annotators:
        person = store.get_annotator(name, conn=conn)
        if person is None or person.qualification is not None or name in labelled:
            continue
        mine = store.assignments(annotator=name, conn=conn)
        taken = {a.pair_id for a in mine}
        todo = sorted((p for p in pairs if p not in taken), key=lambda p: (unit("qualification", seed, name, p), p))
        if not todo:
            continue
        first = min((a.seq for a in mine), default=0)
        for i, pid in enumerate(todo):
            rows.append(
                Assignment(
                    pid,
                    name,
                    annotator_left(pid, name, seed),
                    first - len(todo) + i,
                    batch="qualification",
                    is_gold=True,
                    qualification=True,
                )
            )
        store.update_annotator(name, qualification="pending", conn=conn)
    return rows


def score(store: QualificationStore, annotator: str, conn: Transaction | None = None) -> tuple[int, int]:
    """(gold values matched, gold values asked) over the annotator's qualification pairs."""
    gold = store.gold(conn=conn)
    mine = [a for a in store.assignments(annotator=annotator, conn=conn) if a.qualification]
    labels = {lab.pair_id: lab for lab in store.labels(annotator=annotator, status=None, conn=conn)}
    right = asked = 0
    for a in mine:
        g = gold.get(a.pair_id)
        if g is None:
            continue
        lab = labels.get(a.pair_id)
        done = lab is not None and lab.status == "submitted"
        for name in LABEL_FIELDS:
            v = g.value(name)
            if v:
                asked += 1
                right += int(done and lab is not None and label_values(lab).get(name) == v)
        for key, raw in (g.ratings or {}).items():  # a scheme's fields, as the label keeps them
            word = rating_value(raw)
            if word is not None:
                asked += 1
                right += int(done and lab is not None and rating_value((lab.ratings or {}).get(key)) == word)
    return right, asked


def gate(
    store: QualificationStore, annotator: str, conn: Transaction | None = None, *, account: Annotator | None = None
) -> Gate:
    """Whether the queue may serve the annotator work other than their qualification pairs.
    Scores a finished qualification once and records the result on the account (in its own
    write transaction). ``conn``: a read transaction the caller holds, for the reads.
    ``account``: the annotator's row as the caller has just read it (the label page, with its
    session), not read again."""
    person = account if account is not None and account.name == annotator else store.get_annotator(annotator, conn=conn)
    if person is None:
        return OPEN
    if person.paused:
        return Gate(False, "paused", "Your queue is paused. Please contact the project lead.")
    if person.qualification in (None, "passed"):
        return OPEN
    if person.qualification == "failed":
        return _failed()
    if any(a.qualification and a.state == "open" for a in store.assignments(annotator=annotator, conn=conn)):
        return OPEN  # still qualifying: the queue serves the set first anyway
    with store.transaction() as tx:
        qual = qualification_pairs(store, conn=tx)
        right, asked = score(store, annotator, conn=tx)
        passed = qual is None or asked == 0 or right / asked >= qual[1]
        store.update_annotator(annotator, qualification="passed" if passed else "failed", conn=tx)
    return OPEN if passed else _failed()


def _failed() -> Gate:
    return Gate(
        False,
        "qualification_failed",
        "Thank you for the qualification pairs. The project lead will review them before you go on.",
    )


@dataclass(frozen=True)
class Resumed:
    """What `mmrb gold resume` changed: the account's pause before, its qualification after."""

    annotator: str
    was_paused: str | None  # why it was paused; None: it was not
    qualification: str | None


def resume(store: QualificationStore, annotator: str, *, by: str = SYSTEM) -> Resumed:
    """The lead lets an account back into the queue: no pause, qualification passed; in the
    audit trail as done ``by``."""
    with store.transaction() as tx:
        person = store.get_annotator(annotator, conn=tx)
        if person is None:
            raise MmrbError(f"no annotator named {annotator!r}")
        qualification = "passed" if person.qualification == "failed" else person.qualification
        store.update_annotator(annotator, paused=None, qualification=qualification, conn=tx)
        details = {"was_paused": person.paused or "", "qualification": qualification or ""}
        store.record_audit(by, "annotator.resume", annotator, details, conn=tx)
    return Resumed(annotator, person.paused, qualification)
