"""Push to and pull from a real Label Studio server (started once per session on 127.0.0.1)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from label_studio_sdk.label_interface import LabelInterface
from PIL import Image

from annotate.labelstudio.client import Client, LabelStudioError
from annotate.labelstudio.config import CORRECTNESS_CHOICES, has_response_images, labeling_config
from annotate.labelstudio.pull import AnnotationProblem, pull
from annotate.labelstudio.push import left_side, push
from curate.errors import MmrbError
from curate.model import Annotator, Assignment, Candidate, ImageRef, Item, Pair, Part, render_parts
from tests.support.labelstudio_server import DOCUMENT_ROOT, PASSWORD, USERNAME, label_studio_fixture

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.labelstudio


@pytest.fixture(scope="session")
def label_studio():
    yield from label_studio_fixture()


@pytest.fixture
def client(label_studio):
    c = Client(label_studio.url, label_studio.token)
    yield c
    c.close()


def _title(tag: str) -> str:
    return f"t-{tag}-{uuid.uuid4().hex[:8]}"


def _png(color: str, size=(40, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def seed(store) -> None:
    """Five pairs to push (one without a usable image, two sharing an image) and a dropped one."""
    stored = [store.images.put(_png(c)) for c in ("red", "green", "blue")]
    store.add_images(stored)
    ref = [ImageRef(f"img{n}.png", s.sha256, "ok", s.width, s.height) for n, s in enumerate(stored)]
    items = [
        Item("i0", "What colour is the square?", "vqa", (ref[0],)),
        Item("i1", "Describe the image.", "vqa", (ref[1],)),
        Item("i2", "Is this image safe?", "safety", (ref[2],)),
        Item("i3", "Is this one safe too?", "safety", (ref[0],)),
        Item("i4", "What is shown?", "vqa", (ImageRef("gone.png", None, "missing", error="not found"),)),
    ]
    store.add_items(items)
    store.add_candidates(
        Candidate(f"{i.id}/{m}", i.id, m, f"model {m} answers {i.id}:\nline two") for i in items for m in ("a", "b")
    )
    pairs = [Pair(f"p{n}", f"i{n}", f"i{n}/a", f"i{n}/b", "test") for n in range(5)]
    pairs.append(Pair("p5", "i0", "i0/b", "i0/a", "test", status="dropped"))
    store.add_pairs(pairs)
    store.add_annotator(Annotator("lead", role="admin"))
    store.add_assignments(
        [
            Assignment("p0", "lead", "first", 0, batch="b1"),
            Assignment("p2", "lead", "first", 1, batch="b1"),
            Assignment("p1", "lead", "first", 2, batch="b2"),
        ]
    )


def seed_response_images(store) -> None:
    """Three pairs whose responses have images (category "gen"): text, image, text against one
    image; an interleaved response against plain text; a missing image against an image."""
    stored = {c: store.images.put(_png(c, (64, 48))) for c in ("orange", "purple", "teal")}
    store.add_images(stored.values())
    ref = {c: ImageRef(f"out/{c}.png", s.sha256, "ok", s.width, s.height) for c, s in stored.items()}

    def cand(cid: str, *parts) -> Candidate:
        content = tuple(Part.of_text(p) if isinstance(p, str) else Part.of_image(p) for p in parts)
        item, _, model = cid.partition("/")
        return Candidate(cid, item, model, render_parts(content), content=content)

    store.add_items([Item(f"g{n}", f"Draw picture {n}.", "gen") for n in range(3)])
    store.add_candidates(
        [
            cand("g0/a", "Here it is:", ref["orange"], "Sorted by size."),
            cand("g0/b", ref["purple"]),
            cand("g1/a", ref["teal"], "then", ref["orange"]),
            Candidate("g1/b", "g1", "b", "Only words, no pictures."),
            cand("g2/a", ImageRef("out/gone.png", None, "missing", error="not found"), "A sketch."),
            cand("g2/b", ref["teal"]),
        ]
    )
    store.add_pairs([Pair(f"r{n}", f"g{n}", f"g{n}/a", f"g{n}/b", "test") for n in range(3)])


def tasks_by_pair(client, project_id) -> dict[str, dict]:
    tasks = client.task_data(project_id)
    out = {t["data"]["pair_id"]: t for t in tasks}
    assert len(out) == len(tasks), "duplicate tasks for a pair"
    return out


def ls_user(client, email: str) -> int:
    for u in client.sdk.users.list():
        if u.email == email:
            return u.id
    return client.sdk.users.create(email=email, username=email.split("@")[0], password="pw-" + uuid.uuid4().hex).id


def result_as_seen(left: str, cf, cs, pref, rationale="", flag=None) -> list[dict]:
    """What an annotator who saw ``left`` as A submits for canonical answers."""
    inv = {v: k for k, v in CORRECTNESS_CHOICES.items()}
    ca, cb = (cf, cs) if left == "first" else (cs, cf)
    p = "Tie" if pref == "tie" else ("A" if pref == left else "B")
    res = [
        {"from_name": "correct_a", "to_name": "response_a", "type": "choices", "value": {"choices": [inv[ca]]}},
        {"from_name": "correct_b", "to_name": "response_b", "type": "choices", "value": {"choices": [inv[cb]]}},
        {"from_name": "preference", "to_name": "prompt", "type": "choices", "value": {"choices": [p]}},
        {"from_name": "rationale", "to_name": "prompt", "type": "textarea", "value": {"text": [rationale]}},
    ]
    if flag:
        res.append({"from_name": "flag", "to_name": "prompt", "type": "choices", "value": {"choices": [flag]}})
    return res


def snapshot(store) -> dict:
    with store.read() as c:
        return {
            "labels": store.labels(status=None, conn=c),
            "label_history": store.label_history(conn=c),
            "annotators": store.annotators(conn=c),
            "assignments": store.assignments(conn=c),
        }


# canonical answers per (pair, user): (correctness first, correctness second, preference, rationale)
PLAN = {
    ("p0", "alice"): ("correct", "incorrect", "first", "A names the colour"),
    ("p1", "alice"): ("correct", "correct", "tie", "both fine"),
    ("p2", "alice"): ("incorrect", "correct", "second", ""),
    ("p3", "alice"): ("unsure", "incorrect", "first", "hard to tell"),
    ("p4", "alice"): ("incorrect", "incorrect", "tie", "no image"),
    ("p0", "bob"): ("correct", "incorrect", "first", "same as alice"),
    ("p1", "bob"): ("correct", "incorrect", "first", "B is vague"),
    ("p2", "bob"): ("incorrect", "correct", "second", "B is right"),
}


def test_cli_push_and_pull_print_their_documented_json_keys(tmp_path, label_studio, monkeypatch, capsys):
    import json

    from curate.cli import main
    from curate.store import Store
    from tests.test_cli_json import documented

    docs = documented()
    db = str(tmp_path / "cli.db")
    with Store(db, images=tmp_path / "images") as s:
        seed(s)
    monkeypatch.setenv("MY_LS_KEY", label_studio.token)
    title = _title("json")
    common = ["--db", db, "--images", str(tmp_path / "images"), "--url", label_studio.url, "--project", title]
    common += ["--api-key-env", "MY_LS_KEY", "--json"]

    assert main(["labelstudio", "push", *common]) == 0
    out, err = capsys.readouterr()
    pushed = json.loads(out)  # one document; the warning of the missing image on stderr too
    assert set(pushed) == docs["labelstudio push"] and pushed["project_created"] is True
    assert pushed["selected"] == pushed["pushed"] == 5 and pushed["already"] == 0 and pushed["warnings"]
    assert all(f"warning: {w}" in err for w in pushed["warnings"])
    c = Client(label_studio.url, label_studio.token)
    tasks = tasks_by_pair(c, pushed["project_id"])
    user = ls_user(c, "json@example.com")
    for pair_id in ("p0", "p1"):
        t = tasks[pair_id]
        result = result_as_seen(t["data"]["left"], "correct", "incorrect", "first")
        c.sdk.annotations.create(id=t["id"], result=result, completed_by=user)
    c.sdk.annotations.create(id=tasks["p2"]["id"], result=[], completed_by=user, was_cancelled=True)
    c.close()

    assert main(["labelstudio", "pull", *common]) == 0
    pulled = json.loads(capsys.readouterr().out)
    assert set(pulled) == docs["labelstudio pull"] and pulled["project_id"] == pushed["project_id"]
    assert (pulled["annotations"], pulled["new"], pulled["updated"], pulled["unchanged"]) == (3, 2, 0, 0)
    assert pulled["cancelled"] == [{"pair_id": "p2", "annotator": pulled["annotators_created"][0]}]


@pytest.mark.slow
def test_push_annotate_pull_round_trip(store, client):
    seed(store)
    title = _title("rt")
    r = push(store, client, title, overlap=2)
    assert (r.project_created, r.selected, r.already, r.pushed, r.images_uploaded) == (True, 5, 0, 5, 3)
    assert any("no usable image" in w for w in r.warnings)
    project = client.get_project(r.project_id)
    assert project.maximum_annotations == 2 and project.label_config.strip() == labeling_config().strip()

    tasks = tasks_by_pair(client, r.project_id)
    assert sorted(tasks) == ["p0", "p1", "p2", "p3", "p4"]  # the dropped pair is not pushed
    for pid, t in tasks.items():
        d, pair = t["data"], store.get_pair(pid)
        assert d["left"] == left_side(pid)
        shown = (pair.first_id, pair.second_id) if d["left"] == "first" else (pair.second_id, pair.first_id)
        assert (d["left_id"], d["right_id"]) == shown
        assert d["response_a"] == f"model {shown[0][-1]} answers {pair.item_id}:\nline two"
        item = store.get_item(pair.item_id)
        if item.images[0].sha256 is None:
            assert d["image"] == ""
            continue
        got = httpx.get(
            client.url + d["image"],
            headers={"Authorization": f"Token {client.sdk._client_wrapper._tokens_client.api_key}"},
        )
        assert got.status_code == 200
        assert got.content == store.image_path(item.images[0].sha256).read_bytes()
    assert {tasks["p0"]["data"]["image"]} == {tasks["p3"]["data"]["image"]}  # one upload per image
    assert len({t["data"]["left"] for t in tasks.values()}) == 2  # both orders occur

    again = push(store, client, title, overlap=2)
    assert (again.project_created, again.already, again.pushed, again.images_uploaded) == (False, 5, 0, 0)
    assert len(tasks_by_pair(client, r.project_id)) == 5

    users = {name: ls_user(client, f"{name}@example.com") for name in ("alice", "bob")}
    ann_ids = {}
    for (pid, name), (cf, cs, pref, why) in PLAN.items():
        flag = "Broken image" if pid == "p4" else None
        a = client.sdk.annotations.create(
            id=tasks[pid]["id"],
            result=result_as_seen(tasks[pid]["data"]["left"], cf, cs, pref, why, flag),
            completed_by=users[name],
            lead_time=12.5,
        )
        ann_ids[(pid, name)] = a.id
    client.sdk.annotations.create(id=tasks["p3"]["id"], result=[], completed_by=users["bob"], was_cancelled=True)

    calls: list[tuple[str, int, int]] = []
    got = pull(store, client, title, progress=lambda *a: calls.append(a))
    assert (got.annotations, got.new, got.updated, got.unchanged) == (9, 8, 0, 0)
    assert [c for c in calls if c[0] == "tasks read"] == [("tasks read", n, 5) for n in range(1, 6)]
    assert calls[-1] == ("labels compared", 8, 8)  # bob's cancelled one is no label
    assert got.cancelled == [("p3", "bob@example.com")]
    assert sorted(got.annotators_created) == ["alice@example.com", "bob@example.com"]
    for (pid, name), (cf, cs, pref, why) in PLAN.items():
        lb = store.get_label(pid, f"{name}@example.com")
        assert (lb.correctness_first, lb.correctness_second, lb.preference, lb.rationale) == (cf, cs, pref, why), pid
        assert (lb.source, lb.status, lb.seconds, lb.revision) == ("labelstudio", "submitted", 12.5, 1)
        assert lb.flag == ("broken_image" if pid == "p4" else None)
    assert store.get_label("p3", "bob@example.com") is None
    assert store.get_annotator("alice@example.com").role == "annotator"

    # alice changes her mind on p1 in Label Studio
    left = tasks["p1"]["data"]["left"]
    client.sdk.annotations.update(
        id=ann_ids[("p1", "alice")],
        result=result_as_seen(left, "correct", "incorrect", "first", "B is vague after all"),
    )
    edited = pull(store, client, title)
    assert (edited.new, edited.updated, edited.unchanged, edited.annotators_created) == (0, 1, 7, [])
    lb = store.get_label("p1", "alice@example.com")
    assert (lb.preference, lb.correctness_second, lb.rationale, lb.revision) == (
        "first",
        "incorrect",
        "B is vague after all",
        2,
    )
    assert [h.snapshot.preference for h in store.label_history("p1", "alice@example.com")] == ["tie"]

    before = snapshot(store)
    third = pull(store, client, title)
    assert (third.new, third.updated, third.unchanged) == (0, 0, 8)
    assert snapshot(store) == before


@pytest.mark.slow
def test_response_images_push_annotate_pull(store, client):
    seed(store)
    seed_response_images(store)
    title = _title("img")
    auth = {"Authorization": f"Token {client.sdk._client_wrapper._tokens_client.api_key}"}
    # plain-text pairs first: the plain config and tasks
    r = push(store, client, title, categories=["vqa"])
    assert client.get_project(r.project_id).label_config.strip() == labeling_config().strip()
    alice = ls_user(client, "alice@example.com")
    plan = {
        "p0": ("correct", "incorrect", "second"),  # labelled before the project shows response images
        "r0": ("correct", "incorrect", "first"),
        "r1": ("incorrect", "correct", "second"),
        "r2": ("unsure", "correct", "tie"),
    }

    def annotate(pid: str, task: dict) -> None:
        cf, cs, pref = plan[pid]
        result = result_as_seen(task["data"]["left"], cf, cs, pref, f"why {pid}")
        client.sdk.annotations.create(id=task["id"], result=result, completed_by=alice)

    annotate("p0", tasks_by_pair(client, r.project_id)["p0"])
    # then pairs with response images: the project moves to the config that shows them
    r = push(store, client, title)
    # uploaded now: the prompt image of p2 and the three response images
    assert (r.project_created, r.selected, r.already, r.pushed, r.images_uploaded) == (False, 8, 3, 5, 1 + 3)
    assert "1 pair has response images missing or corrupt at ingest" in " ".join(r.warnings)
    xml = client.get_project(r.project_id).label_config
    assert xml.strip() == labeling_config(response_images=True).strip() and has_response_images(xml)
    images = [o for o in LabelInterface(xml).objects if o.tag == "Image"]
    assert sorted(o.value for o in images) == [
        "$image",
        "$response_a_images[{{idx}}].image",
        "$response_b_images[{{idx}}].image",
    ]

    tasks = tasks_by_pair(client, r.project_id)
    assert {tasks[p]["data"]["left"] for p in ("r0", "r1", "r2")} == {"first", "second"}
    for pid in ("r0", "r1", "r2"):
        d = tasks[pid]["data"]
        for shown, field in (("left_id", "response_a_images"), ("right_id", "response_b_images")):
            (cand,) = store.candidates(ids=[d[shown]])
            want = [store.image_path(im.sha256).read_bytes() for im in cand.images if im.status == "ok"]
            got = []
            for entry in d[field]:
                answer = httpx.get(client.url + entry["image"], headers=auth)
                assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
                got.append(answer.content)
            assert got == want, (pid, field)  # both sides' images, in order, left as shown
    r1 = tasks["r1"]["data"]  # left: the interleaved response
    assert r1["left"] == "first" and [e["text"] for e in r1["response_a_images"]] == ["", "then"]
    assert (r1["response_a"], r1["response_b"], r1["response_b_images"]) == ("", "Only words, no pictures.", [])
    r2 = tasks["r2"]["data"]  # the missing image is a marker in the text
    assert r2["left"] == "second" and r2["response_b"] == "[image not available: out/gone.png]\n\nA sketch."
    assert tasks["p2"]["data"]["response_a_images"] == []  # plain text pushed into the image project
    assert "response_a_images" not in tasks["p0"]["data"]  # pushed before, untouched

    # annotated in Label Studio as an annotator would, pulled back to stored order
    for pid in ("r0", "r1", "r2"):
        annotate(pid, tasks[pid])
    got = pull(store, client, title)
    assert (got.new, got.updated, got.unchanged) == (4, 0, 0)
    for pid, want in plan.items():
        lb = store.get_label(pid, "alice@example.com")
        assert (lb.correctness_first, lb.correctness_second, lb.preference, lb.rationale) == (*want, f"why {pid}")
    again = push(store, client, title)
    assert (again.already, again.pushed, again.images_uploaded) == (8, 0, 0)


# the images Label Studio's page shows: each one's place, size and middle pixel (read back from a canvas)
_SHOWN_IMAGES = """() => [...document.querySelectorAll('img')]
 .filter(i => i.complete && i.naturalWidth === 64).map(i => {
  const c = document.createElement('canvas'); c.width = i.naturalWidth; c.height = i.naturalHeight;
  const g = c.getContext('2d'); g.drawImage(i, 0, 0);
  const r = i.getBoundingClientRect();
  return {x: r.x, y: r.y, width: r.width, rgb: [...g.getImageData(32, 24, 1, 1).data.slice(0, 3)]};
})"""


@pytest.mark.browser
@pytest.mark.slow
def test_label_studio_page_shows_response_images_side_by_side(sqlite_store, client):
    from playwright.sync_api import sync_playwright

    from tests.support.streamlit_server import CHROMIUM, CHROMIUM_ARGS

    seed_response_images(sqlite_store)
    r = push(sqlite_store, client, _title("page"))
    task = tasks_by_pair(client, r.project_id)["r0"]
    assert task["data"]["left"] == "second"  # A: g0/b (purple); B: g0/a (text, orange, text)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(client.url + "/user/login")
            page.fill("input[name=email]", USERNAME)
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(lambda url: "/user/login" not in url)
            page.goto(f"{client.url}/projects/{r.project_id}/data?task={task['id']}")
            # the two images and B's two text lines, read together once all four are laid out (the page
            # renders in steps and may render again right after: reading them apart could catch a gap)
            lines = """[...document.querySelectorAll('.lsf-richtext__line')]
             .filter(l => ['Here it is:', 'Sorted by size.'].includes(l.textContent.trim()))
             .map(l => {
               const r = l.getBoundingClientRect();
               return {text: l.textContent.trim(), y: r.y, h: r.height};
             })"""
            shown = page.wait_for_function(
                f"""() => {{
                  const i = ({_SHOWN_IMAGES})(), t = {lines};
                  const ready = i.length === 2 && i.every((x) => x.width > 1)
                    && t.length === 2 && t.every((x) => x.h > 0);
                  return ready ? {{images: i, lines: t}} : null;
                }}""",
                timeout=60_000,
            ).json_value()
            left, right = sorted(shown["images"], key=lambda i: i["x"])
            line_y = {t["text"]: t["y"] for t in shown["lines"]}
        finally:
            browser.close()
    assert left["rgb"] == [128, 0, 128] and right["rgb"] == [255, 165, 0]  # purple on the left
    assert left["x"] + left["width"] <= right["x"] and abs(left["width"] - right["width"]) < 1  # same size
    assert line_y["Here it is:"] < right["y"] < line_y["Sorted by size."]  # B reads text, image, text in order


def test_interrupted_push_is_completed_by_running_it_again(sqlite_store, client, monkeypatch):
    seed(sqlite_store)
    title = _title("int")
    real = client.import_tasks
    calls = []

    def flaky(project_id, tasks):
        calls.append(len(tasks))
        if len(calls) == 2:  # the server goes away after the first chunk
            raise LabelStudioError(f"cannot reach Label Studio at {client.url} (connection refused)")
        return real(project_id, tasks)

    monkeypatch.setattr(client, "import_tasks", flaky)
    with pytest.raises(MmrbError, match="2 of 5 new pairs were pushed before this; run the same command again"):
        push(sqlite_store, client, title, chunk_size=2)
    project_id = client.projects_titled(title)[0].id
    assert len(tasks_by_pair(client, project_id)) == 2
    monkeypatch.setattr(client, "import_tasks", real)
    r = push(sqlite_store, client, title, chunk_size=2)
    assert (r.project_created, r.already, r.pushed, r.images_uploaded) == (False, 2, 3, 0)
    assert sorted(tasks_by_pair(client, project_id)) == ["p0", "p1", "p2", "p3", "p4"]


def test_push_filters_by_category_and_batch(sqlite_store, client):
    seed(sqlite_store)
    title = _title("flt")
    r = push(sqlite_store, client, title, categories=["safety"])
    assert (r.selected, r.pushed) == (2, 2)
    assert sorted(tasks_by_pair(client, r.project_id)) == ["p2", "p3"]
    r = push(sqlite_store, client, title, batch="b1")
    assert (r.selected, r.already, r.pushed) == (2, 1, 1)
    assert sorted(tasks_by_pair(client, r.project_id)) == ["p0", "p2", "p3"]
    with pytest.raises(MmrbError, match="no assignments in batch 'nope'"):
        push(sqlite_store, client, title, batch="nope")
    r = push(sqlite_store, client, title, overlap=3)
    assert (r.selected, r.already, r.pushed) == (5, 3, 2)
    assert client.get_project(r.project_id).maximum_annotations == 3


def test_push_and_pull_report_their_progress(sqlite_store, client):
    """What `mmrb labelstudio push/pull` draw their bars from: done of total per stage."""
    seed(sqlite_store)
    calls: list[tuple[str, int, int]] = []
    title = _title("prg")
    r = push(sqlite_store, client, title, progress=lambda *a: calls.append(a))
    assert r.images_uploaded > 0 and r.pushed == 5
    stages = [what for what, _, _ in calls]
    assert stages == sorted(stages, key=["images uploaded", "pairs pushed"].index)  # images first
    assert calls[stages.index("pairs pushed") - 1] == ("images uploaded", r.images_uploaded, r.images_uploaded)
    assert calls[-1] == ("pairs pushed", 5, 5)
    calls.clear()
    pull(sqlite_store, client, title, progress=lambda *a: calls.append(a))
    # the export holds the annotated tasks only: none yet (the round trip counts its tasks read)
    assert calls == [("exporting tasks", 0, 1), ("exporting tasks", 1, 1)]


def test_local_files_storage_serves_the_image_folder(sqlite_store, client, tmp_path):
    seed(sqlite_store)
    assert sqlite_store.images.root.resolve().is_relative_to(Path(DOCUMENT_ROOT).resolve())
    title = _title("lf")
    sha = sqlite_store.get_item("i1").images[0].sha256
    path = sqlite_store.image_path(sha).resolve()
    url = client.url + "/data/local-files/?d=" + str(path.relative_to(Path(DOCUMENT_ROOT).resolve()))
    auth = {"Authorization": f"Token {client.sdk._client_wrapper._tokens_client.api_key}"}
    assert httpx.get(url, headers=auth).status_code == 404  # no storage covers it yet
    r = push(sqlite_store, client, title, images="local-files", document_root=DOCUMENT_ROOT)
    assert r.images_uploaded == 0
    t = tasks_by_pair(client, r.project_id)["p1"]
    assert client.url + t["data"]["image"] == url
    got = httpx.get(url, headers=auth)
    assert got.status_code == 200 and got.content == path.read_bytes()
    push(sqlite_store, client, title, images="local-files", document_root=DOCUMENT_ROOT)
    assert len(client.local_storages(r.project_id)) == 1
    with pytest.raises(MmrbError, match="not inside the Label Studio document root"):
        push(sqlite_store, client, _title("lf2"), images="local-files", document_root=str(tmp_path / "elsewhere"))


def test_response_images_served_from_local_files(sqlite_store, client):
    seed_response_images(sqlite_store)
    r = push(sqlite_store, client, _title("lfr"), images="local-files", document_root=DOCUMENT_ROOT)
    assert r.images_uploaded == 0
    auth = {"Authorization": f"Token {client.sdk._client_wrapper._tokens_client.api_key}"}
    d = tasks_by_pair(client, r.project_id)["r1"]["data"]
    (interleaved,) = sqlite_store.candidates(ids=[d["left_id"]])
    urls = [e["image"] for e in d["response_a_images"]]
    assert all(u.startswith("/data/local-files/?d=") for u in urls) and len(urls) == 2
    assert [httpx.get(client.url + u, headers=auth).content for u in urls] == [
        sqlite_store.image_path(im.sha256).read_bytes() for im in interleaved.images
    ]


# -- errors: each one clear, and the store unchanged ------------------------------------
@pytest.fixture
def pulled(store, client):
    """A store (either backend) with a label already pulled from a project, and that project."""
    seed(store)
    title = _title("err")
    r = push(store, client, title)
    t = tasks_by_pair(client, r.project_id)["p0"]
    alice = ls_user(client, "alice@example.com")
    client.sdk.annotations.create(
        id=t["id"], result=result_as_seen(t["data"]["left"], "correct", "incorrect", "first"), completed_by=alice
    )
    assert pull(store, client, title).new == 1
    return store, title, r.project_id


@pytest.fixture
def other_web_server(tmp_path):
    """Some web server on loopback that is not Label Studio."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_wrong_url_and_wrong_key(pulled, label_studio, other_web_server):
    store, title, _ = pulled
    before = snapshot(store)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    cases = [
        (Client(dead, label_studio.token), "cannot reach Label Studio at http://127.0.0.1:"),
        (Client(other_web_server, label_studio.token), "does not look like a Label Studio server .*404.*check --url"),
        (Client(label_studio.url + "/nothing-here", label_studio.token), r"is --url a Label Studio server\?"),
        (
            Client(label_studio.url, "0" * 40, key_name="the API key in $LS_KEY"),
            "rejected the API key in \\$LS_KEY \\(401",
        ),
    ]
    for c, message in cases:
        with pytest.raises(LabelStudioError, match=message):
            pull(store, c, title)
        with pytest.raises(LabelStudioError, match=message):
            push(store, c, title)
        c.close()
    assert snapshot(store) == before


