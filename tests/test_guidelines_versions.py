"""The labelling guidelines with versions: the store's table (both backends), the migration
of a store that kept them as a setting, the version each label records, the notice on the
label page, the Guidelines page's editor and `mmrb guidelines`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import update

from annotate.guidelines import changed_since_last_label, seed_from_file, seed_once
from curate.cli import main
from curate.model import Label
from curate.store import Store
from curate.store import migrations as M
from curate.store import schema as S
from tests.support.apptest import all_text, label, sign_in
from tests.test_store import _seed


@pytest.mark.both_backends
def test_each_change_is_a_new_version_recorded_in_the_audit_trail(store):
    assert store.guidelines() is None and store.guidelines_versions() == []
    g1, new1 = store.set_guidelines("# Rules\n\nBe fair.", "lead")
    g1b, new1b = store.set_guidelines("# Rules\n\nBe fair.", "other")  # the same text adds nothing
    g2, new2 = store.set_guidelines("# Rules\n\nBe fair. Ties need a reason.", "cli:ops")
    assert (g1.version, new1, g1b.version, new1b, g2.version, new2) == (1, True, 1, False, 2, True)
    assert store.guidelines().text.endswith("Ties need a reason.") and store.guidelines(1).text == "# Rules\n\nBe fair."
    assert [(g.version, g.author) for g in store.guidelines_versions()] == [(2, "cli:ops"), (1, "lead")]
    assert store.guidelines(3) is None
    trail = store.audit(what="guidelines.set")
    assert [(e.who, e.subject, e.details["version"]) for e in trail] == [
        ("cli:ops", "version 2", 2),
        ("lead", "version 1", 1),
    ]


@pytest.mark.both_backends
def test_a_change_rolled_back_leaves_neither_a_version_nor_an_audit_entry(store):
    with pytest.raises(RuntimeError), store.transaction() as tx:
        store.set_guidelines("# Draft", "lead", conn=tx)
        raise RuntimeError("the caller's unit of work failed")
    assert store.guidelines() is None and store.audit() == []


@pytest.mark.both_backends
def test_the_app_file_seeds_version_1_only_of_a_store_without_guidelines(store, tmp_path):
    f = tmp_path / "g.md"
    f.write_text("# From the file\n", encoding="utf-8")
    assert seed_from_file(store, str(f)) is True
    assert seed_from_file(store, str(f)) is False  # once
    assert store.guidelines() is not None and store.guidelines().author == "--guidelines"
    store.set_guidelines("# Edited in the app", "lead")
    f.write_text("# The file changed\n", encoding="utf-8")
    seed_once(store, str(f))
    assert store.guidelines().text == "# Edited in the app"  # the store's versions win over the file
    assert seed_from_file(store, str(tmp_path / "missing.md")) is False


def test_a_file_is_shown_while_the_store_holds_none(sqlite_store, tmp_path):
    from annotate.guidelines import NONE, guidelines_markdown

    f = tmp_path / "g.md"
    f.write_text("# File only", encoding="utf-8")
    assert guidelines_markdown(sqlite_store, str(f)) == "# File only" and guidelines_markdown(sqlite_store) == NONE


@pytest.mark.both_backends
def test_a_store_of_version_11_gets_its_setting_as_version_1(db_url, tmp_path):
    s = Store(db_url, images=tmp_path / "im")
    _seed(s, 2)
    s.save_label(Label("p0", "ann", "correct", "incorrect", "first"))
    with s.write() as c:  # as version 11 left it: the guidelines as one setting
        c.exec_driver_sql("ALTER TABLE labels DROP COLUMN guidelines_version")
        c.exec_driver_sql("DROP TABLE guidelines")
        c.exec_driver_sql("DROP TABLE audit")
        c.execute(S.settings.insert().values(key="guidelines_md", value="# Old rules"))
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="11"))
    s.close()
    with Store(db_url, images=tmp_path / "im") as s:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION) == "12"
        g = s.guidelines()
        assert (g.version, g.text, g.author) == (1, "# Old rules", "settings")
        assert s.get_setting("guidelines_md") is None  # one source
        assert s.get_label("p0", "ann").guidelines_version is None  # made before versions were recorded
        assert s.queue_head("ann").last_label_version == 0


@pytest.mark.both_backends
def test_the_queue_head_brings_both_versions_in_one_read(store):
    _seed(store, 3)
    assert store.queue_head("ann").guidelines_version is None
    head = store.queue_head("ann")
    assert (head.assignment.pair_id, head.last_label_version) == ("p0", None)
    store.set_guidelines("# v1", "lead")
    store.save_label(Label("p0", "ann", "correct", "incorrect", "first", guidelines_version=1))
    store.set_guidelines("# v2", "lead")
    head = store.queue_head("ann")
    assert (head.assignment.pair_id, head.guidelines_version, head.last_label_version) == ("p1", 2, 1)
    assert store.get_label("p0", "ann").guidelines_version == 1
    assert store.queue_head("nobody") == store.queue_head("nobody").__class__(None, None, None)


@given(st.one_of(st.none(), st.integers(1, 50)), st.one_of(st.none(), st.integers(0, 50)))
def test_the_notice_shows_exactly_when_a_newer_version_exists_than_the_last_label_had(current, last):
    shown = changed_since_last_label(current, last)
    if current is None or last is None:
        assert not shown  # no guidelines, or nothing labelled yet: nothing changed for them
    else:
        assert shown == (current > max(last, 1))


def test_labels_record_the_version_and_the_annotator_is_told_of_a_change(sqlite_env):
    s = sqlite_env
    s.set_guidelines("# Rules v1", "lead")
    at = sign_in("alice")
    assert "guidelines changed" not in all_text(at)
    label(at, left="correct", right="incorrect", pref="left")
    assert s.get_label("p0", "alice").guidelines_version == 1
    s.set_guidelines("# Rules v2: ties need a reason", "lead")
    at.run()
    assert "The guidelines changed since your last label (now version 2)" in all_text(at)
    label(at, left="correct", right="incorrect", pref="left")
    assert s.get_label("p1", "alice").guidelines_version == 2
    assert "guidelines changed" not in all_text(at)  # read them, labelled under them: no notice


def test_the_lead_edits_the_guidelines_on_their_page(sqlite_env):
    s = sqlite_env
    at = sign_in("lead")
    at.switch_page("annotate/views/guidelines.py").run()
    assert not at.exception, at.exception
    at.text_area(key="guidelines_text").input("# New rules\n\nLook at every image.")
    next(b for b in at.button if "new version" in str(b.label)).click().run()
    assert not at.exception, at.exception
    g = s.guidelines()
    assert (g.version, g.author, g.text) == (1, "lead", "# New rules\n\nLook at every image.")
    assert "Look at every image." in all_text(at) and "Version 1, by lead" in all_text(at)
    annotator = sign_in("alice")
    annotator.switch_page("annotate/views/guidelines.py").run()
    assert not annotator.text_area and "Look at every image." in all_text(annotator)  # reads, cannot edit


def test_mmrb_guidelines_set_show_list(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    f = tmp_path / "g.md"
    f.write_text("# Rules\n", encoding="utf-8")
    assert main(["guidelines", "show", "--db", db]) == 1
    assert "no store at" in capsys.readouterr().err  # a reader: it starts no store
    Store(db).close()
    assert main(["guidelines", "show", "--db", db]) == 1
    assert "no guidelines yet" in capsys.readouterr().err
    assert main(["guidelines", "set", str(f), "--db", db]) == 0
    assert "guidelines version 1 set" in capsys.readouterr().out
    assert main(["guidelines", "set", str(f), "--db", db]) == 0
    assert "unchanged" in capsys.readouterr().out
    f.write_text("# Rules, second\n", encoding="utf-8")
    assert main(["guidelines", "set", str(f), "--db", db]) == 0
    capsys.readouterr()
    assert main(["guidelines", "show", "--db", db, "--version", "1"]) == 0
    assert capsys.readouterr().out == "# Rules\n"
    assert main(["guidelines", "list", "--db", db]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == ["2", "1"] and "cli:" in out[0]
    (tmp_path / "empty.md").write_text("  \n", encoding="utf-8")
    (tmp_path / "bin.md").write_bytes(b"\xff\xfe")
    for bad, said in (("empty.md", "empty"), ("bin.md", "not UTF-8"), ("none.md", "cannot read")):
        assert main(["guidelines", "set", str(tmp_path / bad), "--db", db]) == 1
        assert said in capsys.readouterr().err
    with Store(db) as s:
        assert s.guidelines().version == 2
