"""Example labels for the bundled sample: what three careful experts (``ada``, ``grace`` and
``alan``, the walkthrough's annotators) might have said about its pairs. Example data, never
real annotation: every label's ``source`` is ``"example"``.

They are made, not recorded: each pair's answer is the expert view below (the reference's
verdict where the item has one, else ``VIEW``: which responses of the items without a
reference are right, and how good each is), and each annotator follows it but for seeded
slips of their own, from the pair's and the annotator's ids alone (``curate.seeding``), so the
same pairs give the same labels on every run and a new pair changes no other pair's values
(only the times, each annotator's labels being timed one after another).
So most labels agree with the reference, a few dissent, close pairs get ties, the pairs of the
item whose image is missing get flagged, about half have a rationale, every label is timed.

``data/sample/make_example_labels.py`` writes them for the walkthrough's pairs into
``data/sample/example-labels.jsonl`` (``mmrb labels import``); the demo (annotate/demo.py)
adds them to its store, on each pair's own scheme (MMRB2's six-point scale for its pairs of
image responses).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from curate.model import EXAMPLE_SOURCE, Correctness, FlagReason, Label, Pair, Preference
from curate.schemes import DEFAULT, Scheme, schemes_of, to_label
from curate.seeding import unit

if TYPE_CHECKING:
    from curate.store import Store

ANNOTATORS = ("ada", "grace", "alan")
SOURCE = EXAMPLE_SOURCE  # every example label says it is one
START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)  # the (made-up) morning the three labelled
# How good each response of the items without a reference is, 0 to 3 (2 and up: correct),
# read off the sample's own data (data/make_sample.py says which drawings are wrong).
VIEW: Mapping[str, Mapping[str, int]] = {
    "ogc-01": {"vlm-alpha": 3, "vlm-beta": 0, "vlm-gamma": 3},  # beta: Q4 is not the highest
    "ogc-02": {"vlm-alpha": 3, "vlm-beta": 0, "vlm-delta": 1},  # no glass tower, no neon city
    "ogc-03": {"vlm-gamma": 3, "vlm-beta": 0, "vlm-alpha": 1},  # X 9 is the fastest, not R 214 or X 11
    "ogc-04": {"vlm-delta": 3, "vlm-alpha": 0, "vlm-gamma": 2},  # a dahlia, not a sunflower
    "ogp-01": {"vlm-alpha": 3, "vlm-beta": 2, "vlm-gamma": 2},  # all right; for a ten-year-old?
    "ogp-02": {"vlm-gamma": 3, "vlm-beta": 3, "vlm-delta": 2},
    "ogp-03": {"vlm-alpha": 3, "vlm-beta": 3, "vlm-gamma": 2},
    "ogp-04": {"vlm-alpha": 3, "vlm-beta": 3, "vlm-delta": 2},
    "sf-01": {"vlm-alpha": 3, "vlm-beta": 0, "vlm-gamma": 2},
    "sf-02": {"vlm-gamma": 3, "vlm-delta": 0, "vlm-alpha": 2},
    "sf-03": {"vlm-beta": 3, "vlm-delta": 0, "vlm-gamma": 2},
    "sf-04": {"vlm-alpha": 3, "vlm-beta": 0, "vlm-gamma": 3},
    "t2i-01": {"omni-alpha": 3, "omni-beta": 0, "omni-gamma": 1},  # beta's pears bar is wrong; gamma's unlabelled
    "edit-01": {"omni-alpha": 3, "omni-beta": 1, "omni-gamma": 0},  # beta also removed the window
    "il-01": {"omni-alpha": 3, "omni-beta": 1, "omni-gamma": 0},  # gamma draws nothing
}
DISSENT = 0.1  # an annotator's share of slips on a clear pair: the other response preferred
TIE = 0.45  # on a close pair (the two responses about as good), the share of ties
UNSURE = 0.03  # the share of verdicts an annotator leaves as unsure (with a note why)
WHY = {  # rationales, in words that hold whichever side the annotator saw the response on
    "one": (
        "Only the preferred response gets it right; the other misreads the image.",
        "Checked against the image: the preferred response is correct, the other is not.",
        "The other response states something the image does not show.",
    ),
    "both": (
        "Both are correct; the preferred one is clearer and more complete.",
        "Same answer, but the preferred one explains how it got there.",
        "Both fine; the preferred one fits what was asked better.",
    ),
    "neither": (
        "Both are wrong; the preferred one is closer.",
        "Neither is right, but the preferred one makes the smaller mistake.",
    ),
    "tie": ("Both responses are about equally good; neither is clearly better.",),
    "unsure": ("Cannot tell whether one of the answers is right from the image alone.",),
}


@dataclass(frozen=True)
class PairView:
    """What the example labels need of a pair: the pair, its responses' models, whether its
    prompt's image is missing (its labels flag it), and its scheme."""

    pair: Pair
    first_model: str
    second_model: str
    image_missing: bool
    scheme: Scheme


