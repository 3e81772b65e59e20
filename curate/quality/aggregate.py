"""Several annotators' labels of a field made one: the majority rule, or a model of the
annotators, with gold where present: Dawid-Skene (curate/quality/dawid_skene.py: crowd-kit's
model on integer codes, measured faster, see there) or MACE from the crowd-kit library.

Input is a long frame of regular labels (control tasks left out by the caller), columns
``pair``, ``annotator``, ``field``, ``value``. Per field the result gives each pair's final
value, its majority (a unique modal value, else none: a tie between values decides nothing,
as in the build's rules), each annotator's estimated reliability, and how many final values
differ from the majority.

Gold: Dawid-Skene takes the gold values as known true labels while it fits (as crowd-kit's
``true_labels``); with every method a pair that has gold gets the gold value. Reliability:
Dawid-Skene's is the annotator's chance of giving the true value, averaged over the
estimated class priors (the diagonal of their confusion matrix weighted by the priors);
MACE's is the posterior probability that the annotator is not spamming; the majority rule's
is crowd-kit's agreement with the majority (their own label included; a tie goes to the
first value in sorted order, as crowd-kit's MajorityVote). The majority and Dawid-Skene work
on integer codes of pairs, annotators and values (``np.bincount``), not on frames of labels.

crowd-kit is imported when MACE is fitted, not with this module.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..agreement.limits import MIN_BOOTSTRAP_PAIRS, TOO_FEW_PAIRS
from ..errors import MmrbError
from ..extras import require_extra
from ..model import AGGREGATIONS, LABEL_FIELDS, Aggregation
from ..seeding import stable_hash
from ..wording import plural
from .dawid_skene import (
    LabelPatterns,
    bootstrap_reliability,
    dawid_skene,
    label_patterns,
    majority_skills,
    unique_majority,
    vote_counts,
)
from .frames import gold_by_field, store_frame

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from ..agreement.table import FieldLabels, LabelTable
    from ..store.protocols import AggregateStore

DS_ITERATIONS = 100
DS_TOLERANCE = 1e-5
DS_RESAMPLES = 200  # bootstrap resamples of a Dawid-Skene reliability's interval: one batched EM


@dataclass(frozen=True)
class Interval:
    """A 95% percentile bootstrap interval over pairs, or why there is none."""

    low: float | None
    high: float | None
    undefined: str | None = None

    def text(self) -> str:
        if self.low is None or self.high is None:
            return f"[undefined ({self.undefined})]"
        return f"[{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class FieldAggregate:
    name: str
    method: Aggregation
    final: dict[str, str]  # pair -> final value
    majority: dict[str, str]  # pair -> unique modal value (pairs with a tie are absent)
    reliability: dict[str, float] = field(default_factory=dict)  # annotator -> estimate
    from_gold: int = 0  # final values taken from gold
    intervals: dict[str, Interval] = field(default_factory=dict)  # annotator -> reliability's (Dawid-Skene, asked)

    @property
    def differ(self) -> int:
        """Final values that differ from a unique majority."""
        return sum(1 for p, v in self.majority.items() if self.final.get(p, v) != v)

    @property
    def decided_ties(self) -> int:
        """Pairs without a unique majority that got a final value."""
        return sum(1 for p in self.final if p not in self.majority)


@dataclass(frozen=True)
class Aggregated:
    method: Aggregation
    fields: dict[str, FieldAggregate]

    def value(self, pair_id: str, field_name: str) -> str | None:
        fa = self.fields.get(field_name)
        return None if fa is None else fa.final.get(pair_id)

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "fields": {
                name: {
                    "pairs": len(fa.final),
                    "differ_from_majority": fa.differ,
                    "decided_without_majority": fa.decided_ties,
                    "from_gold": fa.from_gold,
                    "reliability": fa.reliability,
                }
                for name, fa in self.fields.items()
            },
        }

    def lines(self) -> list[str]:
        out = [f"Aggregation: {self.method} (against the majority rule)"]
        for name, fa in self.fields.items():
            out.append(
                f"  {name}: {plural(len(fa.final), 'pair')} decided; {fa.differ} differ from a unique majority, "
                f"{fa.decided_ties} decided where the majority was tied, {fa.from_gold} from gold"
            )
            rel = ", ".join(f"{a} {r:.3f}" for a, r in fa.reliability.items())
            out.append(f"    estimated reliability: {rel}")
        return out


@contextmanager
def _quiet() -> Iterator[None]:
    """crowd-kit calls pandas in ways pandas 3 deprecates: not the user's concern."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"crowdkit(\.|$)")
        yield


