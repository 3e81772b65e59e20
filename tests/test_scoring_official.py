"""The presets on small literal files worked out by hand against the published scripts'
rules (tests/test_official_differential.py runs the scripts themselves on generated files)."""

from __future__ import annotations

import json

from mmrb_eval.datasets import read_dataset
from mmrb_eval.formats import read_judgment_file, read_judgments
from mmrb_eval.scoring import preset_options, score
from tests.support.data import shared


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(path, fmt, preset, pairs=None, **kw):
    f = read_judgment_file(path, fmt, pairs, **kw)
    return score(f.pairs, f.judgments, preset_options(preset, bootstrap=0), listed=f.listed, warnings=f.warnings)


# -- Multimodal RewardBench --------------------------------------------------------------
def test_mmrb_example_file_scores_one_half():
    r = run(shared("multimodal_rewardbench/example_judge_outputs.jsonl"), "mmrb", "mmrb")
    assert r.overall["accuracy"] == 0.5 and r.overall["correct_n"] == "1/2"
    assert r.categories["open_generation/correctness_task"].correct_n == "1/2"


def test_mmrb_bracket_rule_and_the_coin_sequence(tmp_path):
    # random.seed(123) draws .052, .087, .407, .108, .901: A, A, A, A, B
    rows = [
        ("B", "[[C]]"),  # no [[A]], no [[B]]: the first coin, A -> wrong
        ("B", "[[C]] and [[B]]"),  # [[B]] -> B, right (no draw)
        ("A", "no verdict"),  # second coin, A -> right
        ("B", "x"),  # third coin, A -> wrong
        ("B", "[[a]]"),  # lower case is no verdict: fourth coin, A -> wrong
        ("B", "hmm"),  # fifth coin, B -> right
        ("A", "[[B]] then [[A]]"),  # [[A]] anywhere wins: A, right (the flaw, counted)
    ]
    path = write_jsonl(
        tmp_path / "o.jsonl",
        [
            {"ID": f"vqa_{i}", "Label": label, "output": text, "Meta": {"Category": "vqa"}}
            for i, (label, text) in enumerate(rows)
        ],
    )
    r = run(path, "mmrb", "mmrb")
    assert r.overall["correct_n"] == "4/7"
    assert r.unit_statuses == {"coin": 5, "correct": 2}
    assert r.both_counted_as_first_shown == 1
    # the project's parser still reads [[C]] as a tie and [[C]] [[B]] as naming two answers
    assert r.outcomes == {"parsed": 1, "unparsed": 4, "both": 2, "error": 0}


# -- VL-RewardBench ----------------------------------------------------------------------
def vlrb_record(pid, query, responses, ranking, rn, text):
    return {
        "id": pid,
        "query": query,
        "response": responses,
        "ranking": ranking,
        "meta": {"random_number": rn, "filter_choice": text, "flag_status": "stale"},
    }


