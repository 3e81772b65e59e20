"""Agreement statistics over a units x values count table.

Notation follows the sources:

* Krippendorff, K. (2011). *Computing Krippendorff's Alpha-Reliability*. Annenberg School
  for Communication, University of Pennsylvania. Per unit u, ``n_uc`` coders chose value c
  and ``m_u`` values are pairable. The coincidence matrix is
  ``o_ck = sum_u (n_uc * n_uk - [c == k] * n_uc) / (m_u - 1)`` over units with ``m_u >= 2``;
  ``n_c = sum_k o_ck``, ``n = sum_c n_c``; ``D_o = 1/n sum o_ck delta2_ck`` and
  ``D_e = 1/(n (n-1)) sum n_c n_k delta2_ck``; ``alpha = 1 - D_o / D_e``. The point value
  comes from the ``krippendorff`` package (level always passed); the bootstrap below uses
  the same formulas vectorised, and a test checks both give the same alpha.
* Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence
  of high agreement. *British Journal of Mathematical and Statistical Psychology* 61, 29-48.
  ``AC1 = (p_a - p_e) / (1 - p_e)``, ``p_e = 1/(q-1) sum_k pi_k (1 - pi_k)``; with missing
  labels (Gwet 2014, Handbook ch. 2) ``p_a`` averages over units with ``r_i >= 2`` and
  ``pi_k = 1/n sum_i r_ik / r_i`` over every rated unit.
* Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychological
  Bulletin* 76(5), 378-382: statsmodels' ``fleiss_kappa`` arithmetic (``sm_fleiss``, the same
  operations, a test checks the same floats) when every unit has the same number of ratings;
  the missing-data form (``p_e = sum_k pi_k^2`` with Gwet's ``pi_k``) otherwise.

Undefined values (no variation, too few labels) are :class:`Estimate` objects carrying the
reason, never 0, 1 or NaN. Below :data:`MIN_PAIRABLE_PAIRS` pairs with two or more labels every
statistic is undefined (with one such pair alpha is 0 by construction and AC1, Fleiss and
Cohen's chance terms are that pair's own labels; ``limits.py`` says why the floor is 2). So are
intervals: a bootstrap over fewer than
:data:`MIN_BOOTSTRAP_PAIRS` pairs with two or more labels resamples the same one or two pairs
and returns a narrow interval (one pair: ``[0.0, 0.0]``) that claims a certainty it does not
have, so below that minimum the interval is "undefined (too few pairs)" while the point value
is still reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..seeding import stable_hash
from ..wording import plural
from .limits import MIN_BOOTSTRAP_PAIRS, MIN_PAIRABLE_PAIRS, TOO_FEW_PAIRS
from .table import FieldSpec

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    value: float | None
    undefined: str | None = None  # why there is no value
    low: float | None = None  # bootstrap percentile interval
    high: float | None = None
    note: str | None = None
    interval_undefined: str | None = None  # why there is no interval although there is a value

    @staticmethod
    def none(reason: str) -> Estimate:
        return Estimate(None, reason)

    def as_dict(self) -> dict:
        d: dict = {"value": _r(self.value)}
        if self.undefined:
            d["undefined"] = self.undefined
        if self.low is not None:
            d["ci95"] = [_r(self.low), _r(self.high)]
        elif self.interval_undefined:
            d["ci95"] = None
            d["ci95_undefined"] = self.interval_undefined
        if self.note:
            d["note"] = self.note
        return d

    @property
    def interval(self) -> str:
        """The interval as text: ``[low, high]``, ``[undefined (reason)]`` or empty."""
        if self.low is not None:
            return f"[{self.low:.3f}, {self.high:.3f}]"
        return f"[undefined ({self.interval_undefined})]" if self.interval_undefined else ""

    def __str__(self) -> str:
        if self.value is None:
            return f"undefined ({self.undefined})"
        return f"{self.value:.3f} {self.interval}".rstrip()


def _r(x: float | None, nd: int = 6) -> float | None:
    return None if x is None else round(float(x), nd)


# -- counts ------------------------------------------------------------------------------
def value_counts(unit: np.ndarray, code: np.ndarray, n_units: int, n_values: int) -> np.ndarray:
    """n_uc: units x values."""
    flat = np.bincount(unit * n_values + code, minlength=n_units * n_values)
    return flat.reshape(n_units, n_values)


def distinct_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct count rows in order of first appearance (units are in sorted id order, so
    relabelling values maps rows one to one and the seeded draws stay the same).
    Returns (patterns, multiplicity, inverse)."""
    U, V = counts.shape
    base = int(counts.max(initial=0)) + 1
    if U and base**V <= max(1 << 16, 4 * U):  # small keys: counting, no sort
        key = counts @ (base ** np.arange(V, dtype=np.int64))
        mult_all = np.bincount(key, minlength=base**V)
        first_all = np.full(base**V, U, dtype=np.int64)
        np.minimum.at(first_all, key, np.arange(U))
        present = np.flatnonzero(mult_all)
        first, mult = first_all[present], mult_all[present]
        slot = np.empty(base**V, dtype=np.int64)
        slot[present] = np.arange(len(present))
        inverse = slot[key]
    else:
        _, first, inverse, mult = np.unique(counts, axis=0, return_index=True, return_inverse=True, return_counts=True)
        inverse = inverse.ravel()
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return counts[first[order]], mult[order], rank[inverse]