def check_method(method: str) -> Aggregation:
    for m in AGGREGATIONS:
        if m == method:
            if m == "mace":  # before any work: the one aggregation on a package of the lean install's extras
                require_extra("aggregate", "the MACE aggregation")
            return m
    raise MmrbError(f"unknown aggregation {method!r}: use {', '.join(AGGREGATIONS)}")


@dataclass(frozen=True)
class CodedField:
    """One field's labels as integer codes (pairs, annotators and values each sorted), with
    the gold class of each pair (-1: none)."""

    pair: np.ndarray
    annotator: np.ndarray
    value: np.ndarray
    gold: np.ndarray
    pairs: np.ndarray
    annotators: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, frame: pd.DataFrame, gold: Mapping[str, str]) -> CodedField:
        """A gold value no label holds is a class too (Dawid-Skene may give it)."""
        pair, pairs = pd.factorize(frame["pair"], sort=True)
        annotator, annotators = pd.factorize(frame["annotator"], sort=True)
        value, observed = pd.factorize(frame["value"], sort=True)
        at = pd.Index(list(gold)).get_indexer(pairs) if gold else np.full(len(pairs), -1)
        has = at >= 0
        known = np.asarray(list(gold.values()), dtype=object)[at[has]] if gold else np.array([], dtype=object)
        values = np.asarray(observed, dtype=object)
        if len(known) and not np.isin(known, values).all():
            values = np.asarray(sorted({*values.tolist(), *known.tolist()}), dtype=object)
            value = pd.Index(values).get_indexer(observed)[value]
        code = np.full(len(pairs), -1, dtype=np.intp)
        code[has] = pd.Index(values).get_indexer(known)
        return cls(pair, annotator, value, code, np.asarray(pairs, dtype=object), np.asarray(annotators), values)

    @classmethod
    def of_table(cls, fl: FieldLabels, units: np.ndarray, annotators: Sequence[str], keep: np.ndarray) -> CodedField:
        """As ``of`` (no gold) of the frame ``curate.quality.frames.table_frame`` would make of
        a LabelTable's field, its labels of the units where ``keep``, read from the table's
        codes: units and annotators are sorted in the table, values sorted here."""
        sel = keep[fl.unit]
        used, pair = np.unique(fl.unit[sel], return_inverse=True)
        who, annotator = np.unique(fl.annotator[sel], return_inverse=True)
        codes, value = np.unique(fl.code[sel], return_inverse=True)
        observed = np.asarray(fl.spec.values, dtype=object)[codes]
        order = np.argsort(observed, kind="stable")
        rank = np.empty(len(order), dtype=np.intp)
        rank[order] = np.arange(len(order))
        return cls(
            pair,
            annotator,
            rank[value],
            np.full(len(used), -1, dtype=np.intp),
            np.asarray(units, dtype=object)[used],
            np.asarray(annotators, dtype=object)[who],
            observed[order],
        )

    def model_args(self) -> dict:
        """The arguments of a Dawid-Skene fit (curate/quality/dawid_skene.py) to these labels."""
        return {
            "task": self.pair,
            "worker": self.annotator,
            "value": self.value,
            "n_tasks": len(self.pairs),
            "n_workers": len(self.annotators),
            "n_classes": len(self.values),
            "gold": self.gold if (self.gold >= 0).any() else None,
            "n_iter": DS_ITERATIONS,
            "tol": DS_TOLERANCE,
        }

    def patterns(self) -> LabelPatterns:
        """The label patterns of these labels, shared by a fit and its bootstrap."""
        args = self.model_args()
        return label_patterns(
            args["task"],
            args["worker"],
            args["value"],
            n_tasks=args["n_tasks"],
            n_workers=args["n_workers"],
            n_classes=args["n_classes"],
            gold=args["gold"],
        )

    def counts(self) -> np.ndarray:
        return vote_counts(self.pair, self.value, len(self.pairs), len(self.values))

    def unique_majority(self, counts: np.ndarray) -> dict[str, str]:
        won = unique_majority(counts)
        at = np.flatnonzero(won >= 0)
        return dict(zip(self.pairs[at].tolist(), self.values[won[at]].tolist(), strict=True))


