"""Hostile input (issue 25): files no reader may choke on, and judge answers no parser may
hang on.

Files. One table of hostile rows (``CASES``: JSON nested past Python's parser, NaN and
Infinity where text or an id is expected, a repeated CSV column, bytes that are not UTF-8,
NUL, half a surrogate pair, a truncated line, a record that is no object, an integer of
5,000 digits; and what must still be read: a BOM, blank lines, CRLF) is run against every
entry point that reads a file (``ENTRIES``: `mmrb ingest items`, `mmrb ingest pairs` in each
format, `mmrb gold import`, `mmrb labels import`, `mmrb score --judgments` in each format and `--dataset`,
`mmrb evaluate --dataset`, `mmrb agreement --labels`, and the Quality page's upload). A new
entry point gets every row by adding it to ``ENTRIES``. A refused file exits 1 with a message
that names the file, its line and (where there is one) the field, no traceback, and nothing
written.

Judge answers. Worst cases for each built-in verdict parser, at sizes up to
max_response_chars: MMRB2's json_repair (quadratic on ``'["' * N``), VL-RewardBench's
expression (polynomial backtracking after "Therefore"), R1-Reward's ``<answer>`` tags. The
work is bounded: json_repair by its budget of steps (``REPAIR_STEPS``, asserted), the others
restated in linear time (asserted to agree with the benchmarks' own expressions).
"""

from __future__ import annotations

import csv
import gc
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curate.cli import main
from curate.errors import InputError
from curate.judging import parsing
from curate.judging.parsing import (
    PARSERS,
    REPAIR_STEPS,
    Unread,
    mmrb2_judgement,
    parse_mmrb2,
    vlrb_answer_number,
)
from curate.store import Store
from tests.ingest_helpers import counts, write_image

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
DEEP = "[" * 100_000
MARK = "@@hostile@@"  # where a case puts its value, in the second record's text field


# -- the files ----------------------------------------------------------------------------------
def records_of(name: str, n: int = 2, key: str | None = None) -> list[dict]:
    path = FIXTURES / name
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        return data[key][:n] if key else data[:n]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()][:n]


def cell(v) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v)


def csv_line(values: list[str]) -> str:
    out = []
    for v in values:
        if any(c in v for c in ',"\n\r') or v != v.strip():
            v = '"' + v.replace('"', '""') + '"'
        out.append(v)
    return ",".join(out)


def serialise(records: list[dict], kind: str, wrap: str | None = None) -> list[str]:
    """The file's lines, one record a line: record k (from 1) is on line k (JSONL) or k + 1
    (JSON, whose line 1 opens the list; CSV, whose line 1 is the header)."""
    if kind == "jsonl":
        return [json.dumps(r) for r in records]
    if kind == "json":
        body = [json.dumps(r) + ("," if n < len(records) - 1 else "") for n, r in enumerate(records)]
        return [f'{{"{wrap}": [' if wrap else "[", *body, "]}" if wrap else "]"]
    header = list(dict.fromkeys(k for r in records for k in r))
    return [csv_line(header), *(csv_line([cell(r.get(k)) for k in header]) for r in records)]


def record_line(kind: str, k: int = 2) -> int:
    return k if kind == "jsonl" else k + 1


# -- the hostile rows -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """A change to a valid file. ``expect``: the words of the error (None: the file is
    read, exit 0; "either": read or refused, cleanly); ``where``: what the error names
    besides the file ("line": the second record's line, "field": and its text field,
    "header": line 1 and the repeated field)."""

    id: str
    kinds: tuple[str, ...]
    make: Callable[[list[dict], str, Entry], bytes]
    expect: str | tuple[str, ...] | None  # a tuple: any of these words (a format's own)
    where: str = "line"
    stored: str | None = None  # the words instead where the entry writes what it reads to the store

    def words(self, entry: Entry) -> str | tuple[str, ...] | None:
        return self.stored if self.stored and entry.store != "none" else self.expect


def _with(value_json: str) -> Callable[[list[dict], str, Entry], bytes]:
    """The second record's text field set to ``value_json`` (raw JSON text, or a CSV cell)."""

    def make(records, kind, entry):
        recs = [*records[:1], {**records[1], entry.text: MARK}, *records[2:]]
        text = "\n".join(serialise(recs, kind, entry.wrap)) + "\n"
        return text.replace(json.dumps(MARK), value_json).encode()

    return make


def _bytes_in_field(raw: bytes, raw_csv: bytes | None = None) -> Callable[[list[dict], str, Entry], bytes]:
    """The second record's text field holding ``raw`` (in a CSV file ``raw_csv``) within its text."""

    def make(records, kind, entry):
        recs = [*records[:1], {**records[1], entry.text: MARK}, *records[2:]]
        text = ("\n".join(serialise(recs, kind, entry.wrap)) + "\n").encode()
        return text.replace(MARK.encode(), raw_csv if kind == "csv" and raw_csv is not None else raw)

    return make


def _line2(line: str) -> Callable[[list[dict], str, Entry], bytes]:
    """The second record replaced by ``line``."""

    def make(records, kind, entry):
        lines = serialise(records, kind, entry.wrap)
        n = record_line(kind) - 1
        lines[n] = line + ("," if kind == "json" else "")
        return ("\n".join(lines) + "\n").encode()

    return make


