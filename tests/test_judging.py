"""Templates, verdict parsing and order policies (curate/judging)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curate.errors import InputError
from curate.judging import (
    BUILTIN_TEMPLATES,
    get_template,
    load_template,
    parse_verdict,
    plan,
)
from curate.judging.parsing import parse_brackets, parse_r1, parse_ratings, parse_vlrb, regex_parser
from curate.sides import to_letter, verdict_from_letter


# -- Multimodal RewardBench [[A]] / [[B]] ----------------------------------------------
@pytest.mark.parametrize(
    "text, outcome, shown",
    [
        ("... Final verdict: [[A]]", "parsed", "A"),
        ("[[B]]", "parsed", "B"),
        ("I considered [[A]] but in the end [[B]]", "both", None),  # the official script says A
        ("Assistant B is better.", "unparsed", None),
        ("[A]", "unparsed", None),
        ("[[C]]", "parsed", "tie"),
    ],
)
def test_brackets(text, outcome, shown):
    p = parse_brackets(text)
    assert (p.outcome, p.shown) == (outcome, shown)


# -- VL-RewardBench "Overall Judgment: Answer X is better" --------------------------------
@pytest.mark.parametrize(
    "text, outcome, shown",
    [
        ("Accuracy: ...\nOverall Judgment: Answer 2 is better.", "parsed", "B"),
        ("**Overall Judgment**: Answer 1 is slightly better", "parsed", "A"),
        ("Therefore, Answer 1 is the better one", "parsed", "A"),
        ("overall judgment:\n\nanswer 2 is better", "parsed", "B"),  # newlines removed, any case
        # the greedy .* takes the last "Answer N is better" after the first anchor
        ("Overall Judgment: Answer 1 is better. On reflection, Answer 2 is better.", "parsed", "B"),
        ("Answer 1 is better", "unparsed", None),  # no "Overall Judgment"/"Therefore" anchor
        ("Overall Judgment: Answer 3 is better", "unparsed", None),
        ("I cannot decide.", "unparsed", None),
    ],
)
def test_vlrb(text, outcome, shown):
    p = parse_vlrb(text)
    assert (p.outcome, p.shown) == (outcome, shown)


# -- R1-Reward <answer>1|2</answer> ------------------------------------------------------
@pytest.mark.parametrize(
    "text, outcome, shown",
    [
        ("<think>...</think><answer>1</answer>", "parsed", "A"),
        ("<think>x</think><answer> 2 </answer>", "parsed", "B"),
        ("<answer>1</answer> or rather <answer>2</answer>", "both", None),
        ("<answer>1</answer><answer>1</answer>", "parsed", "A"),
        ("Response 2 is better", "unparsed", None),  # R1's own harness would read the digit
        ("<answer>3</answer>", "unparsed", None),
    ],
)
def test_r1(text, outcome, shown):
    p = parse_r1(text)
    assert (p.outcome, p.shown) == (outcome, shown)


def test_ratings():
    p = parse_ratings("A is fine.\nRating A: [[7]]\nRating B: [[4.5]]")
    assert (p.outcome, p.shown, p.score_a, p.score_b) == ("parsed", "A", 7.0, 4.5)
    assert parse_ratings("Rating A: [[6]] Rating B: [[6]]").shown == "tie"
    assert parse_ratings("Rating A: [[3]] Rating B: [[9]]").shown == "B"
    assert parse_ratings("Rating A: [[7]]").outcome == "unparsed"  # B missing
    assert parse_ratings("Rating A: [[11]] Rating B: [[2]]").outcome == "unparsed"  # off the scale
    assert parse_ratings("Rating A: [[7]] Rating B: [[2]] Rating A: [[3]]").outcome == "unparsed"  # contradicts


def test_regex_parser_and_lookup():
    parse = regex_parser(r"VERDICT:\s*(\w+)")
    assert parse("VERDICT: 2").shown == "B"
    assert parse("VERDICT: a").shown == "A"
    assert parse("VERDICT: A ... VERDICT: B").outcome == "both"
    assert parse("VERDICT: maybe").outcome == "unparsed"
    assert parse_verdict(None, "brackets").outcome == "unparsed"
    assert parse_verdict("VERDICT: tie", r"regex:VERDICT:\s*(\w+)").shown == "tie"
    with pytest.raises(ValueError):
        regex_parser("no group")
    with pytest.raises(ValueError, match="unknown verdict parser"):
        parse_verdict("x", "nope")


# -- canonical verdicts ------------------------------------------------------------------
def test_verdict_from_letter():
    assert verdict_from_letter("A", "forward") == "first"
    assert verdict_from_letter("B", "forward") == "second"
    assert verdict_from_letter("A", "reverse") == "second"  # reverse shows the second response as A
    assert verdict_from_letter("B", "reverse") == "first"
    assert verdict_from_letter("tie", "reverse") == "tie"
    assert verdict_from_letter(None, "forward") is None


@given(st.sampled_from(["first", "second"]), st.sampled_from(["forward", "reverse"]))
def test_letter_roundtrip(verdict, order):
    assert verdict_from_letter(to_letter(verdict, order), order) == verdict


# -- order policies ----------------------------------------------------------------------
def test_plan_policies():
    assert plan("p", "fixed") == [("forward", 0)]
    assert plan("p", "fixed", samples=2) == [("forward", 0), ("forward", 1)]
    assert plan("p", "both") == [("forward", 0), ("reverse", 0)]
    assert plan("p", "both", samples=2) == [("forward", 0), ("reverse", 0), ("forward", 1), ("reverse", 1)]
    r = plan("p", "random", samples=10, seed=7)
    assert [i for _, i in r] == list(range(10))
    with pytest.raises(ValueError):
        plan("p", "sideways")
    with pytest.raises(ValueError):
        plan("p", "fixed", samples=0)


def test_random_order_is_seeded_and_mixed():
    orders = [plan(f"pair-{i}", "random", seed=1)[0][0] for i in range(200)]
    assert orders == [plan(f"pair-{i}", "random", seed=1)[0][0] for i in range(200)]  # a rerun: the same
    assert 70 < orders.count("forward") < 130  # about half each
    other = [plan(f"pair-{i}", "random", seed=2)[0][0] for i in range(200)]
    assert other != orders  # the seed matters


@given(st.text(min_size=1, max_size=20), st.integers(1, 12), st.integers(0, 5))
def test_random_samples_are_deterministic(pid, k, seed):
    assert plan(pid, "random", k, seed) == plan(pid, "random", k, seed)


# -- templates ---------------------------------------------------------------------------
def test_builtin_templates_render():
    t = BUILTIN_TEMPLATES["mmrb"]
    text = t.render("What is {x}?", "first answer", "second answer")
    assert "[User Question]\nWhat is {x}?\n\n[The Start of Assistant A's Answer]\nfirst answer\n" in text
    assert text.endswith("second answer\n[The End of Assistant B's Answer]")
    assert '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better.' in text
    assert "[[C]]" not in text  # pair-v2 without the tie option
    v = BUILTIN_TEMPLATES["vlrewardbench"].render("Q", "a1", "a2")
    assert "Answer 1: a1\n\nAnswer 2: a2" in v and "Overall Judgment: Answer X is better" in v
    assert "<answer>1/2</answer>" in BUILTIN_TEMPLATES["r1"].render("Q", "a", "b")
    assert "Rating A: [[n]]" in BUILTIN_TEMPLATES["ratings"].render("Q", "a", "b")
    for name, t in BUILTIN_TEMPLATES.items():
        assert get_template(name) is t


def test_user_template_files(tmp_path):
    txt = tmp_path / "mine.txt"
    txt.write_text('Q: {question}\n1) {answer_a}\n2) {answer_b}\nSay VERDICT: 1 or 2. JSON: {"k": 1}')
    t = load_template(txt, parser=r"regex:VERDICT:\s*(\d)")
    assert t.render("q", "x", "y") == 'Q: q\n1) x\n2) y\nSay VERDICT: 1 or 2. JSON: {"k": 1}'
    toml = tmp_path / "mine.toml"
    toml.write_text(
        'text = "{question} {answer_a} {answer_b}"\nparser = "r1"\nsystem = "be fair"\nimage_first = true\n'
    )
    t = get_template(str(toml))
    assert (t.parser, t.system, t.image_first) == ("r1", "be fair", True)

    bad = tmp_path / "bad.txt"
    bad.write_text("only {question} and {answer_a}")
    with pytest.raises(InputError) as e:
        load_template(bad)
    assert "bad.txt field 'text'" in str(e.value) and "{answer_b}" in str(e.value)
    with pytest.raises(InputError, match="template file not found"):
        load_template(tmp_path / "absent.txt")
    with pytest.raises(InputError, match="field 'parser'"):
        load_template(txt, parser="nope")


# -- judge files: one reader for every kind (curate/judging/config.py) ---------------------------
def test_a_vlm_judge_file_with_its_template_beside_it_and_the_commands_options(tmp_path):
    from curate.judging.config import load_judge, stored_plan
    from curate.judging.vlm import VLMJudge

    (tmp_path / "t.txt").write_text("Q {question} A {answer_a} B {answer_b}")
    f = tmp_path / "judge.toml"
    f.write_text(
        'name = "j"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\ntemplate = "t.txt"\norder = "random"\n'
        "samples = 3\nconcurrency = 2\ntimeout = 5\n[params]\ntemperature = 0\n"
    )
    j = load_judge(f)
    assert isinstance(j, VLMJudge) and j.name == "j" and j.template.name == "t"
    assert (j.endpoint.concurrency, j.endpoint.timeout, j.endpoint.params) == (2, 5, {"temperature": 0})
    assert j.plan("p") == plan("p", "random", 3, 0)
    # a command's options win over the file; None is an option not given
    j = load_judge(f, order="both", samples=None, seed=4, concurrency=9, allow_missing_images=True)
    assert (j.order, j.samples, j.seed, j.endpoint.concurrency, j.allow_missing_images) == ("both", 3, 4, 9, True)
    # a stored run of it plans the same judgments from its identity (mmrb_eval/runs.py's health)
    planner = stored_plan(j.identity())
    assert planner is not None and planner("p") == j.plan("p")
    assert stored_plan({"kind": "other"}) is None


def test_a_reward_model_file_and_its_endpoint(tmp_path):
    from curate.judging.config import load_judge, stored_plan
    from curate.judging.reward_model import RewardModel

    f = tmp_path / "rm.toml"
    f.write_text(
        'kind = "reward_model"\nurl = "http://127.0.0.1:1/score"\nresponse_field = "rewards.0"\nmax_retries = 1\n'
        '[headers]\nx-team = "t"\n[request]\ntext = "{response}"\n'
    )
    rm = load_judge(f, order="both", concurrency=3, max_response_chars=99)  # the order means nothing to it
    assert isinstance(rm, RewardModel) and rm.name == "http://127.0.0.1:1/score"
    ep = rm.endpoint
    assert (ep.base_url, ep.concurrency, ep.max_retries, ep.max_response_chars) == (rm.url, 3, 1, 99)
    assert (ep.timeout, ep.backoff_base, dict(ep.headers)) == (60.0, 0.5, {"x-team": "t"})  # its own defaults
    assert rm.plan("p") == [("forward", 0)] and stored_plan(rm.identity())("p") == [("forward", 0)]
    assert rm.identity() == {
        "kind": "reward_model",
        "url": "http://127.0.0.1:1/score",
        "request": {"text": "{response}"},
        "response_field": "rewards.0",
        "max_image_side": 1024,
    }


@pytest.mark.parametrize(
    "text, field, words",
    [
        ('kind = "oracle"\n', "kind", "must be one of vlm, reward_model"),
        ('base_url = "http://x/v1"\nmodel = "m"\ntemprature = 0\n', "temprature", "unknown key"),
        ('base_url = "http://x/v1"\n', "model", "required"),
        ('base_url = "ftp://x"\nmodel = "m"\n', "base_url", "not an http(s) URL"),
        ('base_url = "http://x/v1"\nmodel = "m"\norder = "sideways"\n', "order", "must be one of fixed"),
        ('base_url = "http://x/v1"\nmodel = "m"\nsamples = 0\n', "samples", "positive integer"),
        ('base_url = "http://x/v1"\nmodel = "m"\nconcurrency = "8"\n', "concurrency", "must be an integer"),
        ('base_url = "http://x/v1"\nmodel = "m"\nparser = "nope"\n', "parser", "unknown verdict parser"),
        ('kind = "reward_model"\nurl = "http://x"\nrequest = "x"\n', "request", "must be a table"),
        ('kind = "reward_model"\nurl = "http://x"\nmodel = "m"\n', "model", "unknown key"),
    ],
)
def test_a_judge_file_is_refused_naming_the_field(tmp_path, text, field, words):
    from curate.judging.config import load_judge

    f = tmp_path / "judge.toml"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        load_judge(f)
    assert any(p.field == field and words in p.message and p.file == str(f) for p in e.value.problems), str(e.value)
