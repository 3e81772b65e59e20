"""Gold answers: imported from a file, derived from adjudications and from the automatic
correctness of reference answers, listed and counted.

A gold file is CSV (with a header) or JSONL, one pair per row: ``pair_id`` (or ``pair``),
and any of ``preference`` (``first`` / ``second`` / ``tie``), ``correctness_first``,
``correctness_second`` (``correct`` / ``incorrect`` / ``unsure``), plus an optional ``note``.
A pair on an annotation scheme (curate/schemes.py) may also give its scheme's fields by
their label names (``score``, ``grade_first``, ``helpfulness_second``: as ``Label.ratings``
keeps them), a scale as a whole number on its points, a choice or grade as one of its values;
they are kept in ``Gold.ratings``. Values are in the pair's stored order, never screen sides
(a side-naming scale: its high end the first response better). An empty cell gives no value;
a row must give at least one field. The import is all or nothing: any problem (an unknown
pair, a word outside the vocabulary, an unknown column, a pair twice) is reported with file,
line and field, and nothing is written.

Derived gold never replaces gold of another source: an imported gold file and an
adjudication are the lead's own answers, and a reference's verdict fills in only where
neither is there. Deriving again refreshes the rows of its own source.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from ..audit import SYSTEM
from ..errors import InputError, InputProblem, MmrbError
from ..formats.fields import Fields, text_problems
from ..formats.reader import read_rows
from ..model import GOLD_SOURCES, LABEL_FIELDS, Correctness, Gold, GoldSource, Preference, word_of
from ..schemes import Scheme, SchemeField, rating_keys, schemes_of
from ..wording import plural
from .qualification import qualification_pairs

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from ..store.protocols import GoldStageStore

ID_COLUMNS = ("pair_id", "pair")
COLUMNS = frozenset((*ID_COLUMNS, *LABEL_FIELDS, "note"))
PREFERENCES: tuple[Preference, ...] = get_args(Preference)
CORRECTNESS: tuple[Correctness, ...] = get_args(Correctness)
VOCABULARY: dict[str, tuple[str, ...]] = {
    "preference": PREFERENCES,
    "correctness_first": CORRECTNESS,
    "correctness_second": CORRECTNESS,
}
DERIVED: tuple[GoldSource, ...] = ("adjudication", "reference")


@dataclass(frozen=True)
class GoldReport:
    written: int
    source: str
    kept_other: int = 0  # pairs whose gold of another source was left as it was
    skipped: int = 0  # candidates that gave no usable value

    def lines(self) -> list[str]:
        out = [f"{plural(self.written, 'gold answer')} written ({self.source})"]
        if self.kept_other:
            out.append(f"{plural(self.kept_other, 'pair')} kept the gold of another source")
        if self.skipped:
            out.append(f"{plural(self.skipped, 'pair')} gave no usable value (unsure or empty)")
        return out


def gold_fields(scheme: Scheme) -> dict[str, SchemeField]:
    """The keys of ``Gold.ratings`` a pair on ``scheme`` can have gold for (its fields by their
    label names): the fields with one answer among known values (scales, choices, grades);
    free text and multi-select have none."""
    return {
        key: f
        for f in scheme.fields
        if f.kind not in ("text", "multi")
        for key in rating_keys(scheme, f)
        if key not in LABEL_FIELDS  # the label's own columns: gold's own too
    }


def _gold_value(f: Fields, key: str, field_: SchemeField) -> str | int | None:
    """A scheme field's gold value as ``to_label`` stores it (a scale's point as a number)."""
    v = f.data.get(key)
    if field_.kind in ("scale", "scale_per_response"):
        number = v if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            number = int(v.strip())
        if number is None or not field_.low <= number <= field_.high:
            f.bad(key, f"{v!r} is not a whole number from {field_.low} to {field_.high}")
            return None
        return number
    text = f.text(key)
    word = word_of(field_.values, text.strip() if text else None)
    if text is not None and word is None:
        f.bad(key, f"{text!r} is not one of {', '.join(field_.values)}")
    return word


def _parse(
    f: Fields, known: set[str], schemes: Mapping[str, Scheme], scheme_columns: frozenset[str] = frozenset()
) -> Gold | None:
    """``scheme_columns``: the fields any pair's scheme gives gold for (``gold_fields``)."""
    columns = COLUMNS | scheme_columns
    for name in sorted(set(f.data) - columns):
        f.bad(name, f"unknown column (expected {', '.join(sorted(columns))})")
    ids = [c for c in ID_COLUMNS if f.has(c)]
    if len(ids) != 1:
        f.bad("pair_id", "missing required field" if not ids else "give pair_id or pair, not both")
        return None
    pair_id = f.text(ids[0])
    values: dict[str, str | None] = {}
    for name in LABEL_FIELDS:
        text = f.text(name, required=False, allow_empty=True)
        text = text.strip() if text else None
        if text is None:
            values[name] = None
            continue
        word = word_of(VOCABULARY[name], text)
        if word is None:
            f.bad(name, f"{text!r} is not one of {', '.join(VOCABULARY[name])}")
        values[name] = word
    note = f.text("note", required=False, allow_empty=True, default="") or ""
    if pair_id is None or f.problems:
        return None
    if pair_id not in known:
        f.bad(ids[0], f"no pair {pair_id!r} in the store")
        return None
    given = sorted(k for k in scheme_columns if f.data.get(k) is not None and str(f.data[k]).strip())  # empty: none
    ratings: dict[str, str | int] = {}
    if given:
        scheme = schemes.get(pair_id)
        mine = gold_fields(scheme) if scheme is not None else {}
        for key in given:
            if key not in mine:
                on = scheme.name if scheme is not None else "mmrb"
                f.bad(key, f"pair {pair_id!r} is on scheme {on!r}, which has no field {key!r}")
                continue
            v = _gold_value(f, key, mine[key])
            if v is not None:
                ratings[key] = v
        if f.problems:
            return None
    if not any(values.values()) and not ratings:
        f.bad(None, "no gold value: give preference, correctness_first, correctness_second or a field of its scheme")
        return None
    return Gold(
        pair_id,
        "import",
        word_of(PREFERENCES, values["preference"]),
        word_of(CORRECTNESS, values["correctness_first"]),
        word_of(CORRECTNESS, values["correctness_second"]),
        note=note,
        ratings=ratings,
    )


