"""The lead's adjudication, without Streamlit: which pairs disagree and on what, the filters
and the walk through them, and everything one pair's decision needs.

Admin pages are unblinded: they may show model names, gold answers and every label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from curate import schemes
from curate.model import (
    CORRECTNESS,
    PREFERENCES,
    SIDES,
    Adjudication,
    Candidate,
    Correctness,
    ImageRef,
    Item,
    Label,
    Pair,
    Side,
)
from curate.schemes import Scheme
from curate.store import Store


@dataclass(frozen=True)
class Decision:
    """One answer the lead decides, by the name a label keeps it under (``Label.ratings`` for a
    scheme's own fields; a per-response field is two: NAME_first, NAME_second)."""

    key: str
    title: str
    options: tuple[str, ...]  # as stored (a scale's points as their numbers)
    names: tuple[str, ...] = ()  # what each option is called on the form (a scale's point labels)
    multi: bool = False  # several options at once (a multi-select field)


# Multimodal RewardBench's form (the mmrb scheme), its answers in the label's own columns
MMRB_DECISIONS = (
    Decision("correctness_first", "correctness of first", CORRECTNESS),
    Decision("correctness_second", "correctness of second", CORRECTNESS),
    Decision("preference", "preference", PREFERENCES),
)
FIELDS = tuple(d.key for d in MMRB_DECISIONS)
# The adjudication page shows the pair in its stored order, the first response on the left
SHOWN: dict[str, str] = {"first": "left", "second": "right"}
FIELD_TITLES = {d.key: d.title for d in MMRB_DECISIONS}
MMRB = schemes.BUILT_IN[schemes.DEFAULT]


def decisions(scheme: Scheme) -> tuple[Decision, ...]:
    """What the lead decides on a pair of ``scheme``: each field but free text."""
    if scheme == MMRB:
        return MMRB_DECISIONS
    out = []
    for f in scheme.fields:
        if f.kind == "text":
            continue
        names = f.points or f.values
        if f.per_response:
            out += [Decision(f"{f.name}_{s}", f"{f.title} of {s} ({SHOWN[s]})", f.options, names) for s in SIDES]
        else:
            out.append(Decision(f.name, f.title, f.options, names, multi=f.kind == "multi"))
    return tuple(out)


def answers(scheme: Scheme, label: Label | Adjudication) -> dict[str, str | None]:
    """A label's (or a decision's) answer to each decision, as a word ("a, b" for several)."""
    if scheme == MMRB:
        return {d.key: getattr(label, d.key) for d in MMRB_DECISIONS}
    as_label = (
        label
        if isinstance(label, Label)
        else Label(
            label.pair_id,
            label.admin,
            label.correctness_first,
            label.correctness_second,
            label.preference,
            ratings=label.ratings,
        )
    )
    values = schemes.label_values(scheme, as_label)
    out: dict[str, str | None] = {}
    for f in scheme.fields:
        if f.kind == "text":
            continue
        v = values.get(f.name)
        if f.per_response:
            for side, one in zip(SIDES, v if v is not None else (None, None), strict=True):
                out[f"{f.name}_{side}"] = None if one is None else str(one)
        elif f.kind == "multi":
            out[f.name] = ", ".join(sorted(v)) if v else None
        else:
            out[f.name] = None if v is None else str(v)
    return out


def seen_answers(scheme: Scheme, label: Label, left_of: Mapping[str, Side]) -> dict[str, str | None]:
    """A label's answers (:func:`answers`) as the labels table shows them: a scale point with its
    label, in this page's terms (the first response on the left); for a side-naming scale its
    annotator saw flipped, also the point they picked as they saw it, which their rationale
    speaks of ("4 · left slightly better; they picked 3 · right slightly better"). ``left_of``:
    annotator -> the response they saw on the left."""
    out = answers(scheme, label)
    left = left_of.get(label.annotator)
    if scheme == MMRB:
        return out
    stored = schemes.label_values(scheme, label)
    for f in scheme.fields:
        v = stored.get(f.name)
        if f.kind != "scale" or not f.points or not isinstance(v, int) or not f.low <= v <= f.high:
            continue
        text = f"{v} · {f.points[v - f.low]}"
        if f.sides and left is not None and left != "first":
            theirs = schemes.shown_values(scheme, {f.name: v}, left)[f.name]
            text += f"; they picked {theirs} · {f.points[theirs - f.low]}"
        out[f.name] = text
    return out


def decided(
    scheme: Scheme,
    pair: Pair,
    admin: str,
    chosen: Mapping[str, Any],
    *,
    exclude: bool = False,
    note: str = "",
) -> Adjudication:
    """The lead's decision from their answer to each decision (``chosen``: key -> stored word,
    a list for a multi-select, None undecided): the pair's preference follows from them by the
    scheme's rule, as a label's does."""
    if scheme == MMRB:
        return Adjudication(
            pair.id,
            admin,
            chosen.get("preference"),
            chosen.get("correctness_first"),
            chosen.get("correctness_second"),
            exclude=exclude,
            note=note,
        )
    values: dict[str, Any] = {}
    for f in scheme.fields:
        if f.kind == "text":
            continue
        if f.per_response:
            both = tuple(chosen.get(f"{f.name}_{s}") for s in SIDES)
            if any(v is not None for v in both):
                values[f.name] = tuple(_number(f, v) for v in both)
        elif chosen.get(f.name) not in (None, "", []):
            values[f.name] = _number(f, chosen[f.name])
    lab = schemes.to_label(scheme, pair.id, admin, values, proposal=schemes.proposal_of(pair))
    return Adjudication(
        pair.id,
        admin,
        lab.preference,
        lab.correctness_first,
        lab.correctness_second,
        exclude=exclude,
        note=note,
        ratings=lab.ratings,
    )


def _number(f: schemes.SchemeField, v: Any) -> Any:
    return int(v) if v is not None and f.kind in ("scale", "scale_per_response") else v


@dataclass(frozen=True)
class Disagreement:
    """A pair whose submitted labels differ, on which fields, with the lead's decision if any."""

    pair_id: str
    category: str
    labels: tuple[Label, ...]
    adjudication: Adjudication | None
    fields: tuple[str, ...]  # the decisions the labels differ on, in the scheme's order
    scheme: Scheme = MMRB
    prompt: str = ""  # the item's prompt (the picker names a pair by it)

    @property
    def pending(self) -> bool:
        return self.adjudication is None


def differing(labels: Sequence[Label], scheme: Scheme = MMRB) -> tuple[str, ...]:
    """The decisions on which the labels do not all agree (a missing answer differs from any)."""
    each = [answers(scheme, lab) for lab in labels]
    return tuple(d.key for d in decisions(scheme) if len({a[d.key] for a in each}) > 1)


def disagreements(store: Store) -> list[Disagreement]:
    """Pairs with two or more submitted labels that differ, by pair id, with any adjudication."""
    by: dict[str, list[Label]] = {}
    for lab in store.labels(status="submitted", control=False):
        by.setdefault(lab.pair_id, []).append(lab)
    several = [pid for pid, labs in by.items() if len(labs) >= 2]
    if not several:
        return []
    scheme_of = schemes.schemes_of(store, several)
    split = {pid: (by[pid], fields) for pid in several if (fields := differing(by[pid], scheme_of.get(pid, MMRB)))}
    if not split:
        return []
    with store.read() as c:
        item_of = {p.id: p.item_id for p in store.pairs(ids=split, conn=c)}
        items = {i.id: i for i in store.items(ids=set(item_of.values()), conn=c)}
        adj = store.adjudications(conn=c)
    out = []
    for pid, (labs, fields) in sorted(split.items()):
        item = items.get(item_of.get(pid, ""))
        category, prompt = (item.category, item.prompt) if item is not None else ("", "")
        out.append(Disagreement(pid, category, tuple(labs), adj.get(pid), fields, scheme_of.get(pid, MMRB), prompt))
    return out


def titles(rows: Iterable[Disagreement]) -> dict[str, str]:
    """Each decision's title, over the schemes of ``rows`` (the page's filter of fields)."""
    return {d.key: d.title for r in rows for d in decisions(r.scheme)}


def narrow(
    rows: Iterable[Disagreement], *, categories: Iterable[str] = (), fields: Iterable[str] = ()
) -> list[Disagreement]:
    """The rows in any of ``categories`` that differ on any of ``fields`` (an empty filter keeps all)."""
    cats, want = set(categories), set(fields)
    return [r for r in rows if (not cats or r.category in cats) and (not want or want & set(r.fields))]


def next_pending(rows: Sequence[Disagreement], after: str | None, *, again: bool = True) -> str | None:
    """The first undecided pair after ``after`` in ``rows``, wrapping round, ``after`` itself
    last (never, unless ``again``: it has just been decided); None when none is left."""
    ids = [r.pair_id for r in rows]
    start = ids.index(after) + 1 if after in ids else 0
    for r in [*rows[start:], *rows[:start]]:
        if r.pending and (again or r.pair_id != after):
            return r.pair_id
    return None


@dataclass(frozen=True)
class AutoCheck:
    """The automatic correctness of the pair's responses, where the item's reference decided
    it (curate/pairing.py), with what was read from each response."""

    first: Correctness | None
    second: Correctness | None
    method: str | None
    read_first: str | None
    read_second: str | None


@dataclass(frozen=True)
class Case:
    """Everything about one pair the lead decides on (model names included)."""

    pair: Pair
    item: Item | None
    first: Candidate | None
    second: Candidate | None
    auto: AutoCheck | None  # None when no reference decided either response
    left_of: Mapping[str, Side] = field(default_factory=dict)  # annotator -> the response they saw on the left

    @property
    def image(self) -> ImageRef | None:
        return self.item.images[0] if self.item and self.item.images else None


def case(store: Store, pair_id: str) -> Case | None:
    with store.read() as c:
        pair = store.get_pair(pair_id, conn=c)
        if pair is None:
            return None
        cands = {x.id: x for x in store.candidates(ids=[pair.first_id, pair.second_id], conn=c)}
        item = store.get_item(pair.item_id, conn=c)
        left_of = {a.annotator: a.left for a in store.assignments(pair_id=pair_id, conn=c)}
    auto = None
    if pair.auto_first is not None or pair.auto_second is not None:
        meta = pair.metadata

        def read(key: str) -> str | None:
            v = meta.get(key)
            return None if v is None else str(v)

        auto = AutoCheck(
            pair.auto_first, pair.auto_second, pair.auto_method, read("extracted_first"), read("extracted_second")
        )
    return Case(pair, item, cands.get(pair.first_id), cands.get(pair.second_id), auto, left_of)


def record_decision(store: Store, adj: Adjudication) -> None:
    """Store the lead's decision and its audit entry (who: ``adj.admin``) in one transaction."""
    details: dict[str, Any] = {"exclude": adj.exclude}
    details |= {k: v for k in ("preference", "correctness_first", "correctness_second") if (v := getattr(adj, k))}
    details |= {k: v for k, v in adj.ratings.items() if v is not None}
    with store.transaction() as tx:
        store.set_adjudication(adj, conn=tx)
        store.record_audit(adj.admin, "adjudicate", adj.pair_id, details, conn=tx)
