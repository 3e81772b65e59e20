"""Which version of the store's guidelines a Label Studio annotation was made under.

Label Studio keeps one instruction text per project and no history of it, so each push that
shows the store's guidelines records (in a store setting) the version it showed and when. A
pulled annotation gets the last version pushed before it was created; none when it predates
the first such push, or when the project's instructions are no longer the last version's
(edited in Label Studio by hand, or pushed from a file with --guidelines): unknown, not
guessed."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

from curate.store import Store

from .client import Client


def _key(client: Client, project_id: int) -> str:
    return f"labelstudio.guidelines:{client.url}#{project_id}"


def record_push(store: Store, client: Client, project_id: int, version: int | None) -> None:
    """After a push whose instructions are the store's guidelines ``version`` (None: another
    text): the version shown from now on."""
    history = _history(store, client, project_id)
    if history and history[-1][0] == version:
        return
    history.append((version, datetime.now(UTC).isoformat(timespec="microseconds")))
    store.set_setting(_key(client, project_id), json.dumps(history))


def _history(store: Store, client: Client, project_id: int) -> list[tuple[int | None, str]]:
    raw = store.get_setting(_key(client, project_id))
    return [(v, at) for v, at in json.loads(raw)] if raw else []


def version_at(
    store: Store, client: Client, project_id: int, instructions: str, rendered: Callable[[str], str]
) -> Callable[[str | None], int | None]:
    """For the project as it is now (``instructions``; ``rendered``: the guidelines' Markdown as
    a push shows it): the guidelines version of an annotation created at a UTC ISO time."""
    history = _history(store, client, project_id)
    last = history[-1][0] if history else None
    shown = store.guidelines(last) if last is not None else None
    if shown is None or rendered(shown.text) != instructions:
        return lambda _created: None

    def at(created: str | None) -> int | None:
        if created is None:
            return None
        before = [v for v, pushed in history if pushed <= created]
        return before[-1] if before else None

    return at
