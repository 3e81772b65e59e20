"""Reading a verdict out of a judge's text.

Every parser returns an outcome, never raises: ``parsed`` (A, B or tie), ``unparsed`` (no
verdict found) or ``both`` (the text names both answers). What to make of ``unparsed`` and
``both`` is a scoring decision (mmrb_eval/scoring.py), so the official Multimodal
RewardBench rule "contains [[A]] -> A, even if it also contains [[B]]" is applied there,
from the stored ``both`` outcome, and is always counted.

Every built-in parser takes time linear in the answer (a judge's answer is hostile input):
the benchmarks' own expressions are restated where Python's backtracking would take
polynomial time on them (VL-RewardBench's, R1-Reward's), and MMRB2's json_repair, whose
repairs can take quadratic time, runs within a budget of work (``REPAIR_STEPS``). An answer
that cannot be read within it is ``unparsed`` with its ``reason`` (stored as the
judgment's ``error``), never a hang.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import FrameType
from typing import Any

from ..model import LetterVerdict
from .records import ParseOutcome


@dataclass(frozen=True)
class ParsedVerdict:
    outcome: ParseOutcome
    shown: LetterVerdict | None = None  # as the judge saw them
    score_a: float | None = None
    score_b: float | None = None
    reason: str | None = None  # why an answer is unparsed, where the parser knows more than "no verdict"


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
# and asterisks removed, case-insensitive:
#   (?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*(?:the\s*)?(?:slightly\s*)?better
# The greedy ``.*`` finds the last "Answer N is better" after the first "Overall
# Judgment"/"Therefore". Run as written, its backtracking takes polynomial time ("Therefore"
# and 400 spaces: seconds), so it is restated as what it finds: the first anchor, then the
# last answer after it (tests/test_faults_parsing.py checks both agree).
_VLRB_ANCHOR = re.compile(r"Overall Judgment|Therefore", re.IGNORECASE)
_VLRB_ANSWER = re.compile(r"Answer\s*(\d+)\s*is\s*(?:the\s*)?(?:slightly\s*)?better", re.IGNORECASE)
_NEITHER = 10**20  # an answer number too long for int(): neither 1 nor 2


def vlrb_answer_number(text: str) -> int | None:
    text = text.replace("\n", "").replace("*", "")
    anchor = _VLRB_ANCHOR.search(text)
    if anchor is None:
        return None
    last = None
    for last in _VLRB_ANSWER.finditer(text, anchor.end()):  # noqa: B007 (the last one is kept)
        pass
    if last is None:
        return None
    digits = last.group(1).lstrip("0") or "0"
    return int(digits) if len(digits) <= 20 else _NEITHER


def parse_vlrb(text: str) -> ParsedVerdict:
    n = vlrb_answer_number(text)
    if n == 1:
        return ParsedVerdict("parsed", "A")
    if n == 2:
        return ParsedVerdict("parsed", "B")
    return UNPARSED  # no match, or "Answer 3 is better"


def _r1_answers(text: str) -> list[str]:
    """What ``re.findall(r"<answer>(.*?)</answer>", text, re.DOTALL)`` finds, in linear time
    (the expression rescans the rest of the text from every unclosed tag)."""
    out = []
    pos = 0
    while (start := text.find("<answer>", pos)) >= 0:
        end = text.find("</answer>", start + len("<answer>"))
        if end < 0:  # no tag after this one is closed either
            break
        out.append(text[start + len("<answer>") : end])
        pos = end + len("</answer>")
    return out


def parse_r1(text: str) -> ParsedVerdict:
    """R1-Reward: ``<answer>1</answer>`` (first shown) or ``<answer>2</answer>``.

    R1-Reward's own harness falls back to the last digit 1/2 anywhere in the text and reads
    anything else as 2; here a missing or odd tag is ``unparsed``, and tags naming both
    answers are ``both``.
    """
    values = {v.strip() for v in _r1_answers(text)}
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

# json_repair reads valid JSON with json.loads, as here, in linear time; its repairs of the
# rest take quadratic time on some texts (``'["' * 4000``: a second; 60 KB: minutes). So a
# repair gets a budget of work: at most REPAIR_STEPS Python calls, json_repair's own steps
# counted by a trace function, so that an answer always gets the same result whatever the
# machine's load (a wall-clock limit would not). The worst texts known spend 0.5 to 1.7 us a
# step (tests/test_faults_parsing.py): under 0.1 s an answer. An ordinary answer takes about
# 7 steps a character, so broken JSON of up to ~7,000 characters is repaired as the
# benchmark does, and valid JSON after some prose costs a few dozen steps at any length up
# to REPAIR_MAX_CHARS, past which no repair is tried.
REPAIR_STEPS = 50_000
REPAIR_MAX_CHARS = 200_000  # curate.llm.DEFAULT_MAX_RESPONSE_CHARS


@dataclass(frozen=True)
class Unread:
    """An answer whose judgement could not be read within the budget, and why. Under the
    mmrb2 rule it counts as an answer that names neither response (unparsed, wrong), never
    as one without a judgement: nothing hostile is left out of the figures."""

    reason: str


class _OverBudget(BaseException):  # not an Exception: json_repair catches those
    pass


def _budgeted(fn: Callable[[], Any], steps: int) -> Any:
    """``fn()``, raising _OverBudget once it has made more than ``steps`` Python calls."""
    left = steps

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal left
        left -= 1
        if left < 0:
            raise _OverBudget  # Python unsets a trace function that raises
        return None  # no line events: only calls are counted

    previous = sys.gettrace()  # a debugger's or coverage's: given back after
    sys.settrace(count)
    try:
        return fn()
    finally:
        sys.settrace(previous)


@lru_cache(maxsize=8)  # scoring reads an answer twice in a row (no_judgement, then its verdict)
def _repaired(text: str) -> Any:
    """json_repair.loads(text), an Unread past the budget, or None where it raises."""
    import json_repair  # here: `mmrb --help` does not load it

    if len(text) > REPAIR_MAX_CHARS:
        return Unread(
            f"not valid JSON, and at {len(text):,} characters too long to repair (limit {REPAIR_MAX_CHARS:,})"
        )
    try:
        return _budgeted(lambda: json_repair.loads(text), REPAIR_STEPS)
    except _OverBudget:
        return Unread(f"not valid JSON, and its repair went over the budget of {REPAIR_STEPS:,} steps")
    except Exception:  # the benchmark's run catches any error of the attempt
        return None


def mmrb2_judgement(text: str) -> object | None:
    """The judgement MMRB2's own judge run records for an answer, as written (any JSON value:
    "A", "B", "tie", 3...), or None where it records none: no JSON object, no
    ``better_response``, or an empty one (compute_accuracy.py skips those). An answer that
    cannot be read within the budget is an ``Unread``."""
    text = _FENCE_START.sub("", text.strip())
    text = _FENCE_END.sub("", text.strip())
    try:
        value = json.loads(text)  # json_repair's own first step
    except RecursionError:  # json_repair lets it out: the benchmark's run records nothing
        return None
    except ValueError:  # not JSON (or an integer past Python's digit limit): repaired
        value = _repaired(text)
    if isinstance(value, Unread):
        return value
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
    if isinstance(value, Unread):
        return ParsedVerdict("unparsed", reason=value.reason)
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
