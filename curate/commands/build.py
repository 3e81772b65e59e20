"""``mmrb build``: filter the labelled pairs and write the final benchmark."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..model import AGGREGATIONS
from ..wording import plural

if TYPE_CHECKING:
    from curate.benchmark.filter import FilterResult

HELP = (
    "filter labelled pairs by rules and write the benchmark (JSONL, Parquet, HF dataset, MMRB/VLRB/MMRB2 layouts, card)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_store_options

    add_store_options(p)
    p.add_argument("--rules", required=True, metavar="FILE", help="filter and export rules (TOML or YAML)")
    p.add_argument("--out", metavar="DIR", help="output folder (replaced atomically when the build completes)")
    p.add_argument("--dry-run", action="store_true", help="only report how many pairs each rule removes, per category")
    p.add_argument(
        "--aggregate",
        choices=AGGREGATIONS,
        default=None,
        help="how a field's labels become one value (default: the rules file's filter.aggregation, else majority); "
        "dawid-skene and mace model each annotator and use gold where present (mace: the extra mmrb-studio[aggregate])",
    )


def render_removed(result: FilterResult) -> str:
    considered = result.considered_per_category()
    cats = list(considered)
    removed = result.removed()
    kept = result.kept_per_category()
    width = max([len("considered")] + [len(r) for r in result.rules])
    cols = [max(len(c), 6) for c in cats]
    head = f"{'rule':<{width}}" + "".join(f"  {c:>{w}}" for c, w in zip(cats, cols, strict=True)) + f"  {'all':>6}"
    lines = [
        head,
        f"{'considered':<{width}}"
        + "".join(f"  {considered[c]:>{w}}" for c, w in zip(cats, cols, strict=True))
        + f"  {sum(considered.values()):>6}",
    ]
    for r in result.rules:
        row = removed.get(r, {})
        lines.append(
            f"{r:<{width}}"
            + "".join(f"  {row.get(c, 0):>{w}}" for c, w in zip(cats, cols, strict=True))
            + f"  {sum(row.values()):>6}"
        )
    lines.append(
        f"{'kept':<{width}}"
        + "".join(f"  {kept.get(c, 0):>{w}}" for c, w in zip(cats, cols, strict=True))
        + f"  {sum(kept.values()):>6}"
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from curate.benchmark import NoTriplets, build, dry_run, load_rules
    from curate.commands.common import open_store
    from curate.errors import MmrbError
    from curate.quality.aggregate import check_method

    rules = load_rules(args.rules)
    if args.aggregate:
        import dataclasses

        rules = dataclasses.replace(rules, aggregation=args.aggregate)
    check_method(rules.aggregation)  # an extra it needs (MACE's) checked before the store is read, not after
    if not args.dry_run and not args.out:
        raise MmrbError("--out DIR is required (or --dry-run)")
    with open_store(args) as store:
        if args.dry_run:
            result = dry_run(store, rules)
            print("Pairs removed by each rule (first rule that removes a pair), per category:")
            print(render_removed(result))
            return 0
        try:
            res = build(store, rules, args.out)
        except NoTriplets as e:  # the table says which rule removed the pairs, per category; main says the error
            print(render_removed(e.result))
            raise
    print(render_removed(res.result))
    print(f"wrote {plural(len(res.triplets), 'triplet')} to {res.out}")
    if res.mmrb2:
        per_task = ", ".join(f"{task} {n}" for task, n in res.mmrb2.items())
        print(f"MMRB2 layout in {res.out / 'mmrb2'}: {plural(sum(res.mmrb2.values()), 'triplet')} ({per_task})")
    for task, ids in res.mmrb2_refused.items():
        print(
            f"warning: MMRB2 layout: {task} not written: {plural(len(ids), 'pair')} (e.g. {ids[0]}) with labels "
            "that have a preference but no 1-6 score or grade; label them on mmrb2-pairwise or mmrb2-reasoning "
            "(mmrb assign --scheme) to have it. The other layouts hold them."
        )
    agg = res.aggregated
    if agg is not None and agg.method != "majority":
        print("\n".join(agg.lines()))
    if res.missing_images:
        print(
            f"{plural(len(res.missing_images), 'triplet', verb=('has', 'have'))} an image missing from the store "
            "(kept without it): "
            + ", ".join(res.missing_images[:10])
            + (" ..." if len(res.missing_images) > 10 else "")
        )
    return 0
