"""Build benchmark: `mmrb build` of N triplets against the pyarrow anchor, in one run.

    python -m bench.build                          # 40,000 triplets, this tree
    python -m bench.build --quick                  # 2,000
    python -m bench.build --tree /work/main --tree . --repeat 2   # trees alternately
    python -m bench.build --small 0                # without the sample-size build

The store is SQLite: one item per pair with one of 50 small PNG images (shared, as real
prompts share images rarely but the copy cost is per distinct file), two candidates of about
700 characters, and three submitted labels per pair that agree on chosen = first or second
(seeded), so every pair becomes a triplet under data/sample/rules.toml (resamples 200). It is
made once through the store's bulk inserts and cached under bench/results/build-N/ (a store
made by this file's code; delete the folder to make it again).

Each build is the command `mmrb build` in a subprocess of its own, PYTHONPATH = the tree:
CPU (user + system), wall and peak memory (VmHWM) of that process, imports included. The
anchor, in this process: the same triplets' rows (read from the first build's triplets.jsonl)
written to one Parquet file by pyarrow with each row's image bytes embedded, CPU and wall.
The ratio is the build's CPU over the anchor's (the issue's goal: within 5x at 40,000).

Each round also builds a store of the walkthrough's size (``--small``, 26 triplets) with
data/sample/rules.toml as it is (1,000 resamples): what a newcomer waits for, nearly all of
it imports and the card's plots (the issue's goal: under 2 s).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from curate.images import ImageStore
from curate.model import Annotator, Candidate, ImageRef, Item, Label, Pair, Preference
from curate.store import Store

ROOT = Path(__file__).resolve().parents[1]

WORDS = "the image shows a red car parked near a bakery while two people walk by on the wet street".split()
ANNOTATORS = ("ann-a", "ann-b", "ann-c")
CATEGORIES = ("knowledge", "reasoning", "vqa", "safety", "open_generation/preference_task")


def _png(n: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (n * 5 % 256, n * 11 % 256, n * 17 % 256)).save(buf, "PNG")
    return buf.getvalue()


def make_store(path: Path, n: int) -> Store:
    store = Store(str(path / "store.db"), images=path / "images")
    images: ImageStore = store.images
    stored = [images.put(_png(k)) for k in range(50)]
    store.add_images(stored)
    rng = random.Random(n)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(120))

    for a in ANNOTATORS:
        store.add_annotator(Annotator(a))
    step = 20_000
    for lo in range(0, n, step):
        ids = range(lo, min(n, lo + step))
        items, cands, pairs, labels = [], [], [], []
        for k in ids:
            im = stored[k % len(stored)]
            items.append(
                Item(
                    f"i{k}",
                    f"Question {k}: what does the image show?",
                    CATEGORIES[k % len(CATEGORIES)],
                    images=(ImageRef(f"img{k % 50}.png", im.sha256, "ok", im.width, im.height),),
                )
            )
            cands += [Candidate(f"i{k}:m1:0", f"i{k}", "m1", text()), Candidate(f"i{k}:m2:0", f"i{k}", "m2", text())]
            pairs.append(Pair(f"p{k}", f"i{k}", f"i{k}:m1:0", f"i{k}:m2:0", origin="bench", task="preference"))
            pref: Preference = rng.choice(("first", "second"))
            labels += [
                Label(f"p{k}", a, "correct", "correct", pref, rationale="bench", seconds=10.0) for a in ANNOTATORS
            ]
        with store.write() as conn:
            store.add_items(items, conn=conn)
            store.add_candidates(cands, conn=conn)
            store.add_pairs(pairs, conn=conn)
            store.add_labels(labels, conn=conn)
    return store


def cached_store(n: int) -> Path:
    """The folder holding store.db and images/ for n triplets, made once."""
    folder = ROOT / "bench" / "results" / f"build-{n}"
    if not (folder / "done").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        make_store(folder, n).close()
        (folder / "done").write_text("made by bench/build.py\n", encoding="utf-8")
    return folder


# `mmrb build` that writes its own peak memory (VmHWM) to $MMRB_BENCH_PEAK as it exits: a
# child's ru_maxrss counts the memory of the process it was started from (this one, holding
# the anchor's rows: 390 MB "peaks" of a 26-triplet build) as its own
_CHILD = """
import atexit, os, sys

