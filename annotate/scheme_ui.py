"""A scheme's label form (every scheme but mmrb, whose form is annotate/label_ui.py's own):
its fields as widgets inside the label form, each option with its key, and the keymap the
listener reads (annotate/keys.py). The rules are annotate/scheme_form.py's."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import streamlit as st

from curate.schemes import Scheme, SchemeField

from . import keys
from .form import FLAG_TITLES
from .form_state import FormKeys, field_key, note_key
from .pair_ui import responses_block
from .queue import PairView
from .render import plain
from .scheme_form import choices, note_field, option_title, proposal_words

FLAG_OPTS = ("",) + tuple(FLAG_TITLES)


def extra_rows(scheme: Scheme) -> int:
    """How many more rows of controls than today's form (one row per response, one of the
    preference and the flag, the rationale): the page's style shortens the pair by as many
    (annotate/page_style.py), up to four."""
    answers = [f for f in scheme.fields if f.kind != "text"]
    rows = len(answers) + (0 if answers and answers[-1].kind == "choice" else 1)  # the flag's row
    rows += max(0, sum(f.kind == "text" for f in scheme.fields) - 1) + scheme.shows_proposal
    return min(4, max(0, rows - 2))


def keymap_html(scheme: Scheme) -> str:
    """The form's keys as an element the listener reads (hidden; no data in it but the scheme's)."""
    data = html.escape(json.dumps(keys.scheme_keymap(scheme)), quote=True)
    return f'<div class="{keys.KEYMAP_CLASS}" data-keys="{data}" data-rows="{extra_rows(scheme)}" hidden></div>'


def _titled(f: SchemeField, key_of: dict[Any, str]) -> Callable[[Any], str]:
    return lambda v: f"{option_title(f, v)}  ({key_of[v]})" if v in key_of else option_title(f, v)


def _radio(where: Any, f: SchemeField, label: str, key: str, keys_: tuple[str, ...]) -> None:
    options = choices(f)
    key_of = {v: k.upper() for v, k in zip(options, keys_, strict=False)}
    where.radio(label, options, index=None, horizontal=True, key=key, format_func=_titled(f, key_of))


def flag_radio(where: Any, k: FormKeys) -> None:
    """The flag, on every form (mmrb's and each scheme's): no flag, or one of its reasons."""
    where.radio(
        "Flag  (F)",
        FLAG_OPTS,
        index=0,
        horizontal=True,
        key=k.flag,
        format_func=lambda v: "no flag" if not v else FLAG_TITLES[v],
    )


def submit_button(
    where: Any, view: PairView, mode: str, k: FormKeys, on_click: Callable[[PairView, str], None]
) -> None:
    """The form's submit, or an edit's "Save changes" (Enter)."""
    where.form_submit_button(
        "Save changes  (Enter)" if mode == "edit" else "Submit  (Enter)",
        type="primary",
        key=k.submit,
        on_click=on_click,
        args=(view, mode),
        width="stretch",
    )


def scheme_fields(view: PairView, mode: str, k: FormKeys, submit: Callable[[PairView, str], None]) -> None:
    """The body of the label form for ``view.scheme`` (called inside the st.form): the
    responses, the proposal of a verify scheme, each field, the flag, the text boxes, submit."""
    scheme = view.scheme
    st.html(responses_block(view) + keymap_html(scheme))
    if scheme.shows_proposal:
        st.markdown(f"**{plain(proposal_words(view.proposal, view.left_side))}**")
    answers = [f for f in scheme.fields if f.kind != "text"]
    texts = [f for f in scheme.fields if f.kind == "text"]
    # the last choice shares its row with the flag, as today's preference does; a scale is too wide
    last = answers[-1] if answers and answers[-1].kind == "choice" else None
    for f in answers:
        if f.per_response:
            # each response's answer directly under it: the columns match the boxes above
            n = len(f.options)
            for col, side, ks in zip(st.columns(2), ("left", "right"), (f.keys[:n], f.keys[n:]), strict=True):
                _radio(col, f, f.title, field_key(mode, scheme, f.name, side), ks)
        elif f.kind == "multi":
            cols = st.columns(len(f.values))
            for i, (col, v) in enumerate(zip(cols, f.values, strict=True)):
                col.checkbox(f"{f.title}: {v}" if i == 0 else str(v), key=field_key(mode, scheme, f.name, f"o{i}"))
        elif f is not last:
            _radio(st, f, f.title, field_key(mode, scheme, f.name, "all"), f.keys)
    if last is not None:
        here, flag = st.columns([2, 3])
        _radio(here, last, last.title, field_key(mode, scheme, last.name, "all"), last.keys)
    else:
        flag = st.container()
    flag_radio(flag, k)
    for f in texts[1:]:
        st.text_area(f.title, key=field_key(mode, scheme, f.name, "all"), height=68)
    why, go = st.columns([6, 1] if mode == "new" else [4, 2], vertical_alignment="bottom")  # "Save changes" whole
    nf = note_field(scheme)
    if texts:
        first = texts[0]
        flagged = " · a flag's note" if nf is first else ""
        when = "optional" if not first.required and first.required_when is None else "required"
        if first.required_when is not None:
            when = "required when " + "; ".join(f"{n} is {' or '.join(v)}" for n, v in first.required_when.conditions)
        why.text_area(
            f"{first.title}  (E to write, Esc to leave) · {when}{flagged}",
            key=field_key(mode, scheme, first.name, "all"),
            height=68,
        )
    else:
        why.text_area("Note for a flag  (E to write, Esc to leave)", key=note_key(mode), height=68)
    submit_button(go, view, mode, k, submit)
