"""``mmrb quality``: per-annotator reliability, alerts, qualification, optional pause."""

from __future__ import annotations

import argparse
import json

HELP = "annotator reliability: gold accuracy (Wilson CI), agreement with the majority, Dawid-Skene; alerts"
DESCRIPTION = (
    "Per annotator and field (and category): accuracy on gold with a 95% Wilson interval (control tasks "
    "included), agreement with the others' majority and Dawid-Skene's estimated reliability (regular labels "
    "only). Gold accuracy alerts when its whole Wilson interval lies below --threshold, however few its "
    "labels; Dawid-Skene (no interval) below --threshold on at least --min-n labels. --pause closes the queue "
    "of every annotator with an alert (mmrb gold resume NAME opens it again). Then each annotator's bias: "
    "left picks (screen side), ties, unsure answers, the longer response chosen, labels under a third of their "
    "median seconds, each with its Wilson interval and an alert when the interval lies wholly beyond its bound "
    "(bias alerts pause no one)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_quiet_option, add_store_options

    add_store_options(p)
    p.add_argument("--threshold", type=float, default=0.7, help="alert below this share (default 0.7)")
    p.add_argument("--min-n", type=int, default=20, help="labels a Dawid-Skene alert needs at least (default 20)")
    p.add_argument("--category", action="store_true", help="also print every category")
    p.add_argument("--pause", action="store_true", help="pause the queue of every annotator with an alert")
    p.add_argument(
        "--aggregate",
        choices=("dawid-skene", "mace"),
        default=None,
        help="also compare this aggregation of the regular labels with the majority",
    )
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    add_quiet_option(p)


def check_alert_options(args: argparse.Namespace) -> None:
    """--threshold and --min-n, shared with mmrb agreement."""
    from curate.errors import MmrbError

    if not 0.0 <= args.threshold <= 1.0:
        raise MmrbError(f"--threshold must be in [0, 1], got {args.threshold}")
    if args.min_n < 1:
        raise MmrbError(f"--min-n must be at least 1, got {args.min_n}")


def run(args: argparse.Namespace) -> int:
    from curate.commands.common import cli_actor, open_store, steps
    from curate.quality.bias import bias_report, store_facts
    from curate.quality.reliability import store_report

    check_alert_options(args)
    if args.aggregate:  # its extra (MACE's) checked before the report's minute of work, not after
        from curate.quality.aggregate import check_method

        check_method(args.aggregate)
    # it ran 47 s on a large store with no output: a bar over its steps on a terminal
    with open_store(args) as store, steps(3 if args.aggregate else 2, quiet=args.quiet) as step:
        step("gold accuracy and agreement")
        report = store_report(store, threshold=args.threshold, min_n=args.min_n, pause=args.pause, by=cli_actor())
        step("bias")
        bias = bias_report(store_facts(store.label_fact_columns()))
        compare = None
        if args.aggregate:
            from curate.quality.aggregate import store_aggregate

            step(f"aggregation ({args.aggregate})")
            compare = store_aggregate(store, args.aggregate)
    if args.json:
        out = report.as_dict()
        out["bias"] = bias.as_dict()
        if compare is not None:
            out["aggregation"] = compare.as_dict()
        print(json.dumps(out, indent=1, sort_keys=True))
    else:
        print("\n".join([*report.lines(per_category=args.category), "", *bias.lines()]))
        if compare is not None:
            print("\n".join(["", *compare.lines()]))
    return 0
