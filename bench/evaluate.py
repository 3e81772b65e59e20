"""Benchmark of `mmrb evaluate`: throughput against a slow judge, then crash and resume.

5,000 pairs judged in both orders (10,000 judgments) against the loopback OpenAI-compatible
server answering after 200 ms, at concurrency 64. The limit is 64 / 0.2 s = 320
judgments/s; the target is at least 85% of it. Then the same run is SIGKILLed half way and
resumed: judgments sent twice (a stored judgment asked for again; target 0) and the final
metrics against an uninterrupted run (target: identical).

    python -m bench.evaluate            # the size above
    python -m bench.evaluate --quick    # a small smoke run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def judge_answer(req) -> str:
    """A deterministic, imperfect judge: right 75% of the time, 'A' when unsure, no verdict 5%."""
    text = req.prompt_text
    h = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    if h % 20 == 0:
        return "I cannot tell."
    a = text.split("[The Start of Assistant A's Answer]\n", 1)[1]
    good_is_a = a.startswith("GOOD")
    right = h % 4 != 0
    return "Reasoning.\n[[A]]" if good_is_a == right else "Reasoning.\n[[B]]"


def write_inputs(work: Path, n: int, url: str, concurrency: int) -> tuple[Path, Path]:
    ds = work / "pairs.jsonl"
    cats = ["general", "hallucination", "reasoning"]
    with ds.open("w") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "id": f"pair-{i:05d}",
                        "prompt": f"Question {i}: what is in the picture?",
                        "chosen": f"GOOD answer {i}: a cat on a red sofa, next to a lamp.",
                        "rejected": f"BAD answer {i}: a dog under a blue table.",
                        "category": cats[i % 3],
                    }
                )
                + "\n"
            )
    judge = work / "judge.toml"
    judge.write_text(
        f'name = "bench-judge"\nbase_url = "{url}"\nmodel = "bench"\ntemplate = "mmrb"\n'
        f"concurrency = {concurrency}\ntimeout = 30\nmax_retries = 2\n[params]\ntemperature = 0\n"
    )
    return ds, judge


def child_main(argv: list[str]) -> int:
    """Runs `mmrb evaluate` in this process (the same module the CLI registers) and
    reports its peak memory."""
    from mmrb_eval.commands import evaluate as cmd

    p = argparse.ArgumentParser()
    cmd.add_arguments(p)
    rc = cmd.run(p.parse_args(argv))
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"PEAK_RSS_KB={ru.ru_maxrss}", file=sys.stderr, flush=True)
    print(f"CPU_SECONDS={ru.ru_utime + ru.ru_stime}", file=sys.stderr, flush=True)
    return rc


def evaluate_cmd(ds: Path, judge: Path, db: Path) -> list[str]:
    return [
        sys.executable,
        __file__,
        "--child",
        "--dataset",
        str(ds),
        "--judge",
        str(judge),
        "--order",
        "both",
        "--db",
        str(db),
        "--json",
        "--quiet",
        "--bootstrap",
        "200",
    ]


def parse_child(out: str, err: str) -> tuple[dict, float, float]:
    report = json.loads(out)
    got = dict(x.split("=", 1) for x in err.splitlines() if x.startswith(("PEAK_RSS_KB=", "CPU_SECONDS=")))
    return report, float(got["PEAK_RSS_KB"]) / 1024, float(got["CPU_SECONDS"])


def stored_count(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("select count(*) from judgments").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def stored_keys(db: Path) -> set[str]:
    con = sqlite3.connect(str(db))
    try:
        rows = con.execute('select run_id, pair_id, "order", sample_index from judgments').fetchall()
    finally:
        con.close()
    return {f"{r}|{p}|{o}|{i}" for r, p, o, i in rows}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--quick", action="store_true", help="300 pairs, 50 ms")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    if args.quick:
        args.pairs, args.latency = 300, 0.05

    from tests.support.fake_openai import FakeOpenAI

    work = Path(args.workdir or tempfile.mkdtemp(prefix="mmrb-bench-eval-"))
    work.mkdir(parents=True, exist_ok=True)
    total = 2 * args.pairs
    limit = args.concurrency / args.latency
    with FakeOpenAI(judge_answer, latency=args.latency) as srv:
        ds, judge = write_inputs(work, args.pairs, srv.url, args.concurrency)

        # 1. uninterrupted run
        db1 = work / "full.db"
        t0 = time.perf_counter()
        p = subprocess.run(evaluate_cmd(ds, judge, db1), capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t0
        if p.returncode:
            print(p.stderr, file=sys.stderr)
            return 1
        full, peak1, cpu1 = parse_child(p.stdout, p.stderr)
        load = os.getloadavg()[0]
        info = full.pop("run_info")
        rate = info["judgments_per_second"]
        requests_full = srv.count()
        srv.reset()

        # 2. killed half way, then resumed
        db2 = work / "crash.db"
        child = subprocess.Popen(
            evaluate_cmd(ds, judge, db2), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
        )
        while stored_count(db2) < total // 2 and child.poll() is None:
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        at_kill = stored_keys(db2)
        sent_before = set(srv.key_counts())
        srv.reset()
        p = subprocess.run(evaluate_cmd(ds, judge, db2), capture_output=True, text=True, cwd=ROOT)
        if p.returncode:
            print(p.stderr, file=sys.stderr)
            return 1
        resumed, peak2, _ = parse_child(p.stdout, p.stderr)
        rinfo = resumed.pop("run_info")
        sent_after = srv.key_counts()
        sent_twice = len(at_kill & set(sent_after))
        in_flight_resent = len((sent_before - at_kill) & set(sent_after))
        final_keys = stored_keys(db2)

    identical = full == resumed
    print(
        f"pairs {args.pairs}, judgments {total} (both orders), latency {args.latency * 1000:.0f} ms, "
        f"concurrency {args.concurrency}"
    )
    print(
        f"throughput: {rate:.1f} judgments/s vs limit {limit:.0f}/s = {100 * rate / limit:.1f}% (target >= 85%); "
        f"wall incl. start-up and scoring {wall:.1f} s; requests {requests_full}"
    )
    print(
        f"CPU of the evaluate process: {1000 * cpu1 / total:.2f} ms per judgment (start-up and scoring included), "
        f"so one core sustains about {total / cpu1:.0f}/s; "
        f"load average during the run {load:.1f} on {os.cpu_count()} cores"
    )
    print(f"peak memory (RSS of the evaluate process): {peak1:.0f} MB full run, {peak2:.0f} MB resumed run")
    print(
        f"crash: SIGKILL with {len(at_kill)} judgments stored; resume sent {rinfo['sent']} "
        f"(already stored {rinfo['already_stored']}); stored judgments sent twice: {sent_twice} (target 0); "
        f"in flight at the kill and re-sent: {in_flight_resent}; final stored {len(final_keys)}/{total}"
    )
    print(
        f"final metrics identical to the uninterrupted run: {identical} "
        f"(overall {full['overall']['correct_n']} = {full['overall']['accuracy']}, "
        f"resumed {resumed['overall']['correct_n']})"
    )
    ok = identical and sent_twice == 0 and len(final_keys) == total
    print(
        json.dumps(
            {
                "judgments_per_second": rate,
                "limit": limit,
                "ratio": round(rate / limit, 4),
                "peak_rss_mb": round(max(peak1, peak2), 1),
                "cpu_ms_per_judgment": round(1000 * cpu1 / total, 3),
                "load_average": round(load, 2),
                "stored_at_kill": len(at_kill),
                "sent_twice": sent_twice,
                "in_flight_resent": in_flight_resent,
                "identical": identical,
                "ok": ok,
            }
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
