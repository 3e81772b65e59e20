"""The test suite and the benchmarks themselves: one import name per module, no path tricks, and
the markers that let ``./run test --quick`` leave the browser and Label Studio tests out."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_tests_and_benches_import_each_module_under_one_name_without_touching_sys_path_or_playwright():
    # benches reach the test helpers as tests.support (python -m bench.NAME from the root); a
    # sys.path insert of tests/ would let `support.x` and `tests.support.x` be two modules.
    # Playwright is hidden: a browser test imports it where it drives Chromium, never at module
    # level, so ./run test --quick collects on a machine without it.
    code = """
import importlib, json, pathlib, sys

class NoPlaywright:  # as if it were not installed: --quick must collect without it
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "playwright":
            raise ImportError("playwright is hidden")

sys.meta_path.insert(0, NoPlaywright())
root = pathlib.Path.cwd().resolve()
before = list(sys.path)
names = []
for p in sorted(root.glob("tests/**/*.py")) + sorted(root.glob("bench/*.py")):
    parts = p.relative_to(root).with_suffix("").parts
    names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
for n in names:
    importlib.import_module(n)
by_file = {}
for name, m in list(sys.modules.items()):
    f = getattr(m, "__file__", None)
    rel = pathlib.Path(f).resolve().relative_to(root) if f and pathlib.Path(f).resolve().is_relative_to(root) else None
    if rel and rel.parts[0] in ("tests", "bench", "curate", "annotate", "mmrb_eval"):
        by_file.setdefault(str(rel), []).append(name)
print(json.dumps({"imported": len(names), "path_changed": sys.path != before,
                  "twice": {f: sorted(n) for f, n in by_file.items() if len(n) > 1}}))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["imported"] > 40
    assert got["twice"] == {} and not got["path_changed"], got


# what drives Chromium or a Label Studio server (directly, or through a benchmark that does)
_NEEDS = {
    "browser": re.compile(r"playwright|chromium|CHROMIUM|bench\.annotate"),
    "labelstudio": re.compile(r"label_studio_fixture|start_label_studio|labelstudio_server|bench\.labelstudio"),
}


def test_every_browser_and_label_studio_test_carries_its_marker():
    # --quick keeps what is marked neither browser nor labelstudio (nor slow); none of it may come from a
    # module that starts Chromium or a Label Studio server (such a module marks all its tests):
    # collected with --quick, those modules keep nothing
    tests = sorted((ROOT / "tests").glob("test_*.py"))
    needs = {
        f"tests/{p.name}": [m for m, uses in _NEEDS.items() if uses.search(p.read_text(encoding="utf-8"))]
        for p in tests
        if p.name != "test_suite.py"
    }
    system = sorted(f for f, m in needs.items() if m)
    assert len(system) > 8 and len(tests) - len(system) > 30, system  # the check sees both kinds
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--quick", *system],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    kept = sorted({line.split("::")[0] for line in out.stdout.splitlines() if "::" in line})
    assert kept == [], {f: needs[f] for f in kept}
    assert out.returncode == 5 and " deselected" in out.stdout, out.stdout[-3000:] + out.stderr[-3000:]
