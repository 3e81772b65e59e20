"""The build's MMRB2 layout (curate/benchmark/export.py, curate/formats/mmrb2.py): golden files,
and round trips of mixed responses (text, images, interleaved, a missing image) from ingest
through the store and the build to every export, MMRB2's read back by `mmrb ingest pairs
--format mmrb2`."""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from curate.benchmark import build, export
from curate.benchmark.rules import Rules
from curate.errors import MmrbError
from curate.formats import mmrb2, triplets
from curate.formats.fields import Fields
from curate.formats.reader import read_rows
from curate.ingest import ingest_pairs
from curate.model import Annotator, Candidate, Label, Triplet
from curate.seeding import hex_hash
from curate.store import Store
from tests.ingest_helpers import write_image
from tests.support import build_markers

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "build" / "mmrb2"
UPDATE = os.environ.get("MMRB_UPDATE_GOLDEN") == "1"
RULES = Rules(resamples=10, name="mmrb2 fixture")

# generic pairs: text, images, interleaved, a missing image, and a category MMRB2 has no task for
ROWS = [
    {
        "id": "chart-1",
        "prompt": "Draw a bar chart of sales: 3, 5, 2.",
        "category": "t2i",
        "response_1": [{"image": "out/chart_ok.png"}],
        "response_2": [{"image": "out/chart_wrong.png"}],
        "model_1": "painter-a",
        "model_2": "painter-b",
        "preference": "1",
    },
    {
        "id": "edit-1",
        "prompt": "Make the square blue.",
        "images": ["in/square.png"],
        "category": "edit",
        "response_1": ["Done:", {"image": "out/square_blue.png"}],
        "response_2": [{"image": "out/square_gone.png"}, {"text": " (kept red)"}],  # not there: missing
        "model_1": "painter-a",
        "model_2": "painter-b",
    },
    {
        "id": "story-1",
        "prompt": "Tell a two-step story with pictures.",
        "category": "interleaved",
        "response_1": ["First:", {"image": "out/step1.png"}, "Then:", {"image": "out/step2.png"}],
        "response_2": ["Only words, no pictures."],
        "model_1": "agent-a",
        "model_2": "agent-b",
    },
    {
        "id": "why-1",
        "prompt": "Which bar is tallest?",
        "images": ["in/bars.png"],
        "category": "reasoning",
        "response_1": "The second bar.",
        "response_2": ["Look here:", {"image": "out/crop.png"}, "so the first."],
        "model_1": "thinker-a",
        "model_2": "thinker-b",
    },
    {
        "id": "vqa-1",
        "prompt": "What colour?",
        "category": "vqa",
        "response_1": "Red.",
        "response_2": "Blue.",
    },
]
COLORS = {
    "out/chart_ok.png": "navy",
    "out/chart_wrong.png": "maroon",
    "in/square.png": "red",
    "out/square_blue.png": "blue",
    "out/step1.png": "olive",
    "out/step2.png": "teal",
    "in/bars.png": "gray",
    "out/crop.png": "purple",
}
# labels in stored order: annotator -> preference per pair, and the MMRB2 score (1-6, high =
# first better) or letter grades (first, second) it was given on mmrb2-pairwise / mmrb2-reasoning
LABELS = {
    "chart-1": {"a": "first", "b": "first", "c": "second"},
    "edit-1": {"a": "first", "b": "first", "d": "first", "c": "first"},  # four: three are written
    "story-1": {"a": "second", "b": "tie", "c": "second"},  # the tie has no place on the 1-6 scale
    "why-1": {"a": "second", "b": "second", "c": "tie"},
    "vqa-1": {"a": "first"},
}
SCORED = {
    ("chart-1", "a"): {"score": 5},
    ("chart-1", "b"): {"score": 6},
    ("chart-1", "c"): {"score": 2},
    ("edit-1", "a"): {"score": 4},
    ("edit-1", "b"): {"score": 6},
    ("edit-1", "c"): {"score": 5},
    ("edit-1", "d"): {"score": 5},
    ("story-1", "a"): {"score": 1},
    ("story-1", "c"): {"score": 3},
    ("why-1", "a"): {"grade_first": "C", "grade_second": "A"},
    ("why-1", "b"): {"grade_first": "B", "grade_second": "A"},
    ("why-1", "c"): {"grade_first": "B", "grade_second": "B"},
}


