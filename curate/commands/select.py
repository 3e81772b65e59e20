"""``mmrb select``: keep the pairs an ensemble of VLM judges gets wrong (VL-RewardBench style)."""

from __future__ import annotations

import argparse

HELP = "pre-select hard pairs with an ensemble of judges; report and drop duplicates"
DESCRIPTION = (
    "Judge every pair with a known answer in both orders with each judge of a models file (same format "
    "as for `mmrb sample`); keep pairs that at least m of the n judges get wrong or judge inconsistently, "
    "then sample up to --target pairs per category. Every kept or dropped pair records why. A pair is "
    "decided only from valid verdicts: one whose judges failed (or gave no verdict) where that could change "
    "the decision is left as it was and listed as unjudged. Judge runs are stored, so an interrupted "
    "selection resumes; when requests still failed after retries the command exits 1 and a rerun sends "
    "only those."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import (
        add_missing_images_option,
        add_quiet_option,
        add_response_limit_option,
        add_store_options,
    )
    from curate.dedup import DEFAULT_MAX_DISTANCE
    from curate.selection import DEFAULT_TEMPLATE

    add_store_options(p)
    p.add_argument("--judges", default=None, help="models file of the judges (.toml/.yaml)")
    p.add_argument(
        "--m", type=int, default=None, help="hard = at least m judges wrong or inconsistent (default: a majority)"
    )
    p.add_argument("--target", type=int, default=None, help="keep at most this many hard pairs per category")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--template", default=DEFAULT_TEMPLATE, help=f"judge prompt template name or file (default {DEFAULT_TEMPLATE})"
    )
    p.add_argument(
        "--drop-duplicate-images", action="store_true", help="drop pairs of items whose image duplicates another item's"
    )
    p.add_argument(
        "--drop-duplicate-prompts",
        action="store_true",
        help="drop pairs of items repeating another item's prompt and image",
    )
    p.add_argument(
        "--phash-distance",
        type=int,
        default=DEFAULT_MAX_DISTANCE,
        help=f"images within this many pHash bits are duplicates (default {DEFAULT_MAX_DISTANCE} of 64)",
    )
    p.add_argument("--duplicates-only", action="store_true", help="only report duplicates; judge and change nothing")
    p.add_argument("--max-side", type=int, default=1024, help="downscale images sent to judges to this side (0: never)")
    add_missing_images_option(p, judging=True)
    add_response_limit_option(p, "models file")
    p.add_argument(
        "--json", action="store_true", help="print the report (--duplicates-only's too) as JSON (schemas: docs/json.md)"
    )
    add_quiet_option(p)


def run(args: argparse.Namespace) -> int:
    import sys

    from curate.commands.common import open_store, print_json, progress_bars, response_limit
    from curate.dedup import report_duplicates
    from curate.errors import MmrbError
    from curate.selection import load_judges, select

    if args.duplicates_only:
        with open_store(args) as store, progress_bars(quiet=args.quiet) as bars:
            dups = report_duplicates(
                store, max_distance=args.phash_distance, progress=bars.callback("image fingerprints")
            )
        if args.json:
            print_json(dups.as_dict())
        else:
            print("\n".join(dups.lines()))
        return 0
    if not args.judges:
        raise MmrbError("--judges is required (a models file listing the judge endpoints)")
    # the judges file before the store: its problems are said whatever the store
    judges = load_judges(
        args.judges,
        template=args.template,
        max_image_side=args.max_side or None,
        allow_missing_images=args.allow_missing_images,
        max_response_chars=response_limit(args),
    )
    with open_store(args) as store, progress_bars(quiet=args.quiet) as bars:
        report = select(
            store,
            judges,
            m=args.m,
            target_per_category=args.target,
            seed=args.seed,
            drop_duplicate_images=args.drop_duplicate_images,
            drop_duplicate_prompts=args.drop_duplicate_prompts,
            max_distance=args.phash_distance,
            progress=bars.named("judge "),  # a bar per judge; None when hidden: no per-judgment work
            fingerprints=bars.callback("image fingerprints"),  # the duplicate check, before judging
        )
    if args.json:
        print_json(report.as_dict())
    else:
        print("\n".join(report.lines()))
    if not report.complete:
        print(
            "incomplete: requests still failed after retries; the pairs they would decide were left as they were",
            file=sys.stderr,
        )
        print("\n".join(report.incomplete), file=sys.stderr)
        return 1
    return 0
