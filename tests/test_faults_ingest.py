"""Faults and attacks on the way in (issue 11): concurrent imports, image paths that lead
outside the images root, bytes no store can keep, look-alike ids, concurrent assignment
runs and builds that were killed. Every test here failed on the code before the fix."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from curate.assign import assign
from curate.errors import InputError
from curate.ingest import ingest_items, ingest_pairs
from curate.status import collect
from curate.store import Store
from tests.ingest_helpers import (
    assert_nothing_written,
    counts,
    fail_writing_candidates,
    png,
    run_cli,
    write_image,
)

# every import here twice: rows checked in place and in a child process (conftest.py)
pytestmark = pytest.mark.usefixtures("both_readings")

FORK = multiprocessing.get_context("fork")


def _items(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _cli(argv: list[str], err: str, start) -> None:
    """A child process: `mmrb ARGV` once both children are ready, stderr to a file."""
    from curate.cli import main

    sys.stderr = open(err, "w")  # pytest's capture is what sys.stderr is here
    os.dup2(sys.stderr.fileno(), 2)  # and whatever writes to the descriptor (logging's last resort, C code)
    start.wait()
    rc = main(argv)
    sys.stderr.flush()
    os._exit(rc)


def _race(argvs: list[list[str]], tmp: Path) -> list[tuple[int, str]]:
    """Run the commands at the same moment in separate processes: [(exit code, stderr)]."""
    start = FORK.Barrier(len(argvs))
    procs = []
    for n, argv in enumerate(argvs):
        p = FORK.Process(target=_cli, args=(argv, str(tmp / f"err{n}.txt"), start))
        p.start()
        procs.append(p)
    for p in procs:
        p.join(120)
    return [(p.exitcode, (tmp / f"err{n}.txt").read_text()) for n, p in enumerate(procs)]


# -- 1. concurrent imports never delete a file a committed row names ------------------------
RACES = 20


@pytest.mark.slow
@pytest.mark.both_backends
def test_concurrent_imports_of_one_file_never_lose_committed_images(db_url, tmp_path):
    """Two `mmrb ingest items` of the same file at once, RACES times: one wins, the other
    fails cleanly, and every image a committed item names is on disk and readable."""
    images = tmp_path / "store-images"
    Store(db_url, images=images).close()  # the schema first: this is about imports
    for r in range(RACES):
        run = tmp_path / f"run{r}"
        for k in range(18):  # new images each time: both imports find every file new
            write_image(run / f"img/{k}.png", color=(r * 11 % 256, k * 13, 200), size=(300 + k, 200))
        rows = [
            {"id": f"r{r}-{i}", "prompt": "Count.", "images": [f"img/{i % 18}.png"], "category": "vqa"}
            for i in range(25)
        ]
        path = _items(run / "items.jsonl", rows)
        argv = ["ingest", "items", str(path), "--db", db_url, "--images", str(images)]
        results = _race([argv, argv], run)
        assert sorted(rc for rc, _ in results) == [0, 1], results
        loser = next(err for rc, err in results if rc == 1)
        assert loser.startswith("mmrb ingest: error: 25 problems in input, nothing was written:\n"), loser
        assert "Traceback" not in loser and "error ignored" not in loser and "already in the store" in loser, loser
        with Store(db_url, images=images) as store:
            st = collect(store)
            assert st.broken_files == 0 and st.images == {"ok": 25 * (r + 1)}, (r, st.images, st.broken_examples)
            paths = store.image_paths(ref.sha256 for item in store.items() for ref in item.images)
            assert len(paths) == 18 * (r + 1) and all(p.is_file() for p in paths.values()), r


def test_a_failed_import_keeps_a_file_another_import_committed_meanwhile(sqlite_store, tmp_path, monkeypatch):
    """The race above, made to happen every time: import B writes image X, import A (same
    image, other ids) commits, then B fails. B must not remove X."""
    write_image(tmp_path / "img/x.png", "purple")
    a = _items(tmp_path / "a.jsonl", [{"id": "a", "prompt": "p", "image": "img/x.png", "category": "vqa"}])
    b = _items(
        tmp_path / "b.jsonl",
        [
            {
                "id": "b",
                "prompt": "p",
                "image": "img/x.png",
                "category": "vqa",
                "responses": [{"model": "m", "text": "t"}],
            }
        ],
    )
    real_write = sqlite_store.write

    def write_after_a_commits():
        with Store(sqlite_store.db, images=sqlite_store.images.root) as other:
            ingest_items(other, a)
        return real_write()

    monkeypatch.setattr(sqlite_store, "write", write_after_a_commits)
    fail_writing_candidates(monkeypatch, sqlite_store)
    with pytest.raises(RuntimeError):
        ingest_items(sqlite_store, b)
    monkeypatch.undo()
    (ref,) = sqlite_store.get_item("a").images
    assert sqlite_store.get_item("b") is None
    assert sqlite_store.image_path(ref.sha256).is_file()
    assert collect(sqlite_store).broken_files == 0


# -- 3. image paths stay inside the images root --------------------------------------------
@pytest.mark.both_backends
def test_concurrent_imports_of_look_alike_ids_into_an_empty_store(db_url, tmp_path):
    """Two imports into an empty store at once, whose ids differ but look alike (O and 0):
    one at a time (an empty store lets an import skip the stored-id check), so the second
    finds the first's ids in the store and is refused as a whole."""
    images = tmp_path / "store-images"
    Store(db_url, images=images).close()
    argvs = []
    for n, mark in enumerate(("O", "0")):
        rows = [{"id": f"r-{i}-{mark}", "prompt": "Count.", "category": "vqa"} for i in range(25)]
        path = _items(tmp_path / f"f{n}" / "items.jsonl", rows)
        argvs.append(["ingest", "items", str(path), "--db", db_url, "--images", str(images)])
    results = _race(argvs, tmp_path)
    assert sorted(rc for rc, _ in results) == [0, 1], results
    loser = next(err for rc, err in results if rc == 1)
    assert "25 problems in input, nothing was written" in loser and "which is already in the store" in loser, loser
    with Store(db_url, images=images) as store:
        assert len(list(store.items())) == 25


