"""``mmrb labels import``: a raw-label file into the store (all or nothing)."""

from __future__ import annotations

import argparse

HELP = "labels: import a raw-label file (JSONL, Parquet or CSV), all or nothing"
DESCRIPTION = (
    "A label file has the columns of `mmrb export labels` (docs/formats.md): pair_id and annotator are required, "
    "every other column optional (status: submitted). Values are in the pair's stored order (preference "
    "first/second/tie, correctness correct/incorrect/unsure), the other fields of the pair's scheme in ratings. "
    "Every row is checked first; any problem is reported by file, line and field, and nothing is written."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_json_option, add_store_options

    sub = p.add_subparsers(dest="what", metavar="{import}", required=True)
    imp = sub.add_parser("import", help="import a label file (all or nothing)")
    imp.add_argument("file", help="a .jsonl, .parquet or .csv file")
    imp.add_argument("--source", default="import", help="the source of rows that name none (default: import)")
    add_store_options(imp)
    add_json_option(imp)


def run(args: argparse.Namespace) -> int:
    from curate.commands.common import open_store, print_json
    from curate.rawlabels import import_labels

    with open_store(args) as store:
        report = import_labels(store, args.file, source=args.source)
    if args.json:
        print_json(report.as_dict())
    else:
        print(report.line())
    return 0
