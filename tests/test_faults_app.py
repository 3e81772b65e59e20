"""Faults typed into the app and its accounts (issue 25), on SQLite and PostgreSQL: a NUL
in a text field is the annotator's to fix (a clear message, the answers kept), never an
outage retried forever; one identifier policy for item ids, model names and account names
(NFKC, no invisible or bidi characters, no look-alike of a name already there); the sign-in
code exchange only from the app's own origin; a gold file with a NUL refused alike on both
backends. Each fault's tests failed on the code before the fix; the few that passed guard
what must keep working (the app's own sign-in, a NUL name on SQLite). (The browser's side of
the origin check: test_faults_app_browser.py.)"""

from __future__ import annotations

import io
import json
import unicodedata
from pathlib import Path

import pytest

from curate.errors import InputError, MmrbError
from curate.ingest import ingest_items
from curate.model import Adjudication, Gold, Label
from tests.ingest_helpers import assert_nothing_written
from tests.support.apptest import all_text, form_keys, new_app, sign_in, submit
from tests.support.command_runner import run_command
from tests.support.streamlit_server import PASSWORD, seed_store

NUL_TEXT = "same answer\x00twice"


def _answer(at, *, rationale: str, pref: str = "tie") -> None:
    k = form_keys(at)
    at.radio(key=k["q_left"]).set_value("correct")
    at.radio(key=k["q_right"]).set_value("correct")
    at.radio(key=k["q_pref"]).set_value(pref)
    at.text_area(key=k["q_rationale"]).input(rationale)
    submit(at)


def _kept(at) -> tuple:
    k = form_keys(at)
    return tuple(at.radio(key=k[r]).value for r in ("q_left", "q_right", "q_pref")) + (
        at.text_area(key=k["q_rationale"]).value,
    )


def _no_outage(at) -> None:
    text = all_text(at)
    assert "retrying" not in text and "Not saved yet: the database" not in text, text
    assert "pending_save" not in at.session_state
    for raw in ("DataError", "psycopg", "sqlalchemy", "Traceback"):
        assert raw not in text, text


# -- 1. a NUL typed in the app -------------------------------------------------------------
def test_a_nul_in_the_rationale_is_the_annotators_to_fix_and_the_answers_stay(app_env):
    s = app_env
    at = sign_in("alice")
    _answer(at, rationale=NUL_TEXT)
    _no_outage(at)
    assert "rationale" in all_text(at) and "NUL character" in all_text(at)
    assert s.get_label("p0", "alice") is None  # nothing was saved
    assert _kept(at) == ("correct", "correct", "tie", NUL_TEXT)  # and nothing was lost
    k = form_keys(at)
    at.text_area(key=k["q_rationale"]).input("same answer twice")
    submit(at)
    assert s.get_label("p0", "alice").rationale == "same answer twice"
    assert "Question 1" in all_text(at)


def test_a_data_error_from_the_store_is_no_outage_and_the_answers_stay(app_env, monkeypatch):
    """Whatever the form lets through, the database refusing the data itself is not retried
    as an outage: a clear message, the answers back in the form."""
    import sqlalchemy.exc as sa

    from curate.store import Store

    def refuse(self, label, **kw):
        raise sa.DataError("INSERT ...", {}, ValueError("PostgreSQL text fields cannot contain NUL (0x00) bytes"))

    monkeypatch.setattr(Store, "save_label", refuse)
    at = sign_in("alice")
    _answer(at, rationale="fine text", pref="left")
    _no_outage(at)
    assert "cannot be stored" in all_text(at) and "NUL character" in all_text(at)
    assert _kept(at) == ("correct", "correct", "left", "fine text")


def test_the_outage_rules_tell_a_data_error_from_an_outage():
    import sqlalchemy.exc as sa

    from annotate import outage

    nul = sa.DataError("INSERT", {}, ValueError("PostgreSQL text fields cannot contain NUL (0x00) bytes"))
    assert outage.failure_reason(nul) is None
    assert outage.data_problem(nul) == "this text cannot be stored: it contains a NUL character"
    other = sa.DataError("INSERT", {}, ValueError("value too long for type character varying(16)"))
    assert outage.failure_reason(other) is None
    assert outage.data_problem(other) == "the database refused a value as invalid"
    down = sa.OperationalError("SELECT 1", {}, ValueError("server closed the connection"))
    assert outage.failure_reason(down) == outage.UNREACHABLE and outage.data_problem(down) is None