@pytest.fixture
def outside(tmp_path):
    """tmp/data (the input's folder, with one good image) and tmp/outside (a real image)."""
    write_image(tmp_path / "data/img/ok.png")
    write_image(tmp_path / "outside/secret.png", "green")
    (tmp_path / "data/link.png").symlink_to(tmp_path / "outside/secret.png")
    (tmp_path / "data/dangling.png").symlink_to(tmp_path / "outside/nothing.png")
    (tmp_path / "data/to-inside.png").symlink_to(tmp_path / "data/img/ok.png")
    return tmp_path


def _one_image(tmp: Path, image, name="items.jsonl") -> Path:
    return _items(tmp / "data" / name, [{"id": "a", "prompt": "p", "category": "vqa", "image": image}])


OUTSIDE_PAIRS = [  # (exists, does not exist): the messages must not tell them apart
    ("{tmp}/outside/secret.png", "{tmp}/outside/nothing.png"),
    ("../outside/secret.png", "../outside/nothing.png"),
    ("link.png", "dangling.png"),
    ("/etc/passwd", "/etc/no-such-file"),
    ("/root/.ssh/id_rsa", "/root/.ssh/no_such_key"),
    ("/dev/zero", "/dev/no-such-device"),
    ("img/../../outside/secret.png", "img/../../outside/nothing.png"),
]


@pytest.mark.parametrize("there,absent", OUTSIDE_PAIRS)
def test_paths_outside_the_root_are_refused_alike(bad_store, outside, there, absent):
    messages = []
    for source in (there, absent):
        source = source.format(tmp=outside)
        path = _one_image(outside, source)
        with pytest.raises(InputError) as e:
            ingest_items(bad_store, path, allow_missing_images=True)
        (problem,) = e.value.problems
        assert (problem.file, problem.line, problem.field) == (str(path), 1, "image")
        assert "outside the images root" in problem.message and source in problem.message
        messages.append(problem.message.replace(repr(source), "SOURCE"))
        assert_nothing_written(bad_store)
    assert messages[0] == messages[1]


def test_benchmark_pairs_refuse_outside_paths_too(bad_store, outside):
    """Pair formats record a missing image as missing; a path outside is still an error."""
    path = _items(
        outside / "data/vl.jsonl",
        [
            {"id": "x", "prompt": "p", "chosen": "a", "rejected": "b", "image": "../outside/secret.png"},
            {"id": "y", "prompt": "p", "chosen": "a", "rejected": "b", "image": "img/not-shipped.png"},
        ],
    )
    with pytest.raises(InputError) as e:
        ingest_pairs(bad_store, path, "vlrewardbench-text")
    assert [(p.line, p.field) for p in e.value.problems] == [(1, "image")]
    assert "outside the images root" in str(e.value)
    assert_nothing_written(bad_store)


