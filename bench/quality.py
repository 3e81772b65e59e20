"""Benchmark: Dawid-Skene aggregation of 200,000 pairs x 5 annotators x 3 fields, against the
majority rule in the same run.

    python -m bench.quality            # 200,000 pairs (3 million labels)
    python -m bench.quality --quick    # 2,000 pairs, a smoke run

Synthetic labels: each pair has a latent preference (first / second / tie) and a latent
correctness of each response (correct / incorrect); annotator k reports each with accuracy
0.90, 0.85, 0.80, 0.75, 0.60 (a wrong answer is one of the other values at random). 1% of
the pairs have gold (their latent values), as control tasks would give. The labels are
written once to a Parquet file; then each method runs ``curate.quality.aggregate.aggregate``
over the three fields in its own child process, which reports wall time of the aggregation
(reading the file excluded), its CPU time (less sensitive to a shared machine's load) and its
peak memory (the process's VmHWM, reset after loading: the labels held plus the aggregation's
own; and its growth over the loaded labels). The two methods' children alternate ``--repeat``
times (default 3) and each figure is the median of its runs, so neither method gets the cold
first run alone. Goals (issue 28): Dawid-Skene under 1.5x the majority's time, the peak
under 1 GB at 3 million labels. Printed: both methods' figures, the ratio Dawid-Skene /
majority, and each method's accuracy against the latent values.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from curate.wording import plural

ROOT = Path(__file__).resolve().parents[1]
ACCURACY = (0.90, 0.85, 0.80, 0.75, 0.60)
FIELDS = {
    "preference": ("first", "second", "tie"),
    "correctness_first": ("correct", "incorrect"),
    "correctness_second": ("correct", "incorrect"),
}
GOLD_SHARE = 0.01


def make_labels(n_pairs: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(labels: pair, annotator, field, value; truth: pair, field, value, gold)."""
    rng = np.random.default_rng(seed)
    pairs = np.array([f"p{n:07d}" for n in range(n_pairs)], dtype=object)
    is_gold = rng.random(n_pairs) < GOLD_SHARE
    frames, truths = [], []
    for name, values in FIELDS.items():
        vals = np.array(values, dtype=object)
        truth = rng.integers(0, len(values), n_pairs)
        truths.append(pd.DataFrame({"pair": pairs, "field": name, "value": vals[truth], "gold": is_gold}))
        for k, acc in enumerate(ACCURACY):
            right = rng.random(n_pairs) < acc
            shift = rng.integers(1, len(values), n_pairs)  # a wrong answer: another value
            code = np.where(right, truth, (truth + shift) % len(values))
            frames.append(pd.DataFrame({"pair": pairs, "annotator": f"a{k + 1}", "field": name, "value": vals[code]}))
    return pd.concat(frames, ignore_index=True), pd.concat(truths, ignore_index=True)


def _vm(key: str) -> int:
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key))


def child(method: str, folder: Path) -> None:
    """Aggregate the stored labels with ``method``; print one JSON line of figures."""
    from curate.quality.aggregate import aggregate

    # read as pandas' own string columns (Arrow-backed): 3 million labels as Python objects
    # held 1.2 GB before any aggregation
    labels = pd.read_parquet(folder / "labels.parquet")
    truth = pd.read_parquet(folder / "truth.parquet")
    gold: dict[str, dict[str, str]] = {}
    for name, part in truth[truth["gold"]].groupby("field"):
        gold[str(name)] = dict(zip(part["pair"], part["value"], strict=True))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current size: the peak below is the aggregation's
    loaded_kb = _vm("VmRSS")
    t0, c0 = time.perf_counter(), time.process_time()
    result = aggregate(labels, method, gold)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_kb = _vm("VmHWM")
    right = n = 0
    for name, part in truth.groupby("field"):
        final = result.fields[str(name)].final
        got = part["pair"].map(final)
        right += int((got == part["value"]).sum())
        n += len(part)
    differ = {k: fa.differ for k, fa in result.fields.items()}
    rel = {k: fa.reliability for k, fa in result.fields.items()}
    print(
        json.dumps(
            dict(
                seconds=seconds,
                cpu=cpu,
                peak_mb=peak_kb / 1024,
                growth_mb=(peak_kb - loaded_kb) / 1024,
                accuracy=right / n,
                differ=differ,
                reliability=rel,
            )
        )
    )


def run_child(method: str, folder: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.quality", "--child", method, str(folder)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    out: dict = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def _median(runs: list[dict]) -> dict:
    """The last run's figures with each timing and memory figure the median over ``runs``."""
    out = dict(runs[-1])
    for key in ("seconds", "cpu", "peak_mb", "growth_mb"):
        out[key] = float(np.median([r[key] for r in runs]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2,000 pairs: a smoke run")
    ap.add_argument("--pairs", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each method, alternating (default 3): medians")
    ap.add_argument("--child", nargs=2, metavar=("METHOD", "FOLDER"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    n_pairs = args.pairs or (2_000 if args.quick else 200_000)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        labels, truth = make_labels(n_pairs)
        labels.to_parquet(folder / "labels.parquet")
        truth.to_parquet(folder / "truth.parquet")
        print(
            f"{n_pairs:,} pairs x {len(ACCURACY)} annotators x {len(FIELDS)} fields = {len(labels):,} labels "
            f"(made in {time.perf_counter() - t0:.1f} s); accuracies {', '.join(map(str, ACCURACY))}; "
            f"{GOLD_SHARE:.0%} of pairs with gold"
        )
        runs: dict[str, list[dict]] = {"majority": [], "dawid-skene": []}
        for _ in range(max(1, args.repeat)):
            for method, got in runs.items():
                got.append(run_child(method, folder))
        maj, ds = (_median(runs["majority"]), _median(runs["dawid-skene"]))
    print(f"  medians of {plural(len(runs['majority']), 'run')} of each method, alternating")
    for name, r in (("majority", maj), ("dawid-skene", ds)):
        print(
            f"  {name:<12} {r['seconds']:8.2f} s wall, {r['cpu']:6.2f} s CPU   peak {r['peak_mb']:7,.0f} MB "
            f"(+{r['growth_mb']:,.0f} MB over the loaded labels)   accuracy vs latent {r['accuracy']:.4f}"
        )
    print(
        f"  ratio dawid-skene / majority: wall {ds['seconds'] / maj['seconds']:.1f}x, "
        f"CPU {ds['cpu'] / maj['cpu']:.1f}x, peak {ds['peak_mb'] / maj['peak_mb']:.2f}x, "
        f"growth {ds['growth_mb'] / max(maj['growth_mb'], 1):.1f}x"
    )
    print("  final values Dawid-Skene changes against the majority: " + json.dumps(ds["differ"]))
    rel = ds["reliability"]["preference"]
    print("  Dawid-Skene reliability on preference: " + ", ".join(f"{a} {v:.3f}" for a, v in rel.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
