"""The presets against the published scoring scripts' rules, re-stated here as small
reference functions (Multimodal RewardBench scripts/2_get_accuracy.py, VL-RewardBench
cal.py, MMRB2 compute_accuracy.py), on the real example file and on generated files."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import shared
from evaluate.formats import read_judgments
from evaluate.scoring import preset_options, score


# -- Multimodal RewardBench --------------------------------------------------------------
def mmrb_reference(lines: list[dict]) -> dict[str, tuple[int, int]]:
    """scripts/2_get_accuracy.py, restated: (correct, n) per group."""

    def extract(j):
        if "[[A]]" in j:
            return "A"
        elif "[[B]]" in j:
            return "B"
        return "A" if random.random() < 0.5 else "B"

    accs = defaultdict(list)
    random.seed(123)
    for ex in lines:
        acc = int(extract(ex["output"]) == ex["Label"])
        accs["all"].append(acc)
        cat = ex["Meta"]["Category"]
        if cat == "safety":
            cat = "safety/bias" if ex["ID"].lower().startswith("pairs") else "safety/toxicity"
        elif cat == "reasoning":
            cat = "reasoning/math" if ex["ID"].lower().startswith("math") else "reasoning/coding"
        accs[cat].append(acc)
    return {k: (sum(v), len(v)) for k, v in accs.items()}


def mmrb_ours(path) -> dict[str, tuple[int, int]]:
    js, pairs = read_judgments(path, "mmrb")
    r = score(pairs, js, preset_options("mmrb", bootstrap=0))
    out = {"all": (r["overall"]["correct"], r["overall"]["n"])}
    for name, s in {**r["categories"], **r["subsplits"]}.items():
        if name not in ("safety", "reasoning"):  # the script reports only their sub-splits
            out[name] = (s["correct"], s["n"])
    return out


def test_mmrb_example_file_scores_one_half():
    path = shared("multimodal_rewardbench/example_judge_outputs.jsonl")
    js, pairs = read_judgments(path, "mmrb")
    r = score(pairs, js, preset_options("mmrb"))
    assert r["overall"]["accuracy"] == 0.5 and r["overall"]["correct_n"] == "1/2"
    assert r["categories"]["open_generation/correctness_task"]["correct_n"] == "1/2"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert mmrb_ours(path) == mmrb_reference(lines)


OUTPUTS = st.sampled_from(["... [[A]]", "... [[B]]", "[[B]] no, [[A]]", "no verdict", "[[A]] or [[B]]"])
ROW = st.tuples(
    st.sampled_from(["pairs_", "math_", "code_", "nocaps_", "PAIRS-", "vqa_"]),
    st.integers(0, 30),
    st.sampled_from(["safety", "reasoning", "vqa", "knowledge", "open_generation/preference_task"]),
    st.sampled_from(["A", "B"]),
    OUTPUTS,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ROW, min_size=1, max_size=40))
def test_mmrb_preset_equals_the_official_script(tmp_path, rows):
    lines = [
        {"ID": f"{pre}{n}", "Label": label, "output": out, "Meta": {"Category": cat}}
        for pre, n, cat, label, out in rows
    ]
    path = tmp_path / "outputs.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert mmrb_ours(path) == mmrb_reference(lines)


# -- VL-RewardBench ----------------------------------------------------------------------
GROUPS = {"vlfeedback": "general", "povid": "hallucination", "reasoning_tasks": "reasoning",
          "rlhf-v": "hallucination", "rlaif-v": "hallucination", "wildvision-battle": "general"}
PATTERN = r"(?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*(?:the\s*)?(?:slightly\s*)?better"


def vlrb_reference(records: list[dict]) -> dict[str, tuple[int, int]]:
    """cal.py with reparse=True and k above the samples per item, restated."""
    dist = {}
    for item in records:
        key = item["id"] + item["query"] + "\t".join(sorted(item["response"]))
        dataset = item["image_path"].split("/")[1]
        rn = item["meta"]["random_number"]
        rejected = item["ranking"].index(1 if rn == 0 else 0) + 1
        m = re.search(PATTERN, item["meta"]["filter_choice"].replace("\n", "").replace("*", ""), re.IGNORECASE)
        status = "doesntMatch" if not m else "reject" if int(m.group(1)) == rejected else "agree"
        d = dist.setdefault(key, {"agree": 0, "reject": 0, "doesntMatch": 0, "dataset": dataset})
        d[status] += 1
    correct, total = defaultdict(int), defaultdict(int)
    for d in dist.values():
        t = d["agree"] + d["reject"] + d["doesntMatch"]
        g = GROUPS[d["dataset"]]
        if d["agree"] > t / 2:
            correct[g] += 1
            total[g] += 1
        elif d["reject"] > t / 2:
            total[g] += 1
    out = {g: (correct[g], total[g]) for g in total}
    out["overall"] = (sum(correct.values()), sum(total.values()))
    return out


def vlrb_ours(path, **kw) -> dict[str, tuple[int, int]]:
    js, pairs = read_judgments(path, "vlrewardbench", **kw)
    r = score(pairs, js, preset_options("vlrewardbench", bootstrap=0))
    out = {g: (s["correct"], s["n"]) for g, s in r["categories"].items() if s["n"]}
    out["overall"] = (r["overall"]["correct"], r["overall"]["n"])
    return out


def vlrb_record(pid, query, responses, ranking, dataset, rn, text):
    return {
        "id": pid, "query": query, "response": responses, "ranking": ranking,
        "image_path": f"images/{dataset}/{pid}.jpg",
        "meta": {"random_number": rn, "filter_choice": text, "flag_status": "stale"},
    }


def test_vlrb_literal_records(tmp_path):
    # item a: human_ranking [0, 1] = response[0] preferred. random_number 0 shows it as
    # Answer 1, so "Answer 1" agrees; random_number 1 swaps them, so "Answer 2" agrees.
    # "Answer 3" is not the rejected position: cal.py counts it as agreeing.
    a = [
        vlrb_record("a", "q", ["good", "bad"], [0, 1], "povid", 0, "Overall Judgment: Answer 1 is better"),
        vlrb_record("a", "q", ["good", "bad"], [0, 1], "povid", 1, "Overall Judgment: Answer 2 is better"),
        vlrb_record("a", "q", ["good", "bad"], [0, 1], "povid", 1, "Overall Judgment: Answer 1 is better"),
        vlrb_record("a", "q", ["good", "bad"], [0, 1], "povid", 0, "Overall Judgment: Answer 3 is better"),
    ]  # 3 agree, 1 reject -> right
    # item b: [1, 0] = response[1] preferred; 2 agree, 1 reject, 1 unparsed: 2 is not > 4/2 -> split, dropped
    b = [
        vlrb_record("b", "q", ["x", "y"], [1, 0], "vlfeedback", 0, "Therefore, Answer 2 is better"),
        vlrb_record("b", "q", ["x", "y"], [1, 0], "vlfeedback", 1, "Therefore, Answer 1 is better"),
        vlrb_record("b", "q", ["x", "y"], [1, 0], "vlfeedback", 0, "Therefore, Answer 1 is better"),
        vlrb_record("b", "q", ["x", "y"], [1, 0], "vlfeedback", 0, "no idea"),
    ]
    # item c: same id as b but another query: a different item (cal.py's key); all unparsed -> dropped
    c = [vlrb_record("b", "other", ["x", "y"], [1, 0], "rlhf-v", 0, "hmm") for _ in range(3)]
    # item d: reasoning, 2 rejects of 3 -> wrong
    d = [
        vlrb_record("d", "q", ["r", "s"], [0, 1], "reasoning_tasks", 0, "Overall Judgment: Answer 2 is better"),
        vlrb_record("d", "q", ["r", "s"], [0, 1], "reasoning_tasks", 1, "Overall Judgment: Answer 1 is better"),
        vlrb_record("d", "q", ["r", "s"], [0, 1], "reasoning_tasks", 1, "Overall Judgment: Answer 2 is better"),
    ]
    path = tmp_path / "infer.jsonl"
    recs = a + b + c + d
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    js, pairs = read_judgments(path, "vlrewardbench")
    assert [p.id for p in pairs] == ["a", "b#0", "b#1", "d"]
    r = score(pairs, js, preset_options("vlrewardbench", bootstrap=0))
    assert r["overall"]["correct_n"] == "1/2"  # a right, d wrong; b split and c unparsed leave both sides
    assert r["categories"]["hallucination"]["correct_n"] == "1/1"
    assert r["categories"]["general"]["n"] == 0
    assert r["categories"]["reasoning"]["correct_n"] == "0/1"
    assert r["macro"]["accuracy"] == 0.5
    assert vlrb_ours(path) == vlrb_reference(recs)
    # flag_status as written ("stale") is not a verdict: trusting it leaves everything unparsed
    assert vlrb_ours(path, trust_flag=True)["overall"] == (0, 0)
    # k=1: one sample per item after cal.py's seeded shuffle
    js1, _ = read_judgments(path, "vlrewardbench", vlrb_k=1)
    assert len(js1) == 4 and sorted(j.sample_index for j in js1) == [0, 0, 0, 0]


VL_REC = st.tuples(
    st.sampled_from(["i1", "i2", "i3", "i4", "i5"]),
    st.sampled_from(["q", "q2"]),
    st.sampled_from([[0, 1], [1, 0]]),
    st.sampled_from(sorted(GROUPS)),
    st.sampled_from([0, 1]),
    st.sampled_from(["Overall Judgment: Answer 1 is better", "Overall Judgment: **Answer 2** is better",
                     "Therefore, Answer 2 is slightly better", "unclear", "Overall Judgment: Answer 3 is better"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(VL_REC, min_size=1, max_size=40))
def test_vlrb_preset_equals_cal_py(tmp_path, rows):
    recs = []
    first_seen = {}
    for pid, q, ranking, dataset, rn, text in rows:
        # an item's ranking and dataset are fixed by its key
        ranking, dataset = first_seen.setdefault((pid, q), (ranking, dataset))
        recs.append(vlrb_record(pid, q, ["resp one", "resp two"], ranking, dataset, rn, text))
    path = tmp_path / "infer.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert vlrb_ours(path) == vlrb_reference(recs)


# -- MMRB2 -------------------------------------------------------------------------------
def mmrb2_reference(preds: dict, gt: list[dict]) -> tuple[int, int]:
    correct = total = 0
    for pair in gt:
        pred = preds.get(pair["id"])
        if pred is None:
            continue
        if pred.get("forward"):
            j = pred["forward"][0].get("judgement")
            if j:
                total += 1
                correct += j == pair["chosen"]
        if pred.get("reverse"):
            j = pred["reverse"][0].get("judgement")
            if j:
                total += 1
                correct += {"A": "B", "B": "A"}.get(j, j) == pair["chosen"]
    return correct, total


JUDGEMENT = st.sampled_from(["A", "B", None, "", "tie"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from(["A", "B"]), min_size=1, max_size=15),
    st.lists(st.tuples(st.booleans(), st.lists(JUDGEMENT, max_size=2), st.lists(JUDGEMENT, max_size=2)), min_size=15, max_size=15),
)
def test_mmrb2_preset_equals_compute_accuracy(tmp_path, chosen, preds_spec):
    from evaluate.datasets import read_dataset

    gt = [{"id": f"p{i}", "response_a": "{'response_content': [['text', 'a']]}", "response_b": "b", "chosen": c}
          for i, c in enumerate(chosen)]
    preds = {}
    for i, (present, fwd, rev) in enumerate(preds_spec[: len(chosen)]):
        if present:
            preds[f"p{i}"] = {"forward": [{"judgement": j} for j in fwd], "reverse": [{"judgement": j} for j in rev]}
    (tmp_path / "t2i_response_only.json").write_text(json.dumps({"pairs": gt}))
    (tmp_path / "preds.json").write_text(json.dumps(preds))
    pairs = read_dataset(tmp_path / "t2i_response_only.json")
    js, pairs = read_judgments(tmp_path / "preds.json", "mmrb2", pairs)
    r = score(pairs, js, preset_options("mmrb2", bootstrap=0))
    assert (r["overall"]["correct"], r["overall"]["n"]) == mmrb2_reference(preds, gt)
    assert {p.category for p in pairs} == {"t2i"}
