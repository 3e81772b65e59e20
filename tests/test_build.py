"""Filter rules, triplets and exports (golden files), atomic and byte-identical builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from PIL import Image

from curate.agreement import from_store
from curate.benchmark import build, dry_run, export, load_rules
from curate.benchmark.filter import PairLabels, _mode, decide
from curate.benchmark.rules import AGREEMENT_FIELDS, Rules, Threshold
from curate.errors import InputError, MmrbError
from curate.model import Annotator, Assignment, Candidate, Item, Label, Pair, Triplet
from curate.quality.frames import as_frame, label_values, table_frame
from curate.sides import export_chosen_first
from tests.support.build_store import CORR, RULES, seed_store
from tests.support.command_runner import run_command

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "build"
UPDATE = os.environ.get("MMRB_UPDATE_GOLDEN") == "1"
LABELLED_AT = "2026-01-01T09:00:00+00:00"  # the labels' times: the raw labels' file is the same on every run
GOLDEN_FILES = (
    "triplets.jsonl",
    "multimodal_rewardbench.jsonl",
    "vl_rewardbench.jsonl",
    "README.md",
    "build.json",
    "croissant.json",
)


def test_the_build_s_label_table_holds_what_the_label_records_say(store):
    """The build reads its labels once, as a LabelTable: each pair's values by field, and the
    long frame crowd-kit gets, are those of the stored records (submitted, no control task),
    in the records' order."""
    seed_store(store)
    store.add_assignments([Assignment("p04", "c", "first", 99, is_gold=True)])  # a control task
    store.save_label(Label("p04", "c", "correct", "correct", "first"))
    store.save_label(Label("p10", "c", None, "incorrect", None, status="draft"))
    records = store.labels(status="submitted", control=False)
    assert [lab.annotator for lab in records if lab.pair_id in ("p04", "p10")] == ["a", "b"]
    pairs = [p.id for p in store.pairs()]
    table = from_store(store)
    for pid in pairs:
        want = PairLabels.of([lab for lab in records if lab.pair_id == pid]).values
        got = {name: by_pair[pid] for name in AGREEMENT_FIELDS if pid in (by_pair := table.given(name))}
        assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}, pid
    rows = [
        (lab.pair_id, lab.annotator, f, v)
        for p in pairs
        for lab in records
        if lab.pair_id == p
        for f, v in label_values(lab).items()
    ]
    assert len(rows) > 20
    pd.testing.assert_frame_equal(table_frame(table, AGREEMENT_FIELDS, pairs), as_frame(rows))


def test_dry_run_counts_each_rule_per_category(store):
    seed_store(store)
    res = dry_run(store, RULES)
    removed = res.removed()
    assert res.rules == [
        "adjudicated_exclude",
        "flagged",
        "min_labels",
        "agreement:preference",
        "no_preference",
        "tie",
        "correctness_task",
    ]
    assert removed["adjudicated_exclude"] == {"vqa": 1}
    assert removed["flagged"] == {"safety": 1}
    assert removed["min_labels"] == {"safety": 1, "vqa": 1}
    assert removed["agreement:preference"] == {"safety": 1}
    assert removed["tie"] == {"vqa": 1}
    assert removed["correctness_task"] == {"open_generation/correctness_task": 1}
    assert removed["no_preference"] == {}
    kept = {d.pair.id: d.chosen for d in res.kept}
    assert kept == {"p00": "first", "p01": "first", "p06": "first", "p09": "second", "p11": "second", "p12": "second"}
    assert "p99" not in {d.pair.id for d in res.decisions}  # dropped pairs are out of scope
    # a stricter rule removes the 2/3 majority too
    strict = dry_run(store, Rules(min_labels=3, agreement={"preference": Threshold(1.0)}))
    assert strict.removed()["agreement:preference"] == {"safety": 1, "vqa": 1}


# -- the correctness task ---------------------------------------------------------------------------
CT = "open_generation/correctness_task"


