"""The pair as the annotator sees it: the prompt and its image, both responses (their
images in order with their text), and the full-size view of the prompt's image or of the
two responses' images (side by side, or flipped in one place)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from curate.images import ImageProblem
from curate.model import ImageRef, Part

from . import flash, ui
from .demo import DELIBERATE_MISSING_NOTE
from .images_cache import image_bytes, image_src, original, slot_src
from .outage_ui import calm
from .page_style import zoom_style
from .queue import PairView, current_view
from .render import (
    Shown,
    ShownImage,
    flip_html,
    image_html,
    item_html,
    one_image_html,
    pair_token,
    responses_html,
    side_by_side_html,
)
from .session_ui import acting_user

MISSING = {
    "none": "This prompt has no image.",
    "missing": "The image file was not found when the data was imported.",
    "corrupt": "The image file could not be read.",
    "too_large": "The image was too large to import.",
}


# why a stored image's file cannot be shown now (it was imported), by ImageProblem.status: the
# placeholder says so in words that name no path on the server
UNAVAILABLE = {
    "missing": "The image file is gone from the image folder.",
    "corrupt": "The image file could not be read.",
    "outside": "The image file is not a regular file in the image folder.",
    "too_large": "The image file is too large to show.",
}


def unavailable(problem: ImageProblem) -> str:
    return UNAVAILABLE.get(problem.status, "The image is not available.")


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


def tall(view: PairView) -> bool:
    """A pair whose responses have images and whose prompt has none (text to image): no
    placeholder for the prompt's image, and its room goes to the responses."""
    return view.has_response_images and view.image_status == "none"


def show_item(view: PairView) -> None:
    block = (
        ""
        if tall(view)
        else image_block(
            view.item_id, view.image_sha256, view.image_status, deliberately_missing=view.image_deliberately_missing
        )
    )
    st.html(item_html(block, view.category, view.prompt))  # one element: see render.item_html


def shown_response(parts: Sequence[Part], text: str, side: str) -> Shown:
    """A response as responses_html takes it: its text when it is plain text, else its parts
    in order, each image as a served thumbnail (or why it is missing) in the ``side`` column."""
    if not any(p.kind == "image" for p in parts):
        return text
    out: list[str | ShownImage] = []
    n = 0
    for p in parts:
        if p.kind == "image" and p.image is not None:
            out.append(_thumb(p.image, f"{side}-{n}", f"the {side} response's image {n + 1}"))
            n += 1
        else:
            out.append(p.text)
    return out


def _thumb(ref: ImageRef, slot: str, alt: str) -> ShownImage:
    jpeg = image_bytes(ui.store(), ref.sha256 if ref.status == "ok" else None)
    if jpeg is None:
        return ShownImage(None, alt, _missing(ref.status), key=ref.sha256 or slot)
    return ShownImage(slot_src(jpeg, slot), alt, key=ref.sha256 or "", width=ref.width, height=ref.height)


def responses_block(view: PairView) -> str:
    """Both responses of the pair on screen as one HTML element (see render.responses_html)."""
    return pair_responses(
        pair_token(view.pair_id),
        view.left_parts,
        view.right_parts,
        view.left_text,
        view.right_text,
        tall=tall(view),
    )


def pair_responses(
    token: str,
    left_parts: Sequence[Part],
    right_parts: Sequence[Part],
    left_text: str,
    right_text: str,
    titles: tuple[str, str] = ("Left response", "Right response"),
    *,
    tall: bool = False,
) -> str:
    left = shown_response(left_parts, left_text, "left")
    right = shown_response(right_parts, right_text, "right")
    return responses_html(token, left, right, titles=titles, tall=tall)


# -- the full-size view ---------------------------------------------------------------------
@dataclass(frozen=True)
class PairZoom:
    """What the full-size view shows for a pair whose responses have images: each side's
    images in order (as shown: left and right, or first and second for the lead), and the
    prompt's image if any."""

    token: str
    left: tuple[ImageRef, ...]
    right: tuple[ImageRef, ...]
    prompt: str | None = None
    titles: tuple[str, str] = ("Left response", "Right response")


Zoom = str | PairZoom  # a prompt image's sha256, or a pair's response images


def zoom_of(
    token: str,
    prompt_sha: str | None,
    left_parts: Sequence[Part],
    right_parts: Sequence[Part],
    titles: tuple[str, str] = ("Left response", "Right response"),
) -> Zoom | None:
    """What the Z key opens: the responses' images when they have any, else the prompt's."""
    left = tuple(p.image for p in left_parts if p.image is not None)
    right = tuple(p.image for p in right_parts if p.image is not None)
    if left or right:
        return PairZoom(token, left, right, prompt_sha, titles)
    return prompt_sha


def view_zoom(view: PairView) -> Zoom | None:
    return zoom_of(pair_token(view.pair_id), view.image_sha256, view.left_parts, view.right_parts)


def zoom_button(view: PairView) -> None:
    image_zoom_button(view_zoom(view), key="act_zoom")


def image_zoom_button(what: Zoom | None, *, key: str) -> None:
    """The "Full size image" button (key Z), disabled when there is nothing to show."""
    st.button("Full size image  `Z`", key=key, on_click=_open_zoom, args=(what,), disabled=not what)


