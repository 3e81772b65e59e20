"""Sign-in sessions on the server, their revocation, the sign-in throttle and timing, on
SQLite and PostgreSQL (the browser and two app processes: test_sessions_browser.py)."""

from __future__ import annotations

import io

import pytest

from annotate import auth, sessions
from curate.model import Annotator
from tests.support.apptest import new_app
from tests.support.command_runner import run_command
from tests.support.streamlit_server import PASSWORD

T0 = 1_000_000.0


@pytest.fixture
def alice(store) -> Annotator:
    return auth.add_account(store, "alice", "correct horse")


# -- sessions ------------------------------------------------------------------------------
@pytest.mark.both_backends
def test_a_session_is_checked_by_id_then_by_the_cookie_it_traded_its_handoff_for(store, alice):
    st = sessions.start(store, alice, now=T0, hours=1)
    assert sessions.check(store, session_id=st.id, now=T0 + 1).who.name == "alice"
    token, expires = sessions.claim(store, st.handoff, now=T0 + 5)
    assert expires == T0 + 3600
    assert sessions.check(store, token=token, now=T0 + 6).id == st.id
    assert sessions.claim(store, st.handoff, now=T0 + 7) is None  # a handoff code works once
    assert sessions.check(store, token=token, now=T0 + 3601) is None  # expired
    assert sessions.check(store, session_id=st.id, now=T0 + 3601) is None
    assert sessions.check(store, token="made-up", now=T0) is None
    assert sessions.check(store, token=None) is None and sessions.check(store, session_id=None) is None


@pytest.mark.both_backends
def test_a_stale_handoff_code_is_refused(store, alice):
    st = sessions.start(store, alice, now=T0)
    assert sessions.claim(store, st.handoff, now=T0 + sessions.HANDOFF_SECONDS + 1) is None
    assert sessions.claim(store, "", now=T0) is None


def test_the_store_keeps_only_hashes_of_the_secrets(store, alice):
    from sqlalchemy import select

    from curate.store import schema as S

    st = sessions.start(store, alice)
    token, _ = sessions.claim(store, st.handoff)
    with store.read() as c:
        rows = [dict(r) for r in c.execute(select(S.sessions)).mappings()]
    text = repr(rows)
    assert token not in text and st.handoff not in text and sessions.digest(token) in text


@pytest.mark.both_backends
def test_sign_out_ends_the_session_for_every_holder_of_its_cookie(store, alice):
    st = sessions.start(store, alice)
    token, _ = sessions.claim(store, st.handoff)
    sessions.end(store, session_id=st.id)  # the tab that signs out knows the id...
    assert sessions.check(store, token=token) is None  # ...a copy of the cookie is dead too
    other = sessions.start(store, alice)
    token2, _ = sessions.claim(store, other.handoff)
    sessions.end(store, token=token2)  # the cookie's own DELETE route
    assert sessions.check(store, session_id=other.id) is None


@pytest.mark.parametrize("change", ["reset-password", "disable", "set-role", "give-a-password"])
@pytest.mark.both_backends
def test_what_changes_an_account_ends_its_sessions(store, alice, change):
    if change == "give-a-password":  # an account made for the organisation's sign-in, given a password
        store.add_annotator(Annotator("ann@example.org", "annotator", None))
        who = store.get_annotator("ann@example.org")
    else:
        who = alice
    mine = [sessions.start(store, who) for _ in range(2)]
    bob = auth.add_account(store, "bob", "long enough")
    theirs = sessions.start(store, bob)
    {
        "reset-password": lambda: auth.reset_password(store, "alice", "new password!"),
        "disable": lambda: auth.set_active(store, "alice", False),
        "set-role": lambda: auth.set_role(store, "alice", "admin"),
        "give-a-password": lambda: auth.add_account(store, "ann@example.org", "long enough"),
    }[change]()
    assert all(sessions.check(store, session_id=m.id) is None for m in mine)
    assert sessions.check(store, session_id=theirs.id) is not None  # other accounts keep theirs


def test_a_disabled_account_has_no_live_session_even_if_a_row_were_left(store, alice):
    st = sessions.start(store, alice)
    store.update_annotator("alice", active=False)  # behind auth's back: the check still refuses
    assert sessions.check(store, session_id=st.id) is None


def test_an_organisation_identity_from_before_the_end_of_sessions_cannot_start_one(store, alice):
    assert sessions.identity_may_start(store, "alice", None)  # never ended: nothing to compare
    sessions.end_all(store, "alice", now=T0)
    assert not sessions.identity_may_start(store, "alice", T0 - 10)
    assert not sessions.identity_may_start(store, "alice", None)  # no issue time: refused
    assert not sessions.identity_may_start(store, "alice", "garbage")
    assert sessions.identity_may_start(store, "alice", T0 + 10)


