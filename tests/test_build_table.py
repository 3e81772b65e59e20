"""`mmrb build`'s table of pairs removed by each rule, per category: it fits 100 columns, in
blocks of categories when they are many, and every count reads back where it belongs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as hs

from curate.benchmark.filter import BuildDecision, FilterResult
from curate.commands.build import TABLE_WIDTH, render_removed
from curate.model import Pair

NAME = hs.text(alphabet="abcdefghijklmnopqrstuvwxyz_/:", min_size=1, max_size=40).filter(
    lambda s: s not in ("considered", "kept", "all", "rule")
)


def result(decisions: list[tuple[str, str | None]], rules: list[str]) -> FilterResult:
    return FilterResult(
        [BuildDecision(Pair(f"p{i}", "i", "a", "b", "t"), cat, by) for i, (cat, by) in enumerate(decisions)], rules
    )


def read_back(text: str) -> dict[tuple[str, str], int]:
    """(row, column) -> count, from every block of the table."""
    cells: dict[tuple[str, str], int] = {}
    for block in text.split("\n\n"):
        head, *rows = block.splitlines()
        columns = head.split()[1:]
        for row in rows:
            name, *values = row.split()
            assert len(values) == len(columns)
            for col, v in zip(columns, values, strict=True):
                assert (name, col) not in cells  # each cell once
                cells[name, col] = int(v)
    return cells


@given(
    rules=hs.lists(NAME, min_size=1, max_size=8, unique=True),
    cats=hs.lists(NAME, min_size=1, max_size=14, unique=True),
    data=hs.data(),
)
def test_every_count_reads_back_and_every_line_fits(rules, cats, data):
    decisions = data.draw(hs.lists(hs.tuples(hs.sampled_from(cats), hs.sampled_from([None, *rules])), min_size=1))
    res = result(decisions, rules)
    text = render_removed(res)
    assert max(len(line) for line in text.splitlines()) <= TABLE_WIDTH
    cells = read_back(text)
    considered = res.considered_per_category()
    assert {col for _, col in cells} == {*considered, "all"}
    for cat, n in considered.items():
        assert cells["considered", cat] == n
        assert cells["kept", cat] == sum(1 for c, by in decisions if c == cat and by is None)
        for r in rules:
            assert cells[r, cat] == sum(1 for c, by in decisions if c == cat and by == r)
    assert cells["considered", "all"] == len(decisions)


def test_the_samples_nine_categories_fit_in_blocks():
    # about 160 columns wide before, in one block
    cats = [
        "edit",
        "interleaved",
        "knowledge",
        "open_generation/correctness_task",
        "open_generation/preference_task",
        "reasoning",
        "safety",
        "t2i",
        "vqa",
    ]
    rules = ["adjudicated_exclude", "flagged", "min_labels", "agreement:correctness_first", "tie", "correctness_task"]
    text = render_removed(result([(c, None) for c in cats], rules))
    blocks = text.split("\n\n")
    assert len(blocks) > 1 and max(map(len, text.splitlines())) <= TABLE_WIDTH
    assert all(b.splitlines()[0].startswith("rule ") for b in blocks) and text.splitlines()[-1].endswith("9")


def test_a_narrow_table_is_one_block():
    text = render_removed(result([("vqa", None), ("vqa", "min_labels"), ("t2i", None)], ["min_labels"]))
    assert text.splitlines() == [
        "rule           t2i     vqa     all",
        "considered       1       2       3",
        "min_labels       0       1       1",
        "kept             1       1       2",
    ]
