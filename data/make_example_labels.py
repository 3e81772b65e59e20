"""Write data/sample/example-labels.jsonl: EXAMPLE labels for the bundled sample, made up by
annotate/example_labels.py (three annotators, ada, grace and alan, who mostly agree with the
reference answers), for the pairs the README's walkthrough makes from the bundled candidates
(its step 1, ``WALKTHROUGH_PAIRING``). ``mmrb labels import`` reads the file: the walkthrough's
shell alternative to labelling in the browser. Every label's ``source`` is ``"example"``.

Run ``python data/make_example_labels.py`` from the repository root after a change to the
sample's items or to the example labels; tests/test_sample_data.py checks that the committed
file is what this writes. Pair ids are a hash of the item and the two responses, so the file
names the walkthrough's pairs as long as the sample and the pairing stay as they are.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: the project's packages

from annotate.demo import add_example_labels  # noqa: E402
from curate.ingest import ingest_items  # noqa: E402
from curate.pairing import pair_items  # noqa: E402
from curate.rawlabels import export_labels  # noqa: E402
from curate.store import Store  # noqa: E402

SAMPLE = ROOT / "data" / "sample"
OUT = SAMPLE / "example-labels.jsonl"
# the walkthrough's step 1, `mmrb pair --strategy S --cap N` in this order (README; tests/test_sample_data.py)
WALKTHROUGH_PAIRING = (("correct_incorrect", 2), ("same_correctness", 1), ("cross_model", 2))


def write_example_labels(out: Path = OUT, sample: Path = SAMPLE) -> int:
    """Make the walkthrough's pairs in a scratch store, label them, and write the labels as
    ``mmrb export labels --real-names`` would. Returns how many were written."""
    with tempfile.TemporaryDirectory() as tmp, Store(f"{tmp}/walkthrough.db", Path(tmp) / "images") as store:
        ingest_items(store, sample / "items.jsonl", allow_missing_images=True)
        for strategy, cap in WALKTHROUGH_PAIRING:
            pair_items(store, strategy=strategy, cap_per_item=cap)
        add_example_labels(store)
        return export_labels(store, out, "jsonl", real_names=True)


if __name__ == "__main__":
    n = write_example_labels()
    print(f"wrote {n} example labels to {OUT.relative_to(ROOT)}")