def read_gold_file(
    path: str | Path, known_pairs: Iterable[str], schemes: Mapping[str, Scheme] | None = None
) -> list[Gold]:
    """Every row of a gold file, or one InputError naming each problem's file, line and field.
    ``schemes``: each pair's scheme, whose fields a row may give (none: the three label fields)."""
    known = set(known_pairs)
    schemes = schemes or {}
    scheme_columns = frozenset(k for s in {id(s): s for s in schemes.values()}.values() for k in gold_fields(s))
    out: list[Gold] = []
    problems: list[InputProblem] = []
    first_line: dict[str, int] = {}
    for row in read_rows(path):
        if row.error or row.data is None:
            problems.append(InputProblem(str(path), row.line, None, row.error or "empty row"))
            continue
        f = Fields(str(path), row.line, row.data)
        for name, message in text_problems(row.data):  # the store keeps them: no NUL either, on both backends
            f.bad(name, message)
        gold = _parse(f, known, schemes, scheme_columns) if not f.problems else None
        if gold is not None and gold.pair_id in first_line:
            f.bad(
                f"{'pair_id' if f.has('pair_id') else 'pair'}",
                f"pair given twice (first on line {first_line[gold.pair_id]})",
            )
            gold = None
        problems += f.problems
        if gold is not None:
            first_line[gold.pair_id] = row.line
            out.append(gold)
    if problems:
        raise InputError(problems)
    if not out:
        raise InputError([InputProblem(str(path), None, None, "no gold rows")])
    return out


def import_gold(store: GoldStageStore, path: str | Path, *, by: str = SYSTEM, name: str | None = None) -> GoldReport:
    """Read a gold file whole, then store every row in one transaction (replacing any earlier
    gold of those pairs), recorded in the audit trail as done ``by`` (``name``: the file's
    name to record, an upload's own rather than the server's temporary one)."""
    with store.transaction() as tx:
        golds = read_gold_file(path, (p.id for p in store.pairs(conn=tx)), schemes_of(store, conn=tx))
        store.set_gold(golds, conn=tx)
        details = {"written": len(golds), "source": "import", "file": name or Path(path).name}
        store.record_audit(by, "gold.import", "", details, conn=tx)
    return GoldReport(len(golds), "import")


def import_gold_upload(store: GoldStageStore, name: str, data: bytes, *, by: str = SYSTEM) -> GoldReport:
    """:func:`import_gold` of a file uploaded in the app: the same reader, errors and single
    transaction; the problems name the uploaded file as ``name``, and no error names the
    server's temporary file. Only the name's suffix is used on the server (a name such as
    ``..`` or ``a/b.csv`` comes from the browser)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"upload{Path(Path(name).name).suffix}"
        path.write_bytes(data)
        try:
            return import_gold(store, path, by=by, name=Path(name).name)
        except InputError as e:
            raise InputError(
                [
                    InputProblem(name if p.file == str(path) else p.file, p.line, p.field, p.message.replace(d, "."))
                    for p in e.problems
                ]
            ) from None
        except MmrbError as e:  # its message as the page shows it: the upload's name, not the server's path
            e.args = tuple(a.replace(str(path), name).replace(d, ".") if isinstance(a, str) else a for a in e.args)
            raise


@dataclass(frozen=True)
class ControlShare:
    """An annotator's queue: assignments, of which control tasks (gold pairs, the
    qualification set's included)."""

    annotator: str
    assigned: int
    control: int

    @property
    def share(self) -> float | None:
        return self.control / self.assigned if self.assigned else None


def control_shares(store: GoldStageStore) -> list[ControlShare]:
    """The control share in effect in each annotator's queue."""
    with store.snapshot() as tx:
        work = store.annotator_work(conn=tx)
        control = Counter(a for _, a in store.control_keys(conn=tx))
    return [ControlShare(w.annotator, w.assigned, control.get(w.annotator, 0)) for w in work]


