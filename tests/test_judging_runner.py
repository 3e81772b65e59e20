"""The judge runner against the loopback OpenAI-compatible server: every judgment stored,
resume without resending, failures stored and retried, images and orders as shown."""

from __future__ import annotations

import pytest
from PIL import Image

from curate.errors import MmrbError
from curate.judging import BUILTIN_TEMPLATES, JudgeTask
from curate.judging.records import RunDataset
from curate.judging.runner import run_judge
from curate.judging.vlm import VLMJudge
from curate.llm import Endpoint
from tests.support.fake_openai import FakeOpenAI, Fault, faults_then

D = RunDataset(("d",))


def shown_answers(prompt: str) -> tuple[str, str]:
    a = prompt.split("[The Start of Assistant A's Answer]\n", 1)[1].split("\n[The End of Assistant A's Answer]")[0]
    b = prompt.split("[The Start of Assistant B's Answer]\n", 1)[1].split("\n[The End of Assistant B's Answer]")[0]
    return a, b


def fair_judge(req) -> str:
    """Picks whichever shown answer starts with GOOD."""
    a, _ = shown_answers(req.prompt_text)
    return "Explanation.\n[[A]]" if a.startswith("GOOD") else "Explanation.\n[[B]]"


def tasks(n: int = 4) -> list[JudgeTask]:
    # even pairs have the good response first, odd pairs second
    return [
        JudgeTask(f"p{i}", f"question {i}", *(("GOOD", "BAD") if i % 2 == 0 else ("BAD", "GOOD"))) for i in range(n)
    ]


def config(url: str, template: str = "mmrb", **kw) -> VLMJudge:
    ep = Endpoint(base_url=url, model="judge", concurrency=4, max_retries=kw.pop("max_retries", 2), backoff_base=0.01)
    return VLMJudge(endpoint=ep, template=BUILTIN_TEMPLATES[template], **kw)


@pytest.mark.both_backends
def test_every_judgment_is_stored_and_a_rerun_sends_nothing(store):
    with FakeOpenAI(fair_judge) as srv:
        cfg = config(srv.url, order="both")
        s = run_judge(store, tasks(), cfg, run_id="r1", dataset=D)
        assert (s.planned, s.sent, s.already_stored, s.outcomes) == (8, 8, 0, {"parsed": 8})
        js = {j.key: j for j in store.judgments("r1")}
        assert len(js) == 8
        # p0 = (GOOD, BAD): forward shows GOOD as A -> A -> first; reverse shows BAD as A -> B -> first
        for order in ("forward", "reverse"):
            assert js[("p0", order, 0)].verdict == "first"
            assert js[("p1", order, 0)].verdict == "second"
        fwd, rev = js[("p1", "forward", 0)], js[("p1", "reverse", 0)]
        assert shown_answers(fwd.prompt) == ("BAD", "GOOD") and shown_answers(rev.prompt) == ("GOOD", "BAD")
        assert fwd.raw == "Explanation.\n[[B]]" and rev.raw == "Explanation.\n[[A]]"
        assert fwd.outcome == "parsed" and fwd.prompt_tokens and fwd.completion_tokens
        assert srv.count() == 8 and set(srv.key_counts().values()) == {1}

        again = run_judge(store, tasks(), cfg, run_id="r1", dataset=D)
        assert (again.sent, again.already_stored) == (0, 8)
        assert srv.count() == 8


def test_resume_sends_only_what_is_not_stored(sqlite_store):
    with FakeOpenAI(fair_judge) as srv:
        cfg = config(srv.url, order="random", samples=3, seed=5)
        run_judge(sqlite_store, tasks(6)[:2], cfg, run_id="r", dataset=D)  # "crashed" after two pairs
        assert srv.count() == 6
        s = run_judge(sqlite_store, tasks(6), cfg, run_id="r", dataset=D)
        assert (s.already_stored, s.sent) == (6, 12)
        assert srv.count() == 18 and max(srv.key_counts().values()) == 1  # nothing sent twice
        js = sqlite_store.judgments("r")
        assert len(js) == 18 and all(j.verdict == ("first" if int(j.pair_id[1]) % 2 == 0 else "second") for j in js)
        # the seeded random orders: the same on a rerun, mixed across samples
        orders = {(j.pair_id, j.sample_index): j.order for j in js}
        assert set(orders.values()) == {"forward", "reverse"}


