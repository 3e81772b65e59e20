"""Assign pairs to annotators: k distinct annotators per pair, balanced load, gold pairs mixed
in, adaptive overlap, and re-runs that only ever add to the plan.

Rules, in the order they are applied (each run is one transaction):

* Regular pairs are the pairs that are neither dropped nor gold (or ``pair_ids``). A pair
  needs ``k`` annotators who have not skipped it; the missing ones are chosen among the
  eligible annotators with the lowest load so far (ties broken by a seeded hash), never an
  annotator already on the pair.
* Adaptive overlap: a pair whose assignments are all done and whose first ``k`` submitted
  labels are not unanimous gets one more annotator; after that it keeps getting one more
  while its labels have no strict majority, up to ``max_k`` annotators.
* Control tasks: pairs with a gold answer (``Store.gold``: imported, adjudicated or from a
  reference, and the pairs marked ``Pair.is_gold``) are mixed into each annotator's new work
  so that about ``control_share`` of their queue is control tasks, spread evenly at seeded
  positions, each gold pair at most once per annotator and never one already in their queue.
  A control task is an assignment like any other (same queue, same view); its label is
  checked against gold and counts toward no pair's overlap (here), agreement or build.
* Qualification (curate/quality/qualification.py): when a qualification set is configured,
  each annotator without labels gets it at the front of their queue first.
* Existing assignments are never moved, re-sided or re-numbered: new work is appended after
  the annotator's last ``seq``. Every pair is queued in one shared seeded order, so overlapping
  annotators reach the same pairs at about the same time and agreement can be computed early.
* The display side (``Assignment.left``) is a seeded hash of (pair, annotator): stable across
  re-runs, about half the annotators of a pair see each response on the left.
* Two runs at once are serialised: the second waits, then plans on top of the first one's
  committed assignments (so it adds only what is still missing). A run that loses a race
  anyway is rolled back whole and tried again; after ``ATTEMPTS`` it gives up with one line.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from sqlalchemy.exc import IntegrityError

from .audit import SYSTEM
from .errors import MmrbError
from .model import Assignment, Label, Pair
from .quality.qualification import qualification_assignments
from .schemes import Scheme, change_problem, from_table, resolve, same, stored_key, to_table
from .seeding import unit
from .sides import annotator_left
from .store import now
from .wording import plural

if TYPE_CHECKING:  # the store is imported by whoever opens it
    from .store import Transaction
    from .store.protocols import AssignStore, QualificationSetStore

ATTEMPTS = 3  # tries of a run that keeps losing races before it gives up
LAST_PLAN = "assign.last_plan"  # the setting holding the last run's k, max k and control share
DEFAULT_PLAN: dict[str, float] = {"k": 3, "max_k": 3, "control_share": 0.0}


@dataclass(frozen=True)
class AssignReport:
    created: int  # assignments added by this run
    regular: int  # of which on regular pairs
    gold: int  # of which control tasks (gold pairs)
    adaptive: int  # extra annotators added because the first labels disagreed
    pairs: int  # regular pairs considered
    annotators: tuple[str, ...]
    load: dict[str, int] = field(default_factory=dict)  # total assignments per annotator after the run
    short: tuple[str, ...] = ()  # pairs that still have fewer than k annotators (too few annotators)
    gold_pool: int = 0
    gold_without_answer: int = 0  # pairs marked gold with no gold answer: cannot be scored
    qualification: int = 0  # qualification pairs queued (of ``created``)
    scheme: SchemeChange | None = None  # the batch's scheme, when one was given

    def as_dict(self) -> dict[str, object]:
        """Every figure of the report (`mmrb assign --json`)."""
        return asdict(self)

    def lines(self) -> list[str]:
        out = [
            f"{plural(self.created, 'assignment')} added ({self.regular} regular, {self.gold} control, "
            f"{self.adaptive} adaptive) over {plural(self.pairs, 'pair')} and "
            f"{plural(len(self.annotators), 'annotator')}"
        ]
        for name in self.annotators:
            out.append(f"  {name}: {self.load.get(name, 0)} assigned")
        if self.short:
            short = plural(len(self.short), "pair", verb=("has", "have"))
            out.append(f"{short} fewer than k annotators (not enough annotators)")
        if self.qualification:
            out.append(f"{plural(self.qualification, 'qualification pair')} queued first for new annotators")
        if self.scheme is not None:
            c = self.scheme
            again = f"; {plural(c.relabel, 'label')} of the old version in the history, to label again"
            new = ", new" if c.new_version else ""
            given = plural(c.given, "pair")
            out.append(f"scheme {c.name} (version {c.version}{new}) given to {given}" + again * bool(c.relabel))
        if self.gold_without_answer:
            out.append(
                f"warning: {plural(self.gold_without_answer, 'gold pair', verb=('has', 'have'))} no known answer"
            )
        return out


# The response an annotator sees on the left (Assignment.left), decided in curate/sides.py.
side_for = annotator_left


def _vote(label: Label) -> tuple:
    """What two labels must share to agree: the preference, else the correctness pair."""
    if label.preference is not None:
        return ("preference", label.preference)
    return ("correctness", label.correctness_first, label.correctness_second)


def needs_another(votes: list[tuple], k: int) -> bool:
    """Adaptive overlap: the first k labels not unanimous, then no strict majority."""
    if len(votes) < k or not votes:
        return False
    counts = Counter(votes)
    if len(votes) == k:
        return len(counts) > 1
    return counts.most_common(1)[0][1] * 2 <= len(votes)


@dataclass(frozen=True)
class AssignSettings:
    """A run's numbers: ``k`` annotators per pair, up to ``max_k`` when labels disagree, about
    ``control_share`` of each new queue control tasks, every seeded choice from ``seed``."""

    k: int
    max_k: int
    seed: int
    control_share: float
    batch: str
    scheme: Scheme | None = None
    new_version: bool = False


def assign(
    store: AssignStore,
    *,
    k: int,
    annotators: list[str] | None = None,
    seed: int = 0,
    control_share: float = 0.0,
    max_k: int | None = None,
    batch: str = "",
    pair_ids: Iterable[str] | None = None,
    scheme: Scheme | None = None,
    new_version: bool = False,
    by: str = SYSTEM,
) -> AssignReport:
    """``scheme``: the batch's annotation scheme, given to its regular pairs (see
    ``give_scheme``); None leaves each pair's as it is. ``by``: who runs it (the audit trail
    records a run that assigned anything, in its transaction)."""
    if k < 1:
        raise MmrbError(f"k must be at least 1, got {k}")
    if max_k is None:
        max_k = k
    if max_k < k:
        raise MmrbError(f"max_k ({max_k}) must be at least k ({k})")
    if not 0.0 <= control_share < 1.0:
        raise MmrbError(f"control share must be in [0, 1), got {control_share}")
    settings = AssignSettings(
        k=k, max_k=max_k, seed=seed, control_share=control_share, batch=batch, scheme=scheme, new_version=new_version
    )
    wanted = list(pair_ids) if pair_ids is not None else None  # read again by a retry
    attempt = 1
    while True:
        try:
            return _assign(store, settings, annotators, wanted, by)
        except IntegrityError:
            # the transaction was rolled back whole: nothing of this attempt is in the store
            if attempt == ATTEMPTS:
                raise MmrbError(
                    f"another assignment run kept writing the same rows ({ATTEMPTS} tries); "
                    "nothing was assigned by this run: run it again"
                ) from None
            attempt += 1


def _assign(
    store: AssignStore, settings: AssignSettings, annotators: list[str] | None, pair_ids: list[str] | None, by: str
) -> AssignReport:
    """The run's one transaction: read, plan (``plan_assignments``), write."""
    with store.transaction() as tx:
        # Taken first, held until commit: SQLite's write lock already serialises runs; on
        # PostgreSQL updating this row makes a concurrent run wait here, and then read the
        # assignments this one committed. (The very first run may race on inserting the row:
        # an IntegrityError, retried by assign.)
        store.set_setting("assign.last_started", now(), conn=tx)
        store.set_setting(LAST_PLAN, json.dumps(plan_numbers(settings), sort_keys=True), conn=tx)
        if annotators is None:
            names = [a.name for a in store.annotators(conn=tx) if a.active and a.role == "annotator"]
        else:
            names = list(dict.fromkeys(annotators))
            for n in names:
                store.ensure_annotator(n, conn=tx)
        if not names:
            raise MmrbError(
                "no annotators to assign to: add annotators first (mmrb annotators add) or pass --annotators"
            )
        all_pairs = [p for p in store.pairs(conn=tx) if p.status != "dropped"]
        gold = store.gold(conn=tx)
        gold_pool = [p for p in all_pairs if p.is_gold or p.id in gold]
        regular = regular_pairs(all_pairs, pair_ids, settings.seed)
        change = (
            give_scheme(store, settings.scheme, [p.id for p in regular], settings.new_version, tx)
            if settings.scheme is not None
            else None
        )
        qualifying = qualification_assignments(store, names, settings.seed, tx)
        if qualifying:
            store.add_assignments(qualifying, conn=tx)
        labels = store.labels(status=None, control=False, conn=tx)
        plan = plan_assignments(names, regular, gold_pool, store.assignments(conn=tx), labels, settings)
        store.add_assignments(plan.rows, conn=tx)
        if plan.rows or qualifying or (change is not None and change.given):
            details: dict[str, object] = {
                "assignments": len(plan.rows) + len(qualifying),
                "control": plan.n_gold + len(qualifying),
                "annotators": len(names),
                "k": settings.k,
                "max_k": settings.max_k,
                "control_share": settings.control_share,
                "seed": settings.seed,
            }
            if change is not None:
                details |= {"scheme": f"{change.name} v{change.version}", "scheme_given": change.given}
            store.record_audit(by, "assign", settings.batch, details, conn=tx)

    everyone = tuple(sorted(set(names) | set(plan.load)))
    return AssignReport(
        created=len(plan.rows) + len(qualifying),
        regular=len(plan.rows) - plan.n_gold,
        gold=plan.n_gold + len(qualifying),
        adaptive=plan.adaptive,
        pairs=len(regular),
        annotators=everyone,
        load={n: plan.load[n] for n in everyone},
        short=plan.short,
        gold_pool=len(gold_pool),
        gold_without_answer=sum(1 for g in gold_pool if g.id not in gold),
        qualification=len(qualifying),
        scheme=change,
    )


