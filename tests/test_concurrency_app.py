"""Twenty annotators labelling at once, each in its own process with two "tabs" (threads)
racing on the same queue, through the app's own save path, on SQLite and PostgreSQL:
no lost label, no duplicate, no "database is locked"."""

from __future__ import annotations

import multiprocessing as mp
import threading
import traceback

import pytest

pytestmark = pytest.mark.slow

N_ANNOTATORS = 20
K = 3
PER_ANNOTATOR = 12
N_PAIRS = N_ANNOTATORS * PER_ANNOTATOR // K  # 80 pairs, each labelled by 3 annotators


def _seed(db: str, images: str) -> None:
    from curate.model import Annotator, Assignment, Candidate, Item, Pair
    from curate.store import Store

    names = [f"a{n:02d}" for n in range(N_ANNOTATORS)]
    with Store(db, images=images) as s:
        with s.write() as c:
            s.add_items([Item(f"i{n}", f"prompt {n}", "vqa") for n in range(N_PAIRS)], conn=c)
            s.add_candidates(
                [Candidate(f"i{n}/{m}", f"i{n}", m, f"{m} {n}") for n in range(N_PAIRS) for m in "xy"], conn=c
            )
            s.add_pairs([Pair(f"p{n}", f"i{n}", f"i{n}/x", f"i{n}/y", "test") for n in range(N_PAIRS)], conn=c)
            for name in names:
                s.add_annotator(Annotator(name), conn=c)
            s.add_assignments(
                [
                    Assignment(f"p{n}", names[(n * K + j) % N_ANNOTATORS], "first" if (n + j) % 2 else "second", n)
                    for n in range(N_PAIRS)
                    for j in range(K)
                ],
                conn=c,
            )


def _annotator(db: str, images: str, name: str, barrier, out) -> None:
    """One annotator: two tabs label the queue until it is empty."""
    from annotate.form import FormInput, to_label
    from annotate.queue import current_view, save
    from curate.store import Store

    store = Store(db, images=images)
    saved, conflicts, errors = [], [0], []

    def tab(n: int) -> None:
        try:
            barrier.wait(timeout=120)
            while True:
                view = current_view(store, name)
                if view is None:
                    return
                f = FormInput(left="correct", right="incorrect", preference="left")
                res = save(
                    store, to_label(f, pair_id=view.pair_id, annotator=name, left_side=view.left_side, seconds=1.0)
                )
                if res.ok:
                    saved.append((view.pair_id, res.label.correctness_first, res.label.preference))
                else:
                    conflicts[0] += 1
        except Exception:
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=tab, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    out.put((name, saved, conflicts[0], errors))


@pytest.mark.both_backends
def test_twenty_annotators_at_once(db_url, tmp_path):
    from curate.store import Store

    images = str(tmp_path / "images")
    _seed(db_url, images)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(N_ANNOTATORS * 2)
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_annotator, args=(db_url, images, f"a{n:02d}", barrier, out)) for n in range(N_ANNOTATORS)
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    errors = [e for r in results for e in r[3]]
    assert not errors, errors[0]  # includes any "database is locked"
    claimed = [(name, pid, cf, pref) for name, saved, _, _ in results for pid, cf, pref in saved]
    assert len(claimed) == len({(n, p) for n, p, _, _ in claimed}), "a pair was saved twice by one annotator"
    with Store(db_url, images=images) as s:
        labels = {(lab.pair_id, lab.annotator): lab for lab in s.labels()}
        assert len(labels) == N_PAIRS * K == len(claimed)  # every assignment labelled once, none lost
        for name, pid, cf, pref in claimed:
            got = labels[(pid, name)]
            assert (got.correctness_first, got.preference, got.revision) == (cf, pref, 1)
        assert all(a.state == "done" for a in s.assignments())
        for name, _, _, _ in results:
            assert s.progress(name) == (PER_ANNOTATOR, PER_ANNOTATOR)
    # sides were honoured: "left" maps to the side the assignment showed on the left
    assert {pref for _, _, _, pref in claimed} == {"first", "second"}


# -- the sign-in throttle under parallel attempts from two app processes -------------------
N_PROCS, N_THREADS = 2, 8


def _guesser(db: str, images: str, proc: int, barrier, out) -> None:
    """One app process: threads each try one wrong password for alice, all at once."""
    from annotate import auth
    from curate.store import Store

    store = Store(db, images=images)
    results, errors = [], []

    def guess(n: int) -> None:
        try:
            barrier.wait(timeout=120)
            got = auth.sign_in(store, "alice", f"guess {proc}-{n}", client=f"198.51.100.{proc * 50 + n}")
            results.append(got.throttled)
        except Exception:
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=guess, args=(n,)) for n in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    out.put((results, errors))


@pytest.mark.both_backends
def test_parallel_guesses_from_two_processes_get_no_more_checks_than_the_limit(db_url, tmp_path):
    from annotate import auth
    from curate.store import Store

    images = str(tmp_path / "images")
    with Store(db_url, images=images) as s:
        auth.add_account(s, "alice", "the right password")
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(N_PROCS * N_THREADS)
    out = ctx.Queue()
    procs = [ctx.Process(target=_guesser, args=(db_url, images, n, barrier, out)) for n in range(N_PROCS)]
    for p in procs:
        p.start()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    errors = [e for r in results for e in r[1]]
    assert not errors, errors[0]
    outcomes = [o for r in results for o in r[0]]
    assert len(outcomes) == N_PROCS * N_THREADS
    checked = outcomes.count(None)  # attempts whose password was checked
    assert 1 <= checked <= auth.NAME_LIMIT, outcomes
    assert outcomes.count("name") == len(outcomes) - checked
    with Store(db_url, images=images) as s:
        assert len(s.signin_attempts("name:alice")) == checked  # refused attempts are not counted
        # the next attempt gets in only while fewer than the limit have failed
        got = auth.sign_in(s, "alice", "the right password", client="192.0.2.1")
        assert got.throttled == ("name" if checked == auth.NAME_LIMIT else None)
