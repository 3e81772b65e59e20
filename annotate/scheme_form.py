"""The rules of a scheme's label form (curate/schemes.py), without Streamlit: the answers as
the annotator gave them (screen terms) -> what is missing or invalid, in form order -> a
Label; and a saved label back into screen terms, to prefill an edit or an undone label.

Screen terms are curate.schemes' (``shown_values``): a per-response answer is a (left, right)
pair, a side-naming choice is left / tie / right, a side-naming scale's high end is the LEFT
response better (mirrored into stored terms by curate/sides.py when the first response is
on the right). The mmrb scheme keeps its own form (annotate/form.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from curate import schemes
from curate.lookalike import text_problem
from curate.model import FLAG_REASONS, FlagReason, Label, Preference, Side
from curate.schemes import Scheme, SchemeField, label_values, shown_values, stored_values
from curate.sides import preference_to_screen

SIDE_WORDS: dict[str, str] = {"left": "left better", "tie": "tie", "right": "right better"}


@dataclass(frozen=True)
class SchemeInput:
    """The answers in screen terms, by field name. ``note``: the flag's note when the scheme
    has no text field to hold it (else that field's text is the note, as today's rationale)."""

    values: Mapping[str, Any] = field(default_factory=dict)
    flag: FlagReason | None = None
    note: str = ""


def is_default_form(scheme: Scheme) -> bool:
    """The scheme is exactly mmrb, whose form is today's (annotate/form.py, its keys included)."""
    return scheme is schemes.BUILT_IN[schemes.DEFAULT] or (
        scheme.name == schemes.DEFAULT and schemes.same(scheme, schemes.BUILT_IN[schemes.DEFAULT])
    )


def choices(f: SchemeField) -> tuple[Any, ...]:
    """What one answer of ``f`` can be on screen, in the form's order: a scale's points as
    ints from ``low`` up, a side-naming choice's values as left / tie / right."""
    if f.kind in ("scale", "scale_per_response"):
        return tuple(range(f.low, f.high + 1))
    if f.sides and f.kind == "choice":  # as seen with the first response on the left
        return tuple(shown_values(_alone(f), {f.name: v}, "first")[f.name] for v in f.values)
    return f.values


def _alone(f: SchemeField) -> Scheme:
    return Scheme("field", f.title, (f,), schemes.Derivation("none"))


def option_title(f: SchemeField, v: Any) -> str:
    """An option as the form shows it (without its key)."""
    if f.kind in ("scale", "scale_per_response"):
        return f"{v} {f.points[int(v) - f.low]}"
    if f.sides and f.kind == "choice":
        return SIDE_WORDS.get(str(v), str(v))
    return str(v)


def note_field(scheme: Scheme) -> SchemeField | None:
    """The text field a flag's note is written in: ``rationale``, else the first text field;
    None: the form adds a note box of its own."""
    texts = [f for f in scheme.fields if f.kind == "text"]
    return next((f for f in texts if f.name == "rationale"), texts[0] if texts else None)


def proposal_words(proposal: Preference | None, left: Side) -> str:
    """The judges' proposal as the annotator sees the pair."""
    shown = preference_to_screen(proposal, left)
    if shown is None:
        return "The judges proposed no preference for this pair."
    return "The judges propose: a tie." if shown == "tie" else f"The judges propose: {shown} is better."


def _empty(v: Any) -> bool:
    return v is None or v == "" or v == () or v == []


def _unknown(f: SchemeField, v: Any) -> list[str]:
    """The values of one answer the field does not offer (session state can hold anything)."""
    if f.kind == "text":
        return [] if isinstance(v, str) else [repr(v)]
    if f.kind == "multi":
        items = list(v) if isinstance(v, list | tuple) else [v]
        return [repr(x) for x in items if x not in f.values]
    parts = v if f.per_response else (v,)
    if f.per_response and not (isinstance(v, list | tuple) and len(v) == 2):
        return [repr(v)]
    offered = choices(f)
    return [repr(x) for x in parts if x is not None and (isinstance(x, bool) or x not in offered)]


def _clean(scheme: Scheme, values: Mapping[str, Any]) -> dict[str, Any]:
    """The answers to store: texts stripped, empty answers left out, lists as tuples."""
    out: dict[str, Any] = {}
    for f in scheme.fields:
        v: Any = values.get(f.name)
        if isinstance(v, str):
            v = v.strip()
        if f.per_response and isinstance(v, list):
            v = tuple(v)
        if f.per_response and v is not None and all(x is None for x in v):
            v = None
        if not _empty(v):
            out[f.name] = list(v) if f.kind == "multi" else v
    return out


