"""Decide whether a response is correct from the item's reference answer, and abstain
("unsure", the response goes to humans) wherever a careful grader would hesitate.

The reference decides the kind of answer, and each kind has its own reader:

* ``choice``: the reference is an option letter, alone or with its text ("C", "(B) 14 cm",
  "Answer: D"). The response's letter comes from an answer marker ("Answer: C", "the answer
  is (C)", "\\boxed{C}", "I choose C", "C is correct") or else from the one letter it names
  ("(C)", "C)", a line starting "C."); "(A) is wrong", "not A", "neither A nor B", "Option D
  is incorrect", "I don't think B is correct" strike a letter out, and striking out the
  reference's letter is incorrect. A letter followed by another option's text ("(C) London"
  when C is Paris) is unsure. Without a letter, the option's text decides ("14 cm", "Albert
  Einstein", "not London but Paris", graded like a reference of its own), using the
  question's other options when given (``options``).
* ``yes_no``: the reference is yes/no or true/false; the response must lead with its answer
  ("No, nobody is visible.", "Answer: yes", "\\boxed{Yes}"), also in another language
  ("Oui.", "Nein, ...", "是的"); "No sé." is a refusal, not a "no".
* ``number``: the reference is one number, with a sign, unit, currency, percentage, fraction
  or scale word; see :mod:`curate.quantities` for how numbers are read and compared
  (units and temperatures converted, 45% = 0.45, 1/3 ~ 0.333, Unicode digits and minus signs,
  LaTeX, digit groups and decimal commas, equality at the reference's stated precision).
* ``date``: the reference is a date, decade, century, era year or time; see
  :mod:`curate.dates`. A year reference also takes a date of that year.
* ``exact`` (free text): the response, its marked or bold answer, its opening phrase
  ("Thursday, at 23 °C.") or the predicate of its last sentence ("The car is red.") equals
  the reference after normalisation. Free text is judged incorrect only inside a closed set of
  answers (colours, weekdays, months, seasons, left/right): "Pink." against "orange".
  Anything else that differs ("NYC" for "New York City", "London" for "Paris") is unsure:
  without knowing synonyms, a mismatch is a guess.

Abstention: unsure whenever the response offers several answers ("A or B", "5 or 6",
"Thursday or Friday"), hedges its answer ("probably", "maybe", "could be", "cat?"), revises
itself ("Actually...", "wait"), has second thoughts after it ("However, ..."), negates or
qualifies what it says, or gives no answer the reader can find; also for a closing list of
several results with no final answer ("* area = **25**", "* perimeter = **20**"), units of
different kinds, roundings too coarse to tell, and neighbouring colours or a tint or blend of
them ("greenish-blue" for green). A response
that plainly refuses ("I cannot tell.") or plainly negates the reference ("It is not a dog.")
is incorrect. Markdown that changes the reading is made plain first (struck-out text dropped,
"**not**" read as "not"), and answer markers in other languages ("答案是", "la respuesta es")
read as "Answer:". Every decision records its method, what it read and why, so a reviewer can
check it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

from .dates import DateMention, When, compare_dates, dates_in, reference_date, year_of
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
    method: str  # "choice", "yes_no", "number", "date", "exact" or "none" (no reference)
    extracted: str | None = None  # what was read from the response
    expected: str | None = None  # what was read from the reference
    note: str = ""


@dataclass(frozen=True)
class _Tolerance:
    rel: Fraction
    abs: Fraction


# -- cues that make a careful grader hesitate ----------------------------------------------------
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|likely|unlikely|might|guess|unsure|uncertain|not\s+sure|if\s+not|"
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
    r"(?:tell|determine|say)\b"
    # "I don't know" in other languages, and "no idea": not the answer "no"
    r"|no\s+(?:lo\s+)?s[ée]\b|non\s+(?:lo\s+)?so\b|je\s+ne\s+(?:le\s+)?sais\s+pas\b|ich\s+wei(?:ß|ss)\s+(?:es\s+)?nicht\b"
    r"|n[ãa]o\s+sei\b|не\s+знаю|我?不知道|わかりません|分かりません|모르겠습니다|no\s+idea\b)",
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
_MARKER = r"(?:final\s+answer|(?:correct|right|best)\s+(?:answer|option|choice|letter)|answer)"
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
_ONE = r"(?:option\s+|choice\s+)?\**[\(\[]?(?-i:[A-J])[\)\]]?\**"
_LETTERS = r"(?<![\w'])" + _ONE + r"(?:\s*(?:,|/|&|\bor\b|\band\b|\bnor\b)\s*" + _ONE + r")*"  # "A, B or C"
_IS_RIGHT = r"(?:correct|right|best|true|possible|plausible|valid)\b"
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
        r"(?<![\w'])[\(\[]?"
        + _CAP
        + r"[\)\]]?\s+is\s+(?:also\s+)?(?:the\s+)?(?:"
        + _IS_RIGHT
        + r"|(?:(?:correct|right|best|final)\s+)?answer\b)",
        re.I,
    ),
    # "it's B.", "so it must be A."
    re.compile(
        r"\b(?:it's|it\s+is|(?:it\s+)?must\s+be|(?:it\s+)?has\s+to\s+be)\s+(?:option\s+|choice\s+)?[\(\[]?"
        + _CAP
        + r"[\)\]]?(?=\s*(?:[.!;,]|$))",
        re.I,
    ),
    re.compile(r"(?:^|(?<=[;,.])\s*)(?:option\s+)?[\(\[]?" + _CAP + r"[\)\]]?\s+(?:it\s+)?is\s*[.!]?\s*$", re.I),
    re.compile(r"(?<=\bbut\s)\s*(?:option\s+)?[\(\[]?" + _CAP + r"[\)\]]?(?=\s*(?:[.!;]|$))", re.I),  # not B but C
    re.compile(
        r"(?<![\w'])(?:option\s+|choice\s+)?\**[\(\[]?"
        + _CAP
        + r"[\)\]]?\**\s*[:\u2013\u2014-]\s*\**\s*"
        + r"(?:correct|right|true)\b",
        re.I,
    ),  # "Option C: correct"
)
# affirmations that hold a negation ("C is not wrong", "no option except B fits")
_AFFIRM_DESPITE_NEGATION = (
    re.compile(r"(?<![\w'])[\(\[]?" + _CAP + r"[\)\]]?\s+is\s+not\s+(?:wrong|incorrect|false)\b", re.I),
    re.compile(
        r"\bno\s+(?:other\s+)?(?:option|choice|answer|letter)s?\s+(?:except|but|other\s+than|apart\s+from|besides)\s+"
        r"(?:option\s+)?[\(\[]?" + _CAP + _END,
        re.I,
    ),
    re.compile(
        r"\ball\s+(?:the\s+)?(?:other\s+)?(?:options|choices|answers)\s+(?:except|but|other\s+than|apart\s+from|besides)"
        r"\s+(?:option\s+)?[\(\[]?" + _CAP + r"[\)\]]?\s+(?:are|were)\s+(?:wrong|incorrect|false)\b",
        re.I,
    ),
)
_MORE_LETTERS = re.compile(r"\s*[\)\]\*]*\s*[\(\[]?\s*(?:,|/|&|\bor\b|\band\b)\s*[\(\[]?\s*" + _CAP + _END, re.I)
_NOT_RIGHT = (
    r"(?:wrong|incorrect|false|not\s+(?:correct|right|true|valid|possible|it|the\s+(?:(?:correct|right|best)\s+)?"
    r"(?:answer|option|choice|one)))\b"
)
_CANNOT = r"(?:can't|cannot|can\s+not|couldn't|could\s+not)"
_REJECT = (  # each strikes out the letters it spans
    re.compile(  # "A is wrong", "A and B are incorrect", "(B) is not the answer"
        _LETTERS
        + r"\s+(?:is|are|was|were|'s)\s+(?:(?:both|all|also|definitely|clearly|certainly|obviously)\s+)?"
        + _NOT_RIGHT,
        re.I,
    ),
    re.compile(r"(?:\bnot|n't)\s+" + _LETTERS + _END, re.I),  # "not A", "isn't (B)", "not A or B"
    re.compile(r"\bneither\s+" + _LETTERS + r"\s+nor\s+" + _LETTERS + _END, re.I),
    re.compile(r"\bnone\s+of\s+" + _LETTERS + _END, re.I),
    re.compile(r"\b(?:eliminat|rul|exclud|discard)\w*(?:\s+out)?\s+" + _LETTERS + _END, re.I),
    re.compile(r"(?:" + _CANNOT + r"|won't|must\s+not)\s+be\s+" + _LETTERS + _END, re.I),
    re.compile(_LETTERS + r"\s+" + _CANNOT + r"\s+be\s+(?:right|correct|true|it|the\s+answer)\b", re.I),
    re.compile(  # "I'm not choosing A or B"
        r"(?:\bnot|n't|\bnever)\s+(?:be\s+)?(?:choos\w*|pick\w*|select\w*|go(?:ing)?\s+(?:with|for)|opt(?:ing)?\s+for)"
        r"\s+" + _LETTERS + _END,
        re.I,
    ),
    re.compile(_LETTERS + r"\s*[:\u2013\u2014-]\s*\**\s*(?:wrong|incorrect|false)\b", re.I),  # "Option B: wrong"
)
_LETTER_IN = re.compile(r"(?<![\w'])[\(\[\*]?(?-i:([A-J]))[\)\]\*]?(?![\w'])")
# a negation governing what follows it in its clause: "I don't think B is correct", "I would
# not choose B", "Neither A nor B is correct" (the words between may only be such as these)
_NEGATED_BEFORE = re.compile(
    r"(?:\b(?:not|never|neither|nor)|n't)(?:\s+(?:think|believe|say|feel|agree|that|the|a|answer|correct|right|best|"
    r"final|is|be|would|will|choose|pick|select|go|with|for|option|choice|it|this|one|i|consider|really|true|case|"
    r"necessarily))*\s*[\(\[\*]*$",
    re.I,
)
_CLAUSE_BREAK = re.compile(r"[.;:!?\n,]|\b(?:but|so|then)\b", re.I)
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
    read = _read_letter(prepare(text))
    return read.letter, read.why


@dataclass(frozen=True)
class _Letters:
    letter: str | None  # the one letter the response commits to
    why: str  # why none, if none
    pos: int  # where the letter was read
    rejected: frozenset[str]  # the letters it strikes out ("not A", "B is wrong")


def _negated_at(text: str, pos: int) -> bool:
    """Whether a negation in the same clause governs what is at pos ("I don't think B ...")."""
    start = max(0, pos - 80)
    start = max((m.end() for m in _CLAUSE_BREAK.finditer(text, start, pos)), default=start)
    return _NEGATED_BEFORE.search(text, start, pos) is not None


def _read_letter(text: str) -> _Letters:
    affirmed: dict[str, int] = {}
    rejected: set[str] = set()
    kept_spans = []  # affirmations that hold a negation: not struck out by it
    for m in (m for pattern in _AFFIRM_DESPITE_NEGATION for m in pattern.finditer(text)):
        affirmed.setdefault(m.group(1).upper(), m.start(1))
        kept_spans.append((m.start(), m.end()))
    struck_spans = []
    for m in (m for pattern in _REJECT for m in pattern.finditer(text)):
        if not any(a <= m.start() < b for a, b in kept_spans):
            rejected.update(_LETTER_IN.findall(m.group()))
            struck_spans.append((m.start(), m.end()))
    for m in (m for pattern in _AFFIRM for m in pattern.finditer(text)):
        listed = re.fullmatch(r"[\)\]\*\s]*", text[m.end(1) : m.end()])  # "Answer: A or B", not "A: correct, B"
        letters = [m.group(1).upper(), *(_more_letters(text, m.end()) if listed else [])]
        # "I don't think B is correct", "None of A, B or C is right": B is struck out
        if _negated_at(text, m.start(1)) or any(a <= m.start(1) < b for a, b in struck_spans):
            rejected.update(letters)
            continue
        for letter in letters:
            affirmed.setdefault(letter, m.start(1))
    for m in _BOXED.finditer(text):
        inner = m.group(1).strip().strip("()").strip()
        if len(inner) == 1 and inner in "ABCDEFGHIJ":
            affirmed.setdefault(inner, m.start(1))
    out = frozenset(rejected)
    if set(affirmed) & rejected:
        return _Letters(None, f"both chose and rejected {', '.join(sorted(set(affirmed) & rejected))}", 0, out)
    if len(affirmed) > 1:
        return _Letters(None, f"several answers: {', '.join(sorted(affirmed))}", 0, out)
    if affirmed:
        ((letter, pos),) = affirmed.items()
        return _Letters(letter, "", pos, out)
    mentioned: dict[str, int] = {}
    for m in (m for pattern in _MENTION for m in pattern.finditer(text)):
        mentioned.setdefault(m.group(1), m.start(1))
    for m in _LETTER_LIST.finditer(text):
        mentioned.setdefault(m.group(1), m.start(1))
        mentioned.setdefault(m.group(2), m.start(2))
    kept = {k: v for k, v in mentioned.items() if k not in rejected}
    if len(kept) == 1:
        ((letter, pos),) = kept.items()
        return _Letters(letter, "", pos, out)
    if kept:
        return _Letters(None, f"several letters: {', '.join(sorted(kept))}", 0, out)
    return _Letters(None, _NO_LETTER, 0, out)


_NO_LETTER = "no option letter found"


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
    read = _read_letter(text)
    if read.letter:
        letter, pos = read.letter, read.pos
        hinted = _hinted_options(text, texts)
        if hinted and letter not in hinted:
            return unsure(f"letter {letter} but the words of option {', '.join(sorted(hinted))}", letter)
        if _HEDGE.search(_sentence_at(text, pos)) or _doubts_after(text, pos):
            return unsure("hedged", letter)
        if letter in texts and not _text_fits(_text_after_letter(text, pos), letter, texts, tol):
            return unsure(f"the text after {letter} is not option {letter}'s ({texts[letter]!r})", letter)
        return verdict(letter)
    if read.why != _NO_LETTER:
        return unsure(read.why)
    if want in read.rejected:  # "Neither A nor B is correct.", "Not (B)."
        if _HEDGE.search(text):
            return unsure("rejects the reference, hedged")
        return CorrectnessVerdict("incorrect", "choice", None, want, f"strikes out {want}")
    if read.rejected:
        return unsure(f"only strikes out {', '.join(sorted(read.rejected))}")
    if _is_refusal(text):
        return CorrectnessVerdict("incorrect", "choice", None, want, "no answer given")
    # a number in the working may equal an option by chance: numeric options are graded below
    named, struck, rest = _named_options_read(text, {k: v for k, v in texts.items() if reference_quantity(v) is None})
    if len(named) > 1:
        return unsure(f"names several options: {', '.join(sorted(named))}")
    if named:
        (got,) = named
        if _NEGATION.search(rest) or _HEDGE.search(text):
            return unsure("names an option in a negated or hedged sentence", got)
        return verdict(got, "named the option's text" + (" and struck out others" if struck else ""))
    if want in struck:  # "Paris is not the answer."
        if _HEDGE.search(text):
            return unsure("rejects the reference's text, hedged")
        return CorrectnessVerdict("incorrect", "choice", None, want, f"strikes out option {want}'s text")
    if struck:
        return unsure(f"only strikes out {', '.join(sorted(struck))}")
    if want not in texts:
        return unsure(read.why)
    # no letter and no option named word for word: grade against the right option's text
    d = _grade_value(text, texts[want], tol)
    others_match = any(_grade_value(text, t, tol).verdict == "correct" for k, t in texts.items() if k != want)
    if d.verdict == "correct" and others_match:
        return unsure("matches more than one option")
    note = f"against the option's text: {d.note}".rstrip(": ")
    return CorrectnessVerdict(d.verdict, "choice", d.extracted, want, note)


_AFTER_LETTER = re.compile(r"[\)\]\*_\s]*(?:[.:,=\u2013\u2014-](?!\d)[\s\*_]*)?")
_EXPLAINS = re.compile(
    r"(?:because|since|as|which|that|so|this|it|is|was|for|given|due|seems|looks|fits|matches|with|"
    r"the\s+(?:correct|right|best|only|answer|option|choice))\b",
    re.I,
)


def _text_after_letter(text: str, pos: int) -> str:
    """What follows a chosen letter up to the end of its sentence: the option's text, when
    the response restates it ("(C) London", "B: 14 cm", "**Answer: B** - *Isaac Newton*")."""
    start = _AFTER_LETTER.match(text, pos + 1)
    rest = text[start.end() if start else pos + 1 :]
    rest = re.split(r"(?<=[.!?;])\s|\n", rest, maxsplit=1)[0][:120]
    return rest.strip(" \t*_()[].,;:!").strip()


def _text_fits(tail: str, letter: str, texts: Mapping[str, str], tol: _Tolerance) -> bool:
    """Whether the text restated after a letter is that option's (or explains the choice)."""
    if not tail or _EXPLAINS.match(tail):
        return True
    if _hinted_options(tail, {k: v for k, v in texts.items() if k != letter}):
        return False
    if letter in _hinted_options(tail, texts) or letter in _named_options(tail, texts):
        return True
    return _grade_value(tail, texts[letter], tol).verdict == "correct"


