"""Lead: accounts and the assignment plan."""

import streamlit as st

from annotate import admin, auth, flash, progress, ui
from annotate.admin import AUDIT_FILTERS, AUDIT_ROWS, audit_details, audit_table
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import show_table
from curate.assign import assign, last_plan
from curate.errors import MmrbError
from curate.model import ROLES
from curate.wording import plural

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
                auth.add_account(s, name, pw, role, by=who.name)
                flash.say("success", f"Added {role} {plain(name.strip())}.")
                st.rerun()
            except MmrbError as e:
                st.error(plain(e))

names = [a.name for a in s.annotators()]
if names:
    with st.expander("Manage an account: role, sign-in, password"):
        target = st.selectbox("Account", names, key="acct_target")
        account = s.get_annotator(target)
        active = account is not None and account.active
        role_now = account.role if account is not None else "annotator"
        a, b, c = st.columns(3)
        if a.button("Disable" if active else "Enable", key="acct_active"):
            try:
                auth.set_active(s, target, not active, by=who.name)
                flash.say(
                    "success", f"{plain(target)} {'disabled; their sessions have ended' if active else 'enabled'}."
                )
                st.rerun()
            except MmrbError as e:
                st.error(plain(e))
        if b.button("Sign out everywhere", key="acct_signout", help="End every session of this account now"):
            try:
                n = auth.sign_out_everywhere(s, target, by=who.name)
                flash.say("success", f"{plural(n, 'session')} of {plain(target)} ended.")
                st.rerun()
            except MmrbError as e:
                st.error(plain(e))
        with c.form("role", border=False):
            new_role = st.radio("Role", ROLES, index=ROLES.index(role_now), horizontal=True, key="acct_role")
            if st.form_submit_button("Change role"):
                try:
                    if new_role == role_now:
                        raise MmrbError(f"{target} is already {role_now}.")
                    auth.set_role(s, target, new_role, by=who.name)
                    flash.say("success", f"{plain(target)} is now {new_role}; their sessions have ended.")
                    st.rerun()
                except MmrbError as e:
                    st.error(plain(e))
        with st.form("reset", clear_on_submit=True):
            pw2 = st.text_input("New password", type="password")
            if st.form_submit_button("Reset password"):
                try:
                    auth.reset_password(s, target, pw2, by=who.name)
                    st.success(f"Password of {plain(target)} reset; their sessions have ended.")
                except MmrbError as e:
                    st.error(plain(e))

st.subheader("Assignment plan")
st.caption("Each pair gets k distinct annotators; sides are seeded per (pair, annotator); re-runs only add.")
last = last_plan(s)  # the last run's numbers: a rerun adds work, it does not change the overlap
with st.form("plan"):
    c1, c2, c3 = st.columns(3)
    k = c1.number_input("k (labels per pair)", 1, 10, min(max(int(last["k"]), 1), 10))
    max_k = c2.number_input("max k (adaptive overlap)", 1, 15, min(max(int(last["max_k"]), 1), 15))
    gold = c3.number_input("control share", 0.0, 0.9, min(max(float(last["control_share"]), 0.0), 0.9), step=0.05)
    pick = st.multiselect(
        "Annotators (empty: every active annotator)", [a.name for a in s.annotators() if a.role == "annotator"]
    )
    if st.form_submit_button("Assign"):
        try:
            rep = assign(
                s,
                k=int(k),
                max_k=max(int(max_k), int(k)),
                control_share=float(gold),
                annotators=pick or None,
                by=who.name,
            )
            st.success(plain("\n".join(rep.lines())))
        except MmrbError as e:
            st.error(plain(e))

st.subheader("Audit trail")
st.caption(
    "Who changed what, and when (UTC): accounts, roles, assignment runs, pauses, gold, adjudication, guidelines."
)
f1, f2, f3 = st.columns(3)
by_who = f1.selectbox("Who", ["everyone", *s.audit_actors()], key="audit_who")
family = f2.selectbox(
    "What", ["everything", *AUDIT_FILTERS], key="audit_what", format_func=lambda v: AUDIT_FILTERS.get(v, v)
)
since = f3.date_input("Since (UTC)", value=None, key="audit_since")
entries = s.audit(
    who=None if by_who == "everyone" else by_who,
    what=None if family == "everything" else family,
    since=since.isoformat() if since else None,
    limit=AUDIT_ROWS + 1,
)
if entries:
    shown = entries[:AUDIT_ROWS]
    picked = show_table(audit_table(shown), key="audit_table", on_select="rerun", selection_mode="single-row")
    if len(entries) > AUDIT_ROWS:
        st.caption(f"The newest {AUDIT_ROWS}; `mmrb audit` prints them all.")
    rows = picked.selection.rows if picked is not None else []
    if rows and rows[0] < len(shown):
        # a long detail is cut in the table: the selected entry in full, its text wrapped
        st.table(audit_details(shown[rows[0]]), border="horizontal")
    else:
        st.caption("Select a row (its box on the left) to read its details in full here.")
else:
    st.caption(
        "Nothing recorded"
        + (" matches these filters." if (since or by_who != "everyone" or family != "everything") else " yet.")
    )
