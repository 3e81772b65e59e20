"""The lead's dashboards in a real headless Chromium, on the bundled sample with labels: the
lead lands on Progress, and Progress and Agreement draw their charts (vega-embed) without an
error; on the sample with a careless annotator and gold (tests/support/quality_sample.py),
the Quality page alerts, plots, pauses and resumes, and refuses a bad gold upload; the lead
changes a role and signs a user out on the Annotators page, and its audit trail lists both. A
screenshot of each goes to $MMRB_SCREENSHOTS (default: this test's tmp dir)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.labelled_sample import labelled_sample
from tests.support.quality_sample import CARELESS, careless_gold_alert, quality_sample
from tests.support.services import unavailable
from tests.support.streamlit_server import CHROMIUM, StreamlitServer, settled, wait_cookie, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHART = '[data-testid="stVegaLiteChart"]'
GRID = "[data-testid=stDataFrame]"
DRAWN = f"{CHART} canvas, {CHART} svg.marks"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    d = tmp_path_factory.mktemp("lead")
    info = labelled_sample(d / "sample.db")
    with StreamlitServer(info.db, info.images, log=d / "streamlit.log") as srv:
        srv.sample = info
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
    sign_in_lead(page, server.url)
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


def test_at_first_start_the_lead_s_agreement_page_shows_the_example_labels(page, tmp_path):
    """The demo store as the app builds it on first start (annotate/demo.py), nobody having
    labelled yet: the example labels give the lead's Agreement page its figures."""
    from annotate import demo

    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} is not installed (tests/setup-system.sh installs it)")
    info = demo.ensure_sample(tmp_path / "sample.db")
    with StreamlitServer(info.db, info.images, log=tmp_path / "streamlit.log") as srv:
        sign_in_lead(page, srv.url)
        page.goto(srv.url + "/admin_agreement")
        page.get_by_role("heading", name="Agreement").wait_for(timeout=45_000)
        assert charts_drawn(page, 3) == 3  # alpha per category, kappa heatmap, majority
        text = page.locator("[data-testid=stMain]").inner_text()
        assert all(name in text for name in ("ada", "grace", "alan")), text[:2000]
        assert page.locator("[data-testid=stException]").count() == 0
        assert not page.errors, page.errors


MATRIX_COLUMN = """() => Array.from(document.querySelector('[data-testid=stDataFrame] table')
  .querySelectorAll('tbody tr')).map((r) => r.children[r.children.length - 1].textContent)"""


def test_the_agreement_matrix_holds_numbers_and_sorts_them_as_numbers(page, server):
    """Issue 28: alpha was text, so the table sorted "-0.3" after "-0.5". The matrix's cells
    are numbers (the grid's accessible table holds them unformatted), an undefined one empty;
    sorted by a field from its column menu, they come in numeric order."""
    sign_in_lead(page, server.url)
    page.goto(server.url + "/admin_agreement")
    page.get_by_role("heading", name="Agreement").wait_for(timeout=45_000)
    charts_drawn(page, 3)
    page.wait_for_selector(f"{GRID} table tbody tr", state="attached", timeout=45_000)
    grid = page.locator(GRID).first
    heads = grid.locator("thead th").all_text_contents()
    assert heads[0] == "Category" and "Preference" in heads, heads
    names = grid.locator("tbody tr td:first-child").all_text_contents()
    assert "All categories" in names and not any("/" in n or "_" in n for n in names), names  # human names
    before = page.evaluate(MATRIX_COLUMN)
    values = [float(v) for v in before if v != ""]  # every cell a number or empty: never "undefined" nor "0.000 [..."
    assert len(set(values)) >= 2, before
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] - 16, box["y"] + 17)  # the last column's menu
    page.get_by_text("Sort ascending").click()
    page.wait_for_function(f"(b) => JSON.stringify(({MATRIX_COLUMN})()) != JSON.stringify(b)", arg=before)
    after = [float(v) for v in page.evaluate(MATRIX_COLUMN) if v != ""]
    assert after == sorted(values), after
    page.get_by_text("Every figure: pairs, labels").click()  # the detailed table too
    wait_idle(page)
    got = fits(page, 1366)
    assert len(got["tables"]) == 2 and not any(got["tables"]), got  # no category name cut, no sideways scroll
    assert not page.errors, page.errors


def sign_in_lead(page, url: str) -> None:
    page.goto(url)
    wait_idle(page)
    page.get_by_role("textbox", name="Name").fill("lead")
    page.get_by_role("textbox", name="Password").fill("lead-demo")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Progress").wait_for(timeout=45_000)
    wait_cookie(page)


