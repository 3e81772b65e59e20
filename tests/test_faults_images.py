"""Faults and attacks on the image store (issue 25): a stored file replaced by a symbolic link
(to a secret, to an image outside the store, through a linked folder) is never served,
thumbnailed or counted as readable; image fields of the wrong type, and image paths that are
folders, are clear errors naming file, line and field; the full-size view of an unreadable
prompt image is the placeholder with its reason."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from curate.errors import InputError
from curate.images import ImageProblem
from curate.ingest import ingest_items
from curate.status import collect, render
from tests.ingest_helpers import assert_nothing_written, png, run_cli, write_image
from tests.support.images import swap_for_link

SECRET = b"MMRB_DB=postgresql://mmrb:hunter2-secret@db.internal/mmrb\n"


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _fill(store, tmp_path: Path) -> tuple[str, str]:
    """One item with a prompt image and a candidate whose response has an image:
    (the prompt image's sha256, the response image's sha256)."""
    write_image(tmp_path / "data/in.png", "red")
    write_image(tmp_path / "data/out.png", "blue")
    row = {
        "id": "i1",
        "prompt": "p",
        "category": "vqa",
        "image": "in.png",
        "responses": [{"model": "painter", "text": ["Here:", {"image": "out.png"}]}],
    }
    ingest_items(store, _jsonl(tmp_path / "data/items.jsonl", [row]))
    prompt_sha = store.get_item("i1").images[0].sha256
    response_sha = store.candidates(ids=["i1:painter:0"])[0].images[0].sha256
    return prompt_sha, response_sha


def _secret(tmp_path: Path) -> Path:
    p = tmp_path / "outside/environ"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(SECRET)
    return p


TARGETS = ["secret", "/etc/passwd", "/proc/self/environ", "an image outside"]


def _target(tmp_path: Path, which: str) -> Path:
    if which == "secret":
        return _secret(tmp_path)
    if which == "an image outside":
        return write_image(tmp_path / "outside/pic.png", "green")
    return Path(which)


# -- 1. a stored file replaced by a symbolic link ----------------------------------------------
@pytest.mark.parametrize("which", TARGETS)
def test_a_stored_file_replaced_by_a_link_is_neither_served_nor_thumbnailed(store, tmp_path, which):
    from annotate.images_cache import image_bytes, original

    prompt_sha, response_sha = _fill(store, tmp_path)
    target = _target(tmp_path, which)
    for sha in (prompt_sha, response_sha):
        swap_for_link(store.image_path(sha), target)
        got = original(store, sha)
        assert isinstance(got, ImageProblem) and got.status == "outside", got
        assert "symbolic link" in str(got) and str(target) not in str(got)
        assert image_bytes(store, sha) is None
    assert not (store.images.root / "thumbs").exists() or not any((store.images.root / "thumbs").rglob("*.jpg"))


def test_a_link_inside_the_store_to_another_image_is_refused_too(store, tmp_path):
    from annotate.images_cache import image_bytes, original

    prompt_sha, response_sha = _fill(store, tmp_path)
    swap_for_link(store.image_path(response_sha), store.image_path(prompt_sha))
    got = original(store, response_sha)
    assert isinstance(got, ImageProblem) and "symbolic link" in str(got)
    assert image_bytes(store, response_sha) is None
    assert image_bytes(store, prompt_sha) is not None  # the real file is served as ever


def test_a_linked_folder_of_the_store_is_refused(store, tmp_path):
    """``<images>/c4`` itself a link to a folder outside holding ``<sha>.png``: a regular file,
    of the recorded size, outside the store."""
    from annotate.images_cache import image_bytes, original

    prompt_sha, _ = _fill(store, tmp_path)
    shard = store.image_path(prompt_sha).parent
    moved = tmp_path / "outside/shard"
    moved.parent.mkdir(parents=True, exist_ok=True)
    shard.rename(moved)
    shard.symlink_to(moved, target_is_directory=True)
    got = original(store, prompt_sha)
    assert isinstance(got, ImageProblem) and got.status == "outside"
    assert image_bytes(store, prompt_sha) is None
    st = collect(store)
    assert st.images == {"broken": 1} and st.broken_examples[0]["problem"] == "a symbolic link out of the image folder"


def test_a_cached_thumbnail_replaced_by_a_link_is_made_again_not_served(store, tmp_path):
    from annotate import images_cache

    prompt_sha, _ = _fill(store, tmp_path)
    jpeg = store.images.thumbnail(store.image_name(prompt_sha))
    assert jpeg.startswith(b"\xff\xd8")
    cached = store.images.root / "thumbs/1024" / f"{prompt_sha}.jpg"
    swap_for_link(cached, _secret(tmp_path))
    images_cache._thumb_bytes.cache_clear()
    got = images_cache.image_bytes(store, prompt_sha)
    assert got is not None and SECRET not in got and got.startswith(b"\xff\xd8")
    assert cached.is_file() and not cached.is_symlink()  # the link was replaced by a real thumbnail
    assert _secret(tmp_path).read_bytes() == SECRET  # and what it pointed at left alone


def test_a_linked_thumbnail_folder_is_never_written_through(store, tmp_path):
    from annotate import images_cache

    prompt_sha, _ = _fill(store, tmp_path)
    elsewhere = tmp_path / "outside/thumbs"
    elsewhere.mkdir(parents=True)
    (store.images.root / "thumbs").symlink_to(elsewhere, target_is_directory=True)
    images_cache._thumb_bytes.cache_clear()
    with pytest.raises(ImageProblem, match="out of the image folder"):
        store.images.thumbnail(store.image_name(prompt_sha))
    assert images_cache.image_bytes(store, prompt_sha) is None
    assert list(elsewhere.rglob("*")) == []


def test_files_are_found_by_their_content_hash_not_by_the_path_column(store, tmp_path):
    """A path column that names another file (a store edited by hand, or by an attacker) is
    not followed: the file is the one its hash names."""
    from sqlalchemy import text

    from annotate.images_cache import image_bytes, original

    prompt_sha, _ = _fill(store, tmp_path)
    with store.write() as c:
        c.execute(text("UPDATE images SET path = :p WHERE sha256 = :s"), {"p": "../outside/environ", "s": prompt_sha})
    _secret(tmp_path)
    assert store.image_name(prompt_sha) == f"{prompt_sha[:2]}/{prompt_sha}.png"
    assert store.image_path(prompt_sha) == store.images.root / prompt_sha[:2] / f"{prompt_sha}.png"
    assert set(store.image_paths([prompt_sha])) == {prompt_sha}
    assert collect(store).images == {"ok": 1}
    got = original(store, prompt_sha)
    assert not isinstance(got, ImageProblem) and got.data == png("red") and got.mime == "image/png"
    assert (got.width, got.height) == (40, 30) and image_bytes(store, prompt_sha) is not None


def test_names_that_are_no_content_hash_are_refused(store, tmp_path):
    from curate.images import stored_name

    prompt_sha, _ = _fill(store, tmp_path)
    good = f"{prompt_sha[:2]}/{prompt_sha}.png"
    assert store.images.read_stored(good) == png("red")
    a = "a" * 64
    for bad in (
        "",
        "../../etc/passwd",
        f"aa/{a}.png/..",
        f"ab/{a}.png",
        f"aa/{a}",
        f"aa/{a}.p/g",
        "aa/../" + good,
        good + "/",
    ):
        with pytest.raises(ImageProblem, match="not the name of a stored image"):
            store.images.read_stored(bad)
        assert store.images.check(bad, 1) == "not the name of a stored image"
    assert stored_name("../../etc/passwd", "PNG") is None and stored_name(a, "../x") is None
    assert stored_name(a.upper(), "PNG") is None and stored_name(a, "JPEG") == f"aa/{a}.jpg"
    assert store.image_path("../../etc/passwd") is None and store.image_paths(["../../etc/passwd"]) == {}


# -- mmrb status: response images are checked like prompt images -------------------------------
@pytest.mark.parametrize("which", ["secret", "an image outside"])
def test_status_reports_linked_response_and_prompt_images(store, tmp_path, capsys, which):
    from curate.commands import status as status_cmd

    prompt_sha, response_sha = _fill(store, tmp_path)
    assert collect(store).response_images == {"ok": 1}
    target = _target(tmp_path, which)
    swap_for_link(store.image_path(response_sha), target)
    st = collect(store)
    assert st.response_images == {"broken": 1} and st.response_broken_files == 1
    assert st.response_broken_examples == [
        {"candidate": "i1:painter:0", "source": "out.png", "problem": "a symbolic link out of the image folder"}
    ]
    assert st.images == {"ok": 1}
    swap_for_link(store.image_path(prompt_sha), target)
    st = collect(store)
    assert st.images == {"broken": 1} and st.broken_examples[0]["problem"] == "a symbolic link out of the image folder"
    text = render(st)
    assert "response images: 1 reference (broken 1)" in text
    assert "BROKEN: 1 response image reference to 1 stored file" in text and "i1:painter:0: out.png" in text
    rc, out, _ = run_cli(status_cmd, ["--db", store.db, "--images", str(store.images.root)], capsys)
    assert rc == 1 and "broken 1" in out and str(target) not in out


def test_status_exits_1_for_a_broken_response_image_alone(sqlite_store, tmp_path, capsys):
    from curate.commands import status as status_cmd

    _, response_sha = _fill(sqlite_store, tmp_path)
    args = ["--db", sqlite_store.db, "--images", str(sqlite_store.images.root)]
    assert run_cli(status_cmd, args, capsys)[0] == 0
    sqlite_store.image_path(response_sha).unlink()
    rc, out, _ = run_cli(status_cmd, args, capsys)
    assert rc == 1 and "response images: 1 reference (broken 1)" in out and "(file gone)" in out
    data = json.loads(run_cli(status_cmd, args + ["--json"], capsys)[1])
    assert data["response_broken_files"] == 1 and data["response_images"] == {"broken": 1}


# -- 2. image fields of the wrong type, image paths that are folders ----------------------------
B64_PNG = base64.b64encode(png()).decode("ascii")
# (value, what the message says): every one used to be a TypeError, an AttributeError or an
# IsADirectoryError out of images.py, or was taken as a path named "5"
BAD_VALUES = {
    "bytes int": ({"bytes": 5}, "image bytes: expected bytes or base64 text, got int"),
    "bytes list": ({"bytes": [1, 2]}, "image bytes: expected bytes or base64 text, got list"),
    "path int": ({"path": 5}, "image path: expected text, got int"),
    "path list": ({"path": ["a.png"]}, "image path: expected text, got list"),
    "bytes with a path int": ({"bytes": B64_PNG, "path": 5}, "image path: expected text, got int"),
}
FOLDERS = {
    "dir.png/": "image path is a folder: dir.png/",
    "dir.png": "image path is a folder: dir.png",
    ".": "image path is a folder: .",
}
# the image field of each format that takes images, as (format, row with IMAGE, field named)
FORMATS = {
    "items": ({"id": "i", "prompt": "p", "category": "vqa", "image": "IMAGE"}, "image"),
    "items list": ({"id": "i", "prompt": "p", "category": "vqa", "images": ["a.png", "IMAGE"]}, "images[1]"),
    "items response": (
        {"id": "i", "prompt": "p", "category": "vqa", "responses": [{"model": "m", "text": [{"image": "IMAGE"}]}]},
        "responses[0].text[0].image",
    ),
    "generic": (
        {"id": "p", "prompt": "q", "category": "vqa", "response_1": "a", "response_2": "b", "image": "IMAGE"},
        "image",
    ),
    "generic response": (
        {"id": "p", "prompt": "q", "category": "vqa", "response_1": [{"image": "IMAGE"}], "response_2": "b"},
        "response_1[0].image",
    ),
    "vlrewardbench": (
        {
            "id": "mathverse_1",
            "query": "q",
            "response": ["a", "b"],
            "human_ranking": [0, 1],
            "models": ["m1", "m2"],
            "image": "IMAGE",
        },
        "image",
    ),
    "vlrewardbench-text": (
        {"id": "mathverse_1", "prompt": "q", "chosen": "a", "rejected": "b", "image": "IMAGE"},
        "image",
    ),
    "mmrb": (
        {
            "ID": "x",
            "Text": "q",
            "Output1": "a",
            "Output2": "b",
            "Better": "Output1",
            "Image": "IMAGE",
            "Category": "vqa",
        },
        "Image",
    ),
    "mm-rlhf": (
        {"id": "x", "prompt": "q", "chosen": "a", "rejected": "b", "images": ["IMAGE"], "image": "mcq/x.png"},
        "images[0]",
    ),
}
# (MMRB2 names its images by file name: a value that is no text is refused by its reader)


def _put(row, value):
    if row == "IMAGE":
        return value
    if isinstance(row, dict):
        return {k: _put(v, value) for k, v in row.items()}
    if isinstance(row, list):
        return [_put(v, value) for v in row]
    return row


def _ingest(store, fmt: str, rows: list[dict], tmp_path: Path) -> tuple[int, Path]:
    """``mmrb ingest`` of ``rows`` in the format ``fmt`` (a key of FORMATS), beside a.png and
    a folder dir.png: (exit code, the file)."""
    from curate.cli import main

    write_image(tmp_path / "a.png")
    (tmp_path / "dir.png").mkdir(exist_ok=True)
    path = _jsonl(tmp_path / "rows.jsonl", rows)
    kind = fmt.split(" ")[0]
    where = ["items"] if kind == "items" else ["pairs", "--format", kind]
    return main(["ingest", *where, str(path), "--db", store.db, "--images", str(store.images.root)]), path


@pytest.mark.parametrize("bad", BAD_VALUES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_bad_image_values_are_clear_errors_on_import(bad_store, tmp_path, capsys, fmt, bad):
    row, field = FORMATS[fmt]
    value, message = BAD_VALUES[bad]
    rc, path = _ingest(bad_store, fmt, [_put(row, value)], tmp_path)
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err, err
    assert f"{path}:1 field '{field}': {message}" in err, err
    assert_nothing_written(bad_store)


@pytest.mark.parametrize("fmt", ["items", "items list", "items response"])
@pytest.mark.parametrize("folder", FOLDERS)
def test_an_image_path_that_is_a_folder_is_refused_by_name(bad_store, tmp_path, capsys, fmt, folder):
    row, field = FORMATS[fmt]
    rc, path = _ingest(bad_store, fmt, [_put(row, folder)], tmp_path)
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err, err
    assert f"{path}:1 field '{field}': {FOLDERS[folder]} (pass --allow-missing-images" in err, err
    assert_nothing_written(bad_store)


@pytest.mark.parametrize("fmt", ["generic", "generic response", "vlrewardbench", "vlrewardbench-text", "mmrb"])
def test_a_benchmarks_image_that_is_a_folder_is_recorded_missing_with_why(store, tmp_path, capsys, fmt):
    """Importing a benchmark's pairs records an image it cannot read as missing (the app shows
    a placeholder): a folder is one, with its reason, never an IsADirectoryError."""
    row, _ = FORMATS[fmt]
    id_field = "ID" if fmt == "mmrb" else "id"
    rows = [{**_put(row, folder), id_field: f"{row[id_field]}{n}"} for n, folder in enumerate(FOLDERS)]
    rc, _ = _ingest(store, fmt, rows, tmp_path)
    err = capsys.readouterr().err
    assert rc == 0 and "Traceback" not in err, err
    refs = [im for i in store.items() for im in i.images] + [im for c in store.candidates() for im in c.images]
    assert sorted((r.status, r.error) for r in refs) == sorted(("missing", why) for why in FOLDERS.values())


def test_a_folder_named_as_an_image_is_refused_by_the_image_store(tmp_path):
    from curate.images import ImageStore

    (tmp_path / "d.png").mkdir()
    images = ImageStore(tmp_path / "store")
    for source in ("d.png", "d.png/", ".", "./"):
        with pytest.raises(ImageProblem, match="image path is a folder"):
            images.read_source(source, tmp_path)


# scoring reads the same fields: the layouts that carry prompt images
DATASETS = {
    "mmrb": (
        {
            "ID": "x",
            "Text": "q",
            "Output1": "a",
            "Output2": "b",
            "Better": "Output1",
            "Image": "IMAGE",
            "Category": "g",
        },
        "Image",
    ),
    "vlrewardbench": (FORMATS["vlrewardbench"][0], "image"),
    "triplet": ({"id": "x", "prompt": "q", "chosen": "a", "rejected": "b", "images": ["a.png", "IMAGE"]}, "images[1]"),
    "triplet one": ({"id": "x", "prompt": "q", "chosen": "a", "rejected": "b", "image": "IMAGE"}, "image"),
}
TYPE_ERRORS = {k: v for k, v in BAD_VALUES.items() if not isinstance(v[0], str)}


@pytest.mark.parametrize("layout", DATASETS)
@pytest.mark.parametrize("bad", TYPE_ERRORS)
def test_bad_image_values_are_clear_errors_in_datasets(tmp_path, layout, bad):
    from mmrb_eval.datasets import read_dataset

    row, field = DATASETS[layout]
    value, message = TYPE_ERRORS[bad]
    path = tmp_path / "ds.jsonl"
    path.write_text(json.dumps(_put(row, value)) + "\n")
    with pytest.raises(InputError) as e:
        read_dataset(path)
    assert f"{path}:1 field '{field}': {message}" in str(e.value)


def test_score_with_a_bad_image_in_the_dataset_names_file_line_and_field(tmp_path, capsys):
    from curate.cli import main

    path = tmp_path / "ds.jsonl"
    path.write_text(json.dumps(_put(DATASETS["triplet one"][0], {"path": 5})) + "\n")
    judgments = tmp_path / "j.jsonl"
    judgments.write_text(json.dumps({"pair_id": "x", "verdict": "first"}) + "\n")
    rc = main(["score", "--dataset", str(path), "--judgments", str(judgments), "--format", "mmrb-studio"])
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err
    assert f"{path}:1 field 'image': image path: expected text, got int" in err


def test_a_path_or_data_uri_or_image_feature_is_still_read(tmp_path):
    from mmrb_eval.datasets import read_dataset

    row = DATASETS["triplet"][0]
    for value, want in (
        ("b.png", str(tmp_path / "b.png")),
        ({"path": "b.png", "bytes": None}, str(tmp_path / "b.png")),
        ({"path": "b.png", "bytes": B64_PNG}, str(tmp_path / "b.png")),
    ):
        path = tmp_path / "ds.jsonl"
        path.write_text(json.dumps(_put(row, value)) + "\n")
        assert read_dataset(path)[0].images == (str(tmp_path / "a.png"), want)


def test_good_image_features_are_still_imported(store, tmp_path):
    write_image(tmp_path / "a.png")
    rows = [
        {"id": "i1", "prompt": "p", "category": "vqa", "image": {"bytes": B64_PNG, "path": "named.png"}},
        {"id": "i2", "prompt": "p", "category": "vqa", "image": {"bytes": None, "path": "a.png"}},
        {"id": "i3", "prompt": "p", "category": "vqa", "image": {"bytes": B64_PNG}},
    ]
    ingest_items(store, _jsonl(tmp_path / "x.jsonl", rows))
    got = {i.id: i.images[0] for i in store.items()}
    assert all(r.status == "ok" for r in got.values())
    assert got["i1"].source == "named.png" and got["i2"].source == "a.png"


# -- the app: the full-size view (Z) -------------------------------------------------------------
@pytest.fixture
def app_images(db_url, tmp_path, monkeypatch):
    """The app over a store (each backend) with image pairs: pr0's responses are images
    (text to image), pr1 an edit of its prompt's image."""
    from curate.store import Store
    from tests.support.streamlit_server import seed_image_pairs, seed_store

    s = Store(db_url, images=tmp_path / "images")
    seed_store(s, n_pairs=1, annotators=("alice", "bob"))
    seed_image_pairs(s, ("alice", "bob"))
    monkeypatch.setenv("MMRB_DB", db_url)
    monkeypatch.setenv("MMRB_IMAGES", str(tmp_path / "images"))
    from annotate import images_cache

    images_cache._thumb_bytes.cache_clear()
    # every picture embedded in the page as a data: URI, so that a test sees what was served
    monkeypatch.setattr(images_cache, "_served", lambda *a: None)
    yield s
    from annotate import ui

    ui.close_stores()
    s.close()


