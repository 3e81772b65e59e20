"""Store benchmark: ingest speed and memory, and the two per-label operations of the
annotation UI, on SQLite and PostgreSQL, at two sizes.

    python -m bench.store            # 50,000 and 500,000 pairs, 20 annotators, SQLite and PostgreSQL
    python -m bench.store --quick    # 2,000 pairs, 4 annotators, 200 calls: a smoke run
    python -m bench.store --sizes 10000,50000,200000 --no-queue   # ingest figures only
    python -m bench.store --no-queue --compare-tree ../wt-before  # and another checkout's ingest, turn about
    python -m bench.store --no-queue --sizes 50000 --repeat 3 --compare-tree ../a --compare-tree ../b

The pairs are the 1,250 real VL-RewardBench pairs of ../shared/data (text copy) repeated
with new ids. Ingest: ``mmrb ingest pairs`` runs in a child process (read, check, write all
or nothing); rows/s is pairs over the command's wall time, start-up included, and peak
memory is the child's own maximum resident set (``ru_maxrss``, read by the child as it
exits: the high-water mark of its resident set) plus that of any process it started (an
older tree read a large file in a forked one; the sum is an upper bound, since they share
the pages loaded before the fork). CPU s is its user and system time, with that of the
processes it waited for and, on PostgreSQL, of the server processes serving the run's
database (read from /proc as it runs): on a loaded machine, steadier than the wall time.
Anchor, same file, same run, in a process of its own: a plain ``sqlite3`` ``executemany``
of the rows the import writes (items, their image references, candidates, pairs), reading
and parsing the file included, in one transaction on a fresh store. ``--compare-tree DIR``
(repeatable) runs another checkout's ``mmrb ingest pairs`` (its own .venv) on the same file
into a store of its own, turn about with this tree's, and prints the ratio of this tree's
rows/s to the other's (best over best, and the median of the turns' ratios) and of their
CPU s; ``--repeat N`` runs each N times and keeps the best.

Queue: each pair is assigned to 3 of the annotators and half of every queue is already
labelled, so "next pair" must skip done work. Then, 1,000 times, an annotator asks for their
next pair and submits a label for it; both calls are timed separately. Targets: median < 5
ms, p95 < 20 ms, and flat with size (the ratio of the larger size to the smaller). Anchor:
Label Studio 1.23 needs a median 164 ms for its next-task call and 104 ms to submit an
annotation at 50,000 tasks (figures quoted from the issue; Label Studio is not run here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from curate.lookalike import skeleton
from curate.model import Annotator, Assignment, Label, Side
from curate.store import Store

ROOT = Path(__file__).resolve().parents[1]

VLRB = ROOT.parent / "shared" / "data" / "vlrewardbench" / "pairs.jsonl"
TARGET_MEDIAN_MS, TARGET_P95_MS = 5.0, 20.0
ANCHOR_NEXT_MS, ANCHOR_SUBMIT_MS = 164.0, 104.0  # Label Studio 1.23, 50,000 tasks (from the issue)
PER_PAIR = 3
# `mmrb ingest pairs` as the console script runs it, reporting its own peak memory on exit: the
# high-water mark of its resident set (VmHWM, Linux), else ru_maxrss (both in KiB)
CHILD = (
    "import resource, sys\nfrom curate.cli import main\nrc = main(sys.argv[1:])\n"
    "kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "try:\n    kb = int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])\n"
    "except (OSError, StopIteration):\n    pass\n"
    # plus the peak of a process it started (an older tree's forked reader, compared with
    # --compare-tree): the sum is an upper bound (the two share the pages loaded before the fork)
    "kb += resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "cpu = sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, "
    "(resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))\n"
    "print('MAXRSS_KB', kb, 'CPU_S', cpu, file=sys.stderr)\nsys.exit(rc)"
)
# the anchor in a process of its own, as the import runs in one
ANCHOR = (
    "import sys\nfrom pathlib import Path\nfrom bench.store import executemany_reference\n"
    "print('ANCHOR_S', executemany_reference(Path(sys.argv[1]), Path(sys.argv[2])))"
)


def source_rows(quick: bool) -> list[dict] | None:
    if VLRB.exists():
        return [json.loads(line) for line in VLRB.read_text().splitlines() if line.strip()]
    if not quick:
        return None
    rng = random.Random(0)  # synthetic stand-ins of real length (~700 characters)
    words = "the image shows a red car parked near a bakery while two people walk by on the wet street".split()
    return [
        {
            "id": f"synthetic-{n}",
            "prompt": "Describe this image in detail.",
            "chosen": " ".join(rng.choice(words) for _ in range(120)),
            "rejected": " ".join(rng.choice(words) for _ in range(120)),
            "image": f"img/{n}.jpg",
        }
        for n in range(1250)
    ]


def write_input(rows: list[dict], n_pairs: int, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for k in range(n_pairs):
            r = rows[k % len(rows)]
            f.write(json.dumps(dict(r, id=f"{r['id']}#rep{k // len(rows)}")) + "\n")


def pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else xs[0]


def ingest(url: str, images: Path, data: Path, n_pairs: int, tree: Path = ROOT) -> dict:
    """``mmrb ingest pairs`` of the project in ``tree`` (this one, or another checkout with
    its own .venv) in a child process: rows/s over its wall time, its CPU seconds and peak MB."""
    python = sys.executable if tree == ROOT else str(tree / ".venv" / "bin" / "python")
    cmd = [
        python,
        "-c",
        CHILD,
        "ingest",
        "pairs",
        str(data),
        "--format",
        "vlrewardbench-text",
        "--db",
        url,
        "--images",
        str(images),
    ]
    server: dict[int, float] = {}  # PostgreSQL: CPU s of the server processes of this run's database
    database = f" {url.rsplit('/', 1)[1]} " if "://" in url else None
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=tree, stdout=stdout, stderr=stderr, text=True)
        while proc.poll() is None:
            if database:
                server.update(_server_cpu(database))
            time.sleep(0.1)
        seconds = time.perf_counter() - t0
        stdout.seek(0)
        stderr.seek(0)
        out = subprocess.CompletedProcess(cmd, proc.returncode, stdout.read(), stderr.read())
    if out.returncode != 0 or f"{n_pairs} pairs" not in out.stdout:
        raise SystemExit(f"ingest failed ({out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
    kb = int(out.stderr.split("MAXRSS_KB", 1)[1].split()[0])
    cpu = float(out.stderr.split("CPU_S", 1)[1].split()[0]) + sum(server.values())
    return dict(ingest_s=seconds, rows_per_s=n_pairs / seconds, cpu_s=cpu, peak_mb=kb / 1024)


def _server_cpu(database: str) -> dict[int, float]:
    """pid -> CPU s of each PostgreSQL process serving ``database`` (its title names it),
    read from /proc (nothing elsewhere): the server's share of an import's work."""
    out: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if database not in (proc / "cmdline").read_bytes().decode(errors="replace"):
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(proc.name)] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return out


def anchor_seconds(data: Path, db: Path) -> float:
    """``executemany_reference`` in a child process."""
    out = subprocess.run([sys.executable, "-c", ANCHOR, str(data), str(db)], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0 or "ANCHOR_S" not in out.stdout:
        raise SystemExit(f"anchor failed ({out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
    return float(out.stdout.split("ANCHOR_S", 1)[1].split()[0])


def executemany_reference(data: Path, db: Path) -> float:
    """Seconds for a plain sqlite3 executemany of the rows the import writes."""
    Store(str(db), images=db.parent / "ref-images").close()  # the same tables and indexes
    t0 = time.perf_counter()
    ts = "2025-01-01T00:00:00+00:00"
    items, refs, cands, pairs = [], [], [], []
    with open(data, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            iid = r["id"] + "~" + hashlib.sha256(line.encode()).hexdigest()[:10]  # ids repeat in the source
            items.append((iid, r["prompt"], "general", None, "bench", "{}", ts, skeleton(iid)))
            refs.append((iid, 0, r["image"], None, "missing", None))
            cands += [
                (f"{iid}:a:0", iid, "a", r["chosen"], "{}", "k", 0, ts),
                (f"{iid}:b:0", iid, "b", r["rejected"], "{}", "k", 0, ts),
            ]
            pairs.append(
                (iid, iid, f"{iid}:a:0", f"{iid}:b:0", "import:bench", "first", "candidate", 0, "{}", ts, skeleton(iid))
            )
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("BEGIN IMMEDIATE")
    con.executemany(
        "INSERT INTO items (id, prompt, category, reference, source, metadata, created_at, id_skeleton) "
        "VALUES (?,?,?,?,?,?,?,?)",
        items,
    )
    con.executemany(
        "INSERT INTO item_images (item_id, position, source, sha256, status, error) VALUES (?,?,?,?,?,?)", refs
    )
    con.executemany(
        "INSERT INTO candidates (id, item_id, model, text, params, params_key, sample_index, created_at) "
        "VALUES (?,?,?,?,?,?,?,?)",
        cands,
    )
    con.executemany(
        "INSERT INTO pairs (id, item_id, first_id, second_id, origin, known_preference, status, is_gold, "
        "metadata, created_at, id_skeleton) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        pairs,
    )
    con.execute("COMMIT")
    con.close()
    return time.perf_counter() - t0


def queue(url: str, images: Path, n_ann: int, calls: int) -> dict:
    """Assign, label half of every queue, then time next pair + submit."""
    store = Store(url, images=images)
    try:
        pair_ids = [p.id for p in store.pairs()]
        annotators = [f"annotator-{a:02d}" for a in range(n_ann)]
        t0 = time.perf_counter()
        with store.write() as conn:
            for a in annotators:
                store.add_annotator(Annotator(a), conn=conn)
            seq = {a: 0 for a in annotators}
            planned: list[tuple[str, str, Side, int]] = []
            for i, pid in enumerate(pair_ids):
                for j in range(PER_PAIR):
                    a = annotators[(i + j * 7) % n_ann]
                    h = int(hashlib.sha256(f"{pid}|{a}|0".encode()).hexdigest()[:8], 16)
                    planned.append((pid, a, "first" if h % 2 else "second", seq[a]))
                    seq[a] += 1
            rows = [
                Assignment(pid, a, left, s, state="done" if s < seq[a] // 2 else "open") for pid, a, left, s in planned
            ]
            store.add_assignments(rows, conn=conn)
            store.add_labels(
                [Label(r.pair_id, r.annotator, preference="first") for r in rows if r.state == "done"], conn=conn
            )
            store.set_guidelines("# Guidelines", "bench", conn=conn)
        setup_s = time.perf_counter() - t0
        nxt, head, sub = [], [], []
        for k in range(calls):
            a = annotators[k % n_ann]
            t = time.perf_counter()
            asg = store.next_assignment(a)
            nxt.append((time.perf_counter() - t) * 1000)
            assert asg is not None, f"{a} ran out of open assignments"  # each has more than the calls ask
            t = time.perf_counter()  # the label page's read: the same pair with the guidelines' versions
            got = store.queue_head(a)
            head.append((time.perf_counter() - t) * 1000)
            assert got.assignment == asg and got.guidelines_version == 1
            label = Label(asg.pair_id, a, "correct", "incorrect", "first", rationale="bench", seconds=12.5)
            t = time.perf_counter()
            store.save_label(label)
            sub.append((time.perf_counter() - t) * 1000)
        return dict(
            assignments=len(rows),
            setup_s=setup_s,
            next_median=statistics.median(nxt),
            next_p95=pct(nxt, 95),
            head_median=statistics.median(head),
            head_p95=pct(head, 95),
            submit_median=statistics.median(sub),
            submit_p95=pct(sub, 95),
        )
    finally:
        store.close()


def verdict(median: float, p95: float) -> str:
    return "meets target" if median < TARGET_MEDIAN_MS and p95 < TARGET_P95_MS else "MISSES target"


def backend_url(backend: str, tmp: Path, n: int) -> tuple[str, Callable[[], None] | None] | None:
    if backend == "sqlite":
        return str(tmp / f"bench-{n}.db"), None
    try:
        from tests.support.services import ensure_postgres, new_pg_database

        return new_pg_database(ensure_postgres())
    except BaseException as e:  # pytest.skip raises a BaseException subclass
        if isinstance(e, KeyboardInterrupt):
            raise
        print(f"  postgres: skipped ({e})")
        return None


def _fresh(backend: str, tmp: Path, n: int, k: int, who: str = "this") -> tuple[str, Callable[[], None] | None]:
    """An empty store for one more ingest run."""
    if backend == "sqlite":
        db = tmp / f"bench-{who}-{n}-{k}.db"

        def remove() -> None:
            for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
                path.unlink(missing_ok=True)

        return str(db), remove
    got = backend_url(backend, tmp, n)
    assert got is not None  # the first run of this backend had one
    return got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2,000 pairs, 4 annotators, 200 calls")
    ap.add_argument("--backends", default="sqlite,postgres", help="comma-separated: sqlite, postgres")
    ap.add_argument("--sizes", default=None, help="comma-separated pair counts (default 50000,500000)")
    ap.add_argument("--pairs", type=int, default=None, help="one size (same as --sizes N)")
    ap.add_argument("--calls", type=int, default=None)
    ap.add_argument("--no-queue", action="store_true", help="ingest figures only")
    ap.add_argument(
        "--compare-tree",
        type=Path,
        action="append",
        default=[],
        help="another checkout of the project, with its own .venv (e.g. the tree before a change): its `mmrb "
        "ingest pairs` runs on the same files, into a store of its own, turn about with this tree's (repeatable)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="ingest runs per tree, size and backend (the best counts)")
    args = ap.parse_args(argv)
    others = [t.resolve() for t in args.compare_tree]
    for other in others:
        if not (other / ".venv" / "bin" / "python").exists():
            ap.error(f"--compare-tree: no {other}/.venv/bin/python")
    if args.pairs:
        sizes = [args.pairs]
    elif args.sizes:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    else:
        sizes = [2_000] if args.quick else [50_000, 500_000]
    n_ann = 4 if args.quick else 20
    calls = args.calls or (200 if args.quick else 1_000)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    for b in backends:
        if b not in ("sqlite", "postgres"):
            ap.error(f"unknown backend {b!r}")

    rows = source_rows(args.quick)
    if rows is None:
        print(f"bench/store.py: skipped: {VLRB} not present (run with --quick to use synthetic pairs)")
        return 0
    origin = "real VL-RewardBench pairs" if VLRB.exists() else "synthetic pairs"
    print(
        f"store benchmark: {', '.join(f'{n:,}' for n in sizes)} pairs ({origin}, repeated with new ids), "
        f"{n_ann} annotators, {PER_PAIR} annotators per pair, {calls:,} next+submit calls"
    )

    from tests.support.services import begin_noting, end_noting

    noted = begin_noting()  # a PostgreSQL cluster this benchmark starts, it stops
    try:
        return _run(args, sizes, backends, others, rows, n_ann, calls)
    finally:
        for service in end_noting(noted):
            print(f"stopped {service} (started by this benchmark)")


def _run(
    args: argparse.Namespace,
    sizes: list[int],
    backends: list[str],
    others: list[Path],
    rows: list[dict],
    n_ann: int,
    calls: int,
) -> int:
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mmrb-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for n in sizes:
            data = tmp / f"pairs-{n}.jsonl"
            write_input(rows, n, data)
            ref_s = anchor_seconds(data, tmp / f"reference-{n}.db")
            for backend in backends:
                got = backend_url(backend, tmp, n)
                if got is None:
                    continue
                url, drop = got
                try:
                    mine: list[dict] = []
                    theirs: list[list[dict]] = [[] for _ in others]
                    for k in range(args.repeat):  # turn about, so that the load of the machine falls on all
                        store_url, store_drop = (url, None) if k == 0 else _fresh(backend, tmp, n, k)
                        try:
                            mine.append(ingest(store_url, tmp / f"images-{backend}-{n}-{k}", data, n))
                        finally:
                            if store_drop:
                                store_drop()
                        for j, other in enumerate(others):
                            other_url, other_drop = _fresh(backend, tmp, n, k, f"other{j}")
                            try:
                                images = tmp / f"images-other{j}-{backend}-{n}-{k}"
                                theirs[j].append(ingest(other_url, images, data, n, other))
                            finally:
                                if other_drop:
                                    other_drop()
                    r: dict[str, Any] = dict(
                        backend=backend, pairs=n, reference_rows_per_s=n / ref_s, runs=mine, other_runs=theirs
                    )
                    r.update(max(mine, key=lambda x: x["rows_per_s"]))
                    r["peak_mb"] = max(x["peak_mb"] for x in mine)
                    if not args.no_queue:
                        r.update(queue(url, tmp / f"images-{backend}-{n}-0", n_ann, calls))
                    results.append(r)
                    print(f"  {n:,} pairs on {backend}: done", flush=True)
                finally:
                    if drop:
                        drop()
            data.unlink()

    print()
    print(
        "ingest: `mmrb ingest pairs` in a child process (rows/s over its wall time, start-up included; peak = its "
        "max RSS); anchor: plain sqlite3 executemany of the same rows in this run"
    )
    if args.repeat > 1:
        print(f"(best of {args.repeat} runs per tree; peak MB the largest of them)")
    head = f"{'backend':<10}{'pairs':>9}{'rows/s':>9}{'CPU s':>8}{'peak MB':>9}{'anchor rows/s':>15}{'of anchor':>11}"
    print(head)
    for r in results:
        print(
            f"{r['backend']:<10}{r['pairs']:>9,}{r['rows_per_s']:>9,.0f}{r['cpu_s']:>8,.1f}{r['peak_mb']:>9,.0f}"
            f"{r['reference_rows_per_s']:>15,.0f}{r['rows_per_s'] / r['reference_rows_per_s']:>10.0%}"
        )
    if others:
        print(
            "compared with (their best rows/s, least CPU s and largest peak MB; this tree's speed over theirs: "
            "best rows/s over best, the median of the turns' rows/s ratios, and of their CPU s over this tree's):"
        )
        for j, other in enumerate(others):
            print(f"  [{j + 1}] {other}")
        cols = f"{'rows/s':>9}{'CPU s':>8}{'peak MB':>9}{'best':>8}{'turns':>8}{'CPU':>8}"
        print(f"{'tree':<6}{'backend':<10}{'pairs':>9}{cols}")
        for j in range(len(others)):
            for r in results:
                other_runs = r["other_runs"][j]
                best = max(other_runs, key=lambda x: x["rows_per_s"])
                pairs = list(zip(r["runs"], other_runs, strict=True))
                turns = statistics.median(m["rows_per_s"] / t["rows_per_s"] for m, t in pairs)
                cpu = statistics.median(t["cpu_s"] / m["cpu_s"] for m, t in pairs)
                print(
                    f"{f'[{j + 1}]':<6}{r['backend']:<10}{r['pairs']:>9,}{best['rows_per_s']:>9,.0f}"
                    f"{min(x['cpu_s'] for x in other_runs):>8,.1f}{max(x['peak_mb'] for x in other_runs):>9,.0f}"
                    f"{r['rows_per_s'] / best['rows_per_s']:>7.2f}x{turns:>7.2f}x{cpu:>7.2f}x"
                )
    if len(results) > 1 or args.repeat > 1:
        print("every run (rows/s, CPU s, peak MB):")

        def runs(xs: list[dict]) -> str:
            return ", ".join(f"{x['rows_per_s']:,.0f}/{x['cpu_s']:,.1f}/{x['peak_mb']:,.0f}" for x in xs)

        for r in results:
            print(f"  {r['backend']} {r['pairs']:,}: this tree {runs(r['runs'])}")
            for j, xs in enumerate(r["other_runs"]):
                print(f"  {r['backend']} {r['pairs']:,}: [{j + 1}] {runs(xs)}")
    if args.no_queue:
        return 0
    print()
    print(f"{'backend':<10}{'pairs':>9}{'next med':>10}{'next p95':>10}{'submit med':>12}{'submit p95':>12}")
    for r in results:
        print(
            f"{r['backend']:<10}{r['pairs']:>9,}{r['next_median']:>8.2f}ms{r['next_p95']:>8.2f}ms"
            f"{r['submit_median']:>10.2f}ms{r['submit_p95']:>10.2f}ms"
        )
    print()
    print(
        f"targets: median < {TARGET_MEDIAN_MS:g} ms, p95 < {TARGET_P95_MS:g} ms, flat with size. "
        f"anchor: Label Studio 1.23 next-task {ANCHOR_NEXT_MS:g} ms, submit {ANCHOR_SUBMIT_MS:g} ms "
        "(medians at 50,000 tasks, quoted from the issue, not measured here)"
    )
    for r in results:
        print(
            f"  {r['backend']}: next {verdict(r['next_median'], r['next_p95'])}, "
            f"{ANCHOR_NEXT_MS / r['next_median']:.0f}x faster than the anchor; "
            f"submit {verdict(r['submit_median'], r['submit_p95'])}, "
            f"{ANCHOR_SUBMIT_MS / r['submit_median']:.0f}x faster than the anchor; "
            f"{r['pairs']:,} pairs, assignments+labels set-up {r['setup_s']:.1f} s"
        )
        print(
            f"  {r['backend']}: queue head (the next pair with the guidelines' versions, the label page's read) "
            f"median {r['head_median']:.2f} ms, p95 {r['head_p95']:.2f} ms: "
            f"x{r['head_median'] / r['next_median']:.2f} of next alone, same store, same run"
        )
    for backend in backends:
        mine = [r for r in results if r["backend"] == backend]
        if len(mine) > 1:
            lo, hi = mine[0], mine[-1]
            print(
                f"  {backend}: {hi['pairs']:,} against {lo['pairs']:,} pairs: next median x"
                f"{hi['next_median'] / lo['next_median']:.2f}, submit median x"
                f"{hi['submit_median'] / lo['submit_median']:.2f}; ingest peak memory x"
                f"{hi['peak_mb'] / lo['peak_mb']:.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