def seed(store: Store, tmp_path: Path) -> None:
    for rel, color in COLORS.items():
        write_image(tmp_path / "src" / rel, color)
    path = tmp_path / "src" / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    r = ingest_pairs(store, path, "generic")
    assert (r.pairs, r.images_missing) == (5, 1)
    for a in "abcd":
        store.add_annotator(Annotator(a))
    store.add_labels(
        [
            Label(pid, a, preference=p, ratings=SCORED.get((pid, a), {}))
            for pid, by in LABELS.items()
            for a, p in by.items()
        ]
    )


CHOSEN = {"chart-1": 0, "edit-1": 0, "story-1": 1, "why-1": 1, "vqa-1": 0}  # the labels' majority


def key(c: Candidate) -> tuple:
    """A response as what it is: its parts' kinds, texts and image bytes (sha256)."""
    out = []
    for p in c.parts:
        if p.kind == "text":
            out.append(("text", p.text.strip()))
        else:
            assert p.image is not None
            out.append(("image", p.image.sha256 if p.image.status == "ok" else p.image.status))
    return tuple(x for x in out if x != ("text", ""))


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.both_backends
def test_mmrb2_layout_matches_golden_files_and_reads_back(store, tmp_path):
    seed(store, tmp_path)
    out = tmp_path / "bench"
    res = build(store, RULES, out)
    assert sorted(t.id for t in res.triplets) == ["chart-1", "edit-1", "story-1", "vqa-1", "why-1"]
    names = sorted(p.name for p in (out / "mmrb2").glob("*.json"))
    assert names == ["edit.json", "interleaved.json", "reasoning.json", "t2i.json"]  # no vqa: not a task
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name in names:
            (GOLDEN / name).write_bytes((out / "mmrb2" / name).read_bytes())
    assert sorted(p.name for p in GOLDEN.glob("*.json")) == names
    for name in names:
        assert (out / "mmrb2" / name).read_bytes() == (GOLDEN / name).read_bytes(), f"mmrb2/{name} differs"
    # every file the records name is beside them, except the missing response image
    named = []
    for name in names:
        for pair in json.loads((out / "mmrb2" / name).read_text())["pairs"]:
            named += [v for kind, v in pair.get("prompt_content", []) if kind == "image"]
            for side in ("response_a", "response_b"):
                named += [v for kind, v in pair[side]["response_content"] if kind == "image"]
    present = {n for n in named if (out / "mmrb2" / n).is_file()}
    assert set(named) - present == {"edit-1_1.png"} or set(named) - present == {"edit-1_0.png"}
    assert len(set(named)) == len(named)
    # the card says what is there; the manifest hashes the files
    card = (out / "README.md").read_text()
    assert "`mmrb2/`: Multimodal RewardBench 2 layout" in card and "the other 1 triplet" in card
    files = json.loads((out / "build.json").read_text())["files"]
    assert "mmrb2/t2i.json" in files and all(f"mmrb2/{n}" in files for n in present)


