"""Annotation schemes: the label form of a pair, declared (fields, their kinds, when each is
required, their keys, and how the pair's preference follows from them), not hard-coded.

A scheme is a small TOML file (docs/schemes.md) or one of the built-ins in ``BUILT_IN``:
``mmrb`` (Multimodal RewardBench's form, the default), ``mmrb2-pairwise`` (MMRB2's six-point
scale), ``mmrb2-reasoning`` (a letter grade per response), ``aspects`` (MM-RLHF-style scores
per aspect, a preference and a rationale) and ``verify`` (VL-RewardBench-style: the judges'
proposed preference is shown and checked). Values that name sides are stored in first/second
terms; the screen's left/right is mapped by curate/sides.py.

Everything here is pure: reading a file, checking it, assigning keys, deriving a preference.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, get_args

from .configfile import read_table
from .errors import InputError, InputProblem, MmrbError
from .model import MMRB2_GRADES, PREFERENCES, Label, Level, Pair, Preference, Side
from .sides import preference_from_screen, preference_to_screen, scale_from_screen, stored_pair

if TYPE_CHECKING:
    from .store.protocols import SchemeReader

FieldKind = Literal["choice", "choice_per_response", "scale", "scale_per_response", "grades", "multi", "text"]
FIELD_KINDS: tuple[FieldKind, ...] = get_args(FieldKind)
PER_RESPONSE: frozenset[FieldKind] = frozenset({"choice_per_response", "scale_per_response", "grades"})
# keys the pages keep for themselves: submit, skip, undo, zoom, flip, the flag and the text box,
# and Streamlit's own rerun and clear-cache
RESERVED_KEYS = frozenset({"Enter", "s", "u", "z", "v", "f", "e", "r", "c"})
KEY_POOL = tuple("1234567890") + tuple("adtqwyiopghjklxbnm")
SIDE_KEYS = {"first": "a", "tie": "t", "second": "d"}  # on screen: left better, tie, right better
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


@dataclass(frozen=True)
class RequiredWhen:
    """A field required only when another field has one of its values here (a per-response
    field: either response's); several fields: any of them."""

    conditions: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class SchemeField:
    """One field of a form. ``values``: the choices (choice, multi, grades: best first);
    ``points``: a scale's label per point, from ``low`` up. ``sides``: the values name the
    pair's responses (a choice of first/second/tie, or a pairwise scale whose high end is the
    first response better): stored in first/second terms, mirrored when shown flipped."""

    name: str
    kind: FieldKind
    title: str
    values: tuple[str, ...] = ()
    points: tuple[str, ...] = ()
    low: int = 1
    sides: bool = False
    required: bool = True
    required_when: RequiredWhen | None = None
    keys: tuple[str, ...] = ()  # one a value or point (per response: the left's, then the right's)

    @property
    def high(self) -> int:
        return self.low + len(self.points) - 1

    @property
    def per_response(self) -> bool:
        return self.kind in PER_RESPONSE

    @property
    def level(self) -> Level:
        """Its level of measurement, for agreement: a scale is ordinal, a choice nominal."""
        return "ordinal" if self.kind in ("scale", "scale_per_response", "grades") else "nominal"

    @property
    def options(self) -> tuple[str, ...]:
        """What one answer can be, as stored words (a scale's points as their numbers)."""
        if self.kind in ("scale", "scale_per_response"):
            return tuple(str(p) for p in range(self.low, self.high + 1))
        return self.values


PreferenceRule = Literal["field", "scale", "grades", "verify", "none"]


@dataclass(frozen=True)
class Derivation:
    """How a pair's preference follows from one label: ``field`` (a side-naming choice),
    ``scale`` (above ``midpoint`` the first, below the second, on it a tie; over several
    labels their mean, as MMRB2: chosen is A exactly when the mean is above 3.5), ``grades``
    (the better grade; the same grade a tie), ``verify`` (the proposal, unless the verdict
    is disagree: then the correction), ``none``."""

    rule: PreferenceRule
    field: str = ""
    midpoint: float = 0.0
    correction: str = ""  # verify: the field holding the corrected preference


@dataclass(frozen=True)
class Scheme:
    name: str
    title: str
    fields: tuple[SchemeField, ...]
    preference: Derivation
    version: int = 1
    shows_proposal: bool = False  # the judges' proposed preference is shown (verify)

    def field(self, name: str) -> SchemeField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def keys(self) -> dict[str, tuple[str, int]]:
        """key -> (field name, option index; per response, the right's come after the left's)."""
        return {k: (f.name, i) for f in self.fields for i, k in enumerate(f.keys)}


# -- deriving a preference ---------------------------------------------------------------------
def label_preference(
    scheme: Scheme, values: Mapping[str, Any], proposal: Preference | None = None
) -> Preference | None:
    """The preference one label's values (stored terms) say, or None when they say none."""
    d = scheme.preference
    if d.rule == "field":
        v = values.get(d.field)
        return v if v in PREFERENCES else None
    if d.rule == "scale":
        v = values.get(d.field)
        return None if v is None else _against_midpoint(float(v), d.midpoint)
    if d.rule == "grades":
        f = scheme.field(d.field)
        got = values.get(d.field)
        if not isinstance(got, Sequence) or len(got) != 2 or any(g not in f.values for g in got):
            return None
        a, b = (f.values.index(g) for g in got)  # best first: a smaller index is better
        return "tie" if a == b else "first" if a < b else "second"
    if d.rule == "verify":
        if values.get("verdict") == "disagree":
            v = values.get(d.correction)
            return v if v in PREFERENCES else None
        return proposal if values.get("verdict") == "agree" else None
    return None


def pair_preference(scheme: Scheme, labels: Sequence[Mapping[str, Any]]) -> Preference | None:
    """A scale's pair preference: the mean of its labels against the midpoint (MMRB2's rule)."""
    d = scheme.preference
    scores = [float(v[d.field]) for v in labels if v.get(d.field) is not None]
    if d.rule != "scale" or not scores:
        return None
    return _against_midpoint(statistics.fmean(scores), d.midpoint)


def _against_midpoint(x: float, midpoint: float) -> Preference:
    return "first" if x > midpoint else "second" if x < midpoint else "tie"


def stored_scale(f: SchemeField, shown: int, left: Side) -> int:
    """A scale point as picked -> stored: mirrored for a side-naming scale shown flipped."""
    return scale_from_screen(shown, f.low, f.high, left) if f.sides else shown


def describe(scheme: Scheme) -> dict[str, Any]:
    """A scheme in words: what ``mmrb scheme`` prints and the card will state."""
    d = scheme.preference
    rule = {
        "field": f"the {d.field} field",
        "scale": f"{d.field} above {d.midpoint:g}: the first response; below: the second; of several labels, the mean",
        "grades": f"the better {d.field} (the same: a tie)",
        "verify": f"the judges' proposal when agreed, else {d.correction}",
        "none": "none",
    }[d.rule]
    fields = []
    for f in scheme.fields:
        if f.required_when is not None:
            when = "; ".join(f"{n} is {' or '.join(v)}" for n, v in f.required_when.conditions)
            required = f"required when {when}"
        else:
            required = "required" if f.required else "optional"
        row: dict[str, Any] = {"name": f.name, "kind": f.kind, "title": f.title, "required": required}
        if f.points:
            row["points"] = [f"{f.low + i} {p}" for i, p in enumerate(f.points)]
        if f.values:
            row["values"] = list(f.values)
        row |= {"sides": f.sides, "level": f.level, "keys": list(f.keys)}
        fields.append(row)
    return {"name": scheme.name, "title": scheme.title, "version": scheme.version, "fields": fields, "preference": rule}


# -- a label's values: screen <-> stored <-> Label ----------------------------------------------
# Values in stored terms: a field's answer by its name; a per-response field's as a (first,
# second) pair; a side-naming choice as first / second / tie; a pairwise scale with its high
# end the first response better. On screen: a per-response field's as (left, right), a
# side-naming choice as left / right / tie, a pairwise scale with its high end the left better.
def stored_values(scheme: Scheme, shown: Mapping[str, Any], left: Side) -> dict[str, Any]:
    """The answers as the annotator gave them on screen -> stored terms (curate/sides.py)."""
    return _mapped(scheme, shown, left, preference_from_screen)


def shown_values(scheme: Scheme, stored: Mapping[str, Any], left: Side) -> dict[str, Any]:
    """Stored answers as the annotator saw them (to reopen a label): the inverse."""
    return _mapped(scheme, stored, left, preference_to_screen)


def _mapped(scheme: Scheme, values: Mapping[str, Any], left: Side, preference: Callable[[Any, Side], Any]) -> dict:
    out: dict[str, Any] = {}
    for f in scheme.fields:
        if f.name not in values:
            continue
        v = values[f.name]
        if v is not None and f.per_response:
            v = stored_pair(v[0], v[1], left)  # the same swap both ways
        elif v is not None and f.sides and f.kind == "choice":
            v = preference(v, left)
        elif v is not None and f.sides and f.kind == "scale":
            v = stored_scale(f, int(v), left)  # mirroring is its own inverse
        out[f.name] = v
    return out


def to_label(
    scheme: Scheme,
    pair_id: str,
    annotator: str,
    values: Mapping[str, Any],
    proposal: Preference | None = None,
    **rest: Any,
) -> Label:
    """A label of stored values: mmrb's fields in the label's own columns (correctness,
    preference, rationale); every other field in ``ratings``, a per-response one as NAME_first
    and NAME_second (as MMRB2's import keeps ``grade_first``), a scale as its number; the
    label's preference is the scheme's rule (curate/agreement reads ``score`` and the grades)."""
    ratings: dict[str, Any] = {}
    columns: dict[str, Any] = {}
    for f in scheme.fields:
        v = values.get(f.name)
        if v is None or v == "" or v == [] or v == ():
            continue
        if scheme.name == "mmrb" and f.name == "correctness":
            columns["correctness_first"], columns["correctness_second"] = v
        elif f.name == "rationale" and f.kind == "text":
            columns["rationale"] = v
        elif scheme.name == "mmrb" and f.name == "preference":
            continue  # the rule below gives it
        elif f.per_response:
            ratings[f"{f.name}_first"], ratings[f"{f.name}_second"] = _typed(f, v[0]), _typed(f, v[1])
        else:
            ratings[f.name] = list(v) if f.kind == "multi" else _typed(f, v)
    if scheme.shows_proposal and proposal is not None:
        ratings["proposal"] = proposal  # what the annotator was shown: the card says so
    pref = label_preference(scheme, values, proposal)
    return Label(pair_id, annotator, preference=pref, ratings=ratings, **columns, **rest)


def _typed(f: SchemeField, v: Any) -> Any:
    return int(v) if f.kind in ("scale", "scale_per_response") and v is not None else v


def label_values(scheme: Scheme, label: Label) -> dict[str, Any]:
    """A label's stored values by field (``to_label`` read back)."""
    r = label.ratings or {}
    out: dict[str, Any] = {}
    for f in scheme.fields:
        if scheme.name == "mmrb" and f.name == "correctness":
            if label.correctness_first is not None or label.correctness_second is not None:
                out[f.name] = (label.correctness_first, label.correctness_second)
        elif f.name == "rationale" and f.kind == "text":
            if label.rationale:
                out[f.name] = label.rationale
        elif scheme.name == "mmrb" and f.name == "preference":
            if label.preference is not None:
                out[f.name] = label.preference
        elif f.per_response:
            if f"{f.name}_first" in r or f"{f.name}_second" in r:
                out[f.name] = (r.get(f"{f.name}_first"), r.get(f"{f.name}_second"))
        elif f.name in r:
            v = r[f.name]
            out[f.name] = list(v) if f.kind == "multi" else v
    return out


# -- required fields ---------------------------------------------------------------------------
def missing(scheme: Scheme, values: Mapping[str, Any]) -> list[str]:
    """The fields a label still needs, in form order (empty: it can be saved)."""
    out = []
    for f in scheme.fields:
        v = values.get(f.name)
        empty = v is None or v == "" or v == () or v == [] or (f.per_response and None in v)
        if empty and _required(scheme, f, values):
            out.append(f.name)
    return out


def _required(scheme: Scheme, f: SchemeField, values: Mapping[str, Any]) -> bool:
    if f.required_when is None:
        return f.required
    for other, wanted in f.required_when.conditions:
        got = values.get(other)
        if any(v in wanted for v in (got if isinstance(got, list | tuple) else [got])):
            return True
    return False


# -- a scheme as stored, and changing one -------------------------------------------------------
def to_table(scheme: Scheme) -> dict[str, Any]:
    """The scheme as its TOML table, keys included: ``from_table`` reads it back equal (the
    store keeps it, so the app renders a scheme file it never read)."""
    fields = []
    for f in scheme.fields:
        row: dict[str, Any] = {"name": f.name, "kind": f.kind, "title": f.title}
        if f.values:
            row["values"] = list(f.values)
        if f.points:
            row |= {"points": list(f.points), "low": f.low}
        row |= {"sides": f.sides, "required": f.required, "keys": list(f.keys)}
        if f.required_when is not None:
            row["required_when"] = {n: list(v) for n, v in f.required_when.conditions}
        fields.append(row)
    d = scheme.preference
    rule: dict[str, Any] = {"rule": d.rule}
    if d.rule in ("field", "scale", "grades"):
        rule["field"] = d.field
    if d.rule == "scale":
        rule["midpoint"] = d.midpoint
    if d.rule == "verify":
        rule["correction"] = d.correction
    return {"name": scheme.name, "title": scheme.title, "version": scheme.version, "field": fields, "preference": rule}


def change_problem(old: Scheme, new: Scheme) -> str | None:
    """Why labels made under ``old`` cannot be read under ``new``, or None when they can: the
    same fields (keys and titles aside) and rule, and any added field optional."""
    if old.name != new.name:
        return f"another scheme ({old.name!r} -> {new.name!r})"
    if old.preference != new.preference:
        return "the preference rule changed"
    by_name = {f.name: f for f in new.fields}

    def meaning(f: SchemeField) -> SchemeField:
        return SchemeField(**{**f.__dict__, "keys": (), "title": ""})

    for f in old.fields:
        if f.name not in by_name:
            return f"field {f.name!r} is gone"
        if meaning(f) != meaning(by_name[f.name]):
            return f"field {f.name!r} changed"
    for f in new.fields:
        if f not in old.fields and f.name not in {g.name for g in old.fields}:
            if f.required or f.required_when is not None:
                return f"the added field {f.name!r} is required"
    return None


def same(a: Scheme, b: Scheme) -> bool:
    """The same form (its version number aside)."""
    return to_table(a) | {"version": 0} == to_table(b) | {"version": 0}


# -- the scheme of each stored pair -------------------------------------------------------------
def resolve(name: str | None, version: int | None, definitions: Mapping[tuple[str, int], Mapping[str, Any]]) -> Scheme:
    """A pair's scheme from its stored name and version: NULL is ``mmrb`` (every pair labelled
    before schemes were declared); a stored definition wins over a built-in of that name."""
    if name is None:
        return BUILT_IN[DEFAULT]
    v = version or 1
    table = definitions.get((name, v))
    if table is not None:
        return from_table(table, f"stored scheme {name!r} version {v}")
    if name in BUILT_IN and v == BUILT_IN[name].version:
        return BUILT_IN[name]
    raise MmrbError(f"the store names scheme {name!r} version {v} for a pair but does not hold it")


def schemes_of(store: SchemeReader, ids: Iterable[str] | None = None, conn: Any = None) -> dict[str, Scheme]:
    """Each pair's scheme (of ``ids``, else of every pair), each version read once."""
    definitions = store.scheme_definitions(conn=conn)
    cache: dict[tuple[str | None, int | None], Scheme] = {}
    out = {}
    for pid, key in store.pair_schemes(ids, conn=conn).items():
        if key not in cache:
            cache[key] = resolve(*key, definitions)
        out[pid] = cache[key]
    return out


def schemes_in_use(store: SchemeReader, conn: Any = None) -> list[Scheme]:
    """The schemes the store's pairs are on (each version once; ``mmrb`` for pairs before schemes)."""
    definitions = store.scheme_definitions(conn=conn)
    keys = sorted(store.scheme_keys(conn=conn), key=lambda k: (k[0] or "", k[1] or 0))
    return [resolve(*k, definitions) for k in keys]


def rating_keys(scheme: Scheme, f: SchemeField) -> tuple[str, ...]:
    """The keys of ``Label.ratings`` that hold field ``f`` (as ``to_label`` writes it): none
    for the fields in the label's own columns (mmrb's, a rationale), NAME_first / NAME_second
    for a per-response field, else its name."""
    if scheme.name == "mmrb" and f.name in ("correctness", "preference"):
        return ()
    if f.name == "rationale" and f.kind == "text":
        return ()
    return (f"{f.name}_first", f"{f.name}_second") if f.per_response else (f.name,)


def proposal_of(pair: Pair) -> Preference | None:
    """The judges' proposed preference of a pair (stored terms), as ``mmrb select`` keeps it in
    ``metadata["proposal"]``: what a ``verify`` scheme shows. None when the judges proposed none."""
    v = pair.metadata.get("proposal")
    return v if v in PREFERENCES else None


def stored_key(scheme: Scheme) -> tuple[str | None, int | None]:
    """How the store names a pair's scheme: the default ``mmrb`` as NULL, as before schemes."""
    return (None, None) if scheme.name == DEFAULT and same(scheme, BUILT_IN[DEFAULT]) else (scheme.name, scheme.version)


# -- reading and checking a scheme -------------------------------------------------------------
def load(name_or_path: str | Path) -> Scheme:
    """A built-in scheme by name, or a scheme file (TOML)."""
    if isinstance(name_or_path, str) and name_or_path in BUILT_IN:
        return BUILT_IN[name_or_path]
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        raise InputError(
            [InputProblem(str(path), None, None, f"no such scheme: use {', '.join(BUILT_IN)} or a TOML file")]
        )
    text_lines = _field_lines(path)
    return from_table(read_table(path, what="scheme"), str(path), text_lines)


def _field_lines(path: Path) -> list[int]:
    """The line of each ``[[field]]`` table, to name it in an error (tomllib keeps no lines)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []  # read_table says why
    return [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"\s*\[\[\s*field\s*\]\]", line)]


def from_table(data: Mapping[str, Any], source: str = "<scheme>", lines: Sequence[int] = ()) -> Scheme:
    """A scheme from its TOML table; every problem found is named (file, line, field)."""
    problems: list[InputProblem] = []

    def bad(message: str, at: int | None = None, name: str | None = None) -> None:
        line = lines[at] if at is not None and at < len(lines) else None
        problems.append(InputProblem(source, line, name, message))

    name = data.get("name")
    if not isinstance(name, str) or not re.match(r"^[a-z0-9][a-z0-9_-]{0,39}$", name):
        bad("the scheme needs a name: lower-case letters, digits, - and _", name="name")
    title = _setting(data, "title", str, "", "a text", bad, None, "title")
    version = _setting(data, "version", int, 1, "a whole number", bad, None, "version")
    raw_fields = data.get("field")
    if not isinstance(raw_fields, list) or not raw_fields:
        bad("a scheme declares its fields as [[field]] tables", name="field")
        raw_fields = []
    fields = []
    for i, raw in enumerate(raw_fields):
        f = _field(raw, i, bad)
        if f is not None:
            fields.append(f)
    names = [f.name for f in fields]
    for n in {n for n in names if names.count(n) > 1}:
        bad(f"field {n!r} is declared twice", names.index(n), n)
    by_name = {f.name: f for f in fields}
    for i, f in enumerate(fields):
        for other, _ in f.required_when.conditions if f.required_when else ():
            if other not in by_name:
                bad(f"required_when names no field of this scheme: {other!r}", i, f.name)
    derivation = _derivation(data.get("preference", {"rule": "none"}), by_name, bad)
    if problems:
        raise InputError(problems)
    fields = _with_keys(fields, bad)
    if problems:
        raise InputError(problems)
    return Scheme(str(name), title or str(name), tuple(fields), derivation, version, derivation.rule == "verify")


def _setting(raw: Mapping[str, Any], key: str, kind: type | UnionType, default: Any, what: str, bad, *at: Any) -> Any:
    """A setting of the file, of ``kind`` (TOML's true and false are not numbers), or its
    default when absent; a wrong one is a problem named ``key is WHAT`` (``at``: where)."""
    if key not in raw:
        return default
    v = raw[key]
    if isinstance(v, bool) != (kind is bool) or not isinstance(v, kind):
        bad(f"{key} is {what}", *at)
        return default
    return v


def _field(raw: Any, i: int, bad) -> SchemeField | None:
    if not isinstance(raw, dict):
        bad("a field is a table", i)
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        bad("a field needs a name: a lower-case letter, then letters, digits or _", i, "name")
        return None
    kind = raw.get("kind")
    if kind not in FIELD_KINDS:
        bad(f"kind {kind!r}: use one of {', '.join(FIELD_KINDS)}", i, name)
        return None
    known = {"name", "kind", "title", "values", "points", "low", "sides", "required", "required_when", "keys"}
    for k in sorted(set(raw) - known):
        bad(f"unknown setting {k!r} (known: {', '.join(sorted(known))})", i, name)
    values = _words(raw.get("values", []), i, name, "values", bad)
    points = _words(raw.get("points", []), i, name, "points", bad)
    scale = kind in ("scale", "scale_per_response")
    if scale and len(points) < 2:
        bad("a scale needs a label for each of at least two points (points = [...])", i, name)
    if not scale and kind != "text" and len(values) < 2:
        bad("a choice needs at least two values (values = [...])", i, name)
    if len(set(values)) != len(values):
        bad("values repeat", i, name)
    low = _setting(raw, "low", int, 1, "a whole number", bad, i, name)
    sides = _setting(raw, "sides", bool, False, "true or false", bad, i, name)
    if sides and kind == "choice" and not set(values) <= set(PREFERENCES):
        bad(f"a choice that names sides takes values from {', '.join(PREFERENCES)}", i, name)
    if sides and kind not in ("choice", "scale"):
        bad("only a choice or a pairwise scale names sides", i, name)
    when = raw.get("required_when")
    rule = None
    if when is not None:
        if not isinstance(when, dict) or not when:
            bad('required_when is a table of fields and their values: { preference = ["tie"] }', i, name)
        else:
            rule = RequiredWhen(
                tuple(
                    (
                        str(other),
                        tuple(_words(vals if isinstance(vals, list) else [vals], i, name, "required_when", bad)),
                    )
                    for other, vals in when.items()
                )
            )
    keys = _words(raw.get("keys", []), i, name, "keys", bad)
    return SchemeField(
        name,
        kind,
        _setting(raw, "title", str, "", "a text", bad, i, name) or name.replace("_", " "),
        tuple(values),
        tuple(points),
        low,
        sides,
        _setting(raw, "required", bool, True, "true or false", bad, i, name),
        rule,
        tuple(keys),
    )


def _words(raw: Any, i: int, name: str, what: str, bad) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(v, str | int) and not isinstance(v, bool) for v in raw):
        bad(f"{what} is a list of words", i, name)
        return []
    return [str(v) for v in raw]


def _derivation(raw: Any, fields: Mapping[str, SchemeField], bad) -> Derivation:
    if not isinstance(raw, dict) or raw.get("rule") not in get_args(PreferenceRule):
        bad(f"preference: a table with rule = one of {', '.join(get_args(PreferenceRule))}", name="preference")
        return Derivation("none")
    rule = raw["rule"]
    name = str(raw.get("field", ""))
    f = fields.get(name)
    if rule in ("field", "scale", "grades") and f is None:
        bad(f"preference rule {rule!r} names no field of this scheme: {name!r}", name="preference")
        return Derivation("none")
    if rule == "field" and f is not None and not (f.kind == "choice" and f.sides):
        bad(f"preference follows a field only from a choice that names sides: {name!r}", name="preference")
    if rule == "scale" and f is not None and f.kind != "scale":
        bad(f"preference rule 'scale' needs a scale field: {name!r}", name="preference")
    if rule == "grades" and f is not None and f.kind != "grades":
        bad(f"preference rule 'grades' needs a grades field: {name!r}", name="preference")
    if rule == "verify":
        correction = str(raw.get("correction", ""))
        if "verdict" not in fields or correction not in fields:
            bad("preference rule 'verify' needs a field 'verdict' and a correction field", name="preference")
        return Derivation("verify", correction=correction)
    middle = (f.low + f.high) / 2 if rule == "scale" and f is not None else 0.0
    midpoint = _setting(raw, "midpoint", int | float, middle, "a number", bad, None, "preference")
    return Derivation(rule, name, float(midpoint))


def _with_keys(fields: list[SchemeField], bad) -> list[SchemeField]:
    """Each field's keys: as declared, or the next free ones of ``KEY_POOL``; a clash with
    another field or with the pages' own keys is an error."""
    taken: dict[str, str] = {}
    out = []
    for i, f in enumerate(fields):
        n = 0 if f.kind in ("text", "multi") else len(f.options) * (2 if f.per_response else 1)
        keys = list(f.keys)
        if keys and len(keys) != n:
            bad(f"{len(keys)} keys for {n} answers", i, f.name)
            continue
        if not keys:
            free = [k for k in KEY_POOL if k not in taken and k not in RESERVED_KEYS]
            usual = [SIDE_KEYS[v] for v in f.values] if f.sides and f.kind == "choice" else []
            if usual and not set(usual) & set(taken):
                keys = usual  # left better, tie, right better: the keys of every scheme
            elif len(free) < n:
                bad(f"no keys left for its {n} answers: give keys = [...]", i, f.name)
                continue
            else:
                plain = [k for k in free if k not in SIDE_KEYS.values()]
                keys = (plain if len(plain) >= n else free)[:n]
        for k in keys:
            if k in RESERVED_KEYS:
                bad(f"key {k!r} is the page's own", i, f.name)
            elif k in taken:
                bad(f"key {k!r} is field {taken[k]!r}'s too", i, f.name)
            taken[k] = f.name
        out.append(SchemeField(**{**f.__dict__, "keys": tuple(keys)}))
    return out


# -- the built-in schemes ----------------------------------------------------------------------
def _built(data: dict[str, Any]) -> Scheme:
    return from_table(data, f"built-in scheme {data['name']!r}")


_CORRECTNESS = {"kind": "choice_per_response", "values": ["correct", "incorrect", "unsure"]}
_SIX = [
    "right much better",
    "right better",
    "right slightly better",
    "left slightly better",
    "left better",
    "left much better",
]
_TABLES: list[dict[str, Any]] = [
    {
        "name": "mmrb",
        "title": "Multimodal RewardBench: correctness of each response, preference, rationale",
        "field": [
            {
                "name": "correctness",
                "title": "Correct?",
                **_CORRECTNESS,
                "keys": ["1", "2", "3", "8", "9", "0"],
            },
            {
                "name": "preference",
                "title": "Which response is better?",
                "kind": "choice",
                "values": ["first", "tie", "second"],
                "sides": True,
                "keys": ["a", "t", "d"],
            },
            {
                "name": "rationale",
                "title": "Rationale",
                "kind": "text",
                # and a flag needs a note: flagging is the page's own, in every scheme
                "required_when": {"preference": ["tie"], "correctness": ["unsure"]},
            },
        ],
        "preference": {"rule": "field", "field": "preference"},
    },
    {
        "name": "mmrb2-pairwise",
        "title": "MMRB2: which response is better, on six points",
        "field": [
            {"name": "score", "title": "Which response is better?", "kind": "scale", "points": _SIX, "sides": True},
            {"name": "rationale", "title": "Rationale", "kind": "text", "required": False},
        ],
        "preference": {"rule": "scale", "field": "score", "midpoint": 3.5},
    },
    {
        "name": "mmrb2-reasoning",
        "title": "MMRB2 reasoning: a letter grade for each response",
        "field": [
            # MMRB2's published grades (best first): a grade never used would count in AC1
            {"name": "grade", "title": "Grade", "kind": "grades", "values": list(MMRB2_GRADES)},
            {"name": "rationale", "title": "Rationale", "kind": "text", "required": False},
        ],
        "preference": {"rule": "grades", "field": "grade"},
    },
    {
        "name": "aspects",
        "title": "MM-RLHF: helpfulness, faithfulness and ethics of each response, preference, rationale",
        "field": [
            *(
                {
                    "name": a,
                    "title": a.capitalize(),
                    "kind": "scale_per_response",
                    "points": ["poor", "fair", "good", "very good"],
                }
                for a in ("helpfulness", "faithfulness", "ethics")
            ),
            {
                "name": "preference",
                "title": "Which response is better?",
                "kind": "choice",
                "values": ["first", "tie", "second"],
                "sides": True,
            },
            {"name": "rationale", "title": "Rationale", "kind": "text"},
        ],
        "preference": {"rule": "field", "field": "preference"},
    },
    {
        "name": "verify",
        "title": "VL-RewardBench: check the judges' proposed preference",
        "field": [
            {
                "name": "verdict",
                "title": "Do you agree with the judges' proposal?",
                "kind": "choice",
                "values": ["agree", "disagree", "unsure"],
            },
            {
                "name": "corrected",
                "title": "Which response is better, then?",
                "kind": "choice",
                "values": ["first", "tie", "second"],
                "sides": True,
                "required_when": {"verdict": ["disagree"]},
            },
            {
                "name": "rationale",
                "title": "Rationale",
                "kind": "text",
                "required_when": {"verdict": ["disagree", "unsure"]},
            },
        ],
        "preference": {"rule": "verify", "correction": "corrected"},
    },
]
BUILT_IN: dict[str, Scheme] = {s.name: s for s in map(_built, _TABLES)}
DEFAULT = "mmrb"
