"""Driving the annotation app through streamlit.testing.v1.AppTest (no browser): a new app,
signing in, the label form's widgets by role, and what a page says."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from tests.support.streamlit_server import PASSWORD

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def app_test(script: str = APP, timeout: float = 30):
    """An AppTest of a script. Every new AppTest scans the metadata of every installed
    distribution for Streamlit v2 components (0.37 s of CPU, a third of a page test here);
    what is installed does not change during a test run, so the scan is made once."""
    from streamlit.components.v2 import manifest_scanner
    from streamlit.testing.v1 import AppTest

    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)
    return AppTest.from_file(script, default_timeout=timeout)


def new_app():
    return app_test()


def sign_in(name: str, password: str = PASSWORD):
    at = new_app().run()
    at.text_input(key="signin_name").input(name)
    at.text_input(key="signin_password").input(password)
    at.button[0].click().run()
    assert not at.exception, at.exception
    return at


def form_keys(at) -> dict[str, str]:
    """The current pair's widget keys by role (q_left, q_right, q_pref, q_flag, q_rationale)."""
    out = {}
    for w in list(at.radio) + list(at.text_area):
        for role in ("q_left", "q_right", "q_pref", "q_flag", "q_rationale"):
            if w.key and w.key.startswith(role + "_"):
                out[role] = w.key
    return out


def submit(at):
    sub = next(b for b in at.button if b.key and b.key.startswith("q_submit_"))
    sub.click().run()
    assert not at.exception, at.exception
    return at


def label(at, left=None, right=None, pref=None, rationale=None, flag=None):
    k = form_keys(at)
    if left:
        at.radio(key=k["q_left"]).set_value(left)
    if right:
        at.radio(key=k["q_right"]).set_value(right)
    if pref:
        at.radio(key=k["q_pref"]).set_value(pref)
    if rationale is not None:
        at.text_area(key=k["q_rationale"]).input(rationale)
    if flag:
        at.radio(key=k["q_flag"]).set_value(flag)
    return submit(at)


def all_text(at) -> str:
    """What the page says: Markdown with its escapes undone (data strings are escaped by
    render.plain), and the HTML the prompt and responses are built as."""
    parts = []
    for kind in ("markdown", "caption", "text", "error", "warning", "info", "success", "title", "subheader"):
        parts += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", "\n".join(parts)).replace("\u2060", "")
    return "\n".join([text] + [e.proto.body for e in at.get("html")])
