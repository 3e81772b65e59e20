"""deploy/'s files as rendered: every placeholder filled, nginx and systemd accept them, and the
unit starts an app process as the local runner does (tests/test_browser_deploy.py runs it all)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from deploy import local
from tests.support.services import unavailable


def test_render_fills_every_placeholder_and_refuses_a_missing_or_unused_value():
    assert local.render("a {{X}} b {{Y}} {{X}}", {"X": "1", "Y": "$host"}) == "a 1 b $host 1"
    with pytest.raises(ValueError, match="no value for Y"):
        local.render("{{X}} {{Y}}", {"X": "1"})
    with pytest.raises(ValueError, match="not in the template: Z"):
        local.render("{{X}}", {"X": "1", "Z": "2"})


@pytest.mark.parametrize(
    ("ports", "message"),
    [([], "at least one"), ([8501, 8501], "twice"), ([0], "not a port: 0"), ([70000], "not a port: 70000")],
)
def test_the_site_refuses_bad_ports(ports, message):
    with pytest.raises(ValueError, match=message):
        local.site(ports)


def test_the_site_lists_each_app_process_once_and_keeps_nginx_variables():
    text = local.site([8501, 8502, 8503], listen="127.0.0.1:9443", server_name="mmrb.example.org")
    assert "{{" not in text
    assert [line.strip() for line in text.splitlines() if line.strip().startswith("server 127")] == [
        "server 127.0.0.1:8501;",
        "server 127.0.0.1:8502;",
        "server 127.0.0.1:8503;",
    ]
    assert "listen 127.0.0.1:9443 ssl;" in text and "server_name mmrb.example.org;" in text
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in text


def test_nginx_accepts_the_rendered_configuration(tmp_path):
    if local.nginx_binary() is None:
        unavailable("nginx is not installed (tests/setup-system.sh installs nginx-light)")
    proxy = local.Nginx(tmp_path, [8501, 8502], listen_port=9443)
    assert proxy.check() == ""
    (tmp_path / "mmrb.conf").write_text(local.site([8501]).replace("hash $mmrb_route", "hash_nonsense"))
    assert "hash_nonsense" in proxy.check()  # the check can fail


def _exec_start(unit: str) -> list[str]:
    (line,) = [ln for ln in unit.splitlines() if ln.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart="))


def test_the_unit_starts_the_app_as_the_local_runner_does(tmp_path):
    unit = local.unit(user="mmrb", images=tmp_path / "images")
    assert "{{" not in unit
    cmd = _exec_start(unit)
    assert Path(cmd[0]).name == "streamlit" and cmd[1:3] == ["run", "app.py"]
    runner = local.app_command(8501, tmp_path / "images")
    assert [a.replace("%i", "8501") for a in cmd[3:]] == runner[runner.index(str(local.ROOT / "app.py")) + 1 :]


def test_systemd_accepts_the_unit(tmp_path):
    if shutil.which("systemd-analyze") is None:
        unavailable("systemd-analyze is not installed (tests/setup-system.sh installs systemd)")
    (tmp_path / "images").mkdir()
    unit = local.unit(user="root", images=tmp_path / "images")
    path = tmp_path / "mmrb-app@8501.service"
    path.write_text(unit)
    r = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr.strip()) == (0, "")  # a warning (an unknown key) is a failure too


def test_render_writes_the_site_and_the_unit(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["render", "--out", str(out), "--ports", "9001", "9002", "--user", "mmrb", "--images", "/srv/img"]
    assert local.main(argv) == 0
    assert (out / "mmrb.conf").read_text() == local.site([9001, 9002])
    assert (out / "mmrb-app@.service").read_text() == local.unit(user="mmrb", images="/srv/img")
    assert local.main(["render", "--out", str(out), "--ports", "9001", "9001"]) == 1
    assert "error: an app port is given twice" in capsys.readouterr().err


def test_run_needs_a_store(monkeypatch, capsys):
    monkeypatch.delenv("MMRB_DB", raising=False)
    assert local.main(["run"]) == 2
    assert "set MMRB_DB" in capsys.readouterr().err
