"""curate/formats: each published format read (and written) by its one module, from tiny
literal records; and the importer and scoring reading one file alike."""

from __future__ import annotations

import json
import re

import pytest

from curate.errors import InputError
from curate.formats import detect_layout, judgments, mm_rlhf, mmrb, mmrb2, r1_rewards, triplets
from curate.formats import vlrewardbench as vlrb
from curate.formats.fields import Fields, parse_rows
from curate.formats.reader import load_rows, read_rows
from curate.judging.records import Judgment
from curate.model import Part, Triplet

TEXT, IMAGE = Part.of_text, Part.of_image


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def read(path, parse):
    """The records of a whole file, as scoring reads it."""
    return [rec for _, rec in parse_rows(path, load_rows(path), parse)]


def problems(parse, data, **kw) -> list[tuple[str | None, str]]:
    f = Fields("f.jsonl", 1, data)
    assert parse(f, **kw) is None
    return [(p.field, p.message) for p in f.problems]


# -- rows ------------------------------------------------------------------------------------
def test_rows_keep_lines_nulls_on_request_and_name_bad_json(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [{"a": 1}, "null", "", "{oops"])
    rows = list(read_rows(path, nulls=True))
    assert [(r.line, r.data, r.error is None) for r in rows] == [(1, {"a": 1}, True), (2, None, True), (4, None, False)]
    assert rows[2].error.startswith("malformed JSON")
    assert list(read_rows(path))[1].error == "expected a JSON object, got NoneType"
    with pytest.raises(InputError) as e:  # scoring's whole-file read: every bad row, in the importer's words
        load_rows(path)
    assert [(p.line, p.message.split(":")[0]) for p in e.value.problems] == [
        (2, "expected a JSON object, got NoneType"),
        (4, "malformed JSON"),
    ]


def test_scoring_refuses_text_that_is_not_utf8(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"id": "a", "prompt": "bad \xff", "chosen": "c", "rejected": "r"}\n')
    with pytest.raises(InputError, match="t.jsonl:1 field 'prompt': not valid UTF-8"):
        read(path, triplets.parse)


def test_layouts_from_the_first_record():
    def layout(rec: dict) -> str:
        return detect_layout(rec, "f").name

    assert layout({"ID": 1, "Output1": "a", "Output2": "b", "Better": "Output1"}) == "mmrb"
    assert layout({"ID": 1, "Label": "A", "output": "[[A]]"}) == "mmrb_outputs"
    assert layout({"id": 1, "response_a": {}, "response_b": {}, "chosen": "A"}) == "mmrb2"
    assert layout({"id": 1, "query": "q", "response": [], "ranking": [0, 1]}) == "vlrewardbench"
    assert layout({"id": 1, "query": "q", "response": [], "human_ranking": [0, 1]}) == "vlrewardbench"
    assert layout({"id": 1, "prompt": "q", "chosen": "c", "rejected": "r"}) == "triplet"
    # the first layout that fits, in the registry's order: a record before its judge output
    assert layout({"ID": 1, "Label": "A", "Output1": "a", "Output2": "b", "Better": "Output1"}) == "mmrb"
    assert layout({"id": 1, "response_a": {}, "response_b": {}, "chosen": "A", "rejected": "r"}) == "mmrb2"
    with pytest.raises(InputError, match="unknown dataset layout: expected Multimodal RewardBench") as e:
        detect_layout({"question": "?"}, "f")
    assert str(e.value).endswith("or triplets (id, prompt, chosen, rejected)")
    with pytest.raises(InputError, match="unknown dataset layout"):
        detect_layout(["not", "a", "record"], "f")


# -- Multimodal RewardBench ------------------------------------------------------------------
MMRB = {
    "ID": "vqa_1",
    "Text": "How many?",
    "Image": "images/a.png",
    "Output1": "Three.",
    "Output2": "Five.",
    "Better": "Output2",
    "Category": "vqa",
}


