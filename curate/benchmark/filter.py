"""Which labelled pairs become triplets, and which rule removed the others.

Rules run in a fixed order and a removed pair is counted under the first rule that removes
it, so the counts add up to the pairs considered:

1. ``adjudicated_exclude``  the lead excluded the pair
2. ``flagged``              an annotator flagged it (broken image, unsafe, unclear prompt)
3. ``min_labels``           fewer submitted labels than required (unlabelled pairs count here)
4. ``agreement:<field>``    the modal value is not unique or holds less than the share asked
   ``margin:<field>``       the mean of the labels' values of a scale field lies nearer its
                            midpoint than asked (the scheme's preference midpoint, e.g. MMRB2's
                            3.5, for its preference field; else the scale's middle)
   ``alpha:<field>``        Krippendorff's alpha on the field in the pair's category, among the
                            pairs considered, is below the floor asked, or undefined
5. ``no_preference``        no chosen response can be decided
6. ``tie``                  the decision is a tie: ties never make a triplet
7. ``correctness_task``     correctness task, but chosen is not judged correct and rejected
                            incorrect
8. ``missing_images``       a prompt image is missing from the store (only with
                            missing_images = "drop")
9. ``missing_response_images``  an image of the chosen or the rejected response is missing
                            from the store (only with missing_images = "drop"; with "keep"
                            the response keeps a placeholder part in its place)

An adjudication overrides the labels: an adjudicated pair skips rules 2-4, and each field
the lead decided replaces the annotators' majority. With ``aggregation`` other than
``majority`` (Dawid-Skene, MACE: curate/quality/aggregate.py) the model's value of each field,
or the pair's gold answer where there is one, takes the majority's place; rules 2-4 still
look at the labels themselves. Labels of control tasks count nowhere here. Rules 6-7 still apply to the decision.
Correctness of a response is the adjudication, else the labels' majority, else the automatic
verdict of the reference answer (``Pair.auto_first`` / ``auto_second``).

The preference follows the pair's annotation scheme (curate/schemes.py): for a scale (MMRB2's
``score``) the mean of the labels' values against the scheme's midpoint
(``curate.schemes.pair_preference``: chosen is the first response exactly when the mean is
above 3.5); otherwise each label's preference (``label_preference``, which ``to_label`` keeps
in the label's preference: for ``verify`` the judges' proposal when agreed, else the
correction), aggregated as above. Rules name fields by their label names: ``preference``,
``correctness_first``, or a scheme's field as ``Label.ratings`` keeps it (``score``,
``grade_first``, ``helpfulness_second``).

A pair belongs to the correctness task when its ``task`` is ``"correctness"`` or its item's
category is Multimodal RewardBench's ``open_generation/correctness_task`` (see
:func:`in_correctness_task`): pairing leaves ``task`` empty when no reference decides it, and
sets it to ``"preference"`` when both responses got the same verdict, yet the category says
which task the item was written for, so its pairs are held to the task's rule all the same.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import MmrbError
from ..model import MMRB2_CATEGORIES, Adjudication, Candidate, Item, Label, Pair
from ..quality.aggregate import Aggregated, aggregate, table_majority
from ..quality.frames import gold_by_field, label_values, table_frame
from ..schemes import Scheme, label_preference, pair_preference, rating_keys, schemes_of
from .rules import AGREEMENT_FIELDS, Rules

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from ..agreement.table import LabelTable
    from ..model import Gold
    from ..store import Store

CORRECTNESS_TASK_CATEGORY = "open_generation/correctness_task"  # one of model.MMRB_CATEGORIES


@dataclass(frozen=True)
class BuildDecision:
    pair: Pair
    category: str
    removed_by: str | None  # None: kept
    chosen: str | None = None  # "first" or "second"
    n_labels: int = 0
    agreement: float | None = None  # share of labels on the decided preference
    adjudicated: bool = False
    missing_images: int = 0  # the prompt's images missing from the store
    missing_response_images: int = 0  # the two responses' images missing from the store


@dataclass
class FilterResult:
    decisions: list[BuildDecision]
    rules: list[str] = field(default_factory=list)  # rule names in the order they ran

    @property
    def kept(self) -> list[BuildDecision]:
        return [d for d in self.decisions if d.removed_by is None]

    def removed(self) -> dict[str, dict[str, int]]:
        """rule -> category -> pairs removed (every rule listed, zeros included)."""
        out: dict[str, dict[str, int]] = {r: {} for r in self.rules}
        for d in self.decisions:
            if d.removed_by is not None:
                row = out.setdefault(d.removed_by, {})
                row[d.category] = row.get(d.category, 0) + 1
        return {r: dict(sorted(v.items())) for r, v in out.items()}

    def kept_per_category(self) -> dict[str, int]:
        return dict(sorted(Counter(d.category for d in self.kept).items()))

    def considered_per_category(self) -> dict[str, int]:
        return dict(sorted(Counter(d.category for d in self.decisions).items()))

    def as_dict(self) -> dict[str, object]:
        """The table of `mmrb build` as JSON (docs/json.md): pairs considered, removed by each
        rule (in the order the rules ran) and kept, per category."""
        return {
            "rules": list(self.rules),
            "considered": self.considered_per_category(),
            "removed": self.removed(),
            "kept": self.kept_per_category(),
        }


@dataclass(frozen=True)
class PairLabels:
    """What the rules read of a pair's submitted labels: how many there are, whether one is
    flagged, and the values given for each field, by the field's name."""

    n: int = 0
    flagged: bool = False
    values: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def given(self, name: str) -> list[str]:
        return list(self.values.get(name, ()))

    @classmethod
    def of(cls, labels: Sequence[Label]) -> PairLabels:
        """From Label records (the build reads the values from its LabelTable instead)."""
        values: dict[str, list[str]] = defaultdict(list)
        for lab in labels:
            for name, v in label_values(lab).items():
                values[name].append(v)
        return cls(len(labels), any(lab.flag for lab in labels), dict(values))