@pytest.fixture(scope="session")
def personal_token(label_studio):
    c = Client(label_studio.url, label_studio.token)
    for t in c.sdk.tokens.list():  # one per user: revoke a leftover (reused dev server)
        c.sdk.tokens.blacklist(refresh=t.token)
    return c.sdk.tokens.create().token


def test_legacy_tokens_disabled(pulled, label_studio, personal_token):
    store, title, _ = pulled
    before = snapshot(store)
    pat = Client(label_studio.url, personal_token)
    pat.sdk.jwt_settings.update(legacy_api_tokens_enabled=False, api_tokens_enabled=True, api_token_ttl_days=3650)
    try:
        legacy = Client(label_studio.url, label_studio.token)
        with pytest.raises(LabelStudioError, match="refuses legacy API tokens .*personal access token"):
            pull(store, legacy, title)
        assert snapshot(store) == before
        # a personal access token (JWT) works, uploads included
        r = push(store, pat, title + "-pat")
        assert r.pushed == 5 and r.images_uploaded == 3
        assert pull(store, pat, title).unchanged == 1
    finally:
        pat.sdk.jwt_settings.update(legacy_api_tokens_enabled=True, api_tokens_enabled=True, api_token_ttl_days=3650)
    assert snapshot(store) == before


def test_config_changed_by_hand(pulled, client):
    store, title, project_id = pulled
    before = snapshot(store)
    xml = client.get_project(project_id).label_config
    client.update_project(project_id, label_config=xml.replace('<Choice value="Tie"', '<Choice value="Equal"'))
    for action in (pull, push):
        with pytest.raises(
            MmrbError, match=r"was changed by hand: control 'preference' has choices \['A', 'B', 'Equal'\]"
        ):
            action(store, client, title)
    assert snapshot(store) == before


