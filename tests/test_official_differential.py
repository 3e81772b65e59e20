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
import importlib.util
import io
import json
import random
import re
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curate.cli import main as mmrb

ROOT = Path(__file__).resolve().parents[1]
OFFICIAL = ROOT.parent / "shared" / "official"


def official(rel: str) -> Path:
    p = OFFICIAL / rel
    if not p.exists():
        pytest.skip(
            f"../shared/official/{rel} not present beside this checkout "
            "(the benchmarks' scripts are not part of the repository)"
        )
    return p


def load(rel: str, name: str, patch: tuple[str, str] | None = None):
    """A script as a module; ``patch`` replaces one snippet of its source in memory."""
    path = official(rel)
    if patch is None:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    src = path.read_text(encoding="utf-8")
    assert src.count(patch[0]) == 1, f"{rel} changed: {patch[0]!r} not found once"
    ns = {"__name__": name, "__file__": str(path)}
    exec(compile(src.replace(*patch), str(path), "exec"), ns)
    return argparse.Namespace(**ns)


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
        r = ours(
            "--judgments",
            str(tmp_path / "preds.json"),
            "--format",
            "mmrb2",
            "--preset",
            "mmrb2",
            "--dataset",
            str(tmp_path / "t2i_response_only.json"),
        )
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


# -- MMRB2: runs made by mmrb evaluate (template mmrb2) ------------------------------------------
def mmrb2_predictions_of_run(judgments) -> dict:
    """A stored run as MMRB2's own judge run would have written its predictions file
    (facebookresearch/MMRB2 @ 7ff0552, evaluate/generate_judgements/evaluate.py and
    api_pairwise_evaluator.py, restated): every pair it judged is listed with both orders;
    each answer's code fence is removed, the rest read by json_repair and its
    ``better_response`` kept as the judgement; an answer without one raises there (a failed
    attempt, left out), and so does a failed request."""
    import json_repair

    out: dict[str, dict[str, list]] = {}
    for j in sorted(judgments, key=lambda j: j.sample_index):
        entry = out.setdefault(j.pair_id, {"forward": [], "reverse": []})
        if j.outcome == "error" or j.raw is None:
            continue
        text = re.sub(r"^```(?:json)?\s*\n?", "", j.raw.strip())
        text = re.sub(r"\n?```\s*$", "", text.strip())
        try:
            judgement = json_repair.loads(text)["better_response"]
        except Exception:
            continue
        entry[j.order].append({"judgement": judgement, "evaluator": "mmrb-studio"})
    return out


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
    from curate.judging.runner import judgment_from
    from curate.llm import Completion
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
            comp = Completion(False, error="HTTP 500") if step == "error" else Completion(True, step)
            judgments.append(judgment_from(task, order, 0, "prompt", comp, parse_mmrb2))
    preds = mmrb2_predictions_of_run(judgments)
    theirs = mod.compute_task_accuracy(preds, {"pairs": gt}, "image")
    r = score(pairs, judgments, preset_options("mmrb2", bootstrap=0))
    assert (r.overall["correct"], r.overall["n"]) == (theirs.total_correct, theirs.total_evaluated)
    assert r.missing_pairs == theirs.missing_pairs and r.pairs == theirs.total_pairs
    assert close(r.overall["accuracy"] or 0.0, theirs.accuracy)
    assert r.categories["t2i"]["n"] == theirs.total_evaluated


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


def cal_reference(records: list, ks=(1, 3, 5, 7, 9)) -> dict[int, dict]:
    """VL-RewardBench cal.py (vl-rewardbench/VL_RewardBench @ 9b10abd) as README.md in
    ../shared/official describes it: main() seeds random once with 1234, then for each k
    re-reads the records, shuffles them with its swap shuffle (for every position i, swap
    with random.randint(0, n - 1)), keeps at most k records per item, re-reads each verdict
    with the expression above on the text without newlines and '*' (case-insensitive): no
    match is "doesntMatch", the number of the rejected response's shown position (from
    ``ranking`` and ``meta.random_number``) is "reject", any other number "agree" (as the
    file reads). An item (id + query + sorted responses, the key REFERENCE.md notes) is
    classified by strict majority; its dataset comes from the id's prefix before the first
    ``_`` or ``-``; group accuracy = agree / (agree + reject), Overall the same over all
    groups, Macro the mean of the three (None where the script would divide by zero).
    Records wrapped as {"0": record} are unwrapped (when the first one is); null records are
    skipped after the shuffle. {k: figures} for each k of ``ks``, in main()'s order."""
    if records and isinstance(records[0], dict) and "0" in records[0]:
        records = [r["0"] for r in records]
    rnd = random.Random(1234)
    out = {}
    for k in ks:
        data = list(records)
        for i in range(len(data)):
            j = rnd.randint(0, len(data) - 1)
            data[i], data[j] = data[j], data[i]
        items: dict[str, dict] = {}
        for item in data:
            if item is None:
                continue
            key = item["id"] + item["query"] + "\t".join(sorted(item["response"]))
            prefix = re.split(r"[_-]", item["id"], maxsplit=1)[0]
            d = items.setdefault(
                key,
                {
                    "agree": 0,
                    "reject": 0,
                    "doesntMatch": 0,
                    "group": CAL_GROUPS[CAL_DATASETS.get(prefix, "vlfeedback")],
                },
            )
            if d["agree"] + d["reject"] + d["doesntMatch"] >= k:
                continue
            rn = item["meta"]["random_number"]
            rejected = item["ranking"].index(1 if rn == 0 else 0) + 1
            text = item["meta"]["filter_choice"].replace("\n", "").replace("*", "")
            m = re.search(CAL_PATTERN, text, re.IGNORECASE)
            d["doesntMatch" if not m else "reject" if int(m.group(1)) == rejected else "agree"] += 1
        agree, total = defaultdict(int), defaultdict(int)
        for d in items.values():
            t = d["agree"] + d["reject"] + d["doesntMatch"]
            if d["agree"] > t / 2:
                agree[d["group"]] += 1
                total[d["group"]] += 1
            elif d["reject"] > t / 2:
                total[d["group"]] += 1
        groups = {g: (agree[g], total[g]) for g in ("general", "hallucination", "reasoning")}
        accs = [a / n if n else None for a, n in groups.values()]
        n_all = sum(total.values())
        out[k] = {**groups, "overall": (sum(agree.values()), n_all), "macro": None if None in accs else sum(accs) / 3}
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


