"""Shown versus stored: the one module that maps what was shown to the pair's own order.

Labels and verdicts are stored against the pair's order: ``first`` (``Pair.first_id``) and
``second``. What an annotator or a judge saw is a position in a display:

- an annotator's screen, in the app and in Label Studio: ``left`` / ``right``. The
  Assignment's ``left`` (a Label Studio task's ``data.left``) is the stored side on the left.
- a judge's prompt: ``A`` / ``B``. A judgment's ``order`` is the arrangement: ``forward``
  shows the first response as A, ``reverse`` the second.

Both come down to the stored side shown first, so every mapping here is :func:`side_index`
read through a vocabulary. ``tie`` and None pass through the verdict mappings unchanged.
Nothing else in the tree swaps first and second.

Every seeded decision of which response comes first is here too, each a stable coin of
curate/seeding.py over ids whose inputs never change (what they chose is stored: imported
pairs, assignments, Label Studio tasks, exported files, judge runs):

- ``imported_chosen_first``: the importer's order of a chosen/rejected record (the stored pair);
- ``copy_chosen_first``: scoring's order of a chosen/rejected row read as a dataset pair;
- ``export_chosen_first``: the build's balanced placement in the benchmark layouts;
- ``annotator_left``: the side an annotator sees on the left (the Assignment's ``left``);
- ``labelstudio_left``: the side on the left of a Label Studio task.

The first two differ on purpose (see ``copy_chosen_first``). The judge's own display order
(``forward`` / ``reverse`` per judgment) is the judge's order policy (curate/judging/order.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard, TypeVar

from .model import Letter, LetterVerdict, Order, Preference, Screen, ScreenPreference, Side, Triplet
from .seeding import coin, digest, unit

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy as np

T = TypeVar("T")
Index = TypeVar("Index", int, "np.ndarray")

# each indexed like side_index: 0 is first / left / A / forward
_SIDES: tuple[Side, Side] = ("first", "second")
_SCREENS: tuple[Screen, Screen] = ("left", "right")
_LETTERS: tuple[Letter, Letter] = ("A", "B")
_ORDERS: tuple[Order, Order] = ("forward", "reverse")  # by the stored side shown first


def is_side(value: object) -> TypeGuard[Side]:
    return value in _SIDES


def is_screen(value: object) -> TypeGuard[Screen]:
    return value in _SCREENS


def side_index(lead: Index, position: Index) -> Index:
    """The stored side (0 first, 1 second) at a display position (0 left/A, 1 right/B) when
    stored side ``lead`` is shown first; also the position of a stored side (a swap is its
    own inverse). Works elementwise on integer numpy arrays."""
    return lead ^ position


def other(side: Side) -> Side:
    return _SIDES[side_index(_SIDES.index(side), 1)]


def shown_first(order: Order) -> Side:
    """The stored side a judge saw as A."""
    return _SIDES[_ORDERS.index(order)]


def order_of(first_shown: Side) -> Order:
    """The judge's display order that shows ``first_shown`` as A."""
    return _ORDERS[_SIDES.index(first_shown)]


def copy_order(side: Side, listed_as: Side) -> Order:
    """How a copy of the pair with its own response list (a benchmark record) lists them:
    ``forward`` when it lists stored ``side`` as its own ``listed_as``, first as first."""
    return _ORDERS[side_index(_SIDES.index(side), _SIDES.index(listed_as))]


def shown_order(copy: Order, shown: Order) -> Order:
    """The display order, against the pair, of a copy listed in ``copy`` order and shown
    in ``shown`` order against its own list (two swaps cancel)."""
    return _ORDERS[side_index(_ORDERS.index(copy), _ORDERS.index(shown))]


def from_screen(screen: Screen, left: Side) -> Side:
    """The stored side an annotator saw at ``screen``."""
    return _SIDES[side_index(_SIDES.index(left), _SCREENS.index(screen))]


def from_letter(letter: Letter, order: Order) -> Side:
    """The stored side a judge saw as ``letter``."""
    return _SIDES[side_index(_ORDERS.index(order), _LETTERS.index(letter))]


def to_letter(side: Side, order: Order) -> Letter:
    """The letter a judge saw a stored side under."""
    return _LETTERS[side_index(_ORDERS.index(order), _SIDES.index(side))]


def shown_pair(first: T, second: T, first_shown: Side) -> tuple[T, T]:
    """Two values in stored order -> display order (left/A, right/B)."""
    return (first, second) if first_shown == "first" else (second, first)


