"""The project's labelling guidelines; the lead edits them here (each save a new version)."""

import streamlit as st

from annotate import flash, keys, ui
from annotate.auth import ADMIN
from annotate.guidelines import guidelines_markdown
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import rich
from curate.errors import MmrbError
from curate.wording import utc_time

who = require("guidelines")
s = ui.store()
flash.show()
current = s.guidelines()
if current is not None:
    st.caption(f"Version {current.version}, by {plain(current.author)}, {utc_time(current.created_at)}")
rich(guidelines_markdown(s, ui.config().guidelines))
st.divider()
st.markdown("**Keyboard**")
st.caption(keys.LEGEND)

if who.role == ADMIN:
    st.divider()
    with st.expander("Edit the guidelines (a new version; annotators are told on their label page)"):
        with st.form("guidelines_edit"):
            text = st.text_area(
                "Markdown", value=current.text if current is not None else "", height=320, key="guidelines_text"
            )
            if st.form_submit_button("Save as a new version"):
                try:
                    if not text.strip():
                        raise MmrbError("The guidelines cannot be empty.")
                    g, new = s.set_guidelines(text, who.name)
                    flash.say("success" if new else "info", f"Saved as version {g.version}." if new else "No change.")
                    st.rerun()
                except MmrbError as e:  # a NUL in the text, or another change saved meanwhile
                    st.error(plain(e))
    versions = s.guidelines_versions()
    if len(versions) > 1:
        with st.expander(f"Earlier versions ({len(versions) - 1})"):
            for g in versions[1:]:
                st.markdown(f"**Version {g.version}**, by {plain(g.author)}, {utc_time(g.created_at)}")
                rich(g.text)
