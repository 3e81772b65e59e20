"""The sample's example labels (annotate/example_labels.py, data/sample/example-labels.jsonl):
regenerated as committed, the walkthrough's pairs, marked as examples, realistic enough that
the sample's rules build tens of triplets and agreement has real figures."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as hs

from annotate import example_labels as ex
from curate.benchmark import build, load_rules
from curate.ingest import ingest_items
from curate.model import Pair
from curate.pairing import pair_items
from curate.rawlabels import import_labels
from curate.schemes import BUILT_IN
from curate.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
FILE = SAMPLE / "example-labels.jsonl"


def _script():
    spec = importlib.util.spec_from_file_location("make_example_labels", ROOT / "data" / "make_example_labels.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows() -> list[dict]:
    return [json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines()]


def test_the_committed_file_is_what_the_script_writes(tmp_path):
    n = _script().write_example_labels(tmp_path / "labels.jsonl")
    assert (tmp_path / "labels.jsonl").read_bytes() == FILE.read_bytes() and n == len(_rows())


def test_the_script_pairs_as_the_walkthrough_s_step_1():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Walkthrough on the sample", 1)[1].split("\n## ", 1)[0]
    first = re.findall(r"```bash\n(.*?)```", section, re.S)[0]
    said = [(s, int(c)) for s, c in re.findall(r"^mmrb pair --strategy (\w+) --cap (\d+)$", first, re.M)]
    assert said == list(_script().WALKTHROUGH_PAIRING)
    assert "mmrb labels import data/sample/example-labels.jsonl" in section


def test_every_label_says_it_is_an_example_and_every_pair_has_three():
    rows = _rows()
    assert {r["source"] for r in rows} == {"example"} and {r["annotator"] for r in rows} == set(ex.ANNOTATORS)
    per_pair = Counter(r["pair_id"] for r in rows)
    assert set(per_pair.values()) == {len(ex.ANNOTATORS)} and len(per_pair) >= 40
    # realistic: mostly the reference's verdict, some dissent, ties, a flag or two, rationales, times
    prefs = Counter(r["preference"] for r in rows)
    assert prefs["tie"] >= 3 and min(prefs["first"], prefs["second"]) > len(rows) / 4
    assert 1 <= sum(r["flag"] is not None for r in rows) <= 5
    assert all(r["flag_note"] for r in rows if r["flag"])
    assert 0.3 < sum(bool(r["rationale"]) for r in rows) / len(rows) < 0.8
    assert all(
        r["rationale"]
        for r in rows
        if r["preference"] == "tie" or "unsure" in (r["correctness_first"], r["correctness_second"])
    )
    assert all(5 <= r["seconds"] <= 120 for r in rows)
    split = [p for p, n in Counter((r["pair_id"], r["preference"]) for r in rows).items() if n < 3]
    assert 5 <= len({p for p, _ in split}) < len(per_pair) / 2  # some pairs disagree, most do not


def _walkthrough_store(tmp_path: Path) -> Store:
    store = Store(str(tmp_path / "walkthrough.db"), images=tmp_path / "images")
    ingest_items(store, SAMPLE / "items.jsonl", allow_missing_images=True)
    for strategy, cap in _script().WALKTHROUGH_PAIRING:
        pair_items(store, strategy=strategy, cap_per_item=cap)
    return store


def test_they_import_into_the_walkthrough_s_store_and_build_tens_of_triplets(tmp_path):
    with _walkthrough_store(tmp_path) as store:
        report = import_labels(store, FILE)
        assert (report.labels, report.annotators) == (len(_rows()), 3)
        # agree with the reference's verdicts where it gives one, mostly
        auto = {p.id: (p.auto_first, p.auto_second) for p in store.pairs() if p.auto_first and p.auto_second}
        labels = [lb for lb in store.labels() if lb.pair_id in auto]
        same = sum((lb.correctness_first, lb.correctness_second) == auto[lb.pair_id] for lb in labels)
        assert 0.75 < same / len(labels) < 1
        res = build(store, load_rules(SAMPLE / "rules.toml"), tmp_path / "bench")
    removed = {r: sum(v.values()) for r, v in res.result.removed().items()}
    assert 20 <= len(res.triplets) < len(res.result.decisions)
    assert removed["flagged"] >= 1 and removed["tie"] >= 1 and removed["min_labels"] == 0
    card = (tmp_path / "bench" / "README.md").read_text(encoding="utf-8")
    n_kept = sum(t.n_labels for t in res.triplets)
    assert f"The kept pairs' labels by where they were made: example {n_kept}." in card
    assert f"**Example data:** {n_kept} labels of the kept pairs are example labels" in card
    overall = card.split("## Agreement", 1)[1].splitlines()
    for name in ("correctness_first", "correctness_second", "preference"):  # real figures, intervals too
        row = next(line for line in overall if line.startswith(f"| {name} |"))
        assert "undefined" not in row and re.search(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", row), row


def _view(pid: str, item: str, scheme: str) -> ex.PairView:
    pair = Pair(pid, item, f"{item}:a:0", f"{item}:b:0", "pair:cross_model", scheme=scheme)
    return ex.PairView(pair, "vlm-alpha", "vlm-beta", item == "vqa-04", BUILT_IN[scheme])


@settings(max_examples=40, deadline=None)
@given(
    hs.lists(
        hs.tuples(hs.text("0123456789abcdef", min_size=4, max_size=8), hs.sampled_from(["ogc-01", "kn-02", "vqa-04"])),
        unique_by=lambda t: t[0],
        min_size=1,
        max_size=12,
    ),
    hs.sampled_from(["mmrb", "mmrb2-pairwise"]),
    hs.data(),
)
def test_a_pair_s_labels_depend_on_its_own_ids_alone(pairs, scheme, data):
    views = [_view(pid, item, scheme) for pid, item in pairs]
    some = [views[i] for i in data.draw(hs.lists(hs.integers(0, len(views) - 1), unique=True, min_size=1))]
    every = {(lb.pair_id, lb.annotator): lb for lb in ex.example_labels(views)}
    for lb in ex.example_labels(some):  # the same values whichever other pairs are labelled
        assert replace(lb, created_at=None, updated_at=None) == replace(
            every[lb.pair_id, lb.annotator], created_at=None, updated_at=None
        )
    assert len(every) == 3 * len(views)
    flagged = {pid for (pid, _), lb in every.items() if lb.flag}
    assert flagged == {v.pair.id for v in views if v.image_missing}  # flagged once each, by one of the three
    assert sum(bool(lb.flag) for lb in every.values()) == len(flagged)
    if scheme != "mmrb":  # the six-point scale says the preference
        assert all(lb.ratings["score"] in range(1, 7) and lb.correctness_first is None for lb in every.values())
