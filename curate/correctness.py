"""Decide whether a response is correct from the item's reference answer, and abstain
("unsure", the response goes to humans) wherever a careful grader would hesitate.

The reference decides the kind of answer, and each kind has its own reader:

* ``choice``: the reference is an option letter, alone or with its text ("C", "(B) 14 cm",
  "Answer: D"). The response's letter comes from an answer marker ("Answer: C", "the answer
  is (C)", "\\boxed{C}", "I choose C", "C is correct") or else from the one letter it names
  ("(C)", "C)", a line starting "C."); "(A) is wrong", "not A" strike a letter out. Without
  a letter, the option's text decides ("14 cm", "Albert Einstein", graded like a reference
  of its own), using the question's other options when given (``options``).
* ``yes_no``: the reference is yes/no or true/false; the response must lead with its answer
  ("No, nobody is visible.", "Answer: yes", "\\boxed{Yes}").
* ``number``: the reference is one number, with a sign, unit, currency, percentage, fraction
  or scale word; see :mod:`curate.quantities` for how numbers are read and compared
  (units converted, 45% = 0.45, 1/3 ~ 0.333, Unicode digits and minus signs).
* ``exact`` (free text): the response, its marked or bold answer, its opening phrase
  ("Thursday, at 23 °C.") or the predicate of its last sentence ("The car is red.") equals
  the reference after normalisation. Free text is judged incorrect only inside a closed set of
  answers (colours, weekdays, months, seasons, left/right): "Pink." against "orange".
  Anything else that differs ("NYC" for "New York City", "London" for "Paris") is unsure:
  without knowing synonyms, a mismatch is a guess.

Abstention: unsure whenever the response offers several answers ("A or B", "5 or 6",
"Thursday or Friday"), hedges its answer ("probably", "maybe", "could be", "cat?"), revises
itself ("Actually...", "wait"), has second thoughts after it ("However, ..."), negates or
qualifies what it says, or gives no answer the reader can find; also for units of different
kinds, roundings too coarse to tell and neighbouring colours. A response
that plainly refuses ("I cannot tell.") is incorrect. Every decision records its method,
what it read and why, so a reviewer can check it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

from .model import Correctness
from .quantities import (
    Quantity,
    compare,
    number_words_in,
    numbers_in,
    prepare,
    read_other_way,
    reference_quantity,
    reference_read_other_way,
)
from .wording import plural

DEFAULT_REL_TOL = 1e-4
DEFAULT_ABS_TOL = 1e-9


@dataclass(frozen=True)
class CorrectnessVerdict:
    verdict: Correctness
    method: str  # "choice", "yes_no", "number", "exact" or "none" (no reference)
    extracted: str | None = None  # what was read from the response
    expected: str | None = None  # what was read from the reference
    note: str = ""


@dataclass(frozen=True)
class _Tolerance:
    rel: Fraction
    abs: Fraction


# -- cues that make a careful grader hesitate ----------------------------------------------------
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|likely|unlikely|might|guess|unsure|uncertain|not\s+sure|"
    r"not\s+certain|(?:could|may)\s+(?:also\s+)?(?:be|have)|hard\s+to\s+say|either)\b|\?",  # "cat?" asks
    re.I,
)
_REVISION = re.compile(
    r"\b(?:actually|wait|correction|on\s+second\s+thought|scratch\s+that|i\s+mean|i\s+was\s+wrong|"
    r"my\s+mistake|sorry)\b",
    re.I,
)
_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|nothing|cannot)\b|n't\b", re.I)
# after an answer, these offer another one ("The answer is 4. However, if ... it is 5.")
_SECOND_THOUGHT = re.compile(
    r"\b(?:however|alternatively|otherwise|unless|but\s+if|or\s+possibly|(?:could|would)\s+also|"
    r"also\s+(?:be\s+)?(?:possible|plausible|correct|valid|works?|fits?))\b",
    re.I,
)
_CONTRAST = re.compile(r"\b(?:or|but|however|though|although|than|before|after|except|instead|rather)\b", re.I)
_REFUSAL = re.compile(
    r"^\W*(?:i\s+(?:do\s+not|don't|cannot|can't|can\s+not|am\s+unable\s+to|am\s+not\s+able\s+to)\s+"
    r"(?:know|tell|determine|see|say|answer)\b|(?:it\s+is|it's)\s+(?:not\s+possible|impossible)\s+to\s+"
    r"(?:tell|determine|say)\b)",
    re.I,
)
# a bound is no value: "more than 3", "at least 3", "3 or more", "≥ 3", "3+" ("->" is an arrow)
_BOUND = re.compile(
    r"\b(?:more|greater|fewer|less|higher|lower|larger|smaller|bigger)\s+than\b|\bat\s+(?:least|most)\b"
    r"|\bor\s+(?:more|less|fewer|above|below|over|under)\b|\bup\s+to\b|\bno\s+(?:more|less|fewer)\b"
    r"|(?<![-=<])[<>≤≥](?![-=]?>)|(?<=\d)\+(?!\s*[\d(])",
    re.I,
)
_SIGN_WORDS = re.compile(
    r"\b(?:fell|fall|falls|drop|dropped|drops|decrease|decreased|down|below|lower|less|loss|lost|above|up|rose|gain)\b"
    r"|±|\\pm|\+/-",
    re.I,
)


def _is_refusal(text: str) -> bool:
    """A short, plain "I cannot tell": no answer at all, so not a correct one. Nothing may
    follow it ("I don't know, maybe Paris" offers an answer)."""
    m = _REFUSAL.match(text)
    if not m or len(text.split()) > 12 or _HEDGE.search(text):
        return False
    return re.fullmatch(r"[^,;:?]*[.!]?\s*", text[m.end() :]) is not None


def _doubts_after(text: str, pos: int) -> bool:
    """Whether the response hedges or offers another answer after the one read at pos."""
    return bool(_HEDGE.search(text, pos) or _SECOND_THOUGHT.search(text, pos))


# -- sentences and marked answers ----------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def _sentence_at(text: str, pos: int) -> str:
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() >= pos:
            return text[start : m.start()]
        start = m.end()
    return text[start:]


_MAX_ANSWER = 300  # characters a marked answer may run to (keeps long responses linear)
_MARKER = r"(?:final\s+answer|correct\s+answer|correct\s+option|right\s+answer|answer)"
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*([^{}]+?)\s*\}?\s*\}")
_ANSWER_TAIL = re.compile(_MARKER + r"\s*(?:is|would\s+be|should\s+be|:|=)\s*", re.I)
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__", re.S)


@dataclass(frozen=True)
class _Span:
    text: str
    start: int  # offset in the response


def _marked_answers(text: str) -> list[_Span]:
    """Where a response marks its answer: every ``\\boxed{..}``, else the rest of the sentence
    after each "answer is" / "Answer:"."""
    boxed = [_Span(m.group(1), m.start(1)) for m in _BOXED.finditer(text)]
    if boxed:
        return boxed
    spans = []
    for m in _ANSWER_TAIL.finditer(text):
        end = _SENTENCE_END.search(text, m.end(), m.end() + _MAX_ANSWER)
        spans.append(_Span(text[m.end() : end.start() if end else m.end() + _MAX_ANSWER], m.end()))
    return spans


def _bold(text: str) -> list[_Span]:
    return [_Span(m.group(1) or m.group(2), m.start()) for m in _BOLD.finditer(text)]


def normalise(text: str) -> str:
    t = text.lower()
    t = re.sub(r"[^\w\s]", " ", t)
    t = re.sub(r"\b(a|an|the)\b", " ", t)
    return " ".join(t.split())


# -- option letters --------------------------------------------------------------------------------
_REF_CHOICE = re.compile(
    r"^\s*(?:answer\s*[:\-]?\s*)?(?:[\(\[]([A-J])[\)\]]|([A-J])(?:[).:]|\s*$))\s*(.*?)\s*$", re.I | re.S
)
_CAP = r"(?-i:([A-J]))"  # an option letter is a capital, so the article "a" is never one
_OPEN = r"[\(\[\*]*\s*"
_END = r"(?![\w'])(?!\s*[=+/^²<>×])"  # "answer is E = mc^2" names no option
_AFFIRM = (
    re.compile(
        _MARKER + r"\s*(?:is|would\s+be|should\s+be)?\s*[:=\-]?\s*(?:option|choice)?\s*" + _OPEN + _CAP + _END, re.I
    ),
    re.compile(_MARKER + r"\s*(?:is|:)\s*[\(\[]?([a-j])[\)\]]?\s*\.?\s*$", re.I),  # "the answer is d"
    re.compile(
        r"\b(?:choose|chose|pick|select|go\s+with|go\s+for|opt\s+for|i'd\s+say)\s+(?:option\s+|choice\s+)?"
        + _OPEN
        + _CAP
        + _END,
        re.I,
    ),
    re.compile(
        r"\b(?:so|therefore|thus|hence)\s*,?\s*(?:option\s+)?[\(\[]?" + _CAP + r"[\)\]]?\s*[.!]?\s*$", re.I
    ),  # "..., so B."
    re.compile(r"^\W*" + _CAP + r"[\)\]]?\s*,\s*(?:because|since|as)\b", re.I),  # "B, because ..."
    re.compile(
        r"(?<![\w'])[\(\[]?" + _CAP + r"[\)\]]?\s+is\s+(?:also\s+)?(?:the\s+)?"
        r"(?:correct|right|best|true|possible|plausible|valid)\b",
        re.I,
    ),
)
_MORE_LETTERS = re.compile(r"\s*[\)\]\*]*\s*[\(\[]?\s*(?:,|/|&|\bor\b|\band\b)\s*[\(\[]?\s*" + _CAP + _END, re.I)
_REJECT = (
    re.compile(
        r"(?<![\w'])[\(\[]?"
        + _CAP
        + r"[\)\]]?\s+(?:is|was)\s+(?:wrong|incorrect|false|not\s+(?:correct|right|the\s+answer))\b",
        re.I,
    ),
    re.compile(r"\bnot\s+(?:option\s+)?[\(\[]?" + _CAP + r"[\)\]]?" + _END, re.I),
    re.compile(r"\b(?:eliminate|rule\s+out|exclude)\s+(?:option\s+)?[\(\[]?" + _CAP + _END, re.I),
)
_MENTION = (
    re.compile(r"[\(\[]" + _CAP + r"[\)\]]"),  # (B)
    re.compile(r"(?:^|(?<=\s))" + _CAP + r"\)"),  # B)
    re.compile(
        r"^[ \t]*\**" + _CAP + r"\**[ \t]*(?:[.,]|$)", re.M
    ),  # a line that starts "B." or is "B" ("A:" may be Q/A)
    re.compile(r"\b(?:option|choice)\s+" + _CAP + _END, re.I),
    re.compile(r"\*\*" + _CAP + r"\*\*"),
)
_LETTER_LIST = re.compile(r"(?<![\w'])[\(\[]?" + _CAP + r"[\)\]]?\s*(?:,|/|&|\bor\b|\band\b)\s*[\(\[]?" + _CAP + _END)


def reference_choice(reference: str) -> tuple[str, str | None] | None:
    """The option letter of a reference ("C", "(B) 14 cm") and the option's text if given."""
    m = _REF_CHOICE.match(reference)
    if not m:
        return None
    return (m.group(1) or m.group(2)).upper(), (m.group(3) or None)


