"""The agreement report: every statistic per field, overall and per category."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from . import stats as st
from .stats import Estimate
from .table import FieldLabels, LabelTable

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
        }


@dataclass
class Report:
    source: str
    n_pairs: int
    annotators: tuple[str, ...]
    n_labels: int
    resamples: int
    seed: int
    fields: dict[str, FieldReport]
    categories: dict[str, dict] | None = None  # category -> {"n_pairs", "fields"}
    pairs: pd.DataFrame | None = None

    def as_dict(self) -> dict:
        d = {
            "source": self.source,
            "n_pairs": self.n_pairs,
            "annotators": list(self.annotators),
            "n_labels": self.n_labels,
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "interval": "percentile 95%",
                          "unit": "pair"},
            "fields": {k: f.as_dict() for k, f in self.fields.items()},
        }
        if self.categories is not None:
            d["categories"] = {
                c: {"n_pairs": v["n_pairs"], "fields": {k: f.as_dict() for k, f in v["fields"].items()}}
                for c, v in self.categories.items()
            }
        if self.pairs is not None:
            d["pairs"] = [
                {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
                for r in self.pairs.to_dict("records")
            ]
        return d


def _share(agree: np.ndarray, n: np.ndarray) -> list:
    return [None if k == 0 else round(float(a) / float(k), 6) for a, k in zip(agree, n)]


@dataclass
class FieldData:
    """Per-field arrays computed once and sliced per category."""

    fl: FieldLabels
    counts: np.ndarray  # n_uc, units x values
    wide: np.ndarray  # units x annotators, value code or -1
    decided: np.ndarray  # per label: the other labels on the pair have a unique mode
    agree: np.ndarray  # per label: ... and it is this label's value
    gold: np.ndarray  # per label: gold code of the pair or -1


def field_data(table: LabelTable, fl: FieldLabels, counts: np.ndarray | None = None) -> FieldData:
    U, V, A = len(table.units), len(fl.spec.values), len(table.annotators)
    if counts is None:
        counts = st.value_counts(fl.unit, fl.code, U, V)
    wide = np.full((U, A), -1, dtype=np.int64)
    wide[fl.unit, fl.annotator] = fl.code
    # each annotator against the majority of the *other* labels on the pair (their own
    # label would inflate it)
    others = counts[fl.unit]
    others[np.arange(len(fl.code)), fl.code] -= 1
    top = others.max(axis=1, initial=0)
    decided = (top > 0) & ((others == top[:, None]).sum(axis=1) == 1)
    agree = decided & (others.argmax(axis=1) == fl.code)
    gold_code = np.full(U, -1, dtype=np.int64)
    for u, c in table.gold.get(fl.spec.name, {}).items():
        gold_code[u] = c
    return FieldData(fl, counts, wide, decided, agree, gold_code[fl.unit])


def field_report(table: LabelTable, fd: FieldData, *, mask: np.ndarray | None = None,
                 resamples: int = st.DEFAULT_RESAMPLES, seed: int = 0, key: str = "",
                 min_shared: int = DEFAULT_MIN_SHARED) -> FieldReport:
    fl, spec = fd.fl, fd.fl.spec
    V, A = len(spec.values), len(table.annotators)
    labelled = fd.counts.sum(axis=1) > 0
    rows = labelled if mask is None else (labelled & mask)
    sub = fd.counts[rows]
    m = sub.sum(axis=1)
    sel = slice(None) if mask is None else mask[fl.unit]
    ann, code = fl.annotator[sel], fl.code[sel]

    alpha = st.kripp_alpha(spec, sub)
    pa, ac1, fk_missing = st.coefficients(sub, V)
    ci = st.bootstrap(spec, sub, resamples=resamples, seed=seed, key=key)
    if alpha.value is not None and ci.alpha:
        alpha = Estimate(alpha.value, None, *ci.alpha, ci.alpha_note)
    if pa.value is not None and ci.percent:
        pa = Estimate(pa.value, None, *ci.percent)
    if ac1.value is not None and ci.ac1:
        ac1 = Estimate(ac1.value, None, *ci.ac1)

    # Cohen's kappa for each pair of annotators sharing enough pairs
    wide = np.asfortranarray(fd.wide[rows])  # column pairs below read contiguous memory
    present = wide >= 0
    active = np.flatnonzero(present.any(axis=0))
    cohen = []
    for a, b in combinations(active, 2):
        both = present[:, a] & present[:, b]
        n = int(both.sum())
        if not n:
            continue
        if n < min_shared:
            kappa = Estimate.none(f"only {n} shared pairs (fewer than {min_shared})")
        else:
            confusion = np.bincount(wide[both, a] * V + wide[both, b], minlength=V * V).reshape(V, V)
            kappa = st.cohen_from_confusion(confusion, spec)
        cohen.append({"a": table.annotators[a], "b": table.annotators[b], "n": n, "kappa": kappa})

    n_lab = np.bincount(ann, minlength=A)
    n_maj = np.bincount(ann, weights=fd.decided[sel], minlength=A)
    n_agree = np.bincount(ann, weights=fd.agree[sel], minlength=A)
    g = fd.gold[sel]
    n_gold = np.bincount(ann, weights=g >= 0, minlength=A)
    n_gold_agree = np.bincount(ann, weights=(g >= 0) & (g == code), minlength=A)
    maj_share, gold_share = _share(n_agree, n_maj), _share(n_gold_agree, n_gold)
    annotators = {
        table.annotators[a]: {
            "labels": int(n_lab[a]),
            "majority": {"n": int(n_maj[a]), "agreement": maj_share[a]},
            "gold": {"n": int(n_gold[a]), "agreement": gold_share[a]},
        }
        for a in range(A)
        if n_lab[a]
    }
    ks, kc = np.unique(m, return_counts=True)
    return FieldReport(
        name=spec.name,
        level=spec.level,
        scale=spec.values,
        scale_source=spec.scale_source,
        n_pairs=int(len(sub)),
        n_pairable=int((m >= 2).sum()),
        n_labels=int(m.sum()),
        labels_per_pair={int(k): int(c) for k, c in zip(ks, kc)},
        value_counts={v: int(c) for v, c in zip(spec.values, sub.sum(axis=0))},
        alpha=alpha,
        percent_agreement=pa,
        ac1=ac1,
        fleiss_kappa=st.fleiss_kappa(sub),
        fleiss_kappa_missing=fk_missing,
        cohen=cohen,
        annotators=annotators,
    )


def pair_table(table: LabelTable, counts: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Per pair and field: n labels, majority value, agreement share, entropy (bits);
    ordered by pair, then field."""
    cols: dict[str, list] = {k: [] for k in ("unit", "field", "n_labels", "majority", "agreement", "entropy")}
    names = sorted(table.fields)
    for k, name in enumerate(names):
        fl = table.fields[name]
        c = counts[name] if counts else st.value_counts(fl.unit, fl.code, len(table.units), len(fl.spec.values))
        pu = st.per_unit(c)
        has = np.flatnonzero(pu["n"] > 0)
        values = np.array(list(fl.spec.values) + [None], dtype=object)
        cols["unit"].append(has)
        cols["field"].append(np.full(len(has), k))
        cols["n_labels"].append(pu["n"][has])
        cols["majority"].append(values[pu["majority"][has]])
        cols["agreement"].append(pu["share"][has])
        cols["entropy"].append(pu["entropy"][has])
    if not names:
        return pd.DataFrame(columns=["pair", "category", "field", "n_labels", "majority", "agreement", "entropy"])
    cat = {k: np.concatenate(v) for k, v in cols.items()}
    order = np.lexsort((cat["field"], cat["unit"]))
    unit = cat["unit"][order]
    # categoricals over the id arrays: no per-row string objects for 600k rows
    cats, cat_codes = np.unique(table.category.astype(str), return_inverse=True)
    return pd.DataFrame({
        "pair": pd.Categorical.from_codes(unit, categories=pd.Index(table.units.astype(str))),
        "category": pd.Categorical.from_codes(cat_codes.ravel()[unit], categories=pd.Index(cats)),
        "field": pd.Categorical.from_codes(cat["field"][order], categories=pd.Index(names)),
        "n_labels": cat["n_labels"][order].astype(int),
        "majority": cat["majority"][order],
        "agreement": np.round(cat["agreement"][order].astype(float), 6),
        "entropy": np.round(cat["entropy"][order].astype(float), 6),
    })


