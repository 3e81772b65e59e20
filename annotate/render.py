"""Rendering model output safely: Markdown yes, HTML never.

VLM responses can contain markup and script. Streamlit's Markdown must never interpret
HTML from them, so every ``<`` and ``&`` outside code is turned into an entity (shown as
the literal character). Code spans and code blocks are left alone: Markdown already shows
their content as text, and escaping there would show ``&lt;`` literally.
"""

from __future__ import annotations

import base64
import html
from functools import lru_cache

from markdown_it import MarkdownIt

# GFM tables as Streamlit renders them: a table row wins over a fence opening in block parsing
_md = MarkdownIt("commonmark").enable("table")


def _code_spans(s: str) -> list[tuple[int, int]]:
    """The code spans CommonMark finds in one paragraph: a backtick run not escaped by a
    backslash opens a span that closes at the next run of the same length, on any line."""
    spans, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":  # a backslash escape outside code: the next character is literal
            i += 2
            continue
        if c != "`":
            i += 1
            continue
        j = i
        while j < n and s[j] == "`":
            j += 1
        k = j
        while (k := s.find("`", k)) != -1:
            m = k
            while m < n and s[m] == "`":
                m += 1
            if m - k == j - i:
                spans.append((i, m))
                break
            k = m
        i = m if k != -1 else j
    return spans


def _escape_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;")


def _escape_inline(s: str) -> str:
    """Escape everything but code spans that stay on one line and hold no "|". Across lines
    an HTML block could interrupt the paragraph before inline parsing, and a table splits
    cells before it sees code spans: such spans are escaped too, which at worst shows
    "&lt;" inside what was meant as code. Escaping never moves a backtick or a backslash, so
    the spans found here are the ones the Markdown renderer finds."""
    out, pos = [], 0
    for a, b in _code_spans(s):
        out.append(_escape_text(s[pos:a]))
        span = s[a:b]
        out.append(span if "\n" not in span and "|" not in span else _escape_text(span))
        pos = b
    out.append(_escape_text(s[pos:]))
    return "".join(out)


def _code_lines(text: str, n: int) -> list[bool]:
    code = [False] * n
    for tok in _md.parse(text):
        if tok.type in ("fence", "code_block") and tok.map:
            for k in range(*tok.map):  # an unclosed fence runs to the end: still code
                code[k] = True
    return code


def _has_html(text: str) -> bool:
    tokens = _md.parse(text)
    return any(t.type == "html_block" for t in tokens) or any(
        c.type == "html_inline" for t in tokens if t.children for c in t.children
    )


def _assemble(lines: list[str], code: list[bool], keep_code_spans: bool) -> str:
    out, para = [], []

    def flush() -> None:
        if para:
            chunk = "\n".join(para)
            out.append(_escape_inline(chunk) if keep_code_spans else _escape_text(chunk))
            para.clear()

    for line, is_code in zip(lines, code):
        if is_code:
            flush()
            out.append(line)
        else:
            para.append(line)
    flush()
    return "\n".join(out)


@lru_cache(maxsize=4096)  # a pair's texts come back on every rerun until it is submitted
def safe_markdown(text: str) -> str:
    """Markdown source in which no HTML can survive, for ``st.markdown``.

    Escaping a line can change the block structure around it (an HTML block that ended
    before an indented code block becomes a paragraph that absorbs it), and list items or
    block quotes split paragraphs where a simple scan cannot see it. So the result is
    re-parsed and checked: code lines that stopped being code are escaped too, until
    nothing changes; if HTML still survives in a code span, code spans are escaped as well,
    which at worst shows "&lt;" inside what was meant as code.
    """
    text = text.replace("\r\n", "\n").replace("\x00", "")
    lines = text.split("\n")
    code = _code_lines(text, len(lines))
    for keep_code_spans in (True, False):
        while True:
            out = _assemble(lines, code, keep_code_spans)
            still = _code_lines(out, len(lines))
            lost = [k for k, c in enumerate(code) if c and not still[k]]
            if not lost:
                break
            for k in lost:
                code[k] = False
        if not _has_html(out):
            break
    return out


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


# -- the pair as HTML: one element for the item, one for both responses ----------------------
# Each Streamlit element costs the browser several milliseconds per rerun (React, styled
# components, its Markdown renderer), so the parts of a pair that are only read are built here
# as plain HTML. markdown-it with html off shows every tag of model output as text; images
# are off so a response cannot make the browser fetch a remote URL; st.html sanitises again.
_to_html = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")


@lru_cache(maxsize=4096)
def markdown_html(text: str) -> str:
    """Model output or a prompt rendered from Markdown, with no HTML of its own left."""
    return _to_html.render(text.replace("\r\n", "\n").replace("\x00", ""))


def item_html(image_block: str, category: str, prompt: str) -> str:
    """The prompt's image beside the prompt."""
    return (
        '<div class="mmrb-item" style="display:grid;grid-template-columns:5fr 6fr;gap:1.5rem;align-items:start">'
        f"<div>{image_block}</div>"
        '<div class="mmrb-prompt">'
        f'<div style="font-size:.85rem;color:#808495">Prompt · {escape_plain(category)}</div>'
        f"{markdown_html(prompt)}</div></div>"
    )


def responses_html(token: str, left: str, right: str) -> str:
    """Both responses side by side, each in its own scrolling box, marked with the pair's token."""

    def box(side: str, text: str) -> str:
        return (
            f'<div><div style="font-weight:600;margin-bottom:.35rem">{side.title()} response</div>'
            f'<div class="mmrb-response mmrb-response-{side}" data-pair="{escape_plain(token)}" '
            'style="height:300px;overflow-y:auto;border:1px solid rgba(49,51,63,.2);border-radius:.5rem;'
            f'padding:.25rem 1rem">{markdown_html(text)}</div></div>'
        )

    return ('<div class="mmrb-responses" style="display:grid;grid-template-columns:1fr 1fr;gap:1rem">'
            + box("left", left) + box("right", right) + "</div>")
