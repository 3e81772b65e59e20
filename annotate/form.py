"""The label form's rules: what the annotator picked (in screen terms) -> a Label, or the
reasons it cannot be saved yet. No Streamlit here, so every rule is unit-tested."""

from __future__ import annotations

from dataclasses import dataclass

from curate.model import CORRECTNESS, FLAG_REASONS, Label
from curate.store import Store

from .queue import to_canonical

PREFERENCE_CHOICES = ("left", "tie", "right")
# When a rationale is required; the project sets it with the store setting
# "rationale_required" (comma list of: tie, unsure, flag, always, never).
DEFAULT_RATIONALE_RULE = frozenset({"tie", "unsure", "flag"})
FLAG_TITLES = {
    "broken_image": "broken image",
    "unsafe_content": "unsafe content",
    "unclear_prompt": "unclear prompt",
    "other": "other",
}


def rationale_rule(store: Store | None) -> frozenset[str]:
    raw = store.get_setting("rationale_required") if store is not None else None
    if raw is None:
        return DEFAULT_RATIONALE_RULE
    return frozenset(p.strip() for p in raw.split(",") if p.strip())


@dataclass(frozen=True)
class FormInput:
    left: str | None = None  # correctness of the response shown on the left
    right: str | None = None
    preference: str | None = None  # "left", "right" or "tie"
    rationale: str = ""
    flag: str | None = None  # one of FLAG_REASONS, or None


def rationale_needed(f: FormInput, rule: frozenset[str] = DEFAULT_RATIONALE_RULE) -> str | None:
    """Why a rationale is required for these answers, or None."""
    if "never" in rule:
        return None
    if "always" in rule:
        return "the guidelines ask for a rationale on every label"
    if "tie" in rule and f.preference == "tie":
        return "a tie needs a rationale"
    if "unsure" in rule and "unsure" in (f.left, f.right):
        return "an 'unsure' needs a rationale"
    if "flag" in rule and f.flag is not None:
        return "a flag needs a short note"
    return None


def problems(f: FormInput, rule: frozenset[str] = DEFAULT_RATIONALE_RULE) -> list[str]:
    """Everything missing or invalid, in the order the form shows it; empty when saveable."""
    out: list[str] = []
    if f.flag is not None:
        if f.flag not in FLAG_REASONS:
            out.append(f"unknown flag reason {f.flag!r}")
    else:
        if f.left is None:
            out.append("rate the left response")
        if f.right is None:
            out.append("rate the right response")
        if f.preference is None:
            out.append("choose a preference")
    for v in (f.left, f.right):
        if v is not None and v not in CORRECTNESS:
            out.append(f"unknown correctness {v!r}")
    if f.preference is not None and f.preference not in PREFERENCE_CHOICES:
        out.append(f"unknown preference {f.preference!r}")
    why = rationale_needed(f, rule)
    if why and not f.rationale.strip():
        out.append(f"write a rationale: {why}")
    return out


def to_label(
    f: FormInput, *, pair_id: str, annotator: str, left_side: str, seconds: float | None, source: str = "app"
) -> Label:
    """The answers in canonical (first/second) terms. Call only when ``problems`` is empty."""
    first_is_left = left_side == "first"
    pref = f.preference
    canonical_pref = "tie" if pref == "tie" else to_canonical(pref, left_side)  # type: ignore[arg-type]
    rationale = f.rationale.strip()
    return Label(
        pair_id=pair_id,
        annotator=annotator,
        correctness_first=f.left if first_is_left else f.right,  # type: ignore[arg-type]
        correctness_second=f.right if first_is_left else f.left,  # type: ignore[arg-type]
        preference=canonical_pref,  # type: ignore[arg-type]
        rationale=rationale,
        flag=f.flag,  # type: ignore[arg-type]
        flag_note=rationale if f.flag else "",
        seconds=None if seconds is None else round(max(seconds, 0.0), 3),
        status="submitted",
        source=source,
    )


def skip_label(pair_id: str, annotator: str, seconds: float | None) -> Label:
    return Label(pair_id=pair_id, annotator=annotator, status="skipped",
                 seconds=None if seconds is None else round(max(seconds, 0.0), 3))


def from_label(label: Label, left_side: str) -> FormInput:
    """A saved label back into screen terms, to prefill an edit or an undone label."""
    first_is_left = left_side == "first"
    pref = label.preference
    shown = pref if pref in (None, "tie") else ("left" if pref == left_side else "right")
    return FormInput(
        left=label.correctness_first if first_is_left else label.correctness_second,
        right=label.correctness_second if first_is_left else label.correctness_first,
        preference=shown,
        rationale=label.rationale,
        flag=label.flag,
    )