def _served(at) -> bytes:
    """Everything the page holds, with each data: URI decoded (AppTest embeds the images)."""
    from tests.support.apptest import all_text

    text = all_text(at) + " ".join(str(e.proto) for e in at.get("imgs"))
    out = text.encode()
    for b64 in __import__("re").findall(r"data:[\w/+.-]+;base64,([A-Za-z0-9+/=]+)", text):
        out += base64.b64decode(b64)
    return out


def test_the_full_size_view_never_serves_a_linked_response_image(app_images, tmp_path):
    from tests.support.apptest import all_text, sign_in

    secret = _secret(tmp_path)
    a = app_images.candidates(ids=["ir0/a"])[0].images[0].sha256
    swap_for_link(app_images.image_path(a), secret)
    at = sign_in("alice")
    assert not at.exception, at.exception
    assert SECRET not in _served(at)
    next(x for x in at.button if x.key == "act_zoom").click().run()
    assert not at.exception, at.exception
    text = all_text(at)
    assert SECRET not in _served(at) and str(secret) not in text
    assert "Image missing" in text.split("mmrb-side-by-side")[1]
    assert "The image file is not a regular file in the image folder." in text


def _to_edit_pair(store) -> None:
    """Label pr0 for alice: pr1 (an edit of the prompt's image) is next in her queue."""
    from curate.model import Label

    store.save_label(Label("pr0", "alice", "correct", "correct", "first"))


