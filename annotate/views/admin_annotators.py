"""Lead: accounts and the assignment plan."""

import streamlit as st

from annotate import admin, auth, flash, progress, ui
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import show_table
from curate.assign import assign
from curate.errors import MmrbError

who = require("admin_annotators")
s = ui.store()
st.subheader("Annotators")
flash.show()
show_table(progress.accounts_table(admin.progress_by_annotator(s)))

with st.expander("Add an account"):
    with st.form("add_account", clear_on_submit=True):
        name = st.text_input("Name")
        pw = st.text_input("Initial password (at least 8 characters)", type="password")
        role = st.radio("Role", ("annotator", "admin"), horizontal=True)
        if st.form_submit_button("Add"):
            try:
                auth.add_account(s, name, pw, role)
                flash.say("success", f"Added {role} {plain(name.strip())}.")
                st.rerun()
            except MmrbError as e:
                st.error(plain(e))

names = [a.name for a in s.annotators()]
if names:
    with st.expander("Disable, enable or reset a password"):
        target = st.selectbox("Account", names)
        a, b = st.columns(2)
        account = s.get_annotator(target)
        active = account is not None and account.active
        if a.button("Disable" if active else "Enable"):
            try:
                auth.set_active(s, target, not active, by=who.name)
                st.rerun()
            except MmrbError as e:
                st.error(plain(e))
        with b.form("reset", clear_on_submit=True):
            pw2 = st.text_input("New password", type="password")
            if st.form_submit_button("Reset password"):
                try:
                    auth.reset_password(s, target, pw2)
                    st.success(f"Password of {plain(target)} reset; their sessions have ended.")
                except MmrbError as e:
                    st.error(plain(e))

st.subheader("Assignment plan")
st.caption("Each pair gets k distinct annotators; sides are seeded per (pair, annotator); re-runs only add.")
with st.form("plan"):
    c1, c2, c3 = st.columns(3)
    k = c1.number_input("k (labels per pair)", 1, 10, 3)
    max_k = c2.number_input("max k (adaptive overlap)", 1, 15, 3)
    gold = c3.number_input("control share", 0.0, 0.9, 0.0, step=0.05)
    pick = st.multiselect(
        "Annotators (empty: every active annotator)", [a.name for a in s.annotators() if a.role == "annotator"]
    )
    if st.form_submit_button("Assign"):
        try:
            rep = assign(s, k=int(k), max_k=max(int(max_k), int(k)), control_share=float(gold), annotators=pick or None)
            st.success(plain("\n".join(rep.lines())))
        except MmrbError as e:
            st.error(plain(e))
