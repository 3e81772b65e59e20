"""Annotator bias diagnostics, as ``mmrb score`` computes position bias for judges: per
annotator, over every submitted label (control tasks included: they were shown like any
other pair),

- position: the share of left picks among preferences that pick a side, the screen side
  read from the label's assignment (``Assignment.left``) through curate/sides.py; labels
  without an assignment (imported ones) were never on this app's screen and are left out;
- ties: the share of ``tie`` among labels with a preference, and "unsure": the share of
  labels with any answer "unsure" (a response's correctness, or a scheme field's value);
- length: how often the chosen response is the longer one (characters of its text, images as
  their markers), among preferences that pick a side of two responses of different lengths;
- speed: labels faster than ``fast_fraction`` (a third) of the annotator's own median seconds,
  among their timed labels; undefined below ``MIN_TIMED`` timed labels (no median to speak of).

For labels on declared schemes the preference is the label's ``preference`` column, in
stored terms (``curate.schemes.to_label``: a scale against its midpoint, grades, a side).

Every share has its 95% Wilson interval (``curate.quality.reliability.wilson``), and an alert
is the same rule as gold accuracy's: the whole interval beyond a bound, whatever n
(:class:`BiasLimits` says which bound for each diagnostic, and why).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from ..sides import side_index
from ..wording import percent, plural, seconds
from .reliability import Share, wilson

if TYPE_CHECKING:
    from ..store.columns import LabelFactColumns

Diagnostic = Literal["left", "tie", "unsure", "longer", "fast"]
MIN_TIMED = 5  # timed labels below which an annotator's median (and so "fast") is undefined
FEWER_TIMED = f"fewer than {MIN_TIMED} timed labels"

DIAGNOSTICS: tuple[Diagnostic, ...] = ("left", "tie", "unsure", "longer", "fast")
TITLES: dict[str, str] = {
    "left": "left picks",
    "tie": "ties",
    "unsure": "unsure answers",
    "longer": "longer response chosen",
    "fast": "fast labels",
}


FACT_COLUMNS = ("annotator", "preference", "left", "seconds", "unsure", "length_first", "length_second")


@dataclass(frozen=True)
class LabelFacts:
    """One submitted label as the diagnostics read it: its stored preference, the stored side
    its assignment showed on the left (None without an assignment), its seconds, whether any
    answer is "unsure", and the characters of each response's text."""

    annotator: str
    preference: str | None
    left: str | None
    seconds: float | None
    unsure: bool
    length_first: int
    length_second: int


def facts_frame(facts: Iterable[LabelFacts]) -> pd.DataFrame:
    """Label facts as the frame :func:`bias_report` reads (one row a label, ``FACT_COLUMNS``)."""
    return pd.DataFrame([tuple(asdict(f).values()) for f in facts], columns=list(FACT_COLUMNS))


def store_facts(cols: LabelFactColumns) -> pd.DataFrame:
    """The store's scans (``Store.label_fact_columns``) as the facts frame: each label with its
    pair's lengths, found by position (each distinct pair looked up once, no merge on strings);
    the text columns as categories straight from their codes (a few values each: 600,000
    labels as pandas strings cost 0.3 s to make and as much to read back)."""
    if not len(cols.annotator.codes):
        return facts_frame(())
    pairs = pd.Index(cols.pair_ids.values[cols.pair_ids.codes], dtype=object)
    at = pairs.get_indexer(cols.pair.values)[cols.pair.codes] if len(pairs) else np.full(len(cols.pair.codes), -1)
    found = at >= 0
    frame = pd.DataFrame(
        {
            "annotator": _coded(cols.annotator.codes, cols.annotator.values),
            "preference": _coded(*_blank_missing(cols.preference.codes, cols.preference.values)),
            "left": _coded(*_blank_missing(cols.left.codes, cols.left.values)),
            "seconds": cols.seconds,
            "unsure": cols.unsure,
            "length_first": np.where(found, cols.length_first[at], 0) if len(pairs) else 0,
            "length_second": np.where(found, cols.length_second[at], 0) if len(pairs) else 0,
        }
    )
    return frame.reindex(columns=list(FACT_COLUMNS))


def _coded(codes: np.ndarray, values: np.ndarray) -> pd.Categorical:
    return pd.Categorical.from_codes(codes, categories=pd.Index(values, dtype=object))


