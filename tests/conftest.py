from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from tests.ingest_helpers import assert_nothing_written
from tests.support.services import begin_noting, end_noting, ensure_postgres, new_pg_database, unavailable
from tests.support.streamlit_server import CHROMIUM, CHROMIUM_ARGS, seed_store

# left out by --quick (the inner loop): Chromium, a Label Studio server, and what takes more
# than a few seconds (the README's walkthrough, the benchmarks, the concurrency runs); and the
# store is tested on SQLite alone (no PostgreSQL: a new database per test is most of a store
# test's time). ./run test runs them all.
LEFT_OUT_BY_QUICK = ("browser", "labelstudio", "slow")

# No property test here is about speed: Hypothesis's 200 ms deadline and its too-slow health
# check only make them fail on a loaded machine (an example of 8 ms taking 300 ms).
settings.register_profile("mmrb", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("mmrb")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick",
        action="store_true",
        help="leave out the browser, Label Studio and slow tests (the inner loop: ./run test --quick)",
    )


_STARTED = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    # the controlling process (not an xdist worker) of a run no other run started keeps the list
    # of the services the run starts; its workers, started after this, inherit the variable
    if not hasattr(config, "workerinput"):
        path = begin_noting()
        if path is not None:
            config.stash[_STARTED] = path


def pytest_unconfigure(config: pytest.Config) -> None:
    # every worker is done by now: stop the PostgreSQL cluster the run started, not one it found running
    end_noting(config.stash.get(_STARTED, None))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("quick"):
        return
    keep: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        (left_out if any(item.get_closest_marker(m) for m in LEFT_OUT_BY_QUICK) else keep).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # the store's backend: PostgreSQL as well as SQLite only for the tests of store semantics
    # (transactions, locking, migrations, SQL dialect), marked both_backends, and not under
    # --quick; everything above the store goes through the same Store API and runs on SQLite alone
    both = metafunc.definition.get_closest_marker("both_backends") is not None
    both = both and not metafunc.config.getoption("quick")
    for name in ("backend", "module_backend"):
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, ["sqlite", "postgres"] if both else ["sqlite"], indirect=True)


@pytest.fixture(autouse=True, scope="session")
def production_password_hasher():
    """Tests hash passwords at argon2's cheapest cost, as Django's documentation advises for
    test suites: the production cost (0.09 s of CPU a hash or a check) was a tenth of the
    --quick run. What the tests check is which hash is made and checked, and when; argon2
    reads the cost from each hash it checks. Yields the production hasher, for the test of
    its parameters (tests/test_app_logic.py); the servers the browser tests start use it."""
    from argon2 import PasswordHasher
    from argon2.profiles import CHEAPEST

    from annotate import auth

    production = auth._hasher
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(auth, "_hasher", PasswordHasher.from_parameters(CHEAPEST))
        yield production


@pytest.fixture
def backend(request) -> str:
    """The store backend of a test, sqlite or postgres (see pytest_generate_tests)."""
    return request.param


@pytest.fixture(scope="module")
def module_backend(request) -> str:
    """The same for a store or server that a module's tests share (made once per backend)."""
    return request.param


@pytest.fixture(params=["in place", "in a child"])
def both_readings(request, monkeypatch):
    """The test twice: the file's rows checked in the importing process, as small files are,
    and in a child process, as large files are (curate/ingest/rows.py)."""
    from curate.ingest import rows

    if request.param == "in a child":
        monkeypatch.setattr(rows, "_child_worthwhile", lambda path: True)
    return request.param


@pytest.fixture(scope="session")
def pg_server() -> str:
    return ensure_postgres()


@pytest.fixture
def pg_url(pg_server):
    url, drop = new_pg_database(pg_server)
    yield url
    drop()


@pytest.fixture
def db_url(request, backend, tmp_path) -> str:
    """A fresh, empty store location (on both backends for a test marked both_backends)."""
    if backend == "sqlite":
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
@pytest.fixture(scope="module")
def empty_store(module_backend, tmp_path_factory):
    """One store per backend for a module's bad-input tests: each of them must leave it
    empty (asserted), so sharing it is both cheaper and a check of its own."""
    from curate.store import Store

    tmp = tmp_path_factory.mktemp("empty-store")
    drop = None
    if module_backend == "sqlite":
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
    """A seeded store (on both backends for a test marked both_backends), and the app pointed at it."""
    yield from _app_store(db_url, tmp_path / "images", monkeypatch)


@pytest.fixture
def sqlite_env(tmp_path, monkeypatch):
    """The same on SQLite alone."""
    yield from _app_store(str(tmp_path / "app.db"), tmp_path / "images", monkeypatch)
