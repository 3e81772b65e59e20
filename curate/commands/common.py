"""What every command parses the same way: the store options, files of ids, comma lists, the
response-size limit, missing images, and files written whole.

The annotate and mmrb_eval commands use it too. Nothing heavy is imported at module level:
``mmrb --help`` loads every command module."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import MmrbError

if TYPE_CHECKING:
    from ..sampling import ModelSpec
    from ..store import Store


def add_store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default=None,
        help="SQLite file or postgresql:// URL (default: $MMRB_DB, else ./mmrb.db)",
    )
    p.add_argument("--images", default=None, help="image folder (default: $MMRB_IMAGES, else beside the SQLite file)")


# the store options a user may give before the command too (`mmrb --db X status`): parsed by
# the top-level parser into these names, then moved onto the command's own (one meaning each)
GLOBAL_STORE_OPTIONS = (("--db", "db"), ("--images", "images"))


def add_global_store_options(parser: argparse.ArgumentParser) -> None:
    """--db and --images before the command, for every command that takes them."""
    parser.add_argument(
        "--db", dest="global_db", metavar="DB", default=None, help="the store, for the command that follows"
    )
    parser.add_argument(
        "--images", dest="global_images", metavar="DIR", default=None, help="the image folder, likewise"
    )


def apply_global_store_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The store options given before the command, as if given after it; a usage error when the
    command takes none or they were given on both sides with different values."""
    for flag, dest in GLOBAL_STORE_OPTIONS:
        value = getattr(args, f"global_{dest}", None)
        if value is None:
            continue
        if not hasattr(args, dest):
            parser.error(f"mmrb {args.command} takes no {flag} (it does not open the store)")
        mine = getattr(args, dest)
        if mine is not None and mine != value:
            parser.error(f"{flag} given before the command ({value}) and after it ({mine}): give it once")
        setattr(args, dest, value)


def store_problem(db: str, *, create: bool) -> str | None:
    """Why a command cannot open the SQLite file ``db`` (None when it can; a URL is the
    database's own to refuse). Only a command that starts a store (``create``) may name a file
    that does not exist yet: elsewhere a mistyped path would silently make an empty store."""
    from ..store import is_url

    if is_url(db):
        return None
    path = Path(db)
    if path.is_dir():
        return f"--db {db} is a folder: give the SQLite file in it (e.g. {path / 'mmrb.db'})"
    if path.exists():
        return None
    folder = path.parent
    nearest = next(p for p in path.parents if p.exists())  # the root at worst
    if not nearest.is_dir():
        return f"no store at {db}: {nearest} is a file, not a folder"
    if not folder.exists() and not create:  # a command that starts a store makes its folder
        return f"no store at {db}: the folder {folder} does not exist"
    if not create:
        return f"no store at {db}; `mmrb ingest` creates one (give --db or set MMRB_DB for another)"
    return None


def open_store(args: argparse.Namespace, *, create: bool = False) -> Store:
    """The store of --db and --images (a context manager: closed when the command is done).
    Without ``create`` the SQLite file must exist already (see ``store_problem``)."""
    from ..store import Store, resolve_db

    db = getattr(args, "db", None)
    problem = store_problem(resolve_db(db), create=create)
    if problem:
        raise MmrbError(problem)
    return Store(db, getattr(args, "images", None))


def names(value: str | None) -> list[str] | None:
    """A comma-separated list without blanks; None when the option was not given."""
    return [n.strip() for n in value.split(",") if n.strip()] if value else None


def read_ids(path: str | None) -> list[str] | None:
    """The ids of a file with one id per line (blank lines skipped); None without a file."""
    if not path:
        return None
    try:
        return [ln.strip() for ln in Path(path).read_text(encoding="utf-8").splitlines() if ln.strip()]
    except UnicodeDecodeError as e:
        raise MmrbError(f"{path}: not valid UTF-8 (byte 0x{e.object[e.start]:02x} at offset {e.start})") from None
    except OSError as e:
        raise MmrbError(f"cannot read {path}: {e.strerror}") from None


def add_json_option(p: argparse.ArgumentParser, what: str = "the report") -> None:
    """--json of a command that reports: its document's keys are listed in docs/json.md."""
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON (its schema: docs/json.md)")


def print_json(doc: object) -> None:
    """A command's --json: one JSON document on stdout (warnings and errors stay on stderr)."""
    import json

    print(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False))


def add_response_limit_option(p: argparse.ArgumentParser, config: str) -> None:
    """--max-response-chars of a command that asks endpoints; ``config`` names the file whose
    ``max_response_chars`` applies without it ("models file", "judge file")."""
    p.add_argument(
        "--max-response-chars",
        type=int,
        default=None,
        metavar="N",
        # curate.llm.DEFAULT_MAX_RESPONSE_CHARS, written out: importing curate.llm (asyncio) would slow
        # every --help; tests/test_commands_common.py checks that the two agree
        help=f"answers longer than N characters are failures (default: the {config}'s max_response_chars, else 200000)",
    )


def add_missing_images_option(p: argparse.ArgumentParser, *, judging: bool, config: str | None = None) -> None:
    """--allow-missing-images: without it an image file that does not exist stops the command.
    ``judging``: the pair is judged on its text alone (else the image is recorded as missing);
    ``config``: the file whose ``allow_missing_images`` applies without the option."""
    then = "judge its pair on the text alone" if judging else "record it as missing (the app shows a placeholder)"
    default = f" (default: the {config}'s allow_missing_images)" if config else ""
    p.add_argument(
        "--allow-missing-images",
        action="store_true",
        default=None if config else False,
        help=f"for an image file that does not exist, {then} instead of refusing it{default}",
    )


