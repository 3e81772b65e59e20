"""Numbers as answers: read them from text (signs, Unicode digits, fractions, percentages,
units, currencies, scale words) and compare a response's number with a reference's.

Values are exact fractions, and every number keeps how many decimal places it was written
with: "0.333" stands for 1/3 rounded to three places, "3.1416" rounds to a reference of
"3.14". Equality respects the precision the reference states: "5.0001" is not 5, and only
near it (unsure), and a response more precise than the reference counts only when it rounds
to a reference that looks rounded (three significant digits, no half, quarter or eighth:
"12.54" may be wrong for 12.5). A comparison answers correct, incorrect or unsure; unsure
where the written numbers cannot settle it (a rounding too coarse to tell, units of different
kinds, a converted temperature that only rounds to the reference, a ratio read against a
percentage that is off by exactly 100, the same digits with and without a percent sign). A
separator with three digits after it ("1.200", "1,500") can be read both ways;
:func:`read_other_way` gives the other reading.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from fractions import Fraction

from .model import Correctness
from .wording import plural

# unit word -> (kind, factor to the kind's base unit); temperatures are kinds of their own
_UNIT_TABLE: dict[str, tuple[str, Fraction]] = {}
for _kind, _factor, _names in (
    ("length", Fraction(1, 1000), "mm millimeter millimeters millimetre millimetres"),
    ("length", Fraction(1, 100), "cm centimeter centimeters centimetre centimetres"),
    ("length", Fraction(1, 10), "dm decimeter decimeters decimetre decimetres"),
    ("length", Fraction(1), "m meter meters metre metres"),
    ("length", Fraction(1000), "km kilometer kilometers kilometre kilometres"),
    ("length", Fraction(254, 10000), "inch inches"),
    ("length", Fraction(3048, 10000), "ft foot feet"),
    ("length", Fraction(9144, 10000), "yd yard yards"),
    ("length", Fraction(1609344, 1000), "mi mile miles"),
    ("mass", Fraction(1, 1000), "mg milligram milligrams"),
    ("mass", Fraction(1), "g gram grams"),
    ("mass", Fraction(1000), "kg kilogram kilograms"),
    ("mass", Fraction(45359237, 100000), "lb lbs"),
    ("volume", Fraction(1, 1000), "ml milliliter milliliters millilitre millilitres"),
    ("volume", Fraction(1), "l liter liters litre litres"),
    ("time", Fraction(1), "s sec secs second seconds"),
    ("time", Fraction(60), "min mins minute minutes"),
    ("time", Fraction(3600), "h hr hrs hour hours"),
    ("time", Fraction(86400), "day days"),
    ("speed", Fraction(1), "m/s"),
    ("speed", Fraction(1000, 3600), "km/h kph"),
    ("angle", Fraction(1), "° deg degree degrees"),
    ("celsius", Fraction(1), "°c celsius"),
    ("fahrenheit", Fraction(1), "°f fahrenheit"),
    ("kelvin", Fraction(1), "kelvin kelvins"),
    ("percent", Fraction(1), "% percent per cent"),
    ("usd", Fraction(1), "$ usd dollar dollars"),
    ("eur", Fraction(1), "€ eur euro euros"),
    ("gbp", Fraction(1), "£ gbp"),
    ("jpy", Fraction(1), "¥ jpy yen"),
):
    for _name in _names.split():
        _UNIT_TABLE[_name] = (_kind, _factor)
_UNIT_TABLE["per cent"] = _UNIT_TABLE["%"]
for _scale in ("celsius", "fahrenheit"):
    for _deg in ("degree", "degrees"):
        _UNIT_TABLE[f"{_deg} {_scale}"] = _UNIT_TABLE[_scale]
_TEMPERATURES = {"celsius", "fahrenheit", "kelvin"}
# "300 K": kelvin beside a temperature, else a thousand ("5K"); read when compared
_K = "K"

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
    a sign's place) as "-", full-width forms folded (NFKC), vulgar fractions and
    ``\\frac{a}{b}`` as "a/b" (a mixed number as one: "2\\frac{1}{2}" as "5/2"), "minus 3" as
    "-3", LaTeX's ``\\times``, ``\\cdot``, ``10^{3}``, ``\\sqrt{2}``, ``\\text{cm}`` and math
    delimiters as plain text, and the marks between digit groups dropped where they can be
    nothing else ("1 000", "1'234")."""
    out = []
    for ch in text:
        if ch in _MINUS:
            out.append("-")
        elif unicodedata.category(ch) == "Nd":
            out.append(str(unicodedata.decimal(ch)))
        elif "\uff01" <= ch <= "\uff5e" or ch == "\u3000":  # full-width ASCII, ideographic space
            out.append(unicodedata.normalize("NFKC", ch))
        else:
            out.append(ch)
    t = _latex("".join(out))
    t = re.sub(r"(?:^|(?<=[\s=(:]))\u2013(?=\d)", "-", t)
    t = re.sub(r"(\d*)([\u00bc-\u00be\u2150-\u215e])", _vulgar, t)
    t = re.sub(r"\b(?:minus|negative)\s+(?=\d)", "-", t, flags=re.I)
    t = re.sub(r"(?<![\w)\]])-\(\s*(\d+(?:\.\d+)?)\s*\)", r"-\1", t)  # "-(2)"
    t = re.sub(rf"(?<=\d)[{_DIGIT_GROUP_SPACES}](?=\d{{3}}(?!\d))", "", t)
    t = re.sub(r"(?<![\d'])(\d{1,3})((?:'\d{3})+)(?![\d'])", lambda m: m.group(1) + m.group(2).replace("'", ""), t)
    return _join_space_groups(t)