@pytest.mark.parametrize(
    "category, task, corr, removed_by",
    [
        # the category alone puts a pair in the correctness task, whatever its task says
        (CT, None, "cc", "correctness_task"),  # both judged correct: not a correctness triplet
        (CT, None, "ii", "correctness_task"),
        (CT, None, "ic", "correctness_task"),  # the chosen one judged incorrect
        (CT, "preference", "cc", "correctness_task"),  # pairing's "same verdict" label does not exempt it
        (CT, None, "ci", None),
        (CT, "correctness", "cc", "correctness_task"),
        ("vqa", "correctness", "cc", "correctness_task"),  # so does task "correctness"
        ("vqa", None, "cc", None),  # any other pair: no correctness rule
        ("open_generation/preference_task", None, "cc", None),
    ],
)
def test_correctness_task_rule_by_category_or_task(category, task, corr, removed_by):
    item = Item(id="i", prompt="q", category=category)
    pair = Pair(id="p", item_id="i", first_id="i/a", second_id="i/b", origin="test", task=task)
    labels = [Label("p", a, CORR[corr[0]], CORR[corr[1]], "first") for a in "abc"]
    d = decide(pair, item, PairLabels.of(labels), None, Rules(min_labels=3), {})
    assert d.removed_by == removed_by
    assert (
        decide(pair, item, PairLabels.of(labels), None, Rules(min_labels=3, correctness_task=False), {}).removed_by
        is None
    )


def test_correctness_decides_the_preference_in_the_category_too():
    """No preference given: correctness decides it for a correctness-task pair, even with an
    empty task; elsewhere the pair has no preference."""
    labels = [Label("p", a, "incorrect", "correct", None) for a in "abc"]
    pair = Pair(id="p", item_id="i", first_id="i/a", second_id="i/b", origin="test")
    got = decide(pair, Item(id="i", prompt="q", category=CT), PairLabels.of(labels), None, Rules(min_labels=3), {})
    assert (got.removed_by, got.chosen) == (None, "second")
    other = decide(pair, Item(id="i", prompt="q", category="vqa"), PairLabels.of(labels), None, Rules(min_labels=3), {})
    assert other.removed_by == "no_preference"


def test_correctness_task_rule_on_the_store_with_empty_task(sqlite_store):
    """The issue's case end to end: pairs of category open_generation/correctness_task with
    an empty task, whose majority judged both responses correct, are removed by the rule."""
    s = sqlite_store
    s.add_items([Item(id=f"i{n}", prompt="q", category=CT) for n in range(3)])
    s.add_candidates(
        [Candidate(id=f"i{n}/{m}", item_id=f"i{n}", model=m, text=f"{m} {n}") for n in range(3) for m in ("m1", "m2")]
    )
    s.add_pairs(
        [Pair(id=f"p{n}", item_id=f"i{n}", first_id=f"i{n}/m1", second_id=f"i{n}/m2", origin="test") for n in range(3)]
    )
    for a in "abc":
        s.add_annotator(Annotator(a))
    votes = {"p0": ["cc", "cc", "ci"], "p1": ["cc", "ci", "ci"], "p2": ["cc", "cc", "cc"]}
    for pid, vs in votes.items():
        for a, v in zip("abc", vs, strict=True):
            s.save_label(Label(pid, a, CORR[v[0]], CORR[v[1]], "first"))
    res = dry_run(s, Rules(min_labels=3))
    assert all(p.task is None for p in s.pairs())
    assert res.removed()["correctness_task"] == {CT: 2}
    assert [d.pair.id for d in res.kept] == ["p1"]