@pytest.mark.parametrize(
    "text,words",
    [
        ("a\x00b", "the rationale contains a NUL character (U+0000) at character 2, which cannot be stored"),
        (
            "a\ud800b",
            "the rationale contains half a UTF-16 surrogate pair (U+D800) at character 2, which cannot be stored",
        ),
    ],
)
def test_the_form_refuses_what_no_store_can_keep_alike_on_both_backends(text, words):
    from annotate.form import FormInput, problems

    f = FormInput("correct", "correct", "tie", rationale=text)
    assert problems(f) == [words]
    assert problems(FormInput("correct", "correct", "tie", rationale="a\tb\nc")) == []


@pytest.mark.both_backends
def test_the_store_refuses_a_nul_the_same_on_both_backends(store):
    from annotate import auth

    seed_store(store, n_pairs=2, annotators=("alice",), xss_at=None, missing_at=None)
    with pytest.raises(InputError, match="field 'rationale': .*NUL character"):
        store.save_label(Label("p0", "alice", "correct", "correct", "tie", rationale=NUL_TEXT))
    assert store.get_label("p0", "alice") is None
    with pytest.raises(InputError, match="field 'note': .*NUL character"):
        store.set_adjudication(Adjudication("p0", "lead", "first", note=NUL_TEXT))
    assert store.adjudications() == {}
    before = store.gold()  # p0 is a gold pair of the seed
    with pytest.raises(InputError, match="gold of pair 'p1' field 'note': .*NUL character"):
        store.set_gold([Gold("p0", "import", "tie"), Gold("p1", "import", "first", note=NUL_TEXT)])
    assert store.gold() == before
    with pytest.raises(MmrbError, match="U\\+0000"):
        auth.add_account(store, "al\x00ice", "a good password")
    assert [a.name for a in store.annotators()] == ["alice", "lead"]


@pytest.mark.both_backends
def test_a_nul_in_the_sign_in_name_is_a_wrong_name_on_both_backends(store):
    from annotate import auth

    auth.add_account(store, "alice", PASSWORD)
    got = auth.sign_in(store, "al\x00ice", PASSWORD, client="1.2.3.4")
    assert got.who is None and got.message() == "Wrong name or password, or the account is disabled."
    assert len(store.signin_attempts("name:al\\x00ice")) == 1  # counted like any failed sign-in
    assert auth.sign_in(store, "alice", PASSWORD, client="1.2.3.4").who is not None


def test_a_nul_typed_on_the_sign_in_page_is_a_wrong_name(app_env):
    at = new_app().run()
    at.text_input(key="signin_name").input("al\x00ice")
    at.text_input(key="signin_password").input(PASSWORD)
    at.button[0].click().run()
    assert not at.exception, at.exception
    _no_outage(at)
    assert "Wrong name or password" in all_text(at)


def test_a_nul_in_a_new_account_name_typed_by_the_lead(app_env):
    at = sign_in("lead")
    at.switch_page("annotate/views/admin_annotators.py").run()
    assert not at.exception, at.exception
    at.text_input[0].input("new\x00one")
    at.text_input[1].input("a good password")
    next(b for b in at.button if b.label == "Add").click().run()
    assert not at.exception, at.exception
    _no_outage(at)
    assert "U+0000" in all_text(at)
    assert sorted(a.name for a in app_env.annotators()) == ["alice", "bob", "lead"]


def test_a_nul_in_an_adjudication_note_is_said_and_the_note_stays(app_env):
    s = app_env
    s.save_label(Label("p0", "alice", "correct", "incorrect", "first"))
    s.save_label(Label("p0", "bob", "correct", "incorrect", "second"))
    at = sign_in("lead")
    at.switch_page("annotate/views/admin_adjudicate.py").run()
    assert not at.exception, at.exception
    note = next(w for w in at.text_area if w.key and w.key.startswith("adj_note_"))
    note.input(NUL_TEXT)
    next(b for b in at.button if b.key and b.key.startswith("adj_record_")).click().run()
    assert not at.exception, at.exception
    _no_outage(at)
    assert "field 'note'" in all_text(at) and "NUL character" in all_text(at)
    assert s.adjudications() == {}
    assert next(w for w in at.text_area if w.key == note.key).value == NUL_TEXT


# -- 2. one identifier policy: ids, model names, account names -----------------------------
INVISIBLE = ["\ufe0f", "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\U000e0101", "\u180e"]