def stored_pair(shown_1: T, shown_2: T, first_shown: Side) -> tuple[T, T]:
    """Two values in display order (left/A, right/B) -> stored order (first, second)."""
    return shown_pair(shown_1, shown_2, first_shown)  # the same swap


def preference_from_screen(pref: ScreenPreference | None, left: Side) -> Preference | None:
    """An annotator's left/right/tie -> first/second/tie."""
    return pref if pref is None or pref == "tie" else from_screen(pref, left)


def preference_to_screen(pref: Preference | None, left: Side) -> ScreenPreference | None:
    """A stored preference as the annotator saw it (to reopen a label)."""
    if pref is None or pref == "tie":
        return pref
    return _SCREENS[side_index(_SIDES.index(left), _SIDES.index(pref))]


def scale_from_screen(shown: int, low: int, high: int, left: Side) -> int:
    """A pairwise scale's point as picked (high: the left response better) -> stored (high:
    the first better): mirrored when the pair was shown flipped (on 1-6, 6 shown is 1 stored)."""
    return shown if left == "first" else low + high - shown


def scale_to_screen(stored: int, low: int, high: int, left: Side) -> int:
    """A stored point as the annotator saw it (mirroring is its own inverse)."""
    return scale_from_screen(stored, low, high, left)


def verdict_from_letter(shown: LetterVerdict | None, order: Order) -> Preference | None:
    """A judge's A/B/tie -> first/second/tie: the one step from a judge's answer to a stored
    verdict (and a script's re-read of the judge's text)."""
    return shown if shown is None or shown == "tie" else from_letter(shown, order)


# -- seeded orientation: which response comes first, decided once ----------------------------
def imported_chosen_first(pair_id: str) -> bool:
    """The importer's order of a chosen/rejected record (VL-RewardBench's text copy,
    MM-RLHF-RewardBench): whether the stored pair ``pair_id`` has the chosen response first.
    Half the pairs, so a judge shown them in a fixed order is not handed the answer by
    position. (The parity of ``id_hash("order", pair_id, n=8)``, as every import so far.)"""
    return not coin("order", pair_id, "", sep="\x00", nbytes=4)


# Two orientations of a chosen/rejected record, on purpose. The importer's
# (``imported_chosen_first``) hashes the *store pair id*; scoring's (``copy_chosen_first``)
# hashes the *record id* another way. Both results are stored: imported pairs keep their
# first/second in the store (labels and judgments on them are kept in those terms), and a judge
# run records the orientation of every pair it judged (Store.record_run_orientation), which
# ``mmrb score --run`` reads back instead of computing it again; a run stored before schema
# version 10 has no such record and is read with this function. One key for both would flip
# half the verdicts of every such run (or the orientation of newly imported pairs against
# earlier imports): on the 1,250 VL-RewardBench text pairs the two disagree on 626, and a judge
# that always answers A scores 677/1250 under ``--order fixed`` now, 605/1250 under the
# importer's orientation.
def copy_chosen_first(record_id: str) -> bool:
    """Scoring's orientation of a chosen/rejected row read as a dataset pair (the project's
    triplets and the chosen/rejected copies): whether the chosen response is its first, a
    stable coin of the row's id. "fixed" order then does not always show the chosen response
    first (the flaw that inflates R1-Reward's own numbers)."""
    return not coin("canonical-order", record_id, sep=":")


def export_chosen_first(triplets: Iterable[Triplet], seed: int) -> dict[str, bool]:
    """The build's placement of the chosen response in the benchmark layouts (Output1,
    response[0], response_a): first for half of the triplets and second for the other half.
    Triplets are ordered by sha256(seed, id) within each category and alternate; the
    alternation carries over between categories, so each category and the whole set differ
    by at most one. The input's order does not matter."""
    rows = list(triplets)
    out: dict[str, bool] = {}
    k = 0
    for cat in sorted({t.category for t in rows}):
        group = sorted((t for t in rows if t.category == cat), key=lambda t: digest(seed, t.id))
        for t in group:
            out[t.id] = k % 2 == 0
            k += 1
    return out


def annotator_left(pair_id: str, annotator: str, seed: int) -> Side:
    """The stored side an annotator sees on the left (``Assignment.left``): a seeded hash of
    (pair, annotator), stable across runs and balanced."""
    return "first" if unit("side", seed, pair_id, annotator) < 0.5 else "second"


def labelstudio_left(pair_id: str, seed: int = 0) -> Side:
    """The stored side shown as A (on the left) in a Label Studio task, seeded from the pair
    id; ":" is the separator of the tasks already pushed (curate/seeding.py)."""
    return "second" if coin("labelstudio", seed, pair_id, sep=":") else "first"