# -- Krippendorff's alpha ------------------------------------------------------------------
def delta2(spec: FieldSpec, n_c: np.ndarray) -> np.ndarray:
    """Squared difference function delta2_ck (Krippendorff 2011, section C).

    ``n_c`` has shape (..., V); the ordinal metric depends on it, the others do not.
    """
    V = len(spec.values)
    if spec.level == "nominal":
        return np.broadcast_to(1.0 - np.eye(V), n_c.shape[:-1] + (V, V))
    if spec.level == "ordinal":
        cs = np.concatenate([np.zeros(n_c.shape[:-1] + (1,)), np.cumsum(n_c, axis=-1)], axis=-1)
        i = np.arange(V)
        lo, hi = np.minimum.outer(i, i), np.maximum.outer(i, i)
        between = cs[..., hi + 1] - cs[..., lo]  # sum of n_g for g from c to k
        return (between - (n_c[..., lo] + n_c[..., hi]) / 2.0) ** 2
    v = spec.numeric
    if spec.level == "interval":
        d = (v[:, None] - v[None, :]) ** 2
    else:  # ratio
        s = v[:, None] + v[None, :]
        d = np.divide((v[:, None] - v[None, :]), s, out=np.zeros((V, V)), where=s != 0) ** 2
    return np.broadcast_to(d, n_c.shape[:-1] + (V, V))


def unit_coincidences(counts: np.ndarray) -> np.ndarray:
    """Each unit's contribution to o_ck, flattened: (units, V*V); zero when m_u < 2."""
    m = counts.sum(axis=1)
    pairable = m >= 2
    outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(counts.shape[1])[None]
    out = np.zeros(outer.shape, dtype=float)
    out[pairable] = outer[pairable] / (m[pairable] - 1)[:, None, None]
    return out.reshape(len(counts), -1)