def problems(scheme: Scheme, answers: SchemeInput, left: Side) -> list[str]:
    """Everything missing or invalid, field by field in the order the form shows them, then
    the flag's; empty when saveable. A flag stands in for the answers (as today) but needs a
    note."""
    by_field: dict[str, list[str]] = {f.name: [] for f in scheme.fields}
    for f in scheme.fields:
        v = answers.values.get(f.name)
        if _empty(v):
            continue
        unknown = _unknown(f, v)
        if unknown:
            by_field[f.name].append(f"unknown answer {', '.join(unknown)} to {f.title!r}")
        elif f.kind == "text" and text_problem(str(v)):  # alike on both backends: PostgreSQL refuses a NUL
            by_field[f.name].append(f"the {f.title.lower()} {text_problem(str(v))}")
    flag: list[str] = []
    if answers.flag is not None and answers.flag not in FLAG_REASONS:
        flag.append(f"unknown flag reason {answers.flag!r}")
    if not any(by_field.values()):  # what is required is known once every answer is
        stored = stored_values(scheme, _clean(scheme, answers.values), left)
        if answers.flag is None:
            for name in schemes.missing(scheme, stored):
                by_field[name].append(_ask(scheme.field(name), answers.values.get(name), stored))
        else:
            nf = note_field(scheme)
            note = answers.values.get(nf.name) if nf is not None else answers.note
            if not isinstance(note, str) or not note.strip():
                flag.append("a flag needs a short note")
            elif nf is None and text_problem(note):
                flag.append(f"the note {text_problem(note)}")
    return [p for f in scheme.fields for p in by_field[f.name]] + flag


def _ask(f: SchemeField, v: Any, stored: Mapping[str, Any]) -> str:
    """What a missing answer asks for, in the form's words."""
    if f.per_response:
        pair = v if isinstance(v, list | tuple) else (None, None)  # checked: two answers or none
        sides = [s for s, x in zip(("left", "right"), pair, strict=True) if x is None]
        return f"{f.title}: answer for the {' and the '.join(sides)} response"
    # the condition met, in the value that met it (a tie, an unsure), as today's "a tie needs a rationale"
    conditions = f.required_when.conditions if f.required_when is not None else ()
    met = [f"{n} is {v}" for n, vals in conditions for v in _seq(stored.get(n)) if v in vals]
    why = f" (required when {'; '.join(dict.fromkeys(met))})" if met else ""
    if f.kind == "text":
        return f"write the {f.title.lower()}{why}"
    return f"answer {f.title!r}{why}"


def _seq(got: Any) -> list[Any]:
    return list(got) if isinstance(got, list | tuple) else [got]


def to_label(
    scheme: Scheme,
    answers: SchemeInput,
    *,
    pair_id: str,
    annotator: str,
    left_side: Side,
    seconds: float | None,
    proposal: Preference | None = None,
    source: str = "app",
) -> Label:
    """The answers as a Label in stored terms, made under the scheme's version (the pair's).
    Call only when ``problems`` is empty."""
    stored = stored_values(scheme, _clean(scheme, answers.values), left_side)
    nf = note_field(scheme)
    note = stored.get(nf.name, "") if nf is not None else answers.note.strip()
    return schemes.to_label(
        scheme,
        pair_id,
        annotator,
        stored,
        proposal,
        flag=answers.flag,
        flag_note=note if answers.flag else "",
        seconds=None if seconds is None else round(max(seconds, 0.0), 3),
        status="submitted",
        source=source,
        scheme_version=scheme.version,
    )


def answers_text(scheme: Scheme, label: Label, left_side: Side) -> str:
    """A label's answers as the annotator gave them (her screen's sides), free text left out:
    My labels' summary of a scheme's label ("Helpfulness: left 4 very good, right 2 fair; ...")."""
    shown = from_label(scheme, label, left_side).values
    out = []
    for f in scheme.fields:
        v = shown.get(f.name)
        if f.kind == "text" or _empty(v):
            continue
        if f.per_response:
            each = zip(("left", "right"), v or (None, None), strict=True)
            words = ", ".join(f"{side} {option_title(f, x)}" for side, x in each if x is not None)
        elif f.kind == "multi":
            words = ", ".join(str(x) for x in v or ())
        else:
            words = option_title(f, v)
        out.append(f"{f.title.rstrip('?:')}: {words}")
    return "; ".join(out)


def from_label(scheme: Scheme, label: Label, left_side: Side) -> SchemeInput:
    """A saved label back into screen terms, to prefill an edit or an undone label."""
    shown = shown_values(scheme, label_values(scheme, label), left_side)
    nf = note_field(scheme)
    return SchemeInput(shown, label.flag, label.flag_note if nf is None else "")
