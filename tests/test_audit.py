"""The audit trail: every change the brief lists is recorded (who, what, subject, details, UTC
time) in the transaction of the change; the filters; `mmrb audit`; and the Annotators page's
role change, sign-out everywhere and trail (AppTest)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest

from annotate import auth, sessions
from annotate.adjudication import record_decision
from curate.assign import assign
from curate.cli import main
from curate.errors import MmrbError
from curate.model import AUDIT_ACTIONS, Adjudication, Annotator, Assignment, AuditEntry, Label
from curate.quality import gold as G
from curate.quality import qualification as Q
from curate.quality.reliability import store_report
from curate.store import Store
from tests.support.apptest import all_text, sign_in
from tests.support.pairs import seed

PASSWORD = "a-long-enough-password"


def trail(store: Store, **kw) -> list[tuple[str, str, str]]:
    """(who, what, subject) oldest first."""
    return [(e.who, e.what, e.subject) for e in reversed(store.audit(**kw))]


@pytest.mark.both_backends
def test_account_changes_are_recorded_with_who_and_when(store):
    before = datetime.now(UTC).isoformat()
    auth.add_account(store, "ann", PASSWORD, by="lead")
    sessions.start(store, store.get_annotator("ann"))
    auth.set_role(store, "ann", "admin", by="lead")
    sessions.start(store, store.get_annotator("ann"))
    assert auth.reset_password(store, "ann", PASSWORD + "2", by="lead") == 1
    auth.set_active(store, "ann", False, by="lead")
    auth.set_active(store, "ann", True, by="cli:ops")
    sessions.start(store, store.get_annotator("ann"))
    assert auth.sign_out_everywhere(store, "ann", by="lead") == 1
    assert trail(store) == [
        ("lead", "account.add", "ann"),
        ("lead", "account.role", "ann"),
        ("lead", "account.password", "ann"),
        ("lead", "account.disable", "ann"),
        ("cli:ops", "account.enable", "ann"),
        ("lead", "account.signout", "ann"),
    ]
    entries = {e.what: e for e in store.audit()}
    assert dict(entries["account.role"].details) == {"role": "admin", "was": "annotator", "sessions_ended": 1}
    assert all(before <= e.at <= datetime.now(UTC).isoformat() and e.at.endswith("+00:00") for e in store.audit())
    assert trail(store, who="cli:ops") == [("cli:ops", "account.enable", "ann")]
    assert [w for _, w, _ in trail(store, what="account")] == [w for _, w, _ in trail(store)]
    assert trail(store, what="account.role") == [("lead", "account.role", "ann")]
    assert trail(store, since="2999-01-01") == [] and len(store.audit(limit=2)) == 2
    assert store.audit_actors() == ["cli:ops", "lead"]


@pytest.mark.both_backends
def test_a_refused_change_records_nothing_and_a_failed_transaction_keeps_no_entry(store):
    auth.add_account(store, "lead", PASSWORD, "admin", by="system")
    with pytest.raises(MmrbError):
        auth.set_role(store, "nobody", "admin", by="lead")
    with pytest.raises(MmrbError):
        auth.set_role(store, "lead", "annotator", by="lead")  # a lead cannot demote themselves
    with pytest.raises(MmrbError):
        auth.set_active(store, "lead", False, by="lead")
    with pytest.raises(MmrbError):
        auth.reset_password(store, "nobody", PASSWORD, by="lead")
    with pytest.raises(RuntimeError), store.transaction() as tx:
        store.record_audit("lead", "assign", "b1", {"n": 1}, conn=tx)
        raise RuntimeError("the change failed after its entry was written")
    assert trail(store) == [("system", "account.add", "lead")]
    with pytest.raises(ValueError, match="unknown audit action"):
        store.record_audit("lead", "drop.table", "")  # type: ignore[arg-type]


@pytest.mark.both_backends
def test_an_assignment_run_is_recorded_once_and_a_run_adding_nothing_not_at_all(store):
    seed(store, 6)
    for n in ("ok", "lazy"):
        store.add_annotator(Annotator(n))
    report = assign(store, k=1, annotators=["ok", "lazy"], batch="b1", by="lead")
    again = assign(store, k=1, annotators=["ok", "lazy"], batch="b1", by="lead")
    assert report.created == 6 and again.created == 0
    (run,) = store.audit(what="assign")
    assert (run.who, run.subject, run.details["assignments"], run.details["k"]) == ("lead", "b1", 6, 1)


@pytest.mark.both_backends
def test_gold_imports_pauses_and_resumes_are_recorded(store, tmp_path):
    ids = seed(store, 12)
    f = tmp_path / "gold.csv"
    f.write_text("pair_id,preference\n" + "".join(f"{p},second\n" for p in ids), encoding="utf-8")
    G.import_gold(store, f, by="cli:ops")
    with pytest.raises(MmrbError):  # refused whole: no entry
        G.import_gold_upload(store, "bad.csv", b"pair_id,preference\nno-such-pair,first\n", by="lead")
    (imported,) = store.audit(what="gold.import")
    assert (imported.who, imported.details["written"], imported.details["file"]) == ("cli:ops", 12, "gold.csv")
    for n in ("ok", "lazy"):
        store.add_annotator(Annotator(n))
    store.add_assignments(
        [Assignment(p, n, "first", i, is_gold=True) for i, p in enumerate(ids) for n in ("ok", "lazy")]
    )
    for p in ids:
        store.save_label(Label(p, "ok", preference="second"))
        store.save_label(Label(p, "lazy", preference="first"))
    store_report(store, threshold=0.7, min_n=10, pause=True, by="lead")
    store_report(store, threshold=0.7, min_n=10, pause=True, by="lead")  # already paused: nothing more
    (paused,) = store.audit(what="annotator.pause")
    assert (paused.who, paused.subject) == ("lead", "lazy") and "gold" in paused.details["reason"]
    Q.resume(store, "lazy", by="lead")
    (resumed,) = store.audit(what="annotator.resume")
    assert (resumed.who, resumed.subject) == ("lead", "lazy") and resumed.details["was_paused"].startswith("automatic")
    assert [e.what for e in store.audit(what="annotator")] == ["annotator.resume", "annotator.pause"]


@pytest.mark.both_backends
def test_an_adjudication_is_stored_with_its_entry_and_derived_gold_too(store):
    ids = seed(store, 2)
    record_decision(store, Adjudication(ids[0], "lead", preference="first", note="clear"))
    (adj,) = store.audit(what="adjudicate")
    assert (adj.who, adj.subject, dict(adj.details)) == ("lead", ids[0], {"exclude": False, "preference": "first"})
    assert store.adjudications()[ids[0]].preference == "first"
    G.derive_gold(store, ["adjudication"], by="lead")
    (derived,) = store.audit(what="gold")
    assert (derived.who, dict(derived.details)) == ("lead", {"written": 1, "source": "adjudication"})


def test_mmrb_audit_prints_filters_and_json(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "s.db")
    monkeypatch.setenv("MMRB_PASSWORD", PASSWORD)
    assert main(["annotators", "add", "ann", "--db", db]) == 0
    assert main(["annotators", "set-role", "ann", "admin", "--db", db]) == 0
    g = tmp_path / "g.md"
    g.write_text("# Rules\n", encoding="utf-8")
    assert main(["guidelines", "set", str(g), "--db", db]) == 0
    capsys.readouterr()
    assert main(["audit", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[2] for line in lines] == ["guidelines.set", "account.role", "account.add"]
    assert all(" UTC  cli:" in line for line in lines) and "role=admin" in lines[1]
    assert main(["audit", "--db", db, "--what", "account", "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["what"] for r in rows] == ["account.role", "account.add"] and rows[0]["details"]["was"] == "annotator"
    assert set(rows[0]) == {"id", "at", "who", "what", "subject", "details"}
    assert main(["audit", "--db", db, "--who", "nobody"]) == 0
    assert capsys.readouterr().out == "no entries match\n"
    assert main(["audit", "--db", db, "--since", "2999-01-01T00:00+02:00"]) == 0
    assert capsys.readouterr().out == "no entries match\n"
    assert main(["audit", "--db", db, "--since", "yesterday"]) == 1
    assert "--since 'yesterday'" in capsys.readouterr().err
    assert set(AUDIT_ACTIONS) >= {"account.add", "assign", "gold.import", "adjudicate", "guidelines.set"}


def test_the_lead_changes_a_role_signs_a_user_out_and_reads_the_trail(sqlite_env):
    s = sqlite_env
    started = sessions.start(s, s.get_annotator("bob"))
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_annotators.py").run()
    assert not lead.exception, lead.exception
    lead.selectbox(key="acct_target").set_value("bob").run()
    next(b for b in lead.button if b.key == "acct_signout").click().run()
    assert not lead.exception, lead.exception
    assert [t.value for t in lead.toast] == ["1 session of bob ended."]
    assert s.session_account(session_id=started.id, at=time.time()) is None
    lead.radio(key="acct_role").set_value("admin")
    next(b for b in lead.button if str(b.label) == "Change role").click().run()
    assert not lead.exception, lead.exception
    assert s.get_annotator("bob").role == "admin" and "bob is now admin" in lead.toast[0].value
    table = next(d.value for d in lead.dataframe if "Who" in d.value.columns)
    assert list(table.columns) == ["When (UTC)", "Who", "What", "Subject", "Details"]
    assert table.iloc[0][["Who", "What", "Subject"]].tolist() == ["lead", "role changed", "bob"]
    assert table.iloc[1][["Who", "What", "Subject"]].tolist() == ["lead", "signed out everywhere", "bob"]
    lead.selectbox(key="audit_what").set_value("guidelines").run()
    assert "Nothing recorded matches these filters." in all_text(lead)


def test_an_entry_of_the_trail_reads_in_full_whatever_its_details_length():
    """Issue 28: the trail's Details column is cut at the page's width; the selected entry is
    shown whole (audit_details), each detail on its own row, and the table's columns fit the
    page at 1366 px (their widths; the grid widens them to fill a wider one)."""
    from annotate.admin import AUDIT_WIDTHS, audit_details, audit_table

    long = {"annotators": 3, "scheme": "mmrb2-pairwise", "note": "a decision note " * 12, "k": 2}
    e = AuditEntry(7, "2026-11-28T09:12:05.123456+00:00", "lead", "assign", "", long)
    got = audit_details(e)
    assert got.index.tolist() == ["When (UTC)", "Who", "What", "Subject", "annotators", "k", "note", "scheme"]
    assert got.loc["note", "In full"] == "a decision note " * 12  # whole, never cut
    assert got.loc["When (UTC)", "In full"] == "2026-11-28 09:12:05" and got.loc["Subject", "In full"] == "–"
    assert got.loc["What", "In full"] == "assignment run (assign)"
    table = audit_table([e])
    assert table.widths == AUDIT_WIDTHS and set(AUDIT_WIDTHS) == set(table.frame.columns)
    # the grid's columns and its row-selection box fit the main column at 1366 px (906 px wide)
    assert sum(AUDIT_WIDTHS.values()) + 40 <= 906
    assert "in full" in table.helps["Details"]
