"""bench/bestofn.py --quick runs end to end (so the benchmark cannot rot)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_quick(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "bench.bestofn", "--quick", "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    figures = json.loads(p.stdout.strip().splitlines()[-1])
    # counted at the server; throughput is not asserted (shared CI machines)
    assert figures["judgments_per_item"] == {
        "4": {"knockout": 6, "round-robin": 12},
        "8": {"knockout": 14, "round-robin": 56},
        "16": {"knockout": 30, "round-robin": 240},
    }
    assert figures["knockout"]["passes"] == 2 and "judgments/s vs limit" in p.stdout
