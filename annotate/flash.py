"""The last action's message: a callback or a save leaves it, the next run shows it once."""

from __future__ import annotations

from typing import Literal

import streamlit as st

Kind = Literal["success", "info", "warning", "error"]
_KEY = "flash"


def say(kind: Kind, message: str) -> None:
    st.session_state[_KEY] = (kind, message)


def kind() -> Kind | None:
    """The kind of the message waiting to be shown, if any."""
    got = st.session_state.get(_KEY)
    return got[0] if got else None


def quiet() -> str | None:
    """Take a waiting success message, to be said quietly where the page chooses (the label
    page: in its progress line, which is sent on every submit anyway: no element added)."""
    got = st.session_state.get(_KEY)
    if got and got[0] == "success":
        del st.session_state[_KEY]
        return got[1]
    return None


def show() -> None:
    """Show the waiting message and forget it (a success as a toast: no layout shift)."""
    got, message = st.session_state.pop(_KEY, (None, None))
    if got == "success":
        st.toast(message)
    elif got:
        getattr(st, got)(message)
