"""``mmrb assign``: give pairs to annotators (k per pair, balanced, control tasks mixed in)."""

from __future__ import annotations

import argparse

HELP = "assign pairs to annotators: k per pair, balanced load, control tasks, adaptive overlap"
DESCRIPTION = (
    "Assign pairs to annotators with k distinct annotators per pair and balanced load. "
    "Re-running after adding annotators or pairs only extends the plan: labelled work is never moved. "
    "A pair whose first k labels disagree gets one more annotator on the next run, up to --max-k. "
    "New annotators get the qualification set first when one is configured (mmrb gold qualify)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_json_option, add_store_options

    add_store_options(p)
    add_json_option(p)
    p.add_argument("-k", "--k", type=int, default=3, help="distinct annotators per pair (default 3)")
    p.add_argument(
        "--annotators",
        default=None,
        help="comma-separated names (created if missing); default: every active annotator in the store",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for order, sides, gold choice (default 0)")
    p.add_argument(
        "--control-share",
        "--gold-rate",
        dest="control_share",
        type=float,
        default=0.0,
        help="share of each queue that is control tasks: gold pairs whose labels are checked, never counted (0-1)",
    )
    p.add_argument("--max-k", type=int, default=None, help="adaptive overlap: most annotators per pair (default k)")
    p.add_argument("--batch", default="", help="batch name stored on the new assignments")
    p.add_argument("--pairs", default=None, help="file with one pair id per line: assign only these")
    p.add_argument(
        "--scheme",
        default=None,
        metavar="NAME|FILE",
        help="the batch's annotation scheme: a built-in (mmrb scheme lists them) or a TOML file; "
        "given to the batch's pairs (default: each pair keeps its own, mmrb for a new one)",
    )
    p.add_argument(
        "--new-version",
        action="store_true",
        help="with --scheme: a pair labelled under an incompatible earlier version of the scheme is labelled "
        "again (its old labels kept in the history)",
    )


def run(args: argparse.Namespace) -> int:
    from curate.assign import assign
    from curate.commands.common import cli_actor, names, open_store, print_json, read_ids
    from curate.schemes import load

    annotators, pair_ids = names(args.annotators), read_ids(args.pairs)
    scheme = load(args.scheme) if args.scheme is not None else None
    with open_store(args) as store:
        report = assign(
            store,
            k=args.k,
            annotators=annotators,
            seed=args.seed,
            control_share=args.control_share,
            max_k=args.max_k,
            batch=args.batch,
            pair_ids=pair_ids,
            scheme=scheme,
            by=cli_actor(),
            new_version=args.new_version,
        )
    if args.json:
        print_json(report.as_dict())
    else:
        print("\n".join(report.lines()))
    return 0
