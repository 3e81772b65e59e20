"""The lead's figures over the labels, computed once per store state and shared by every page
and session of the process: a new label, edit or withdrawal changes Store.change_stamp and
so the cache key; nothing else does."""

from __future__ import annotations

import streamlit as st

from curate.agreement import AgreementReport
from curate.store import Store

from . import admin, ui


@st.cache_data(max_entries=8, show_spinner="Computing agreement...")
def _report(_store: Store, location: tuple[str | None, str | None], stamp: tuple) -> AgreementReport:
    return admin.lead_report(_store)


def agreement(store: Store) -> AgreementReport:
    """admin.lead_report of the served store, cached per (store location, change stamp)."""
    c = ui.config()
    return _report(store, (c.db, c.images), store.change_stamp())