def test_annotation_with_unexpected_fields(pulled, client):
    store, title, project_id = pulled
    before = snapshot(store)
    tasks = tasks_by_pair(client, project_id)
    bob = ls_user(client, "bob@example.com")
    t = tasks["p1"]
    client.sdk.annotations.create(
        id=t["id"], result=result_as_seen(t["data"]["left"], "correct", "correct", "tie"), completed_by=bob
    )
    odd = [{"from_name": "mood", "to_name": "prompt", "type": "choices", "value": {"choices": ["happy"]}}]
    client.sdk.annotations.create(id=tasks["p2"]["id"], result=odd, completed_by=bob)
    with pytest.raises(
        AnnotationProblem,
        match=r"(?s)nothing was written.*pair p2\), annotation \d+ by bob@example.com: "
        r"result 0 has an unexpected from_name 'mood'",
    ):
        pull(store, client, title)
    assert snapshot(store) == before  # bob's valid label on p1 was not written either


def test_labels_from_the_app_are_not_overwritten(pulled, client):
    from curate.model import Label

    store, title, project_id = pulled
    store.ensure_annotator("bob@example.com")
    store.save_label(Label("p1", "bob@example.com", "correct", "correct", "tie", source="app"))
    t = tasks_by_pair(client, project_id)["p1"]
    bob = ls_user(client, "bob@example.com")
    client.sdk.annotations.create(
        id=t["id"], result=result_as_seen(t["data"]["left"], "incorrect", "correct", "second"), completed_by=bob
    )
    r = pull(store, client, title)
    assert r.conflicts == [("p1", "bob@example.com")] and r.new == 0
    assert store.get_label("p1", "bob@example.com").preference == "tie"


