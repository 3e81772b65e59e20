"""mmrb ingest: import items or existing benchmark pairs into the store."""

from __future__ import annotations

import argparse

HELP = "import items (prompts, images, responses) or existing benchmark pairs"
DESCRIPTION = (
    "Import a file into the store in one transaction: either everything lands or nothing "
    "does. Formats are described in docs/formats.md."
)
IMAGES_ROOT_HELP = (
    "folder the image paths are relative to and must stay inside: a path that leads outside it "
    "(absolute, '..', a symlink) is refused (default: the file's folder)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_json_option, add_missing_images_option, add_quiet_option, add_store_options
    from curate.formats.registry import PAIR_FORMATS, canonical

    sub = p.add_subparsers(dest="what", metavar="{items,pairs}", required=True)
    it = sub.add_parser("items", help="items in the mmrb-studio items format (JSONL, CSV or Parquet)")
    it.add_argument("file")
    it.add_argument(
        "--categories",
        default=None,
        help="comma-separated allowed categories (default: the six Multimodal RewardBench areas "
        "and the groups of the other supported benchmarks)",
    )
    add_missing_images_option(it, judging=False)
    it.add_argument("--images-root", metavar="DIR", default=None, help=IMAGES_ROOT_HELP)
    it.add_argument(
        "--skip-invalid",
        metavar="REJECTS_FILE",
        default=None,
        help="import the valid rows; write rejected rows with reasons to this JSONL file",
    )
    add_store_options(it)
    add_quiet_option(it)
    add_json_option(it)

    pr = sub.add_parser("pairs", help="pairs of an existing benchmark")
    pr.add_argument("file")
    # an earlier spelling (mm_rlhf) is read as its format's name
    pr.add_argument("--format", required=True, type=canonical, choices=PAIR_FORMATS)
    # --images-dir is the option's earlier name, kept so that existing scripts still work
    pr.add_argument(
        "--images-root", "--images-dir", dest="images_root", metavar="DIR", default=None, help=IMAGES_ROOT_HELP
    )
    pr.add_argument(
        "--category",
        default=None,
        help="MMRB2 only: the task (t2i, edit, interleaved, reasoning) when the file name does not start with it",
    )
    pr.add_argument("--categories", default=None, help="comma-separated allowed categories (mmrb and generic formats)")
    pr.add_argument(
        "--skip-invalid",
        metavar="REJECTS_FILE",
        default=None,
        help="import the valid rows; write rejected rows with reasons to this JSONL file",
    )
    add_store_options(pr)
    add_quiet_option(pr)
    add_json_option(pr)


def run(args: argparse.Namespace) -> int:
    from curate.commands.common import names, open_store, print_json, progress_bars
    from curate.formats.reader import row_estimate
    from curate.ingest import ingest_items, ingest_pairs

    # no timer thread: a large file is read in a forked process, which only a lone thread may start
    with open_store(args, create=True) as store, progress_bars(quiet=args.quiet, thread=False) as bars:
        # the file's rows estimated cheaply (a JSON file's not known: the count alone is shown)
        counter = bars.counter("rows read", row_estimate(args.file) if bars.shown else None)
        progress = counter.progress if counter is not None else None
        if args.what == "items":
            report = ingest_items(
                store,
                args.file,
                categories=names(args.categories),
                skip_invalid=args.skip_invalid,
                allow_missing_images=args.allow_missing_images,
                images_root=args.images_root,
                progress=progress,
            )
        else:
            report = ingest_pairs(
                store,
                args.file,
                args.format,
                images_root=args.images_root,
                skip_invalid=args.skip_invalid,
                categories=names(args.categories),
                category=args.category,
                progress=progress,
            )
    if args.json:
        print_json(report.as_dict())
        return 0
    print(report.summary())
    for ex in report.missing_examples:
        print(f"  missing image: {ex}")
    if report.images_missing > len(report.missing_examples):
        print(f"  ... and {report.images_missing - len(report.missing_examples)} more (see `mmrb status`)")
    for p in report.problems[:10]:
        print(f"  rejected {p}")
    return 0