def _latex(t: str) -> str:
    """LaTeX as the plain text a grader reads: math delimiters dropped, commands spelled out."""
    t = re.sub(r"\\[()\[\]]|\$\$", " ", t)
    t = re.sub(r"(?<!\\)\$([^$\n]*)(?<!\\)\$", _math_dollars, t)
    t = re.sub(r"\\(?:left|right|displaystyle)\b", "", t)
    t = re.sub(r"\\(?:text|mathrm|textrm|mathbf|textbf|operatorname|mbox)\s*\{([^{}]*)\}", r"\1", t)
    t = re.sub(r"\\[,;:! ]|\\q?quad\b|(?<=\d)~(?=[\d\w])", " ", t)
    t = re.sub(r"\\times\b", "×", t)
    t = re.sub(r"\\cdot\b", "·", t)
    t = _MIXED.sub(_mixed, t)  # 2\frac{1}{2}: a whole number and a fraction, not "21/2"
    t = re.sub(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}", r"\1/\2", t)
    t = re.sub(r"\\[dt]?frac\s*(\d)\s*(\d)(?!\d)", r"\1/\2", t)  # \frac12
    t = re.sub(r"\^\s*\{\s*([-+]?\d+)\s*\}", r"^\1", t)  # 10^{3}
    t = re.sub(r"\\sqrt\s*\{\s*(\d+(?:\.\d+)?)\s*\}", r"√\1", t)
    return re.sub(r"\\([%$])", r"\1", t)


# a whole number right before a fraction ("2\frac{1}{2}", "3 \dfrac{1}{4}", "2\frac12"); not after
# a power, a decimal point or a letter ("x^2\frac{1}{2}", "1.5\frac{1}{2}" are products)
_MIXED = re.compile(r"(?<![\w.,^])(\d+)[ \t]*\\[dt]?frac\s*(?:\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}|(\d)\s*(\d)(?!\d))")


def _mixed(m: re.Match) -> str:
    """A mixed number as one fraction ("2\\frac{1}{2}" -> "5/2"); a whole number before an
    improper fraction ("2\\frac{3}{2}") is no mixed number, and stays two numbers."""
    whole, top, bottom = int(m.group(1)), int(m.group(2) or m.group(4)), int(m.group(3) or m.group(5))
    if not 0 < top < bottom:
        return f"{m.group(1)} {top}/{bottom}"
    value = whole + Fraction(top, bottom)
    return f"{value.numerator}/{value.denominator}"


def _math_dollars(m: re.Match) -> str:
    """ "$\\frac{1}{2}$", "$x = 5$", "$12$": math, whose dollars go; "$5 and $" are prices."""
    inner = m.group(1)
    if "\\" in inner or "=" in inner or "^" in inner or re.fullmatch(r"\s*-?\d+(?:[.,]\d+)?\s*", inner):
        return " " + inner + " "
    return m.group(0)


def _join_space_groups(t: str) -> str:
    """ "1 234,56", and "2 500" when it is the text's only number: plain spaces between groups
    of three digits; elsewhere "3 100" may be two numbers, and stays so."""
    t = re.sub(r"(?<![\d.,])(\d{1,3})((?: \d{3})+)(?=[.,]\d)", lambda m: m.group(1) + m.group(2).replace(" ", ""), t)
    if re.fullmatch(r"[^\d]*\d{1,3}(?: \d{3})+(?![\d\-])[^\d]*", t):
        t = re.sub(r"(?<=\d) (?=\d{3}(?!\d))", "", t)
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
    decimal_comma: bool = False  # "3,5": perhaps a list of 3 and 5

    @property
    def kind(self) -> str | None:
        known = _UNIT_TABLE.get(self.unit or "")
        return known[0] if known else None