def options_from_prompt(prompt: str) -> dict[str, str]:
    """The options a question lists one per line ("A) Isaac Newton", "(B) 14 cm", "C. Rome"),
    when they run A, B, C... from A; else none."""
    found = re.findall(r"^\s*[\(\[]?([A-J])[\)\].:]\s+(\S.*?)\s*$", prompt, re.M)
    options: dict[str, str] = {}
    for letter, text in found:
        if letter != "ABCDEFGHIJ"[len(options)]:
            break
        options[letter] = text
    return options if len(options) >= 2 else {}


def extract_letter(text: str) -> tuple[str | None, str]:
    """The option letter a response commits to, or (None, why not)."""
    letter, why, _ = _read_letter(prepare(text))
    return letter, why


def _read_letter(text: str) -> tuple[str | None, str, int]:
    """(letter, why not, where it was read)."""
    affirmed: dict[str, int] = {}
    for m in (m for pattern in _AFFIRM for m in pattern.finditer(text)):
        affirmed.setdefault(m.group(1).upper(), m.start(1))
        for more in _more_letters(text, m.end()):
            affirmed.setdefault(more, m.start(1))
    for m in _BOXED.finditer(text):
        inner = m.group(1).strip().strip("()").strip()
        if len(inner) == 1 and inner in "ABCDEFGHIJ":
            affirmed.setdefault(inner, m.start(1))
    rejected = {m.group(1) for pattern in _REJECT for m in pattern.finditer(text)}
    if set(affirmed) & rejected:
        return None, f"both chose and rejected {', '.join(sorted(set(affirmed) & rejected))}", 0
    if len(affirmed) > 1:
        return None, f"several answers: {', '.join(sorted(affirmed))}", 0
    if affirmed:
        ((letter, pos),) = affirmed.items()
        return letter, "", pos
    mentioned: dict[str, int] = {}
    for m in (m for pattern in _MENTION for m in pattern.finditer(text)):
        mentioned.setdefault(m.group(1), m.start(1))
    for m in _LETTER_LIST.finditer(text):
        mentioned.setdefault(m.group(1), m.start(1))
        mentioned.setdefault(m.group(2), m.start(2))
    kept = {k: v for k, v in mentioned.items() if k not in rejected}
    if len(kept) == 1:
        ((letter, pos),) = kept.items()
        return letter, "", pos
    if kept:
        return None, f"several letters: {', '.join(sorted(kept))}", 0
    return None, "no option letter found", 0