def response_limit(args: argparse.Namespace) -> int | None:
    """--max-response-chars, checked (None: the models or judge file's own limit)."""
    n = args.max_response_chars
    if n is not None and n < 1:
        raise MmrbError(f"--max-response-chars must be at least 1, got {n}")
    return n


def load_models(path: str, args: argparse.Namespace) -> list[ModelSpec]:
    """The models file of `mmrb sample`, with --max-response-chars applied to every endpoint."""
    from dataclasses import replace

    from ..sampling import load_models as load

    specs = load(path)
    limit = response_limit(args)
    if limit is None:
        return specs
    return [replace(s, endpoint=replace(s.endpoint, max_response_chars=limit)) for s in specs]


def write_whole(path: str, text: str | bytes) -> None:
    """Write ``path`` (text, or bytes as a PNG's) through a temporary file beside it: a reader
    never sees half of it."""
    tmp = Path(path + ".tmp")
    try:
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except BaseException:  # a full disk, an interrupt: no half-written file is left beside it
        tmp.unlink(missing_ok=True)
        raise


def cli_actor() -> str:
    """Who the audit trail names for a change made from the command line: ``cli:<login>``."""
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except (OSError, KeyError):  # no login name in the environment nor the password database
        return "cli"


def add_quiet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress bar (it is shown on a terminal only)")


def progress_shown(quiet: bool, stream: TextIO) -> bool:
    """A progress bar is drawn on a terminal only, and not with --quiet: never into a file, a
    pipe or a test's capture."""
    return not quiet and stream.isatty()


class Counter:
    """One bar of a command's progress display. Its methods are the callbacks the long
    functions take: ``progress(done, total)`` (the judging runner's), ``advance(n)``, ``step(name)``."""

    def __init__(self, bar: Any, task: Any, *, refresh: bool) -> None:
        self._bar, self._task, self._refresh = bar, task, refresh

    def progress(self, done: int, total: int | None = None) -> None:
        self._bar.update(self._task, completed=done, total=total, refresh=self._refresh)

    def advance(self, n: int = 1) -> None:
        self._bar.update(self._task, advance=n, refresh=self._refresh)

    def note(self, text: str) -> None:
        """The words after the counts (e.g. "failed 3")."""
        self._bar.update(self._task, note=text, refresh=self._refresh)

    def step(self, name: str) -> None:
        """A new step starts: the previous one is done (none before the first)."""
        started = self._bar.tasks[self._task].fields.get("started", False)
        self._bar.update(self._task, description=name, advance=1 if started else 0, started=True, refresh=self._refresh)


class Bars:
    """The progress display of one command. Hidden (off a terminal, or --quiet), ``counter``
    gives None: the caller then passes no callback at all, so no per-item work is done."""

    def __init__(self, bar: Any = None, *, refresh: bool = False) -> None:
        self._bar, self._refresh = bar, refresh

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def counter(self, description: str, total: int | None = None) -> Counter | None:
        """A new bar of ``total`` units (None: not known, the count alone is shown)."""
        if self._bar is None:
            return None
        task = self._bar.add_task(description, total=total, note="")
        return Counter(self._bar, task, refresh=self._refresh)

    def callback(self, description: str, total: int | None = None) -> Callable[[int, int], None] | None:
        """``progress(done, total)`` of a new bar, or None when hidden."""
        c = self.counter(description, total)
        return c.progress if c is not None else None

    def named(self, prefix: str = "") -> Callable[[str, int, int], None] | None:
        """``progress(name, done, total)`` with a bar per name (described ``prefix + name``),
        each made as its name first reports; None when hidden."""
        if self._bar is None:
            return None
        counters: dict[str, Counter] = {}

        def progress(name: str, done: int, total: int) -> None:
            counter = counters.get(name)
            if counter is None:
                counter = counters[name] = Counter(
                    self._bar, self._bar.add_task(prefix + name, total=total, note=""), refresh=self._refresh
                )
            counter.progress(done, total)

        return progress


def progress_console() -> Any:
    """Where bars are drawn: stderr, so that the output on stdout stays clean (a test may put
    its own console here)."""
    from rich.console import Console

    return Console(stderr=True)


@contextmanager
def progress_bars(*, quiet: bool = False, thread: bool = True) -> Iterator[Bars]:
    """The one progress display of the commands: description, bar, done/total, rate per
    second, elapsed, ETA and a note, on stderr, gone when done (the report follows on stdout).
    ``thread``: redraw on a timer (rich's thread); without it, redraw on each update -- for
    work that must stay single-threaded (an import forks a reader only from a lone thread)."""
    import sys

    if not progress_shown(quiet, sys.stderr):
        yield Bars()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        SpinnerColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Rate(ProgressColumn):
        """Units per second over rich's recent window (its TransferSpeedColumn speaks bytes)."""

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:>6.1f}/s" if speed is not None else "     -/s", style="progress.data.speed")

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description:<28}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[note]}"),
        console=progress_console(),
        transient=True,
        auto_refresh=thread,
        redirect_stdout=False,  # what a command prints on stdout goes there, bar or not
    ) as bar:
        yield Bars(bar, refresh=not thread)


@contextmanager
def steps(total: int, *, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """A progress bar over a command's ``total`` steps (see ``progress_bars``): call the
    function it gives with each step's name as the step starts. The pattern for a long
    command whose work has no finer count than its steps (`mmrb quality`, `mmrb build`)."""
    with progress_bars(quiet=quiet) as bars:
        counter = bars.counter("starting", total)
        if counter is None:
            yield lambda name: None
            return
        yield counter.step
        counter.progress(total, total)