def peak():
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    with open(os.environ["MMRB_BENCH_PEAK"], "w") as out:
        out.write(str(kb))

atexit.register(peak)
from curate.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_build(tree: Path, store: Path, rules: Path, out: Path) -> dict[str, float]:
    """`mmrb build` with ``tree`` first on the path: CPU, wall and peak memory of its process."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-c", _CHILD, "build", "--db", str(store / "store.db"), "--images"]
    cmd += [str(store / "images"), "--rules", str(rules), "--out", str(out)]
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as log, tempfile.NamedTemporaryFile() as peak:
        env = {**os.environ, "PYTHONPATH": str(tree), "MMRB_BENCH_PEAK": peak.name}
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=tree, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage: CPU of that process alone
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"mmrb build in {tree} exited {proc.returncode}:\n{log.read()}")
        peak_kb = int(Path(peak.name).read_text(encoding="utf-8"))
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "peak_mb": peak_kb / 1024}


def anchor(out: Path) -> dict:
    """The same rows written to Parquet by pyarrow, each row's image bytes embedded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with (out / "triplets.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    t0, c0 = time.perf_counter(), time.process_time()
    images = [[(out / rel).read_bytes() for rel in r["images"]] for r in rows]
    table = pa.table(
        {
            "id": [r["id"] for r in rows],
            "prompt": [r["prompt"] for r in rows],
            "images": images,
            "chosen": [r["chosen"] for r in rows],
            "rejected": [r["rejected"] for r in rows],
            "category": [r["category"] for r in rows],
        }
    )
    with tempfile.TemporaryDirectory(prefix="mmrb-bench-anchor-") as tmp:
        pq.write_table(table, Path(tmp) / "anchor.parquet")
    return {"cpu": time.process_time() - c0, "wall": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2,000 triplets")
    ap.add_argument("--triplets", type=int, default=None, help="triplets (default 40,000; 2,000 with --quick)")
    ap.add_argument("--tree", action="append", type=Path, help="a source tree to build with (repeat: alternately)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds over the trees")
    ap.add_argument("--small", type=int, default=26, help="triplets of the sample-size build (0: none)")
    args = ap.parse_args(argv)
    n = args.triplets or (2_000 if args.quick else 40_000)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    store = cached_store(n)
    small = cached_store(args.small) if args.small else None
    results: dict[Path, list[dict]] = {t: [] for t in trees}
    smalls: dict[Path, list[dict]] = {t: [] for t in trees}
    anchors = []
    with tempfile.TemporaryDirectory(prefix="mmrb-bench-build-") as tmp:
        # each tree's own sample rules (an older tree may not know a newer rules file's keys)
        sample_rules = {t: t / "data" / "sample" / "rules.toml" for t in trees}
        rules = {t: Path(tmp) / f"rules-{k}.toml" for k, t in enumerate(trees)}
        for t in trees:
            text = sample_rules[t].read_text(encoding="utf-8")
            rules[t].write_text(text.replace("resamples = 1000", "resamples = 200"), encoding="utf-8")
        for _ in range(args.repeat):
            for t in trees:
                out = Path(tmp) / "out"
                results[t].append(run_build(t, store, rules[t], out))
                anchors.append(anchor(out))
                if small is not None:
                    smalls[t].append(run_build(t, small, sample_rules[t], Path(tmp) / "small"))
    a_cpu = min(a["cpu"] for a in anchors)
    print(f"mmrb build of {n:,} triplets, SQLite, 3 labels per pair, every pair kept")
    print(f"  pyarrow anchor (Parquet, images embedded): {a_cpu:.2f} s CPU (best of {len(anchors)})")
    for t, rs in results.items():
        for r in rs:
            print(
                f"  {str(t):<24} {r['cpu']:7.2f} s CPU {r['wall']:7.2f} s wall {r['peak_mb']:7,.0f} MB peak"
                f"  {r['cpu'] / a_cpu:6.1f}x the anchor's CPU"
            )
    if small is not None:
        print(f"mmrb build of {args.small:,} triplets (the sample's size), data/sample/rules.toml as it is")
        for t, rs in smalls.items():
            for r in rs:
                print(f"  {str(t):<24} {r['cpu']:7.2f} s CPU {r['wall']:7.2f} s wall {r['peak_mb']:7,.0f} MB peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
