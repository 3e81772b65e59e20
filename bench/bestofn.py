"""Benchmark of `mmrb bestofn`: judgments per second against the loopback server's limit, with
the judge runner of `mmrb evaluate` on the same pairs as the anchor in the same run, and the
judgments a knockout and a round robin ask at N = 4, 8, 16.

500 items of 4 candidates against the loopback OpenAI-compatible server answering after 100 ms
at concurrency 32: the limit is 32 / 0.1 s = 320 judgments/s (goal: at least 90% of it, as
`mmrb evaluate`'s). Each round judges every pair of candidates in both orders through
`curate.judging.runner.run_judge` (what `mmrb evaluate` calls: the anchor), then a round robin
(the same judgments, one pass) and a knockout (one pass per round) through
`mmrb_eval.bestofn_run`, each in a run of its own. A rate is the judgments sent over the wall
of the whole call (the knockout's time between its passes included); the figures are the
medians over the rounds, which alternate the three so that a change of load hits all of them.

The server runs in this process, as the judge does: on a loaded machine both share its cores,
so the ratio to the runner in the same run is the figure to read, the share of the limit a
lower bound (the load average and the process's CPU per judgment are printed beside it).

    python -m bench.bestofn            # the size above, 3 rounds
    python -m bench.bestofn --quick    # a small smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
MARK = re.compile(r"\[c:([^\]]+)\]")


def judge_answer(req) -> str:
    """Right 75% of the time on a pair whose candidates differ (seeded on what it is shown)."""
    from curate.seeding import unit

    a, b = MARK.findall(req.prompt_text)
    good_a, good_b = a.endswith("good"), b.endswith("good")
    u = unit("bench judge", a, b)
    better_a = good_a if good_a != good_b else u < 0.5
    right = u < 0.75 if good_a != good_b else True
    return f"Overall Judgment: Answer {1 if better_a == right else 2} is better."


def fill(store, items: int, n: int) -> None:
    """Items with a reference and n candidates, one in three correct (its id ends in 'good')."""
    from curate.model import Candidate, Item

    rows, cands = [], []
    for k in range(items):
        iid, ref = f"i{k:05d}", str(100 + k)
        rows.append(Item(iid, f"What is {ref} plus zero?", ("general", "reasoning")[k % 2], reference=ref))
        for j in range(n):
            good = (k + j) % 3 == 0
            cid = f"{iid}-c{j}-{'good' if good else 'bad'}"
            cands.append(Candidate(cid, iid, f"m{j}", f"[c:{cid}] The answer is {ref if good else int(ref) + 1}."))
    with store.write() as conn:
        store.add_items(rows, conn=conn)
        store.add_candidates(cands, conn=conn)


def timed(call: Callable[[], T]) -> tuple[T, float, float]:
    """(what ``call`` returns, its wall seconds, the process's CPU seconds)."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = call()
    return out, time.perf_counter() - t0, time.process_time() - c0


@dataclass
class Timing:
    """One method's calls, one per round."""

    sent: list[int] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    outside: list[float] = field(default_factory=list)  # wall outside sending (a knockout's time between passes)

    def add(self, sent: int, wall: float, cpu: float, sending: float) -> None:
        self.sent.append(sent)
        self.wall.append(wall)
        self.cpu.append(cpu)
        self.outside.append(wall - sending)

    @property
    def rates(self) -> list[float]:
        return [n / w for n, w in zip(self.sent, self.wall, strict=True)]

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)

    def figures(self, limit: float, anchor: float) -> dict[str, object]:
        return {
            "judgments_per_second": round(self.rate, 1),
            "of_limit": round(self.rate / limit, 4),
            "of_runner": round(self.rate / anchor, 4),
            "rounds_of_limit": [round(r / limit, 4) for r in self.rates],
            "cpu_ms_per_judgment": round(1000 * sum(self.cpu) / sum(self.sent), 3),
            "seconds_outside_requests": round(statistics.median(self.outside), 3),
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3, help="runner, round robin, knockout: each once a round")
    ap.add_argument("--quick", action="store_true", help="60 items at 20 ms, 1 round")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.items, args.latency, args.rounds = 60, 0.02, 1

    from curate.judging.config import load_judge
    from curate.judging.records import JudgeTask
    from curate.judging.runner import run_judge
    from curate.store import Store
    from mmrb_eval import bestofn as bon
    from mmrb_eval.bestofn import Method
    from mmrb_eval.bestofn_run import BestOfNRun, match_id, pool, run_bestofn
    from tests.support.fake_openai import FakeOpenAI

    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-bestofn-"))
    limit = args.concurrency / args.latency
    figures: dict[str, object] = {"limit": limit}
    with FakeOpenAI(judge_answer, latency=args.latency) as srv:

        def judge(name: str):
            f = work / f"{name}.toml"
            f.write_text(
                f'name = "{name}"\nbase_url = "{srv.url}"\nmodel = "bench"\ntemplate = "vlrewardbench"\n'
                f"concurrency = {args.concurrency}\ntimeout = 30\nmax_retries = 2\n"
            )
            return load_judge(str(f), order="both", samples=1)

        store = Store(str(work / "bench.db"), images=work / "images")
        fill(store, args.items, 4)
        items = pool(store)
        tasks = []
        for it in items.items:
            ids = sorted(it.ids)
            for i, a in enumerate(ids):
                for b in ids[i + 1 :]:
                    c1, c2 = items.candidates[a], items.candidates[b]
                    tasks.append(JudgeTask(match_id(it.id, a, b), items.prompts[it.id].prompt, c1.text, c2.text))
        import aiohttp  # noqa: F401  (the client's first request imports it: 0.2 s that would land on round 1's runner)

        runner, rr_t, ko_t = Timing(), Timing(), Timing()
        last: dict[Method, BestOfNRun] = {}  # method -> its last round's run
        load = []
        for k in range(args.rounds):  # each in a run of its own, alternating: a change of load hits all three
            load.append(os.getloadavg()[0])
            anchor, wall, cpu = timed(partial(run_judge, store, tasks, judge(f"anchor{k}"), run_id=f"anchor{k}"))
            runner.add(anchor.sent, wall, cpu, anchor.seconds)
            methods: tuple[tuple[Method, Timing], ...] = (("round-robin", rr_t), ("knockout", ko_t))
            for method, timing in methods:
                j = judge(f"{method}{k}")
                run, wall, cpu = timed(
                    partial(run_bestofn, store, items, j, method=method, run_id=f"{method}{k}", resamples=0)
                )
                timing.add(run.summary.sent, wall, cpu, run.summary.seconds)
                last[method] = run
        rr, ko = last["round-robin"], last["knockout"]
        for name, t in (("evaluate_runner", runner), ("round_robin", rr_t)):
            figures[name] = t.figures(limit, runner.rate)
        figures["knockout"] = {**ko_t.figures(limit, runner.rate), "passes": ko.passes}
        figures["load_average"] = round(statistics.median(load), 2)
        print(
            f"{args.items} items of N=4, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, "
            f"{args.rounds} rounds (medians; load average {statistics.median(load):.1f} on {os.cpu_count()} cores)"
        )
        anchor_rate, rr_rate, ko_rate = runner.rate, rr_t.rate, ko_t.rate
        print(
            f"judgments/s vs limit {limit:.0f}/s: evaluate's runner {anchor_rate:.1f} ({anchor_rate / limit:.1%}), "
            f"bestofn round robin {rr_rate:.1f} ({rr_rate / limit:.1%}, {rr_rate / anchor_rate:.2f}x the runner), "
            f"knockout {ko_rate:.1f} ({ko_rate / limit:.1%}, {ko_rate / anchor_rate:.2f}x the runner, "
            f"in {ko.passes} passes)"
        )
        for name, t in (("evaluate's runner", runner), ("round robin", rr_t), ("knockout", ko_t)):
            print(
                f"  {name}: each round {', '.join(f'{x / limit:.1%}' for x in t.rates)} of the limit; "
                f"CPU {1000 * sum(t.cpu) / sum(t.sent):.2f} ms per judgment (client and server); "
                f"{statistics.median(t.outside):.2f} s outside requests"
            )
        o = rr.report.overall
        print(
            f"accuracy (judge right 75% of the time): round robin {o.accuracy.value:.3f}, "
            f"knockout {ko.report.overall.accuracy.value:.3f}, random {o.baselines['random'].value:.3f}, "
            f"oracle {o.baselines['oracle'].value:.3f}"
        )

        # what each method asks at N = 4, 8, 16: counted at the server on a few items each
        counts = {}
        methods_compared: tuple[Method, ...] = ("knockout", "round-robin")
        for n in (4, 8, 16):
            small = Store(str(work / f"n{n}.db"), images=work / "images")
            fill(small, 3, n)
            asked = {}
            for method in methods_compared:
                srv.reset()
                run_bestofn(small, pool(small), judge(f"{method}-{n}"), method=method, resamples=0)
                asked[method] = srv.count() // 3
                assert asked[method] == bon.judgments_per_item(method, n), (method, n, asked[method])
            counts[n] = asked
            small.close()
        store.close()
    print(
        "judgments per item, knockout vs round robin: "
        + ", ".join(f"N={n}: {c['knockout']} vs {c['round-robin']}" for n, c in counts.items())
    )
    figures["judgments_per_item"] = counts
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