def _blank_missing(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A column read with NULL as "" (the first value, codepoint order) with it as missing."""
    if len(values) and values[0] == "":
        return codes - 1, values[1:]
    return codes, values


@dataclass(frozen=True)
class BiasLimits:
    """Where an interval lying wholly beyond alerts. Sides are a seeded coin per (pair,
    annotator), so any lean to a side is the annotator's: its margin around 50% is narrow.
    A longer response is often the better one, so length has a wide margin. Ties, "unsure"
    and fast labels are legitimate now and then: only a large share alerts."""

    left_margin: float = 0.1  # left share: alert outside [40%, 60%]
    longer_margin: float = 0.2  # longer chosen: alert outside [30%, 70%]
    tie_max: float = 0.3
    unsure_max: float = 0.3
    fast_max: float = 0.1
    fast_fraction: float = 1 / 3  # "fast": under this fraction of the annotator's median

    def bounds(self, diagnostic: Diagnostic) -> tuple[float | None, float]:
        """(low, high): an alert when the interval lies wholly below low or above high."""
        if diagnostic == "left":
            return 0.5 - self.left_margin, 0.5 + self.left_margin
        if diagnostic == "longer":
            return 0.5 - self.longer_margin, 0.5 + self.longer_margin
        return None, {"tie": self.tie_max, "unsure": self.unsure_max, "fast": self.fast_max}[diagnostic]


@dataclass(frozen=True)
class AnnotatorBias:
    labels: int  # submitted labels
    left: Share  # left picks of the side-picking preferences shown through an assignment
    tie: Share  # ties of the labels with a preference
    unsure: Share  # labels with an "unsure" answer, of all labels
    longer: Share  # longer response chosen, of the side picks between responses of different lengths
    fast: Share  # labels under fast_fraction of the median, of the timed labels (n=0 when undefined)
    median_seconds: float | None
    fast_undefined: str | None = None  # why there is no median (FEWER_TIMED)
    unseen: int = 0  # side-picking labels without an assignment: no screen side

    def share(self, diagnostic: Diagnostic) -> Share:
        out: Share = getattr(self, diagnostic)
        return out


@dataclass(frozen=True)
class BiasAlert:
    annotator: str
    diagnostic: Diagnostic
    value: float
    low: float
    high: float
    n: int
    bound_low: float | None
    bound_high: float

    def text(self) -> str:
        """``bob: left picks 80.0% [66.3%, 89.1%] outside 40.0%-60.0% (40 labels)``."""
        where = (
            f"above {percent(self.bound_high)}"
            if self.bound_low is None
            else f"outside {percent(self.bound_low)}-{percent(self.bound_high)}"
        )
        return (
            f"{self.annotator}: {TITLES[self.diagnostic]} {percent(self.value)} [{percent(self.low)}, "
            f"{percent(self.high)}] {where} ({plural(self.n, 'label')})"
        )


@dataclass
class BiasReport:
    annotators: dict[str, AnnotatorBias]
    alerts: list[BiasAlert]
    limits: BiasLimits = field(default_factory=BiasLimits)

    def as_dict(self) -> dict:
        return {
            "annotators": {a: asdict(b) for a, b in self.annotators.items()},
            "alerts": [asdict(a) for a in self.alerts],
            "limits": asdict(self.limits),
            "fast_rule": f"under {self.limits.fast_fraction:.3g} of the annotator's median seconds",
        }

    def lines(self) -> list[str]:
        lim = self.limits
        out = [
            "Annotator bias (95% Wilson intervals; alerts when an interval lies wholly beyond: left picks outside "
            f"{percent(0.5 - lim.left_margin)}-{percent(0.5 + lim.left_margin)}, longer chosen outside "
            f"{percent(0.5 - lim.longer_margin)}-{percent(0.5 + lim.longer_margin)}, "
            f"ties above {percent(lim.tie_max)}, unsure above {percent(lim.unsure_max)}, "
            f"fast labels (under {lim.fast_fraction:.2g} of one's median seconds) above {percent(lim.fast_max)})"
        ]
        for a, b in self.annotators.items():
            median = "–" if b.median_seconds is None else f"{seconds(b.median_seconds)} s"
            fast = f"undefined ({b.fast_undefined})" if b.fast_undefined else b.fast.text()
            out.append(
                f"  {a} ({plural(b.labels, 'label')}): left {b.left.text()}; tie {b.tie.text()}; "
                f"unsure {b.unsure.text()}; longer chosen {b.longer.text()}; median {median}, fast {fast}"
            )
        out += [f"Bias alerts: {len(self.alerts)}"]
        out += [f"  ALERT {a.text()}" for a in self.alerts]
        return out


def _counts(frame: pd.DataFrame, limits: BiasLimits) -> pd.DataFrame:
    """Per annotator, each diagnostic's (k, n) as columns ``<name>_k`` / ``<name>_n``."""
    pref = frame["preference"].to_numpy(dtype=object)
    left = frame["left"].to_numpy(dtype=object)
    picked = (pref == "first") | (pref == "second")
    shown = picked & ((left == "first") | (left == "second"))
    # the screen position (0 left) of the stored side picked, when stored ``lead`` was on the left
    position = side_index((left == "second").astype(np.int64), (pref == "second").astype(np.int64))
    n1 = pd.to_numeric(frame["length_first"]).fillna(0).to_numpy()
    n2 = pd.to_numeric(frame["length_second"]).fillna(0).to_numpy()
    compared = picked & (n1 != n2)
    secs = pd.to_numeric(frame["seconds"]).to_numpy(dtype=float)
    timed = np.nan_to_num(secs, nan=0.0) > 0
    # per annotator by integer codes (names sorted): a group-by on 600,000 strings cost 0.3 s
    who, names = pd.factorize(frame["annotator"], sort=True)
    medians = pd.Series(np.where(timed, secs, np.nan)).groupby(who).median().reindex(range(len(names))).to_numpy()
    median = medians[who]
    columns = {
        "labels": np.ones(len(who), dtype=bool),
        "left_k": shown & (position == 0),
        "left_n": shown,
        "unseen": picked & ~shown,
        "tie_k": pref == "tie",
        "tie_n": pd.notna(frame["preference"]).to_numpy(),
        "unsure_k": frame["unsure"].to_numpy(dtype=bool),
        "unsure_n": np.ones(len(who), dtype=bool),
        "longer_k": compared & ((pref == "first") == (n1 > n2)),
        "longer_n": compared,
        "fast_k": timed & (secs < limits.fast_fraction * median),
        "fast_n": timed,
    }
    sums = pd.DataFrame(
        {
            k: np.bincount(who, weights=v.astype(np.float64), minlength=len(names)).astype(np.int64)
            for k, v in columns.items()
        },
        index=pd.Index([str(n) for n in names], name="annotator"),
    )
    return sums.assign(median=medians)


def _annotator(row: pd.Series) -> AnnotatorBias:
    def share(d: str) -> Share:
        return wilson(int(row[f"{d}_k"]), int(row[f"{d}_n"]))

    enough = int(row["fast_n"]) >= MIN_TIMED
    return AnnotatorBias(
        labels=int(row["labels"]),
        left=share("left"),
        tie=share("tie"),
        unsure=share("unsure"),
        longer=share("longer"),
        fast=share("fast") if enough else Share(0, 0, None, None, None),
        median_seconds=float(row["median"]) if enough else None,
        fast_undefined=None if enough else FEWER_TIMED,
        unseen=int(row["unseen"]),
    )


def _alerts(name: str, b: AnnotatorBias, limits: BiasLimits) -> list[BiasAlert]:
    out = []
    for d in DIAGNOSTICS:
        s = b.share(d)
        if s.share is None or s.low is None or s.high is None:
            continue
        lo, hi = limits.bounds(d)
        if s.low > hi or (lo is not None and s.high < lo):
            out.append(BiasAlert(name, d, s.share, s.low, s.high, s.n, lo, hi))
    return out


def bias_report(frame: pd.DataFrame, limits: BiasLimits | None = None) -> BiasReport:
    """The diagnostics of every annotator in ``frame`` (``FACT_COLUMNS``, one row a submitted
    label: :func:`facts_frame`, :func:`store_facts`), in name order, and their alerts."""
    limits = limits or BiasLimits()
    if frame.empty:
        return BiasReport({}, [], limits)
    annotators = {str(a): _annotator(row) for a, row in _counts(frame, limits).iterrows()}
    alerts = [x for a, b in annotators.items() for x in _alerts(a, b, limits)]
    return BiasReport(annotators, alerts, limits)
