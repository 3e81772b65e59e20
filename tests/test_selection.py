from __future__ import annotations

import io
import socket
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from PIL import Image

from curate.dedup import find_duplicates
from curate.errors import MmrbError
from curate.judging.templates import BUILTIN_TEMPLATES
from curate.judging.vlm import VLMJudge
from curate.llm import Endpoint
from curate.model import Candidate, ImageRef, Item, Pair
from curate.selection import (
    DEFAULT_TEMPLATE,
    FAILED,
    MISSING,
    SelectReport,
    decide,
    judge_outcome,
    proposal,
    select,
)
from tests.support.fake_openai import FakeOpenAI, Fault


def picture(seed: int, size=(64, 64), fmt="PNG") -> bytes:
    rng = np.random.default_rng(seed)
    arr = (rng.random((8, 8, 3)) * 255).astype("uint8")
    im = Image.fromarray(arr).resize(size, Image.Resampling.BILINEAR)
    buf = io.BytesIO()
    im.save(buf, fmt, **({"quality": 70} if fmt == "JPEG" else {}))
    return buf.getvalue()


def vlm(endpoints) -> list[VLMJudge]:
    """Judges as `mmrb select` reads them from a models file: both orders, its default template."""
    return [VLMJudge(ep, BUILTIN_TEMPLATES[DEFAULT_TEMPLATE], order="both") for ep in endpoints]


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
        cands += [
            Candidate(id=good, item_id=iid, model="m1", text=f"GOOD answer for {iid}"),
            Candidate(id=bad, item_id=iid, model="m2", text=f"poor answer for {iid}"),
        ]
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
    assert judge_outcome("first", None, "first") == "unparsed"  # an answer without a verdict
    assert judge_outcome("first", FAILED, "first") == "failed"  # a request that failed: no answer
    assert judge_outcome("first", None, FAILED) == "failed"
    assert judge_outcome("first", "first", MISSING) == "unjudged"


def _pairs(n, cat="vqa"):
    return [
        Pair(id=f"p{i}", item_id=f"i{i}", first_id="a", second_id="b", origin="t", known_preference="first")
        for i in range(n)
    ]


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
    rep = SelectReport()
    out = {d.pair_id: d for d in decide(ps, cat, verdicts, report=rep)}  # m defaults to 2 of 3
    assert out["p0"].status == "selected" and "2 of 3" in out["p0"].reason and "j1, j2" in out["p0"].reason
    assert out["p1"].status == "dropped" and "easy: 1 of 3" in out["p1"].reason
    assert out["p2"].status == "dropped"
    assert "p3" not in out and rep.unjudged == {"p3": {"j1": "unjudged", "j2": "unjudged", "j3": "unjudged"}}
    assert out["p0"].outcomes == {"j1": "wrong", "j2": "inconsistent", "j3": "right"}
    out1 = {d.pair_id: d.status for d in decide(ps, cat, verdicts, m=1)}
    assert out1 == {"p0": "selected", "p1": "selected", "p2": "dropped"}
    with pytest.raises(MmrbError, match="m must be between 1 and"):
        decide(ps, cat, verdicts, m=4)


RIGHT = {"forward": "first", "reverse": "first"}
WRONG = {"forward": "second", "reverse": "second"}
FLIP = {"forward": "first", "reverse": "second"}
FAIL = {"forward": FAILED, "reverse": FAILED}


def test_decide_only_from_valid_verdicts():
    ps = _pairs(6)
    cat = {p.id: "vqa" for p in ps}
    verdicts = {  # 3 judges, m = 2
        "j1": {
            "p0": FAIL,
            "p1": WRONG,
            "p2": RIGHT,
            "p3": WRONG,
            "p4": {"forward": None, "reverse": None},
            "p5": {"forward": "first", "reverse": FAILED},
        },
        "j2": {"p0": FAIL, "p1": FLIP, "p2": RIGHT, "p3": RIGHT, "p4": WRONG, "p5": RIGHT},
        "j3": {"p0": FAIL, "p1": FAIL, "p2": FAIL, "p3": FAIL, "p4": RIGHT, "p5": RIGHT},
    }
    rep = SelectReport()
    out = {d.pair_id: d for d in decide(ps, cat, verdicts, report=rep)}
    # every judge failed: not decided, listed as unjudged with why
    assert "p0" not in out and rep.unjudged["p0"] == {"j1": "failed", "j2": "failed", "j3": "failed"}
    # two valid hard verdicts make m whatever j3 would have said
    assert out["p1"].status == "selected" and out["p1"].outcomes["j3"] == "failed"
    # two valid right verdicts: even a wrong j3 could not make m
    assert out["p2"].status == "dropped" and "1 failed, which could not change that" in out["p2"].reason
    # one wrong, one right, one failed: the failed judge decides it, so nothing is decided
    assert "p3" not in out and rep.unjudged["p3"]["j3"] == "failed"
    # an answer without a verdict is not a verdict either
    assert "p4" not in out and rep.unjudged["p4"]["j1"] == "unparsed"
    # one order failed: the judge has no verdict on the pair
    assert out["p5"].status == "dropped" and rep.judge_outcomes["j1"]["failed"] == 2
    assert rep.easy == 2 and rep.kept == 1 and set(rep.unjudged) == {"p0", "p3", "p4"}
    assert "3 unjudged" in "\n".join(rep.lines()) and "unjudged p0: j1 failed, j2 failed, j3 failed" in "\n".join(
        rep.lines()
    )


