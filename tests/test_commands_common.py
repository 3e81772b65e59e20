"""What the commands parse alike (curate/commands/common.py), and the duplicates report that
`mmrb select --duplicates-only` prints."""

from __future__ import annotations

import argparse

import pytest

from curate.commands.common import (
    add_store_options,
    load_models,
    names,
    open_store,
    read_ids,
    response_limit,
    write_whole,
)
from curate.dedup import DuplicateGroup, DuplicatesReport, duplicate_lines, report_duplicates
from curate.errors import MmrbError
from curate.model import Item
from curate.selection import SelectReport


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, None),
        ("", None),
        ("a", ["a"]),
        (" a , b ,,c ", ["a", "b", "c"]),
        (" , ", []),
    ],
)
def test_names(value, expected):
    assert names(value) == expected


def test_read_ids_skips_blank_lines_and_names_the_file_it_cannot_read(tmp_path):
    f = tmp_path / "ids.txt"
    f.write_text("p1\n\n  p2  \n\n")
    assert read_ids(str(f)) == ["p1", "p2"] and read_ids(None) is None and read_ids("") is None
    with pytest.raises(MmrbError, match=r"cannot read .*gone\.txt: No such file"):
        read_ids(str(tmp_path / "gone.txt"))


def test_response_limit():
    assert response_limit(argparse.Namespace(max_response_chars=None)) is None
    assert response_limit(argparse.Namespace(max_response_chars=1)) == 1
    with pytest.raises(MmrbError, match="--max-response-chars must be at least 1, got 0"):
        response_limit(argparse.Namespace(max_response_chars=0))


def test_load_models_applies_the_limit_to_every_endpoint(tmp_path):
    f = tmp_path / "models.toml"
    f.write_text(
        '[[models]]\nbase_url = "http://x/v1"\nmodel = "a"\nmax_response_chars = 50\n'
        '[[models]]\nbase_url = "http://x/v1"\nmodel = "b"\n'
    )
    as_filed = load_models(str(f), argparse.Namespace(max_response_chars=None))
    assert as_filed[0].endpoint.max_response_chars == 50
    limited = load_models(str(f), argparse.Namespace(max_response_chars=9))
    assert [s.endpoint.max_response_chars for s in limited] == [9, 9] and [s.label for s in limited] == ["a", "b"]
    with pytest.raises(MmrbError, match="at least 1"):
        load_models(str(f), argparse.Namespace(max_response_chars=-1))


def test_write_whole_replaces_the_file_and_leaves_no_temporary(tmp_path):
    out = tmp_path / "board.md"
    out.write_text("old")
    write_whole(str(out), "new")
    assert out.read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["board.md"]


def test_store_options_open_the_store_they_name(tmp_path):
    p = argparse.ArgumentParser()
    add_store_options(p)
    args = p.parse_args(["--db", str(tmp_path / "s.db"), "--images", str(tmp_path / "img")])
    with pytest.raises(MmrbError, match="no store at"):  # a command that reads starts no store
        open_store(args)
    assert not (tmp_path / "s.db").exists()
    with open_store(args, create=True) as store:
        assert store.images.root == tmp_path / "img"
    assert (tmp_path / "s.db").exists()
    with open_store(args) as store:
        assert store.images.root == tmp_path / "img"


def test_duplicate_lines_and_the_duplicates_report():
    img = DuplicateGroup("image", "i1", ("i2", "i3"))
    prm = DuplicateGroup("prompt", "i4", ("i5",))
    assert duplicate_lines([]) == [] and DuplicatesReport(()).lines() == ["no duplicates found"]
    assert DuplicatesReport((img, prm)).lines() == [
        "duplicates: 2 items share an image with another, 1 item repeats another item's prompt and image",
        "  prompt: i5 duplicate i4",
        "  image: i2, i3 duplicate i1",
    ]
    many = [DuplicateGroup("image", f"k{i}", (f"d{i}",)) for i in range(12)]
    assert len(duplicate_lines(many)) == 11  # the count, then ten groups
    # the selection report ends with the same lines
    assert SelectReport(duplicates=[img, prm]).lines()[-3:] == DuplicatesReport((img, prm)).lines()


def test_report_duplicates_of_the_store(sqlite_store):
    with sqlite_store.write() as c:
        sqlite_store.add_items(
            [
                Item(id=i, prompt=p, category="c")
                for i, p in (("a", "Same question?"), ("b", "same  question?"), ("c", "Another one"))
            ],
            conn=c,
        )
    rep = report_duplicates(sqlite_store)
    assert rep.groups == (DuplicateGroup("prompt", "a", ("b",)),)
    assert rep.lines()[-1] == "  prompt: b duplicate a"


def _option(command: str, flag: str, sub: str | None = None) -> argparse.Action:
    import importlib

    mod = importlib.import_module(command)
    p = argparse.ArgumentParser()
    mod.add_arguments(p)
    if sub:
        p = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices[sub]
    return next(a for a in p._actions if flag in a.option_strings)


def test_the_commands_share_the_response_limit_and_missing_images_options():
    """--max-response-chars and --allow-missing-images come from one helper each: the same
    type, default and wording in every command, but for the file whose setting applies."""
    from curate.llm import DEFAULT_MAX_RESPONSE_CHARS

    limits = {
        c: _option(c, "--max-response-chars")
        for c in ("curate.commands.sample", "curate.commands.select", "mmrb_eval.commands.evaluate")
    }
    assert {(a.type, a.default, a.metavar) for a in limits.values()} == {(int, None, "N")}
    helps = {a.help.replace("judge file", "models file") for a in limits.values()}
    assert helps == {
        "answers longer than N characters are failures (default: the models file's max_response_chars, "
        f"else {DEFAULT_MAX_RESPONSE_CHARS})"
    }
    judged = _option("curate.commands.select", "--allow-missing-images")
    configured = _option("mmrb_eval.commands.evaluate", "--allow-missing-images")
    imported = _option("curate.commands.ingest", "--allow-missing-images", sub="items")
    assert (judged.default, configured.default, imported.default) == (False, None, False)  # None: the judge file's
    assert configured.help == judged.help + " (default: the judge file's allow_missing_images)"
    assert imported.help.replace(
        "record it as missing (the app shows a placeholder)", "judge its pair on the text alone"
    ) == (judged.help)
