"""One background thread that commits what a run produces, in batches.

Sampling and judging hand each result to ``put`` as it arrives (from the event loop: it never
blocks) and a thread commits them. A batch is committed when ``flush_every`` results are
waiting or ``flush_interval`` seconds after the first of them arrived, whichever comes first,
and takes everything waiting then, so a slow commit never lets a backlog build up. That is
the durability window: a process killed at any moment loses at most the results of one
interval plus one commit, which a resumed run asks for again.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Stop:
    pass


_STOP = _Stop()


class BatchWriter(Generic[T]):
    def __init__(
        self,
        commit: Callable[[list[T]], None],
        *,
        flush_every: int = 64,
        flush_interval: float = 0.05,
        name: str = "store-writer",
    ):
        self._commit = commit
        self.flush_every = max(1, flush_every)
        self.flush_interval = flush_interval
        self.committed = 0  # results in committed batches
        self.error: BaseException | None = None  # the commit that failed; nothing is committed after it
        self._q: queue.SimpleQueue[T | _Stop] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, item: T) -> None:
        """Queue one result; raises the commit error once a commit has failed."""
        if self.error is not None:
            raise self.error
        self._q.put(item)

    def close(self) -> None:
        """Commit what is queued, stop the thread; raises the commit error if one failed."""
        self._q.put(_STOP)
        self._thread.join()
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        stopping = False
        while not stopping:
            batch: list[T] = []
            first = self._q.get()
            deadline = time.monotonic() + self.flush_interval
            item = first
            while True:
                if isinstance(item, _Stop):
                    stopping = True
                else:
                    batch.append(item)
                try:
                    if stopping or len(batch) >= self.flush_every:
                        item = self._q.get_nowait()  # everything waiting goes in this batch
                    else:
                        item = self._q.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
            if batch and self.error is None:
                try:
                    self._commit(batch)
                    self.committed += len(batch)
                except BaseException as e:  # handed to the producer by put() and close()
                    self.error = e
