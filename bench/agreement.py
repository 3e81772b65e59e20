"""Benchmark: the full agreement report on 200,000 pairs x 5 annotators x 3 fields.

    python -m bench.agreement            # 200,000 pairs (3 million labels), 1,000 resamples
    python -m bench.agreement --quick    # 2,000 pairs, a smoke run

The store is built once (SQLite, cached under bench/results/) with synthetic labels: each
pair has a latent preference and correctness that each annotator reports with probability
0.8; the same labels are written once as a ``--labels`` CSV (item, annotator, field, value,
category; gold pairs as ``@gold`` rows).

Timed, each in its own process: ``mmrb agreement --db STORE`` and ``mmrb agreement --labels
CSV`` (wall time and peak memory of the whole command; best of ``--runs``), with the ratio of
the file path to the store path (target: at most 1.5 in time and memory) and a check that both
print the same report. Then, in this process: reading the store (one scan, each column as one
delimited string) and the report (alpha, percent agreement, AC1, Fleiss, Cohen matrix,
majority/gold agreement, per pair, per category, with 1,000 bootstrap resamples over pairs).
Anchors in the same run: fetching the same label columns row by row on the raw DB-API cursor
(the earlier read), the ``krippendorff`` package on the raw 5 x N matrix, and NLTK's
AnnotationTask alpha on a 10,000-pair subset.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from curate.agreement import LabelTable, agreement_report, from_store
from curate.agreement import stats as st
from curate.agreement.table import GOLD
from curate.model import MMRB_CATEGORIES, Annotator, Candidate, Item, Label, Pair
from curate.store import Store

ROOT = Path(__file__).resolve().parents[1]
ANNOTATORS = 5
PREFS = np.array(["first", "second", "tie"], dtype=object)
CORR = np.array(["correct", "incorrect"], dtype=object)
RATIO_TARGET = 1.5


def build_store(path: Path, n_pairs: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp.db")
    tmp.unlink(missing_ok=True)
    store = Store(str(tmp), images=path.parent / "bench-images")
    ts = "2025-01-01T00:00:00+00:00"
    with store.write() as c:
        for lo in range(0, n_pairs, 20_000):
            ids = range(lo, min(n_pairs, lo + 20_000))
            store.add_items(
                [Item(id=f"i{n:07d}", prompt="q", category=MMRB_CATEGORIES[n % 6], source="bench") for n in ids], conn=c
            )
            store.add_candidates(
                [Candidate(id=f"i{n:07d}/{m}", item_id=f"i{n:07d}", model=m, text=m) for n in ids for m in "ab"], conn=c
            )
            store.add_pairs(
                [
                    Pair(
                        id=f"p{n:07d}",
                        item_id=f"i{n:07d}",
                        first_id=f"i{n:07d}/a",
                        second_id=f"i{n:07d}/b",
                        origin="bench",
                        status="selected",
                        is_gold=n % 100 == 0,
                        known_preference="first" if n % 100 == 0 else None,
                    )
                    for n in ids
                ],
                conn=c,
            )
        for a in range(ANNOTATORS):
            store.add_annotator(Annotator(f"ann{a}"), conn=c)
        truth = rng.choice(3, size=n_pairs, p=[0.45, 0.45, 0.10])
        c1, c2 = rng.integers(0, 2, size=n_pairs), rng.integers(0, 2, size=n_pairs)

        def noisy(t, k):
            return np.where(rng.random(n_pairs) < 0.8, t, rng.integers(0, k, size=n_pairs))

        for a in range(ANNOTATORS):
            p, x1, x2 = PREFS[noisy(truth, 3)], CORR[noisy(c1, 2)], CORR[noisy(c2, 2)]
            for lo in range(0, n_pairs, 50_000):
                store.add_labels(
                    [
                        Label(
                            f"p{n:07d}",
                            f"ann{a}",
                            correctness_first=x1[n],
                            correctness_second=x2[n],
                            preference=p[n],
                            source="bench",
                            created_at=ts,
                            updated_at=ts,
                        )
                        for n in range(lo, min(n_pairs, lo + 50_000))
                    ],
                    conn=c,
                )
    store.close()
    tmp.rename(path)


def write_labels_csv(table: LabelTable, path: Path) -> None:
    """The store's labels (and gold values) as the long file ``mmrb agreement --labels`` reads."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    parts = []
    annotators = np.asarray(table.annotators, dtype=object)
    for name, fl in table.fields.items():
        values = np.asarray(fl.spec.values, dtype=object)
        parts.append(
            pa.table(
                {
                    "item": table.units[fl.unit],
                    "annotator": annotators[fl.annotator],
                    "field": np.full(len(fl.code), name, dtype=object),
                    "value": values[fl.code],
                    "category": table.category[fl.unit],
                }
            )
        )
        gold = table.gold.get(name, {})
        if gold:
            units = np.fromiter(gold, dtype=np.int64, count=len(gold))
            codes = np.fromiter(gold.values(), dtype=np.int64, count=len(gold))
            parts.append(
                pa.table(
                    {
                        "item": table.units[units],
                        "annotator": np.full(len(units), GOLD, dtype=object),
                        "field": np.full(len(units), name, dtype=object),
                        "value": values[codes],
                        "category": table.category[units],
                    }
                )
            )
    tmp = path.with_suffix(".tmp.csv")
    pcsv.write_csv(pa.concat_tables(parts), tmp)
    tmp.rename(path)


