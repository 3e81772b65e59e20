"""Lead: pairs whose labels disagree, unblinded, with all the evidence (the image, the prompt,
the reference and the automatic verdict, every label); record the final decision (kept apart).
The figures are in annotate/adjudication.py; this page renders and records."""

from collections.abc import Callable, Sequence
from functools import partial

import streamlit as st

from annotate import flash, keys, ui
from annotate.adjudication import (
    MMRB,
    SHOWN,
    Decision,
    Disagreement,
    answers,
    case,
    decided,
    decisions,
    disagreements,
    narrow,
    next_pending,
    record_decision,
    seen_answers,
    titles,
)
from annotate.page_style import compact_style
from annotate.pair_ui import image_block, image_zoom_button, pair_responses, zoom_if_asked, zoom_of
from annotate.render import item_html, labels_html, pair_token, plain, reference_html
from annotate.session_ui import require
from annotate.widgets import key_listener
from curate.model import (
    CORRECTNESS,
    SCREEN_PREFERENCES,
    Adjudication,
    Correctness,
    Pair,
    Preference,
    category_title,
)
from curate.schemes import Scheme
from curate.sides import preference_from_screen
from curate.wording import snippet


def _decide(col, x: Decision, was: str | None, tk: str) -> object:
    """One of a scheme's decisions: a radio of its options (or none), several for a multi-select."""
    if x.multi:
        picked = [v for v in (was or "").split(", ") if v]
        return col.multiselect(x.title, x.options, default=picked, key=f"adj_{x.key}_{tk}")
    named = dict(zip(x.options, x.names or x.options, strict=False))

    def title(v: str | None) -> str:
        return "no decision" if v is None else v if named.get(v, v) == v else f"{v} · {named[v]}"

    opts: list[str | None] = [None, *x.options]
    at = opts.index(was) if was in opts else 0
    return col.radio(x.title, opts, index=at, horizontal=True, key=f"adj_{x.key}_{tk}", format_func=title)


Decide = Callable[[bool, str], Adjudication]  # (exclude, note) -> the decision recorded


def _mmrb_fields(a, b, prev: Adjudication | None, tk: str, pair: Pair, admin: str) -> Decide:
    """Multimodal RewardBench's decisions: each response's correctness, the final preference."""
    corr: tuple[Correctness | None, ...] = (None, *CORRECTNESS)
    # first is shown on the left: the preferences in the label form's order, A T D picking them
    prefs: tuple[Preference, ...] = tuple(
        p for v in SCREEN_PREFERENCES if (p := preference_from_screen(v, "first")) is not None
    )
    pref_keys = keys.option_keys(keys.ADJ_KEYS, "adj_pref")
    cf = a.radio(
        f"First ({SHOWN['first']}) is",
        corr,
        index=corr.index(prev.correctness_first) if prev else 0,
        horizontal=True,
        key=f"adj_first_{tk}",
        format_func=lambda v: v or "no decision",
    )
    cs = b.radio(
        f"Second ({SHOWN['second']}) is",
        corr,
        index=corr.index(prev.correctness_second) if prev else 0,
        horizontal=True,
        key=f"adj_second_{tk}",
        format_func=lambda v: v or "no decision",
    )
    pref = a.radio(
        "Final preference",
        prefs,
        index=prefs.index(prev.preference) if prev and prev.preference in prefs else None,
        horizontal=True,
        key=f"adj_pref_{tk}",
        format_func=lambda v: f"{v}{f' ({SHOWN[v]})' if v in SHOWN else ''}  ({pref_keys[prefs.index(v)]})",
    )
    return lambda excl, note: Adjudication(pair.id, admin, pref, cf, cs, exclude=excl, note=note)


def _scheme_fields(
    halves: Sequence, scheme: Scheme, prev: Adjudication | None, tk: str, pair: Pair, admin: str
) -> Decide:
    """A declared scheme's decisions (annotate/adjudication.py) in ``halves`` (one column when
    there is a single decision: a scale's points then take fewer lines of the docked form)."""
    before = answers(scheme, prev) if prev is not None else {}
    chosen = {
        x.key: _decide(halves[i % len(halves)], x, before.get(x.key), tk) for i, x in enumerate(decisions(scheme))
    }
    return lambda excl, note: decided(scheme, pair, admin, chosen, exclude=excl, note=note)


who = require("admin_adjudicate")
s = ui.store()
st.subheader("Adjudication")
flash.show()
rows = disagreements(s)
if not rows:
    st.info("No disagreements to adjudicate.")
    st.stop()
pending = sum(r.pending for r in rows)
st.caption(f"Pairs whose labels disagree: {len(rows)}, not yet decided: {pending}.")

cat_col, field_col = st.columns(2)
cats = cat_col.multiselect(
    "Category", sorted({r.category for r in rows}), format_func=category_title, placeholder="every category"
)
field_titles = titles(rows)
fields = field_col.multiselect(
    "Labels disagree on", list(field_titles), format_func=field_titles.__getitem__, placeholder="any field"
)
shown = narrow(rows, categories=cats, fields=fields)
if not shown:
    st.info("No disagreement matches these filters.")
    st.stop()
