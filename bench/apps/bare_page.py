"""A bare Streamlit page of the label page's shape, for bench/annotate.py's reference figure.

No store, no sign-in, no image file: two ~1,500-character Markdown responses in scrolling
boxes, three radios and a submit button in a form, a prompt line and a tiny inline image.
What is left of its time is Streamlit's own rerun and render on this machine.
``streamlit run bench/apps/bare_page.py -- --minimal`` drops the form and the Markdown (four elements).
"""

import sys

import streamlit as st

from annotate.render import pair_token

MINIMAL = "--minimal" in sys.argv
n = st.session_state.setdefault("n", 0)
TEXT = (
    "The image shows a bar chart of quarterly revenue. **Q3** is the highest at 42 million; "
    "Q1 is the lowest. The trend is upward except for a dip in Q4.\n\n- Q1: 18\n- Q2: 27\n- Q3: 42\n- Q4: 35\n\n"
) * 8
PIXEL = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"


def submit() -> None:
    st.session_state["n"] += 1


tk = pair_token(str(n))
if MINIMAL:
    with st.container(key=f"resp_left_{tk}"):
        st.text(f"left {n}")
    with st.container(key=f"resp_right_{tk}"):
        st.text(f"right {n}")
    st.button("Submit", key=f"q_submit_{tk}", on_click=submit)
else:
    st.markdown(f"Question {n}: what is in the picture?")
    with st.form(f"f_{tk}", border=False):
        left, right = st.columns(2)
        for col, side in ((left, "left"), (right, "right")):
            with col:
                with st.container(height=300, key=f"resp_{side}_{tk}"):
                    st.markdown(TEXT[:1500] + f" ({side} {n})")
                st.radio(side, ("correct", "incorrect", "unsure"), index=None, horizontal=True, key=f"q_{side}_{tk}")
        st.radio("preference", ("left", "tie", "right"), index=None, horizontal=True, key=f"q_pref_{tk}")
        st.form_submit_button("Submit", key=f"q_submit_{tk}", on_click=submit)
st.html(f'<img data-item="i{n}" src="{PIXEL}">')