def test_target_waits_for_unjudged_pairs_ranked_before():
    ps = _pairs(12)
    cat = {p.id: "vqa" for p in ps}
    full = {"j": {p.id: WRONG for p in ps}}
    ranked = [d.pair_id for d in decide(ps, cat, full) if d.status == "selected"]  # the seeded order
    assert len(ranked) == 12
    # the 3rd pair of the seeded order failed. With a target of 4: the 1st, 2nd and 4th are kept
    # whatever it turns out to be; the 5th is 4th or 5th hard depending on it, so it waits; from
    # the 6th on at least 4 hard pairs rank before: over the target either way
    partial = {"j": {**full["j"], ranked[2]: FAIL}}
    rep = SelectReport()
    out = {d.pair_id: d.status for d in decide(ps, cat, partial, target_per_category=4, report=rep)}
    assert [pid for pid in ranked if out.get(pid) == "selected"] == ranked[:2] + ranked[3:4]
    assert list(rep.held) == [ranked[4]] and set(rep.unjudged) == {ranked[2]}
    assert [pid for pid in ranked if out.get(pid) == "dropped"] == ranked[5:]


verdict_of = hs.sampled_from(["right", "wrong", "flip", "fail", "unparsed"])
CELL = {"right": RIGHT, "wrong": WRONG, "flip": FLIP, "fail": FAIL, "unparsed": {"forward": None, "reverse": None}}