by_id = {r.pair_id: r for r in shown}
ss = st.session_state
if ss.get("adj_goto") in by_id:  # set by "Record decision" below, before the pair's widget exists
    ss["adj_pair"] = ss.pop("adj_goto")
if ss.get("adj_pair") not in by_id:  # first visit, or filtered out: the first undecided one
    ss["adj_pair"] = next_pending(shown, None) or shown[0].pair_id


def _title(pid: str) -> str:
    r = by_id[pid]
    differ = ", ".join(field_titles[f] for f in r.fields)
    name = snippet(r.prompt, 60) or pid  # a person knows a pair by its prompt; the id is in the page below
    state = "  (pending)" if r.pending else "  (decided)"
    return f"{name} · {category_title(r.category)} · differs on {differ}{state}"


def _go_next() -> None:
    nxt = next_pending(shown, ss.get("adj_pair"))
    if nxt is None:
        flash.say("info", "Every disagreement shown here is decided.")
    else:
        ss["adj_pair"] = nxt


pick, go = st.columns([3, 1], vertical_alignment="bottom")
pid = pick.selectbox("Pair", list(by_id), key="adj_pair", format_func=_title)
row: Disagreement = by_id[pid]
d = case(s, pid)
if d is None:
    st.warning("This pair is no longer in the store.")
    st.stop()


go.button("Next disagreement  `N`", key="adj_next", on_click=_go_next, width="stretch")
with st.container(key="mmrb-adjudicate"):
    img = d.image
    sha = img.sha256 if img is not None and img.status == "ok" else None
    block = image_block(d.pair.item_id, sha, img.status if img else "none")
    item = d.item
    st.html(
        item_html(
            block,
            item.category if item else row.category,
            item.prompt if item else "(the item is no longer in the store)",
            below=reference_html(item.reference if item else None, d.auto),
        )
    )
    first, second = d.first, d.second
    first_parts, second_parts = first.content if first else (), second.content if second else ()
    image_zoom_button(
        zoom_of(pair_token(pid), sha, first_parts, second_parts, ("First response", "Second response")),
        key="adj_zoom",
    )
    st.html(
        pair_responses(
            pair_token(pid),
            first_parts,
            second_parts,
            first.text if first else "(this response is no longer in the store)",
            second.text if second else "(this response is no longer in the store)",
            titles=(  # the rationales say left and right, the decisions first and second: both named
                f"Left: first response · model {first.model if first else '?'}",
                f"Right: second response · model {second.model if second else '?'}",
            ),
        )
    )
    if d.pair.known_preference:
        st.caption(f"Known answer (gold or imported): {plain(d.pair.known_preference)}")
    st.markdown(f"**Labels** · {len(row.labels)}")
    scheme = row.scheme
    if scheme == MMRB:
        st.html(labels_html(row.labels, row.fields, d.left_of))
    else:
        st.caption(f"Scheme: {plain(scheme.title)}")
        cols = [(x.key, x.title) for x in decisions(scheme)]
        st.html(labels_html(row.labels, row.fields, d.left_of, cols, partial(seen_answers, scheme, left_of=d.left_of)))
    st.caption(
        "Here the first response is on the left. Each annotator's rationale says left and right as they saw them: "
        'a side in the table says which it was for them, e.g. "first (their right)".'
    )

    if scheme != MMRB:
        st.caption("A scale's point labels say left and right as seen here, the first response on the left.")

    prev = row.adjudication
    tk = pair_token(pid)
    # docked to the bottom of the screen while the evidence above scrolls (page_style.py): the
    # decision is within the first screen at 1366x768, beside whatever part of the pair is read
    with st.container(key="mmrb-adj-decide"), st.form(f"adj_form_{tk}", border=True):
        if scheme == MMRB:
            a, b = st.columns(2)
            decision = _mmrb_fields(a, b, prev, tk, d.pair, who.name)
        else:
            decision = _scheme_fields(
                st.columns(2) if len(decisions(scheme)) > 1 else (st.container(),), scheme, prev, tk, d.pair, who.name
            )
        note_col, act_col = st.columns([3, 1], vertical_alignment="bottom")
        note = note_col.text_area(
            "Note  (E to write, Esc to leave)", value=prev.note if prev else "", key=f"adj_note_{tk}", height=68
        )
        excl = act_col.checkbox(
            "Exclude from the benchmark  (X)", value=bool(prev and prev.exclude), key=f"adj_exclude_{tk}"
        )
        if act_col.form_submit_button(
            "Record decision  (Enter)", type="primary", key=f"adj_record_{tk}", width="stretch"
        ):
            record_decision(s, decision(excl, note))  # with its audit entry, in one transaction
            flash.say("success", f"Decision recorded for {plain(pid)}.")
            nxt = next_pending(shown, pid, again=False)  # on to the next undecided pair
            if nxt is not None:
                ss["adj_goto"] = nxt
            st.rerun()
st.caption(keys.ADJ_LEGEND)
compact_style()
zoom_if_asked()
key_listener()