_STRUCK_AFTER = re.compile(r"\s+(?:is|was)\s+(?:not\b|wrong\b|incorrect\b|false\b)", re.I)  # "Paris is not it"


def _named_options_read(text: str, texts: Mapping[str, str]) -> tuple[set[str], set[str], str]:
    """The options the response names as its answer, those it strikes out ("not London",
    "Paris is not the answer", "neither London nor Berlin"), and the text without the
    struck-out ones (to look for other negations in)."""
    named = _named_options(text, texts)
    struck: set[str] = set()
    rest = text
    for k in sorted(named):
        words = [w for w in re.findall(r"\w+", texts[k]) if normalise(w)]
        if not words:
            continue
        pattern = re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)", re.I)
        found = list(pattern.finditer(text))
        negated = [m for m in found if _negated_at(text, m.start()) or _STRUCK_AFTER.match(text, m.end())]
        if found and len(negated) == len(found):
            struck.add(k)
            for m in negated:  # blank the clause up to the struck-out text, and what strikes it out
                clause = max((c.end() for c in _CLAUSE_BREAK.finditer(text, 0, m.start())), default=0)
                after = _STRUCK_AFTER.match(text, m.end())
                end = after.end() if after else m.end()
                rest = rest[:clause] + " " * (end - clause) + rest[end:]
    return named - struck, struck, rest


