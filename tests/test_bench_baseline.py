"""bench/annotate.py --baseline-tree: another tree's store is made and read by that tree's own
code, in a subprocess (here the tree is this one, so the answers can be checked directly)."""

from __future__ import annotations

import pytest

from annotate.render import pair_token
from bench.annotate import _BUILD, _QUEUE, ROOT, in_tree
from curate.store import Store

# the bench of the browser (tests/test_suite.py: a module using it is not in --quick); subprocesses
pytestmark = pytest.mark.slow


def test_a_tree_builds_and_reads_its_own_store(tmp_path):
    db, images = str(tmp_path / "b.db"), tmp_path / "images"
    names = in_tree(ROOT, _BUILD, db, images, 12, 3, 2, 2)
    assert names == ["ann00", "ann01", "ann02"]
    queue, items, tokens = in_tree(ROOT, _QUEUE, db, images, "ann01", 4)
    with Store(db, images=images) as s:
        mine = [a.pair_id for a in s.assignments(annotator="ann01") if a.state == "open"][:4]
        assert queue == mine and len(queue) == 4
        assert items == {p.id: p.item_id for p in s.pairs(ids=mine)}
    assert tokens == {p: pair_token(p) for p in queue}


def test_a_tree_that_fails_is_one_line_naming_it(tmp_path):
    with pytest.raises(SystemExit) as e:
        in_tree(tmp_path, "raise SystemExit('no such bench here')")
    assert str(tmp_path) in str(e.value) and "no such bench here" in str(e.value)
