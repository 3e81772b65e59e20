"""The agreement report: every statistic per field, overall and per category."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..store.columns import sorted_codes
from ..wording import plural
from . import stats as st
from .stats import Estimate
from .table import FieldLabels, FieldSpec, LabelTable

if TYPE_CHECKING:
    from ..quality.reliability import QualityReport

DEFAULT_MIN_SHARED = 10  # pairs two annotators must share for a Cohen kappa


@dataclass
class FieldReport:
    name: str
    level: str
    scale: tuple[str, ...]
    scale_source: str
    n_pairs: int  # pairs with at least one label of this field
    n_pairable: int  # pairs with two or more
    n_labels: int
    labels_per_pair: dict[int, int]
    value_counts: dict[str, int]
    alpha: Estimate
    percent_agreement: Estimate
    ac1: Estimate
    fleiss_kappa: Estimate
    fleiss_kappa_missing: Estimate
    cohen: list[dict] = field(default_factory=list)  # {"a", "b", "n", "kappa"}
    annotators: dict[str, dict] = field(default_factory=dict)
    # why some statistics are undefined while others are not, said once for the field (every
    # label the same value; too few pairable pairs for any statistic)
    note: str | None = None

    def as_dict(self) -> dict:
        return {
            "level": self.level,
            "scale": list(self.scale),
            "scale_source": self.scale_source,
            "n_pairs": self.n_pairs,
            "n_pairable": self.n_pairable,
            "n_labels": self.n_labels,
            "labels_per_pair": {str(k): v for k, v in self.labels_per_pair.items()},
            "value_counts": self.value_counts,
            "krippendorff_alpha": self.alpha.as_dict(),
            "percent_agreement": self.percent_agreement.as_dict(),
            "gwet_ac1": self.ac1.as_dict(),
            "fleiss_kappa": self.fleiss_kappa.as_dict(),
            "fleiss_kappa_missing_data": self.fleiss_kappa_missing.as_dict(),
            "cohen_kappa": [dict(c, kappa=c["kappa"].as_dict()) for c in self.cohen],
            "annotators": self.annotators,
            **({"note": self.note} if self.note else {}),
        }


@dataclass(frozen=True)
class CategoryReport:
    """The report's fields over one category's pairs (fields without labels there left out)."""

    n_pairs: int
    fields: dict[str, FieldReport]


@dataclass
class AgreementReport:
    source: str
    n_pairs: int
    annotators: tuple[str, ...]
    n_labels: int
    resamples: int
    seed: int
    fields: dict[str, FieldReport]
    min_pairs: int = st.MIN_BOOTSTRAP_PAIRS  # fewer pairs with 2+ labels: intervals undefined
    categories: dict[str, CategoryReport] | None = None
    pairs: pd.DataFrame | None = None

    def as_dict(self) -> dict:
        d = {
            "source": self.source,
            "n_pairs": self.n_pairs,
            "annotators": list(self.annotators),
            "n_labels": self.n_labels,
            "bootstrap": {
                "resamples": self.resamples,
                "seed": self.seed,
                "interval": "percentile 95%",
                "unit": "pair",
                "min_pairs": self.min_pairs,
            },
            "fields": {k: f.as_dict() for k, f in self.fields.items()},
        }
        if self.categories is not None:
            d["categories"] = {
                c: {"n_pairs": v.n_pairs, "fields": {k: f.as_dict() for k, f in v.fields.items()}}
                for c, v in self.categories.items()
            }
        if self.pairs is not None:
            d["pairs"] = [
                {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
                for r in self.pairs.to_dict("records")
            ]
        return d


def _share(agree: np.ndarray, n: np.ndarray) -> list:
    return [None if k == 0 else round(float(a) / float(k), 6) for a, k in zip(agree, n, strict=True)]


@dataclass
class FieldData:
    """Per-field arrays computed once, each with a slice per group (categories 0..C-1, then
    C = all) so the per-category reports need no second pass over the labels."""

    fl: FieldLabels
    counts: np.ndarray  # n_uc, units x values
    m: np.ndarray  # labels per unit
    # per annotator: labels, labels whose pair has a unique mode among the *other* labels
    # (their own would inflate it), labels equal to it; shape (3, C + 1, A). Accuracy
    # on gold is curate/quality's (the reliability section), which counts control tasks too
    annotator_counts: np.ndarray
    # (a, b) -> Cohen confusion matrices of annotators a < b on their shared pairs, (C + 1, V, V)
    confusions: dict[tuple[int, int], np.ndarray]


def field_data(table: LabelTable, fl: FieldLabels, unit_group: np.ndarray, n_groups: int) -> FieldData:
    U, V, A = len(table.units), len(fl.spec.values), len(table.annotators)
    counts = st.value_counts(fl.unit, fl.code, U, V)

    def with_total(by_group: np.ndarray) -> np.ndarray:
        return np.concatenate([by_group, by_group.sum(axis=0, keepdims=True)])

    # The others' mode depends only on the pair's count row and the label's value: decide it
    # once per distinct count row (a few dozen) and value, then look it up per label.
    patterns, _, pattern_of = st.distinct_rows(counts)
    others = patterns[:, None, :] - np.eye(V, dtype=patterns.dtype)  # [p, c]: row p less one c
    top = others.max(axis=2, initial=0)
    # the definition of curate/quality/reliability.py (mmrb quality): one modal value among
    # the other labels (one other label is its own majority)
    decided_pc = (top > 0) & ((others == top[..., None]).sum(axis=2) == 1)
    agree_pc = decided_pc & (others.argmax(axis=2) == np.arange(V))
    label_pattern = pattern_of[fl.unit]
    decided, agree = decided_pc[label_pattern, fl.code], agree_pc[label_pattern, fl.code]
    per_label = (None, decided, agree)
    out = np.zeros((3, n_groups + 1, A))
    key = unit_group[fl.unit] * A + fl.annotator
    for k, weights in enumerate(per_label):
        by_group = np.bincount(key, weights=weights, minlength=n_groups * A).reshape(n_groups, A)
        out[k] = with_total(by_group)

    wide: np.ndarray = np.full((U, A), -1, dtype=np.int64)
    wide[fl.unit, fl.annotator] = fl.code
    wide = np.asfortranarray(wide)  # column pairs below read contiguous memory
    present = wide >= 0
    confusions = {}
    for a, b in combinations(range(A), 2):
        both = present[:, a] & present[:, b]
        key = (unit_group[both] * V + wide[both, a]) * V + wide[both, b]
        confusions[a, b] = with_total(np.bincount(key, minlength=n_groups * V * V).reshape(n_groups, V, V))
    return FieldData(fl, counts, counts.sum(axis=1), out, confusions)


def field_report(
    table: LabelTable,
    fd: FieldData,
    *,
    mask: np.ndarray | None = None,
    group: int = -1,
    resamples: int = st.DEFAULT_RESAMPLES,
    seed: int = 0,
    key: str = "",
    min_shared: int = DEFAULT_MIN_SHARED,
    min_pairs: int = st.MIN_BOOTSTRAP_PAIRS,
) -> FieldReport:
    """One field's report, over every unit (``group=-1``) or over a category (its ``mask``
    and its index in the annotator counts)."""
    spec = fd.fl.spec
    V, A = len(spec.values), len(table.annotators)
    rows = fd.m > 0 if mask is None else (fd.m > 0) & mask
    sub = fd.counts[rows]
    m = fd.m[rows]

    alpha = st.kripp_alpha(spec, sub)
    pa, ac1, fk_missing = st.coefficients(sub, V)
    ci = st.bootstrap(spec, sub, resamples=resamples, seed=seed, key=key, min_pairs=min_pairs)

    def with_interval(e: Estimate, interval: tuple[float, float] | None, note: str | None = None) -> Estimate:
        if e.value is None:
            return e
        if interval:
            return Estimate(e.value, None, *interval, note)
        return Estimate(e.value, interval_undefined=ci.undefined)

    alpha = with_interval(alpha, ci.alpha, ci.alpha_note)
    pa = with_interval(pa, ci.percent)
    ac1 = with_interval(ac1, ci.ac1)

    # Cohen's kappa for each pair of annotators sharing enough pairs (never fewer than the
    # floor of every statistic: on one shared pair kappa is 0 or undefined by construction)
    n_lab, n_maj, n_agree = fd.annotator_counts[:, group]
    too_few = st.pairable_undefined(sub)
    cohen = []
    for a, b in combinations(np.flatnonzero(n_lab), 2):
        confusion = fd.confusions[a, b][group]
        n = int(confusion.sum())
        if not n:
            continue
        if too_few:
            kappa = Estimate.none(too_few)
        elif n < min_shared:
            kappa = Estimate.none(f"only {plural(n, 'shared pair')} (fewer than {min_shared})")
        else:
            kappa = st.cohen_from_confusion(confusion, spec)
            if kappa.value is not None and n < st.MIN_PAIRABLE_PAIRS:  # min_shared lowered below the floor
                kappa = Estimate.none(f"only {plural(n, 'shared pair')} (at least {st.MIN_PAIRABLE_PAIRS} needed)")
        cohen.append({"a": table.annotators[a], "b": table.annotators[b], "n": n, "kappa": kappa})

    maj_share = _share(n_agree, n_maj)
    annotators = {
        table.annotators[a]: {
            "labels": int(n_lab[a]),
            "majority": {"n": int(n_maj[a]), "agreement": maj_share[a]},
        }
        for a in range(A)
        if n_lab[a]
    }
    per_k = np.bincount(m)
    fleiss = st.fleiss_kappa(sub)
    note = too_few and f"every statistic is undefined: {too_few}"
    if not too_few and alpha.value is None:
        note = _no_variation_note(spec, sub, pa, ac1, fleiss if fleiss.value is not None else fk_missing, cohen)
    return FieldReport(
        name=spec.name,
        level=spec.level,
        scale=spec.values,
        scale_source=spec.scale_source,
        n_pairs=int(len(sub)),
        n_pairable=int((m >= 2).sum()),
        n_labels=int(m.sum()),
        labels_per_pair={int(k): int(c) for k, c in enumerate(per_k) if c},
        value_counts={v: int(c) for v, c in zip(spec.values, sub.sum(axis=0), strict=True)},
        alpha=alpha,
        percent_agreement=pa,
        ac1=ac1,
        fleiss_kappa=fleiss,
        fleiss_kappa_missing=fk_missing,
        cohen=cohen,
        annotators=annotators,
        note=note or None,
    )


def _no_variation_note(
    spec: FieldSpec, counts: np.ndarray, pa: Estimate, ac1: Estimate, fleiss: Estimate, cohen: list[dict]
) -> str | None:
    """When every pairable label is one value: which statistics that leaves undefined and
    which still hold (percent agreement and AC1 are 1.000), and why."""
    used = np.flatnonzero(counts[counts.sum(axis=1) >= 2].sum(axis=0))
    if len(used) != 1:
        return None
    undefined = ["Krippendorff's alpha"]
    undefined += ["Fleiss' kappa"] if fleiss.value is None else []
    undefined += ["Cohen's kappa"] if any(c["kappa"].value is None for c in cohen) else []
    defined = [name for name, e in (("percent agreement", pa), ("Gwet's AC1", ac1)) if e.value is not None]
    out = (
        f"every pairable label is {spec.values[used[0]]!r}: no variation, so {_and(undefined)} "
        f"{'is' if len(undefined) == 1 else 'are'} undefined (each divides by the disagreement expected by "
        "chance, zero when a single value is used)"
    )
    if defined:
        out += f"; {_and(defined)} {'is' if len(defined) == 1 else 'are'} still defined"
    return out


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def pair_table(table: LabelTable, counts: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Per pair and field: n labels, majority value, agreement share, entropy (bits);
    ordered by pair, then field."""
    names = sorted(table.fields)
    if not names:
        return pd.DataFrame(columns=["pair", "category", "field", "n_labels", "majority", "agreement", "entropy"])
    U, F = len(table.units), len(names)
    # (units x fields) grids flattened in C order are already sorted by pair, then field
    n = np.zeros((U, F), dtype=np.int64)
    majority = np.empty((U, F), dtype=object)
    share, entropy = np.zeros((U, F)), np.zeros((U, F))
    for k, name in enumerate(names):
        fl = table.fields[name]
        c = counts[name] if counts else st.value_counts(fl.unit, fl.code, U, len(fl.spec.values))
        # computed once per distinct count row (a few dozen), then spread to the pairs
        patterns, _, pattern_of = st.distinct_rows(c)
        pu = {key: v[pattern_of] for key, v in st.per_unit(patterns).items()}
        values = np.array(list(fl.spec.values) + [None], dtype=object)
        n[:, k], majority[:, k], share[:, k], entropy[:, k] = (
            pu["n"],
            values[pu["majority"]],
            pu["share"],
            pu["entropy"],
        )
    keep = n.ravel() > 0
    unit = np.repeat(np.arange(U), F)[keep]
    field = np.tile(np.arange(F), U)[keep]
    cat_codes, cat_names = sorted_codes(table.category.astype(str))
    # categoricals over the id arrays: no per-row string objects for 600k rows
    return pd.DataFrame(
        {
            "pair": pd.Categorical.from_codes(unit, categories=pd.Index(table.units.astype(str))),
            "category": pd.Categorical.from_codes(cat_codes[unit], categories=pd.Index(cat_names.astype(str))),
            "field": pd.Categorical.from_codes(field, categories=pd.Index(names)),
            "n_labels": n.ravel()[keep],
            "majority": majority.ravel()[keep],
            "agreement": np.round(share.ravel()[keep], 6),
            "entropy": np.round(entropy.ravel()[keep], 6),
        }
    )