@dataclass(frozen=True)
class SchemeChange:
    """What giving a batch its scheme did."""

    name: str
    version: int
    given: int  # pairs that now have it (and did not before)
    relabel: int  # labels moved to the history, their pairs to be labelled again
    new_version: bool  # the scheme's table differed from the stored one: a new version was kept


def give_scheme(
    store: AssignStore, scheme: Scheme, pair_ids: list[str], new_version: bool, tx: Transaction
) -> SchemeChange:
    """Give ``pair_ids`` the scheme. A pair with labels changes scheme only when its labels can
    be read under the new one (the same fields, an added optional one: ``change_problem``);
    else only with ``new_version``, and then its labels go to the history, kept under their
    version, and the pair is labelled again. Any other pair with labels refuses the batch."""
    definitions = store.scheme_definitions(conn=tx)
    versions = sorted(v for n, v in definitions if n == scheme.name)
    version = scheme.version
    at = definitions.get((scheme.name, version))
    fresh = False
    if at is not None and not same(from_table(at), scheme):
        version, fresh = versions[-1] + 1, True  # same name and number, another form: a new version
    elif at is None and versions:
        fresh = True
    target = replace(scheme, version=version)
    key = stored_key(target)
    current = store.pair_schemes(pair_ids, conn=tx)
    labelled = {lab.pair_id for lab in store.labels(status=None, control=None, conn=tx)}
    plain, relabel, refused = [], [], []
    for pid in pair_ids:
        if current[pid] == key:
            continue
        old = resolve(*current[pid], definitions)
        problem = change_problem(old, target) if pid in labelled else None
        if problem is None:
            plain.append(pid)
        elif new_version and old.name == target.name:
            relabel.append(pid)
        else:
            refused.append((pid, problem, old.name == target.name))
    if refused:
        pid, why, same_name = refused[0]
        hint = " (--new-version labels them again, keeping the old labels in the history)" if same_name else ""
        raise MmrbError(
            f"{plural(len(refused), 'pair')} already labelled cannot take scheme {target.name!r}: "
            f"e.g. {pid!r}: {why}{hint}; nothing was assigned"
        )
    if key[0] is not None and (plain or relabel):
        store.add_scheme(target.name, version, to_table(target), conn=tx)
    if plain:
        store.set_pair_scheme(plain, *key, conn=tx)
    moved = store.set_pair_scheme(relabel, *key, relabel=True, conn=tx) if relabel else 0
    return SchemeChange(target.name, version, len(plain) + len(relabel), moved, fresh and bool(plain or relabel))