# -- yes / no ------------------------------------------------------------------------------------
_YES_NO_REF = re.compile(r"^\s*(yes|no|true|false)\s*\.?\s*$", re.I)
_LEAD_YES_NO = re.compile(
    r"^\W*(?:(?:definitely|certainly|absolutely|clearly|surely)\s+)?(yes|yeah|yep|yup|true|no|nope|nah|false)\b"
    r"(?!\s+(?:doubt|question|wonder|problem|matter|idea|clue|s[ée]\b|lo\s+s[ée]\b))",  # "No doubt, ..." is no answer
    re.I,
)
_NO_PHRASE = re.compile(r"^\W*i\s+(?:don't|do\s+not)\s+think\s+so\b", re.I)
_YES_WORD = re.compile(r"\b(?:yes|yeah|yep|yup|true)\b", re.I)
# yes and no in other languages, leading the answer and followed by a pause or its end ("Si." is
# a yes, "Si hay ..." an "if"; "Sim, claro." a yes, "Sim is ..." a name)
_FOREIGN_YES = "oui sí sì si ja jawohl да sim evet tak ναι 是的 是 对 對 有 はい ええ 네 예".split()
_FOREIGN_NO = "non nein нет não nao nee hayır hayir nie όχι οχι".split()
_FOREIGN_NO += "不是 不对 不對 没有 沒有 否 いいえ 아니요 아니오".split()
_FOREIGN = {**{w: "yes" for w in _FOREIGN_YES}, **{w: "no" for w in _FOREIGN_NO}}
_LEAD_FOREIGN = re.compile(
    r"^[\W_]*(" + "|".join(sorted(map(re.escape, _FOREIGN), key=len, reverse=True)) + r")(?=\s*(?:[,.!;:。、，！…]|$))",
    re.I,
)
# after a foreign yes or no: a turn ("mais", "aber", "但"), a hedge, a question, or the other answer
_FOREIGN_TURN = re.compile(
    r"\b(?:mais|aber|pero|però|ma|mas|но|oder|ou|или|peut-être|vielleicht|quizás?|tal\s+vez|forse|talvez|может|"
    r"pas\s+s[ûu]r|nicht\s+sicher|no\s+estoy\s+segur[oa])\b|[?？]|但|可是|不过|也许|可能|或|还是|でも|しかし|たぶん|かも|"
    r"하지만|아마",
    re.I,
)
_FOREIGN_NEGATION = re.compile(r"\b(?:ne|n'|pas|nicht|kein\w*|no|não|не|нет)\b|不|没|沒|ない|않|안\s", re.I)


