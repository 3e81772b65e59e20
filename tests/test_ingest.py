"""`mmrb ingest items`: formats, images, and every bad-input case, on both backends."""

from __future__ import annotations

import base64
import json

import pandas as pd
import pytest
from sqlalchemy.exc import IntegrityError

from curate.commands import ingest as ingest_cmd
from curate.errors import InputError
from curate.ingest import ingest_items
from curate.model import Candidate
from tests.ingest_helpers import (
    assert_nothing_written,
    counts,
    fail_writing_candidates,
    fixture_copy,
    png,
    run_cli,
    text_pairs_file,
    upkeep,
    write_image,
)

# every import here twice: rows checked in place and in a child process (conftest.py)
pytestmark = pytest.mark.usefixtures("both_readings")

IMAGES = {"img/shapes.png": "blue", "img/sign.png": "red"}


def _items_file(tmp_path, rows: list, name="items.jsonl"):
    for rel, color in IMAGES.items():
        write_image(tmp_path / rel, color)
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


GOOD = {
    "id": "a",
    "prompt": "Count.",
    "images": ["img/shapes.png"],
    "category": "vqa",
    "reference": "5",
    "responses": [{"model": "m", "text": "5"}],
}


def test_items_jsonl_round_trip(store, tmp_path):
    path = fixture_copy("items.jsonl", tmp_path, IMAGES)
    report = ingest_items(store, path)
    assert (report.items, report.candidates, report.images_stored, report.images_missing) == (3, 4, 2, 0)
    it1, it2, it3 = store.items()
    assert it1.id == "it-1" and it1.reference == "5" and it1.source == "fixture"
    assert [r.status for r in it3.images] == ["ok", "ok"] and it3.reference == "42"
    assert it2.source == "items" and it2.metadata == {"difficulty": "hard"}
    assert it1.images[0].sha256 and store.image_path(it1.images[0].sha256).exists()
    assert (it1.images[0].width, it1.images[0].height) == (40, 30)
    cands = store.candidates(item_id="it-1")
    assert {c.id: (c.model, c.sample_index) for c in cands} == {
        "it-1:m1:0": ("m1", 0),
        "it-1:m1:1": ("m1", 1),
        "it-1:m2:0": ("m2", 0),
    }
    assert store.candidates(item_id="it-2") == [
        Candidate("it-2:m1:0", "it-2", "m1", "STOP", params={"temperature": 0.7}, sample_index=0)
    ]


def test_csv_and_parquet_give_the_same_items(sqlite_store, tmp_path):
    rows = [
        {
            "id": "c1",
            "prompt": "Count.",
            "image": "img/shapes.png",
            "category": "vqa",
            "reference": "5",
            "responses": json.dumps([{"model": "m", "text": 'five,\n"quoted"'}]),
        },
        {
            "id": "c2",
            "prompt": "Read.",
            "images": json.dumps(["img/sign.png", "img/shapes.png"]),
            "category": "knowledge",
            "reference": None,
            "responses": None,
        },
    ]
    for rel, color in IMAGES.items():
        write_image(tmp_path / rel, color)
    pd.DataFrame(rows).to_csv(tmp_path / "items.csv", index=False)
    # Parquet with native lists rather than JSON strings
    native = [
        dict(
            r,
            images=json.loads(r["images"]) if r.get("images") else None,
            responses=json.loads(r["responses"]) if r["responses"] else None,
        )
        for r in rows
    ]
    pd.DataFrame(native).to_parquet(tmp_path / "items.parquet")
    ingest_items(sqlite_store, tmp_path / "items.csv")
    from_csv = sqlite_store.items(), sqlite_store.candidates()
    from curate.store import Store

    other = Store(str(tmp_path / "other.db"), images=tmp_path / "other-images")
    ingest_items(other, tmp_path / "items.parquet")
    assert (other.items(), other.candidates()) == from_csv
    assert from_csv[1][0].text == 'five,\n"quoted"'
    assert [len(i.images) for i in from_csv[0]] == [1, 2]
    other.close()


def test_data_uri_images(store, tmp_path):
    uri = "data:image/png;base64," + base64.b64encode(png("green")).decode()
    path = _items_file(tmp_path, [dict(GOOD, images=[uri])])
    ingest_items(store, path)
    ref = store.get_item("a").images[0]
    assert ref.status == "ok" and ref.source.startswith("data:image/png;base64,") and len(ref.source) < 40