def plan_numbers(settings: AssignSettings) -> dict[str, float]:
    """The numbers of a run a later one starts from (the Annotators page's form)."""
    return {"k": settings.k, "max_k": settings.max_k, "control_share": settings.control_share}


def last_plan(store: QualificationSetStore) -> dict[str, float]:
    """The last run's k, max k and control share, so that the next run does not change the
    overlap by accident (a form defaulting to k=3 on a store assigned with k=2 would add a
    third label to every pair); before any run, k=3. A setting that cannot be read is ignored."""
    raw = store.get_setting(LAST_PLAN)
    try:
        got = json.loads(raw) if raw else {}
    except ValueError:
        got = {}
    if not isinstance(got, dict):
        got = {}
    return {
        k: v if isinstance(v := got.get(k), int | float) and not isinstance(v, bool) else d
        for k, d in DEFAULT_PLAN.items()
    }


def regular_pairs(pairs: list[Pair], pair_ids: list[str] | None, seed: int) -> list[Pair]:
    """The pairs to give ``k`` annotators (the given ones, else every pair not gold), in the one
    queue order shared by everybody."""
    if pair_ids is not None:
        wanted = set(pair_ids)
        missing = sorted(wanted - {p.id for p in pairs})
        if missing:
            raise MmrbError(f"{plural(len(missing), 'pair id')} not found or dropped, e.g. {missing[0]!r}")
        regular = [p for p in pairs if p.id in wanted and not p.is_gold]
    else:
        regular = [p for p in pairs if not p.is_gold]
    return sorted(regular, key=lambda p: (unit("order", seed, p.id), p.id))