def _truncated(records, kind, entry) -> bytes:
    lines = serialise(records, kind, entry.wrap)
    n = record_line(kind) - 1
    lines[n] = lines[n][: len(lines[n]) // 2]
    return "\n".join(lines[: n + 1]).encode()  # the file ends there: cut short


def _repeated_column(records, kind, entry) -> bytes:
    lines = serialise(records, kind, entry.wrap)
    header = next(csv.reader([lines[0]]))
    at = header.index(entry.text)
    lines[0] += "," + entry.text
    rows = [next(csv.reader([x])) for x in lines[1:]]
    lines[1:] = [x + "," + csv_line([r[at]]) for x, r in zip(lines[1:], rows, strict=True)]
    return ("\n".join(lines) + "\n").encode()


def _bom(records, kind, entry) -> bytes:
    return b"\xef\xbb\xbf" + ("\n".join(serialise(records, kind, entry.wrap)) + "\n").encode()


def _crlf_and_blank_lines(records, kind, entry) -> bytes:
    lines = serialise(records, kind, entry.wrap)
    if kind == "jsonl":
        lines = ["", *(x for line in lines for x in (line, "   ")), ""]
    return ("\r\n".join(lines) + "\r\n").encode()


JSONS = ("jsonl", "json")
ALL = ("jsonl", "json", "csv")
CASES = [
    Case("nested", JSONS, _line2(DEEP), "malformed JSON: nested too deeply"),
    Case("nested-in-field", JSONS, _with(DEEP), "malformed JSON: nested too deeply"),
    Case("NaN-text", JSONS, _with("NaN"), ("got the number NaN, which is not finite", "must be a string"), "field"),
    Case(
        "Infinity-text", JSONS, _with("Infinity"), ("number Infinity, which is not finite", "must be a string"), "field"
    ),
    Case("-Infinity-text", JSONS, _with("-Infinity"), ("number -Infinity, which is not", "must be a string"), "field"),
    Case("1e400-text", JSONS, _with("1e400"), ("number Infinity, which is not finite", "must be a string"), "field"),
    Case("5000-digits", JSONS, _with("1" + "0" * 5000), "malformed JSON: a number of more than 4,300 digits"),
    Case("repeated-column", ("csv",), _repeated_column, "column repeated", "header"),
    Case("invalid-utf8", ALL, _bytes_in_field(b"a\xff\xfeb"), "not valid UTF-8 (byte 0xff", "field"),
    Case("surrogate-escape", JSONS, _with('"a\\ud800b"'), "half a UTF-16 surrogate pair", "field"),
    # a NUL: the store cannot keep it (PostgreSQL); scoring and agreement need not refuse it
    Case("nul", ALL, _bytes_in_field(b"a\\u0000b", b"a\x00b"), "either", "field", stored="NUL character"),
    Case("truncated", JSONS, _truncated, "malformed JSON"),
    Case("not-an-object", ("jsonl",), _line2("[1, 2]"), "expected a JSON object, got list"),
    Case("bom", ALL, _bom, None),
    Case("crlf-blank-lines", ALL, _crlf_and_blank_lines, None),
    Case("empty-file", ALL, lambda records, kind, entry: b"", "either"),
]


# -- the entry points -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """A command that reads a file: a valid file's records, the field of each where text or
    an id is expected, and its arguments (``argv(file, tmp)``)."""

    id: str
    kinds: tuple[str, ...]
    records: Callable[[Path], list[dict]]
    argv: Callable[[Path, Path], list[str]]
    text: str
    wrap: str | None = None  # JSON: the key of the record list
    stem: str = "data"
    # "ingest": rows into the store; "gold": gold answers; "labels": labels; "run": a judge run; "none": reads only
    store: str = "none"
    refused_only: bool = False  # run only where the file is refused (evaluate would call its judge)
    skip: frozenset[str] = field(default_factory=frozenset)  # cases that do not apply


def _db(tmp: Path) -> list[str]:
    return ["--db", str(tmp / "store.db"), "--images", str(tmp / "store-images")]


def _images(tmp: Path, *names: str) -> None:
    for n in names:
        write_image(tmp / n)


def _items(tmp: Path) -> list[dict]:
    _images(tmp, "img/shapes.png", "img/sign.png")
    return records_of("items.jsonl")


def _pairs(name: str, *images: str, key: str | None = None) -> Callable[[Path], list[dict]]:
    def make(tmp: Path) -> list[dict]:
        _images(tmp, *images)
        return records_of(name, key=key)

    return make


TRIPLETS = [
    {"id": "t1", "prompt": "How many?", "chosen": "Three.", "rejected": "Five.", "category": "vqa"},
    {"id": "t2", "prompt": "Which colour?", "chosen": "Red.", "rejected": "Blue.", "category": "vqa"},
]
MMRB_OUTPUTS = [
    {"ID": "vqa_1", "Label": "A", "output": "[[A]]", "Meta": {"Category": "vqa"}},
    {"ID": "vqa_2", "Label": "B", "output": "[[A]]", "Meta": {"Category": "vqa"}},
]
VLRB_INFERENCE = [
    {
        "id": f"mmmu-{n}",
        "query": "q",
        "response": ["a", "b"],
        "ranking": [0, 1],
        "meta": {"random_number": 0, "filter_choice": "Overall Judgment: Answer 1 is better"},
    }
    for n in (1, 2)
]
R1_REWARDS = [
    {"id": "t1", "prompt": "How many?", "chosen": "Three.", "rejected": "Five.", "rewards": [2.0, 1.0]},
    {"id": "t2", "prompt": "Which colour?", "chosen": "Red.", "rejected": "Blue.", "rewards": [0.5, 1.0]},
]
STUDIO = [
    {"pair_id": "t1", "order": "forward", "sample_index": 0, "verdict": "first", "outcome": "parsed", "raw": "[[A]]"},
    {"pair_id": "t2", "order": "forward", "sample_index": 0, "verdict": "second", "outcome": "parsed", "raw": "[[B]]"},
]
LABELS = [
    {"item": "p1", "annotator": "a", "field": "preference", "value": "first"},
    {"item": "p1", "annotator": "b", "field": "preference", "value": "second"},
]


def _triplets_file(tmp: Path) -> Path:
    path = tmp / "dataset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TRIPLETS))
    return path


def _studio_file(tmp: Path) -> Path:
    path = tmp / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in STUDIO))
    return path


def _judge_file(tmp: Path) -> Path:
    path = tmp / "judge.toml"
    path.write_text('name = "j"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\ntemplate = "mmrb"\n')
    return path


def _runs_reading(f: Path, tmp: Path) -> list[str]:
    """A judge with an evaluation run that recorded ``f`` as its dataset (read when the run is
    scored) and a Best-of-N run: what ``mmrb validity`` reads back."""
    from curate.judging.records import RunDataset
    from curate.judging.runner import ensure_run

    s = Store(str(tmp / "store.db"), images=tmp / "store-images")
    try:
        ensure_run(s, "ev", purpose="evaluate", judge="j", identity={"kind": "t"}, dataset=RunDataset.files([str(f)]))
        ensure_run(s, "bo", purpose="bestofn", judge="j", identity={"kind": "t"}, dataset=RunDataset(name="bestofn"))
    finally:
        s.close()
    return ["validity", *_db(tmp), "--resamples", "0"]


def _gold_records(tmp: Path) -> list[dict]:
    """Gold answers of the two pairs ``_seed_gold_pairs`` put in the store."""
    s = Store(str(tmp / "store.db"), images=tmp / "store-images")
    try:
        first, second = sorted(p.id for p in s.pairs())
    finally:
        s.close()
    return [{"pair_id": first, "preference": "first"}, {"pair_id": second, "preference": "second"}]


def _label_records(tmp: Path) -> list[dict]:
    """Labels of the two pairs ``_seed_gold_pairs`` put in the store."""
    first, second = (g["pair_id"] for g in _gold_records(tmp))
    return [
        {"pair_id": first, "annotator": "ann", "preference": "first", "rationale": "r1"},
        {"pair_id": second, "annotator": "ann", "preference": "second", "rationale": "r2"},
    ]


SCORE = ["--bootstrap", "0", "--json"]
ENTRIES = [
    Entry(
        "ingest-items",
        ALL,
        _items,
        lambda f, tmp: ["ingest", "items", str(f), "--allow-missing-images", *_db(tmp)],
        "prompt",
        store="ingest",
    ),
    Entry(
        "ingest-mmrb",
        ALL,
        _pairs("mmrb.jsonl", "images/apples.png", "images/person.png"),
        lambda f, tmp: ["ingest", "pairs", "--format", "mmrb", str(f), *_db(tmp)],
        "Text",
        store="ingest",
    ),
    Entry(
        "ingest-vlrewardbench",
        JSONS,
        _pairs("vlrewardbench.jsonl", "img/square.png"),
        lambda f, tmp: ["ingest", "pairs", "--format", "vlrewardbench", str(f), *_db(tmp)],
        "query",
        store="ingest",
    ),
    Entry(
        "ingest-vlrewardbench-text",
        ALL,
        _pairs("vlrewardbench_text.jsonl"),
        lambda f, tmp: ["ingest", "pairs", "--format", "vlrewardbench-text", str(f), *_db(tmp)],
        "prompt",
        store="ingest",
    ),
    Entry(
        "ingest-mm-rlhf",
        ALL,
        _pairs("mm_rlhf.jsonl"),
        lambda f, tmp: ["ingest", "pairs", "--format", "mm-rlhf", str(f), *_db(tmp)],
        "prompt",
        store="ingest",
    ),
    Entry(
        "ingest-mmrb2",
        JSONS,
        _pairs(
            "mmrb2_t2i.json",
            "bench_1_a_b_0.jpg",
            "bench_1_a_b_1.jpg",
            "bench_2_a_a_0.jpg",
            "bench_2_a_a_1.jpg",
            key="pairs",
        ),
        lambda f, tmp: ["ingest", "pairs", "--format", "mmrb2", "--category", "t2i", str(f), *_db(tmp)],
        "id",
        wrap="pairs",
        store="ingest",
    ),
    Entry(
        "ingest-generic",
        ALL,
        lambda tmp: [
            {"id": "g1", "prompt": "q1", "response_1": "a", "response_2": "b", "preference": "1", "category": "vqa"},
            {"id": "g2", "prompt": "q2", "response_1": "c", "response_2": "d", "preference": "2", "category": "vqa"},
        ],
        lambda f, tmp: ["ingest", "pairs", "--format", "generic", str(f), *_db(tmp)],
        "prompt",
        store="ingest",
    ),
    Entry(
        "gold-import",
        ALL,
        _gold_records,
        lambda f, tmp: ["gold", "import", str(f), *_db(tmp)],
        "pair_id",
        stem="gold",
        store="gold",
    ),
    Entry(
        "labels-import",
        ("jsonl", "csv"),
        _label_records,
        lambda f, tmp: ["labels", "import", str(f), *_db(tmp)],
        "rationale",
        stem="labels",
        store="labels",
    ),
    Entry(
        "score-mmrb",
        JSONS,
        lambda tmp: MMRB_OUTPUTS,
        lambda f, tmp: ["score", "--judgments", str(f), "--format", "mmrb", *SCORE],
        "ID",
    ),
    Entry(
        "score-vlrewardbench",
        JSONS,
        lambda tmp: VLRB_INFERENCE,
        lambda f, tmp: ["score", "--judgments", str(f), "--format", "vlrewardbench", *SCORE],
        "query",
    ),
    Entry(
        "score-r1-rewards",
        JSONS,  # its rewards are a list: JSON
        lambda tmp: R1_REWARDS,
        lambda f, tmp: ["score", "--judgments", str(f), "--format", "r1-rewards", *SCORE],
        "prompt",
    ),
    Entry(
        "score-mmrb-studio",
        JSONS,
        lambda tmp: STUDIO,
        lambda f, tmp: [
            "score",
            "--judgments",
            str(f),
            "--format",
            "mmrb-studio",
            "--dataset",
            str(_triplets_file(tmp)),
            *SCORE,
        ],
        "pair_id",
    ),
    Entry(
        "score-dataset",
        ALL,
        lambda tmp: TRIPLETS,
        lambda f, tmp: [
            "score",
            "--judgments",
            str(_studio_file(tmp)),
            "--format",
            "mmrb-studio",
            "--dataset",
            str(f),
            *SCORE,
        ],
        "prompt",
    ),
    Entry(
        "evaluate-dataset",
        ALL,
        lambda tmp: TRIPLETS,
        lambda f, tmp: ["evaluate", "--dataset", str(f), "--judge", str(_judge_file(tmp)), "--quiet", *_db(tmp)],
        "prompt",
        store="run",
        refused_only=True,
    ),
    Entry(  # the dataset an evaluation run recorded, read again when validity scores the run
        "validity-run-dataset",
        ALL,
        lambda tmp: TRIPLETS,
        _runs_reading,
        "prompt",
        refused_only=True,  # a valid file: one judge, no correlation (exit 1 by its own rule)
    ),
    Entry(
        "agreement-labels",
        ("jsonl", "csv"),
        lambda tmp: LABELS,
        lambda f, tmp: ["agreement", "--labels", str(f), "--resamples", "0"],
        "annotator",
        stem="labels",
    ),
]


def _seed_gold_pairs(tmp: Path) -> None:
    from curate.ingest import ingest_pairs

    path = tmp / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TRIPLETS))
    s = Store(str(tmp / "store.db"), images=tmp / "store-images")
    try:
        assert ingest_pairs(s, path, "vlrewardbench-text").pairs == 2
    finally:
        s.close()


def _written(entry: Entry, tmp: Path) -> object:
    """What is in the store where the command writes: rows, image files, gold answers."""
    if entry.store == "none":
        return None
    s = Store(str(tmp / "store.db"), images=tmp / "store-images")
    try:
        if entry.store == "gold":
            return s.gold()
        if entry.store == "labels":
            return s.labels(status=None)
        files = sorted(p for p in s.images.root.rglob("*") if p.is_file()) if s.images.root.exists() else []
        return {k: v for k, v in counts(s).items() if v}, files
    finally:
        s.close()


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except BaseException as e:
        pytest.fail(f"mmrb {' '.join(argv[:3])} raised {type(e).__name__}: {str(e)[:300]}")
    out = capsys.readouterr()
    return rc, out.out, out.err


def _rows():
    for entry in ENTRIES:
        for case in CASES:
            for kind in case.kinds:
                if (
                    kind not in entry.kinds
                    or case.id in entry.skip
                    or (entry.refused_only and case.words(entry) in (None, "either"))
                ):
                    continue
                yield pytest.param(entry, case, kind, id=f"{entry.id}-{case.id}-{kind}")


@pytest.mark.parametrize("entry, case, kind", list(_rows()))
def test_every_entry_point_refuses_a_hostile_file_cleanly(entry, case, kind, tmp_path, capsys):
    if entry.store in ("gold", "labels"):
        _seed_gold_pairs(tmp_path)
    before = _written(entry, tmp_path)
    path = tmp_path / f"{entry.stem}.{kind}"
    path.write_bytes(case.make(entry.records(tmp_path), kind, entry))
    rc, out, err = run(entry.argv(path, tmp_path), capsys)
    assert "Traceback" not in out + err
    expect = case.words(entry)
    if expect is None:
        assert rc == 0, err
        return
    if expect == "either" and rc == 0:
        return
    assert rc == 1, (rc, out, err)
    assert str(path) in err, err
    assert _written(entry, tmp_path) == before  # nothing written
    if expect == "either":
        return
    assert any(words in err for words in ([expect] if isinstance(expect, str) else expect)), err
    line = 1 if case.where == "header" else record_line(kind)
    named = f"{path}:{line}"
    if case.where in ("field", "header"):
        named += f" field '{entry.text}'"
    assert named in err, err


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
@pytest.mark.parametrize(
    "given, words", [("folder", "is a folder"), ("dangling link", ("file not found", "no such file"))]
)
def test_every_entry_point_refuses_a_folder_or_a_dangling_link_as_its_file(entry, given, words, tmp_path, capsys):
    if entry.store in ("gold", "labels"):
        _seed_gold_pairs(tmp_path)
    entry.records(tmp_path)  # whatever the entry's other files need
    before = _written(entry, tmp_path)
    path = tmp_path / f"{entry.stem}.{entry.kinds[0]}"
    if given == "folder":
        path.mkdir()
    else:
        path.symlink_to(tmp_path / "gone.jsonl")
    rc, out, err = run(entry.argv(path, tmp_path), capsys)
    assert "Traceback" not in out + err
    # the path given, or where its link points (a judge run records the dataset's resolved path)
    named = str(path) in err or str(path.resolve()) in err
    assert rc == 1 and named and any(w in err for w in ([words] if isinstance(words, str) else words)), (rc, out, err)
    assert _written(entry, tmp_path) == before  # nothing written


# -- the Quality page's upload ---------------------------------------------------------------
def _gold_upload_rows():
    gold = next(e for e in ENTRIES if e.id == "gold-import")
    for case in CASES:
        for kind in case.kinds:
            if kind in ("jsonl", "csv"):  # what the page's uploader takes
                yield pytest.param(gold, case, kind, id=f"{case.id}-{kind}")


@pytest.mark.parametrize("entry, case, kind", list(_gold_upload_rows()))
def test_the_quality_pages_upload_refuses_every_hostile_row_naming_the_upload(entry, case, kind, tmp_path):
    """The page's import (curate.quality.gold.import_gold_upload): InputError or nothing,
    its problems naming the uploaded file, never the server's temporary file."""
    from curate.errors import MmrbError
    from curate.quality.gold import import_gold_upload

    _seed_gold_pairs(tmp_path)
    data = case.make(entry.records(tmp_path), kind, entry)
    s = Store(str(tmp_path / "store.db"), images=tmp_path / "store-images")
    try:
        expect = case.words(entry)
        try:
            import_gold_upload(s, f"gold.{kind}", data)
        except InputError as e:
            assert expect is not None, str(e)
            assert {p.file for p in e.problems} == {f"gold.{kind}"}, e.problems
            assert s.gold() == {}
            if expect != "either":
                assert any(w in str(e) for w in ([expect] if isinstance(expect, str) else expect)), str(e)
                line = 1 if case.where == "header" else record_line(kind)
                assert any(p.line == line for p in e.problems), e.problems
            return
        except MmrbError as e:  # any other refusal: one line, without the server's paths
            assert "/tmp" not in str(e) and expect is not None, str(e)
            return
        assert expect in (None, "either"), case.id
    finally:
        s.close()


@pytest.mark.parametrize("name", ["..", "", "a/../../b.csv", "gold", ".jsonl"])
def test_an_upload_named_like_a_path_is_read_in_the_servers_own_file(name, tmp_path):
    from curate.errors import MmrbError
    from curate.quality.gold import import_gold_upload

    _seed_gold_pairs(tmp_path)
    s = Store(str(tmp_path / "store.db"), images=tmp_path / "store-images")
    try:
        with pytest.raises(MmrbError) as e:
            import_gold_upload(s, name, b'{"pair_id": "x", "preference": "first"}\n')
        assert "/tmp" not in str(e.value) and s.gold() == {}
        assert not (tmp_path / "b.csv").exists()
    finally:
        s.close()


def test_a_gold_csv_that_repeats_a_column_is_refused(tmp_path, capsys):
    """The issue's file: `preference,preference` took the last value without a word."""
    _seed_gold_pairs(tmp_path)
    first, second = (r["pair_id"] for r in _gold_records(tmp_path))
    path = tmp_path / "gold.csv"
    path.write_text(f"pair_id,preference,preference\n{first},first,second\n{second},second,second\n")
    rc, _, err = run(["gold", "import", str(path), *_db(tmp_path)], capsys)
    assert rc == 1
    assert f"{path}:1 field 'preference': column repeated (columns 2 and 3)" in err
    assert _written(next(e for e in ENTRIES if e.store == "gold"), tmp_path) == {}


def test_the_quality_page_shows_a_hostile_upload_as_a_message(tmp_path, monkeypatch):
    """The page itself (AppTest): for nested JSON, a repeated column and a name like a path, a
    message naming the uploaded file; no exception, no server path."""
    from tests.support.apptest import all_text, sign_in
    from tests.support.streamlit_server import seed_store

    db = str(tmp_path / "app.db")
    s = Store(db, images=tmp_path / "images")
    seed_store(s)
    monkeypatch.setenv("MMRB_DB", db)
    monkeypatch.setenv("MMRB_IMAGES", str(tmp_path / "images"))
    try:
        lead = sign_in("lead")
        lead.switch_page("annotate/views/admin_quality.py").run()
        for name, data, words in (
            ("deep.jsonl", (DEEP + "\n").encode(), "deep.jsonl:1: malformed JSON: nested too deeply"),
            ("twice.csv", b"pair_id,preference,preference\np0,first,second\n", "twice.csv:1 field 'preference'"),
            ("nul.jsonl", b'{"pair_id": "p0", "note": "a\\u0000b", "preference": "first"}\n', "NUL character"),
            ("../../x.csv", b"pair_id,preference\np0,first\n", None),  # read as the upload, wherever it says
        ):
            lead.file_uploader(key="quality_gold_file").set_value((name, data, "text/plain")).run()
            lead.button(key="quality_gold_import").click().run()
            assert not lead.exception, lead.exception
            text = all_text(lead) + "\n".join(c.value for c in lead.code)
            assert str(tmp_path) not in text and "/tmp/" not in text and "Traceback" not in text
            if words is not None:
                assert words in text, text
        assert s.gold()["p0"].preference == "first"  # the last one: imported
    finally:
        from annotate import ui

        ui.close_stores()
        s.close()


# -- MMRB2's judgements file: one JSON object, read whole ----------------------------------------
MMRB2_GROUND_TRUTH = {"pairs": [{"id": "p0", "response_a": "a", "response_b": "b", "chosen": "A"}]}


@pytest.mark.parametrize(
    "text, words",
    [
        pytest.param(DEEP, ":1: malformed JSON: nested too deeply", id="nested"),
        pytest.param(
            '{"p1": {},\n"p0": {"forward": [{"judgement": ' + DEEP + "}]}}",
            ":2 field 'p0': malformed JSON: nested too deeply",
            id="nested-in",
        ),
        pytest.param(
            '{"p0": {"forward": [{"judgement": "A\xff"}]}}', ":1: not valid UTF-8 (byte 0xff)", id="invalid-utf8"
        ),
        pytest.param(
            '{"p0":\n {"forward": [{"judgement": ' + "1" * 5000 + "}]}}", "a number of more than 4,300", id="digits"
        ),
        pytest.param("[1, 2]", "expected an object from pair id", id="not-an-object"),
        pytest.param('{"p0": {"forward": [{"judgement": "A"}]', ":1: malformed JSON", id="truncated"),
        pytest.param("", ":1: malformed JSON", id="empty"),
        pytest.param('\ufeff{"p0": {"forward": [{"judgement": "A"}]}}', None, id="bom"),
        pytest.param(
            '{"p0": {"forward": [{"judgement": NaN}]}}', None, id="NaN-judgement"
        ),  # as compute_accuracy.py: wrong
    ],
)
def test_an_mmrb2_judgements_file_is_refused_cleanly(text, words, tmp_path, capsys):
    truth = tmp_path / "t2i.json"
    truth.write_text(json.dumps(MMRB2_GROUND_TRUTH))
    path = tmp_path / "preds.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape").replace("\xff".encode(), b"\xff"))
    argv = ["score", "--judgments", str(path), "--format", "mmrb2", "--dataset", str(truth), *SCORE]
    rc, out, err = run(argv, capsys)
    assert "Traceback" not in out + err
    if words is None:
        assert rc == 0, err
        return
    assert rc == 1 and f"{path}" in err and words in err, err