@pytest.mark.both_backends
def test_build_matches_golden_files_and_loads_everywhere(store, tmp_path):
    seed_store(store, at=LABELLED_AT)
    out = tmp_path / "bench"
    res = build(store, RULES, out)
    assert res.missing_images == ["p11"]
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name in GOLDEN_FILES:
            (GOLDEN / name).write_bytes((out / name).read_bytes())
    for name in GOLDEN_FILES:
        assert (out / name).read_bytes() == (GOLDEN / name).read_bytes(), f"{name} differs from tests/golden/build"
    rows = [json.loads(x) for x in (out / "triplets.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in rows}
    assert by_id["p09"]["chosen"] == "Answer two to question 9, longer." and by_id["p09"]["rejected"].startswith(
        "Answer one"
    )
    assert by_id["p11"]["images"] == []  # its image is missing from the store: kept without it
    for r in rows:
        for p in r["images"]:
            assert (out / p).is_file()
    # benchmark layouts: the label points at the chosen text; positions are balanced
    mmrb = [json.loads(x) for x in (out / "multimodal_rewardbench.jsonl").read_text().splitlines()]
    for m in mmrb:
        assert m[m["Better"]] == by_id[m["ID"]]["chosen"]
        assert set(m) == {"ID", "Text", "Image", "Output1", "Output2", "Better", "Category"}
    assert abs(sum(m["Better"] == "Output1" for m in mmrb) - len(mmrb) / 2) <= 0.5
    vlrb = [json.loads(x) for x in (out / "vl_rewardbench.jsonl").read_text().splitlines()]
    for v in vlrb:
        assert v["response"][v["human_ranking"].index(0)] == by_id[v["id"]]["chosen"]
    # Hugging Face: load_from_disk and load_dataset("parquet") both give an Image feature
    import datasets

    ds = datasets.load_from_disk(str(out / "hf"))
    assert isinstance(ds.features["images"].feature, datasets.Image) and len(ds) == 6
    img = ds[0]["images"][0]
    assert img.size == (8, 6)
    pq = datasets.load_dataset(
        "parquet",
        data_files=str(out / "data" / "test-00000-of-00001.parquet"),
        split="train",
        cache_dir=str(tmp_path / "hf-cache"),
    )
    assert isinstance(pq.features["images"].feature, datasets.Image)
    assert pq[0]["images"][0].tobytes() == img.tobytes() and pq["id"] == ds["id"]
    # the card has its plots, large enough to read
    card = (out / "README.md").read_text()
    for plot in ("plots/agreement_per_category.png", "plots/label_distribution.png"):
        assert plot in card and (out / plot).read_bytes().startswith(b"\x89PNG")
        with Image.open(out / plot) as im:
            assert im.width >= 1200 and im.height >= 500, (plot, im.size)


def test_the_cards_loading_example_runs_as_written_and_names_the_yaml_split(sqlite_store, tmp_path):
    """The card's Python block, run offline from the build folder, gives the split its YAML
    names; so does loading the folder through the YAML itself (as the Hub would)."""
    import yaml

    seed_store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    (split,) = [f["split"] for c in front["configs"] if c["config_name"] == "default" for f in c["data_files"]]
    code = card.split("```python\n")[1].split("```")[0]
    check = f"{code}\nprint(ds.split, len(ds), same.split, len(same), labels.split, len(labels))\n"
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf-home"))
    proc = subprocess.run([sys.executable, "-c", check], cwd=out, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [split, "6", split, "6", split, "33"]
    import datasets

    via_yaml = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))
    assert list(via_yaml) == [split] and len(via_yaml[split]) == 6
    labels = datasets.load_dataset(str(out), "annotations", cache_dir=str(tmp_path / "hf-cache"))[split]
    assert len(labels) == 33 and set(labels["annotator"]) == {"annotator-01", "annotator-02", "annotator-03"}


def test_card_says_undefined_in_cells_and_explains_each_reason_once(sqlite_store, tmp_path):
    seed_store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    card = (out / "README.md").read_text()
    cells = [c.strip() for line in card.splitlines() if line.startswith("| ") for c in line.strip("|").split("|")]
    assert "undefined" in cells and not any("no variation" in c or "too few" in c for c in cells)
    blocks = [  # the notes under each table
        [line for line in block.splitlines() if line.startswith(("- undefined", "- [undefined]"))]
        for block in card.split("\n\n")
    ]
    blocks = [b for b in blocks if b]
    assert len(blocks) == 2 and all(len(b) == len(set(b)) for b in blocks)  # each reason once per table
    assert any("(correctness_second): every pairable label is 'incorrect'" in n for n in blocks[0])
    assert all(sum("too few for a bootstrap interval" in n for n in b) == 1 for b in blocks)


def test_same_inputs_give_byte_identical_builds(sqlite_store, tmp_path):
    seed_store(sqlite_store)
    a, b = tmp_path / "one", tmp_path / "elsewhere" / "two"
    build(sqlite_store, RULES, a)
    build(sqlite_store, RULES, b)
    files_a = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) > 10
    for f in files_a:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    manifest = json.loads((a / "build.json").read_text())
    assert set(manifest["files"]) == set(files_a) - {"build.json"}