def _more_letters(text: str, pos: int) -> list[str]:
    """Letters listed right after a marked one: "Answer: A or B", "B/C"."""
    out = []
    while (m := _MORE_LETTERS.match(text, pos)) is not None:
        out.append(m.group(1))
        pos = m.end()
    return out


def _named_options(text: str, texts: Mapping[str, str]) -> set[str]:
    """The options whose text the response contains as whole words."""
    norm = normalise(text)
    return {k for k, v in texts.items() if normalise(v) and re.search(rf"\b{re.escape(normalise(v))}\b", norm)}


def _hinted_options(text: str, texts: Mapping[str, str]) -> set[str]:
    """The options named in full, or by a word of four letters or more that no other option
    has ("A. Einstein" hints at "Albert Einstein")."""
    words = {k: set(normalise(v).split()) for k, v in texts.items()}
    said = set(normalise(text).split())
    hinted = set()
    for k, ws in words.items():
        others = set().union(*(w for j, w in words.items() if j != k))
        if any(len(w) >= 4 and not w.isdigit() and w in said and w not in others for w in ws):
            hinted.add(k)
    return hinted | _named_options(text, texts)


def _grade_choice(
    text: str, want: str, own_text: str | None, options: Mapping[str, str], tol: _Tolerance
) -> CorrectnessVerdict:
    def verdict(got: str, note: str = "") -> CorrectnessVerdict:
        return CorrectnessVerdict("correct" if got == want else "incorrect", "choice", got, want, note)

    def unsure(why: str, got: str | None = None) -> CorrectnessVerdict:
        return CorrectnessVerdict("unsure", "choice", got, want, why)

    if _REVISION.search(text):
        return unsure("the response revises itself")
    texts = dict(options)
    if own_text:
        texts.setdefault(want, own_text)
    # a number in the working may equal an option by chance: numeric options are graded below
    named = _named_options(text, {k: v for k, v in texts.items() if reference_quantity(v) is None})
    letter, why, pos = _read_letter(text)
    if letter:
        hinted = _hinted_options(text, texts)
        if hinted and letter not in hinted:
            return unsure(f"letter {letter} but the words of option {', '.join(sorted(hinted))}", letter)
        if _HEDGE.search(_sentence_at(text, pos)) or _doubts_after(text, pos):
            return unsure("hedged", letter)
        return verdict(letter)
    if why != "no option letter found":
        return unsure(why)
    if _is_refusal(text):
        return CorrectnessVerdict("incorrect", "choice", None, want, "no answer given")
    if len(named) > 1:
        return unsure(f"names several options: {', '.join(sorted(named))}")
    if named:
        (got,) = named
        if _NEGATION.search(text) or _HEDGE.search(text):
            return unsure("names an option in a negated or hedged sentence", got)
        return verdict(got, "named the option's text")
    if want not in texts:
        return unsure(why)
    # no letter and no option named word for word: grade against the right option's text
    d = _grade_value(text, texts[want], tol)
    others_match = any(_grade_value(text, t, tol).verdict == "correct" for k, t in texts.items() if k != want)
    if d.verdict == "correct" and others_match:
        return unsure("matches more than one option")
    note = f"against the option's text: {d.note}".rstrip(": ")
    return CorrectnessVerdict(d.verdict, "choice", d.extracted, want, note)


