"""bench/refused.py runs end to end (so the benchmark cannot rot): both commands fail, as errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_refused_runs_both_commands_to_their_error():
    out = subprocess.run([sys.executable, "-m", "bench.refused"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    for command in ("select", "evaluate"):
        assert re.search(rf"^this  {command} +[\d.]+ +[\d.]+ +1 +[\d.]+ +[\d.]+x$", out.stdout, re.M), out.stdout
