"""A loopback stand-in for the Hugging Face Hub's HTTP API, for tests of ``mmrb publish``.

It answers the calls huggingface_hub's ``create_repo``, ``create_branch`` and ``create_commit``
make (read from huggingface_hub 2.4's source), and records each request so that a test can
assert what the Hub received:

- ``POST /api/repos/create``: JSON ``{name, organization, type, private|visibility}``; 200 with
  ``{"url": ...}``, 409 when the repository exists (``exist_ok`` then goes on);
- ``POST /api/validate-yaml``: the README's metadata before the commit (``{"errors": []}``);
- ``POST /api/datasets/OWNER/NAME/branch/REV``: 200, or 409 when the branch exists;
- ``POST /api/datasets/OWNER/NAME/preupload/REV``: each file's upload mode; every file is
  answered ``regular`` (sent inline in the commit, base64), so no LFS or Xet transfer happens:
  the large-file path of the real Hub is not exercised here;
- ``POST /api/datasets/OWNER/NAME/commit/REV``: the NDJSON commit (a header line, one line per
  file), decoded into ``commits``;
- ``GET /api/datasets/OWNER/NAME...``: the repository's info (huggingface_hub asks for it after
  a 401/403 on create with ``exist_ok``).

``token``: the one bearer token accepted (any other request gets 401); ``fail``: a status to
answer on paths containing a given fragment, e.g. ``{"/commit/": 404}``.

Written on http.server (a thread per connection, HTTP/1.1 keep-alive): no dependency, and the
few calls of a publish need nothing faster.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class HubRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Commit:
    repo_id: str
    revision: str
    summary: str
    files: dict[str, bytes]  # path in the repository -> content


@dataclass
class FakeHub:
    token: str = "hf_test"
    fail: dict[str, int] = field(default_factory=dict)
    repos: set[str] = field(default_factory=set)  # "dataset:owner/name" already on the Hub
    branches: set[str] = field(default_factory=set)  # "owner/name@rev"
    requests: list[HubRequest] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)

    def __enter__(self) -> FakeHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _serve(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                req = HubRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with hub._lock:
                    hub.requests.append(req)
                status, answer = hub._answer(req)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status >= 400:
                    self.send_header("X-Error-Message", answer.get("error", ""))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _serve

        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def paths(self) -> list[str]:
        """Each request's method and path, without huggingface_hub's own once-a-day fetch of
        its agent registry (made or not depending on its cache, not on the call)."""
        said = [f"{r.method} {r.path.split('?')[0]}" for r in self.requests]
        return [p for p in said if p != "GET /api/agent-harnesses"]

    def _answer(self, req: HubRequest) -> tuple[int, dict]:
        if req.headers.get("authorization") != f"Bearer {self.token}":
            return 401, {"error": "Invalid credentials in Authorization header"}
        for fragment, status in self.fail.items():
            if fragment in req.path:
                return status, {"error": f"scripted failure {status}"}
        path = req.path.split("?")[0]
        if path == "/api/repos/create":
            spec = req.json()
            repo_id = f"{spec.get('organization') or 'me'}/{spec['name']}"
            key = f"{spec.get('type') or 'model'}:{repo_id}"
            if key in self.repos:
                return 409, {"error": "You already created this dataset repo", "url": f"{self.url}/datasets/{repo_id}"}
            self.repos.add(key)
            return 200, {"url": f"{self.url}/datasets/{repo_id}"}
        if path == "/api/validate-yaml":
            return 200, {"errors": [], "warnings": []}
        parts = path.split("/")  # "", api, datasets, owner, name, verb, rev...
        if len(parts) >= 7 and parts[1] == "api" and parts[2] == "datasets":
            repo_id, verb, rev = f"{parts[3]}/{parts[4]}", parts[5], "/".join(parts[6:])
            if f"dataset:{repo_id}" not in self.repos:
                return 404, {"error": "Repository not found"}
            if verb == "branch":
                if f"{repo_id}@{rev}" in self.branches:
                    return 409, {"error": "Reference already exists"}
                self.branches.add(f"{repo_id}@{rev}")
                return 200, {}
            if rev != "main" and f"{repo_id}@{rev}" not in self.branches:
                return 404, {"error": "Invalid rev id"}
            if verb == "preupload":
                files = req.json()["files"]
                return 200, {
                    "files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]
                }
            if verb == "commit":
                return 200, self._commit(repo_id, rev, req.body)
        if req.method == "GET" and len(parts) >= 5 and parts[2] == "datasets":
            repo_id = f"{parts[3]}/{parts[4]}"
            if f"dataset:{repo_id}" in self.repos:
                return 200, {"id": repo_id, "sha": "0" * 40, "private": False}
        return 404, {"error": "Repository not found"}

    def _commit(self, repo_id: str, rev: str, body: bytes) -> dict:
        summary, files = "", {}
        for line in body.decode().splitlines():
            item = json.loads(line)
            if item["key"] == "header":
                summary = item["value"]["summary"]
            elif item["key"] == "file":
                assert item["value"]["encoding"] == "base64", item
                files[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            else:  # an LFS file or a deletion: not what the preupload answer asks for
                raise AssertionError(f"unexpected commit line {item['key']}")
        with self._lock:
            self.commits.append(Commit(repo_id, rev, summary, files))
            n = len(self.commits)
        oid = f"{n:040x}"
        return {"commitUrl": f"{self.url}/datasets/{repo_id}/commit/{oid}", "commitOid": oid}
