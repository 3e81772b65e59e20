"""Lead: annotator quality: accuracy on gold (control tasks) with Wilson intervals, agreement
with the others' majority, Dawid-Skene's reliability, alerts, annotator bias, qualification
and pauses (curate/quality/; the figures of `mmrb quality`); the qualification set and the control
share in effect; importing a gold file (`mmrb gold import`)."""

import streamlit as st

from annotate import admin, figures, flash, ui
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import show_table
from curate.errors import InputError, MmrbError
from curate.quality.bias import MIN_TIMED
from curate.quality.gold import import_gold_upload
from curate.quality.qualification import qualification_pairs, resume
from curate.quality.reliability import pause_alerted
from curate.wording import percent, plural

# the table's long headers as short ones (the long one is each column's help), so that it fits
# the page at 1366 px instead of scrolling sideways with "Dawid-Sken..." cut
NARROW = {
    "Gold accuracy": ("Gold", "Accuracy on gold"),
    "Wilson interval (95%)": ("Gold interval", "Wilson interval (95%) of the accuracy on gold"),
    "Gold labels": ("Gold n", "Gold labels"),
    "Agrees with the others' majority": ("Majority", "Agrees with the others' majority"),
    "Labels compared": ("Majority n", "Labels compared with the others' majority"),
    "Dawid-Skene reliability": ("Dawid-Skene", "Dawid-Skene reliability"),
    "Bootstrap interval (95%)": ("DS interval", "Bootstrap interval (95%) of the Dawid-Skene reliability, over pairs"),
}

who = require("admin_quality")
st.subheader("Quality")
flash.show()
s = ui.store()
c1, c2 = st.columns(2)
threshold = c1.number_input("Alert below", 0.0, 1.0, 0.7, step=0.05, key="quality_threshold")
min_n = int(c2.number_input("Labels a share needs (fewer: greyed)", 1, 10_000, 20, key="quality_min_n"))
key = figures.quality_key(s)  # read once per run: every figure below is cached by it
stats = figures.gold_stats(s, key=key)
st.caption(
    f"{plural(stats.pairs, 'pair')} with gold; {plural(stats.control_tasks, 'control task')} in queues, "
    f"{stats.control_labels} labelled. Gold accuracy counts control tasks and any other label on a pair with gold; "
    "agreement with the others' majority and Dawid-Skene count regular labels only."
)
report = figures.quality(s, threshold=float(threshold), min_n=min_n, key=key)
every = "every category"
category = st.selectbox("Category", [every, *report.categories], key="quality_category")
picked = None if category == every else category
if picked is not None:  # with that category's Dawid-Skene intervals
    report = figures.quality(s, threshold=float(threshold), min_n=min_n, category=picked, key=key)
frame, drawn = figures.quality_drawn(s, threshold=float(threshold), min_n=min_n, category=picked, key=key)
if frame.empty:
    st.info("No submitted labels yet: reliability appears once annotators have labelled.")
else:
    shown = [a for a in report.alerts if a.category == picked]
    if shown:
        for a in shown:
            st.warning(plain(a.text()))
    else:
        st.success(f"No alerts here: no interval on gold lies below {percent(report.threshold)}.")
    st.caption(
        f"Gold accuracy alerts when its whole 95% Wilson interval lies below {percent(report.threshold)}, "
        f"however few its labels; Dawid-Skene (no interval) below it with at least {plural(min_n, 'label')}. "
        f"A share on fewer than {plural(min_n, 'label')} is drawn greyed, with its interval and its n."
    )
    for kind, title in (
        ("gold", "Accuracy on gold"),
        ("majority", "Agreement with the others' majority"),
        ("model", "Dawid-Skene reliability"),
    ):
        st.markdown(f"**{title}**")
        st.vega_lite_chart(spec=drawn[kind], width="stretch")
    show_table(admin.quality_table(frame), short=NARROW, height="content")

st.markdown("**Annotator bias**")
bias = figures.bias(s, key=key[0])
if not bias.annotators:
    st.info("No submitted labels yet: bias diagnostics appear once annotators have labelled.")
else:
    lim = bias.limits
    for b in bias.alerts:
        st.warning(plain(b.text()))
    st.caption(
        "Per annotator, over every submitted label: the share of left picks among preferences that pick a side "
        '(the screen side of each assignment), of ties, of labels with an "unsure" answer, how often the chosen '
        f"response is the longer one, and of labels faster than {lim.fast_fraction:.2g} of the annotator's own median "
        f"seconds (from {MIN_TIMED} timed labels on). An alert when the 95% Wilson interval lies wholly outside "
        f"{percent(0.5 - lim.left_margin)}-{percent(0.5 + lim.left_margin)} (left picks), "
        f"{percent(0.5 - lim.longer_margin)}-{percent(0.5 + lim.longer_margin)} (longer chosen), or above "
        f"{percent(lim.tie_max)} (ties, unsure) and {percent(lim.fast_max)} (fast labels); bias alerts pause no one."
    )
    st.vega_lite_chart(spec=figures.bias_chart(s, key=key[0]), width="stretch")
    show_table(admin.bias_table(bias), height="content")

closed = {**{n: "failed qualification" for n, q in report.qualification.items() if q == "failed"}, **report.paused}
st.markdown("**Qualification and pauses**")
qual = qualification_pairs(s)
st.caption(
    f"Qualification set: {plural(len(qual[0]), 'gold pair')}, minimum score {percent(qual[1])} (mmrb gold qualify)."
    if qual
    else "No qualification set: new annotators go straight to the real queue (mmrb gold qualify sets one)."
)
if report.qualification:
    st.caption(plain(", ".join(f"{n}: {q}" for n, q in sorted(report.qualification.items()))))
if not closed:
    st.caption("Every account's queue is open.")
for name, why in sorted(closed.items()):
    left, right = st.columns([4, 1])
    left.markdown(plain(f"{name}: {why}"))
    if right.button("Resume", key=f"resume_{name}"):
        try:
            resume(s, name, by=who.name)
            flash.say("success", f"{plain(name)} is back in the queue.")
            st.rerun()
        except MmrbError as e:
            st.error(plain(e))
if report.alerts and st.button("Pause every annotator with an alert", key="quality_pause"):
    pause_alerted(s, report, by=who.name)
    flash.say("success", "Paused: their queues serve nothing until resumed.")
    st.rerun()

st.markdown("**Control tasks in effect**")
shares = figures.control_shares(s, key=key[0])
if any(c.control for c in shares):
    show_table(admin.control_table(shares), height="content")
else:
    st.caption("No control tasks in any queue (mmrb assign --control-share mixes gold pairs in).")

st.markdown("**Import gold**")
st.caption(
    "A CSV or JSONL file with pair_id and any of preference (first/second/tie), correctness_first, "
    "correctness_second (correct/incorrect/unsure), note; in the pair's stored order. All or nothing: "
    "one bad row and nothing is written (as mmrb gold import)."
)
upload = st.file_uploader("Gold file", type=["csv", "jsonl"], key="quality_gold_file")
if upload is not None and st.button("Import", key="quality_gold_import"):
    try:
        done = import_gold_upload(s, upload.name, upload.getvalue(), by=who.name)
        flash.say("success", plain("; ".join(done.lines())))
        st.rerun()
    except InputError as e:
        st.error(plain(f"{len(e.problems)} {'problem' if len(e.problems) == 1 else 'problems'}, nothing written:"))
        more = [f"... and {len(e.problems) - 50} more"] if len(e.problems) > 50 else []
        st.code("\n".join([*(str(p) for p in e.problems[:50]), *more]), language=None)
    except MmrbError as e:
        st.error(plain(e))
