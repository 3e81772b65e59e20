"""bench/store.py --quick runs end to end (so the benchmark cannot rot)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_store_quick(pg_server):
    out = subprocess.run(
        [sys.executable, "-m", "bench.store", "--quick", "--pairs", "500", "--calls", "50"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    for backend in ("sqlite", "postgres"):  # the figures this run measured on each backend
        # ingest: pairs, rows/s, CPU s, peak MB, the executemany anchor's rows/s and the ratio to it
        assert re.search(rf"^{backend}\s+500\s+[\d,]+\s+[\d,.]+\s+[\d,]+\s+[\d,]+\s+\d+%$", out.stdout, re.M), (
            out.stdout
        )
        # queue: pairs, then next and submit median and p95
        assert re.search(rf"^{backend}\s+500(\s+[\d.]+ms){{4}}$", out.stdout, re.M), out.stdout
        assert re.search(rf"  {backend}: next .*\d+x faster than the anchor; .*500 pairs", out.stdout)