def agreement_report(table: LabelTable, *, per_category: bool = False, pairs: bool = False,
                     resamples: int = st.DEFAULT_RESAMPLES, seed: int = 0,
                     min_shared: int = DEFAULT_MIN_SHARED) -> Report:
    data = {name: field_data(table, fl) for name, fl in sorted(table.fields.items())}
    # every field gets the same bootstrap key, so swapping the two correctness fields (the
    # A/B swap) swaps their reports exactly
    fields = {name: field_report(table, fd, resamples=resamples, seed=seed, min_shared=min_shared)
              for name, fd in data.items()}
    categories = None
    if per_category:
        categories = {}
        for cat in sorted(set(table.category)):
            mask = table.category == cat
            categories[cat or "(none)"] = {
                "n_pairs": int(mask.sum()),
                "fields": {
                    name: field_report(table, fd, mask=mask, resamples=resamples, seed=seed,
                                       key=f"category:{cat}", min_shared=min_shared)
                    for name, fd in data.items()
                },
            }
    counts = {name: fd.counts for name, fd in data.items()}
    return Report(
        source=table.source,
        n_pairs=len(table.units),
        annotators=table.annotators,
        n_labels=table.n_labels,
        resamples=resamples,
        seed=seed,
        fields=fields,
        categories=categories,
        pairs=pair_table(table, counts) if pairs else None,
    )