def test_mmrb_record_and_what_each_reader_needs(tmp_path):
    (rec,) = read(write_jsonl(tmp_path / "m.jsonl", [MMRB]), mmrb.parse)
    assert rec == mmrb.MmrbRecord("vqa_1", "Three.", "Five.", "Output2", "How many?", ("images/a.png",), "vqa")
    assert rec.preferred == "second"
    bare = {k: MMRB[k] for k in ("ID", "Output1", "Output2", "Better")}
    assert mmrb.parse(Fields("f", 1, bare)) == mmrb.MmrbRecord("vqa_1", "Three.", "Five.", "Output2")  # scoring
    assert problems(mmrb.parse, bare, need=mmrb.IMPORT_NEEDS) == [  # the importer needs more
        ("Text", "missing required field"),
        ("Category", "missing required field"),
        ("Image", "missing required field"),
    ]
    assert problems(mmrb.parse, dict(MMRB, Better="A")) == [
        ("Better", "expected 'Output1' or 'Output2', got 'A': the better response is Output1 or Output2")
    ]


def test_mmrb_write_then_read(tmp_path):
    recs = [
        mmrb.MmrbRecord("a", "x", "", "Output1", "q", ("i.png",), "vqa"),
        mmrb.MmrbRecord("b", "y", "z", "Output2", "", (), "safety"),
    ]
    mmrb.write(tmp_path / "m.jsonl", recs)
    assert read(tmp_path / "m.jsonl", mmrb.parse) == recs
    assert list(json.loads((tmp_path / "m.jsonl").read_text().splitlines()[1])) == list(mmrb.FIELDS)


def test_mmrb_judge_outputs(tmp_path):
    path = write_jsonl(
        tmp_path / "o.jsonl",
        [
            {"ID": "v_1", "Image": "i.jpg", "Label": "B", "output": "[[B]]", "Meta": {"Category": "vqa"}},
            {"ID": "v_2", "outputs": ["[[A]]", "None"], "Meta": {}},
        ],
    )
    a, b = read(path, lambda f: mmrb.parse_output(f, labelled=False))
    assert (a.id, a.label, a.outputs, a.images, a.meta) == ("v_1", "B", ("[[B]]",), ("i.jpg",), {"Category": "vqa"})
    assert (b.label, b.outputs) == (None, ("[[A]]", "None"))
    with pytest.raises(InputError, match="o.jsonl:2 field 'Label': missing"):  # the file is the labels
        read(path, lambda f: mmrb.parse_output(f, labelled=True))
    assert problems(mmrb.parse_output, {"ID": "x", "Label": "a", "output": 1}, labelled=True) == [
        ("Label", "must be A or B, not 'a'"),
        ("output", "must be the judge's text (a string)"),
    ]


# -- triplets --------------------------------------------------------------------------------
def test_triplets_write_then_read(tmp_path):
    ts = [
        Triplet(
            "t1", "q", ("images/1.png", "images/2.png"), "good", "bad", "vqa", "mine", "m1", "m2", "preference", 3, 0.5
        ),
        Triplet("t2", "", (), "c", "", "safety"),
    ]
    triplets.write(tmp_path / "triplets.jsonl", ts)
    a, b = read(tmp_path / "triplets.jsonl", triplets.parse)
    assert (a.id, a.prompt, a.images, a.chosen, a.rejected, a.category, a.source) == (
        "t1",
        "q",
        ("images/1.png", "images/2.png"),
        "good",
        "bad",
        "vqa",
        "mine",
    )
    assert a.extra == {
        "chosen_model": "m1",
        "rejected_model": "m2",
        "task": "preference",
        "n_labels": 3,
        "agreement": 0.5,
    }
    assert (b.prompt, b.rejected, b.images, b.extra["task"]) == ("", "", (), None)


def test_chosen_rejected_copies(tmp_path):
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"id": "g1", "prompt": "p", "chosen": "c", "rejected": "r", "image": "mcq/1.png", "prompt_id": 7},
            {"id": "g2", "query": "asked", "chosen": "c", "rejected": "r", "video": "video/2.mp4", "image": ""},
        ],
    )
    a, b = read(path, triplets.parse)
    assert (a.images, a.image, a.video, a.group) == (("mcq/1.png",), "mcq/1.png", None, "7")
    assert (b.prompt, b.images, b.image, b.video) == ("asked", (), "", "video/2.mp4")
    assert problems(triplets.parse, {"id": "x", "chosen": "c"}, need={"prompt"}) == [
        ("prompt", "missing required field"),
        ("rejected", "missing required field"),
    ]


def test_chosen_first_is_scorings_stored_orientation():
    # scoring's orientation of a chosen/rejected record, pinned: runs stored before they
    # recorded their orientation keep verdicts as first/second of it. The importer's (of the
    # pair id) differs on purpose (see the comment above curate.sides.copy_chosen_first).
    from curate.sides import copy_chosen_first, imported_chosen_first

    ids = [f"t{i}" for i in range(8)]
    assert [copy_chosen_first(i) for i in ids] == [False, True, False, False, False, False, True, True]
    assert [imported_chosen_first(i) for i in ids] == [True, False, False, False, True, False, True, True]