def test_mixed_responses_round_trip_through_every_export(store, tmp_path):
    seed(store, tmp_path)
    out = tmp_path / "bench"
    res = build(store, RULES, out)
    cands = {c.id: c for c in store.candidates()}
    pairs = {p.id: p for p in store.pairs()}
    orig = {pid: (key(cands[p.first_id]), key(cands[p.second_id])) for pid, p in pairs.items()}
    by_id = {t.id: t for t in res.triplets}
    chosen = {pid: orig[pid][CHOSEN[pid]] for pid in orig}
    rejected = {pid: orig[pid][1 - CHOSEN[pid]] for pid in orig}
    assert sum(len(c.images) for c in cands.values()) == 7  # six stored, one missing

    # triplets.jsonl: parts with images as files of the build
    def triplet_key(parts, text):
        if not parts:
            return (("text", text.strip()),)
        return tuple(
            ("text", p.value.strip()) if p.kind == "text" else ("image", "missing" if p.missing else sha(out / p.value))
            for p in parts
            if p.kind == "image" or p.value.strip()
        )

    for row in read_rows(out / "triplets.jsonl"):
        f = Fields("triplets.jsonl", row.line, row.data or {})
        rec = triplets.parse(f)
        assert rec is not None and not f.problems
        assert triplet_key(rec.chosen_parts, rec.chosen) == chosen[rec.id], rec.id
        assert triplet_key(rec.rejected_parts, rec.rejected) == rejected[rec.id], rec.id

    # Hugging Face dataset and its Parquet file: the images embedded, byte for byte
    import datasets

    def hf_key(parts, text):
        if not parts:
            return (("text", text.strip()),)
        return tuple(
            ("text", p["text"].strip())
            if p["text"] is not None
            else ("image", hashlib.sha256(p["image"]["bytes"]).hexdigest() if p["image"] else "missing")
            for p in parts
            if p["text"] is None or p["text"].strip()
        )

    for ds in (
        datasets.load_from_disk(str(out / "hf")),
        datasets.load_dataset(
            "parquet", data_files=str(out / export.PARQUET), split="train", cache_dir=str(tmp_path / "hf-cache")
        ),
    ):
        for row in ds.with_format("arrow")[:].to_pylist():  # images as their stored bytes
            assert hf_key(row["chosen_parts"], row["chosen"]) == chosen[row["id"]], row["id"]
            assert hf_key(row["rejected_parts"], row["rejected"]) == rejected[row["id"]], row["id"]

    # the text layouts: each response as its text, images as [image: NAME] markers
    for line in (out / "multimodal_rewardbench.jsonl").read_text().splitlines():
        m = json.loads(line)
        assert m[m["Better"]] == by_id[m["ID"]].chosen
    # each marker names the build's file of that image (the source's name is not in the build)
    assert by_id["chart-1"].chosen == f"[image: {by_id['chart-1'].chosen_parts[0].value}]"
    assert by_id["chart-1"].chosen_parts[0].value.startswith("images/")
    assert build_markers.markers(out) and not build_markers.unresolved(out)
    assert res.mmrb2 == {"t2i": 1, "edit": 1, "interleaved": 1, "reasoning": 1}

    # MMRB2: read back by the importer, a fresh store
    back = Store(str(tmp_path / "back.db"), images=tmp_path / "back-images")
    try:
        for path in sorted((out / "mmrb2").glob("*.json")):
            ingest_pairs(back, path, "mmrb2")
        bc = {c.id: c for c in back.candidates()}
        bitems = {i.id: i for i in back.items()}
        blabels: dict[str, list[Label]] = {}
        for lab in back.labels():
            blabels.setdefault(lab.pair_id, []).append(lab)
        seen = set()
        for p in back.pairs():
            task, pid = p.item_id.split(":")[1:]
            seen.add(pid)
            t = by_id[pid]
            first, second = key(bc[p.first_id]), key(bc[p.second_id])
            won, lost = (first, second) if p.known_preference == "first" else (second, first)
            assert (won, lost) == (chosen[pid], rejected[pid]), pid
            assert task == t.category
            item = bitems[p.item_id]
            assert item.prompt == t.prompt
            src = store.items(ids=[pairs[pid].item_id])[0]
            assert [i.sha256 for i in item.images] == [i.sha256 for i in src.images]

            # the labels' preferences, as the responses they prefer (ties: see below)
            def prefers(labels, a, b):
                return Counter({"first": a, "second": b, "tie": "tie"}.get(lab.preference) for lab in labels)

            got = prefers(blabels.get(p.id, []), first, second)
            sent = [
                Label(pid, a, preference=pref)
                for a, pref in sorted(LABELS[pid].items())
                if task == "reasoning" or pref != "tie"
            ][: mmrb2.RATERS]
            want = prefers(sent, *orig[pid])
            assert got == want, pid
        assert seen == {"chart-1", "edit-1", "story-1", "why-1"}
    finally:
        back.close()