def test_failures_are_stored_as_errors_and_retried_on_resume(sqlite_store):
    bad_prompt = "question 1"
    fail_once = faults_then([Fault("500")], fair_judge, per="prompt")

    def answer(req):
        return fail_once(req) if bad_prompt in req.prompt_text else fair_judge(req)

    with FakeOpenAI(answer) as srv:
        cfg = config(srv.url, max_retries=0)
        s = run_judge(sqlite_store, tasks(), cfg, run_id="r", dataset=D)
        assert s.outcomes == {"parsed": 3, "error": 1}
        err = [j for j in sqlite_store.judgments("r") if j.outcome == "error"]
        assert len(err) == 1 and err[0].pair_id == "p1" and "HTTP 500" in err[0].error and err[0].raw is None

        kept = run_judge(sqlite_store, tasks(), cfg, run_id="r", dataset=D, retry_errors=False)
        assert kept.sent == 0
        s = run_judge(sqlite_store, tasks(), cfg, run_id="r", dataset=D)
        assert (s.sent, s.outcomes) == (1, {"parsed": 1})
        assert sqlite_store.judgment_outcomes("r") == {(f"p{i}", "forward", 0): "parsed" for i in range(4)}
        counts = srv.key_counts()
        assert counts["r|p1|forward|0"] == 2 and sum(counts.values()) == 5


def test_retries_inside_one_run(sqlite_store):
    with FakeOpenAI(faults_then([Fault("429", retry_after=0.01), Fault("500")], fair_judge)) as srv:
        s = run_judge(sqlite_store, tasks(2), config(srv.url, max_retries=3), run_id="r", dataset=D)
        assert s.outcomes == {"parsed": 2} and srv.count() == 6


def test_unparsed_and_both_are_outcomes(sqlite_store):
    answers = {"question 0": "I like both. [[A]] [[B]]", "question 1": "No verdict here."}

    def answer(req):
        for q, text in answers.items():
            if q in req.prompt_text:
                return text
        return fair_judge(req)

    with FakeOpenAI(answer) as srv:
        run_judge(sqlite_store, tasks(3), config(srv.url), run_id="r", dataset=D)
    js = {j.pair_id: j for j in sqlite_store.judgments("r")}
    assert (js["p0"].outcome, js["p0"].verdict) == ("both", None)
    assert (js["p1"].outcome, js["p1"].verdict) == ("unparsed", None)
    assert (js["p2"].outcome, js["p2"].verdict) == ("parsed", "first")


def test_another_configuration_is_refused_under_the_same_run_id(sqlite_store):
    with FakeOpenAI(fair_judge) as srv:
        run_judge(sqlite_store, tasks(1), config(srv.url), run_id="r", dataset=D)
        with pytest.raises(MmrbError, match="different configuration.*order"):
            run_judge(sqlite_store, tasks(1), config(srv.url, order="both"), run_id="r", dataset=D)
        with pytest.raises(MmrbError, match="dataset"):
            run_judge(sqlite_store, tasks(1), config(srv.url), run_id="r", dataset=RunDataset(("other",)))
        # concurrency is not part of a run's identity
        cfg = config(srv.url)
        faster = VLMJudge(endpoint=Endpoint(**{**cfg.endpoint.__dict__, "concurrency": 9}), template=cfg.template)
        assert run_judge(sqlite_store, tasks(1), faster, run_id="r", dataset=D).already_stored == 1
        # without a run id, the id is derived from the configuration and the dataset
        a = run_judge(sqlite_store, tasks(1), cfg, dataset=D).run_id
        assert a.startswith("judge-") and a == run_judge(sqlite_store, tasks(1), cfg, dataset=D).run_id
        assert a != run_judge(sqlite_store, tasks(1), config(srv.url, order="both"), dataset=D).run_id