# -- the throttle --------------------------------------------------------------------------
@pytest.mark.both_backends
def test_wrong_passwords_throttle_the_name_then_the_right_one_is_refused_too(store, alice, tmp_path):
    from curate.store import Store

    for n in range(auth.NAME_LIMIT):
        got = auth.sign_in(store, "alice", f"wrong {n}", client="203.0.113.1", now=T0 + n)
        assert got.who is None and got.throttled is None
    # another app process (its own Store) sees the same failures
    with Store(store.db, images=tmp_path / "img2") as other:
        got = auth.sign_in(other, "alice", "correct horse", client="198.51.100.7", now=T0 + 10)
    assert got.who is None and got.throttled == "name"
    assert got.retry_after == pytest.approx(auth.WINDOW_SECONDS - 10)
    assert "Too many failed sign-ins for this name" in got.message() and "15 minutes" in got.message()
    # the lead resets the password: the new one works at once
    auth.reset_password(store, "alice", "new password!")
    assert auth.sign_in(store, "alice", "new password!", client="203.0.113.1", now=T0 + 11).who.name == "alice"
    for n in range(auth.NAME_LIMIT):
        auth.sign_in(store, "alice", f"wrong {n}", client="203.0.113.1", now=T0 + 20 + n)
    assert auth.sign_in(store, "alice", "new password!", client="203.0.113.1", now=T0 + 30).throttled == "name"
    # the window passes: the right password works, and clears the name's failures
    later = T0 + 25 + auth.WINDOW_SECONDS  # the last failure (T0 + 24) has left the window
    assert auth.sign_in(store, "alice", "new password!", client="203.0.113.1", now=later).who.name == "alice"
    assert store.signin_attempts("name:alice") == []


@pytest.mark.both_backends
def test_one_client_trying_many_names_is_throttled_for_every_name(store, alice):
    for n in range(auth.CLIENT_LIMIT):
        auth.sign_in(store, f"user{n}", "whatever pw", client="203.0.113.9", now=T0 + n)
    got = auth.sign_in(store, "alice", "correct horse", client="203.0.113.9", now=T0 + 30)
    assert got.who is None and got.throttled == "client" and "from your address" in got.message()
    # another client is not affected
    assert auth.sign_in(store, "alice", "correct horse", client="192.0.2.4", now=T0 + 30).who is not None


def test_a_refused_attempt_is_not_counted_and_does_not_check_the_password(store, alice, monkeypatch):
    for _ in range(auth.NAME_LIMIT):
        auth.sign_in(store, "alice", "wrong pw!", client=None, now=T0)
    calls = []
    monkeypatch.setattr(auth, "authenticate", lambda *a: calls.append(a))
    for n in range(10):
        assert auth.sign_in(store, "alice", "correct horse", client=None, now=T0 + n).throttled == "name"
    assert calls == []
    assert len(store.signin_attempts("name:alice")) == auth.NAME_LIMIT


def test_the_sign_in_page_says_it_is_throttled(sqlite_env):
    at = new_app().run()
    for n in range(auth.NAME_LIMIT):
        _submit_sign_in(at, "alice", f"wrong password {n}")
        assert "Wrong name or password" in _text(at)
    _submit_sign_in(at, "alice", PASSWORD)
    assert "Too many failed sign-ins for this name" in _text(at)
    assert not at.radio  # not signed in


# -- timing: every answer costs one argon2 verification ------------------------------------
def test_unknown_passwordless_and_disabled_accounts_cost_one_argon2_verification(store, alice, monkeypatch):
    store.ensure_annotator("nopw")  # made by `mmrb assign`: no password
    auth.add_account(store, "gone", "long enough")
    auth.set_active(store, "gone", False)
    auth.dummy_hash()  # made once per process, before counting
    seen: list[str] = []

    class Spy:  # argon2's PasswordHasher has read-only attributes: wrap it
        def __init__(self, real):
            self.real = real

        def verify(self, h, pw):
            seen.append(h)
            return self.real.verify(h, pw)

        def __getattr__(self, name):
            return getattr(self.real, name)

    monkeypatch.setattr(auth, "_hasher", Spy(auth._hasher))
    for name, pw in (("alice", "wrong horse"), ("nobody", "correct horse"), ("nopw", "x" * 8), ("gone", "long enough")):
        seen.clear()
        assert auth.authenticate(store, name, pw) is None
        assert len(seen) == 1, name
        assert (seen[0] == auth.dummy_hash()) == (name in ("nobody", "nopw")), name


