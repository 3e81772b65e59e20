"""Image responses reach the judge from every source: ``mmrb evaluate`` on the build's triplets
and on MMRB2 files (images beside them), ``mmrb select`` on stored pairs; and ``mmrb score
--preset mmrb2`` on a run made by ``mmrb evaluate``, against MMRB2's compute_accuracy.py."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image

from curate.benchmark import build
from curate.benchmark.rules import Rules
from curate.ingest import ingest_pairs
from curate.model import Annotator, Label
from tests.ingest_helpers import write_image
from tests.support.command_runner import command
from tests.support.fake_openai import FakeOpenAI, Fault
from tests.support.official import load, mmrb2_predictions_of_run

RED, BLUE = (255, 0, 0), (0, 0, 255)


def colour(url: str) -> tuple[int, int, int]:
    im = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")
    return im.getpixel((im.width // 2, im.height // 2))


def near(c, ref) -> bool:
    return all(abs(a - b) < 40 for a, b in zip(c, ref, strict=True))


def images_after(content: list[dict], marker: str) -> list[tuple[int, int, int]]:
    """The colours of the images between the text part that ends with ``marker`` and the next
    text part that is not the response's own."""
    out, on = [], False
    for p in content:
        if p["type"] == "text":
            if p["text"].endswith(marker):
                on, out = True, []
            elif on and p["text"].startswith("["):
                break
        elif on:
            out.append(colour(p["image_url"]["url"]))
    return out


def user_content(req) -> list[dict]:
    return [m for m in req.body["messages"] if m["role"] == "user"][0]["content"]


def evaluate(tmp_path, dataset: Path, judge_text: str, *extra: str, capsys) -> tuple[int, dict]:
    judge = tmp_path / "judge.toml"
    judge.write_text(judge_text)
    argv = [
        "--dataset",
        str(dataset),
        "--judge",
        str(judge),
        "--db",
        str(tmp_path / "eval.db"),
        "--images",
        str(tmp_path / "img"),
        "--json",
        "--quiet",
        "--bootstrap",
        "0",
        *extra,
    ]
    rc, out = command("evaluate", argv, capsys)
    return rc, json.loads(out)


# -- the build's triplets -----------------------------------------------------------------------
def test_evaluate_on_built_triplets_shows_the_judge_both_response_images(store, tmp_path, capsys):
    write_image(tmp_path / "out/chart_a.png", "red")
    write_image(tmp_path / "out/chart_b.png", "blue")
    rows = [
        {
            "id": f"g{i}",
            "prompt": f"Draw chart {i}.",
            "category": "t2i",
            "response_1": ["Here:", {"image": "out/chart_a.png"}],
            "response_2": [{"image": "out/chart_b.png"}, "Done."],
            "preference": "1",
        }
        for i in range(4)
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ingest_pairs(store, path, "generic")
    store.add_annotator(Annotator("ann"))
    store.add_labels([Label(f"g{i}", "ann", preference="first") for i in range(4)])
    out = tmp_path / "bench"
    build(store, Rules(resamples=10), out)

    def by_colour(req) -> str:  # the red chart is the better one
        a = images_after(user_content(req), "[The Start of Assistant A's Answer]")
        return "[[A]]" if a and near(a[0], RED) else "[[B]]"

    with FakeOpenAI(by_colour) as srv:
        rc, report = evaluate(
            tmp_path,
            out / "triplets.jsonl",
            f'name = "eye"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb"\n',
            "--order",
            "both",
            capsys=capsys,
        )
        reqs = srv.chat_requests()
    assert rc == 0 and report["overall"]["correct_n"] == "8/8"
    assert len(reqs) == 8
    for req in reqs:
        a = images_after(user_content(req), "[The Start of Assistant A's Answer]")
        b = images_after(user_content(req), "[The Start of Assistant B's Answer]")
        assert len(a) == len(b) == 1 and {near(a[0], RED), near(b[0], RED)} == {True, False}
    # both display orders of each pair were shown
    firsts = [near(images_after(user_content(r), "[The Start of Assistant A's Answer]")[0], RED) for r in reqs]
    assert firsts.count(True) == firsts.count(False) == 4

    # the build's Parquet file embeds the images: they are sent from the build folder, or from
    # the file itself where the folder does not have them (large ones downscaled either way)
    import shutil

    from curate.benchmark.export import PARQUET
    from mmrb_eval.datasets import read_dataset

    kept = read_dataset(out / PARQUET)
    assert all(Path(x.value).is_file() for x in kept[0].first_parts if x.kind == "image")
    alone = tmp_path / "alone" / "test.parquet"
    alone.parent.mkdir()
    shutil.copy(out / PARQUET, alone)
    embedded = read_dataset(alone)
    assert [x.value[:15] for x in embedded[0].first_parts if x.kind == "image"] == ["data:image/png;"]
    out_parquet = alone

    with FakeOpenAI(by_colour) as srv:
        rc, report = evaluate(
            tmp_path,
            out_parquet,
            f'name = "eye"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb"\nmax_image_side = 16\n',
            "--order",
            "both",
            capsys=capsys,
        )
        reqs = srv.chat_requests()
    assert rc == 0 and report["overall"]["correct_n"] == "8/8" and len(reqs) == 8
    urls = [p["image_url"]["url"] for r in reqs for p in user_content(r) if p["type"] == "image_url"]
    assert len(urls) == 16
    assert {Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))).size for u in urls} == {(16, 12)}


