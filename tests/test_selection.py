from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image

from curate.dedup import find_duplicates
from curate.errors import MmrbError
from curate.llm import Endpoint
from curate.model import Candidate, ImageRef, Item, Pair
from curate.selection import decide, judge_outcome, select
from support.fake_openai import FakeOpenAI


def picture(seed: int, size=(64, 64), fmt="PNG") -> bytes:
    rng = np.random.default_rng(seed)
    arr = (rng.random((8, 8, 3)) * 255).astype("uint8")
    im = Image.fromarray(arr).resize(size, Image.Resampling.BILINEAR)
    buf = io.BytesIO()
    im.save(buf, fmt, **({"quality": 70} if fmt == "JPEG" else {}))
    return buf.getvalue()


def setup(store, specs):
    """specs: (item id, prompt, image seed or None, category, image size, known preference or None)."""
    items, cands, pairs, imgs = [], [], [], []
    for iid, prompt, seed, cat, size, known in specs:
        refs = ()
        if seed is not None:
            s = store.images.put(picture(seed, size, "JPEG" if size != (64, 64) else "PNG"))
            imgs.append(s)
            refs = (ImageRef(f"{iid}.png", s.sha256, "ok", s.width, s.height),)
        items.append(Item(id=iid, prompt=prompt, category=cat, images=refs))
        good, bad = f"{iid}-good", f"{iid}-bad"
        cands += [Candidate(id=good, item_id=iid, model="m1", text=f"GOOD answer for {iid}"),
                  Candidate(id=bad, item_id=iid, model="m2", text=f"poor answer for {iid}")]
        first_good = int(iid[-1]) % 2 == 0  # both sides occur
        a, b = (good, bad) if first_good else (bad, good)
        kp = None if known is None else ("first" if first_good else "second")
        pairs.append(Pair(id=f"p-{iid}", item_id=iid, first_id=a, second_id=b, origin="test", known_preference=kp))
    with store.write() as conn:
        store.add_images(imgs, conn=conn)
        store.add_items(items, conn=conn)
        store.add_candidates(cands, conn=conn)
        store.add_pairs(pairs, conn=conn)


def test_judge_outcome():
    assert judge_outcome("first", "first", "first") == "right"
    assert judge_outcome("first", "second", "second") == "wrong"
    assert judge_outcome("first", "tie", "tie") == "wrong"
    assert judge_outcome("first", "first", "second") == "inconsistent"
    assert judge_outcome("first", None, "first") == "unjudged"


def _pairs(n, cat="vqa"):
    return [Pair(id=f"p{i}", item_id=f"i{i}", first_id="a", second_id="b", origin="t", known_preference="first")
            for i in range(n)]


def test_decide_m_of_n_and_reasons():
    ps = _pairs(4)
    cat = {p.id: "vqa" for p in ps}
    right = {"forward": "first", "reverse": "first"}
    wrong = {"forward": "second", "reverse": "second"}
    flip = {"forward": "first", "reverse": "second"}
    verdicts = {
        "j1": {"p0": wrong, "p1": wrong, "p2": right, "p3": {}},
        "j2": {"p0": flip, "p1": right, "p2": right, "p3": {}},
        "j3": {"p0": right, "p1": right, "p2": right, "p3": {}},
    }
    out = {d.pair_id: d for d in decide(ps, cat, verdicts)}  # m defaults to 2 of 3
    assert out["p0"].status == "selected" and "2 of 3" in out["p0"].reason and "j1, j2" in out["p0"].reason
    assert out["p1"].status == "dropped" and "easy: 1 of 3" in out["p1"].reason
    assert out["p2"].status == "dropped"
    assert out["p3"].status == "dropped" and "3 unjudged" in out["p3"].reason
    assert out["p0"].outcomes == {"j1": "wrong", "j2": "inconsistent", "j3": "right"}
    out1 = {d.pair_id: d.status for d in decide(ps, cat, verdicts, m=1)}
    assert out1 == {"p0": "selected", "p1": "selected", "p2": "dropped", "p3": "dropped"}
    with pytest.raises(MmrbError, match="m must be between 1 and"):
        decide(ps, cat, verdicts, m=4)


def test_stratified_target_seeded():
    ps = _pairs(10)
    cat = {p.id: ("a" if i < 7 else "b") for i, p in enumerate(ps)}
    wrong = {"forward": "second", "reverse": "second"}
    verdicts = {"j": {p.id: wrong for p in ps}}
    d1 = decide(ps, cat, verdicts, target_per_category=5, seed=1)
    d2 = decide(ps, cat, verdicts, target_per_category=5, seed=1)
    assert d1 == d2
    kept = [d.pair_id for d in d1 if d.status == "selected"]
    assert len(kept) == 8  # 5 of category a, all 3 of b
    over = [d for d in d1 if d.status == "dropped"]
    assert len(over) == 2 and all("over the target of 5 for a" in d.reason for d in over)