def test_images_go_with_the_prompt_in_the_template_order(sqlite_store, tmp_path):
    img = tmp_path / "cat.png"
    Image.new("RGB", (8, 6), (200, 10, 10)).save(img)
    t = [JudgeTask("p0", "what is red?", "GOOD", "BAD", (str(img),))]
    with FakeOpenAI(fair_judge) as srv:
        run_judge(sqlite_store, t, config(srv.url), run_id="a", dataset=D)
        parts = srv.chat_requests()[0].body["messages"][0]["content"]
        assert [p["type"] for p in parts] == ["text", "image_url"]  # Multimodal RewardBench: text, then image
        assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")

        srv.reset()
        srv.answer = lambda req: "<answer>1</answer>"
        run_judge(sqlite_store, t, config(srv.url, template="r1"), run_id="b", dataset=D)
        parts = srv.chat_requests()[0].body["messages"][0]["content"]
        assert [p["type"] for p in parts] == ["image_url", "text"]  # R1-Reward: image first
        assert sqlite_store.judgments("b")[0].verdict == "first"

        gone = [JudgeTask("p0", "q", "GOOD", "BAD", (str(tmp_path / "absent.png"),))]
        with pytest.raises(MmrbError, match="1 image.*not found.*absent.png"):
            run_judge(sqlite_store, gone, config(srv.url), run_id="c", dataset=D)
        srv.reset()
        srv.answer = fair_judge
        cfg = VLMJudge(**{**config(srv.url).__dict__, "allow_missing_images": True})
        run_judge(sqlite_store, gone, cfg, run_id="c", dataset=D)
        assert isinstance(srv.chat_requests()[0].body["messages"][0]["content"], str)  # text only


def test_ratings_mode_stores_scores_in_canonical_order(sqlite_store):
    with FakeOpenAI(lambda req: "Rating A: [[8]]\nRating B: [[3]]") as srv:
        run_judge(sqlite_store, tasks(1), config(srv.url, template="ratings", order="both"), run_id="r", dataset=D)
    js = {j.order: j for j in sqlite_store.judgments("r")}
    # forward: A is the first response -> first 8, second 3; reverse: A is the second response
    assert (js["forward"].score_first, js["forward"].score_second, js["forward"].verdict) == (8, 3, "first")
    assert (js["reverse"].score_first, js["reverse"].score_second, js["reverse"].verdict) == (3, 8, "second")