# -- the app: a revoked session stops an open tab (AppTest, both backends) -----------------
def _text(at) -> str:
    return "\n".join(str(getattr(e, "value", "")) for e in at.main)


def _submit_sign_in(at, name, password):
    at.text_input(key="signin_name").input(name)
    at.text_input(key="signin_password").input(password)
    at.button[0].click().run()
    assert not at.exception, at.exception


def _label_first_pair(at):
    keys = {w.key.split("_")[1]: w.key for w in at.radio if w.key and w.key.startswith("q_")}
    at.radio(key=keys["left"]).set_value("correct")
    at.radio(key=keys["right"]).set_value("incorrect")
    at.radio(key=keys["pref"]).set_value("left")
    next(b for b in at.button if b.key and b.key.startswith("q_submit_")).click().run()
    assert not at.exception, at.exception


def _cli(argv, monkeypatch, stdin=None) -> int:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return run_command("annotators", argv, package="annotate.commands")


@pytest.mark.parametrize("how", ["reset-password", "disable", "sign-out"])
def test_an_open_tab_stops_at_once_undo_included(app_env, monkeypatch, how):
    at = new_app().run()
    _submit_sign_in(at, "alice", PASSWORD)
    _label_first_pair(at)
    assert app_env.get_label("p0", "alice") is not None
    argv = {
        "reset-password": ["reset-password", "alice", "--password-stdin"],
        "disable": ["disable", "alice"],
        "sign-out": ["sign-out", "alice"],
    }[how]
    assert _cli([*argv, "--db", app_env.db], monkeypatch, "brand new password\n") == 0
    at.button(key="act_undo").click().run()  # the tab is still open; Undo must not act
    assert not at.exception, at.exception
    assert app_env.get_label("p0", "alice") is not None  # not withdrawn
    assert "Your session has ended" in _text(at) and at.text_input(key="signin_name") is not None
    assert not at.radio


def test_a_submit_after_the_session_ended_saves_nothing(sqlite_env):
    at = new_app().run()
    _submit_sign_in(at, "bob", PASSWORD)
    auth.set_active(sqlite_env, "bob", False)
    _label_first_pair(at)
    assert sqlite_env.get_label("p0", "bob") is None
    assert "Your session has ended" in _text(at)


def test_sign_out_ends_only_that_session(sqlite_env):
    one, two = new_app().run(), new_app().run()
    _submit_sign_in(one, "alice", PASSWORD)
    _submit_sign_in(two, "alice", PASSWORD)  # another browser: its own session
    next(b for b in one.button if b.key == "sign_out").click().run()
    assert one.text_input(key="signin_name") is not None
    two.run()
    assert two.radio  # still signed in


# -- the HTTP side: the httpOnly cookie and the guard on /media ----------------------------
def _served(store):
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from annotate import web

    async def media(request):  # stands in for Streamlit's media route behind the guard
        return Response(b"jpeg bytes", media_type="image/jpeg")

    return Starlette(
        routes=web.routes(lambda: store) + [Route("/media/{name}", media)], middleware=web.middleware(lambda: store)
    )


def test_the_cookie_is_set_by_the_server_httponly_and_media_needs_a_live_one(store, alice):
    from starlette.testclient import TestClient

    app = _served(store)
    browser = TestClient(app, base_url="https://testserver")
    assert browser.get("/media/a.jpg").status_code == 403  # no session, no image
    started = sessions.start(store, alice)
    r = browser.post("/api/session", content=started.handoff)
    assert r.status_code == 204
    cookie = r.headers["set-cookie"]
    for attr in ("mmrb_session=", "HttpOnly", "SameSite=strict", "Secure", "Path=/", "Max-Age="):
        assert attr in cookie, (attr, cookie)
    assert browser.get("/media/a.jpg").content == b"jpeg bytes"
    assert browser.post("/api/session", content=started.handoff).status_code == 403  # the code works once
    assert TestClient(app, base_url="https://testserver").get("/media/a.jpg").status_code == 403
    # signing in again in the same browser (another tab) replaces its session: the old one ends
    again = sessions.start(store, alice)
    assert browser.post("/api/session", content=again.handoff).status_code == 204
    assert sessions.check(store, session_id=started.id) is None
    assert sessions.check(store, session_id=again.id) is not None
    auth.reset_password(store, "alice", "another password")
    assert browser.get("/media/a.jpg").status_code == 403  # revoked: at once


