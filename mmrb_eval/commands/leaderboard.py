"""mmrb leaderboard: a table of judges (Markdown, CSV, HTML, JSON) and a PNG plot."""

from __future__ import annotations

import argparse

HELP = "compare judges: a table with intervals (md/csv/html/json) and a PNG plot"
DESCRIPTION = (
    "Compare judges: accuracy with 95% intervals, completeness and error rate per run. A run with failed "
    "or missing judgments is incomplete and is listed apart, unranked, in the table and the plot, unless "
    "--include-incomplete ranks it with the others."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_store_options

    from .options import add_scoring_arguments

    p.add_argument("reports", nargs="*", metavar="REPORT.json", help="reports written by mmrb score --output")
    p.add_argument("--run", action="append", default=[], help="a stored run to score and include (repeatable)")
    p.add_argument("--all-runs", action="store_true", help="include every evaluation run stored in --db")
    p.add_argument(
        "--dataset",
        action="append",
        metavar="FILE",
        help="dataset for stored runs (default: the path each run recorded)",
    )
    # json is one more rendering of the table (written by --output too); --json, every command's
    # spelling, is its shorthand
    p.add_argument("--format", choices=["md", "csv", "html", "json"], default="md")
    p.add_argument(
        "--json",
        dest="format",
        action="store_const",
        const="json",
        help="the same as --format json (its schema: docs/json.md)",
    )
    p.add_argument("--sort", choices=["overall", "macro", "size_weighted"], default="overall")
    p.add_argument("--output", metavar="FILE", help="write the table here instead of printing it")
    p.add_argument("--plot", metavar="PNG", help="also draw the accuracies with their intervals")
    p.add_argument(
        "--include-incomplete",
        action="store_true",
        help="rank incomplete runs (failed or missing judgments) with the complete ones, marked",
    )
    add_scoring_arguments(p)
    add_store_options(p)


def run(args: argparse.Namespace) -> int:
    import sys

    from curate.commands.common import open_store, write_whole
    from curate.errors import MmrbError
    from curate.wording import plural

    from ..leaderboard import incomplete_runs, plot, read_report, render
    from ..workflow import evaluation_runs, open_dataset, score_run
    from .options import options_from_args

    reports = [read_report(f) for f in args.reports]
    if args.run or args.all_runs:
        opts = options_from_args(args)
        pairs = open_dataset(args.dataset).pairs if args.dataset else None
        with open_store(args) as store:
            runs = evaluation_runs(store, args.run, args.all_runs)
            if not runs and not reports:  # --all-runs of a store without any: say so, not how to ask
                raise MmrbError(f"no evaluation runs in the store {store.display_name}: `mmrb evaluate` stores them")
            reports += [score_run(store, run_id, opts, pairs).report for run_id in runs]
    if not reports:
        raise MmrbError("nothing to compare: give report files, --run or --all-runs")
    text = render(reports, args.format, args.sort, args.include_incomplete)
    if args.output:
        write_whole(args.output, text)
    else:
        print(text, end="")
    if args.plot:
        plot(reports, args.plot, args.sort, args.include_incomplete)
    apart = incomplete_runs(reports)
    if apart:
        how = "ranked with the others, marked" if args.include_incomplete else "listed apart, not ranked"
        print(f"{plural(len(apart), 'incomplete run')} ({', '.join(apart)}) {how}", file=sys.stderr)
    return 0