# a number joined to digits by ":" (a time, a ratio: "12:30", "1:2"), by two "/" (a date,
# "03/04/2020"), by an apostrophe ("5'10") or to a root or pi ("2√3", "3π") is none: its value is
# left to a human. Digit groups read one way only: "1,234" and "1.234.567" (thousands), "1.234,5"
# (European), "1,23,456" (Indian); a comma before one, two or four or more digits, or after a lone
# zero, is a decimal comma ("3,5", "0,500"), which a reference never uses (there "1,5" may be a list)
_UNIT = (
    r"%|per cent|°\s?[CFcf]\b|°|[$€£¥](?!\s?\d)|degrees?\s+(?:celsius|fahrenheit)\b"
    r"|(?:km|m)/(?:hr?|s)\b|[A-Za-zµ]+(?:[²³]|\^[23])?(?![\w^])"
)
_LETTER_BEFORE = r"A-Za-z0-9_\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"  # CJK text may run into digits
_NUMBER = re.compile(
    rf"(?<![{_LETTER_BEFORE}.,/^√∛∜])(?<!\d:)(?<!\}}\{{)(?P<sign>[-+])?(?P<cur>[$€£¥])?\s?"
    r"(?P<num>\d{1,3}(?:\.\d{3})+,\d+(?![\d,.])"
    r"|\d{1,3}(?:\.\d{3}){2,}(?![\d.,])"
    r"|\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?(?![\d,])"
    r"|0,\d+(?![\d,])"
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?"
    r"|\d+,(?:\d{1,2}|\d{4,})(?![\d,])"
    r"|\d+(?:\.\d+)?|\.\d+)"
    r"(?!\d|,\d|[.:'’]\d|\s*/\s*\d+\s*/\s*\d|\s?(?:√|π|\\pi\b|\\sqrt|[∛∜]))"
    r"(?:[eE](?P<exp>[-+]?\d+)\b)?"
    r"(?:\s*/\s*(?P<den>\d+)(?![\d.]\d))?"
    rf"(?:\s?(?P<unit>{_UNIT}))?"
)
_UNIT_AFTER = re.compile(rf"\s?({_UNIT})")
_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"
_FROM_SUPERSCRIPT = str.maketrans(_SUPERSCRIPT, "0123456789-")
# "1.2 × 10^3", "4 x 10⁻²": the power of ten belongs to the number before it
_TIMES_TEN = re.compile(r"\s*[×x·*]\s*10\s*(?:\^\s*\{?\s*([-+]?\d+)\s*\}?|([" + _SUPERSCRIPT + r"]+))")
_POWER = re.compile(r"\s*(?:\^\s*([-+]?\d{1,2})(?!\d|\.\d)|([" + _SUPERSCRIPT + r"]{1,3}))")  # "10^3", "10²"
_NEGATING = re.compile(r"(?:\bnot|\brather than|\binstead of)\s*$", re.I)
_BINARY_LEFT = re.compile(r"(?:[\d)]|(?<![A-Za-z])[A-Za-z])\s*$")  # "22 - 7", "x - 7" subtract; "by -10%" does not
_SCALE_TAIL = re.compile(r"\s?(k|thousand|million|billion)\b", re.I)
_FRACTION_WORDS = re.compile(r"\s*(?:quarters?|thirds?|halves|fifths?|hundred|percent)\b", re.I)
# words that follow numbers without being what was counted ("5 in total", "10 and 12")
_NOT_UNITS = set("a an and are as at by for from in into is it of on or so the then to was were with".split())


