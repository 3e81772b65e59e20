"""Lead: annotator quality: accuracy on gold (control tasks) with Wilson intervals, agreement
with the others' majority, Dawid-Skene's reliability, alerts, qualification and pauses
(curate/quality/; the figures of `mmrb quality`)."""

import streamlit as st

from annotate import admin, charts, flash, ui
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import show_table
from curate.errors import MmrbError
from curate.quality.gold import gold_stats
from curate.quality.qualification import resume
from curate.quality.reliability import store_report
from curate.wording import percent, plural

require("admin_quality")
st.subheader("Quality")
flash.show()
s = ui.store()
c1, c2 = st.columns(2)
threshold = c1.number_input("Alert below", 0.0, 1.0, 0.7, step=0.05, key="quality_threshold")
min_n = int(c2.number_input("Alert only with at least this many labels", 1, 10_000, 20, key="quality_min_n"))
stats = gold_stats(s)
st.caption(
    f"{plural(stats.pairs, 'pair')} with gold; {plural(stats.control_tasks, 'control task')} in queues, "
    f"{stats.control_labels} labelled. Gold accuracy counts control tasks and any other label on a pair with gold; "
    "agreement with the others' majority and Dawid-Skene count regular labels only."
)
report = store_report(s, threshold=float(threshold), min_n=min_n)
every = "every category"
category = st.selectbox("Category", [every, *report.categories], key="quality_category")
frame = admin.quality_frame(report, None if category == every else category)
if frame.empty:
    st.info("No submitted labels yet: reliability appears once annotators have labelled.")
    st.stop()
shown = [a for a in report.alerts if a.category == (None if category == every else category)]
if shown:
    for a in shown:
        st.warning(plain(a.text()))
else:
    st.success(f"No alerts here: nobody is below {percent(report.threshold)} on {plural(min_n, 'label')} or more.")
st.markdown("**Accuracy on gold**")
st.vega_lite_chart(spec=charts.spec(charts.gold_accuracy(frame)), width="stretch")
show_table(admin.quality_table(frame), height="content")

closed = {**{n: "failed qualification" for n, q in report.qualification.items() if q == "failed"}, **report.paused}
st.markdown("**Qualification and pauses**")
if report.qualification:
    st.caption(plain(", ".join(f"{n}: {q}" for n, q in sorted(report.qualification.items()))))
if not closed:
    st.caption("Every account's queue is open.")
for name, why in sorted(closed.items()):
    left, right = st.columns([4, 1])
    left.markdown(plain(f"{name}: {why}"))
    if right.button("Resume", key=f"resume_{name}"):
        try:
            resume(s, name)
            flash.say("success", f"{plain(name)} is back in the queue.")
            st.rerun()
        except MmrbError as e:
            st.error(plain(e))
if report.alerts and st.button("Pause every annotator with an alert", key="quality_pause"):
    store_report(s, threshold=float(threshold), min_n=min_n, pause=True)
    flash.say("success", "Paused: their queues serve nothing until resumed.")
    st.rerun()
