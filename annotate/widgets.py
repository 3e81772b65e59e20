"""Small Streamlit pieces every page may use: data Markdown shown safely, the lead's
tables, and the label page's keyboard listener."""

from __future__ import annotations

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


def show_table(table: Table, **kw) -> None:
    """A lead's table: its headers, its number formats, an empty cell shown as EMPTY."""
    config = {h: st.column_config.NumberColumn(format=f) for h, f in table.formats.items()}
    st.dataframe(table.frame, hide_index=True, column_config=config, placeholder=EMPTY, **kw)
