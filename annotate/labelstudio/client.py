"""A thin wrapper over label-studio-sdk that turns transport and auth failures into MmrbError.

Only the calls push and pull need are wrapped. Each one goes through ``_call``, so a refused
connection, a wrong key or a server that refuses legacy tokens reads the same wherever it
happens. Two endpoints the SDK does not cover well (multipart file upload to a project,
listing a project's uploads) go through httpx with the SDK's own auth headers, so personal
access tokens (JWT) keep working there too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from curate.errors import MmrbError
from curate.extras import require_extra
from curate.wording import plural


class LabelStudioError(MmrbError):
    pass


def api_key_from_env(var: str) -> str:
    key = os.environ.get(var, "").strip()
    if not key:
        raise LabelStudioError(
            f"the environment variable {var} is not set: put your Label Studio API key in it "
            "(Label Studio > Account & Settings > Access Token)"
        )
    return key


def _detail(body: Any) -> str:
    if isinstance(body, dict):
        for k in ("detail", "validation_errors", "message", "error"):
            if body.get(k):
                v = body[k]
                return v if isinstance(v, str) else json.dumps(v)
        return json.dumps(body)[:300]
    return str(body)[:300]


class Client:
    def __init__(self, url: str, api_key: str, *, key_name: str = "the API key", timeout: float = 300):
        require_extra("labelstudio", "the Label Studio bridge (mmrb labelstudio push/pull)")
        # deferred: the Label Studio SDK takes over 1 s to import, and only the bridge's commands need it
        from label_studio_sdk import LabelStudio

        self.url = url.rstrip("/")
        self.key_name = key_name
        self.sdk = LabelStudio(base_url=self.url, api_key=api_key, timeout=timeout)
        self._http = httpx.Client(base_url=self.url, timeout=timeout)
        self._version: dict | None = None

    def close(self) -> None:
        self._http.close()

    # -- error translation ---------------------------------------------------------------
    def _translate(self, e: Exception, what: str) -> LabelStudioError:
        # deferred, as the SDK in Client
        from label_studio_sdk.core.api_error import ApiError

        where = f"Label Studio at {self.url}"
        if isinstance(e, (httpx.ConnectError, httpx.ConnectTimeout)):
            return LabelStudioError(f"cannot reach {where} ({e}): is the server running and is --url right?")
        if isinstance(e, httpx.TimeoutException):
            return LabelStudioError(f"{where} did not answer in time while trying to {what}")
        if isinstance(e, httpx.TransportError):
            return LabelStudioError(
                f"lost the connection to {where} while trying to {what} ({e.__class__.__name__}: {e})"
            )
        if isinstance(e, ApiError):
            status, detail = e.status_code, _detail(e.body)
            if status == 401 and "legacy token" in detail.lower():
                return LabelStudioError(
                    f"{where} refuses legacy API tokens ({detail}): use a personal access token, or have an "
                    "admin enable legacy tokens (Organization > API Tokens Settings, or start the server "
                    "with LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true)"
                )
            if status in (401, 403):
                return LabelStudioError(f"{where} rejected {self.key_name} ({status}: {detail}): check the key")
            if status == 404:
                return LabelStudioError(
                    f"{where} has no such resource while trying to {what} (404): is --url a Label Studio server?"
                )
            return LabelStudioError(f"{where} refused to {what} ({status}: {detail})")
        if isinstance(e, json.JSONDecodeError):
            return LabelStudioError(
                f"{where} answered with something that is not JSON while trying to {what}: "
                "is --url a Label Studio server?"
            )
        raise e

    @contextmanager
    def _call(self, what: str) -> Iterator[None]:
        # deferred, as the SDK in Client
        from label_studio_sdk.core.api_error import ApiError

        try:
            yield
        except (httpx.HTTPError, ApiError, json.JSONDecodeError) as e:
            raise self._translate(e, what) from None

    def _raw(self, method: str, path: str, what: str, **kw) -> Any:
        # deferred, as the SDK in Client
        from label_studio_sdk.core.api_error import ApiError

        with self._call(what):
            r = self._http.request(method, path, headers=self.sdk._client_wrapper.get_headers(), **kw)
            if r.status_code >= 400:
                try:
                    body = r.json()
                except ValueError:
                    body = r.text
                raise ApiError(status_code=r.status_code, headers=dict(r.headers), body=body)
            return r.json()

    # -- calls ---------------------------------------------------------------------------
    def check(self) -> dict:
        """Fail early and clearly: is this Label Studio, and does it accept the key? (once)"""
        if self._version is not None:
            return self._version
        with self._call("read its version"):
            r = self._http.get("/api/version")
        try:
            version = r.json()
        except ValueError:
            version = None
        if r.status_code != 200 or not isinstance(version, dict) or "release" not in version:
            raise LabelStudioError(
                f"{self.url} does not look like a Label Studio server "
                f"(/api/version answered {r.status_code}): check --url"
            )
        with self._call("identify the user of the API key"):
            self.sdk.users.whoami()
        self._version = version
        return version

    def projects_titled(self, title: str) -> list:
        with self._call("list projects"):
            found: Iterable[Any] = self.sdk.projects.list(title=title, page_size=100)  # the SDK's pager: an open type
            return [p for p in found if p.title == title]

    def get_project(self, project_id: int):
        with self._call(f"read project {project_id}"):
            return self.sdk.projects.get(project_id)

    def create_project(self, **kw):
        with self._call(f"create project {kw.get('title')!r}"):
            return self.sdk.projects.create(**kw)

    def update_project(self, project_id: int, **kw):
        with self._call(f"update project {project_id}"):
            return self.sdk.projects.update(project_id, **kw)

    def task_data(self, project_id: int) -> list[dict]:
        """(id, data) of every task of a project."""
        with self._call(f"list the tasks of project {project_id}"):
            tasks: Iterable[Any] = self.sdk.tasks.list(project=project_id, page_size=1000, fields="task_only")
            return [{"id": t.id, "data": t.data} for t in tasks]

    def import_tasks(self, project_id: int, tasks: list[dict]) -> int:
        # no automatic retry: a retried import whose first attempt committed would duplicate
        # tasks; push re-lists the project instead when it is run again
        from label_studio_sdk import ImportApiRequest

        request = [ImportApiRequest(**t) for t in tasks]
        with self._call(f"import {plural(len(tasks), 'task')} into project {project_id}"):
            r = self.sdk.projects.import_tasks(project_id, request=request, request_options={"max_retries": 0})
        return int(r.task_count or 0)

    def export_json(self, project_id: int) -> list[dict]:
        with self._call(f"export project {project_id}"):
            data = b"".join(self.sdk.projects.exports.download_sync(project_id, export_type="JSON"))
            return json.loads(data)

    def users(self) -> dict[int, Any]:
        with self._call("list users"):
            return {u.id: u for u in self.sdk.users.list()}

    def local_storages(self, project_id: int) -> list:
        with self._call(f"list the local storages of project {project_id}"):
            return list(self.sdk.import_storage.local.list(project=project_id))

    def create_local_storage(self, project_id: int, path: str, title: str):
        with self._call(f"attach a Local Files storage for {path}"):
            return self.sdk.import_storage.local.create(project=project_id, path=path, title=title, use_blob_urls=False)

    def uploads(self, project_id: int) -> list[dict]:
        return self._raw(
            "GET", f"/api/projects/{project_id}/file-uploads", "list uploaded files", params={"all": "true"}
        )

    def upload_files(self, project_id: int, files: list[tuple[str, bytes]]) -> None:
        """Store files in a project's upload folder without creating tasks from them."""
        self._raw(
            "POST",
            f"/api/projects/{project_id}/import",
            f"upload {plural(len(files), 'image')}",
            params={"commit_to_project": "false"},
            files=[(f"file{n}", (name, data, "application/octet-stream")) for n, (name, data) in enumerate(files)],
        )
