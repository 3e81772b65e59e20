"""Judges and reward models see response images: the multi-image message against the
loopback OpenAI-compatible server (both responses' images, in the order each display order
shows them), templates rendered as parts, MMRB2's judge prompt and its JSON verdict, and the
reward model's request."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from curate.errors import MmrbError
from curate.judging import BUILTIN_TEMPLATES, JudgeTask
from curate.judging.parsing import mmrb2_judgement, parse_mmrb2
from curate.judging.records import RunDataset
from curate.judging.reward_model import RewardModel
from curate.judging.runner import run_judge
from curate.judging.templates import MMRB2_TEXTS, Template
from curate.judging.vlm import VLMJudge
from curate.llm import Endpoint
from curate.model import ImageRef, Part
from tests.support.fake_openai import FakeOpenAI

D = RunDataset(("d",))
# each image its own colour and shape, so a decoded data URL says which one it is
COLOURS = {"prompt": (0, 160, 0), "first": (220, 0, 0), "second": (0, 0, 220), "second2": (230, 200, 0)}
SIZES = {"prompt": (20, 12), "first": (40, 30), "second": (30, 40), "second2": (2000, 1000)}


def draw(tmp_path, name: str):
    p = tmp_path / f"{name}.png"
    Image.new("RGB", SIZES[name], COLOURS[name]).save(p)
    return p


def decoded(url: str) -> Image.Image:
    assert url.startswith("data:image/")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")


def which(url: str) -> str:
    """The source image a data URL shows, told by its centre pixel."""
    im = decoded(url)
    centre = im.getpixel((im.width // 2, im.height // 2))
    return next(n for n, c in COLOURS.items() if all(abs(a - b) < 8 for a, b in zip(centre, c, strict=True)))


def sequence(content) -> list[str]:
    """A user turn as a readable list: text parts as they are, images by their source name."""
    return [p["text"] if p["type"] == "text" else f"<{which(p['image_url']['url'])}>" for p in content]


def image_task(tmp_path, **kw) -> JudgeTask:
    prompt_img, a, b, b2 = (draw(tmp_path, n) for n in ("prompt", "first", "second", "second2"))
    return JudgeTask(
        "p0",
        "Draw the chart.",
        "Here it is: [image: first.png]",
        "[image: second.png]\n\nand a wide one [image: second2.png]",
        (str(prompt_img),),
        (Part.of_text("Here it is:"), Part.of_image(str(a))),
        (Part.of_image(str(b)), Part.of_text("and a wide one"), Part.of_image(str(b2))),
        **kw,
    )


def config(url: str, template: str = "mmrb", **kw) -> VLMJudge:
    ep = Endpoint(base_url=url, model="judge", concurrency=2, max_retries=0, backoff_base=0.01)
    return VLMJudge(endpoint=ep, template=BUILTIN_TEMPLATES[template], **kw)


def user_turn(req) -> list[dict]:
    return [m for m in req.body["messages"] if m["role"] == "user"][0]["content"]


def test_the_request_carries_both_response_images_in_the_order_shown(sqlite_store, tmp_path):
    task = image_task(tmp_path)
    with FakeOpenAI(lambda req: "[[A]]") as srv:
        run_judge(sqlite_store, [task], config(srv.url, order="both", max_image_side=512), run_id="r", dataset=D)
        reqs = srv.chat_requests()
    assert len(reqs) == 2
    by_order = {}
    for req in reqs:
        seq = sequence(user_turn(req))
        by_order["forward" if seq.index("<first>") < seq.index("<second>") else "reverse"] = (seq, user_turn(req))
    between = "[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]"
    fwd, _ = by_order["forward"]
    # the prompt's text and image at {question}, then A's parts, then B's, each between its own words
    assert fwd[0].endswith("[User Question]")
    assert fwd[1:] == [
        "Draw the chart.",
        "<prompt>",
        "[The Start of Assistant A's Answer]",
        "Here it is:",
        "<first>",
        between,
        "<second>",
        "and a wide one",
        "<second2>",
        "[The End of Assistant B's Answer]",
    ]
    rev, rev_content = by_order["reverse"]
    # reversed: the second response's parts are A's, the first's are B's
    assert rev[1:] == [
        "Draw the chart.",
        "<prompt>",
        "[The Start of Assistant A's Answer]",
        "<second>",
        "and a wide one",
        "<second2>",
        between,
        "Here it is:",
        "<first>",
        "[The End of Assistant B's Answer]",
    ]
    # the pixels and sizes: small images as they are, the wide one downscaled to max_image_side
    urls = {which(p["image_url"]["url"]): decoded(p["image_url"]["url"]) for p in rev_content if p["type"] != "text"}
    for name in ("prompt", "first", "second"):
        assert urls[name].size == SIZES[name]
        assert urls[name].getpixel((0, 0)) == COLOURS[name]
    assert urls["second2"].size == (512, 256)
    # stored in canonical terms, the prompt text with markers
    js = {j.order: j for j in sqlite_store.judgments("r")}
    assert (js["forward"].verdict, js["reverse"].verdict) == ("first", "second")
    assert "[image: second2.png]" in js["forward"].prompt


def test_image_first_templates_put_the_prompt_images_before_everything(sqlite_store, tmp_path):
    with FakeOpenAI(lambda req: "<answer>2</answer>") as srv:
        run_judge(sqlite_store, [image_task(tmp_path)], config(srv.url, "r1"), run_id="r", dataset=D)
        seq = sequence(user_turn(srv.chat_requests()[0]))
    assert seq[0] == "<prompt>" and seq.count("<prompt>") == 1
    assert seq.index("<first>") < seq.index("<second>") < seq.index("<second2>")
    assert sqlite_store.judgments("r")[0].verdict == "second"


def test_plain_text_tasks_are_sent_as_before(sqlite_store, tmp_path):
    img = draw(tmp_path, "prompt")
    task = JudgeTask("p0", "q", "GOOD", "BAD", (str(img),))
    with FakeOpenAI(lambda req: "[[A]]") as srv:
        run_judge(sqlite_store, [task], config(srv.url), run_id="r", dataset=D)
        content = user_turn(srv.chat_requests()[0])
    assert [p["type"] for p in content] == ["text", "image_url"]
    assert content[0]["text"] == BUILTIN_TEMPLATES["mmrb"].render("q", "GOOD", "BAD")


def test_missing_response_images_follow_the_prompt_images_policy(sqlite_store, tmp_path):
    task = image_task(tmp_path)
    gone = JudgeTask(
        task.pair_id,
        task.prompt,
        task.first,
        task.second,
        task.images,
        task.first_parts,
        (Part.of_image("lost.png", missing=True), Part.of_image(str(tmp_path / "deleted.png"))),
    )
    with FakeOpenAI(lambda req: "[[B]]") as srv:
        with pytest.raises(MmrbError, match=r"2 images not found: lost.png, .*deleted.png.*--allow-missing-images"):
            run_judge(sqlite_store, [gone], config(srv.url), run_id="r", dataset=D)
        assert srv.chat_requests() == []
        run_judge(sqlite_store, [gone], config(srv.url, allow_missing_images=True), run_id="r", dataset=D)
        seq = sequence(user_turn(srv.chat_requests()[0]))
    start_b = seq.index("[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]")
    assert seq[start_b + 1 : start_b + 3] == ["[image not available: lost.png]", "[image not available: deleted.png]"]
    assert "<second>" not in seq and sqlite_store.judgments("r")[0].verdict == "second"


def test_a_request_failure_is_never_a_verdict(sqlite_store, tmp_path):
    from tests.support.fake_openai import Fault

    with FakeOpenAI(lambda req: Fault("500")) as srv:
        s = run_judge(sqlite_store, [image_task(tmp_path)], config(srv.url), run_id="r", dataset=D)
    assert not s.complete
    (j,) = sqlite_store.judgments("r")
    assert (j.outcome, j.verdict) == ("error", None)


# -- templates -------------------------------------------------------------------------------
def parts_text(parts: list[Part]) -> list[str]:
    return [p.value if p.kind == "text" else f"<{p.value}>" for p in parts]


def test_render_parts_splits_the_template_at_its_placeholders():
    t = Template("t", "Q: {question}\nA said {answer_a} ... B said {answer_b}. {not a placeholder}", "brackets")
    img = Part.of_image
    out = t.render_parts("why?", [img("p")], [Part.of_text("x"), img("a")], [img("b")])
    assert parts_text(out) == ["Q:", "why?", "<p>", "A said", "x", "<a>", "... B said", "<b>", ". {not a placeholder}"]
    # an empty question and a placeholder at the very start or end leave no empty text
    t2 = Template("t", "{answer_a}{answer_b}{question}", "brackets")
    assert parts_text(t2.render_parts("", [], [img("a")], [img("b")])) == ["<a>", "<b>"]
    # image_first: the prompt's images open the turn
    t3 = Template("t", "{question} / {answer_a} / {answer_b}", "brackets", image_first=True)
    assert parts_text(t3.render_parts("q", [img("p")], [img("a")], [img("b")])) == [
        "<p>",
        "q",
        "/",
        "<a>",
        "/",
        "<b>",
    ]


def test_text_templates_render_as_before_and_keep_their_identity():
    t = BUILTIN_TEMPLATES["mmrb"]
    assert t.render("q", "x", "y", category="t2i") == t.text.replace("{question}", "q").replace(
        "{answer_a}", "x"
    ).replace("{answer_b}", "y")
    # a template without texts per category hashes as runs stored before hashed it
    assert t.digest_text == (t.system or "") + "\0" + t.text


def test_mmrb2_template_picks_the_task_prompt_and_the_benchmarks_layout():
    t = BUILTIN_TEMPLATES["mmrb2"]
    assert t.parser == "mmrb2"
    for task, head in (
        ("t2i", "You are an expert in multimodal quality analysis"),
        ("edit", "You are an expert in image editing quality analysis"),
        ("interleaved", "You are an expert in multimodal interleaved generation"),
        ("reasoning", "Please act as an impartial judge"),
        ("", "Please act as an impartial judge"),  # another category: the reasoning (text) prompt
    ):
        assert t.text_for(task).startswith(head)
    for text in MMRB2_TEXTS.values():  # the texts as the benchmark wrote them, its JSON answer at the end
        assert '"better_response": "A" or "B"' in text and text.endswith("}")
    # the parts api_pairwise_evaluator.py sends, in its order
    out = t.render_parts(
        "Make it blue",
        [Part.of_image("in.png")],
        [Part.of_image("a.png")],
        [Part.of_image("b.png")],
        "edit",
    )
    assert out[0].value == MMRB2_TEXTS["edit"]  # the benchmark's text exactly, a part of its own
    assert parts_text(out[1:]) == [
        "[ORIGINAL PROMPT TO MODEL:]",
        "Make it blue",
        "<in.png>",
        "[RESPONSE A:]",
        "<a.png>",
        "[RESPONSE B:]",
        "<b.png>",
    ]
    # as a text (a plain-text pair), the part break reads as a newline
    assert t.render("q", "x", "y", "edit") == MMRB2_TEXTS["edit"] + (
        "\n[ORIGINAL PROMPT TO MODEL:]\nq\n[RESPONSE A:]\nx\n[RESPONSE B:]\ny"
    )
    # the per-task texts are part of a run's identity
    assert (
        hashlib.sha256(t.digest_text.encode()).hexdigest()
        != hashlib.sha256(((t.system or "") + "\0" + t.text).encode()).hexdigest()
    )


@pytest.mark.parametrize(
    ("answer", "judgement", "shown"),
    [
        ('{"reasoning": "...", "score": 5, "better_response": "A", "confidence": 0.4}', "A", "A"),
        ('```json\n{"better_response": "B"}\n```', "B", "B"),
        ('Sure.\n{"better_response": "B"', "B", "B"),  # repaired, as json_repair does for the benchmark
        ('{"better_response": "tie"}', "tie", None),  # a judgement, naming neither: counted, never right
        ('{"better_response": "a"}', "a", None),
        ('{"better_response": 1}', 1, None),
        ('{"better_response": ""}', None, None),  # empty: no judgement
        ('{"better_response": null}', None, None),
        ('{"reasoning": "no verdict"}', None, None),
        ('["A"]', None, None),
        ("[[A]]", None, None),
        ("", None, None),
    ],
)
def test_mmrb2_answers_are_read_as_the_benchmark_reads_them(answer, judgement, shown):
    assert mmrb2_judgement(answer) == judgement
    p = parse_mmrb2(answer)
    assert (p.outcome, p.shown) == (("parsed", shown) if shown else ("unparsed", None))


# -- stored candidates as tasks ---------------------------------------------------------------
def test_stored_parts_become_task_parts(tmp_path):
    from curate.judging.records import task_parts

    content = (
        Part.of_text("see"),
        Part.of_image(ImageRef("a.png", "abc")),
        Part.of_image(ImageRef("lost.png", None, "missing")),
    )
    parts = task_parts(content, {"abc": tmp_path / "images" / "abc.png"})
    assert parts == (
        Part.of_text("see"),
        Part.of_image(str(tmp_path / "images" / "abc.png")),
        Part.of_image("lost.png", missing=True),
    )
    assert task_parts((), {}) == ()


# -- reward models ----------------------------------------------------------------------------
def test_reward_model_requests_carry_the_response_images(sqlite_store, tmp_path):
    from tests.support.fake_reward_model import RM

    task = image_task(tmp_path)
    rm = RM()
    try:
        cfg = RewardModel(
            name="rm",
            url=rm.url,
            request={
                "input": {"text": "{response}"},
                "imgs": "{response_images}",
                "content": "{response_content}",
                "prompt_images": "{images}",
            },
            response_field="out.rewards.0",
            max_image_side=512,
        )
        s = run_judge(sqlite_store, [task], cfg, run_id="rm", dataset=D)
        assert s.outcomes == {"parsed": 1}
        bodies = sorted(rm.bodies, key=lambda b: len(b["imgs"]))
        first, second = bodies
        assert [which(u) for u in first["imgs"]] == ["first"]
        assert [which(u) for u in second["imgs"]] == ["second", "second2"]
        assert decoded(second["imgs"][1]).size == (512, 256)
        assert [which(u) for u in first["prompt_images"]] == ["prompt"]
        assert [p["type"] for p in second["content"]] == ["image_url", "text", "image_url"]
        assert second["content"][1] == {"type": "text", "text": "and a wide one"}
        assert second["content"][0]["image_url"]["url"] == second["imgs"][0]
        # the stored request keeps no image bytes
        stored = json.loads(sqlite_store.judgments("rm")[0].prompt)
        assert "base64" not in json.dumps(stored) and stored["second"]["imgs"][0].startswith("<image sha256=")

        # a plain-text pair: no images, its text as one part
        plain = JudgeTask("p1", "q", "good", "bad")
        rm.bodies.clear()
        run_judge(sqlite_store, [plain], cfg, run_id="rm-plain", dataset=D)
        assert sorted(b["content"][0]["text"] for b in rm.bodies) == ["bad", "good"]
        assert all(b["imgs"] == [] for b in rm.bodies)

        # a request that cannot send response images is refused before anything is sent
        rm.bodies.clear()
        text_only = RewardModel(name="rm", url=rm.url, request={"input": {"text": "{response}"}})
        with pytest.raises(MmrbError, match=r"1 pair \(p0\) has responses with images.*response_images"):
            run_judge(sqlite_store, [task], text_only, run_id="rm-text", dataset=D)
        assert rm.bodies == []
    finally:
        rm.close()


def test_a_template_file_may_hold_a_text_per_category(tmp_path):
    from curate.errors import InputError
    from curate.judging.templates import load_template

    f = tmp_path / "mine.toml"
    f.write_text(
        'text = "Q {question} A {answer_a} B {answer_b}"\nparser = "mmrb2"\n'
        '[by_category]\nt2i = "Picture: {question} first {answer_a} second {answer_b}"\n'
    )
    t = load_template(f)
    assert t.render("q", "a", "b", "t2i") == "Picture: q first a second b"
    assert t.render("q", "a", "b", "edit") == "Q q A a B b"
    f.write_text('text = "Q {question} A {answer_a} B {answer_b}"\n[by_category]\nt2i = "only {question}"\n')
    with pytest.raises(InputError, match=r"by_category.t2i.*lacks 2 placeholders"):
        load_template(f)


def test_a_part_break_cuts_literal_text_into_parts():
    t = Template("t", "Judge well.\f[Q]\n{question}\n[A]\n{answer_a}\n[B]\n{answer_b}", "brackets")
    out = t.render_parts("q", [], [Part.of_image("a")], [Part.of_image("b")])
    assert parts_text(out) == ["Judge well.", "[Q]", "q", "[A]", "<a>", "[B]", "<b>"]
    assert t.render("q", "x", "y") == "Judge well.\n[Q]\nq\n[A]\nx\n[B]\ny"


PART = st.one_of(
    st.builds(Part.of_text, st.text(min_size=0, max_size=8)),
    st.builds(Part.of_image, st.sampled_from(["i1.png", "i2.png", "i3.png", "gone.png"])),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(PART, max_size=5),
    st.lists(PART, max_size=5),
    st.lists(st.sampled_from(["p1.png", "p2.png"]), max_size=2),
    st.sampled_from(sorted(BUILTIN_TEMPLATES)),
    st.sampled_from(["forward", "reverse"]),
)
def test_every_image_is_sent_once_in_place_whatever_the_parts(first, second, prompt_images, name, order):
    """Whatever the parts, the message shows the prompt's images, then the response shown as A's
    images in order, then B's (R1-Reward's template: the prompt's images first too); a missing
    image is its marker in place."""
    from curate.judging.vlm import build_messages
    from curate.sides import shown_first, shown_pair

    first = [*first, Part.of_image("i1.png")]  # a task with response images
    task = JudgeTask("p", "q?", "x", "y", tuple(prompt_images), tuple(first), tuple(second))
    urls = {n: f"data:image/png;base64,{n}" for n in ("p1.png", "p2.png", "i1.png", "i2.png", "i3.png")}
    messages, text = build_messages(BUILTIN_TEMPLATES[name], task, order, urls)
    content = messages[-1]["content"]
    a, b = shown_pair(task.parts("first"), task.parts("second"), shown_first(order))
    sent = [p["image_url"]["url"].split(",")[1] for p in content if p["type"] == "image_url"]
    expected = [*prompt_images, *(x.value for x in (*a, *b) if x.kind == "image" and x.value != "gone.png")]
    assert sent == expected
    markers = [p["text"] for p in content if p["type"] == "text" and p["text"].startswith("[image not available")]
    assert len(markers) == sum(1 for x in (*a, *b) if x.value == "gone.png" and x.kind == "image")
    # the text of each part is there as it is (blank ones left out), A's before B's
    texts = [p["text"] for p in content if p["type"] == "text"]
    shown_texts = [x.value for x in (*a, *b) if x.kind == "text" and x.value.strip()]
    it = iter(texts)
    assert all(any(t == s for t in it) for s in shown_texts)
    assert text == BUILTIN_TEMPLATES[name].render("q?", *shown_pair("x", "y", shown_first(order)))


def test_a_run_that_shows_response_images_is_not_resumed_as_a_text_run(sqlite_store, tmp_path):
    from curate.judging.runner import default_run_id, with_response_images

    task = image_task(tmp_path)
    text_task = JudgeTask("p0", task.prompt, task.first, task.second, task.images)  # markers only
    with FakeOpenAI(lambda req: "[[A]]") as srv:
        cfg = config(srv.url)
        run_judge(sqlite_store, [text_task], cfg, run_id="r", dataset=D)
        with pytest.raises(MmrbError, match=r"different configuration \(response_images\)"):
            run_judge(sqlite_store, [task], cfg, run_id="r", dataset=D)
        plain = cfg.identity()
        assert with_response_images(plain, [text_task]) == plain  # plain-text runs keep their ids
        shown = with_response_images(plain, [task])
        assert default_run_id(cfg.name, shown, D) != default_run_id(cfg.name, plain, D)
