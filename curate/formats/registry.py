"""Every published format, one ``BenchmarkFormat`` each, registered in ``FORMATS``.

A format is its name (the one spelling of the command line, the files and the docs; an
earlier spelling is an alias), and what each stage does with it:

- ``ingest``: how ``mmrb ingest pairs --format NAME`` reads it, a function of
  curate/ingest: ``(path, categories, category) -> ImportPlan`` (curate/ingest/common.py);
- ``layouts``: its files ``mmrb score --dataset`` and ``mmrb evaluate`` read as dataset pairs,
  each told from the fields of a file's first record (``detect_layout``) and read by a
  ``PairReader`` of mmrb_eval/datasets.py;
- ``judgments``: how ``mmrb score --format NAME`` reads a judge's saved outputs, a function of
  mmrb_eval/formats.py: ``(path, dataset pairs | None, ReadOptions) -> JudgmentFile``;
  ``labelled``: the outputs carry the labels, so no ``--dataset`` is needed;
- ``export``: what ``mmrb build`` writes in it, a function of curate/benchmark/export.py:
  ``(folder, Export) -> counts``;
- ``presets``: the scoring presets (``mmrb_eval.scoring.PRESETS``) that give its scripts' figures.

The records themselves are read and written by the format's module in curate/formats. The
stages' functions are named here by ``module:attribute``, as the commands are entry points
(pyproject.toml), and each stage loads only its own (``load``): this module imports none of
them, so curate/formats still knows nothing of the store, the importer or scoring, and curate
never imports mmrb_eval.

Adding a format: its module in curate/formats, the functions of the stages it takes part in,
and one entry here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError, InputProblem

Role = Literal["ingest", "judgments", "export"]  # the stages a format names a function for


@dataclass(frozen=True)
class Layout:
    """A kind of file scoring reads as dataset pairs: its first record has every field of
    ``fields`` and, when ``any_of`` is given, one of those."""

    name: str
    fields: frozenset[str]
    pairs: str  # "mmrb_eval.datasets:READER", a PairReader
    any_of: frozenset[str] = frozenset()
    described: str = ""  # how the "unknown dataset layout" message names it (empty: not named)

    def matches(self, rec: Any) -> bool:
        if not isinstance(rec, Mapping):
            return False
        keys = set(rec)
        return self.fields <= keys and (not self.any_of or bool(self.any_of & keys))

    def reader(self) -> Any:
        """Its PairReader (mmrb_eval loads it)."""
        return load(self.pairs)


@dataclass(frozen=True)
class BenchmarkFormat:
    """One published format and what each stage does with it (see the module doc)."""

    name: str  # the one spelling
    title: str
    aliases: tuple[str, ...] = ()  # earlier spellings, still accepted
    ingest: str | None = None  # "curate.ingest.MODULE:FUNCTION"
    layouts: tuple[Layout, ...] = ()
    judgments: str | None = None  # "mmrb_eval.formats:FUNCTION"
    labelled: bool = False  # its judge outputs carry the labels (scored without --dataset)
    export: str | None = None  # "curate.benchmark.export:FUNCTION"
    presets: tuple[str, ...] = ()

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def load(self, role: Role) -> Any:
        """The function it names for ``role``, imported now (the stage that runs it calls this)."""
        hook = getattr(self, role)
        if hook is None:
            raise ValueError(f"the format {self.name} has no {role}")
        return load(hook)


def _fields(*names: str) -> frozenset[str]:
    return frozenset(names)


# In this order: detect_layout tries the layouts in it (a Multimodal RewardBench record before
# its judge output, MMRB2's chosen before the triplets'), and the commands list the names so.
FORMATS: tuple[BenchmarkFormat, ...] = (
    BenchmarkFormat(
        "mmrb",
        "Multimodal RewardBench",
        ingest="curate.ingest.mmrb:plan",
        layouts=(
            Layout(
                "mmrb",
                _fields("Output1", "Output2", "Better"),
                "mmrb_eval.datasets:MMRB_RECORDS",
                described="Multimodal RewardBench (ID, Text, Output1, Output2, Better)",
            ),
            Layout("mmrb_outputs", _fields("ID", "Label"), "mmrb_eval.datasets:MMRB_OUTPUTS"),
        ),
        judgments="mmrb_eval.formats:read_mmrb",
        labelled=True,
        export="curate.benchmark.export:write_mmrb",
        presets=("mmrb",),
    ),
    BenchmarkFormat(
        "mmrb2",
        "Multimodal RewardBench 2",
        ingest="curate.ingest.mmrb2:plan",
        layouts=(
            Layout(
                "mmrb2",
                _fields("response_a", "response_b", "chosen"),
                "mmrb_eval.datasets:MMRB2_GROUND_TRUTH",
                described="MMRB2 ({pairs: [id, response_a, response_b, chosen]})",
            ),
        ),
        judgments="mmrb_eval.formats:read_mmrb2",
        export="curate.benchmark.export:write_mmrb2",
        presets=("mmrb2",),
    ),
    BenchmarkFormat(
        "vlrewardbench",
        "VL-RewardBench",
        ingest="curate.ingest.vlrewardbench:plan_original",
        layouts=(
            Layout(
                "vlrewardbench",
                _fields("query", "response"),
                "mmrb_eval.datasets:VLRB_RECORDS",
                any_of=_fields("human_ranking", "ranking"),
                described="VL-RewardBench (id, query, response, human_ranking)",
            ),
        ),
        judgments="mmrb_eval.formats:read_vlrb",
        labelled=True,
        export="curate.benchmark.export:write_vlrb",
        presets=("vlrewardbench",),
    ),
    # the chosen/rejected copies below are read as datasets by the triplets' layout
    BenchmarkFormat("vlrewardbench-text", "VL-RewardBench, text copy", ingest="curate.ingest.vlrewardbench:plan_text"),
    BenchmarkFormat("mm-rlhf", "MM-RLHF-RewardBench", aliases=("mm_rlhf",), ingest="curate.ingest.mm_rlhf:plan"),
    BenchmarkFormat("generic", "any other pairs", ingest="curate.ingest.generic:plan"),
    BenchmarkFormat(
        "r1-rewards",
        "R1-Reward's rewards rows",
        aliases=("r1_rewards",),
        judgments="mmrb_eval.formats:read_rewards",
        labelled=True,
        presets=("r1-mmrb", "r1-vlrewardbench", "r1-mm-rlhf"),
    ),
    BenchmarkFormat("mmrb-studio", "this project's judgments JSONL", judgments="mmrb_eval.formats:read_own"),
    BenchmarkFormat(
        "triplets",
        "the project's triplets (mmrb build) and the chosen/rejected copies",
        layouts=(
            Layout(
                "triplet",
                _fields("chosen", "rejected"),
                "mmrb_eval.datasets:TRIPLETS",
                described="triplets (id, prompt, chosen, rejected)",
            ),
        ),
        export="curate.benchmark.export:write_triplets",
    ),
)

# what each command offers, in FORMATS' order
PAIR_FORMATS: tuple[str, ...] = tuple(f.name for f in FORMATS if f.ingest)  # mmrb ingest pairs --format
JUDGMENT_FORMATS: tuple[str, ...] = tuple(f.name for f in FORMATS if f.judgments)  # mmrb score --format
LABELLED: tuple[str, ...] = tuple(f.name for f in FORMATS if f.judgments and f.labelled)
EXPORTED: tuple[BenchmarkFormat, ...] = tuple(f for f in FORMATS if f.export)  # mmrb build
LAYOUTS: tuple[Layout, ...] = tuple(layout for f in FORMATS for layout in f.layouts)

_BY_SPELLING = {s: f for f in FORMATS for s in f.spellings}


def find(name: str) -> BenchmarkFormat | None:
    """The format of a name or an alias, or None."""
    return _BY_SPELLING.get(name)


def canonical(name: str) -> str:
    """The one spelling of a format's name or alias (a name no format has, as given): the
    ``type`` of the commands' ``--format``, whose ``choices`` then refuse an unknown one."""
    f = find(name)
    return f.name if f else name


