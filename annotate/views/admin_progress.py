"""Lead: progress per annotator and category, speed, and pairs still short of their overlap."""

import streamlit as st

from annotate import admin, ui

ui.require("admin_progress")
s = ui.store()
st.subheader("Progress")
people = admin.progress_by_annotator(s)
if people.empty:
    st.info("No annotators yet: add them on the Annotators page or with `mmrb annotators add`.")
else:
    total_done, total = int(people["done"].sum()), int(people["assigned"].sum())
    a, b, c = st.columns(3)
    a.metric("Assignments done", f"{total_done} / {total}")
    b.metric("Labels in the last hour", int(people["last_hour"].sum()))
    med = people["median_seconds"].dropna()
    c.metric("Median seconds per label (median over annotators)", f"{med.median():.1f}" if len(med) else "–")
    st.dataframe(people, hide_index=True)
st.markdown("**By category**")
st.dataframe(admin.progress_by_category(s), hide_index=True)
st.markdown("**Pairs still short of their overlap**")
short = admin.short_of_overlap(s)
st.caption(f"{len(short)} pairs have fewer submitted labels than annotators assigned.")
st.dataframe(short.head(500), hide_index=True)