def test_missing_image_with_allow_flag_is_recorded(store, tmp_path):
    path = _items_file(tmp_path, [dict(GOOD, images=["img/nope.png"])])
    report = ingest_items(store, path, allow_missing_images=True)
    assert report.images_missing == 1
    ref = store.get_item("a").images[0]
    assert (ref.status, ref.sha256, ref.source) == ("missing", None, "img/nope.png")


# -- every bad-input case: a message naming file, line and field, and nothing written ----
def _expect_problem(store, path, line, field, words, **kw):
    with pytest.raises(InputError) as e:
        ingest_items(store, path, **kw)
    msg = str(e.value)
    assert f"{path}:{line} field '{field}'" in msg, msg
    for w in words:
        assert w in msg, msg
    assert_nothing_written(store)
    return e.value


def test_malformed_json(bad_store, tmp_path):
    path = _items_file(tmp_path, [GOOD, '{"id": "b", "prompt": '])
    with pytest.raises(InputError) as e:
        ingest_items(bad_store, path)
    assert f"{path}:2: malformed JSON" in str(e.value)
    assert_nothing_written(bad_store)


def test_missing_field(bad_store, tmp_path):
    bad = {k: v for k, v in GOOD.items() if k != "prompt"}
    _expect_problem(
        bad_store,
        _items_file(tmp_path, [dict(GOOD, id="x"), dict(bad, id="b")]),
        2,
        "prompt",
        ["missing required field"],
    )


def test_missing_response_text(bad_store, tmp_path):
    row = dict(GOOD, responses=[{"model": "m", "text": "ok"}, {"model": "m"}])
    _expect_problem(bad_store, _items_file(tmp_path, [row]), 1, "responses[1].text", ["missing required field"])


def test_duplicate_id(bad_store, tmp_path):
    path = _items_file(tmp_path, [GOOD, dict(GOOD, id="z"), GOOD])
    _expect_problem(bad_store, path, 3, "id", ["duplicate item id 'a'", "first at line 1"])


def test_id_already_in_store(store, tmp_path):
    ingest_items(store, _items_file(tmp_path, [GOOD], "first.jsonl"))
    before = counts(store)
    with pytest.raises(InputError) as e:
        ingest_items(store, _items_file(tmp_path, [dict(GOOD, id="new"), GOOD], "second.jsonl"))
    assert "second.jsonl:2 field 'id'" in str(e.value) and "already in the store" in str(e.value)
    assert counts(store) == before and store.get_item("new") is None


def test_unknown_category(bad_store, tmp_path):
    _expect_problem(
        bad_store,
        _items_file(tmp_path, [dict(GOOD, category="vqaa")]),
        1,
        "category",
        ["unknown category 'vqaa'", "open_generation/correctness_task"],
    )


def test_categories_option_restricts(bad_store, tmp_path):
    _expect_problem(
        bad_store, _items_file(tmp_path, [GOOD]), 1, "category", ["unknown category 'vqa'"], categories=["safety"]
    )


def test_missing_image(bad_store, tmp_path):
    path = _items_file(tmp_path, [GOOD, dict(GOOD, id="b", images=["img/shapes.png", "img/gone.png"])])
    _expect_problem(bad_store, path, 2, "images[1]", ["image file not found", "gone.png", "--allow-missing-images"])


