"""Raw per-annotator labels in and out of the store (the file format: curate/formats/labels.py).

Export (``mmrb export labels``, the build's ``annotations`` config): every submitted or
skipped label with its pair's item, category and scheme, whether the pair has gold and
whether the label was a control task, in (pair, annotator) order. Annotators are named by
pseudonyms unless real names are asked for: ``annotator-01``, ``annotator-02``, ... in the
order of each one's first label in the whole store (by time, then pair and name), so the
same store gives the same ids on every rerun and in every export of it, whichever labels
are written. An order rather than a hash of the name: a plain hash can be reversed by
hashing candidate names, and a keyed one needs a secret kept somewhere.

Import (``mmrb labels import``): all or nothing. Every row is checked against the store
first (the pair exists; its item and scheme, where given, are the store's; each value is in
the pair's scheme; a label given twice in the file, or already in the store; a control label
without its control task), every problem named by file, line and field; then one
transaction creates the annotators, stores the labels and closes their open assignments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError, InputProblem, MmrbError
from .formats.labels import (
    LabelFileFormat,
    LabelRow,
    RawLabel,
    as_record,
    file_format,
    parquet_table,
    read_labels,
    write_label_rows,
)
from .lookalike import check_name
from .model import PREFERENCES, Label, Preference, word_of
from .schemes import DEFAULT, Scheme, SchemeField, label_preference, label_values, rating_keys, schemes_of
from .wording import plural

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from .store.protocols import RawLabelStore

DEFAULT_SOURCE = "import"


# -- export ------------------------------------------------------------------------------------
def pseudonyms(labels: Iterable[tuple[str, str | None, str]]) -> dict[str, str]:
    """Each annotator's published id, given (annotator, created_at, pair) of every label: in
    the order of their first label (time, pair, name)."""
    first: dict[str, tuple[str, str]] = {}
    for annotator, created_at, pair_id in labels:
        key = (created_at or "", pair_id)
        if annotator not in first or key < first[annotator]:
            first[annotator] = key
    order = sorted(first, key=lambda n: (first[n], n))
    width = max(2, len(str(len(order))))
    return {n: f"annotator-{i:0{width}d}" for i, n in enumerate(order, 1)}


def label_rows(
    store: RawLabelStore, *, pair_ids: Iterable[str] | None = None, real_names: bool = False, conn: Any = None
) -> list[LabelRow]:
    """The store's labels as rows of the format (of ``pair_ids`` only, when given), in
    (pair, annotator) order, annotators pseudonymous unless ``real_names``. Rows, not records:
    the build writes every considered pair's labels, and an object per label was most of its
    cost (bench/labels.py)."""
    rows = store.raw_label_rows(conn=conn)
    names = None if real_names else pseudonyms((r[3], r[18], r[0]) for r in rows)
    keep = None if pair_ids is None else set(pair_ids)
    gold = set(store.gold(conn=conn))
    # the store's tuple has no gold, and its control (16) is where the format's gold goes
    out = [
        (
            *r[:3],
            r[3] if names is None else names[r[3]],
            r[4],
            r[5] or DEFAULT,
            *r[6:16],
            r[0] in gold,
            bool(r[16]),
            *r[17:],
        )
        for r in rows
        if keep is None or r[0] in keep
    ]
    # in code-point order whatever the database's collation (PostgreSQL's may put "b" before "C"), and
    # pseudonyms do not sort as the names did; rows that come sorted cost one pass
    out.sort(key=itemgetter(0, 3))
    return out


def label_table(store: RawLabelStore, *, conn: Any = None) -> Any:
    """``label_rows`` of every label, pseudonymous, as one Arrow table of the Parquet file's
    schema (``curate.formats.labels.parquet_table``): tens of bytes a label where its row is
    hundreds. The build reads it first, while little else is in memory (at 100,000 pairs the
    rows were 300 MB at its peak), and keeps the table alone (``of_pairs``, ``source_counts``)."""
    return parquet_table(label_rows(store, conn=conn))


def of_pairs(table: Any, pair_ids: Iterable[str]) -> Any:
    """The rows of a ``label_table`` of ``pair_ids``, in order: ``label_rows(pair_ids=...)`` as a table."""
    import pyarrow as pa  # deferred: only the build's tables need it
    import pyarrow.compute as pc

    return table.filter(pc.is_in(table["pair_id"], value_set=pa.array(list(pair_ids), type=pa.string())))


def source_counts(table: Any, pair_ids: Iterable[str]) -> dict[str, int]:
    """How many labels of ``pair_ids`` a ``label_table`` holds from each source."""
    import pyarrow.compute as pc  # deferred, as above

    counts = pc.value_counts(of_pairs(table, pair_ids)["source"]).to_pylist()
    return {c["values"]: c["counts"] for c in counts}


def raw_labels(
    store: RawLabelStore, *, pair_ids: Iterable[str] | None = None, real_names: bool = False, conn: Any = None
) -> list[RawLabel]:
    """``label_rows`` as records (ratings as a mapping)."""
    return [as_record(r) for r in label_rows(store, pair_ids=pair_ids, real_names=real_names, conn=conn)]


def export_labels(store: RawLabelStore, path: str | Path, fmt: str | None = None, *, real_names: bool = False) -> int:
    """Write the store's raw labels to ``path`` (the format by ``fmt``, else the suffix)."""
    kind: LabelFileFormat = file_format(path, fmt)
    with store.snapshot() as tx:
        rows = label_rows(store, real_names=real_names, conn=tx)
    # through a file beside it: a failed write (a missing folder, a full disk) leaves no half file
    # and an earlier export of the same name as it was
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        n = write_label_rows(tmp, rows, kind)
        tmp.replace(path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise MmrbError(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return n


# -- import ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImportReport:
    labels: int
    annotators: int
    pairs: int

    def as_dict(self) -> dict[str, int]:
        """The report's figures (`mmrb labels import --json`)."""
        return asdict(self)

    def line(self) -> str:
        return (
            f"imported {plural(self.labels, 'label')} by {plural(self.annotators, 'annotator')} "
            f"on {plural(self.pairs, 'pair')}"
        )


def import_labels(store: RawLabelStore, path: str | Path, *, source: str = DEFAULT_SOURCE) -> ImportReport:
    """Check every row of a label file against the store, then store them all in one
    transaction; any problem raises InputError and nothing is written. ``source``: the
    source of the rows that give none."""
    name = str(path)
    rows = read_labels(path)
    if not rows:
        raise InputError([InputProblem(name, None, None, "no labels in the file")])
    with store.transaction() as tx:
        items = store.pair_items(conn=tx)
        schemes = schemes_of(store, conn=tx)
        labels = checked_labels(
            name, rows, items, schemes, store.label_keys(conn=tx), store.control_keys(conn=tx), source
        )
        for annotator in sorted({lb.annotator for lb in labels}):
            store.ensure_annotator(annotator, conn=tx)
        store.import_labels(labels, conn=tx)
    return ImportReport(len(labels), len({lb.annotator for lb in labels}), len({lb.pair_id for lb in labels}))


def checked_labels(
    file: str,
    rows: Sequence[tuple[int, RawLabel]],
    items: Mapping[str, str],
    schemes: Mapping[str, Scheme],
    existing: set[tuple[str, str]],
    control: set[tuple[str, str]],
    source: str = DEFAULT_SOURCE,
) -> list[Label]:
    """The rows as labels, or one InputError naming every problem."""
    problems: list[InputProblem] = []
    first_line: dict[tuple[str, str], int] = {}
    name_problem: dict[str, str | None] = {}
    out: list[Label] = []
    for line, r in rows:

        def bad(field: str | None, message: str, line: int = line) -> None:
            problems.append(InputProblem(file, line, field, message))

        before = len(problems)
        key = (r.pair_id, r.annotator)
        if r.annotator not in name_problem:  # once per name: a file holds few names, many labels
            name_problem[r.annotator] = check_name(r.annotator)[1]
        why = name_problem[r.annotator]
        if why:
            bad("annotator", f"{r.annotator!r} {why}")
        if key in first_line:
            bad(
                "annotator",
                f"a label of pair {r.pair_id!r} by {r.annotator!r} given twice (first on line {first_line[key]})",
            )
            continue
        first_line[key] = line
        if r.pair_id not in items:
            bad("pair_id", f"no pair {r.pair_id!r} in the store")
            continue
        if key in existing:
            bad("annotator", f"the store already has a label of pair {r.pair_id!r} by {r.annotator!r}")
        if r.item_id is not None and r.item_id != items[r.pair_id]:
            bad("item_id", f"pair {r.pair_id!r} is of item {items[r.pair_id]!r} in the store")
        scheme = schemes[r.pair_id]
        if r.scheme is not None and r.scheme != scheme.name:
            bad("scheme", f"pair {r.pair_id!r} is on scheme {scheme.name!r} in the store")
        if r.control and key not in control:
            bad("control", f"the store has no control task of pair {r.pair_id!r} for {r.annotator!r}")
        elif r.control is False and key in control:
            bad("control", f"the store's assignment of pair {r.pair_id!r} to {r.annotator!r} is a control task")
        preference = _scheme_problems(scheme, r, bad)
        if len(problems) == before:
            out.append(_label(r, preference, source))
    if problems:  # InputError lists the first 20 and says how many more
        raise InputError(problems)
    return out


def _scheme_problems(scheme: Scheme, r: RawLabel, bad: Callable[[str | None, str], None]) -> Preference | None:
    """Report each value the pair's scheme does not have; the label's preference (given, or
    as the scheme's rule derives it)."""
    on = f"pair {r.pair_id!r} is on scheme {scheme.name!r}"
    mmrb = scheme.name == DEFAULT
    if not mmrb:
        for col in ("correctness_first", "correctness_second"):
            if getattr(r, col) is not None:
                bad(col, f"{on}, which has no field {col!r}")
    allowed: dict[str, SchemeField] = {k: f for f in scheme.fields for k in rating_keys(scheme, f)}
    for key in sorted(r.ratings):
        v = r.ratings[key]
        if key == "proposal" and scheme.shows_proposal:
            if v is not None and v not in PREFERENCES:
                bad("ratings", f"proposal: {v!r} is not one of {', '.join(PREFERENCES)}")
        elif key not in allowed:
            bad("ratings", f"{on}, which has no field {key!r}")
        elif (why := _value_problem(allowed[key], v)) is not None:
            bad("ratings", f"{key}: {why}")
    if mmrb:
        return r.preference
    proposal = word_of(PREFERENCES, r.ratings.get("proposal"))
    probe = Label(r.pair_id, r.annotator, rationale=r.rationale or "", ratings=r.ratings)
    try:
        derived = label_preference(scheme, label_values(scheme, probe), proposal)
    except (TypeError, ValueError):  # a value already reported above
        return r.preference
    if r.preference is not None and derived is not None and r.preference != derived:
        bad("preference", f"{r.preference!r}, but the fields of scheme {scheme.name!r} say {derived!r}")
    return r.preference or derived


def _value_problem(f: SchemeField, v: Any) -> str | None:
    if v is None:
        return None
    if f.kind in ("scale", "scale_per_response"):
        if isinstance(v, bool) or not isinstance(v, int) or not f.low <= v <= f.high:
            return f"{v!r} is not a whole number from {f.low} to {f.high}"
        return None
    if f.kind == "text":
        return None if isinstance(v, str) else f"expected text, got {type(v).__name__}"
    if f.kind == "multi":
        if not isinstance(v, list) or any(x not in f.values for x in v):
            return f"{v!r} is not a list of {', '.join(f.values)}"
        return None
    return None if v in f.values else f"{v!r} is not one of {', '.join(f.values)}"


def _label(r: RawLabel, preference: Preference | None, source: str) -> Label:
    return Label(
        pair_id=r.pair_id,
        annotator=r.annotator,
        correctness_first=r.correctness_first,
        correctness_second=r.correctness_second,
        preference=preference,
        rationale=r.rationale or "",
        flag=r.flag,
        flag_note=r.flag_note or "",
        seconds=r.seconds,
        status=r.status,
        ratings=dict(r.ratings),
        source=r.source or source,
        created_at=r.created_at,
        updated_at=r.updated_at or r.created_at,  # never changed since it was made
        scheme_version=r.scheme_version,
        guidelines_version=r.guidelines_version,
    )