def test_duplicates(sqlite_store):
    setup(sqlite_store, [
        ("i1", "How many cats?", 1, "vqa", (64, 64), "k"),
        ("i2", "how many cats", 1, "vqa", (48, 48), "k"),  # same picture re-encoded smaller + same prompt
        ("i3", "What colour is it?", 1, "vqa", (64, 64), "k"),  # same picture, other question
        ("i4", "How many cats?", 2, "vqa", (64, 64), "k"),  # same prompt, other picture
        ("t1", "Name a prime.", None, "vqa", None, "k"),
        ("t2", "name a prime", None, "vqa", None, "k"),
    ])
    groups = find_duplicates(sqlite_store, sqlite_store.items())
    got = {(g.kind, g.keep, g.duplicates) for g in groups}
    assert got == {("image", "i1", ("i2", "i3")), ("prompt", "i1", ("i2",)), ("prompt", "t1", ("t2",))}


# -- end to end with judges on the loopback server ----------------------------------------------
def _answers(req) -> str:
    """Three scripted judges: an oracle, a fooled one, and one that always says Answer 1."""
    text = req.prompt_text
    a1 = text.find("GOOD")
    a2 = text.rfind("poor")
    good_is_1 = a1 < a2
    if req.model == "oracle":
        return f"Overall Judgment: Answer {1 if good_is_1 else 2} is better."
    if req.model == "fooled":
        return f"Overall Judgment: Answer {2 if good_is_1 else 1} is better."
    return "Overall Judgment: Answer 1 is better."


def test_select_end_to_end(store):
    setup(store, [
        ("i1", "q1", 1, "vqa", (64, 64), "k"),
        ("i2", "q2", 3, "vqa", (64, 64), "k"),
        ("i3", "q3", 4, "reasoning", (64, 64), "k"),
        ("i4", "q4", 5, "vqa", (64, 64), None),  # no known answer
        ("i5", "q1", 1, "vqa", (64, 64), "k"),  # duplicate of i1
    ])
    with FakeOpenAI(_answers) as srv:
        judges = [Endpoint(base_url=srv.url, model=m, concurrency=4) for m in ("oracle", "fooled", "biased")]
        rep = select(store, judges, m=2, drop_duplicate_prompts=True)
        # 3 judged pairs (i5 dropped as duplicate, i4 has no answer) x 3 judges x 2 orders
        assert srv.count() == 18
        assert all(r.images and r.images[0].startswith("data:image/") for r in srv.chat_requests())
        # every pair: oracle right, fooled wrong, biased inconsistent -> hard with m=2
        assert rep.kept == 3 and rep.easy == 0 and rep.duplicates_dropped == 1 and rep.no_known_answer == 1
        assert rep.judge_outcomes == {"oracle": {"right": 3}, "fooled": {"wrong": 3}, "biased": {"inconsistent": 3}}
        p1 = store.get_pair("p-i1")
        assert p1.status == "selected" and p1.reason.startswith("select: hard: 2 of 3")
        assert p1.metadata["selection"] == {"oracle": "right", "fooled": "wrong", "biased": "inconsistent"}
        assert store.get_pair("p-i5").status == "dropped" and "duplicate prompt and image of item i1" in store.get_pair("p-i5").reason
        assert store.get_pair("p-i4").status == "candidate" and "no known answer" in store.get_pair("p-i4").reason

        # rerun with a stricter m: judge runs resume (no new requests), decisions change
        rep = select(store, judges, m=3, drop_duplicate_prompts=True)
        assert srv.count() == 18
        assert rep.kept == 0 and rep.easy == 3
        assert store.get_pair("p-i2").status == "dropped"
        assert "\n".join(rep.lines()).count("judge ") == 3


def test_select_leaves_other_stages_alone_and_needs_judges(sqlite_store):
    setup(sqlite_store, [("i1", "q", None, "vqa", None, "k"), ("i2", "q2", None, "vqa", None, "k")])
    sqlite_store.update_pair("p-i2", status="dropped", reason="length balance: x")
    wrong = {"forward": "second", "reverse": "second"}
    p1 = sqlite_store.get_pair("p-i1")
    wrong_for_p1 = {"forward": "first" if p1.known_preference == "second" else "second"}
    wrong_for_p1["reverse"] = wrong_for_p1["forward"]
    rep = select(sqlite_store, verdicts={"j": {"p-i1": wrong_for_p1, "p-i2": wrong}})
    assert rep.considered == 1 and rep.kept == 1
    assert sqlite_store.get_pair("p-i2").reason == "length balance: x"
    with pytest.raises(MmrbError, match="needs judges"):
        select(sqlite_store)


def test_cli_duplicates_only_and_missing_judges(tmp_path, capsys):
    from curate.store import Store
    from support.command_runner import run_command

    db = str(tmp_path / "s.db")
    with Store(db, images=tmp_path / "img") as s:
        setup(s, [("t1", "Name a prime.", None, "vqa", None, "k"), ("t2", "name a prime", None, "vqa", None, "k")])
    assert run_command("select", ["--db", db, "--images", str(tmp_path / "img"), "--duplicates-only"]) == 0
    out = capsys.readouterr().out
    assert "prompt: t2 duplicate t1" in out
    assert run_command("select", ["--db", db]) == 1
    assert "--judges is required" in capsys.readouterr().err
