"""Judge configuration: the one reader of a judge's settings, for ``mmrb evaluate`` (a judge
file, ``--judge judge.toml``: one judge) and ``mmrb select`` (a models file, whose entries are
its judges). Every problem is an InputError naming the file, and the field.

A VLM judge::

    name = "gpt-4o"
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o"
    api_key_env = "OPENAI_API_KEY"
    template = "mmrb"          # mmrb | vlrewardbench | r1 | ratings | mmrb2 | a template file
    parser = "brackets"        # optional: override the template's parser (or "regex:...")
    order = "fixed"            # fixed | random | both; samples = 1; seed = 0
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
curate/judging/reward_model.py.) Both take the endpoint settings of curate/llm.py
(``timeout``, ``max_retries``, ``backoff_base``, ``backoff_max``, ``headers``, ...).

Each kind is an entry of ``JUDGE_KINDS``: the keys its table may hold, how the table becomes
the judge, and how a stored run of it plans its judgments (mmrb_eval/runs.py's health).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..configfile import read_table
from ..errors import InputError, InputProblem
from ..llm import ENDPOINT_KEYS, Endpoint, endpoint_problems, read_models_file
from .judge import Judge, Plan
from .order import ORDER_POLICIES
from .parsing import get_parser
from .reward_model import RewardModel
from .templates import Template, get_template
from .vlm import VLMJudge


@dataclass(frozen=True)
class Source:
    """Where a judge's table was read: its file (relative template files are found beside
    it), its line and the name of its table in the file ("models[2]", or none)."""

    file: Path
    line: int | None = None
    table: str = ""

    def problem(self, key: str | None, message: str) -> InputProblem:
        field = ".".join(x for x in (self.table, key) if x) or None
        return InputProblem(str(self.file), self.line, field, message)


@dataclass(frozen=True)
class JudgeKind:
    keys: frozenset[str]  # the keys a table of this kind may hold
    problems: Callable[[Mapping[str, Any]], list[tuple[str, str]]]  # (key, message) of a table
    read: Callable[[Mapping[str, Any], Source], Judge]  # a checked table -> the judge
    stored_plan: Callable[[Mapping[str, Any]], Callable[[str], Plan]]  # a stored run's identity -> its plan


def _is_int(v: Any, low: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= low


def _judge_settings(t: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The settings every kind shares: how images are shown."""
    out = []
    if t.get("max_image_side") is not None and not _is_int(t["max_image_side"], 1):
        out.append(("max_image_side", f"must be a positive integer, got {t['max_image_side']!r}"))
    if not isinstance(t.get("allow_missing_images", False), bool):
        out.append(("allow_missing_images", "must be true or false"))
    return out


# -- a VLM judge -----------------------------------------------------------------------------
VLM_KEYS = ENDPOINT_KEYS | {
    "kind",
    "template",
    "parser",
    "order",
    "samples",
    "seed",
    "max_image_side",
    "allow_missing_images",
}


