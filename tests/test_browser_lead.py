"""The lead's dashboards in a real headless Chromium, on the bundled sample with labels: the
lead lands on Progress, and Progress and Agreement draw their charts (vega-embed) without an
error; on the sample with a careless annotator and gold (tests/support/quality_sample.py),
the Quality page alerts, plots, pauses and resumes, and refuses a bad gold upload. A
screenshot of each goes to $MMRB_SCREENSHOTS (default: this test's tmp dir)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.labelled_sample import labelled_sample
from tests.support.quality_sample import CARELESS, quality_sample
from tests.support.services import unavailable
from tests.support.streamlit_server import CHROMIUM, StreamlitServer, settled, wait_cookie, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHART = '[data-testid="stVegaLiteChart"]'
DRAWN = f"{CHART} canvas, {CHART} svg.marks"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("lead")
    info = labelled_sample(d / "sample.db")
    with StreamlitServer(info.db, info.images, log=d / "streamlit.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def quality_server(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("quality")
    info = quality_sample(d / "sample.db")
    with StreamlitServer(info.db, info.images, log=d / "streamlit.log") as srv:
        srv.sample = info
        yield srv


@pytest.fixture
def page(browser):
    """The shared Chromium's page (tests/conftest.py), at 1440x900, collecting console errors too."""
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # a page opened by URL makes Streamlit probe {page}/_stcore/... first (404): not an error of the page
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Failed to load" not in m.text else None)
    pg.errors = errors
    yield pg
    ctx.close()


def screenshots(tmp_path: Path) -> Path:
    d = Path(os.environ.get("MMRB_SCREENSHOTS") or tmp_path)
    d.mkdir(parents=True, exist_ok=True)
    return d


def charts_drawn(page, at_least: int) -> int:
    """Until ``at_least`` charts have drawn their marks; returns how many charts there are."""
    page.wait_for_function(
        f"n => document.querySelectorAll('{CHART}').length >= n"
        f" && Array.from(document.querySelectorAll('{CHART}')).every(c => c.querySelector('canvas, svg.marks'))",
        arg=at_least,
        timeout=45_000,
    )
    wait_idle(page)
    return page.locator(CHART).count()


def whole_page(page, path: Path) -> None:
    """A screenshot of the whole page (Streamlit scrolls inside its own element)."""
    height = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": 1440, "height": max(900, min(int(height) + 80, 6000))})
    settled(page)
    wait_idle(page)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})


def test_lead_lands_on_progress_and_both_dashboards_draw_their_charts(page, server, tmp_path):
    out = screenshots(tmp_path)
    page.goto(server.url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").fill("lead")
    page.get_by_role("textbox", name="Password").fill("lead-demo")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Progress").wait_for(timeout=45_000)
    wait_cookie(page)
    assert page.locator(".st-key-mmrb-label").count() == 0  # not the (empty) Label page
    assert charts_drawn(page, 3) == 3  # labels over time, seconds per label, label distribution
    assert page.locator("[data-testid=stDataFrame]").count() == 3
    whole_page(page, out / "lead-progress.png")

    page.goto(server.url + "/admin_agreement")
    page.get_by_role("heading", name="Agreement").wait_for(timeout=45_000)
    assert charts_drawn(page, 3) == 3  # alpha per category, kappa heatmap, majority
    for line in ("0.8: reliable", "0.667: tentative"):  # the reference lines are labelled in the chart
        assert page.locator(CHART).first.get_by_text(line).count() == 1, line
    whole_page(page, out / "lead-agreement.png")
    assert page.locator("[data-testid=stException]").count() == 0
    assert not page.errors, page.errors


def sign_in_lead(page, url: str) -> None:
    page.goto(url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").fill("lead")
    page.get_by_role("textbox", name="Password").fill("lead-demo")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Progress").wait_for(timeout=45_000)
    wait_cookie(page)


def set_number(page, label: str, value: str) -> None:
    box = page.get_by_role("spinbutton", name=label, exact=True)
    box.fill(value)
    box.press("Enter")
    wait_idle(page)


def test_the_lead_sees_the_careless_annotator_on_the_quality_page_pauses_and_resumes_them(
    page, quality_server, tmp_path
):
    from curate.store import Store

    out = screenshots(tmp_path)
    info = quality_server.sample
    sign_in_lead(page, quality_server.url)
    page.goto(quality_server.url + "/admin_quality")
    page.get_by_role("heading", name="Quality").wait_for(timeout=45_000)
    wait_idle(page)
    set_number(page, "Alert below", "0.50")
    set_number(page, "Labels a share needs (fewer: greyed)", "15")
    alert = page.get_by_text(
        f"{CARELESS}: gold 23.5% [9.6%, 47.3%] below 50.0% on correctness of the second response (17 labels)"
    )
    alert.wait_for(timeout=45_000)
    assert page.get_by_text("alice: ").count() == 0 and page.get_by_text("carol: ").count() == 0  # no alert
    # gold accuracy, agreement with the others' majority, Dawid-Skene, each with its threshold; then the bias
    assert charts_drawn(page, 4) == 4
    for n in range(3):
        assert page.locator(CHART).nth(n).get_by_text("alert below 50%").count() == 1, n
    assert page.locator(CHART).nth(3).get_by_text("left picks").count() >= 1  # the bias chart's legend
    titles = ("Accuracy on gold", "Agreement with the others' majority", "Dawid-Skene reliability", "Annotator bias")
    for title in titles:
        assert page.locator("[data-testid=stMarkdownContainer] strong").get_by_text(title, exact=True).count() == 1, (
            title
        )
    whole_page(page, out / "lead-quality.png")

    page.get_by_role("button", name="Pause every annotator with an alert").click()
    page.get_by_text("Paused: their queues serve nothing until resumed.").wait_for(timeout=45_000)
    wait_idle(page)
    with Store(info.db, info.images) as s:
        assert s.get_annotator(CARELESS).paused.startswith("automatic pause")
        assert s.get_annotator("alice").paused is None and s.get_annotator("carol").paused is None
    page.get_by_role("button", name="Resume").click()
    page.get_by_text(f"{CARELESS} is back in the queue.").wait_for(timeout=45_000)
    wait_idle(page)
    with Store(info.db, info.images) as s:
        assert s.get_annotator(CARELESS).paused is None

    # a gold file with a bad row: the rows named, nothing written
    before = len(Store(info.db, info.images).gold())
    bad = tmp_path / "gold.csv"
    bad.write_text("pair_id,preference\nno-such-pair,first\n")
    page.locator("[data-testid=stFileUploaderDropzoneInput]").set_input_files(str(bad))
    wait_idle(page)
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text("gold.csv:2 field 'pair_id'").wait_for(timeout=45_000)
    with Store(info.db, info.images) as s:
        assert len(s.gold()) == before
    assert (
        page.get_by_text("Qualification set", exact=False).count()
        + page.get_by_text("No qualification set", exact=False).count()
        >= 1
    )
    assert page.locator("[data-testid=stException]").count() == 0
    assert not page.errors, page.errors