def cal_records(rng: random.Random) -> list:
    items = []
    for _ in range(rng.randint(1, 12)):
        resp = rng.sample(["one", "two", "three", "four"], 2)
        items.append((rng.choice(CAL_IDS), rng.choice(["q", "q2"]), resp, rng.choice([[0, 1], [1, 0]])))
    recs = []
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
                    "filter_choice": rng.choice(CAL_TEXTS),
                    "flag_status": "stale",
                },
            }
        )
        if rng.random() < 0.05:
            recs.append(None)
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


def test_vlrewardbench_preset_equals_cal_py(tmp_path):
    for seed in SEEDS:
        recs = cal_records(random.Random(seed))
        path = write_jsonl(tmp_path / f"infer{seed}.jsonl", recs)
        ref = cal_reference(recs, ks=(1, 3, 5, 7, 9, 10_000))
        assert_same_as_cal(
            ref[10_000], ours("--judgments", str(path), "--format", "vlrewardbench", "--preset", "vlrewardbench")
        )
        for k in (1, 3, 5):  # the shuffles of main()'s loop, in its order
            r = ours(
                "--judgments", str(path), "--format", "vlrewardbench", "--preset", "vlrewardbench", "--vlrb-k", str(k)
            )
            assert_same_as_cal(ref[k], r)


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
    r = ours("--judgments", str(path), "--format", "vlrewardbench", "--preset", "vlrewardbench")
    assert {g: c["dataset_pairs"] for g, c in r["categories"].items()} == {
        "general": 183,
        "hallucination": 749,
        "reasoning": 318,
    }
    assert_same_as_cal(cal_reference(recs, ks=(10_000,))[10_000], r)
    # the same records scored against the text copy (id, prompt, chosen, rejected), whose pairs
    # are oriented by a hash of the id: the same figures
    r2 = ours(
        "--judgments",
        str(path),
        "--format",
        "vlrewardbench",
        "--preset",
        "vlrewardbench",
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


def test_r1_mm_rlhf_get_acc(tmp_path):
    for seed in SEEDS:
        rng = random.Random(seed)
        rows = []
        for _ in range(rng.randint(1, 60)):
            row = {
                "id": f"g{rng.randrange(12)}",
                "prompt": "q",
                "chosen": "c",
                "rejected": "r",
                "rewards": rewards(rng),
            }
            where = rng.choice(MM_RLHF_PATHS + ["VIDEO"])
            if where == "VIDEO":
                row["video"] = rng.choice(["video/v1.mp4", "clips/v2.mp4", "long/v3.mp4"])
            elif where or rng.random() < 0.5:
                row["image"] = where
            rows.append(row)
        path = write_jsonl(tmp_path / "mm.jsonl", rows)
        theirs = mm_rlhf_official(path)
        r = ours("--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mm-rlhf")
        for k, s in theirs.category_stats.items():
            mine = r["categories"].get(k, {"n": 0})
            assert mine["n"] == s["total"], k
            if s["total"]:
                assert close(mine["accuracy"], s["accuracy"]), k
                assert close(r["acc_plus"]["categories"][k]["accuracy"], s["acc_plus"]), k
        o = theirs.overall_stats
        assert r["overall"]["n"] == o["total"] and close(r["overall"]["accuracy"], o["accuracy"])
        assert r["acc_plus"]["n"] == len(theirs.id_to_items) and close(r["acc_plus"]["accuracy"], o["acc_plus"])


def test_r1_rewards_malformed(tmp_path):
    for bad in ([1], "12", [None, 1], [True, False], None):
        path = write_jsonl(
            tmp_path / "r.jsonl", [{"id": "a", "prompt": "q", "chosen": "c", "rejected": "r", "rewards": bad}]
        )
        assert "r.jsonl:1 field 'rewards'" in refused(
            "--judgments", str(path), "--format", "r1-rewards", "--preset", "r1-mm-rlhf"
        )
