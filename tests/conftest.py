from __future__ import annotations

import pytest

from tests.ingest_helpers import assert_nothing_written
from tests.support.services import ensure_postgres, new_pg_database, unavailable
from tests.support.streamlit_server import CHROMIUM, CHROMIUM_ARGS, seed_store

NEEDS_SYSTEM = ("browser", "labelstudio")  # Chromium, a Label Studio server: left out by --quick


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick",
        action="store_true",
        help="leave out the browser and Label Studio tests (the inner loop: ./run test --quick)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("quick"):
        return
    keep: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        (left_out if any(item.get_closest_marker(m) for m in NEEDS_SYSTEM) else keep).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep


@pytest.fixture(scope="session")
def pg_server() -> str:
    return ensure_postgres()


@pytest.fixture
def pg_url(pg_server):
    url, drop = new_pg_database(pg_server)
    yield url
    drop()


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path) -> str:
    """A fresh, empty store location on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(db_url, tmp_path):
    from curate.store import Store

    s = Store(db_url, images=tmp_path / "images")
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path):
    from curate.store import Store

    s = Store(str(tmp_path / "store.db"), images=tmp_path / "images")
    yield s
    s.close()


# the ingest tests' shared bad-input store: one per test module and backend
@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def empty_store(request, tmp_path_factory):
    """One store per backend for a module's bad-input tests: each of them must leave it
    empty (asserted), so sharing it is both cheaper and a check of its own."""
    from curate.store import Store

    tmp = tmp_path_factory.mktemp("empty-store")
    drop = None
    if request.param == "sqlite":
        url = str(tmp / "store.db")
    else:
        url, drop = new_pg_database(ensure_postgres())
    s = Store(url, images=tmp / "images")
    yield s
    s.close()
    if drop:
        drop()


@pytest.fixture
def bad_store(empty_store):
    """The shared empty store, checked empty before use and with its pixel limit reset."""
    from curate.images import DEFAULT_MAX_PIXELS

    assert_nothing_written(empty_store)
    empty_store.images.max_pixels = DEFAULT_MAX_PIXELS
    yield empty_store
    empty_store.images.max_pixels = DEFAULT_MAX_PIXELS


# -- the browser tests: Debian's Chromium through playwright (never `playwright install`) --------
@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page at 1400x1000 whose script errors are collected in ``page.errors``."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors
    yield pg
    ctx.close()


# -- the app over a seeded store (AppTest and the page tests) -----------------------------
def _app_store(db: str, images, monkeypatch):
    from annotate import ui
    from curate.store import Store

    s = Store(db, images=images)
    seed_store(s)
    monkeypatch.setenv("MMRB_DB", db)
    monkeypatch.setenv("MMRB_IMAGES", str(images))
    yield s
    ui.close_stores()
    s.close()


@pytest.fixture
def app_env(db_url, tmp_path, monkeypatch):
    """A seeded store on each backend, and the app pointed at it."""
    yield from _app_store(db_url, tmp_path / "images", monkeypatch)


@pytest.fixture
def sqlite_env(tmp_path, monkeypatch):
    """The same on SQLite alone."""
    yield from _app_store(str(tmp_path / "app.db"), tmp_path / "images", monkeypatch)
