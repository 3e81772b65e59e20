"""mmrb publish: the real huggingface_hub client against a loopback Hub (tests/support/fake_hub.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.errors import MmrbError
from curate.publish import plan_lines, upload_plan
from tests.support.command_runner import run_command
from tests.support.fake_hub import FakeHub

CARD = "---\nlicense: cc-by-4.0\npretty_name: tiny\n---\n# tiny\n"


def built(root: Path) -> Path:
    """A tiny folder shaped like a build's output."""
    (root / "images").mkdir(parents=True)
    (root / "README.md").write_text(CARD, encoding="utf-8")
    (root / "build.json").write_text('{"triplets": 1}\n', encoding="utf-8")
    (root / "triplets.jsonl").write_text('{"id": "p1"}\n', encoding="utf-8")
    (root / "images" / "ab12.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    return root


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with FakeHub(token="hf_secret") as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        monkeypatch.setenv("HF_TOKEN", "hf_secret")
        yield fake


def publish(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = run_command("publish", argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_dry_run_lists_every_file_with_its_size_and_sends_nothing(hub, tmp_path, capsys):
    folder = built(tmp_path / "b")
    rc, out, _ = publish([str(folder), "team/bench", "--dry-run"], capsys)
    assert rc == 0 and hub.requests == []
    listed = {line.split()[-1]: int(line.split()[0].replace(",", "")) for line in out.splitlines()[1:-1]}
    on_disk = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}
    assert listed == on_disk
    assert out.splitlines()[-1] == f"4 files, {sum(on_disk.values())} bytes"


def test_publish_creates_the_dataset_repo_and_sends_every_file_in_one_commit(hub, tmp_path, capsys):
    folder = built(tmp_path / "b")
    rc, out, err = publish([str(folder), "team/bench", "--private"], capsys)
    assert (rc, err) == (0, "")
    assert hub.paths() == [
        "POST /api/repos/create",
        "POST /api/validate-yaml",
        "POST /api/datasets/team/bench/preupload/main",
        "POST /api/datasets/team/bench/commit/main",
    ]
    create = next(r for r in hub.requests if r.path == "/api/repos/create").json()
    assert (create["name"], create["organization"], create["type"]) == ("bench", "team", "dataset")
    assert create.get("private") is True or create.get("visibility") == "private"
    assert all(r.headers["authorization"] == "Bearer hf_secret" for r in hub.requests if "/api/agent" not in r.path)
    [commit] = hub.commits
    assert commit.files == {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert commit.revision == "main" and "4 files" in commit.summary
    assert out.startswith("uploaded 4 files") and commit.repo_id in out


def test_an_existing_repo_is_committed_to_and_a_revision_is_a_branch(hub, tmp_path, capsys):
    folder = built(tmp_path / "b")
    hub.repos.add("dataset:team/bench")
    rc, _, err = publish([str(folder), "team/bench", "--revision", "v1"], capsys)
    assert (rc, err) == (0, "")
    assert "POST /api/datasets/team/bench/branch/v1" in hub.paths()
    assert [(c.repo_id, c.revision) for c in hub.commits] == [("team/bench", "v1")]
    # the branch now exists: a second publish commits to it again
    assert publish([str(folder), "team/bench", "--revision", "v1"], capsys)[0] == 0
    assert len(hub.commits) == 2


@pytest.mark.parametrize(
    ("token", "fail", "says"),
    [
        ("hf_wrong", {}, "the token was refused (401)"),
        ("hf_secret", {"/commit/": 404}, "team/bench not found (404)"),
        ("hf_secret", {"/preupload/": 403}, "the token may not write there (403)"),
        ("hf_secret", {"/api/repos/create": 400}, "the Hub answered 400"),
    ],
)
def test_a_refusal_is_one_error_line_and_no_commit(hub, tmp_path, capsys, monkeypatch, token, fail, says):
    monkeypatch.setenv("HF_TOKEN", token)
    hub.fail.update(fail)
    rc, out, err = publish([str(built(tmp_path / "b")), "team/bench"], capsys)
    assert rc == 1 and out == "" and hub.commits == []
    assert err.count("\n") == 1 and err.startswith("mmrb publish: error: publishing to team/bench: ") and says in err


def test_no_token_is_said_before_anything_is_sent(hub, tmp_path, capsys, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "no-tokens"))
    rc, _, err = publish([str(built(tmp_path / "b")), "team/bench"], capsys)
    assert rc == 1 and hub.requests == []
    assert err == "mmrb publish: error: no Hugging Face token: set HF_TOKEN or run `hf auth login`\n"


def test_an_unreachable_hub_is_one_error_line(hub, tmp_path, capsys, monkeypatch):
    url = hub.url
    hub.__exit__(None, None, None)  # nothing listens there any more
    monkeypatch.setenv("HF_ENDPOINT", url)
    rc, _, err = publish([str(built(tmp_path / "b")), "team/bench"], capsys)
    assert rc == 1 and err.count("\n") == 1 and "could not reach the Hub" in err


def test_a_folder_that_is_not_a_build_is_refused(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "README.md").write_text(CARD, encoding="utf-8")
    with pytest.raises(MmrbError, match=r"not a built benchmark \(no build.json\)"):
        upload_plan(tmp_path / "x")
    with pytest.raises(MmrbError, match="no such folder"):
        upload_plan(tmp_path / "missing")
    folder = built(tmp_path / "b")
    (folder / "link").symlink_to(tmp_path / "x" / "README.md")
    with pytest.raises(MmrbError, match="link: a symbolic link"):
        upload_plan(folder)


names = st.text(alphabet="abcxyz019_-", min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(tree=st.dictionaries(st.lists(names, min_size=1, max_size=3).map("/".join), st.binary(max_size=40), max_size=8))
def test_the_plan_is_every_file_once_sorted_with_its_size(tmp_path_factory, tree):
    root = built(tmp_path_factory.mktemp("plan"))
    written = {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()}
    for rel, data in tree.items():
        path = root / "extra" / rel
        if any(q.is_file() for q in [path, *path.parents]) or (path.exists() and path.is_dir()):
            continue  # a name already a file, or a file's name already a folder
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written[f"extra/{rel}"] = len(data)
    files = upload_plan(root)
    assert [f.path for f in files] == sorted(f.path for f in files)
    assert {f.path: f.size for f in files} == written
    assert plan_lines(files)[-1].startswith(f"{len(files)} file")


def test_the_card_yaml_of_a_commit_was_validated_by_the_hub_first(hub, tmp_path, capsys):
    folder = built(tmp_path / "b")
    publish([str(folder), "team/bench"], capsys)
    validate = next(r for r in hub.requests if r.path == "/api/validate-yaml")
    assert json.loads(validate.body) == {"content": CARD, "repoType": "dataset"}


def test_a_real_build_is_published_whole_and_its_card_reads_back(hub, sqlite_store, tmp_path, capsys):
    from huggingface_hub import DatasetCard

    from curate.benchmark import build
    from tests.support.build_store import RULES, seed_store

    seed_store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    rc, _, err = publish([str(out), "team/fixture"], capsys)
    assert (rc, err) == (0, "")
    [commit] = hub.commits
    assert commit.files == {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    card = DatasetCard(commit.files["README.md"].decode(), ignore_metadata_errors=False)
    assert card.data.pretty_name == RULES.name and card.data.annotations_creators == ["expert-generated"]
