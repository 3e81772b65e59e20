"""Benchmark: the lead's Progress, Agreement and Quality pages, each page's full computation
as the page does it on a first view (cold cache), on the bundled sample and on a store of
200,000 pairs with 3 labels each (issue 28: under 1 s on the sample, under 3 s at that size).

    python -m bench.pages                  # the sample, then 200,000 pairs (600,000 labels)
    python -m bench.pages --quick          # the sample, then 2,000 pairs: a smoke run
    python -m bench.pages --pairs 50000 --no-sample

The large store (SQLite, mmrb scheme, cached under bench/results/) is built through the
store's own bulk inserts: six categories, six annotators and a lead, each pair assigned to
three annotators (a seeded screen side each) and labelled by all three: each pair has a latent
preference and correctness of each response, which annotator k gives with a chance of 0.9 down
to 0.6 (else a value at random), with seconds, a few flags and "unsure"; 2% of the pairs wait
on a fourth annotator, and 1% have gold (their latent values) with control-task assignments.
The sample is the app's own (annotate/demo.py) with every assignment labelled by a seeded coin.

Each page runs in a child process of its own, its modules imported before the clock starts,
and calls what its script calls (annotate/views/admin_*.py and the cached functions of
annotate/figures.py, without Streamlit's cache), step by step. Per step: wall and CPU
seconds, and of them the time inside the store's methods ("store": reading), the rest being
computation and building the page's frames and chart specs. Anchor in the same run: the bare
read of the label table, ``SELECT pair_id, annotator, preference, correctness_first,
correctness_second, seconds FROM labels`` on a plain sqlite3 cursor into numpy; each page is
printed as a multiple of it.

Then each page's whole run through Streamlit's caches (its in-memory cache, no server), twice
in one process: the first view, and a revisit with every cache warm (what is still computed
on every run of the script).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ANNOTATORS = 6
LABELS_PER_PAIR = 3
GOLD_EVERY = 100  # every 100th pair has gold; its assignments are control tasks
SHORT_EVERY = 50  # every 50th pair waits on a fourth annotator
TARGET = {"sample": 1.0, "large": 3.0}
PAGES = ("progress", "agreement", "quality")
ACCURACY = (0.9, 0.85, 0.8, 0.75, 0.7, 0.6)  # each annotator's chance of the latent value, else one at random
OPTIONS: tuple[tuple[Any, ...], ...] = (("first", "second", "tie"), ("correct", "incorrect"), ("correct", "incorrect"))


# -- the stores --------------------------------------------------------------------------------
def build_store(path: Path, n_pairs: int, seed: int = 0) -> None:
    """A store of ``n_pairs`` pairs with LABELS_PER_PAIR submitted labels each (see the module)."""
    from curate.model import MMRB_CATEGORIES, Annotator, Assignment, Candidate, Gold, Item, Label, Pair
    from curate.store import Store

    rng = random.Random(seed)
    tmp = path.with_suffix(".tmp.db")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    names = [f"ann{a}" for a in range(ANNOTATORS)]

    def truth(n: int) -> tuple[Any, ...]:  # a pair's latent (preference, correctness of each)
        r = random.Random(f"{seed}/{n}")
        return r.choices(("first", "second", "tie"), (45, 45, 10))[0], *(
            r.choices(("correct", "incorrect"), (70, 30))[0] for _ in "ab"
        )

    start = 1_700_000_000.0
    with Store(str(tmp), images=path.parent / "bench-images") as store:
        with store.write() as c:
            store.add_annotator(Annotator("lead", role="admin"), conn=c)
            for name in names:
                store.add_annotator(Annotator(name), conn=c)
            for lo in range(0, n_pairs, 20_000):
                ids = range(lo, min(n_pairs, lo + 20_000))
                store.add_items(
                    [Item(id=f"i{n:07d}", prompt="q", category=MMRB_CATEGORIES[n % 6], source="bench") for n in ids],
                    conn=c,
                )
                store.add_candidates(
                    [
                        Candidate(id=f"i{n:07d}/{m}", item_id=f"i{n:07d}", model=m, text="x" * rng.randrange(20, 400))
                        for n in ids
                        for m in "ab"
                    ],
                    conn=c,
                )
                store.add_pairs(
                    [
                        Pair(
                            id=f"p{n:07d}",
                            item_id=f"i{n:07d}",
                            first_id=f"i{n:07d}/a",
                            second_id=f"i{n:07d}/b",
                            origin="bench",
                            status="selected",
                        )
                        for n in ids
                    ],
                    conn=c,
                )
                assignments, labels = [], []
                for n in ids:
                    pid, gold = f"p{n:07d}", n % GOLD_EVERY == 0
                    who = rng.sample(range(ANNOTATORS), LABELS_PER_PAIR + (n % SHORT_EVERY == 0))
                    true = truth(n)
                    for k, a in enumerate(who):
                        done = k < LABELS_PER_PAIR
                        left: Any = rng.choice(("first", "second"))
                        assignments.append(
                            Assignment(pid, names[a], left, n, is_gold=gold, state="done" if done else "open")
                        )
                        if not done:
                            continue
                        said = [
                            v if rng.random() < ACCURACY[a] else rng.choice(o)
                            for v, o in zip(true, OPTIONS, strict=True)
                        ]
                        if rng.random() < 0.03:
                            said[1] = "unsure"
                        ts = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(start + n * 10 + k))
                        labels.append(
                            Label(
                                pid,
                                names[a],
                                preference=said[0],
                                correctness_first=said[1],
                                correctness_second=said[2],
                                seconds=round(rng.lognormvariate(3.0, 0.6), 1),
                                flag="other" if rng.random() < 0.01 else None,
                                source="app",
                                created_at=ts,
                                updated_at=ts,
                            )
                        )
                store.add_assignments(assignments, conn=c)
                store.add_labels(labels, conn=c)
            store.set_gold(
                [Gold(f"p{n:07d}", "import", *truth(n)) for n in range(0, n_pairs, GOLD_EVERY)],
                conn=c,
            )
        store.checkpoint()
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    tmp.rename(path)


def build_sample(folder: Path, seed: int = 0) -> Path:
    """The app's bundled sample, every assignment labelled by a seeded coin (mmrb pairs; the
    scheme pairs with their scheme's fields)."""
    from annotate.demo import build_sample as demo_sample
    from curate.schemes import schemes_of, to_label
    from curate.store import Store

    db = folder / "sample.db"
    demo_sample(db, folder / "sample-images")
    rng = random.Random(seed)
    with Store(str(db), folder / "sample-images") as store:
        schemes = schemes_of(store)
        for a in store.assignments():
            scheme = schemes[a.pair_id]
            values: dict[str, Any] = {}
            for f in scheme.fields:
                if f.kind == "text" or f.kind == "multi":
                    continue
                picks = [rng.choice(f.options) for _ in range(2 if f.per_response else 1)]
                got = [int(p) for p in picks] if f.kind in ("scale", "scale_per_response") else picks
                values[f.name] = tuple(got) if f.per_response else got[0]
            store.save_label(to_label(scheme, a.pair_id, a.annotator, values, seconds=round(rng.uniform(5, 90), 1)))
    return db