# -- yes / no ------------------------------------------------------------------------------------
_YES_NO_REF = re.compile(r"^\s*(yes|no|true|false)\s*\.?\s*$", re.I)
_LEAD_YES_NO = re.compile(
    r"^\W*(?:(?:definitely|certainly|absolutely|clearly|surely)\s+)?(yes|yeah|yep|yup|true|no|nope|nah|false)\b"
    r"(?!\s+(?:doubt|question|wonder|problem|matter)\b)",  # "No doubt, ..." is no answer
    re.I,
)
_NO_PHRASE = re.compile(r"^\W*i\s+(?:don't|do\s+not)\s+think\s+so\b", re.I)
_YES_WORD = re.compile(r"\b(?:yes|yeah|yep|yup|true)\b", re.I)


def _lead_yes_no(scope: str) -> str | None:
    """ "yes"/"no" when the scope leads with it and never turns, "mixed" when it turns, or None."""
    if m := _NO_PHRASE.match(scope):
        lead, end = "no", m.end()
    elif m := _LEAD_YES_NO.match(scope):
        lead, end = ("yes" if m.group(1).lower() in ("yes", "yeah", "yep", "yup", "true") else "no"), m.end()
    else:
        return None
    first, *later = _sentences(scope[end:]) or [""]
    turned = _NEGATION.search(first) if lead == "yes" else _YES_WORD.search(first)
    later_leads = {_lead_word(s) for s in later} - {None, lead}
    if turned or later_leads or _HEDGE.search(scope[:end]) or _doubts_after(scope, end):
        return "mixed"
    return lead


