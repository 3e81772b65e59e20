"""Filter and export rules, read from a TOML or YAML file (see data/sample/rules.toml)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..configfile import read_table
from ..errors import InputError, InputProblem, MmrbError
from ..model import AGGREGATIONS, Aggregation

AGREEMENT_FIELDS = ("preference", "correctness_first", "correctness_second")
# a field of a pair's scheme by its label name (score, grade_first, helpfulness_second, ...)
FIELD_NAME = re.compile(r"^[a-z][a-z0-9_]{0,59}$")


@dataclass(frozen=True)
class Threshold:
    """Per-field agreement: the modal value must be unique and hold at least ``share`` of the
    labels that give the field (``unanimous`` is share 1)."""

    share: float

    @property
    def unanimous(self) -> bool:
        return self.share >= 1.0


@dataclass(frozen=True)
class Rules:
    statuses: tuple[str, ...] = ("candidate", "selected")
    min_labels: int = 1
    flagged_out: bool = True
    agreement: dict[str, Threshold] = field(default_factory=dict)
    # a scale field by name -> how far the mean of a pair's labels must lie from the scale's
    # midpoint (the scheme's preference midpoint for its preference field, else the middle point)
    margin: dict[str, float] = field(default_factory=dict)
    # a field by name -> the floor of Krippendorff's alpha on it in the pair's category (among
    # the pairs considered); an undefined alpha does not pass
    alpha: dict[str, float] = field(default_factory=dict)
    # the correctness task's rule (filter.in_correctness_task: task "correctness" or category
    # open_generation/correctness_task): chosen judged correct, rejected incorrect
    correctness_task: bool = True
    adjudication: bool = True
    missing_images: str = "keep"  # "keep" (the triplet keeps the images that exist) or "drop"
    # how a field's labels become one value (curate/quality/aggregate.py): the labels' unique
    # modal value, or a model of the annotators with gold where present
    aggregation: Aggregation = "majority"
    seed: int = 0
    resamples: int = 1000
    name: str = "mmrb-studio benchmark"
    description: str = ""
    license: str = "other"
    license_note: str = ""
    # the card's Hub metadata, each only when given: language codes (ISO 639-1, "en"), extra
    # tags, the datasets the prompts came from (Hub ids), a BibTeX entry
    language: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    source_datasets: tuple[str, ...] = ()
    citation: str = ""

    def as_dict(self) -> dict:
        return {
            "filter": {
                "statuses": list(self.statuses),
                "min_labels": self.min_labels,
                "flagged_out": self.flagged_out,
                "agreement": {k: {"majority": v.share} for k, v in sorted(self.agreement.items())},
                # only when given: a build without them keeps the manifest it had
                **({"margin": dict(sorted(self.margin.items()))} if self.margin else {}),
                **({"alpha": dict(sorted(self.alpha.items()))} if self.alpha else {}),
                "correctness_task": self.correctness_task,
                "adjudication": self.adjudication,
                "missing_images": self.missing_images,
                "aggregation": self.aggregation,
            },
            "export": {"seed": self.seed, "resamples": self.resamples},
            "card": {
                "name": self.name,
                "description": self.description,
                "license": self.license,
                "license_note": self.license_note,
                # only when given, as margin and alpha above
                **{k: list(v) for k, v in self.card_lists().items() if v},
                **({"citation": self.citation} if self.citation else {}),
            },
        }

    def card_lists(self) -> dict[str, tuple[str, ...]]:
        return {"language": self.language, "tags": self.tags, "source_datasets": self.source_datasets}


_KNOWN = {
    "filter": {
        "statuses",
        "min_labels",
        "flagged_out",
        "agreement",
        "margin",
        "alpha",
        "correctness_task",
        "adjudication",
        "missing_images",
        "aggregation",
    },
    "export": {"seed", "resamples"},
    "card": {"name", "description", "license", "license_note", "language", "tags", "source_datasets", "citation"},
}


def load_rules(path: str | Path) -> Rules:
    path = Path(path)
    name = str(path)
    if not path.exists():
        raise MmrbError(f"{name}: no such rules file")
    data = read_table(path, yaml_ok=True, what="rules file")
    problems: list[InputProblem] = []

    def bad(key: str, msg: str) -> None:
        problems.append(InputProblem(name, None, key, msg))

    for section, value in data.items():
        if section not in _KNOWN:
            bad(section, f"unknown section (known: {', '.join(_KNOWN)})")
        elif not isinstance(value, dict):
            bad(section, "must be a table")
        else:
            for k in value:
                if k not in _KNOWN[section]:
                    bad(f"{section}.{k}", f"unknown key (known: {', '.join(sorted(_KNOWN[section]))})")
    f: dict[str, Any] = data.get("filter", {}) if isinstance(data.get("filter"), dict) else {}
    e: dict[str, Any] = data.get("export", {}) if isinstance(data.get("export"), dict) else {}
    c: dict[str, Any] = data.get("card", {}) if isinstance(data.get("card"), dict) else {}

    def typed(section: dict, sec: str, key: str, typ, default):
        v = section.get(key, default)
        if typ is int and isinstance(v, bool) or not isinstance(v, typ):
            bad(f"{sec}.{key}", f"expected {typ.__name__ if isinstance(typ, type) else 'a number'}, got {v!r}")
            return default
        return v

    def strings(key: str) -> tuple[str, ...]:
        v = c.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
            bad(f"card.{key}", f"expected a list of non-empty strings, got {v!r}")
            return ()
        return tuple(v)

    agreement: dict[str, Threshold] = {}
    for fname, spec in (f.get("agreement") or {}).items():
        key = f"filter.agreement.{fname}"
        if not FIELD_NAME.match(str(fname)):
            bad(key, "a field's label name: preference, correctness_first, or a field of the pairs' schemes (score)")
            continue
        if not isinstance(spec, dict) or set(spec) - {"majority", "unanimous"} or len(spec) != 1:
            bad(key, "expected { majority = 0.67 } or { unanimous = true }")
            continue
        if "unanimous" in spec:
            if spec["unanimous"] is not True:
                bad(key, "unanimous must be true (leave the field out for no rule)")
                continue
            agreement[fname] = Threshold(1.0)
        else:
            share = spec["majority"]
            if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
                bad(key, f"majority must be a share in (0, 1], got {share!r}")
                continue
            agreement[fname] = Threshold(float(share))
    floors: dict[str, dict[str, float]] = {"margin": {}, "alpha": {}}
    for rule, (low, high, what) in {
        "margin": (0.0, math.inf, "a distance from the midpoint, at least 0"),
        "alpha": (-1.0, 1.0, "an alpha floor from -1 to 1"),
    }.items():
        table = f.get(rule) or {}
        if not isinstance(table, dict):
            bad(f"filter.{rule}", "expected a table of fields: { score = 1.5 }")
            continue
        for fname, v in table.items():
            key = f"filter.{rule}.{fname}"
            if not FIELD_NAME.match(str(fname)):
                bad(key, "a field's label name (score, helpfulness_first, ...)")
            elif isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
                bad(key, f"expected {what}, got {v!r}")
            else:
                floors[rule][fname] = float(v)
    statuses = f.get("statuses", ["candidate", "selected"])
    if not isinstance(statuses, list) or not statuses or set(statuses) - {"candidate", "selected", "dropped"}:
        bad("filter.statuses", "expected a list of pair statuses: candidate, selected, dropped")
        statuses = ["candidate", "selected"]
    missing = f.get("missing_images", "keep")
    if missing not in ("keep", "drop"):
        bad("filter.missing_images", "expected keep or drop")
    aggregation = next((a for a in AGGREGATIONS if a == f.get("aggregation", "majority")), None)
    if aggregation is None:
        bad("filter.aggregation", f"expected one of {', '.join(AGGREGATIONS)}")
        aggregation = "majority"
    min_labels = typed(f, "filter", "min_labels", int, 1)
    if min_labels < 1:
        bad("filter.min_labels", "must be at least 1")
    rules = Rules(
        statuses=tuple(statuses),
        min_labels=min_labels,
        flagged_out=typed(f, "filter", "flagged_out", bool, True),
        agreement=agreement,
        margin=floors["margin"],
        alpha=floors["alpha"],
        correctness_task=typed(f, "filter", "correctness_task", bool, True),
        adjudication=typed(f, "filter", "adjudication", bool, True),
        missing_images=missing,
        aggregation=aggregation,
        seed=typed(e, "export", "seed", int, 0),
        resamples=typed(e, "export", "resamples", int, 1000),
        name=typed(c, "card", "name", str, "mmrb-studio benchmark"),
        description=typed(c, "card", "description", str, ""),
        license=typed(c, "card", "license", str, "other"),
        license_note=typed(c, "card", "license_note", str, ""),
        language=strings("language"),
        tags=strings("tags"),
        source_datasets=strings("source_datasets"),
        citation=typed(c, "card", "citation", str, ""),
    )
    if problems:
        raise InputError(problems)
    return rules