# -- VL-RewardBench ----------------------------------------------------------------------------
VLRB = {
    "id": "RLAIF-V-5",
    "query": "Describe.",
    "response": ["a dog", "a cat"],
    "human_ranking": [1, 0],
    "models": ["m-a", "m-b"],
    "image": "images/5.jpg",
    "query_source": "RLAIF-V",
    "judge": "gpt",
    "ground_truth": "",
    "meta": {"category": "hallucination"},
}


def test_vlrb_original_records(tmp_path):
    (rec,) = read(write_jsonl(tmp_path / "v.jsonl", [VLRB]), vlrb.parse)
    assert (rec.id, rec.response, rec.ranking, rec.models, rec.images, rec.query_source) == (
        "RLAIF-V-5",
        ("a dog", "a cat"),
        (1, 0),
        ("m-a", "m-b"),
        ("images/5.jpg",),
        "RLAIF-V",
    )
    assert rec.meta == {"category": "hallucination"} and rec.extra == {"judge": "gpt", "ground_truth": ""}
    # copies that say "ranking" and "image_path"
    other = {"id": "x", "query": "q", "response": ["a", "b"], "ranking": [0, 1], "image_path": "i/povid/1.jpg"}
    assert (vlrb.parse(Fields("f", 1, other)).ranking, vlrb.parse(Fields("f", 1, other)).image_path) == (
        (0, 1),
        "i/povid/1.jpg",
    )
    assert problems(vlrb.parse, dict(VLRB, human_ranking=[0])) == [
        ("human_ranking", "expected two numeric ranks such as [0, 1]")
    ]
    # a model name with ':' is fine to read, not to import (it is part of candidate ids)
    assert vlrb.parse(Fields("f", 1, dict(VLRB, models=["a:1", "b"]))) is not None
    assert problems(vlrb.parse, dict(VLRB, models=["a:1", "b"]), need=vlrb.IMPORT_NEEDS) == [
        ("models", "expected two model names (without ':')")
    ]


def test_vlrb_write_then_read(tmp_path):
    recs = [
        vlrb.VlrbRecord(
            "a",
            "q",
            ("x", "y"),
            (0, 1),
            ("i.png",),
            ("m1", "m2"),
            "src",
            None,
            {"category": "vqa", "images": ["i.png"]},
            {"judge": "human", "rationale": "", "human_error_analysis": "", "ground_truth": "5"},
        )
    ]
    vlrb.write(tmp_path / "v.jsonl", recs)
    assert read(tmp_path / "v.jsonl", vlrb.parse) == recs
    assert list(json.loads((tmp_path / "v.jsonl").read_text())) == list(vlrb.PUBLISHED)


def test_vlrb_text_copy(tmp_path):
    (rec,) = read(
        write_jsonl(
            tmp_path / "t.jsonl",
            [
                {
                    "id": "hallucination_pair-1",
                    "prompt": "p",
                    "chosen": "c",
                    "rejected": "r",
                    "image": "img/1.jpg",
                    "chosen_reason": "why",
                }
            ],
        ),
        vlrb.parse_text,
    )
    assert (rec.id, rec.chosen, rec.images, rec.category) == ("hallucination_pair-1", "c", ("img/1.jpg",), None)


# cal.py's grouping: the id up to its first "_" or "-", compared exactly
CAL_GROUPS = [
    ("RLAIF-V-5", "hallucination"),
    ("RLHF-V_3", "hallucination"),
    ("hallucination_pair-1003", "hallucination"),
    ("mathverse_4", "reasoning"),
    ("mmmu-pro_5", "reasoning"),
    ("mmmu_pro-11", "reasoning"),
    ("wildvision-battle-13", "general"),
    ("svit-1", "general"),
    ("LRVInstruction-8", "general"),
    # what the two readers used to disagree on: the importer said hallucination for both (a
    # case-blind "rlhf"/"povid" prefix), scoring "all" for the first ("rlhf" named no group)
    ("rlhf_3", "general"),
    ("povid_2", "general"),
    ("MMMU-9", "general"),
    ("RLAIF", "hallucination"),
    ("", "general"),
]


