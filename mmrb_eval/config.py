"""Judge configuration files (``--judge judge.toml``) and the scoring flags of the CLI.

A VLM judge::

    name = "gpt-4o"
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o"
    api_key_env = "OPENAI_API_KEY"
    template = "mmrb"          # mmrb | vlrewardbench | r1 | ratings | mmrb2 | a template file
    parser = "brackets"        # optional: override the template's parser (or "regex:...")
    concurrency = 16
    max_response_chars = 200000  # longer (and empty) answers are failed requests, never scored
    [params]
    temperature = 0.0
    max_tokens = 1024

A reward model::

    kind = "reward_model"
    name = "my-rm"
    url = "http://127.0.0.1:8000/score"
    response_field = "score"
    [request]
    prompt = "{prompt}"
    response = "{response}"
    image = "{image}"
    response_images = "{response_images}"  # the response's images (data URLs), for image responses

(``{response_content}`` sends the response as OpenAI-style content parts instead; see
mmrb_eval/reward_model.py.)
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curate.configfile import read_table
from curate.errors import InputError, InputProblem
from curate.model import ORDERS

from .rules import GROUPINGS
from .scoring import (
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

if TYPE_CHECKING:  # the runners import the store and HTTP clients: not for `mmrb evaluate --help`
    from curate.judging.runner import JudgeConfig

    from .reward_model import RewardModelConfig

ENDPOINT_KEYS = ("concurrency", "timeout", "max_retries", "backoff_base", "backoff_max", "max_response_chars")


def load_judge(path: str | Path, **overrides: Any) -> JudgeConfig | RewardModelConfig:
    from curate.judging.runner import JudgeConfig
    from curate.judging.templates import get_template
    from curate.llm import Endpoint

    from .reward_model import RewardModelConfig

    p = Path(path)
    if not p.exists():
        raise InputError([InputProblem(str(p), None, None, "judge configuration not found")])
    d = read_table(p, what="judge configuration")
    overrides = {k: v for k, v in overrides.items() if v is not None}

    def need(key: str) -> Any:
        if key not in d:
            raise InputError([InputProblem(str(p), None, key, "missing")])
        return d[key]

    kind = d.get("kind", "vlm")
    allow_missing = bool(overrides.get("allow_missing_images", d.get("allow_missing_images", False)))
    if kind == "reward_model":
        kw: dict[str, Any] = {
            k: d[k] for k in ("request", "response_field", "headers", "api_key_env", "max_image_side") if k in d
        }
        kw.update({k: d[k] for k in ENDPOINT_KEYS if k in d and k in RewardModelConfig.__dataclass_fields__})
        if "concurrency" in overrides:
            kw["concurrency"] = overrides["concurrency"]
        return RewardModelConfig(
            name=str(d.get("name") or need("url")), url=need("url"), allow_missing_images=allow_missing, **kw
        )
    if kind != "vlm":
        raise InputError([InputProblem(str(p), None, "kind", "must be vlm or reward_model")])
    template_ref = str(d.get("template", "mmrb"))
    if not Path(template_ref).is_absolute() and (p.parent / template_ref).exists():
        template_ref = str(p.parent / template_ref)
    try:
        template = get_template(template_ref, d.get("parser"))
    except ValueError as e:
        raise InputError([InputProblem(str(p), None, "parser", str(e))]) from None
    ep_kw = {k: d[k] for k in ENDPOINT_KEYS if k in d}
    if "concurrency" in overrides:
        ep_kw["concurrency"] = overrides["concurrency"]
    endpoint = Endpoint(
        base_url=need("base_url"),
        model=need("model"),
        name=str(d.get("name", "")),
        api_key_env=d.get("api_key_env"),
        params=dict(d.get("params", {})),
        **ep_kw,
    )
    return JudgeConfig(
        endpoint=endpoint,
        template=template,
        order=overrides.get("order", d.get("order", "fixed")),
        samples=int(overrides.get("samples", d.get("samples", 1))),
        seed=int(overrides.get("seed", d.get("seed", 0))),
        max_image_side=d.get("max_image_side", 1024),
        allow_missing_images=allow_missing,
    )


def with_response_limit(cfg: JudgeConfig | RewardModelConfig, limit: int | None) -> JudgeConfig | RewardModelConfig:
    """The judge with longer answers treated as failures (``limit`` None: as configured)."""
    from curate.judging.runner import JudgeConfig  # here, not at the top: --help stays light

    if limit is None:
        return cfg
    if isinstance(cfg, JudgeConfig):
        return replace(cfg, endpoint=replace(cfg.endpoint, max_response_chars=limit))
    return replace(cfg, max_response_chars=limit)


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
            raise ValueError(f"--weights must look like CAT=W,CAT=W, not {args.weights!r}") from None
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