def _vlm_problems(t: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = endpoint_problems(t) + _judge_settings(t)
    if t.get("order", "fixed") not in ORDER_POLICIES:
        out.append(("order", f"must be one of {', '.join(ORDER_POLICIES)}, got {t['order']!r}"))
    if not _is_int(t.get("samples", 1), 1):
        out.append(("samples", f"must be a positive integer, got {t['samples']!r}"))
    if not _is_int(t.get("seed", 0), -(2**63)):
        out.append(("seed", f"must be an integer, got {t['seed']!r}"))
    for k in ("template", "parser"):
        if k in t and not isinstance(t[k], (str, Template)):
            out.append((k, "must be a string"))
    return out


def _vlm(t: Mapping[str, Any], src: Source) -> VLMJudge:
    """``template``: a name, a file (beside the judge file when one is there), or a template
    already read (a command's own ``--template``); ``parser`` overrides its parser."""
    ref = t.get("template", "mmrb")
    try:
        if isinstance(ref, Template):
            template = replace(ref, parser=t["parser"]) if t.get("parser") else ref
            get_parser(template.parser)
        else:
            if not Path(ref).is_absolute() and (src.file.parent / ref).exists():
                ref = str(src.file.parent / ref)
            template = get_template(ref, t.get("parser"))
    except ValueError as e:
        raise InputError([src.problem("parser", str(e))]) from None
    return VLMJudge(
        endpoint=Endpoint(**{k: v for k, v in t.items() if k in ENDPOINT_KEYS}),
        template=template,
        order=t.get("order", "fixed"),
        samples=t.get("samples", 1),
        seed=t.get("seed", 0),
        max_image_side=t.get("max_image_side", 1024),
        allow_missing_images=t.get("allow_missing_images", False),
    )


# -- a reward model --------------------------------------------------------------------------
RM_KEYS = frozenset(
    {"kind", "name", "url", "request", "response_field", "headers", "api_key_env", "max_image_side"}
    | {"allow_missing_images", "concurrency", "timeout", "max_retries", "backoff_base", "backoff_max"}
    | {"max_response_chars"}
)


def _rm_problems(t: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = endpoint_problems(t, required=("url",), url_key="url") + _judge_settings(t)
    if "request" in t and not isinstance(t["request"], dict):
        out.append(("request", "must be a table (the JSON body sent, with placeholders)"))
    if "response_field" in t and not isinstance(t["response_field"], str):
        out.append(("response_field", "must be a string (a dotted path)"))
    return out


def _rm(t: Mapping[str, Any], src: Source) -> RewardModel:
    keys = RM_KEYS - {"kind", "name", "url"}
    return RewardModel(name=str(t.get("name") or t["url"]), url=t["url"], **{k: v for k, v in t.items() if k in keys})


JUDGE_KINDS: dict[str, JudgeKind] = {
    "vlm": JudgeKind(VLM_KEYS, _vlm_problems, _vlm, VLMJudge.stored_plan),
    "reward_model": JudgeKind(RM_KEYS, _rm_problems, _rm, RewardModel.stored_plan),
}


def stored_plan(identity: Mapping[str, Any]) -> Callable[[str], Plan] | None:
    """The plan of a stored run from its identity; None for a kind this version does not know."""
    kind = JUDGE_KINDS.get(identity.get("kind", ""))
    return kind.stored_plan(identity) if kind else None


# -- reading ---------------------------------------------------------------------------------
def judge_from_table(
    table: Mapping[str, Any],
    src: Source,
    defaults: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Judge:
    """A judge from its table: ``defaults`` under it, ``overrides`` (a command's options;
    None values are not given) over it, each only where the judge's kind has the key."""
    kind_name = table.get("kind", "vlm")
    kind = JUDGE_KINDS.get(kind_name) if isinstance(kind_name, str) else None
    if kind is None:
        raise InputError([src.problem("kind", f"must be one of {', '.join(JUDGE_KINDS)}, got {kind_name!r}")])
    given = {k: v for k, v in (overrides or {}).items() if v is not None and k in kind.keys}
    t = {**{k: v for k, v in (defaults or {}).items() if k in kind.keys}, **table, **given}
    known = ", ".join(sorted(kind.keys))
    problems = [src.problem(k, f"unknown key (known: {known})") for k in sorted(set(t) - kind.keys)]
    problems += [src.problem(k, message) for k, message in kind.problems(t)]
    if problems:
        raise InputError(problems)
    return kind.read(t, src)


def load_judge(path: str | Path, **overrides: Any) -> Judge:
    """The judge of a judge file (``mmrb evaluate --judge``); ``overrides``: the command's
    options (``order``, ``samples``, ``seed``, ``concurrency``, ``allow_missing_images``,
    ``max_response_chars``), None where not given."""
    p = Path(path)
    if not p.exists():
        raise InputError([InputProblem(str(p), None, None, "judge configuration not found")])
    return judge_from_table(read_table(p, what="judge configuration"), Source(p), overrides=overrides)


def load_judges(
    path: str | Path, defaults: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None
) -> list[Judge]:
    """The judges of a models file (``mmrb select --judges``), one per entry, each read as a
    judge file is; every problem of every entry is reported at once."""
    entries, problems = read_models_file(path)
    judges: list[Judge] = []
    seen: dict[str, str] = {}
    for e in entries:
        src = Source(Path(path), e.line, e.where)
        try:
            judge = judge_from_table(e.table, src, defaults, overrides)
        except InputError as err:
            problems += err.problems
            continue
        if judge.name in seen:
            twice = f"judge {judge.name!r} is listed twice (also {seen[judge.name]}): give each a distinct name"
            problems.append(src.problem("name", twice))
            continue
        seen[judge.name] = e.where
        judges.append(judge)
    if problems:
        raise InputError(problems)
    return judges


__all__ = [
    "JUDGE_KINDS",
    "JudgeKind",
    "Source",
    "judge_from_table",
    "load_judge",
    "load_judges",
    "stored_plan",
]
