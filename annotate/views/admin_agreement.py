"""Lead: agreement at a glance."""

import streamlit as st

from annotate import admin, ui
from annotate.session_ui import require

require("admin_agreement")
st.subheader("Agreement at a glance")
st.caption(
    "Pairs with at least two submitted labels. Krippendorff's alpha, nominal: rely on alpha >= .800; "
    ".667 to .800 only for tentative conclusions."
)
glance = admin.agreement_glance(ui.store())
cols = st.columns(3)
titles = {
    "preference": "Preference",
    "correctness_first": "Correctness, first response",
    "correctness_second": "Correctness, second response",
}
for col, (field, res) in zip(cols, glance.items(), strict=True):
    with col:
        st.markdown(f"**{titles[field]}**")
        st.metric("alpha", "undefined" if res.alpha is None else f"{res.alpha:.3f}")
        if res.low is not None:
            st.caption(f"95% interval {res.low:.3f} to {res.high:.3f} (bootstrap over pairs)")
        elif res.interval_undefined:
            st.caption(f"95% interval undefined ({res.interval_undefined})")
        st.metric("percent agreement", "–" if res.percent is None else f"{res.percent:.0%}")
        st.caption(f"{res.pairs} pairs, {res.labels} labels. {res.note}")
st.caption("The full report with confidence intervals: `mmrb agreement`.")