@pytest.mark.parametrize("damage", ["garbage", "link", "gone"])
def test_the_full_size_view_of_a_broken_prompt_image_is_the_placeholder(app_images, tmp_path, damage):
    from tests.support.apptest import all_text, sign_in

    sha = app_images.get_item("ir1").images[0].sha256
    path = app_images.image_path(sha)
    if damage == "garbage":
        path.write_bytes(b"\0" * 64)
    elif damage == "link":
        swap_for_link(path, _secret(tmp_path))
    else:
        path.unlink()
    at = sign_in("alice")
    at.session_state["zoom"] = sha  # what Z on a pair with a prompt image opens
    at.run()
    assert not at.exception, at.exception
    text = all_text(at)
    assert "UnidentifiedImageError" not in text and str(app_images.images.root) not in text
    assert "Image missing" in text
    reason = {
        "garbage": "The image file could not be read.",
        "link": "The image file is not a regular file in the image folder.",
        "gone": "The image file is gone from the image folder.",
    }[damage]
    assert reason in text and SECRET not in _served(at)


def test_the_full_size_view_of_a_prompt_image_still_shows_it(app_images):
    from tests.support.apptest import all_text, sign_in

    sha = app_images.get_item("ir1").images[0].sha256
    at = sign_in("alice")
    at.session_state["zoom"] = sha
    at.run()
    assert not at.exception, at.exception
    assert "Original size 640 x 480 pixels" in all_text(at) and "Image missing" not in all_text(at)


