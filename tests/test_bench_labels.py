"""bench/labels.py runs end to end on a tiny store (so the benchmark cannot rot)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_labels_tiny():
    out = subprocess.run(
        [sys.executable, "-m", "bench.labels", "--pairs", "40"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert re.search(r"^raw labels: 120 labels on 40 pairs, SQLite$", out.stdout, re.M), out.stdout
    for way in ("export", "import"):  # every format both ways, each with its figures and ratio
        for fmt in ("jsonl", "parquet", "csv"):
            pattern = rf"^  {way} {fmt} +120 labels +[\d.]+ s CPU +[\d.]+ s wall +[\d.]+x the anchor$"
            assert re.search(pattern, out.stdout, re.M), (way, fmt, out.stdout)
