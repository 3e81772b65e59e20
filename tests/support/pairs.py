"""Stores of n plain pairs, for the tests of assignment and of quality control."""

from __future__ import annotations

from curate.model import Candidate, Item, Pair


def seed_pairs(store, n: int, *, gold: int = 0, start: int = 0) -> list[str]:
    items, cands, pairs = [], [], []
    for i in range(start, start + n + gold):
        items.append(Item(id=f"it{i}", prompt=f"q{i}", category="vqa"))
        cands += [
            Candidate(id=f"c{i}a", item_id=f"it{i}", model="m1", text="a"),
            Candidate(id=f"c{i}b", item_id=f"it{i}", model="m2", text="b"),
        ]
        is_gold = i >= start + n
        pairs.append(
            Pair(
                id=f"p{i}",
                item_id=f"it{i}",
                first_id=f"c{i}a",
                second_id=f"c{i}b",
                origin="test",
                is_gold=is_gold,
                known_preference="first" if is_gold else None,
            )
        )
    with store.write() as conn:
        store.add_items(items, conn=conn)
        store.add_candidates(cands, conn=conn)
        store.add_pairs(pairs, conn=conn)
    return [p.id for p in pairs]


def seed(store, n: int, *, category: str = "vqa", auto: bool = False) -> list[str]:
    """n pairs p0..p{n-1}; with ``auto`` the reference says the first response is correct."""
    items, cands, pairs = [], [], []
    for i in range(n):
        items.append(Item(id=f"it{i}", prompt=f"q{i}", category=category))
        cands += [
            Candidate(id=f"c{i}a", item_id=f"it{i}", model="m1", text=f"answer a{i}"),
            Candidate(id=f"c{i}b", item_id=f"it{i}", model="m2", text=f"answer b{i}"),
        ]
        extra = dict(auto_first="correct", auto_second="incorrect", auto_method="exact") if auto else {}
        pairs.append(Pair(id=f"p{i}", item_id=f"it{i}", first_id=f"c{i}a", second_id=f"c{i}b", origin="test", **extra))
    with store.write() as conn:
        store.add_items(items, conn=conn)
        store.add_candidates(cands, conn=conn)
        store.add_pairs(pairs, conn=conn)
    return [p.id for p in pairs]
