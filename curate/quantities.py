"""Numbers as answers: read them from text (signs, Unicode digits, fractions, percentages,
units, currencies, scale words) and compare a response's number with a reference's.

Values are exact fractions, and every number keeps how many decimal places it was written
with: "0.333" stands for 1/3 rounded to three places, "3.1416" rounds to a reference of
"3.14". A comparison answers correct, incorrect or unsure; unsure where the written numbers
cannot settle it (a rounding too coarse to tell, units of different kinds, a ratio read
against a percentage that is off by exactly 100, the same digits with and without a
percent sign). A separator with three digits after it ("1.200", "1,500") can be read both
ways; :func:`read_other_way` gives the other reading.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction

from .model import Correctness
from .wording import plural

# unit word -> (kind, factor to the kind's base unit); temperatures are kinds of their own
_UNIT_TABLE: dict[str, tuple[str, Fraction]] = {}
for _kind, _factor, _names in (
    ("length", Fraction(1, 1000), "mm millimeter millimeters millimetre millimetres"),
    ("length", Fraction(1, 100), "cm centimeter centimeters centimetre centimetres"),
    ("length", Fraction(1), "m meter meters metre metres"),
    ("length", Fraction(1000), "km kilometer kilometers kilometre kilometres"),
    ("length", Fraction(254, 10000), "inch inches"),
    ("length", Fraction(3048, 10000), "ft foot feet"),
    ("length", Fraction(1609344, 1000), "mi mile miles"),
    ("mass", Fraction(1, 1000), "mg milligram milligrams"),
    ("mass", Fraction(1), "g gram grams"),
    ("mass", Fraction(1000), "kg kilogram kilograms"),
    ("volume", Fraction(1, 1000), "ml milliliter milliliters millilitre millilitres"),
    ("volume", Fraction(1), "l liter liters litre litres"),
    ("time", Fraction(1), "s sec secs second seconds"),
    ("time", Fraction(60), "min mins minute minutes"),
    ("time", Fraction(3600), "h hr hrs hour hours"),
    ("time", Fraction(86400), "day days"),
    ("angle", Fraction(1), "° deg degree degrees"),
    ("celsius", Fraction(1), "°c celsius"),
    ("fahrenheit", Fraction(1), "°f fahrenheit"),
    ("percent", Fraction(1), "% percent per cent"),
    ("usd", Fraction(1), "$ usd dollar dollars"),
    ("eur", Fraction(1), "€ eur euro euros"),
    ("gbp", Fraction(1), "£ gbp"),
    ("jpy", Fraction(1), "¥ jpy yen"),
):
    for _name in _names.split():
        _UNIT_TABLE[_name] = (_kind, _factor)
_UNIT_TABLE["per cent"] = _UNIT_TABLE["%"]

_SCALES = {"k": 1000, "thousand": 1000, "million": 10**6, "billion": 10**9}
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_MINUS = {"\u2212", "\ufe63", "\uff0d"}  # minus sign, small and full-width hyphen-minus
_DIGIT_GROUP_SPACES = "\u00a0\u202f\u2009"  # no-break, narrow no-break and thin spaces


def prepare(text: str) -> str:
    """Plain ASCII numbers: any Unicode decimal digit as 0-9, minus signs (and an en dash in
    a sign's place) as "-", full-width forms folded, vulgar fractions and ``\\frac{a}{b}`` as
    "a/b", "minus 3" as "-3", and a narrow space between digit groups dropped ("1 000")."""
    out = []
    for ch in text:
        if ch in _MINUS:
            out.append("-")
        elif unicodedata.category(ch) == "Nd":
            out.append(str(unicodedata.decimal(ch)))
        elif "\uff01" <= ch <= "\uff5e":  # full-width ASCII
            out.append(unicodedata.normalize("NFKC", ch))
        else:
            out.append(ch)
    t = "".join(out)
    t = re.sub(r"(?:^|(?<=[\s=(:]))\u2013(?=\d)", "-", t)
    t = re.sub(r"\\[dt]?frac\{\s*(\d+)\s*\}\{\s*(\d+)\s*\}", r"\1/\2", t)
    t = re.sub(r"\\([%$])", r"\1", t)
    t = re.sub(r"(\d*)([\u00bc-\u00be\u2150-\u215e])", _vulgar, t)
    t = re.sub(r"\b(?:minus|negative)\s+(?=\d)", "-", t, flags=re.I)
    t = re.sub(r"(?<![\w)\]])-\(\s*(\d+(?:\.\d+)?)\s*\)", r"-\1", t)  # "-(2)"
    t = re.sub(rf"(?<=\d)[{_DIGIT_GROUP_SPACES}](?=\d{{3}}(?!\d))", "", t)
    return t


def _vulgar(m: re.Match) -> str:
    value = Fraction(unicodedata.numeric(m.group(2))).limit_denominator(100) + int(m.group(1) or 0)
    return f"{value.numerator}/{value.denominator}"


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    unit: str | None = None  # a key of the unit table, another word after the number, or None
    places: int | None = 0  # decimal places as written; None for a fraction ("1/3")
    start: int = 0  # where it was read in the text
    negated: bool = False  # "not 6", "rather than 6"

    @property
    def kind(self) -> str | None:
        known = _UNIT_TABLE.get(self.unit or "")
        return known[0] if known else None


# a number joined to digits by ":" (a time, a ratio: "12:30", "1:2"), by a second "." (a
# European "1.000.000", a version "3.5.2") or by two "/" (a date, "03/04/2020") is none: its
# value is left to a human
_NUMBER = re.compile(
    r"(?<![\w.,/^√∛∜])(?<!\d:)(?P<sign>[-+])?(?P<cur>[$€£¥])?\s?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?!\d|,\d|[.:]\d|\s*/\s*\d+\s*/\s*\d)"
    r"(?:[eE](?P<exp>[-+]?\d+)\b)?"
    r"(?:\s*/\s*(?P<den>\d+)(?![\d.]\d))?"
    r"(?:\s?(?P<unit>%|per cent|°\s?[CFcf]\b|°|[A-Za-zµ]+(?:[²³]|\^[23])?(?![\w^])))?"
)
_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"
# "1.2 × 10^3", "4 x 10⁻²": the power of ten belongs to the number before it
_TIMES_TEN = re.compile(r"\s*[×x·*]\s*10\s*(?:\^\s*\{?\s*([-+]?\d+)\s*\}?|([" + _SUPERSCRIPT + r"]+))")
_NEGATING = re.compile(r"(?:\bnot|\brather than|\binstead of)\s*$", re.I)
_BINARY_LEFT = re.compile(r"(?:[\d)]|(?<![A-Za-z])[A-Za-z])\s*$")  # "22 - 7", "x - 7" subtract; "by -10%" does not
_SCALE_TAIL = re.compile(r"\s?(k|thousand|million|billion)\b", re.I)
_FRACTION_WORDS = re.compile(r"\s*(?:quarters?|thirds?|halves|fifths?|hundred|percent)\b", re.I)
# words that follow numbers without being what was counted ("5 in total", "10 and 12")
_NOT_UNITS = set("a an and are as at by for from in into is it of on or so the then to was were with".split())


def numbers_in(text: str) -> list[Quantity]:
    """Every number written with digits in (prepared) text, in order."""
    out = []
    for m in _NUMBER.finditer(text):
        if text[m.end("num") : m.end("num") + 1] in (*_SUPERSCRIPT, "^"):
            continue  # "10²" is not 10, and its value is left to a human
        before = text[max(0, m.start() - 24) : m.start()]  # a short window keeps long texts linear
        sign = m.group("sign")
        if sign == "-" and _BINARY_LEFT.search(before):
            sign = None
        num, den, unit = m.group("num"), m.group("den"), m.group("unit")
        value = Fraction(num.replace(",", ""))
        decimals = len(num.split(".")[1]) if "." in num else 0
        times_ten = _times_ten(m, text)
        if times_ten:
            unit = None  # the "x" of "4 x 10^3" is no unit
        elif (
            unit
            and len(unit) == 1
            and text[m.start("unit") - 1].isdigit()
            and unit.lower() not in {*_UNIT_TABLE, *_SCALES}
        ):
            continue  # a number inside a word: "3D", "5G", "3x"
        power = int(m.group("exp") or 0) + times_ten
        if power:
            value *= Fraction(10) ** power
            decimals = max(decimals - power, 0)
        places: int | None = decimals
        if den:
            value, places = (value / int(den), None) if int(den) else (value, 0)
        if sign == "-":
            value = -value
        if unit and unit.lower() in _SCALES:
            value *= _SCALES[unit.lower()]
            unit = None
        elif not unit:
            scale = _SCALE_TAIL.match(text, m.end())
            if scale:
                value *= _SCALES[scale.group(1).lower()]
        unit = _unit_key(m.group("cur") or unit)
        negated = _NEGATING.search(before) is not None
        out.append(Quantity(value, unit, places, m.start(), negated))
    return out


def _times_ten(m: re.Match, text: str) -> int:
    """The power of "× 10^3" / "x 10⁻²" right after a number, else 0."""
    times = _TIMES_TEN.match(text, m.end("num")) if not (m.group("den") or m.group("exp")) else None
    if not times:
        return 0
    if times.group(1):
        return int(times.group(1))
    return int(times.group(2).translate(str.maketrans(_SUPERSCRIPT, "0123456789-")))


def _unit_key(unit: str | None) -> str | None:
    if not unit or unit.lower() in _NOT_UNITS:
        return None
    key = re.sub(r"\s+", "", unit.lower()) if unit.startswith("°") else unit.lower()
    return key if key in _UNIT_TABLE else unit.lower()


def number_words_in(text: str) -> list[Quantity]:
    """Numbers written as words ("five", "half"); "one" only as the whole answer (it is
    usually a pronoun), and none that start a fraction or a scale ("three quarters"), are
    part of a hyphenated word ("twenty-one", "four-legged") or of "half a dozen"."""
    out = []
    for m in re.finditer(r"\b([A-Za-z]+)\b", text):
        w = m.group(1).lower()
        if _HYPHEN_AFTER.match(text, m.end()) or _HYPHEN_BEFORE.search(text, max(0, m.start() - 2), m.start()):
            continue
        if w == "half" and not _HALF_OF_A.match(text, m.end()):
            out.append(Quantity(Fraction(1, 2), None, None, m.start()))
        elif w in _NUMBER_WORDS and not _FRACTION_WORDS.match(text, m.end()) and not _SCALE_TAIL.match(text, m.end()):
            if w == "one" and not re.fullmatch(r"\W*one\W*", text, re.I):
                continue
            sign = -1 if _NEGATIVE_WORD.search(text, max(0, m.start() - 12), m.start()) else 1
            out.append(Quantity(Fraction(sign * _NUMBER_WORDS[w]), None, 0, m.start()))
    return out


_NEGATIVE_WORD = re.compile(r"\b(?:minus|negative)\s+$", re.I)  # "negative two"
_HYPHEN_AFTER = re.compile(r"-[A-Za-z]")
_HYPHEN_BEFORE = re.compile(r"[A-Za-z]-$")
_HALF_OF_A = re.compile(r"\s+an?\b", re.I)  # "half a dozen", "half an hour"


def _reference_text(reference: str) -> str:
    return prepare(reference).strip().rstrip(".")


def reference_quantity(reference: str) -> Quantity | None:
    """The reference as a number, when it is one number and nothing else."""
    text = _reference_text(reference)
    nums = numbers_in(text)
    if len(nums) != 1:
        return None
    q = nums[0]
    rest = _NUMBER.sub("", text, count=1)
    rest = _SCALE_TAIL.sub("", rest).strip()
    return q if not rest else None


_ONE_SEPARATOR = re.compile(r"\d{1,3}[.,]\d{3}")


def read_other_way(text: str, q: Quantity) -> Quantity | None:
    """The number read at ``q`` with its one separator taken the other way: "1.200" as 1200,
    "1,500" as 1.5. Three digits after a single separator fit both conventions (a thousands
    separator in one, a decimal mark in the other); any other writing has one reading (None)."""
    m = _NUMBER.match(text, q.start)
    if not m or m.group("exp") or m.group("den") or not _ONE_SEPARATOR.fullmatch(m.group("num")):
        return None
    swapped = m.group("num").translate(str.maketrans(".,", ",."))
    other = text[: m.start("num")] + swapped + text[m.end("num") :]  # same length: same offsets
    return next((o for o in numbers_in(other) if o.start == q.start), None)


def reference_read_other_way(reference: str) -> Quantity | None:
    """:func:`read_other_way` for a reference that :func:`reference_quantity` reads."""
    q = reference_quantity(reference)
    return read_other_way(_reference_text(reference), q) if q else None


# -- comparing ---------------------------------------------------------------------------------
_RANK = {"correct": 2, "unsure": 1, "incorrect": 0}


def compare(got: Quantity, want: Quantity, *, rel_tol: Fraction, abs_tol: Fraction) -> tuple[Correctness, str]:
    """Whether a response's number answers a reference number, and why when not plainly."""
    gk, wk = got.kind, want.kind
    if (gk == "percent") != (wk == "percent") and None in (gk, wk):
        # 45% against 0.45 or against 45: read the plain number both ways, the best reading wins
        as_written = _compare_values(got, want, rel_tol, abs_tol)
        as_ratios = _compare_values(*_as_ratios(got, want), rel_tol, abs_tol)
        if as_written[0] == "correct" and as_ratios[0] != "correct" and (gk == "percent" or abs(got.value) <= 1):
            # the digits agree only if the sign is dropped: "0.5%" for a bare 0.5 (which may be a
            # ratio, 50%), or a bare 0.5 for "0.5%" (a ratio would be 50%); the mirror of the
            # hundredfold rule below. A bare 45 for "45%" is no plausible ratio, so it stays correct.
            return "unsure", "the same digits with and without a percent sign: a ratio or a percentage?"
        return max((as_written, as_ratios), key=lambda r: _RANK[r[0]])
    if gk and wk and gk != wk:
        return "unsure", f"units of different kinds: {got.unit} vs {want.unit}"
    if gk is None and wk is None and got.unit and want.unit and got.unit.rstrip("s") != want.unit.rstrip("s"):
        return "unsure", f"different words after the numbers: {got.unit} vs {want.unit}"
    if wk and got.unit and gk is None:
        return "unsure", f"unknown unit {got.unit!r} against {want.unit}"
    if gk and want.unit and wk is None:  # "9 cm" for "9 cm²", "60 km/h" for "60 mph"
        return "unsure", f"unit {got.unit} against unknown {want.unit!r}"
    if gk and wk and gk == wk and got.unit and want.unit and _UNIT_TABLE[got.unit][1] != _UNIT_TABLE[want.unit][1]:
        g = got.value * _UNIT_TABLE[got.unit][1]
        w = want.value * _UNIT_TABLE[want.unit][1]
        if g == w or _within_tolerance(g, w, [x for x in (got.places, want.places) if x is not None], rel_tol, abs_tol):
            return "correct", "converted units"
        if abs(g - w) <= abs(w) / 100:
            return "unsure", "converted units differ by under 1%: a rounded conversion?"
        return "incorrect", "converted units"
    verdict = _compare_values(got, want, rel_tol, abs_tol)
    if verdict[0] == "incorrect" and _hundredfold(got.value, want.value) and None in (gk, wk):
        return "unsure", "off by exactly 100: a ratio and a percentage?"
    return verdict


def _as_ratios(got: Quantity, want: Quantity) -> tuple[Quantity, Quantity]:
    def ratio(q: Quantity) -> Quantity:
        if q.kind != "percent":
            return q
        return Quantity(q.value / 100, None, None if q.places is None else q.places + 2, q.start)

    return ratio(got), ratio(want)


def _hundredfold(a: Fraction, b: Fraction) -> bool:
    small, big = sorted((abs(a), abs(b)))
    return 0 < small <= 1 and big == small * 100 and (a > 0) == (b > 0)


def _compare_values(got: Quantity, want: Quantity, rel_tol: Fraction, abs_tol: Fraction) -> tuple[Correctness, str]:
    g, w = got.value, want.value
    d, p = got.places, want.places
    if g == w or _within_tolerance(g, w, [x for x in (d, p) if x is not None], rel_tol, abs_tol):
        return "correct", ""
    diff = abs(g - w)
    if p is not None and p >= 1 and (d is None or d >= p) and diff <= Fraction(1, 2 * 10**p):
        # "3.1416" for "3.14": the reference looks rounded only when it has 3 significant digits
        if _significant_digits(w) >= 3:
            return "correct", f"rounds to the reference's {plural(p, 'place')}"
        return "unsure", f"rounds to the reference's {plural(p, 'place')}, which may be exact"
    if p is None and d is not None and (w * 10**d).denominator == 1:
        return "incorrect", ""  # the fraction is exact at the response's places: 0.5 is not 2/5
    if p is None and d is not None and d >= 2 and diff <= Fraction(1, 2 * 10**d):
        if _significant_digits(g) >= 2:
            return "correct", f"the reference rounded to {plural(d, 'place')}"
    if d is not None and (p is None or d < p) and diff <= Fraction(1, 2 * 10**d):
        return "unsure", f"a rounding to {plural(d, 'place')}: too coarse to tell"
    if d is not None and p is None and diff <= Fraction(1, 10**d):
        return "unsure", "one off in the last place of a rounding"
    return "incorrect", ""


def _within_tolerance(g: Fraction, w: Fraction, places: list[int], rel_tol: Fraction, abs_tol: Fraction) -> bool:
    """Float noise ("12.00001" for 12): within the tolerance and below the last digit either
    side wrote, so whole numbers compare exactly (9999 is not 10000)."""
    if not places or max(places) == 0:
        return False
    diff = abs(g - w)
    return diff <= max(abs_tol, rel_tol * max(abs(g), abs(w))) and diff < Fraction(1, 2 * 10 ** min(places))


def _significant_digits(v: Fraction) -> int:
    digits = f"{float(abs(v)):.12g}".replace(".", "").lstrip("0")
    return len(digits.rstrip("0")) or 1


__all__ = [
    "Quantity",
    "compare",
    "number_words_in",
    "numbers_in",
    "prepare",
    "read_other_way",
    "reference_quantity",
    "reference_read_other_way",
]
