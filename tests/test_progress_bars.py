"""Every long command draws the one progress bar (curate.commands.common.progress_bars) on a
terminal, on stderr, and nothing of it off a terminal or with --quiet, where not even a bar's
callback is made (no per-item work). One row per command: a new long command gets the check
by adding its row.

A terminal is faked by an stderr whose isatty() is True: rich then draws into it (hiding the
cursor first, which is how a drawn bar is told from the command's own lines on stderr)."""

from __future__ import annotations

import io
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from curate.cli import main
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
HIDE_CURSOR = "\x1b[?25l"  # rich's Live starts with it: a bar was drawn
JUDGE = "bj"  # the model answering in the mmrb template's words ([[A]]); the others as select's template asks


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def answer(req) -> str:
    return "[[A]]" if req.model == JUDGE else "Overall Judgment: Answer 1 is better."


@dataclass(frozen=True)
class Stores:
    """Folders of stores at each stage (copied before a command changes one), the server."""

    ingested: Path
    paired: Path
    labelled: Path
    url: str


def _stage(src: Path | None, dst: Path) -> list[str]:
    if src is not None:
        shutil.copytree(src, dst)
    else:
        dst.mkdir()
    return ["--db", str(dst / "s.db"), "--images", str(dst / "images")]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    base = tmp_path_factory.mktemp("stages")
    with FakeOpenAI(answer) as srv:
        where = _stage(None, base / "ingested")
        assert main(["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *where]) == 0
        where = _stage(base / "ingested", base / "paired")
        assert main(["pair", "--strategy", "correct_incorrect", *where]) == 0
        where = _stage(base / "paired", base / "labelled")
        _label_one(Path(where[1]))
        yield Stores(base / "ingested", base / "paired", base / "labelled", srv.url)


def _label_one(db: Path) -> None:
    from curate import schemes
    from curate.model import Annotator
    from curate.store import Store

    scheme = schemes.BUILT_IN[schemes.DEFAULT]
    values = {"correctness_first": "correct", "correctness_second": "incorrect", "preference": "first"}
    with Store(str(db)) as s:
        s.add_annotator(Annotator("ann"))
        s.save_label(schemes.to_label(scheme, s.pairs()[0].id, "ann", values, scheme_version=scheme.version))


def _models(tmp: Path, url: str, names: tuple[str, ...]) -> str:
    f = tmp / "models.toml"
    f.write_text("".join(f'[[models]]\nname = "{n}"\nbase_url = "{url}"\nmodel = "{n}"\n' for n in names))
    return str(f)


def _judge(tmp: Path, url: str) -> str:
    f = tmp / "judge.toml"
    f.write_text(f'name = "j"\nbase_url = "{url}"\nmodel = "{JUDGE}"\ntemplate = "mmrb"\norder = "both"\n')
    return str(f)


def ingest(s: Stores, tmp: Path) -> list[str]:
    return ["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *_stage(None, tmp / "s")]


def sample(s: Stores, tmp: Path) -> list[str]:
    return ["sample", "--models", _models(tmp, s.url, ("m",)), *_stage(s.ingested, tmp / "s")]


def select(s: Stores, tmp: Path) -> list[str]:
    judges = _models(tmp, s.url, ("a", "b"))
    return ["select", "--judges", judges, "--allow-missing-images", *_stage(s.paired, tmp / "s")]


def duplicates(s: Stores, tmp: Path) -> list[str]:
    return ["select", "--duplicates-only", *_stage(s.ingested, tmp / "s")]


def quality(s: Stores, tmp: Path) -> list[str]:
    return ["quality", *_stage(s.labelled, tmp / "s")]


def build(s: Stores, tmp: Path) -> list[str]:
    rules = tmp / "rules.toml"
    rules.write_text("[filter]\nmin_labels = 1\ncorrectness_task = false\nadjudication = false\n")
    return ["build", "--rules", str(rules), "--out", str(tmp / "out"), *_stage(s.labelled, tmp / "s")]


def evaluate(s: Stores, tmp: Path) -> list[str]:
    ds = s.ingested.parent / "d.jsonl"  # one path: the run id names the dataset's
    ds.write_text("".join(f'{{"id": "t{i}", "prompt": "p", "chosen": "a", "rejected": "b"}}\n' for i in range(5)))
    return ["evaluate", "--dataset", str(ds), "--judge", _judge(tmp, s.url), *_stage(None, tmp / "s")]


def bestofn(s: Stores, tmp: Path) -> list[str]:
    where = _stage(s.ingested, tmp / "s")
    return ["bestofn", "--judge", _judge(tmp, s.url), "--allow-missing-images", "--resamples", "0", *where]


def labelstudio(action: str) -> Callable[[Stores, Path], list[str]]:
    """push and pull against a stand-in of Label Studio: the command's wiring of the bar (the
    real server's runs are the slow tests of tests/test_labelstudio.py)."""

    def argv(s: Stores, tmp: Path) -> list[str]:
        where = _stage(s.paired, tmp / "s")
        return ["labelstudio", action, "--url", "http://127.0.0.1:9", "--project", "sample", *where]

    return argv


# command, its argv (from the stores and a fresh folder), a bar's description it draws, rc
ROWS = [
    ("ingest", ingest, "rows read", 0),  # of the file's rows (the bar's total, below)
    ("sample", sample, "m", 0),
    ("select", select, "judge a", 0),
    ("select --duplicates-only", duplicates, "image fingerprints", 0),
    ("quality", quality, "bias", 0),
    ("build", build, "writing the card", 0),
    ("evaluate", evaluate, "judgments", 0),
    ("bestofn", bestofn, "judgments", 0),
    ("labelstudio push", labelstudio("push"), "pairs pushed", 0),
    ("labelstudio pull", labelstudio("pull"), "tasks read", 0),
]


@pytest.fixture
def fake_label_studio(monkeypatch):
    """Client, push and pull standing in for a server: they report as the real ones do."""
    from annotate.labelstudio import client, pull, push

    class Client:
        url = "http://127.0.0.1:9"

        def __init__(self, *a, **kw) -> None:
            pass

        def check(self) -> None:
            pass

        def close(self) -> None:
            pass

    def fake_push(store, client, title, *, progress=None, **kw):
        pairs = store.pairs()
        for n in range(1, len(pairs) + 1):
            if progress:
                progress("pairs pushed", n, len(pairs))
        return push.PushResult(1, True, len(pairs), 0, len(pairs))

    def fake_pull(store, client, title, *, progress=None):
        for n in range(1, 4):
            if progress:
                progress("tasks read", n, 3)
        return pull.PullResult(1)

    monkeypatch.setattr(client, "Client", Client)
    monkeypatch.setattr(client, "api_key_from_env", lambda name: "key")
    monkeypatch.setattr(push, "push", fake_push)
    monkeypatch.setattr(pull, "pull", fake_pull)


@pytest.mark.parametrize(("name", "argv", "description", "rc"), ROWS, ids=[r[0] for r in ROWS])
def test_a_terminal_gets_the_bar_on_stderr_and_stdout_stays_the_same(
    name, argv, description, rc, stores, tmp_path, monkeypatch, capsys, fake_label_studio
):
    (tmp_path / "plain").mkdir()
    (tmp_path / "tty").mkdir()
    assert main(argv(stores, tmp_path / "plain")) == rc
    plain = capsys.readouterr().out
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(argv(stores, tmp_path / "tty")) == rc
    drawn = tty.getvalue()
    assert HIDE_CURSOR in drawn
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)  # the words without their colours
    assert description in text
    assert re.search(r"\b[1-9]\d*/(\d+|\?)", text)  # the count, done of total (? while unknown)
    out = capsys.readouterr().out
    # the same report on stdout, but for the folders, times and speeds, which differ by run
    assert same(out, tmp_path / "tty") == same(plain, tmp_path / "plain")


def same(out: str, folder: Path) -> str:
    return re.sub(r"[\d.]+(/s| s)\b", r"N\1", out.replace(str(folder), "X"))


@pytest.mark.parametrize("terminal", [False, True], ids=["not a terminal", "--quiet on a terminal"])
@pytest.mark.parametrize(("name", "argv", "description", "rc"), ROWS, ids=[r[0] for r in ROWS])
def test_no_bar_and_no_callback_off_a_terminal_or_with_quiet(
    name, argv, description, rc, terminal, stores, tmp_path, monkeypatch, capsys, fake_label_studio
):
    from curate.commands import common

    def made(*a, **kw):
        raise AssertionError("a bar's counter was made while the bars are hidden")

    monkeypatch.setattr(common.Counter, "__init__", made)  # no counter: no callback, no per-item work
    tty = Tty()
    if terminal:
        monkeypatch.setattr(sys, "stderr", tty)
    assert main([*argv(stores, tmp_path), *(["--quiet"] if terminal else [])]) == rc
    err = tty.getvalue() if terminal else capsys.readouterr().err
    assert HIDE_CURSOR not in err and "━" not in err


def test_ingest_s_bar_starts_no_thread_so_a_large_file_is_still_read_in_a_forked_process(monkeypatch):
    from curate.commands.common import progress_bars
    from curate.ingest.rows import _threads

    monkeypatch.setattr(sys, "stderr", Tty())
    before = _threads()
    with progress_bars(thread=False) as bars:
        counter = bars.counter("rows read")
        assert counter is not None
        counter.advance(3)
        assert _threads() == before  # rows.py forks its reader only from a lone thread
    with progress_bars() as bars:  # the others redraw on rich's timer thread
        assert bars.shown and _threads() == before + 1


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.jsonl", b'{"id": 1}\n{"id": 2}\n', 2),
        ("b.jsonl", b'{"id": 1}\n{"id": 2}', 2),  # the last line without its newline
        ("c.jsonl", b"", 0),
        ("d.csv", b"id,text\n1,a\n2,b\n", 2),  # the header is no row
        ("e.json", b'[{"id": 1}]', None),  # known only once parsed
        ("f.txt", b"x\n", None),  # not an input format: read_rows says so
    ],
)
def test_ingest_s_bar_total_is_the_file_s_rows_read_cheaply(tmp_path, name, content, expected):
    from curate.formats.reader import row_estimate

    path = tmp_path / name
    path.write_bytes(content)
    assert row_estimate(path) == expected


def test_ingest_s_bar_total_of_parquet_and_of_a_file_that_cannot_be_read(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from curate.formats.reader import row_estimate

    pq.write_table(pa.table({"id": [1, 2, 3]}), tmp_path / "p.parquet")
    assert row_estimate(tmp_path / "p.parquet") == 3
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    assert row_estimate(tmp_path / "bad.parquet") is None
    assert row_estimate(tmp_path / "absent.jsonl") is None
    assert row_estimate(tmp_path) is None  # a folder


def test_ingest_s_bar_counts_rows_read_of_the_file_s_rows(stores, tmp_path, monkeypatch):
    lines = (SAMPLE / "items.jsonl").read_bytes().count(b"\n")
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(ingest(stores, tmp_path)) == 0
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", tty.getvalue())
    assert f"{lines}/{lines}" in text  # a total, so an ETA, not "N/?"