def _lead_word(sentence: str) -> str | None:
    m = _LEAD_YES_NO.match(sentence)
    return None if not m else ("yes" if _YES_WORD.fullmatch(m.group(1)) else "no")


def _grade_yes_no(text: str, want: str) -> CorrectnessVerdict:
    def unsure(why: str) -> CorrectnessVerdict:
        return CorrectnessVerdict("unsure", "yes_no", None, want, why)

    if _REVISION.search(text):
        return unsure("the response revises itself")
    scopes = _marked_answers(text) or [_Span(text, 0)]
    readings = {_lead_yes_no(s.text) for s in scopes}
    if "mixed" in readings or (readings - {None} and _doubts_after(text, scopes[-1].start)):
        return unsure("says both, or qualifies its answer")
    if None in readings:
        if _is_refusal(text):
            return CorrectnessVerdict("incorrect", "yes_no", None, want, "no answer given")
        return unsure("no leading yes/no")
    if len(readings) > 1:
        return unsure("different marked answers")
    (got,) = readings
    return CorrectnessVerdict("correct" if got == want else "incorrect", "yes_no", got, want)


# -- numbers -------------------------------------------------------------------------------------
_AFTER_EQUALS = re.compile(r"(?:=|≈|\bis\b|:)")
_CHECKING = re.compile(r"\b(?:check|checking|verify|verifying|confirm|confirming)\b", re.I)
_FROM_LAST_CLAUSE = "from the last clause"
_CLAUSE_END = re.compile(r"[!?;\n]+|\.(?:\s+|$)")


def _one_number(scope: str, offset: int) -> Quantity | None:
    """The number a short piece of text settles on: its only value, else the only value after
    the last "=", "≈", "is" or ":" that a number follows (as in "3x = 15, so x = 5")."""
    nums = [q for q in numbers_in(scope) if not q.negated]
    if len({q.value for q in nums}) > 1 and re.search(r"\bor\b", scope, re.I):
        return None  # "x = 3 or x = -3"
    if len({q.value for q in nums}) != 1:
        nums = _after_last_equals(scope, nums)
        if len({q.value for q in nums}) != 1:
            return None
    return replace(nums[-1], start=nums[-1].start + offset)


def _after_last_equals(scope: str, nums: list[Quantity]) -> list[Quantity]:
    """The numbers after the last "=" (or "≈", "is", ":") that numbers follow: "x = 6 + 8 =
    14 cm, since the side is longest" -> [14 cm]."""
    for m in reversed(list(_AFTER_EQUALS.finditer(scope))):
        after = [q for q in nums if q.start >= m.end()]
        if after:
            return after
    return []


def _read_number(text: str) -> tuple[Quantity | None, str]:
    marked = _marked_answers(text)
    if marked:
        picks = [_one_number(s.text, s.start) for s in marked]
        if any(numbers_in(s.text) for s, q in zip(marked, picks, strict=True) if q is None):
            return None, "several numbers in a marked answer"
        if len({q.value for q in picks if q}) > 1:
            return None, "different marked answers"
        if any(picks):
            return [q for q in picks if q][-1], ""
    bold = [s for s in _bold(text) if numbers_in(s.text)]
    if bold and (q := _one_number(bold[-1].text, bold[-1].start)):
        return q, ""
    nums = [q for q in numbers_in(text) if not q.negated]
    if not nums:
        words = number_words_in(text)
        if len({q.value for q in words}) == 1:
            return words[0], ""
        return None, "no number found" if not words else "several numbers in words"
    if len({q.value for q in nums}) == 1:
        return nums[-1], ""
    clauses = [(m.group(), m.start()) for m in re.finditer(r"(?:(?!" + _CLAUSE_END.pattern + r").)+", text, re.S)]
    with_numbers = [(c, s) for c, s in clauses if numbers_in(c)]
    if with_numbers and _CHECKING.search(with_numbers[-1][0]):
        return None, "the last clause checks a result"
    q = _one_number(*with_numbers[-1]) if with_numbers else None
    if q is not None:
        return q, _FROM_LAST_CLAUSE
    return None, f"{plural(len(nums), 'number')} and no answer marker"


