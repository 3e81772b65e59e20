"""mmrb validity: does the benchmark predict usefulness? Benchmark accuracy against Best-of-N gain across judges."""

from __future__ import annotations

import argparse

HELP = "does the benchmark predict usefulness? benchmark accuracy against Best-of-N gain across judges"
DESCRIPTION = (
    "For each judge with an evaluation run on a built benchmark (mmrb evaluate) and a Best-of-N run (mmrb bestofn), "
    "paired by judge name: its benchmark accuracy, its Best-of-N accuracy and its gain over a random pick, then "
    "Pearson and Spearman correlation between accuracy and gain across judges with 95% bootstrap intervals that "
    "resample judges, the benchmark's pairs and the Best-of-N items, overall and per category present in both, and "
    "a plain-language verdict with its caveats (undefined below 3 judges; wide below 10). Nothing is sent: both "
    "runs are read from the store. A judge whose run is incomplete is listed and not used, and the command exits 1, "
    "as it does when the correlation is undefined. The method follows VL-RewardBench's Best-of-N analysis "
    "(Li et al., 2024)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_store_options

    from .options import add_scoring_arguments

    p.add_argument("--judge", action="append", default=[], metavar="NAME", help="only this judge (repeatable)")
    p.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="ID",
        help="the run to use where a judge has several of one kind (repeatable)",
    )
    p.add_argument(
        "--method",
        choices=["knockout", "round-robin"],
        help="re-pick matches this way (default: the method each Best-of-N run was made with; a reward model's "
        "run is always read by its scores)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the validity bootstrap (default 0)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (0: no intervals, no verdict)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--output", metavar="FILE", help="write the report here instead of printing it")
    p.add_argument("--plot", metavar="PNG", help="also draw accuracy against gain, each judge labelled")
    add_scoring_arguments(p)
    add_store_options(p)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from curate.commands.common import open_store, write_whole
    from curate.errors import MmrbError

    from ..bestofn_run import bestofn_runs
    from ..validity import pick_runs, plot, report_json, report_lines, validity_report
    from .options import options_from_args

    if args.resamples < 0:
        raise MmrbError(f"--resamples must be 0 or more, got {args.resamples}")
    opts = options_from_args(args)
    with open_store(args) as store:
        chosen, notes = pick_runs(store.judge_runs("evaluate"), bestofn_runs(store), judges=args.judge, runs=args.run)
        if not chosen:
            raise MmrbError(
                "nothing to correlate: no judge has both an evaluation run and a Best-of-N run"
                + (f" ({'; '.join(notes)})" if notes else "")
            )
        report = validity_report(
            store, chosen, opts, method=args.method, seed=args.seed, resamples=args.resamples, notes=notes
        )
    text = json.dumps(report_json(report), indent=2, ensure_ascii=False) + "\n" if args.json else ""
    text = text or "\n".join(report_lines(report)) + "\n"
    if args.output:
        write_whole(args.output, text)
    else:
        print(text, end="")
    if args.plot:
        plot(report, args.plot)
    if not report.complete:
        why = [r.why_not for r in report.rows if not r.used] or [report.overall.pearson.undefined or "no correlation"]
        print(f"mmrb validity: incomplete: {'; '.join(w for w in why if w)}", file=sys.stderr)
    return 0 if report.complete else 1