def _mode(values: list[str]) -> tuple[str | None, float]:
    """(unique modal value or None, its share)."""
    # a plain count, not Counter.most_common (3x the time for the usual three labels, called
    # per pair and field); unanimous labels, the common case, need no count at all
    n = len(values)
    if not n:
        return None, 0.0
    if values.count(values[0]) == n:
        return values[0], 1.0
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    top = max(counts.values())
    modal = [v for v, k in counts.items() if k == top]
    return (modal[0] if len(modal) == 1 else None), top / n


def in_correctness_task(pair: Pair, item: Item) -> bool:
    """The correctness task: ``task == "correctness"`` or the item's category is
    ``open_generation/correctness_task``, whatever ``task`` says."""
    return pair.task == "correctness" or item.category == CORRECTNESS_TASK_CATEGORY


def rule_names(rules: Rules) -> list[str]:
    names = ["adjudicated_exclude"] if rules.adjudication else []
    if rules.flagged_out:
        names.append("flagged")
    names.append("min_labels")
    names += [f"agreement:{f}" for f in sorted(rules.agreement)]
    names += [f"margin:{f}" for f in sorted(rules.margin)]
    names += [f"alpha:{f}" for f in sorted(rules.alpha)]
    names += ["no_preference", "tie"]
    if rules.correctness_task:
        names.append("correctness_task")
    if rules.missing_images == "drop":
        names += ["missing_images", "missing_response_images"]
    return names