@pytest.mark.parametrize("rid, group", CAL_GROUPS)
def test_vlrb_groups_are_cal_py_s(rid, group):
    assert vlrb.group_of(rid) == vlrb.category_of(rid) == group
    # a category the record states (mmrb build writes the project's into meta) comes first
    assert vlrb.category_of(rid, "vqa") == "vqa"


def test_vlrb_category_of_a_record():
    rec = vlrb.parse(Fields("f", 1, dict(VLRB, id="rlhf_3", meta={}, query_source="RLHF-V")))
    assert (rec.stated_category, rec.category) == (None, "general")  # query_source is not cal.py's rule
    assert vlrb.parse(Fields("f", 1, dict(VLRB, meta={"category": "vqa"}))).category == "vqa"
    assert (
        vlrb.parse(Fields("f", 1, dict(VLRB, meta='{"category": "vqa"}'))).category == "hallucination"
    )  # published meta is text


def test_vlrb_inference_records(tmp_path):
    rec = {
        "id": "mmmu-1",
        "query": "q",
        "response": ["a", "b"],
        "ranking": [1, 0],
        "meta": {"random_number": 1, "filter_choice": "Answer 2 is better", "filter_prompt": "P"},
    }
    r = vlrb.parse_inference(Fields("f", 1, rec))
    assert (r.ranking, r.random_number, r.filter_choice, r.filter_prompt, r.key) == (
        (1, 0),
        1,
        "Answer 2 is better",
        "P",
        "mmmu-1q" + "a\tb",
    )
    assert problems(vlrb.parse_inference, dict(rec, ranking=[1, 2])) == [
        ("ranking", "must be [0, 1] or [1, 0], not [1, 2]")
    ]
    assert problems(vlrb.parse_inference, rec, trust_flag=True) == [("meta.flag_status", "missing")]


# -- MMRB2 -----------------------------------------------------------------------------------
MMRB2 = {
    "id": "p1",
    "response_a": {"model_name": "m1", "response_content": [["text", "Look"], ["image", "p1_0.jpg"]]},
    "response_b": {"model_name": "m2", "response_content": [["text", "B"]]},
    "chosen": "A",
    "human_annotations": [5, 4, 2],
    "prompt_source": "bench",
    "prompt_metadata": {"id": "1"},
}


def test_mmrb2_ground_truth(tmp_path):
    path = tmp_path / "t2i_response_only.json"
    path.write_text(json.dumps({"pairs": [MMRB2]}, indent=2))
    ((line, rec),) = parse_rows(path, load_rows(path, mmrb2.JSON_KEY), mmrb2.parse)
    assert line == 3 and rec.preferred == "first" and rec.prompt_source == "bench"
    assert rec.response_a == mmrb2.Mmrb2Response((TEXT("Look"), IMAGE("p1_0.jpg")), "m1")
    # copies that keep a response as its Python repr or as plain text
    copy = dict(MMRB2, response_a=repr(MMRB2["response_a"]), response_b="just text")
    r = mmrb2.parse(Fields("f", 1, copy))
    assert r.response_a == rec.response_a and r.response_b == mmrb2.Mmrb2Response((TEXT("just text"),))
    assert problems(mmrb2.parse, copy, need=mmrb2.IMPORT_NEEDS) == [
        ("response_b", "expected an object with model_name and response_content, got str")
    ]
    assert problems(mmrb2.parse, dict(MMRB2, chosen="C")) == [("chosen", "expected 'A' or 'B', got 'C'")]
    assert mmrb2.task_from_filename("my_edit_set.json") == "edit" and mmrb2.task_from_filename("x.json") is None


def test_mmrb2_task_of_a_file_name():
    from pathlib import Path

    assert mmrb2.task_of(Path("t2i_response_only.json")) == "t2i"
    assert mmrb2.task_of(Path("REASONING.json")) == "reasoning"
    assert mmrb2.task_of(Path("my_t2i.json")) == "t2i"  # scoring used to say "my": its first word
    assert mmrb2.task_of(Path("x.json"), "edit") == "edit"
    with pytest.raises(
        InputError,
        match=r"file name 'my_set.json' \(no word of it is one of t2i, edit, interleaved, "
        r"reasoning\); name the file after its task",
    ):
        mmrb2.task_of(Path("my_set.json"))
    with pytest.raises(InputError, match="; pass --category"):
        mmrb2.task_of(Path("my_set.json"), option="--category")
    with pytest.raises(InputError, match="unknown MMRB2 task 'image'"):
        mmrb2.task_of(Path("t2i.json"), "image")


