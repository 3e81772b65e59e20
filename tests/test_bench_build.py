"""bench/build.py runs end to end on a tiny store (so the benchmark cannot rot)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_build_tiny():
    out = subprocess.run(
        [sys.executable, "-m", "bench.build", "--triplets", "60", "--small", "26"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert re.search(r"^mmrb build of 60 triplets", out.stdout, re.M), out.stdout
    assert re.search(r"anchor \(Parquet, images embedded\): [\d.]+ s CPU", out.stdout), out.stdout
    # this tree's build: CPU, wall, peak memory and the ratio to the anchor, all measured
    assert re.search(r"s CPU +[\d.]+ s wall +[\d,]+ MB peak +[\d.]+x the anchor's CPU$", out.stdout, re.M), out.stdout
    # and the sample-size build, its own figures after its heading
    small = out.stdout.split("mmrb build of 26 triplets (the sample's size)")[1]
    assert re.search(r"s CPU +[\d.]+ s wall +[\d,]+ MB peak$", small, re.M), out.stdout
