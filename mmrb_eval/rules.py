"""The published scoring scripts' own rules, each as a small pure function.

Presets (mmrb_eval/scoring.py) name these rules; they are kept apart so each can be read
beside the script it restates:

- verdict rules re-read a judge's text as the script would: Multimodal RewardBench's
  ``2_get_accuracy.py`` (``[[A]]`` anywhere -> A, else ``[[B]]`` -> B, else no verdict),
  VL-RewardBench's ``cal.py`` (its regular expression; any answer number but the rejected
  response's position counts as agreeing) and MMRB2's judge run (the JSON answer's
  ``better_response``; ``NO_JUDGEMENT`` says which answers it records no judgement for, so
  that compute_accuracy.py never sees them);
- groupings put a pair in a reported group: cal.py by the id's prefix, R1-Reward's
  VL-Reward-Bench ``get_acc.py`` by substrings of the id, R1-Reward's MM-RLHF ``get_acc.py``
  by the first keyword found in the image (or video) path. The first and the last are the
  benchmarks' own groupings, kept with their formats (``curate/formats/vlrewardbench.py``,
  ``mm_rlhf.py``), where the importer reads them too.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from curate.formats import mm_rlhf
from curate.formats import vlrewardbench as vlrb
from curate.judging.parsing import mmrb2_judgement, vlrb_answer_number
from curate.model import LetterVerdict, Order, Preference, Side
from curate.sides import other, shown_first, verdict_from_letter

from .records import EvalPair

# -- verdict rules -------------------------------------------------------------------------


def mmrb_shown(text: str) -> LetterVerdict | None:
    """2_get_accuracy.py's extract_judgment without its coin: the letter it reads, or None
    where it would flip the coin. ``[[A]]`` wins over anything else, then ``[[B]]``; a
    ``[[C]]`` or lower-case letters are no verdict."""
    if "[[A]]" in text:
        return "A"
    if "[[B]]" in text:
        return "B"
    return None


def mmrb_verdict(text: str, preferred: Side, order: Order) -> Preference | None:
    return verdict_from_letter(mmrb_shown(text), order)


def vlrb_verdict(text: str, preferred: Side, order: Order) -> Preference | None:
    """cal.py with reparse: no match is no verdict; the answer number of the rejected
    response's shown position rejects; any other number (1, 2 or even 3) agrees."""
    n = vlrb_answer_number(text)
    if n is None:
        return None
    rejected = other(preferred)
    rejected_shown = 1 if rejected == shown_first(order) else 2
    return rejected if n == rejected_shown else preferred


def mmrb2_verdict(text: str, preferred: Side, order: Order) -> Preference | None:
    """MMRB2: "A" or "B" as shown; any other judgement counts in compute_accuracy.py and
    never equals the ground truth (no verdict)."""
    value = mmrb2_judgement(text)
    return verdict_from_letter(value, order) if value == "A" or value == "B" else None


def mmrb2_no_judgement(text: str) -> bool:
    """An answer MMRB2's judge run records no judgement for (no JSON ``better_response``, or
    an empty one): compute_accuracy.py leaves it out of every count."""
    return mmrb2_judgement(text) is None


VERDICT_RULES: dict[str, Callable[[str, Side, Order], Preference | None]] = {
    "mmrb": mmrb_verdict,
    "vlrewardbench": vlrb_verdict,
    "mmrb2": mmrb2_verdict,
}
# rules under which some answers are no judgement at all: left out, as the script never sees them
NO_JUDGEMENT: dict[str, Callable[[str], bool]] = {"mmrb2": mmrb2_no_judgement}

# -- groupings -------------------------------------------------------------------------------


def r1_vl_group_of_id(pid: str) -> str:
    """R1-Reward's VL-Reward-Bench get_acc.py classify_id: case-sensitive substrings, so
    ``RLAIF-V-...`` and ``RLHF-V-...`` ids fall into "general"."""
    if "mmmu" in pid or "mathverse" in pid:
        return "reasoning"
    if "hallucination" in pid or "rlhf" in pid or "rlaif" in pid:
        return "hallucination"
    return "general"


UNGROUPED = "uncategorised"  # MM-RLHF rows whose path names no keyword: counted in overall only


def mm_rlhf_group(image: str, video: str) -> str:
    """MM-RLHF get_acc.py: the first keyword in ``image or video`` (curate/formats/mm_rlhf.py)."""
    return mm_rlhf.category_of(image, video) or UNGROUPED


def source_id(p: EvalPair) -> str:
    """The id as the file wrote it (readers rename repeated ids ``id#0``, ``id#1``...)."""
    return str(p.metadata.get("source_id") or p.id)


def _media(p: EvalPair) -> tuple[str, str]:
    return str(p.metadata.get("image_field") or ""), str(p.metadata.get("video_field") or "")


GROUPINGS: dict[str, Callable[[EvalPair], str]] = {
    "category": lambda p: p.category,
    "vlrb-cal": lambda p: vlrb.group_of(source_id(p)),
    "r1-vl": lambda p: r1_vl_group_of_id(source_id(p)),
    "mm-rlhf": lambda p: mm_rlhf_group(*_media(p)),
}


def script_id(p: EvalPair) -> str:
    """The id as a script's dict of ids holds it: R1-Reward's reader keeps the JSON of the id
    it read (``script_id``: ``3`` and ``"3"`` are two ids there), else the id as text."""
    return str(p.metadata.get("script_id") or json.dumps(source_id(p)))


# how Acc+ finds a pair's prompt under a grouping (default: the pair's ``prompt_group``):
# MM-RLHF's get_acc.py gathers rows by their id alone, whatever else the row says
ACC_PLUS_GROUPS: dict[str, Callable[[EvalPair], str]] = {"mm-rlhf": script_id}


def touched_groups(p: EvalPair, grouping: str, group: str) -> set[str]:
    """The groups whose Acc+ denominator a pair's prompt counts in: its own group, except
    under MM-RLHF's rule, where it is every keyword anywhere in image + video."""
    if grouping == "mm-rlhf":
        image, video = _media(p)
        return {k for k in mm_rlhf.KEYWORDS if k in image + video}
    return {group}
