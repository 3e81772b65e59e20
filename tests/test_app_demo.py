"""`streamlit run app.py` with no arguments opens on the bundled sample, built by the real
pipeline (ingest, pairing, assignment) with the documented demo accounts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.apptest import app_test

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def sample_db(tmp_path, monkeypatch):
    from annotate import demo

    assert (demo.SAMPLE / "items.jsonl").exists(), "the bundled sample is part of the repository"
    db = tmp_path / "sample.db"
    monkeypatch.setattr(demo, "DEFAULT_DB", db)
    monkeypatch.delenv("MMRB_DB", raising=False)
    monkeypatch.delenv("MMRB_IMAGES", raising=False)
    return db


def test_sample_is_built_once_with_demo_accounts(sample_db, capsys):
    from annotate import auth, demo
    from curate.store import Store

    info = demo.ensure_sample()
    assert "lead / lead-demo / admin" in capsys.readouterr().err
    mtime = sample_db.stat().st_mtime_ns
    assert demo.ensure_sample() == info and sample_db.stat().st_mtime_ns == mtime  # not rebuilt
    with Store(info.db, info.images) as s:
        assert s.counts().items >= 24 and s.counts().pairs > 0
        for name, password, role in demo.ACCOUNTS:
            who = auth.authenticate(s, name, password)
            assert who is not None and who.role == role
            if role == "annotator":
                done, assigned = s.progress(name)
                assert assigned > 0 and done == 0
        assert s.guidelines() is not None and s.guidelines().version == 1
        # every pair is labelled by K annotators, on seeded sides
        per_pair = {}
        for a in s.assignments():
            per_pair.setdefault(a.pair_id, set()).add(a.left)
        assert len(per_pair) == s.counts().pairs


def test_app_opens_on_the_sample_without_arguments(sample_db):
    from annotate import ui

    at = app_test(timeout=120).run()
    try:
        assert not at.exception, at.exception
        assert any("Demo accounts" in i.value and "alice-demo" in i.value for i in at.info)
        at.text_input(key="signin_name").input("alice")
        at.text_input(key="signin_password").input("alice-demo")
        at.button[0].click().run()
        assert not at.exception, at.exception
        assert at.radio and any("of" in p.proto.text and "labelled" in p.proto.text for p in at.get("progress"))
        # her first pair has image responses: MMRB2's six-point scale, not the default form
        assert [r.key.split("-")[1] for r in at.radio if r.key.startswith("qs-")] == ["score"]
        assert any("Guidelines" in e.proto.label for e in at.get("expander"))
    finally:
        ui.close_stores()


def test_pairs_with_image_responses_come_first_in_every_demo_queue(sample_db):
    from annotate import demo
    from curate.store import Store

    info = demo.ensure_sample()
    with Store(info.db, info.images) as s:
        with_images = {c.item_id for c in s.candidates() if c.images}
        assert with_images == {"t2i-01", "edit-01", "il-01"}
        image_pairs = {p.id for p in s.pairs() if p.item_id in with_images}
        assert len(image_pairs) == len(with_images) * demo.CAP
        assigned = {a.pair_id for a in s.assignments()}
        assert image_pairs <= assigned
        for name, _, role in demo.ACCOUNTS:
            if role != "annotator":
                continue
            queue = [a.pair_id for a in sorted(s.assignments(annotator=name), key=lambda a: a.seq)]
            mine = [pid for pid in queue if pid in image_pairs]
            assert mine and queue[: len(mine)] == mine, name  # the first pairs she sees
        per_pair = {}
        for a in s.assignments():
            per_pair[a.pair_id] = per_pair.get(a.pair_id, 0) + 1
        assert {per_pair[p] for p in image_pairs} == {demo.K}
        # labelled on MMRB2's six-point scale; every other pair on the default form
        schemes = s.pair_schemes()
        assert {schemes[p] for p in image_pairs} == {("mmrb2-pairwise", 1)}
        assert {v for p, v in schemes.items() if p not in image_pairs} == {(None, None)}


def test_the_demo_holds_the_example_labels_and_its_queues_stay_open(sample_db, tmp_path):
    """The lead's pages have labels to show on first start: the example labels, three to every
    pair on its own scheme, enough for the sample's rules to build a benchmark; alice, bob and
    carol still have every pair of their queues to label, K to a pair as the rules ask."""
    from annotate import demo, example_labels
    from curate.agreement import agreement_report, from_store
    from curate.benchmark import build, load_rules
    from curate.store import Store

    info = demo.ensure_sample()
    rules = load_rules(demo.SAMPLE / "rules.toml")
    assert demo.K == rules.min_labels
    with Store(info.db, info.images) as s:
        labels = s.labels()
        assert {lb.source for lb in labels} == {example_labels.SOURCE}
        per_pair: dict[str, set[str]] = {}
        for lb in labels:
            per_pair.setdefault(lb.pair_id, set()).add(lb.annotator)
        assert len(per_pair) == s.counts().pairs and set(map(frozenset, per_pair.values())) == {
            frozenset(example_labels.ANNOTATORS)
        }
        schemes = s.pair_schemes()
        on_scale = [lb for lb in labels if schemes[lb.pair_id][0] == demo.IMAGE_SCHEME]
        assert on_scale and all(1 <= lb.ratings["score"] <= 6 for lb in on_scale)
        for name, _, role in demo.ACCOUNTS:  # the demo's own queues: nothing done yet
            if role == "annotator":
                assert s.progress(name) == (0, s.counts().pairs)
        accounts = {a.name: a for a in s.annotators()}
        assert all(accounts[n].password_hash is None for n in example_labels.ANNOTATORS)  # no sign-in
        report = agreement_report(from_store(s))
        assert report.fields["preference"].alpha is not None
        res = build(s, rules, tmp_path / "bench")
    assert len(res.triplets) >= 20


def test_a_sample_store_from_an_older_sample_is_rebuilt(sample_db, capsys, monkeypatch, tmp_path):
    from annotate import demo
    from curate.model import Label
    from curate.store import Store

    old = tmp_path / "old-sample"
    old.mkdir()
    rows = (demo.SAMPLE / "items.jsonl").read_text().splitlines()
    (old / "items.jsonl").write_text("\n".join(r for r in rows if '"t2i-01"' not in r) + "\n")
    monkeypatch.setattr(demo, "SAMPLE", old)
    demo.ensure_sample()
    with Store(str(sample_db), f"{sample_db}.images") as s:
        assert s.get_item("t2i-01") is None
        pid = s.assignments(annotator="alice")[0].pair_id
        s.save_label(Label(pid, "alice", preference="first"))
    monkeypatch.setattr(demo, "SAMPLE", demo.ROOT / "data" / "sample")
    capsys.readouterr()
    info = demo.ensure_sample()
    assert "the sample has changed" in capsys.readouterr().err
    with Store(info.db, info.images) as s:
        assert s.get_item("t2i-01") is not None and {lb.source for lb in s.labels()} == {"example"}
        assert s.get_setting(demo.VERSION_KEY) == demo.sample_version()
    previous = sample_db.with_name("sample.db.previous")
    with Store(str(previous), info.images) as s:  # kept, with its labels (alice's among the examples)
        assert [lb.pair_id for lb in s.labels() if lb.annotator == "alice"] == [pid]
    mtime = sample_db.stat().st_mtime_ns
    demo.ensure_sample()
    assert sample_db.stat().st_mtime_ns == mtime  # up to date: not rebuilt again


def test_a_sample_store_without_its_version_is_rebuilt(sample_db, capsys):
    """Stores built before the demo recorded its sample's version are rebuilt once."""
    from annotate import demo
    from curate.store import Store

    demo.ensure_sample()
    with Store(str(sample_db), f"{sample_db}.images") as s:
        s.set_setting(demo.VERSION_KEY, "")
    capsys.readouterr()
    demo.ensure_sample()
    assert "the sample has changed" in capsys.readouterr().err
    assert sample_db.with_name("sample.db.previous").exists()
