"""Lead: progress per annotator and category, speed, and pairs still short of their overlap."""

import streamlit as st

from annotate import admin, ui
from annotate.progress import ProgressTotals
from annotate.session_ui import require

require("admin_progress")
s = ui.store()
st.subheader("Progress")
people = admin.progress_by_annotator(s)
if people.empty:
    st.info("No annotators yet: add them on the Annotators page or with `mmrb annotators add`.")
else:
    t = ProgressTotals.of(people)
    a, b, c = st.columns(3)
    a.metric("Assignments done", f"{t.done} / {t.assigned}")
    b.metric("Labels in the last hour", t.last_hour)
    c.metric(
        "Median seconds per label (median over annotators)",
        f"{t.median_seconds:.1f}" if t.median_seconds is not None else "–",
    )
    st.dataframe(people, hide_index=True)
st.markdown("**By category**")
st.dataframe(admin.progress_by_category(s), hide_index=True)
st.markdown("**Pairs still short of their overlap**")
short = admin.short_of_overlap(s)
st.caption(f"{len(short)} pairs have fewer submitted labels than annotators assigned.")
st.dataframe(short.head(500), hide_index=True)