# -- the command line ------------------------------------------------------------------
@pytest.mark.slow
def test_cli_push_pull_then_agreement(tmp_path, label_studio, monkeypatch, capsys):
    from curate.cli import main
    from curate.store import Store

    db = str(tmp_path / "cli.db")
    with Store(db, images=tmp_path / "images") as s:
        seed(s)
    title = _title("cli")
    common = ["--db", db, "--images", str(tmp_path / "images"), "--url", label_studio.url, "--project", title]
    monkeypatch.delenv("MMRB_NO_SUCH_VAR", raising=False)
    assert main(["labelstudio", "push", *common, "--api-key-env", "MMRB_NO_SUCH_VAR"]) == 1
    assert "MMRB_NO_SUCH_VAR is not set" in capsys.readouterr().err

    monkeypatch.setenv("WRONG_LS_KEY", "f" * 40)
    fresh = tmp_path / "never-created.db"
    assert (
        main(
            [
                "labelstudio",
                "pull",
                "--db",
                str(fresh),
                "--url",
                label_studio.url,
                "--project",
                title,
                "--api-key-env",
                "WRONG_LS_KEY",
            ]
        )
        == 1
    )
    assert "rejected the API key in $WRONG_LS_KEY (401" in capsys.readouterr().err
    assert not fresh.exists()  # the server is checked before the store is opened

    monkeypatch.setenv("MY_LS_KEY", label_studio.token)
    common += ["--api-key-env", "MY_LS_KEY"]
    guidelines = tmp_path / "g.md"
    guidelines.write_text("# Guidelines\n\nPrefer the **correct** answer.\n")
    assert (
        main(["labelstudio", "push", *common, "--overlap", "2", "--category", "vqa", "--guidelines", str(guidelines)])
        == 0
    )
    out = capsys.readouterr().out
    assert "pairs selected: 3; already in the project: 0; pushed now: 3" in out
    c = Client(label_studio.url, label_studio.token)
    project = c.get_project(c.projects_titled(title)[0].id)
    assert "<strong>correct</strong>" in project.expert_instruction
    tasks = tasks_by_pair(c, project.id)
    users = [ls_user(c, f"{n}@example.com") for n in ("alice", "bob")]
    for t in tasks.values():
        for u in users:
            c.sdk.annotations.create(
                id=t["id"],
                result=result_as_seen(t["data"]["left"], "correct", "incorrect", "first", "ok"),
                completed_by=u,
            )
    assert main(["labelstudio", "pull", *common]) == 0
    out = capsys.readouterr().out
    assert "labels new: 6; updated: 0; unchanged: 0" in out
    assert main(["labelstudio", "pull", *common]) == 0
    assert "labels new: 0; updated: 0; unchanged: 6" in capsys.readouterr().out
    # the pulled labels feed the same agreement stage as labels from the app
    assert main(["agreement", "--db", db, "--images", str(tmp_path / "images"), "--json", "--resamples", "20"]) == 0
    assert "preference" in capsys.readouterr().out
    c.close()


