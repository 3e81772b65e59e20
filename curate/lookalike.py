"""The look-alike form of an id: two ids a reader cannot tell apart share it.

It is the *skeleton* of Unicode Technical Standard #39, Unicode Security Mechanisms, section 4
(https://www.unicode.org/reports/tr39/#Confusable_Detection): NFD, each character replaced by
the prototype that the standard's ``confusables.txt`` gives it, NFD again. So "аех-1" (Cyrillic
а, е, х) and "aex-1" share a skeleton, as do "item1" and "iteml", or "m" and "rn". The data
comes from the confusable_homoglyphs package, whose ``confusables.json`` is generated from
``confusables.txt``. Ids are compared by skeleton on import (curate/ingest/importer.py) and
the store keeps each item's and pair's skeleton to find look-alikes among stored ids.

It also holds the one identifier policy, for item, pair and candidate ids, model names and
account names alike (``check_identifier``, ``check_name``): NFKC, no invisible character (Unicode's
Default_Ignorable_Code_Point, which holds the zero-width and bidi controls, variation
selectors and the Hangul fillers, and the blanks it leaves out), no control or unassigned
character, one script of the Latin, Cyrillic and Greek look-alikes; an account name is also
one word without markup, and no look-alike of a name already there (``lookalike``). And what
text the store keeps the same on SQLite and PostgreSQL (``text_problem``: no NUL, which
PostgreSQL refuses and SQLite would keep).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache

_LRM = "\u200e"  # the data wraps right-to-left characters in left-to-right marks
# The data's entries for ASCII characters (derived as below; a test checks them against it):
# an ASCII id, the usual kind, gets its skeleton without loading the 9,600 entries, which
# takes 0.1 to 0.4 s and would land in whatever first writes an item or a pair.
_ASCII = str.maketrans({"`": "'", '"': "''", "|": "l", "1": "l", "I": "l", "0": "O", "%": "º/₀", "m": "rn"})
# The same as replacements, three times as fast as str.translate on an id: no replacement holds
# a character that is replaced, so their order does not matter
_ASCII_REPLACE = tuple((chr(k), v) for k, v in _ASCII.items())


@cache
def _prototypes() -> dict[int, str | None]:
    """Each confusable code point's prototype (or a stand-in for it; see below), for str.translate."""
    from confusable_homoglyphs.confusables import confusables_data  # 9,600 entries: loaded when first needed

    # confusables.json lists every line of confusables.txt both ways: a source code point names
    # its one prototype, and a prototype names all its sources. So the sources of a prototype
    # form a star around it: the prototype is the node with several neighbours, or a sequence
    # ("rn" for "m": sources are single code points). Two single code points that name only each
    # other are a prototype and its one source in some order; either one serves as the skeleton
    # of both, and the smaller is taken.
    links = {k.strip(_LRM): [a["c"].strip(_LRM) for a in v] for k, v in confusables_data.items()}
    table = {}
    for ch, alikes in links.items():
        if len(ch) != 1 or len(alikes) != 1:
            continue
        (other,) = alikes
        if len(other) > 1 or len(links.get(other, ())) > 1 or other < ch:
            table[ch] = other
    for ch, other in table.items():  # a prototype sequence may hold a mapped character: map it too
        for _ in range(4):
            if (again := "".join(table.get(c, c) for c in other)) == other:
                break
            other = again
        table[ch] = other
    out: dict[int, str | None] = str.maketrans(table)
    for first, last in _IGNORABLE:  # UTS #39 (since Unicode 15.1): the skeleton leaves them out
        out.update(dict.fromkeys(range(first, last + 1)))
    return out