# -- text ------------------------------------------------------------------------------------
def _fmt(e: Estimate) -> str:
    if e.value is None:
        return "undefined"
    s = f"{e.value:.3f}"
    if e.low is not None:
        s += f" [{e.low:.3f}, {e.high:.3f}]"
    return s


def _field_rows(fields: dict[str, FieldReport]) -> list[str]:
    head = f"  {'field':<22}{'level':<9}{'pairs':>8}{'labels':>9}  {'alpha [95% CI]':<24}{'% agree':<9}{'AC1':<8}{'Fleiss':<8}"
    out = [head]
    notes = []
    for f in fields.values():
        fk = f.fleiss_kappa if f.fleiss_kappa.value is not None else f.fleiss_kappa_missing
        out.append(
            f"  {f.name:<22}{f.level:<9}{f.n_pairs:>8}{f.n_labels:>9}  {_fmt(f.alpha):<24}"
            f"{_fmt(Estimate(f.percent_agreement.value, f.percent_agreement.undefined)):<9}"
            f"{_fmt(Estimate(f.ac1.value, f.ac1.undefined)):<8}{_fmt(fk):<8}"
        )
        if f.alpha.undefined:
            notes.append(f"  {f.name}: alpha undefined: {f.alpha.undefined}")
        if f.fleiss_kappa.value is None and f.fleiss_kappa_missing.value is not None:
            notes.append(f"  {f.name}: Fleiss is the missing-data form ({f.fleiss_kappa.undefined})")
    return out + notes


def render_text(report: Report) -> str:
    lines = [
        f"Agreement on {report.source}: {report.n_pairs} pairs, {len(report.annotators)} annotators, "
        f"{report.n_labels} labels (bootstrap: {report.resamples} resamples over pairs, seed {report.seed})",
        "",
    ]
    lines += _field_rows(report.fields)
    for name, f in report.fields.items():
        lines += ["", f"{name}: per annotator (agreement with the others' majority / with gold)"]
        for a, s in f.annotators.items():
            maj = "-" if s["majority"]["agreement"] is None else f"{s['majority']['agreement']:.3f}"
            gold = "-" if s["gold"]["agreement"] is None else f"{s['gold']['agreement']:.3f}"
            lines.append(f"  {a:<20}{s['labels']:>7} labels  majority {maj} (n={s['majority']['n']})  "
                         f"gold {gold} (n={s['gold']['n']})")
        defined = [c for c in f.cohen if c["kappa"].value is not None]
        if defined:
            lines.append(f"  Cohen's kappa{' (quadratic weights)' if f.level != 'nominal' else ''}:")
            for c in f.cohen:
                lines.append(f"    {c['a']} ~ {c['b']}: {_fmt(c['kappa'])} (n={c['n']})"
                             if c["kappa"].value is not None else
                             f"    {c['a']} ~ {c['b']}: undefined ({c['kappa'].undefined})")
    if report.categories is not None:
        for cat, v in report.categories.items():
            lines += ["", f"Category {cat} ({v['n_pairs']} pairs)"]
            lines += _field_rows(v["fields"])
    if report.pairs is not None and len(report.pairs):
        lines += ["", "Per pair (share of labels on the majority value):"]
        for name, g in report.pairs.groupby("field", sort=True):
            unanimous = int(((g["agreement"] == 1) & (g["n_labels"] >= 2)).sum())
            lines.append(f"  {name}: {len(g)} pairs, {unanimous} unanimous with two or more labels, "
                         f"{int(g['majority'].isna().sum())} without a majority, mean entropy {g['entropy'].mean():.3f} bits")
    return "\n".join(lines)
