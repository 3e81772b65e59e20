"""The team deployment's files rendered, and the whole of it started on one machine for a try or a test.

``python -m deploy.local render --out DIR --ports 8501 8502 ...`` writes the nginx site and the
systemd unit with this checkout's paths (install them as the README says).
``python -m deploy.local run --apps 2`` starts N app processes on one store ($MMRB_DB), nginx
with a self-signed certificate on https://127.0.0.1:8443 in front of them, and stops them all
on Ctrl-C: the same nginx site as a server uses, inside a minimal nginx.conf of its own (its
own pid, logs and temporary files in a scratch folder, so no root and no system nginx needed).
"""

from __future__ import annotations

import argparse
import getpass
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SITE = HERE / "nginx-site.conf.template"
UNIT = HERE / "mmrb-app@.service"
_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{{NAME}}`` replaced; a name without a value, or a value never
    used, is an error (a half-filled config would fail later, far from the cause)."""
    wanted = set(_PLACEHOLDER.findall(template))
    if missing := wanted - values.keys():
        raise ValueError(f"no value for {', '.join(sorted(missing))}")
    if unused := values.keys() - wanted:
        raise ValueError(f"not in the template: {', '.join(sorted(unused))}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def site(
    ports: Sequence[int],
    *,
    listen: str = "443",
    server_name: str = "_",
    certificate: str | Path = "/etc/ssl/certs/mmrb.pem",
    key: str | Path = "/etc/ssl/private/mmrb.key",
    access_log: str | Path = "/var/log/nginx/mmrb.access.log",
) -> str:
    """The nginx site for app processes on these loopback ports."""
    if not ports:
        raise ValueError("give at least one app port")
    if bad := [p for p in ports if not 0 < p < 65536]:
        raise ValueError(f"not a port: {bad[0]}")
    if len(set(ports)) != len(ports):
        raise ValueError("an app port is given twice")
    servers = "\n".join(f"    server 127.0.0.1:{p};" for p in ports)
    return render(
        SITE.read_text(),
        {
            "UPSTREAM_SERVERS": servers,
            "LISTEN": listen,
            "SERVER_NAME": server_name,
            "CERTIFICATE": str(certificate),
            "CERTIFICATE_KEY": str(key),
            "ACCESS_LOG": str(access_log),
        },
    )


def unit(*, user: str, images: str | Path, env_file: str | Path = "/etc/mmrb/app.env", root: Path = ROOT) -> str:
    """The systemd template unit with this checkout's paths (its venv's streamlit)."""
    return render(
        UNIT.read_text(),
        {
            "USER": user,
            "ROOT": str(root),
            "ENV_FILE": str(env_file),
            "STREAMLIT": str(Path(sys.executable).parent / "streamlit"),
            "IMAGES": str(images),
        },
    )


def main_conf(site_file: Path, run_dir: Path) -> str:
    """A whole nginx.conf around the site, every file it writes inside ``run_dir``."""
    temp = {t: run_dir / f"{t}_temp" for t in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for d in temp.values():
        d.mkdir(parents=True, exist_ok=True)
    # as root, nginx's workers would run as nobody, who cannot enter a private scratch folder
    user = "user root;\n" if os.geteuid() == 0 else ""
    paths = "\n".join(f"    {t}_temp_path {d};" for t, d in temp.items())
    return (
        f"{user}worker_processes 1;\ndaemon off;\npid {run_dir / 'nginx.pid'};\n"
        f"error_log {run_dir / 'error.log'} warn;\nevents {{ worker_connections 256; }}\n"
        f"http {{\n{paths}\n    include {site_file};\n}}\n"
    )


def self_signed(directory: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A certificate and key for ``host`` (openssl, valid two days): for a try, never a server."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    san = f"IP:{host}" if re.fullmatch(r"[\d.]+|[0-9a-fA-F:]+", host) else f"DNS:{host}"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={host}"]
        + ["-addext", f"subjectAltName={san}", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)


class Nginx:
    """nginx in the foreground on the rendered site, its files in ``run_dir``."""

    def __init__(self, run_dir: Path, ports: Sequence[int], *, listen_port: int, host: str = "127.0.0.1") -> None:
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (apt-get install --no-install-recommends nginx-light)")
        self.binary = binary
        self.run_dir = run_dir
        self.url = f"https://{host}:{listen_port}"
        self.access_log = run_dir / "access.log"
        cert, key = self_signed(run_dir, host)
        site_file = run_dir / "mmrb.conf"
        site_file.write_text(
            site(ports, listen=f"{host}:{listen_port}", certificate=cert, key=key, access_log=self.access_log)
        )
        self.conf = run_dir / "nginx.conf"
        self.conf.write_text(main_conf(site_file, run_dir))
        self.proc: subprocess.Popen[bytes] | None = None

    def check(self) -> str:
        """``nginx -t`` on the configuration: its complaint, or "" when it is valid."""
        r = subprocess.run([self.binary, "-t", "-q", "-c", str(self.conf)], capture_output=True, text=True)
        return "" if r.returncode == 0 else r.stderr.strip()

    def start(self, timeout: float = 20) -> Nginx:
        if problem := self.check():
            raise RuntimeError(f"nginx refused its configuration: {problem}")
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stderr=subprocess.DEVNULL)
        host, port = self.url.removeprefix("https://").rsplit(":", 1)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited with code {self.proc.returncode}: see {self.run_dir / 'error.log'}")
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"nginx did not listen on {self.url} within {timeout} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: nginx's fast shutdown, workers included
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def app_command(port: int, images: str | Path | None) -> list[str]:
    """One app process, as the systemd unit starts it (the store from $MMRB_DB)."""
    return [
        *(sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py")),
        *("--server.headless=true", "--server.address=127.0.0.1", f"--server.port={port}"),
        *("--browser.gatherUsageStats=false", "--server.fileWatcherType=none"),
        *(["--", "--images", str(images)] if images else []),
    ]


def _wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"the app process on port {port} exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the app process on port {port} did not answer within {timeout:.0f} s")


def _run(args: argparse.Namespace) -> int:
    if not os.environ.get("MMRB_DB"):
        print("set MMRB_DB to the store's URL (postgresql://... for several processes)", file=sys.stderr)
        return 2
    ports = [args.first_port + n for n in range(args.apps)]
    run_dir = Path(tempfile.mkdtemp(prefix="mmrb-deploy-"))
    proxy = Nginx(run_dir, ports, listen_port=args.port)  # first: a bad port or no nginx leaves nothing running
    apps = [subprocess.Popen(app_command(p, args.images), cwd=ROOT) for p in ports]
    # Ctrl-C, and a service manager's stop, end the loop below; as ignored when started in the background
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        for port, a in zip(ports, apps, strict=True):
            _wait_healthy(port, a)
        proxy.start()
        print(f"{len(apps)} app processes behind {proxy.url} (self-signed certificate; files in {run_dir})")
        print("Ctrl-C stops them all")
        while all(a.poll() is None for a in apps):
            time.sleep(1)
        print("an app process exited: stopping the rest", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        proxy.stop()
        for a in apps:
            a.terminate()
        for a in apps:
            a.wait()


def _render(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "mmrb.conf").write_text(site(args.ports, server_name=args.server_name))
    (out / "mmrb-app@.service").write_text(unit(user=args.user, images=args.images))
    print(f"wrote {out / 'mmrb.conf'} and {out / 'mmrb-app@.service'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m deploy.local", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("render", help="write the nginx site and the systemd unit for this checkout")
    r.add_argument("--out", required=True, help="folder to write mmrb.conf and mmrb-app@.service into")
    r.add_argument("--ports", type=int, nargs="+", default=[8501, 8502], help="the app processes' ports")
    r.add_argument("--server-name", default="_", help="nginx server_name (your host name)")
    r.add_argument("--user", default=getpass.getuser(), help="the account the app processes run as")
    r.add_argument("--images", default=str(ROOT / "images"), help="the store's image folder")
    u = sub.add_parser("run", help="start N app processes ($MMRB_DB) and nginx with TLS here, until Ctrl-C")
    u.add_argument("--apps", type=int, default=2)
    u.add_argument("--first-port", type=int, default=8501)
    u.add_argument("--port", type=int, default=8443, help="nginx's HTTPS port on 127.0.0.1")
    u.add_argument("--images", help="the store's image folder")
    args = p.parse_args(argv)
    try:
        return _render(args) if args.cmd == "render" else _run(args)
    except (ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