def majority(frame: pd.DataFrame) -> dict[str, str]:
    """pair -> the unique modal value of its labels (frame: pair, value)."""
    if frame.empty:
        return {}
    pair, pairs = pd.factorize(frame["pair"], sort=True)
    value, values = pd.factorize(frame["value"], sort=True)
    won = unique_majority(vote_counts(pair, value, len(pairs), len(values)))
    at = np.flatnonzero(won >= 0)
    return dict(zip(np.asarray(pairs, dtype=object)[at].tolist(), np.asarray(values)[won[at]].tolist(), strict=True))


def _majority_field(field_name: str, coded: CodedField) -> FieldAggregate:
    """The majority rule of one field's coded labels: each pair's unique modal value, each
    annotator's agreement with the majority (crowd-kit's MajorityVote skills)."""
    counts = coded.counts()
    maj = coded.unique_majority(counts)
    names = [str(a) for a in coded.annotators]
    skills = majority_skills(coded.pair, coded.annotator, coded.value, counts, len(names))
    reliability = {a: float(r) for a, r in zip(names, skills, strict=True)}
    return FieldAggregate(field_name, "majority", dict(maj), maj, dict(sorted(reliability.items())), 0, {})


def table_majority(table: LabelTable, fields: Sequence[str], pairs: Collection[str]) -> Aggregated:
    """``aggregate(table_frame(table, fields, pairs), "majority")`` from the table's codes:
    no long frame of every label (at 100,000 pairs the frame cost 1.2 s and 460 MB at its
    peak; the build's majority rule reads this)."""
    keep = np.fromiter((u in pairs for u in table.units), dtype=bool, count=len(table.units))
    order = {f: i for i, f in enumerate(LABEL_FIELDS)}
    out: dict[str, FieldAggregate] = {}
    for name in sorted(set(fields) & set(table.fields), key=lambda f: (order.get(f, len(order)), f)):
        fl = table.fields[name]
        if keep[fl.unit].any():  # a field without labels of these pairs is no field of the frame
            out[name] = _majority_field(name, CodedField.of_table(fl, table.units, table.annotators, keep))
    return Aggregated("majority", out)