# The command in a child that reports its own peak (VmHWM counts from the exec; the rusage of a
# child also counts the parent's pages it was forked with, which inflated early figures).
_CHILD = """import atexit, runpy, sys
def peak():
    kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
    print(f"PEAK_KB={kb}", file=sys.stderr)
atexit.register(peak)
sys.argv = ["mmrb"] + sys.argv[1:]
runpy.run_module("curate.cli", run_name="__main__")
"""


def run_command(args: list[str]) -> tuple[float, float, str]:
    """``mmrb agreement ARGS`` in a child process: (wall seconds, peak MB of that child, stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, "agreement", *args], capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr
    peak_kb = int(proc.stderr.rsplit("PEAK_KB=", 1)[1].split()[0])
    return seconds, peak_kb / 1024, proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2,000 pairs: a smoke run")
    ap.add_argument("--pairs", type=int, default=None)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--nltk-pairs", type=int, default=None)
    ap.add_argument("--runs", type=int, default=None, help="runs of each command, best taken (default 3, quick 1)")
    ap.add_argument("--cache", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args(argv)
    n_pairs = args.pairs or (2_000 if args.quick else 200_000)
    nltk_pairs = min(args.nltk_pairs or (500 if args.quick else 10_000), n_pairs)
    runs = args.runs or (1 if args.quick else 3)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    db = cache / f"agreement-{n_pairs}.db"
    csv = cache / f"agreement-{n_pairs}.csv"
    images = cache / "bench-images"
    if not db.exists():
        t = time.perf_counter()
        build_store(db, n_pairs)
        print(f"built {db} in {time.perf_counter() - t:.1f} s (cached for the next run)")
    if not csv.exists():
        with Store(str(db), images=images) as store:
            write_labels_csv(from_store(store), csv)
        print(f"wrote {csv} ({csv.stat().st_size / 2**20:,.0f} MB, cached for the next run)")

    # -- the command on the store and on the same labels in a file, each in its own process
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall time grows with it)")
    common = ["--resamples", str(args.resamples)]
    measured = {}
    for name, where in (("store", ["--db", str(db), "--images", str(images)]), ("file", ["--labels", str(csv)])):
        got = [run_command(where + common) for _ in range(runs)]
        measured[name] = (min(g[0] for g in got), max(g[1] for g in got), got[0][2])
    (t_store, mb_store, out_store), (t_file, mb_file, out_file) = measured["store"], measured["file"]
    same = out_store.replace(str(db), "SOURCE") == out_file.replace(str(csv), "SOURCE")
    print(
        f"mmrb agreement, {n_pairs:,} pairs x {ANNOTATORS} annotators x 3 fields, {args.resamples} resamples "
        f"(best of {runs}):"
    )
    print(f"  --db (SQLite store):  {t_store:6.2f} s  {mb_store:7,.0f} MB peak")
    print(f"  --labels (CSV file):  {t_file:6.2f} s  {mb_file:7,.0f} MB peak")
    print(
        f"  file / store: time {t_file / t_store:.2f}, memory {mb_file / mb_store:.2f} "
        f"(target at most {RATIO_TARGET:g} each); same report from both: {'yes' if same else 'NO'}"
    )
    assert same, "the store and the file gave different reports"

    import krippendorff
    import statsmodels.stats.inter_rater  # noqa: F401  loaded before the clock starts: the report imports it lazily

    store = Store(str(db), images=images)
    t0, c0 = time.perf_counter(), time.process_time()
    table = from_store(store)
    t_read, c_read = time.perf_counter() - t0, time.process_time() - c0
    # anchor 0: the same label columns row by row on a plain DB-API cursor (one tuple and a
    # str per value), the read before the column fast path
    import sqlite3

    t0, c0 = time.perf_counter(), time.process_time()
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        rows = con.execute(
            "SELECT pair_id, annotator, preference, correctness_first, correctness_second, ratings "
            "FROM labels WHERE status = 'submitted'"
        ).fetchall()
    t_rows, c_rows = time.perf_counter() - t0, time.process_time() - c0
    assert len(rows) == len(table.units) * len(table.annotators)
    del rows
    store.close()
    t0, c0 = time.perf_counter(), time.process_time()
    report = agreement_report(table, per_category=True, pairs=True, resamples=args.resamples, seed=0)
    t_report, c_report = time.perf_counter() - t0, time.process_time() - c0
    print()
    print(
        f"in process: {len(table.units):,} pairs x {len(table.annotators)} annotators x {len(table.fields)} fields = "
        f"{table.n_labels:,} labels; {args.resamples} bootstrap resamples; {len(report.categories or {})} categories"
    )
    print(f"read the store (one scan into numpy):   {t_read:.2f} s wall, {c_read:.2f} s CPU")
    print(
        f"  anchor: the same columns row by row:  {t_rows:.2f} s wall, {c_rows:.2f} s CPU "
        f"(fetch alone, before any numpy: {c_rows / c_read:.1f}x our whole read)"
    )
    print(f"full agreement report:                  {t_report:.2f} s wall, {c_report:.2f} s CPU")
    print(
        f"total:                                  {t_read + t_report:.2f} s wall, {c_read + c_report:.2f} s CPU "
        "(target < 5 s)"
    )
    for name, f in report.fields.items():
        print(f"  {name:<20} alpha {f.alpha}  AC1 {f.ac1}")

    # anchor 1: the krippendorff package on the raw annotators x pairs matrix (point values only)

    t_kr, t_ours = 0.0, 0.0
    for name, fl in table.fields.items():
        raw = np.full((len(table.annotators), len(table.units)), np.nan)
        raw[fl.annotator, fl.unit] = fl.code
        t = time.perf_counter()
        ref = krippendorff.alpha(reliability_data=raw, level_of_measurement=fl.spec.level)
        t_kr += time.perf_counter() - t
        t = time.perf_counter()
        counts = st.value_counts(fl.unit, fl.code, len(table.units), len(fl.spec.values))
        st.bootstrap(fl.spec, counts, resamples=args.resamples)
        t_ours += time.perf_counter() - t
        ours = report.fields[name].alpha.value
        assert ours is not None and abs(ref - ours) < 1e-9, (name, ref, ours)
    print(
        f"krippendorff.alpha on the raw matrix, 3 fields (point values): {t_kr:.2f} s; "
        f"x{args.resamples} resamples would be ~{t_kr * args.resamples:.0f} s"
    )
    print(
        f"our vectorised bootstrap, 3 fields x {args.resamples} resamples: {t_ours:.2f} s; "
        f"ratio against krippendorff x{args.resamples}: {t_kr * args.resamples / t_ours:.0f}x faster"
    )
    print(f"full report vs one krippendorff point pass: {t_report / t_kr:.1f}x the time")

    # anchor 2: NLTK AnnotationTask alpha (pure Python) on a subset
    from nltk.metrics.agreement import AnnotationTask

    fl = table.fields["preference"]
    sel = fl.unit < nltk_pairs
    cols = zip(fl.annotator[sel], fl.unit[sel], fl.code[sel], strict=True)
    triples = [(f"ann{a}", str(u), str(c)) for a, u, c in cols]
    t = time.perf_counter()
    nltk_alpha = AnnotationTask(data=triples).alpha()
    t_nltk = time.perf_counter() - t
    sub = st.value_counts(fl.unit[sel], fl.code[sel], nltk_pairs, 3)
    t = time.perf_counter()
    ours = st.kripp_alpha(fl.spec, sub).value
    t_sub = time.perf_counter() - t
    print(
        f"NLTK AnnotationTask alpha on {nltk_pairs:,} pairs: {t_nltk:.2f} s (alpha {nltk_alpha:.4f}); ours on the "
        f"same subset {t_sub * 1000:.1f} ms (alpha {ours:.4f}): {t_nltk / t_sub:.0f}x faster; "
        f"NLTK extrapolated to {len(table.units):,} pairs ~{t_nltk * len(table.units) / nltk_pairs:.0f} s "
        f"({t_nltk * len(table.units) / nltk_pairs / t_report:.0f}x our full report)"
    )
    assert abs(nltk_alpha - ours) < 1e-6
    return 0


if __name__ == "__main__":
    sys.exit(main())
