"""Lead: pairs whose labels disagree, unblinded; record the final decision (kept apart)."""

import streamlit as st

from annotate import admin, flash, ui
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import rich
from curate.model import Adjudication, Correctness, Preference
from curate.wording import plural, seconds

who = require("admin_adjudicate")
s = ui.store()
st.subheader("Adjudication")
flash.show()
rows = admin.disagreements(s)
if not rows:
    st.info("No disagreements to adjudicate.")
    st.stop()
pending = sum(1 for r in rows if r.adjudication is None)
st.caption(f"{plural(len(rows), 'pair')} with disagreeing labels, {pending} not yet decided.")
ids = [r.pair_id for r in rows]
pid = st.selectbox(
    "Pair",
    ids,
    format_func=lambda p: p + ("" if next(r for r in rows if r.pair_id == p).adjudication else "  (pending)"),
)
row = next(r for r in rows if r.pair_id == pid)
d = admin.pair_details(s, pid)
if d is None:
    st.error(f"Pair {plain(pid)} is no longer complete in the store (pair, item or a response is gone).")
    st.stop()
rich(d.item.prompt)
c1, c2 = st.columns(2)
for col, name in ((c1, "first"), (c2, "second")):
    cand = d.first if name == "first" else d.second
    with col:
        st.markdown(f"**{name.title()} response** · model {plain(cand.model)}")
        with st.container(height=300):
            rich(cand.text)
if d.pair.known_preference:
    st.caption(f"Known answer (gold or imported): {plain(d.pair.known_preference)}")
st.markdown("**Labels**")
st.dataframe(
    [
        dict(
            annotator=lab.annotator,
            preference=lab.preference,
            first=lab.correctness_first,
            second=lab.correctness_second,
            rationale=lab.rationale,
            flag=lab.flag or "",
            seconds=seconds(lab.seconds),
        )
        for lab in row.labels
    ],
    hide_index=True,
)
prev = row.adjudication
opts: tuple[Preference, ...] = ("first", "second", "tie")
corr: tuple[Correctness | None, ...] = (None, "correct", "incorrect", "unsure")
with st.form(f"adj_{pid}"):
    pref = st.radio(
        "Final preference",
        opts,
        index=opts.index(prev.preference) if prev and prev.preference in opts else None,
        horizontal=True,
    )
    a, b = st.columns(2)
    cf = a.selectbox(
        "First response is",
        corr,
        index=corr.index(prev.correctness_first) if prev else 0,
        format_func=lambda v: v or "–",
    )
    cs = b.selectbox(
        "Second response is",
        corr,
        index=corr.index(prev.correctness_second) if prev else 0,
        format_func=lambda v: v or "–",
    )
    excl = st.checkbox("Exclude this pair from the benchmark", value=bool(prev and prev.exclude))
    note = st.text_area("Note", value=prev.note if prev else "")
    if st.form_submit_button("Record decision", type="primary"):
        s.set_adjudication(
            Adjudication(
                pair_id=pid,
                admin=who.name,
                preference=pref,
                correctness_first=cf,
                correctness_second=cs,
                exclude=excl,
                note=note,
            )
        )
        flash.say("success", f"Decision recorded for {plain(pid)}.")
        st.rerun()
