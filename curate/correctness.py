"""Decide whether a response is correct from the item's reference answer, where a rule can.

The reference decides the method:

* ``choice``: the reference is one option letter ("C", "(C)", "Answer: C"); the response's
  letter is taken from "Answer: C", "the answer is (C)", "\\boxed{C}", or a response that
  starts with the letter ("C", "(C) ...", "C. ...");
* ``yes_no``: the reference is yes/no (or true/false);
* ``number``: the reference is a number, optionally with a unit ("12 cm", "3/4", "1,200",
  "45%"); whole numbers on both sides compare exactly, others with a relative tolerance
  (1e-4), converting between known units of the same kind (mm/cm/m/km, g/kg, s/min/h);
* ``exact``: anything else, compared after normalisation (case, punctuation, articles,
  whitespace), or a response that opens with the reference ("Thursday, at 23 °C").

Where a response marks its answer (``\\boxed{}``, "Answer: ...", "the answer is ...", or a
final **bold** phrase), only that part is read; a number is otherwise taken when it is the
only one, or the one after the last "=", "≈", "is" or ":" of the last clause that has one.

Only an unambiguous reading decides. Several different letters, both "yes" and "no", several
numbers without an answer marker, an unknown unit mismatch, or a long free-form answer that
differs from a short reference: ``unsure``, which sends the response to humans. Every decision
records its method and what it read, so a reviewer can check it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .model import Correctness

DEFAULT_REL_TOL = 1e-4
DEFAULT_ABS_TOL = 1e-9


@dataclass(frozen=True)
class Decision:
    verdict: Correctness
    method: str  # "choice", "yes_no", "number", "exact" or "none" (no reference)
    extracted: str | None = None  # what was read from the response
    expected: str | None = None  # what was read from the reference
    note: str = ""


# -- reading ---------------------------------------------------------------------------------
_MARKER = r"(?:final\s+answer|correct\s+answer|answer)"
_LETTER_MARKED = re.compile(
    _MARKER + r"\s*(?:is|would\s+be|should\s+be|:|=)?\s*(?:option\s*)?[:\-]?\s*[\(\[\*]*\s*((?-i:[A-J]))(?![\w'])",
    re.I,
)
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*([^{}]+?)\s*\}?\s*\}")
_LETTER_LEAD = re.compile(r"^\s*[\(\[\*]*\s*([A-J])\s*(?:[\)\]\.:,\*]|$)")
_LETTER_PAREN = re.compile(r"\(([A-J])\)")
_REF_LETTER = re.compile(r"^\s*(?:" + _MARKER + r"\s*[:\-]?\s*)?[\(\[]?\s*([A-J])\s*[\)\]\.]?\s*$", re.I)

_YES = {"yes", "true", "correct"}
_NO = {"no", "false", "incorrect"}
_YESNO_REF = re.compile(r"^\s*(yes|no|true|false)\s*\.?\s*$", re.I)
_WORD = re.compile(r"[a-z]+")

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+"
_NUMBER = re.compile(r"(?<![\w.])(" + _NUM + r")(?:\s*/\s*(\d+))?\s*(%|[a-zA-Z°]+\b)?")
_REF_NUMBER = re.compile(r"^\s*\$?\s*(" + _NUM + r")(?:\s*/\s*(\d+))?\s*(%|[a-zA-Z°]+)?\s*\.?\s*$")
_ANSWER_TAIL = re.compile(_MARKER + r"\s*(?:is|would\s+be|should\s+be|:|=)\s*(.+)", re.I | re.S)

# units we can convert: factor to a base unit of the same kind
_UNITS = {
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0), "km": ("length", 1000.0),
    "meter": ("length", 1.0), "meters": ("length", 1.0), "metres": ("length", 1.0),
    "g": ("mass", 1.0), "kg": ("mass", 1000.0), "mg": ("mass", 0.001),
    "s": ("time", 1.0), "sec": ("time", 1.0), "seconds": ("time", 1.0), "min": ("time", 60.0),
    "minutes": ("time", 60.0), "h": ("time", 3600.0), "hours": ("time", 3600.0),
    "%": ("percent", 1.0), "percent": ("percent", 1.0),
    "deg": ("angle", 1.0), "degrees": ("angle", 1.0), "°": ("angle", 1.0),
}


def reference_letter(reference: str) -> str | None:
    m = _REF_LETTER.match(reference)
    return m.group(1).upper() if m else None


def extract_letter(text: str) -> tuple[str | None, str]:
    """The option letter a response commits to, or (None, why not)."""
    marked = {m.group(1).upper() for m in _LETTER_MARKED.finditer(text)}
    boxed = {b.strip().strip("()").upper() for b in _BOXED.findall(text)}
    boxed = {b for b in boxed if len(b) == 1 and b in "ABCDEFGHIJ"}
    for found in (boxed, marked):
        if len(found) == 1:
            return found.pop(), ""
        if len(found) > 1:
            return None, f"several answers: {', '.join(sorted(found))}"
    m = _LETTER_LEAD.match(text)
    if m:
        return m.group(1).upper(), ""
    parens = {p.upper() for p in _LETTER_PAREN.findall(text)}
    if len(parens) == 1:
        return parens.pop(), ""
    if len(parens) > 1:
        return None, f"several letters: {', '.join(sorted(parens))}"
    return None, "no option letter found"


def extract_yes_no(text: str) -> tuple[str | None, str]:
    tail = _ANSWER_TAIL.search(text)
    scope = tail.group(1) if tail else text
    words = _WORD.findall(scope.lower())
    if words and words[0] in _YES | _NO:
        lead = "yes" if words[0] in _YES else "no"
        first_sentence = _WORD.findall(re.split(r"[.!?\n]", scope.lower(), maxsplit=1)[0])
        opposite = ("no", "false") if lead == "yes" else ("yes", "true")
        if any(w in opposite for w in first_sentence[1:]):
            return None, "hedged: yes and no in the same sentence"
        return lead, ""
    yes = any(w in ("yes", "true") for w in words)
    no = any(w in ("no", "false") for w in words)
    if yes != no:
        return ("yes" if yes else "no"), ""
    return None, "both yes and no" if yes else "no yes/no found"


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str | None
    integer: bool = False  # written as a whole number: compared exactly, not with a tolerance


def _quantity(num: str, denom: str | None, unit: str | None) -> Quantity:
    v = float(num.replace(",", ""))
    if denom:
        v = float(Fraction(v).limit_denominator() / int(denom)) if int(denom) else float("nan")
    u = unit.lower() if unit else None
    if u is not None and u not in _UNITS:
        u = unit  # an unknown word after a number: kept for the mismatch check
    integer = not denom and re.fullmatch(r"[-+]?[\d,]+", num) is not None
    return Quantity(v, u, integer)


def reference_number(reference: str) -> Quantity | None:
    m = _REF_NUMBER.match(reference)
    return _quantity(*m.groups()) if m else None


_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__", re.S)
_CLAUSE_SPLIT = re.compile(r"[!?;\n]+|\.(?:\s+|$)")
_AFTER_EQUALS = re.compile(r"(?:=|≈|\bis\b|:)\s*\$?\s*(" + _NUM + r")(?:\s*/\s*(\d+))?\s*(%|[a-zA-Z°]+\b)?")


def answer_span(text: str) -> str | None:
    """The part of a response that states its answer, when it marks one: ``\\boxed{..}``,
    else the rest of the line after the last "answer is"/"Answer:", else the last **bold**
    phrase (models bold their final answer)."""
    boxed = _BOXED.findall(text)
    if boxed:
        return boxed[-1]
    tail = _last_answer_tail(text)
    if tail:
        return tail.group(1).split("\n")[0]
    bold = [a or b for a, b in _BOLD.findall(text)]
    return bold[-1] if bold else None


def _one_number(scope: str) -> Quantity | None:
    """The number a short piece of text settles on: its only number, else the one after its
    last "=", "≈", "is" or ":" (as in "3x = 15, so x = 5")."""
    nums = _NUMBER.findall(scope)
    if not nums:
        return None
    if len({_quantity(*n).value for n in nums}) == 1:
        return _quantity(*nums[0])
    after = _AFTER_EQUALS.findall(scope)
    return _quantity(*after[-1]) if after else None


def extract_number(text: str) -> tuple[Quantity | None, str]:
    span = answer_span(text)
    if span is not None:
        q = _one_number(span)
        if q is not None:
            return q, ""
    if not _NUMBER.search(text):
        return None, "no number found"
    q = _one_number(text)
    if q is not None and len({_quantity(*n).value for n in _NUMBER.findall(text)}) == 1:
        return q, ""
    clauses = [c for c in _CLAUSE_SPLIT.split(text) if c and _NUMBER.search(c)]
    q = _one_number(clauses[-1]) if clauses else None
    if q is not None:
        return q, "from the last clause"
    return None, f"{len(_NUMBER.findall(text))} numbers and no answer marker"


def _last_answer_tail(text: str):
    last = None
    for last in _ANSWER_TAIL.finditer(text):
        pass
    return last


def normalise(text: str) -> str:
    t = text.lower()
    t = re.sub(r"[^\w\s]", " ", t)
    t = re.sub(r"\b(a|an|the)\b", " ", t)
    return " ".join(t.split())


# -- deciding ----------------------------------------------------------------------------------
def _same_number(got: Quantity, want: Quantity, rel_tol: float, abs_tol: float) -> bool | None:
    """True/False, or None when the units cannot be compared."""
    g, w = got.value, want.value
    if got.unit and want.unit and got.unit != want.unit:
        gu, wu = _UNITS.get(got.unit), _UNITS.get(want.unit)
        if not gu or not wu or gu[0] != wu[0]:
            return None
        g, w = g * gu[1], w * wu[1]
    elif got.integer and want.integer:
        return g == w
    return abs(g - w) <= max(abs_tol, rel_tol * max(abs(g), abs(w)))


def decide(
    response: str,
    reference: str | None,
    *,
    rel_tol: float = DEFAULT_REL_TOL,
    abs_tol: float = DEFAULT_ABS_TOL,
    short_answer_words: int = 6,
) -> Decision:
    if reference is None or not reference.strip():
        return Decision("unsure", "none", note="no reference answer")
    ref = reference.strip()

    letter = reference_letter(ref)
    if letter:
        got, why = extract_letter(response)
        if got is None:
            return Decision("unsure", "choice", None, letter, why)
        return Decision("correct" if got == letter else "incorrect", "choice", got, letter, why)

    yn = _YESNO_REF.match(ref)
    if yn:
        want = "yes" if yn.group(1).lower() in _YES else "no"
        got, why = extract_yes_no(response)
        if got is None:
            return Decision("unsure", "yes_no", None, want, why)
        return Decision("correct" if got == want else "incorrect", "yes_no", got, want)

    qty = reference_number(ref)
    if qty is not None:
        got, why = extract_number(response)
        if got is None:
            return Decision("unsure", "number", None, ref, why)
        same = _same_number(got, qty, rel_tol, abs_tol)
        shown = f"{got.value:g}" + (f" {got.unit}" if got.unit else "")
        if same is None:
            return Decision("unsure", "number", shown, ref, f"units differ: {got.unit} vs {qty.unit}")
        return Decision("correct" if same else "incorrect", "number", shown, ref)

    want = normalise(ref)
    span = answer_span(response)
    got = normalise(span) if span is not None else normalise(response)
    if got == want:
        return Decision("correct", "exact", got, want)
    if span is None and re.match(rf"\W*{re.escape(ref)}\s*[,.;:(\u2014-]", response, re.I):
        # "Orange (a soft, peachy orange).", "Thursday, at 23 °C.": the answer comes first
        return Decision("correct", "exact", want, want, "response starts with the reference")
    if len(got.split()) <= max(short_answer_words, len(want.split()) + 2):
        if re.search(rf"\b{re.escape(want)}\b", got):  # "it is paris": likely right, but "not paris"
            return Decision("unsure", "exact", got, want, "reference inside a short answer")
        return Decision("incorrect", "exact", got, want)
    return Decision("unsure", "exact", None, want, "free-form answer: needs a human")


__all__ = ["Decision", "answer_span", "decide", "extract_letter", "extract_number", "extract_yes_no", "normalise"]