def test_corrupt_image(bad_store, tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img/broken.png").write_bytes(png()[:60])  # a truncated PNG
    path = _items_file(tmp_path, [dict(GOOD, image="img/broken.png", images=None)])
    _expect_problem(bad_store, path, 1, "image", ["not a readable image"], allow_missing_images=True)


def test_corrupt_data_uri(bad_store, tmp_path):
    path = _items_file(tmp_path, [dict(GOOD, images=["data:image/png;base64,aGVsbG8="])])
    _expect_problem(bad_store, path, 1, "images[0]", ["not a readable image"])


def test_image_over_pixel_limit(bad_store, tmp_path):
    bad_store.images.max_pixels = 10_000
    write_image(tmp_path / "img/big.png", size=(200, 100))
    path = _items_file(tmp_path, [GOOD, dict(GOOD, id="b", images=["img/big.png"])])
    _expect_problem(bad_store, path, 2, "images[0]", ["200x100", "over the limit of 10,000"])


def test_wrong_types(bad_store, tmp_path):
    path = _items_file(tmp_path, [dict(GOOD, responses="five")])
    _expect_problem(bad_store, path, 1, "responses", ["expected a list"])


def test_csv_line_numbers_count_multiline_cells(bad_store, tmp_path):
    for rel, color in IMAGES.items():
        write_image(tmp_path / rel, color)
    (tmp_path / "x.csv").write_text(
        'id,prompt,image,category\na,"two\nlines",img/shapes.png,vqa\nb,fine,img/shapes.png,nope\n'
    )
    _expect_problem(bad_store, tmp_path / "x.csv", 4, "category", ["unknown category 'nope'"])


def test_parquet_row_numbers(bad_store, tmp_path):
    write_image(tmp_path / "img/shapes.png")
    pd.DataFrame(
        [
            dict(id="a", prompt="p", image="img/shapes.png", category="vqa"),
            dict(id="b", prompt=None, image="img/shapes.png", category="vqa"),
        ]
    ).to_parquet(tmp_path / "x.parquet")
    _expect_problem(bad_store, tmp_path / "x.parquet", 2, "prompt", ["missing required field"])


def test_all_problems_are_reported_at_once(bad_store, tmp_path):
    path = _items_file(tmp_path, [dict(GOOD, category="x"), "not json", dict(GOOD, id="c", prompt="")])
    with pytest.raises(InputError) as e:
        ingest_items(bad_store, path)
    assert [(p.line, p.field) for p in e.value.problems] == [(1, "category"), (2, None), (3, "prompt")]
    assert_nothing_written(bad_store)


def test_unknown_file_type(bad_store, tmp_path):
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(InputError, match="unknown file type"):
        ingest_items(bad_store, tmp_path / "x.txt")


# -- --skip-invalid -------------------------------------------------------------------
def test_skip_invalid_imports_the_rest_and_writes_rejects(store, tmp_path):
    rows = [GOOD, '{"broken', dict(GOOD, id="b", category="nope"), dict(GOOD, id="c"), GOOD]
    rejects = tmp_path / "out" / "rejects.jsonl"
    report = ingest_items(store, _items_file(tmp_path, rows), skip_invalid=rejects)
    assert (report.items, report.rejected) == (2, 3)
    assert sorted(i.id for i in store.items()) == ["a", "c"]
    recs = [json.loads(x) for x in rejects.read_text().splitlines()]
    assert [r["line"] for r in recs] == [2, 3, 5]
    assert recs[0]["row"] == '{"broken' and "malformed JSON" in recs[0]["problems"][0]["message"]
    assert recs[1]["problems"] == [{"field": "category", "message": recs[1]["problems"][0]["message"]}]
    assert recs[1]["row"]["id"] == "b"
    assert "duplicate item id 'a'" in recs[2]["problems"][0]["message"]


@pytest.mark.both_backends
def test_failed_transaction_leaves_no_rows_and_no_image_files(store, tmp_path, monkeypatch):
    path = _items_file(tmp_path, [GOOD, dict(GOOD, id="b")])
    fail_writing_candidates(monkeypatch, store)
    with pytest.raises(RuntimeError):
        ingest_items(store, path)
    assert_nothing_written(store)


# -- the command ----------------------------------------------------------------------
def test_cli_items(db_url, tmp_path, capsys):
    path = fixture_copy("items.jsonl", tmp_path, IMAGES)
    images = str(tmp_path / "store-images")
    rc, out, _ = run_cli(ingest_cmd, ["items", str(path), "--db", db_url, "--images", images], capsys)
    assert rc == 0 and "3 items, 4 candidates" in out
    rc, _, err = run_cli(ingest_cmd, ["items", str(path), "--db", db_url, "--images", images], capsys)
    assert rc == 1 and "already in the store" in err and "nothing was written" in err


def test_cli_skip_invalid(sqlite_store, tmp_path, capsys):
    path = _items_file(tmp_path, [GOOD, dict(GOOD, id="b", category="nope")])
    rej = tmp_path / "rej.jsonl"
    rc, out, _ = run_cli(
        ingest_cmd,
        [
            "items",
            str(path),
            "--db",
            sqlite_store.db,
            "--images",
            str(sqlite_store.images.root),
            "--skip-invalid",
            str(rej),
        ],
        capsys,
    )
    assert rc == 0 and "1 row rejected" in out and f"{path}:2 field 'category'" in out
    assert rej.exists()


@pytest.mark.both_backends
def test_a_bad_row_far_into_a_big_file_leaves_nothing_and_every_problem_is_named(store, tmp_path):
    """The import streams the file into one transaction batch by batch (several batches are
    written before the bad rows); any problem rolls all of it back and every one is reported,
    a duplicate id included however far from its first use."""
    from curate.errors import InputError
    from curate.ingest import ingest_pairs
    from curate.ingest.rows import BATCH
    from tests.ingest_helpers import assert_nothing_written

    n = 3 * BATCH + 500
    rows = [{"id": f"r{k}", "prompt": f"question {k}", "chosen": f"yes {k}", "rejected": f"no {k}"} for k in range(n)]
    rows[n - 300] = {"id": "bad", "prompt": "q", "chosen": "a"}  # no rejected
    rows[n - 100] = dict(rows[10])  # the same pair as line 11
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as e:
        ingest_pairs(store, path, "vlrewardbench-text")
    probs = e.value.problems
    assert str(probs[0]) == f"{path}:{n - 299} field 'rejected': missing required field"
    assert [(p.line, p.field, p.message.split(" id ")[0]) for p in probs[1:]] == [
        (n - 99, "id", f"duplicate {kind}") for kind in ("item", "candidate", "candidate", "pair")
    ]
    assert all(p.message.endswith("(first at line 11)") for p in probs[1:])
    assert_nothing_written(store)
    # keeping the valid rows writes all of them, and the two others go to the rejects file
    rep = ingest_pairs(store, path, "vlrewardbench-text", skip_invalid=tmp_path / "rejects.jsonl")
    assert (rep.pairs, rep.rejected) == (n - 2, 2) and store.counts().pairs == n - 2
    rejects = [json.loads(x) for x in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert [(r["line"], r["problems"][0]["field"]) for r in rejects] == [(n - 299, "rejected"), (n - 99, "id")]
    # a second import of the same file: every valid row is already in the store (n - 2 rows),
    # besides the bad row and the repeat's four ids
    with pytest.raises(InputError, match=f"{n + 3} problems in input, nothing was written"):
        ingest_pairs(store, path, "vlrewardbench-text")


@pytest.mark.parametrize(
    "later, why",
    [("p3", "duplicate item id 'p3' (first at line 4)"), ("pO", "item id 'pO' looks like item id 'p0' at line 1")],
)
@pytest.mark.both_backends
def test_an_id_taken_batches_before_is_found(tmp_path, store, monkeypatch, later, why):
    """Ids are checked against the whole file so far, not only the batch: a repeat of line 4
    or a look-alike of line 1 (O and 0) at line 41, eight batches later."""
    from curate.ingest import ingest_pairs, rows

    monkeypatch.setattr(rows, "BATCH", 5)
    ids = [f"p{n}" for n in range(50)]
    ids[40] = later
    records = [{"id": i, "prompt": "q", "category": "general", "response_1": "good", "response_2": "bad"} for i in ids]
    path = tmp_path / "pairs.jsonl"  # generic pairs: the item and pair ids are the record's id, as written
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError) as e:
        ingest_pairs(store, path, format="generic")
    assert {(p.line, p.field) for p in e.value.problems} == {(41, "id")}  # its item, responses, pair
    assert why in [p.message for p in e.value.problems][0]
    assert_nothing_written(store)


@pytest.mark.both_backends
def test_a_first_import_leaves_the_store_its_indexes_and_keys(store, tmp_path):
    """A first import builds the plain indexes of the tables it fills once, at its end, and on
    PostgreSQL checks their foreign keys once too (store/imports.py): after an import that
    fails and after one that succeeds the store has the indexes and keys it had, they still
    hold (a candidate of no item is refused), and the next import (into a store that is no
    longer empty) still finds ids already stored and ids that look like them."""
    from curate.ingest import ingest_pairs

    before = upkeep(store)
    names = {n for _, n, *_ in before} if store.backend == "postgresql" else {n for n, _ in before}
    assert {"ix_items_skeleton", "ix_pairs_skeleton", "ix_pairs_item"} <= names
    with pytest.raises(InputError):
        ingest_pairs(store, text_pairs_file(tmp_path / "bad.jsonl", bad=True), "vlrewardbench-text")
    assert upkeep(store) == before
    assert ingest_pairs(store, text_pairs_file(tmp_path / "good.jsonl"), "vlrewardbench-text").pairs == 5
    assert upkeep(store) == before
    with pytest.raises(IntegrityError), store.engine.begin() as c:
        c.exec_driver_sql(
            "INSERT INTO candidates (id, item_id, model, text, params, params_key, sample_index, created_at)"
            " VALUES ('c', 'no such item', 'm', 't', '{}', '', 0, 'now')"
        )
    # an item file now: the ids of its items are its own
    assert ingest_items(store, _items_file(tmp_path, [dict(GOOD, id="item1")])).items == 1
    for ident, words in (("item1", "id 'item1' is already in the store"), ("iteml", "looks like item id 'item1'")):
        with pytest.raises(InputError) as e:
            ingest_items(store, _items_file(tmp_path, [dict(GOOD, id=ident)]))
        assert [p.line for p in e.value.problems] == [1] and words in e.value.problems[0].message
