"""Sign in with a local account (or the deployment's OIDC provider when configured)."""

import streamlit as st

from annotate import auth, session_ui, ui
from annotate.page_style import signin_style
from annotate.render import plain

signin_style()  # a narrow card in the middle of the page
st.title("mmrb-studio", anchor=False)
st.caption("Expert annotation of multimodal reward-model pairs")
if asked := st.session_state.get("signin_for"):  # a page's own URL, opened signed out (app.py)
    st.caption(f"Sign in to open {asked}.")
if st.session_state.pop("session_ended", None):
    st.info("Your session has ended (signed out, expired, or the account was changed). Please sign in again.")
demo = ui.config().demo_accounts
with st.form("signin", border=True):
    name = st.text_input("Name", key="signin_name")
    password = st.text_input("Password", type="password", key="signin_password")
    ok = st.form_submit_button("Sign in", type="primary", width="stretch")
if ok:
    got = auth.sign_in(ui.store(), name or "", password or "", client=session_ui.client_address())
    if got.who is None:
        st.error(got.message())
    else:
        session_ui.sign_in(got.who)
        st.rerun()
if session_ui.oidc_configured():
    st.html(session_ui.remember_page_html(), unsafe_allow_javascript=True)
    st.divider()
    if st.button("Sign in with your organisation"):
        st.login()
    email = session_ui.organisation_email()
    refusal = auth.identity_refusal(ui.store(), email)
    if refusal == "no_account":
        st.warning(f"{plain(email)} has no active account here; ask your lead to add it.")
    elif refusal == "ended":  # refused by session_ui: an identity from before the account's sessions were ended
        st.warning(f"The organisation sign-in of {plain(email)} has ended here: sign in with your organisation again.")
if demo:
    st.info("Sample project. Demo accounts: " + ", ".join(f"`{n}` / `{p}` ({r})" for n, p, r in demo))