@settings(max_examples=150, deadline=None)
@given(
    hs.integers(1, 3).flatmap(
        lambda n: hs.tuples(
            hs.just(n),
            hs.integers(1, n),
            hs.lists(hs.lists(verdict_of, min_size=n, max_size=n), min_size=1, max_size=5),
            hs.one_of(hs.none(), hs.integers(0, 3)),
        )
    ),
    hs.randoms(use_true_random=False),
)
def test_a_failure_never_decides_a_pair(case, rnd):
    """Whatever the failed or unparsed verdicts would have been, every decided pair gets the
    same status: the decision comes from the valid verdicts alone. Every completion of the
    missing verdicts is tried when there are at most 81, else the three uniform ones and 60
    drawn at random."""
    import itertools

    n, m, grid, target = case
    ps = _pairs(len(grid))
    cat = {p.id: "vqa" for p in ps}
    judges = [f"j{k}" for k in range(n)]
    verdicts = {j: {p.id: CELL[grid[i][k]] for i, p in enumerate(ps)} for k, j in enumerate(judges)}
    decided = {d.pair_id: d.status for d in decide(ps, cat, verdicts, m=m, target_per_category=target)}
    holes = [(i, k) for i, row in enumerate(grid) for k, v in enumerate(row) if v in ("fail", "unparsed")]
    if not holes:
        assert len(decided) == len(ps)  # nothing failed: everything is decided
    kinds = ("right", "wrong", "flip")
    if 3 ** len(holes) <= 81:
        fills = list(itertools.product(kinds, repeat=len(holes)))
    else:
        fills = [(k,) * len(holes) for k in kinds] + [tuple(rnd.choice(kinds) for _ in holes) for _ in range(60)]
    for fill in fills:
        g = [list(row) for row in grid]
        for (i, k), v in zip(holes, fill, strict=True):
            g[i][k] = v
        full = {j: {p.id: CELL[g[i][kk]] for i, p in enumerate(ps)} for kk, j in enumerate(judges)}
        complete = {d.pair_id: d.status for d in decide(ps, cat, full, m=m, target_per_category=target)}
        assert all(complete[pid] == status for pid, status in decided.items()), (fill, decided, complete)


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
    setup(
        sqlite_store,
        [
            ("i1", "How many cats?", 1, "vqa", (64, 64), "k"),
            ("i2", "how many cats", 1, "vqa", (48, 48), "k"),  # same picture re-encoded smaller + same prompt
            ("i3", "What colour is it?", 1, "vqa", (64, 64), "k"),  # same picture, other question
            ("i4", "How many cats?", 2, "vqa", (64, 64), "k"),  # same prompt, other picture
            ("t1", "Name a prime.", None, "vqa", None, "k"),
            ("t2", "name a prime", None, "vqa", None, "k"),
        ],
    )
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
    setup(
        store,
        [
            ("i1", "q1", 1, "vqa", (64, 64), "k"),
            ("i2", "q2", 3, "vqa", (64, 64), "k"),
            ("i3", "q3", 4, "reasoning", (64, 64), "k"),
            ("i4", "q4", 5, "vqa", (64, 64), None),  # no known answer
            ("i5", "q1", 1, "vqa", (64, 64), "k"),  # duplicate of i1
        ],
    )
    with FakeOpenAI(_answers) as srv:
        judges = [Endpoint(base_url=srv.url, model=m, concurrency=4) for m in ("oracle", "fooled", "biased")]
        rep = select(store, vlm(judges), m=2, drop_duplicate_prompts=True)
        # 3 judged pairs (i5 dropped as duplicate, i4 has no answer) x 3 judges x 2 orders
        assert srv.count() == 18
        assert all(r.images and r.images[0].startswith("data:image/") for r in srv.chat_requests())
        # every pair: oracle right, fooled wrong, biased inconsistent -> hard with m=2
        assert rep.kept == 3 and rep.easy == 0 and rep.duplicates_dropped == 1 and rep.no_known_answer == 1
        assert rep.judge_outcomes == {"oracle": {"right": 3}, "fooled": {"wrong": 3}, "biased": {"inconsistent": 3}}
        p1 = store.get_pair("p-i1")
        assert p1.status == "selected" and p1.reason.startswith("select: hard: 2 of 3")
        assert p1.metadata["selection"] == {"oracle": "right", "fooled": "wrong", "biased": "inconsistent"}
        assert "proposal" not in p1.metadata  # one judge for each side: the judges propose nothing
        assert (
            store.get_pair("p-i5").status == "dropped"
            and "duplicate prompt and image of item i1" in store.get_pair("p-i5").reason
        )
        assert store.get_pair("p-i4").status == "candidate" and "no known answer" in store.get_pair("p-i4").reason

        # rerun with a stricter m: judge runs resume (no new requests), decisions change
        rep = select(store, vlm(judges), m=3, drop_duplicate_prompts=True)
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
    from tests.support.command_runner import run_command

    db = str(tmp_path / "s.db")
    with Store(db, images=tmp_path / "img") as s:
        setup(s, [("t1", "Name a prime.", None, "vqa", None, "k"), ("t2", "name a prime", None, "vqa", None, "k")])
    assert run_command("select", ["--db", db, "--images", str(tmp_path / "img"), "--duplicates-only"]) == 0
    out = capsys.readouterr().out
    assert "prompt: t2 duplicate t1" in out
    assert run_command("select", ["--db", db]) == 1
    assert "--judges is required" in capsys.readouterr().err


# -- judges that fail: nothing is decided from them, a rerun resends only them -----------------
def _broken(kind: str):
    def answer(req):
        if kind == "garbage":
            return "Both answers have merits; I cannot choose."
        if kind == "empty":
            return "   "
        if kind == "huge":
            return "Overall Judgment: Answer 1 is better. " + "x" * 5000
        return Fault(kind)

    return answer


