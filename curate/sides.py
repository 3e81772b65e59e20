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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard, TypeVar

from .model import Letter, LetterVerdict, Order, Preference, Screen, ScreenPreference, Side

if TYPE_CHECKING:
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


def verdict_from_letter(shown: LetterVerdict | None, order: Order) -> Preference | None:
    """A judge's A/B/tie -> first/second/tie: the one step from a judge's answer to a stored
    verdict (and a script's re-read of the judge's text)."""
    return shown if shown is None or shown == "tie" else from_letter(shown, order)