# the other answer anywhere after a foreign one ("Ja... oder nein?")
_FOREIGN_OTHER = {
    lead: re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(w) for w, v in _FOREIGN.items() if v != lead and len(w) > 1) + r")(?!\w)",
        re.I,
    )
    for lead in ("yes", "no")
}


def _yes_no_word(word: str) -> str | None:
    w = word.lower()
    if w in ("yes", "yeah", "yep", "yup", "true"):
        return "yes"
    if w in ("no", "nope", "nah", "false"):
        return "no"
    return _FOREIGN.get(w)


def _lead_yes_no(scope: str) -> str | None:
    """ "yes"/"no" when the scope leads with it and never turns, "mixed" when it turns, or None."""
    foreign = False
    if m := _NO_PHRASE.match(scope):
        lead, end = "no", m.end()
    elif m := _LEAD_YES_NO.match(scope):
        lead, end = ("yes" if m.group(1).lower() in ("yes", "yeah", "yep", "yup", "true") else "no"), m.end()
    elif m := _LEAD_FOREIGN.match(scope):
        lead, end, foreign = _FOREIGN[m.group(1).lower()], m.end(), True
    else:
        return None
    first, *later = _sentences(scope[end:]) or [""]
    turned = bool(_NEGATION.search(first) if lead == "yes" else _YES_WORD.search(first))
    if foreign:
        rest = scope[end:]
        other = _FOREIGN_OTHER[lead].search(rest)
        turned = bool(
            turned or _FOREIGN_TURN.search(rest) or other or (lead == "yes" and _FOREIGN_NEGATION.search(rest))
        )
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
    if _is_refusal(text):  # "No sé.", "Non lo so.": "I don't know", not "no"
        return CorrectnessVerdict("incorrect", "yes_no", None, want, "no answer given")
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


