"""Benchmark `mmrb sample`: throughput against the loopback server, then kill-and-resume.

    python -m bench.sample            # 2,000 items x 3 models, 200 ms latency, concurrency 32 each
    python -m bench.sample --quick    # 100 items: a smoke run

Anchor: the most a perfect client could do, 3 endpoints x 32 in flight / 0.2 s = 480
responses/s. Target: at least 85% of it. The sampler runs as a subprocess (`mmrb sample`)
against a fake OpenAI server in another subprocess, so the CPU
and peak memory figures are the sampler's alone.

Phase 2 starts a fresh store, SIGKILLs the sampler when half of the responses are stored, and
runs it again: "sent twice" counts requests for keys that were already stored at the kill
(target 0); "lost" counts keys missing at the end (target 0). Requests that were in flight
(or received but inside the 50 ms commit window) at the kill are sent again by design; they
are counted separately.
"""

from __future__ import annotations

import argparse
import io
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

SAMPLER = [sys.executable, "-m", "curate.cli", "sample"]  # the real `mmrb sample`


def make_store(db: str, images: str, n: int) -> None:
    from PIL import Image

    from curate.model import ImageRef, Item
    from curate.store import Store

    with Store(db, images=images) as store:
        stored, items = [], []
        for i in range(n):
            buf = io.BytesIO()
            Image.new("RGB", (64, 48), ((i * 7) % 256, (i * 13) % 256, (i * 29) % 256)).save(buf, "PNG")
            s = store.images.put(buf.getvalue())
            stored.append(s)
            items.append(
                Item(
                    id=f"item{i:05d}",
                    prompt=f"What is in picture {i}?",
                    category="vqa",
                    images=(ImageRef(f"p{i}.png", s.sha256, "ok", s.width, s.height),),
                )
            )
        with store.write() as conn:
            store.add_images(stored, conn=conn)
            store.add_items(items, conn=conn)


