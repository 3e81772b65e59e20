"""Lead: agreement per field and category with intervals, Cohen's kappa of each pair of
annotators, each annotator's agreement with the others' majority (curate.agreement's report,
cached per store state: annotate/figures.py)."""

import streamlit as st

from annotate import admin, figures, ui
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import show_table
from curate.agreement.summary import KAPPA_RULE, MAJORITY_RULE, alpha_rows, kappa_cells, majority_rows
from curate.wording import plural

require("admin_agreement")
st.subheader("Agreement")
s = ui.store()
report = figures.agreement(s)
if not report.fields:
    st.info("No submitted labels yet: agreement appears once two annotators have labelled the same pair.")
    st.stop()
if wanting := admin.agreement_wanting(report):  # every figure would read "undefined"
    st.info(wanting)
    st.stop()
st.caption(
    f"{plural(report.n_pairs, 'pair')} with submitted labels by {plural(len(report.annotators), 'annotator')}. "
    "Krippendorff's alpha over pairs with two or more labels, 95% bootstrap intervals over pairs "
    f"({plural(report.resamples, 'resample')}, seed {report.seed}): the figures of `mmrb agreement --category`, which "
    "also gives Gwet's AC1 and Fleiss' kappa."
)

rows = alpha_rows(report)
st.markdown("**Alpha per field and category**")
drawn = figures.agreement_charts(s)
st.vega_lite_chart(spec=drawn["alpha"], width="stretch")
st.caption(
    "Krippendorff's thresholds: rely on alpha of 0.8 or more; 0.667 to 0.8 only for tentative conclusions. "
    f"Pale bars have no interval: fewer than {plural(report.min_pairs, 'pair')} with two or more labels."
)
st.markdown("**Alpha per category and field**")
st.caption("Click a header to sort by it. An empty cell is undefined (why: below) or has no pair of that field.")
show_table(admin.alpha_matrix(rows), height="content", key="alpha_matrix")
with st.expander("Every figure: pairs, labels, 95% interval, percent agreement"):
    show_table(admin.alpha_table(rows), height="content", key="alpha_table")
for note in admin.alpha_notes(rows, min_pairs=report.min_pairs):
    st.caption(plain(note))

st.markdown("**Cohen's kappa between annotators**")
if "kappa" in drawn:
    st.vega_lite_chart(spec=drawn["kappa"])
    if any(c.kappa is None for c in kappa_cells(report)):
        st.caption(KAPPA_RULE + " (grey cells).")
else:
    st.caption("No two annotators have labelled the same pair yet.")
st.markdown("**Agreement with the others' majority**")
st.vega_lite_chart(spec=drawn["majority"], width="stretch")
if any(m.agreement is None for m in majority_rows(report)):
    st.caption(MAJORITY_RULE + ".")