@pytest.mark.slow
def test_bench_quick_runs(label_studio, tmp_path):
    env = dict(os.environ, MMRB_BENCH_LS_KEY=label_studio.token)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.labelstudio",
            "--quick",
            "--url",
            label_studio.url,
            "--api-key-env",
            "MMRB_BENCH_LS_KEY",
            "--workdir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "push" in out.stdout and "pull" in out.stdout and "items/s" in out.stdout


@pytest.mark.parametrize("name", ["mmrb2-pairwise", "mmrb2-reasoning", "aspects", "verify"])
def test_the_server_takes_each_schemes_config_and_an_annotation_of_its_controls(client, name):
    """The real server: a project with the scheme's generated config, one task, one annotation
    with a result for every control the config declares (mmrb's config is the one every other
    test here runs)."""
    from annotate.labelstudio.config import scheme_config, scheme_controls
    from curate.schemes import BUILT_IN

    scheme = BUILT_IN[name]
    project = client.create_project(title=f"scheme {name} {uuid.uuid4().hex[:6]}", label_config=scheme_config(scheme))
    assert project.label_config.strip() == scheme_config(scheme).strip()
    data = {"image": "", "prompt": "p", "response_a": "a", "response_b": "b", "proposal": "A"}
    (task,) = client.sdk.tasks.create(project=project.id, data=data) and client.task_data(project.id)
    result = []
    for c in scheme_controls(scheme).values():
        if c.name in ("flag", "flag_note"):
            continue
        value = (
            {"choices": [c.choices[0]]}
            if c.tag == "Choices"
            else {"rating": 2}
            if c.tag == "Rating"
            else {"text": ["t"]}
        )
        result.append({"from_name": c.name, "to_name": c.to_name, "type": c.result_type, "value": value})
    client.sdk.annotations.create(id=task["id"], result=result)
    (ann,) = client.sdk.annotations.list(id=task["id"])
    assert {r["from_name"] for r in ann.result} == {r["from_name"] for r in result}


