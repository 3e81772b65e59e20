"""mmrb bestofn on a store: items with N candidates and references, judged by the loopback VLM
server (a judge right with probability p on each shown pair) and the loopback reward model;
every judgment stored, resumed, failures never deciding, the cost cap, the command's output."""

from __future__ import annotations

import json
import re

import pytest

from curate.errors import MmrbError
from curate.judging.config import load_judge
from curate.model import Candidate, Item
from curate.seeding import unit
from mmrb_eval import bestofn as bon
from mmrb_eval.bestofn_run import Recipe, bestofn_runs, match_id, pool, recipe, run_bestofn, stored_bestofn
from tests.support.command_runner import command, run_command
from tests.support.fake_openai import FakeOpenAI, Fault
from tests.support.fake_reward_model import RM

MARK = re.compile(r"\[c:([^\]]+)\]")


def fill(store, n_items: int, n: int = 4, share: float = 0.35) -> dict[str, bool]:
    """Items i0.. (two categories) with n candidates each, right with probability ``share``
    (seeded); a correct candidate says "good good", a wrong one "good" (the loopback reward
    model's score is the count of "good"). Returns candidate id -> correct."""
    items, cands, truth = [], [], {}
    for k in range(n_items):
        iid, ref = f"i{k}", str(10 + k)
        items.append(Item(iid, f"What is {ref} plus zero?", "math" if k % 2 else "count", reference=ref))
        for j in range(n):
            cid = f"{iid}-c{j}"
            right = unit("fill", iid, j) < share
            truth[cid] = right
            text = f"[c:{cid}] {'good good' if right else 'good'}. The answer is {ref if right else int(ref) + 1}."
            cands.append(Candidate(cid, iid, f"m{j}", text))
    with store.write() as conn:
        store.add_items(items, conn=conn)
        store.add_candidates(cands, conn=conn)
    return truth


def p_judge(truth: dict[str, bool], p: float, fail: frozenset[str] = frozenset()):
    """The loopback VLM's answers: right with probability p (seeded on what it is shown) when
    the two differ in correctness, a seeded coin between two alike; a 500 for a match in ``fail``."""

    def answer(req):
        a, b = MARK.findall(req.prompt_text)
        if {a, b} <= fail:
            return Fault("500")
        u = unit("p judge", p, a, b)
        better_a = truth[a] if truth[a] != truth[b] else u < 0.5
        right = u < p if truth[a] != truth[b] else True
        return f"Overall Judgment: Answer {1 if better_a == right else 2} is better."

    return answer


def judge_file(tmp_path, url: str, name: str = "vlm") -> str:
    f = tmp_path / f"{name}.toml"
    f.write_text(
        f'name = "{name}"\nbase_url = "{url}"\nmodel = "m"\ntemplate = "vlrewardbench"\nconcurrency = 8\n'
        "max_retries = 0\n"
    )
    return str(f)


def vlm(tmp_path, url: str, name: str = "vlm"):
    return load_judge(judge_file(tmp_path, url, name), order="both", samples=1)


def rm_judge(tmp_path, url: str):
    """The loopback reward model (tests/support/fake_reward_model.py) as a judge file reads it."""
    f = tmp_path / "rm.toml"
    f.write_text(
        f'kind = "reward_model"\nname = "rm"\nurl = "{url}"\nresponse_field = "out.rewards.0"\n'
        '[request]\ninput = {text = "{response}"}\n'
    )
    return load_judge(str(f))


def oracle(truth: dict[str, bool], n_items: int, n: int = 4) -> float:
    return sum(any(truth[f"i{k}-c{j}"] for j in range(n)) for k in range(n_items)) / n_items


def test_pool_reads_items_with_references_and_leaves_the_rest_out(store):
    fill(store, 3)
    with store.write() as conn:
        store.add_items([Item("noref", "q", "count"), Item("one", "q", "count", reference="1")], conn=conn)
        store.add_candidates(
            [Candidate("noref-a", "noref", "m1", "a"), Candidate("noref-b", "noref", "m2", "b")]
            + [Candidate("one-a", "one", "m", "1")],
            conn=conn,
        )
    got = pool(store)
    assert [it.id for it in got.items] == ["i0", "i1", "i2"] and all(it.n == 4 for it in got.items)
    no_ref = "no reference answer and a candidate without expert labels"  # nor labels to decide it
    assert got.left_out == {"fewer than 2 candidates": 1, no_ref: 1}
    assert {r.answer for r in got.items[0].responses} <= {"10", "11"}  # what was read, for the majority
    assert [it.id for it in pool(store, category="math").items] == ["i1"]


