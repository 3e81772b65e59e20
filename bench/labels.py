"""Raw-label export and import: `mmrb export labels` and `mmrb labels import` of N labels, in one run.

    python -m bench.labels                 # 120,000 labels (40,000 pairs, 3 annotators each)
    python -m bench.labels --quick         # 12,000

The store is SQLite: one item per pair, two short candidates, three submitted labels per
pair (the `mmrb` scheme: correctness, preference, a rationale, seconds). It is made through
the store's bulk inserts and cached under bench/results/labels-N/ with a twin store holding
the same pairs and no labels (the import's target, copied afresh for each import).

Measured in this process, CPU (process time) and wall: the export in each format (real
names), and the import of each file into a fresh copy of the twin. The anchors, in the same
run: pyarrow writing the exported rows to Parquet (the export's), and pyarrow reading that
Parquet file into Python rows (the import's); the ratios are ours over the anchor's CPU.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from curate.model import Annotator, Candidate, Item, Label, Pair, Preference
from curate.store import Store

ROOT = Path(__file__).resolve().parents[1]
ANNOTATORS = ("ann-a", "ann-b", "ann-c")


def _fill(store: Store, n: int, labels: bool) -> None:
    for a in ANNOTATORS:
        store.add_annotator(Annotator(a))
    step = 20_000
    for lo in range(0, n, step):
        items, cands, pairs, labs = [], [], [], []
        for k in range(lo, min(n, lo + step)):
            items.append(Item(f"i{k}", f"Question {k}?", "vqa"))
            cands += [Candidate(f"i{k}:m1", f"i{k}", "m1", "a"), Candidate(f"i{k}:m2", f"i{k}", "m2", "b")]
            pairs.append(Pair(f"p{k}", f"i{k}", f"i{k}:m1", f"i{k}:m2", origin="bench"))
            pref: Preference = ("first", "second")[k % 2]
            stamp = f"2026-01-01T00:00:{k % 60:02d}+00:00"
            labs += [
                Label(f"p{k}", a, "correct", "incorrect", pref, rationale=f"because {k}", seconds=9.5, created_at=stamp)
                for a in ANNOTATORS
            ]
        with store.write() as conn:
            store.add_items(items, conn=conn)
            store.add_candidates(cands, conn=conn)
            store.add_pairs(pairs, conn=conn)
            if labels:
                store.add_labels(labs, conn=conn)


def cached_stores(n_pairs: int) -> Path:
    folder = ROOT / "bench" / "results" / f"labels-{n_pairs}"
    if not (folder / "done").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        for name, labels in (("labelled", True), ("empty", False)):
            (folder / name).mkdir(parents=True)
            s = Store(str(folder / name / "store.db"), images=folder / name / "images")
            try:
                _fill(s, n_pairs, labels)
            finally:
                s.close()
        (folder / "done").write_text("made by bench/labels.py\n", encoding="utf-8")
    return folder


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    from curate.rawlabels import export_labels, import_labels

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="12,000 labels")
    ap.add_argument("--pairs", type=int, help="pairs (three labels each; default 40,000)")
    args = ap.parse_args(argv)
    n_pairs = args.pairs or (4_000 if args.quick else 40_000)
    folder = cached_stores(n_pairs)
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory(prefix="mmrb-bench-labels-") as tmp_name:
        tmp = Path(tmp_name)
        src = Store(str(folder / "labelled" / "store.db"), images=folder / "labelled" / "images")
        try:
            exports = {}
            for fmt in ("jsonl", "parquet", "csv"):
                out = tmp / f"l.{fmt}"
                n, cpu, wall = timed(partial(export_labels, src, out, real_names=True))
                exports[fmt] = (n, cpu, wall)
        finally:
            src.close()
        rows = [json.loads(line) for line in (tmp / "l.jsonl").read_text(encoding="utf-8").splitlines()]
        for r in rows:
            r["ratings"] = json.dumps(r["ratings"])
        _, a_out, _ = timed(lambda: pq.write_table(pa.Table.from_pylist(rows), tmp / "anchor.parquet"))
        _, a_in, _ = timed(lambda: pq.read_table(tmp / "anchor.parquet").to_pylist())
        imports = {}
        for fmt in ("jsonl", "parquet", "csv"):
            dst = tmp / f"to-{fmt}"
            shutil.copytree(folder / "empty", dst)
            s = Store(str(dst / "store.db"), images=dst / "images")
            try:
                rep, cpu, wall = timed(partial(import_labels, s, tmp / f"l.{fmt}"))
            finally:
                s.close()
            imports[fmt] = (rep.labels, cpu, wall)
    n = exports["jsonl"][0]
    print(f"raw labels: {n:,} labels on {n_pairs:,} pairs, SQLite")
    print(f"  anchor, pyarrow writes the rows to Parquet: {a_out:.2f} s CPU; reads them back as rows: {a_in:.2f} s CPU")
    for fmt, (k, cpu, wall) in exports.items():
        print(f"  export {fmt:<8} {k:>8,} labels {cpu:6.2f} s CPU {wall:6.2f} s wall  {cpu / a_out:5.1f}x the anchor")
    for fmt, (k, cpu, wall) in imports.items():
        print(f"  import {fmt:<8} {k:>8,} labels {cpu:6.2f} s CPU {wall:6.2f} s wall  {cpu / a_in:5.1f}x the anchor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