def test_plain_http_gets_no_secure_flag_and_delete_ends_the_session(store, alice):
    from starlette.testclient import TestClient

    browser = TestClient(_served(store), base_url="http://testserver")
    started = sessions.start(store, alice)
    r = browser.post("/api/session", content=started.handoff)
    assert "HttpOnly" in r.headers["set-cookie"] and "Secure" not in r.headers["set-cookie"]
    r = browser.delete("/api/session")
    assert r.status_code == 204 and "Max-Age=0" in r.headers["set-cookie"]
    assert sessions.check(store, session_id=started.id) is None
    assert browser.get("/media/a.jpg").status_code == 403


def test_the_cookie_is_set_and_deleted_with_the_same_attributes(store, alice, monkeypatch):
    # a browser deletes a cookie only when path, secure, ... match: both come from one place
    from starlette.testclient import TestClient

    from annotate import web

    def attributes(request) -> web.CookieAttributes:
        return web.CookieAttributes(path="/elsewhere", httponly=True, samesite="strict", secure=False)

    monkeypatch.setattr(web, "cookie_attributes", attributes)
    browser = TestClient(_served(store), base_url="https://testserver")
    set_ = browser.post("/api/session", content=sessions.start(store, alice).handoff).headers["set-cookie"]
    deleted = browser.delete("/api/session").headers["set-cookie"]

    def attrs(header: str) -> set[str]:
        return {a.strip() for a in header.split(";")[1:] if not a.strip().startswith(("Max-Age", "expires"))}

    assert attrs(set_) == attrs(deleted) == {"HttpOnly", "Path=/elsewhere", "SameSite=strict"}


# -- the organisation's sign-in (st.login): its identity cookie is Streamlit's, 30 days ----
OIDC_SECRETS = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "x" * 32,
    "client_id": "mmrb",
    "client_secret": "s",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}
ANN = "ann@example.org"


def _oidc_tab(issued_at: float, *, configured: bool = True):
    at = new_app()
    if configured:
        at.secrets["auth"] = OIDC_SECRETS
    at.user = {"is_logged_in": True, "email": ANN, "iat": issued_at}
    return at.run()


def _signed_in_as(at) -> str | None:
    from annotate.render import plain

    text = " ".join(str(getattr(e, "value", "")) for e in at.sidebar)
    return ANN if f"Signed in as **{plain(ANN)}**" in text else None


def test_an_organisation_identity_older_than_the_end_of_sessions_starts_none(sqlite_env):
    import time

    sqlite_env.add_annotator(Annotator(ANN, "annotator", None))
    t0 = time.time()  # identity issue times and the end of sessions, in order, all before now
    issued = t0 - 60
    tab = _oidc_tab(issued)
    assert not tab.exception, tab.exception
    assert _signed_in_as(tab) == ANN
    assert _signed_in_as(_oidc_tab(issued, configured=False)) is None  # st.user is trusted only with [auth]
    sessions.end_all(sqlite_env, ANN, now=t0 - 30)  # e.g. the lead reset the account
    tab.run()
    assert _signed_in_as(tab) is None and "has ended here" in _text(tab)  # the same identity cannot come back
    reissued = t0 - 20
    fresh = _oidc_tab(reissued)  # signed in at the organisation again, after the reset: a new identity
    assert _signed_in_as(fresh) == ANN
    next(b for b in fresh.button if b.key == "sign_out").click().run()
    assert not fresh.exception, fresh.exception
    # a copy of Streamlit's identity cookie taken before that sign-out starts nothing
    assert _signed_in_as(_oidc_tab(reissued)) is None


@pytest.mark.both_backends
def test_a_store_from_before_sessions_gets_them_when_opened(db_url, tmp_path):
    from sqlalchemy import inspect, update

    from curate.store import Store
    from curate.store import schema as S

    with Store(db_url, images=tmp_path / "img") as s:  # make it look like a version-1 store
        with s.write() as c:
            c.exec_driver_sql("DROP TABLE sessions")
            c.exec_driver_sql("DROP TABLE signin_attempts")
            c.exec_driver_sql("ALTER TABLE annotators DROP COLUMN sessions_not_before")
            c.execute(update(S.settings).where(S.settings.c.key == "schema_version").values(value="1"))
    with Store(db_url, images=tmp_path / "img") as s:
        assert "sessions_not_before" in {c["name"] for c in inspect(s.engine).get_columns("annotators")}
        who = auth.add_account(s, "alice", "correct horse")
        started = sessions.start(s, who)
        assert sessions.end_all(s, "alice", now=T0) == 1 and s.sessions_not_before("alice") == T0
        assert sessions.check(s, session_id=started.id) is None
