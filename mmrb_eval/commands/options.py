"""The scoring flags of ``mmrb evaluate``, ``mmrb score`` and ``mmrb leaderboard``: every rule
of mmrb_eval/scoring.py as an option, read back into ``ScoringOptions``."""

from __future__ import annotations

import argparse

from curate.errors import MmrbError
from curate.model import ORDERS

from ..rules import GROUPINGS
from ..scoring import (
    AGGREGATES,
    BOTH_POLICIES,
    MISSING_POLICIES,
    PARSE_FAILURE,
    PRESETS,
    SPLIT_POLICIES,
    TIE_POLICIES,
    VERDICT_RULE_NAMES,
    ScoringOptions,
    parse_subsplit,
    preset_options,
)


def add_scoring_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scoring rules (every rule is echoed in the report)")
    g.add_argument("--preset", choices=sorted(PRESETS), help="the official rules of a benchmark's own script")
    g.add_argument("--aggregate", choices=AGGREGATES, help="score every judgment, or a majority vote per pair")
    g.add_argument(
        "--parse-failure",
        choices=PARSE_FAILURE,
        help="what an answer without a readable verdict scores (default wrong); a failed request is never scored",
    )
    g.add_argument(
        "--verdicts",
        choices=VERDICT_RULE_NAMES,
        help="re-read judge texts with a benchmark script's rule (default stored)",
    )
    g.add_argument("--groups", choices=list(GROUPINGS), help="how pairs are grouped (default: their category)")
    g.add_argument(
        "--both",
        choices=BOTH_POLICIES,
        help="an output naming both answers: a parse failure, or A (the Multimodal RewardBench rule)",
    )
    g.add_argument("--ties", choices=TIE_POLICIES, help="what a tie scores (default wrong)")
    g.add_argument(
        "--split",
        choices=SPLIT_POLICIES,
        help="majority vote with no majority (default excluded)",
    )
    g.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        help="dataset pairs without any judgment (default excluded, always counted)",
    )
    g.add_argument("--samples-used", type=int, help="only the first N samples of each order")
    g.add_argument("--orders", choices=("both", *ORDERS), help="which display orders to score")
    g.add_argument("--coin-seed", type=int, help="seed of the coin for unparsed verdicts (default 123)")
    g.add_argument(
        "--subsplit", action="append", metavar="CAT:PREFIX=NAME,*=NAME", help="split a category by id prefix"
    )
    g.add_argument(
        "--weights", metavar="CAT=W,...", help="weights of the size-weighted average (default: pairs per category)"
    )
    g.add_argument("--bootstrap", type=int, help="bootstrap resamples for the 95%% intervals (default 1000; 0 = none)")
    g.add_argument("--bootstrap-seed", type=int)
    g.add_argument("--confidence", type=float, help="interval level (default 0.95)")


def options_from_args(args: argparse.Namespace) -> ScoringOptions:
    orders = None if not args.orders else ORDERS if args.orders == "both" else (args.orders,)
    subsplits = None
    if args.subsplit:
        subsplits = dict(parse_subsplit(s) for s in args.subsplit)
    weights = None
    if args.weights:
        try:
            weights = {k.strip(): float(v) for k, v in (x.split("=", 1) for x in args.weights.split(","))}
        except ValueError:
            raise MmrbError(f"--weights must look like CAT=W,CAT=W, not {args.weights!r}") from None
    return preset_options(
        args.preset,
        aggregate=args.aggregate,
        parse_failure=args.parse_failure,
        verdict_rule=args.verdicts,
        grouping=args.groups,
        both=args.both,
        ties=args.ties,
        split=args.split,
        missing=args.missing,
        samples_used=args.samples_used,
        orders=orders,
        seed=args.coin_seed,
        subsplits=subsplits,
        weights=weights,
        bootstrap=args.bootstrap,
        bootstrap_seed=args.bootstrap_seed,
        confidence=args.confidence,
    )
