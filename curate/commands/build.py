"""``mmrb build``: filter the labelled pairs and write the final benchmark."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..model import AGGREGATIONS
from ..wording import plural

if TYPE_CHECKING:
    from curate.benchmark import BuildResult
    from curate.benchmark.filter import FilterResult

HELP = (
    "filter labelled pairs by rules and write the benchmark (JSONL, Parquet, HF dataset, MMRB/VLRB/MMRB2 layouts, card)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_quiet_option, add_store_options

    add_store_options(p)
    add_quiet_option(p)
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
    p.add_argument(
        "--json", action="store_true", help="print the summary as JSON (its schema: docs/json.md); warnings on stderr"
    )


# the table fits a terminal of this many columns: wider, its categories are printed in blocks
# (it was about 160 columns wide on the sample's nine categories)
TABLE_WIDTH = 100


def render_removed(result: FilterResult, width: int = TABLE_WIDTH) -> str:
    """Pairs considered, removed by each rule and kept, per category (a column each, then
    ``all``), in blocks of categories that fit ``width`` columns, each block with the rule names."""
    considered = result.considered_per_category()
    removed = result.removed()
    rows = [("considered", considered), *((r, removed.get(r, {})) for r in result.rules)]
    rows.append(("kept", result.kept_per_category()))
    first = max(len(name) for name, _ in rows)
    columns = [(c, [counts.get(c, 0) for _, counts in rows]) for c in considered]
    columns.append(("all", [sum(counts.values()) for _, counts in rows]))
    blocks: list[list[tuple[str, list[int], int]]] = [[]]
    used = first
    for name, values in columns:
        w = max(len(name), 6, *(len(str(v)) for v in values))
        if blocks[-1] and used + 2 + w > width:
            blocks.append([])
            used = first
        blocks[-1].append((name, values, w))
        used += 2 + w
    lines: list[str] = []
    for block in blocks:
        if lines:
            lines.append("")
        lines.append(f"{'rule':<{first}}" + "".join(f"  {name:>{w}}" for name, _, w in block))
        for i, (rule, _) in enumerate(rows):
            lines.append(f"{rule:<{first}}" + "".join(f"  {values[i]:>{w}}" for _, values, w in block))
    return "\n".join(lines)


def _warnings(res: BuildResult) -> list[str]:
    return [
        f"warning: MMRB2 layout: {task} not written: {plural(len(ids), 'pair')} (e.g. {ids[0]}) with labels "
        "that have a preference but no 1-6 score or grade; label them on mmrb2-pairwise or mmrb2-reasoning "
        "(mmrb assign --scheme) to have it. The other layouts hold them."
        for task, ids in res.mmrb2_refused.items()
    ]


def run(args: argparse.Namespace) -> int:
    import sys

    from curate.benchmark import NoTriplets, build, build_steps, dry_run, load_rules
    from curate.commands.common import open_store, print_json, steps
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
            if args.json:
                print_json({"dry_run": True, **result.as_dict()})
                return 0
            print("Pairs removed by each rule (first rule that removes a pair), per category:")
            print(render_removed(result))
            return 0
        try:
            with steps(build_steps(), quiet=args.quiet) as step:
                res = build(store, rules, args.out, step=step)
        except NoTriplets as e:  # the table says which rule removed the pairs, per category; main says the error
            print(render_removed(e.result), file=sys.stderr if args.json else sys.stdout)
            raise
    if args.json:
        print_json({"dry_run": False, **res.as_dict()})
        for line in _warnings(res):
            print(line, file=sys.stderr)
        return 0
    print(render_removed(res.result))
    print(f"wrote {plural(len(res.triplets), 'triplet')} to {res.out}")
    if res.mmrb2:
        per_task = ", ".join(f"{task} {n}" for task, n in res.mmrb2.items())
        print(f"MMRB2 layout in {res.out / 'mmrb2'}: {plural(sum(res.mmrb2.values()), 'triplet')} ({per_task})")
    for line in _warnings(res):
        print(line)
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