@pytest.mark.parametrize("kind", ["500", "malformed", "drop", "empty", "huge", "garbage"])
def test_failing_judges_decide_nothing_and_rerun_resends_only_them(sqlite_store, kind):
    store = sqlite_store
    setup(
        store,
        [
            ("i1", "q1", None, "vqa", None, "k"),
            ("i2", "q2", None, "vqa", None, "k"),
            ("i3", "q3", None, "reasoning", None, "k"),
        ],
    )
    store.update_pair("p-i3", status="selected", reason="select: hard: 2 of 2 judges wrong or inconsistent (x, y)")
    before = {p.id: (p.status, p.reason, p.metadata) for p in store.pairs()}
    mode = {"answer": _broken(kind)}
    with FakeOpenAI(lambda req: mode["answer"](req)) as srv:
        judges = [
            Endpoint(
                base_url=srv.url,
                model=m,
                concurrency=2,
                max_retries=1,
                backoff_base=0.001,
                timeout=5,
                max_response_chars=1000,
            )
            for m in ("oracle", "fooled")
        ]
        rep = select(store, vlm(judges), m=2)
        # no pair was dropped or kept on failures: every one is as it was, and listed as unjudged
        assert {p.id: (p.status, p.reason, p.metadata) for p in store.pairs()} == before
        assert rep.kept == rep.easy == rep.over_target == 0 and set(rep.unjudged) == {"p-i1", "p-i2", "p-i3"}
        outcome = "unparsed" if kind == "garbage" else "failed"
        assert rep.judge_outcomes == {"oracle": {outcome: 3}, "fooled": {outcome: 3}}
        if kind == "garbage":  # real answers without a verdict: nothing failed, nothing to resend
            assert rep.complete
            return
        assert not rep.complete and len(rep.incomplete) == 2
        assert "judge oracle: 6 of 6 judgments failed after retries" in rep.incomplete[0]
        assert "rerun the same command to send only those" in rep.incomplete[0]
        # a rerun after one judge's failures were fixed sends only the failed judgments
        mode["answer"] = _answers
        srv.reset()
        rep = select(store, vlm(judges), m=2)
        assert srv.count() == 12 and rep.complete and not rep.unjudged
        assert store.get_pair("p-i1").status == "dropped" and store.get_pair("p-i3").status == "dropped"
        srv.reset()
        rep = select(store, vlm(judges), m=2)
        assert srv.count() == 0 and rep.complete


def test_judges_that_refuse_every_connection_stop_the_selection_at_once(sqlite_store):
    # a server not started: the first refusals stop it, no retry waits (select waited 65 s)
    store = sqlite_store
    setup(store, [(f"i{i}", f"q{i}", None, "vqa", None, "k") for i in range(1, 7)])
    before = {p.id: (p.status, p.reason, p.metadata) for p in store.pairs()}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = f"http://127.0.0.1:{port}/v1"
    judges = [Endpoint(base_url=dead, model=m, concurrency=1, backoff_base=60) for m in ("oracle", "fooled")]
    t0 = time.perf_counter()
    with pytest.raises(
        MmrbError, match=rf"judge oracle: cannot connect to {dead} .*stopped after the first 2 requests"
    ):
        select(store, vlm(judges), m=2)
    assert time.perf_counter() - t0 < 30  # one backoff of 30-60 s would exceed it
    assert {p.id: (p.status, p.reason, p.metadata) for p in store.pairs()} == before
    # the rerun against a live server resumes: it sends every judgment, the two failed ones again
    with FakeOpenAI(_answers) as srv:
        live = [
            Endpoint(base_url=srv.url, model=m, concurrency=2, max_response_chars=1000) for m in ("oracle", "fooled")
        ]
        rep = select(store, vlm(live), m=2)
        assert rep.complete and srv.count() == 24


def test_cli_select_exits_1_on_failed_requests_and_names_them(tmp_path, capsys):
    from curate.store import Store
    from tests.support.command_runner import run_command

    db, img = str(tmp_path / "s.db"), str(tmp_path / "img")
    with Store(db, images=img) as s:
        setup(s, [("i1", "q1", None, "vqa", None, "k"), ("i2", "q2", None, "vqa", None, "k")])
    mode = {"answer": lambda req: Fault("500")}
    with FakeOpenAI(lambda req: mode["answer"](req)) as srv:
        models = tmp_path / "judges.toml"
        models.write_text(
            "".join(
                f'[[models]]\nname = "{m}"\nbase_url = "{srv.url}"\nmodel = "{m}"\n'
                "max_retries = 1\nbackoff_base = 0.001\n"
                for m in ("oracle", "fooled")
            )
        )
        assert run_command("select", ["--db", db, "--images", img, "--judges", str(models)]) == 1
        out, err = capsys.readouterr()
        assert "kept 0; dropped 0 easy" in out and "2 unjudged" in out
        assert (
            "judge oracle: 4 of 4 judgments failed after retries "
            "(4 HTTP 500; e.g. HTTP 500: server error (after 2 attempts))" in err
        )
        assert "judge fooled: 4 of 4" in err and "rerun the same command to send only those" in err
        with Store(db, images=img) as s:
            assert {p.status for p in s.pairs()} == {"candidate"}
            assert {(r.judge, r.status, r.planned, r.failed) for r in s.judge_runs("select")} == {
                ("oracle", "incomplete", 4, 4),
                ("fooled", "incomplete", 4, 4),
            }
        mode["answer"] = _answers
        assert run_command("select", ["--db", db, "--images", img, "--judges", str(models)]) == 0
        assert "dropped 2 easy" in capsys.readouterr().out
        with Store(db, images=img) as s:
            assert {r.status for r in s.judge_runs("select")} == {"complete"}