def _show(q: Quantity) -> str:
    v = q.value
    s = str(v.numerator) if v.denominator == 1 else f"{float(v):g}"
    if q.unit in ("$", "€", "£", "¥"):
        return q.unit + s
    return s + (f" {q.unit}" if q.unit else "")


def _grade_number(text: str, want: Quantity, reference: str, tol: _Tolerance) -> CorrectnessVerdict:
    def unsure(why: str, got: str | None = None) -> CorrectnessVerdict:
        return CorrectnessVerdict("unsure", "number", got, reference, why)

    if _REVISION.search(text):
        return unsure("the response revises itself")
    got, why = _read_number(text)
    if got is None:
        if why == "no number found" and _is_refusal(text):
            return CorrectnessVerdict("incorrect", "number", None, reference, "no answer given")
        return unsure(why)
    if _HEDGE.search(_sentence_at(text, got.start)) or _doubts_after(text, got.start):
        return unsure("hedged", _show(got))
    if _SIGN_WORDS.search(_sentence_at(text, got.start)):
        return unsure("the sign may be carried by a word or a ±", _show(got))
    if _BOUND.search(_sentence_at(text, got.start)):
        return unsure("a bound, not a value", _show(got))
    verdict, note = compare(got, want, rel_tol=tol.rel, abs_tol=tol.abs)
    if verdict == "incorrect" and why == _FROM_LAST_CLAUSE and _states_elsewhere(text, got, want, tol):
        return unsure("the reference's value is stated elsewhere in the response", _show(got))
    if verdict == "incorrect" and _right_read_the_other_way(text, got, reference, want, tol):
        return unsure("a separator before three digits reads two ways (1.200 is 1200 in some countries)", _show(got))
    if verdict == "incorrect" and _numerator_is(text, got, want):
        return unsure("a/b whose a is the reference: a count out of b?", _show(got))
    return CorrectnessVerdict(verdict, "number", _show(got), reference, note or why)


def _states_elsewhere(text: str, got: Quantity, want: Quantity, tol: _Tolerance) -> bool:
    """A guessed (unmarked) pick that is wrong while another number of the response is right
    ("50% of the 200 students, that is 100"): a careful grader would look again."""
    others = [q for q in numbers_in(text) if q.start != got.start]
    return any(compare(q, want, rel_tol=tol.rel, abs_tol=tol.abs)[0] == "correct" for q in others)


def _right_read_the_other_way(text: str, got: Quantity, reference: str, want: Quantity, tol: _Tolerance) -> bool:
    """ "1.200" for 1200, "1,500" for 1.5: right if one side's separator is read the other way."""
    readings = ((read_other_way(text, got), want), (got, reference_read_other_way(reference)))
    return any(g and w and compare(g, w, rel_tol=tol.rel, abs_tol=tol.abs)[0] == "correct" for g, w in readings)


_FRACTION_AT = re.compile(r"[-+]?[$€£¥]?\s?(\d+)\s*/\s*\d+")


def _numerator_is(text: str, got: Quantity, want: Quantity) -> bool:
    """ "4/5" for 4 ("4 out of 5"), "2024/25" for 2024: the fraction's top is the reference."""
    m = _FRACTION_AT.match(text, got.start) if got.places is None else None
    return m is not None and Fraction(int(m.group(1))) == want.value


# -- free text -----------------------------------------------------------------------------------
_CLASSES = {
    "colour": "red orange yellow green blue purple pink brown black white gray silver gold beige",
    "weekday": "monday tuesday wednesday thursday friday saturday sunday",
    "month": "january february march april may june july august september october november december",
    "season": "spring summer autumn winter",
    "side": "left right",
}
_CLASS_OF = {w: c for c, words in _CLASSES.items() for w in words.split()}
_SPELLING = {"grey": "gray", "sept": "september"} | {
    m[:3]: m for m in "january february april june july august september october november december".split()
}
# neighbouring colours a careful grader would not call plainly wrong for each other
_NEAR = {
    frozenset(p.split())
    for p in (
        "gray silver",
        "gray white",
        "gray black",
        "silver white",
        "gold yellow",
        "gold orange",
        "yellow orange",
        "brown beige",
        "brown orange",
        "red pink",
        "red orange",
        "pink purple",
        "purple blue",
        "white beige",
    )
}
_NEEDS_CAPITAL = {"may", "march"}  # also ordinary words
_PERSPECTIVE = re.compile(r"\b(?:perspective|viewer|view|facing|mirror|his|her|their|its)\b", re.I)
_SHADE = {"dark", "light", "bright", "pale", "deep"}
_NOT_A_THING = {"and", "too", "also", "or", "but", "though", "however"}  # "Red too." names nothing
# what may follow "Paris," for the rest to be about the answer, not another one ("Cat, dog.")
_LINKS = r"(?:\d|\(|(?:at|with|in|on|from|by|for|as|because|since|which|who|where|when|located|about|around|"
_LINKS += r"having|showing|followed|its|of|to|peaking|reaching)\b)"
_PREFIX = re.compile(r"^(?:(?:it|this|that)\s+(?:is|s)|these\s+are|they\s+are|(?:final\s+)?answer(?:\s+is)?)\s+")
_COPULA = re.compile(r"\b(?:is|are|was|were)\s+|'s\s+", re.I)
_TIME_PREPOSITION = re.compile(r"^\s*(?:on|in|during)\s+", re.I)


