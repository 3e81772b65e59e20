"""Rendering model output safely: Markdown yes, HTML never.

VLM responses can contain markup and script. Streamlit's Markdown must never interpret
HTML from them, so every ``<`` and ``&`` outside code is turned into an entity (shown as
the literal character). Code spans and code blocks are left alone: Markdown already shows
their content as text, and escaping there would show ``&lt;`` literally.
"""

from __future__ import annotations

import base64
import html
import re
from functools import lru_cache

from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark")
# A backtick run opens a code span unless escaped; it closes at the next run of the same
# length. Only spans within one line and without "|" are trusted: across lines an HTML block
# can interrupt the paragraph, and a table splits cells before it sees code spans. Anything
# else is escaped, which at worst shows "&lt;" inside what was meant as code.
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)([^\n|`]+?|[^\n|]+?)(?<!`)\1(?!`)")


def _escape_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;")


def _escape_inline(s: str) -> str:
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(s):
        out.append(_escape_text(s[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_escape_text(s[pos:]))
    return "".join(out)


@lru_cache(maxsize=4096)  # a pair's texts come back on every rerun until it is submitted
def safe_markdown(text: str) -> str:
    """Markdown source in which no HTML can survive, for ``st.markdown``."""
    text = text.replace("\r\n", "\n").replace("\x00", "")
    lines = text.split("\n")
    code = [False] * len(lines)
    for tok in _md.parse(text):
        if tok.type in ("fence", "code_block") and tok.map:
            for n in range(*tok.map):  # an unclosed fence runs to the end: still code
                code[n] = True
    out, para = [], []

    def flush() -> None:
        if para:
            out.append(_escape_inline("\n".join(para)))
            para.clear()

    for line, is_code in zip(lines, code):
        if is_code:
            flush()
            out.append(line)
        else:
            para.append(line)
    flush()
    return "\n".join(out)


def escape_plain(text: str) -> str:
    """For short labels that go inside HTML we build ourselves."""
    return html.escape(text, quote=True)


def image_html(jpeg: bytes | None, *, item_id: str, alt: str, missing_reason: str | None = None,
               src: str | None = None) -> str:
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
        'style="max-width:100%;max-height:42vh;object-fit:contain;border-radius:6px"></div>'
    )