# -- MMRB2 files ---------------------------------------------------------------------------------
def mmrb2_dataset(tmp_path: Path, n: int) -> Path:
    """t2i pairs, each response one image beside the file: the chosen one red, the other blue."""
    pairs = []
    for i in range(n):
        chosen = "AB"[i % 2]
        for side in "ab":
            write_image(tmp_path / f"p{i}_{side}.png", "red" if side.upper() == chosen else "blue", (24, 24))
        pairs.append(
            {
                "id": f"p{i}",
                "response_a": {"model_name": "m1", "response_content": [["image", f"p{i}_a.png"]]},
                "response_b": {"model_name": "m2", "response_content": [["image", f"p{i}_b.png"]]},
                "chosen": chosen,
                "human_annotations": [5, 5, 5] if chosen == "A" else [2, 2, 2],
                "prompt_source": "oneigbench",
            }
        )
    path = tmp_path / "t2i_response_only.json"
    path.write_text(json.dumps({"pairs": pairs}))
    return path


# what the scripted judge answers, by pair number: adversarial on purpose
SCRIPT = {
    0: "right",
    1: "right",
    2: "wrong",
    3: "tie",  # a judgement naming neither: counted and wrong
    4: "garbage",  # no JSON: no judgement at all
    5: "empty",  # "better_response": "" : no judgement
    6: "fail",  # HTTP 500 after retries: a failed request, never scored
    7: "fenced",
    8: "forward-fails",  # only the reverse order answered
}


def scripted(req) -> str | Fault:
    content = user_content(req)
    a = images_after(content, "[RESPONSE A:]")
    b = images_after(content, "[RESPONSE B:]")
    assert len(a) == len(b) == 1  # every request shows one image per response
    red_is_a = near(a[0], RED)
    _, pair_id, order, _ = (req.key or "").split("|")  # the runner's request id: run|pair|order|sample
    kind = SCRIPT.get(int(pair_id[1:]), "right")
    right, wrong = ("A", "B") if red_is_a else ("B", "A")
    if kind == "fail" or (kind == "forward-fails" and order == "forward"):
        return Fault("500")
    return {
        "right": f'{{"reasoning": "the red one", "better_response": "{right}"}}',
        "forward-fails": f'{{"better_response": "{right}"}}',
        "wrong": f'{{"better_response": "{wrong}"}}',
        "tie": '{"better_response": "tie"}',
        "garbage": "I cannot decide.",
        "empty": '{"better_response": ""}',
        "fenced": f'```json\n{{"score": 5, "better_response": "{right}"}}\n```',
    }[kind]


def test_mmrb2_run_from_evaluate_scores_as_compute_accuracy(tmp_path, capsys):
    from curate.store import Store
    from mmrb_eval.datasets import read_dataset

    dataset = mmrb2_dataset(tmp_path, 12)
    with FakeOpenAI(scripted) as srv:
        judge_text = (
            f'name = "json-judge"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb2"\nmax_retries = 0\n'
            "backoff_base = 0.01\n"
        )
        rc, report = evaluate(
            tmp_path, dataset, judge_text, "--order", "both", "--preset", "mmrb2", "--run", "r", capsys=capsys
        )
        prompt_text = user_content(srv.chat_requests()[0])[0]["text"]
    assert rc == 1  # failed requests leave the run incomplete
    assert prompt_text.startswith("You are an expert in multimodal quality analysis")  # the t2i prompt
    store = Store(str(tmp_path / "eval.db"), images=tmp_path / "img")
    try:
        judgments = store.judgments("r")
    finally:
        store.close()
    assert {j.outcome for j in judgments} == {"parsed", "unparsed", "error"}
    preds = mmrb2_predictions_of_run(judgments)
    gt = json.loads(dataset.read_text())
    mod = load("mmrb2/compute_accuracy.py", "mmrb2_official")
    theirs = mod.compute_task_accuracy(preds, gt, "image")
    rc, out = command(
        "score",
        ["--run", "r", "--db", str(tmp_path / "eval.db"), "--preset", "mmrb2", "--json", "--bootstrap", "0"],
        capsys,
    )
    ours = json.loads(out)
    for r in (report, ours):
        assert (r["overall"]["correct"], r["overall"]["n"]) == (theirs.total_correct, theirs.total_evaluated)
        assert r["missing_pairs"] == theirs.missing_pairs
        assert r["pairs"] == theirs.total_pairs
        assert abs((r["overall"]["accuracy"] or 0.0) - theirs.accuracy) < 1e-6
    # 3 right pairs x 2 + fenced x 2 + the reverse of p8 + the pairs after p8, and the adversarial ones counted
    assert theirs.total_evaluated == 2 * 12 - 2 * 3 - 1  # garbage, empty, fail: none; p8 forward: none
    assert ours["not_used"]["no_judgement"] == 4  # garbage and empty, in both orders
    assert read_dataset(dataset)[0].first_parts  # the responses' parts, images beside the file


