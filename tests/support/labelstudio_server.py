"""A real Label Studio server on 127.0.0.1 for tests and benchmarks.

``start_label_studio(tmpdir)`` works outside pytest (benchmarks use it); the session fixture
``label_studio`` wraps it. The server comes from the virtual environment made by
tests/setup-system.sh (``.venv-labelstudio``, or $MMRB_LABEL_STUDIO_VENV), runs on a free
port with its own data folder, and serves local files under ``DOCUMENT_ROOT``. The first
start on an empty folder migrates its database and takes about 30 s.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import httpx

ROOT = Path(__file__).resolve().parents[2]
USERNAME = "admin@example.com"
PASSWORD = "mmrb-test-password"
TOKEN = "0123456789abcdef0123456789abcdef01234567"  # a legacy token (40 hex digits)
DOCUMENT_ROOT = tempfile.gettempdir()  # tests keep their image folders under it
START_TIMEOUT = float(os.environ.get("MMRB_LABEL_STUDIO_START_TIMEOUT", "600"))


class LabelStudioServer(NamedTuple):
    url: str
    token: str


def label_studio_binary() -> Path:
    venv = Path(os.environ.get("MMRB_LABEL_STUDIO_VENV") or ROOT / ".venv-labelstudio")
    return venv / "bin" / "label-studio"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StartError(RuntimeError):
    pass


def start_label_studio(
    tmpdir: str | Path, *, document_root: str = DOCUMENT_ROOT
) -> tuple[str, str, Callable[[], None]]:
    """Start a server with its data in ``tmpdir``; returns (url, token, stop)."""
    exe = label_studio_binary()
    if not exe.exists():
        raise StartError(f"Label Studio is not installed at {exe} (tests/setup-system.sh installs it)")
    tmpdir = Path(tmpdir)
    data = tmpdir / "ls-data"
    data.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LABEL_STUDIO_", "DJANGO_", "VIRTUAL_ENV"))}
    env.update(
        LABEL_STUDIO_BASE_DATA_DIR=str(data),
        LABEL_STUDIO_USERNAME=USERNAME,
        LABEL_STUDIO_PASSWORD=PASSWORD,
        LABEL_STUDIO_USER_TOKEN=TOKEN,
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED="true",
        LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT=document_root,
        SENTRY_DSN="",
        FRONTEND_SENTRY_DSN="",
        COLLECT_ANALYTICS="false",
        LATEST_VERSION_CHECK="false",
        LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="false",
        PYTHONUNBUFFERED="1",
    )
    log = open(tmpdir / "label-studio.log", "ab")
    proc = subprocess.Popen(
        [str(exe), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port)],
        cwd=tmpdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, stopped as one
    )

    def stop() -> None:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, 15)
                proc.wait(20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, 9)
                except ProcessLookupError:
                    pass
                proc.wait(10)
        log.close()

    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            stop()
            tail = (tmpdir / "label-studio.log").read_text(errors="replace")[-2000:]
            raise StartError(f"Label Studio exited with code {proc.returncode}:\n{tail}")
        try:
            if httpx.get(url + "/health", timeout=2).json().get("status") == "UP":
                # /health answers before the first user exists: wait until the token works
                r = httpx.get(url + "/api/current-user/whoami", headers={"Authorization": f"Token {TOKEN}"}, timeout=5)
                if r.status_code == 200:
                    return url, TOKEN, stop
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.5)
    stop()
    raise StartError(f"Label Studio did not become ready within {START_TIMEOUT:.0f} s")


def label_studio_fixture():
    """The body of the session fixture (see tests/test_labelstudio.py).

    $MMRB_TEST_LABEL_STUDIO_URL (with $MMRB_TEST_LABEL_STUDIO_TOKEN) reuses a running server.
    """
    from tests.support.services import unavailable

    if os.environ.get("MMRB_TEST_LABEL_STUDIO_URL"):
        yield LabelStudioServer(
            os.environ["MMRB_TEST_LABEL_STUDIO_URL"], os.environ.get("MMRB_TEST_LABEL_STUDIO_TOKEN", TOKEN)
        )
        return
    tmp = tempfile.mkdtemp(prefix="mmrb-ls-")
    try:
        url, token, stop = start_label_studio(tmp)
    except StartError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        unavailable(str(e))
    try:
        yield LabelStudioServer(url, token)
    finally:
        stop()
        shutil.rmtree(tmp, ignore_errors=True)
