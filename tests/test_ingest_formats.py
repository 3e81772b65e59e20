"""`mmrb ingest pairs`: each benchmark format from literal fixtures (both backends) and
from the real files in ../shared/data where present."""

from __future__ import annotations

import argparse
import collections
import json

import pytest

from curate.commands import ingest as ingest_cmd
from curate.errors import InputError
from curate.ingest import ingest_pairs
from tests.ingest_helpers import (
    assert_nothing_written,
    fixture_copy,
    png,
    run_cli,
    write_image,
)
from tests.support.data import shared


def test_mmrb(store, tmp_path):
    path = fixture_copy("mmrb.jsonl", tmp_path, {"images/apples.png": "red", "images/person.png": "blue"})
    r = ingest_pairs(store, path, "mmrb")
    assert (r.items, r.candidates, r.pairs, r.images_stored, r.images_missing) == (3, 6, 3, 2, 0)
    p = store.get_pair("mmrb:vqa_101")
    assert (p.origin, p.known_preference, p.task) == ("import:mmrb", "first", None)
    first, second = (c.text for c in store.candidates(ids=[p.first_id, p.second_id]))
    assert {first, second} == {"There are three apples.", "There are five apples on the table."}
    assert store.candidates(ids=[p.first_id])[0].text == "There are three apples."  # Output1 stays first
    assert store.get_pair("mmrb:pairs_7").known_preference == "second"
    assert store.get_pair("mmrb:wildvision_12").task == "preference"
    item = store.get_item("mmrb:wildvision_12")
    assert item.category == "open_generation/preference_task" and item.metadata["Meta"] == {"note": "kept"}


def test_vlrewardbench_original_keys_items_on_id_query_and_responses(store, tmp_path):
    path = fixture_copy("vlrewardbench.jsonl", tmp_path, {"img/square.png": "green"})
    r = ingest_pairs(store, path, "vlrewardbench")
    assert (r.items, r.pairs, r.images_stored, r.images_missing) == (3, 3, 1, 1)
    items = store.items()
    assert sorted(i.metadata["vlrb_id"] for i in items) == ["RLAIF-V-5", "mathverse_1", "mathverse_1"]
    assert {i.category for i in items} == {"reasoning", "hallucination"}
    by_vlrb = {(i.metadata["vlrb_id"], i.prompt): i for i in items}
    dog = by_vlrb[("RLAIF-V-5", "Describe the image.")]
    pair = store.pairs(item_id=dog.id)[0]
    assert pair.known_preference == "second"  # human_ranking [1, 0]
    assert [c.model for c in store.candidates(item_id=dog.id)] == ["model-y", "model-z"]
    perim = by_vlrb[("mathverse_1", "What is the perimeter of the square?")]
    assert sorted(c.id[len(perim.id) + 1 :] for c in store.candidates(item_id=perim.id)) == ["model-x:0", "model-x:1"]


def test_vlrewardbench_text_copy(store, tmp_path):
    path = fixture_copy("vlrewardbench_text.jsonl", tmp_path)
    r = ingest_pairs(store, path, "vlrewardbench-text")
    assert (r.items, r.pairs, r.images_missing) == (3, 3, 3)
    pairs = store.pairs()
    for p in pairs:
        item = store.get_item(p.item_id)
        first = store.candidates(ids=[p.first_id])[0]
        chosen_first = first.text in ("The sign says STOP.", "Red.", "A cat asleep on a sofa.")
        assert p.known_preference == ("first" if chosen_first else "second")
        assert item.images[0].status == "missing"
        assert "chosen_reason" in item.metadata
    assert {store.get_item(p.item_id).category for p in pairs} == {"general", "hallucination"}