def test_mmrb2_response_as_text():
    r = mmrb2.Mmrb2Response((TEXT("  Look at this:\n"), IMAGE("p1_0.jpg"), TEXT(" "), TEXT("done.")))
    # stripped parts, images as markers, a blank line between; scoring used to join the
    # unstripped parts with one newline ("  Look at this:\n\n[image: p1_0.jpg]\n \ndone.")
    assert mmrb2.render_text(r) == "Look at this:\n\n[image: p1_0.jpg]\n\ndone."
    assert mmrb2.render_text(mmrb2.Mmrb2Response((IMAGE("a.png"),))) == "[image: a.png]"
    assert mmrb2.render_text(mmrb2.Mmrb2Response(())) == ""


def test_mmrb2_ratings():
    assert mmrb2.ratings(Fields("f", 1, MMRB2), "t2i") == tuple(mmrb2.Rating(score=s) for s in (5, 4, 2))
    graded = {"human_annotations": {"response_a_ratings": [], "response_b_ratings": ["B", "C"]}}
    assert mmrb2.ratings(Fields("f", 1, graded), "reasoning") == (mmrb2.Rating(grade_b="B"), mmrb2.Rating(grade_b="C"))
    f = Fields("f", 1, {"human_annotations": [1, 9]})
    assert mmrb2.ratings(f, "edit") is None and f.problems[0].message == "expected up to 3 scores from 1 to 6"


def test_mmrb2_judgements(tmp_path):
    path = tmp_path / "preds.json"
    path.write_text(
        json.dumps({"a": {"forward": [{"judgement": "A"}, {"judgement": ""}], "reverse": [{"judgement": 0}]}, "b": {}})
    )
    got = mmrb2.read_judgements(path)
    assert got.listed == ("a", "b")
    assert got.judgements == [mmrb2.Judgement("a", "forward", 0, "A")]  # empty ones are no judgement
    path.write_text(json.dumps({"a": {"reverse": [["A"]]}}))
    with pytest.raises(InputError, match=r"field 'a.reverse\[0\]': must be an object"):
        mmrb2.read_judgements(path)
    path.write_text('{"a": ')
    with pytest.raises(InputError, match="preds.json:1: malformed JSON"):  # the wording of every reader
        mmrb2.read_judgements(path)


# -- MM-RLHF-RewardBench, R1-Reward, the project's judgments -----------------------------------
def test_mm_rlhf_rows():
    row = {"id": "q1", "image": "long/q1.png", "prompt": "p", "chosen": "c", "rejected": "r"}
    rec = mm_rlhf.parse(Fields("f", 1, row))
    assert (rec.category, rec.video, rec.row.images) == ("long", None, ("long/q1.png",))
    video = mm_rlhf.parse(Fields("f", 1, {**row, "image": None, "video": "video/v1"}))
    assert (video.category, video.video, video.row.images) == ("video", "video/v1", ())
    assert problems(mm_rlhf.parse, {**row, "image": "misc/q.png"})[0][0] == "image"


@pytest.mark.parametrize(
    "image, video, category",
    [
        ("mcq/1.png", None, "mcq"),
        ("long/short_1.png", None, "long"),
        ("short/long.png", None, "long"),
        # the importer used to take a folder only: no category for the first, "mcq" for the second
        ("data/mcq_long.png", None, "mcq"),
        ("MCQ/1.png", None, None),
        ("", "video/v1.mp4", "video"),
        (None, "long/v.mp4", "long"),
        ("other/q.png", "video/v.mp4", None),
        (None, None, None),
    ],
)
def test_mm_rlhf_category_is_get_acc_py_s(image, video, category):
    # get_acc.py: the first of mcq, long, short, safety, video found in ``image or video``
    assert mm_rlhf.category_of(image, video) == category
    row = {
        "id": "q1",
        "prompt": "p",
        "chosen": "c",
        "rejected": "r",
        **({"image": image} if image else {}),
        **({"video": video} if video else {}),
    }
    rec = mm_rlhf.parse(Fields("f", 1, row))
    assert (rec.category if rec else None) == category


