"""Build benchmark: `mmrb build` must grow linearly with the pairs.

    python -m bench.build            # 10,000 and 100,000 triplets in one run
    python -m bench.build --quick    # 2,000 and 10,000

Each size is a fresh SQLite store: one item per pair with one of 50 small PNG images (shared, as
real prompts share images rarely but the copy cost is per distinct file), two candidates of
about 700 characters, and three submitted labels per pair that agree on chosen = first or
second (seeded), so every pair becomes a triplet under data/sample/rules.toml. Only the build
(rules, triplets, agreement with 200 resamples, every export and the card) is timed.

Figures: seconds and triplets/s per size, and the ratio of the larger run's time per triplet to
the smaller's (1.0 = linear; the build was quadratic before: 0.37 s of `np.isin` at 5,000
pairs, 22.9 s at 40,000).
"""

from __future__ import annotations

import argparse
import io
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from curate.benchmark import build, load_rules
from curate.images import ImageStore
from curate.model import Annotator, Candidate, ImageRef, Item, Label, Pair, Preference
from curate.store import Store

ROOT = Path(__file__).resolve().parents[1]

WORDS = "the image shows a red car parked near a bakery while two people walk by on the wet street".split()
ANNOTATORS = ("ann-a", "ann-b", "ann-c")
CATEGORIES = ("knowledge", "reasoning", "vqa", "safety", "open_generation/preference_task")


def _png(n: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (n * 5 % 256, n * 11 % 256, n * 17 % 256)).save(buf, "PNG")
    return buf.getvalue()


def make_store(path: Path, n: int) -> Store:
    store = Store(str(path / "store.db"), images=path / "images")
    images: ImageStore = store.images
    stored = [images.put(_png(k)) for k in range(50)]
    store.add_images(stored)
    rng = random.Random(n)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(120))

    for a in ANNOTATORS:
        store.add_annotator(Annotator(a))
    step = 20_000
    for lo in range(0, n, step):
        ids = range(lo, min(n, lo + step))
        items, cands, pairs, labels = [], [], [], []
        for k in ids:
            im = stored[k % len(stored)]
            items.append(
                Item(
                    f"i{k}",
                    f"Question {k}: what does the image show?",
                    CATEGORIES[k % len(CATEGORIES)],
                    images=(ImageRef(f"img{k % 50}.png", im.sha256, "ok", im.width, im.height),),
                )
            )
            cands += [Candidate(f"i{k}:m1:0", f"i{k}", "m1", text()), Candidate(f"i{k}:m2:0", f"i{k}", "m2", text())]
            pairs.append(Pair(f"p{k}", f"i{k}", f"i{k}:m1:0", f"i{k}:m2:0", origin="bench", task="preference"))
            pref: Preference = rng.choice(("first", "second"))
            labels += [
                Label(f"p{k}", a, "correct", "correct", pref, rationale="bench", seconds=10.0) for a in ANNOTATORS
            ]
        with store.write() as conn:
            store.add_items(items, conn=conn)
            store.add_candidates(cands, conn=conn)
            store.add_pairs(pairs, conn=conn)
            store.add_labels(labels, conn=conn)
    return store


def run(n: int, rules_path: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="mmrb-bench-build-") as tmp:
        tmp_path = Path(tmp)
        store = make_store(tmp_path, n)
        rules = load_rules(rules_path)
        try:
            t0 = time.perf_counter()
            result = build(store, rules, tmp_path / "out")
            seconds = time.perf_counter() - t0
        finally:
            store.close()
    assert len(result.triplets) == n, f"expected {n} triplets, got {len(result.triplets)}"
    return {"triplets": n, "seconds": seconds, "per_s": n / seconds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2,000 and 10,000 triplets")
    args = ap.parse_args(argv)
    small, large = (2_000, 10_000) if args.quick else (10_000, 100_000)
    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.toml"
        text = (ROOT / "data" / "sample" / "rules.toml").read_text(encoding="utf-8")
        rules.write_text(text.replace("resamples = 1000", "resamples = 200"), encoding="utf-8")
        a = run(small, rules)
        b = run(large, rules)
    ratio = (b["seconds"] / b["triplets"]) / (a["seconds"] / a["triplets"])
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("mmrb build, SQLite, 3 labels per pair, every pair kept")
    for r in (a, b):
        print(f"  {r['triplets']:>7,} triplets: {r['seconds']:7.2f} s  ({r['per_s']:,.0f} triplets/s)")
    print(f"  time per triplet, {large:,} vs {small:,}: ratio {ratio:.2f} (1.0 = linear)")
    print(f"  peak memory of the process: {peak_mb:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