# -- the pages' computations -------------------------------------------------------------------
class Timed:
    """The store's methods wrapped so that the time inside them (the outermost call only)
    counts as the store's: the rest of a step is computation and frames."""

    def __init__(self, store: Any) -> None:
        self.store_wall = self.store_cpu = 0.0
        self._depth = 0
        self.attach(store)

    def attach(self, store: Any) -> None:
        for name in dir(type(store)):
            if name.startswith("_") or name in ("read", "write", "transaction", "snapshot", "close"):
                continue
            vars(store).pop(name, None)  # a SheetStore copies the store's (wrapped) attributes
            fn = getattr(store, name, None)
            if callable(fn):
                setattr(store, name, self.wrap(fn))

    def wrap(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(*a: Any, **k: Any) -> Any:
            if self._depth:
                return fn(*a, **k)
            self._depth += 1
            w, c = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                self.store_wall += time.perf_counter() - w
                self.store_cpu += time.process_time() - c
                self._depth -= 1

        return run


def sheet_step(s: Any, timed: Timed, become: Callable[[Any], None]) -> list[tuple[str, Callable[[], Any]]]:
    """As annotate/figures.py: the labels' and assignments' columns read once (a tree
    without curate/store/sheet.py: no step), every later step reading through them."""
    try:
        from curate.store.sheet import LabelSheet, SheetStore
    except ImportError:
        return []

    def read() -> None:
        sheet = SheetStore(s, timed.wrap(LabelSheet.read)(s))
        timed.attach(sheet)
        become(sheet)

    return [("label sheet (one read)", read)]


def progress_steps(s: Any, timed: Timed) -> list[tuple[str, Callable[[], Any]]]:
    """annotate/views/admin_progress.py, with figures.progress_charts uncached."""
    from annotate import admin, charts, progress
    from annotate.progress import ProgressTotals
    from curate.agreement import from_store, summary

    got: dict[str, Any] = {}
    shared = "submitted" in inspect.signature(admin.progress_by_annotator).parameters

    def annotators() -> None:
        # as the page: the submitted labels' columns read once (figures.submitted), shared with the plots
        if shared:
            # (with the sheet, its seconds and the creation times read alone: Submitted.read_parts)
            read = getattr(progress.Submitted, "read_parts", progress.Submitted.read)
            got["submitted"] = read(s)
            people = admin.progress_by_annotator(s, submitted=got["submitted"])
        else:
            people = admin.progress_by_annotator(s)
        ProgressTotals.of(people)
        progress.annotator_table(people)

    def over_time() -> None:
        # as annotate/figures.py reads it: the submitted labels' columns (before them, every label's row)
        read = getattr(progress, "Submitted", None)
        activity = got["submitted"] if shared else read.read(s) if read else s.label_activity()
        charts.spec(charts.labels_over_time(progress.labels_over_time(activity)))
        charts.spec(charts.seconds_per_label(progress.seconds_per_label(activity)))

    def distribution() -> None:
        # as annotate/figures.py: of the label table (before: of the whole agreement report)
        table = hasattr(summary, "table_value_counts")
        labels = from_store(s) if table else admin.lead_report(s)
        charts.spec(charts.label_distribution(progress.label_distribution(labels)))

    def short() -> None:
        progress.short_table(admin.short_of_overlap(s).head(500))

    def become(sheet: Any) -> None:
        nonlocal s
        s = sheet

    return [
        ("cache key (change stamp)", s.change_stamp),
        *sheet_step(s, timed, become),
        ("per annotator + table", annotators),
        ("labels over time, seconds", over_time),
        ("label distribution", distribution),
        ("by category + table", lambda: progress.category_table(admin.progress_by_category(s))),
        ("short of overlap + table", short),
    ]


def agreement_steps(s: Any, timed: Timed | None = None) -> list[tuple[str, Callable[[], Any]]]:
    """annotate/views/admin_agreement.py, with figures.agreement and agreement_charts uncached."""
    from annotate import admin, charts
    from curate.agreement import summary

    got: dict[str, Any] = {}

    def report() -> None:
        got["report"] = admin.lead_report(s)
        admin.agreement_wanting(got["report"])

    def drawn() -> None:
        r = got["report"]
        rows = summary.alpha_rows(r)
        charts.spec(charts.alpha_per_category(rows))
        charts.spec(charts.majority_agreement(summary.majority_rows(r)))
        cells = summary.kappa_cells(r)
        if cells:
            charts.spec(charts.kappa_heatmap(cells))
        admin.alpha_table(rows)
        admin.alpha_notes(rows, min_pairs=r.min_pairs)

    # a first view reads no sheet (annotate/figures.py: the report uses it once another page has read it)
    return [("cache key (change stamp)", s.change_stamp), ("agreement report", report), ("charts + table", drawn)]


def quality_steps(s: Any, timed: Timed) -> list[tuple[str, Callable[[], Any]]]:
    """annotate/views/admin_quality.py, with figures.quality and figures.bias uncached."""
    from annotate import admin, charts
    from curate.quality.bias import bias_report, store_facts
    from curate.quality.gold import control_shares, gold_stats
    from curate.quality.qualification import qualification_pairs
    from curate.quality.reliability import store_figures, with_accounts

    got: dict[str, Any] = {}

    def key() -> None:
        s.change_stamp()
        tuple(sorted((g.pair_id, g.preference, g.correctness_first, g.correctness_second) for g in s.gold().values()))

    def reliability() -> None:
        # as annotate/figures.py computes it: the intervals of every category together (and,
        # once the lead picks a category, of that one); before, every category's at once
        lazy = "interval_categories" in inspect.signature(store_figures).parameters
        extra: dict[str, Any] = {"interval_categories": ()} if lazy else {}
        figures = store_figures(s, threshold=0.7, min_n=20, **extra)
        got["report"] = with_accounts(s, figures)

    def drawn() -> None:
        frame = admin.quality_frame(got["report"], None)
        for kind in ("gold", "majority", "model"):
            charts.spec(charts.annotator_reliability(frame, kind, threshold=0.7, min_n=20))
        admin.quality_table(frame)

    def bias() -> None:
        # before: read as rows (Store.label_fact_rows)
        read = getattr(s, "label_fact_columns", None) or s.label_fact_rows
        got["bias"] = bias_report(store_facts(read()))

    def bias_drawn() -> None:
        charts.spec(charts.annotator_bias(admin.bias_frame(got["bias"])))
        admin.bias_table(got["bias"])

    def rest() -> None:
        qualification_pairs(s)
        admin.control_table(control_shares(s))

    def become(sheet: Any) -> None:
        nonlocal s
        s = sheet

    return [
        ("cache key (stamp, gold)", key),
        *sheet_step(s, timed, become),
        ("gold stats", lambda: gold_stats(s)),
        ("reliability (Dawid-Skene)", reliability),
        ("reliability charts + table", drawn),
        ("bias", bias),
        ("bias chart + table", bias_drawn),
        ("qualification, control shares", rest),
    ]


STEPS = {"progress": progress_steps, "agreement": agreement_steps, "quality": quality_steps}


# -- a view through the page's caches: first view, then a revisit ------------------------------
def progress_view(s: Any) -> None:
    """What annotate/views/admin_progress.py computes on a run, through annotate/figures.py."""
    from annotate import admin, figures, progress
    from annotate.progress import ProgressTotals

    if hasattr(figures, "page_key"):  # the key read once per run
        key = figures.page_key(s)
        people = admin.progress_by_annotator(s, counts=figures.annotator_counts(s, key=key))
        ProgressTotals.of(people)
        progress.annotator_table(people)
        figures.progress_charts(s, key=key)
        by_category, short = figures.overlap_tables(s, key=key)
    else:  # before (an older tree's figures module): the tables computed on every run
        older: Any = figures  # an older tree's module, with its figures.submitted
        people = admin.progress_by_annotator(s, submitted=older.submitted(s))
        ProgressTotals.of(people)
        progress.annotator_table(people)
        figures.progress_charts(s)
        by_category, short = admin.progress_by_category(s), admin.short_of_overlap(s)
    progress.category_table(by_category)
    progress.short_table(short.head(500))


def agreement_view(s: Any) -> None:
    """What annotate/views/admin_agreement.py computes on a run."""
    from annotate import admin, figures
    from curate.agreement.summary import alpha_rows, kappa_cells, majority_rows

    report = figures.agreement(s)
    admin.agreement_wanting(report)
    rows = alpha_rows(report)
    figures.agreement_charts(s)
    admin.alpha_matrix(rows)
    admin.alpha_table(rows)
    admin.alpha_notes(rows, min_pairs=report.min_pairs)
    kappa_cells(report)
    majority_rows(report)


def quality_view(s: Any) -> None:
    """What annotate/views/admin_quality.py computes on a run (every category shown)."""
    from annotate import admin, charts, figures
    from curate.quality.gold import control_shares, gold_stats
    from curate.quality.qualification import qualification_pairs

    if hasattr(figures, "quality_drawn"):  # the key read once, the frame and charts cached
        key = figures.quality_key(s)
        figures.gold_stats(s, key=key)
        figures.quality(s, threshold=0.7, min_n=20, key=key)
        frame, _ = figures.quality_drawn(s, threshold=0.7, min_n=20, key=key)
    else:  # before: drawn on every run
        gold_stats(s)
        frame = admin.quality_frame(figures.quality(s, threshold=0.7, min_n=20), None)
        for kind in ("gold", "majority", "model"):
            charts.spec(charts.annotator_reliability(frame, kind, threshold=0.7, min_n=20))
    admin.quality_table(frame)
    if hasattr(figures, "page_key"):  # cached by the key read once
        bias = figures.bias(s, key=key[0])
        figures.bias_chart(s, key=key[0])
        shares = figures.control_shares(s, key=key[0])
    else:
        bias = figures.bias(s)
        charts.spec(charts.annotator_bias(admin.bias_frame(bias)))
        shares = control_shares(s)
    admin.bias_table(bias)
    qualification_pairs(s)
    admin.control_table(shares)


VIEWS = {"progress": progress_view, "agreement": agreement_view, "quality": quality_view}


def views_child(page: str, db: str, images: str) -> None:
    """The page's run twice in one process through Streamlit's caches (no server: its
    in-memory cache): a first view, then a revisit; print one JSON line of figures."""
    import logging

    import statsmodels.stats.inter_rater  # noqa: F401

    import annotate.charts
    import annotate.figures  # noqa: F401
    from annotate import ui

    logging.getLogger("streamlit").setLevel(logging.ERROR)  # "No runtime found": expected here
    ui.configure(ui.AppConfig(db=db, images=images))
    store = ui.store()
    store.counts()  # the pool's first connection
    out = []
    for _ in range(2):
        w, c = time.perf_counter(), time.process_time()
        VIEWS[page](store)
        out.append({"wall": time.perf_counter() - w, "cpu": time.process_time() - c})
    ui.close_stores()
    print(json.dumps(out))


def child(page: str, db: str, images: str) -> None:
    """Run one page's steps on a fresh Store; print one JSON line of figures."""
    # imported before the clock, as a running app has them (the agreement report imports
    # statsmodels lazily)
    import statsmodels.stats.inter_rater  # noqa: F401

    import annotate.charts
    import annotate.figures  # noqa: F401
    from curate.store import Store

    store = Store(db, images)
    timed = Timed(store)
    store.counts()  # the pool's first connection
    timed.store_wall = timed.store_cpu = 0.0
    out = []
    for name, fn in STEPS[page](store, timed):
        sw, sc = timed.store_wall, timed.store_cpu
        w, c = time.perf_counter(), time.process_time()
        fn()
        out.append(
            {
                "step": name,
                "wall": time.perf_counter() - w,
                "cpu": time.process_time() - c,
                "store_wall": timed.store_wall - sw,
                "store_cpu": timed.store_cpu - sc,
            }
        )
    store.close()
    print(json.dumps(out))


def anchor(db: str) -> tuple[float, float, int]:
    """(wall, CPU, rows): the bare read of the label table into numpy."""
    import numpy as np

    w, c = time.perf_counter(), time.process_time()
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        rows = con.execute(
            "SELECT pair_id, annotator, preference, correctness_first, correctness_second, seconds FROM labels"
        ).fetchall()
    cols = np.array(rows, dtype=object)
    return time.perf_counter() - w, time.process_time() - c, len(cols)


def run_page(page: str, db: Path, images: Path, mode: str = "--child") -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.pages", mode, page, str(db), str(images)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    steps: list[dict] = json.loads(proc.stdout.strip().splitlines()[-1])
    return steps


def report(title: str, target: float, db: Path, images: Path, repeat: int) -> dict[str, tuple[float, float]]:
    """Print every page's steps (the best of ``repeat`` runs by CPU) against the anchor."""
    a_wall, a_cpu, n = min((anchor(str(db)) for _ in range(3)), key=lambda t: t[1])
    print(
        f"\n{title}: {n:,} labels; anchor (bare SELECT of the label table into numpy): {a_wall:.3f} s wall, "
        f"{a_cpu:.3f} s CPU; target under {target:g} s per page"
    )
    totals = {}
    for page in PAGES:
        runs = [run_page(page, db, images) for _ in range(repeat)]
        steps = min(runs, key=lambda r: sum(x["cpu"] for x in r))
        wall, cpu = sum(x["wall"] for x in steps), sum(x["cpu"] for x in steps)
        totals[page] = (wall, cpu)
        print(f"  {page:<10} {'wall s':>8} {'CPU s':>8} {'store s':>8} {'other s':>8}")
        for x in steps:
            print(
                f"    {x['step']:<32} {x['wall']:8.3f} {x['cpu']:8.3f} {x['store_cpu']:8.3f} "
                f"{x['cpu'] - x['store_cpu']:8.3f}"
            )
        verdict = "ok" if cpu < target else "OVER"
        print(
            f"  {page} page: {wall:.3f} s wall, {cpu:.3f} s CPU ({verdict}); "
            f"{cpu / a_cpu if a_cpu else float('nan'):.1f}x the anchor's CPU, {wall / a_wall:.1f}x its wall"
        )
        first, again = min((run_page(page, db, images, "--views") for _ in range(repeat)), key=lambda r: r[0]["cpu"])
        print(
            f"  {page} through the page's caches: first view {first['wall']:.3f} s wall, {first['cpu']:.3f} s CPU; "
            f"revisit {again['wall']:.3f} s wall, {again['cpu']:.3f} s CPU"
        )
    return totals


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(*argv[1:4])
        return 0
    if argv[:1] == ["--views"]:
        views_child(*argv[1:4])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2,000 pairs: a smoke run")
    ap.add_argument("--pairs", type=int, default=None, help="pairs of the large store (default 200,000)")
    ap.add_argument("--no-sample", action="store_true", help="skip the bundled sample")
    ap.add_argument("--repeat", type=int, default=None, help="runs of each page, best CPU kept (default 3, quick 1)")
    ap.add_argument("--cache", default=str(ROOT / "bench" / "results"), help="where the large store is kept")
    args = ap.parse_args(argv)
    n_pairs = args.pairs or (2_000 if args.quick else 200_000)
    repeat = args.repeat or (1 if args.quick else 3)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not args.no_sample:
        with tempfile.TemporaryDirectory() as tmp:
            db = build_sample(Path(tmp))
            report("bundled sample", TARGET["sample"], db, Path(tmp) / "sample-images", repeat)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    db = cache / f"pages-{n_pairs}.db"
    if not db.exists():
        t = time.perf_counter()
        build_store(db, n_pairs)
        print(f"\nbuilt {db} in {time.perf_counter() - t:.1f} s (cached for the next run)")
    report(f"{n_pairs:,} pairs x {LABELS_PER_PAIR} labels", TARGET["large"], db, cache / "bench-images", repeat)
    shutil.rmtree(cache / "bench-images", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