def agreement_report(
    table: LabelTable,
    *,
    per_category: bool = False,
    pairs: bool = False,
    resamples: int = st.DEFAULT_RESAMPLES,
    seed: int = 0,
    min_shared: int = DEFAULT_MIN_SHARED,
    min_pairs: int = st.MIN_BOOTSTRAP_PAIRS,
) -> AgreementReport:
    unit_group, cat_names = sorted_codes(table.category.astype(str))
    data = {name: field_data(table, fl, unit_group, len(cat_names)) for name, fl in sorted(table.fields.items())}
    # a field nobody labelled (e.g. correctness in a preference-only study) is left out
    data = {name: fd for name, fd in data.items() if fd.m.any()}
    # every field gets the same bootstrap key, so swapping the two correctness fields (the
    # A/B swap) swaps their reports exactly
    fields = {
        name: field_report(table, fd, resamples=resamples, seed=seed, min_shared=min_shared, min_pairs=min_pairs)
        for name, fd in data.items()
    }
    categories = None
    if per_category:
        categories = {}
        for g, cat in enumerate(cat_names):
            mask = unit_group == g
            categories[cat or "(none)"] = CategoryReport(
                n_pairs=int(mask.sum()),
                fields={
                    name: field_report(
                        table,
                        fd,
                        mask=mask,
                        group=g,
                        resamples=resamples,
                        seed=seed,
                        key=f"category:{cat}",
                        min_shared=min_shared,
                        min_pairs=min_pairs,
                    )
                    for name, fd in data.items()
                    if fd.m[mask].any()
                },
            )
    counts = {name: fd.counts for name, fd in data.items()}
    table = LabelTable(
        table.units,
        table.annotators,
        table.category,
        {k: v for k, v in table.fields.items() if k in data},
        table.gold,
        table.source,
    )
    return AgreementReport(
        source=table.source,
        n_pairs=len(table.units),
        annotators=table.annotators,
        n_labels=table.n_labels,
        resamples=resamples,
        seed=seed,
        fields=fields,
        min_pairs=min_pairs,
        categories=categories,
        pairs=pair_table(table, counts) if pairs else None,
    )


