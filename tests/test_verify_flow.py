"""A VL-RewardBench-style verify batch end to end: loopback judges pre-select hard pairs and
propose a preference (``mmrb select``), the batch is assigned on the ``verify`` scheme, two
annotators see the proposal on their own sides in the app and agree, or disagree and correct
it, and the build's triplets follow the verified preference while its card says the proposal
was shown."""

from __future__ import annotations

import json

from curate.assign import assign
from curate.benchmark import MANIFEST, build
from curate.benchmark.rules import Rules
from curate.llm import Endpoint
from curate.model import Annotator
from curate.schemes import BUILT_IN, proposal_of
from curate.selection import select
from curate.sides import preference_to_screen
from curate.store import Store
from tests.support.apptest import all_text, sign_in, submit
from tests.support.fake_openai import FakeOpenAI
from tests.support.streamlit_server import _password_hash
from tests.test_app_schemes import widget
from tests.test_selection import setup, vlm


def _fooled_twice(req) -> str:
    """Two judges fooled by the poor answer, one right: hard pairs, the proposal the poor one."""
    text = req.prompt_text
    good_is_1 = text.find("GOOD") < text.rfind("poor")
    right = req.model == "oracle"
    return f"Overall Judgment: Answer {1 if good_is_1 == right else 2} is better."


def test_a_verify_batch_from_selection_to_the_card(tmp_path, monkeypatch):
    db = str(tmp_path / "verify.db")
    s = Store(db, images=tmp_path / "images")
    setup(s, [(f"i{n}", f"question {n}", None, "vqa", None, "k") for n in range(1, 4)])
    with FakeOpenAI(_fooled_twice) as srv:
        judges = [Endpoint(base_url=srv.url, model=m, concurrency=2) for m in ("fooled-a", "fooled-b", "oracle")]
        report = select(s, vlm(judges), m=2)
    assert report.complete and report.kept == 3
    pairs = {p.id: p for p in s.pairs()}
    good = {pid: p.known_preference for pid, p in pairs.items()}
    assert {pid: proposal_of(p) for pid, p in pairs.items()} == {
        pid: "second" if g == "first" else "first" for pid, g in good.items()
    }  # the judges' majority: the poor response

    h = _password_hash()
    for name in ("alice", "bob"):
        s.add_annotator(Annotator(name, "annotator", h))
    done = assign(s, k=2, annotators=["alice", "bob"], scheme=BUILT_IN["verify"])
    assert done.scheme is not None and done.scheme.given == 3
    monkeypatch.setenv("MMRB_DB", db)
    monkeypatch.setenv("MMRB_IMAGES", str(tmp_path / "images"))

    # alice disagrees with every proposal and corrects it; bob agrees with the first pair of his
    # queue (wrongly), disagrees with the others
    for who in ("alice", "bob"):
        at = sign_in(who)
        for n, a in enumerate(sorted(s.assignments(annotator=who), key=lambda a: a.seq)):
            proposed = preference_to_screen(proposal_of(pairs[a.pair_id]), a.left)
            words = {"left": "left is better", "right": "right is better", "tie": "a tie"}
            assert f"The judges propose: {words[proposed]}." in all_text(at)
            if who == "bob" and n == 0:
                widget(at, "qs-verdict-all-").set_value("agree")
            else:
                widget(at, "qs-verdict-all-").set_value("disagree")
                widget(at, "qs-corrected-all-").set_value("right" if proposed == "left" else "left")
                widget(at, "qs-rationale-all-").input("the other one answers the question")
            submit(at)
    labels = s.labels()
    assert len(labels) == 6 and all(lab.ratings["proposal"] == proposal_of(pairs[lab.pair_id]) for lab in labels)
    agreed = [lab for lab in labels if lab.ratings["verdict"] == "agree"]
    assert len(agreed) == 1 and agreed[0].preference == proposal_of(pairs[agreed[0].pair_id])
    assert all(lab.preference == good[lab.pair_id] for lab in labels if lab not in agreed)

    # the build keeps the pairs whose two verified preferences agree: chosen is the good answer
    out = tmp_path / "bench"
    result = build(s, Rules(), out)
    kept = {t.id for t in result.triplets}
    assert kept and agreed[0].pair_id not in kept
    assert all("GOOD" in t.chosen and "poor" in t.rejected for t in result.triplets)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "verify" in card and "proposed preference" in card
    assert json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    s.close()