def mmrb2_published(tmp_path: Path) -> Path:
    """Published MMRB2 pairs (scores, grades) with their images, as `ingest pairs` reads them."""
    from tests.support.images import jpeg

    src = tmp_path / "published"
    src.mkdir()
    (src / "ie_1_0.jpg").write_bytes(jpeg("red"))
    (src / "ie_1_1.jpg").write_bytes(jpeg("blue"))
    (src / "rs_1_0.jpg").write_bytes(jpeg("green"))
    t2i = [
        {
            "id": "ie_1",
            "response_a": {"model_name": "m-a", "response_content": [["image", "ie_1_0.jpg"]]},
            "response_b": {"model_name": "m-b", "response_content": [["image", "ie_1_1.jpg"]]},
            "chosen": "A",
            "human_annotations": [5, 6, 2],
            "prompt_source": "oneig",
            "prompt_metadata": {"id": "7"},
        }
    ]
    reasoning = [
        {
            "id": "rs_1",
            "response_a": {"model_name": "m-a", "response_content": [["text", "Because."]]},
            "response_b": {"model_name": "m-b", "response_content": [["text", "See:"], ["image", "rs_1_0.jpg"]]},
            "chosen": "A",
            "human_annotations": {"response_a_ratings": ["A", "A", "B"], "response_b_ratings": ["C", "B", "B"]},
            "prompt_source": "blink",
            "prompt_metadata": {"id": "val_1"},
        }
    ]
    (src / "t2i_response_only.json").write_text(json.dumps({"pairs": t2i}), encoding="utf-8")
    (src / "reasoning_response_only.json").write_text(json.dumps({"pairs": reasoning}), encoding="utf-8")
    return src


def test_published_mmrb2_round_trips_with_its_annotations(sqlite_store, tmp_path):
    """MMRB2 in, MMRB2 out: the raters' scores and grades come back as they were, turned to
    whichever response the build put first (balanced: of two pairs, one is turned around)."""
    src = mmrb2_published(tmp_path)
    for name in ("t2i_response_only.json", "reasoning_response_only.json"):
        ingest_pairs(sqlite_store, src / name, "mmrb2")
    out = tmp_path / "bench"
    build(sqlite_store, Rules(resamples=10), out)
    (t2i,) = json.loads((out / "mmrb2" / "t2i.json").read_text())["pairs"]
    (rs,) = json.loads((out / "mmrb2" / "reasoning.json").read_text())["pairs"]
    stem = "mmrb2_t2i_ie_1-" + hex_hash("mmrb2:t2i:ie_1", n=8)  # ':' is no part of a file name
    a_image = out / "mmrb2" / f"{stem}_0.jpg"
    assert [x[1] for x in t2i["response_a"]["response_content"]] == [a_image.name]
    (a_cand,) = sqlite_store.candidates(ids=[f"mmrb2:t2i:ie_1:{t2i['response_a']['model_name']}:0"])
    assert sha(a_image) == a_cand.images[0].sha256  # the stored bytes
    if t2i["chosen"] == "A":  # as published
        assert t2i["human_annotations"] == [5, 6, 2]
    else:  # turned around: each score seen from the other response
        assert t2i["human_annotations"] == [2, 1, 5]
    grades = rs["human_annotations"]
    if rs["chosen"] == "A":
        assert grades == {"response_a_ratings": ["A", "A", "B"], "response_b_ratings": ["C", "B", "B"]}
    else:
        assert grades == {"response_a_ratings": ["C", "B", "B"], "response_b_ratings": ["A", "A", "B"]}
    assert t2i["prompt_source"] == "mmrb2" and "prompt_content" not in t2i  # published: no prompt
    assert "A" in (t2i["chosen"], rs["chosen"]) and "B" in (t2i["chosen"], rs["chosen"])
    # and back again: the same labels against the same responses
    back = Store(str(tmp_path / "back.db"), images=tmp_path / "back-images")
    try:
        for name in ("t2i.json", "reasoning.json"):
            ingest_pairs(back, out / "mmrb2" / name, "mmrb2")

        def by_response(s: Store) -> dict:
            cands = {c.id: c for c in s.candidates()}
            out = {}
            for p in s.pairs():
                a, b = key(cands[p.first_id]), key(cands[p.second_id])
                won = a if p.known_preference == "first" else b
                labs = []
                for lab in sorted(s.labels(pair_id=p.id), key=lambda lab: lab.annotator):
                    r = dict(lab.ratings)
                    if "score" in r and a > b:  # orient every score towards the smaller key
                        r["score"] = 7 - r["score"]
                    if a > b:
                        r = {
                            {"grade_first": "grade_second", "grade_second": "grade_first"}.get(k, k): v
                            for k, v in r.items()
                        }
                    labs.append(tuple(sorted(r.items())))
                out[min(a, b)] = (won, sorted(labs))
            return out

        assert by_response(back) == by_response(sqlite_store)
    finally:
        back.close()