def test_vlrb_literal_records(tmp_path):
    # item a: ranking [0, 1] = response[0] preferred. random_number 0 shows it as Answer 1,
    # so "Answer 1" agrees; random_number 1 swaps them, so "Answer 2" agrees. "Answer 3" is
    # not the rejected position: cal.py counts it as agreeing. "hallucination" -> povid.
    a = [
        vlrb_record("hallucination_a", "q", ["good", "bad"], [0, 1], 0, "Overall Judgment: Answer 1 is better"),
        vlrb_record("hallucination_a", "q", ["good", "bad"], [0, 1], 1, "Overall Judgment: Answer 2 is better"),
        vlrb_record("hallucination_a", "q", ["good", "bad"], [0, 1], 1, "Overall Judgment: Answer 1 is better"),
        vlrb_record("hallucination_a", "q", ["good", "bad"], [0, 1], 0, "Overall Judgment: Answer 3 is better"),
    ]  # 3 agree, 1 reject -> right
    # item b (wildvision -> general): 2 agree, 1 reject, 1 unparsed: 2 is not > 4/2 -> split, dropped
    b = [
        vlrb_record("wildvision_b", "q", ["x", "y"], [1, 0], 0, "Therefore, Answer 2 is better"),
        vlrb_record("wildvision_b", "q", ["x", "y"], [1, 0], 1, "Therefore, Answer 1 is better"),
        vlrb_record("wildvision_b", "q", ["x", "y"], [1, 0], 0, "Therefore, Answer 1 is better"),
        vlrb_record("wildvision_b", "q", ["x", "y"], [1, 0], 0, "no idea"),
    ]
    # item c: the same id with another query is another item (cal.py's key); all unparsed -> dropped
    c = [vlrb_record("wildvision_b", "other", ["x", "y"], [1, 0], 0, "hmm") for _ in range(3)]
    # item d: mmmu -> reasoning, 2 rejects of 3 -> wrong
    d = [
        vlrb_record("mmmu-d", "q", ["r", "s"], [0, 1], 0, "Overall Judgment: Answer 2 is better"),
        vlrb_record("mmmu-d", "q", ["r", "s"], [0, 1], 1, "Overall Judgment: Answer 1 is better"),
        vlrb_record("mmmu-d", "q", ["r", "s"], [0, 1], 1, "Overall Judgment: Answer 2 is better"),
    ]
    path = write_jsonl(tmp_path / "infer.jsonl", a + b + c + d)
    js, pairs = read_judgments(path, "vlrewardbench")
    assert [p.id for p in pairs] == ["hallucination_a", "wildvision_b#0", "wildvision_b#1", "mmmu-d"]
    assert [p.category for p in pairs] == ["hallucination", "general", "general", "reasoning"]
    r = run(path, "vlrewardbench", "vlrewardbench")
    assert r.overall["correct_n"] == "1/2"  # a right, d wrong; b split and c unparsed leave both sides
    assert r.categories["hallucination"].correct_n == "1/1"
    assert r.categories["general"].n == 0
    assert r.categories["reasoning"].correct_n == "0/1"
    # cal.py divides by zero for the empty general group: no macro
    assert r.macro["accuracy"] is None and "general" in r.macro["reason"]
    # flag_status as written ("stale") is not a status cal.py counts: every record is ignored
    r = run(path, "vlrewardbench", "vlrewardbench", trust_flag=True)
    assert r.overall["n"] == 0 and r.judgments == 0
    assert r.warnings == [
        "14 records whose flag_status is not agree, reject or doesntMatch are ignored, as cal.py does"
    ]
    # k=1: one sample per item after cal.py's seeded shuffle
    js1, _ = read_judgments(path, "vlrewardbench", vlrb_k=1)
    assert len(js1) == 4 and sorted(j.sample_index for j in js1) == [0, 0, 0, 0]


def test_vlrb_trusted_flags_are_not_re_read(tmp_path):
    # with trust_flag the verdict is meta.flag_status (cal.py with reparse=False), even where
    # the text says otherwise and the preset re-reads texts
    recs = [vlrb_record("RLHF_1", "q", ["a", "b"], [0, 1], 0, "Overall Judgment: Answer 2 is better") for _ in range(3)]
    for rec, flag in zip(recs, ("agree", "agree", "reject"), strict=True):
        rec["meta"]["flag_status"] = flag
    path = write_jsonl(tmp_path / "infer.jsonl", recs)
    assert run(path, "vlrewardbench", "vlrewardbench", trust_flag=True).overall["correct_n"] == "1/1"
    assert run(path, "vlrewardbench", "vlrewardbench").overall["correct_n"] == "0/1"  # the text rejects 3 times


def test_vlrb_records_against_the_text_copy_keep_their_verdicts(tmp_path):
    # the text copy has no response order: read_dataset orients each pair by a hash of its id,
    # so some pairs show the rejected response first. A record's "agree" is still right.
    ids = [f"hallucination_{i}" for i in range(8)]
    ds = write_jsonl(
        tmp_path / "pairs.jsonl", [{"id": i, "prompt": "q", "chosen": f"good {i}", "rejected": f"bad {i}"} for i in ids]
    )
    pairs = read_dataset(ds)
    assert {p.preferred for p in pairs} == {"first", "second"}
    recs = [
        vlrb_record(i, "q", [f"good {i}", f"bad {i}"], [0, 1], rn, f"Overall Judgment: Answer {1 + rn} is better")
        for i in ids
        for rn in (0, 1)
    ]
    path = write_jsonl(tmp_path / "infer.jsonl", recs)
    r = run(path, "vlrewardbench", "vlrewardbench", pairs)
    assert r.overall["correct_n"] == "8/8" and r.warnings == []
    # position: each item was shown once in each order, and the judge always found the good one
    assert r.position["consistency"]["correct_n"] == "8/8"
    # records whose responses are not the dataset's are scored against the id, with a warning
    recs[0]["response"] = ["other", "text"]
    r = run(write_jsonl(tmp_path / "odd.jsonl", recs), "vlrewardbench", "vlrewardbench", pairs)
    assert r.warnings and "differ from the dataset pair" in r.warnings[0]