def lookup(name: str, role: Role, path: str | Path, what: str = "format") -> BenchmarkFormat:
    """The format ``name`` (or an alias) names, when it has ``role`` (``ingest``,
    ``judgments``...); else an error about ``path`` naming the formats that have it."""
    f = find(name)
    if f is None or not getattr(f, role):
        known = ", ".join(g.name for g in FORMATS if getattr(g, role))
        raise InputError([InputProblem(str(path), None, None, f"unknown {what} {name!r}; known: {known}")])
    return f


def detect_layout(rec: Any, path: str | Path) -> Layout:
    """The layout of a benchmark file, from the fields of its first record."""
    found = next((layout for layout in LAYOUTS if layout.matches(rec)), None)
    if found is not None:
        return found
    named = [layout.described for layout in LAYOUTS if layout.described]
    raise InputError(
        [
            InputProblem(
                str(path),
                None,
                None,
                f"unknown dataset layout: expected {', '.join(named[:-1])} or {named[-1]}",
            )
        ]
    )


def load(hook: str) -> Any:
    """The function (or object) a format names for a stage, ``module:attribute``, imported now.
    A stage loads only its own: curate/ingest the ``ingest`` hooks, the build ``export``,
    mmrb_eval the ``layouts`` and ``judgments``."""
    module, _, attr = hook.partition(":")
    return getattr(importlib.import_module(module), attr)
