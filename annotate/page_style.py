"""The decision forms' compact look (label, My labels, adjudication): on the label page the
whole decision fits one screen from 1366x768 up.

Our own CSS, no data in it. Sent once per full run of a page that shows a form, outside
the label page's fragment (a fragment rerun does not send it again). Streamlit puts a
style-only ``st.html`` in its event container, so it takes no room on the page, and drops
it when another page runs. The pair's own heights are in annotate/render.py.
"""

from __future__ import annotations

import streamlit as st

# The containers of the label page, My labels' editor and the adjudication page.
_FORM = ".st-key-mmrb-label, .st-key-mmrb-edit, .st-key-mmrb-adjudicate"

# A scheme's form with more rows than today's (annotate/scheme_ui.py says how many more in its
# keymap element's data-rows): the prompt and the responses give up room for them, so that the
# decision still fits one screen (over the boxes' own inline heights, hence !important).
_SHORTER = "\n".join(
    f":is({_FORM}):has(.mmrb-keymap[data-rows='{n}']) .mmrb-response:not(.mmrb-whole) "
    f"{{ max-height: calc(30vh - {28 * n}px) !important; }}\n"
    f":is({_FORM}):has(.mmrb-keymap[data-rows='{n}']) :is(.mmrb-prompt, .mmrb-item img, .mmrb-rimage) "
    f"{{ max-height: calc(26vh - {18 * n}px) !important; }}"
    for n in range(1, 5)
)

LABEL_CSS = f"""
<style>
/* less blank page around the form: the header is 3.75rem tall */
[data-testid=stMainBlockContainer]:has(.st-key-mmrb-label, .st-key-mmrb-adjudicate) {{
  padding: 3.9rem 2rem 2rem 2rem;
}}
:is({_FORM}) {{ gap: .45rem; }}
:is({_FORM}) [data-testid=stVerticalBlock] {{ gap: .45rem; }}
:is({_FORM}) [data-testid=stHorizontalBlock] {{ gap: 1rem; }}
/* a radio's question on the same line as its options */
:is({_FORM}) [data-testid=stRadio] {{
  display: flex; flex-direction: row; align-items: center; flex-wrap: wrap; column-gap: .6rem;
}}
:is({_FORM}) [data-testid=stRadio] > [data-testid=stWidgetLabel] {{ margin: 0; min-height: 0; }}
:is({_FORM}) [data-testid=stWidgetLabel] p {{ font-size: .85rem; font-weight: 600; }}
:is({_FORM}) [data-testid=stRadioGroup] {{ min-height: 0; }}
:is({_FORM}) [data-testid=stRadioGroup] label {{ padding-top: 0; padding-bottom: 0; min-height: 0; }}
:is({_FORM}) [data-testid=stRadioGroup] p {{ font-size: .9rem; }}
:is({_FORM}) [data-testid=stTextArea] [data-testid=stWidgetLabel] {{ min-height: 0; margin-bottom: .1rem; }}
:is({_FORM}) [data-testid=stProgress] p {{ font-size: .85rem; }}
.mmrb-response p, .mmrb-prompt p {{ margin-bottom: .5rem; }}
/* the adjudication's decision docked to the bottom of the screen until its place scrolls into view:
   within the first screen at 1366x768 whatever the pair's length; a tall scheme's form scrolls inside.
   Streamlit wraps the container in a box of its own size: that wrapper is what sticks. */
[data-testid=stLayoutWrapper]:has(> .st-key-mmrb-adj-decide) {{
  position: sticky; bottom: 0; z-index: 3; background: #fff; box-shadow: 0 -8px 10px -8px rgba(0, 0, 0, .25);
}}
.st-key-mmrb-adj-decide {{ max-height: 45vh; overflow-y: auto; }}
.st-key-mmrb-adj-decide [data-testid=stForm] {{ padding: .5rem .9rem; background: #fff; }}
{_SHORTER}
/* Buttons whole at any width: Submit's (or Save changes') column and the page's buttons' are
   no narrower than their text (a sixth of 470 px cut Submit to "S..."). */
:is({_FORM}) [data-testid=stColumn]:has([data-testid=stFormSubmitButton]),
[data-testid=stColumn]:has(> [data-testid=stVerticalBlock] > [class*="st-key-act_"]) {{ min-width: max-content; }}
:is({_FORM}) [data-testid=stHorizontalBlock]:has([data-testid=stFormSubmitButton]) {{ flex-wrap: nowrap; }}
:is({_FORM}) [data-testid=stFormSubmitButton] button {{ white-space: nowrap; }}
/* Narrow (from 800 px wide with the sidebar open): the form's own width decides. The prompt goes
   under its image, not beside it one word a line; the page's margins shrink. */
:is({_FORM}) {{ container-type: inline-size; }}
@container (max-width: 720px) {{
  .mmrb-item {{ grid-template-columns: minmax(0, 1fr) !important; gap: .4rem !important; }}
  .mmrb-item > div {{ max-width: none !important; }}
}}
@media (max-width: 1100px) {{
  [data-testid=stMainBlockContainer]:has(:is({_FORM})) {{ padding-left: 1rem; padding-right: 1rem; }}
}}
</style>
"""


