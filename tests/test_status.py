"""`mmrb status`: counts per stage and category, missing images, labels per pair."""

from __future__ import annotations

import json

from curate.commands import status as status_cmd
from curate.ingest import ingest_items, ingest_pairs
from curate.model import Annotator, Label, Pair
from curate.status import collect, render
from tests.ingest_helpers import fixture_copy, run_cli, write_image


def _fill(store, tmp_path):
    write_image(tmp_path / "img/shapes.png")
    write_image(tmp_path / "img/sign.png", "blue")
    ingest_items(store, fixture_copy("items.jsonl", tmp_path))
    ingest_pairs(store, fixture_copy("mmrb2_t2i.json", tmp_path), "mmrb2")
    ingest_pairs(store, fixture_copy("vlrewardbench_text.jsonl", tmp_path), "vlrewardbench-text")
    store.add_pairs([Pair("sel", "it-1", "it-1:m1:0", "it-1:m2:0", "pair:test", status="selected")])
    store.add_annotator(Annotator("ann"))
    store.save_label(Label("sel", "ann", preference="first"))
    store.save_label(Label("mmrb2:t2i:bench_1_a_b", "ann", preference="tie", status="draft"))


def test_status_counts(store, tmp_path):
    _fill(store, tmp_path)
    st = collect(store)
    assert st.stages["items"] == 3 + 2 + 3 and st.stages["pairs"] == 2 + 3 + 1
    assert st.stages["labels"] == 6 + 2 and st.labels_by_status == {"submitted": 7, "draft": 1}
    assert st.pairs_by_status == {"candidate": 5, "selected": 1}
    assert st.categories["vqa"].items == 1 and st.categories["vqa"].selected == 1 and st.categories["vqa"].labels == 1
    assert st.categories["t2i"].labels == 6 and st.categories["general"].pairs == 2
    assert st.images == {"ok": 4, "missing": 3}
    assert st.response_images == {"missing": 4}  # MMRB2's t2i responses are images, not shipped
    assert {e["item"] for e in st.missing_examples} == {i.id for i in store.items() if i.source == "vl-rewardbench"}
    # 3 vlrb pairs with none; the selected pair with 1; the two MMRB2 pairs with 3 (a draft does not count)
    assert st.labels_per_pair == {0: 3, 1: 1, 3: 2}
    assert st.label_sources == {"app": 2, "import:mmrb2": 6}
    text = render(st)
    assert "missing: 3" in text and "3 labels: 2 pairs" in text and "t2i" in text
    assert "response images: 4 references (missing 4)" in text


def test_status_of_an_empty_store(store):
    st = collect(store)
    assert st.stages["items"] == 0 and st.categories == {} and st.labels_per_pair == {}
    assert st.response_images == {} and "response images" not in render(st)
    assert "items" in render(st)


def test_status_cli_json(sqlite_store, tmp_path, capsys):
    _fill(sqlite_store, tmp_path)
    args = ["--db", sqlite_store.db, "--images", str(sqlite_store.images.root)]
    rc, out, _ = run_cli(status_cmd, args + ["--json"], capsys)
    data = json.loads(out)
    assert rc == 0 and data["stages"]["pairs"] == 6 and data["labels_per_pair"] == {"0": 3, "1": 1, "3": 2}
    rc, out, _ = run_cli(status_cmd, args, capsys)
    assert rc == 0 and "per category:" in out and "submitted labels per pair:" in out
