"""The label form and what its buttons do: submit (a new label or an edit), skip, undo.
The rules are in annotate/form.py and annotate/queue.py; this module renders and calls."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import streamlit as st

from curate.model import CORRECTNESS, SCREEN_PREFERENCES, Label

from . import clock, flash, keys, outage, scheme_form, ui
from .form import (
    DEFAULT_RATIONALE_RULE,
    FormInput,
    from_label,
    problems,
    rationale_required_for,
    rationale_rule,
    skip_label,
    to_label,
)
from .form_state import form_keys, read_form, read_scheme_form, reset_form
from .outage_ui import calm, log_failure
from .pair_ui import responses_block
from .queue import PairView, current_view, save, undo
from .scheme_form import SchemeInput, is_default_form
from .scheme_ui import flag_radio, scheme_fields, submit_button
from .session_ui import RUN_SECONDS, acting_user

Answers = FormInput | SchemeInput  # mmrb's form, or any other scheme's

PENDING = "pending_save"  # session key: an outage.PendingSave (see annotate/guard.py)
_RULES: dict[str | None, frozenset[str]] = {}
_RULE_READ = "q_rule_read"  # (rule, when): read by this run's submit, shown by the form that follows


def _rule(*, for_display: bool = False) -> frozenset[str]:
    """The project's rationale rule. While the store cannot answer: the last one read, or
    for the form's label only, the default (saving checks again with the project's).
    For the form's label, the one a submit of this run has just read to check the answers
    (no second read of the settings in the run that shows the next pair)."""
    db = ui.config().db
    read = st.session_state.pop(_RULE_READ, None)
    if for_display and read is not None and time.monotonic() - read[1] < RUN_SECONDS:
        return read[0]
    try:
        r = _RULES[db] = rationale_rule(ui.store())
        if not for_display:
            st.session_state[_RULE_READ] = (r, time.monotonic())
        return r
    except Exception as e:
        if not outage.is_store_failure(e):
            raise
        if db in _RULES:
            return _RULES[db]
        if for_display:
            return DEFAULT_RATIONALE_RULE
        raise


def _clock_key(pair_id: str) -> clock.Key:
    return (ui.config().db or "", st.session_state.get("user") or "", pair_id)


def start_clock(pair_id: str) -> None:
    """The signed-in annotator sees the pair: its seconds per label count from the first time."""
    clock.CLOCK.started(_clock_key(pair_id))


def _with_key(options: tuple[str, ...], prefix: str) -> Callable[[str], str]:
    """An option of the radio ``prefix`` with the key that picks it (annotate/keys.py)."""
    picks = keys.option_keys(keys.KEYS, prefix)
    return lambda v: f"{v}  ({picks[options.index(v)]})"


def label_form(
    view: PairView,
    *,
    mode: str,
    prefill: Answers | None = None,
    on_submit: Callable[[PairView, str], None] | None = None,
) -> None:
    """Both responses and the decisions, in one form: nothing reruns until submit. The pair's
    scheme says the decisions; mmrb's are today's form, as it always was."""
    retry = st.session_state.pop("q_retry", None)
    if retry is not None and retry[0] == (mode, view.pair_id):
        prefill = retry[1]  # a refused submit: the browser cleared the form, put the answers back
    reset_form(mode, view, prefill)
    k = form_keys(mode)
    if not is_default_form(view.scheme):
        with st.form(key=k.form, border=False, enter_to_submit=False, clear_on_submit=mode == "new"):
            scheme_fields(view, mode, k, on_submit or _submit)
        return
    with st.form(key=k.form, border=False, enter_to_submit=False, clear_on_submit=mode == "new"):
        st.html(responses_block(view))
        # each response's correctness directly under it: the columns match the boxes above
        for col, side in zip(st.columns(2), ("left", "right"), strict=True):
            col.radio(
                f"{side.title()} is",
                CORRECTNESS,
                index=None,  # the value is in session state (see form_state.reset_form)
                horizontal=True,
                key=k.correctness(side),
                format_func=_with_key(CORRECTNESS, f"q_{side}"),
            )
        better, flag = st.columns([2, 3])
        better.radio(
            "Better",
            SCREEN_PREFERENCES,
            index=None,
            horizontal=True,
            key=k.preference,
            format_func=_with_key(SCREEN_PREFERENCES, "q_pref"),
        )
        flag_radio(flag, k)
        why, go = st.columns([6, 1] if mode == "new" else [4, 2], vertical_alignment="bottom")  # "Save changes" whole
        why.text_area(
            f"Rationale  (E to write, Esc to leave) · required for: {rationale_required_for(_rule(for_display=True))}",
            key=k.rationale,
            height=68,
            placeholder="Why? Required for ties and 'unsure'; a short note for a flag.",
        )
        submit_button(go, view, mode, k, on_submit or _submit)


def _submit(view: PairView, mode: str) -> None:
    f = read_form(mode) if is_default_form(view.scheme) else read_scheme_form(mode, view.scheme)
    save_answers(view, mode, f, clock.CLOCK.seconds(_clock_key(view.pair_id)), cleared=mode == "new")


def answers_of(view: PairView, label: Label) -> Answers:
    """A saved label as its form's answers on this annotator's screen (an edit, an undo)."""
    if is_default_form(view.scheme):
        return from_label(label, view.left_side)
    return scheme_form.from_label(view.scheme, label, view.left_side)


def _problems(view: PairView, f: Answers) -> list[str]:
    if isinstance(f, SchemeInput):
        return scheme_form.problems(view.scheme, f, view.left_side)
    return problems(f, _rule())


def _label(view: PairView, f: Answers, who: str, seconds: float) -> Label:
    if isinstance(f, SchemeInput):
        return scheme_form.to_label(
            view.scheme,
            f,
            pair_id=view.pair_id,
            annotator=who,
            left_side=view.left_side,
            seconds=seconds,
            proposal=view.proposal,
        )
    return to_label(f, pair_id=view.pair_id, annotator=who, left_side=view.left_side, seconds=seconds)


def save_answers(view: PairView, mode: str, f: Answers, seconds: float, *, cleared: bool) -> None:
    """Check and save the answers. ``cleared``: the browser cleared the form on submit (the
    label page), so the next pair's form needs no reset. When the store cannot take them,
    the answers are kept as a PendingSave and retried (see annotate/guard.py)."""
    ss = st.session_state
    try:
        who = acting_user()
        if who is None:
            return  # the session has ended: nothing is saved, the sign-in page follows
        errs = _problems(view, f)
        if errs:
            ss.pop(PENDING, None)
            ss["form_errors"] = (view.pair_id, errs)
            if mode == "new":
                ss["q_retry"] = ((mode, view.pair_id), f)
            return
        if cleared:
            ss["q_cleared"] = view.pair_id
        label = replace(_label(view, f, who, seconds), guidelines_version=view.guidelines_version)
        if mode == "edit":
            expected = view.label.revision if view.label is not None else None
            # an edit keeps the original labelling time; the history keeps the old answers
            label = replace(label, seconds=view.label.seconds if view.label else seconds)
            res = save(ui.store(), label, expected_revision=expected)
        else:
            res = save(ui.store(), label)
    except Exception as e:
        refused = outage.refused_answers(e)
        if refused is not None:  # the annotator's to fix: said at the form, the answers back in it
            ss.pop(PENDING, None)
            ss.pop("q_cleared", None)
            ss["form_errors"] = (view.pair_id, [refused])
            if mode == "new":
                ss["q_retry"] = ((mode, view.pair_id), f)
            return
        reason = outage.failure_reason(e)
        if reason is None:
            raise
        log_failure(e)
        ss.pop("q_cleared", None)
        before = ss.get(PENDING)
        n = before.attempts + 1 if before is not None and before.view.pair_id == view.pair_id else 1
        ss[PENDING] = outage.PendingSave(view, mode, f, seconds, n, time.monotonic() + outage.backoff(n), reason)
        return
    ss.pop(PENDING, None)
    flash.say("success" if res.ok else "warning", res.message)
    clock.CLOCK.stop(_clock_key(view.pair_id))
    if mode == "edit" and res.ok:
        ss.pop("editing", None)


@calm("Not skipped")
def skip_current() -> None:
    """Skip the pair in front of the annotator (looked up: the button sits outside the label
    page's fragment, so it cannot know the pair)."""
    who = acting_user()
    if who is None:
        return
    view = current_view(ui.store(), who)
    if view is None:
        flash.say("info", "Nothing left to skip.")
        return
    skipped = skip_label(view.pair_id, who, clock.CLOCK.seconds(_clock_key(view.pair_id)))
    res = save(ui.store(), replace(skipped, guidelines_version=view.guidelines_version))
    clock.CLOCK.stop(_clock_key(view.pair_id))
    flash.say("success" if res.ok else "warning", res.message)  # "Skipped.", quietly as "Saved."


@calm("Nothing was undone")
def undo_last() -> None:
    who = acting_user()
    if who is None:
        return
    last = undo(ui.store(), who)
    if last is None:
        flash.say("info", "Nothing to undo.")
        return
    # show the withdrawn answers again so they can be corrected, not retyped
    st.session_state.setdefault("prefill", {})[last.pair_id] = last
    flash.say("info", "Your last label was withdrawn; it is back in front of you.")


def show_errors(view: PairView) -> None:
    got = st.session_state.pop("form_errors", None)
    if got and got[0] == view.pair_id:
        st.error("Not saved yet: " + "; ".join(got[1]) + ".")