def test_a_hugging_face_image_path_is_confined(bad_store, outside):
    import pandas as pd

    path = outside / "data/x.parquet"
    pd.DataFrame(
        [
            {
                "id": "a",
                "prompt": "p",
                "category": "vqa",
                "image": {"bytes": None, "path": str(outside / "outside/secret.png")},
            }
        ]
    ).to_parquet(path)
    with pytest.raises(InputError, match="outside the images root"):
        ingest_items(bad_store, path)
    assert_nothing_written(bad_store)


def test_inside_paths_and_inside_symlinks_still_work(store, outside):
    path = _items(
        outside / "data/items.jsonl",
        [
            {"id": "a", "prompt": "p", "category": "vqa", "image": "img/ok.png"},
            {"id": "b", "prompt": "p", "category": "vqa", "image": "to-inside.png"},
            {"id": "c", "prompt": "p", "category": "vqa", "image": str(outside / "data/img/ok.png")},
        ],
    )
    assert ingest_items(store, path).images_stored == 1


def test_images_root_widens_and_confines(store, outside):
    path = _one_image(outside, "outside/secret.png")
    assert ingest_items(store, path, images_root=outside).images_stored == 1
    other = _items(outside / "data/b.jsonl", [{"id": "b", "prompt": "p", "category": "vqa", "image": "../x.png"}])
    with pytest.raises(InputError, match="outside the images root"):
        ingest_items(store, other, images_root=outside / "data/img")


@pytest.mark.timeout(60)
def test_a_fifo_is_refused_not_waited_for(bad_store, outside):
    os.mkfifo(outside / "data/fifo.png")
    path = _one_image(outside, "fifo.png")
    with pytest.raises(InputError, match="not a regular file"):
        ingest_items(bad_store, path)
    assert_nothing_written(bad_store)


def test_size_is_checked_before_reading(bad_store, outside):
    with open(outside / "data/huge.png", "wb") as f:  # sparse: 300 MB on paper, nothing on disk
        f.truncate(300 * 1024**2)
    path = _one_image(outside, "huge.png")
    with pytest.raises(InputError) as e:
        ingest_items(bad_store, path)
    assert "huge.png is 314,572,800 bytes, over the limit of 209,715,200" in str(e.value)
    assert_nothing_written(bad_store)


# -- 6. bad bytes and bad files: FILE:LINE field, nothing written --------------------------
def _expect(store, path, where: list[tuple[int, str | None]], words: list[str], **kw):
    fn = kw.pop("fn", ingest_items)
    with pytest.raises(InputError) as e:
        fn(store, path, **kw)
    assert [(p.line, p.field) for p in e.value.problems] == where, e.value.problems
    text = str(e.value)
    for w in words:
        assert w in text, text
    assert "0x" not in text.replace("byte 0x", "")  # no object reprs
    assert_nothing_written(store)