# -- the judges file: read as every judge is (curate/judging/config.py) --------------------------
def test_load_judges_reads_a_models_file_as_judges_in_both_orders(tmp_path):
    from curate.errors import InputError
    from curate.selection import load_judges

    f = tmp_path / "judges.toml"
    f.write_text(
        "[defaults]\nconcurrency = 3\n[defaults.params]\ntemperature = 0\n"
        '[[models]]\nname = "a"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\nsamples = 4\n'
        '[[models]]\nname = "b"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\ntemplate = "mmrb"\n'
    )
    a, b = load_judges(f, max_response_chars=77)
    assert isinstance(a, VLMJudge) and isinstance(b, VLMJudge)
    assert a.plan("p") == [("forward", 0), ("reverse", 0)]  # a sampling entry's samples: not a judge's
    assert (a.endpoint.concurrency, a.endpoint.max_response_chars, a.endpoint.params) == (3, 77, {"temperature": 0})
    assert (a.template.name, b.template.name) == (DEFAULT_TEMPLATE, "mmrb")
    # the identity `mmrb select` stored before judges were read this way: its runs resume
    assert {k: v for k, v in a.identity().items() if k != "template_sha256"} == {
        "kind": "vlm",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "params": {"temperature": 0},
        "template": "vlrewardbench",
        "parser": "vlrewardbench",
        "image_first": False,
        "order": "both",
        "samples": 1,
        "seed": 0,
        "max_image_side": 1024,
    }
    f.write_text('[[models]]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\nparser = "brackets"\n')
    (c,) = load_judges(f)  # its own parser, on the command's template
    assert (c.template.name, c.template.parser) == (DEFAULT_TEMPLATE, "brackets")
    f.write_text('[[models]]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\ntemprature = 0\n')
    with pytest.raises(InputError, match=r"judges.toml:1 field 'models\[0\].temprature': unknown key"):
        load_judges(f)


def test_select_refuses_a_judge_that_sees_one_order(sqlite_store):
    from curate.judging.reward_model import RewardModel

    setup(sqlite_store, [("i1", "q", None, "vqa", None, "k")])
    with pytest.raises(MmrbError, match="'rm' does not judge each pair in both orders"):
        select(sqlite_store, [RewardModel(name="rm", url="http://127.0.0.1:9/score")])
    assert sqlite_store.get_pair("p-i1").status == "candidate" and not sqlite_store.judge_runs("select")


def _both(v):
    return {"forward": v, "reverse": v}


@pytest.mark.parametrize(
    "by_judge, expected",
    [
        ({"a": _both("first"), "b": _both("first"), "c": _both("second")}, "first"),
        ({"a": _both("tie"), "b": _both("tie")}, "tie"),
        # a judge that contradicted itself, failed or did not answer proposes nothing, and the
        # others are then no majority of all the judges
        ({"a": _both("first"), "b": {"forward": "first", "reverse": "second"}, "c": _both("second")}, None),
        ({"a": _both("first"), "b": _both(FAILED), "c": _both(None)}, None),
        ({"a": _both("first"), "b": _both("first"), "c": _both(FAILED)}, "first"),  # c could not tip it
        ({"a": _both("first"), "b": {}}, None),
    ],
)
def test_the_judges_proposal_is_a_majority_of_all_judges_in_both_orders(by_judge, expected):
    assert proposal({j: {"p": v} for j, v in by_judge.items()}, "p") == expected


def test_select_keeps_the_judges_proposal_for_a_verify_scheme(sqlite_store):
    from curate.schemes import proposal_of

    setup(sqlite_store, [("i1", "q", None, "vqa", None, "k"), ("i2", "q2", None, "vqa", None, "k")])
    wrong = {
        pid: _both("second" if sqlite_store.get_pair(pid).known_preference == "first" else "first")
        for pid in ("p-i1", "p-i2")
    }
    split = {"p-i1": wrong["p-i1"], "p-i2": _both(sqlite_store.get_pair("p-i2").known_preference)}
    select(sqlite_store, verdicts={"a": wrong, "b": wrong, "c": split}, m=2)
    p1, p2 = sqlite_store.get_pair("p-i1"), sqlite_store.get_pair("p-i2")
    assert p1.status == "selected" and proposal_of(p1) == wrong["p-i1"]["forward"]  # the judges' wrong verdict
    assert proposal_of(p2) == wrong["p-i2"]["forward"]  # two of three: still their majority
    # judged again with no majority: the old proposal goes
    select(sqlite_store, verdicts={"a": wrong, "b": split, "c": {}}, m=1)
    assert proposal_of(sqlite_store.get_pair("p-i2")) is None
