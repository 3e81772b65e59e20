"""`streamlit run app.py` with no arguments opens on the bundled sample, built by the real
pipeline (ingest, pairing, assignment) with the documented demo accounts."""

from __future__ import annotations

from pathlib import Path

import pytest

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
        assert s.get_setting("guidelines_md")
        # every pair is labelled by K annotators, on seeded sides
        per_pair = {}
        for a in s.assignments():
            per_pair.setdefault(a.pair_id, set()).add(a.left)
        assert len(per_pair) == s.counts().pairs


def test_app_opens_on_the_sample_without_arguments(sample_db):
    from streamlit.testing.v1 import AppTest

    from annotate import ui

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    try:
        assert not at.exception, at.exception
        assert any("Demo accounts" in i.value and "alice-demo" in i.value for i in at.info)
        at.text_input(key="signin_name").input("alice")
        at.text_input(key="signin_password").input("alice-demo")
        at.button[0].click().run()
        assert not at.exception, at.exception
        assert at.radio and any("of" in p.proto.text and "labelled" in p.proto.text for p in at.get("progress"))
        assert any("Guidelines" in e.proto.label for e in at.get("expander"))
    finally:
        ui.close_stores()
