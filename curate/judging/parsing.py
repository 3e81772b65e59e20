"""Reading a verdict out of a judge's text.

Every parser returns an outcome, never raises: ``parsed`` (A, B or tie), ``unparsed`` (no
verdict found) or ``both`` (the text names both answers). What to make of ``unparsed`` and
``both`` is a scoring decision (mmrb_eval/scoring.py), so the official Multimodal
RewardBench rule "contains [[A]] -> A, even if it also contains [[B]]" is applied there,
from the stored ``both`` outcome, and is always counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..model import LetterVerdict
from .records import ParseOutcome


@dataclass(frozen=True)
class ParsedVerdict:
    outcome: ParseOutcome
    shown: LetterVerdict | None = None  # as the judge saw them
    score_a: float | None = None
    score_b: float | None = None


UNPARSED = ParsedVerdict("unparsed")
BOTH = ParsedVerdict("both")


_BRACKETS: dict[str, LetterVerdict] = {"A": "A", "B": "B", "C": "tie"}


def parse_brackets(text: str) -> ParsedVerdict:
    """MT-Bench pair-v2 / Multimodal RewardBench: ``[[A]]`` or ``[[B]]`` (``[[C]]`` tie)."""
    found = [x for x in ("A", "B", "C") if f"[[{x}]]" in text]
    if len(found) > 1:
        return BOTH
    if not found:
        return UNPARSED
    return ParsedVerdict("parsed", _BRACKETS[found[0]])


# VL-RewardBench's own pattern (inference.py / cal.py), applied to the text with newlines
# and asterisks removed, case-insensitive. The greedy ``.*`` finds the last "Answer N is
# better" after the first "Overall Judgment"/"Therefore".
VLRB_PATTERN = re.compile(
    r"(?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*(?:the\s*)?(?:slightly\s*)?better",
    re.IGNORECASE,
)


def vlrb_answer_number(text: str) -> int | None:
    m = VLRB_PATTERN.search(text.replace("\n", "").replace("*", ""))
    return int(m.group(1)) if m else None


def parse_vlrb(text: str) -> ParsedVerdict:
    n = vlrb_answer_number(text)
    if n == 1:
        return ParsedVerdict("parsed", "A")
    if n == 2:
        return ParsedVerdict("parsed", "B")
    return UNPARSED  # no match, or "Answer 3 is better"


_R1_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def parse_r1(text: str) -> ParsedVerdict:
    """R1-Reward: ``<answer>1</answer>`` (first shown) or ``<answer>2</answer>``.

    R1-Reward's own harness falls back to the last digit 1/2 anywhere in the text and reads
    anything else as 2; here a missing or odd tag is ``unparsed``, and tags naming both
    answers are ``both``.
    """
    values = {v.strip() for v in _R1_ANSWER.findall(text)}
    if not values:
        return UNPARSED
    if values <= {"1", "2"} and len(values) == 2:
        return BOTH
    if len(values) > 1:
        return UNPARSED
    v = values.pop()
    return {"1": ParsedVerdict("parsed", "A"), "2": ParsedVerdict("parsed", "B")}.get(v, UNPARSED)


_RATING = {side: re.compile(rf"Rating\s+{side}\s*:\s*\[\[\s*(\d+(?:\.\d+)?)\s*\]\]", re.IGNORECASE) for side in "AB"}


def parse_ratings(text: str, low: float = 1, high: float = 10) -> ParsedVerdict:
    """Ratings mode: ``Rating A: [[7]]`` and ``Rating B: [[4]]``; equal ratings are a tie."""
    scores = {}
    for side, pat in _RATING.items():
        vals = {float(v) for v in pat.findall(text)}
        if len(vals) != 1:
            return UNPARSED
        v = vals.pop()
        if not low <= v <= high:
            return UNPARSED
        scores[side] = v
    a, b = scores["A"], scores["B"]
    shown: LetterVerdict = "A" if a > b else "B" if b > a else "tie"
    return ParsedVerdict("parsed", shown, a, b)


# MMRB2 (facebookresearch/MMRB2 @ 7ff0552, evaluate/generate_judgements/evaluator_apis/
# llm_judges/api_pairwise_evaluator.py, parse_llm_json and pairwise_evaluate): the answer's
# markdown code fence is removed, the rest read by json_repair, and its "better_response" is
# the judgement. An answer without one raises there: the benchmark's judge run counts the
# attempt as failed and records no judgement.
_FENCE_START = re.compile(r"^```(?:json)?\s*\n?")
_FENCE_END = re.compile(r"\n?```\s*$")


def mmrb2_judgement(text: str) -> object | None:
    """The judgement MMRB2's own judge run records for an answer, as written (any JSON value:
    "A", "B", "tie", 3...), or None where it records none: no JSON object, no
    ``better_response``, or an empty one (compute_accuracy.py skips those)."""
    import json_repair  # here: `mmrb --help` does not load it

    text = _FENCE_START.sub("", text.strip())
    text = _FENCE_END.sub("", text.strip())
    try:
        value = json_repair.loads(text)
    except Exception:  # the benchmark's run catches any error of the attempt
        return None
    if not isinstance(value, dict) or "better_response" not in value:
        return None
    judgement = value["better_response"]
    return judgement if judgement else None


def parse_mmrb2(text: str) -> ParsedVerdict:
    """MMRB2's JSON answer: ``"better_response": "A"`` or ``"B"``; anything else (another
    value, or no judgement at all) is ``unparsed``. Scoring under ``--preset mmrb2`` re-reads
    the text to tell the two apart as the benchmark does (mmrb_eval/rules.py)."""
    value = mmrb2_judgement(text)
    if value == "A" or value == "B":
        return ParsedVerdict("parsed", value)
    return UNPARSED


_TOKEN: dict[str, LetterVerdict] = {"a": "A", "1": "A", "b": "B", "2": "B", "tie": "tie", "c": "tie"}


def regex_parser(pattern: str) -> Callable[[str], ParsedVerdict]:
    """A user parser: the first group of every match names A/1, B/2 or tie/C."""
    rx = re.compile(pattern, re.IGNORECASE | re.DOTALL)
    if rx.groups < 1:
        raise ValueError(f"verdict regex {pattern!r} needs a group that captures the answer")

    def parse(text: str) -> ParsedVerdict:
        names = {_TOKEN.get(m.strip().lower()) for m in rx.findall(text)}
        if not names:
            return UNPARSED
        if None in names:
            return UNPARSED
        if len(names) > 1:
            return BOTH
        return ParsedVerdict("parsed", names.pop())

    return parse


PARSERS: dict[str, Callable[[str], ParsedVerdict]] = {
    "brackets": parse_brackets,
    "vlrewardbench": parse_vlrb,
    "r1": parse_r1,
    "ratings": parse_ratings,
    "mmrb2": parse_mmrb2,
}


def get_parser(name: str) -> Callable[[str], ParsedVerdict]:
    if name.startswith("regex:"):
        return regex_parser(name[len("regex:") :])
    try:
        return PARSERS[name]
    except KeyError:
        raise ValueError(f"unknown verdict parser {name!r}: use one of {', '.join(PARSERS)} or regex:PATTERN") from None


def parse_verdict(raw: str | None, parser: str | Callable[[str], ParsedVerdict]) -> ParsedVerdict:
    if raw is None:
        return UNPARSED
    fn = get_parser(parser) if isinstance(parser, str) else parser
    return fn(raw)
