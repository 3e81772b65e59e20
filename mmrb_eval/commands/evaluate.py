"""mmrb evaluate: run a VLM judge or a reward model on a dataset, store every judgment, score."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "judge a dataset with a VLM or reward model (resumable), then score it"
DESCRIPTION = (
    "Judge every pair of a dataset with an OpenAI-compatible VLM (built-in Multimodal RewardBench, "
    "VL-RewardBench, R1-Reward, MMRB2 or ratings prompts, or a template file) or a scalar reward model over HTTP. "
    "Responses with images are shown as images (one multi-image message). "
    "Every judgment is stored; rerunning the same command resumes without resending stored judgments. "
    "Requests that still fail after retries (and empty or oversized answers) are stored as failures, never "
    "scored: the run is stored as incomplete, the command exits 1, and rerunning it sends only those."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import (
        add_missing_images_option,
        add_quiet_option,
        add_response_limit_option,
        add_store_options,
    )

    from .options import add_scoring_arguments

    p.add_argument("--dataset", action="append", required=True, metavar="FILE", help="dataset file (repeatable)")
    p.add_argument("--judge", required=True, metavar="TOML", help="judge configuration (see curate/judging/config.py)")
    p.add_argument(
        "--order",
        choices=["fixed", "random", "both"],
        help="display order policy (default: the judge file's, else fixed)",
    )
    p.add_argument(
        "--samples",
        type=int,
        help="samples per pair (and per order); K>1 with --order random is VL-RewardBench's protocol",
    )
    p.add_argument("--seed", type=int, help="seed of the random display orders")
    p.add_argument("--concurrency", type=int, help="requests in flight (overrides the judge file)")
    p.add_argument("--run", help="run id (default: judge name + a hash of the configuration and dataset)")
    p.add_argument("--limit", type=int, help="only the first N pairs")
    add_missing_images_option(p, judging=True, config="judge file")
    p.add_argument("--no-retry-errors", action="store_true", help="on resume, keep failed requests as failures")
    add_response_limit_option(p, "judge file")
    p.add_argument("--export", metavar="JSONL", help="also write the run's judgments (format mmrb-studio)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_quiet_option(p)
    add_scoring_arguments(p)
    add_store_options(p)


def run(args: argparse.Namespace) -> int:
    from curate.commands.common import open_store, progress_bars, response_limit
    from curate.judging.config import load_judge

    from ..scaling import scaling_lines
    from ..scoring import render_text
    from ..workflow import evaluate, open_dataset
    from .options import options_from_args

    opts = options_from_args(args)
    dataset = open_dataset(args.dataset, args.limit, to_judge=True)
    judge = load_judge(
        args.judge,
        order=args.order,
        samples=args.samples,
        seed=args.seed,
        concurrency=args.concurrency,
        allow_missing_images=args.allow_missing_images,
        max_response_chars=response_limit(args),
    )

    # a judge run of a dataset file needs no curated store: evaluating may start one
    # a bar on a terminal only: off it (a log, a pipe) nothing is printed until the report
    with open_store(args, create=True) as store, progress_bars(quiet=args.quiet) as bars:
        ev = evaluate(
            store,
            dataset,
            judge,
            opts,
            run_id=args.run,
            retry_errors=not args.no_retry_errors,
            progress=bars.callback("judgments"),
            export=args.export,
        )
    report, summary = ev.scored.report, ev.summary
    if args.json:
        print(json.dumps({**report, "run_info": ev.run_info()}, indent=2, ensure_ascii=False))
    else:
        print(
            f"run {summary.run_id}: {summary.sent} judgments sent, {summary.already_stored} already stored "
            f"({summary.per_second:.1f}/s)"
        )
        title = f"{judge.name} on {dataset.label}"
        if not ev.complete:
            title = (
                f"INCOMPLETE: {ev.health.answered} of {ev.health.planned} judgments answered; failed requests are "
                f"not scored and this run is not ranked\n{title}"
            )
        print(render_text(ev.scored.figures, title))
        for line in scaling_lines(ev.scored.scaling):
            print(line)
    if not ev.complete:
        print(summary.failure_line(), file=sys.stderr)
        return 1
    return 0