def numbers_in(text: str, *, decimal_comma: bool = True) -> list[Quantity]:
    """Every number written with digits in (prepared) text, in order; ``decimal_comma=False``
    leaves out the numbers only a decimal comma makes ("3,5"), as a reference's are."""
    out: list[Quantity] = []
    skip_to = 0  # past a "× 10^3" already read with the number before it
    for m in _NUMBER.finditer(text):
        if m.start("num") < skip_to or _not_a_value(m, text):
            continue
        before = text[max(0, m.start() - 24) : m.start()]  # a short window keeps long texts linear
        sign = m.group("sign")
        if sign == "-" and _BINARY_LEFT.search(before):
            sign = None
        num, den, unit = m.group("num"), m.group("den"), m.group("unit")
        digits, comma = _digits(num)
        if comma and not decimal_comma:
            continue
        value = Fraction(digits)
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        power, skip_to = _power_after(m, text)
        if power is None and text[m.end("num") : m.end("num") + 1] in (*_SUPERSCRIPT, "^"):
            continue  # "x^2.5", "10^{n}": a power not read, so no value
        if power is not None:  # the "x" of "4 x 10^3" is no unit; one may follow the power
            after = _UNIT_AFTER.match(text, skip_to)
            unit = after.group(1) if after and _unit_key(after.group(1)) in {*_UNIT_TABLE, _K} else None
        elif (
            unit
            and len(unit) == 1
            and text[m.start("unit") - 1].isdigit()
            and unit.lower() not in {*_UNIT_TABLE, *_SCALES}
        ):
            continue  # a number inside a word: "3D", "5G", "3x"
        places: int | None = decimals
        if power is not None and power[0] == "^":  # "2^10", "10²": a power of the number itself
            exponent = int(power[1:])
            value, places = value**exponent, (0 if exponent >= 0 else None)
        else:
            exponent = int(m.group("exp") or 0) + (int(power) if power else 0)
            if exponent:
                value *= Fraction(10) ** exponent
                places = max(decimals - exponent, 0)
        if den:
            value, places = (value / int(den), None) if int(den) else (value, 0)
        if sign == "-":
            value = -value
        if unit == _K and not m.group("cur"):
            pass  # kelvin or a thousand: read when compared
        elif unit and unit.lower() in _SCALES:
            value *= _SCALES[unit.lower()]
            unit = None
        elif not unit:
            scale = _SCALE_TAIL.match(text, m.end())
            if scale:
                value *= _SCALES[scale.group(1).lower()]
        unit = _unit_key(m.group("cur") or unit)
        negated = _NEGATING.search(before) is not None
        out.append(Quantity(value, unit, places, m.start(), negated, comma))
    return out


def _not_a_value(m: re.Match, text: str) -> bool:
    """ "1990s" (a decade) and "'20" (a year) are no values of their own."""
    num, at = m.group("num"), m.start("num")
    if m.group("unit") == "s" and text[m.end("num")] == "s" and re.fullmatch(r"\d{3}0", num):
        return True
    return at > 0 and text[at - 1] in "'’" and not m.group("sign") and len(num) == 2


_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?")  # 1,234 and 1,23,456


def _digits(num: str) -> tuple[str, bool]:
    """A number's digits with a decimal point, and whether a decimal comma made it one."""
    if "," in num and "." in num and num.index(".") < num.index(","):
        return num.replace(".", "").replace(",", "."), False  # 1.234,5
    if num.count(".") > 1:
        return num.replace(".", ""), False  # 1.234.567
    if "," in num and (num.startswith("0,") or not _GROUPED.fullmatch(num)):
        return num.replace(",", "."), True  # 3,5
    return num.replace(",", ""), False


def _power_after(m: re.Match, text: str) -> tuple[str | None, int]:
    """The power right after a number and where it ends: "3" for "× 10^3" / "x 10³" (a power of
    ten that scales it), "^10" for "2^10" or "10²" (a power of the number itself), else None."""
    if m.group("den") or m.group("exp"):
        return None, 0
    times = _TIMES_TEN.match(text, m.end("num"))
    if times:
        return times.group(1) or times.group(2).translate(_FROM_SUPERSCRIPT), times.end()
    power = _POWER.match(text, m.end("num"))
    if power and re.fullmatch(r"\d+", m.group("num")) and not m.group("unit"):
        exponent = power.group(1) or power.group(2).translate(_FROM_SUPERSCRIPT)
        if re.fullmatch(r"[-+]?\d+", exponent):
            return "^" + exponent, power.end()
    return None, 0


def _unit_key(unit: str | None) -> str | None:
    if not unit or unit.lower() in _NOT_UNITS:
        return None
    if unit == _K:
        return _K
    key = re.sub(r"\s+", "", unit.lower()) if unit.startswith("°") else " ".join(unit.lower().split())
    key = {"km/hr": "km/h"}.get(key, key)
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
    nums = numbers_in(text, decimal_comma=False)
    if len(nums) != 1:
        return None
    q = nums[0]
    m = _NUMBER.match(text, q.start)
    if m is None:
        return None
    end = m.end()
    power, power_end = _power_after(m, text)
    if power is not None:
        after = _UNIT_AFTER.match(text, power_end)
        end = after.end() if after and q.unit else power_end
    rest = text[: m.start()] + text[end:]
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
    got, want = _read_k(got, want), _read_k(want, got)
    gk, wk = got.kind, want.kind
    temperature = _compare_temperatures(got, want)
    if temperature is not None:
        return temperature
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
        if g == w:
            return "correct", "converted units"
        if _within_tolerance(g, w, [x for x in (got.places, want.places) if x is not None], rel_tol, abs_tol):
            return "unsure", _PAST_THE_LAST_DIGIT
        if abs(g - w) <= abs(w) / 100:
            return "unsure", "converted units differ by under 1%: a rounded conversion?"
        return "incorrect", "converted units"
    verdict = _compare_values(got, want, rel_tol, abs_tol)
    if verdict[0] == "incorrect" and _hundredfold(got.value, want.value) and None in (gk, wk):
        return "unsure", "off by exactly 100: a ratio and a percentage?"
    if verdict[0] == "incorrect" and gk == wk == "percent" and _rounds_to(got, want):
        return "unsure", "a percentage that rounds to the reference's: the reference rounded?"  # 33.3% for 33%
    return verdict


