"""Responses with images (issue 15, the foundation): a candidate is a sequence of parts,
text and images stored like prompt images; ingest (generic pairs, items, MMRB2), the store on
both backends and its migration, and the build's triplets carry them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from curate.benchmark import build
from curate.benchmark.rules import Rules
from curate.errors import InputError
from curate.formats import triplets
from curate.formats.fields import Fields
from curate.formats.reader import read_rows
from curate.ingest import ingest_items, ingest_pairs
from curate.model import Annotator, Candidate, ImageRef, Item, Label, Part, render_parts
from tests.ingest_helpers import assert_nothing_written, png, write_image
from tests.support import build_markers
from tests.support.images import jpeg


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


MIXED = ["Here is the chart:", {"image": "out/chart_a.png"}, {"text": "Bars are sorted."}]


def generic_rows() -> list[dict]:
    return [
        {
            "id": "g1",
            "prompt": "Draw a bar chart of the sales.",
            "category": "vqa",
            "response_1": MIXED,
            "response_2": [{"image": "out/chart_b.png"}],
            "model_1": "painter-a",
            "model_2": "painter-b",
            "preference": "1",
        },
        {  # plain text beside it: stored exactly as before
            "id": "g2",
            "prompt": "Say hi.",
            "category": "vqa",
            "response_1": "Hi.",
            "response_2": ["Hello", {"text": "there."}],  # parts without an image: plain text
            "preference": "2",
        },
    ]


@pytest.mark.both_backends
def test_generic_pairs_mixed_response_round_trip_through_store_and_build(store, tmp_path):
    write_image(tmp_path / "out/chart_a.png", "red")
    write_image(tmp_path / "out/chart_b.png", "blue")
    path = write_jsonl(tmp_path / "pairs.jsonl", generic_rows())
    r = ingest_pairs(store, path, "generic")
    assert (r.candidates, r.pairs, r.images_stored, r.images_missing) == (4, 2, 2, 0)

    c1 = store.candidates(ids=["g1:painter-a:0"])[0]
    assert [p.kind for p in c1.parts] == ["text", "image", "text"]
    assert c1.parts[0].text == "Here is the chart:" and c1.parts[2].text == "Bars are sorted."
    im = c1.parts[1].image
    assert im is not None and im.status == "ok" and im.source == "out/chart_a.png"
    assert (im.width, im.height) == (40, 30) and store.image_path(im.sha256).is_file()
    assert c1.text == "Here is the chart:\n\n[image: out/chart_a.png]\n\nBars are sorted."
    c2 = store.candidates(ids=["g1:painter-b:0"])[0]
    assert [p.kind for p in c2.parts] == ["image"] and c2.images[0].sha256 != im.sha256

    plain = {c.id: c for c in store.candidates(item_id="g2")}
    assert plain["g2:unknown:0"] == Candidate("g2:unknown:0", "g2", "unknown", "Hi.")
    assert plain["g2:unknown:1"].content == () and plain["g2:unknown:1"].text == "Hello\n\nthere."
    assert plain["g2:unknown:0"].parts == (Part.of_text("Hi."),)

    store.add_annotator(Annotator("ann"))
    store.add_labels([Label("g1", "ann", preference="first"), Label("g2", "ann", preference="second")])
    out = tmp_path / "bench"
    res = build(store, Rules(resamples=10), out)
    assert [t.id for t in res.triplets] == ["g1", "g2"]

    rows = list(read_rows(out / "triplets.jsonl"))
    recs = {}
    for row in rows:
        f = Fields(str(out / "triplets.jsonl"), row.line, row.data or {})
        rec = triplets.parse(f)
        assert rec is not None and not f.problems
        recs[rec.id] = (rec, row.data or {})
    rec, raw = recs["g1"]
    kinds = [p.kind for p in rec.chosen_parts]
    assert kinds == ["text", "image", "text"]
    chosen_image, rejected_image = rec.chosen_parts[1].value, rec.rejected_parts[0].value
    # the texts' markers name the build's files, not the sources the store read them from
    assert rec.chosen == f"Here is the chart:\n\n[image: {chosen_image}]\n\nBars are sorted."
    assert rec.rejected == f"[image: {rejected_image}]"
    assert (markers := build_markers.markers(out)) and not build_markers.unresolved(out)
    assert {name for _, name in markers} == {chosen_image, rejected_image}
    assert len(markers) == 2 * 5  # each in triplets, MMRB, VL-RewardBench, Parquet and HF
    assert chosen_image.startswith("images/") and rejected_image.startswith("images/")
    assert (out / chosen_image).read_bytes() == store.image_path(im.sha256).read_bytes()
    assert (out / rejected_image).read_bytes() == png("blue")
    assert chosen_image in json.loads((out / "build.json").read_text())["files"]
    rec2, raw2 = recs["g2"]
    assert "chosen_parts" not in raw2 and "rejected_parts" not in raw2  # plain text: the rows as before
    assert rec2.chosen_parts == () and rec2.chosen == "Hello\n\nthere."
    from datasets import load_from_disk

    from curate.benchmark.export import PARQUET

    hf = {r["id"]: r for r in load_from_disk(str(out / "hf"))}
    assert [p["text"] for p in hf["g1"]["chosen_parts"]] == ["Here is the chart:", None, "Bars are sorted."]
    assert hf["g1"]["chosen_parts"][1]["image"].size == (40, 30)
    assert hf["g1"]["rejected_parts"][0]["image"].getpixel((20, 15)) == (0, 0, 255)  # the blue chart
    assert hf["g2"]["chosen_parts"] == []  # plain text: its `chosen` is all of it
    assert (out / PARQUET).is_file()
    card = (out / "README.md").read_text()
    assert "Responses with images: 2 of 4 (chosen and rejected), holding 2 images." in card


def test_items_format_accepts_parts_and_the_report_counts_missing_response_images(store, tmp_path):
    write_image(tmp_path / "q.png", "green")
    write_image(tmp_path / "a.png", "red")
    rows = [
        {
            "id": "i1",
            "prompt": "Edit the image: make it red.",
            "images": ["q.png"],
            "category": "vqa",
            "responses": [
                {"model": "editor", "text": [{"image": "a.png"}]},
                {"model": "editor", "text": ["Sorry:", {"image": "gone.png"}]},
                {"model": "chat", "text": "I cannot edit images."},
            ],
        }
    ]
    r = ingest_items(store, write_jsonl(tmp_path / "items.jsonl", rows), allow_missing_images=True)
    assert (r.candidates, r.images_stored, r.images_missing) == (3, 2, 1)
    assert r.missing_examples == ["i1:editor:1: gone.png"]
    cands = {c.id: c for c in store.candidates(item_id="i1")}
    assert cands["i1:editor:0"].images[0].status == "ok"
    gone = cands["i1:editor:1"].images[0]
    assert (gone.status, gone.sha256, gone.source) == ("missing", None, "gone.png") and "not found" in (
        gone.error or ""
    )
    assert cands["i1:chat:0"].content == ()


def test_a_missing_response_image_is_an_error_without_allow_missing_images(store, tmp_path):
    rows = [
        {
            "id": "i1",
            "prompt": "p",
            "category": "vqa",
            "responses": [{"model": "m", "text": ["x", {"image": "gone.png"}]}],
        }
    ]
    with pytest.raises(InputError) as e:
        ingest_items(store, write_jsonl(tmp_path / "items.jsonl", rows))
    (p,) = e.value.problems
    assert (p.line, p.field) == (1, "responses[0].text[1].image") and p.file.endswith("items.jsonl")
    assert "--allow-missing-images" in p.message
    assert_nothing_written(store)


@pytest.mark.parametrize(
    ("part", "field", "words"),
    [
        ({"image": "../secret.png"}, "response_1[1].image", "outside the images root"),
        ({"image": "/etc/passwd"}, "response_1[1].image", "outside the images root"),
        ({"video": "x.mp4"}, "response_1[1]", 'expected a text, {"text": "..."} or {"image": "path"}'),
        ({"text": 3}, "response_1[1]", "expected a text"),
        ({"image": "bad.png"}, "response_1[1].image", "not a readable image"),
    ],
)
def test_bad_image_parts_name_file_line_field(store, tmp_path, part, field, words):
    (tmp_path / "bad.png").write_bytes(b"not an image")
    (tmp_path.parent / "secret.png").write_bytes(png())
    row = {"id": "g1", "prompt": "p", "category": "vqa", "response_1": ["ok", part], "response_2": "b"}
    path = write_jsonl(tmp_path / "pairs.jsonl", [{**row, "id": "g0", "response_1": "fine"}, row])
    with pytest.raises(InputError) as e:
        ingest_pairs(store, path, "generic")
    (p,) = e.value.problems
    assert (p.file, p.line, p.field) == (str(path), 2, field) and words in p.message
    assert_nothing_written(store)


def mmrb2_file(tmp_path: Path, name: str = "interleaved_response_only.json") -> Path:
    pairs = [
        {
            "id": "ie_1",
            "response_a": {
                "model_name": "agent-a",
                "response_content": [["image", "ie_1_0.jpg"], ["text", " A chart of awards.\n\n"]],
            },
            "response_b": {"model_name": "agent-b", "response_content": [["text", "Only words."]]},
            "chosen": "A",
            "human_annotations": [5, 6, 4],
            "prompt_source": "interleavedeval",
            "prompt_metadata": {"id": 1},
        },
        {
            "id": "ie_2",
            "response_a": {"model_name": "agent-a", "response_content": [["image", "ie_2_0.jpg"]]},
            "response_b": {"model_name": "agent-b", "response_content": [["image", "ie_2_1.jpg"]]},
            "chosen": "B",
            "human_annotations": [1, 2, 2],
            "prompt_source": "interleavedeval",
            "prompt_metadata": {"id": 2},
        },
    ]
    path = tmp_path / name
    path.write_text(json.dumps({"pairs": pairs}, indent=1), encoding="utf-8")
    return path


def test_mmrb2_reads_response_images_beside_the_file_and_records_missing_ones(store, tmp_path):
    path = mmrb2_file(tmp_path)
    (tmp_path / "ie_1_0.jpg").write_bytes(jpeg("red"))
    (tmp_path / "ie_2_1.jpg").write_bytes(jpeg("blue"))  # ie_2_0.jpg is not there
    r = ingest_pairs(store, path, "mmrb2")
    assert (r.pairs, r.images_stored, r.images_missing) == (2, 2, 1)
    c = {x.id: x for x in store.candidates()}
    a1 = c["mmrb2:interleaved:ie_1:agent-a:0"]
    assert [(p.kind, p.image.status if p.image else p.text) for p in a1.parts] == [
        ("image", "ok"),
        ("text", " A chart of awards.\n\n"),
    ]
    assert a1.text == "[image: ie_1_0.jpg]\n\nA chart of awards."  # the marker text, as scoring renders it
    assert c["mmrb2:interleaved:ie_1:agent-b:0"] == Candidate(
        "mmrb2:interleaved:ie_1:agent-b:0", "mmrb2:interleaved:ie_1", "agent-b", "Only words."
    )
    missing = c["mmrb2:interleaved:ie_2:agent-a:0"].images[0]
    assert (missing.status, missing.sha256, missing.source) == ("missing", None, "ie_2_0.jpg")
    present = c["mmrb2:interleaved:ie_2:agent-b:0"].images[0]
    assert present.status == "ok" and store.image_path(present.sha256).read_bytes() == jpeg("blue")


def test_mmrb2_response_images_under_another_folder(store, tmp_path):
    data, pics = tmp_path / "data", tmp_path / "pics"
    data.mkdir()
    path = mmrb2_file(data)
    for name, color in (("ie_1_0.jpg", "red"), ("ie_2_0.jpg", "green"), ("ie_2_1.jpg", "blue")):
        pics.mkdir(exist_ok=True)
        (pics / name).write_bytes(jpeg(color))
    r = ingest_pairs(store, path, "mmrb2", images_root=pics)
    assert (r.images_stored, r.images_missing) == (3, 0)


def test_mmrb2_cli_takes_the_response_images_folder(store, tmp_path, capsys, db_url):
    from curate.commands import ingest as ingest_cmd
    from tests.ingest_helpers import run_cli

    pics = tmp_path / "pics"
    pics.mkdir()
    (pics / "ie_1_0.jpg").write_bytes(jpeg("red"))
    path = mmrb2_file(tmp_path)
    code, out, err = run_cli(
        ingest_cmd,
        [
            "pairs",
            str(path),
            "--format",
            "mmrb2",
            "--images-root",
            str(pics),
            "--db",
            db_url,
            "--images",
            str(tmp_path / "store-images"),
        ],
        capsys,
    )
    assert code == 0, err
    assert "(1 distinct file)" in out and "2 image references missing" in out


def test_a_plain_text_store_has_no_parts(store, tmp_path):
    path = write_jsonl(tmp_path / "pairs.jsonl", [generic_rows()[1]])
    ingest_pairs(store, path, "generic")
    with store.read() as c:
        assert c.exec_driver_sql("SELECT count(*) FROM candidate_parts").scalar_one() == 0


@pytest.mark.both_backends
def test_a_version_6_store_gets_the_candidate_parts_table(db_url, tmp_path):
    from sqlalchemy import update

    from curate.store import Store
    from curate.store import migrations as M
    from curate.store import schema as S

    s = Store(db_url, images=tmp_path / "im")
    s.add_items([Item("i", "p", "vqa")])
    s.add_candidates([Candidate("i:m:0", "i", "m", "old text")])
    with s.write() as c:  # as a store written before responses had parts
        c.exec_driver_sql("DROP TABLE candidate_parts")
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="6"))
    s.close()
    s = Store(db_url, images=tmp_path / "im", create=False)  # migrations alone must add the table
    try:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION)
        assert s.candidates() == [Candidate("i:m:0", "i", "m", "old text")]
        stored = s.images.put(png("red"))
        s.add_images([stored])
        parts = (Part.of_text("see"), Part.of_image(ImageRef("a.png", stored.sha256, "ok", 40, 30)))
        s.add_candidates([Candidate("i:m:1", "i", "m", render_parts(parts), sample_index=1, content=parts)])
        assert s.candidates(ids=["i:m:1"])[0].content == parts
    finally:
        s.close()


_PARTS = hs.lists(
    hs.one_of(
        hs.builds(Part.of_text, hs.text(alphabet=hs.characters(blacklist_categories=("Cs",), min_codepoint=1))),
        hs.sampled_from(["ok", "missing"]).map(
            lambda st: Part.of_image(
                ImageRef("x.png", None, "missing", error="gone") if st == "missing" else ImageRef("", None)
            )
        ),
    ),
    max_size=6,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=_PARTS)
def test_parts_come_back_in_order_from_the_store(sqlite_store, parts):
    s = sqlite_store
    stored = s.images.put(png("red"))
    s.add_images([stored])
    ok = ImageRef("y.png", stored.sha256, "ok", 40, 30)
    content = tuple(p if p.image is None or p.image.status == "missing" else Part.of_image(ok) for p in parts)
    if not s.get_item("i"):
        s.add_items([Item("i", "p", "vqa")])
    n = len(s.candidates())
    s.add_candidates([Candidate(f"i:m:{n}", "i", "m", render_parts(content), sample_index=n, content=content)])
    got = s.candidates(ids=[f"i:m:{n}"])[0]
    assert got.content == content and got.parts == (content or (Part.of_text(got.text),))


def test_a_response_image_missing_from_the_store_stays_in_place_in_the_build(sqlite_store, tmp_path):
    store = sqlite_store
    write_image(tmp_path / "out/b.png", "blue")
    row = {
        "id": "g1",
        "prompt": "Edit: make it blue.",
        "category": "vqa",
        "response_1": [{"image": "out/a.png"}, "(the edit)"],  # not there: recorded as missing
        "response_2": [{"image": "out/b.png"}],
        "preference": "2",
    }
    r = ingest_pairs(store, write_jsonl(tmp_path / "pairs.jsonl", [row]), "generic")
    assert (r.images_stored, r.images_missing) == (1, 1)
    store.add_annotator(Annotator("ann"))
    store.add_labels([Label("g1", "ann", preference="second")])
    out = tmp_path / "bench"
    (t,) = build(store, Rules(resamples=10), out).triplets
    assert t.rejected_parts == (Part.of_image("out/a.png", missing=True), Part.of_text("(the edit)"))
    # no file to name: the text says the image is not there, as a judge reads it
    assert t.rejected == "[image not available: out/a.png]\n\n(the edit)"
    assert t.chosen == f"[image: {t.chosen_parts[0].value}]" and not build_markers.unresolved(out)
    (raw,) = [json.loads(x) for x in (out / "triplets.jsonl").read_text().splitlines()]
    assert raw["rejected_parts"] == [{"image": None, "missing": "out/a.png"}, {"text": "(the edit)"}]
    assert (out / raw["chosen_parts"][0]["image"]).read_bytes() == png("blue")
    assert "holding 2 images, 1 of them missing from the store." in (out / "README.md").read_text()
    from datasets import load_from_disk

    (hf,) = load_from_disk(str(out / "hf"))
    assert hf["rejected_parts"][0] == {"text": None, "image": None, "missing": "out/a.png"}


def test_generic_pairs_from_parquet_take_parts_as_structs(store, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    write_image(tmp_path / "a.png", "red")
    part = pa.struct([("text", pa.string()), ("image", pa.string())])
    table = pa.table(
        {
            "id": ["g1"],
            "prompt": ["Draw it."],
            "category": ["vqa"],
            "response_1": pa.array(
                [[{"text": "Here:", "image": None}, {"text": None, "image": "a.png"}]], pa.list_(part)
            ),
            "response_2": pa.array([[{"text": "I cannot draw.", "image": None}]], pa.list_(part)),
        }
    )
    pq.write_table(table, tmp_path / "pairs.parquet")
    r = ingest_pairs(store, tmp_path / "pairs.parquet", "generic")
    assert (r.images_stored, r.images_missing) == (1, 0)
    by_model = {c.id: c for c in store.candidates()}
    assert [p.kind for p in by_model["g1:unknown:0"].parts] == ["text", "image"]
    assert by_model["g1:unknown:1"].content == () and by_model["g1:unknown:1"].text == "I cannot draw."


@pytest.mark.parametrize("rule", ["keep", "drop"])
def test_missing_images_rule_covers_response_images(sqlite_store, tmp_path, rule):
    """``missing_images = "drop"`` removes a pair whose chosen or rejected response has an
    image missing from the store (its own rule, after the prompt's); "keep" keeps it with a
    placeholder part."""
    store = sqlite_store
    write_image(tmp_path / "ok.png", "red")
    write_image(tmp_path / "deleted.png", "green")
    rows = [
        {"id": "chosen-gone", "response_1": [{"image": "gone.png"}], "response_2": "Words."},
        {"id": "rejected-gone", "response_1": "Words.", "response_2": [{"image": "gone.png"}, "after"]},
        {"id": "file-deleted", "response_1": [{"image": "deleted.png"}], "response_2": "Words."},
        {"id": "prompt-gone", "images": ["gone.png"], "response_1": [{"image": "ok.png"}], "response_2": "x"},
        {"id": "fine", "response_1": [{"image": "ok.png"}], "response_2": "Words."},
    ]
    for r in rows:
        r.update(prompt="Draw it.", category="t2i")
    r = ingest_pairs(store, write_jsonl(tmp_path / "pairs.jsonl", rows), "generic")
    assert r.images_missing == 3
    (deleted,) = store.candidates(ids=["file-deleted:unknown:0"])[0].images
    store.image_path(deleted.sha256).unlink()  # in the store's table, its file gone
    store.add_annotator(Annotator("ann"))
    store.add_labels([Label(row["id"], "ann", preference="first") for row in rows])
    res = build(store, Rules(resamples=10, missing_images=rule), tmp_path / "bench")
    decided = {d.pair.id: d for d in res.result.decisions}
    assert {pid: d.missing_response_images for pid, d in decided.items()} == {
        "chosen-gone": 1,
        "rejected-gone": 1,
        "file-deleted": 1,
        "prompt-gone": 0,
        "fine": 0,
    }
    card = (tmp_path / "bench" / "README.md").read_text()
    manifest = json.loads((tmp_path / "bench" / "build.json").read_text())
    if rule == "drop":
        assert [t.id for t in res.triplets] == ["fine"]
        assert res.result.removed()["missing_images"] == {"t2i": 1}
        assert res.result.removed()["missing_response_images"] == {"t2i": 3}
        assert manifest["removed"]["missing_response_images"] == {"t2i": 3}
        assert "| missing_response_images | 3 | 3 |" in card
    else:
        assert "missing_response_images" not in res.result.removed()
        by_id = {t.id: t for t in res.triplets}
        assert len(by_id) == 5
        assert by_id["chosen-gone"].chosen_parts == (Part.of_image("gone.png", missing=True),)
        assert by_id["file-deleted"].chosen_parts == (Part.of_image("deleted.png", missing=True),)
        assert by_id["rejected-gone"].rejected_parts[0] == Part.of_image("gone.png", missing=True)
        assert "3 of them missing from the store" in card