def _open_zoom(what: Zoom | None, flip: bool = False) -> None:
    """Ask for the full-size view, opened as the key says whatever it showed last: Z side by
    side, V (``flip``) the flip, the first image, fit to the screen."""
    if what:
        if isinstance(what, PairZoom):
            st.session_state["zoom_view"] = VIEWS[1] if flip else VIEWS[0]
            st.session_state["zoom_index"] = 0
        st.session_state["zoom_level"] = FIT
        st.session_state["zoom"] = what


@calm("The full-size image could not be opened")
def open_zoom_of_current(flip: bool = False) -> None:
    """The Z button of the label page sits outside its fragment, so it looks the pair up.
    ``flip`` (the V button): the responses' images flipped in one place, if they have any."""
    who = acting_user()
    view = current_view(ui.store(), who) if who else None
    if view is None:
        return
    what = view_zoom(view)
    if flip and not isinstance(what, PairZoom):
        flash.say("info", "This pair's responses have no images to flip.")
        return
    _open_zoom(what, flip)


# The zoom's choices: first "fit" (to the screen), the images as large as the dialog's room allows (never smaller
# than inline), then shares of the original size, scrolled in their frames.
FIT = "fit"
ZOOMS: dict[str, float | None] = {FIT: None} | {f"{int(z * 100)}%": z for z in (0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4)}


def _zoom_select(where: Any, key: str | None = None) -> float | None:
    got = where.selectbox(
        "Zoom", tuple(ZOOMS), index=0, key=key, format_func=lambda v: f"Zoom: {v}", label_visibility="collapsed"
    )
    return ZOOMS.get(got)


@st.dialog("Full-size image", width="large")
def zoom_dialog(sha: str) -> None:
    zoom_style()
    with st.container(key="mmrb-zoom"):
        _prompt_full(sha, None, st.columns([2, 5], vertical_alignment="center"))


def _prompt_full(sha: str, zoom_key: str | None, where: Sequence[Any]) -> None:
    """The prompt's image at the chosen zoom (``where``: the columns of the zoom and of the
    caption), or the placeholder with why it cannot be shown (as the label page shows it)."""
    got = original(ui.store(), sha)
    if isinstance(got, ImageProblem):
        st.html(image_html(None, item_id=sha, alt="the prompt's image", missing_reason=unavailable(got)))
        return
    z = _zoom_select(where[0], zoom_key)
    where[1].caption(f"Original size {got.width} x {got.height} pixels")
    src = slot_src(got.data, "zoom-prompt", got.mime)
    shown = ShownImage(src, "the prompt's image, full size", key=sha, width=got.width, height=got.height)
    st.html(one_image_html(shown, z))


VIEWS = ("side by side", "flip  (V)", "prompt image")


@st.dialog("Full-size images", width="large")
def pair_zoom_dialog(z: PairZoom) -> None:
    """Both responses' images at the chosen zoom (fit the screen first), side by side or in
    one place flipped with V (or a click), and the prompt's image; the controls on one line."""
    zoom_style()
    with st.container(key="mmrb-zoom"):
        n = max(len(z.left), len(z.right))
        cols = st.columns([3, 2, 2, 4] if n > 1 else [3, 2, 4], vertical_alignment="center")
        show, scale, size = cols[0], cols[-2], cols[-1]
        view = show.radio(
            "Show", VIEWS if z.prompt else VIEWS[:2], horizontal=True, key="zoom_view", label_visibility="collapsed"
        )
        if view == VIEWS[2] and z.prompt:
            _prompt_full(z.prompt, "zoom_level", (scale, size))
            return
        i = 0
        if n > 1:
            i = cols[1].radio(
                "Image",
                range(n),
                horizontal=True,
                key="zoom_index",
                format_func=lambda k: f"{k + 1} of {n}",
                label_visibility="collapsed",
            )
        zoom = _zoom_select(scale, "zoom_level")
        left = _full(z.left[i] if i < len(z.left) else None, "left", z.titles[0])
        right = _full(z.right[i] if i < len(z.right) else None, "right", z.titles[1])
        size.caption(
            "Original size: " + " · ".join(_size(t, im) for t, im in zip(z.titles, (left, right), strict=True))
        )
        if view == VIEWS[0]:
            st.html(side_by_side_html(left, right, zoom, z.titles))
        else:
            st.html(flip_html(z.token, left, right, zoom, z.titles))


def _size(title: str, im: ShownImage | None) -> str:
    if im is None or im.src is None or not im.width:
        return f"{title}: no image"
    return f"{title} {im.width} x {im.height} pixels"


def _full(ref: ImageRef | None, side: str, title: str) -> ShownImage | None:
    """A response's original image, served in the full-size view's ``side`` place."""
    if ref is None:
        return None
    alt = f"{title}, full size"
    if ref.status != "ok" or not ref.sha256:
        return ShownImage(None, alt, _missing(ref.status), key=ref.sha256 or side)
    got = original(ui.store(), ref.sha256)
    if isinstance(got, ImageProblem):
        return ShownImage(None, alt, unavailable(got), key=ref.sha256)
    w, h = (ref.width, ref.height) if ref.width and ref.height else (got.width, got.height)
    return ShownImage(slot_src(got.data, f"zoom-{side}", got.mime), alt, key=ref.sha256, width=w, height=h)


def zoom_if_asked() -> None:
    """The dialog, when the Z button (or key) asked for it on this run."""
    what = st.session_state.pop("zoom", None)
    if isinstance(what, PairZoom):
        pair_zoom_dialog(what)
    elif what:
        zoom_dialog(what)
