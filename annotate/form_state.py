"""The label form's widgets in session state: their keys, a new generation of keys when the
form must start from other values, and the answers read back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from curate.schemes import Scheme, SchemeField

from .form import FormInput
from .keys import NOTE_PREFIX, field_prefix
from .queue import PairView
from .scheme_form import SchemeInput, is_default_form


@dataclass(frozen=True)
class FormKeys:
    """Widget keys of one generation of the form (annotate/keys.py finds widgets by their prefix)."""

    left: str
    right: str
    preference: str
    rationale: str
    flag: str
    form: str
    submit: str

    def correctness(self, side: str) -> str:
        return self.left if side == "left" else self.right


def keys_of(mode: str, generation: int | None) -> FormKeys:
    g = f"{mode}{generation or ''}"
    return FormKeys(
        f"q_left_{g}", f"q_right_{g}", f"q_pref_{g}", f"q_rationale_{g}", f"q_flag_{g}", f"q_form_{g}", f"q_submit_{g}"
    )


def form_keys(mode: str) -> FormKeys:
    return keys_of(mode, st.session_state.get(f"q_gen_{mode}"))


def shown_marker(view: PairView) -> str:
    """What the form shows: the pair, and the revision of a reopened label."""
    return f"{view.pair_id}@{view.label.revision}" if view.label is not None else view.pair_id


def reset_form(mode: str, view: PairView, prefill: FormInput | SchemeInput | None) -> None:
    """Widget keys stay the same from pair to pair, so the browser updates the form in place
    instead of building a new one (that rebuild was ~60 ms of every label).

    The values must still start from the pair's own: empty, or the label being reopened.
    After a submit of the label page the browser has already cleared the form
    (clear_on_submit), so nothing is sent. After a skip, an undo or a refused submit the
    values are set here on a new generation of keys: a cleared form keeps sending its
    cleared values for widgets it still knows, whatever the server sets, so those widgets
    are replaced (a rebuild, but a rare one)."""
    ss = st.session_state
    marker = shown_marker(view)
    before = ss.get(f"q_pair_{mode}")
    if before == marker and prefill is None:
        return
    if mode == "edit" and before == marker:
        return  # the reopened label is in the form already, maybe with the editor's changes
    ss[f"q_pair_{mode}"] = marker
    if prefill is None and ss.pop("q_cleared", None) == before:
        return  # submitted: the browser cleared the form itself
    ss[f"q_gen_{mode}"] = (ss.get(f"q_gen_{mode}") or 0) + 1
    k = form_keys(mode)
    if not is_default_form(view.scheme):
        _fill_scheme(mode, view.scheme, prefill if isinstance(prefill, SchemeInput) else SchemeInput())
        return
    pre = prefill if isinstance(prefill, FormInput) else FormInput()
    ss[k.left], ss[k.right], ss[k.preference] = pre.left, pre.right, pre.preference
    ss[k.rationale], ss[k.flag] = pre.rationale, pre.flag or ""


def forget_shown(mode: str) -> None:
    """The next form of ``mode`` starts on new widgets, whatever it shows."""
    st.session_state.pop(f"q_pair_{mode}", None)


def read_form(mode: str) -> FormInput:
    k = form_keys(mode)
    ss = st.session_state
    return FormInput(
        left=ss.get(k.left),
        right=ss.get(k.right),
        preference=ss.get(k.preference),
        rationale=ss.get(k.rationale) or "",
        flag=ss.get(k.flag) or None,
    )


# -- a scheme's form (annotate/scheme_ui.py) ------------------------------------------------------
def field_key(mode: str, scheme: Scheme, name: str, part: str) -> str:
    """A scheme field's widget key (``part``: all, left, right, or a multi-select's option
    o0, o1...): the listener's prefix, then the scheme and this generation of the form."""
    return f"{field_prefix(name, part)}{scheme.name}{scheme.version}-{form_keys(mode).form}"


def note_key(mode: str) -> str:
    return f"{NOTE_PREFIX}{form_keys(mode).form}"


def _fill_scheme(mode: str, scheme: Scheme, pre: SchemeInput) -> None:
    ss = st.session_state
    for f in scheme.fields:
        v = pre.values.get(f.name)
        if f.per_response:
            left, right = v or (None, None)
            ss[field_key(mode, scheme, f.name, "left")], ss[field_key(mode, scheme, f.name, "right")] = left, right
        elif f.kind == "multi":
            for i, option in enumerate(f.values):
                ss[field_key(mode, scheme, f.name, f"o{i}")] = option in (v or ())
        else:
            ss[field_key(mode, scheme, f.name, "all")] = v if f.kind != "text" else v or ""
    ss[form_keys(mode).flag] = pre.flag or ""
    ss[note_key(mode)] = pre.note


def _answer(mode: str, scheme: Scheme, f: SchemeField) -> Any:
    ss = st.session_state
    if f.per_response:
        pair = (ss.get(field_key(mode, scheme, f.name, "left")), ss.get(field_key(mode, scheme, f.name, "right")))
        return None if pair == (None, None) else pair
    if f.kind == "multi":
        return [v for i, v in enumerate(f.values) if ss.get(field_key(mode, scheme, f.name, f"o{i}"))]
    return ss.get(field_key(mode, scheme, f.name, "all"))


def read_scheme_form(mode: str, scheme: Scheme) -> SchemeInput:
    ss = st.session_state
    values = {f.name: _answer(mode, scheme, f) for f in scheme.fields}
    return SchemeInput(values, ss.get(form_keys(mode).flag) or None, ss.get(note_key(mode)) or "")