def _items(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("ch", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_invisible_characters_are_refused_in_item_ids(bad_store, tmp_path, ch):
    rows = [{"id": "xy", "prompt": "p", "category": "vqa"}, {"id": f"x{ch}y", "prompt": "p", "category": "vqa"}]
    with pytest.raises(InputError) as e:
        ingest_items(bad_store, _items(tmp_path / "x.jsonl", rows))
    assert [(p.line, p.field) for p in e.value.problems] == [(2, "id")]
    assert f"U+{ord(ch):04X}" in str(e.value) and "not allowed in an id" in str(e.value)
    assert_nothing_written(bad_store)


def test_invisible_characters_are_refused_in_model_names(bad_store, tmp_path):
    row = {"id": "a", "prompt": "p", "category": "vqa", "responses": [{"model": "m\u3164", "text": "x"}]}
    with pytest.raises(InputError, match="U\\+3164"):
        ingest_items(bad_store, _items(tmp_path / "x.jsonl", [row]))
    assert_nothing_written(bad_store)


def test_every_default_ignorable_code_point_is_refused():
    """Unicode's Default_Ignorable_Code_Point (read through the regex package's data), and
    the blanks that are not in it, are refused in ids and account names."""
    import regex

    from curate.lookalike import check_identifier, check_name

    ignorable = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    found = [chr(c) for c in range(0x110000) if ignorable.match(chr(c))]
    assert len(found) > 4000
    for ch in found + ["\u2800", "\u3164", "\uffa0"]:
        assert check_identifier(f"x{ch}y")[1] is not None, f"U+{ord(ch):04X}"
        assert check_name(f"x{ch}y")[1] is not None, f"U+{ord(ch):04X}"
    assert check_identifier("x y") == ("x y", None) and check_identifier("été-4") == ("été-4", None)


def cli(argv, monkeypatch, stdin: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return run_command("annotators", argv, package="annotate.commands")


@pytest.mark.parametrize(
    "name,words",
    [
        ("\u0430lice", "mixes letters of Cyrillic ('а') and Latin ('l')"),
        ("ａｌｉｃｅ", "annotator 'alice' already exists"),
        ("al\u200bice", "U+200B (ZERO WIDTH SPACE)"),
        ("ali\u202ece", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("al\ufe0fice", "U+FE0F (VARIATION SELECTOR-16)"),
        ("Iead", "'Iead' looks like the account 'lead'"),
        ("a1ice", "'a1ice' looks like the account 'alice'"),
        ("<b>bob</b>", "invalid annotator name '<b>bob</b>': holds '<'"),
        ("bob](x)", "holds ']'"),
        ("bob&amp;", "holds '&'"),
        ('"bob"', "holds '\"'"),
    ],
)
def test_account_names_follow_the_identifier_policy(db_url, tmp_path, monkeypatch, capsys, name, words):
    from curate.store import Store

    opts = ["--db", db_url, "--images", str(tmp_path / "img")]
    assert cli(["add", "alice", "--password-stdin", *opts], monkeypatch, "first password\n") == 0
    assert cli(["add", "lead", "--role", "admin", "--password-stdin", *opts], monkeypatch, "lead password\n") == 0
    capsys.readouterr()
    assert cli(["add", name, "--password-stdin", *opts], monkeypatch, "third password\n") == 1
    err = capsys.readouterr().err
    assert words in err, err
    assert "Traceback" not in err
    with Store(db_url, images=tmp_path / "img") as s:
        assert [a.name for a in s.annotators()] == ["alice", "lead"]


def test_good_account_names_are_taken_in_their_normal_form(store):
    from annotate import auth

    for name in ("alice", "bob.smith@example.org", "mmrb2-rater-1", "ann_2+test", "Łucja", "тест"):
        assert auth.add_account(store, name, "a good password").name == name
    assert auth.add_account(store, " ﬁona ", "a good password").name == "fiona"  # NFKC: the ligature
    assert auth.sign_in(store, "ｆｉｏｎａ", "a good password", client=None).who.name == "fiona"


def test_an_account_made_by_assign_follows_the_policy_too(store):
    store.ensure_annotator("lead")
    with pytest.raises(MmrbError, match="'Iead' looks like the account 'lead'"):
        store.ensure_annotator("Iead")
    with pytest.raises(MmrbError, match="U\\+200D"):
        store.ensure_annotator("bo\u200db")
    assert [a.name for a in store.annotators()] == ["lead"]
    assert store.ensure_annotator("lead") is False  # the same name is no look-alike


# -- 3. the sign-in code exchange from a foreign origin -------------------------------------
def _served(store):
    from starlette.applications import Starlette

    from annotate import web

    return Starlette(routes=web.routes(lambda: store))


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "https://testserver.evil.example"},
        {"Origin": "http://testserver"},  # another scheme is another origin
        {"Origin": "https://testserver:8443"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "https://testserver", "Sec-Fetch-Site": "cross-site"},
    ],
)
def test_a_sign_in_code_from_a_foreign_origin_is_refused_and_stays_unused(store, headers):
    from starlette.testclient import TestClient

    from annotate import auth, sessions

    alice = auth.add_account(store, "alice", PASSWORD)
    started = sessions.start(store, alice)
    browser = TestClient(_served(store), base_url="https://testserver")
    r = browser.post("/api/session", content=started.handoff, headers=headers)
    assert r.status_code == 403 and "set-cookie" not in r.headers
    assert r.text == "This request did not come from the app's own page."
    # the code was not used: the app's own page can still trade it
    own = {"Origin": "https://testserver", "Sec-Fetch-Site": "same-origin"}
    assert browser.post("/api/session", content=started.handoff, headers=own).status_code == 204


def test_a_foreign_origin_cannot_end_a_session_either(store):
    from starlette.testclient import TestClient

    from annotate import auth, sessions

    alice = auth.add_account(store, "alice", PASSWORD)
    started = sessions.start(store, alice)
    browser = TestClient(_served(store), base_url="http://127.0.0.1:8501")
    own = {"Origin": "http://127.0.0.1:8501", "Sec-Fetch-Site": "same-origin"}
    assert browser.post("/api/session", content=started.handoff, headers=own).status_code == 204
    assert browser.delete("/api/session", headers={"Origin": "http://localhost:8501"}).status_code == 403
    assert sessions.check(store, session_id=started.id) is not None
    assert browser.delete("/api/session", headers=own).status_code == 204
    assert sessions.check(store, session_id=started.id) is None


@pytest.mark.parametrize(
    "headers",
    [
        {},  # no browser (curl, a script): nothing to forge a user's request with
        {"Origin": "http://127.0.0.1:8501"},  # a browser without Sec-Fetch-Site
        {"Origin": "HTTP://127.0.0.1:8501"},
        {"Sec-Fetch-Site": "same-origin"},
        {"Origin": "https://mmrb.example.org", "Sec-Fetch-Site": "same-origin"},  # behind a proxy that sets Host
    ],
)
def test_the_apps_own_page_still_signs_in(store, headers):
    from starlette.testclient import TestClient

    from annotate import auth, sessions

    alice = auth.add_account(store, "alice", PASSWORD)
    started = sessions.start(store, alice)
    browser = TestClient(_served(store), base_url="http://127.0.0.1:8501")
    assert browser.post("/api/session", content=started.handoff, headers=headers).status_code == 204


# -- 4. a gold file with a NUL ----------------------------------------------------------------
def _pairs(store) -> None:
    from tests.support.pairs import seed

    seed(store, 2)


@pytest.mark.parametrize(
    "name,data,line",
    [
        (
            "gold.jsonl",
            b'{"pair_id": "p0", "preference": "first"}\n{"pair_id": "p1", "preference": "tie", "note": "a\\u0000b"}\n',
            2,
        ),
        ("gold.csv", b"pair_id,preference,note\np0,first,ok\np1,second,a\x00b\n", 3),
    ],
)
@pytest.mark.both_backends
def test_a_nul_in_a_gold_file_is_refused_alike_on_both_backends(store, tmp_path, name, data, line):
    from curate.quality import gold as G

    _pairs(store)
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as e:
        G.import_gold(store, path)
    assert [(p.file, p.line, p.field) for p in e.value.problems] == [(str(path), line, "note")]
    assert "NUL character" in str(e.value)
    assert store.gold() == {}
    with pytest.raises(InputError) as e:
        G.import_gold_upload(store, name, data)
    assert [(p.file, p.line, p.field) for p in e.value.problems] == [(name, line, "note")]
    assert store.gold() == {}


def test_gold_derived_from_a_note_with_a_nul_is_refused_not_a_data_error(sqlite_store):
    """An adjudication note stored before the store refused NUL (SQLite kept it) cannot
    become gold on either backend: the store says which pair and field."""
    from sqlalchemy import insert

    from curate.quality import gold as G
    from curate.store import schema as S

    _pairs(sqlite_store)
    with sqlite_store.write() as c:
        c.execute(
            insert(S.adjudications).values(
                pair_id="p0", admin="lead", created_at="2025-01-01", preference="first", note="a\x00b"
            )
        )
    with pytest.raises(InputError, match="gold of pair 'p0' field 'note'"):
        G.derive_gold(sqlite_store, ["adjudication"])
    assert sqlite_store.gold() == {}


def test_nfkc_is_what_the_policy_says():
    from curate.lookalike import check_identifier

    for text in ("ﬁle-1", "ａ", "𝐚b"):
        assert check_identifier(text) == (unicodedata.normalize("NFKC", text), None)
