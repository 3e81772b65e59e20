"""A scheme's label form in a real headless Chromium, with the keyboard alone: MMRB2's
six-point scale shown with the first response on the left and on the right (the stored score
mirrored), and aspects' per-response scores (six controls in view at 1366x768)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from curate.schemes import BUILT_IN, to_table
from tests.support.services import unavailable
from tests.support.streamlit_server import (
    CHROMIUM,
    OFF_SCREEN,
    PASSWORD,
    StreamlitServer,
    seed_store,
    settled,
    wait_cookie,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """p0 on mmrb2-pairwise (alice sees its first response on the left, bob on the right), p1 on aspects."""
    from curate.store import Store

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("app")
    db, images = str(d / "app.db"), d / "images"
    with Store(db, images=images) as s:
        seed_store(s, n_pairs=3, annotators=("alice", "bob"))
        for name, pair in (("mmrb2-pairwise", "p0"), ("aspects", "p1")):
            s.add_scheme(name, 1, to_table(BUILT_IN[name]))
            s.set_pair_scheme([pair], name, 1)
    with StreamlitServer(db, str(images), log=d / "streamlit.log") as srv:
        srv.db, srv.images = db, images
        yield srv


def sign_in(page, server, name: str) -> None:
    page.goto(server.url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(".st-key-mmrb-label", timeout=45_000)
    wait_idle(page)
    wait_cookie(page)


def wait_scheme_form(page, field: str, radios: int) -> None:
    """Until the scheme's form is there with its keymap, ``radios`` options of ``field`` and submit."""
    page.wait_for_function(
        "([f, n]) => window.__mmrbKeys && document.querySelector('.mmrb-keymap')"
        " && document.querySelectorAll('[class*=\"st-key-qs-' + f + '-\"] input[type=radio]').length >= n"
        " && document.querySelector('[class*=\"st-key-q_submit\"] button')",
        arg=[field, radios],
        timeout=45_000,
    )
    wait_idle(page)


def stored(server, pair: str, who: str):
    from curate.store import Store

    with Store(server.db, images=server.images) as s:
        return s.get_assignment(pair, who).left, s.get_label(pair, who)


@pytest.mark.parametrize(("who", "left", "score"), [("alice", "first", 6), ("bob", "second", 1)])
def test_the_six_point_scale_by_keyboard_alone_mirrored_when_shown_flipped(page, server, who, left, score):
    sign_in(page, server, who)
    wait_scheme_form(page, "score", 6)
    assert page.get_by_text("6 left much better  (6)").is_visible()
    page.keyboard.press("6")  # point 6, "left much better"
    page.wait_for_function(
        "() => document.querySelectorAll('[class*=\"st-key-qs-score-\"] input[type=radio]')[5].checked"
    )
    page.keyboard.press("Enter")
    page.get_by_text("Question 1").first.wait_for(timeout=45_000)
    shown_left, got = stored(server, "p0", who)
    assert shown_left == left
    assert (got.ratings, got.scheme_version) == ({"score": score}, 1)
    assert not page.errors, page.errors


def test_aspects_fit_one_screen_and_are_answered_by_keyboard(page, server):
    sign_in(page, server, "alice")
    if page.locator('[class*="st-key-qs-score-"]').count():  # p0 still open (the test above not run)
        wait_scheme_form(page, "score", 6)
        page.keyboard.press("3")
        page.keyboard.press("Enter")
    wait_scheme_form(page, "ethics", 8)
    page.set_viewport_size({"width": 1366, "height": 768})
    settled(page)
    controls = {
        f"{a} {side}": f'[class*="st-key-qs-{a}-{side}-"] [role=radiogroup]'
        for a in ("helpfulness", "faithfulness", "ethics")
        for side in ("left", "right")
    } | {
        "preference": '[class*="st-key-qs-preference-all-"] [role=radiogroup]',
        "flag": '[class*="st-key-q_flag"] [role=radiogroup]',
        "rationale": '[class*="st-key-qs-rationale-all-"] textarea',
        "submit": '[class*="st-key-q_submit"] button',
    }
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "annotate-scheme-aspects.png"))
    assert page.evaluate(OFF_SCREEN, controls) == {}
    # the scheme's keys: helpfulness 1-4 left, 5-8 right; faithfulness 9 0 q w, y i o p; ethics g h j k, l x b n
    for k in ("4", "5", "w", "y", "k", "l", "a", "e"):
        page.keyboard.press(k)
    page.keyboard.type("left is clearer")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.get_by_text("Question 2").first.wait_for(timeout=45_000)
    left, got = stored(server, "p1", "alice")
    assert left == "second"  # alice sees p1 flipped: her left is the second response
    assert dict(got.ratings) == {
        "helpfulness_first": 1,
        "helpfulness_second": 4,
        "faithfulness_first": 1,
        "faithfulness_second": 4,
        "ethics_first": 1,
        "ethics_second": 4,
        "preference": "second",
    }
    assert (got.preference, got.rationale) == ("second", "left is clearer")
    assert not page.errors, page.errors