def test_the_label_page_shows_the_placeholder_for_a_linked_prompt_image(app_images, tmp_path):
    from tests.support.apptest import all_text, sign_in

    _to_edit_pair(app_images)
    sha = app_images.get_item("ir1").images[0].sha256
    swap_for_link(app_images.image_path(sha), write_image(tmp_path / "outside/x.png", "green"))
    at = sign_in("alice")
    assert not at.exception, at.exception
    assert "Image missing" in all_text(at)


def test_label_studio_is_never_given_a_linked_image(sqlite_store, tmp_path):
    """The push to Label Studio uploads stored files (or hands it their paths): a link is an
    image it does not have, as one missing at import is."""
    from annotate.labelstudio.push import build_tasks
    from curate.model import Candidate, ImageRef, Item, Pair, Part, render_parts

    s = sqlite_store
    red, blue = (s.images.put(png(c)) for c in ("red", "blue"))
    s.add_images([red, blue])
    parts = (Part.of_image(ImageRef("out.png", blue.sha256, "ok", blue.width, blue.height)),)
    s.add_items([Item("i1", "Draw it.", "gen", images=(ImageRef("in.png", red.sha256, "ok", 40, 30),))])
    s.add_candidates(
        [Candidate("i1/a", "i1", "a", render_parts(parts), content=parts), Candidate("i1/b", "i1", "b", "No.")]
    )
    s.add_pairs([Pair("p1", "i1", "i1/a", "i1/b", "t")])
    _, files, _ = build_tasks(s, s.pairs(ids=["p1"]), 0)
    assert set(files) == {red.sha256, blue.sha256}
    for sha in (red.sha256, blue.sha256):
        swap_for_link(s.image_path(sha), _secret(tmp_path))
    (task,), files, warnings = build_tasks(s, s.pairs(ids=["p1"]), 0)
    assert files == {} and task["data"]["image"] == ""
    assert "[image not available: out.png]" in task["data"]["response_a"] + task["data"]["response_b"]
    assert any("no usable image" in w for w in warnings)