_LIST_ITEM = re.compile(r"[ \t]*(?:[*+-]|\d{1,2}[.)])[ \t]+(?=\S)")  # "* ", "- ", "2. ", "3) "


def _ends_with_a_list_of_results(text: str, bold: list[_Span]) -> bool:
    """The response ends with a list whose items state different results ("* area = 5 × 5 =
    **25**", "* perimeter = 4 × 5 = **20**") and nothing after it, or one bold value, singles
    one out: several parallel answers and no final one."""
    items = []
    for line in reversed([line for line in text.splitlines() if line.strip()]):
        if not (m := _LIST_ITEM.match(line)):
            break
        items.append(line[m.end() :])
    results: set[object] = set()
    for i, item in enumerate(items):
        if numbers_in(item):
            q = _one_number(item, 0)
            results.add(q.value if q else i)  # an item with several numbers is a result of its own
    if len(results) < 2:
        return False
    emphasised = {q.value if q else i for i, s in enumerate(bold) for q in [_one_number(s.text, 0)]}
    return len(emphasised) != 1


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
    if _ends_with_a_list_of_results(text, bold):
        return None, "a closing list of several results and no final answer"
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
    if (year := _year_answer(text, want)) is not None:
        return year
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
    if verdict == "incorrect" and got.decimal_comma and _a_list_holds(text, got, want):
        return unsure("a decimal comma, or a list (3,5 as 3 and 5) that holds the reference", _show(got))
    if verdict == "incorrect" and _numerator_is(text, got, want):
        return unsure("a/b whose a is the reference: a count out of b?", _show(got))
    return CorrectnessVerdict(verdict, "number", _show(got), reference, note or why)


