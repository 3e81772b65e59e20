"""The HF export's streamed fingerprint (curate.formats.triplets.streamed_fingerprint) is
datasets' own: the same dataset name, so the saved dataset's state.json keeps its bytes."""

from __future__ import annotations

import pyarrow as pa
import pytest
from datasets import Dataset, Features, Image, List, Value
from datasets.fingerprint import Hasher
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.formats.triplets import _HashingFile, _pickler, _streamed_hash, streamed_fingerprint

FEATURES = Features({"id": Value("string"), "text": Value("string"), "images": List(Image())})


def _dataset(ids: list[str], texts: list[str], images: list[bytes]) -> Dataset:
    arrays = {
        "id": pa.array(ids, type=pa.string()),
        "text": pa.array(texts, type=pa.string()),
        "images": pa.array(
            [[{"bytes": b, "path": f"images/{n}.png"}] for n, b in enumerate(images)],
            type=FEATURES.arrow_schema.field("images").type,
        ),
    }
    return Dataset.from_dict(arrays, features=FEATURES, split="test")


rows = st.lists(st.tuples(st.text(max_size=20), st.text(max_size=50), st.binary(max_size=30)), max_size=6)


@settings(max_examples=25, deadline=None)
@given(rows, st.integers(0, 3))
def test_streamed_fingerprint_is_datasets_own(data, big):
    ids, texts, images = (list(c) for c in zip(*data, strict=True)) if data else ([], [], [])
    # past pickle's 64 KiB frames too: large buffers are written to the file apart
    texts = [*texts, "x" * (big * 70_000)]
    ids, images = [*ids, "big"], [*images, b"\x89PNG" * big * 20_000]
    own = _dataset(ids, texts, images)._fingerprint
    with streamed_fingerprint():
        streamed = _dataset(ids, texts, images)._fingerprint
    assert streamed == own


def test_the_hasher_is_datasets_own_again_after():
    before = Hasher.__dict__["hash"]
    with streamed_fingerprint():
        assert Hasher.__dict__["hash"] is not before
    assert Hasher.__dict__["hash"] is before


def test_a_big_buffer_is_not_copied_into_the_pickle_memo():
    # a buffer pickles as a copy of itself (two for a mutable one); datasets' pickler keeps every
    # copy in its memo until the whole table is written: the table twice over at the export's peak
    table = _dataset(["a", "b"], ["x" * 70_000, "y"], [b"\x89PNG", b"GIF8"]).data.table
    pickler = _pickler()(_HashingFile(), recurse=True)
    pickler.dump(table)
    kept = [obj for _, obj in pickler.memo.values() if isinstance(obj, (bytes, bytearray)) and len(obj) >= 70_000]
    assert kept == []


# each size class of pickle's bytes opcodes (short, within a frame, a frame of its own), and none
@pytest.mark.parametrize("n", [0, 1, 255, 256, 65_535, 65_536, 200_000])
def test_a_buffer_hashes_as_datasets_pickles_it(n):
    table = pa.table({"text": pa.array(["x" * n, ""], type=pa.string()), "data": pa.array([b"y" * n, None])})
    assert _streamed_hash(table) == Hasher.hash(table)
    assert _streamed_hash(pa.py_buffer(b"z" * n)) == Hasher.hash(pa.py_buffer(b"z" * n))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), st.text(max_size=8)), max_size=5), min_size=1, max_size=4), st.booleans())
def test_a_table_in_chunks_hashes_as_datasets_pickles_it(chunks, big):
    # datasets pickles each column combined into one array (whatever its chunks): so does the
    # streamed hash, a column at a time; nulls, empty chunks and a big column too
    texts = pa.chunked_array([pa.array(c, type=pa.string()) for c in chunks], type=pa.string())
    n = len(texts)
    table = pa.table({"text": texts, "n": pa.array(range(n), type=pa.int32()), "big": ["z" * (70_000 * big)] * n})
    assert _streamed_hash(table) == Hasher.hash(table)


def test_no_combined_column_is_kept_while_the_table_is_pickled():
    table = pa.table({"a": pa.chunked_array([["x" * 70_000], ["y"]]), "b": ["z", "w"]})
    pickler = _pickler()(_HashingFile(), recurse=True)
    pickler.dump(table)
    kept = [obj for _, obj in pickler.memo.values() if isinstance(obj, (pa.Array, pa.Buffer))]
    assert kept == []
    assert any(obj is table for _, obj in pickler.memo.values())  # memoized as datasets memoizes it