def test_failed_build_leaves_the_previous_one_intact(sqlite_store, tmp_path, monkeypatch):
    seed_store(sqlite_store)
    builds = tmp_path / "builds"
    out = builds / "bench"
    build(sqlite_store, RULES, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(export, "write_hf", boom)
    with pytest.raises(RuntimeError):
        build(sqlite_store, Rules(min_labels=1), out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in builds.iterdir()) == ["bench"]  # no temporary folder left
    # a folder that is not a build is never replaced
    other = builds / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep me")
    monkeypatch.undo()
    with pytest.raises(MmrbError, match="not an mmrb build"):
        build(sqlite_store, RULES, other)
    assert (other / "mine.txt").read_text() == "keep me"
    assert sorted(p.name for p in builds.iterdir()) == ["bench", "notes"]


def test_missing_images_drop_rule(sqlite_store):
    seed_store(sqlite_store)
    res = dry_run(sqlite_store, Rules(min_labels=3, missing_images="drop"))
    assert res.removed()["missing_images"] == {"safety": 1}


@settings(max_examples=50, deadline=None)
@given(
    hs.lists(
        hs.tuples(hs.text("abcdef", min_size=1, max_size=6), hs.sampled_from(["x", "y", "z"])),
        unique_by=lambda t: t[0],
        max_size=40,
    ),
    hs.integers(0, 5),
)
def test_chosen_placement_is_seeded_and_balanced(rows, seed):
    ts = [Triplet(id=i, prompt="", images=(), chosen="", rejected="", category=c) for i, c in rows]
    first = export_chosen_first(ts, seed)
    assert first == export_chosen_first(list(reversed(ts)), seed)  # order of input does not matter
    assert abs(2 * sum(first.values()) - len(ts)) <= 1
    for cat in "xyz":
        group = [first[t.id] for t in ts if t.category == cat]
        assert abs(2 * sum(group) - len(group)) <= 1


# -- rules files --------------------------------------------------------------------------------
def test_sample_rules_and_yaml_equivalent(tmp_path):
    toml_rules = load_rules(ROOT / "data" / "sample" / "rules.toml")
    assert toml_rules.min_labels == 3 and toml_rules.agreement["preference"].share == pytest.approx(0.66)
    import yaml

    y = tmp_path / "rules.yaml"
    y.write_text(yaml.safe_dump(toml_rules.as_dict()))
    # as_dict writes the canonical { majority = x } form for every threshold
    assert load_rules(y) == toml_rules


def test_rules_errors_name_file_and_key(tmp_path):
    f = tmp_path / "rules.toml"
    f.write_text(
        '[filter]\nmin_labels = "three"\nflaged_out = true\n[filter.agreement]\npreference = { majority = 2 }\n'
    )
    with pytest.raises(InputError) as e:
        load_rules(f)
    msg = str(e.value)
    assert f"{f} field 'filter.min_labels': expected int" in msg
    assert f"{f} field 'filter.flaged_out': unknown key" in msg
    assert f"{f} field 'filter.agreement.preference': majority must be a share" in msg
    f.write_text("[filter\n")
    with pytest.raises(InputError, match=r"rules.toml:1: not valid TOML"):
        load_rules(f)


def test_cli_dry_run_and_build(tmp_path, capsys):
    from curate.store import Store

    db = tmp_path / "s.db"
    with Store(str(db), images=tmp_path / "img") as s:
        seed_store(s)
    rules = tmp_path / "rules.toml"
    rules.write_text(
        "[filter]\nmin_labels = 3\n[filter.agreement]\npreference = { majority = 0.66 }\n[export]\nresamples = 50\n"
    )
    base = ["--db", str(db), "--images", str(tmp_path / "img"), "--rules", str(rules)]
    assert run_command("build", base + ["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "agreement:preference" in out and "kept" in out
    kept_line = next(x for x in out.splitlines() if x.startswith("kept"))
    assert kept_line.split()[-1] == "6"
    assert not (tmp_path / "out").exists()
    assert run_command("build", base + ["--out", str(tmp_path / "out")]) == 0
    assert "wrote 6 triplets" in capsys.readouterr().out
    assert run_command("build", base) == 1 and "--out DIR is required" in capsys.readouterr().err


def test_a_build_of_no_triplets_fails_naming_the_rules_and_writes_nothing(tmp_path, capsys):
    from curate.store import Store

    db = tmp_path / "s.db"
    with Store(str(db), images=tmp_path / "img") as s:
        seed_store(s)
    rules = tmp_path / "rules.toml"
    base = ["--db", str(db), "--images", str(tmp_path / "img"), "--rules", str(rules)]
    out = tmp_path / "builds" / "out"
    rules.write_text("[filter]\nmin_labels = 30\nadjudication = false\n[export]\nresamples = 50\n")
    assert run_command("build", base + ["--out", str(out)]) == 1
    said = capsys.readouterr()
    # the rules that removed pairs, with their counts; the table per category on stdout
    assert "no triplets: the rules removed all 13 pairs considered (flagged: 1, min_labels: 12)" in said.err
    assert "nothing was written" in said.err
    assert next(x for x in said.out.splitlines() if x.startswith("kept")).split()[-1] == "0"
    assert not out.parent.exists() or not any(out.parent.iterdir())  # no folder, no temporary one
    # no pair has a status the rules consider: said so
    with Store(str(tmp_path / "empty.db"), images=tmp_path / "img"):
        pass
    empty = ["--db", str(tmp_path / "empty.db"), *base[2:]]
    assert run_command("build", empty + ["--out", str(out)]) == 1
    assert "no pair has one of the statuses the rules consider" in capsys.readouterr().err
    # a previous build of the same folder stays as it was
    rules.write_text("[filter]\nmin_labels = 3\n[export]\nresamples = 50\n")
    assert run_command("build", base + ["--out", str(out)]) == 0
    capsys.readouterr()
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    rules.write_text("[filter]\nmin_labels = 30\nadjudication = false\n")
    assert run_command("build", base + ["--out", str(out)]) == 1
    assert f"the previous build in {out.resolve()} is kept" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


def test_yaml_rules_errors(tmp_path):
    y = tmp_path / "rules.yaml"
    y.write_text("filter:\n  min_labels: [1\n")
    with pytest.raises(InputError, match=r"rules.yaml:3: not valid YAML"):
        load_rules(y)
    y.write_text("filter:\n  agreement:\n    preference: {unanimous: true}\n    Rating!: {majority: 0.5}\n")
    with pytest.raises(InputError, match="filter.agreement.Rating!.*a field's label name"):
        load_rules(y)


@given(hs.lists(hs.sampled_from(["first", "second", "tie", "correct"]), max_size=7))
def test_mode_is_the_unique_most_common_value(values) -> None:
    """The rules' mode (a plain count) is the unique most common value and its share, None on a
    tie for the top, as Counter.most_common defines it."""
    from collections import Counter

    modal, share = _mode(values)
    if not values:
        assert (modal, share) == (None, 0.0)
        return
    counts = Counter(values)
    top = max(counts.values())
    winners = [v for v, k in counts.items() if k == top]
    assert share == top / len(values)
    assert modal == (winners[0] if len(winners) == 1 else None)


def test_images_are_embedded_even_when_the_working_folder_has_their_files(sqlite_store, tmp_path, monkeypatch):
    """Built from inside an earlier build (its images/<sha256>.png are then files of the working
    folder), the Parquet file still embeds every image's bytes (datasets' Image encoding would
    have kept the relative path alone)."""
    import pyarrow.parquet as pq

    seed_store(sqlite_store)
    build(sqlite_store, RULES, tmp_path / "first")
    monkeypatch.chdir(tmp_path / "first")
    build(sqlite_store, RULES, tmp_path / "second")
    images = pq.read_table(tmp_path / "second" / export.PARQUET).column("images").to_pylist()
    embedded = [im for row in images for im in row]
    assert embedded and all(
        im["bytes"] and (tmp_path / "second" / im["path"]).read_bytes() == im["bytes"] for im in embedded
    )
