"""The team deployment of deploy/ as it runs: PostgreSQL, two app processes and nginx with a
self-signed certificate on 127.0.0.1 (deploy/local.py renders the site a server installs). In
headless Chromium over HTTPS: nginx keeps a browser on one process by its routing cookie, a
pair labelled through one process is seen from the other, and the session cookie is Secure and
httpOnly (the app sees https through nginx's X-Forwarded-Proto), as is every other cookie."""

from __future__ import annotations

import os
import re
import ssl
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from deploy.local import Nginx, nginx_binary
from tests.support.services import unavailable
from tests.support.streamlit_server import (
    CHROMIUM,
    StreamlitServer,
    free_port,
    seed_store,
    sign_in,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
UPSTREAM = re.compile(r"upstream=(\S+)")


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """nginx on https://127.0.0.1:PORT in front of two app processes on one PostgreSQL database."""
    from curate.store import Store
    from tests.support.services import ensure_postgres, new_pg_database

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    if nginx_binary() is None:
        unavailable("nginx is not installed (tests/setup-system.sh installs nginx-light)")
    d = tmp_path_factory.mktemp("deploy")
    images = d / "images"
    db, drop = new_pg_database(ensure_postgres())
    with Store(db, images=images) as s:
        seed_store(s, annotators=("alice",))
    # the store from the environment, as the systemd unit gives it (not on the command line)
    apps = [StreamlitServer(None, str(images), extra_env={"MMRB_DB": db}, log=d / f"app{n}.log") for n in (1, 2)]
    (d / "nginx").mkdir()
    proxy = Nginx(d / "nginx", [a.port for a in apps], listen_port=free_port())
    try:
        for a in apps:
            a.wait()
        proxy.start()
        yield proxy, apps, db, images
    finally:
        proxy.stop()
        for a in apps:
            a.stop()
        drop()


def log_lines(proxy: Nginx) -> list[str]:
    return proxy.access_log.read_text().splitlines() if proxy.access_log.exists() else []


def served_by(proxy: Nginx, route: str) -> str:
    """The app process (host:port) nginx sends a browser with this routing cookie to."""
    probe = f"/_stcore/health?probe={uuid.uuid4().hex}"  # its own log line, among a browser's requests
    req = urllib.request.Request(proxy.url + probe, headers={"Cookie": f"mmrb_route={route}"})
    with urllib.request.urlopen(req, context=ssl._create_unverified_context(), timeout=10) as r:
        assert r.read().strip() == b"ok"
    deadline = time.monotonic() + 10
    while True:  # nginx logs a request once it has answered it: the line can come a moment later
        lines = [line for line in log_lines(proxy) if probe in line]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    (line,) = lines
    m = UPSTREAM.search(line)
    assert m, line
    return m.group(1)


def test_a_label_through_one_process_is_seen_from_the_other_over_https(deployment, browser):
    proxy, apps, db, images = deployment
    ports = {f"127.0.0.1:{a.port}" for a in apps}
    first = browser.new_context(viewport={"width": 1400, "height": 1000}, ignore_https_errors=True)
    second = browser.new_context(viewport={"width": 1400, "height": 1000}, ignore_https_errors=True)
    try:
        a = first.new_page()
        seen = len(log_lines(proxy))
        sign_in(a, proxy.url, "alice")
        # nginx gave this browser its routing cookie, and sent all it asked for to one process
        route = next(c for c in first.cookies() if c["name"] == "mmrb_route")
        assert route["secure"] and route["httpOnly"]
        used = {UPSTREAM.search(line).group(1) for line in log_lines(proxy)[seen:]}
        assert len(used) == 1 and used <= ports, used
        assert served_by(proxy, route["value"]) in used
        # the session cookie: Secure behind TLS (X-Forwarded-Proto), never readable by page script
        cookie = next(c for c in first.cookies() if c["name"] == "mmrb_session")
        assert cookie["secure"] and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert "mmrb_session" not in a.evaluate("document.cookie")
        assert {c["name"]: c["secure"] for c in first.cookies()} == {
            "mmrb_route": True,
            "mmrb_session": True,
            "_streamlit_xsrf": True,  # Streamlit's own, made Secure by nginx
        }
        a.get_by_text("Question 0: what is in the picture?").wait_for()
        for k in ("1", "9", "a", "Enter"):  # left correct, right wrong, prefer A, save
            a.keyboard.press(k)
        a.get_by_text("Question 1: what is in the picture?").wait_for(timeout=45_000)
        from curate.store import Store

        with Store(db, images=Path(images)) as s:
            assert s.get_label("p0", "alice") is not None
        # another browser, routed to the other process (a routing key nginx sends there)
        other = (ports - used).pop()
        key = next(k for k in (f"k{n}" for n in range(200)) if served_by(proxy, k) == other)
        second.add_cookies([{"name": "mmrb_route", "value": key, "url": proxy.url}])
        b = second.new_page()
        seen = len(log_lines(proxy))
        sign_in(b, proxy.url, "alice")
        assert {UPSTREAM.search(line).group(1) for line in log_lines(proxy)[seen:]} == {other}
        b.get_by_text("Question 1: what is in the picture?").wait_for(timeout=45_000)  # p0 is done
        assert "1 labelled, 0 skipped of 6" in b.locator("[data-testid=stProgress]").inner_text()
    finally:
        first.close()
        second.close()
