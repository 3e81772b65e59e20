"""``mmrb pair``: pair candidate responses per item, deciding correctness from references."""

from __future__ import annotations

import argparse

HELP = "pair candidate responses per item (cross-model, correct vs incorrect, same correctness)"
DESCRIPTION = (
    "Pair the candidate responses of each item. Correctness is decided automatically where the item "
    "has a reference answer (option letter, number with tolerance and units, yes/no, normalised exact "
    "match); anything unsure is left to humans. Identical or near-identical responses are never paired. "
    "Re-running never duplicates a pair."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_json_option, add_store_options
    from curate.pairing import DEFAULT_NEAR_DUPLICATE, STRATEGIES

    add_store_options(p)
    add_json_option(p)
    p.add_argument(
        "--strategy", choices=STRATEGIES, default="cross_model", help="which pairs to make (default cross_model)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for sides, cap and balancing choices (default 0)")
    p.add_argument("--cap", type=int, default=None, help="at most this many pairs per item")
    p.add_argument(
        "--near-duplicate",
        type=float,
        default=DEFAULT_NEAR_DUPLICATE,
        help="word-set Jaccard similarity at or above which two responses are not paired "
        f"(default {DEFAULT_NEAR_DUPLICATE})",
    )
    p.add_argument(
        "--balance-length",
        action="store_true",
        help="within each category, balance chosen-longer and chosen-shorter pairs",
    )
    p.add_argument("--items", default=None, help="file with one item id per line: pair only these")
    p.add_argument("--models", default=None, help="comma-separated model names: pair only their responses")


def run(args: argparse.Namespace) -> int:
    from curate.commands.common import names, open_store, print_json, read_ids
    from curate.pairing import pair_items

    item_ids, models = read_ids(args.items), names(args.models)
    with open_store(args) as store:
        report = pair_items(
            store,
            strategy=args.strategy,
            seed=args.seed,
            cap_per_item=args.cap,
            near_duplicate=args.near_duplicate,
            balance_length=args.balance_length,
            item_ids=item_ids,
            models=models,
        )
    if args.json:
        print_json(report.as_dict())
    else:
        print("\n".join(report.lines()))
    return 0