def test_failed_requests_are_errors_apart_from_unparsed_and_the_run_is_incomplete(store):
    answers = {
        "question 0": "",
        "question 1": "[[A]]" + "x" * 2000,
        "question 2": Fault("500"),
        "question 3": Fault("malformed"),
        "question 4": "No verdict, sorry.",
    }

    def answer(req):
        return next((a for q, a in answers.items() if q in req.prompt_text), fair_judge(req))

    with FakeOpenAI(answer) as srv:
        cfg = VLMJudge(
            endpoint=Endpoint(
                base_url=srv.url, model="judge", name="j", max_retries=1, backoff_base=0.001, max_response_chars=1000
            ),
            template=BUILTIN_TEMPLATES["mmrb"],
        )
        s = run_judge(store, tasks(6), cfg, run_id="r", dataset=D)
        assert s.outcomes == {"error": 4, "unparsed": 1, "parsed": 1}
        assert (s.planned, s.failed, s.missing, s.complete) == (6, 4, 0, False)
        js = {j.pair_id: j for j in store.judgments("r")}
        assert js["p0"].error.startswith("empty response") and js["p1"].error.startswith("response of 2005 characters")
        assert js["p2"].error.startswith("HTTP 500") and js["p3"].error.startswith("malformed response")
        assert all(
            js[p].outcome == "error" and js[p].raw is None and js[p].verdict is None for p in ("p0", "p1", "p2", "p3")
        )
        assert (js["p4"].outcome, js["p4"].raw) == ("unparsed", "No verdict, sorry.")  # a real answer, kept
        (row,) = store.judge_runs()
        assert (row.status, row.planned, row.failed) == ("incomplete", 6, 4)
        line = s.failure_line()
        assert line.startswith(
            "judge j: 4 of 6 judgments failed after retries (1 empty response, 1 over the size limit, "
            "1 HTTP 500, 1 malformed response; e.g. "
        )
        assert "run r is stored as incomplete; rerun the same command to send only those" in line

        srv.reset()
        answers.clear()
        s = run_judge(store, tasks(6), cfg, run_id="r", dataset=D)
        assert srv.count() == 4 and s.complete and s.outcomes == {"parsed": 4}  # the unparsed one is not resent
        (row,) = store.judge_runs()
        assert (row.status, row.planned, row.failed) == ("complete", 6, 0)
        # keeping failures as they are leaves a run incomplete
        answers["question 5"] = Fault("500")
        s = run_judge(store, tasks(6), cfg, run_id="r2", dataset=D)
        s = run_judge(store, tasks(6), cfg, run_id="r2", dataset=D, retry_errors=False)
        assert s.sent == 0 and s.failed == 1 and not s.complete


@pytest.mark.both_backends
def test_a_store_from_before_run_status_is_migrated(db_url, tmp_path):
    from sqlalchemy import update

    from curate.judging.runner import ensure_run
    from curate.store import Store
    from curate.store import migrations as M
    from curate.store import schema as S

    s = Store(db_url, images=tmp_path / "im")
    ensure_run(s, "old", purpose="evaluate", judge="j", identity={"kind": "vlm"}, dataset=D)
    with s.write() as c:  # a store written by version 1: no status, planned, failed
        for col in ("status", "planned", "failed"):
            c.exec_driver_sql(f"ALTER TABLE judge_runs DROP COLUMN {col}")
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="1"))
    s.close()
    s = Store(db_url, images=tmp_path / "im")
    try:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION)
        (row,) = s.judge_runs()
        assert (row.id, row.status, row.planned, row.failed) == ("old", None, None, None)
        with FakeOpenAI(fair_judge) as srv:
            cfg = config(srv.url)
            run_judge(s, tasks(2), cfg, run_id="new", dataset=D)
        assert {(r.id, r.status, r.planned, r.failed) for r in s.judge_runs()} == {
            ("old", None, None, None),
            ("new", "complete", 2, 0),
        }
    finally:
        s.close()


@pytest.mark.both_backends
def test_judge_runs_and_judgments_through_the_store(store):
    from curate.judging.records import JudgeRun, Judgment

    ds = RunDataset(("/data/a.jsonl", "/data/b;c.jsonl"), 7)  # a ';' in a path no longer splits it
    run, new = store.add_judge_run(JudgeRun("r", "evaluate", "j", {"kind": "vlm", "seed": 1}, ds))
    assert new and (run.status, run.dataset) == ("incomplete", ds)
    again, new = store.add_judge_run(JudgeRun("r", "select", "other", {}, RunDataset()))
    assert not new and again == run == store.judge_run("r")  # the stored run is left as it was
    assert store.judge_run("none") is None
    store.add_judgments(
        "r", [Judgment("p0", "forward", 0, "first"), Judgment("p1", "reverse", 1, None, "error", error="HTTP 500")]
    )
    assert store.judgment_outcomes("r") == {("p0", "forward", 0): "parsed", ("p1", "reverse", 1): "error"}
    assert store.judgment_errors("r") == {("p1", "reverse", 1): "HTTP 500"}
    # an answer to a stored failure replaces it; a key not named in ``replace`` is only added
    store.add_judgments("r", [Judgment("p1", "reverse", 1, "second")], replace={("p1", "reverse", 1)})
    assert sorted((j.key, j.verdict, j.outcome) for j in store.judgments("r")) == [
        (("p0", "forward", 0), "first", "parsed"),
        (("p1", "reverse", 1), "second", "parsed"),
    ]
    store.set_judge_run_status("r", "complete", planned=2, failed=0)
    assert (store.judge_run("r").status, store.judge_run("r").planned, store.judge_run("r").failed) == (
        "complete",
        2,
        0,
    )
    store.set_judge_run_status("r", "incomplete")  # planned and failed stay
    assert [(r.id, r.status, r.planned) for r in store.judge_runs("evaluate")] == [("r", "incomplete", 2)]
    assert store.judge_runs("select") == []


