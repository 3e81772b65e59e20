"""The project's labelling guidelines: the store's current version, else the app's
--guidelines file (which seeds version 1 of a store without any); and when an annotator is
told that they changed."""

from __future__ import annotations

from pathlib import Path

from curate.store import Store

NONE = "No guidelines were set for this project."
SEEDED_BY = "--guidelines"  # the author of a version 1 seeded from the app's file


def _file_text(file: str | None) -> str | None:
    if file and Path(file).is_file():
        return Path(file).read_text(encoding="utf-8")
    return None


def guidelines_text(store: Store, file: str | None = None) -> str | None:
    g = store.guidelines()
    return g.text if g is not None else _file_text(file)


def guidelines_markdown(store: Store, file: str | None = None) -> str:
    """What the pages show: the guidelines, or a line saying there are none."""
    return guidelines_text(store, file) or NONE


def seed_from_file(store: Store, file: str | None) -> bool:
    """Version 1 from the app's --guidelines file when the store holds none; True when written.
    A file that cannot be read seeds nothing: the pages then show it when they can."""
    try:
        text = _file_text(file)
    except (OSError, UnicodeDecodeError):
        return False
    return text is not None and bool(text.strip()) and store.seed_guidelines(text, SEEDED_BY)


_SEEDED: set[tuple[str, str]] = set()


def seed_once(store: Store, file: str | None) -> None:
    """``seed_from_file`` once per process, store and file (the app calls it on every run)."""
    if file and (store.db, file) not in _SEEDED:
        seed_from_file(store, file)
        _SEEDED.add((store.db, file))


def changed_since_last_label(current: int | None, last: int | None) -> bool:
    """Whether to tell the annotator the guidelines changed since their last label.
    ``current``: the current version (None: none stored); ``last``: their last label's
    (None: no label yet, nothing to compare; 0: made before versions were recorded, which
    counts as version 1, the guidelines a store had when versions began)."""
    if current is None or last is None:
        return False
    return current > max(last, 1)


def notice(current: int) -> str:
    return (
        f"The guidelines changed since your last label (now version {current}). "
        "Please read them again (Guidelines, below or in the menu) before you go on."
    )
