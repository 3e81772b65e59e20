"""``mmrb agreement``: inter-annotator agreement of the store's labels or of a label file."""

from __future__ import annotations

import argparse
import json

HELP = "inter-annotator agreement: Krippendorff's alpha with bootstrap CIs, AC1, kappas, per category"
DESCRIPTION = (
    "Agreement per labelled field (preference, correctness of each response, every rating), each at the "
    "level its pairs' annotation scheme declares (a scale or grades ordinal on its points, a choice nominal "
    "on its values; --level and --scale override). "
    "Reads the store, or with --labels a CSV/JSONL long table with columns item, annotator, field, value "
    "(optional: category; left = which response, first or second, was shown on the left when values "
    "are screen sides left/right; annotator '@gold' gives gold values). With --reliability it ends with "
    "each annotator's reliability, the figures of mmrb quality: accuracy on gold (95% Wilson interval), "
    "agreement with the others' majority, Dawid-Skene, and alerts."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.agreement.limits import MIN_BOOTSTRAP_PAIRS, MIN_PAIRABLE_PAIRS
    from curate.commands.common import add_store_options

    add_store_options(p)
    p.add_argument("--labels", metavar="FILE", help="CSV or JSONL long table instead of the store")
    p.add_argument(
        "--scale",
        action="append",
        metavar="FIELD=v1,v2,...",
        help="an ordered scale, low to high (the field becomes ordinal); repeatable",
    )
    p.add_argument(
        "--level",
        action="append",
        metavar="FIELD=LEVEL",
        help="level of measurement: nominal, ordinal, interval or ratio; repeatable",
    )
    p.add_argument("--category", action="store_true", help="also report every category")
    p.add_argument("--pairs", action="store_true", help="include per-pair rows (n labels, majority, share, entropy)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument(
        "--resamples",
        type=int,
        default=1000,
        help=f"bootstrap resamples over pairs (default 1000); a field with fewer than {MIN_BOOTSTRAP_PAIRS} pairs "
        "with two or more labels gets no interval: it is reported as undefined (too few pairs); with fewer than "
        f"{MIN_PAIRABLE_PAIRS} such pairs every statistic is undefined",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--min-shared",
        type=int,
        default=10,
        help=f"pairs two annotators must share for a Cohen kappa (default 10; never fewer than {MIN_PAIRABLE_PAIRS})",
    )
    p.add_argument(
        "--reliability",
        action="store_true",
        help="end with the per-annotator reliability (gold accuracy, agreement with the others' majority, "
        "Dawid-Skene: the figures of mmrb quality); its Dawid-Skene fits take most of the time on large stores",
    )
    p.add_argument("--threshold", type=float, default=0.7, help="reliability alerts below this share (default 0.7)")
    p.add_argument("--min-n", type=int, default=20, help="labels a reliability alert needs at least (default 20)")


def run(args: argparse.Namespace) -> int:
    from curate.agreement import agreement_report, from_store, parse_levels, parse_scales, read_labels_file, render_text
    from curate.commands.common import open_store
    from curate.commands.quality import check_alert_options
    from curate.quality.reliability import store_report, table_report

    check_alert_options(args)
    scales, levels = parse_scales(args.scale), parse_levels(args.level)
    alerts = dict(threshold=args.threshold, min_n=args.min_n)
    reliability = None
    if args.labels:
        table = read_labels_file(args.labels, scales=scales, levels=levels)
        if args.reliability:
            reliability = table_report(table, **alerts)
    else:
        with open_store(args) as store:
            table = from_store(store, scales=scales, levels=levels)
            if args.reliability:  # the figures of mmrb quality, the same call
                reliability = store_report(store, **alerts)
    report = agreement_report(
        table,
        per_category=args.category,
        pairs=args.pairs or args.json,
        resamples=args.resamples,
        seed=args.seed,
        min_shared=args.min_shared,
    )
    if args.json:
        out = report.as_dict()
        if reliability is not None:
            out["reliability"] = reliability.as_dict()
        print(json.dumps(out, indent=1, ensure_ascii=False))
    else:
        print(render_text(report, reliability))
        if reliability is None:
            print("\nPer-annotator reliability (gold accuracy, Dawid-Skene, alerts): --reliability or mmrb quality")
    return 0