def test_mm_rlhf_groups_rows_of_one_id(store, tmp_path):
    path = fixture_copy("mm_rlhf.jsonl", tmp_path)
    r = ingest_pairs(store, path, "mm-rlhf")
    assert (r.items, r.candidates, r.pairs) == (2, 5, 3)
    assert [p.id for p in store.pairs(item_id="mm-rlhf:q1_100")] == ["mm-rlhf:q1_100:0", "mm-rlhf:q1_100:1"]
    q = store.get_item("mm-rlhf:q1_100")
    assert q.category == "mcq" and q.images[0].status == "missing"
    v = store.get_item("mm-rlhf:v9_1")
    assert v.category == "video" and v.images == () and v.metadata["video"] == "video/v9"
    # the shared chosen response is one candidate used by both pairs
    p0, p1 = store.pairs(item_id="mm-rlhf:q1_100")

    def chosen(p):
        return p.first_id if p.known_preference == "first" else p.second_id

    assert chosen(p0) == chosen(p1)


def test_the_earlier_spelling_of_a_format_is_its_alias(sqlite_store, tmp_path, capsys):
    # one spelling (mm-rlhf) in the CLI, the files and the docs; the module's (mm_rlhf) still reads
    r = ingest_pairs(sqlite_store, fixture_copy("mm_rlhf.jsonl", tmp_path), "mm_rlhf")
    assert r.format == "mm-rlhf" and "(mm-rlhf)" in r.summary()
    assert {p.origin for p in sqlite_store.pairs()} == {"import:mm-rlhf"}
    p = argparse.ArgumentParser()
    ingest_cmd.add_arguments(p)
    assert p.parse_args(["pairs", "f.jsonl", "--format", "mm_rlhf"]).format == "mm-rlhf"
    with pytest.raises(SystemExit):
        p.parse_args(["pairs", "--help"])
    shown = capsys.readouterr().out
    assert "mm-rlhf" in shown and "mm_rlhf" not in shown  # --help offers the one spelling


def test_mmrb2_scores_become_labels(store, tmp_path):
    path = fixture_copy("mmrb2_t2i.json", tmp_path)
    r = ingest_pairs(store, path, "mmrb2")
    assert (r.items, r.pairs, r.labels) == (2, 2, 6)
    p = store.get_pair("mmrb2:t2i:bench_1_a_b")
    assert p.known_preference == "first" and p.origin == "import:mmrb2"
    labels = store.labels(pair_id=p.id)
    assert [(lb.annotator, lb.preference, lb.ratings["score"]) for lb in labels] == [
        ("mmrb2-rater-1", "first", 5),
        ("mmrb2-rater-2", "first", 4),
        ("mmrb2-rater-3", "second", 2),
    ]
    assert all(lb.source == "import:mmrb2" for lb in labels)
    assert store.get_annotator("mmrb2-rater-1").active is False
    # same model on both sides: two samples of one model
    p2 = store.get_pair("mmrb2:t2i:bench_2_a_a")
    assert (p2.first_id, p2.second_id) == ("mmrb2:t2i:bench_2_a_a:imagen4:0", "mmrb2:t2i:bench_2_a_a:imagen4:1")
    assert store.candidates(ids=[p2.first_id])[0].text == "[image: bench_2_a_a_0.jpg]"
    assert store.get_item(p2.item_id).metadata["prompt_metadata"] == {"id": "2", "category": "Style"}


def test_mmrb2_reasoning_grades(store, tmp_path):
    path = fixture_copy("mmrb2_reasoning.json", tmp_path)
    r = ingest_pairs(store, path, "mmrb2")
    assert (r.items, r.labels) == (2, 6)
    l1 = store.labels(pair_id="mmrb2:reasoning:blink_1")
    assert [lb.preference for lb in l1] == ["first", "tie", "first"]
    assert l1[0].ratings == {"grade_first": "A", "grade_second": "C"}
    l2 = store.labels(pair_id="mmrb2:reasoning:blink_2")
    assert [lb.preference for lb in l2] == [None, None, None] and l2[1].ratings == {"grade_second": "B"}
    text = store.candidates(ids=["mmrb2:reasoning:blink_1:agent-a:0"])[0].text
    assert text == "Look at the shadow\n\n[image: blink_1_0.jpg]\n\n: the answer is (B)."


