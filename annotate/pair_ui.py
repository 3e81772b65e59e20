"""The pair's prompt and image as the annotator sees it, and the full-size image."""

from __future__ import annotations

import streamlit as st

from . import ui
from .demo import DELIBERATE_MISSING_NOTE
from .images_cache import image_bytes, image_src
from .outage_ui import calm
from .queue import PairView, current_view
from .render import image_html, item_html
from .session_ui import acting_user

MISSING = {
    "none": "This prompt has no image.",
    "missing": "The image file was not found when the data was imported.",
    "corrupt": "The image file could not be read.",
    "too_large": "The image was too large to import.",
}


def missing_reason(view: PairView) -> str:
    """What the placeholder says when there is no image to show."""
    return _missing(view.image_status, view.image_deliberately_missing)


def _missing(status: str, deliberately: bool = False) -> str:
    reason = MISSING.get(status, "The image is not available.")
    return f"{reason} {DELIBERATE_MISSING_NOTE}" if deliberately else reason


def image_block(item_id: str, sha256: str | None, status: str, *, deliberately_missing: bool = False) -> str:
    """The item's image (or why it is missing) as HTML for render.item_html."""
    jpeg = image_bytes(ui.store(), sha256)
    reason = None if jpeg is not None else _missing(status, deliberately_missing)
    src = image_src(jpeg, item_id) if jpeg is not None else None
    return image_html(jpeg, item_id=item_id, alt="the prompt's image", missing_reason=reason, src=src)


def show_item(view: PairView) -> None:
    block = image_block(
        view.item_id, view.image_sha256, view.image_status, deliberately_missing=view.image_deliberately_missing
    )
    st.html(item_html(block, view.category, view.prompt))  # one element: see render.item_html


def zoom_button(view: PairView) -> None:
    image_zoom_button(view.image_sha256, key="act_zoom")


def image_zoom_button(sha: str | None, *, key: str) -> None:
    """The "Full size image" button (key Z) of an image, disabled when there is none."""
    st.button("Full size image  `Z`", key=key, on_click=_open_zoom, args=(sha,), disabled=not sha)


def _open_zoom(sha: str | None) -> None:
    if sha:
        st.session_state["zoom"] = sha


@calm("The full-size image could not be opened")
def open_zoom_of_current() -> None:
    """The Z button of the label page sits outside its fragment, so it looks the pair up."""
    who = acting_user()
    view = current_view(ui.store(), who) if who else None
    if view is not None:
        _open_zoom(view.image_sha256)


@st.dialog("Full-size image", width="large")
def zoom_dialog(sha: str) -> None:
    path = ui.store().image_path(sha)
    if path is None or not path.exists():
        st.warning("The image file is not available.")
        return
    from PIL import Image

    with Image.open(path) as im:
        w, h = im.size
    z = st.select_slider(
        "Zoom", options=[0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0], value=1.0, format_func=lambda v: f"{int(v * 100)}%"
    )
    st.caption(f"Original size {w} x {h} pixels")
    with st.container(height=620, border=False):
        st.image(str(path), width=max(1, int(w * z)))


def zoom_if_asked() -> None:
    """The dialog, when the Z button (or key) asked for it on this run."""
    if st.session_state.get("zoom"):
        zoom_dialog(st.session_state.pop("zoom"))