@pytest.mark.both_backends
def test_packed_datasets_of_older_stores_are_converted(db_url, tmp_path):
    from sqlalchemy import insert, update

    from curate.judging.records import JudgeRun
    from curate.judging.runner import default_run_id
    from curate.store import Store
    from curate.store import schema as S

    s = Store(db_url, images=tmp_path / "im")
    with s.write() as c:  # runs as version 2 stored them: the dataset packed into one string
        for run_id, purpose, packed in (
            ("two", "evaluate", "/d/a.jsonl;/d/b.jsonl[:50]"),
            ("one", "evaluate", "/d/a.jsonl"),
            ("sel", "select", "select"),
            ("none", "evaluate", ""),
        ):
            c.execute(
                insert(S.judge_runs).values(
                    id=run_id, purpose=purpose, judge="j", config="{}", dataset=packed, created_at=run_id
                )
            )
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="2"))
    s.close()
    s = Store(db_url, images=tmp_path / "im")
    try:
        got = {r.id: r.dataset for r in s.judge_runs()}
        assert got == {
            "two": RunDataset(("/d/a.jsonl", "/d/b.jsonl"), 50),
            "one": RunDataset(("/d/a.jsonl",)),
            "sel": RunDataset(name="select"),
            "none": RunDataset(),
        }
        # reports and default run ids see the same dataset name as before
        assert [got[k].label for k in ("two", "one", "sel", "none")] == [
            "/d/a.jsonl;/d/b.jsonl[:50]",
            "/d/a.jsonl",
            "select",
            "",
        ]
        assert default_run_id("j", {}, got["two"]).endswith(
            "-"
            + __import__("hashlib").sha256(b'{"dataset":"/d/a.jsonl;/d/b.jsonl[:50]","identity":{}}').hexdigest()[:10]
        )
        # the same dataset on resume is the same run
        assert not s.add_judge_run(JudgeRun("two", "evaluate", "j", {}, RunDataset(("/d/a.jsonl", "/d/b.jsonl"), 50)))[
            1
        ]
    finally:
        s.close()
    Store(db_url, images=tmp_path / "im").close()  # a second open finds nothing to convert


def test_judgment_writer_commits_batches_and_replaces_failures_once(sqlite_store):
    from curate.judging.records import JudgeRun, Judgment
    from curate.judging.runner import judgment_writer

    sqlite_store.add_judge_run(JudgeRun("r", "evaluate", "j", {}, D))
    sqlite_store.add_judgments("r", [Judgment("p0", outcome="error", verdict=None, error="timeout")])
    w = judgment_writer(sqlite_store, "r", replace_keys=[("p0", "forward", 0)])
    for i in range(300):
        w.put(Judgment(f"p{i}", verdict="first"))
    w.close()
    assert w.committed == 300
    assert set(sqlite_store.judgment_outcomes("r").values()) == {"parsed"} and len(sqlite_store.judgments("r")) == 300