@dataclass
class _Tally:
    """What the assignments already made hold, per annotator and per pair."""

    by_pair: defaultdict[str, list[Assignment]] = field(default_factory=lambda: defaultdict(list))  # regular only
    load: Counter[str] = field(default_factory=Counter)  # updated as the plan adds work
    last_seq: dict[str, int] = field(default_factory=dict)
    mine: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # pairs in a queue
    taken_by: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # annotators on a pair
    regular_count: Counter[str] = field(default_factory=Counter)
    gold_count: Counter[str] = field(default_factory=Counter)  # control tasks, qualification left out


def tally(existing: Iterable[Assignment]) -> _Tally:
    t = _Tally()
    for a in existing:
        t.load[a.annotator] += 1
        t.last_seq[a.annotator] = max(t.last_seq.get(a.annotator, -1), a.seq)
        t.mine[a.annotator].add(a.pair_id)
        t.taken_by[a.pair_id].add(a.annotator)
        if a.is_gold:
            if not a.qualification:
                t.gold_count[a.annotator] += 1
        else:
            t.by_pair[a.pair_id].append(a)  # control tasks count toward no overlap
            t.regular_count[a.annotator] += 1
    return t


@dataclass(frozen=True)
class AssignPlan:
    """The assignments a run adds, and what it found on the way."""

    rows: list[Assignment]
    n_gold: int  # control tasks among ``rows``
    adaptive: int
    short: tuple[str, ...]
    load: Counter[str]  # every annotator's assignments with ``rows``