def compact_style() -> None:
    st.html(LABEL_CSS)


# The full-size view's dialog (annotate/pair_ui.py, its content in a container keyed mmrb-zoom):
# the whole viewport but a margin, a small title, little padding, so that the images at "fit"
# get the room render.ZOOM_FIT_HEIGHT counts on. Streamlit's dialog: a box of a fixed width
# holding the section (the close button, the title's h2, the content's div).
_ZOOM = "[role=dialog]:has(.st-key-mmrb-zoom)"
ZOOM_CSS = f"""
<style>
[data-testid=stDialog]:has(.st-key-mmrb-zoom) {{ padding: .5rem 0; }}
[data-testid=stDialog]:has(.st-key-mmrb-zoom) > div {{ width: calc(100vw - 1rem); max-width: none; margin: 0 .5rem; }}
{_ZOOM} {{ width: 100%; max-width: none; }}
{_ZOOM} > h2 {{ padding: .4rem 3rem 0 1rem; }}
{_ZOOM} > h2 p {{ font-size: 1.15rem; margin: 0; }}
{_ZOOM} > div:last-child {{ padding: .3rem 1rem .6rem; }}
{_ZOOM} > button {{ top: .4rem; }}
.st-key-mmrb-zoom {{ gap: .3rem; }}
/* the controls' one line, down to 800 px: choices whole, the original sizes in small print */
.st-key-mmrb-zoom [data-testid=stHorizontalBlock] {{ gap: .75rem; flex-wrap: nowrap; }}
.st-key-mmrb-zoom [data-testid=stColumn]:has([data-testid=stRadio], [data-testid=stSelectbox]) {{
  min-width: max-content; }}
.st-key-mmrb-zoom [data-testid=stRadioGroup] {{ flex-wrap: nowrap; }}
.st-key-mmrb-zoom [data-testid=stCaptionContainer] {{ font-size: .8rem; line-height: 1.25; }}
</style>
"""


def zoom_style() -> None:
    st.html(ZOOM_CSS)


# The sign-in page (found by its name box): one narrow card in the middle, not inputs as wide as
# the page. The page's own block is narrowed, so its notices and errors stand as wide as the card.
_SIGNIN = "[data-testid=stMainBlockContainer]:has(.st-key-signin_name)"
SIGNIN_CSS = f"""
<style>
{_SIGNIN} {{ max-width: 28rem; margin: 0 auto; padding: 12vh 1rem 2rem; }}
{_SIGNIN} h1 {{ font-size: 2rem; text-align: center; padding-bottom: 0; }}
{_SIGNIN} [data-testid=stCaptionContainer] {{ text-align: center; }}
</style>
"""


def signin_style() -> None:
    st.html(SIGNIN_CSS)
