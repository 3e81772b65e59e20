"""bench/annotate.py still runs (a tiny size, without the Label Studio anchor)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.services import unavailable
from tests.support.streamlit_server import CHROMIUM

pytestmark = [pytest.mark.slow, pytest.mark.browser]
ROOT = Path(__file__).resolve().parents[1]


def test_bench_annotate_quick():
    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed")
    out = subprocess.run(
        [sys.executable, "-m", "bench.annotate", "--quick", "--pairs", "300", "--labels", "5", "--no-anchor"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "submit key -> next pair shown over 5 labels: median" in out.stdout
    assert "reference  bare page of this shape" in out.stdout and "reference  minimal page" in out.stdout
    assert "images     the same with two 1024x1024 response images per pair, over 5 labels: median" in out.stdout
    assert "against text only: median" in out.stdout
    for scheme in ("mmrb2-pairwise", "aspects"):  # each scheme's form, measured by default
        assert f"scheme     {scheme} over 5 labels: median" in out.stdout