def start_server(latency: float, log: Path) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen(
        [sys.executable, str(ROOT / "tests/support/fake_openai.py"), "--latency", str(latency), "--log", str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None  # a pipe, asked for above
    return p, p.stdout.readline().strip()


def write_models(path: Path, url: str, concurrency: int) -> None:
    path.write_text(
        "".join(
            f'[[models]]\nname = "{m}"\nbase_url = "{url}"\nmodel = "{m}"\nconcurrency = {concurrency}\n'
            f"[models.params]\ntemperature = 0.7\nmax_tokens = 256\n"
            for m in ("model-a", "model-b", "model-c")
        )
    )


def logged_keys(log: Path) -> list[str]:
    if not log.exists():
        return []
    out = []
    for ln in log.read_text().splitlines():
        try:
            rec = json.loads(ln)
        except json.JSONDecodeError:
            continue  # a line being written
        if rec.get("path", "").endswith("/chat/completions"):
            out.append(rec["key"])
    return out


def bare_client_rate(url: str, n: int, concurrency: int) -> float:
    """Responses/s of a bare loop of aiohttp posts (no store, no images, no retries) against
    the same server at the same concurrency: what this machine allows right now, measured in
    the same run, to tell the sampler's own overhead from machine load."""
    import asyncio

    import aiohttp

    async def go() -> float:
        sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) for _ in range(3)]
        sems = [asyncio.Semaphore(concurrency) for _ in range(3)]

        async def one(k: int, i: int) -> None:
            body = json.dumps({"model": f"bare-{k}", "messages": [{"role": "user", "content": f"q{i}"}]}).encode()
            async with sems[k]:
                async with sessions[k].post(
                    url + "/chat/completions", data=body, headers={"content-type": "application/json"}
                ) as r:
                    json.loads(await r.read())

        t0 = time.perf_counter()
        await asyncio.gather(*(one(k, i) for i in range(n // 3) for k in range(3)))
        dt = time.perf_counter() - t0
        for s in sessions:
            await s.close()
        return (n // 3 * 3) / dt

    return asyncio.run(go())


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def count(db: str) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("select count(*) from candidates").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def stored_keys(db: str) -> set[str]:
    with sqlite3.connect(db) as con:
        return {
            f"{a}/{b}/{c}/{d}"
            for a, b, c, d in con.execute("select item_id, model, params_key, sample_index from candidates")
        }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--items", type=int, default=None)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=32)
    a = ap.parse_args()
    n_items = a.items or (100 if a.quick else 2000)
    total = n_items * 3
    limit = 3 * a.concurrency / a.latency

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        log = d / "requests.jsonl"
        server, url = start_server(a.latency, log)
        try:
            models = d / "models.toml"
            write_models(models, url, a.concurrency)

            # -- anchor: a bare HTTP loop, same server, same concurrency, same moment ----
            bare = bare_client_rate(url, min(total, 1500), a.concurrency)

            # -- phase 1: throughput --------------------------------------------------
            db1, img1 = str(d / "s1.db"), str(d / "img1")
            make_store(db1, img1, n_items)
            s0 = cpu_seconds(server.pid)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            out = subprocess.run(
                [*SAMPLER, "--db", db1, "--images", img1, "--models", str(models), "--no-progress"],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            server_cpu = cpu_seconds(server.pid) - s0
            if out.returncode != 0:
                print(out.stdout, out.stderr)
                return 1
            summary = out.stdout.splitlines()[0]
            run_s = float(summary.split(" in ")[1].split(" s")[0])
            got = count(db1)
            rate = got / run_s
            cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
            print(
                f"items x models          {n_items} x 3 = {total} requests, latency {a.latency * 1000:.0f} ms, "
                f"concurrency {a.concurrency} per endpoint"
            )
            print(f"responses stored        {got} / {total}")
            print(f"sampling time           {run_s:.2f} s (process wall {wall:.2f} s incl. start-up)")
            print(
                f"throughput              {rate:.0f} responses/s; limit {limit:.0f}/s; ratio {rate / limit:.1%} "
                f"(target >= 85%)"
            )
            print(
                f"incl. start-up          {got / wall:.0f} responses/s over the process wall time "
                f"({got / wall / limit:.1%} of the limit): Python start-up and imports"
            )
            print(f"sampler CPU             {cpu:.2f} s = {cpu / wall:.0%} of one core over the process wall time")
            print(f"sampler peak memory     {r1.ru_maxrss / 1024:.0f} MiB (max RSS of a child process)")
            print(f"fake server CPU         {server_cpu:.2f} s over the same time")
            print(
                f"bare aiohttp loop        {bare:.0f} responses/s here and now ({bare / limit:.1%} of the limit); "
                f"sampler / bare = {rate / bare:.1%}"
            )
            print(f"machine load            {os.getloadavg()[0]:.1f} (1-minute load average on {os.cpu_count()} CPUs)")

            # -- phase 2: kill at half way, resume -----------------------------------------
            db2, img2 = str(d / "s2.db"), str(d / "img2")
            make_store(db2, img2, n_items)
            log_before = len(logged_keys(log))
            args2 = [*SAMPLER, "--db", db2, "--images", img2, "--models", str(models), "--no-progress"]
            proc = subprocess.Popen(args2, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            while count(db2) < total // 2 and proc.poll() is None:
                time.sleep(0.005)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            at_kill = stored_keys(db2)
            time.sleep(a.latency * 2)  # let the server log what was in flight
            sent_first = logged_keys(log)[log_before:]
            out = subprocess.run(args2, cwd=ROOT, capture_output=True, text=True)
            if out.returncode != 0:
                print(out.stdout, out.stderr)
                return 1
            sent_second = logged_keys(log)[log_before + len(sent_first) :]
            final = stored_keys(db2)
            twice_stored = sum(1 for k in sent_second if k in at_kill)
            resent_unstored = len(set(sent_second) & set(sent_first))
            lost = total - len(final)
            print(f"killed at               {len(at_kill)} / {total} stored ({len(sent_first)} requests sent)")
            print(f"resumed run sent        {len(sent_second)} requests")
            print(f"sent twice (stored key) {twice_stored} (target 0)")
            print(
                f"re-sent, not stored     {resent_unstored} (in flight or inside the 50 ms commit window at the kill)"
            )
            print(f"responses lost          {lost} (target 0)")
            ok = rate / limit >= 0.85 and twice_stored == 0 and lost == 0
            print("RESULT                  " + ("meets the targets" if ok else "BELOW TARGET"))
            return 0
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
