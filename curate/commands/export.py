"""``mmrb export labels``: the store's raw per-annotator labels in one file."""

from __future__ import annotations

import argparse

HELP = "export: the raw per-annotator labels (JSONL, Parquet or CSV)"
DESCRIPTION = (
    "One record per submitted or skipped label (drafts never), every field of the pair's scheme, the time "
    "spent and the guidelines version, gold pairs and control tasks marked (docs/formats.md). Annotators are "
    "pseudonyms (annotator-01, ... in the order of their first label) unless --real-names; rows in "
    "(pair_id, annotator) order."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_json_option, add_store_options

    sub = p.add_subparsers(dest="what", metavar="{labels}", required=True)
    lab = sub.add_parser("labels", help="the raw labels, one record per label")
    lab.add_argument("--format", choices=("jsonl", "parquet", "csv"), help="default: by --out's suffix, else jsonl")
    lab.add_argument("--out", help="the file to write (default: labels.FORMAT in the current folder)")
    lab.add_argument(
        "--real-names", action="store_true", help="keep the annotators' names (to move labels between stores)"
    )
    add_store_options(lab)
    add_json_option(lab, "what it wrote")


def run(args: argparse.Namespace) -> int:
    from curate.commands.common import open_store, print_json
    from curate.rawlabels import export_labels
    from curate.wording import plural

    out = args.out or f"labels.{args.format or 'jsonl'}"
    with open_store(args) as store:
        n = export_labels(store, out, args.format, real_names=args.real_names)
    if args.json:
        print_json({"labels": n, "out": out, "real_names": args.real_names})
    else:
        print(f"wrote {plural(n, 'label')} to {out}")
    return 0