# -- annotation schemes: the project's config is the pairs' scheme's, labels come back in its fields --
def _on_scheme(store, name: str, ids: list[str]) -> None:
    from curate.schemes import BUILT_IN

    store.set_pair_scheme(ids, name, BUILT_IN[name].version)


SIX_POINTS = (
    "right much better",
    "right better",
    "right slightly better",
    "left slightly better",
    "left better",
    "left much better",
)


def _six(shown: int) -> str:
    """mmrb2-pairwise's choice for a point as the annotator picked it (the test's own spelling)."""
    return f"{shown} {SIX_POINTS[shown - 1]}"


# stored score per (pair, user): 6 is the first response much better
PAIRWISE = {("p0", "alice"): 6, ("p1", "alice"): 2, ("p2", "alice"): 4, ("p3", "alice"): 1, ("p0", "bob"): 5}


@pytest.mark.slow
def test_mmrb2_pairwise_push_annotate_pull_round_trip(store, client):
    from annotate.labelstudio.config import scheme_config
    from curate.schemes import BUILT_IN

    seed(store)
    _on_scheme(store, "mmrb2-pairwise", ["p0", "p1", "p2", "p3", "p4"])
    title = _title("pw")
    r = push(store, client, title, overlap=2)
    assert (r.project_created, r.selected, r.pushed) == (True, 5, 5)
    xml = client.get_project(r.project_id).label_config
    assert xml.strip() == scheme_config(BUILT_IN["mmrb2-pairwise"]).strip()
    tasks = tasks_by_pair(client, r.project_id)
    assert {(t["data"]["scheme"], t["data"]["scheme_version"]) for t in tasks.values()} == {("mmrb2-pairwise", 1)}
    lefts = {pid: tasks[pid]["data"]["left"] for pid, _ in PAIRWISE}
    assert set(lefts.values()) == {"first", "second"}  # shown both ways

    users = {n: ls_user(client, f"{n}@example.com") for n in ("alice", "bob")}
    for (pid, name), score in PAIRWISE.items():
        shown = score if lefts[pid] == "first" else 7 - score  # the annotator sees the pair flipped
        result = [{"from_name": "score", "to_name": "prompt", "type": "choices", "value": {"choices": [_six(shown)]}}]
        if pid == "p1":
            result.append({"from_name": "rationale", "to_name": "prompt", "type": "textarea", "value": {"text": ["B"]}})
        client.sdk.annotations.create(id=tasks[pid]["id"], result=result, completed_by=users[name], lead_time=3.0)
    # bob forgets the score on p4: reported, nothing written
    bad = client.sdk.annotations.create(
        id=tasks["p4"]["id"],
        result=[{"from_name": "rationale", "to_name": "prompt", "type": "textarea", "value": {"text": ["?"]}}],
        completed_by=users["bob"],
    )
    before = snapshot(store)
    named = rf"task {tasks['p4']['id']} \(pair p4\), annotation {bad.id} by bob@example.com: field score is required"
    with pytest.raises(AnnotationProblem, match=named + " but has no answer"):
        pull(store, client, title)
    assert snapshot(store) == before
    client.sdk.annotations.delete(id=bad.id)

    got = pull(store, client, title)
    assert (got.annotations, got.new, got.updated, got.unchanged) == (5, 5, 0, 0)
    for (pid, name), score in PAIRWISE.items():
        lb = store.get_label(pid, f"{name}@example.com")
        assert dict(lb.ratings) == {"score": score}, pid
        assert lb.preference == ("first" if score > 3.5 else "second")
        assert (lb.scheme_version, lb.source, lb.seconds, lb.revision) == (1, "labelstudio", 3.0, 1)
        assert (lb.correctness_first, lb.correctness_second) == (None, None)
    assert store.get_label("p1", "alice@example.com").rationale == "B"
    again = pull(store, client, title)
    assert (again.new, again.updated, again.unchanged) == (0, 0, 5)


