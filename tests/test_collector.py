"""curate.collector.fewer_collections: the collector tuned inside, as it was after (an error too)."""

from __future__ import annotations

import gc

import pytest

from curate.collector import fewer_collections


def test_the_collector_is_as_it_was_after_even_on_an_error():
    before = (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())
    with fewer_collections():
        assert gc.get_threshold()[0] > before[0][0]  # young collections less often inside
        assert gc.get_freeze_count() >= before[1]
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("a failed stage")
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before
