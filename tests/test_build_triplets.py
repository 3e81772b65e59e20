"""make_triplets over its typed input (curate/benchmark: BuildInputs), without the rules around it."""

from __future__ import annotations

import io

from PIL import Image

from curate.benchmark import BuildInputs, make_triplets
from curate.benchmark.filter import BuildDecision
from curate.model import Candidate, ImageRef, Item, Pair


def png(color: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(buf, format="PNG")
    return buf.getvalue()


def test_make_triplets_orients_by_the_decision_and_keeps_only_stored_images(sqlite_store):
    img = sqlite_store.images.put(png("red"))
    sqlite_store.add_images([img])
    gone = "f" * 64
    item = Item("i1", "q?", "vqa", images=(ImageRef("a.png", img.sha256), ImageRef("b.png", gone)))
    cands = {"c1": Candidate("c1", "i1", "m1", "one"), "c2": Candidate("c2", "i1", "m2", "two")}
    kept = [
        BuildDecision(Pair(pid, "i1", "c1", "c2", "test"), "vqa", None, chosen=chosen, n_labels=3, agreement=2 / 3)
        for pid, chosen in (("p2", "first"), ("p1", "second"))
    ]
    triplets, sources, missing = make_triplets(
        sqlite_store, kept, BuildInputs({"i1": item}, cands, {img.sha256: True, gone: False})
    )
    assert [(t.id, t.chosen, t.rejected, t.chosen_model, t.rejected_model) for t in triplets] == [
        ("p1", "two", "one", "m2", "m1"),
        ("p2", "one", "two", "m1", "m2"),
    ]
    rel = f"images/{img.sha256}.png"
    assert all(t.images == (rel,) for t in triplets) and list(sources) == [rel]
    assert missing == ["p1", "p2"]  # each lost its second image
    assert triplets[0].agreement == round(2 / 3, 6) and triplets[0].n_labels == 3


def test_make_triplets_of_nothing(sqlite_store):
    assert make_triplets(sqlite_store, [], BuildInputs({}, {}, {})) == ([], {}, [])
