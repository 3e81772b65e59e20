"""What every command parses the same way: the store options, files of ids, comma lists, the
response-size limit, missing images, and files written whole.

The annotate and mmrb_eval commands use it too. Nothing heavy is imported at module level:
``mmrb --help`` loads every command module."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

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


@contextmanager
def steps(total: int, *, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """A progress bar over a command's ``total`` steps on stderr (the output on stdout stays
    clean): call the function it gives with each step's name as the step starts. The pattern
    for a long command whose work has no finer count than its steps (`mmrb quality`)."""
    import sys

    if not progress_shown(quiet, sys.stderr):
        yield lambda name: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description:<28}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,  # gone when done: the report follows on stdout
    ) as bar:
        task = bar.add_task("starting", total=total)
        started = False

        def step(name: str) -> None:
            nonlocal started
            bar.update(task, description=name, advance=1 if started else 0)
            started = True

        yield step
        bar.update(task, completed=total)