# -- the build copies stored files through the same checks -----------------------------------
@pytest.mark.parametrize("which", ["secret", "/proc/self/environ", "an image outside"])
def test_a_build_never_copies_what_a_planted_link_points_at(sqlite_store, tmp_path, which):
    """A prompt image and a response image replaced by links: the build treats both as
    missing images (as the filter and every other reader of the store's files do) and no
    file of the build holds the link's target."""
    from curate.benchmark import build
    from curate.benchmark.rules import Rules
    from curate.ingest import ingest_pairs
    from curate.model import Annotator, Label, Part

    store = sqlite_store
    write_image(tmp_path / "data/prompt.png", "red")
    write_image(tmp_path / "data/a.png", "blue")
    row = {
        "id": "g1",
        "prompt": "Edit it.",
        "category": "vqa",
        "image": "prompt.png",
        "response_1": [{"image": "a.png"}, "(an edit)"],
        "response_2": "No edit.",
        "preference": "1",
    }
    ingest_pairs(store, _jsonl(tmp_path / "data/pairs.jsonl", [row]), "generic")
    target = _target(tmp_path, which)
    shas = [store.get_item("g1").images[0].sha256]
    shas += [im.sha256 for c in store.candidates(item_id="g1") for im in c.images]
    assert len(shas) == 2
    for sha in shas:
        swap_for_link(store.image_path(sha), target)
    assert store.image_paths(shas) == {}  # no reader is given a link
    store.add_annotator(Annotator("ann"))
    store.add_labels([Label("g1", "ann", preference="first")])
    out = tmp_path / "bench"
    (t,) = build(store, Rules(resamples=10, missing_images="keep"), out).triplets
    assert t.images == () and t.chosen_parts[0] == Part.of_image("a.png", missing=True)
    leaked = target.read_bytes()[:40] if which != "/proc/self/environ" else b"PATH="
    for f in out.rglob("*"):
        if f.is_file():
            assert not f.is_symlink() and leaked not in f.read_bytes(), f