def from_adjudication(adj) -> Gold | None:
    """An adjudication's decided fields as gold (None when it excludes the pair or decides nothing)."""
    if adj.exclude:
        return None
    values = {name: getattr(adj, name) for name in LABEL_FIELDS}
    ratings = {k: v for k, v in (adj.ratings or {}).items() if v is not None and v != "" and k != "proposal"}
    if not any(values.values()) and not ratings:
        return None
    return Gold(adj.pair_id, "adjudication", note=adj.note or "", ratings=ratings, **values)


def from_reference(pair) -> Gold | None:
    """The reference answer's verdicts on both responses as gold, and the preference they
    imply (the correct response over the incorrect one). Unsure verdicts give nothing."""
    first = word_of(CORRECTNESS[:2], pair.auto_first)  # correct or incorrect, never unsure
    second = word_of(CORRECTNESS[:2], pair.auto_second)
    if first is None and second is None:
        return None
    pref: Preference | None = None
    if {first, second} == {"correct", "incorrect"}:
        pref = "first" if first == "correct" else "second"
    return Gold(pair.id, "reference", pref, first, second, note=pair.auto_method or "")


def derive_gold(store: GoldStageStore, sources: Iterable[str] = DERIVED, *, by: str = SYSTEM) -> list[GoldReport]:
    """Gold from the store's adjudications and/or reference verdicts, one transaction (each
    source that wrote any in the audit trail as a gold import done ``by``)."""
    wanted = list(dict.fromkeys(sources))
    for s in wanted:
        if s not in DERIVED:
            raise MmrbError(f"gold cannot be derived from {s!r}: use {' or '.join(DERIVED)}")
    reports = []
    with store.transaction() as tx:
        existing = store.gold(conn=tx)
        for source in wanted:
            if source == "adjudication":
                candidates = [(a.pair_id, from_adjudication(a)) for a in store.adjudications(conn=tx).values()]
            else:
                candidates = [(p.id, from_reference(p)) for p in store.pairs(conn=tx) if p.auto_first or p.auto_second]
            new = [g for _, g in candidates if g is not None]
            keep = [g for g in new if g.pair_id not in existing or existing[g.pair_id].source == source]
            store.set_gold(keep, conn=tx)
            existing.update({g.pair_id: g for g in keep})
            reports.append(GoldReport(len(keep), source, len(new) - len(keep), len(candidates) - len(new)))
            if keep:
                store.record_audit(by, "gold.import", "", {"written": len(keep), "source": source}, conn=tx)
    return reports


@dataclass(frozen=True)
class GoldStats:
    pairs: int  # pairs with gold
    by_source: dict[str, int]
    by_field: dict[str, int]  # pairs whose gold gives that field
    by_category: dict[str, int]
    control_tasks: int  # control assignments in queues
    control_labels: int  # of which labelled
    qualification_pairs: int
    per_field_values: dict[str, dict[str, int]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [f"{plural(self.pairs, 'pair')} with gold"]
        out.append("  by source: " + ", ".join(f"{s} {self.by_source.get(s, 0)}" for s in GOLD_SOURCES))
        for name in LABEL_FIELDS:
            vals = ", ".join(f"{v} {n}" for v, n in sorted(self.per_field_values.get(name, {}).items()))
            out.append(f"  {name}: {self.by_field.get(name, 0)}" + (f" ({vals})" if vals else ""))
        if self.by_category:
            out.append("  by category: " + ", ".join(f"{c or '-'} {n}" for c, n in sorted(self.by_category.items())))
        out.append(
            f"{plural(self.control_tasks, 'control task')} in queues, {self.control_labels} labelled; "
            f"{plural(self.qualification_pairs, 'qualification pair')}"
        )
        return out


def gold_stats(store: GoldStageStore) -> GoldStats:
    with store.snapshot() as tx:
        gold = store.gold(conn=tx)
        control = store.control_keys(conn=tx)
        labelled = store.control_labels(conn=tx)
        qual = qualification_pairs(store, conn=tx)
        by_cat = store.gold_categories(conn=tx)
    by_field: Counter[str] = Counter()
    values: dict[str, Counter[str]] = {name: Counter() for name in LABEL_FIELDS}
    for g in gold.values():
        for name in LABEL_FIELDS:
            v = g.value(name)
            if v:
                by_field[name] += 1
                values[name][v] += 1
    return GoldStats(
        pairs=len(gold),
        by_source=dict(Counter(g.source for g in gold.values())),
        by_field=dict(by_field),
        by_category=by_cat,
        control_tasks=len(control),
        control_labels=labelled,
        qualification_pairs=len(qual[0]) if qual else 0,
        per_field_values={k: dict(v) for k, v in values.items()},
    )


def gold_rows(store: GoldStageStore) -> list[Gold]:
    """Every gold answer, in pair-id order (``mmrb gold list``)."""
    return [g for _, g in sorted(store.gold().items())]
