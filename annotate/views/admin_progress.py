"""Lead: progress per annotator and category, labels over time, seconds per label, label
distributions, and pairs still short of their overlap. The lead lands here (app.py)."""

import streamlit as st

from annotate import admin, figures, progress, ui
from annotate.progress import ProgressTotals
from annotate.session_ui import require
from annotate.widgets import show_table
from curate.wording import EMPTY, plural, seconds

require("admin_progress")
s = ui.store()
key = figures.page_key(s)  # read once per run: every figure below is cached by it
st.subheader("Progress")
people = admin.progress_by_annotator(s, counts=figures.annotator_counts(s, key=key))
if people.empty:
    st.info("No annotators yet: add them on the Annotators page or with `mmrb annotators add`.")
else:
    t = ProgressTotals.of(people)
    a, b, c = st.columns(3)
    # short titles: a third of the page at 1366 px cuts a longer one; the rest is in the help
    a.metric("Assignments done", f"{t.done} / {t.assigned}")
    b.metric(progress.LAST_HOUR, t.last_hour, help="Labels submitted in the last 60 minutes, all annotators.")
    c.metric(
        "Median s per label",
        seconds(t.median_seconds),
        help="The median over annotators of each one's median seconds per submitted label.",
    )
    show_table(progress.annotator_table(people))
    st.caption(admin.RATE_RULE + f" An empty cell ({EMPTY}) has no value yet.")

drawn = figures.progress_charts(s, key=key)
if drawn:
    left, right = st.columns(2)
    with left:
        st.markdown("**Labels over time**")
        st.vega_lite_chart(spec=drawn["labels_over_time"], width="stretch")
    with right:
        st.markdown("**Seconds per label**")
        if "seconds_per_label" in drawn:
            st.vega_lite_chart(spec=drawn["seconds_per_label"], width="stretch")
            st.caption(
                "Box: the middle half of an annotator's labels; whiskers: 10th to 90th percentile; tick: median."
            )
        else:
            st.caption("No timed labels yet.")
    st.markdown("**Label distribution**")
    st.vega_lite_chart(spec=drawn["label_distribution"])
    st.caption("Submitted labels per value; first and second are the pair's stored order, not screen sides.")
else:
    st.caption("Plots of labels over time, seconds per label and label distributions appear with the first label.")

by_category, short = figures.overlap_tables(s, key=key)
st.markdown("**By category**")
show_table(progress.category_table(by_category))
st.markdown("**Pairs still short of their overlap**")
st.caption(
    f"{plural(len(short), 'pair')} with fewer submitted labels than annotators assigned"
    + (" (the first 500 shown)." if len(short) > 500 else ".")
)
show_table(progress.short_table(short.head(500)))