def alpha_from_coincidences(spec: FieldSpec, o: np.ndarray) -> np.ndarray:
    """alpha = 1 - (n - 1) sum o_ck delta2_ck / sum n_c n_k delta2_ck for a stack of o
    (..., V, V); NaN where D_e = 0 (callers turn that into a reason)."""
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    d = delta2(spec, n_c)
    num = (o * d).sum(axis=(-1, -2))
    den = (n_c[..., :, None] * n_c[..., None, :] * d).sum(axis=(-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 1.0 - (n - 1) * num / den, np.nan)


def too_few_pairable(n: int) -> str:
    """Why no statistic is given over ``n`` (0 < n < MIN_PAIRABLE_PAIRS) pairable pairs."""
    return f"only {plural(n, 'pair')} with two or more labels (at least {MIN_PAIRABLE_PAIRS} needed)"


def pairable_undefined(counts: np.ndarray) -> str | None:
    """Why no agreement statistic is defined on these counts for want of pairable pairs."""
    n = int((counts.sum(axis=1) >= 2).sum())
    if n == 0:
        return "no pair has two or more labels"
    return too_few_pairable(n) if n < MIN_PAIRABLE_PAIRS else None


def alpha_undefined(spec: FieldSpec, counts: np.ndarray) -> str | None:
    m = counts.sum(axis=1)
    if not len(counts) or not m.any():
        return "no labels"
    too_few = pairable_undefined(counts)
    if too_few:
        return too_few
    pairable = counts[m >= 2]
    used = np.flatnonzero(pairable.sum(axis=0))
    if len(used) < 2:
        return f"every pairable label is {spec.values[used[0]]!r}: no variation, alpha is undefined"
    return None


def kripp_alpha(spec: FieldSpec, counts: np.ndarray) -> Estimate:
    """Point alpha from the ``krippendorff`` package on the value counts."""
    # deferred: 0.1 s to import, and only alpha needs it
    import krippendorff

    why = alpha_undefined(spec, counts)
    if why:
        return Estimate.none(why)
    pairable = counts[counts.sum(axis=1) >= 2]
    domain = spec.numeric if spec.level in ("interval", "ratio") else np.arange(len(spec.values))
    a = krippendorff.alpha(value_counts=pairable, value_domain=domain, level_of_measurement=spec.level)
    if not np.isfinite(a):
        return Estimate.none("expected disagreement D_e is zero")
    return Estimate(float(a))


# -- percent agreement, AC1, Fleiss -----------------------------------------------------------
# The point values below and the bootstrap's resamples share these two formulas.
def unit_agreement(counts: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Each unit's share of agreeing label pairs, sum_k r_ik (r_ik - 1) / (r_i (r_i - 1));
    meaningful only where m = r_i >= 2."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts * (counts - 1)).sum(axis=-1) / (m * (m - 1))


def ac1_from(pa: np.ndarray | float, pi: np.ndarray, q: int) -> np.ndarray:
    """Gwet's AC1 from p_a and pi_k (last axis): p_e = sum pi_k (1 - pi_k) / (q - 1); q >= 2."""
    pe = (pi * (1 - pi)).sum(axis=-1) / (q - 1)
    return (pa - pe) / (1 - pe)


def coefficients(counts: np.ndarray, q: int) -> tuple[Estimate, Estimate, Estimate]:
    """(percent agreement p_a, Gwet's AC1, Fleiss' kappa in the missing-data form).

    p_a = mean over units with r_i >= 2 of sum_k r_ik (r_ik - 1) / (r_i (r_i - 1));
    pi_k = mean over rated units of r_ik / r_i; AC1: p_e = sum pi_k (1 - pi_k) / (q - 1);
    Fleiss (Gwet 2014, eq. 2.5): p_e = sum pi_k^2.
    """
    m = counts.sum(axis=1)
    ok = m >= 2
    too_few = pairable_undefined(counts)
    if too_few:
        why = Estimate.none(too_few)
        return why, why, why
    pa = float(unit_agreement(counts[ok], m[ok]).mean())
    rated = m >= 1
    pi = (counts[rated] / m[rated, None]).mean(axis=0)
    ac1 = Estimate.none("the scale has a single category") if q < 2 else Estimate(float(ac1_from(pa, pi, q)))
    pe_f = float((pi**2).sum())
    fk = (
        Estimate.none("a single category is used: no variation, kappa is undefined")
        if pe_f >= 1 - 1e-12
        else Estimate((pa - pe_f) / (1 - pe_f))
    )
    return Estimate(pa), ac1, fk


def sm_fleiss(table: np.ndarray) -> float:
    """statsmodels' ``fleiss_kappa(table, method="fleiss")``, its operations in its order (so
    the same float): importing statsmodels and the scipy.stats it pulls in cost 0.6 s of a
    build, for six lines. Every unit has the same number of ratings."""
    table = 1.0 * np.asarray(table)
    n_total = table.sum()
    n_rat = table.sum(1).max()
    p_cat = table.sum(0) / n_total
    p_rat = ((table * table).sum(1) - n_rat) / (n_rat * (n_rat - 1.0))
    p_mean = p_rat.mean()
    p_mean_exp = (p_cat * p_cat).sum()
    return float((p_mean - p_mean_exp) / (1 - p_mean_exp))


def fleiss_kappa(counts: np.ndarray) -> Estimate:
    """Fleiss (1971) kappa as statsmodels computes it; only defined when every unit has the
    same number of labels (at least two)."""
    m = counts.sum(axis=1)
    m = m[m > 0]
    counts = counts[counts.sum(axis=1) > 0]
    if not len(m):
        return Estimate.none("no labels")
    if m.min() != m.max():
        return Estimate.none(
            f"pairs have different numbers of labels ({m.min()} to {m.max()}); see the missing-data form"
        )
    if m[0] < 2:
        return Estimate.none("every pair has a single label")
    too_few = pairable_undefined(counts)
    if too_few:
        return Estimate.none(too_few)
    if np.count_nonzero(counts.sum(axis=0)) < 2:
        return Estimate.none("a single category is used: no variation, kappa is undefined")
    return Estimate(sm_fleiss(counts))


# -- bootstrap ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Intervals:
    alpha: tuple[float, float] | None
    percent: tuple[float, float] | None
    ac1: tuple[float, float] | None
    alpha_note: str | None = None
    undefined: str | None = None  # why there are no intervals at all (too few pairs)


def bootstrap(
    spec: FieldSpec,
    counts: np.ndarray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    key: str = "",
    confidence: float = DEFAULT_CONFIDENCE,
    min_pairs: int = MIN_BOOTSTRAP_PAIRS,
) -> Intervals:
    """Percentile intervals over pairs, resampled with replacement; undefined ("too few
    pairs") when fewer than ``min_pairs`` pairs have two or more labels.

    A resample of the U labelled units is a multinomial draw of how often each unit is
    taken; every statistic here is a ratio of sums of per-unit terms, so all resamples come
    from one matrix product W @ F (W: resamples x units, F: per-unit o_ck contributions,
    agreement terms, pi terms). Units with identical count rows share a column of W (a
    multinomial over distinct rows is the same distribution), which keeps W small.
    """
    counts = counts[counts.sum(axis=1) > 0]
    U, V = counts.shape
    if U == 0 or resamples <= 0:
        return Intervals(None, None, None)
    if int((counts.sum(axis=1) >= 2).sum()) < min_pairs:
        return Intervals(None, None, None, undefined=TOO_FEW_PAIRS)
    patterns, mult, _ = distinct_rows(counts)
    rng = np.random.default_rng([seed, stable_hash("bootstrap", key)])
    W = rng.multinomial(U, mult / U, size=resamples).astype(float)
    m = patterns.sum(axis=1).astype(float)
    pairable = (m >= 2).astype(float)
    pu = np.where(m >= 2, unit_agreement(patterns, m), 0.0)
    F = np.column_stack([unit_coincidences(patterns), pu, pairable, patterns / m[:, None], np.ones(len(m))])
    S = W @ F
    o = S[:, : V * V].reshape(-1, V, V)
    pa_num, n_pairable, pi_num, n_rated = S[:, V * V], S[:, V * V + 1], S[:, V * V + 2 : V * V + 2 + V], S[:, -1]
    lo_q, hi_q = (1 - confidence) / 2, 1 - (1 - confidence) / 2

    def interval(x: np.ndarray) -> tuple[tuple[float, float] | None, int]:
        ok = np.isfinite(x)
        if not ok.any():
            return None, resamples
        lo, hi = np.quantile(x[ok], [lo_q, hi_q])
        return (float(lo), float(hi)), int((~ok).sum())

    a_ci, a_bad = interval(alpha_from_coincidences(spec, o))
    with np.errstate(invalid="ignore", divide="ignore"):
        pa = np.where(n_pairable > 0, pa_num / n_pairable, np.nan)
        ac1 = ac1_from(pa, pi_num / n_rated[:, None], V) if V > 1 else np.full(len(pa), np.nan)
    p_ci, _ = interval(pa)
    c_ci, _ = interval(ac1)
    note = f"{a_bad} of {plural(resamples, 'resample')} had no variation and were left out" if a_bad and a_ci else None
    return Intervals(a_ci, p_ci, c_ci, note)


# -- Cohen's kappa ---------------------------------------------------------------------------
def cohen_kappa(x: np.ndarray, y: np.ndarray, spec: FieldSpec) -> Estimate:
    """Cohen's kappa of two annotators' value codes on the pairs both labelled."""
    V = len(spec.values)
    return cohen_from_confusion(np.bincount(x * V + y, minlength=V * V).reshape(V, V), spec)


def cohen_from_confusion(confusion: np.ndarray, spec: FieldSpec) -> Estimate:
    """Cohen's kappa, quadratic weights for ordered scales (over the full scale).

    The formula of ``sklearn.metrics.cohen_kappa_score`` (a test checks they agree), from a
    bincount confusion matrix: sklearn's input validation costs ~16 ms a call, which was
    most of the report with ten annotator pairs per field and category.
    """
    V = confusion.shape[0]
    confusion = confusion.astype(float)
    if np.count_nonzero(confusion.sum(axis=0) + confusion.sum(axis=1)) < 2:
        return Estimate.none("both annotators used a single category")
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    i = np.arange(V)
    w = (1.0 - np.eye(V)) if spec.level == "nominal" else (i[:, None] - i[None, :]) ** 2.0
    den = (w * expected).sum()
    if den == 0:
        return Estimate.none("expected disagreement is zero")
    return Estimate(float(1.0 - (w * confusion).sum() / den))


# -- per pair --------------------------------------------------------------------------------
def per_unit(counts: np.ndarray) -> dict[str, np.ndarray]:
    """n labels, majority value (unique mode, else -1), agreement share, entropy (bits)."""
    m = counts.sum(axis=1)
    top = counts.max(axis=1, initial=0)
    unique_top = (counts == top[:, None]).sum(axis=1) == 1
    majority = np.where(unique_top & (m > 0), counts.argmax(axis=1), -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = counts / m[:, None]
        share = np.where(m > 0, top / m, np.nan)
        ent = -np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0).sum(axis=1)
    return {"n": m, "majority": majority, "share": share, "entropy": ent + 0.0}