def test_invalid_utf8_in_jsonl(bad_store, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(
        b'{"id": "a", "prompt": "ok", "category": "vqa"}\n'
        b'{"id": "b", "prompt": "bad \xff\xfe here", "category": "vqa"}\n'
    )
    _expect(bad_store, path, [(2, "prompt")], ["not valid UTF-8 (byte 0xff at character 5)"])


def test_invalid_utf8_in_csv_cell_and_header(bad_store, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b'id,prompt,category\na,ok,vqa\nb,"two\nlines \xe9",vqa\n')
    _expect(bad_store, path, [(3, "prompt")], ["not valid UTF-8 (byte 0xe9"])
    path.write_bytes(b"id,prompt,category,not\xe9s\na,ok,vqa,x\n")
    _expect(bad_store, path, [(2, "not\\udce9s")], ["field name not valid UTF-8"])


def test_invalid_utf8_in_a_json_file(bad_store, tmp_path):
    path = tmp_path / "t2i_bad.json"
    rec = {
        "id": "1",
        "response_a": {"model_name": "m1", "response_content": [["text", "A"]]},
        "response_b": {"model_name": "m2", "response_content": [["text", "B"]]},
        "chosen": "A",
        "human_annotations": [5, 5, 5],
    }
    text = json.dumps({"pairs": [rec, dict(rec, id="2", chosen="B\udcff")]}, indent=1, ensure_ascii=False)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    line = next(n for n, t in enumerate(text.splitlines()) if '"id": "2"' in t)  # the line before: "{"
    _expect(bad_store, path, [(line, "chosen")], ["not valid UTF-8"], fn=ingest_pairs, format="mmrb2")


def test_escaped_key_in_an_mmrb2_file(store, tmp_path):
    rec = {
        "id": "1",
        "response_a": {"model_name": "m1", "response_content": [["text", "A"]]},
        "response_b": {"model_name": "m2", "response_content": [["text", "B"]]},
        "chosen": "A",
        "human_annotations": [5, 5, 5],
    }
    path = tmp_path / "t2i_escaped.json"
    path.write_text('{"prompt_count": 1, "\\u0070airs": [\n' + json.dumps(rec) + "\n]}")
    assert ingest_pairs(store, path, "mmrb2").pairs == 1
    # the list under an escaped key that is not the first: lines still count from the file
    bad = tmp_path / "t2i_escaped_bad.json"
    bad.write_text(
        '{"other": [1, 2],\n "p\\u0061irs": [\n'
        + json.dumps(dict(rec, id="2"))
        + ",\n"
        + json.dumps(dict(rec, id="3", chosen="C"))
        + "\n]}"
    )
    with pytest.raises(InputError) as e:
        ingest_pairs(store, bad, "mmrb2")
    assert [(p.line, p.field) for p in e.value.problems] == [(4, "chosen")]


@pytest.mark.parametrize(
    "row,field",
    [
        ({"id": "a", "prompt": "nul\u0000here", "category": "vqa"}, "prompt"),
        ({"id": "a\u0000", "prompt": "p", "category": "vqa"}, "id"),
        ({"id": "a", "prompt": "p", "category": "vqa", "metadata": {"note": ["x", "y\u0000"]}}, "metadata.note[1]"),
        (
            {"id": "a", "prompt": "p", "category": "vqa", "responses": [{"model": "m", "text": "\u0000"}]},
            "responses[0].text",
        ),
        ({"id": "a", "prompt": "p", "category": "vqa", "half": "\ud800"}, "half"),
    ],
)
@pytest.mark.both_backends
def test_nul_and_broken_unicode_are_refused_on_both_backends(bad_store, tmp_path, row, field):
    path = _items(tmp_path / "x.jsonl", [{"id": "ok", "prompt": "p", "category": "vqa"}, row])
    _expect(bad_store, path, [(2, field)], ["nothing was written"])


def test_nul_byte_in_a_csv_cell(bad_store, tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(b"id,prompt,category\na,p\x00q,vqa\n")
    _expect(bad_store, path, [(2, "prompt")], ["NUL character"])


def test_unreadable_image_names_the_file(bad_store, tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img/broken.png").write_bytes(b"not an image at all")
    (tmp_path / "img/cut.png").write_bytes(png()[:80])
    path = _items(
        tmp_path / "x.jsonl",
        [
            {"id": "a", "prompt": "p", "category": "vqa", "image": "img/broken.png"},
            {"id": "b", "prompt": "p", "category": "vqa", "image": "img/cut.png"},
        ],
    )
    with pytest.raises(InputError) as e:
        ingest_items(bad_store, path)
    text = str(e.value)
    assert "BytesIO" not in text and " at 0x" not in text
    assert "x.jsonl:1 field 'image': not a readable image: img/broken.png" in text
    assert "x.jsonl:2 field 'image': not a readable image: img/cut.png" in text
    assert_nothing_written(bad_store)


# -- 7. ids that look alike are one id or refused; invisible characters are refused ---------
@pytest.mark.parametrize(
    "second,words",
    [
        ("a\u200b", ["U+200B (ZERO WIDTH SPACE)"]),
        ("\u202ea", ["U+202E (RIGHT-TO-LEFT OVERRIDE)"]),
        ("a\ufeff", ["U+FEFF (ZERO WIDTH NO-BREAK SPACE)"]),
        ("a\u00ad", ["U+00AD (SOFT HYPHEN)"]),
        ("a\tb", ["U+0009"]),
        ("ａ", ["duplicate item id 'a' (first at line 1)"]),  # full-width
        ("a ", ["duplicate item id 'a' (first at line 1)"]),
        ("\u00a0a", ["duplicate item id 'a' (first at line 1)"]),  # no-break space
        ("𝐚", ["duplicate item id 'a' (first at line 1)"]),  # mathematical bold
        ("bа", ["mixes letters of Latin ('b') and Cyrillic ('а')"]),  # Cyrillic а
        ("οk", ["mixes letters of Greek ('ο') and Latin ('k')"]),  # Greek omicron
    ],
)
def test_lookalike_and_invisible_ids(bad_store, tmp_path, second, words):
    path = _items(
        tmp_path / "x.jsonl",
        [{"id": "a", "prompt": "p", "category": "vqa"}, {"id": second, "prompt": "p", "category": "vqa"}],
    )
    _expect(bad_store, path, [(2, "id")], words)


@pytest.mark.both_backends
def test_ids_in_one_script_are_fine(store, tmp_path):
    rows = [{"id": i, "prompt": "p", "category": "vqa"} for i in ("тест-1", "αβ-2", "画像-3", "été-4")]
    ingest_items(store, _items(tmp_path / "x.jsonl", rows))
    assert store.item_ids() == {"тест-1", "αβ-2", "画像-3", "été-4"}  # NFKC composes the accent


def test_model_names_are_ids_too(bad_store, tmp_path):
    row = {
        "id": "a",
        "prompt": "p",
        "category": "vqa",
        "responses": [{"model": "m", "text": "x"}, {"model": "m\u200d", "text": "y"}],
    }
    _expect(bad_store, _items(tmp_path / "x.jsonl", [row]), [(1, "responses[1].model")], ["U+200D"])


@pytest.mark.both_backends
def test_a_lookalike_of_a_stored_id_is_already_in_the_store(store, tmp_path):
    ingest_items(store, _items(tmp_path / "a.jsonl", [{"id": "ﬁle-1", "prompt": "p", "category": "vqa"}]))
    assert store.item_ids() == {"file-1"}
    with pytest.raises(InputError, match="'file-1' is already in the store"):
        ingest_items(store, _items(tmp_path / "b.jsonl", [{"id": "file-1 ", "prompt": "p", "category": "vqa"}]))


@pytest.mark.both_backends
def test_ids_stored_with_an_invisible_character_get_the_new_skeleton_on_upgrade(db_url, tmp_path):
    """A store of schema 8 holds an id with U+FE0F (imports took it then) and the skeleton of
    that time, which kept the character: the upgrade recomputes it, so that an import of the
    same id without the character is refused as a look-alike, as on a new store."""
    from sqlalchemy import update

    from curate.model import Item
    from curate.store import migrations as M
    from curate.store import schema as S

    s = Store(db_url, images=tmp_path / "im")
    s.add_items([Item("x\ufe0fy", "p", "vqa"), Item("plain", "p", "vqa")])
    with s.write() as c:  # as schema 8 wrote them
        c.execute(update(S.items).where(S.items.c.id == "x\ufe0fy").values(id_skeleton="x\ufe0fy"))
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="8"))
    s.close()
    s = Store(db_url, images=tmp_path / "im", create=False)
    try:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION)
        with pytest.raises(InputError, match="is already in the store"):
            ingest_items(s, _items(tmp_path / "b.jsonl", [{"id": "xy", "prompt": "p", "category": "vqa"}]))
        assert s.item_ids() == {"x\ufe0fy", "plain"}
    finally:
        s.close()


