"""curate/sides.py: every mapping between what was shown and the stored first/second."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from curate import sides
from curate.model import Triplet

side = st.sampled_from(["first", "second"])
order = st.sampled_from(["forward", "reverse"])
letter_verdict = st.sampled_from(["A", "B", "tie", None])
screen_pref = st.sampled_from(["left", "right", "tie", None])
preference = st.sampled_from(["first", "second", "tie", None])
value = st.one_of(st.none(), st.integers(), st.text(max_size=3))

# the spelled-out tables the module replaces, as an independent oracle
SWAP = {
    "first": "second",
    "second": "first",
    "A": "B",
    "B": "A",
    "left": "right",
    "right": "left",
    "forward": "reverse",
    "reverse": "forward",
    "tie": "tie",
    None: None,
}
JUDGE = {"forward": {"A": "first", "B": "second"}, "reverse": {"A": "second", "B": "first"}}
SCREEN = {"first": {"left": "first", "right": "second"}, "second": {"left": "second", "right": "first"}}


def test_tables():
    for o, table in JUDGE.items():
        for letter, s in table.items():
            assert sides.from_letter(letter, o) == s
            assert sides.to_letter(s, o) == letter
        assert sides.shown_first(o) == table["A"]
        assert sides.order_of(table["A"]) == o
    for left, table in SCREEN.items():
        for screen, s in table.items():
            assert sides.from_screen(screen, left) == s
            assert sides.preference_to_screen(s, left) == screen
    assert sides.other("first") == "second" and sides.other("second") == "first"
    assert sides.shown_pair("x", "y", "first") == ("x", "y")
    assert sides.shown_pair("x", "y", "second") == ("y", "x")


@given(side, side, order)
def test_a_record_listing_the_pair_its_own_way_shown_in_its_own_order(chosen, listed_as, shown):
    # a benchmark record lists the pair's two responses with the chosen one at its own
    # position `listed_as`; a script shows that list forward or reversed
    pair = {"first": "F", "second": "S"}
    record = [pair[SWAP[chosen]]] * 2
    record[["first", "second"].index(listed_as)] = pair[chosen]
    on_screen = record if shown == "forward" else record[::-1]
    copy = sides.copy_order(chosen, listed_as)
    assert copy == ("forward" if record == ["F", "S"] else "reverse")
    order = sides.shown_order(copy, shown)
    assert [pair[sides.from_letter(x, order)] for x in ("A", "B")] == on_screen


@given(side, order)
def test_letters_round_trip(s, o):
    assert sides.verdict_from_letter(sides.to_letter(s, o), o) == s
    assert sides.order_of(sides.shown_first(o)) == o
    assert sides.shown_first(sides.order_of(s)) == s
    assert sides.other(sides.other(s)) == s != sides.other(s)


@given(preference, side)
def test_screen_round_trip(p, left):
    assert sides.preference_from_screen(sides.preference_to_screen(p, left), left) == p


@given(screen_pref, side)
def test_screen_round_trip_from_shown(p, left):
    assert sides.preference_to_screen(sides.preference_from_screen(p, left), left) == p


@given(value, value, side)
def test_pairs_round_trip(a, b, first_shown):
    assert sides.stored_pair(*sides.shown_pair(a, b, first_shown), first_shown) == (a, b)
    assert sides.shown_pair(a, b, sides.other(first_shown)) == sides.shown_pair(b, a, first_shown)


@given(letter_verdict, order)
def test_flipping_order_and_verdict_together_is_identity(v, o):
    """Showing the pair the other way round while the judge names the other letter is the
    same stored verdict; tie and None stay what they are."""
    assert sides.verdict_from_letter(SWAP[v], SWAP[o]) == sides.verdict_from_letter(v, o)
    assert sides.verdict_from_letter(v, o) == (v if v in ("tie", None) else JUDGE[o][v])


@given(screen_pref, side)
def test_flipping_screen_and_preference_together_is_identity(p, left):
    assert sides.preference_from_screen(SWAP[p], SWAP[left]) == sides.preference_from_screen(p, left)


@given(st.lists(st.tuples(side, st.sampled_from(["left", "right"])), min_size=1, max_size=20))
def test_side_index_is_elementwise_on_arrays(rows):
    """The columnar file reader maps whole columns with side_index; it must agree with the
    scalar mapping row by row."""
    lefts = np.array([["first", "second"].index(left) for left, _ in rows])
    screens = np.array([["left", "right"].index(screen) for _, screen in rows])
    got = sides.side_index(lefts, screens)
    assert [["first", "second"][i] for i in got] == [sides.from_screen(s, left) for left, s in rows]


def test_guards():
    assert sides.is_side("first") and not sides.is_side("left") and not sides.is_side(None)
    assert sides.is_screen("right") and not sides.is_screen("second") and not sides.is_screen("tie")


# -- the seeded orientations: the same choices for the same ids as where each was decided before
ident = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


def _sha(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


@given(ident, ident, st.integers(0, 99))
def test_each_seeded_orientation_keeps_its_hash_inputs(key, annotator, seed):
    # ingest.common.seeded_swap: the parity of sha256("order\0KEY\0") as 8 hex digits
    swap = int(hashlib.sha256(f"order\x00{key}\x00".encode()).hexdigest()[:8], 16) % 2 == 1
    assert sides.imported_chosen_first(key) is not swap
    # formats.triplets.chosen_first: "canonical-order:ID", first byte's low bit
    assert sides.copy_chosen_first(key) is (_sha(f"canonical-order:{key}")[0] & 1 == 0)
    # assign.side_for: unit("side", seed, pair, annotator) below one half
    u = int.from_bytes(_sha(f"side\x1f{seed}\x1f{key}\x1f{annotator}")[:8], "big") / 2**64
    assert sides.annotator_left(key, annotator, seed) == ("first" if u < 0.5 else "second")
    # labelstudio.push.left_side: "labelstudio:SEED:PAIR", first byte's low bit
    assert sides.labelstudio_left(key, seed) == ("second" if _sha(f"labelstudio:{seed}:{key}")[0] & 1 else "first")


def test_seeded_orientations_pinned():
    # literal choices of the functions before they moved here (curate/ingest/common.py,
    # curate/formats/triplets.py, curate/assign.py, annotate/labelstudio/push.py)
    ids = [f"p{i}" for i in range(8)]
    assert [sides.imported_chosen_first(i) for i in ids] == [False, True, True, True, True, False, False, False]
    assert [sides.copy_chosen_first(i) for i in ids] == [False, True, True, True, False, False, False, True]
    assert [sides.annotator_left(i, "ann", 0) for i in ids[:4]] == ["first", "second", "second", "first"]
    assert [sides.labelstudio_left(i) for i in ids[:4]] == ["first", "second", "first", "second"]


def test_the_build_placement_alternates_in_hash_order_within_each_category():
    ts = [Triplet(id=f"t{i}", prompt="", images=(), chosen="", rejected="", category="xy"[i % 3 < 1]) for i in range(9)]
    first = sides.export_chosen_first(ts, 7)
    k = 0
    for cat in "xy":
        for t in sorted((t for t in ts if t.category == cat), key=lambda t: _sha(f"7\x1f{t.id}")):
            assert first[t.id] is (k % 2 == 0)
            k += 1
    assert first == sides.export_chosen_first(reversed(ts), 7) and len(first) == 9