def _year_answer(text: str, want: Quantity) -> CorrectnessVerdict | None:
    """A reference that may be a year, against a response whose only numbers are one date
    ("July 14, 1789", "1969-07-20" for 1789, 1969): the date's year decides. None otherwise."""
    if want.unit or want.places != 0 or want.value.denominator != 1 or not 1000 <= want.value <= 2999:
        return None
    mentions = dates_in(text)
    year = year_of(mentions)
    if year is None or len({d.readings for d in mentions}) != 1:
        return None
    if any(not any(d.start <= q.start < d.end for d in mentions) for q in numbers_in(text)):
        return None  # other numbers besides the date
    at = mentions[-1].start
    if _HEDGE.search(_sentence_at(text, at)) or _NEGATION.search(_sentence_at(text, at)) or _doubts_after(text, at):
        return CorrectnessVerdict("unsure", "number", str(year), str(want.value), "a hedged or negated date")
    verdict: Correctness = "correct" if year == want.value else "incorrect"
    return CorrectnessVerdict(verdict, "number", str(year), str(want.value), "the year of a date")


def _states_elsewhere(text: str, got: Quantity, want: Quantity, tol: _Tolerance) -> bool:
    """A guessed (unmarked) pick that is wrong while another number of the response is right
    ("50% of the 200 students, that is 100"): a careful grader would look again."""
    others = [q for q in numbers_in(text) if q.start != got.start]
    return any(compare(q, want, rel_tol=tol.rel, abs_tol=tol.abs)[0] == "correct" for q in others)