def test_knockout_with_a_perfect_judge_is_the_oracle_and_resumes_without_asking_again(store, tmp_path):
    truth = fill(store, 12)
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        judge = vlm(tmp_path, srv.url)
        items = pool(store)
        run = run_bestofn(store, items, judge, method="knockout", resamples=0)
        assert run.complete and run.passes == 2  # N = 4: two rounds
        assert srv.count() == run.cost == 12 * 2 * 3 == run.summary.sent
        assert run.report.overall.accuracy.value == pytest.approx(oracle(truth, 12))
        again = run_bestofn(store, pool(store), judge, method="knockout", resamples=0)
        assert srv.count() == 72 and again.summary.sent == 0 and again.summary.already_stored == 72
        assert again.report == run.report
        # a round robin shares the knockout's matches: only the other ones are asked
        rr = run_bestofn(store, items, judge, method="round-robin", resamples=0)
        assert rr.run_id == run.run_id and rr.summary.sent == 12 * 12 - 72 and srv.count() == 12 * 12
        assert rr.report.overall.accuracy.value == pytest.approx(oracle(truth, 12))
    stored = store.judgments(run.run_id)
    assert {j.pair_id for j in stored} == {
        match_id(it.id, a, b) for it in items.items for a in it.ids for b in it.ids if a < b
    }
    assert store.judge_runs("bestofn")[0].status == "complete" and not store.judge_runs("evaluate")


def test_a_knockout_s_progress_counts_on_over_its_rounds_to_every_judgment_sent(store, tmp_path):
    truth = fill(store, 3)
    calls: list[tuple[int, int]] = []
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        run = run_bestofn(
            store,
            pool(store),
            vlm(tmp_path, srv.url),
            method="knockout",
            resamples=0,
            progress=lambda d, t: calls.append((d, t)),
        )
    assert run.passes == 2 and run.summary.sent == 3 * 2 * 3
    done = [d for d, _ in calls]
    assert done == sorted(done) and calls[-1] == (run.summary.sent, run.summary.sent)  # never back to 0
    assert all(d <= t for d, t in calls)


def test_a_failed_match_makes_its_item_incomplete_and_a_rerun_resends_it(store, tmp_path):
    truth = fill(store, 6)
    items = pool(store)
    doomed = items.items[0]
    answers = {"now": p_judge(truth, 1.0, fail=frozenset(doomed.ids))}  # every match of the first item fails
    with FakeOpenAI(lambda req: answers["now"](req)) as srv:
        judge = vlm(tmp_path, srv.url)
        run = run_bestofn(store, items, judge, method="knockout", resamples=0)
        assert srv.count() == 5 * 6 + 2 * 2
        assert not run.complete and run.summary.failed > 0
        assert run.report.overall.incomplete == 1 and run.report.overall.complete == 5
        (p,) = [p for p in run.picks if p.item == doomed.id]
        assert p.outcome == "incomplete" and "failed" in (p.failed or "")
        assert store.judge_runs("bestofn")[0].status == "incomplete"
        answers["now"] = p_judge(truth, 1.0)
        srv.reset()
        again = run_bestofn(store, items, judge, method="knockout", resamples=0)
        # only the failed first-round matches of that item, then its final
        assert again.complete and srv.count() == again.summary.sent == 2 * 3
    assert again.report.overall.incomplete == 0
    assert again.report.overall.accuracy.value == pytest.approx(oracle(truth, 6))


def test_max_judgments_judges_a_prefix_and_a_rerun_goes_on(store, tmp_path):
    truth = fill(store, 5)
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        judge = vlm(tmp_path, srv.url)
        capped = run_bestofn(store, pool(store), judge, method="knockout", max_judgments=13, resamples=0)
        assert srv.count() == 12 and capped.over_budget == 3 and not capped.complete
        assert capped.report.overall.complete == 2 and capped.report.overall.incomplete == 3
        assert "over --max-judgments" in capped.lines()[0]
        rest = run_bestofn(store, pool(store), judge, method="knockout", resamples=0)
        assert rest.complete and rest.summary.sent == 18 and srv.count() == 30


