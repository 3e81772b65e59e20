"""Annotation schemes in the store: migration 11 on both backends, a batch's scheme given by
``mmrb assign --scheme``, and a scheme changed after labels exist (compatible: kept; else
refused, or a new version with the old labels kept in the history)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from sqlalchemy import update

from curate import schemes
from curate.assign import assign
from curate.cli import main
from curate.errors import InputError, MmrbError
from curate.model import Adjudication, Gold, Label
from curate.schemes import BUILT_IN, from_table, schemes_of, to_table
from curate.store import Store
from curate.store import migrations as M
from curate.store import schema as S
from tests.test_schemes import _tables
from tests.test_store import _seed

pytestmark = pytest.mark.both_backends


def test_a_store_before_schemes_is_migrated_and_its_pairs_are_mmrb(db_url, tmp_path):
    s = Store(db_url, images=tmp_path / "im")
    _seed(s, 2)
    s.save_label(Label("p0", "ann", "correct", "incorrect", "first"))
    s.set_adjudication(Adjudication("p0", "lead", preference="first"))
    s.set_gold([Gold("p1", "import", preference="second")])
    with s.write() as c:  # as version 10 left it
        for table, column in (
            ("pairs", "scheme"),
            ("pairs", "scheme_version"),
            ("labels", "scheme_version"),
            ("adjudications", "ratings"),
            ("gold", "ratings"),
        ):
            c.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
        c.exec_driver_sql("DROP TABLE schemes")
        c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="10"))
    s.close()
    with Store(db_url, images=tmp_path / "im") as s:
        assert s.get_setting("schema_version") == str(M.SCHEMA_VERSION) == "12"
        assert {p.id: (p.scheme, p.scheme_version) for p in s.pairs()} == {"p0": (None, None), "p1": (None, None)}
        assert {pid: sc.name for pid, sc in schemes_of(s).items()} == {"p0": "mmrb", "p1": "mmrb"}
        (label,) = s.labels()
        assert (label.preference, label.correctness_first, label.scheme_version) == ("first", "correct", None)
        assert s.adjudications()["p0"].ratings == {} and s.gold()["p1"].ratings == {}
        # and the new columns take values
        s.set_gold([Gold("p1", "import", ratings={"score": 5})])
        assert s.gold()["p1"].value("score") == "5"


def test_assign_gives_the_batch_its_scheme(store):
    _seed(store, 3)
    report = assign(store, k=1, annotators=["ann"], scheme=BUILT_IN["mmrb2-pairwise"], pair_ids=["p0", "p1"])
    assert report.scheme is not None and report.scheme.given == 2
    assert "scheme mmrb2-pairwise (version 1) given to 2 pairs" in "\n".join(report.lines())
    got = {pid: sc.name for pid, sc in schemes_of(store).items()}
    assert got == {"p0": "mmrb2-pairwise", "p1": "mmrb2-pairwise", "p2": "mmrb"}
    # again: nothing to change
    again = assign(store, k=1, annotators=["ann"], scheme=BUILT_IN["mmrb2-pairwise"], pair_ids=["p0", "p1"])
    assert again.scheme is not None and again.scheme.given == 0


def _file(tmp_path: Path, name: str, extra: str = "") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        'name = "grading"\n[preference]\nrule = "field"\nfield = "better"\n'
        '[[field]]\nname = "better"\nkind = "choice"\nvalues = ["first", "tie", "second"]\nsides = true\n' + extra,
        encoding="utf-8",
    )
    return path


def test_an_added_optional_field_is_a_new_version_that_keeps_the_labels(store, tmp_path):
    _seed(store, 1)
    assign(store, k=1, annotators=["ann"], scheme=schemes.load(_file(tmp_path, "v1")))
    store.save_label(Label("p0", "ann", preference="first", scheme_version=1))
    note = '[[field]]\nname = "note"\nkind = "text"\nrequired = false\n'
    report = assign(store, k=1, annotators=["ann"], scheme=schemes.load(_file(tmp_path, "v2", note)))
    assert report.scheme is not None and (report.scheme.version, report.scheme.new_version) == (2, True)
    assert report.scheme.relabel == 0 and [lb.preference for lb in store.labels()] == ["first"]
    sc = schemes_of(store)["p0"]
    assert (sc.version, [f.name for f in sc.fields]) == (2, ["better", "note"])
    assert sorted(store.scheme_definitions()) == [("grading", 1), ("grading", 2)]


def test_an_incompatible_change_is_refused_or_relabels_with_the_old_labels_kept(store, tmp_path):
    _seed(store, 1)
    assign(store, k=1, annotators=["ann"], scheme=schemes.load(_file(tmp_path, "v1")))
    store.save_label(Label("p0", "ann", preference="first", scheme_version=1))
    required = '[[field]]\nname = "why"\nkind = "text"\n'
    changed = schemes.load(_file(tmp_path, "v2", required))
    refused = r"1 pair already labelled cannot take scheme 'grading'.*'why' is required.*--new-version.*nothing was"
    with pytest.raises(MmrbError, match=refused):
        assign(store, k=1, annotators=["ann"], scheme=changed)
    assert schemes_of(store)["p0"].version == 1 and len(store.labels()) == 1  # nothing changed
    # another scheme on labelled pairs: refused even with --new-version
    with pytest.raises(MmrbError, match="another scheme"):
        assign(store, k=1, annotators=["ann"], scheme=BUILT_IN["verify"], new_version=True)
    report = assign(store, k=1, annotators=["ann"], scheme=changed, new_version=True)
    assert report.scheme is not None and (report.scheme.version, report.scheme.relabel) == (2, 1)
    assert store.labels(status=None) == [] and store.get_assignment("p0", "ann").state == "open"
    (kept,) = store.label_history("p0")
    assert (kept.action, kept.snapshot.preference, kept.snapshot.scheme_version) == ("rescheme", "first", 1)


def test_assign_scheme_on_the_command_line(db_url, tmp_path, capsys):
    with Store(db_url, images=tmp_path / "im") as s:
        _seed(s, 2)
    assert main(["assign", "--db", db_url, "-k", "1", "--annotators", "ann", "--scheme", "aspects"]) == 0
    assert "scheme aspects (version 1) given to 2 pairs" in capsys.readouterr().out
    assert main(["assign", "--db", db_url, "-k", "1", "--scheme", "nope"]) != 0
    assert "no such scheme" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_a_built_in_read_back_from_its_table_is_the_same(name):
    assert from_table(to_table(BUILT_IN[name])) == BUILT_IN[name]


@settings(max_examples=60)
@given(_tables())
def test_a_generated_scheme_read_back_from_its_table_is_the_same(table):
    try:
        scheme = from_table(table)
    except InputError:
        return  # the generator also makes schemes the keyboard cannot serve
    assert from_table(to_table(scheme)) == scheme
    assert schemes.change_problem(scheme, scheme) is None