def _right_read_the_other_way(text: str, got: Quantity, reference: str, want: Quantity, tol: _Tolerance) -> bool:
    """ "1.200" for 1200, "1,500" for 1.5: right if one side's separator is read the other way."""
    readings = ((read_other_way(text, got), want), (got, reference_read_other_way(reference)))
    return any(g and w and compare(g, w, rel_tol=tol.rel, abs_tol=tol.abs)[0] == "correct" for g, w in readings)


def _a_list_holds(text: str, got: Quantity, want: Quantity) -> bool:
    """ "3,5" read as a list, 3 and 5: whether one of them is the reference."""
    m = re.compile(r"(\d+),(\d+)").search(text, got.start)
    return m is not None and any(Fraction(int(x)) == want.value for x in m.groups())


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
# tints and blended colours, as the closed set's colours they lie between: "greenish-blue" and
# "teal" are green as much as blue, so neither is plainly wrong for green
_TINTS = {
    "reddish": "red",
    "orangish": "orange",
    "orangey": "orange",
    "yellowish": "yellow",
    "greenish": "green",
    "bluish": "blue",
    "blueish": "blue",
    "purplish": "purple",
    "pinkish": "pink",
    "brownish": "brown",
    "blackish": "black",
    "whitish": "white",
    "grayish": "gray",
    "greyish": "gray",
    "silvery": "silver",
    "golden": "gold",
}
_BLENDS = {
    w: set(hues.split())
    for words, hues in (
        ("teal turquoise cyan aqua aquamarine", "blue green"),
        ("olive", "green yellow brown"),
        ("lime chartreuse", "green yellow"),
        ("violet indigo periwinkle", "purple blue"),
        ("lavender lilac mauve", "purple pink"),
        ("magenta fuchsia", "pink purple red"),
        ("maroon burgundy", "red brown purple"),
        ("amber", "orange yellow"),
        ("coral salmon peach", "pink orange"),
        ("copper bronze rust", "orange brown"),
        ("khaki tan", "beige brown"),
        ("cream ivory", "white beige"),
        ("charcoal", "gray black"),
    )
    for w in words.split()
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
    if (negated := _NEGATED_CLAIM.fullmatch(text)) and _words(negated.group(1)) == want:
        return CorrectnessVerdict("incorrect", "exact", None, want, "negates the reference")
    whole = _words(text)
    if re.search(rf"\b{re.escape(want)}\b", whole):
        return CorrectnessVerdict("unsure", "exact", _PREFIX.sub("", whole), want, "reference inside a longer answer")
    return CorrectnessVerdict("unsure", "exact", None, want, "free-form answer: needs a human")


# "It is not a dog.", "The animal isn't a cat.": one plain claim that the answer is not the reference
_NEGATED_CLAIM = re.compile(
    r"\W*(?:it|this|that|the\s+\w+)(?:\s+is\s+not|\s+isn't|'s\s+not)\s+(?:(?:a|an|the)\s+)?(\w+(?:\s+\w+)?)\s*[.!]?\s*",
    re.I,
)


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
        others = {w for w in _members(rest) if _CLASS_OF[w] == _CLASS_OF[want]} if want in _CLASS_OF else _members(rest)
        if not others - {want}:  # "Monday, 3 June": a month after a weekday names no other day
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


def _hues(text: str) -> set[str]:
    """The closed set's colours that the text's tints and blends lie between ("greenish-blue":
    green and blue; "teal": blue and green)."""
    found = set()
    for m in re.finditer(r"[A-Za-z]+", text):
        w = m.group().lower()
        found |= {_TINTS[w]} if w in _TINTS else _BLENDS.get(w, set())
    return found


def _closed_class_mismatch(scope: str, want: str, single: bool) -> CorrectnessVerdict | None:
    """Incorrect when a short answer names only other members of the reference's closed set
    ("Pink." for "orange", "June had the most visitors." for "May"); a neighbouring colour,
    or a tint or blend of the reference or a neighbour ("greenish-blue" for green), is no
    plain mismatch."""
    named = _members(scope)
    same_class = {w for w in named if _CLASS_OF[w] == _CLASS_OF[want]}
    if not single or len(scope.split()) > 12 or not same_class or want in named:
        return None
    if any(w == want or frozenset((w, want)) in _NEAR for w in same_class | _hues(scope)):
        return None
    if _HEDGE.search(scope) or _NEGATION.search(scope) or _CONTRAST.search(scope):
        return None
    if _CLASS_OF[want] == "side" and _PERSPECTIVE.search(scope):
        return None
    got = ", ".join(sorted(same_class))
    return CorrectnessVerdict("incorrect", "exact", got, want, f"names another {_CLASS_OF[want]}")


# -- deciding ------------------------------------------------------------------------------------
def _grade_value(text: str, reference: str, tol: _Tolerance) -> CorrectnessVerdict:
    yes_no = _YES_NO_REF.match(reference) or _LEAD_FOREIGN.fullmatch(reference.strip().rstrip("."))
    if yes_no:
        return _grade_yes_no(text, _yes_no_word(yes_no.group(1)) or "no")
    when = reference_date(reference)
    if when is not None:
        return _grade_date(text, when, reference)
    qty = reference_quantity(reference)
    if qty is not None:
        return _grade_number(text, qty, reference, tol)
    return _grade_text(text, reference)


def _grade_date(text: str, want: When, reference: str) -> CorrectnessVerdict:
    """A date, decade, century, era year or time: see :mod:`curate.dates`."""

    def unsure(why: str, got: str | None = None) -> CorrectnessVerdict:
        return CorrectnessVerdict("unsure", "date", got, reference, why)

    if _REVISION.search(text):
        return unsure("the response revises itself")
    scopes = _marked_answers(text) or [_Span(text, 0)]
    mentions = [DateMention(d.readings, d.start + s.start, d.end + s.start) for s in scopes for d in dates_in(s.text)]
    if not mentions:
        if _is_refusal(text):
            return CorrectnessVerdict("incorrect", "date", None, reference, "no answer given")
        return unsure("no date found")
    if len({d.readings for d in mentions}) > 1:
        return unsure("several dates")
    d = mentions[-1]
    got = text[d.start : d.end]
    sentence = _sentence_at(text, d.start)
    if _HEDGE.search(sentence) or _NEGATION.search(sentence) or _doubts_after(text, d.start):
        return unsure("hedged or negated", got)
    verdict, note = compare_dates(d, want)
    return CorrectnessVerdict(verdict, "date", got, reference, note)


# "la respuesta es", "答案是": the answer marker in other languages, read as "Answer:"
_FOREIGN_MARKER = re.compile(
    r"(?:la\s+respuesta\s+(?:correcta\s+)?es|die\s+(?:richtige\s+)?antwort\s+(?:ist|lautet)|"
    r"la\s+(?:bonne\s+)?r[ée]ponse\s+est|a\s+resposta\s+(?:correta\s+)?[ée]|la\s+risposta\s+(?:corretta\s+)?[èe]|"
    r"ответ\s*[:\u2014-]|答案\s*(?:是|为|為|:)|答え\s*(?:は|:)|정답은)\s*",
    re.I,
)


def _plain(text: str) -> str:
    """The response with Markdown that changes its reading made plain: struck-out text
    dropped ("~~7~~ **8**"), emphasis on a negation or an answer marker removed ("**not**",
    "**Answer**:"), "_word_" as "*word*", heading and quote marks dropped; and answer markers in
    other languages as "Answer:"."""
    text = re.sub(r"~~[^~\n]*~~", " ", text)
    text = re.sub(r"(\*\*|__)(not|no|never|none|neither|nor)\1", r"\2", text, flags=re.I)
    text = re.sub(r"(\*\*|__)((?:final\s+|correct\s+)?answer)\1(\s*:)", r"\2\3", text, flags=re.I)
    text = re.sub(r"(?<![\w\\_])_(?=[^\s_])([^_\n]*?[^\s_])_(?![\w_])", r"*\1*", text)
    text = re.sub(r"^[ \t]*(?:#{1,6}|>)[ \t]+(?![\d+\-.$€£¥])", "", text, flags=re.M)  # "> 10" may be a bound
    return _FOREIGN_MARKER.sub("Answer: ", text)


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
    text = _plain(prepare(response).replace("\u2019", "'"))
    tol = _Tolerance(Fraction(rel_tol), Fraction(abs_tol))
    choice = reference_choice(ref)
    if choice is not None:
        return _grade_choice(text, *choice, options or {}, tol)
    return _grade_value(text, ref, tol)


__all__ = ["CorrectnessVerdict", "decide", "extract_letter", "normalise", "options_from_prompt"]