def test_the_adjudication_decision_is_on_the_first_screen_at_768_px_and_names_both_sides(page, server):
    """Issue 28: at 1366x768 the decision form was a screen and a half down. Once a pair is
    picked, "Record decision" is within the first screen without scrolling, and stays there while
    the evidence scrolls (docked); the rationales say left and right, the table first and
    second: the page says both (the responses' titles, the form, each side in the table as the
    annotator saw it)."""
    from annotate.adjudication import MMRB, disagreements
    from curate.sides import preference_to_screen
    from curate.store import Store
    from curate.wording import snippet

    info = server.sample
    with Store(info.db, info.images) as s:
        rows = disagreements(s)
        left_of = {(a.pair_id, a.annotator): a.left for a in s.assignments()}
    starts = [snippet(r.prompt, 60)[:40] for r in rows]
    # a pair of the mmrb form, named alone by its prompt, with a side picked by one who saw it flipped
    row, lab = next(
        (r, lab)
        for r, start in zip(rows, starts, strict=True)
        if r.scheme == MMRB and starts.count(start) == 1 and r is not rows[0]
        for lab in r.labels
        # an example label (annotate/example_labels.py) was imported: no side, no assignment
        if left_of.get((r.pair_id, lab.annotator)) == "second" and lab.preference in ("first", "second")
    )
    page.set_viewport_size({"width": 1366, "height": 768})
    sign_in_lead(page, server.url)
    page.goto(server.url + "/admin_adjudicate")
    page.get_by_role("button", name="Record decision").wait_for(timeout=45_000)
    wait_idle(page)
    start = snippet(row.prompt, 60)[:40]
    picker = page.locator(".st-key-adj_pair input")
    picker.click()
    picker.press_sequentially(start)
    page.get_by_role("option", name=re.compile("^" + re.escape(start))).click()
    page.wait_for_function("(s) => document.querySelector('.st-key-adj_pair input').value.startsWith(s)", arg=start)
    wait_idle(page)
    page.get_by_role("button", name="Record decision").wait_for(timeout=45_000)
    record = page.get_by_role("button", name="Record decision")
    box = shown_box(page, record)
    assert page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTop") == 0
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 768, box
    # both words for each side: the responses' titles, the form, and a label's side as its annotator saw it
    assert page.get_by_text("Left: first response", exact=False).count() == 1
    assert page.get_by_text("Right: second response", exact=False).count() == 1
    for side in ("First (left) is", "Second (right) is"):  # the form's fields render after the titles
        page.get_by_text(side).first.wait_for(timeout=15_000)
        assert page.get_by_text(side).count() == 1, side
    seen = f"{lab.preference} (their {preference_to_screen(lab.preference, 'second')})"
    assert seen in page.locator(".mmrb-labels").inner_text(), seen
    # scrolled to the labels, the decision is still on the screen
    page.locator(".mmrb-labels").scroll_into_view_if_needed()
    box = shown_box(page, record)
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 768, box
    assert not page.errors, page.errors


def shown_box(page, locator) -> dict | None:
    """The element's box once the page has settled and it is drawn: under load the run after a
    pick can still be replacing the form when the previous run's end is seen."""
    locator.wait_for(state="visible", timeout=45_000)
    wait_idle(page)
    settled(page)
    return locator.bounding_box()


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
    alert = page.get_by_text(careless_gold_alert(info, threshold=0.5, min_n=15))
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


def trail_once_it_shows(page, words: str, lacks: str = "\x00") -> str:
    """The audit grid's text (the accessible table the grid keeps inside its canvas) once it
    holds ``words`` and not ``lacks``: the rerun after a change may still be arriving."""
    page.wait_for_function(
        "([w, x]) => { const g = document.querySelectorAll('[data-testid=stDataFrame]');"
        " const t = g.length ? g[g.length - 1].querySelector('table')?.textContent || '' : '';"
        " return t.includes(w) && !t.includes(x); }",
        arg=[words, lacks],
        timeout=30_000,
    )
    return page.locator(GRID).last.locator("table").text_content() or ""


