"""Small Streamlit pieces every page may use: data Markdown shown safely, the lead's
tables, and the label page's keyboard listener."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from curate.wording import EMPTY

from . import keys
from .render import markdown_html
from .tables import Table


def rich(text: str) -> None:
    """Markdown from the data (a prompt, a response, a note, the guidelines), shown safely:
    see render.markdown_html."""
    st.html(f'<div class="mmrb-rich">{markdown_html(text)}</div>')


def key_listener() -> None:
    """Inject the listener once per browser session: it sits on the document and guards
    itself, so re-sending it on every rerun only cost the browser a script element."""
    if st.session_state.get("keys_injected"):
        return
    st.html(keys.script(), unsafe_allow_javascript=True)
    st.session_state["keys_injected"] = True


def show_table(table: Table, *, short: Mapping[str, tuple[str, str]] | None = None, **kw) -> Any:
    """A lead's table: its headers, its number formats, an empty cell shown as EMPTY.
    ``short``: header -> (shorter header, the full one as its help), for a table whose headers
    would make it wider than the page; a header the table does not have is a bug, said at once.
    Returns st.dataframe's answer (its selection, with ``on_select``)."""
    unknown = set(short or {}) - set(table.frame.columns)
    if unknown:
        raise KeyError(f"no such column to shorten: {sorted(unknown)}")
    config: dict[str, Any] = {}
    for h in table.frame.columns:
        label, full = (short or {}).get(h, (None, table.helps.get(h)))
        width = table.widths.get(h)
        if h in table.formats:
            config[h] = st.column_config.NumberColumn(label=label, help=full, format=table.formats[h], width=width)
        elif label or full or width:
            config[h] = st.column_config.Column(label=label, help=full, width=width)
    return st.dataframe(table.frame, hide_index=True, column_config=config, placeholder=EMPTY, **kw)
