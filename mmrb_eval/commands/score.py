"""mmrb score: score saved judgments (a file in a published format, or a stored run)."""

from __future__ import annotations

import argparse
import json

HELP = "score saved judgments under explicit (or a benchmark's official) rules"
DESCRIPTION = (
    "Score a judge's saved outputs without calling it: Multimodal RewardBench judge outputs, MMRB2 "
    "judgements, VL-RewardBench inference records, R1-Reward's rewards, this project's JSONL, or a run "
    "stored by mmrb evaluate. A preset gives the figures of the benchmark's own scoring script."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_store_options
    from curate.formats.registry import JUDGMENT_FORMATS, canonical

    from .options import add_scoring_arguments

    p.add_argument("--dataset", action="append", metavar="FILE", help="dataset / ground-truth file (repeatable)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--judgments", metavar="FILE", help="a file of saved judgments")
    src.add_argument("--run", help="a run stored by mmrb evaluate (in --db)")
    p.add_argument(
        "--format", type=canonical, choices=JUDGMENT_FORMATS, default="mmrb-studio", help="format of --judgments"
    )
    p.add_argument("--judge-name", help="name of the judge in the report (default: the file or run)")
    p.add_argument(
        "--vlrb-k",
        type=int,
        help="VL-RewardBench: at most K samples per item, after cal.py's seeded shuffle "
        "(k = 1, 3, 5, 7, 9 give the figures its main() prints for that k)",
    )
    p.add_argument(
        "--trust-flag",
        action="store_true",
        help="VL-RewardBench: use meta.flag_status instead of re-reading filter_choice",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="with --dataset: refuse judgments of pairs the dataset does not have, and rows whose label "
        "differs from the dataset's (by default each is a warning with its count)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--output", metavar="JSON", help="also write the JSON report (input of mmrb leaderboard)")
    add_scoring_arguments(p)
    add_store_options(p)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from curate.commands.common import open_store, write_whole
    from curate.errors import MmrbError
    from curate.formats.registry import LABELLED

    from ..scaling import scaling_lines
    from ..scoring import render_text
    from ..workflow import open_dataset, score_file, score_run
    from .options import options_from_args

    opts = options_from_args(args)
    dataset = open_dataset(args.dataset) if args.dataset else None
    if args.run:
        with open_store(args) as store:
            scored = score_run(store, args.run, opts, dataset.pairs if dataset else None, strict=args.strict)
        scored = replace(scored, run_id=None)  # mmrb score's report has never named the run
    else:
        if dataset is None and args.format not in LABELLED:
            raise MmrbError(f"--format {args.format} needs --dataset (the labels to score against)")
        scored = score_file(
            args.judgments,
            args.format,
            opts,
            dataset,
            vlrb_k=args.vlrb_k,
            trust_flag=args.trust_flag,
            strict=args.strict,
        )
    if args.judge_name:
        scored = replace(scored, judge=args.judge_name)
    report = scored.report
    if args.output:
        write_whole(args.output, json.dumps(report, indent=2, ensure_ascii=False))
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_text(scored.figures, f"{scored.judge} on {scored.dataset}"))
        for line in scaling_lines(scored.scaling):
            print(line)
    return 0