# -- mmrb select on stored pairs -------------------------------------------------------------------
def test_select_judges_see_the_stored_response_images(store, tmp_path):
    from curate.judging.templates import BUILTIN_TEMPLATES
    from curate.judging.vlm import VLMJudge
    from curate.llm import Endpoint
    from curate.selection import DEFAULT_TEMPLATE, judge_verdicts

    write_image(tmp_path / "out/red.png", "red")
    write_image(tmp_path / "out/blue.png", "blue")
    rows = [
        {  # the red image first in g1, second in g2
            "id": f"g{i}",
            "prompt": "Draw it red.",
            "category": "t2i",
            "response_1": [{"image": f"out/{first}.png"}, "Done."],
            "response_2": [{"image": f"out/{second}.png"}],
        }
        for i, (first, second) in enumerate((("red", "blue"), ("blue", "red")), start=1)
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ingest_pairs(store, path, "generic")
    pairs = store.pairs()
    items = {i.id: i for i in store.items()}

    def eye(req) -> str:  # VL-RewardBench's layout: "Answer 1:", its parts, "Answer 2:", its parts
        one = images_after(user_content(req), "Answer 1:")
        return f"Overall Judgment: Answer {1 if near(one[0], RED) else 2} is better."

    with FakeOpenAI(eye) as srv:
        eye_judge = VLMJudge(
            Endpoint(base_url=srv.url, model="eye", concurrency=2), BUILTIN_TEMPLATES[DEFAULT_TEMPLATE], order="both"
        )
        got = judge_verdicts(store, pairs, items, [eye_judge])
        assert srv.count() == 4
    red_side = {}
    for p in pairs:
        first = store.candidates(ids=[p.first_id])[0]
        red_side[p.id] = "first" if "red" in first.text else "second"
    assert {pid: set(v.values()) for pid, v in got["eye"].items()} == {pid: {s} for pid, s in red_side.items()}
    assert set(red_side.values()) == {"first", "second"}  # the red image on each side once


def test_mmrb2_files_with_the_prompt_show_it_to_the_judge(tmp_path, capsys):
    from mmrb_eval.datasets import read_dataset

    # the layout the benchmark's build_from_hf.py writes: prompt_content, images in folders
    write_image(tmp_path / "input_images/e1_prompt_0.png", "green", (24, 24))
    write_image(tmp_path / "images/e1_a_0.png", "red", (24, 24))
    write_image(tmp_path / "images/e1_b_0.png", "blue", (24, 24))
    pair = {
        "id": "e1",
        "prompt_content": [
            ["text", "Make the wall red."],
            ["image", "input_images/e1_prompt_0.png"],
            ["text", "Keep the door."],
        ],
        "prompt_source": "emu_edit",
        "response_a": {"model_name": "m1", "response_content": [["image", "images/e1_a_0.png"]]},
        "response_b": {"model_name": "m2", "response_content": [["image", "images/e1_b_0.png"]]},
        "chosen": "A",
    }
    dataset = tmp_path / "edit.json"
    dataset.write_text(json.dumps({"pairs": [pair]}))
    with FakeOpenAI(lambda req: '{"better_response": "A"}') as srv:
        judge = f'name = "j"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb2"\n'
        rc, report = evaluate(tmp_path, dataset, judge, "--preset", "mmrb2", capsys=capsys)
        content = user_content(srv.chat_requests()[0])
    assert rc == 0 and report["overall"]["correct_n"] == "1/1"
    shown = [p["text"] if p["type"] == "text" else colour(p["image_url"]["url"]) for p in content]
    assert shown[0].startswith("You are an expert in image editing quality analysis")
    assert shown[1] == "[ORIGINAL PROMPT TO MODEL:]"
    # the prompt's parts in its own order, then each response's
    assert shown[2] == "Make the wall red." and near(shown[3], (0, 128, 0)) and shown[4] == "Keep the door."
    assert shown[5] == "[RESPONSE A:]" and near(shown[6], RED)
    assert shown[7] == "[RESPONSE B:]" and near(shown[8], BLUE) and len(shown) == 9
    pair = read_dataset(dataset)[0]
    assert pair.prompt == "Make the wall red.\nKeep the door." and pair.images == (
        str(tmp_path / "input_images/e1_prompt_0.png"),
    )