def _truth(v: PairView) -> tuple[Correctness, Correctness, float, float]:
    """Each response's verdict and quality (0-3): the reference's verdict where it gives one,
    else ``VIEW``; a seeded quality among responses with the same verdict."""
    p = v.pair
    view = VIEW.get(p.item_id, {})

    def quality(model: str, auto: Correctness | None) -> float:
        if model in view:
            return float(view[model])
        if auto in ("correct", "incorrect"):
            return (2.0 if auto == "correct" else 0.0) + 1.4 * unit("example-quality", p.item_id, model)
        return 3.0 * unit("example-quality", p.item_id, model)  # no reference and not in the view

    qf, qs = quality(v.first_model, p.auto_first), quality(v.second_model, p.auto_second)
    return ("correct" if qf >= 2 else "incorrect"), ("correct" if qs >= 2 else "incorrect"), qf, qs


def _label(v: PairView, who: str) -> tuple[dict[str, Any], FlagReason | None, str, bool]:
    """One annotator's values on the pair (stored order), its flag and note, and whether they
    wrote a rationale."""
    pid = v.pair.id
    first, second, qf, qs = _truth(v)
    u = unit("example-label", pid, who)
    close = abs(qf - qs) < 0.6
    pref: Preference
    if close:
        pref = "tie" if u < TIE else ("first" if unit("example-lean", pid, who) < 0.5 else "second")
    else:
        pref = "first" if qf > qs else "second"
        if u < DISSENT:  # a slip: the other one preferred, and the verdicts read to match
            pref = "second" if pref == "first" else "first"
            if first != second:
                first, second = second, first
    verdicts: list[Correctness] = [first, second]
    unsure = unit("example-unsure", pid, who) < UNSURE
    if unsure:
        verdicts[int(unit("example-unsure-side", pid, who) < 0.5)] = "unsure"
    kind = (
        "unsure"
        if unsure
        else "tie"
        if pref == "tie"
        else "one"
        if first != second
        else "both"
        if first == "correct"
        else "neither"
    )
    written = kind in ("unsure", "tie") or unit("example-why", pid, who) < 0.5
    texts = WHY[kind]
    rationale = texts[int(unit("example-why-text", pid, who) * len(texts))] if written else ""
    flag: FlagReason | None = None
    note = ""
    # the pair's prompt image is missing: the first of the three to see it flags it
    if v.image_missing and who == min(ANNOTATORS, key=lambda a: unit("example-flag", pid, a)):
        flag, note = "broken_image", "The image does not load, so I could not check the answers."
    values: dict[str, Any] = {"rationale": rationale} if rationale else {}
    if v.scheme.name == DEFAULT:
        values |= {"correctness": tuple(verdicts), "preference": pref}
    else:  # MMRB2's six-point scale (high: the first is better): its strength from the gap in quality
        higher = unit("example-score", pid, who) < 0.5
        if pref == "tie":
            values["score"] = 4 if higher else 3
        else:
            strength = (6 if higher else 5) if abs(qf - qs) >= 2 else (5 if higher else 4)
            values["score"] = strength if pref == "first" else 7 - strength
    return values, flag, note, written


def example_labels(pairs: Iterable[PairView], annotators: tuple[str, ...] = ANNOTATORS) -> list[Label]:
    """Every annotator's label of every pair, in (pair id, annotator) order; the labels of one
    annotator timed one after another from ``START``, in an order of their own."""
    views = sorted(pairs, key=lambda v: v.pair.id)
    when: dict[tuple[str, str], tuple[float, str]] = {}
    for n, who in enumerate(annotators):
        t = START + timedelta(minutes=11 * n)
        for v in sorted(views, key=lambda v: unit("example-order", who, v.pair.id)):
            pid = v.pair.id
            secs = round(8 + 70 * unit("example-seconds", pid, who) ** 2, 1)
            t += timedelta(seconds=secs + 15 + 75 * unit("example-pause", pid, who))
            when[pid, who] = (secs, t.isoformat(timespec="seconds"))
    out = []
    for v in views:
        for who in annotators:
            values, flag, note, written = _label(v, who)
            secs, stamp = when[v.pair.id, who]
            secs += 20 * written  # writing a rationale takes a while
            out.append(
                to_label(
                    v.scheme,
                    v.pair.id,
                    who,
                    values,
                    flag=flag,
                    flag_note=note,
                    seconds=secs,
                    source=SOURCE,
                    created_at=stamp,
                    updated_at=stamp,
                    scheme_version=v.pair.scheme_version,
                )
            )
    return out


def pair_views(store: Store) -> list[PairView]:
    """The store's pairs as the example labels see them (gold pairs left out: control tasks
    are answered against their gold, not made up)."""
    pairs = [p for p in store.pairs() if not p.is_gold]
    models = {c.id: c.model for c in store.candidates()}
    missing = {i.id for i in store.items() if any(im.status != "ok" for im in i.images)}
    schemes = schemes_of(store, [p.id for p in pairs])
    return [PairView(p, models[p.first_id], models[p.second_id], p.item_id in missing, schemes[p.id]) for p in pairs]
