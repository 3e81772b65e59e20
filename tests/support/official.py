"""The benchmarks' own scripts in ../shared/official, loaded as modules, and MMRB2's predictions
file restated from a stored run."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