@pytest.mark.slow
def test_aspects_push_annotate_pull_round_trip(store, client):
    from annotate.labelstudio.config import scheme_config
    from curate.schemes import BUILT_IN

    seed(store)
    _on_scheme(store, "aspects", ["p0", "p1", "p2"])
    title = _title("asp")
    r = push(store, client, title, scheme="aspects")
    assert (r.selected, r.pushed) == (3, 3)
    assert client.get_project(r.project_id).label_config.strip() == scheme_config(BUILT_IN["aspects"]).strip()
    tasks = tasks_by_pair(client, r.project_id)
    assert sorted(tasks) == ["p0", "p1", "p2"] and {t["data"]["left"] for t in tasks.values()} == {"first", "second"}
    # stored answers: (helpfulness, faithfulness, ethics) of the first and of the second, the preference
    plan = {
        "p0": ((4, 3, 4), (1, 2, 4), "first"),
        "p1": ((2, 2, 3), (3, 4, 4), "second"),
        "p2": ((3, 3, 3), (3, 3, 3), "tie"),
    }
    alice = ls_user(client, "alice@example.com")
    ann = {}
    for pid, (first, second, pref) in plan.items():
        left = tasks[pid]["data"]["left"]
        a, b = (first, second) if left == "first" else (second, first)
        result = [
            {"from_name": f"{aspect}_{side}", "to_name": f"response_{side}", "type": "rating", "value": {"rating": v}}
            for side, values in (("a", a), ("b", b))
            for aspect, v in zip(("helpfulness", "faithfulness", "ethics"), values, strict=True)
        ]
        shown = "Tie" if pref == "tie" else "A" if pref == left else "B"
        result += [
            {"from_name": "preference", "to_name": "prompt", "type": "choices", "value": {"choices": [shown]}},
            {"from_name": "rationale", "to_name": "prompt", "type": "textarea", "value": {"text": [f"why {pid}"]}},
        ]
        ann[pid] = client.sdk.annotations.create(id=tasks[pid]["id"], result=result, completed_by=alice).id
    got = pull(store, client, title)
    assert (got.new, got.updated) == (3, 0)
    for pid, (first, second, pref) in plan.items():
        lb = store.get_label(pid, "alice@example.com")
        want = {
            f"{aspect}_first": v for aspect, v in zip(("helpfulness", "faithfulness", "ethics"), first, strict=True)
        }
        want |= {
            f"{aspect}_second": v for aspect, v in zip(("helpfulness", "faithfulness", "ethics"), second, strict=True)
        }
        assert dict(lb.ratings) == {**want, "preference": pref}, pid
        assert (lb.preference, lb.rationale, lb.scheme_version) == (pref, f"why {pid}", 1)

    # a rating the scheme does not know (a fifth star) is named with its task and field
    client.sdk.annotations.update(
        id=ann["p0"],
        result=[{"from_name": "ethics_b", "to_name": "response_b", "type": "rating", "value": {"rating": 5}}],
    )
    before = snapshot(store)
    named = rf"task {tasks['p0']['id']} \(pair p0\).*field ethics_b has rating 5, expected 1 to 4"
    with pytest.raises(AnnotationProblem, match=named):
        pull(store, client, title)
    assert snapshot(store) == before