# whole-script look-alikes pass the mixed-script rule and NFKC: their UTS #39 skeletons collide
WHOLE_SCRIPT = [
    ("aex-1", "\u0430\u0435\u0445-1"),  # Cyrillic а, е, х
    ("ABE-1", "\u0391\u0392\u0395-1"),  # Greek Α, Β, Ε
    ("COPE", "\u0421\u041e\u0420\u0415"),  # Cyrillic С, О, Р, Е
    ("item1", "iteml"),  # digit one and small L
    ("turn-2", "tum-2"),  # r n and m
]


@pytest.mark.parametrize("first,second", WHOLE_SCRIPT)
def test_ids_that_look_alike_in_one_file_are_refused(bad_store, tmp_path, first, second):
    rows = [{"id": i, "prompt": "p", "category": "vqa"} for i in (first, "other", second)]
    _expect(
        bad_store,
        _items(tmp_path / "x.jsonl", rows),
        [(3, "id")],
        [f"x.jsonl:3 field 'id': item id {second!r} looks like item id {first!r} at line 1"],
    )


def test_pair_ids_that_look_alike_in_one_file_are_refused(bad_store, tmp_path):
    first, second = WHOLE_SCRIPT[0]
    rows = [{"id": i, "prompt": "p", "category": "vqa", "response_1": "a", "response_2": "b"} for i in (first, second)]
    _expect(
        bad_store,
        _items(tmp_path / "g.jsonl", rows),
        [(2, "id")] * 4,  # the item, its two candidates and the pair, as for a repeated id
        [
            f"g.jsonl:2 field 'id': item id {second!r} looks like item id {first!r} at line 1",
            f"g.jsonl:2 field 'id': pair id {second!r} looks like pair id {first!r} at line 1",
        ],
        fn=ingest_pairs,
        format="generic",
    )


