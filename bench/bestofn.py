"""Benchmark of `mmrb bestofn`: judgments per second against the loopback server's limit, with
the judge runner of `mmrb evaluate` on the same pairs as the anchor in the same run, and the
judgments a knockout and a round robin ask at N = 4, 8, 16.

500 items of 4 candidates against the loopback OpenAI-compatible server answering after 100 ms
at concurrency 32: the limit is 32 / 0.1 s = 320 judgments/s (goal: at least 90% of it, as
`mmrb evaluate`'s). The anchor judges every pair of candidates in both orders through
`curate.judging.runner.run_judge` (what `mmrb evaluate` calls); then a round robin (the same
judgments, one pass) and a knockout (one pass per round) through `mmrb_eval.bestofn_run`.

The server runs in this process, as the judge does: on a loaded machine both share its cores,
so the ratio to the runner in the same run is the figure to read, the share of the limit a
lower bound.

    python -m bench.bestofn            # the size above
    python -m bench.bestofn --quick    # a small smoke run
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--quick", action="store_true", help="60 items at 20 ms")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.items, args.latency = 60, 0.02

    from curate.judging.config import load_judge
    from curate.judging.records import JudgeTask
    from curate.judging.runner import run_judge
    from curate.store import Store
    from mmrb_eval import bestofn as bon
    from mmrb_eval.bestofn_run import match_id, pool, run_bestofn
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
        anchor = run_judge(store, tasks, judge("anchor"), run_id="anchor")
        rr = run_bestofn(store, items, judge("round-robin"), method="round-robin", resamples=0)
        ko = run_bestofn(store, items, judge("knockout"), method="knockout", resamples=0)
        for name, rate in (("evaluate_runner", anchor.per_second), ("round_robin", rr.summary.per_second)):
            figures[name] = {"judgments_per_second": round(rate, 1), "of_limit": round(rate / limit, 4)}
        figures["knockout"] = {
            "judgments_per_second": round(ko.summary.per_second, 1),
            "of_limit": round(ko.summary.per_second / limit, 4),
            "passes": ko.passes,
        }
        print(f"{args.items} items of N=4, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}")
        print(
            f"judgments/s vs limit {limit:.0f}/s: evaluate's runner {anchor.per_second:.1f} "
            f"({anchor.per_second / limit:.1%}), bestofn round robin {rr.summary.per_second:.1f} "
            f"({rr.summary.per_second / limit:.1%}, {rr.summary.per_second / anchor.per_second:.2f}x the runner), "
            f"knockout {ko.summary.per_second:.1f} ({ko.summary.per_second / limit:.1%} in {ko.passes} passes)"
        )
        o = rr.report.overall
        print(
            f"accuracy (judge right 75% of the time): round robin {o.accuracy.value:.3f}, "
            f"knockout {ko.report.overall.accuracy.value:.3f}, random {o.baselines['random'].value:.3f}, "
            f"oracle {o.baselines['oracle'].value:.3f}"
        )

        # what each method asks at N = 4, 8, 16: counted at the server on a few items each
        counts = {}
        for n in (4, 8, 16):
            small = Store(str(work / f"n{n}.db"), images=work / "images")
            fill(small, 3, n)
            got = {}
            for method in ("knockout", "round-robin"):
                srv.reset()
                run_bestofn(small, pool(small), judge(f"{method}-{n}"), method=method, resamples=0)
                got[method] = srv.count() // 3
                assert got[method] == bon.judgments_per_item(method, n), (method, n, got[method])
            counts[n] = got
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