def test_the_benchmark_script_and_mmrb_score_read_the_layout(sqlite_store, tmp_path):
    """MMRB2's own compute_accuracy.py takes the build's mmrb2/ folder as its benchmark
    folder, and `mmrb score` / `mmrb evaluate` read the files as MMRB2 (task from the name)."""
    import subprocess
    import sys

    from mmrb_eval.datasets import read_dataset

    script = ROOT.parent / "shared" / "official" / "mmrb2" / "compute_accuracy.py"
    seed(sqlite_store, tmp_path)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    tasks = ("t2i", "edit", "interleaved", "reasoning")  # the script's order
    truth = {
        task: {p["id"]: p["chosen"] for p in json.loads((out / "mmrb2" / f"{task}.json").read_text())["pairs"]}
        for task in tasks
    }
    flip = {"A": "B", "B": "A"}
    for task in tasks:
        pairs = read_dataset(out / "mmrb2" / f"{task}.json")
        assert [(p.id, p.category) for p in pairs] == [(i, task) for i in truth[task]]
        assert all(p.preferred == ("first" if truth[task][p.id] == "A" else "second") for p in pairs)
        row = next(r for r in ROWS if r["id"] == pairs[0].id)
        assert pairs[0].prompt == row["prompt"]  # and the prompt's images, beside the file
        assert [Path(i).read_bytes() for i in pairs[0].images] == [
            (tmp_path / "src" / i).read_bytes() for i in row.get("images", [])
        ]
    if not script.exists():
        pytest.skip("../shared/official/mmrb2/compute_accuracy.py not present beside this checkout")
    for right, expected in ((True, 1.0), (False, 0.0)):
        preds = []
        for task in tasks:
            f = tmp_path / f"pred-{task}-{right}.json"
            f.write_text(
                json.dumps(
                    {
                        pid: {
                            "forward": [{"judgement": c if right else flip[c]}],
                            "reverse": [{"judgement": flip[c] if right else c}],
                        }
                        for pid, c in truth[task].items()
                    }
                )
            )
            preds.append(str(f))
        res = tmp_path / f"res-{right}.json"
        cmd = [sys.executable, str(script), "--task", "all", "--predictions", *preds]
        subprocess.run(
            [*cmd, "--benchmark_dir", str(out / "mmrb2"), "--output", str(res)], check=True, capture_output=True
        )
        got = json.loads(res.read_text())["tasks"]
        assert [(t["total_pairs"], t["missing_pairs"], t["accuracy"]) for t in got] == [(1, 0, expected)] * 4


def test_mmrb_build_says_what_the_mmrb2_layout_holds(tmp_path, capsys):
    from tests.support.command_runner import run_command

    db = tmp_path / "s.db"
    with Store(str(db), images=tmp_path / "img") as s:
        seed(s, tmp_path)
    rules = tmp_path / "rules.toml"
    rules.write_text("[export]\nresamples = 10\n")
    argv = ["--db", str(db), "--images", str(tmp_path / "img"), "--rules", str(rules), "--out", str(tmp_path / "out")]
    assert run_command("build", argv) == 0
    out = capsys.readouterr().out
    assert (
        f"MMRB2 layout in {tmp_path / 'out' / 'mmrb2'}: 4 triplets (t2i 1, edit 1, interleaved 1, reasoning 1)" in out
    )


LABEL = hs.tuples(
    hs.sampled_from(["first", "second", "tie", None]),
    hs.one_of(hs.none(), hs.integers(1, 6)),  # an MMRB2 score (high = first better)
    hs.one_of(hs.none(), hs.tuples(hs.sampled_from(mmrb2.GRADES), hs.sampled_from(mmrb2.GRADES))),
)