def test_the_lead_changes_a_role_and_signs_a_user_out_and_the_trail_shows_both(page, server, tmp_path):
    from curate.store import Store

    info = server.sample
    sign_in_lead(page, server.url)
    page.goto(server.url + "/admin_annotators")
    page.get_by_role("heading", name="Audit trail").wait_for(timeout=45_000)
    wait_idle(page)
    with Store(info.db, info.images) as s:
        target = s.annotators()[0].name  # the account the form selects first
        assert s.get_annotator(target).role == "annotator"
    page.get_by_text("Manage an account: role, sign-in, password").click()
    wait_idle(page)
    page.get_by_role("button", name="Sign out everywhere").click()
    page.get_by_text(f"of {target} ended.").wait_for(timeout=45_000)
    wait_idle(page)
    if not page.get_by_role("button", name="Change role").is_visible():  # the rerun folded it
        page.get_by_text("Manage an account: role, sign-in, password").click()
        wait_idle(page)
    page.get_by_role("radiogroup", name="Role").get_by_text("admin", exact=True).click()
    page.get_by_role("button", name="Change role").click()
    page.get_by_text(f"{target} is now admin; their sessions have ended.").wait_for(timeout=45_000)
    wait_idle(page)
    with Store(info.db, info.images) as s:
        assert s.get_annotator(target).role == "admin"
        assert [(e.who, e.what, e.subject) for e in s.audit(what="account")][:2] == [
            ("lead", "account.role", target),
            ("lead", "account.signout", target),
        ]
    page.locator(GRID).last.scroll_into_view_if_needed()
    text = trail_once_it_shows(page, "role changed")
    assert "role changed" in text and "signed out everywhere" in text and "role=admin" in text, text
    whole_page(page, screenshots(tmp_path) / "lead-audit.png")
    # filtered to the guidelines (the sample's version 1): the account changes are gone
    what = page.locator(".st-key-audit_what input")
    what.click()
    what.press_sequentially("guidelines")
    what.press("Enter")
    text = trail_once_it_shows(page, "guidelines changed", lacks="role changed")
    assert "guidelines changed" in text and "role changed" not in text, text
    assert page.locator("[data-testid=stException]").count() == 0
    assert not page.errors, page.errors


def test_an_audit_entry_with_long_details_reads_in_full_at_1440_px(page, server):
    """Issue 28: the trail's details were cut at 1440 px. The table fits the page (no sideways
    scrolling) and a selected entry's details show in full below it, each on its own row."""
    from curate.store import Store

    info = server.sample
    with Store(info.db, info.images) as s:
        run = next(e for e in s.audit(what="assign"))  # an assignment run: the longest details
    sign_in_lead(page, server.url)
    page.goto(server.url + "/admin_annotators")
    page.get_by_role("heading", name="Audit trail").wait_for(timeout=45_000)
    wait_idle(page)
    grid = page.locator(GRID).last
    grid.scroll_into_view_if_needed()
    settled(page)
    assert page.evaluate(OVERFLOW)["tables"][-1] == 0  # every column within the page
    trail_once_it_shows(page, "assignment run")
    rows = grid.locator("table tbody tr").all_text_contents()
    row = next(n for n, t in enumerate(rows) if "assignment run" in t)
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 16, box["y"] + 35 * (row + 1) + 17)  # the row's selection box
    full = page.locator("[data-testid=stTable]")
    full.wait_for(timeout=45_000)
    text = full.inner_text()
    for key, value in run.details.items():
        assert key in text and str(value) in text, (key, value, text)
    assert not page.errors, page.errors


# Each table's overflow sideways (its grid's scrolling width beyond its box) and each cut text of
# a metric's title or value, in px: 0 and none when everything fits the page.
OVERFLOW = """() => ({
  tables: Array.from(document.querySelectorAll('[data-testid=stDataFrame] .dvn-scroller'))
    .map((s) => s.scrollWidth - s.clientWidth),
  cut: Array.from(document.querySelectorAll(
    '[data-testid=stMetric] :is(.stMarkdownEllipsis, [data-testid=stMetricValue] div)'))
    .filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent),
})"""


def fits(page, width: int) -> dict:
    """OVERFLOW at ``width``, read once a table's grid is drawn (under load a run could still be
    drawing it: no table at all, read as nothing to check)."""
    page.set_viewport_size({"width": width, "height": 768})
    settled(page)
    wait_idle(page)
    page.locator("[data-testid=stDataFrame] .dvn-scroller").first.wait_for(timeout=45_000)
    return page.evaluate(OVERFLOW)


def test_progress_fits_1366_px_its_lead_is_no_row_and_accounts_are_words(page, server):
    sign_in_lead(page, server.url)
    charts_drawn(page, 3)
    got = fits(page, 1366)
    assert got["tables"] and not any(got["tables"]) and not got["cut"], got
    grid = page.locator("[data-testid=stDataFrame]").first
    assert grid.get_by_role("checkbox").count() == 0  # "Account" says active / disabled in words


def test_the_quality_table_fits_its_container_at_1366_and_1440_px(page, quality_server):
    sign_in_lead(page, quality_server.url)
    page.goto(quality_server.url + "/admin_quality")
    page.get_by_role("heading", name="Quality").wait_for(timeout=45_000)
    charts_drawn(page, 3)
    for width in (1366, 1440):
        got = fits(page, width)
        assert got["tables"] and not any(got["tables"]) and not got["cut"], (width, got)
