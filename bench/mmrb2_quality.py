"""Real data: Dawid-Skene against the majority rule on MMRB2's three-annotator labels.

Run as ``python -m bench.mmrb2_quality`` (reads ``../shared/data/mmrb2/``; not a speed
benchmark: it prints figures of the data). The four ground-truth files are imported into a
temporary store as ``mmrb ingest pairs --format mmrb2`` does, then:

1. preference (first/second, and tie for reasoning) per category: how many final
   preferences Dawid-Skene changes against the majority of the three labels, and each
   position's estimated reliability;
2. the 1-6 score (t2i, edit, interleaved) as six classes: Dawid-Skene's score, read as a
   preference (above 3.5: the first response), against the majority preference and against
   the benchmark's own ``chosen`` (the mean score above 3.5).

The raters are positions, not people: MMRB2 does not say who rated which pair, so
``mmrb2-rater-1`` is whoever was listed first on each pair. A "reliability" here is that of
a position, a mixture of people; Dawid-Skene's assumption of one confusion matrix per
annotator does not hold, and its figures say little about any one person.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from curate.ingest import ingest_pairs
from curate.quality.aggregate import aggregate_field, majority
from curate.quality.frames import as_frame
from curate.store import Store
from curate.wording import plural

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "mmrb2"
TASKS = ("t2i", "edit", "interleaved", "reasoning")


def main() -> int:
    if not DATA.is_dir():
        print(f"no MMRB2 data at {DATA}: nothing to do")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "mmrb2.db"), images=Path(tmp) / "images")
        for task in TASKS:
            ingest_pairs(store, DATA / f"{task}_response_only.json", "mmrb2", category=task)
        pairs = {p.id: p for p in store.pairs()}
        category = {i.id: i.category for i in store.items()}
        labels = store.labels(status="submitted")
        store.close()
    cat_of = {pid: category[p.item_id] for pid, p in pairs.items()}
    pref = as_frame((lab.pair_id, lab.annotator, "preference", lab.preference) for lab in labels if lab.preference)
    # the 2-1 splits: the only pairs where a model of the raters could overturn the majority
    split = pref.groupby("pair")["value"].nunique()
    score = as_frame(
        (lab.pair_id, lab.annotator, "score", str(lab.ratings["score"])) for lab in labels if "score" in lab.ratings
    )
    pref["category"] = pref["pair"].map(cat_of)
    score["category"] = score["pair"].map(cat_of)
    print("MMRB2 three-annotator labels: raters are positions (mmrb2-rater-1..3), not people.\n")
    print(f"{plural(int((split > 1).sum()), 'pair')} of {len(split)} with a preference are not unanimous\n")
    print("1. Preference: Dawid-Skene against the majority of the three labels")
    total_changed = total = 0
    for task in (*TASKS, "all"):
        part = pref if task == "all" else pref[pref["category"] == task]
        fa = aggregate_field(part, "dawid-skene", field_name="preference")
        maj = fa.majority
        if task != "all":
            total_changed += fa.differ
            total += len(fa.final)
        rel = ", ".join(f"{a.removeprefix('mmrb2-')} {r:.3f}" for a, r in fa.reliability.items())
        print(
            f"  {task:<12} pairs {len(fa.final):>5}  unique majority {len(maj):>5}  changed by DS {fa.differ:>3}  "
            f"decided where tied {fa.decided_ties:>3}  reliability: {rel}"
        )
    print(f"  per-category fits: {total_changed} of {total} final preferences changed\n")

    print("2. The 1-6 score as six classes (t2i, edit, interleaved): DS score > 3.5 as the preference")
    for task in (*TASKS[:3], "all"):
        part = score if task == "all" else score[score["category"] == task]
        fa = aggregate_field(part, "dawid-skene", field_name="score")
        ds_pref = {p: "first" if float(v) > 3.5 else "second" for p, v in fa.final.items()}
        sub = pref if task == "all" else pref[pref["category"] == task]
        maj_pref = majority(sub[sub["pair"].isin(ds_pref)])
        chosen = {p: pairs[p].known_preference for p in ds_pref}
        vs_majority = sum(1 for p, v in ds_pref.items() if p in maj_pref and maj_pref[p] != v)
        vs_chosen = sum(1 for p, v in ds_pref.items() if chosen[p] and chosen[p] != v)
        maj_vs_chosen = sum(1 for p, v in maj_pref.items() if chosen[p] and chosen[p] != v)
        rel = ", ".join(f"{a.removeprefix('mmrb2-')} {r:.3f}" for a, r in fa.reliability.items())
        print(
            f"  {task:<12} pairs {len(ds_pref):>5}  DS vs majority preference {vs_majority:>3}  "
            f"DS vs chosen (mean > 3.5) {vs_chosen:>3}  majority vs chosen {maj_vs_chosen:>3}  "
            f"score reliability: {rel}"
        )
    spread = Counter(int(v) for v in score["value"])
    print("\n  score distribution: " + ", ".join(f"{k}: {spread[k]}" for k in sorted(spread)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
