"""Label the next pair of one's own queue."""

import streamlit as st

from annotate import keys, ui
from annotate.form import from_label


# A fragment: submit, skip and undo re-run this page's body only, not the app around it
# (navigation, sidebar, sign-in check of app.py), so less is re-sent and re-drawn per label.
@st.fragment
def label_page() -> None:
    who = ui.require("label")  # again on each fragment run: a disabled account stops at once
    s = ui.store()
    done, assigned = s.progress(who.name)
    view = ui.current_view(s, who.name)

    with st.container(key="mmrb-label"):
        top, undo_col = st.columns([6, 1], vertical_alignment="bottom")
        with top:
            st.progress(done / assigned if assigned else 1.0, text=f"{done} of {assigned} labelled")
        with undo_col:
            st.button("Undo last  `U`", key="act_undo", on_click=ui.undo_last, disabled=done == 0)
        ui.show_flash()
        if view is None:
            st.success("Your queue is done. Thank you!" if assigned else "No pairs are assigned to you yet.")
            return
        ui.started(view.pair_id)
        ui.show_errors(view)
        ui.show_item(view)
        prefill = st.session_state.get("prefill", {}).pop(view.pair_id, None)
        ui.label_form(view, mode="new", prefill=from_label(prefill, view.left_side) if prefill else None)
        st.button("Skip this pair  `S`", key="act_skip", on_click=ui.skip_current, args=(view,))
        st.caption(keys.LEGEND)
        with st.expander("Guidelines"):
            st.markdown(ui.guidelines_text() or "No guidelines were set for this project.")

    if st.session_state.get("zoom"):
        ui.zoom_dialog(st.session_state.pop("zoom"))


ui.require("label")
label_page()
ui.key_listener()