def test_r1_rewards_that_are_nan_are_still_read_as_no_verdict(tmp_path, capsys):
    """NaN is refused where text is expected, not where R1-Reward's harness writes it: a
    reward it could not read is a row that is not right (tests/test_official_differential.py)."""
    path = tmp_path / "r1.jsonl"
    rows = [dict(R1_REWARDS[0], rewards=[float("nan"), 1.0]), R1_REWARDS[1]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # json writes NaN
    rc, out, err = run(["score", "--judgments", str(path), "--format", "r1-rewards", *SCORE], capsys)
    assert rc == 0, err
    assert json.loads(out)["overall"]["correct_n"] == "0/2"


# -- judge answers --------------------------------------------------------------------------------
MAX_RESPONSE_CHARS = 200_000  # curate.llm.DEFAULT_MAX_RESPONSE_CHARS: the longest answer a judge gives
CPU_PER_ANSWER = 1.5  # seconds: generous on a loaded 2-core machine; the worst known take ~0.1 s here


def hostile_answers(n: int) -> dict[str, str]:
    """Answers of about ``n`` characters on which a parser run as written takes polynomial
    time (json_repair: quadratic; VL-RewardBench's expression: worse)."""
    return {
        '["': '["' * (n // 2),
        '{"a":': '{"a":' * (n // 5),
        "{ deep": "{" * n,
        "[ deep": "[" * n,
        "[{": "[{" * (n // 2),
        '{"': '{"' * (n // 2),
        "{1}": "{1}" * (n // 3),
        " 1{": " 1{" * (n // 3),
        "t,{": "t,{" * (n // 3),
        '"{/': '"{/' * (n // 3),
        "repeated keys": "{" + '"a":1,' * (n // 6),
        "unclosed string": '{"better_response": "' + "x" * n,
        "fenced deep": "```json\n" + "[" * n + "\n```",
        "fences": "```" * (n // 3) + " " * 10 + "x",
        "Therefore spaces": "Therefore" + " " * n,
        "Therefore Answer spaces": "Therefore Answer " + " " * n,
        "Therefore dashes": "Therefore" + " -" * (n // 2),
        "Answer digits": "Therefore Answer " + "1" * n + " is better",
        "open answer tags": "<answer>" * (n // 8),
        "ratings": "Rating A: [[" * (n // 12),
        "ratings spaces": "Rating A: [[ " + " " * n,
        "brackets": "[[" * (n // 2),
    }


def _answer_rows():
    from mmrb_eval.rules import NO_JUDGEMENT, VERDICT_RULES

    readers: dict[str, Callable[[str], object]] = {f"parser:{k}": v for k, v in PARSERS.items()}
    readers |= {f"rule:{k}": (lambda f: lambda t: f(t, "first", "reverse"))(v) for k, v in VERDICT_RULES.items()}
    readers |= {f"no-judgement:{k}": v for k, v in NO_JUDGEMENT.items()}
    for n in (8_000, MAX_RESPONSE_CHARS):
        for name in hostile_answers(n):
            for reader, fn in readers.items():
                yield pytest.param(reader, fn, n, name, id=f"{reader}-{name}-{n}")


@pytest.mark.parametrize("reader, fn, n, name", list(_answer_rows()))
def test_every_parser_reads_a_hostile_answer_in_bounded_time(reader, fn, n, name):
    text = hostile_answers(n)[name]
    parsing._repaired.cache_clear()
    # the parser's own work, not a collection of what earlier tests in this process left (in a
    # long-lived test worker one took 1.7 s of CPU inside an 8,000-bracket answer); collecting
    # before each answer instead would cost more than the answers
    gc.disable()
    try:
        t = time.process_time()
        got = fn(text)
        spent = time.process_time() - t
    finally:
        gc.enable()
    assert spent < CPU_PER_ANSWER, f"{reader} took {spent:.2f} s on {name!r} x {n}"
    if reader.startswith("parser:"):
        assert got.outcome in ("parsed", "unparsed", "both")
        parsing._repaired.cache_clear()
        assert fn(text) == got  # the budget counts steps, not seconds: the same answer, the same outcome


def test_an_answer_json_repair_cannot_read_in_budget_is_a_parse_failure_with_its_reason():
    text = '["' * 30_000  # 60 KB: over a minute in json_repair as written
    parsing._repaired.cache_clear()
    value = mmrb2_judgement(text)
    assert isinstance(value, Unread) and f"{REPAIR_STEPS:,} steps" in value.reason
    p = parse_mmrb2(text)
    assert (p.outcome, p.shown, p.reason) == ("unparsed", None, value.reason)
    # under the mmrb2 rule it counts (an answer naming neither response), never left out
    from mmrb_eval.rules import mmrb2_no_judgement, mmrb2_verdict

    assert mmrb2_verdict(text, "first", "forward") is None and not mmrb2_no_judgement(text)
    long = "Here: " + "x" * MAX_RESPONSE_CHARS
    assert "too long to repair" in parse_mmrb2(long).reason


def test_the_budget_counts_python_calls_and_gives_back_the_trace_function():
    calls = 0

    def step() -> None:
        nonlocal calls
        calls += 1

    def work() -> None:
        for _ in range(3 * REPAIR_STEPS):
            step()

    def tracer(frame, event, arg):  # a debugger's, or coverage's
        return None

    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        with pytest.raises(parsing._OverBudget):
            parsing._budgeted(work, REPAIR_STEPS)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(before)
    assert REPAIR_STEPS - 2 <= calls <= REPAIR_STEPS  # work() itself is a call too
    assert parsing._budgeted(lambda: 41 + 1, REPAIR_STEPS) == 42


def _ordinary(n: int) -> dict[str, str]:
    """Broken JSON answers of about ``n`` characters, in the shape the mmrb2 template asks for."""
    words = ("the image", "renders", '"quoted"', "text,", "however", "response B", "lacks detail;", "and A")
    prose = " ".join(words[i % len(words)] for i in range(n // 80))
    answer = json.dumps(
        {
            "reasoning": {k: prose for k in ("faithfulness_to_prompt", "text_rendering", "overall_quality")},
            "score": 5,
            "better_response": "B",
            "confidence": 0.8,
        },
        indent=4,
    )
    return {
        "prose around": "Sure, here is my judgement:\n" + answer + "\nHope this helps.",
        "cut short": answer[: len(answer) - 30],
        "raw quotes": answer.replace('\\"', '"'),
        "trailing comma": answer.replace('"score": 5,', '"score": 5,,'),
        "single quotes": answer.replace('"', "'"),
        "missing commas": answer.replace(",\n", "\n"),
        "fenced, cut short": "```json\n" + answer[: len(answer) - 30],
    }


@pytest.mark.parametrize("n", [500, 2_000, 6_000])
@pytest.mark.parametrize("shape", list(_ordinary(500)))
def test_ordinary_broken_answers_read_as_the_benchmarks_json_repair(shape, n):
    """The budget leaves ordinary answers alone: what MMRB2's run records, json_repair without
    a budget (tests/test_official_differential.py restates it)."""
    import json_repair

    text = _ordinary(n)[shape]
    body = re.sub(r"\n?```\s*$", "", re.sub(r"^```(?:json)?\s*\n?", "", text.strip()).strip())
    theirs = json_repair.loads(body)
    parsing._repaired.cache_clear()
    assert mmrb2_judgement(text) == (theirs.get("better_response") or None if isinstance(theirs, dict) else None)
    assert not isinstance(mmrb2_judgement(text), Unread)


# the benchmarks' own expressions, as written, against their linear restatements
CAL = re.compile(
    r"(?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*(?:the\s*)?(?:slightly\s*)?better", re.IGNORECASE
)
TOKENS = st.sampled_from(
    [
        "Overall Judgment",
        "overall judgment",
        "Therefore",
        "therefore",
        "Answer",
        "answer",
        " ",
        "  ",
        "-",
        "\n",
        "*",
        "1",
        "2",
        "3",
        "01",
        "is",
        "the",
        "slightly",
        "better",
        "Better",
        ":",
        "x",
        ".",
        "ſ",
        "\t",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(TOKENS, max_size=14).map("".join))
def test_the_vlrewardbench_expression_restated_finds_what_cal_py_finds(text):
    m = CAL.search(text.replace("\n", "").replace("*", ""))
    assert vlrb_answer_number(text) == (int(m.group(1)) if m else None)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["<answer>", "</answer>", "1", "2", " ", "x", "<answer", "answer>"]), max_size=12).map(
        "".join
    )
)
def test_r1_answer_tags_restated_find_what_the_expression_finds(text):
    assert parsing._r1_answers(text) == re.findall(r"<answer>(.*?)</answer>", text, re.DOTALL)


def test_evaluate_with_the_mmrb2_template_finishes_on_hostile_answers(tmp_path, capsys):
    """The issue's repro: `mmrb evaluate --preset mmrb2` printed "8/8 judgments" and hung.
    Each hostile answer is stored as unparsed with its reason, counted as wrong, and
    `mmrb score --run` reads the run the same way."""
    from tests.support.fake_openai import FakeOpenAI

    dataset = tmp_path / "t2i.json"
    pairs = [{"id": f"p{k}", "response_a": "a", "response_b": "b", "chosen": "A"} for k in range(4)]
    dataset.write_text(json.dumps({"pairs": pairs}))
    answers = iter(['["' * 30_000, "{1}" * 20_000, '{"better_response": "A"}', "{" * 50_000] * 2)
    with FakeOpenAI(lambda req: next(answers)) as srv:
        judge = tmp_path / "judge.toml"
        judge.write_text(f'name = "j"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb2"\nconcurrency = 1\n')
        t = time.perf_counter()
        rc, out, err = run(
            [
                "evaluate",
                "--dataset",
                str(dataset),
                "--judge",
                str(judge),
                "--order",
                "both",
                "--preset",
                "mmrb2",
                "--json",
                "--quiet",
                "--bootstrap",
                "0",
                *_db(tmp_path),
            ],
            capsys,
        )
        assert time.perf_counter() - t < 60
    assert rc == 0, err
    report = json.loads(out)
    assert report["judgments"] == 8 and report["outcomes"]["unparsed"] == 6
    assert report["not_used"]["no_judgement"] == 0  # counted, not left out
    s = Store(str(tmp_path / "store.db"), images=tmp_path / "store-images")
    try:
        (run_,) = s.judge_runs()
        stored = s.judgments(run_.id)
    finally:
        s.close()
    unread = [j for j in stored if j.outcome == "unparsed"]
    assert len(unread) == 6 and all(j.error and "over the budget" in j.error for j in unread)
    rc, out2, err = run(["score", "--run", run_.id, "--preset", "mmrb2", *SCORE, *_db(tmp_path)], capsys)
    assert rc == 0, err
    assert json.loads(out2)["overall"] == report["overall"]


@pytest.mark.parametrize(
    "data, words",
    [
        pytest.param(DEEP.encode(), ": malformed JSON: nested too deeply", id="nested"),
        pytest.param(b'{"overall": {"n": 1' + b"0" * 5000 + b"}}", "a number of more than 4,300 digits", id="digits"),
        pytest.param(b'{"overall": "\xff"}', ": not valid UTF-8 (byte 0xff)", id="invalid-utf8"),
        pytest.param(b'{"overall": ', ":1: malformed JSON", id="truncated"),
    ],
)
def test_a_hostile_report_for_the_leaderboard_is_refused_cleanly(data, words, tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_bytes(data)
    rc, out, err = run(["leaderboard", str(path)], capsys)
    assert rc == 1 and f"{path}" in err and words in err and "Traceback" not in out + err, err


# -- the project's own configuration files and id lists --------------------------------------------
CONFIG_CASES = {
    "nested-toml": ("toml", b"a = " + b"[" * 100_000 + b"\n", "nested too deeply"),
    "nested-yaml": ("yaml", b"a: " + b"[" * 100_000 + b"\n", ("nested too deeply", "not valid YAML")),
    "invalid-utf8": ("toml", b'name = "j\xff"\n', "not valid UTF-8"),
    "not-toml": ("toml", b"name = = j\n", "not valid TOML"),
    "not-a-table": ("yaml", b"- just\n- a list\n", "expected a table"),
    "folder": ("toml", None, "is a folder"),
}
CONFIG_ENTRIES = {  # (the command with the file, whether it reads YAML too)
    "evaluate --judge": (lambda f, tmp: ["evaluate", "--dataset", str(_triplets(tmp)), "--judge", str(f)], False),
    "bestofn --judge": (lambda f, tmp: ["bestofn", "--judge", str(f), *_db(tmp)], False),
    "select --judges": (lambda f, tmp: ["select", "--judges", str(f), *_db(tmp)], False),
    "sample --models": (lambda f, tmp: ["sample", "--models", str(f), *_db(tmp)], True),
    "build --rules": (lambda f, tmp: ["build", "--rules", str(f), "--out", str(tmp / "out"), *_db(tmp)], True),
    "scheme": (lambda f, tmp: ["scheme", str(f)], False),
    "labelstudio config --scheme": (lambda f, tmp: ["labelstudio", "config", "--scheme", str(f)], False),
    "assign --scheme": (lambda f, tmp: ["assign", "--scheme", str(f), "--annotators", "a", *_db(tmp)], False),
    "judge template": (
        lambda f, tmp: ["evaluate", "--dataset", str(_triplets(tmp)), "--judge", str(_with_template(tmp, f))],
        False,
    ),
}


def _triplets(tmp: Path) -> Path:
    path = tmp / "triplets.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TRIPLETS))
    return path


def _with_template(tmp: Path, template: Path) -> Path:
    path = tmp / "judge-with-template.toml"
    path.write_text(f'name = "j"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\ntemplate = "{template}"\n')
    return path


@pytest.mark.parametrize(
    "entry, case",
    [
        (entry, case)
        for entry, (_, yaml_ok) in sorted(CONFIG_ENTRIES.items())
        for case, (suffix, _, _) in sorted(CONFIG_CASES.items())
        if yaml_ok or suffix == "toml"
    ],
)
def test_every_configuration_file_is_refused_cleanly(entry, case, tmp_path, capsys):
    suffix, data, words = CONFIG_CASES[case]
    argv, _ = CONFIG_ENTRIES[entry]
    path = tmp_path / f"config.{suffix}"
    if data is None:
        path.mkdir()
    else:
        path.write_bytes(data)
    rc, out, err = run(argv(path, tmp_path), capsys)
    assert rc != 0 and "Traceback" not in out + err
    assert str(path) in err and any(w in err for w in ((words,) if isinstance(words, str) else words)), err


def test_an_id_list_that_is_not_utf8_is_refused_cleanly(tmp_path, capsys):
    ids = tmp_path / "ids.txt"
    ids.write_bytes(b"p1\np\xff2\n")
    rc, out, err = run(["pair", "--items", str(ids), *_db(tmp_path)], capsys)
    assert rc == 1 and "Traceback" not in out + err and f"{ids}: not valid UTF-8 (byte 0xff" in err