def test_reward_model_scores_each_response_once_and_picks_the_top(store, tmp_path):
    truth = fill(store, 7, n=5)
    rm = RM(field="out")
    try:
        judge = rm_judge(tmp_path, rm.url)
        with pytest.raises(MmrbError, match="is a reward model: use --method reward"):
            run_bestofn(store, pool(store), judge, method="knockout")
        run = run_bestofn(store, pool(store), judge, method="reward", resamples=0)
        # N = 5: three requests of two scores each (the odd one out scored with itself)
        assert len(rm.bodies) == 7 * 6 and run.summary.sent == 7 * 3 and run.complete
        assert run.report.overall.accuracy.value == pytest.approx(oracle(truth, 7, n=5))
        assert sum(p.tied_top > 1 for p in run.picks) > 0  # two correct responses score alike: seeded
    finally:
        rm.close()


def test_a_pairwise_judge_must_not_pick_by_scores(store, tmp_path):
    fill(store, 2)
    with pytest.raises(MmrbError, match="is not a reward model"):
        run_bestofn(store, pool(store), vlm(tmp_path, "http://127.0.0.1:9/v1"), method="reward")
    one_order = load_judge(judge_file(tmp_path, "http://127.0.0.1:9/v1"))
    with pytest.raises(MmrbError, match="both orders"):
        run_bestofn(store, pool(store), one_order, method="knockout")


@pytest.mark.parametrize("method", ["knockout", "round-robin"])
def test_accuracy_rises_with_the_loopback_judges_p(store, tmp_path, method):
    truth = fill(store, 60)
    accs = {}
    for p in (0.5, 0.75, 1.0):
        with FakeOpenAI(p_judge(truth, p)) as srv:
            run = run_bestofn(store, pool(store), vlm(tmp_path, srv.url, f"p{p}"), method=method, resamples=0)
        assert run.complete
        accs[p] = run.report.overall.accuracy.value
    assert accs[0.5] < accs[0.75] < accs[1.0] == pytest.approx(oracle(truth, 60))
    # the random baseline is the same for every judge: only the judges differ
    assert run.report.overall.baselines["random"].value == pytest.approx(sum(truth.values()) / len(truth))


def test_command_prints_the_cost_first_and_the_report(store, db_url, tmp_path, capsys):
    truth = fill(store, 12)
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        argv = ["--judge", judge_file(tmp_path, srv.url), "--db", db_url, "--images", str(tmp_path / "images")]
        rc = run_command("bestofn", [*argv, "--resamples", "50"], package="mmrb_eval.commands")
        out, err = capsys.readouterr()
        assert rc == 0 and "vlm, knockout, seed 0" in out and "Best-of-N accuracy" in out and "oracle" in out
        assert err.startswith("knockout: 72 judgments for 12 items (12 items of N=4: 6 each)\n")
        rc, out = command("bestofn", [*argv, "--json", "--method", "round-robin", "--curve"], capsys)
    rep = json.loads(out)
    assert rc == 0 and rep["method"] == "round-robin" and rep["complete"]
    assert rep["overall"]["items"] == 12 and [g["group"] for g in rep["categories"]] == ["count", "math"]
    assert rep["overall"]["accuracy"]["value"] == pytest.approx(oracle(truth, 12))
    assert rep["overall"]["accuracy"]["ci"] is not None and rep["run_info"]["already_stored"] == 72
    assert [c["n"] for c in rep["curve"]] == [2, 4] and rep["curve"][1]["overall"] == rep["overall"]


def test_command_states_the_cost_before_it_starts_and_exits_1_when_incomplete(store, db_url, tmp_path, capsys):
    fill(store, 3)
    with FakeOpenAI(lambda req: Fault("500")) as srv:
        argv = ["--judge", judge_file(tmp_path, srv.url), "--db", db_url, "--images", str(tmp_path / "images")]
        argv += ["--resamples", "0", "--method", "round-robin"]
        rc = run_command("bestofn", argv, package="mmrb_eval.commands")
    out, err = capsys.readouterr()
    assert rc == 1 and out.startswith("run ") and "INCOMPLETE" in out
    assert err.startswith("round-robin: 36 judgments for 3 items (3 items of N=4: 12 each)")
    assert "rerun the same command" in err


