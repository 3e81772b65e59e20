"""The label form's rules: what the annotator picked (in screen terms) -> a Label, or the
reasons it cannot be saved yet. No Streamlit here, so every rule is unit-tested."""

from __future__ import annotations

from dataclasses import dataclass

from curate.lookalike import text_problem
from curate.model import (
    CORRECTNESS,
    FLAG_REASONS,
    SCREEN_PREFERENCES,
    Correctness,
    FlagReason,
    Label,
    ScreenPreference,
    Side,
)
from curate.sides import preference_from_screen, preference_to_screen, shown_pair, stored_pair
from curate.store import Store

# When a rationale is required; the project sets it with the store setting
# "rationale_required" (comma list of these cases, or always, or never).
RATIONALE_CASES = ("tie", "unsure", "flag")
DEFAULT_RATIONALE_RULE = frozenset(RATIONALE_CASES)
FLAG_TITLES = {r: r.replace("_", " ") for r in FLAG_REASONS}


def rationale_rule(store: Store | None) -> frozenset[str]:
    raw = store.get_setting("rationale_required") if store is not None else None
    if raw is None:
        return DEFAULT_RATIONALE_RULE
    return frozenset(p.strip() for p in raw.split(",") if p.strip())


@dataclass(frozen=True)
class FormInput:
    """The answers in screen terms. The widgets offer only these values; ``problems`` still
    checks them, since session state can hold anything."""

    left: Correctness | None = None  # correctness of the response shown on the left
    right: Correctness | None = None
    preference: ScreenPreference | None = None
    rationale: str = ""
    flag: FlagReason | None = None


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


def rationale_required_for(rule: frozenset[str]) -> str:
    """When the rule asks for a rationale, in the words the form shows: only the words
    ``rationale_needed`` knows (the setting's own text is not shown)."""
    if "never" in rule:
        return "never"
    if "always" in rule:
        return "always"
    return ", ".join(sorted(rule.intersection(RATIONALE_CASES))) or "never"


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
    if f.preference is not None and f.preference not in SCREEN_PREFERENCES:
        out.append(f"unknown preference {f.preference!r}")
    why = rationale_needed(f, rule)
    if why and not f.rationale.strip():
        out.append(f"write a rationale: {why}")
    unstorable = text_problem(f.rationale)  # refused here, alike on both backends: PostgreSQL would refuse a NUL
    if unstorable:
        out.append(f"the rationale {unstorable}")
    return out


def to_label(
    f: FormInput, *, pair_id: str, annotator: str, left_side: Side, seconds: float | None, source: str = "app"
) -> Label:
    """The answers in canonical (first/second) terms. Call only when ``problems`` is empty."""
    correctness_first, correctness_second = stored_pair(f.left, f.right, left_side)
    rationale = f.rationale.strip()
    return Label(
        pair_id=pair_id,
        annotator=annotator,
        correctness_first=correctness_first,
        correctness_second=correctness_second,
        preference=preference_from_screen(f.preference, left_side),
        rationale=rationale,
        flag=f.flag,
        flag_note=rationale if f.flag else "",
        seconds=None if seconds is None else round(max(seconds, 0.0), 3),
        status="submitted",
        source=source,
    )


def skip_label(pair_id: str, annotator: str, seconds: float | None) -> Label:
    return Label(
        pair_id=pair_id,
        annotator=annotator,
        status="skipped",
        seconds=None if seconds is None else round(max(seconds, 0.0), 3),
    )


def from_label(label: Label, left_side: Side) -> FormInput:
    """A saved label back into screen terms, to prefill an edit or an undone label."""
    left, right = shown_pair(label.correctness_first, label.correctness_second, left_side)
    return FormInput(
        left=left,
        right=right,
        preference=preference_to_screen(label.preference, left_side),
        rationale=label.rationale,
        flag=label.flag,
    )