def aggregate_field(
    frame: pd.DataFrame,
    method: str,
    *,
    field_name: str = "",
    gold: Mapping[str, str] | None = None,
    seed: int = 0,
    intervals: bool = False,
) -> FieldAggregate:
    """One field's labels (frame: pair, annotator, value) aggregated by ``method``; with
    ``intervals``, Dawid-Skene's reliabilities get bootstrap intervals (:func:`reliability_intervals`)."""
    m = check_method(method)
    gold = dict(gold or {})
    if frame.empty:
        return FieldAggregate(field_name, m, {}, {}, {}, 0)
    coded = CodedField.of(frame, gold if m == "dawid-skene" else {})
    counts = coded.counts()
    maj = coded.unique_majority(counts)
    names = [str(a) for a in coded.annotators]
    reliability: dict[str, float]
    spans: dict[str, Interval] = {}
    if m == "majority":
        fa = _majority_field(field_name, coded)
        final, reliability = fa.final, fa.reliability
    elif m == "dawid-skene":
        patterns = coded.patterns()
        fit = dawid_skene(**coded.model_args(), patterns=patterns)
        final = dict(zip(coded.pairs.tolist(), coded.values[fit.labels].tolist(), strict=True))
        reliability = {a: float(r) for a, r in zip(names, fit.reliability(), strict=True)}
        if intervals:
            bootstrap_seed = stable_hash("dawid-skene bootstrap", seed, field_name, nbytes=8)
            spans = reliability_intervals(coded, seed=bootstrap_seed, patterns=patterns)
    else:
        # deferred: crowd-kit takes over 1 s to import, and only MACE needs it
        from crowdkit.aggregation import MACE

        data = pd.DataFrame(
            {
                "task": frame["pair"].to_numpy(),
                "worker": frame["annotator"].to_numpy(),
                "label": frame["value"].to_numpy(),
            }
        )
        with _quiet():
            mace = MACE(n_restarts=5, n_iter=50, random_state=stable_hash("mace", seed, field_name, nbytes=4))
            mace.fit(data)
        if mace.labels_ is None:
            raise MmrbError(f"MACE fitted nothing on {field_name}")
        final = {str(k): str(v) for k, v in mace.labels_.items()}
        workers = pd.unique(data["worker"])
        reliability = {str(w): float(mace.spamming_[i, 1]) for i, w in enumerate(workers)}
    n_gold = 0
    for p, v in gold.items():
        if p in final or p in maj:
            final[p] = v
            n_gold += 1
    return FieldAggregate(field_name, m, final, maj, dict(sorted(reliability.items())), n_gold, spans)


def reliability_intervals(
    coded: CodedField, *, seed: int, resamples: int = DS_RESAMPLES, patterns: LabelPatterns | None = None
) -> dict[str, Interval]:
    """Per annotator: the 2.5th and 97.5th percentiles of Dawid-Skene's reliability over
    ``resamples`` resamples of the pairs with replacement (drawn from ``seed``, a stable hash
    of the field; the pairs in sorted order), gold kept on its pairs. Undefined ("too few
    pairs") for an annotator with fewer than MIN_BOOTSTRAP_PAIRS labelled pairs, the floor of
    every interval in the project."""
    n_pairs = np.bincount(coded.annotator, minlength=len(coded.annotators))
    names = [str(a) for a in coded.annotators]
    out = {
        a: Interval(None, None, TOO_FEW_PAIRS) for a, n in zip(names, n_pairs, strict=True) if n < MIN_BOOTSTRAP_PAIRS
    }
    if len(out) == len(names):
        return out
    draws = bootstrap_reliability(**coded.model_args(), resamples=resamples, seed=seed, patterns=patterns)
    for w, a in enumerate(names):
        if a not in out:
            low, high = np.nanpercentile(draws[:, w], [2.5, 97.5])
            out[a] = Interval(float(low), float(high))
    return dict(sorted(out.items()))


def aggregate(
    labels: pd.DataFrame, method: str, gold: Mapping[str, Mapping[str, str]] | None = None, *, seed: int = 0
) -> Aggregated:
    """Every field of a long frame (pair, annotator, field, value). ``gold``: field -> pair -> value."""
    m = check_method(method)
    gold = gold or {}
    order = {f: i for i, f in enumerate(LABEL_FIELDS)}
    parts = {str(name): part for name, part in labels.groupby("field", sort=True)}
    out: dict[str, FieldAggregate] = {}
    for name in sorted(parts, key=lambda f: (order.get(f, len(order)), f)):  # preference first
        out[name] = aggregate_field(parts[name], m, field_name=name, gold=gold.get(name), seed=seed)
    return Aggregated(m, out)


def store_aggregate(store: AggregateStore, method: str, *, pair_ids=None, seed: int = 0) -> Aggregated:
    """Aggregate the store's regular labels, with its gold answers."""
    return aggregate(store_frame(store, pair_ids), method, gold_by_field(store.gold().values()), seed=seed)


__all__ = [
    "Aggregated",
    "FieldAggregate",
    "Interval",
    "aggregate",
    "aggregate_field",
    "majority",
    "reliability_intervals",
    "store_aggregate",
]