# -- text ------------------------------------------------------------------------------------
def _fmt(e: Estimate) -> str:
    """The value and its interval; an undefined value's reason goes to the notes below."""
    return "undefined" if e.value is None else str(e)


def _short(e: Estimate) -> str:
    return "-" if e.value is None else f"{e.value:.3f}"


_SCALE_SOURCE = {
    "given": "--scale",
    "scheme": "the pairs' scheme",
    "known": "an importer's known scale",
    "observed": "the values in the labels",
}


def _field_rows(fields: dict[str, FieldReport]) -> list[str]:
    w = max([25] + [len(_fmt(f.alpha)) + 1 for f in fields.values()])  # "[undefined (too few pairs)]" is long
    head = (
        f"  {'field':<22}{'level':<9}{'pairs':>8}{'labels':>9}  {'alpha [95% CI]':<{w}}"
        f"{'% agree':>8}{'AC1':>8}{'Fleiss':>8}"
    )
    out = [head]
    notes = []
    for f in fields.values():
        fk = f.fleiss_kappa if f.fleiss_kappa.value is not None else f.fleiss_kappa_missing
        out.append(
            f"  {f.name:<22}{f.level:<9}{f.n_pairs:>8}{f.n_labels:>9}  {_fmt(f.alpha):<{w}}"
            f"{_short(f.percent_agreement):>8}{_short(f.ac1):>8}{_short(fk):>8}"
        )
        if f.scale_source in _SCALE_SOURCE:  # AC1 counts every value of the scale, used or not
            notes.append(
                f"  {f.name}: scale {' < '.join(f.scale) if f.level != 'nominal' else ', '.join(f.scale)} "
                f"({_SCALE_SOURCE[f.scale_source]}, {plural(len(f.scale), 'value')})"
            )
        if f.note:  # why several statistics are undefined (and, with no variation, which still hold)
            notes.append(f"  {f.name}: {f.note}")
        elif f.alpha.undefined:
            notes.append(f"  {f.name}: alpha undefined: {f.alpha.undefined}")
        elif f.ac1.undefined:
            notes.append(f"  {f.name}: AC1 undefined: {f.ac1.undefined}")
        if f.fleiss_kappa.value is None and f.fleiss_kappa_missing.value is not None:
            notes.append(f"  {f.name}: Fleiss is the missing-data form ({f.fleiss_kappa.undefined})")
    return out + notes