def _canon(norm: str) -> str:
    return " ".join(_SPELLING.get(w, w) for w in norm.split())


def _members(text: str) -> set[str]:
    """Closed-class answers the text names ("May" the month only with its capital)."""
    found = set()
    for m in re.finditer(r"[A-Za-z]+", text):
        w = _SPELLING.get(m.group().lower(), m.group().lower())
        if w == "right" and re.search(r"(?:\b(?:is|are|was|all)|'s|'re)\s+$", text[: m.start()], re.I):
            continue  # "that's right": correct, not a side
        if w in _CLASS_OF and (w not in _NEEDS_CAPITAL or m.group()[0].isupper()):
            found.add(w)
    return found


def _opens_with(text: str, ref_norm: str) -> str | None:
    """The rest of a response that opens with the reference as a whole phrase ("Thursday, at
    23 °C." -> "at 23 °C."), after "It is"/"This is"/an article; None if it does not. What
    follows must be about the answer: a bracket, a new sentence of three words or more, or a
    linking word after a comma ("Cat, dog." and "Cat. Dog." offer two answers)."""
    t = re.sub(
        r"^\W*(?:(?:it|this|that)(?:\s+is|'s)\s+|these\s+are\s+|they\s+are\s+)?(?:(?:a|an|the)\s+)?",
        "",
        text,
        flags=re.I,
    )
    words = r"\W+".join(re.escape(w) for w in ref_norm.split())
    m = re.match(rf"{words}(?:\s*[(]|\s*[.!]?\s*$|\s*[.!](?=\s*\S+\s+\S+\s+\S)|\s*[,;:\u2014]\s*(?={_LINKS}))", t, re.I)
    return t[m.end() :] if m else None


def _words(text: str) -> str:
    """Text as words for comparison; "1.5" and "1,5" kept apart (normalising drops the mark)."""
    text = re.sub(r"(?<=\d)([.,])(?=\d)", lambda m: " point " if m.group(1) == "." else " comma ", text)
    return _canon(normalise(text))


def _grade_text(text: str, reference: str) -> CorrectnessVerdict:
    want = _words(reference)
    if not want or not text.strip():
        return CorrectnessVerdict("unsure", "exact", None, want, "nothing to compare")
    if _REVISION.search(text):
        return CorrectnessVerdict("unsure", "exact", None, want, "the response revises itself")
    marked = _marked_answers(text)
    if len({_words(s.text) for s in marked}) > 1:
        return CorrectnessVerdict("unsure", "exact", None, want, "different marked answers")
    month_case = want in _NEEDS_CAPITAL and reference[:1].isupper()
    if not month_case or re.search(rf"\b{want.capitalize()}\b", text):  # "a march" is no month
        how = _matches_reference(text, want, marked)
        if how is not None:
            return CorrectnessVerdict("correct", "exact", want, want, how)
    if want in _CLASS_OF:
        d = _closed_class_mismatch(
            marked[-1].text if marked else text, want, len(_sentences(text)) == 1 or bool(marked)
        )
        if d is not None:
            return d
    if _is_refusal(text):
        return CorrectnessVerdict("incorrect", "exact", "", want, "no answer given")
    whole = _words(text)
    if re.search(rf"\b{re.escape(want)}\b", whole):
        return CorrectnessVerdict("unsure", "exact", _PREFIX.sub("", whole), want, "reference inside a longer answer")
    return CorrectnessVerdict("unsure", "exact", None, want, "free-form answer: needs a human")


