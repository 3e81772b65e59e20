"""The bundled sample in data/sample/: shape, size, and that it imports as documented."""

from __future__ import annotations

import collections
import importlib.util
import json
from pathlib import Path

from annotate.demo import DELIBERATE_MISSING_IMAGE
from curate.ingest import ingest_items
from curate.model import MMRB2_CATEGORIES, MMRB_CATEGORIES

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
MISSING = "images/street-scene.png"  # deliberately absent (documented in data/make_sample.py)


def _rows() -> list[dict]:
    return [json.loads(line) for line in (SAMPLE / "items.jsonl").read_text().splitlines()]


def _response_images(row: dict) -> list[str]:
    return [p["image"] for r in row["responses"] if isinstance(r["text"], list) for p in r["text"] if "image" in p]


IMAGE_ITEMS = {"t2i-01": "t2i", "edit-01": "edit", "il-01": "interleaved"}  # responses that are images


def test_sample_shape():
    rows = _rows()
    assert len(rows) >= 24 and len({r["id"] for r in rows}) == len(rows)
    per_cat = collections.Counter(r["category"] for r in rows if r["id"] not in IMAGE_ITEMS)
    assert set(per_cat) == set(MMRB_CATEGORIES) and min(per_cat.values()) >= 3
    assert {r["id"]: r["category"] for r in rows if _response_images(r)} == IMAGE_ITEMS
    assert set(IMAGE_ITEMS.values()) <= set(MMRB2_CATEGORIES)
    for r in rows:
        extra = {"metadata"} if r["id"] == "vqa-04" else set()  # the deliberately missing image says so
        assert set(r) == {"id", "prompt", "images", "reference", "category", "source", "responses"} | extra
        assert r["source"] == "mmrb-studio-sample"
        assert 3 <= len(r["responses"]) <= 4
        assert len({x["model"] for x in r["responses"]}) == len(r["responses"])
        prefix = "omni-" if r["id"] in IMAGE_ITEMS else "vlm-"
        assert all(x["model"].startswith(prefix) and len(x["text"]) > 0 for x in r["responses"])
    assert sum(r["reference"] is not None for r in rows) >= 12
    texts = [x["text"] for r in rows for x in r["responses"] if isinstance(x["text"], str)]
    assert any("<script>" in t for t in texts)
    assert any("\n- " in t or "\n1. " in t for t in texts)  # Markdown lists


def test_images_exist_except_the_documented_missing_one():
    refs = {img for r in _rows() for img in r["images"] + _response_images(r)}
    missing = sorted(i for i in refs if not (SAMPLE / i).exists())
    assert missing == [MISSING]
    on_disk = {f"images/{p.name}" for p in (SAMPLE / "images").iterdir()}
    assert on_disk == refs - {MISSING}  # no stray files
    assert "china" not in str(on_disk) and {"images/summer-palace.jpg", "images/dahlia.jpg"} <= on_disk


def test_sample_is_small():
    total = sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file())
    assert total < 3_000_000


def test_guidelines_cover_the_essentials():
    text = (SAMPLE / "guidelines.md").read_text()
    for words in ("correct", "incorrect", "unsure", "tie", "rationale", "flag", "broken image", "reference answer"):
        assert words in text, words


def test_sample_imports_in_one_go(store):
    report = ingest_items(store, SAMPLE / "items.jsonl", allow_missing_images=True)
    rows = _rows()
    assert report.items == len(rows) == store.counts().items
    assert report.candidates == sum(len(r["responses"]) for r in rows) == store.counts().candidates
    assert report.images_missing == 1
    # the responses that are images come in as parts, every image there
    for item_id in IMAGE_ITEMS:
        cands = store.candidates(item_id=item_id)
        assert sum(bool(c.images) for c in cands) >= 2, item_id
        assert all(im.status == "ok" and store.image_path(im.sha256).is_file() for c in cands for im in c.images)
    (edit_right,) = store.candidates(ids=["edit-01:omni-alpha:0"])
    assert [p.kind for p in edit_right.parts] == ["image"]
    (steps,) = store.candidates(ids=["il-01:omni-alpha:0"])
    assert [p.kind for p in steps.parts] == ["text", "image", "text", "image"]
    c = store.candidates(item_id="vqa-01")
    assert [x.id for x in c] == ["vqa-01:vlm-alpha:0", "vqa-01:vlm-beta:0", "vqa-01:vlm-delta:0", "vqa-01:vlm-gamma:0"]
    assert all(x.params == {} and x.sample_index == 0 for x in c)
    assert store.get_item("vqa-04").images[0].status == "missing"
    flagged = [i.id for i in store.items() if i.metadata.get(DELIBERATE_MISSING_IMAGE)]
    assert flagged == ["vqa-04"]  # the one the app's placeholder names as deliberate


def test_generator_reproduces_the_committed_items(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("make_sample", SAMPLE.parent / "make_sample.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "OUT", tmp_path)
    monkeypatch.setattr(mod, "IMAGES", tmp_path / "images")
    mod.main()
    assert (tmp_path / "items.jsonl").read_text() == (SAMPLE / "items.jsonl").read_text()
    assert sorted(p.name for p in (tmp_path / "images").iterdir()) == sorted(
        p.name for p in (SAMPLE / "images").iterdir()
    )
    for p in sorted((SAMPLE / "images").iterdir()):  # byte for byte: the drawings are deterministic
        assert (tmp_path / "images" / p.name).read_bytes() == p.read_bytes(), p.name
