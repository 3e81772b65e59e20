"""The look-alike form of an id: two ids a reader cannot tell apart share it.

It is the *skeleton* of Unicode Technical Standard #39, Unicode Security Mechanisms, section 4
(https://www.unicode.org/reports/tr39/#Confusable_Detection): NFD, each character replaced by
the prototype that the standard's ``confusables.txt`` gives it, NFD again. So "аех-1" (Cyrillic
а, е, х) and "aex-1" share a skeleton, as do "item1" and "iteml", or "m" and "rn". The data
comes from the confusable_homoglyphs package, whose ``confusables.json`` is generated from
``confusables.txt``. Ids are compared by skeleton on import (curate/ingest/importer.py) and
the store keeps each item's and pair's skeleton to find look-alikes among stored ids.
"""

from __future__ import annotations

import unicodedata
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
def _prototypes() -> dict[int, str]:
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
    return str.maketrans(table)


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


__all__ = ["skeleton"]
