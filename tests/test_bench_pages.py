"""bench/pages.py --quick runs end to end (so the benchmark cannot rot)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_pages_quick(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "bench.pages", "--pairs", "300", "--repeat", "1", "--cache", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    # the sample and the built store, each with its anchor and every page's total against it
    assert re.search(r"^bundled sample: [\d,]+ labels; anchor", out.stdout, re.M), out.stdout
    assert re.search(r"^300 pairs x 3 labels: 900 labels; anchor", out.stdout, re.M), out.stdout
    for page in ("progress", "agreement", "quality"):
        totals = re.findall(
            rf"^  {page} page: [\d.]+ s wall, [\d.]+ s CPU \((ok|OVER)\); [\d.]+x the anchor", out.stdout, re.M
        )
        assert len(totals) == 2, out.stdout
    assert re.search(r"^    reliability \(Dawid-Skene\)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+$", out.stdout, re.M)