# -- MMRB2 -------------------------------------------------------------------------------
def test_mmrb2_missing_and_unread_judgements(tmp_path):
    gt = tmp_path / "t2i_response_only.json"
    gt.write_text(
        json.dumps(
            {
                "pairs": [
                    {"id": i, "response_a": "x", "response_b": "y", "chosen": c}
                    for i, c in zip("abcde", "ABABA", strict=True)
                ]
            }
        )
    )
    preds = tmp_path / "preds.json"
    preds.write_text(
        json.dumps(
            {
                "a": {},  # named: evaluated, no judgement
                "b": {"forward": [], "reverse": []},  # named: evaluated, no judgement
                "c": {"forward": [{"judgement": "a"}], "reverse": [{"judgement": 1}]},  # counted, both wrong
                "d": {
                    "forward": [{"judgement": "B"}, {"judgement": "A"}],
                    "reverse": [{"judgement": None}],
                },  # right; skipped
            }
        )
    )  # e: missing
    r = run(preds, "mmrb2", "mmrb2", read_dataset(gt))
    assert r.overall["correct_n"] == "1/3"
    assert r.missing_pairs == 1 and r.unjudged_listed_pairs == 2
    assert r.tie_rate["count"] == 0 and r.outcomes["unparsed"] == 2
    assert r.not_used["later_sample"] == 1


# -- R1-Reward ---------------------------------------------------------------------------
def test_r1_rewards_mm_rlhf_acc_and_acc_plus(tmp_path):
    rows = [
        {"id": "g1", "image": "mcq/1.png", "rewards": [2, 1]},
        {"id": "g1", "image": "mcq/1.png", "rewards": [0.5, 0.1]},
        {"id": "g2", "image": "long/2.png", "rewards": [3, 1]},
        {"id": "g2", "image": "long/2.png", "rewards": [1, 1]},  # a tie: wrong
        {"id": "g3", "video": "video/3.mp4", "rewards": [0, 1]},
    ]
    path = write_jsonl(tmp_path / "r1.jsonl", [{"prompt": "q", "chosen": "c", "rejected": "r", **x} for x in rows])
    r = run(path, "r1-rewards", "r1-mm-rlhf")
    assert r.overall["correct_n"] == "3/5" and r.acc_plus["correct_n"] == "1/3"
    cats = r.categories
    assert (cats["mcq"].correct_n, cats["long"].correct_n, cats["video"].correct_n) == ("2/2", "1/2", "0/1")
    ap = r.acc_plus["categories"]
    assert (ap["mcq"]["correct_n"], ap["long"]["correct_n"], ap["video"]["correct_n"]) == ("1/1", "0/1", "0/1")
    # the chosen response is always shown first by R1-Reward's harness
    assert r.position["acc_chosen_shown_second"]["n"] == 0


def test_r1_rewards_vl_groups_and_macro(tmp_path):
    # R1-Reward's classify_id is case-sensitive: "RLAIF-V-1" is general there, not hallucination
    rows = [
        {"id": "RLAIF-V-1", "rewards": [1, 0]},
        {"id": "rlhf_2", "rewards": [0, 1]},
        {"id": "mmmu_3", "rewards": [1, 0]},
    ]
    path = write_jsonl(tmp_path / "vl.jsonl", [{"prompt": "q", "chosen": "c", "rejected": "r", **x} for x in rows])
    r = run(path, "r1-rewards", "r1-vlrewardbench")
    assert {g: s.correct_n for g, s in r.categories.items()} == {
        "general": "1/1",
        "hallucination": "0/1",
        "reasoning": "1/1",
    }
    assert r.macro["accuracy"] == round(2 / 3, 6)
    # an empty group counts as 0 in its macro
    path = write_jsonl(tmp_path / "vl2.jsonl", [{"prompt": "q", "chosen": "c", "rejected": "r", **rows[0]}])
    r = run(path, "r1-rewards", "r1-vlrewardbench")
    assert r.macro["accuracy"] == round(1 / 3, 6) and r.macro["empty_groups_as_zero"] == [
        "hallucination",
        "reasoning",
    ]
