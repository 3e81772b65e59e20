"""mmrb bestofn: a judge picks one of N candidates per item (resumable); Best-of-N accuracy beside baselines."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # --help imports none of the stage
    from ..bestofn import Method

HELP = "Best-of-N: a judge picks one of each item's N candidates (resumable); accuracy beside baselines"
DESCRIPTION = (
    "On the store's items with at least 2 candidates whose correctness is known (--correctness: decided against "
    "the item's reference as mmrb pair does, or the expert labels of the pairs each candidate appears in: an "
    "adjudication, else the annotators' majority), a judge picks one candidate per item: a reward model by its top "
    "score (--method reward), a VLM judge by a seeded knockout (N-1 matches) or round robin (N(N-1)/2 matches), each "
    "match judged in both orders. The judgments it costs are printed before it starts; --max-judgments caps them. "
    "Best-of-N accuracy is the share of items whose pick is correct, with bootstrap intervals over items, beside "
    "the random pick (expected), the first candidate, the majority answer and the oracle, overall and per category. "
    "Every judgment is stored: rerunning the same command sends only what is missing or failed. A failed request "
    "makes its item's pick incomplete (never counted) and the run incomplete: the command exits 1. "
    "The method follows VL-RewardBench's Best-of-N analysis (Li et al., 2024)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import (
        add_missing_images_option,
        add_quiet_option,
        add_response_limit_option,
        add_store_options,
    )

    p.add_argument("--judge", required=True, metavar="TOML", help="judge configuration (as mmrb evaluate's)")
    p.add_argument(
        "--method",
        choices=["reward", "knockout", "round-robin"],
        help="how the judge picks (default: reward for a reward model, else knockout)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the bracket, ties, coins and bootstrap (default 0)")
    p.add_argument("--category", help="only the items of this category")
    p.add_argument(
        "--correctness",
        choices=["auto", "reference", "labels"],
        default="auto",
        help="where each candidate's correctness comes from: its item's reference, the expert labels of its pairs "
        "(an adjudication, else the annotators' majority; a tie or only 'unsure' leaves it unknown), or auto "
        "(default: the reference where the item has one, else the labels)",
    )
    p.add_argument("--max-judgments", type=int, metavar="N", help="judge only the first items whose cost fits in N")
    p.add_argument(
        "--curve",
        action="store_true",
        help="also accuracy against N = 2, 4, 8, ... and each item's own N (nested seeded subsamples)",
    )
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also draw Best-of-N accuracy beside the baselines, overall and per category (with --curve, against N)",
    )
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (0: no intervals)")
    p.add_argument("--concurrency", type=int, help="requests in flight (overrides the judge file)")
    p.add_argument("--run", help="run id (default: judge name + a hash of its configuration)")
    add_missing_images_option(p, judging=True, config="judge file")
    p.add_argument("--no-retry-errors", action="store_true", help="on resume, keep failed requests as failures")
    add_response_limit_option(p, "judge file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_quiet_option(p)
    add_store_options(p)


def run(args: argparse.Namespace) -> int:
    from curate.commands.common import open_store, progress_bars, response_limit, write_whole
    from curate.errors import MmrbError
    from curate.judging.config import load_judge
    from curate.wording import plural

    from ..bestofn import curve_lines, report_json, report_lines
    from ..bestofn_run import cost_lines, default_method, pool, run_bestofn

    if args.max_judgments is not None and args.max_judgments < 1:
        raise MmrbError(f"--max-judgments must be at least 1, got {args.max_judgments}")
    if args.resamples < 0:
        raise MmrbError(f"--resamples must be 0 or more, got {args.resamples}")
    if args.plot:
        check_output(args.plot, "--plot")  # before any judgment is asked
    judge = load_judge(
        args.judge,
        order="both",  # a match is judged in both orders; a reward model ignores it
        samples=1,
        concurrency=args.concurrency,
        allow_missing_images=args.allow_missing_images,
        max_response_chars=response_limit(args),
    )
    method: Method = args.method or default_method(judge)

    with open_store(args) as store:
        items = pool(store, category=args.category, correctness=args.correctness)
        if not items.items:
            left = ", ".join(f"{n} {why}" for why, n in items.left_out.items()) or "no items"
            raise MmrbError(f"no item has 2 or more candidates with known correctness ({left})")
        if not args.quiet:
            for line in cost_lines(items.items, method, args.max_judgments, curve=args.curve):
                print(line, file=sys.stderr)
        # a knockout asks round by round: the bar starts again at each round's judgments
        with progress_bars(quiet=args.quiet) as bars:
            result = run_bestofn(
                store,
                items,
                judge,
                method=method,
                seed=args.seed,
                max_judgments=args.max_judgments,
                run_id=args.run,
                retry_errors=not args.no_retry_errors,
                resamples=args.resamples,
                progress=bars.callback("judgments"),
                curve=args.curve,
            )
    s = result.summary
    if args.json:
        out = {
            "judge": result.judge,
            "run": result.run_id,
            "method": method,
            "seed": args.seed,
            "complete": result.complete,
            "correctness": {"source": args.correctness, "items": dict(items.decided_by)},
            "left_out": dict(result.left_out),
            "run_info": {
                "planned": s.planned,
                "already_stored": s.already_stored,
                "sent": s.sent,
                "passes": result.passes,
                "seconds": round(s.seconds, 3),
                "judgments_per_second": round(s.per_second, 2),
            },
            **report_json(result.report),
        }
        if args.curve:
            out["curve"] = [{"n": n, **report_json(r)} for n, r in result.curve]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(
            f"run {result.run_id}: {s.sent} judgments sent in {result.passes} passes, {s.already_stored} already "
            f"stored ({s.per_second:.1f}/s)"
        )
        title = f"{result.judge}, {method}, seed {args.seed}"
        print(title if result.complete else f"INCOMPLETE: incomplete items are not counted\n{title}")
        print(
            f"correctness ({args.correctness}): "
            + ", ".join(f"{plural(n, 'item')} by {src}" for src, n in sorted(items.decided_by.items()))
        )
        if result.left_out:
            print("left out: " + ", ".join(f"{n} {why}" for why, n in result.left_out.items()))
        print("\n".join(report_lines(result.report)))
        if args.curve:
            print("\n".join(curve_lines(result.curve)))
    if args.plot:
        from ..bestofn_plot import plot_data, plot_png

        title = f"{result.judge}, {method}, seed {args.seed}, correctness: {args.correctness}"
        if not result.complete:
            title += f"; INCOMPLETE: {plural(result.report.overall.incomplete, 'item')} not counted"
        png = plot_png(plot_data(result.report, result.curve, title=title))
        try:
            write_whole(args.plot, png)
        except OSError as e:
            raise MmrbError(f"cannot write --plot {args.plot}: {e.strerror or e}") from None
        if not args.quiet:
            print(f"plot: {args.plot}", file=sys.stderr)
    for line in result.lines():
        print(line, file=sys.stderr)
    return 0 if result.complete else 1


def check_output(path: str, option: str) -> None:
    """An output file the command can write: its folder exists, and it is no folder itself."""
    from pathlib import Path

    from curate.errors import MmrbError

    p = Path(path)
    if p.is_dir():
        raise MmrbError(f"{option} {path} is a folder, not a file")
    if not p.parent.is_dir():
        raise MmrbError(f"{option} {path}: no folder {p.parent}")
