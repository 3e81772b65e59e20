"""The bundled sample (annotate/demo.py) with labels, as three annotators would leave them:
most labels follow the automatic correctness where the reference decides it, a seeded few
dissent (so there are disagreements to adjudicate and agreement below 1), every label timed
(5 to 60 seconds), first saved over the three hours before ``end``, half of them with a
rationale (every tie). The pairs on MMRB2's six-point scale get a score on the preferred side."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from curate.model import Label

if TYPE_CHECKING:
    from annotate.demo import Sample

SPAN = timedelta(hours=3)
END = datetime(2025, 6, 2, 12, 0, tzinfo=UTC)


def labelled_sample(db: Path, *, leave_open: int = 2, end: datetime = END, careless: str | None = None) -> Sample:
    """Build the sample in ``db`` and label each annotator's queue but its last ``leave_open``
    pairs; the annotator ``careless`` says "first is right, second is wrong, first is better"
    whatever the pair. Returns demo.ensure_sample's description of it."""
    from annotate import demo
    from curate.schemes import schemes_of, to_label
    from curate.store import Store

    info = demo.ensure_sample(db)
    with Store(info.db, info.images) as store:
        pairs = {p.id: p for p in store.pairs()}
        schemes = schemes_of(store)
        people = [name for name, _, role in demo.ACCOUNTS if role == "annotator"]
        for n, who in enumerate(people):
            rng = random.Random(f"labelled-sample:{who}")
            queue = store.assignments(annotator=who)
            todo = queue[: max(0, len(queue) - leave_open)]
            t = end - SPAN + timedelta(minutes=7 * n)
            for a in todo:
                p = pairs[a.pair_id]
                first = p.auto_first or ("correct" if rng.random() < 0.6 else "incorrect")
                second = p.auto_second or ("incorrect" if first == "correct" else "correct")
                if rng.random() < 0.15:  # a dissent
                    first = "incorrect" if first == "correct" else "correct"
                pref = {
                    ("correct", "incorrect"): "first",
                    ("incorrect", "correct"): "second",
                }.get((first, second), rng.choice(["first", "second", "tie"]))
                if who == careless:
                    first, second, pref = "correct", "incorrect", "first"
                side = "left" if pref == a.left else "right"  # a rationale names the side she saw
                why = f"The {side} response is right; the other misreads the image." if rng.random() < 0.5 else ""
                secs = round(rng.uniform(5, 60), 3)
                t += timedelta(seconds=secs + rng.uniform(20, 200))
                stamp = min(t, end).isoformat(timespec="microseconds")
                scheme = schemes[p.id]
                if scheme.name == demo.IMAGE_SCHEME:  # the six-point scale: a score on the side she prefers
                    score = rng.choice({"first": (4, 5, 6), "second": (1, 2, 3), "tie": (3, 4)}[pref])
                    values = {"score": score, "rationale": why}
                    kept = dict(seconds=secs, created_at=stamp, updated_at=stamp, scheme_version=scheme.version)
                    store.save_label(to_label(scheme, p.id, who, values, **kept))
                    continue
                store.save_label(
                    Label(
                        p.id,
                        who,
                        first,
                        second,
                        pref,
                        rationale="Neither is clearly better." if pref == "tie" else why,
                        seconds=secs,
                        created_at=stamp,
                        updated_at=stamp,
                    )
                )
    return info