@pytest.mark.parametrize("first,second", WHOLE_SCRIPT[:2])
def test_an_id_that_looks_like_a_stored_one_is_refused(store, tmp_path, first, second):
    ingest_items(store, _items(tmp_path / "a.jsonl", [{"id": first, "prompt": "p", "category": "vqa"}]))
    later = [{"id": "new", "prompt": "p", "category": "vqa"}, {"id": second, "prompt": "p", "category": "vqa"}]
    with pytest.raises(InputError) as e:
        ingest_items(store, _items(tmp_path / "b.jsonl", later))
    assert [(p.line, p.field) for p in e.value.problems] == [(2, "id")]
    assert (
        f"b.jsonl:2 field 'id': item id {second!r} looks like item id {first!r}, which is already in the store"
        in str(e.value)
    )
    assert store.item_ids() == {first}  # nothing of b.jsonl was written
    # with --skip-invalid the other rows are kept and the look-alike goes to the rejects
    report = ingest_items(store, tmp_path / "b.jsonl", skip_invalid=tmp_path / "rejects.jsonl")
    assert (report.items, report.rejected) == (1, 1) and store.item_ids() == {first, "new"}
    (rejected,) = [json.loads(line) for line in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert rejected["line"] == 2 and "looks like item id" in rejected["problems"][0]["message"]


def test_a_pair_id_that_looks_like_a_stored_one_is_refused(store, tmp_path):
    first, second = WHOLE_SCRIPT[0]
    for name, i in (("a.jsonl", first), ("b.jsonl", second)):
        _items(tmp_path / name, [{"id": i, "prompt": "p", "category": "vqa", "response_1": "x", "response_2": "y"}])
    ingest_pairs(store, tmp_path / "a.jsonl", format="generic")
    with pytest.raises(InputError, match=f"item id {second!r} looks like item id {first!r}, which is already"):
        ingest_pairs(store, tmp_path / "b.jsonl", format="generic")
    assert [p.id for p in store.pairs()] == [first]


@pytest.mark.both_backends
def test_look_alikes_of_ids_stored_before_the_check_are_found(db_url, tmp_path):
    """A store written before ids were compared by skeleton is migrated: its ids get their
    skeleton, and a look-alike of one is refused like any other."""
    from sqlalchemy import update

    from curate.store import migrations as M
    from curate.store import schema as S

    first, second = WHOLE_SCRIPT[0]
    s = Store(db_url, images=tmp_path / "im")
    ingest_items(s, _items(tmp_path / "a.jsonl", [{"id": first, "prompt": "p", "category": "vqa"}]))
    with s.write() as c:  # as version 4 left it: no skeletons
        c.execute(update(S.items).values(id_skeleton=None))
        c.exec_driver_sql("DROP INDEX ix_items_skeleton")
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="4"))
    s.close()
    s = Store(db_url, images=tmp_path / "im")
    try:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION)
        with pytest.raises(InputError, match="looks like item id 'aex-1', which is already in the store"):
            ingest_items(s, _items(tmp_path / "b.jsonl", [{"id": second, "prompt": "p", "category": "vqa"}]))
    finally:
        s.close()


def test_different_ids_keep_different_skeletons():
    from curate.lookalike import skeleton

    ids = ["aex-1", "aex-2", "Aex-1", "тест-1", "αβ-2", "画像-3", "été-4", "ete-4", "item-10", "item-01"]
    assert len({skeleton(i) for i in ids}) == len(ids)
    assert skeleton("paypal") == skeleton("\u0440\u0430\u0443\u0440\u0430l")  # Cyrillic р, а, у


def test_the_ascii_shortcut_is_the_datas_own():
    from curate import lookalike

    table = lookalike._prototypes()
    assert {k: v for k, v in table.items() if k < 128} == lookalike._ASCII
    replaced = "".join(chr(k) for k in lookalike._ASCII)  # applied one after another, in any order
    assert not any(c in replaced for v in lookalike._ASCII.values() for c in str(v))
    assert dict(lookalike._ASCII_REPLACE) == {chr(k): v for k, v in lookalike._ASCII.items()}
    for ch in map(chr, range(128)):  # and gives what the full table gives
        full = unicodedata.normalize("NFD", unicodedata.normalize("NFD", ch).translate(table))
        assert lookalike.skeleton(ch) == full.translate(table) == full