def test_pairs_of_several_schemes_and_a_project_of_another_scheme_are_refused(
    sqlite_store, client, tmp_path, monkeypatch, capsys
):
    from annotate.labelstudio.config import labeling_config, scheme_config
    from curate.schemes import BUILT_IN

    s = sqlite_store
    seed(s)
    _on_scheme(s, "mmrb2-pairwise", ["p0", "p1"])
    title = _title("mix")
    with pytest.raises(
        MmrbError, match=r"on 2 annotation schemes \(mmrb: 3 pairs, mmrb2-pairwise: 2 pairs\).*--scheme"
    ):
        push(s, client, title)
    assert client.projects_titled(title) == []  # nothing made
    r = push(s, client, title, scheme="mmrb")
    assert (r.selected, r.pushed) == (3, 3)
    assert client.get_project(r.project_id).label_config.strip() == labeling_config().strip()
    with pytest.raises(
        MmrbError,
        match=rf"project '{title}' \(id {r.project_id}\) holds the labeling config of scheme 'mmrb' version 1, "
        "and these pairs are on scheme 'mmrb2-pairwise' version 1",
    ):
        push(s, client, title, scheme="mmrb2-pairwise")
    assert client.get_project(r.project_id).label_config.strip() == labeling_config().strip()  # not replaced
    r2 = push(s, client, title + "-pw", scheme="mmrb2-pairwise")
    assert (r2.selected, r2.pushed) == (2, 2)
    assert client.get_project(r2.project_id).label_config.strip() == scheme_config(BUILT_IN["mmrb2-pairwise"]).strip()
    # a pair given another scheme after its push: its task is a problem on pull, named
    t = tasks_by_pair(client, r.project_id)["p2"]
    client.sdk.annotations.create(
        id=t["id"],
        result=result_as_seen(t["data"]["left"], "correct", "incorrect", "first"),
        completed_by=ls_user(client, "alice@example.com"),
    )
    _on_scheme(s, "aspects", ["p2"])
    with pytest.raises(
        AnnotationProblem,
        match=r"pair 'p2' is now on scheme 'aspects' version 1, but its task was pushed under scheme 'mmrb'",
    ):
        pull(s, client, title)
    # the command line says the same, and --scheme pushes one scheme's pairs
    from curate.cli import main

    monkeypatch.setenv("MY_LS_KEY", client.sdk._client_wrapper._tokens_client.api_key)
    common = ["--db", str(tmp_path / "store.db"), "--images", str(tmp_path / "images"), "--url", client.url]
    common += ["--api-key-env", "MY_LS_KEY", "--project", title + "-cli"]
    assert main(["labelstudio", "push", *common]) == 1
    assert (
        "on 3 annotation schemes (aspects: 1 pair, mmrb: 2 pairs, mmrb2-pairwise: 2 pairs)" in capsys.readouterr().err
    )
    assert main(["labelstudio", "push", *common, "--scheme", "aspects"]) == 0
    assert "pairs selected: 1; already in the project: 0; pushed now: 1" in capsys.readouterr().out


@pytest.mark.slow
def test_verify_push_annotate_pull_keeps_the_proposal_shown(sqlite_store, client):
    from annotate.labelstudio.config import PREFERENCE_CHOICES, scheme_config
    from curate.schemes import BUILT_IN

    s = sqlite_store
    s.add_items([Item(f"v{n}", f"Question {n}?", "vqa") for n in range(4)])
    s.add_candidates(Candidate(f"v{n}/{m}", f"v{n}", m, f"{m} answers {n}") for n in range(4) for m in "ab")
    proposals = {"q0": "first", "q1": "second", "q2": "tie", "q3": None}
    s.add_pairs(
        [
            Pair(pid, f"v{n}", f"v{n}/a", f"v{n}/b", "test", metadata={"proposal": p} if p else {})
            for n, (pid, p) in enumerate(proposals.items())
        ]
    )
    _on_scheme(s, "verify", list(proposals))
    r = push(s, client, _title("ver"))
    assert r.pushed == 4 and any("1 pair has no judges' proposal" in w for w in r.warnings)
    assert client.get_project(r.project_id).label_config.strip() == scheme_config(BUILT_IN["verify"]).strip()
    tasks = tasks_by_pair(client, r.project_id)
    screen = {v: k for k, v in PREFERENCE_CHOICES.items()}  # left / right / tie -> A / B / Tie
    for pid, p in proposals.items():
        left = tasks[pid]["data"]["left"]
        want = "none" if p is None else "Tie" if p == "tie" else screen["left" if p == left else "right"]
        assert tasks[pid]["data"]["proposal"] == want, pid
    alice = ls_user(client, "alice@example.com")

    def choice(name, value):
        return {"from_name": name, "to_name": "prompt", "type": "choices", "value": {"choices": [value]}}

    # q0, q3: agreed; q1: disagreed, the response on the left is better; q2: unsure
    why = {"from_name": "rationale", "to_name": "prompt", "type": "textarea", "value": {"text": ["see A"]}}
    answers = {
        "q0": [choice("verdict", "agree")],
        "q1": [choice("verdict", "disagree"), choice("corrected", "A"), why],
        "q2": [choice("verdict", "unsure"), why],
        "q3": [choice("verdict", "agree")],
    }
    for pid, result in answers.items():
        client.sdk.annotations.create(id=tasks[pid]["id"], result=result, completed_by=alice)
    assert pull(s, client, client.get_project(r.project_id).title).new == 4
    got = {pid: s.get_label(pid, "alice@example.com") for pid in proposals}
    assert (got["q0"].preference, dict(got["q0"].ratings)) == ("first", {"verdict": "agree", "proposal": "first"})
    q1_left = tasks["q1"]["data"]["left"]
    assert got["q1"].preference == q1_left and got["q1"].ratings["corrected"] == q1_left
    assert (got["q1"].ratings["proposal"], got["q1"].rationale) == ("second", "see A")
    assert (got["q2"].preference, got["q2"].ratings["proposal"]) == (None, "tie")
    assert (got["q3"].preference, dict(got["q3"].ratings)) == (None, {"verdict": "agree"})


def test_pulled_labels_record_the_guidelines_version_the_project_showed(sqlite_store, client):
    """Each push records the version of the store's guidelines the project shows from then on;
    an annotation gets the one shown when it was made, none once the instructions were edited
    in Label Studio by hand (unknown, not guessed)."""
    store = sqlite_store
    seed(store)
    store.set_guidelines("# Guidelines\n\nPrefer the correct answer.", "lead")
    title = _title("guide")
    project_id = push(store, client, title).project_id
    tasks = tasks_by_pair(client, project_id)
    alice = ls_user(client, "alice@example.com")

    def annotate(pair_id: str) -> None:
        t = tasks[pair_id]
        client.sdk.annotations.create(
            id=t["id"], result=result_as_seen(t["data"]["left"], "correct", "incorrect", "first"), completed_by=alice
        )

    annotate("p0")
    store.set_guidelines("# Guidelines\n\nPrefer the correct answer; then the shorter one.", "lead")
    push(store, client, title)  # no new pair: the project's instructions move to version 2
    assert "shorter" in client.get_project(project_id).expert_instruction
    annotate("p1")
    assert pull(store, client, title).new == 2
    assert store.get_label("p0", "alice@example.com").guidelines_version == 1
    assert store.get_label("p1", "alice@example.com").guidelines_version == 2

    client.update_project(project_id, expert_instruction="<p>Edited in Label Studio.</p>")
    annotate("p2")
    assert pull(store, client, title).new == 1
    assert store.get_label("p2", "alice@example.com").guidelines_version is None
    assert store.get_label("p1", "alice@example.com").guidelines_version == 2  # unchanged labels keep theirs
