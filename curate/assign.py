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

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy.exc import IntegrityError

from .errors import MmrbError
from .model import Assignment, Label
from .seeding import unit
from .sides import annotator_left
from .store import Store, now
from .wording import plural

ATTEMPTS = 3  # tries of a run that keeps losing races before it gives up


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


def assign(
    store: Store,
    *,
    k: int,
    annotators: list[str] | None = None,
    seed: int = 0,
    control_share: float = 0.0,
    max_k: int | None = None,
    batch: str = "",
    pair_ids: Iterable[str] | None = None,
) -> AssignReport:
    if k < 1:
        raise MmrbError(f"k must be at least 1, got {k}")
    if max_k is None:
        max_k = k
    if max_k < k:
        raise MmrbError(f"max_k ({max_k}) must be at least k ({k})")
    if not 0.0 <= control_share < 1.0:
        raise MmrbError(f"control share must be in [0, 1), got {control_share}")
    pair_ids = list(pair_ids) if pair_ids is not None else None  # read again by a retry
    attempt = 1
    while True:
        try:
            return _assign(store, k, annotators, seed, control_share, max_k, batch, pair_ids)
        except IntegrityError:
            # the transaction was rolled back whole: nothing of this attempt is in the store
            if attempt == ATTEMPTS:
                raise MmrbError(
                    f"another assignment run kept writing the same rows ({ATTEMPTS} tries); "
                    "nothing was assigned by this run: run it again"
                ) from None
            attempt += 1


def _assign(store: Store, k, annotators, seed, control_share, max_k, batch, pair_ids) -> AssignReport:
    from .quality.qualification import qualification_assignments

    with store.write() as conn:
        # Taken first, held until commit: SQLite's write lock already serialises runs; on
        # PostgreSQL updating this row makes a concurrent run wait here, and then read the
        # assignments this one committed. (The very first run may race on inserting the row:
        # an IntegrityError, retried by assign.)
        store.set_setting("assign.last_started", now(), conn=conn)
        if annotators is None:
            names = [a.name for a in store.annotators(conn=conn) if a.active and a.role == "annotator"]
        else:
            names = list(dict.fromkeys(annotators))
            for n in names:
                store.ensure_annotator(n, conn=conn)
        if not names:
            raise MmrbError(
                "no annotators to assign to: add annotators first (mmrb annotators add) or pass --annotators"
            )

        all_pairs = [p for p in store.pairs(conn=conn) if p.status != "dropped"]
        gold = store.gold(conn=conn)
        gold_pool = [p for p in all_pairs if p.is_gold or p.id in gold]
        if pair_ids is not None:
            wanted = set(pair_ids)
            known = {p.id for p in all_pairs}
            missing = sorted(wanted - known)
            if missing:
                raise MmrbError(f"{plural(len(missing), 'pair id')} not found or dropped, e.g. {missing[0]!r}")
            regular = [p for p in all_pairs if p.id in wanted and not p.is_gold]
        else:
            regular = [p for p in all_pairs if not p.is_gold]
        # one shared queue order for everybody
        regular.sort(key=lambda p: (unit("order", seed, p.id), p.id))

        qualifying = qualification_assignments(store, names, seed, conn)
        if qualifying:
            store.add_assignments(qualifying, conn=conn)
        existing = store.assignments(conn=conn)
        by_pair: dict[str, list[Assignment]] = defaultdict(list)
        load: Counter[str] = Counter()
        last_seq: dict[str, int] = {}
        mine: dict[str, set[str]] = defaultdict(set)  # every pair in an annotator's queue
        taken_by: dict[str, set[str]] = defaultdict(set)  # every annotator on a pair
        regular_count: Counter[str] = Counter()
        gold_count: Counter[str] = Counter()
        for a in existing:
            load[a.annotator] += 1
            last_seq[a.annotator] = max(last_seq.get(a.annotator, -1), a.seq)
            mine[a.annotator].add(a.pair_id)
            taken_by[a.pair_id].add(a.annotator)
            if a.is_gold:
                if not a.qualification:
                    gold_count[a.annotator] += 1
            else:
                by_pair[a.pair_id].append(a)  # control tasks count toward no overlap
                regular_count[a.annotator] += 1

        labels_by_pair: dict[str, list[Label]] = defaultdict(list)
        skipped: set[tuple[str, str]] = set()
        for lab in store.labels(status=None, control=False, conn=conn):
            if lab.status == "submitted":
                labels_by_pair[lab.pair_id].append(lab)
            elif lab.status == "skipped":
                skipped.add((lab.pair_id, lab.annotator))

        new_regular: dict[str, list[str]] = defaultdict(list)  # annotator -> pair ids, queue order
        short: list[str] = []
        adaptive = 0
        for p in regular:
            on_pair = by_pair.get(p.id, [])
            taken = taken_by.get(p.id, set())
            active = [a for a in on_pair if (p.id, a.annotator) not in skipped]
            want = k
            labs = sorted(labels_by_pair.get(p.id, []), key=lambda lab: (lab.created_at or "", lab.annotator))
            all_done = bool(on_pair) and all(a.state == "done" for a in on_pair)
            extra = 0
            if all_done and len(active) < max_k and needs_another([_vote(x) for x in labs], k):
                want = max(k, len(active) + 1)
                extra = 1
            need = want - len(active)
            if need <= 0:
                continue
            free = [n for n in names if n not in taken]
            free.sort(key=lambda n: (load[n], unit("pick", seed, p.id, n), n))
            chosen = free[:need]
            for n in chosen:
                new_regular[n].append(p.id)
                load[n] += 1
            if extra and chosen:
                adaptive += 1
            if len(active) + len(chosen) < k:
                short.append(p.id)

        rows: list[Assignment] = []
        n_gold = 0
        for n in names:
            regs = new_regular.get(n, [])
            golds: list[str] = []
            if control_share > 0 and gold_pool:
                total_regular = regular_count[n] + len(regs)
                target = round(total_regular * control_share / (1 - control_share))
                in_queue = mine[n] | set(regs)
                pool = sorted(
                    (g for g in gold_pool if g.id not in in_queue),
                    key=lambda g: (unit("gold", seed, n, g.id), g.id),
                )
                golds = [g.id for g in pool[: max(0, target - gold_count[n])]]
            # spread gold evenly through the new work, each at a seeded offset within its slot
            slots = [(i + 0.5, pid, False) for i, pid in enumerate(regs)]
            m = len(golds)
            for j, gid in enumerate(golds):
                u = unit("goldpos", seed, n, gid)
                slots.append(((j + u) * max(len(regs), 1) / m, gid, True))
            slots.sort(key=lambda s: (s[0], s[1]))
            seq = last_seq.get(n, -1)
            for _, pid, is_gold in slots:
                seq += 1
                rows.append(
                    Assignment(
                        pair_id=pid, annotator=n, left=side_for(pid, n, seed), seq=seq, batch=batch, is_gold=is_gold
                    )
                )
                if is_gold:
                    n_gold += 1
                    load[n] += 1
        store.add_assignments(rows, conn=conn)

    everyone = tuple(sorted(set(names) | set(load)))
    return AssignReport(
        created=len(rows) + len(qualifying),
        regular=len(rows) - n_gold,
        gold=n_gold + len(qualifying),
        adaptive=adaptive,
        pairs=len(regular),
        annotators=everyone,
        load={n: load[n] for n in everyone},
        short=tuple(short),
        gold_pool=len(gold_pool),
        gold_without_answer=sum(1 for g in gold_pool if g.id not in gold),
        qualification=len(qualifying),
    )


__all__ = ["AssignReport", "assign", "needs_another", "side_for"]
