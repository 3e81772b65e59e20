"""The store's batch writer (curate/store/writer.py), which sampling and judging share."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.store.writer import BatchWriter


class Recorder:
    def __init__(self, fail_on: int | None = None):
        self.batches: list[list[int]] = []
        self.fail_on = fail_on
        self.lock = threading.Lock()

    def __call__(self, batch: list[int]) -> None:
        if self.fail_on is not None and self.fail_on in batch:
            raise OSError("disk full")
        with self.lock:
            self.batches.append(list(batch))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 300), every=st.integers(1, 50), interval=st.sampled_from([0.0, 0.001, 0.01]))
def test_every_result_is_committed_once_in_order(n, every, interval):
    rec = Recorder()
    w = BatchWriter(rec, flush_every=every, flush_interval=interval)
    for i in range(n):
        w.put(i)
    w.close()
    assert [x for b in rec.batches for x in b] == list(range(n)) and w.committed == n
    assert all(rec.batches)  # no empty commits


def test_a_batch_waits_for_the_interval_unless_it_is_full():
    rec = Recorder()
    w = BatchWriter(rec, flush_every=5, flush_interval=30.0)
    for i in range(3):
        w.put(i)
    # until the writer holds the three: a writer that did not wait for the interval would have
    # committed them as a batch of their own by the time the next two arrive
    deadline = time.monotonic() + 10
    while not w._q.empty() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert rec.batches == []  # three waiting, the interval not over: nothing committed yet
    for i in range(3, 5):
        w.put(i)
    deadline = time.monotonic() + 10
    while not rec.batches and time.monotonic() < deadline:
        time.sleep(0.01)
    assert rec.batches == [[0, 1, 2, 3, 4]]  # full: committed at once
    w.put(5)
    w.close()  # closing commits what waits without waiting out the interval
    assert rec.batches == [[0, 1, 2, 3, 4], [5]]


def test_a_failed_commit_stops_the_writer_and_reaches_the_producer():
    rec = Recorder(fail_on=3)
    w = BatchWriter(rec, flush_every=1, flush_interval=0.0)
    for i in range(3):
        w.put(i)
    deadline = time.monotonic() + 10
    while w.committed < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    w.put(3)
    while w.error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(OSError, match="disk full"):
        w.put(4)
    with pytest.raises(OSError, match="disk full"):
        w.close()
    assert [x for b in rec.batches for x in b] == [0, 1, 2] and w.committed == 3