_PAST_THE_LAST_DIGIT = "differs from the reference past its last digit: a rounding, noise or another value?"
_ABSOLUTE_ZERO = Fraction(-27315, 100)  # in degrees Celsius


def _read_k(q: Quantity, other: Quantity) -> Quantity:
    """ "300 K" is kelvin beside a temperature, else a thousand ("5K")."""
    if q.unit != _K:
        return q
    if other.kind in _TEMPERATURES or other.kind == "angle":
        return replace(q, unit="kelvin")
    return replace(q, value=q.value * 1000, unit=None)


def _celsius(q: Quantity) -> Fraction:
    if q.kind == "fahrenheit":
        return (q.value - 32) * Fraction(5, 9)
    return q.value + _ABSOLUTE_ZERO if q.kind == "kelvin" else q.value


def _on_scale(celsius: Fraction, kind: str | None) -> Fraction:
    if kind == "fahrenheit":
        return celsius * Fraction(9, 5) + 32
    return celsius - _ABSOLUTE_ZERO if kind == "kelvin" else celsius


def _compare_temperatures(got: Quantity, want: Quantity) -> tuple[Correctness, str] | None:
    """Temperatures on two scales, converted exactly (37 °C = 98.6 °F); a conversion that only
    rounds to the reference is unsure. Bare degrees beside a temperature are on its scale when
    the digits agree, else unsure. None when neither is a temperature."""
    gk, wk = got.kind, want.kind
    if not ({gk, wk} & _TEMPERATURES):
        return None
    if "angle" in (gk, wk):
        if got.value == want.value:
            return "correct", "degrees on the reference's scale"
        return "unsure", "bare degrees against a temperature: on which scale?"
    if gk not in _TEMPERATURES or wk not in _TEMPERATURES or gk == wk:
        return None
    g, w = _celsius(got), _celsius(want)
    if g == w:
        return "correct", "converted temperatures"
    rounded = [abs(got.value - _on_scale(w, gk)) <= _half_unit(got.places), abs(g - w) <= _half_unit(want.places)]
    if any(rounded):
        return "unsure", "a converted temperature that rounds to the reference: a rounded conversion?"
    return "incorrect", "converted temperatures"


def _half_unit(places: int | None) -> Fraction:
    return Fraction(1, 2 * 10**places) if places is not None else Fraction(0)


def _rounds_to(got: Quantity, want: Quantity) -> bool:
    """More places than the reference, and rounds to it (33.3 to 33)."""
    p, d = want.places, got.places
    return p is not None and (d is None or d > p) and abs(got.value - want.value) <= _half_unit(p)


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
    if g == w:
        return "correct", ""
    verdict = _compare_unequal(g, w, d, p)
    if verdict[0] != "correct" and _within_tolerance(g, w, [x for x in (d, p) if x is not None], rel_tol, abs_tol):
        return "unsure", _PAST_THE_LAST_DIGIT  # "5.0001" for 5, "12.00001" for 12: not equal, but near
    return verdict


def _compare_unequal(g: Fraction, w: Fraction, d: int | None, p: int | None) -> tuple[Correctness, str]:
    """Two different values: a rounding of one another, or another value."""
    diff = abs(g - w)
    if p is not None and p >= 1 and (d is None or d >= p) and diff <= Fraction(1, 2 * 10**p):
        # "3.1416" for "3.14": the reference looks rounded only when it has 3 significant digits
        # and is no half, quarter or eighth (12.5, 2.25 and 0.375 are likely exact)
        if _significant_digits(w) >= 3 and (w * 8).denominator != 1:
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
    """Near enough to be float noise or a rounding ("12.00001" for 12): within the tolerance and
    below the last digit either side wrote. Never equal: the reference states its precision,
    so this makes a verdict unsure, not correct (issue 24)."""
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
