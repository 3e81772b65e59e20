"""Raw per-annotator labels: the file format (curate/formats/labels.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.errors import InputError
from curate.formats.labels import COLUMNS, FORMATS, RawLabel, read_labels, write_labels


def raw(pair_id: str = "p0", annotator: str = "ann", **more) -> RawLabel:
    base = dict(
        item_id=None,
        category=None,
        status="submitted",
        scheme=None,
        scheme_version=None,
        correctness_first=None,
        correctness_second=None,
        preference=None,
    )
    return RawLabel(pair_id=pair_id, annotator=annotator, **{**base, **more})


# -- the format --------------------------------------------------------------------------------
FULL = raw(
    "p1",
    "bea",
    item_id="it1",
    category="vqa",
    scheme="mmrb",
    scheme_version=1,
    correctness_first="correct",
    correctness_second="incorrect",
    preference="first",
    ratings={"z": 2, "a": ['x, "y"']},
    rationale='a "quoted", multi\nline text',
    flag="other",
    flag_note="odd",
    seconds=12.25,
    guidelines_version=3,
    gold=True,
    control=False,
    source="app",
    created_at="2026-01-01T00:00:00+00:00",
    updated_at="2026-01-02T00:00:00+00:00",
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_reads_back_what_it_wrote(fmt, tmp_path):
    path = tmp_path / f"labels.{fmt}"
    rows = [FULL, raw("p2", "al", status="skipped", rationale="")]
    assert write_labels(path, rows) == 2
    got = [r for _, r in read_labels(path)]
    # a blank CSV cell and an empty text are one: the store keeps "" for no rationale
    want = [FULL, replace(rows[1], rationale=None if fmt == "csv" else "")]
    assert got == want


def test_the_columns_come_in_the_documented_order(tmp_path):
    write_labels(tmp_path / "l.jsonl", [FULL])
    write_labels(tmp_path / "l.csv", [FULL])
    assert list(json.loads((tmp_path / "l.jsonl").read_text())) == list(COLUMNS)
    assert (tmp_path / "l.csv").read_text().splitlines()[0] == ",".join(COLUMNS)
    import pyarrow.parquet as pq

    write_labels(tmp_path / "l.parquet", [FULL])
    assert pq.read_schema(tmp_path / "l.parquet").names == list(COLUMNS)


texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"), max_size=20)


@settings(max_examples=40, deadline=None)
@given(rationale=texts, note=texts, seconds=st.floats(0, 1e6), fmt=st.sampled_from(FORMATS))
def test_any_text_and_time_round_trip(tmp_path_factory, rationale, note, seconds, fmt):
    path = tmp_path_factory.mktemp("rt") / f"l.{fmt}"
    row = replace(FULL, rationale=rationale, flag_note=note, seconds=seconds)
    write_labels(path, [row])
    (got,) = [r for _, r in read_labels(path)]
    blank = fmt == "csv"  # CSV cannot tell "" from null
    assert got == replace(
        row, rationale=rationale or (None if blank else ""), flag_note=note or (None if blank else "")
    )


@pytest.mark.parametrize(
    "line, field, words",
    [
        ('{"annotator": "a"}', "pair_id", "missing required field"),
        (
            '{"pair_id": "p0", "annotator": "a", "status": "draft"}',
            "status",
            "'draft' is not one of submitted, skipped",
        ),
        ('{"pair_id": "p0", "annotator": "a", "preference": "left"}', "preference", "is not one of first, second, tie"),
        ('{"pair_id": "p0", "annotator": "a", "seconds": -1}', "seconds", "at least 0"),
        ('{"pair_id": "p0", "annotator": "a", "gold": "maybe"}', "gold", "expected true or false"),
        ('{"pair_id": "p0", "annotator": "a", "ratings": [1]}', "ratings", "expected an object"),
        ('{"pair_id": "p0", "annotator": "a", "colour": "red"}', "colour", "unknown column"),
        ('{"pair_id": "p0", "annotator": "a", "guidelines_version": 1.5}', "guidelines_version", "whole number"),
    ],
)
def test_a_bad_record_is_named_by_file_line_and_field(tmp_path, line, field, words):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"pair_id": "p0", "annotator": "ok"}\n' + line + "\n")
    with pytest.raises(InputError) as e:
        read_labels(path)
    assert f"{path}:2 field '{field}'" in str(e.value) and words in str(e.value), str(e.value)


def test_a_csv_file_reads_blank_cells_as_missing(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text('pair_id,annotator,preference,ratings,gold,seconds\np0,a,,,,\np1,b,tie,"{""s"": 1}",true,3\n')
    (_, a), (_, b) = read_labels(path)
    assert (a.preference, a.ratings, a.gold, a.seconds, a.status) == (None, {}, None, None, "submitted")
    assert (b.preference, b.ratings, b.gold, b.seconds) == ("tie", {"s": 1}, True, 3.0)
