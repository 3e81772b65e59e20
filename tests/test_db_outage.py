"""PostgreSQL stops while an annotator submits, and comes back: in a real browser.

The app must show a calm notice (never a traceback), keep the answers in the form, retry with
backoff and carry on by itself when the server is back, without a reload.

The test stops and starts a PostgreSQL server of its own (a throwaway cluster on a free port,
made with the installed initdb), not the shared one on 5432: other tests (and other test
runs on this machine) keep their database while this one is down."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from tests.support.services import unavailable
from tests.support.streamlit_server import (
    CHROMIUM,
    PASSWORD,
    StreamlitServer,
    free_port,
    seed_store,
    wait_idle,
    wait_label_ready,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RAW = ("Traceback", "OperationalError", "sqlalchemy", "psycopg", 'File "', "site-packages")
CHECKED = """() => Array.from(document.querySelectorAll('[class*="st-key-q_"] input[type=radio]'))
  .filter((r) => r.checked).map((r) => r.closest('[class*="st-key-q_"]').className.match(/st-key-(q_[a-z]+)/)[1]
  + '=' + r.closest('label').innerText.trim().split(/\\s+/)[0])"""


class PrivatePostgres:
    """A PostgreSQL cluster in a temporary directory, run as the postgres user, trusting
    connections from 127.0.0.1 (it lives only as long as the test)."""

    def __init__(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins:
            unavailable("PostgreSQL server binaries (initdb) are not installed (tests/setup-system.sh installs them)")
        self.bin = os.path.dirname(bins[-1])
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="mmrb-pg-")
        self.data = os.path.join(self.dir, "data")
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            self._as_pg = ["su", "postgres", "-c"]
        else:
            self._as_pg = ["sudo", "-u", "postgres", "sh", "-c"]
        self._pg(f"{self.bin}/initdb -D {self.data} -U mmrb --auth=trust -E UTF8 --no-instructions")
        self.url = f"postgresql://mmrb@127.0.0.1:{self.port}"

    def _pg(self, cmd: str) -> None:
        r = subprocess.run(self._as_pg + [cmd], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            unavailable(f"could not run a private PostgreSQL: {cmd.split()[0]}: {r.stderr.strip()[-300:]}")

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._pg(f"{self.bin}/pg_ctl -D {self.data} -l {self.dir}/log -o '{opts}' -w -t 60 start")

    def stop(self) -> None:
        self._pg(f"{self.bin}/pg_ctl -D {self.data} -m fast -w -t 60 stop")

    def running(self) -> bool:
        return (
            subprocess.run(self._as_pg + [f"{self.bin}/pg_ctl -D {self.data} status"], capture_output=True).returncode
            == 0
        )

    def create_db(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url + "/postgres", autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return f"{self.url}/{name}"

    def destroy(self) -> None:
        if self.running():
            subprocess.run(
                self._as_pg + [f"{self.bin}/pg_ctl -D {self.data} -m immediate -w stop"], capture_output=True
            )
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def pg():
    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    server = PrivatePostgres()
    try:
        server.start()
        yield server
    finally:
        server.destroy()


def shows_checked(page, want: list[str], timeout: float = 30_000) -> None:
    """Wait until the form's checked answers are ``want`` (sorted). Read once they settle: while
    a run replaces the form, its old copy can stand beside the new one for a moment (each answer
    twice), so a single read right after the count matched could catch both."""
    try:
        page.wait_for_function(
            f"want => JSON.stringify(({CHECKED})().sort()) === JSON.stringify(want)", arg=sorted(want), timeout=timeout
        )
    except Exception:
        pytest.fail(f"the form's checked answers are {sorted(page.evaluate(CHECKED))}, not {sorted(want)}")


def no_raw_error(page) -> None:
    text = page.evaluate("document.body.innerText")
    shown = [w for w in RAW if w in text]
    assert not shown, f"the page shows {shown}: {text[:600]}"
    assert page.locator("[data-testid=stException]").count() == 0


def notice(page, text: str, timeout: float = 30_000) -> str:
    loc = page.locator("[data-testid=stAlert]", has_text=text).first
    loc.wait_for(timeout=timeout)
    return loc.inner_text()


def test_postgres_stops_during_a_submit_the_answers_wait_and_are_saved_when_it_returns(pg, page, tmp_path):
    from curate.store import Store

    db = pg.create_db("outage")
    images = tmp_path / "images"
    with Store(db, images=images) as s:
        seed_store(s, n_pairs=4, annotators=("alice",), xss_at=None, missing_at=None)
    with StreamlitServer(db, str(images), log=tmp_path / "streamlit.log") as srv:
        page.goto(srv.url)
        wait_idle(page)
        page.get_by_role("textbox", name="Name").fill("alice")
        page.get_by_role("textbox", name="Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_text("Question 0: what is in the picture?").wait_for(timeout=45_000)
        wait_label_ready(page)
        page.keyboard.press("1")  # left correct
        page.keyboard.press("9")  # right incorrect
        page.keyboard.press("a")  # left is better
        try:
            pg.stop()
            page.keyboard.press("Enter")
            first = notice(page, "Not saved yet")
            assert "answers are kept" in first and "retrying in" in first
            no_raw_error(page)
            # the answers are still in the form, on the same pair
            page.get_by_text("Question 0: what is in the picture?").wait_for()
            shows_checked(page, ["q_flag=no", "q_left=correct", "q_pref=left", "q_right=incorrect"])
            assert page.locator("[data-testid=stForm]").count() == 1
            # it keeps trying, further apart each time
            notice(page, "(attempt 3)", timeout=30_000)
            no_raw_error(page)
            t_down = time.monotonic()
        finally:
            if not pg.running():
                pg.start()
        # back without a reload: the saved label moves the queue on, with an empty form
        page.get_by_text("Question 1: what is in the picture?").wait_for(timeout=30_000)
        recovered_in = time.monotonic() - t_down
        wait_label_ready(page)
        notice(page, "your answers were saved")
        shows_checked(page, ["q_flag=no"])
        no_raw_error(page)
        with Store(db, images=images) as s:
            got = s.get_label("p0", "alice")
        assert got is not None and (got.correctness_first, got.correctness_second, got.preference) == (
            "correct",
            "incorrect",
            "first",
        )  # seed_store: alice sees p0 with the first response on the left
        assert recovered_in < 20, recovered_in

        # any page, any store failure: a calm notice, and the page comes back by itself
        try:
            pg.stop()
            page.keyboard.press("s")  # a button's callback meets the failure
            notice(page, "The database is not reachable; retrying")
            no_raw_error(page)
            page.locator("[data-testid=stSidebarNav] a", has_text="My labels").click()
            page.wait_for_function(  # My labels has run (the label page's form is gone), not the page before
                "() => { const a = document.querySelector('[data-testid=stSidebarNav] a[aria-current=page]');"
                " return a && a.innerText.includes('My labels') && !document.querySelector('[data-testid=stForm]'); }",
                timeout=30_000,
            )
            notice(page, "The database is not reachable; retrying")
            no_raw_error(page)
        finally:
            if not pg.running():
                pg.start()
        page.get_by_text("Left and right are as you saw them").wait_for(timeout=30_000)
        notice(page, "Not skipped: the database is not reachable")
        no_raw_error(page)
        with Store(db, images=images) as s:
            assert s.get_label("p1", "alice") is None  # the skip did not happen, and says so

        # an edit saved during an outage waits in its form the same way
        box = page.locator("[data-testid=stDataFrame]").bounding_box()
        page.mouse.click(box["x"] + 18, box["y"] + 35 + 18)  # the row marker of the only label
        page.get_by_text("Editing pair").wait_for(timeout=30_000)
        wait_label_ready(page)
        page.locator('[class*="st-key-q_pref"] label', has_text="tie").click()
        page.locator('[class*="st-key-q_rationale"] textarea').fill("both fine on reflection")
        try:
            pg.stop()
            page.get_by_role("button", name="Save changes").click()
            notice(page, "Not saved yet")
            no_raw_error(page)
            shows_checked(page, ["q_flag=no", "q_left=correct", "q_pref=tie", "q_right=incorrect"])
            # the kept form alone, not beside a stale one (a rerun's stale copy goes as the run ends)
            page.wait_for_function(
                "() => document.querySelectorAll('[data-testid=stForm]').length === 1", timeout=15_000
            )
            assert page.locator("[data-testid=stForm]").count() == 1
            assert page.locator('[class*="st-key-q_rationale"] textarea').input_value() == "both fine on reflection"
        finally:
            if not pg.running():
                pg.start()
        notice(page, "your answers were saved")
        no_raw_error(page)
        with Store(db, images=images) as s:
            got = s.get_label("p0", "alice")
        assert (got.preference, got.rationale, got.revision) == ("tie", "both fine on reflection", 2)
    assert not page.errors, page.errors
