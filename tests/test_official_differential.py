"""Differential tests: each ``mmrb score --preset`` against the benchmark's own scoring script,
on seeded adversarial judge outputs.

The scripts are run verbatim from ../shared/official (never copied into this repository:
their licences differ); each test skips with the reason when that folder is absent.
VL-RewardBench's cal.py is not there (it carries no licence): ``cal_reference`` below
restates it from the description in ../shared/official/README.md.

Every figure a script prints is compared: counts exactly, accuracies to 1e-6 (so equal to 4
decimals). Where a script cannot give a figure (it raises), the test says so and checks
what mmrb-studio does instead.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import io
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curate.cli import main as mmrb
from mmrb_eval.formats import CAL_KS
from tests.support.official import load, mmrb2_predictions_of_run, official

ROOT = Path(__file__).resolve().parents[1]


def quiet(fn, *a, **kw):
    """(result, printed text) of a call."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(*a, **kw)
    return result, out.getvalue()


def ours(*argv: str) -> dict:
    """``mmrb score ... --json`` in this process: the report."""
    code, text = quiet(mmrb, ["score", "--bootstrap", "0", "--json", *argv])
    assert code == 0, text
    return json.loads(text)


def refused(*argv: str) -> str:
    """``mmrb score`` on bad input: exit 1 and the one-line error."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = mmrb(["score", "--bootstrap", "0", "--json", *argv])
    assert code == 1
    return err.getvalue()


def close(a: float, b: float) -> bool:
    return abs(a - b) < 1e-6


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


SEEDS = range(30)

# -- Multimodal RewardBench: scripts/2_get_accuracy.py -------------------------------------
MMRB_FORMS = [
    "[[A]]",
    "[[B]]",
    "[[C]]",
    "[[A]] [[B]]",
    "[[B]] ... [[A]]",
    "[[C]] [[B]]",
    "[[B]] [[C]]",
    "[[C]] [[A]]",
    "[[A]][[B]][[C]]",
    "[[a]]",
    "[[b]]",
    "[[c]]",
    "[A]",
    "[[ A ]]",
    "[[A]",
    "[[[B]]]",
    "A",
    "B",
    "1",
    "2",
    "Assistant A is better",
    "",
    "tie",
    "[[Ａ]]",
    "[[A]]\n",
    "**[[B]]**",
]
MMRB_CATEGORIES = [
    "open_generation/correctness_task",
    "open_generation/preference_task",
    "knowledge",
    "reasoning",
    "safety",
    "vqa",
]
MMRB_ID_PREFIXES = [
    "pairs_",
    "PAIRS-",
    "Pairs",
    "math_",
    "MATH-",
    "mathvista_",
    "code_",
    "hateful_",
    "vqa_",
    "nocaps_",
    "x",
    "",
]


def mmrb_rows(rng: random.Random, n: int) -> list[dict]:
    rows = []
    for _ in range(n):
        num = rng.randrange(max(2, n // 3))  # repeats: duplicate ids
        text = (
            rng.choice(["", "Reasoning. ", "A is short; B is long. "])
            + rng.choice(MMRB_FORMS)
            + rng.choice(["", " end", "\n[[C]]"])
        )
        row = {
            "ID": f"{rng.choice(MMRB_ID_PREFIXES)}{num}",
            "Label": rng.choice("AB"),
            "output": text,
            "Meta": {"Category": rng.choice(MMRB_CATEGORIES)},
        }
        if rng.random() < 0.15:  # extra samples beside "output": the script reads "output" only
            row["outputs"] = [rng.choice(MMRB_FORMS) for _ in range(3)]
        rows.append(row)
    return rows


def mmrb_official(path: Path) -> dict[str, tuple[int, int, float]]:
    mod = load("multimodal_rewardbench/2_get_accuracy.py", "mmrb_official")
    _, text = quiet(mod.compute_acc, argparse.Namespace(answers_file=str(path)))
    out = {}
    for line in text.splitlines():
        m = re.match(r"^acc (.*): (\d+) / (\d+) = (\S+)$", line)
        assert m, line
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)), float(m.group(4)))
    return out


def groups_of(report: dict) -> dict[str, dict]:
    """Every group of a report by name: "all" is the overall figure."""
    return {"all": report["overall"], **report["categories"], **report["subsplits"]}


def assert_same_groups(theirs: dict[str, tuple[int, int, float]], report: dict, skip: tuple[str, ...] = ()) -> None:
    mine = groups_of(report)
    for name, (correct, n, acc) in theirs.items():
        s = mine[name]
        assert (s["correct"], s["n"]) == (correct, n), name
        assert close(s["accuracy"], acc), name
    # and no group with scored units that the script does not print
    extra = {g for g, s in mine.items() if s["n"] and g not in theirs and g not in skip}
    assert not extra, extra


def test_mmrb_preset_equals_2_get_accuracy(tmp_path):
    for seed in SEEDS:
        rng = random.Random(seed)
        path = write_jsonl(tmp_path / f"out{seed}.jsonl", mmrb_rows(rng, rng.randint(1, 80)))
        theirs = mmrb_official(path)
        r = ours("--judgments", str(path), "--format", "mmrb", "--preset", "mmrb")
        # the script prints safety and reasoning only through their sub-splits
        assert_same_groups(theirs, r, skip=("safety", "reasoning"))
        assert r["complete"] and r["n_failed"] == 0


FRAGMENTS = st.sampled_from(["[[A]]", "[[B]]", "[[C]]", "[[a]]", "[[", "]]", "A", "B", " ", "\n", "[", "]", "x"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.lists(FRAGMENTS, max_size=8),
            st.sampled_from("AB"),
            st.sampled_from(MMRB_CATEGORIES),
            st.sampled_from(MMRB_ID_PREFIXES),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_mmrb_preset_equals_2_get_accuracy_on_any_text(tmp_path, rows):
    # texts glued from bracket fragments: [[A]] or [[B]] may appear across fragment borders
    lines = [
        {"ID": f"{pre}{i}", "Label": label, "output": "".join(frags), "Meta": {"Category": cat}}
        for i, (frags, label, cat, pre) in enumerate(rows)
    ]
    path = write_jsonl(tmp_path / "out.jsonl", lines)
    assert_same_groups(
        mmrb_official(path),
        ours("--judgments", str(path), "--format", "mmrb", "--preset", "mmrb"),
        skip=("safety", "reasoning"),
    )


def test_mmrb_failed_requests_are_left_out_not_coined(tmp_path):
    # The judge script writes "None" for a request that failed after its retries; the scoring
    # script flips a coin for it. mmrb-studio leaves it out, so its figures are the script's
    # on the file without those rows (the coin sequence of the others is unchanged).
    rng = random.Random(7)
    rows = mmrb_rows(rng, 60)
    failed = set(rng.sample(range(60), 9))
    for i in failed:
        rows[i]["output"] = "None"
    path = write_jsonl(tmp_path / "out.jsonl", rows)
    kept = write_jsonl(tmp_path / "kept.jsonl", [r for i, r in enumerate(rows) if i not in failed])
    r = ours("--judgments", str(path), "--format", "mmrb", "--preset", "mmrb")
    assert_same_groups(mmrb_official(kept), r, skip=("safety", "reasoning"))
    assert r["n_failed"] == 9 and not r["complete"] and r["outcomes"]["error"] == 9
    assert r["warnings"][0].startswith("incomplete: 9 of 60 judgments failed")
    assert mmrb_official(path)["all"][1] == 60  # the script counted them


def mmrb_dataset_of(rows: list[dict]) -> list[dict]:
    """The benchmark records a file of judge outputs judged: one per ID, as its first row
    states it (Label A: Output1 is better)."""
    first: dict[str, dict] = {}
    for r in rows:
        first.setdefault(r["ID"], r)
    return [
        {
            "ID": rid,
            "Text": "q",
            "Image": "",
            "Output1": "one",
            "Output2": "two",
            "Better": "Output1" if r["Label"] == "A" else "Output2",
            "Category": r["Meta"]["Category"],
        }
        for rid, r in first.items()
    ]


def test_mmrb_preset_with_dataset_counts_every_row_of_a_repeated_id(tmp_path):
    # 2_get_accuracy.py counts every row, an ID repeated or not; scored against the dataset
    # the rows judged, each row judges that ID's pair (never dropped as "missing")
    repeats = 0
    for seed in SEEDS:
        rng = random.Random(seed)
        rows = mmrb_rows(rng, rng.randint(2, 80))
        dataset = mmrb_dataset_of(rows)
        label = {d["ID"]: "A" if d["Better"] == "Output1" else "B" for d in dataset}
        category = {d["ID"]: d["Category"] for d in dataset}
        rows = [{**r, "Label": label[r["ID"]], "Meta": {"Category": category[r["ID"]]}} for r in rows]
        path = write_jsonl(tmp_path / "out.jsonl", rows)
        data = write_jsonl(tmp_path / "mmrb.jsonl", dataset)
        r = ours("--judgments", str(path), "--format", "mmrb", "--preset", "mmrb", "--dataset", str(data))
        assert_same_groups(mmrb_official(path), r, skip=("safety", "reasoning"))
        assert r["missing_pairs"] == 0 and r["unknown_judgments"] == 0
        repeated = len(rows) - len(dataset)
        repeats += repeated > 0
        assert any("repeated in the file" in w for w in r["warnings"]) == (repeated > 0)
    assert repeats >= 20


def test_mmrb_issue_repro_repeated_id_with_dataset(tmp_path):
    # the issue's case: an ID judged on three rows, two of them right
    rows = [
        {"ID": "vqa_1", "Label": "A", "output": text, "Meta": {"Category": "vqa"}}
        for text in ("[[A]]", "[[A]]", "[[B]]")
    ]
    path = write_jsonl(tmp_path / "out.jsonl", rows)
    data = write_jsonl(tmp_path / "mmrb.jsonl", mmrb_dataset_of(rows))
    assert mmrb_official(path)["all"] == (2, 3, 2 / 3)
    r = ours("--judgments", str(path), "--format", "mmrb", "--preset", "mmrb", "--dataset", str(data))
    assert r["overall"]["correct_n"] == "2/3" and r["missing_pairs"] == 0
    assert "1 id repeated in the file ('vqa_1' (3 rows))" in r["warnings"][0]
    # R1-Reward's rows with a repeated ID count every row too (its 1_get_accuracy.py)
    r1 = [{**d, "rewards": rw} for d, rw in zip(mmrb_dataset_of(rows) * 3, ([1, 0], [1, 0], [0, 1]), strict=True)]
    path = write_jsonl(tmp_path / "r1.jsonl", r1)
    r = ours("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mmrb", "--dataset", str(data))
    assert r["overall"]["correct_n"] == "2/3" and r["missing_pairs"] == 0


def test_rows_the_dataset_disagrees_with_are_warned_about_and_refused_with_strict(tmp_path):
    dataset = [
        {
            "ID": f"vqa_{i}",
            "Text": "q",
            "Image": "",
            "Output1": "a",
            "Output2": "b",
            "Better": "Output1",
            "Category": "vqa",
        }
        for i in range(4)
    ]
    data = write_jsonl(tmp_path / "mmrb.jsonl", dataset)
    rows = [
        {"ID": "vqa_0", "Label": "A", "output": "[[A]]", "Meta": {"Category": "vqa"}},
        {"ID": "vqa_1", "Label": "B", "output": "[[B]]", "Meta": {"Category": "vqa"}},  # the dataset says A
        {"ID": "nope_7", "Label": "A", "output": "[[A]]", "Meta": {"Category": "vqa"}},  # not in the dataset
        {"ID": "nope_8", "Label": "A", "output": "[[A]]", "Meta": {"Category": "vqa"}},
    ]
    path = write_jsonl(tmp_path / "out.jsonl", rows)
    args = ("--judgments", str(path), "--format", "mmrb", "--preset", "mmrb", "--dataset", str(data))
    r = ours(*args)
    assert r["unknown_judgments"] == 2 and r["overall"]["correct_n"] == "1/2"  # vqa_1 against the dataset's A
    said = " | ".join(r["warnings"])
    assert "2 judgments name 2 pairs the dataset does not have ('nope_7', 'nope_8') and are in no figure" in said
    assert "1 row states a preference other than the dataset's and is scored against the dataset" in said
    assert "out.jsonl:2 field 'Label': Label B, while the dataset prefers A" in said
    err = refused(*args, "--strict")
    assert "out.jsonl:2 field 'Label'" in err and "out.jsonl:3 field 'ID': 'nope_7' is not in the dataset" in err
    assert "out.jsonl:4 field 'ID'" in err
    # the same for R1-Reward's rows (Better against the dataset's), VL-RewardBench records and MMRB2 judgements
    r1 = [{**dataset[0], "rewards": [1, 0]}, {**dataset[1], "Better": "Output2", "rewards": [1, 0]}]
    r1.append({**dataset[2], "ID": "gone", "rewards": [1, 0]})
    path = write_jsonl(tmp_path / "r1.jsonl", r1)
    args = ("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mmrb", "--dataset", str(data))
    r = ours(*args)
    # the second row's chosen (rewards[0]) is Output2, the dataset's rejected one: wrong against the dataset
    assert r["overall"]["correct_n"] == "1/2" and r["unknown_judgments"] == 1
    err = refused(*args, "--strict")
    assert "r1.jsonl:2 field 'Better'" in err and "r1.jsonl:3 field 'ID': 'gone' is not in the dataset" in err


def test_vlrewardbench_records_whose_ranking_differs_from_the_dataset(tmp_path):
    pair = dict(id="RLHF-V_1", query="q", response=["x", "y"], human_ranking=[0, 1], models=["m1", "m2"], image="")
    data = write_jsonl(tmp_path / "vl.jsonl", [pair])
    meta = {"random_number": 0, "filter_choice": "Overall Judgment: Answer 1 is better", "flag_status": "reject"}
    rec = dict(id="RLHF-V_1", query="q", response=["x", "y"], ranking=[1, 0], meta=meta)  # says y is chosen
    gone = dict(rec, id="RLHF-V_9", ranking=[0, 1])
    path = write_jsonl(tmp_path / "infer.jsonl", [rec, gone])
    args = ("--judgments", str(path), "--format", "vlrewardbench", "--preset", "vlrewardbench", "--dataset", str(data))
    r = ours(*args)
    # the judge picked x (Answer 1), the dataset's chosen response: right against the dataset
    assert r["overall"]["correct_n"] == "1/1" and r["unknown_judgments"] == 1
    assert any("infer.jsonl:1 field 'ranking': ranking [1, 0]" in w for w in r["warnings"])
    err = refused(*args, "--strict")
    assert "infer.jsonl:1 field 'ranking'" in err and "infer.jsonl:2 field 'id': 'RLHF-V_9'" in err


def test_mmrb2_judgements_of_pairs_not_in_the_ground_truth_are_warned_about(tmp_path):
    gt = tmp_path / "t2i.json"
    gt.write_text(json.dumps({"pairs": [{"id": "p0", "response_a": "a", "response_b": "b", "chosen": "A"}]}))
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({"p0": {"forward": [{"judgement": "A"}]}, "zz": {"forward": [{"judgement": "A"}]}}))
    args = ("--judgments", str(preds), "--format", "mmrb2", "--preset", "mmrb2", "--dataset", str(gt))
    r = ours(*args)
    assert r["unknown_judgments"] == 1 and any("('zz')" in w for w in r["warnings"])
    assert "pair 'zz' is not in the dataset" in refused(*args, "--strict")


def test_mmrb2_ground_truth_id_written_as_a_number_is_refused(tmp_path):
    # compute_accuracy.py looks the number up among the judgement file's string keys: the pair
    # is "missing" whatever was judged. mmrb-studio refuses the file rather than print that.
    mod = load("mmrb2/compute_accuracy.py", "mmrb2_official")
    gt = {"pairs": [{"id": 5, "response_a": "a", "response_b": "b", "chosen": "A"}]}
    preds = {"5": {"forward": [{"judgement": "A"}], "reverse": [{"judgement": "B"}]}}
    theirs = mod.compute_task_accuracy(preds, gt, "image")
    assert theirs.missing_pairs == 1 and theirs.total_evaluated == 0
    (tmp_path / "t2i.json").write_text(json.dumps(gt))
    (tmp_path / "preds.json").write_text(json.dumps(preds))
    err = refused(*mmrb2_args(tmp_path / "preds.json", tmp_path / "t2i.json"))
    assert "t2i.json:1 field 'id': 5 is not a string" in err and "would count this pair missing" in err


def test_mmrb_several_samples(tmp_path):
    # rows with "outputs" only: the script stops on them (KeyError 'output'); the preset scores
    # the first sample of each row, which is the script's figure on those first samples
    rng = random.Random(3)
    rows = mmrb_rows(rng, 40)
    multi = [
        {
            **{k: v for k, v in r.items() if k not in ("output", "outputs")},
            "outputs": [r["output"], rng.choice(MMRB_FORMS), rng.choice(MMRB_FORMS)],
        }
        for r in rows
    ]
    path = write_jsonl(tmp_path / "multi.jsonl", multi)
    with pytest.raises(KeyError):
        mmrb_official(path)
    first = write_jsonl(tmp_path / "first.jsonl", [{**r, "output": r["output"]} for r in rows])
    r = ours("--judgments", str(path), "--format", "mmrb", "--preset", "mmrb")
    assert_same_groups(mmrb_official(first), r, skip=("safety", "reasoning"))
    assert r["not_used"]["later_sample"] == 80


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("output", None, "field 'output': must be the judge's text"),
        ("output", 1, "field 'output': must be the judge's text"),
        ("output", ["[[A]]"], "field 'output': must be the judge's text"),
        ("Label", "a", "field 'Label': must be A or B"),
        ("ID", None, "field 'ID': missing"),
        ("Meta", {}, "field 'Meta.Category': missing"),
        ("Meta", {"Category": "all"}, "also one of the scoring script's group names"),
    ],
)
def test_mmrb_malformed_values_are_refused_by_line_and_field(tmp_path, field, value, message):
    # The script raises on most of these (TypeError, KeyError); on a list output, a lower-case
    # label, a row without ID or a category named "all" it gives figures that mean nothing
    # (list membership, a label never matched, a double count in "all"). mmrb-studio refuses
    # the file and names the line and field.
    rows = mmrb_rows(random.Random(1), 5)
    if value is None and field == "ID":
        del rows[2]["ID"]
    else:
        rows[2][field] = value
    path = write_jsonl(tmp_path / "out.jsonl", rows)
    err = refused("--judgments", str(path), "--format", "mmrb", "--preset", "mmrb")
    assert "out.jsonl:3 " in err and message in err


# -- MMRB2: compute_accuracy.py ------------------------------------------------------------
JUDGEMENTS = ["A", "B", "A", "B", "a", "b", "C", "tie", "A ", "", None, 0, 1, 0.0, True, False, [], {}, ["A"], {"x": 1}]


def mmrb2_args(preds: Path, ground_truth: Path) -> tuple[str, ...]:
    return ("--judgments", str(preds), "--format", "mmrb2", "--preset", "mmrb2", "--dataset", str(ground_truth))


def mmrb2_score(preds: Path, ground_truth: Path) -> dict:
    return ours(*mmrb2_args(preds, ground_truth))


def mmrb2_case(rng: random.Random, task: str = "") -> tuple[list[dict], dict]:
    n = rng.randint(1, 25)
    ids = [f"{task}p{i}" for i in range(n)]
    if rng.random() < 0.3:  # a ground-truth id repeated
        ids.append(rng.choice(ids))
    gt = [
        {"id": i, "response_a": "{'response_content': [['text', 'a']]}", "response_b": "b", "chosen": rng.choice("AB")}
        for i in ids
    ]
    preds: dict = {}
    for i in dict.fromkeys(ids):
        kind = rng.random()
        if kind < 0.15:
            continue  # missing
        if kind < 0.22:
            preds[i] = {}
            continue
        entry = {}
        for order in ("forward", "reverse"):
            if rng.random() < 0.1:
                continue  # this order not run
            entries = []
            for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):  # empty lists and extra samples
                e = {"evaluator": "x"}
                if rng.random() < 0.9:
                    e["judgement"] = rng.choice(JUDGEMENTS)
                entries.append(e)
            entry[order] = entries
        preds[i] = entry
    for k in range(rng.randint(0, 2)):  # ids the ground truth does not have
        preds[f"zz{task}{k}"] = {"forward": [{"judgement": "A"}], "reverse": []}
    return gt, preds


def test_mmrb2_preset_equals_compute_accuracy(tmp_path):
    mod = load("mmrb2/compute_accuracy.py", "mmrb2_official")
    for seed in SEEDS:
        gt, preds = mmrb2_case(random.Random(seed))
        (tmp_path / "t2i_response_only.json").write_text(json.dumps({"pairs": gt}))
        (tmp_path / "preds.json").write_text(json.dumps(preds))
        theirs = mod.compute_task_accuracy(preds, {"pairs": gt}, "image")
        r = mmrb2_score(tmp_path / "preds.json", tmp_path / "t2i_response_only.json")
        assert r["pairs"] == theirs.total_pairs
        assert r["missing_pairs"] == theirs.missing_pairs
        assert r["pairs"] - r["missing_pairs"] == theirs.evaluated_pairs
        assert (r["overall"]["correct"], r["overall"]["n"]) == (theirs.total_correct, theirs.total_evaluated)
        assert close(r["overall"]["accuracy"] or 0.0, theirs.accuracy)
        assert r["tie_rate"]["count"] == 0  # "a", "C", 1 are not ties


def test_mmrb2_all_four_tasks(tmp_path):
    mod = load("mmrb2/compute_accuracy.py", "mmrb2_official")
    bench = tmp_path / "benchmark"
    bench.mkdir()
    names = {"t2i": "task1", "edit": "task2", "interleaved": "task3", "reasoning": "task4"}
    pred_files, merged = [], {}
    for k, task in enumerate(names):
        gt, preds = mmrb2_case(random.Random(100 + k), task)
        (bench / f"{task}.json").write_text(json.dumps({"pairs": gt}))
        pred_files.append(str(tmp_path / f"{task}_preds.json"))
        Path(pred_files[-1]).write_text(json.dumps(preds))
        merged.update(preds)
    (tmp_path / "all.json").write_text(json.dumps(merged))
    results, text = quiet(mod.evaluate_all_tasks, pred_files, str(bench))
    r = ours(
        "--judgments",
        str(tmp_path / "all.json"),
        "--format",
        "mmrb2",
        "--preset",
        "mmrb2",
        *[a for t in names for a in ("--dataset", str(bench / f"{t}.json"))],
    )
    for res, task in zip(results, names, strict=True):
        c = r["categories"][task]
        assert (c["correct"], c["n"], c["dataset_pairs"]) == (res.total_correct, res.total_evaluated, res.total_pairs)
    assert r["missing_pairs"] == sum(res.missing_pairs for res in results)
    overall = re.search(r"Overall\s+(\S+)%", text).group(1)
    assert f"{100 * r['overall']['accuracy']:.2f}" == overall


def test_mmrb2_malformed_entries_are_refused(tmp_path):
    # the script raises on these (AttributeError, TypeError); mmrb-studio names the entry
    gt = [{"id": "p0", "response_a": "a", "response_b": "b", "chosen": "A"}]
    (tmp_path / "t2i.json").write_text(json.dumps({"pairs": gt}))
    for bad, where in (
        [{"p0": {"forward": ["A"]}}, "p0.forward[0]"],
        [{"p0": {"forward": None}}, "p0.forward"],
        [{"p0": ["A"]}, "'p0'"],
    ):
        (tmp_path / "preds.json").write_text(json.dumps(bad))
        err = refused(
            "--judgments", str(tmp_path / "preds.json"), "--format", "mmrb2", "--dataset", str(tmp_path / "t2i.json")
        )
        assert where in err


MMRB2_ANSWERS = [
    '{"reasoning": "...", "score": 5, "better_response": "A", "confidence": 0.3}',
    '{"better_response": "B"}',
    '```json\n{"better_response": "A"}\n```',
    '```\n{"better_response": "B", "score": 2}\n```',
    'Here is my verdict: {"better_response": "B"',  # cut short: repaired
    '{"better_response": "tie"}',
    '{"better_response": "a"}',
    '{"better_response": " A"}',
    '{"better_response": 1}',
    '{"better_response": ["A"]}',
    '{"better_response": true}',
    '{"better_response": ""}',
    '{"better_response": null}',
    '{"better_response": 0}',
    '{"better_response": []}',
    '{"reasoning": "no verdict"}',
    '["A"]',
    "[[A]]",
    "The answer is A.",
    "",
    "   ",
]
MMRB2_STEP = st.one_of(st.none(), st.just("error"), st.sampled_from(MMRB2_ANSWERS))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from("AB"), st.booleans(), MMRB2_STEP, MMRB2_STEP),
        min_size=1,
        max_size=12,
    )
)
def test_mmrb2_preset_on_evaluate_runs_equals_compute_accuracy(rows):
    """Adversarial runs (pairs never judged, one order only, failed requests, answers naming
    neither response, answers without a judgement) scored under --preset mmrb2 give
    compute_accuracy.py's figures on the same run written as the benchmark's predictions."""
    from curate.judging.parsing import parse_mmrb2
    from curate.judging.records import JudgeTask
    from curate.judging.vlm import judgment_from
    from curate.llm import Completion
    from curate.model import Failure
    from mmrb_eval.records import EvalPair
    from mmrb_eval.scoring import preset_options, score

    mod = load("mmrb2/compute_accuracy.py", "mmrb2_official")
    pairs, judgments, gt = [], [], []
    for i, (chosen, judged, forward, reverse) in enumerate(rows):
        pid = f"p{i}"
        pairs.append(EvalPair(pid, "", "x", "y", "first" if chosen == "A" else "second", category="t2i"))
        gt.append({"id": pid, "chosen": chosen})
        if not judged:
            continue  # a pair the run never reached: missing
        task = JudgeTask(pid, "", "x", "y")
        for order, step in (("forward", forward), ("reverse", reverse)):
            if step is None:
                continue  # this order not asked for (--order fixed, or a run cut short)
            comp = (
                Completion(False, failure=Failure("HTTP error", "HTTP 500"))
                if step == "error"
                else Completion(True, step)
            )
            judgments.append(judgment_from(task, order, 0, "prompt", comp, parse_mmrb2))
    preds = mmrb2_predictions_of_run(judgments)
    theirs = mod.compute_task_accuracy(preds, {"pairs": gt}, "image")
    r = score(pairs, judgments, preset_options("mmrb2", bootstrap=0))
    assert (r.overall["correct"], r.overall["n"]) == (theirs.total_correct, theirs.total_evaluated)
    assert r.missing_pairs == theirs.missing_pairs and r.pairs == theirs.total_pairs
    assert close(r.overall["accuracy"] or 0.0, theirs.accuracy)
    assert r.categories["t2i"].n == theirs.total_evaluated


# -- VL-RewardBench: cal.py, restated from ../shared/official/README.md --------------------
CAL_PATTERN = r"(?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*(?:the\s*)?(?:slightly\s*)?better"
CAL_DATASETS = {
    "RLAIF": "rlaif-v",
    "RLHF": "rlhf-v",
    "mathverse": "reasoning_tasks",
    "mmmu": "reasoning_tasks",
    "wildvision": "wildvision-battle",
    "hallucination": "povid",
}
CAL_GROUPS = {
    "vlfeedback": "general",
    "wildvision-battle": "general",
    "povid": "hallucination",
    "rlhf-v": "hallucination",
    "rlaif-v": "hallucination",
    "reasoning_tasks": "reasoning",
}


class CalStops(Exception):
    """cal.py stops on the file itself (its shape) before it counts anything."""


def cal_reference(records: list, ks=(1, 3, 5, 7, 9)) -> dict[int, dict]:
    """VL-RewardBench cal.py (vl-rewardbench/VL_RewardBench @ 9b10abd), restated step by
    step from ../shared/official/README.md and the file: main() seeds random once with 1234,
    then for each k re-reads the records, unwraps every record as ``r["0"]`` when the first
    one has a key "0", shuffles them with its swap shuffle (for every position i, swap with
    random.randint(0, n - 1)), skips null records, reads ``meta.flag_status``, re-reads each
    verdict with the expression above on the text without newlines and '*'
    (case-insensitive): no match is "doesntMatch", the number of the rejected response's
    shown position (from ``ranking`` and ``meta.random_number``) is "reject", any other
    number "agree"; keeps at most k records per item (keyed on the text id + query + sorted
    responses; its dataset is that of the first record met); classifies each item by strict
    majority; computes each source dataset's accept rate agree / (agree + reject), each
    group's accuracy and the macro mean of the three.

    {k: figures} for each k of ``ks``, in main()'s order. Where cal.py stops on the file's
    shape (a null first record, records wrapped unlike the first) this raises CalStops.
    Where it stops on a record or a division, the figures are still computed, and ``stops``
    names the first cause ("flag_status": a record without ``meta.flag_status``;
    "accept_rate": a source dataset without a decided item, whose unprinted rate divides by
    zero; "group": a group without a decided item); None where cal.py prints them."""
    try:
        if "0" in records[0]:
            records = [item["0"] for item in records]
    except (TypeError, KeyError, IndexError) as e:
        raise CalStops(repr(e)) from None
    rnd = random.Random(1234)
    out = {}
    for k in ks:
        data = list(records)
        for i in range(len(data)):
            j = rnd.randint(0, len(data) - 1)
            data[i], data[j] = data[j], data[i]
        stops = None
        items: dict[str, dict] = {}
        for item in data:
            if item is None:
                continue
            if not isinstance(item, dict) or "id" not in item:
                raise CalStops(f"a record without an id: {item!r}")
            key = item["id"] + item["query"] + "\t".join(sorted(item["response"]))
            prefix = re.split(r"[_-]", item["id"], maxsplit=1)[0]
            if "flag_status" not in item["meta"]:
                stops = stops or "flag_status"
            rn = item["meta"]["random_number"]
            rejected = item["ranking"].index(1 if rn == 0 else 0) + 1
            text = item["meta"]["filter_choice"].replace("\n", "").replace("*", "")
            m = re.search(CAL_PATTERN, text, re.IGNORECASE)
            status = "doesntMatch" if not m else "reject" if int(m.group(1)) == rejected else "agree"
            if key not in items:
                items[key] = {
                    "agree": 0,
                    "reject": 0,
                    "doesntMatch": 0,
                    "dataset": CAL_DATASETS.get(prefix, "vlfeedback"),
                }
            elif sum(items[key][s] for s in ("agree", "reject", "doesntMatch")) >= k:
                continue
            items[key][status] += 1
        per_dataset: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for d in items.values():
            t = d["agree"] + d["reject"] + d["doesntMatch"]
            counts = per_dataset[d["dataset"]]
            if d["agree"] > t / 2:
                counts[0] += 1
            elif d["reject"] > t / 2:
                counts[1] += 1
        agree, total = defaultdict(int), defaultdict(int)
        for dataset, (a, r) in per_dataset.items():
            if not a + r:
                stops = stops or "accept_rate"
            agree[CAL_GROUPS[dataset]] += a
            total[CAL_GROUPS[dataset]] += a + r
        names = ("general", "hallucination", "reasoning")
        if not all(total[g] for g in names):
            stops = stops or "group"
        macro = None if not all(total[g] for g in names) else sum(agree[g] / total[g] for g in names) / 3
        out[k] = {
            **{g: (agree[g], total[g]) for g in names},
            "overall": (sum(agree.values()), sum(total.values())),
            "macro": macro,
            "stops": stops,
        }
    return out


CAL_IDS = [
    "RLAIF-V-12",
    "RLHF-V_3",
    "mathverse_4",
    "mmmu-pro_5",
    "wildvision_6",
    "hallucination_pair-7",
    "LRVInstruction-8",
    "svit_9",
    "rlaif-v-10",
    "RLAIF",
    "wildvision",
    "mmmu_pro-11",
    "jailbreak_1",
]
CAL_TEXTS = [
    "Overall Judgment: Answer 1 is better",
    "**Overall Judgment**: **Answer 2** is better",
    "Therefore, Answer 2 is slightly better.",
    "overall judgment:\nanswer 1 is the better one",
    "Overall Judgment: Answer 3 is better",
    "Overall Judgment: Answer 01 is better",
    "Answer 1 is better",
    "Therefore Answer 1 is better. Overall Judgment: Answer 2 is better",
    "",
    "unclear",
    "Overall Judgment - Answer 2 is better",
]


CAL_DECIDING = CAL_TEXTS[:4] + CAL_TEXTS[5:8] + CAL_TEXTS[10:]  # texts the expression reads


def cal_records(rng: random.Random, *, deciding: float = 0.5) -> list:
    """Inference records of 1-14 items (some sharing an id, some a query, some listed in the
    other order), 1-60 records, null records among them, all wrapped as {"0": record} in one
    file of five; ``deciding``: the share of texts drawn from those the expression reads."""
    items = []
    for _ in range(rng.randint(1, 14)):
        resp = rng.sample(["one", "two", "three", "four"], 2)
        items.append((rng.choice(CAL_IDS), rng.choice(["q", "q2"]), resp, rng.choice([[0, 1], [1, 0]])))
    recs: list = []
    for _ in range(rng.randint(1, 60)):
        pid, q, resp, ranking = rng.choice(items)
        if rng.random() < 0.1:  # the same item with its responses in the other order
            resp, ranking = resp[::-1], ranking[::-1]
        recs.append(
            {
                "id": pid,
                "query": q,
                "response": resp,
                "ranking": ranking,
                "meta": {
                    "random_number": rng.choice([0, 1, 1, 0, 2]),
                    "filter_choice": rng.choice(CAL_DECIDING if rng.random() < deciding else CAL_TEXTS),
                    "flag_status": "stale",
                },
            }
        )
        if rng.random() < 0.05:
            recs.append(None)
    if recs[0] is None:
        recs = recs[1:] + [None]  # cal.py stops on a null first record (a test of its own below)
    if rng.random() < 0.2:
        recs = [{"0": r} for r in recs]
    return recs


def assert_same_as_cal(ref: dict, r: dict) -> None:
    for g in ("general", "hallucination", "reasoning"):
        assert (r["categories"][g]["correct"], r["categories"][g]["n"]) == ref[g], g
    assert (r["overall"]["correct"], r["overall"]["n"]) == ref["overall"]
    if ref["macro"] is None:
        assert r["macro"]["accuracy"] is None
    else:
        assert close(r["macro"]["accuracy"], ref["macro"])


def vlrb_score(path: Path, *more: str) -> dict:
    return ours("--judgments", str(path), "--format", "vlrewardbench", "--preset", "vlrewardbench", *more)


def test_vlrewardbench_preset_equals_cal_py(tmp_path):
    """For every k of cal.py's main() and seeded files of mixed verdicts, the preset with
    --vlrb-k k gives the figures cal.py prints for that k. Where cal.py stops dividing by
    zero (a source dataset or a group without a decided item) or on a record without
    meta.flag_status, the preset gives what cal.py computes up to there: the groups it can
    compute, that group and the macro undefined (README, "Scoring against the published
    scripts")."""
    seen: Counter = Counter()
    for seed in range(120):
        rng = random.Random(seed)
        recs = cal_records(rng, deciding=rng.choice([0.5, 1.0, 1.0]))
        if rng.random() < 0.1:
            for r in recs:
                rec = r["0"] if r is not None and "0" in r else r
                if rec is not None and rng.random() < 0.3:
                    rec["meta"].pop("flag_status", None)
        path = write_jsonl(tmp_path / f"infer{seed}.jsonl", recs)
        ref = cal_reference(recs)
        for k in CAL_KS:
            seen[ref[k]["stops"]] += 1
            assert_same_as_cal(ref[k], vlrb_score(path, "--vlrb-k", str(k)))
    assert seen[None] >= 100 and min(seen[c] for c in ("flag_status", "accept_rate", "group")) >= 10, seen


def test_vlrewardbench_scaling_ends_at_cal_py_figure_for_that_k(tmp_path):
    """The scaling curve (mmrb_eval/scaling.py) of a file read with --vlrb-k k is nested, not
    cal.py's fresh shuffle per k, but its last point uses every sample kept, as cal.py's figure
    for k does: the two agree there, and the report's own figures stay cal.py's."""
    checked = 0
    for seed in range(40):
        rng = random.Random(seed)
        recs = cal_records(rng, deciding=1.0)
        path = write_jsonl(tmp_path / f"infer{seed}.jsonl", recs)
        ref = cal_reference(recs)
        for k in (3, 9):
            r = vlrb_score(path, "--vlrb-k", str(k))
            assert_same_as_cal(ref[k], r)
            if "scaling" not in r:  # no item kept two samples
                continue
            last = r["scaling"][-1]
            assert last["k"] <= k and {x: last[x] for x in ("accuracy", "correct", "n")} == {
                x: r["overall"][x] for x in ("accuracy", "correct", "n")
            }
            assert last["macro"]["accuracy"] == r["macro"]["accuracy"]
            checked += 1
    assert checked >= 40


def test_vlrewardbench_preset_needs_k_when_items_have_several_samples(tmp_path):
    # cal.py prints figures for k = 1, 3, 5, 7, 9 only: with 10 samples an item, every sample
    # voting is a figure it never prints
    rng = random.Random(4)
    recs = [
        {**r, "meta": {**r["meta"], "filter_choice": rng.choice(CAL_TEXTS)}}
        for r in [cal_records(random.Random(2), deciding=1.0)[0]] * 10
    ]
    path = write_jsonl(tmp_path / "ten.jsonl", recs)
    err = refused("--judgments", str(path), "--format", "vlrewardbench", "--preset", "vlrewardbench")
    assert "items have up to 10 records (samples) each" in err and "--vlrb-k" in err
    # one record an item: k changes nothing, so none is needed
    one = write_jsonl(tmp_path / "one.jsonl", [recs[0]])
    assert vlrb_score(one)["overall"]["n"] == 1
    # without the preset, every sample may vote (the file's own rules, not cal.py's figure)
    r = ours("--judgments", str(path), "--format", "vlrewardbench", "--aggregate", "majority")
    assert r["pairs"] == 1


def test_vlrewardbench_files_cal_py_stops_on_are_refused(tmp_path):
    rec = cal_records(random.Random(1), deciding=1.0)[0]
    assert rec is not None and "0" not in rec
    wrapped = {"0": rec}
    for name, recs, where, message in (
        ("null-first", [None, rec], "null-first.jsonl:1:", "the first record is null"),
        ("wrap-first", [wrapped, rec], "wrap-first.jsonl:2 field '0'", "not wrapped as"),
        ("wrap-later", [rec, wrapped], "wrap-later.jsonl:2 field '0'", "while the first record (line 1) is not"),
    ):
        with pytest.raises(CalStops):
            cal_reference(recs)
        path = write_jsonl(tmp_path / f"{name}.jsonl", recs)
        err = refused("--judgments", str(path), "--format", "vlrewardbench", "--preset", "vlrewardbench")
        assert where in err and message in err, err
    # every record wrapped, nulls too: unwrapped as cal.py does, and scored
    path = write_jsonl(tmp_path / "all.jsonl", [wrapped, {"0": None}, {"0": rec}])
    assert_same_as_cal(cal_reference([wrapped, {"0": None}, {"0": rec}])[1], vlrb_score(path, "--vlrb-k", "1"))


def test_vlrewardbench_colliding_item_keys_are_refused(tmp_path):
    # cal.py keys an item on the text id + query + responses: RLHF + "x-q" and RLHFx + "-q"
    # are one item there, in the group of whichever record its shuffle meets first
    base = cal_records(random.Random(1), deciding=1.0)[0]
    a = {**base, "id": "RLHF", "query": "x-q"}
    b = {**base, "id": "RLHFx", "query": "-q"}
    path = write_jsonl(tmp_path / "collide.jsonl", [a, b])
    err = refused("--judgments", str(path), "--format", "vlrewardbench", "--preset", "vlrewardbench", "--vlrb-k", "1")
    assert "collide.jsonl:2 field 'id'" in err and "'RLHFx'" in err and "(line 1)" in err
    assert "same id + query + responses text" in err
    # the reference merges them as cal.py does: one item
    assert sum(cal_reference([a, b], ks=(1,))[1]["overall"]) <= 2


def test_vlrewardbench_blank_lines_and_bom_give_the_figures_without_them(tmp_path):
    # cal.py reads every line with json.loads: a blank line or a BOM makes it print
    # "Error decoding JSON", count nothing and then divide by zero. The preset reads the file
    # without them, which gives the figures cal.py prints for the file without them.
    for seed in range(20):
        recs = cal_records(random.Random(seed), deciding=0.95)
        clean = write_jsonl(tmp_path / "clean.jsonl", recs)
        lines = clean.read_text().splitlines(keepends=True)
        messy = tmp_path / "messy.jsonl"
        messy.write_text("\ufeff" + "\n".join(lines) + "\n\n", encoding="utf-8")
        for k in (1, 3):
            mine, theirs = vlrb_score(messy, "--vlrb-k", str(k)), vlrb_score(clean, "--vlrb-k", str(k))
            for key in ("overall", "macro", "categories", "pairs", "judgments"):
                assert mine[key] == theirs[key], key


def test_vlrewardbench_records_of_real_ids_are_grouped_by_prefix(tmp_path):
    # records without image_path (as inference_hf.py writes them), for the 1,250 public pairs
    from tests.support.data import shared

    rows = [json.loads(x) for x in shared("vlrewardbench/pairs.jsonl").read_text().splitlines()]
    rng = random.Random(5)
    recs = []
    for p in rows:
        flip = rng.random() < 0.5
        for _ in range(3):
            recs.append(
                {
                    "id": p["id"],
                    "query": p["prompt"],
                    "response": [p["rejected"], p["chosen"]] if flip else [p["chosen"], p["rejected"]],
                    "ranking": [1, 0] if flip else [0, 1],
                    "meta": {"random_number": rng.choice([0, 1]), "filter_choice": rng.choice(CAL_TEXTS)},
                }
            )
    path = write_jsonl(tmp_path / "infer.jsonl", recs)
    r = vlrb_score(path, "--vlrb-k", "3")
    assert {g: c["dataset_pairs"] for g, c in r["categories"].items()} == {
        "general": 183,
        "hallucination": 749,
        "reasoning": 318,
    }
    assert_same_as_cal(cal_reference(recs, ks=(1, 3))[3], r)
    # the same records scored against the text copy (id, prompt, chosen, rejected), whose pairs
    # are oriented by a hash of the id: the same figures
    r2 = ours(
        "--judgments",
        str(path),
        "--format",
        "vlrewardbench",
        "--preset",
        "vlrewardbench",
        "--vlrb-k",
        "3",
        "--dataset",
        str(shared("vlrewardbench/pairs.jsonl")),
    )
    for g in ("overall", "macro"):
        assert r2[g]["accuracy"] == r[g]["accuracy"], g
    assert r2["warnings"] == []


# -- R1-Reward's three scripts ------------------------------------------------------------
def rewards(rng: random.Random) -> list:
    kind = rng.random()
    if kind < 0.15:
        v = rng.choice([0, 1, 0.5, -2])
        return [v, v]  # a tie: wrong
    if kind < 0.2:
        return [float("nan"), 1.0]
    r = [rng.choice([0, 1, 2, -1, 0.25, 3.5, 1e9]) for _ in range(2)]
    return r + [rng.random() for _ in range(rng.choice([0, 0, 1]))]  # extra entries are ignored


def test_r1_multimodal_reward_equals_1_get_accuracy(tmp_path):
    mod = load("r1_reward/Multimodal-Reward/1_get_accuracy.py", "r1_mmrb_official")
    for seed in SEEDS:
        rng = random.Random(seed)
        rows = [
            {
                "ID": f"{rng.choice(MMRB_ID_PREFIXES)}{rng.randrange(20)}",
                "Text": "q",
                "Image": "i.png",
                "Output1": "one",
                "Output2": "two",
                "Better": rng.choice(["Output1", "Output2"]),
                "Category": rng.choice(MMRB_CATEGORIES),
                "rewards": rewards(rng),
                "critic": "<answer>1</answer>",
            }
            for _ in range(rng.randint(1, 60))
        ]
        path = write_jsonl(tmp_path / "r1.jsonl", rows)
        _, text = quiet(mod.compute_acc, argparse.Namespace(answers_file=str(path)))
        theirs = {
            m.group(1): (int(m.group(2)), int(m.group(3)), float(m.group(4)))
            for m in re.finditer(r"^acc (.*): (\d+) / (\d+) = (\S+)$", text, re.M)
        }
        r = ours("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mmrb")
        assert_same_groups(theirs, r, skip=("safety", "reasoning"))


VL_R1_IDS = [
    "mmmu_1",
    "x_mathverse",
    "hallucination_pair-2",
    "rlhf_3",
    "rlaif-4",
    "RLAIF-V-5",
    "RLHF-V-6",
    "wildvision_7",
    "svit-8",
    "MMMU-9",
    "LRVInstruction-10",
]


def test_r1_vl_reward_bench_get_acc(tmp_path):
    # get_acc.py takes rewards[:1] and then reads rewards[1]: it raises IndexError on every
    # record, its own included. The preset gives what it was meant to compute (rewards[0] >
    # rewards[1]); the comparison runs the script with that one slice removed, in memory.
    broken = load("r1_reward/VL-Reward-Bench/get_acc.py", "r1_vl_official")
    meant = load(
        "r1_reward/VL-Reward-Bench/get_acc.py", "r1_vl_meant", patch=('data["rewards"][:1]', 'data["rewards"]')
    )
    for seed in SEEDS:
        rng = random.Random(seed)
        rows = [
            {
                "id": rng.choice(VL_R1_IDS),
                "prompt": "q",
                "chosen": "c",
                "rejected": "r",
                "image": "vl/i.jpg",
                "rewards": rewards(rng),
            }
            for _ in range(rng.randint(1, 50))
        ]
        path = write_jsonl(tmp_path / "vl.jsonl", rows)
        with pytest.raises(IndexError):
            broken.calculate_accuracy_and_stats(str(path))
        results, average = meant.calculate_accuracy_and_stats(str(path))
        r = ours("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-vlrewardbench")
        for g, s in results.items():
            mine = r["categories"][g]
            assert mine["n"] == s["samples"], g
            assert close(mine["accuracy"] or 0.0, s["accuracy"]), g
        assert close(r["overall"]["accuracy"], average)
        assert close(r["macro"]["accuracy"], sum(s["accuracy"] for s in results.values()) / 3)


MM_RLHF_PATHS = [
    "mcq/1.png",
    "long/2.jpg",
    "short/x.png",
    "safety/y.png",
    "other/q.png",
    "long/short_1.png",
    "data/mcq_long.png",
    "",
]


def mm_rlhf_official(path: Path) -> argparse.Namespace:
    """MM-RLHF-Reward/get_acc.py runs at import time on a hard-coded path (""): run its code
    with ``open`` answering that path with ours."""
    src = official("r1_reward/MM-RLHF-Reward/get_acc.py")

    def redirected(f, *a, **kw):
        return builtins.open(path if f == "" else f, *a, **kw)

    ns = {"__name__": "mm_rlhf_official", "open": redirected}
    quiet(exec, compile(src.read_text(encoding="utf-8"), str(src), "exec"), ns)
    return argparse.Namespace(**ns)


MM_RLHF_VIDEOS = ["video/v1.mp4", "clips/v2.mp4", "long/v3.mp4", "mcq/v4.mp4", "short/v5.mp4"]


def mm_rlhf_rows(rng: random.Random) -> list[dict]:
    """Rows of up to 12 ids (some written as numbers beside the same digits as text), image or
    video paths or both, some with a ``prompt_id`` column that get_acc.py ignores."""
    rows = []
    for _ in range(rng.randint(1, 60)):
        n = rng.randrange(12)
        row = {
            "id": rng.choice([f"g{n}", n, str(n)]),
            "prompt": "q",
            "chosen": "c",
            "rejected": "r",
            "rewards": rewards(rng),
        }
        if rng.random() < 0.3:
            row["prompt_id"] = rng.choice(["p0", "p1"])
        where = rng.choice(MM_RLHF_PATHS + ["VIDEO", "BOTH"])
        if where in ("VIDEO", "BOTH"):
            row["video"] = rng.choice(MM_RLHF_VIDEOS)
        if where == "BOTH":
            row["image"] = rng.choice(MM_RLHF_PATHS[:-1])
        elif where != "VIDEO" and (where or rng.random() < 0.5):
            row["image"] = where
        rows.append(row)
    return rows


def split_media(row: dict) -> bool:
    """A row get_acc.py counts in one keyword's total and another's right answers."""
    from curate.formats import mm_rlhf

    image, video = row.get("image", ""), row.get("video", "")
    return bool(image and video) and mm_rlhf.category_of(image, video) != mm_rlhf.accuracy_keyword(image, video)


def test_r1_mm_rlhf_get_acc(tmp_path):
    compared = refused_files = 0
    for seed in range(60):
        rng = random.Random(seed)
        rows = mm_rlhf_rows(rng)
        path = write_jsonl(tmp_path / "mm.jsonl", rows)
        theirs = mm_rlhf_official(path)
        args = ("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mm-rlhf")
        split = [i for i, row in enumerate(rows, 1) if split_media(row)]
        if split:
            err = refused(*args)
            assert f"mm.jsonl:{split[0]} field 'video'" in err and "give one path" in err
            refused_files += 1
            continue
        compared += 1
        r = ours(*args)
        for k, s in theirs.category_stats.items():
            mine = r["categories"].get(k, {"n": 0})
            assert mine["n"] == s["total"], k
            if s["total"]:
                assert close(mine["accuracy"], s["accuracy"]), k
                assert close(r["acc_plus"]["categories"][k]["accuracy"], s["acc_plus"]), k
        o = theirs.overall_stats
        assert r["overall"]["n"] == o["total"] and close(r["overall"]["accuracy"], o["accuracy"])
        assert r["acc_plus"]["n"] == len(theirs.id_to_items) and close(r["acc_plus"]["accuracy"], o["acc_plus"])
    assert compared >= 15 and refused_files >= 15, (compared, refused_files)


def test_r1_mm_rlhf_issue_repros(tmp_path):
    # Acc+ groups rows by their id, as get_acc.py does: a prompt_id column does not regroup
    # them (grouped by it, the one id's two rows would be two prompts, one of them all right)
    row = dict(id="a", prompt="q", chosen="c", rejected="r", image="mcq/1.png")
    rows = [dict(row, prompt_id="p", rewards=[1, 0]), dict(row, prompt_id="q", rewards=[0, 1])]
    path = write_jsonl(tmp_path / "mm.jsonl", rows)
    theirs = mm_rlhf_official(path).overall_stats
    r = ours("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mm-rlhf")
    assert theirs["acc_plus"] == 0.0 and r["acc_plus"]["correct_n"] == "0/1"
    # 3 and "3" are two ids there
    rows = [dict(row, id=3, rewards=[1, 0]), dict(row, id="3", rewards=[0, 1])]
    path = write_jsonl(tmp_path / "mm.jsonl", rows)
    theirs = mm_rlhf_official(path).overall_stats
    r = ours("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mm-rlhf")
    assert theirs["acc_plus"] == 0.5 and r["acc_plus"]["correct_n"] == "1/2"


def test_r1_rewards_malformed(tmp_path):
    for bad in ([1], "12", [None, 1], [True, False], None):
        path = write_jsonl(
            tmp_path / "r.jsonl", [{"id": "a", "prompt": "q", "chosen": "c", "rejected": "r", "rewards": bad}]
        )
        assert "r.jsonl:1 field 'rewards'" in refused(
            "--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mm-rlhf"
        )


# -- inputs a script stops on -------------------------------------------------------------
# Where a script raises on an input, mmrb-studio prints a figure only when it is the figure
# the script prints once that one cause is removed (README, "Scoring against the published
# scripts", lists each); every other such input is refused (the tests above).
def with_bom_and_blank_lines(path: Path) -> Path:
    messy = path.with_name("messy" + path.suffix)
    messy.write_text("\ufeff" + path.read_text().replace("\n", "\n\n", 1) + "\n", encoding="utf-8")
    return messy


def test_mmrb_scripts_stop_on_bom_blank_lines_and_number_ids(tmp_path):
    rows = mmrb_rows(random.Random(11), 40)
    clean = write_jsonl(tmp_path / "out.jsonl", rows)
    messy = with_bom_and_blank_lines(clean)
    with pytest.raises(json.JSONDecodeError):
        mmrb_official(messy)
    args = ("--format", "mmrb", "--preset", "mmrb")
    assert_same_groups(mmrb_official(clean), ours("--judgments", str(messy), *args), skip=("safety", "reasoning"))
    # a safety or reasoning row whose ID is a number: the script calls .lower() on it
    numbered = [
        {**r, "ID": 7 + i} if r["Meta"]["Category"] in ("safety", "reasoning") else r for i, r in enumerate(rows)
    ]
    path = write_jsonl(tmp_path / "numbered.jsonl", numbered)
    with pytest.raises(AttributeError):
        mmrb_official(path)
    as_text = write_jsonl(tmp_path / "as_text.jsonl", [{**r, "ID": str(r["ID"])} for r in numbered])
    assert_same_groups(mmrb_official(as_text), ours("--judgments", str(path), *args), skip=("safety", "reasoning"))


def test_mm_rlhf_script_stops_on_bom_blank_lines_and_null_image(tmp_path):
    rows = [r for r in mm_rlhf_rows(random.Random(5)) if not split_media(r)]
    clean = write_jsonl(tmp_path / "mm.jsonl", rows)
    args = ("--format", "r1-rewards", "--preset", "r1-mm-rlhf")

    def same(theirs: argparse.Namespace, r: dict) -> None:
        assert r["overall"]["n"] == theirs.overall_stats["total"]
        assert close(r["overall"]["accuracy"], theirs.overall_stats["accuracy"])
        assert close(r["acc_plus"]["accuracy"], theirs.overall_stats["acc_plus"])

    messy = with_bom_and_blank_lines(clean)
    with pytest.raises(json.JSONDecodeError):
        mm_rlhf_official(messy)
    same(mm_rlhf_official(clean), ours("--judgments", str(messy), *args))
    # "image": null beside a video: get_acc.py looks for keywords in None
    nulled = [{**r, "image": None} if "video" in r and "image" not in r else r for r in rows]
    assert nulled != rows
    path = write_jsonl(tmp_path / "nulled.jsonl", nulled)
    with pytest.raises(TypeError):
        mm_rlhf_official(path)
    same(mm_rlhf_official(clean), ours("--judgments", str(path), *args))


def test_mmrb2_script_stops_on_a_bom(tmp_path):
    mod = load("mmrb2/compute_accuracy.py", "mmrb2_official")
    gt, preds = mmrb2_case(random.Random(3))
    for name, data in (("t2i.json", {"pairs": gt}), ("preds.json", preds)):
        (tmp_path / name).write_text("\ufeff" + json.dumps(data), encoding="utf-8")
    with pytest.raises(json.JSONDecodeError):
        mod.evaluate_single_task(str(tmp_path / "preds.json"), str(tmp_path / "t2i.json"), "image")
    theirs = mod.compute_task_accuracy(preds, {"pairs": gt}, "image")
    r = mmrb2_score(tmp_path / "preds.json", tmp_path / "t2i.json")
    assert (r["overall"]["correct"], r["overall"]["n"], r["missing_pairs"]) == (
        theirs.total_correct,
        theirs.total_evaluated,
        theirs.missing_pairs,
    )


def test_r1_vl_script_stops_on_a_number_id(tmp_path):
    meant = load(
        "r1_reward/VL-Reward-Bench/get_acc.py", "r1_vl_meant", patch=('data["rewards"][:1]', 'data["rewards"]')
    )
    rows = [{"id": i, "prompt": "q", "chosen": "c", "rejected": "r", "rewards": [i % 3, 1]} for i in range(9)]
    path = write_jsonl(tmp_path / "vl.jsonl", rows)
    with pytest.raises(TypeError):
        meant.calculate_accuracy_and_stats(str(path))
    as_text = write_jsonl(tmp_path / "as_text.jsonl", [{**r, "id": str(r["id"])} for r in rows])
    results, average = meant.calculate_accuracy_and_stats(str(as_text))
    r = ours("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-vlrewardbench")
    assert close(r["overall"]["accuracy"], average) and r["categories"]["general"]["n"] == results["general"]["samples"]
