"""The HF export's streamed fingerprint (curate.formats.triplets.streamed_fingerprint) is
datasets' own: the same dataset name, so the saved dataset's state.json keeps its bytes."""

from __future__ import annotations

import pyarrow as pa
from datasets import Dataset, Features, Image, List, Value
from datasets.fingerprint import Hasher
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.formats.triplets import _HashingFile, _pickler, streamed_fingerprint

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


def test_the_buffers_copies_are_not_kept_while_the_table_is_pickled():
    # a buffer pickles as two copies of itself; datasets' pickler keeps every one in its memo
    # until the whole table is written (a copy of the table twice over at the export's peak)
    table = _dataset(["a", "b"], ["x" * 70_000, "y"], [b"\x89PNG", b"GIF8"]).data.table
    pickler = _pickler()(_HashingFile(), recurse=True)
    pickler.dump(table)
    # the buffers' copies: a bytearray each, and the big text's bytes (the schema's metadata stays)
    copies = [obj for _, obj in pickler.memo.values() if isinstance(obj, (bytes, bytearray))]
    kept = [obj for obj in copies if isinstance(obj, bytearray) or b"x" * 70_000 in obj]
    assert kept == []
    assert len(pickler.memo) > 0  # numbered all the same: the placeholders hold the memo's places