def decide(
    pair: Pair,
    item: Item,
    labels: PairLabels,
    adj: Adjudication | None,
    rules: Rules,
    image_ok: dict[str, bool],
    aggregated: Mapping[str, str] | None = None,
    responses: Sequence[Candidate] = (),
    scheme: Scheme | None = None,
    low_alpha: Collection[str] = (),
) -> BuildDecision:
    """``aggregated``: field -> this pair's value from the aggregation model (not majority);
    ``responses``: the pair's two candidates (their images are checked like the prompt's);
    ``scheme``: the pair's annotation scheme (None: mmrb's); ``low_alpha``: the fields whose
    alpha in the pair's category is below the rules' floor."""
    adj = adj if rules.adjudication else None
    n = labels.n

    def gone(images) -> int:
        return sum(1 for im in images if not (im.sha256 and image_ok.get(im.sha256, False)))

    missing = gone(item.images)
    missing_answers = sum(gone(c.images) for c in responses)

    def decision(removed_by: str | None, chosen: str | None = None, agreement: float | None = None) -> BuildDecision:
        return BuildDecision(
            pair, item.category, removed_by, chosen, n, agreement, adj is not None, missing, missing_answers
        )

    if adj is not None and adj.exclude:
        return decision("adjudicated_exclude")
    if adj is None:
        if rules.flagged_out and labels.flagged:
            return decision("flagged")
        if n < rules.min_labels:
            return decision("min_labels")
        for fname in sorted(rules.agreement):
            vals = labels.given(fname)
            if not vals:
                continue  # nobody gave this field: nothing to disagree on
            modal, modal_share = _mode(vals)
            if modal is None or modal_share < rules.agreement[fname].share:
                return decision(f"agreement:{fname}")
        for fname in sorted(rules.margin):
            vals = labels.given(fname)
            middle = scale_midpoint(scheme, fname)
            if not vals or middle is None:
                continue  # not a field of this pair's labels
            if abs(statistics.fmean(float(v) for v in vals) - middle) < rules.margin[fname]:
                return decision(f"margin:{fname}")
        for fname in sorted(rules.alpha):
            if fname in low_alpha:
                return decision(f"alpha:{fname}")

    def field_value(fname: str) -> tuple[str | None, float | None]:
        if adj is not None and getattr(adj, fname):
            return getattr(adj, fname), None
        given = labels.given(fname)
        decided = aggregated.get(fname) if aggregated is not None else None
        if decided:
            return decided, (given.count(decided) / len(given) if given else None)
        value, share = _mode(given)
        return value, (share if value else None)

    pref, share = field_value("preference")
    d = scheme.preference if scheme is not None else None
    if d is not None and d.rule == "scale" and not (adj is not None and adj.preference) and labels.given(d.field):
        # a scale's rule is over the labels together (MMRB2: the mean against 3.5), not a vote
        scores = [{d.field: v} for v in labels.given(d.field)]
        pref = pair_preference(scheme, scores) if scheme is not None else None
        share = sum(label_preference(scheme, v) == pref for v in scores) / len(scores) if scheme else None
    c1, _ = field_value("correctness_first")
    c2, _ = field_value("correctness_second")
    c1, c2 = c1 or pair.auto_first, c2 or pair.auto_second
    correctness_task = in_correctness_task(pair, item)
    if pref is None and correctness_task and {c1, c2} == {"correct", "incorrect"}:
        pref = "first" if c1 == "correct" else "second"  # correctness decides the correctness task
    if pref is None:
        return decision("no_preference")
    if pref == "tie":
        return decision("tie")
    if rules.correctness_task and correctness_task:
        chosen_c, rejected_c = (c1, c2) if pref == "first" else (c2, c1)
        if chosen_c != "correct" or rejected_c != "incorrect":
            return decision("correctness_task", pref)
    if rules.missing_images == "drop" and missing:
        return decision("missing_images", pref)
    if rules.missing_images == "drop" and missing_answers:
        return decision("missing_response_images", pref)
    return decision(None, pref, share)


def scale_midpoint(scheme: Scheme | None, key: str) -> float | None:
    """The midpoint a margin rule measures field ``key`` from: the scheme's preference midpoint
    for its preference scale, else the middle of the scale; None when ``key`` is no scale of it."""
    if scheme is None:
        return None
    d = scheme.preference
    if d.rule == "scale" and d.field == key:
        return d.midpoint
    for f in scheme.fields:
        if f.kind in ("scale", "scale_per_response") and key in rating_keys(scheme, f):
            return (f.low + f.high) / 2
    return None


def _check_fields(rules: Rules, schemes: Iterable[Scheme], table: LabelTable) -> None:
    """Every field a rule names is one of the labels' fields (of some pair's scheme), a margin's
    a scale: a misspelt name is an error, never a rule that removes nothing."""
    used = {id(s): s for s in schemes}.values()
    known = set(AGREEMENT_FIELDS) | set(table.fields)
    known |= {k for s in used for f in s.fields if f.kind != "text" for k in rating_keys(s, f)}
    for rule, names in (("agreement", rules.agreement), ("margin", rules.margin), ("alpha", rules.alpha)):
        for name in sorted(names):
            if name not in known:
                raise MmrbError(
                    f"rules: filter.{rule}.{name}: no field of that name in the pairs' schemes "
                    f"(fields: {', '.join(sorted(known))})"
                )
            if rule == "margin" and all(scale_midpoint(s, name) is None for s in used):
                raise MmrbError(f"rules: filter.margin.{name}: not a scale of the pairs' schemes (a margin needs one)")


def _low_alpha(rules: Rules, table: LabelTable, pair_ids: Iterable[str]) -> dict[str, set[str]]:
    """category -> the fields whose alpha there, among ``pair_ids``, is below the floor or undefined
    (a category where nobody gave the field is not held to it)."""
    if not rules.alpha:
        return {}
    from ..agreement import agreement_report  # deferred: only an alpha rule computes the report here

    report = agreement_report(table.only(set(pair_ids)), per_category=True, resamples=0)
    out: dict[str, set[str]] = {}
    for cat, rep in (report.categories or {}).items():
        for name, floor in rules.alpha.items():
            fr = rep.fields.get(name)
            if fr is not None and fr.n_labels and (fr.alpha.value is None or fr.alpha.value < floor):
                out.setdefault(cat, set()).add(name)
    return out


