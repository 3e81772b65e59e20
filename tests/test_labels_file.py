"""Raw per-annotator labels: the file format (curate/formats/labels.py), `mmrb labels import`
(curate/rawlabels.py: all or nothing, every problem by file, line and field) and
`mmrb export labels` (pseudonymous ids, a byte-identical round trip between stores)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.cli import main
from curate.errors import InputError
from curate.formats.labels import COLUMNS, FORMATS, RawLabel, read_labels, write_labels
from curate.model import Annotator, Assignment, Gold, Label
from tests.support.pairs import seed


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


def _db(tmp_path, name: str = "store") -> list[str]:
    return ["--db", str(tmp_path / f"{name}.db"), "--images", str(tmp_path / f"{name}-images")]


def _store(tmp_path, name: str = "store"):
    from curate.store import Store

    return Store(str(tmp_path / f"{name}.db"), images=tmp_path / f"{name}-images")


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


# -- import ------------------------------------------------------------------------------------
def _seeded(tmp_path, n: int = 3, name: str = "store") -> None:
    s = _store(tmp_path, name)
    try:
        seed(s, n)
        s.set_pair_scheme(["p2"], "mmrb2-pairwise", 1)
    finally:
        s.close()


def _jsonl(tmp_path, rows: list[dict], name: str = "labels.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_import_stores_every_label_creates_annotators_and_closes_their_assignments(tmp_path, capsys):
    _seeded(tmp_path)
    s = _store(tmp_path)
    s.add_annotator(Annotator("ann"))
    s.add_assignments([Assignment("p0", "ann", "first", 0), Assignment("p1", "ann", "second", 1)])
    s.close()
    path = _jsonl(
        tmp_path,
        [
            {"pair_id": "p0", "annotator": "ann", "preference": "first", "correctness_first": "correct", "seconds": 4},
            {"pair_id": "p0", "annotator": "bo", "preference": "tie", "rationale": "same", "source": "paper"},
            {"pair_id": "p1", "annotator": "ann", "status": "skipped"},
            {"pair_id": "p2", "annotator": "bo", "ratings": {"score": 5}},  # mmrb2-pairwise: 5 > 3.5
        ],
    )
    assert main(["labels", "import", str(path), *_db(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "imported 4 labels by 2 annotators on 3 pairs"
    s = _store(tmp_path)
    try:
        got = {(lb.pair_id, lb.annotator): lb for lb in s.labels(status=None)}
        assert set(got) == {("p0", "ann"), ("p0", "bo"), ("p1", "ann"), ("p2", "bo")}
        assert got["p0", "ann"].correctness_first == "correct" and got["p0", "ann"].seconds == 4.0
        assert got["p0", "ann"].source == "import" and got["p0", "bo"].source == "paper"
        assert got["p1", "ann"].status == "skipped"
        assert got["p2", "bo"].preference == "first" and got["p2", "bo"].ratings == {"score": 5}
        assert {a.pair_id: a.state for a in s.assignments(annotator="ann")} == {"p0": "done", "p1": "done"}
        assert s.get_annotator("bo") is not None
    finally:
        s.close()


def test_import_refuses_the_whole_file_naming_every_problem(tmp_path, capsys):
    _seeded(tmp_path)
    s = _store(tmp_path)
    s.add_annotator(Annotator("cy"))
    s.save_label(Label("p1", "cy", preference="second"))
    s.close()
    path = _jsonl(
        tmp_path,
        [
            {"pair_id": "p0", "annotator": "ann", "preference": "first"},  # fine on its own
            {"pair_id": "nope", "annotator": "ann"},
            {"pair_id": "p0", "annotator": "ann", "preference": "second"},
            {"pair_id": "p1", "annotator": "cy", "preference": "first"},
            {"pair_id": "p2", "annotator": "ann", "ratings": {"score": 9}},
            {"pair_id": "p2", "annotator": "bo", "correctness_first": "correct", "ratings": {"grade_first": "A"}},
            {"pair_id": "p1", "annotator": "ann", "ratings": {"score": 2}},
            {"pair_id": "p0", "annotator": "bo", "item_id": "it9", "scheme": "verify"},
            {"pair_id": "p2", "annotator": "dee", "ratings": {"score": 1}, "preference": "first"},
            {"pair_id": "p1", "annotator": "a b"},
            {"pair_id": "p1", "annotator": "eve", "control": True},
        ],
    )
    assert main(["labels", "import", str(path), *_db(tmp_path)]) == 1
    err = capsys.readouterr().err
    for where, words in [
        ("2 field 'pair_id'", "no pair 'nope' in the store"),
        ("3 field 'annotator'", "given twice (first on line 1)"),
        ("4 field 'annotator'", "the store already has a label of pair 'p1' by 'cy'"),
        ("5 field 'ratings'", "score: 9 is not a whole number from 1 to 6"),
        ("6 field 'correctness_first'", "scheme 'mmrb2-pairwise', which has no field 'correctness_first'"),
        ("6 field 'ratings'", "which has no field 'grade_first'"),
        ("7 field 'ratings'", "scheme 'mmrb', which has no field 'score'"),
        ("8 field 'item_id'", "is of item 'it0' in the store"),
        ("8 field 'scheme'", "is on scheme 'mmrb' in the store"),
        ("9 field 'preference'", "'first', but the fields of scheme 'mmrb2-pairwise' say 'second'"),
        ("10 field 'annotator'", "an account name is one word"),
        ("11 field 'control'", "no control task of pair 'p1' for 'eve'"),
    ]:
        assert f"{path}:{where}: " in err and words in err, (where, words, err)
    assert "nothing was written" in err and "Traceback" not in err
    s = _store(tmp_path)
    try:
        assert [(lb.pair_id, lb.annotator) for lb in s.labels(status=None)] == [("p1", "cy")]
        assert s.get_annotator("ann") is None
    finally:
        s.close()


def test_a_long_list_of_problems_is_cut_short_and_says_how_many_more(tmp_path, capsys):
    _seeded(tmp_path)
    path = _jsonl(tmp_path, [{"pair_id": f"x{i}", "annotator": "a"} for i in range(80)])
    assert main(["labels", "import", str(path), *_db(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "80 problems" in err and "'x0'" in err and "and 60 more" in err and "'x79'" not in err, err


def test_a_control_label_goes_onto_its_control_task(tmp_path, capsys):
    _seeded(tmp_path)
    s = _store(tmp_path)
    s.add_annotator(Annotator("ann"))
    s.add_assignments([Assignment("p0", "ann", "first", 0, is_gold=True)])
    s.close()
    refused = _jsonl(tmp_path, [{"pair_id": "p0", "annotator": "ann", "control": False}], "refused.jsonl")
    assert main(["labels", "import", str(refused), *_db(tmp_path)]) == 1
    assert "assignment of pair 'p0' to 'ann' is a control task" in capsys.readouterr().err
    ok = _jsonl(tmp_path, [{"pair_id": "p0", "annotator": "ann", "control": True, "preference": "first"}])
    assert main(["labels", "import", str(ok), *_db(tmp_path)]) == 0
    s = _store(tmp_path)
    try:
        assert [lb.annotator for lb in s.labels(control=True)] == ["ann"]
    finally:
        s.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_file_imports_nothing(tmp_path, capsys, fmt):
    _seeded(tmp_path)
    path = tmp_path / f"labels.{fmt}"
    write_labels(path, [])
    assert main(["labels", "import", str(path), *_db(tmp_path)]) == 1
    assert "no labels in the file" in capsys.readouterr().err


@pytest.mark.both_backends
def test_the_stores_import_closes_only_the_open_assignments_of_its_labels(store):
    seed(store, 2)
    for n in ("a", "b"):
        store.add_annotator(Annotator(n))
    store.add_assignments([Assignment(p, n, "first", i) for i, p in enumerate(("p0", "p1")) for n in ("a", "b")])
    labels = [Label("p0", "a", preference="first"), Label("p1", "a", status="skipped"), Label("p0", "b")]
    assert store.import_labels([*labels[:2], replace(labels[2], status="draft")]) == 3
    states = {(x.pair_id, x.annotator): x.state for x in store.assignments()}
    assert states == {("p0", "a"): "done", ("p1", "a"): "done", ("p0", "b"): "open", ("p1", "b"): "open"}
    assert store.label_keys() == {("p0", "a"), ("p1", "a"), ("p0", "b")}
    assert store.pair_items() == {"p0": "it0", "p1": "it1"}


# -- export ------------------------------------------------------------------------------------
GOLDEN = Path(__file__).parent / "golden" / "labels"
UPDATE = os.environ.get("MMRB_UPDATE_GOLDEN") == "1"
T = "2026-03-0{}T10:00:00+00:00"
SOURCE_LABELS = [  # real names, fixed times: a store whose export is the same on every run
    {"pair_id": "p1", "annotator": "zoe", "preference": "second", "seconds": 7.5, "created_at": T.format(1)},
    {
        "pair_id": "p0",
        "annotator": "zoe",
        "preference": "first",
        "correctness_first": "correct",
        "correctness_second": "incorrect",
        "rationale": 'the second misreads the sign, "STOP"',
        "seconds": 12,
        "guidelines_version": 2,
        "created_at": T.format(1),
        "updated_at": T.format(2),
    },
    {
        "pair_id": "p0",
        "annotator": "adam",
        "preference": "tie",
        "rationale": "both fine",
        "flag": "other",
        "flag_note": "blurry, but readable",
        "created_at": T.format(3),
        "source": "app",
    },
    {"pair_id": "p1", "annotator": "adam", "status": "skipped", "created_at": T.format(4)},
    {
        "pair_id": "p2",
        "annotator": "mia",
        "ratings": {"score": 2},
        "rationale": "slightly worse",
        "created_at": T.format(2),
        "scheme_version": 1,
    },
    {"pair_id": "p0", "annotator": "mia", "preference": "first", "control": True, "created_at": T.format(5)},
]


def _source_store(tmp_path, name: str = "a"):
    """Three pairs (p2 on mmrb2-pairwise), gold on p0, a control task of p0 for mia."""
    _seeded(tmp_path, name=name)
    s = _store(tmp_path, name)
    s.set_gold([Gold("p0", "import", "first")])
    s.add_annotator(Annotator("mia"))
    s.add_assignments([Assignment("p0", "mia", "first", 0, is_gold=True)])
    s.close()


def _labelled_store(tmp_path, name: str = "a") -> None:
    _source_store(tmp_path, name)
    path = _jsonl(tmp_path, SOURCE_LABELS, "source.jsonl")
    assert main(["labels", "import", str(path), *_db(tmp_path, name)]) == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_export_matches_its_golden_file(fmt, tmp_path, capsys):
    _labelled_store(tmp_path)
    s = _store(tmp_path, "a")
    s.save_label(Label("p2", "zoe", ratings={"score": 4}, status="draft"))  # a draft is never exported
    s.close()
    out = tmp_path / f"labels.{fmt}"
    assert main(["export", "labels", "--out", str(out), *_db(tmp_path, "a")]) == 0
    assert capsys.readouterr().out.strip().endswith(f"wrote 6 labels to {out}")
    golden = GOLDEN / f"labels.{fmt}"
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(out.read_bytes())
    assert out.read_bytes() == golden.read_bytes(), f"{out.name} differs from tests/golden/labels"
    got = [r for _, r in read_labels(out)]
    assert [(r.pair_id, r.annotator) for r in got] == [
        ("p0", "annotator-01"),  # zoe: first label on day 1 (p0 before p1)
        ("p0", "annotator-02"),  # mia: day 2
        ("p0", "annotator-03"),  # adam: day 3
        ("p1", "annotator-01"),
        ("p1", "annotator-03"),
        ("p2", "annotator-02"),
    ]
    text = out.read_bytes()
    assert not any(n.encode() in text for n in ("zoe", "adam", "mia"))
    assert [r.gold for r in got] == [True, True, True, False, False, False]
    assert [r.control for r in got] == [False, True, False, False, False, False]
    assert got[5].scheme == "mmrb2-pairwise" and got[5].preference == "second" and got[5].ratings["score"] == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_real_names_move_labels_between_stores_byte_for_byte(fmt, tmp_path, capsys):
    _labelled_store(tmp_path, "a")
    _source_store(tmp_path, "b")  # the same pairs, gold and control task; no labels
    first, second = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}"
    assert main(["export", "labels", "--real-names", "--out", str(first), *_db(tmp_path, "a")]) == 0
    assert b"zoe" in first.read_bytes()
    assert main(["labels", "import", str(first), *_db(tmp_path, "b")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "imported 6 labels by 3 annotators on 3 pairs"
    assert main(["export", "labels", "--real-names", "--out", str(second), *_db(tmp_path, "b")]) == 0
    assert second.read_bytes() == first.read_bytes()
    # and importing the same file again is refused: every label is already there
    assert main(["labels", "import", str(first), *_db(tmp_path, "b")]) == 1
    assert "6 problems" in capsys.readouterr().err


def test_an_export_that_cannot_be_written_is_one_error_line_and_leaves_no_file(tmp_path, capsys):
    _labelled_store(tmp_path)
    capsys.readouterr()
    earlier = tmp_path / "folder"
    earlier.mkdir()
    for out in (tmp_path / "no-such-folder" / "labels.jsonl", earlier):
        assert main(["export", "labels", "--format", "jsonl", "--out", str(out), *_db(tmp_path, "a")]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"mmrb export: error: cannot write {out}: ") and len(err.splitlines()) == 1, err
    assert not (tmp_path / "no-such-folder").exists() and list(earlier.iterdir()) == []


def test_pseudonyms_follow_the_first_label_whatever_is_exported(tmp_path):
    from curate.rawlabels import pseudonyms, raw_labels

    _labelled_store(tmp_path)
    s = _store(tmp_path, "a")
    try:
        everyone = {r.annotator for r in raw_labels(s)}
        only_p2 = raw_labels(s, pair_ids=["p2"])
        assert everyone == {"annotator-01", "annotator-02", "annotator-03"}
        assert [r.annotator for r in only_p2] == ["annotator-02"]  # mia's id in the whole store's order
        labels = s.labels(status=None)
        assert pseudonyms((lb.annotator, lb.created_at, lb.pair_id) for lb in labels) == {
            "zoe": "annotator-01",
            "mia": "annotator-02",
            "adam": "annotator-03",
        }
    finally:
        s.close()


def test_pseudonyms_widen_past_99_annotators():
    from curate.rawlabels import pseudonyms

    names = pseudonyms((f"n{i:03d}", f"{i:03d}", "p") for i in range(120))
    assert names["n000"] == "annotator-001" and names["n119"] == "annotator-120"


@pytest.mark.both_backends
def test_the_stores_rows_export_in_code_point_order_on_both_backends(store, tmp_path):
    from curate.rawlabels import export_labels

    seed(store, 2)
    names = ["b", "C", "a", "Ä"]
    for n in names:
        store.add_annotator(Annotator(n))
    store.add_assignments([Assignment("p1", "C", "first", 0, is_gold=True)])
    store.add_labels([Label(p, n, preference="first", created_at=T.format(1)) for p in ("p1", "p0") for n in names])
    store.set_gold([Gold("p0", "import", "first")])
    assert export_labels(store, tmp_path / "l.jsonl", real_names=True) == 8
    got = [r for _, r in read_labels(tmp_path / "l.jsonl")]
    assert [(r.pair_id, r.annotator) for r in got] == [(p, n) for p in ("p0", "p1") for n in sorted(names)]
    assert [(r.pair_id, r.annotator) for r in got if r.control] == [("p1", "C")]
    assert {r.pair_id for r in got if r.gold} == {"p0"} and {r.scheme for r in got} == {"mmrb"}
    export_labels(store, tmp_path / "p.jsonl")
    ids = [(r.pair_id, r.annotator) for _, r in read_labels(tmp_path / "p.jsonl")]
    assert ids == sorted(ids) and len({a for _, a in ids}) == 4


@pytest.mark.parametrize(
    "fmt, text, words",
    [(fmt, "a\x00b", "NUL character") for fmt in FORMATS]
    + [(fmt, "caf\udce9", "not valid UTF-8") for fmt in ("jsonl", "csv")],  # Arrow writes only valid UTF-8
)
def test_text_the_store_cannot_keep_is_refused_in_every_format(fmt, text, words, tmp_path):
    path = tmp_path / f"labels.{fmt}"
    if "\udce9" in text:  # a byte that is not UTF-8, as a file would hold it
        write_labels(path, [raw(rationale="MARK")])
        path.write_bytes(path.read_bytes().replace(b"MARK", b"caf\xe9"))
    else:
        write_labels(path, [raw(rationale=text)])
    with pytest.raises(InputError) as e:
        read_labels(path)
    line = 2 if fmt == "csv" else 1
    assert f"{path}:{line} field 'rationale'" in str(e.value) and words in str(e.value), str(e.value)


@pytest.mark.parametrize("pair_ids", [["p0", "p1", "p2"], ["p2"], ["p0", "p2"], []])
def test_the_builds_label_table_writes_the_rows_bytes(pair_ids, tmp_path):
    # the build reads every label first as a table and writes its considered pairs' rows from
    # it: the same bytes as the rows of those pairs, and the same count of each source
    from collections import Counter

    from curate.formats.labels import write_label_rows, write_parquet_table
    from curate.rawlabels import label_rows, label_table, of_pairs, source_counts

    _labelled_store(tmp_path)
    s = _store(tmp_path, "a")
    try:
        rows = label_rows(s, pair_ids=pair_ids)
        table = label_table(s)
    finally:
        s.close()
    write_label_rows(tmp_path / "rows.parquet", rows)
    assert write_parquet_table(tmp_path / "table.parquet", of_pairs(table, pair_ids)) == len(rows)
    assert (tmp_path / "table.parquet").read_bytes() == (tmp_path / "rows.parquet").read_bytes()
    assert source_counts(table, pair_ids) == Counter(r[COLUMNS.index("source")] for r in rows)