@given(hs.text(max_size=12))
def test_a_skeleton_is_its_own_skeleton(text):
    from curate.lookalike import skeleton

    assert skeleton(skeleton(text)) == skeleton(text)  # UTS #39: the skeleton is idempotent


def test_benchmark_ids_are_normalised(bad_store, tmp_path):
    rows = [
        {
            "ID": "q1",
            "Text": "t",
            "Image": "x.png",
            "Output1": "a",
            "Output2": "b",
            "Better": "Output1",
            "Category": "vqa",
        },
        {
            "ID": "ｑ1",
            "Text": "t",
            "Image": "x.png",
            "Output1": "a",
            "Output2": "b",
            "Better": "Output1",
            "Category": "vqa",
        },
    ]
    _expect(
        bad_store,
        _items(tmp_path / "mmrb.jsonl", rows),
        [(2, "id")] * 4,
        ["duplicate item id 'mmrb:q1'"],
        fn=ingest_pairs,
        format="mmrb",
    )


@given(hs.text(max_size=12))
def test_normalised_ids_are_stable_and_visible(text):
    from curate.ingest.common import normalise_id

    norm, why = normalise_id(text)
    if why is None:
        assert normalise_id(norm) == (norm, None) and norm == norm.strip() and norm.isprintable()


# -- 6. two `mmrb assign` at once ------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.both_backends
def test_concurrent_assign_runs_never_overassign_or_crash(db_url, tmp_path):
    """Two assignment runs at once (other annotators each, so both would find work), RACES
    times: each pair ends with exactly k annotators, no run crashes, nothing is half done."""
    from tests.support.pairs import seed_pairs

    images = tmp_path / "img"
    for r in range(RACES):
        with Store(db_url, images=images) as store:  # closed before forking: children open their own
            ids = seed_pairs(store, 30, start=r * 30)
        argv = ["assign", "--db", db_url, "--images", str(images), "-k", "2", "--seed", "3"]
        results = _race([argv + ["--annotators", "a,b"], argv + ["--annotators", "c,d"]], tmp_path)
        for rc, err in results:
            assert rc == 0 and err == "", results
        with Store(db_url, images=images) as store:
            per_pair: dict[str, set[str]] = {}
            for a in store.assignments():
                per_pair.setdefault(a.pair_id, set()).add(a.annotator)
            assert all(len(per_pair.get(p, ())) == 2 for p in ids), (r, [per_pair.get(p) for p in ids[:3]])
            for name in "abcd":  # queues stay contiguous: nothing half written
                seqs = sorted(a.seq for a in store.assignments(annotator=name))
                assert seqs == list(range(len(seqs)))


def test_assign_retries_a_lost_race_and_gives_up_in_one_line(sqlite_store, monkeypatch):
    from sqlalchemy.exc import IntegrityError

    from curate import assign as assign_mod
    from curate.errors import MmrbError
    from tests.support.pairs import seed_pairs

    seed_pairs(sqlite_store, 4)
    real = sqlite_store.add_assignments
    calls = []

    def lose_once(rows, conn=None):
        calls.append(1)
        if len(calls) == 1:
            real(rows, conn=conn)  # half of this attempt is written, then it fails
            raise IntegrityError("INSERT", {}, Exception("duplicate key value violates assignments_pkey"))
        return real(rows, conn=conn)

    monkeypatch.setattr(sqlite_store, "add_assignments", lose_once)
    rep = assign(sqlite_store, k=2, annotators=["a", "b", "c"])
    assert len(calls) == 2 and rep.created == 8 and len(sqlite_store.assignments()) == 8

    def always(rows, conn=None):
        raise IntegrityError("INSERT", {}, Exception("duplicate key"))

    seed_pairs(sqlite_store, 2, start=10)
    monkeypatch.setattr(sqlite_store, "add_assignments", always)
    with pytest.raises(MmrbError) as e:
        assign(sqlite_store, k=2, annotators=["a", "b", "c"])
    assert "\n" not in str(e.value) and "nothing was assigned" in str(e.value)
    assert len(sqlite_store.assignments()) == 8 and assign_mod.ATTEMPTS == 3


