"""The README's commands stay true: ``./run test`` lints, type-checks and runs the whole suite
(``--quick`` without the browser and Label Studio tests and without system set-up), ``./run app``
serves app.py, CI calls the test one, and the walkthrough's command blocks run as written on the
bundled sample.

The walkthrough's endpoint steps run against the loopback OpenAI-compatible test server:
the copy of data/sample used here has the models and judge files' base_url pointed at it,
which is the one edit a user makes too. The labelling step (people in the browser) is its
shell alternative, as written: the sample's example labels imported.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import build_markers
from tests.support.fake_openai import FakeOpenAI
from tests.support.services import unavailable
from tests.support.streamlit_server import StreamlitServer

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_two_commands_are_documented_and_ci_runs_the_test_one():
    assert "./run app" in README and "./run test" in README and "./run test --quick" in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^\./run test\s*$", ci, re.M), ci


def _project_venv(tmp_path: Path, tools: dict[str, str] | None = None) -> Path:
    """A stand-in for ``.venv`` (``MMRB_VENV``) whose python, streamlit, ruff and mypy are this
    test's (or the shell scripts in ``tools``), and already set up: ./run then runs exactly what it
    runs on a set-up checkout, installing nothing."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name in ("python", "streamlit", "ruff", "mypy"):
        target = sys.executable if name == "python" else Path(sys.executable).with_name(name)
        exe = venv / "bin" / name
        exe.write_text((tools or {}).get(name) or f'#!/bin/sh\nexec "{target}" "$@"\n')
        exe.chmod(0o755)
    (venv / ".mmrb-installed").touch()  # newer than pyproject.toml: no pip install
    return venv


LINT = ["ruff check .", "ruff format --check .", "mypy"]  # what ./run test runs before pytest, in order
PARALLEL = "-n auto --dist loadfile"  # and how it runs pytest: a test file to a worker, on every core


@pytest.mark.parametrize("failing", [None, *LINT])
def test_run_test_lints_and_type_checks_first_and_stops_at_the_first_failure(tmp_path, failing):
    def tool(name: str) -> str:  # says what it was asked, and fails where the test says
        return f'#!/bin/sh\nsaid=$(echo {name} "$@")\necho "ran: $said"\n[ "$said" != "$FAIL_AT" ]\n'

    venv = _project_venv(tmp_path, {name: tool(name) for name in ("python", "ruff", "mypy")})
    env = dict(os.environ, MMRB_VENV=str(venv), FAIL_AT=failing or "")
    env.pop("MMRB_TEST_WORKERS", None)
    proc = subprocess.run(["./run", "test", "--quick", "-x"], cwd=ROOT, env=env, capture_output=True, text=True)
    ran = [line.removeprefix("ran: ") for line in proc.stdout.splitlines()]
    if failing is None:
        assert proc.returncode == 0, proc.stderr
        assert ran == [*LINT, f"python -m pytest {PARALLEL} --quick -x"]
    else:
        assert proc.returncode == 1
        assert ran == LINT[: LINT.index(failing) + 1]  # nothing after it, pytest least of all
        assert f"'{failing}' failed, so the tests did not run" in proc.stderr


