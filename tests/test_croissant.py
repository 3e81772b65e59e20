"""The build's croissant.json (curate/formats/croissant.py): mlcroissant, the reference reader,
validates it and reads the Parquet file's records through it, and they are the triplets."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from pathlib import Path

import mlcroissant as mlc
import pytest
from hypothesis import given
from hypothesis import strategies as hs
from PIL import Image

from curate.benchmark import build, export
from curate.benchmark.card import croissant_configs, write_croissant
from curate.benchmark.rules import Rules
from curate.errors import MmrbError
from curate.formats import croissant
from tests.support.build_store import RULES, seed_store
from tests.support.command_runner import run_command
from tests.test_build_mmrb2 import RULES as MMRB2_RULES
from tests.test_build_mmrb2 import seed as seed_mmrb2

# what mlcroissant says of every build: the two properties it recommends and the build does not
# know (no date is written, to keep the bytes of a build the same; no version is given)
RECOMMENDED = {"datePublished", "version"}


def validated(path: Path) -> mlc.Dataset:
    """The description read by mlcroissant: any error raises; its warnings are only RECOMMENDED."""
    ds = mlc.Dataset(jsonld=path)
    warned = {w.split('"https://schema.org/')[1].split('"')[0] for w in ds.metadata.ctx.issues.warnings}
    assert warned == RECOMMENDED, ds.metadata.ctx.issues.warnings
    return ds


def text(v: bytes | None) -> str | None:
    return None if v is None else v.decode()  # mlcroissant gives sc:Text as bytes


def pixels(im: Image.Image) -> tuple:
    return im.size, im.mode, im.tobytes()


def file_pixels(path: Path) -> tuple:
    with Image.open(path) as im:
        return pixels(im)


def triplet_rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "triplets.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_build_s_description_validates_and_reads_back_as_its_triplets(sqlite_store, tmp_path):
    seed_store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    doc = json.loads((out / croissant.FILE_NAME).read_text(encoding="utf-8"))
    parquet = out / export.PARQUET
    [file_object] = [d for d in doc["distribution"] if d["@type"] == "cr:FileObject"]
    sha = hashlib.sha256(parquet.read_bytes()).hexdigest()
    assert (file_object["contentUrl"], file_object["sha256"]) == (export.PARQUET, sha)
    assert json.loads((out / "build.json").read_text())["files"][export.PARQUET] == sha
    assert doc["license"] == "https://creativecommons.org/licenses/by-nc/4.0/"  # RULES: cc-by-nc-4.0
    assert doc["name"] == RULES.name and doc["citeAs"].startswith("@misc{fixture_benchmark,")
    [images] = [d for d in doc["distribution"] if d["@type"] == "cr:FileSet"]
    assert images["includes"] == "images/*.png" and images["encodingFormat"] == "image/png"

    ds = validated(out / croissant.FILE_NAME)
    records = list(ds.records("default"))
    rows = triplet_rows(out)
    assert len(records) == len(rows) == 6
    for rec, row in zip(records, rows, strict=True):
        got = {k.removeprefix("default/"): v for k, v in rec.items()}
        assert set(got) == set(row)  # every column described, none made up
        for k in ("id", "prompt", "chosen", "rejected", "category", "source", "chosen_model", "rejected_model", "task"):
            assert text(got[k]) == row[k], k
        assert (got["n_labels"], got["agreement"]) == (row["n_labels"], row["agreement"])
        assert [pixels(im) for im in got["images"]] == [file_pixels(out / p) for p in row["images"]]
    assert any(r["images"] == [] for r in rows)  # p11: its image is missing, an empty list reads back


def test_responses_with_images_and_a_licence_without_a_url(sqlite_store, tmp_path):
    """The parts columns (a list of {text, image, missing}) are described as repeated fields
    with sub-fields, the licence "other" as a CreativeWork with its note; both validate. Their
    parts read back through a copy whose image sub-fields are also marked repeated: mlcroissant
    1.1.1 casts a list's image sub-field as one image, whatever the description says."""
    seed_mmrb2(sqlite_store, tmp_path)
    rules = Rules(resamples=10, name=MMRB2_RULES.name, license="other", license_note="Ask the owners.")
    out = tmp_path / "bench"
    build(sqlite_store, rules, out)
    path = out / croissant.FILE_NAME
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["license"] == {"@type": "sc:CreativeWork", "name": "other", "description": "Ask the owners."}
    fields = {f["name"]: f for f in doc["recordSet"][0]["field"]}
    parts = fields["default/chosen_parts"]
    assert parts["repeated"] is True and "source" not in parts
    sub = {f["name"]: (f["dataType"], f["source"].get("transform")) for f in parts["subField"]}
    assert sub == {
        "default/chosen_parts/text": ("sc:Text", {"jsonPath": "text"}),
        "default/chosen_parts/image": ("sc:ImageObject", {"jsonPath": "image.bytes"}),
        "default/chosen_parts/missing": ("sc:Text", {"jsonPath": "missing"}),
    }
    validated(path)

    with pytest.raises(Exception) as failed:  # the limitation above: when this reads, drop the copy below
        list(validated(path).records("default"))
    causes = [failed.value]
    while causes[-1].__cause__ is not None:
        causes.append(causes[-1].__cause__)
    assert "is not accepted for an image" in str(causes[-1])
    for f in doc["recordSet"][0]["field"]:
        for s in f.get("subField", []):
            if s["dataType"] == "sc:ImageObject":
                s["repeated"] = True
    patched = out / "croissant-read.json"  # beside the Parquet file: its contentUrl is relative
    patched.write_text(json.dumps(doc), encoding="utf-8")
    records = list(validated(patched).records("default"))
    rows = triplet_rows(out)
    assert len(records) == len(rows) == 5
    seen = set()
    for rec, row in zip(records, rows, strict=True):
        for k in ("chosen_parts", "rejected_parts"):
            got = [
                (text(p[f"default/{k}/text"]), p[f"default/{k}/image"], text(p[f"default/{k}/missing"]))
                for p in rec[f"default/{k}"]
            ]
            want = row.get(k, [])
            assert len(got) == len(want), (row["id"], k)
            for (t, im, missing), w in zip(got, want, strict=True):
                if "text" in w:
                    assert (t, im, missing) == (w["text"], None, None)
                    seen.add("text")
                elif w["image"] is None:
                    assert (t, im, missing) == (None, None, w["missing"])
                    seen.add("missing")
                else:
                    assert (t, missing) == (None, None) and pixels(im) == file_pixels(out / w["image"])
                    seen.add("image")
    assert seen == {"text", "image", "missing"}  # the fixture has each kind of part


