"""The ids an import has taken (curate/ingest/keys.py): the same answers whether its keys are
still in memory or have moved out, and an import that finds a repeated or look-alike
id across the move."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from curate.errors import InputError
from curate.ingest import ingest_pairs, keys, rows
from curate.ingest.keys import KeyRegistry, SeenKey
from tests.ingest_helpers import assert_nothing_written


def _entries(keys: list[str], line: int) -> list[tuple[str, int, bytes | None, str]]:
    return [(k, line, k.encode()[:2], f"id-{k}") for k in keys]


def test_a_claim_with_a_taken_key_registers_nothing():
    reg = KeyRegistry(memory_keys=2)
    assert reg.claim(_entries(["a", "b"], 1))  # both move out: the bound is reached
    assert reg.claim(_entries(["c"], 2))
    assert not reg.claim(_entries(["d", "a"], 3))  # a moved key
    assert not reg.claim(_entries(["e", "c"], 4))  # a key still in memory
    assert reg.seen(["a", "c", "d", "e"]) == {
        "a": SeenKey(1, b"a", "id-a"),
        "c": SeenKey(2, b"c", "id-c"),
    }
    reg.close()


def _few_hashes(key: str) -> int:
    """A hash that gives many keys the same value, as a real hash does for a few."""
    return len(key) % 2


@settings(max_examples=60, deadline=None)
@given(batches=hs.lists(hs.lists(hs.sampled_from("abcdefghijklmnop"), max_size=4, unique=True), max_size=12))
def test_keys_moved_out_give_the_answers_of_keys_in_memory(batches):
    """Whatever the bound, the same claims succeed and ``seen`` finds the same keys where
    they were first registered; a refused claim is registered key by key afterwards, as the
    importer does with the keys it accepts. Also when the keys' hashes collide."""
    for h in (hash, _few_hashes):
        with mock.patch.object(keys, "_hash", h):
            small, large = KeyRegistry(memory_keys=1), KeyRegistry(memory_keys=10_000)
            for line, batch in enumerate(batches, 1):
                entries = _entries(batch, line)
                claimed = small.claim(entries)
                assert claimed == large.claim(entries)
                assert small.seen(batch + ["zz"]) == large.seen(batch + ["zz"])
                if not claimed:
                    new = [e for e in entries if e[0] not in large.seen(batch)]
                    small.register(new)
                    large.register(new)
            small.close()
            large.close()


def test_keys_whose_hashes_collide_are_told_apart():
    """Keys moved out of memory are found by their hash, then compared: one key's hash equal
    to a moved key's does not make it taken."""
    with mock.patch.object(keys, "_hash", len):  # every one-letter key has the same hash
        reg = KeyRegistry(memory_keys=2)
        assert reg.claim(_entries(["a", "b"], 1)) and reg.claim(_entries(["c", "d"], 2))  # two moves
        assert reg.claim(_entries(["e"], 3))
        assert not reg.claim(_entries(["f", "c"], 4))
        assert reg.seen(["a", "d", "e", "f", "zz"]) == {
            "a": SeenKey(1, b"a", "id-a"),
            "d": SeenKey(2, b"d", "id-d"),
            "e": SeenKey(3, b"e", "id-e"),
        }
        reg.close()


def _pairs_file(path, ids: list[str]):
    """Generic pairs: the item and pair ids are the record's id, as written."""
    rows = [{"id": i, "prompt": "q", "category": "general", "response_1": "good", "response_2": "bad"} for i in ids]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.usefixtures("both_readings")
@pytest.mark.parametrize(
    "later, why",
    [("p3", "duplicate item id 'p3' (first at line 4)"), ("pO", "item id 'pO' looks like item id 'p0' at line 1")],
)
def test_an_import_finds_an_id_taken_before_the_keys_moved(tmp_path, store, monkeypatch, later, why):
    monkeypatch.setattr(keys, "MEMORY_KEYS", 8)  # two rows' keys: most have moved by row 40
    monkeypatch.setattr(rows, "BATCH", 5)  # and row 41 is not in the batch of the row it repeats
    ids = [f"p{n}" for n in range(50)]
    ids[40] = later  # taken at line 4, or looking like the id of line 1 (O and 0 look alike)
    path = _pairs_file(tmp_path / "pairs.jsonl", ids)
    with pytest.raises(InputError) as e:
        ingest_pairs(store, path, format="generic")
    assert {(p.line, p.field) for p in e.value.problems} == {(41, "id")}  # its item, responses, pair
    assert why in [p.message for p in e.value.problems][0]
    assert_nothing_written(store)
