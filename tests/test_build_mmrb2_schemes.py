"""Labels made in the app on mmrb2-pairwise (curate.schemes.to_label, some with the first
response shown on the right) -> build -> MMRB2 export with their real 1-6 scores -> MMRB2's own
compute_accuracy.py reads it with scripted judgements, and its figures equal `mmrb score`'s;
labels without a score are refused, never written as a made-up 5 or 2."""

from __future__ import annotations

import contextlib
import io
import json
import statistics

import pytest

from curate import schemes
from curate.benchmark import build
from curate.benchmark.rules import Rules
from curate.cli import main as mmrb
from curate.model import Annotator, Candidate, Item, Label, Pair
from tests.support.official import load

PAIRWISE = schemes.BUILT_IN["mmrb2-pairwise"]
# pair -> what each of three annotators picked ON SCREEN (6: the left response much better)
# and which stored response they saw on the left
SHOWN = {
    "t0": ((6, "first"), (5, "second"), (2, "second")),  # stored 6, 2, 5: mean 4.33, the first
    "t1": ((1, "first"), (2, "first"), (6, "second")),  # stored 1, 2, 1: the second
    "t2": ((3, "second"), (4, "first"), (1, "second")),  # stored 4, 4, 6: the first
    "t3": ((5, "second"), (6, "second"), (5, "first")),  # stored 2, 1, 5: the second
    "t4": ((4, "first"), (4, "first"), (3, "second")),  # stored 4, 4, 4: the first
}


def _store(store) -> dict[str, list[int]]:
    """The pairs (t2i, the first response by model 'one', the second by 'two') and the labels
    as the label page makes them; returns each pair's stored scores."""
    ids = list(SHOWN)
    store.add_items([Item(id=f"i{p}", prompt=f"draw {p}", category="t2i") for p in ids])
    store.add_candidates(
        [Candidate(id=f"{p}/{m}", item_id=f"i{p}", model=m, text=f"{m} {p}") for p in ids for m in ("one", "two")]
    )
    store.add_pairs([Pair(id=p, item_id=f"i{p}", first_id=f"{p}/one", second_id=f"{p}/two", origin="t") for p in ids])
    store.set_pair_scheme(ids, PAIRWISE.name, PAIRWISE.version)
    for who in "xyz":
        store.add_annotator(Annotator(who))
    stored: dict[str, list[int]] = {}
    for pid, picks in SHOWN.items():
        for who, (shown, left) in zip("xyz", picks, strict=True):
            values = schemes.stored_values(PAIRWISE, {"score": shown}, left)
            assert values["score"] == (shown if left == "first" else 7 - shown)  # mirrored when flipped
            label = schemes.to_label(PAIRWISE, pid, who, values, scheme_version=PAIRWISE.version)
            store.save_label(label)
            stored.setdefault(pid, []).append(values["score"])
    return stored