def test_r1_rewards_rows():
    row = {**MMRB, "rewards": [0.5, 2, 9], "critic": "<answer>2</answer>"}
    rec = r1_rewards.parse(Fields("f", 1, row), mmrb.parse)
    assert (rec.chosen, rec.rejected, rec.critic, rec.row.id) == (0.5, 2, "<answer>2</answer>", "vqa_1")
    assert problems(r1_rewards.parse, {**row, "rewards": [True, 1]}, parse_row=mmrb.parse) == [
        ("rewards", "must be [reward of chosen, reward of rejected], two numbers")
    ]


def test_own_judgments_write_then_read(tmp_path):
    js = [
        Judgment("a", "reverse", 1, "tie", "parsed", "[[C]]", "p", 0.5, None, 3, 4),
        Judgment("b", error="timeout", outcome="error", verdict=None),
    ]
    assert judgments.write(tmp_path / "j.jsonl", js) == 2
    assert judgments.read(tmp_path / "j.jsonl") == js
    write_jsonl(tmp_path / "j.jsonl", [{"pair_id": "a", "order": "sideways"}])
    with pytest.raises(InputError, match="j.jsonl:1 field 'order'"):
        judgments.read(tmp_path / "j.jsonl")


# -- one file, two readers: the importer and scoring see the same pairs ------------------------
def test_import_and_scoring_read_a_benchmark_file_alike(sqlite_store, tmp_path):
    """Each file as the importer stores it and as scoring reads it: the same responses, the
    same one preferred, the same category; and the same order where the format gives one.
    Each file holds a record the two readers used to read differently (see the comments)."""
    from curate.ingest import ingest_pairs
    from mmrb_eval.datasets import read_dataset
    from mmrb_eval.rules import source_id

    spaced = {
        "model_name": "m3",
        "response_content": [["text", " Look\n"], ["image", "p3_0.jpg"], ["text", "then this "]],
    }
    files = {
        "mmrb": (write_jsonl(tmp_path / "m.jsonl", [MMRB, dict(MMRB, ID="vqa_2", Better="Output1")]), "mmrb_id"),
        # rlhf_3 with query_source RLHF-V: the importer said hallucination, scoring "all"
        "vlrewardbench": (
            write_jsonl(
                tmp_path / "v.jsonl",
                [
                    VLRB,
                    dict(VLRB, id="mmmu_2", human_ranking=[0, 1]),
                    dict(VLRB, id="rlhf_3", meta={}, query_source="RLHF-V"),
                ],
            ),
            "vlrb_id",
        ),
        "vlrewardbench-text": (
            write_jsonl(
                tmp_path / "t.jsonl",
                [
                    {
                        "id": "RLHF-V_4",
                        "prompt": "p",
                        "chosen": "c1",
                        "rejected": "r1",
                        "image": "vl_reward/img/image_4.jpg",
                    },
                    {
                        "id": "rlaif_5",
                        "prompt": "p",
                        "chosen": "c2",
                        "rejected": "r2",
                        "image": "vl_reward/img/image_5.jpg",
                    },
                ],
            ),
            "vlrb_id",
        ),
        # mcq_long.png: the importer found no category folder, scoring found "mcq"
        "mm-rlhf": (
            write_jsonl(
                tmp_path / "r.jsonl",
                [
                    {"id": "q1", "image": "data/mcq_long.png", "prompt": "p", "chosen": "a", "rejected": "b"},
                    {"id": "q1", "image": "data/mcq_long.png", "prompt": "p", "chosen": "a", "rejected": "c"},
                    {"id": "v2", "video": "video/v2.mp4", "prompt": "p", "chosen": "x", "rejected": "y"},
                ],
            ),
            "mm_rlhf_id",
        ),
        # a response whose parts the two readers joined differently; a task named after a prefix
        "mmrb2": (tmp_path / "my_edit_response_only.json", "mmrb2_id"),
    }
    files["mmrb2"][0].write_text(
        json.dumps({"pairs": [MMRB2, dict(MMRB2, id="p2", chosen="B"), dict(MMRB2, id="p3", response_b=spaced)]})
    )
    for fmt, (path, id_key) in files.items():
        before = {i.id for i in sqlite_store.items()}
        ingest_pairs(sqlite_store, path, fmt)
        imported: dict[str, list] = {}
        for item in sqlite_store.items():
            if item.id in before:
                continue
            for p in sqlite_store.pairs(item_id=item.id):
                first, second = (sqlite_store.candidates(ids=[c])[0].text for c in (p.first_id, p.second_id))
                chosen, rejected = (first, second) if p.known_preference == "first" else (second, first)
                imported.setdefault(item.metadata[id_key], []).append(
                    (chosen, rejected, item.category, first if fmt in ORDERED else None)
                )
        scored: dict[str, list] = {}
        for x in read_dataset(path):
            scored.setdefault(source_id(x), []).append(
                (x.chosen, x.rejected, x.category, x.first if fmt in ORDERED else None)
            )
        assert {k: sorted(v) for k, v in imported.items()} == {k: sorted(v) for k, v in scored.items()}, fmt
    assert scored["p3"][0][1] == "Look\n\n[image: p3_0.jpg]\n\nthen this" and scored["p3"][0][2] == "edit"