@dataclass(frozen=True)
class BuildInputs:
    """What the exports need of the store, read once with the decisions."""

    items: dict[str, Item]
    candidates: dict[str, Candidate]
    image_ok: dict[str, bool]  # image sha256 -> its file is in the store (prompts' and responses')
    aggregated: Aggregated | None = None  # the labels aggregated by rules.aggregation
    # pair id -> its submitted labels, of the pairs in MMRB2's tasks (the one export that writes them)
    labels: Mapping[str, list[Label]] = field(default_factory=dict)
    schemes: Mapping[str, Scheme] = field(default_factory=dict)  # pair id -> its annotation scheme


def apply_rules(store: Store, rules: Rules, table: LabelTable) -> tuple[FilterResult, BuildInputs]:
    """Decide every pair in scope. ``table``: the store's submitted regular labels, the one
    label table of the build (curate.agreement.from_store), whose fields the rules read by
    name. Returns the result and what the exports need, read once."""
    pairs = [p for p in store.pairs() if p.status in rules.statuses]
    items = {i.id: i for i in store.items()}
    candidates = {c.id: c for c in store.candidates()}
    # what a table of field values does not hold: how many labels a pair has and whether one
    # is flagged, counted in the store; the records themselves only where an export writes
    # them as they are (the MMRB2 layout's ratings, of its tasks' pairs). Control tasks never count
    counts = store.label_counts(status="submitted", control=False)
    labels: dict[str, list[Label]] = defaultdict(list)
    for lab in store.labels(status="submitted", control=False, categories=MMRB2_CATEGORIES):
        labels[lab.pair_id].append(lab)
    schemes = schemes_of(store, [p.id for p in pairs])
    _check_fields(rules, schemes.values(), table)
    scales = {s.preference.field for s in {id(s): s for s in schemes.values()}.values() if s.preference.rule == "scale"}
    wanted = dict.fromkeys([*AGREEMENT_FIELDS, *rules.agreement, *rules.margin, *sorted(scales)])
    given = {name: table.given(name) for name in wanted}
    low_alpha = _low_alpha(rules, table, (p.id for p in pairs))
    adjudications = store.adjudications()
    image_ok: dict[str, bool] = {}
    in_scope = {cid for p in pairs for cid in (p.first_id, p.second_id)}
    shas = {im.sha256 for item in items.values() for im in item.images if im.sha256}
    shas |= {im.sha256 for cid in in_scope if cid in candidates for im in candidates[cid].images if im.sha256}
    known = store.image_paths(shas)
    for sha in shas:
        path = known.get(sha)
        image_ok[sha] = bool(path and path.is_file())
    agg = _aggregate(pairs, table, store.gold(), rules)
    per_pair: dict[str, dict[str, str]] = defaultdict(dict)
    if rules.aggregation != "majority":
        for fname, fa in agg.fields.items():
            for pid, v in fa.final.items():
                per_pair[pid][fname] = v

    def pair_labels(pid: str) -> PairLabels:
        n, flagged = counts.get(pid, (0, False))
        values = {name: by_pair[pid] for name, by_pair in given.items() if pid in by_pair}
        return PairLabels(n, flagged, values)

    decisions = [
        decide(
            p,
            items[p.item_id],
            pair_labels(p.id),
            adjudications.get(p.id),
            rules,
            image_ok,
            per_pair.get(p.id, {}) if rules.aggregation != "majority" else None,
            (candidates[p.first_id], candidates[p.second_id]),
            schemes.get(p.id),
            low_alpha.get(items[p.item_id].category, ()),
        )
        for p in pairs
    ]
    return FilterResult(decisions, rule_names(rules)), BuildInputs(items, candidates, image_ok, agg, labels, schemes)


def _aggregate(pairs: list[Pair], table: LabelTable, gold: Mapping[str, Gold], rules: Rules) -> Aggregated:
    """The regular labels of the pairs in scope aggregated by ``rules.aggregation`` (gold
    where present); with the majority rule, for the card's reliability figures only, counted
    from the table's codes (``table_majority``). The models take crowd-kit's long frame: the
    table's labels converted to it."""
    if rules.aggregation == "majority":
        return table_majority(table, AGREEMENT_FIELDS, {p.id for p in pairs})
    frame = table_frame(table, AGREEMENT_FIELDS, [p.id for p in pairs])
    return aggregate(frame, rules.aggregation, gold_by_field(gold.values()), seed=rules.seed)
