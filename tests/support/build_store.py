"""The store the build's tests label by hand (SCENARIO: one pair for each rule of RULES), shared
with the disk-fault and ingest tests."""

from __future__ import annotations

import io

from PIL import Image

from curate.benchmark.rules import Rules, Threshold
from curate.model import Adjudication, Annotator, Candidate, ImageRef, Item, Label, Pair

RULES = Rules(
    min_labels=3,
    agreement={"preference": Threshold(0.66)},
    resamples=200,
    name="fixture benchmark",
    license="cc-by-nc-4.0",
    license_note="Fixture data written for the tests.",
)


# pair: (category, task, labels "annotator:pref[:c1c2][!flag]", adjudication)
SCENARIO = {
    "p00": ("vqa", None, ["a:f", "b:f", "c:f"], None),  # kept, unanimous
    "p01": ("vqa", None, ["a:f", "b:f", "c:s"], None),  # kept, 2/3 majority
    "p02": ("vqa", None, ["a:t", "b:t", "c:t"], None),  # tie
    "p03": ("safety", None, ["a:s", "b:s!", "c:s"], None),  # flagged
    "p04": ("safety", None, ["a:s", "b:s"], None),  # min_labels
    "p05": ("safety", None, ["a:f", "b:s", "c:t"], None),  # agreement:preference
    "p06": ("open_generation/correctness_task", "correctness", ["a:f:ci", "b:f:ci", "c:f:ci"], None),  # kept
    "p07": ("open_generation/correctness_task", "correctness", ["a:f:ii", "b:f:ii", "c:f:ci"], None),  # correctness
    "p08": ("vqa", None, ["a:f", "b:f", "c:f"], Adjudication("p08", "lead", exclude=True)),  # adjudicated out
    "p09": ("safety", None, ["a:f"], Adjudication("p09", "lead", preference="second")),  # adjudication overrides
    "p10": ("vqa", None, [], None),  # unlabelled: min_labels
    "p11": ("safety", None, ["a:s", "b:s", "c:s"], None),  # kept; its image is missing from the store
    "p12": ("vqa", None, ["a:s", "b:s", "c:s"], None),  # kept
}


CORR = {"c": "correct", "i": "incorrect"}


def png(color: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(buf, format="PNG")
    return buf.getvalue()


def seed_store(store, at: str | None = None) -> None:
    """``at``: every label's time (a build's raw labels, whose bytes the golden files hold), else now."""
    items, cands, pairs = [], [], []
    stored = [store.images.put(png(c)) for c in ("red", "green", "blue")]
    store.add_images(stored)
    for n, (pid, (cat, task, _, _)) in enumerate(SCENARIO.items()):
        iid = f"item{n:02d}"
        if pid == "p11":
            images = (ImageRef("gone.png", None, "missing", error="image file not found: gone.png"),)
        else:
            s = stored[n % 3]
            images = (ImageRef(f"img{n}.png", s.sha256, "ok", s.width, s.height),)
        items.append(
            Item(
                id=iid,
                prompt=f"Question {n}: what is shown?",
                category=cat,
                images=images,
                reference="a red square" if n == 0 else None,
                source="fixture" if n % 2 else "fixture-b",
            )
        )
        cands += [
            Candidate(id=f"{iid}/m1", item_id=iid, model="model-1", text=f"Answer one to {n}, short."),
            Candidate(id=f"{iid}/m2", item_id=iid, model="model-2", text=f"Answer two to question {n}, longer."),
        ]
        pairs.append(
            Pair(
                id=pid,
                item_id=iid,
                first_id=f"{iid}/m1",
                second_id=f"{iid}/m2",
                origin="test",
                task=task,
                status="selected",
            )
        )
    store.add_items(items)
    store.add_candidates(cands)
    store.add_pairs(
        pairs
        + [
            Pair(
                id="p99", item_id="item00", first_id="item00/m1", second_id="item00/m2", origin="test", status="dropped"
            )
        ]
    )
    for a in "abc":
        store.add_annotator(Annotator(a))
    for pid, (_, _, labels, adj) in SCENARIO.items():
        for spec in labels:
            flag = spec.endswith("!")
            parts = spec.rstrip("!").split(":")
            pref = {"f": "first", "s": "second", "t": "tie"}[parts[1]]
            c1, c2 = (CORR[parts[2][0]], CORR[parts[2][1]]) if len(parts) > 2 else (None, None)
            flagged = "broken_image" if flag else None
            store.save_label(Label(pid, parts[0], c1, c2, pref, flag=flagged, created_at=at, updated_at=at))
        if adj:
            store.set_adjudication(adj)