def test_failure_is_never_a_decision_in_the_report(store, tmp_path):
    truth = fill(store, 4)
    with FakeOpenAI(lambda req: Fault("500")) as srv:
        run = run_bestofn(store, pool(store), vlm(tmp_path, srv.url), method="round-robin", resamples=0)
        assert srv.count() == 4 * 12
    o = run.report.overall
    assert o.complete == 0 and o.incomplete == 4 and o.accuracy.value is None
    assert all(p.outcome == "incomplete" for p in run.picks) and bon.OVERALL == o.group
    assert truth  # the items existed: nothing was decided from the failures


@pytest.mark.parametrize("method", ["round-robin", "knockout"])
def test_curve_against_n_with_a_perfect_judge_follows_the_oracle(store, tmp_path, method):
    truth = fill(store, 10, n=8, share=0.2)
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        plain = run_bestofn(store, pool(store), vlm(tmp_path, srv.url, "plain"), method=method, resamples=0)
        alone = srv.count()
        run = run_bestofn(store, pool(store), vlm(tmp_path, srv.url), method=method, resamples=0, curve=True)
        extra = srv.count() - 2 * alone
    assert [n for n, _ in run.curve] == [2, 4, 8] and run.complete
    oracles = [r.overall.baselines["oracle"].value for _, r in run.curve]
    assert oracles == sorted(oracles)  # nested subsets: an item's oracle only turns correct as N grows
    for _, r in run.curve:
        assert r.overall.complete == 10 and r.overall.accuracy.value == r.overall.baselines["oracle"].value
    assert run.curve[-1][1].overall == plain.report.overall == run.report.overall
    if method == "round-robin":
        assert extra == 0  # a subsample's matches are among the whole item's
    else:
        bound = 10 * (bon.judgments_per_item("knockout", 2) + bon.judgments_per_item("knockout", 4))
        assert 0 < extra <= bound


def test_reward_model_curve_asks_nothing_more(store, tmp_path):
    truth = fill(store, 6, n=5)
    rm = RM(field="out")
    try:
        run = run_bestofn(store, pool(store), rm_judge(tmp_path, rm.url), method="reward", resamples=0, curve=True)
        assert len(rm.bodies) == 6 * 6 and [n for n, _ in run.curve] == [2, 4, 5]
        for _, r in run.curve:
            assert r.overall.accuracy.value == r.overall.baselines["oracle"].value
    finally:
        rm.close()
    assert truth


def test_unreadable_answers_split_matches_and_decide_nothing_by_themselves(store, tmp_path):
    fill(store, 4)
    with FakeOpenAI(lambda req: "I cannot tell.") as srv:
        run = run_bestofn(store, pool(store), vlm(tmp_path, srv.url), method="knockout", resamples=0)
    # an answer without a verdict is an answer (the run is complete), and every match is split:
    # each pick is the seeded coin's, as with a judge that always says tie
    assert run.complete and all(p.split_matches == 3 for p in run.picks)
    items = {it.id: it for it in pool(store).items}
    assert [p.chosen for p in run.picks] == [
        bon.knockout(items[p.item], lambda i, a, b: "tie").chosen for p in run.picks
    ]


def test_judgments_that_are_not_stored_stop_the_run_instead_of_asking_forever(store, tmp_path, monkeypatch):
    truth = fill(store, 2)
    monkeypatch.setattr(store, "add_judgments", lambda run_id, judgments, **kw: 0)  # a store that keeps nothing
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        with pytest.raises(MmrbError, match="8 judgments sent in this run were not stored"):
            run_bestofn(store, pool(store), vlm(tmp_path, srv.url), method="knockout", resamples=0)
        assert srv.count() == 8  # the first round once