# -- 7. killed builds leave no hidden folders behind ---------------------------------------
def _stalled_build(db: str, images: str, out: str, writing) -> None:
    """A build that is still running: it stops for good where it writes the Hugging Face
    dataset (its hidden folder made), after saying so through ``writing``."""
    from curate.benchmark import build, export
    from tests.support.build_store import RULES

    def stall(*args, **kwargs) -> None:
        writing.set()
        while True:
            signal.pause()  # until the test kills it

    export.write_hf = stall
    with Store(db, images=images) as store:
        build(store, RULES, out)


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def _start_stalled_build(*args) -> multiprocessing.Process:
    writing = FORK.Event()
    child = FORK.Process(target=_stalled_build, args=(*args, writing))
    child.start()
    assert writing.wait(120), "the build never reached its export"
    return child


@pytest.mark.slow
def test_a_killed_build_is_cleaned_by_the_next_one_but_a_running_one_is_not(sqlite_store, tmp_path):
    from curate.benchmark import build
    from tests.support.build_store import RULES, seed_store

    seed_store(sqlite_store)
    out = tmp_path / "bench"
    args = (sqlite_store.db, str(sqlite_store.images.root), str(out))
    killed = _start_stalled_build(*args)
    os.kill(killed.pid, signal.SIGKILL)
    killed.join()
    (dead,) = _leftovers(out)  # what the issue saw: left behind forever

    running = _start_stalled_build(*args)
    try:
        # the next build removed the killed one's folder and made its own
        assert dead not in _leftovers(out)
        (alive,) = _leftovers(out)
        build(sqlite_store, RULES, out)  # another build meanwhile: the running one's folder stays
        assert _leftovers(out) == [alive] and (out / "build.json").is_file()
    finally:
        os.kill(running.pid, signal.SIGKILL)
        running.join()
    build(sqlite_store, RULES, out)
    assert _leftovers(out) == []


def test_a_build_killed_while_swapping_folders_gets_its_previous_build_back(sqlite_store, tmp_path):
    from curate.benchmark import build, remove_leftovers
    from tests.support.build_store import RULES, seed_store

    seed_store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    manifest = (out / "build.json").read_text()
    old = tmp_path / ".bench.old-x"  # killed after moving the old build aside, before the new one came in
    old.mkdir()
    os.rename(out, old / "bench")
    assert remove_leftovers(out) == [old]
    assert (out / "build.json").read_text() == manifest and _leftovers(out) == []


def test_status_finds_a_stored_file_of_the_recorded_size_that_is_no_image(sqlite_store, tmp_path):
    write_image(tmp_path / "img/a.png")
    ingest_items(
        sqlite_store,
        _items(tmp_path / "x.jsonl", [{"id": "i", "prompt": "p", "category": "vqa", "image": "img/a.png"}]),
    )
    path = sqlite_store.image_path(sqlite_store.get_item("i").images[0].sha256)
    data = path.read_bytes()
    path.write_bytes(b"\0" * 8 + data[8:])  # the PNG signature gone, the size unchanged
    st = collect(sqlite_store)
    assert st.images == {"broken": 1} and st.broken_examples[0]["problem"] == "unreadable (UnidentifiedImageError)"


def test_status_counts_files_not_rows(sqlite_store, tmp_path, capsys):
    from curate.commands import status as status_cmd

    for n in range(3):
        write_image(tmp_path / f"img/{n}.png", color=(n * 80, 0, 0))
    rows = [{"id": f"i{n}", "prompt": "p", "category": "vqa", "images": [f"img/{n % 3}.png"]} for n in range(5)]
    ingest_items(sqlite_store, _items(tmp_path / "x.jsonl", rows))
    first = sqlite_store.get_item("i0").images[0]
    sqlite_store.image_path(first.sha256).unlink()  # i0 and i3 name it
    second = sqlite_store.image_path(sqlite_store.get_item("i1").images[0].sha256)
    second.write_bytes(second.read_bytes()[:50])  # truncated
    st = collect(sqlite_store)
    assert st.images == {"ok": 1, "broken": 4} and st.broken_files == 2
    assert {e["item"]: e["problem"].split(" ")[0] for e in st.broken_examples} == {
        "i0": "file",
        "i3": "file",
        "i1": "50",
        "i4": "50",
    }
    assert counts(sqlite_store)["item_images"] == 5  # the rows alone would say 5 stored
    rc, out, _ = run_cli(status_cmd, ["--db", sqlite_store.db, "--images", str(sqlite_store.images.root)], capsys)
    assert rc == 1 and "5 references, 1 stored and readable" in out and "BROKEN: 4 references to 2 stored files" in out
