"""Publishing a built benchmark folder to the Hugging Face Hub as a dataset repository.

The upload is huggingface_hub's own client: ``create_repo(exist_ok=True)``, a branch for a
revision other than ``main``, and every file of the folder in one ``create_commit`` (not
``upload_folder``, which with hf_xet installed may split a folder into several commits).
Every failure of the Hub or the network becomes one ``MmrbError`` line: no traceback, no
partial claim of success.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import MmrbError
from .wording import plural

# what `mmrb build` always writes: a folder without them is not a built benchmark
BUILT_MARKERS = ("README.md", "build.json")


@dataclass(frozen=True)
class UploadFile:
    path: str  # in the repository, POSIX separators
    size: int  # bytes


@dataclass(frozen=True)
class Published:
    repo_url: str
    commit_url: str
    files: tuple[UploadFile, ...]

    def as_dict(self) -> dict[str, object]:
        """What was sent (`mmrb publish --json`)."""
        return {"repo_url": self.repo_url, "commit_url": self.commit_url, **plan_dict(self.files)}


def upload_plan(folder: str | Path) -> tuple[UploadFile, ...]:
    """Every file that the upload sends, sorted by path, with its size. A folder that is not a
    build, or holds a symbolic link (which could reach outside it), is refused."""
    root = Path(folder)
    if not root.is_dir():
        raise MmrbError(f"{root}: no such folder")
    missing = [m for m in BUILT_MARKERS if not (root / m).is_file()]
    if missing:
        raise MmrbError(f"{root}: not a built benchmark (no {', '.join(missing)}); run `mmrb build --out` first")
    files = []
    for p in root.rglob("*"):
        if p.is_symlink():
            raise MmrbError(f"{p}: a symbolic link; the upload sends only the folder's own files")
        if p.is_file():
            files.append(UploadFile(p.relative_to(root).as_posix(), p.stat().st_size))
    return tuple(sorted(files, key=lambda f: f.path))


def plan_dict(files: tuple[UploadFile, ...]) -> dict[str, object]:
    """The files an upload sends and their total size, as `mmrb publish --json` prints them."""
    return {"files": [{"path": f.path, "size": f.size} for f in files], "bytes": sum(f.size for f in files)}


def plan_lines(files: tuple[UploadFile, ...]) -> list[str]:
    """The dry run's listing: one file a line with its size in bytes, then the total."""
    width = max((len(f"{f.size:,}") for f in files), default=1)
    lines = [f"{f.size:>{width},}  {f.path}" for f in files]
    return lines + [f"{plural(len(files), 'file')}, {plan_dict(files)['bytes']:,} bytes"]


def _token(token: str | None) -> str:
    # deferred: huggingface_hub takes a while to import and only publishing needs it
    from huggingface_hub import get_token

    found = token or get_token()  # HF_TOKEN, else the token saved by `hf auth login`
    if not found:
        raise MmrbError("no Hugging Face token: set HF_TOKEN or run `hf auth login`")
    return found


def _hub_error(e: Exception, repo_id: str) -> MmrbError:
    """One line saying what went wrong, from the Hub's answer or the network's error."""
    from huggingface_hub.errors import HfHubHTTPError  # deferred, as in _token

    if isinstance(e, HfHubHTTPError) and e.response is not None:
        status = e.response.status_code
        why = {
            401: "the token was refused (401): check HF_TOKEN or `hf auth login`",
            403: "the token may not write there (403)",
            404: f"{repo_id} not found (404): check the repository id and the token's access",
        }.get(status, f"the Hub answered {status}")
        server = getattr(e, "server_message", None) or ""
        detail = server.strip().splitlines()[0] if server.strip() else ""
        return MmrbError(f"publishing to {repo_id}: {why}" + (f": {detail}" if detail else ""))
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return MmrbError(f"publishing to {repo_id}: could not reach the Hub: {first}")


def publish(
    folder: str | Path,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    message: str | None = None,
) -> Published:
    """Upload every file of a built benchmark folder to the dataset repository ``repo_id`` in
    one commit, creating the repository (``private`` applies only then) and the branch
    ``revision`` if needed. ``endpoint``: the Hub's address (None: huggingface_hub's own,
    https://huggingface.co or HF_ENDPOINT)."""
    files = upload_plan(folder)
    key = _token(token)
    # deferred, as in _token; httpx2 is huggingface_hub's HTTP client (2.x), whose errors a
    # failed connection raises
    import httpx2
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    root = Path(folder)
    failures = (HfHubHTTPError, httpx2.HTTPError, OSError)
    api = HfApi(endpoint=endpoint, token=key)
    try:
        repo = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision and revision != "main":
            api.create_branch(repo_id, branch=revision, repo_type="dataset", exist_ok=True)
        commit = api.create_commit(
            repo_id,
            repo_type="dataset",
            revision=revision,
            operations=[CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=str(root / f.path)) for f in files],
            commit_message=message or f"Upload benchmark built by mmrb-studio ({plural(len(files), 'file')})",
        )
    except failures as e:
        raise _hub_error(e, repo_id) from None
    except ValueError as e:  # the Hub refused the card's metadata (validate-yaml), or a bad repo id
        raise MmrbError(f"publishing to {repo_id}: {' '.join(str(e).split())}") from None
    return Published(repo_url=str(repo), commit_url=commit.commit_url, files=files)