def plan_assignments(
    names: list[str],
    regular: list[Pair],
    gold_pool: list[Pair],
    existing: Iterable[Assignment],
    labels: Iterable[Label],
    settings: AssignSettings,
) -> AssignPlan:
    """The run's decisions, from what the store holds (no I/O): who takes each regular pair,
    then each annotator's new queue with its control tasks mixed in."""
    t = tally(existing)
    new_regular, short, adaptive = plan_regular(names, regular, t, labels, settings)
    rows: list[Assignment] = []
    n_gold = 0
    for n in names:
        regs = new_regular.get(n, [])
        golds = control_tasks(n, regs, gold_pool, t, settings)
        queue = new_queue(n, regs, golds, t.last_seq.get(n, -1), settings)
        rows += queue
        n_gold += len(golds)
        t.load[n] += len(golds)
    return AssignPlan(rows, n_gold, adaptive, tuple(short), t.load)


def plan_regular(
    names: list[str], regular: list[Pair], t: _Tally, labels: Iterable[Label], settings: AssignSettings
) -> tuple[dict[str, list[str]], list[str], int]:
    """(annotator -> new regular pair ids in queue order, pairs still short of k, adaptive
    additions). Each pair's missing annotators are the least loaded (``t.load`` is updated)."""
    labels_by_pair: dict[str, list[Label]] = defaultdict(list)
    skipped: set[tuple[str, str]] = set()
    for lab in labels:
        if lab.status == "submitted":
            labels_by_pair[lab.pair_id].append(lab)
        elif lab.status == "skipped":
            skipped.add((lab.pair_id, lab.annotator))
    k, seed = settings.k, settings.seed
    new_regular: dict[str, list[str]] = defaultdict(list)
    short: list[str] = []
    adaptive = 0
    for p in regular:
        on_pair = t.by_pair.get(p.id, [])
        active = [a for a in on_pair if (p.id, a.annotator) not in skipped]
        labs = sorted(labels_by_pair.get(p.id, []), key=lambda lab: (lab.created_at or "", lab.annotator))
        all_done = bool(on_pair) and all(a.state == "done" for a in on_pair)
        extra = all_done and len(active) < settings.max_k and needs_another([_vote(x) for x in labs], k)
        need = (max(k, len(active) + 1) if extra else k) - len(active)
        if need <= 0:
            continue
        taken = t.taken_by.get(p.id, set())
        free = sorted((n for n in names if n not in taken), key=lambda n: (t.load[n], unit("pick", seed, p.id, n), n))
        chosen = free[:need]
        for n in chosen:
            new_regular[n].append(p.id)
            t.load[n] += 1
        if extra and chosen:
            adaptive += 1
        if len(active) + len(chosen) < k:
            short.append(p.id)
    return new_regular, short, adaptive


def control_tasks(name: str, regs: list[str], gold_pool: list[Pair], t: _Tally, settings: AssignSettings) -> list[str]:
    """The gold pairs to mix into an annotator's new work: enough for about ``control_share``
    of their queue, each new to them, in a seeded order."""
    share = settings.control_share
    if share <= 0 or not gold_pool:
        return []
    target = round((t.regular_count[name] + len(regs)) * share / (1 - share))
    in_queue = t.mine[name] | set(regs)
    pool = sorted(
        (g for g in gold_pool if g.id not in in_queue), key=lambda g: (unit("gold", settings.seed, name, g.id), g.id)
    )
    return [g.id for g in pool[: max(0, target - t.gold_count[name])]]


def new_queue(
    name: str, regs: list[str], golds: list[str], last_seq: int, settings: AssignSettings
) -> list[Assignment]:
    """An annotator's new work after their last ``seq``: gold spread evenly through it, each at
    a seeded offset within its slot."""
    seed = settings.seed
    slots = [(i + 0.5, pid, False) for i, pid in enumerate(regs)]
    for j, gid in enumerate(golds):
        u = unit("goldpos", seed, name, gid)
        slots.append(((j + u) * max(len(regs), 1) / len(golds), gid, True))
    slots.sort(key=lambda s: (s[0], s[1]))
    return [
        Assignment(
            pair_id=pid,
            annotator=name,
            left=side_for(pid, name, seed),
            seq=last_seq + 1 + i,
            batch=settings.batch,
            is_gold=is_gold,
        )
        for i, (_, pid, is_gold) in enumerate(slots)
    ]


__all__ = ["AssignPlan", "AssignReport", "AssignSettings", "assign", "needs_another", "plan_assignments", "side_for"]