def render_text(report: AgreementReport, reliability: QualityReport | None = None) -> str:
    """The report as text; ``reliability`` (curate/quality: the figures of ``mmrb quality``)
    gives each annotator's accuracy on gold, agreement with the others' majority and
    Dawid-Skene's reliability at the end."""
    lines = [
        f"Agreement on {report.source}: {plural(report.n_pairs, 'pair')}, "
        f"{plural(len(report.annotators), 'annotator')}, {plural(report.n_labels, 'label')} (bootstrap: "
        f"{plural(report.resamples, 'resample')} over pairs, seed {report.seed}; intervals are undefined below "
        f"{plural(report.min_pairs, 'pair')} with two or more labels)",
        "",
    ]
    lines += _field_rows(report.fields)
    for name, f in report.fields.items():
        lines += ["", f"{name}: labels per annotator"]
        lines += [f"  {a:<20}{plural(s['labels'], 'label'):>14}" for a, s in f.annotators.items()]
        defined = [c for c in f.cohen if c["kappa"].value is not None]
        if defined:
            lines.append(f"  Cohen's kappa{' (quadratic weights)' if f.level != 'nominal' else ''}:")
            for c in f.cohen:
                lines.append(
                    f"    {c['a']} ~ {c['b']}: {_fmt(c['kappa'])} (n={c['n']})"
                    if c["kappa"].value is not None
                    else f"    {c['a']} ~ {c['b']}: undefined ({c['kappa'].undefined})"
                )
    if report.categories is not None:
        for cat, v in report.categories.items():
            lines += ["", f"Category {cat} ({plural(v.n_pairs, 'pair')})"]
            lines += _field_rows(v.fields)
    if report.pairs is not None and len(report.pairs):
        lines += ["", "Per pair (share of labels on the majority value):"]
        for field_name, g in report.pairs.groupby("field", sort=True):
            unanimous = int(((g["agreement"] == 1) & (g["n_labels"] >= 2)).sum())
            lines.append(
                f"  {field_name}: {plural(len(g), 'pair')}, {unanimous} unanimous with two or more labels, "
                f"{int(g['majority'].isna().sum())} without a majority, mean entropy {g['entropy'].mean():.3f} bits"
            )
    lines += ["", *(reliability.lines(per_category=report.categories is not None) if reliability else [])]
    return "\n".join(lines).rstrip("\n")