def test_generic_csv(store, tmp_path):
    path = fixture_copy("generic.csv", tmp_path, {"shapes.png": "red"})
    r = ingest_pairs(store, path, "generic")
    assert (r.items, r.pairs, r.images_stored) == (2, 2, 1)
    g1 = store.get_pair("g1")
    assert (g1.known_preference, g1.task, g1.origin) == ("first", "correctness", "import:generic")
    assert store.candidates(ids=[g1.second_id])[0].text == "There are\n6 circles."
    assert store.get_item("g1").metadata == {"difficulty": "easy"} and store.get_item("g1").reference == "5"
    assert store.get_pair("g2").known_preference == "tie"


# -- bad input ------------------------------------------------------------------------
def _bad(store, tmp_path, name, fmt, text, line, field, words, images=None):
    path = tmp_path / name
    path.write_text(text)
    for rel, data in (images or {}).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    with pytest.raises(InputError) as e:
        ingest_pairs(store, path, fmt)
    msg = str(e.value)
    where = f"{path}:{line}" + (f" field '{field}'" if field else ":")
    assert where in msg, msg
    for w in words:
        assert w in msg, msg
    assert_nothing_written(store)


MMRB_ROW = {
    "ID": "vqa_1",
    "Text": "q",
    "Image": "images/a.png",
    "Output1": "x",
    "Output2": "y",
    "Better": "Output1",
    "Category": "vqa",
}