ORDERED = ("mmrb", "vlrewardbench", "mmrb2")  # formats that give the responses an order


# -- the registry: each format one object, looked up by every stage --------------------------
def test_each_format_is_one_registered_object_whose_functions_load():
    import inspect
    import re

    from curate.formats.registry import EXPORTED, FORMATS, JUDGMENT_FORMATS, LABELLED, PAIR_FORMATS, canonical, find
    from mmrb_eval.datasets import PairReader
    from mmrb_eval.scoring import PRESETS

    spellings = [s for f in FORMATS for s in f.spellings]
    assert len(spellings) == len(set(spellings))
    # one spelling of each name (lower case, words joined by '-'); the modules' as aliases
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", f.name) for f in FORMATS)
    assert {a: canonical(a) for f in FORMATS for a in f.aliases} == {"mm_rlhf": "mm-rlhf", "r1_rewards": "r1-rewards"}
    assert canonical("nope") == "nope" and find("nope") is None
    # what each command offers, in the registry's order
    assert PAIR_FORMATS == ("mmrb", "mmrb2", "vlrewardbench", "vlrewardbench-text", "mm-rlhf", "generic")
    assert JUDGMENT_FORMATS == ("mmrb", "mmrb2", "vlrewardbench", "r1-rewards", "mmrb-studio")
    assert LABELLED == ("mmrb", "vlrewardbench", "r1-rewards")
    assert [f.name for f in EXPORTED] == ["mmrb", "mmrb2", "vlrewardbench", "triplets"]
    # every stage's function is in that stage's package and takes what the stage passes
    stages = {
        "ingest": ("curate.ingest.", 3),
        "judgments": ("mmrb_eval.formats:", 3),
        "export": ("curate.benchmark.export:", 2),
    }
    for f in FORMATS:
        for role, (where, n) in stages.items():
            hook = getattr(f, role)
            if hook is None:
                with pytest.raises(ValueError, match=f"has no {role}"):
                    f.load(role)  # type: ignore[arg-type]
                continue
            assert hook.startswith(where), hook
            assert len(inspect.signature(f.load(role)).parameters) == n, hook  # type: ignore[arg-type]
        for layout in f.layouts:
            assert layout.pairs.startswith("mmrb_eval.datasets:") and isinstance(layout.reader(), PairReader)
    # each scoring preset belongs to the one format whose script it restates
    assert sorted(p for f in FORMATS for p in f.presets) == sorted(PRESETS)


def test_every_format_is_documented_under_its_one_spelling():
    from pathlib import Path

    from curate.formats.registry import FORMATS

    root = Path(__file__).resolve().parents[1]
    docs = (root / "docs" / "formats.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    for f in FORMATS:
        assert f"`{f.name}`" in docs, f.name
    names = {f.name for f in FORMATS}
    said = r"(?:ingest pairs|score)\b[^`\n]*--format ([a-z][\w-]*)|`--format ([a-z][\w-]*)`"  # not FORMAT
    typed = {a or b for text in (docs, readme) for a, b in re.findall(said, text)}
    assert typed and typed <= names, typed - names


def test_score_reads_a_judgment_format_by_its_alias(tmp_path):
    import argparse

    from mmrb_eval.commands import score
    from mmrb_eval.formats import read_judgment_file

    p = argparse.ArgumentParser()
    score.add_arguments(p)
    assert p.parse_args(["--judgments", "f", "--format", "r1_rewards"]).format == "r1-rewards"
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({**MMRB, "rewards": [1.0, 0.5]}) + "\n")
    assert [j.verdict for j in read_judgment_file(path, "r1_rewards").judgments] == ["second"]  # Better: Output2
    with pytest.raises(InputError, match="unknown judgment format 'generic'; known: mmrb, mmrb2, vlrewardbench"):
        read_judgment_file(path, "generic")
