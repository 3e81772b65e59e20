"""Label the next pair of one's own queue."""

import streamlit as st

from annotate import flash, keys, ui
from annotate.guard import outage_guard
from annotate.guidelines import guidelines_markdown
from annotate.guidelines import notice as guidelines_notice
from annotate.images_cache import warm
from annotate.label_ui import answers_of, label_form, show_errors, skip_current, start_clock, undo_last
from annotate.page_style import compact_style
from annotate.pair_ui import open_zoom_of_current, show_item, zoom_if_asked
from annotate.queue import closed_notice, next_images, progress_line, queue_page
from annotate.scheme_form import is_default_form
from annotate.session_ui import require
from annotate.widgets import key_listener, rich


# Only what changes from pair to pair is in the fragment: submitting re-runs and re-sends
# just this, not the app around it (navigation, sidebar) nor the buttons, legend and
# guidelines below, which stay on screen. Each element a rerun sends costs the browser time.
@st.fragment
def label_page() -> None:
    with outage_guard():  # a fragment's rerun does not pass through app.py's guard
        # the account a full run has just checked (below), else checked again on each fragment
        # run: a disabled account stops at once
        who = st.session_state.get("q_full_run") or require("label")
        s = ui.store()
        progress, view = queue_page(s, who)
        done, assigned = progress.done, progress.assigned
        with st.container(key="mmrb-label"):
            # "Saved." / "Skipped." in the progress line: sent on every submit anyway, no element added
            st.progress(done / assigned if assigned else 1.0, text=progress_line(progress, flash.quiet()))
            flash.show()
            if view is None:
                notice = closed_notice(s, who.name) if done < assigned else None
                if notice:
                    st.info(notice)  # paused, or a qualification the lead reviews: work is left
                else:
                    st.success("Your queue is done. Thank you!" if assigned else "No pairs are assigned to you yet.")
                return
            legend = keys.LEGEND if is_default_form(view.scheme) else keys.scheme_legend(view.scheme)
            if st.session_state.get("q_legend") != legend:  # a pair of another scheme: its keys below
                st.session_state["q_legend"] = legend
                if not st.session_state.get("q_full_run"):
                    st.rerun()  # the legend is outside this fragment: once, where the scheme changes
            if view.guidelines_changed and view.guidelines_version is not None:
                st.info(guidelines_notice(view.guidelines_version), icon=":material/menu_book:")
            start_clock(view.pair_id)
            show_item(view)
            prefill = st.session_state.get("prefill", {}).pop(view.pair_id, None)
            label_form(view, mode="new", prefill=answers_of(view, prefill) if prefill else None)
            show_errors(view)  # under Submit: a refused submit does not push the form down
            if view.has_response_images:  # the next pair's thumbnails, made while this one is read
                name, seq = who.name, view.seq
                warm(s, lambda: next_images(s, name, seq))


who = require("label")
if not ui.store().progress(who.name)[1]:  # nothing assigned (the lead, usually): no bar, no idle buttons
    st.subheader("Label")
    st.info(
        "No pairs are assigned to you yet."
        + (
            # the Annotators page's form assigns to annotators only: say what gives a lead pairs
            " The Annotators page assigns pairs to annotators; to label yourself, give yourself"
            f" pairs with `mmrb assign --annotators {who.name}`."
            if who.role == "admin"
            else " They appear here as soon as the lead assigns them."
        )
    )
    st.stop()
compact_style()
st.session_state["q_full_run"] = who  # the account this full run found (a fragment's own run checks again)
try:
    label_page()
finally:
    st.session_state["q_full_run"] = False
skip, undo, zoom, flip = st.columns(4)
skip.button("Skip this pair  `S`", key="act_skip", on_click=skip_current)
undo.button("Undo last  `U`", key="act_undo", on_click=undo_last)
zoom.button("Full size image  `Z`", key="act_zoom", on_click=open_zoom_of_current)
flip.button("Flip images  `V`", key="act_flip", on_click=open_zoom_of_current, args=(True,))
st.caption(st.session_state.get("q_legend", keys.LEGEND))
with st.expander("Guidelines"):
    rich(guidelines_markdown(ui.store(), ui.config().guidelines))
zoom_if_asked()
key_listener()