def _ours(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = mmrb(["score", "--bootstrap", "0", "--json", *argv])
    assert code == 0, out.getvalue()
    return json.loads(out.getvalue())


def test_app_labels_export_their_scores_and_the_benchmarks_script_scores_them_as_we_do(sqlite_store, tmp_path):
    stored = _store(sqlite_store)
    out = tmp_path / "bench"
    res = build(sqlite_store, Rules(resamples=0, seed=1), out)
    data = json.loads((out / "mmrb2" / "t2i.json").read_text())
    written = {p["id"]: p for p in data["pairs"]}
    assert res.mmrb2 == {"t2i": len(SHOWN)} and set(written) == set(SHOWN)
    first_better = {pid: statistics.fmean(s) > 3.5 for pid, s in stored.items()}
    a_first = {}
    for pid, p in written.items():
        a_first[pid] = p["response_a"]["model_name"] == "one"  # response A is the stored first
        scores = stored[pid] if a_first[pid] else [7 - s for s in stored[pid]]
        assert p["human_annotations"] == scores  # the real scores, from A's side, in annotator order
        assert (p["chosen"] == "A") == (first_better[pid] == a_first[pid])
        assert (p["chosen"] == "A") == (statistics.fmean(p["human_annotations"]) > 3.5)  # MMRB2's own rule
    assert len(set(a_first.values())) == 2  # the build (seed 1) placed some pairs with the second response as A

    # a scripted judge that always prefers the stored first response; t4 it never judged
    def letter(pid: str, order: str) -> str:
        a = "A" if a_first[pid] else "B"
        return a if order == "forward" else {"A": "B", "B": "A"}[a]  # reverse: "A" names response B

    preds = {pid: {o: [{"judgement": letter(pid, o)}] for o in ("forward", "reverse")} for pid in SHOWN if pid != "t4"}
    (tmp_path / "preds.json").write_text(json.dumps(preds))
    theirs = load("mmrb2/compute_accuracy.py", "mmrb2_official").compute_task_accuracy(preds, data, "image")
    ours = _ours(
        "--judgments",
        str(tmp_path / "preds.json"),
        "--format",
        "mmrb2",
        "--preset",
        "mmrb2",
        "--dataset",
        str(out / "mmrb2" / "t2i.json"),
    )
    judged = [pid for pid in SHOWN if pid != "t4"]
    right = sum(first_better[p] for p in judged)
    assert (theirs.total_pairs, theirs.missing_pairs) == (len(SHOWN), 1)
    assert (theirs.total_correct, theirs.total_evaluated) == (2 * right, 2 * len(judged))  # both orders
    assert (ours["pairs"], ours["missing_pairs"]) == (theirs.total_pairs, theirs.missing_pairs)
    assert (ours["overall"]["correct"], ours["overall"]["n"]) == (theirs.total_correct, theirs.total_evaluated)
    assert ours["overall"]["accuracy"] == pytest.approx(theirs.accuracy, abs=1e-12)


def test_a_task_with_a_label_without_a_score_is_not_written_in_mmrb2s_layout(sqlite_store, tmp_path):
    _store(sqlite_store)
    out = tmp_path / "bench"
    build(sqlite_store, Rules(resamples=0), out)
    before = (out / "mmrb2" / "t2i.json").read_bytes()
    # an mmrb label (a preference, no score) on two of the t2i pairs
    sqlite_store.add_annotator(Annotator("w"))
    sqlite_store.save_label(Label("t1", "w", preference="second"))
    sqlite_store.save_label(Label("t3", "w", preference="first"))
    assert before
    res = build(sqlite_store, Rules(resamples=0), out)
    assert res.mmrb2_refused == {"t2i": ["t1", "t3"]} and "t2i" not in res.mmrb2
    assert not (out / "mmrb2" / "t2i.json").exists()  # never a score made up, nor a task half written
    assert {t.id for t in res.triplets} >= {"t1", "t3"}  # the other layouts keep them
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Not in the MMRB2 layout: `t2i` (2 pairs, e.g. `t1`)" in card
    assert json.loads((out / "build.json").read_text(encoding="utf-8"))["mmrb2_not_written"] == {"t2i": ["t1", "t3"]}
    rules = tmp_path / "rules.toml"
    rules.write_text("[export]\nresamples = 0\n", encoding="utf-8")
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert mmrb(["build", "--db", sqlite_store.db, "--rules", str(rules), "--out", str(tmp_path / "cli")]) == 0
    assert (
        "warning: MMRB2 layout: t2i not written: 2 pairs (e.g. t1) with labels that have a preference"
        in said.getvalue()
    )


def test_labels_made_on_the_label_page_export_their_real_scores_for_mmrb2s_script(tmp_path, monkeypatch):
    """The same, the labels made through the label page itself (AppTest): each annotator picks
    on screen, some with the first response on the right; the export holds the scores as
    stored (mirrored where flipped) and MMRB2's compute_accuracy.py reads it."""
    from curate.assign import assign
    from curate.store import Store
    from tests.support.apptest import sign_in, submit
    from tests.support.streamlit_server import _password_hash
    from tests.test_app_schemes import widget

    db = str(tmp_path / "app.db")
    s = Store(db, images=tmp_path / "images")
    ids = ["t0", "t1", "t2", "t3"]
    s.add_items([Item(id=f"i{p}", prompt=f"draw {p}", category="t2i") for p in ids])
    s.add_candidates(
        [Candidate(id=f"{p}/{m}", item_id=f"i{p}", model=m, text=f"{m} {p}") for p in ids for m in ("one", "two")]
    )
    s.add_pairs([Pair(id=p, item_id=f"i{p}", first_id=f"{p}/one", second_id=f"{p}/two", origin="t") for p in ids])
    h = _password_hash()
    for who in ("alice", "bob"):
        s.add_annotator(Annotator(who, "annotator", h))
    assign(s, k=2, annotators=["alice", "bob"], scheme=PAIRWISE, seed=3)
    monkeypatch.setenv("MMRB_DB", db)
    monkeypatch.setenv("MMRB_IMAGES", str(tmp_path / "images"))
    picked = {"alice": {"t0": 6, "t1": 2, "t2": 5, "t3": 1}, "bob": {"t0": 5, "t1": 1, "t2": 3, "t3": 2}}
    lefts = {}
    for who, picks in picked.items():
        at = sign_in(who)
        for a in sorted(s.assignments(annotator=who), key=lambda a: a.seq):
            lefts[(a.pair_id, who)] = a.left
            widget(at, "qs-score-all-").set_value(picks[a.pair_id])
            submit(at)
    assert len(set(lefts.values())) == 2  # both sides were shown
    stored = {(lab.pair_id, lab.annotator): lab.ratings["score"] for lab in s.labels() if lab.scheme_version == 1}
    assert stored == {
        (p, who): v if lefts[(p, who)] == "first" else 7 - v for who, picks in picked.items() for p, v in picks.items()
    }
    out = tmp_path / "bench"
    res = build(s, Rules(resamples=0), out)
    assert res.mmrb2 == {"t2i": 4} and not res.mmrb2_refused
    data = json.loads((out / "mmrb2" / "t2i.json").read_text())
    for p in data["pairs"]:
        pid = p["id"]
        a_first = p["response_a"]["model_name"] == "one"
        scores = [stored[(pid, who)] for who in ("alice", "bob")]
        assert p["human_annotations"] == (scores if a_first else [7 - v for v in scores])
    # a judge preferring response A everywhere: MMRB2's script and ours agree on the figure
    preds = {p["id"]: {"forward": [{"judgement": "A"}], "reverse": [{"judgement": "B"}]} for p in data["pairs"]}
    (tmp_path / "preds.json").write_text(json.dumps(preds))
    theirs = load("mmrb2/compute_accuracy.py", "mmrb2_official").compute_task_accuracy(preds, data, "image")
    ours = _ours(
        "--judgments",
        str(tmp_path / "preds.json"),
        "--format",
        "mmrb2",
        "--preset",
        "mmrb2",
        "--dataset",
        str(out / "mmrb2" / "t2i.json"),
    )
    assert (ours["overall"]["correct"], ours["overall"]["n"]) == (theirs.total_correct, theirs.total_evaluated)
    assert theirs.total_evaluated == 8 and 0 < theirs.total_correct < 8
    from annotate import ui

    ui.close_stores()
    s.close()