def test_run_installs_the_lean_project_for_the_app_and_everything_for_the_tests_saying_so(tmp_path):
    # python is a stand-in logging what pip is asked; the venv starts with no stamp: not set up
    py = '#!/bin/sh\necho "$@" >> "$(dirname "$0")/../asked"\n'
    venv = _project_venv(tmp_path, {"python": py})
    (venv / ".mmrb-installed").unlink()
    env = dict(os.environ, MMRB_VENV=str(venv))

    def setup(*what: str) -> tuple[list[str], str]:
        (venv / "asked").unlink(missing_ok=True)
        proc = subprocess.run(["./run", "setup", *what], cwd=ROOT, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        asked = venv / "asked"
        return (asked.read_text().splitlines() if asked.exists() else []), proc.stderr

    asked, said = setup("app")
    assert asked == ["-m pip install -q --upgrade pip", "-m pip install -q -e ."]  # no extras, no test tools
    assert "installing the project with pip" in said and "minute" in said and "set up in" in said
    assert setup("app") == ([], "")  # once
    asked, said = setup()  # the tests' install: the extras and the tools as well
    assert asked[-1] == "-m pip install -q -e .[test]" and "the test tools" in said
    assert setup("app") == ([], "") and setup() == ([], "")  # the app needs nothing more


def _collected(cmd: list[str], env: dict) -> tuple[set[str], str]:
    """The test ids a collect-only run prints, and the trace of the shell script (bash -x)."""
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {line for line in proc.stdout.splitlines() if "::" in line}, proc.stderr


@pytest.mark.slow
def test_run_test_runs_the_whole_suite_and_quick_leaves_out_the_system_tests(tmp_path):
    check = subprocess.run(["bash", "tests/setup-system.sh", "--check"], cwd=ROOT, capture_output=True, text=True)
    if check.returncode:  # ./run test would install it: not a test's job
        unavailable(f"tests/setup-system.sh would install something: {check.stdout.strip()}")
    # ruff and mypy are stand-ins saying what they were asked (on stderr, apart from the ids): the
    # real ones are ./run test's own lint stage, which ran before this test
    said = {name: f'#!/bin/sh\nsaid=$(echo {name} "$@")\necho "ran: $said" >&2\n' for name in ("ruff", "mypy")}
    env = dict(os.environ, MMRB_VENV=str(_project_venv(tmp_path, said)))
    env.pop("MMRB_TEST_WORKERS", None)
    pytest_args = ["--collect-only", "-q", "-p", "no:cacheprovider"]  # pytest's own arguments, passed through
    some = ["tests/test_cli.py", "tests/test_labelstudio.py", "tests/test_browser_app.py"]
    suite, _ = _collected([sys.executable, "-m", "pytest", *pytest_args, *some], env)
    full, trace = _collected(["bash", "-x", "./run", "test", *pytest_args, *some], env)
    assert full == suite  # the browser and Label Studio tests included
    assert {t.split("::")[0] for t in suite} == set(some)
    assert "+ bash tests/setup-system.sh" in trace and "MMRB_REQUIRE_ALL=1" in trace
    assert [s for s in LINT if f"ran: {s}\n" in trace] == LINT  # lint and types first
    quick, trace = _collected(["bash", "-x", "./run", "test", "--quick", *pytest_args, *some], env)
    assert quick == {t for t in suite if t.startswith("tests/test_cli.py::")} and quick
    assert "setup-system.sh" not in trace and "MMRB_REQUIRE_ALL" not in trace
    # with nothing after it, ./run test runs pytest with no test named: the whole suite (testpaths)
    said["python"] = '#!/bin/sh\nsaid=$(echo python "$@")\necho "ran: $said"\n'
    env["MMRB_VENV"] = str(_project_venv(tmp_path / "bare", said))
    proc = subprocess.run(["./run", "test"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    last = proc.stdout.splitlines()[-1]
    assert proc.returncode == 0 and last == f"ran: python -m pytest {PARALLEL}", proc.stdout + proc.stderr


@pytest.mark.slow
def test_run_app_serves_the_app(tmp_path):
    import httpx

    env = {"MMRB_VENV": str(_project_venv(tmp_path))}
    log = tmp_path / "app.log"
    with StreamlitServer(None, launcher=[str(ROOT / "run"), "app"], extra_env=env, log=log) as srv:
        # the app's own route (app.py, through st.App), before any page has run
        r = httpx.post(f"{srv.url}/api/session", content=b"code", timeout=30)
        assert (r.status_code, r.text) == (503, "The app has not started yet.")
        # ... and the demo accounts are printed already, at start-up, not when a browser connects
        printed = log.read_text()
        assert "demo accounts" in printed and "lead / lead-demo / admin" in printed, printed


def _walkthrough_blocks() -> list[str]:
    section = README.split("## Walkthrough on the sample", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, re.S)


def _answer(req) -> str:
    text = req.prompt_text
    h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    if "[[A]]" in text:  # the Multimodal RewardBench judge prompt
        return "Assistant A is more accurate. [[A]]" if h % 3 else "Assistant B is better. [[B]]"
    if "Overall Judgment" in text:  # the VL-RewardBench judge prompt
        return f"Overall Judgment: Answer {1 + h % 2} is better"
    return f"Looking at the image, the answer is ({'ABCD'[h % 4]}). It is {h % 50} units."


def _bash(script: str, cwd: Path, env: dict) -> str:
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, (
        f"walkthrough block failed:\n{script}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    )
    return proc.stdout


def _offline(block: str) -> str:
    """A block as run here: publishing only as its dry run (there is no Hub to upload to: the
    upload itself is tests/test_publish.py's, against a loopback Hub)."""
    lines = block.splitlines()
    return "\n".join(x for x in lines if not x.startswith("mmrb publish") or "--dry-run" in x) + "\n"


@pytest.mark.slow
def test_walkthrough_runs_as_written(tmp_path):
    blocks = _walkthrough_blocks()
    assert len(blocks) == 8, "the walkthrough has eight command blocks"
    shutil.copytree(ROOT / "data", tmp_path / "data")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", MMRB_DB="walkthrough.db")
    env.pop("MMRB_IMAGES", None)
    with FakeOpenAI(answer=_answer) as srv:
        for name in ("models.toml", "judge.toml"):
            f = tmp_path / "data" / "sample" / name
            f.write_text(re.sub(r'base_url = "[^"]+"', f'base_url = "{srv.url}"', f.read_text()))
        out = "".join(_bash(b, tmp_path, env) for b in blocks[:3])
        assert "29 items" in out
        assert srv.count() > 0  # sample and select really called the endpoint
        out = "".join(_bash(_offline(b), tmp_path, env) for b in blocks[3:])
    assert "imported 174 labels by 3 annotators on 58 pairs" in out  # the example labels, step 4
    built = tmp_path / "walkthrough-benchmark"
    triplets = (built / "triplets.jsonl").read_text().splitlines()
    assert triplets and f"wrote {len(triplets)} triplets" in out, out
    assert build_markers.markers(built) and not build_markers.unresolved(built)
    assert (built / "README.md").exists() and (built / "multimodal_rewardbench.jsonl").exists()
    assert (tmp_path / "walkthrough-leaderboard.png").stat().st_size > 0
    assert (tmp_path / "walkthrough-bestofn.png").stat().st_size > 0 and "Best-of-N accuracy" in out
    assert "sample-judge" in out or "qwen2-vl-7b-judge" in out


@pytest.mark.slow
def test_the_walkthrough_builds_from_a_shell_without_any_endpoint(tmp_path):
    """A newcomer with no model endpoint skips step 2 (and 6): the example labels of step 4
    make the sample's benchmark, tens of triplets, each image marker naming a file of it."""
    ingest, _, accounts, labels, build, *_ = _walkthrough_blocks()
    shutil.copytree(ROOT / "data", tmp_path / "data")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", MMRB_DB="walkthrough.db")
    env.pop("MMRB_IMAGES", None)
    out = "".join(_bash(b, tmp_path, env) for b in (ingest, accounts, labels))
    assert "imported 174 labels by 3 annotators on 58 pairs" in out
    out = _bash(build, tmp_path, env)
    built = tmp_path / "walkthrough-benchmark"
    n = len((built / "triplets.jsonl").read_text().splitlines())
    assert n >= 20 and f"wrote {n} triplets" in out, out
    assert re.search(r"^\s*preference\s+nominal\s+58\s+174\s+0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]", out, re.M), out
    assert build_markers.markers(built) and not build_markers.unresolved(built)


def test_the_walkthrough_outputs_are_git_ignored(tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    outputs = ["walkthrough.db", "walkthrough-benchmark/triplets.jsonl", "walkthrough-leaderboard.png"]
    outputs.append("walkthrough-bestofn.png")
    for name in outputs:  # each is written by a walkthrough block, in the repository root
        assert name.split("/")[0] in README, name
    proc = subprocess.run(["git", "check-ignore", "--no-index", *outputs], cwd=ROOT, capture_output=True, text=True)
    assert sorted(proc.stdout.split()) == sorted(outputs), proc.stdout + proc.stderr


def test_the_readme_names_the_samples_photos_and_its_missing_image():
    """The sample's two photos come from scikit-learn (data/make_sample.py): the README says
    which, under which licence; and that the missing image is deliberate."""
    source = (ROOT / "data" / "make_sample.py").read_text(encoding="utf-8")
    photos = re.findall(r'photo\("([^"]+)", "([^"]+)"\)', source)
    assert len(photos) == 2, photos
    for ours, sklearns in photos:
        assert ours in README and sklearns in README, (ours, sklearns)
    assert "scikit-learn" in README and "CC BY 2.0" in README
    assert 'id="vqa-04"' in source and "`vqa-04`" in README and "on purpose" in README


def test_demo_accounts_in_the_readme_are_the_ones_the_app_creates():
    from annotate.demo import ACCOUNTS

    for name, password, _role in ACCOUNTS:
        assert f"`{name}` / `{password}`" in README


def test_the_readmes_screenshots_exist_and_its_regeneration_command_copies_each():
    shown = re.findall(r"\]\((docs/screenshots/[\w-]+\.png)\)", README)
    assert {"docs/screenshots/annotator-label.png", "docs/screenshots/lead-adjudication.png"} <= set(shown)
    for path in shown:
        assert (ROOT / path).stat().st_size > 10_000, path
    copied = re.search(r"cp /tmp/shots/\{([\w,-]+)\}\.png docs/screenshots/", README)
    assert copied and {f"docs/screenshots/{n}.png" for n in copied.group(1).split(",")} == set(shown)