def _matches_reference(text: str, want: str, marked: list[_Span]) -> str | None:
    """How the response plainly gives the reference, or None."""
    bold = _bold(text)
    short_bold = {_words(s.text) for s in bold if len(s.text.split()) <= 4}
    candidates = (
        (marked[-1] if marked else None, "marked answer"),
        (bold[-1] if short_bold == {want} else None, "bold answer"),
    )
    for span, how in candidates:
        if span is not None and _words(span.text) == want:
            sentence = _sentence_at(text, span.start)
            if _HEDGE.search(sentence) or _NEGATION.search(sentence) or _doubts_after(text, span.start):
                return None
            return how
    plain = not (_HEDGE.search(text) or _NEGATION.search(text))
    whole = _words(text)
    stripped = _PREFIX.sub("", whole)
    forms = {want, want + "s", want + "es"} if " " not in want else {want}
    if plain and (whole in forms or stripped in forms):
        return "the whole answer"
    rest = _opens_with(text, want)
    if rest is not None and not (_HEDGE.search(rest) or _NEGATION.search(rest) or _CONTRAST.search(rest)):
        if not _members(rest) - {want}:
            return "opens with the reference"
    last = (_sentences(text) or [""])[-1]
    if plain and _CLASS_OF.get(want) != "side" and _concludes_with(last, want):  # "that's right" is no side
        return "predicate of the last sentence"
    words = stripped.split()
    if plain and _CLASS_OF.get(want) == "colour" and len(words) == 2 and want in words:
        if words[0] in _SHADE and words[1] == want:
            return "a shade of the reference"
        if words[0] == want and words[1] not in _CLASS_OF and words[1] not in _NOT_A_THING:
            return "the colour of a named thing"  # "Red car."
    return None


def _concludes_with(sentence: str, want: str) -> bool:
    """The sentence makes one claim whose predicate is the reference ("The car is red.", "It
    is a dog, with floppy ears."; "The meeting is on Tuesday." for days, months, seasons)."""
    copulas = list(_COPULA.finditer(sentence))
    if len(copulas) != 1:
        return False
    predicate = sentence[copulas[0].end() :]
    if _CLASS_OF.get(want) in ("weekday", "month", "season"):
        predicate = _TIME_PREPOSITION.sub("", predicate)
    rest = _opens_with(predicate, want)
    return rest is not None and not (_CONTRAST.search(rest) or _members(rest) - {want})


def _closed_class_mismatch(scope: str, want: str, single: bool) -> CorrectnessVerdict | None:
    """Incorrect when a short answer names only other members of the reference's closed set
    ("Pink." for "orange", "June had the most visitors." for "May")."""
    named = _members(scope)
    same_class = {w for w in named if _CLASS_OF[w] == _CLASS_OF[want]}
    if not single or len(scope.split()) > 12 or not same_class or want in named:
        return None
    if any(frozenset((w, want)) in _NEAR for w in same_class):
        return None
    if _HEDGE.search(scope) or _NEGATION.search(scope) or _CONTRAST.search(scope):
        return None
    if _CLASS_OF[want] == "side" and _PERSPECTIVE.search(scope):
        return None
    got = ", ".join(sorted(same_class))
    return CorrectnessVerdict("incorrect", "exact", got, want, f"names another {_CLASS_OF[want]}")


# -- deciding ------------------------------------------------------------------------------------
def _grade_value(text: str, reference: str, tol: _Tolerance) -> CorrectnessVerdict:
    yes_no = _YES_NO_REF.match(reference)
    if yes_no:
        return _grade_yes_no(text, "yes" if yes_no.group(1).lower() in ("yes", "true") else "no")
    qty = reference_quantity(reference)
    if qty is not None:
        return _grade_number(text, qty, reference, tol)
    return _grade_text(text, reference)


def decide(
    response: str,
    reference: str | None,
    *,
    options: Mapping[str, str] | None = None,
    rel_tol: float = DEFAULT_REL_TOL,
    abs_tol: float = DEFAULT_ABS_TOL,
) -> CorrectnessVerdict:
    """The verdict on one response. ``options`` (letter -> text, e.g. from
    :func:`options_from_prompt`) lets a letter reference be matched by an option's text."""
    if reference is None or not reference.strip():
        return CorrectnessVerdict("unsure", "none", note="no reference answer")
    ref = prepare(reference.strip())
    text = prepare(response).replace("\u2019", "'")
    tol = _Tolerance(Fraction(rel_tol), Fraction(abs_tol))
    choice = reference_choice(ref)
    if choice is not None:
        return _grade_choice(text, *choice, options or {}, tol)
    return _grade_value(text, ref, tol)


__all__ = ["CorrectnessVerdict", "decide", "extract_letter", "normalise", "options_from_prompt"]