@settings(max_examples=200, deadline=None)
@given(hs.lists(LABEL, max_size=5), hs.sampled_from(["first", "second"]), hs.sampled_from(["t2i", "reasoning"]))
def test_written_annotations_read_back_as_the_labels_said(specs, a_side, task):
    """Whatever the labels and whichever response is A, the annotations are valid MMRB2, and
    the importer's reading of them (curate/ingest/mmrb2.py) prefers the same stored response
    as each of the (at most three) labels written."""
    from curate.ingest.mmrb2 import _label

    labels = []
    for n, (pref, score, grades) in enumerate(specs):
        ratings: dict = {}
        if task != "reasoning" and score is not None:
            ratings["score"] = score
        if task == "reasoning" and grades is not None:
            ratings = {"grade_first": grades[0], "grade_second": grades[1]}
        labels.append(Label("p", f"rater{n}", preference=pref, ratings=ratings))
    made_up = [
        lab
        for lab in labels
        if not lab.ratings and (lab.preference in ("first", "second") or (task == "reasoning" and lab.preference))
    ]
    triplet = Triplet("p", "q", (), "c", "r", task)
    refused = export.mmrb2_unscored(export.Export([triplet], {"p": a_side == "first"}, labels={"p": labels}))
    assert refused == ({"p": sorted(lab.annotator for lab in made_up)} if made_up else {})
    if made_up:  # a preference without its score is refused, never written as a score made up from it
        with pytest.raises(MmrbError, match="preference but no MMRB2 score"):
            export.mmrb2_ratings(task, sorted(made_up, key=lambda lab: lab.annotator)[:1], a_side)
        return
    out = export.mmrb2_ratings(task, labels, a_side)
    f = Fields("x.json", 1, {"human_annotations": mmrb2.annotations_value(task, out)})
    assert mmrb2.ratings(f, task) == out and not f.problems
    expected = []
    for lab in labels:
        r = lab.ratings
        if "score" in r:
            expected.append("first" if r["score"] > 3.5 else "second")
        elif "grade_first" in r:
            gf, gs = (mmrb2.GRADES.index(r[k]) for k in ("grade_first", "grade_second"))
            expected.append("first" if gf < gs else "second" if gf > gs else "tie")
    b_side = "second" if a_side == "first" else "first"
    got = [{"first": a_side, "second": b_side}.get(p, p) for p in (_label("p", "x", r).preference for r in out)]
    assert got == expected[: mmrb2.RATERS]


@pytest.mark.parametrize("links", [True, False])
def test_layout_images_are_links_or_copies_of_the_builds_own(sqlite_store, tmp_path, monkeypatch, links):
    """Hard links where the file system has them (the bytes once on disk), else copies."""
    if not links:

        def no_links(src, dst):
            raise OSError("links not supported")

        monkeypatch.setattr(export.os, "link", no_links)
    seed(sqlite_store, tmp_path)
    out = tmp_path / "bench"
    build(sqlite_store, RULES, out)
    placed = sorted(p for p in (out / "mmrb2").iterdir() if p.suffix == ".png")
    assert len(placed) == 8  # six response images (one is missing) and two prompt images
    own = {sha(p): p for p in (out / "images").iterdir()}
    for p in placed:
        assert sha(p) in own
        assert p.samefile(own[sha(p)]) == links and (p.stat().st_nlink > 1) == links


def test_real_mmrb2_t2i_round_trips_every_pair_through_its_scheme(sqlite_store, tmp_path):
    """The published t2i file in, built, MMRB2 out: every pair's chosen and its three raters'
    scores as published (turned to the response the build put first), chosen by the scheme's
    rule (the mean against 3.5), and the labels' scheme is mmrb2-pairwise."""
    from curate import schemes
    from tests.support.data import shared

    src = shared("mmrb2/t2i_response_only.json")
    published = {p["id"]: p for p in json.loads(src.read_text())["pairs"]}
    ingest_pairs(sqlite_store, src, "mmrb2")
    assert {s.name for s in schemes.schemes_in_use(sqlite_store)} == {"mmrb2-pairwise"}
    out = tmp_path / "bench"
    res = build(sqlite_store, Rules(resamples=0), out)
    written = json.loads((out / "mmrb2" / "t2i.json").read_text())["pairs"]
    same = flipped = 0
    for pair in written:
        p = published[pair["id"].removeprefix("mmrb2:t2i:")]
        # no pair's mean is 3.5, so the two readings never both hold
        same += pair["chosen"] == p["chosen"] and pair["human_annotations"] == p["human_annotations"]
        # placed the other way round: A and B swapped, each score seen from the other side
        back = {"A": "B", "B": "A"}[pair["chosen"]]
        flipped += back == p["chosen"] and pair["human_annotations"] == [7 - s for s in p["human_annotations"]]
    assert res.mmrb2 == {"t2i": 1000} and same + flipped == 1000
    assert flipped > 100  # some of them were placed flipped and mirrored