def test_a_match_stored_in_one_order_asks_only_the_other_on_resume(store, tmp_path):
    # a run stopped (or failing) between a match's two orders: the stored order is kept, never
    # asked again (the store refuses a second answer to one key)
    truth = fill(store, 3)
    healthy = p_judge(truth, 1.0)

    def reverse_fails(req):
        a, b = MARK.findall(req.prompt_text)
        return Fault("500") if a > b else healthy(req)  # the reverse order shows the higher id as A

    answers = {"now": reverse_fails}
    with FakeOpenAI(lambda req: answers["now"](req)) as srv:
        judge = vlm(tmp_path, srv.url)
        first = run_bestofn(store, pool(store), judge, method="knockout", resamples=0)
        assert srv.count() == 3 * 4 and first.report.overall.incomplete == 3  # round 1, each match split by a failure
        answers["now"] = healthy
        srv.reset()
        again = run_bestofn(store, pool(store), judge, method="knockout", resamples=0)
        # round 1's reverse orders only, then the finals in both
        assert again.complete and srv.count() == again.summary.sent == 3 * (2 + 2)
        assert all(MARK.findall(r.prompt_text)[0] > MARK.findall(r.prompt_text)[1] for r in srv.chat_requests()[:6])
    assert again.report.overall.accuracy.value == pytest.approx(oracle(truth, 3))


# -- read back offline ---------------------------------------------------------------------------
def test_a_stored_run_reads_back_offline_with_the_method_and_seed_it_was_made_with(store, tmp_path):
    truth = fill(store, 12)
    with FakeOpenAI(p_judge(truth, 0.7)) as srv:
        judge = vlm(tmp_path, srv.url)
        ko = run_bestofn(store, pool(store), judge, method="knockout", seed=3, resamples=50)
        assert stored_bestofn(store, ko.run_id, resamples=50).report == ko.report
        rr = run_bestofn(store, pool(store), judge, method="round-robin", seed=5, resamples=50)
        sent = srv.count()
    back = stored_bestofn(store, rr.run_id, resamples=50)  # the server is gone: nothing can be sent
    assert back.method == "round-robin" and back.report == rr.report and back.complete
    assert back.summary.sent == 0 and back.summary.planned == back.summary.already_stored == 12 * 12
    assert [p.chosen for p in back.picks] == [p.chosen for p in rr.picks]
    # --method and --seed override what was recorded: the knockout's picks again, from the same store
    again = stored_bestofn(store, rr.run_id, method="knockout", seed=3, resamples=50)
    assert again.report == ko.report and sent == 12 * 12
    assert [r.id for r in bestofn_runs(store)] == [ko.run_id]
    assert recipe(store, bestofn_runs(store)[0]) == Recipe("round-robin", 5, None)


def test_reading_back_a_run_with_failed_or_unsent_judgments_is_incomplete_never_a_decision(store, tmp_path):
    truth = fill(store, 6)
    items = pool(store)
    doomed = items.items[0]
    with FakeOpenAI(p_judge(truth, 1.0, fail=frozenset(doomed.ids))) as srv:
        run = run_bestofn(store, items, vlm(tmp_path, srv.url), method="knockout", max_judgments=25, resamples=0)
    back = stored_bestofn(store, run.run_id, resamples=0)
    assert not back.complete and back.summary.failed > 0 and back.summary.missing > 0
    outcomes = {p.item: p.outcome for p in back.picks}
    assert outcomes[doomed.id] == "incomplete"
    # 25 judgments cover the first four items (6 each): the fifth and sixth were never sent
    assert [outcomes[it.id] for it in items.items[4:]] == ["incomplete", "incomplete"]
    assert back.report.overall.complete == 3 == run.report.overall.complete
    assert "never sent" in back.lines()[0] and "failed" in back.lines()[0]


def test_reading_back_a_reward_run_and_refusals(store, tmp_path):
    truth = fill(store, 5, n=3)
    rm = RM(field="out")
    try:
        run = run_bestofn(store, pool(store), rm_judge(tmp_path, rm.url), method="reward", resamples=0)
    finally:
        rm.close()
    back = stored_bestofn(store, run.run_id, resamples=0)
    assert back.method == "reward" and back.report == run.report and back.complete
    with pytest.raises(MmrbError, match="holds a reward model's scores: it cannot be read back as knockout"):
        stored_bestofn(store, run.run_id, method="knockout")
    with pytest.raises(MmrbError, match=f"no Best-of-N run 'nope' in the store .*{run.run_id}"):
        stored_bestofn(store, "nope")
    assert truth