def test_another_config_is_one_more_file_object_and_record_set(sqlite_store, tmp_path):
    """The hook for a second config of the card (the raw labels' ``annotations``): its Parquet
    file and records beside the triplets', read by mlcroissant."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    seed_store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    pq.write_table(pa.table({"pair_id": ["p00", "p01"], "seconds": [1.5, 2.0]}), out / "data" / "labels.parquet")
    labels = croissant.Config(
        "annotations", "data/labels.parquet", "Raw labels.", {"pair_id": "The pair.", "seconds": "Time taken."}
    )
    about = croissant.About(name="x", description="y", license="mit", citation="@misc{x}")
    doc = croissant.describe(out, about, [*croissant_configs(), labels])
    croissant.write(out / "two.json", doc)
    assert doc["license"] == "https://opensource.org/license/mit"
    assert [d["@id"] for d in doc["distribution"] if d["@type"] == "cr:FileObject"] == [
        export.PARQUET,
        "data/labels.parquet",
    ]
    ds = validated(out / "two.json")
    got = [{k: text(v) if isinstance(v, bytes) else v for k, v in r.items()} for r in ds.records("annotations")]
    assert got == [
        {"annotations/pair_id": "p00", "annotations/seconds": 1.5},
        {"annotations/pair_id": "p01", "annotations/seconds": 2.0},
    ]
    assert len(list(itertools.islice(ds.records("default"), 2))) == 2


def test_the_description_is_a_function_of_the_build(sqlite_store, tmp_path):
    """The same build folder gives the same bytes (keys sorted, no dates), and the Parquet file's
    hash changes with its bytes."""
    seed_store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    first = (out / croissant.FILE_NAME).read_bytes()
    write_croissant(out, RULES, 6)
    assert (out / croissant.FILE_NAME).read_bytes() == first
    text_ = first.decode()
    assert json.dumps(json.loads(text_), indent=1, sort_keys=True, ensure_ascii=False) + "\n" == text_
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(moved / export.PARQUET).slice(1), moved / export.PARQUET)  # one row less
    write_croissant(moved, RULES, 6)
    assert (moved / croissant.FILE_NAME).read_bytes() != first


def parquet_with(tmp_path: Path, features, rows: dict) -> Path:
    from datasets import Dataset

    (tmp_path / "data").mkdir(parents=True, exist_ok=True)
    Dataset.from_dict(rows, features=features).to_parquet(str(tmp_path / "data" / "t.parquet"))
    return tmp_path


def test_columns_map_to_croissant_types_and_others_are_refused(tmp_path):
    from datasets import Features, List, Value

    about = croissant.About(name="x", description="y", license="other", citation="")
    features = Features({"b": Value("bool"), "i": Value("int64"), "u": Value("uint8"), "f": Value("float32")})
    root = parquet_with(tmp_path, features, {"b": [True], "i": [1], "u": [2], "f": [0.5]})
    config = croissant.Config("c", "data/t.parquet", "d", {k: k for k in features})
    [rs] = croissant.describe(root, about, [config])["recordSet"]
    assert [f["dataType"] for f in rs["field"]] == ["sc:Boolean", "sc:Integer", "sc:Integer", "sc:Float"]
    assert "key" not in rs

    with pytest.raises(MmrbError, match=r"t\.parquet: the column 'f' has no description in the 'c' config"):
        croissant.describe(root, about, [croissant.Config("c", "data/t.parquet", "d", {"b": "", "i": "", "u": ""})])

    nested = Features({"x": List(List(Value("string")))})
    root = parquet_with(tmp_path / "n", nested, {"x": [[["a"]]]})
    with pytest.raises(MmrbError, match="'x' holds a nested list"):
        croissant.describe(root, about, [croissant.Config("c", "data/t.parquet", "d", {"x": ""})])

    dated = Features({"when": Value("timestamp[s]")})
    root = parquet_with(tmp_path / "d", dated, {"when": [None]})
    with pytest.raises(MmrbError, match="'when' holds Value"):
        croissant.describe(root, about, [croissant.Config("c", "data/t.parquet", "d", {"when": ""})])


@pytest.mark.parametrize(
    "hf_id, url",
    [
        ("cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/"),
        ("cc-by-nc-sa-3.0", "https://creativecommons.org/licenses/by-nc-sa/3.0/"),
        ("cc-by-nc-nd-4.0", "https://creativecommons.org/licenses/by-nc-nd/4.0/"),
        ("cc-by-2.5", "https://creativecommons.org/licenses/by/2.5/"),
        ("cc0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
        ("apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0"),
        ("other", None),
        ("unknown", None),
        ("cc-by-sa-nc-4.0", None),  # not a licence: the order is by-nc-sa
        ("gpl-3.0", None),  # -only or -or-later: the id does not say which
    ],
)
def test_licence_urls_where_the_id_names_one_licence(hf_id, url):
    assert croissant.license_url(hf_id) == url


@given(hs.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.-", max_size=20))
def test_a_licence_url_is_only_ever_a_known_licence_s(hf_id):
    url = croissant.license_url(hf_id)
    if hf_id.startswith("cc-"):
        assert url is None or url.startswith("https://creativecommons.org/licenses/by")
    else:
        assert url == croissant._LICENSE_URLS.get(hf_id)


def test_the_publish_dry_run_lists_it(sqlite_store, tmp_path, capsys, monkeypatch):
    """mmrb publish sends the whole folder: croissant.json goes with the card."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    seed_store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    capsys.readouterr()
    assert run_command("publish", [str(out), "team/fixture", "--dry-run"]) == 0
    listed = [line.split()[-1] for line in capsys.readouterr().out.splitlines()[1:-1]]
    assert croissant.FILE_NAME in listed and "README.md" in listed


def test_the_images_folder_is_one_file_set_per_file_type(tmp_path):
    from datasets import Features, Value

    root = parquet_with(tmp_path, Features({"id": Value("string")}), {"id": ["a"]})
    (root / "images").mkdir()
    for name in ("b.png", "a.jpg", "c.JPG", "d.xyz", "e.png"):
        (root / "images" / name).write_bytes(b"x")
    about = croissant.About(name="x", description="y", license="other", citation="")
    doc = croissant.describe(root, about, [croissant.Config("c", "data/t.parquet", "d", {"id": ""})])
    sets = [(d["includes"], d["encodingFormat"]) for d in doc["distribution"] if d["@type"] == "cr:FileSet"]
    # each suffix as spelled (a FileSet's glob is case-sensitive); a type pillow gives no media
    # type is said to be bytes, not guessed
    assert sets == [
        ("images/*.JPG", "image/jpeg"),
        ("images/*.jpg", "image/jpeg"),
        ("images/*.png", "image/png"),
        ("images/*.xyz", "application/octet-stream"),
    ]
