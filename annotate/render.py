"""Every string from the data is shown through this module: Markdown yes, HTML never, and
nothing that makes the browser fetch a URL.

Two kinds of place show data strings:
- ``plain(s)``: inside Streamlit's own Markdown (st.markdown, st.caption, st.info/warning/
  error/success, st.toast, expander and widget labels). Streamlit's Markdown renders images,
  links, HTML-like syntax, math and colour directives, so every Markdown character is
  escaped: ids, names, categories and messages show as text.
- ``markdown_html(s)``: prompts, responses, rationales, notes and guidelines, rendered from
  Markdown to HTML for ``st.html`` by markdown-it with HTML off, images shown as text and
  links only to http(s) or mailto.
Widget options (selectbox, multiselect), st.dataframe cells, st.text and st.code show text
as text and need neither.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from curate.model import category_title
from curate.seeding import hex_hash
from curate.sides import is_side, preference_to_screen
from curate.wording import EMPTY, seconds, utc_time

if TYPE_CHECKING:
    from curate.model import Label

    from .adjudication import AutoCheck

_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
# GFM turns "http://", "www." and "a@b.c" in plain text into links after parsing, escapes or
# not: an invisible word joiner (U+2060) breaks the pattern.
_AUTOLINK = re.compile(r"(?i)(https?:(?=/)|www(?=\.)|@(?=[-\w]))")  # GFM takes "_@-.a" as an e-mail address too


# The pair fits one screen from 1366x768 up (see annotate/page_style.py): the image and the
# prompt within ITEM_HEIGHT, each response box within RESPONSE_HEIGHT (longer text scrolls).
ITEM_HEIGHT = "26vh"
RESPONSE_HEIGHT = "30vh"
_MUTED = "font-size:.85rem;color:#808495"
# A response's image stands in a box of this height and the column's width, the picture
# scaled to fit (object-fit: contain): both responses' images are shown at the same size.
RESPONSE_IMAGE_HEIGHT = "26vh"
# A pair whose responses have images and whose prompt has none (text to image) gives the
# prompt image's room to the responses.
TALL_RESPONSE_HEIGHT, TALL_IMAGE_HEIGHT = "52vh", "46vh"
# A response with images is shown whole, never in a scroll box (a later part could go unseen):
# its images share the room of one, less a line for each text part, down to MIN_IMAGE_HEIGHT;
# below that the page scrolls instead of the pictures shrinking further.
TEXT_PART_ROOM = "2.2rem"
MIN_IMAGE_HEIGHT = "18vh"


def plain(value: object) -> str:
    """A data string (or any value) as Markdown source that shows it as text: every ASCII
    punctuation character is backslash-escaped (CommonMark allows that for each of them),
    so nothing in it can open an image, link, HTML tag, code span, math or a directive, and
    a word joiner keeps a bare URL or e-mail address from becoming a link. Line breaks stay
    line breaks. Leading spaces and tabs go: Markdown drops them from a paragraph's lines
    anyway, and four of them would turn the line into a code block that shows the escapes."""
    s = "" if value is None else str(value)
    s = _AUTOLINK.sub("\\1\u2060", s.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", ""))
    return "  \n".join(_PUNCT.sub(r"\\\1", line.lstrip(" \t")) for line in s.split("\n"))


def escape_plain(text: str) -> str:
    """For short labels that go inside HTML we build ourselves."""
    return html.escape(text, quote=True)


def image_html(
    jpeg: bytes | None, *, item_id: str, alt: str, missing_reason: str | None = None, src: str | None = None
) -> str:
    """The item's image as one self-contained element, keyed by item.

    The element is replaced (never updated in place) when the item changes, so the previous
    item's picture can never stand beside the new prompt while the new one loads. ``src``, a
    URL the server serves the JPEG from, keeps the page message small; without it the JPEG
    is embedded.
    """
    key = escape_plain(item_id)
    if jpeg is None:
        reason = escape_plain(missing_reason or "no image")
        return (
            f'<div class="mmrb-image mmrb-missing" data-item="{key}" role="img" aria-label="image missing" '
            'style="border:2px dashed #b0b0b0;border-radius:8px;padding:2.5rem 1rem;text-align:center;'
            'color:#555;background:#f6f6f6">'
            f'<div style="font-size:1.1rem;font-weight:600">Image missing</div>'
            f'<div style="font-size:.9rem;margin-top:.3rem">{reason}</div>'
            '<div style="font-size:.85rem;margin-top:.3rem">Label from the text if you can, '
            "or flag the pair as <b>broken image</b>.</div></div>"
        )
    if src is None:
        src = "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
    return (
        f'<div class="mmrb-image" data-item="{key}" style="text-align:center">'
        f'<img src="{escape_plain(src)}" alt="{escape_plain(alt)}" data-item="{key}" '
        f'style="max-width:100%;max-height:{ITEM_HEIGHT};object-fit:contain;border-radius:6px"></div>'
    )


# -- Markdown as HTML: the pair, notes, guidelines --------------------------------------------
# Each Streamlit element costs the browser several milliseconds per rerun (React, styled
# components, its Markdown renderer), so the parts of a pair that are only read are built here
# as plain HTML. markdown-it with html off shows every tag of model output as text; an image
# is shown as its alt text and address, never fetched; a link must be http(s) or mailto (no
# javascript: or data:); st.html sanitises again.
_LINK_OK = re.compile(r"^(https?:|mailto:|[^:/?#]*(?:[/?#]|$))", re.IGNORECASE)  # a scheme we allow, or none


class _Markdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        return bool(_LINK_OK.match(url.strip()))


_to_html = _Markdown("commonmark", {"html": False}).enable("table")


def _image_as_text(renderer, tokens, idx, options, env) -> str:
    tok = tokens[idx]
    alt = renderer.renderInlineAsText(tok.children or [], options, env)
    src = escape_plain(tok.attrGet("src") or "")
    return f'<span class="mmrb-image-ref">[image: {escape_plain(alt)} &lt;{src}&gt;]</span>'


_to_html.add_render_rule("image", _image_as_text)


@lru_cache(maxsize=4096)
def markdown_html(text: str) -> str:
    """Markdown from the data (a prompt, a response, a rationale, the guidelines) as HTML
    with no HTML, image or script of its own."""
    return _to_html.render(text.replace("\r\n", "\n").replace("\x00", ""))


def item_html(image_block: str, category: str, prompt: str, *, below: str = "") -> str:
    """The prompt's image beside the prompt, both within ITEM_HEIGHT (a long prompt scrolls).
    ``below``: HTML built here (e.g. reference_html) shown under the prompt. Without an
    image block (a pair whose responses are the images) the prompt takes the whole width.
    The category is shown by its title (``curate.model.category_title``), not its id."""
    head = f'<div style="font-size:.85rem;color:#808495">Prompt · {escape_plain(category_title(category))}</div>'
    if not image_block:
        return (
            f'<div class="mmrb-item"><div class="mmrb-prompt" style="max-height:{ITEM_HEIGHT};overflow-y:auto">'
            f"{head}{markdown_html(prompt)}{below}</div></div>"
        )
    return (
        '<div class="mmrb-item" style="display:grid;grid-template-columns:minmax(0,auto) minmax(0,1fr);'
        'gap:1.25rem;align-items:start">'
        f'<div style="max-width:48vw">{image_block}</div>'
        f'<div class="mmrb-prompt" style="max-height:{ITEM_HEIGHT};overflow-y:auto">'
        f"{head}{markdown_html(prompt)}{below}</div></div>"
    )


def pair_token(pair_id: str) -> str:
    """A short, class-name-safe key of one pair (or item) for the page's elements and served
    image names; stored nowhere (bench/annotate.py finds the page's elements by it)."""
    return hex_hash(pair_id, n=10)


@dataclass(frozen=True)
class ShownImage:
    """A response's image as the page shows it: the URL the server serves it from (or a
    data: URI), or None and why it is missing. ``key`` (the image's sha256, or its place
    when missing) marks the element; ``alt`` says which image it is."""

    src: str | None
    alt: str
    missing_reason: str | None = None
    key: str = ""
    width: int | None = None
    height: int | None = None


# A response as the page shows it: its Markdown text (a plain-text response), or its parts in
# order, each a text part's Markdown or an image.
Shown = str | Sequence[str | ShownImage]


def _missing_box(img: ShownImage, style: str, cls: str = "mmrb-rimage", title: str = "Image missing") -> str:
    return (
        f'<div class="{cls} mmrb-missing" data-image="{escape_plain(img.key)}" role="img" '
        f'aria-label="{title.lower()}" style="{style};border:2px dashed #b0b0b0;background:#f6f6f6;color:#555;'
        "display:flex;flex-direction:column;align-items:center;justify-content:center;text-align:center;"
        'padding:.5rem;box-sizing:border-box">'
        f'<div style="font-size:1rem;font-weight:600">{title}</div>'
        f'<div style="font-size:.85rem;margin-top:.3rem">{escape_plain(img.missing_reason or "no image")}</div></div>'
    )


def response_image_html(img: ShownImage, side: str, height: str = RESPONSE_IMAGE_HEIGHT) -> str:
    """One image of a response in its box (``height`` by the column's width), or the
    placeholder saying why it is missing, in a box of the same size."""
    box = f"height:{height};width:100%;margin:.3rem 0;border-radius:6px"
    if img.src is None:
        return _missing_box(img, box)
    return (
        f'<div class="mmrb-rimage" style="{box};background:#f0f2f6">'
        f'<img src="{escape_plain(img.src)}" alt="{escape_plain(img.alt)}" data-image="{escape_plain(img.key)}" '
        f'data-side="{escape_plain(side)}" style="display:block;width:100%;height:100%;object-fit:contain"></div>'
    )


def _response_body(shown: Shown, side: str, image_height: str) -> str:
    if isinstance(shown, str):
        return markdown_html(shown)
    return "".join(
        markdown_html(b) if isinstance(b, str) else response_image_html(b, side, image_height) for b in shown
    )


def response_image_height(left: Shown, right: Shown, *, tall: bool = False) -> str:
    """The height of every image box of a pair (the same on both sides): one image's room
    (RESPONSE_IMAGE_HEIGHT, or TALL_IMAGE_HEIGHT) less TEXT_PART_ROOM per text part, shared
    by the images of the side with the most, never under MIN_IMAGE_HEIGHT."""
    sides = [s for s in (left, right) if not isinstance(s, str)]
    images = max((sum(isinstance(b, ShownImage) for b in s) for s in sides), default=0)
    texts = max((sum(isinstance(b, str) and bool(b.strip()) for b in s) for s in sides), default=0)
    room = TALL_IMAGE_HEIGHT if tall else RESPONSE_IMAGE_HEIGHT
    if images <= 1 and not texts:
        return room
    return f"max({MIN_IMAGE_HEIGHT}, calc(({room} - {texts} * {TEXT_PART_ROOM}) / {max(images, 1)}))"


def responses_html(
    token: str,
    left: Shown,
    right: Shown,
    *,
    titles: tuple[str, str] = ("Left response", "Right response"),
    tall: bool = False,
) -> str:
    """Both responses side by side, marked with the pair's token. ``titles`` are shown as text.
    Plain text: each box is as tall as the longer response, up to RESPONSE_HEIGHT, and
    scrolls beyond it: short answers take little room and the controls under them stay on
    screen. A response with images is given as its parts: text and images in order, each
    image in a box of the same size on both sides (response_image_html, response_image_height).
    Such a pair is shown whole (class ``mmrb-whole``, no scroll box: an interleaved response's
    later parts are on the page, if need be below the fold); ``tall``: the prompt has no
    image, the responses take its room."""
    whole = not (isinstance(left, str) and isinstance(right, str))
    image_height = response_image_height(left, right, tall=tall)
    height = TALL_RESPONSE_HEIGHT if tall else RESPONSE_HEIGHT
    fit = "" if whole else f"max-height:{height};overflow-y:auto;"

    def box(side: str, title: str, shown: Shown) -> str:
        return (
            '<div style="display:flex;flex-direction:column">'
            f'<div style="font-weight:600;font-size:.9rem;margin-bottom:.2rem">{escape_plain(title)}</div>'
            f'<div class="mmrb-response mmrb-response-{side}{" mmrb-whole" if whole else ""}" '
            f'data-pair="{escape_plain(token)}" style="flex:1;{fit}border:1px solid rgba(49,51,63,.2);'
            f'border-radius:.5rem;padding:.4rem .9rem .1rem;font-size:.95rem">'
            f"{_response_body(shown, side, image_height)}</div></div>"
        )

    return (
        '<div class="mmrb-responses" style="display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);'
        'gap:1rem">' + box("left", titles[0], left) + box("right", titles[1], right) + "</div>"
    )


# -- the full-size view: the prompt's image, or two response images side by side or flipped ----
# At "fit" (zoom None, the default) each image fills the room the dialog leaves it: the viewport's
# height less the dialog's one line of controls and its title (annotate/page_style.py's ZOOM_CSS
# keeps those small), and its frame's width; the picture scaled to fit, never scrolled. Inline the
# same picture stands in RESPONSE_IMAGE_HEIGHT or TALL_IMAGE_HEIGHT: fit is larger.
ZOOM_FIT_HEIGHT = "calc(100vh - 9rem)"  # also the most a frame shows at a zoom: beyond, it scrolls


def _fit_box(zoom: float | None, w: int, h: int) -> str:
    return f"width:100%;height:{ZOOM_FIT_HEIGHT}" if zoom is None else f"width:{w}px;height:{h}px"


def _zoom_img(img: ShownImage | None, side: str, box: str, extra: str = "") -> str:
    """An image in a box (``box``: its CSS size; the picture scaled to fit it), or the placeholder."""
    if img is None:  # not a missing file: this response has fewer images than the other
        return _missing_box(
            ShownImage(None, "", "This response has no image at this place."),
            f"{box};{extra}",
            f"mmrb-zoom-image mmrb-zoom-{side}",
            title="No image",
        )
    if img.src is None:
        return _missing_box(img, f"{box};{extra}", f"mmrb-zoom-image mmrb-zoom-{side}")
    return (
        f'<img class="mmrb-zoom-image mmrb-zoom-{side}" src="{escape_plain(img.src)}" alt="{escape_plain(img.alt)}" '
        f'data-image="{escape_plain(img.key)}" data-side="{escape_plain(side)}" '
        f'style="{box};max-width:none;object-fit:contain;display:block;{extra}">'
    )


def _frame(inner: str) -> str:
    """A zoomed image's scrolling frame (at fit the image is the frame's size and nothing scrolls)."""
    return (
        f'<div class="mmrb-zoom-frame" style="overflow:auto;max-height:{ZOOM_FIT_HEIGHT};'
        f'border:1px solid rgba(49,51,63,.2);border-radius:.4rem">{inner}</div>'
    )


def zoom_box(left: ShownImage | None, right: ShownImage | None, zoom: float) -> tuple[int, int]:
    """The box both images are shown in at ``zoom``: the larger of their sizes, so that both
    stand at the same size and place."""
    ws = [i.width for i in (left, right) if i is not None and i.width]
    hs = [i.height for i in (left, right) if i is not None and i.height]
    return max(1, round(max(ws, default=512) * zoom)), max(1, round(max(hs, default=512) * zoom))


def one_image_html(img: ShownImage, zoom: float | None) -> str:
    """The prompt's image alone at ``zoom`` (None: fit), in its frame."""
    w, h = zoom_box(img, None, zoom or 1.0)
    return _frame(_zoom_img(img, "prompt", _fit_box(zoom, w, h)))


def side_by_side_html(
    left: ShownImage | None,
    right: ShownImage | None,
    zoom: float | None,
    titles: tuple[str, str] = ("Left", "Right"),
) -> str:
    """The two images next to each other at ``zoom`` (None: fit), each in its own frame."""
    w, h = zoom_box(left, right, zoom or 1.0)

    def col(side: str, title: str, img: ShownImage | None) -> str:
        return (
            f'<div><div style="{_MUTED};font-weight:600">{escape_plain(title)}</div>'
            f"{_frame(_zoom_img(img, side, _fit_box(zoom, w, h)))}</div>"
        )

    return (
        '<div class="mmrb-side-by-side" style="display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);'
        f'gap:.8rem">{col("left", titles[0], left)}{col("right", titles[1], right)}</div>'
    )


def flip_html(
    token: str,
    left: ShownImage | None,
    right: ShownImage | None,
    zoom: float | None,
    titles: tuple[str, str] = ("Left", "Right"),
) -> str:
    """The two images in one place at ``zoom`` (None: fit), one shown at a time: the checkbox
    (its label, or the key that clicks it) flips between them in the browser, with no rerun,
    so the scroll position stays and a small difference shows as a change in place."""
    w, h = zoom_box(left, right, zoom or 1.0)
    box = _fit_box(zoom, w, h)
    tk = escape_plain(token)
    on = ".mmrb-flip:has(.mmrb-flip-toggle:checked)"  # flipped: the right one shows
    return (
        "<style>"
        f".mmrb-flip .mmrb-flip-to-left, {on} .mmrb-flip-to-right, {on} .mmrb-zoom-left,"
        ".mmrb-flip .mmrb-zoom-right{visibility:hidden}"
        f"{on} .mmrb-flip-to-left, {on} .mmrb-zoom-right{{visibility:visible}}"
        ".mmrb-flip .mmrb-flip-to-left, .mmrb-flip .mmrb-flip-to-right{grid-area:1/1}"
        "</style>"
        f'<div class="mmrb-flip" data-pair="{tk}">'
        '<label style="display:inline-flex;align-items:center;gap:.5rem;cursor:pointer;font-size:.9rem;'
        'margin-bottom:.2rem">'
        f'<input type="checkbox" class="mmrb-flip-toggle" data-pair="{tk}">'
        '<span style="display:grid">'
        f'<span class="mmrb-flip-to-right">Showing <b>{escape_plain(titles[0])}</b> · flip to '
        f"{escape_plain(titles[1])} (V)</span>"
        f'<span class="mmrb-flip-to-left">Showing <b>{escape_plain(titles[1])}</b> · flip to '
        f"{escape_plain(titles[0])} (V)</span></span></label>"
        + _frame(
            f'<div style="display:grid;{box}">'
            f"{_zoom_img(left, 'left', box, 'grid-area:1/1')}{_zoom_img(right, 'right', box, 'grid-area:1/1')}</div>"
        )
        + "</div>"
    )


# -- the lead's adjudication: the reference, the automatic check and every label ---------------


def reference_html(reference: str | None, auto: AutoCheck | None) -> str:
    """The item's reference answer and the automatic correctness verdict, where known."""
    ref = (
        f'<div style="{_MUTED};margin-top:.6rem">Reference answer</div>{markdown_html(reference)}'
        if reference
        else f'<div style="{_MUTED};margin-top:.6rem">No reference answer.</div>'
    )
    if auto is None:
        return ref + f'<div style="{_MUTED}">No automatic correctness verdict.</div>'

    def one(name: str, verdict: str | None, read: str | None) -> str:
        got = "not decided" if verdict is None else f"<b>{escape_plain(verdict)}</b>"
        return f"{name} {got}" + (f" (read &ldquo;{escape_plain(read)}&rdquo;)" if read else "")

    method = f" by {escape_plain(auto.method)}" if auto.method else ""
    return ref + (
        f'<div class="mmrb-auto" style="font-size:.9rem">Automatic verdict{method}: '
        f"{one('first', auto.first, auto.read_first)} · {one('second', auto.second, auto.read_second)}</div>"
    )


def as_seen(answer: str | None, left: str | None) -> str:
    """A label's answer as stored; a side ("first", "second") also as the annotator saw it
    ("first (their right)"), which is how their rationale names it."""
    if not answer:
        return "–"
    if left is not None and is_side(answer) and is_side(left):
        return f"{answer} (their {preference_to_screen(answer, left)})"
    return answer


def labels_html(
    labels: Sequence[Label],
    differ: Sequence[str] = (),
    left_of: Mapping[str, str] | None = None,
    columns: Sequence[tuple[str, str]] | None = None,
    answers: Callable[[Label], Mapping[str, str | None]] | None = None,
) -> str:
    """Every label of a pair as a table, the fields they differ on marked: which response the
    annotator saw on the left (``left_of``; their rationale says left and right), the answers,
    the seconds it took and when it was saved (in UTC, with when it was first saved if it was
    edited since), flag and rationale (Markdown, as everywhere). ``columns`` and ``answers``:
    a scheme's fields (annotate/adjudication.py) instead of Multimodal RewardBench's."""
    left_of = left_of or {}
    cols = columns or (("correctness_first", "First is"), ("correctness_second", "Second is"), ("preference", "Better"))

    def answer_of(lab: Label) -> Mapping[str, str | None]:
        return answers(lab) if answers is not None else {name: getattr(lab, name) for name, _ in cols}

    mark = "background:#fff3cd"

    def cell(text: str, style: str = "") -> str:
        return f'<td style="padding:.25rem .5rem;vertical-align:top;{style}">{text}</td>'

    head = "".join(
        f'<th style="padding:.25rem .5rem;text-align:left;white-space:nowrap;{mark if name in differ else ""}">'
        f"{title}</th>"
        for name, title in (
            ("", "Annotator"),
            ("", "Saw on the left"),
            *cols,
            ("", "Took"),
            ("", "Saved"),
            ("", "Flag"),
            ("", "Rationale"),
        )
    )
    rows = []
    for lab in labels:
        secs = EMPTY if lab.seconds is None else f"{seconds(lab.seconds)} s"
        last = utc_time(lab.updated_at or lab.created_at)
        saved = escape_plain(last)
        if lab.created_at and lab.updated_at and utc_time(lab.created_at) != last:
            saved += f"<br><span style='{_MUTED}'>first {escape_plain(utc_time(lab.created_at))}</span>"
        flag = "" if not lab.flag else escape_plain(lab.flag) + (markdown_html(lab.flag_note) if lab.flag_note else "")
        rows.append(
            "<tr>"
            + cell(f"<b>{escape_plain(lab.annotator)}</b>")
            + cell(escape_plain(left_of.get(lab.annotator) or EMPTY))
            + "".join(
                cell(escape_plain(as_seen(got.get(name), left_of.get(lab.annotator))), mark if name in differ else "")
                for got in (answer_of(lab),)
                for name, _ in cols
            )
            + cell(secs, "white-space:nowrap")
            + cell(saved, "white-space:nowrap")
            + cell(flag)
            + cell(markdown_html(lab.rationale) if lab.rationale else "")
            + "</tr>"
        )
    return (
        "<style>.mmrb-labels td p{margin:0 0 .3rem !important;font-size:inherit !important}"
        ".mmrb-labels td p:last-child{margin:0 !important}</style>"
        '<table class="mmrb-labels" style="width:100%;border-collapse:collapse;font-size:.9rem">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
