"""One's own past labels: review and edit (every edit keeps the previous version)."""

import streamlit as st

from annotate import flash, ui
from annotate.label_ui import answers_of, label_form, show_errors
from annotate.page_style import compact_style
from annotate.pair_ui import show_item, zoom_button, zoom_if_asked
from annotate.queue import my_labels, own_items, own_rows, own_view
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import key_listener
from curate.schemes import schemes_of
from curate.wording import EMPTY

who = require("my_labels")
s = ui.store()
st.subheader("My labels")
flash.show()
rows = my_labels(s, who.name)
if not rows:
    st.info("You have not labelled anything yet.")
    st.stop()

ids = [lab.pair_id for lab, _ in rows]
table = own_rows(rows, schemes_of(s, ids), own_items(s, ids))
st.caption("Left and right are as you saw them. Pick one to reopen it.")
picked = st.dataframe(
    table, hide_index=True, on_select="rerun", selection_mode="single-row", key="my_table", placeholder=EMPTY
)
sel = picked.selection.rows if picked else []
if sel:
    st.session_state["editing"] = ids[sel[0]]
pair_id = st.session_state.get("editing")
if pair_id:
    view = own_view(s, who.name, pair_id)
    if view is None or view.label is None:
        st.warning("That label no longer exists (it may have been undone).")
        st.session_state.pop("editing", None)
        st.stop()
    st.divider()
    st.markdown(f"**Editing pair {plain(view.pair_id)}** (revision {view.label.revision})")
    with st.container(key="mmrb-edit"):
        show_item(view)
        label_form(view, mode="edit", prefill=answers_of(view, view.label))
        show_errors(view)  # under "Save changes", which stays where it was
    zoom_button(view)
    zoom_if_asked()
    key_listener()
    compact_style()