def _jsonl(*rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def test_mmrb_bad_label(bad_store, tmp_path):
    _bad(
        bad_store,
        tmp_path,
        "m.jsonl",
        "mmrb",
        _jsonl(MMRB_ROW, dict(MMRB_ROW, ID="vqa_2", Better="A")),
        2,
        "Better",
        ["expected 'Output1' or 'Output2'"],
    )


def test_mmrb_unknown_category(bad_store, tmp_path):
    _bad(
        bad_store,
        tmp_path,
        "m.jsonl",
        "mmrb",
        _jsonl(dict(MMRB_ROW, Category="hallucination")),
        1,
        "Category",
        ["unknown category 'hallucination'"],
    )


def test_mmrb_missing_field_and_malformed_json(bad_store, tmp_path):
    row = {k: v for k, v in MMRB_ROW.items() if k != "Output2"}
    _bad(bad_store, tmp_path, "m.jsonl", "mmrb", _jsonl(row), 1, "Output2", ["missing required field"])
    _bad(bad_store, tmp_path, "m.jsonl", "mmrb", _jsonl(MMRB_ROW, "{nope"), 2, None, ["malformed JSON"])


def test_mmrb_duplicate_id(bad_store, tmp_path):
    _bad(
        bad_store, tmp_path, "m.jsonl", "mmrb", _jsonl(MMRB_ROW, MMRB_ROW), 2, "id", ["duplicate item id 'mmrb:vqa_1'"]
    )


def test_pairs_corrupt_and_oversized_images_are_errors(bad_store, tmp_path):
    _bad(
        bad_store,
        tmp_path,
        "m.jsonl",
        "mmrb",
        _jsonl(MMRB_ROW),
        1,
        "Image",
        ["not a readable image"],
        images={"images/a.png": b"\x89PNG\r\n\x1a\n garbage"},
    )
    bad_store.images.max_pixels = 100
    _bad(
        bad_store,
        tmp_path,
        "m.jsonl",
        "mmrb",
        _jsonl(MMRB_ROW),
        1,
        "Image",
        ["over the limit"],
        images={"images/a.png": png(size=(20, 20))},
    )


def test_vlrewardbench_exact_duplicate_row(bad_store, tmp_path):
    row = {"id": "a", "prompt": "p", "chosen": "x", "rejected": "y", "image": "i.jpg"}
    _bad(
        bad_store,
        tmp_path,
        "v.jsonl",
        "vlrewardbench-text",
        _jsonl(row, dict(row, id="b"), row),
        3,
        "id",
        ["duplicate item id", "first at line 1"],
    )


def test_vlrewardbench_bad_ranking(bad_store, tmp_path):
    row = {"id": "a", "query": "q", "response": ["x", "y"], "human_ranking": [0], "image": "i.jpg"}
    _bad(bad_store, tmp_path, "v.jsonl", "vlrewardbench", _jsonl(row), 1, "human_ranking", ["two numeric ranks"])


def test_vlrewardbench_stated_category(store, bad_store, tmp_path):
    # mmrb build's export states the project's category in meta: imported as it is (scoring
    # reads it the same way); one that is not a known category is refused
    row = {
        "id": "t1",
        "query": "q",
        "response": ["x", "y"],
        "human_ranking": [0, 1],
        "image": "i.jpg",
        "meta": {"category": "vqa"},
    }
    path = tmp_path / "v.jsonl"
    path.write_text(_jsonl(row, dict(row, id="t2", meta={})))
    ingest_pairs(store, path, "vlrewardbench")
    assert sorted(i.category for i in store.items()) == ["general", "vqa"]
    _bad(
        bad_store,
        tmp_path,
        "v.jsonl",
        "vlrewardbench",
        _jsonl(dict(row, meta={"category": "vqa!"})),
        1,
        "meta.category",
        ["unknown category 'vqa!'"],
    )


def test_mmrb2_duplicate_ids(bad_store, tmp_path):
    doc = json.loads((fixture_copy("mmrb2_t2i.json", tmp_path)).read_text())
    doc["pairs"].append(doc["pairs"][0])
    text = json.dumps(doc, indent=2)
    line = text.count("\n", 0, text.rindex('"id": "bench_1_a_b"')) + 1 - 1  # the record's "{" is a line above
    _bad(bad_store, tmp_path, "t2i_dup.json", "mmrb2", text, line, "id", ["duplicate item id 'mmrb2:t2i:bench_1_a_b'"])


def test_mmrb2_bad_scores_and_unknown_task(bad_store, tmp_path):
    doc = json.loads((fixture_copy("mmrb2_t2i.json", tmp_path)).read_text())
    doc["pairs"][1]["human_annotations"] = [1, 9, 3]
    text = json.dumps(doc, indent=2)
    line = text.count("\n", 0, text.index('"id": "bench_2_a_a"'))
    _bad(bad_store, tmp_path, "t2i_bad.json", "mmrb2", text, line, "human_annotations", ["scores from 1 to 6"])
    (tmp_path / "other.json").write_text(text)
    with pytest.raises(InputError, match="--category"):
        ingest_pairs(bad_store, tmp_path / "other.json", "mmrb2")
    assert_nothing_written(bad_store)


def test_mm_rlhf_conflicting_rows_and_unknown_category(bad_store, tmp_path):
    a = {"id": "q", "image": "mcq/q.png", "prompt": "p", "chosen": "x", "rejected": "y"}
    _bad(
        bad_store,
        tmp_path,
        "r.jsonl",
        "mm-rlhf",
        _jsonl(a, dict(a, prompt="other", rejected="z")),
        2,
        "id",
        ["also at line 1 with different content"],
    )
    _bad(
        bad_store,
        tmp_path,
        "r.jsonl",
        "mm-rlhf",
        _jsonl(dict(a, image="misc/q.png")),
        1,
        "image",
        ["cannot tell the category"],
    )


def test_generic_bad_preference(bad_store, tmp_path):
    (tmp_path / "g.csv").write_text("id,prompt,category,response_1,response_2,preference\ng,p,vqa,a,b,A\n")
    with pytest.raises(InputError) as e:
        ingest_pairs(bad_store, tmp_path / "g.csv", "generic")
    assert f"{tmp_path / 'g.csv'}:2 field 'preference'" in str(e.value)
    assert_nothing_written(bad_store)


def test_pairs_skip_invalid(store, tmp_path):
    rej = tmp_path / "rej.jsonl"
    (tmp_path / "m.jsonl").write_text(
        _jsonl(MMRB_ROW, dict(MMRB_ROW, ID="vqa_2", Better="?"), dict(MMRB_ROW, ID="vqa_3"))
    )
    r = ingest_pairs(store, tmp_path / "m.jsonl", "mmrb", skip_invalid=rej)
    assert (r.pairs, r.rejected, r.images_missing) == (2, 1, 2)
    rec = json.loads(rej.read_text())
    assert rec["line"] == 2 and rec["problems"][0]["field"] == "Better" and rec["row"]["ID"] == "vqa_2"


def test_cli_pairs(db_url, tmp_path, capsys):
    path = fixture_copy("vlrewardbench_text.jsonl", tmp_path)
    rc, out, _ = run_cli(
        ingest_cmd,
        ["pairs", str(path), "--format", "vlrewardbench-text", "--db", db_url, "--images", str(tmp_path / "im")],
        capsys,
    )
    assert rc == 0 and "3 pairs" in out and "3 image references missing" in out


def test_images_root_option(sqlite_store, tmp_path):
    path = fixture_copy("vlrewardbench_text.jsonl", tmp_path)
    write_image(tmp_path / "elsewhere/vl_reward/img/image_0.jpg")
    r = ingest_pairs(sqlite_store, path, "vlrewardbench-text", images_root=tmp_path / "elsewhere")
    assert (r.images_stored, r.images_missing) == (1, 2)


@pytest.mark.parametrize("option", ["--images-root", "--images-dir"])
def test_images_root_cli_and_its_old_name(tmp_path, capsys, option):
    path = fixture_copy("vlrewardbench_text.jsonl", tmp_path)
    write_image(tmp_path / "elsewhere/vl_reward/img/image_0.jpg")
    rc, out, _ = run_cli(
        ingest_cmd,
        [
            "pairs",
            str(path),
            "--format",
            "vlrewardbench-text",
            "--db",
            str(tmp_path / "s.db"),
            option,
            str(tmp_path / "elsewhere"),
        ],
        capsys,
    )
    assert rc == 0 and "(1 distinct file)" in out and "2 image references missing" in out


# -- the real files ---------------------------------------------------------------------
@pytest.mark.slow
def test_real_vlrewardbench_text(store):
    path = shared("vlrewardbench/pairs.jsonl")
    r = ingest_pairs(store, path, "vlrewardbench-text")
    assert (r.items, r.pairs, r.images_missing) == (1250, 1250, 1250)  # 25 ids repeat, items do not
    cats = collections.Counter(i.category for i in store.items())
    assert cats == {"hallucination": 749, "reasoning": 318, "general": 183}  # the paper's group sizes
    prefs = collections.Counter(p.known_preference for p in store.pairs())
    assert set(prefs) == {"first", "second"} and abs(prefs["first"] - prefs["second"]) < 125


def test_real_mm_rlhf(sqlite_store):
    r = ingest_pairs(sqlite_store, shared("mm_rlhf_rewardbench/pairs.jsonl"), "mm-rlhf")
    assert (r.items, r.pairs) == (46, 170)
    cat = {i.id: i.category for i in sqlite_store.items()}
    # pairs per category, as the data README counts rows
    assert collections.Counter(cat[p.item_id] for p in sqlite_store.pairs()) == {
        "mcq": 42,
        "long": 37,
        "short": 34,
        "safety": 32,
        "video": 25,
    }


@pytest.mark.slow
@pytest.mark.parametrize("task", ["t2i", "reasoning"])
def test_real_mmrb2_labels_agree_with_chosen(store, task):
    r = ingest_pairs(store, shared(f"mmrb2/{task}_response_only.json"), "mmrb2")
    assert (r.items, r.pairs) == (1000, 1000)
    labels = collections.defaultdict(list)
    for lb in store.labels():
        labels[lb.pair_id].append(lb)
    agree = 0
    for p in store.pairs():
        ls = labels[p.id]
        if task == "t2i":
            mean = sum(lb.ratings["score"] for lb in ls) / len(ls)
            agree += (p.known_preference == "first") == (mean > 3.5)
        else:
            votes = collections.Counter(lb.preference for lb in ls if lb.preference)
            if votes and votes.most_common(1)[0][1] >= 2 and votes.most_common(1)[0][0] != "tie":
                agree += votes.most_common(1)[0][0] == p.known_preference
            else:
                agree += 1
    assert agree == 1000


def test_long_ids_are_shortened_stably(sqlite_store, tmp_path):
    doc = json.loads((fixture_copy("mmrb2_t2i.json", tmp_path)).read_text())
    doc["pairs"] = doc["pairs"][:1]
    doc["pairs"][0]["id"] = "x" * 250
    (tmp_path / "t2i_long.json").write_text(json.dumps(doc))
    ingest_pairs(sqlite_store, tmp_path / "t2i_long.json", "mmrb2")
    (item,) = sqlite_store.items()
    assert len(item.id) <= 200 and "~" in item.id and item.metadata["mmrb2_id"] == "x" * 250
    assert all(len(c.id) <= 200 for c in sqlite_store.candidates())


def test_too_long_user_id_is_an_input_error(bad_store, tmp_path):
    (tmp_path / "g.csv").write_text(f"id,prompt,category,response_1,response_2\n{'g' * 201},p,vqa,a,b\n")
    with pytest.raises(InputError, match="201 characters"):
        ingest_pairs(bad_store, tmp_path / "g.csv", "generic")
    assert_nothing_written(bad_store)


def test_the_pair_formats_are_written_once_and_each_is_dispatched(empty_store, tmp_path):
    """`mmrb ingest pairs --format` offers the registry's PAIR_FORMATS (curate/formats/registry.py),
    which `--help` reads without importing the store (tests/test_cli.py), and ingest_pairs reads
    every one of them."""
    import ast
    from pathlib import Path
    from typing import Any

    from curate.formats.registry import FORMATS, PAIR_FORMATS

    p = argparse.ArgumentParser()
    ingest_cmd.add_arguments(p)
    assert p.parse_args(["pairs", "f.jsonl", "--format", "mm-rlhf"]).format == "mm-rlhf"
    with pytest.raises(SystemExit):
        p.parse_args(["pairs", "f.jsonl", "--format", "mmrb-studio"])
    empty = tmp_path / "t2i.jsonl"
    empty.write_text("")
    for fmt in PAIR_FORMATS:  # each reaches its reader, which finds nothing to import
        with pytest.raises(InputError, match="no records found"):
            ingest_pairs(empty_store, empty, fmt)
    unknown: Any = "nope"  # what a caller outside the CLI could pass
    with pytest.raises(InputError, match="unknown format 'nope'; known: mmrb, mmrb2, vlrewardbench"):
        ingest_pairs(empty_store, empty, unknown)
    with pytest.raises(InputError, match="unknown format 'mmrb-studio'"):  # a format, but none ingest reads
        ingest_pairs(empty_store, empty, "mmrb-studio")
    # no list of format names but the registry's: a tuple, list or set of two of them elsewhere
    # is a dispatch that adding a format would have to find
    names = {s for f in FORMATS for s in f.spellings}
    root = Path(__file__).resolve().parents[1]
    restated = [
        f"{path.relative_to(root)}:{node.lineno}"
        for package in ("curate", "mmrb_eval", "annotate")
        for path in root.glob(f"{package}/**/*.py")
        if path.name != "registry.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set))
        and len(names & {e.value for e in node.elts if isinstance(e, ast.Constant)}) > 1
    ]
    assert restated == []