@lru_cache(maxsize=1 << 14)  # an import asks for one id's skeleton several times; memory stays bounded
def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text``: equal for texts that look alike."""
    if text.isascii():
        for ch, prototype in _ASCII_REPLACE:  # ASCII is decomposed already, and so are the prototypes above
            if ch in text:
                text = text.replace(ch, prototype)
        return text
    table = _prototypes()
    out = unicodedata.normalize("NFD", text)
    for _ in range(4):  # decomposing a mapped character may expose one the table maps: map again
        mapped = unicodedata.normalize("NFD", out.translate(table))
        if mapped == out or mapped.isascii():  # ASCII is decomposed and, in the table, mapped for good
            return mapped
        out = mapped
    return out


# -- the identifier policy -----------------------------------------------------------------
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt; a test checks it against
# the regex package's data): shown as nothing, or steering how the text around is shown
_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# blanks that are not default-ignorable but are shown as nothing all the same
_BLANKS = frozenset({0x2800, 0x1D159})  # BRAILLE PATTERN BLANK, MUSICAL SYMBOL NULL NOTEHEAD
# characters an identifier must not hold besides those: controls, format characters,
# surrogates, private use, unassigned, line and paragraph separators
_NOT_IN_IDS = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# scripts whose letters look alike (Latin a, Cyrillic а, Greek α ...): one identifier may use one of them
_LOOKALIKE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")
NAME_PUNCTUATION = "._-@+"  # what an account name may hold besides letters, digits and marks
MAX_NAME = 100  # the store's annotators.name column (String(100))


def invisible(ch: str) -> bool:
    """Whether ``ch`` is shown as nothing (or only steers how the text around it is shown)."""
    cp = ord(ch)
    return cp in _BLANKS or any(first <= cp <= last for first, last in _IGNORABLE)


def _named(ch: str) -> str:
    name = unicodedata.name(ch, "")
    if ch == "\x00":
        name = "NUL"
    return f"U+{ord(ch):04X} ({name or 'a control or unassigned character'})"


def check_identifier(text: str, what: str = "an id") -> tuple[str, str | None]:
    """(``text`` in NFKC without surrounding whitespace, why it cannot be ``what`` or None).

    NFKC folds compatibility look-alikes (full-width letters, ligatures, styled mathematical
    letters, no-break spaces) into one spelling, so two identifiers that look the same are
    the same one and collide as duplicates instead of being kept side by side; what would
    still be invisible or reorder the text is refused, and so is an identifier that mixes
    Latin, Cyrillic and Greek letters (NFKC keeps Cyrillic а apart from Latin a)."""
    if text.isascii() and text.isprintable():  # the usual identifier: NFKC leaves it as it is, all Latin
        norm = text.strip()
        return norm, None if norm else "must not be empty"
    for ch in text:  # named as typed: NFKC turns some (U+3164) into others (U+1160)
        if invisible(ch):
            return text, f"contains the invisible character {_named(ch)}, which is not allowed in {what}"
    norm = unicodedata.normalize("NFKC", text).strip()
    if not norm:
        return norm, "must not be empty"
    scripts: dict[str, str] = {}
    for ch in norm:
        if invisible(ch):
            return norm, f"contains the invisible character {_named(ch)}, which is not allowed in {what}"
        if unicodedata.category(ch) in _NOT_IN_IDS or (ch.isspace() and ch != " "):
            return norm, f"contains {_named(ch)}, which is not allowed in {what}"
        if ch.isalpha():
            script = unicodedata.name(ch, "").split(" ")[0]
            if script in _LOOKALIKE_SCRIPTS:
                scripts.setdefault(script, ch)
    if len(scripts) > 1:
        shown = " and ".join(f"{k.title()} ({v!r})" for k, v in scripts.items())
        return norm, f"mixes letters of {shown}, which look alike: use one script in {what}"
    return norm, None


def check_name(text: str) -> tuple[str, str | None]:
    """An account name under ``check_identifier``, and one word of letters, digits, marks and
    ``NAME_PUNCTUATION`` (an e-mail address is one), of at most ``MAX_NAME`` characters: no
    markup (HTML or Markdown), which a name shown somewhere without escaping would become."""
    norm, why = check_identifier(text, "an account name")
    if why:
        return norm, why
    for ch in norm:
        if not (ch.isalnum() or ch in NAME_PUNCTUATION or unicodedata.category(ch).startswith("M")):
            shown = "a space" if ch.isspace() else repr(ch)
            allowed = " ".join(NAME_PUNCTUATION)
            return norm, f"holds {shown}: an account name is one word of letters, digits and {allowed}"
    if len(norm) > MAX_NAME:
        return norm, f"is {len(norm)} characters long: an account name has at most {MAX_NAME}"
    return norm, None


def lookalike(name: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` that is not ``name`` but looks like it (the same skeleton)."""
    mine = skeleton(name)
    return next((o for o in others if o != name and skeleton(o) == mine), None)


def text_problem(text: str) -> str | None:
    """Why the store cannot keep ``text`` alike on both backends, or None: a NUL (PostgreSQL
    refuses it, SQLite would keep it) or half a UTF-16 surrogate pair (neither encodes it)."""
    if "\x00" in text:
        return f"contains a NUL character (U+0000) at character {text.index(chr(0)) + 1}, which cannot be stored"
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        half = f"U+{ord(text[e.start]):04X}"
        return f"contains half a UTF-16 surrogate pair ({half}) at character {e.start + 1}, which cannot be stored"
    return None


__all__ = ["check_identifier", "check_name", "invisible", "lookalike", "skeleton", "text_problem"]
