"""Push pairs to a Label Studio project as tasks.

Bookkeeping lives in Label Studio, not in new store tables: every task carries its
``pair_id``, the side shown on the left (``left`` = "first" or "second", seeded from the pair
id) and the candidate ids shown as A and B. So

- a push is idempotent: it lists the project's tasks and imports only pairs not yet there,
  so a push interrupted half way (server down, network error) is finished by running it
  again, without duplicates;
- a pull needs nothing but the project: it maps each annotation back to response ids from
  the task it belongs to, and checks those ids against the store;
- the store is only read by push, and pull writes nothing but labels (``source =
  "labelstudio"``, the store keeps their history) and annotators.

Images reach Label Studio either uploaded (files go to a companion project's upload folder,
named by content hash so a second push reuses them; Label Studio accepts direct file uploads
only into projects with a single data field) or through a Local Files storage attached to
the project and covering the image folder (Label Studio serves local files only then).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from markdown_it import MarkdownIt

from curate.errors import MmrbError
from curate.model import Item, Pair, Side
from curate.seeding import coin
from curate.sides import shown_pair
from curate.store import Store
from curate.wording import plural

from .client import Client, LabelStudioError
from .config import config_problems, labeling_config

ImageMode = Literal["upload", "local-files"]
IMAGES_CONFIG = '<View><Image name="image" value="$image"/></View>'
DEFAULT_INSTRUCTIONS = (
    "<p>For each pair: say whether response A and response B are correct, which one is better "
    "(or a tie), and why in a sentence or two. Flag the pair if something is wrong with it.</p>"
)


@dataclass
class PushResult:
    project_id: int
    project_created: bool
    selected: int  # pairs chosen by the filters
    already: int  # of those, already in the project
    pushed: int  # tasks imported by this run
    images_uploaded: int = 0
    warnings: list[str] = field(default_factory=list)


def left_side(pair_id: str, seed: int = 0) -> Side:
    """Which response is shown as A (on the left), seeded from the pair id; ":" is the
    separator of the tasks already pushed (curate/seeding.py)."""
    return "second" if coin("labelstudio", seed, pair_id, sep=":") else "first"


def select_pairs(
    store: Store,
    *,
    categories: Iterable[str] | None = None,
    batch: str | None = None,
    status: str | None = None,
) -> list[Pair]:
    """Pairs to push: not dropped (or exactly ``status``), in ``categories``, in ``batch``."""
    pairs = store.pairs(status=status) if status else [p for p in store.pairs() if p.status != "dropped"]
    if batch is not None:
        in_batch = {a.pair_id for a in store.assignments() if a.batch == batch}
        if not in_batch:
            raise MmrbError(f"no assignments in batch {batch!r} (see `mmrb assign`)")
        pairs = [p for p in pairs if p.id in in_batch]
    if categories:
        cats = set(categories)
        keep = {i.id for i in _items(store, {p.item_id for p in pairs}).values() if i.category in cats}
        pairs = [p for p in pairs if p.item_id in keep]
    return pairs


def _items(store: Store, ids: set[str]) -> dict[str, Item]:
    out: dict[str, Item] = {}
    ids_l = sorted(ids)
    for n in range(0, len(ids_l), 500):
        out.update({i.id: i for i in store.items(ids=ids_l[n : n + 500])})
    return out


def _candidates(store: Store, ids: set[str]) -> dict:
    out = {}
    ids_l = sorted(ids)
    for n in range(0, len(ids_l), 500):
        out.update({c.id: c for c in store.candidates(ids=ids_l[n : n + 500])})
    return out


def instructions_html(markdown_text: str | None) -> str:
    if not markdown_text:
        return DEFAULT_INSTRUCTIONS
    return MarkdownIt("commonmark", {"html": False}).render(markdown_text)


def ensure_project(client: Client, title: str, *, overlap: int | None, instructions: str | None) -> tuple[int, bool]:
    """The id of the project titled ``title`` (created if missing) and whether it was created."""
    if len(title.strip()) < 3 or len(title) > 50:
        raise MmrbError(f"project title {title!r}: Label Studio needs 3 to 50 characters")
    found = client.projects_titled(title)
    if len(found) > 1:
        raise MmrbError(
            f"{len(found)} Label Studio projects are titled {title!r} (ids {', '.join(str(p.id) for p in found)}): "
            "rename all but one"
        )
    if not found:
        kw = dict(
            title=title,
            label_config=labeling_config(),
            expert_instruction=instructions or DEFAULT_INSTRUCTIONS,
            show_instruction=True,
            show_skip_button=True,
            description="pairs pushed by mmrb-studio (mmrb labelstudio push); pull labels with mmrb labelstudio pull",
        )
        if overlap is not None:
            kw["maximum_annotations"] = overlap
        return client.create_project(**kw).id, True
    project = client.get_project(found[0].id)
    problems = config_problems(project.label_config or "")
    if problems:
        raise MmrbError(config_changed_message(title, project.id, problems))
    changes: dict[str, Any] = {}
    if overlap is not None and project.maximum_annotations != overlap:
        changes["maximum_annotations"] = overlap
    if instructions is not None and (project.expert_instruction or "") != instructions:
        changes["expert_instruction"] = instructions
    if changes:
        client.update_project(project.id, **changes)
    return project.id, False


def config_changed_message(title: str, project_id: int, problems: list[str]) -> str:
    return (
        f"the labeling config of Label Studio project {title!r} (id {project_id}) was changed by hand: "
        + "; ".join(problems)
        + ". Restore the config made by `mmrb labelstudio push` (labels could not be mapped back otherwise), "
        "or push to a new project title"
    )


class _Images:
    """Image URLs for tasks, one image file per content hash."""

    def __init__(self, store: Store, client: Client, project_id: int, mode: ImageMode, document_root: str | None):
        self.store, self.client, self.project_id, self.mode = store, client, project_id, mode
        self.uploaded = 0
        self.root = store.images.root.resolve()
        if mode == "local-files":
            if not document_root:
                raise MmrbError(
                    "--image-mode local-files needs the server's LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT: "
                    "pass --document-root (the server must run with LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED=true)"
                )
            self.doc_root = Path(document_root).resolve()
            if not self.root.is_relative_to(self.doc_root):
                raise MmrbError(
                    f"the image folder {self.root} is not inside the Label Studio document root {self.doc_root}: "
                    "start Label Studio with LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT set to a folder that contains "
                    "it, or use --image-mode upload"
                )
        self.urls: dict[str, str] = {}

    def prepare(self, files: dict[str, Path]) -> None:
        """Make every file (sha256 -> path) reachable from Label Studio."""
        if self.mode == "local-files":
            self._attach_storage()
            for sha, path in files.items():
                self.urls[sha] = "/data/local-files/?d=" + str(path.resolve().relative_to(self.doc_root))
            return
        holder = self._upload_project()
        have = self._uploaded(holder)
        todo = [(sha, p) for sha, p in sorted(files.items()) if sha not in have]
        chunk: list[tuple[str, bytes]] = []
        size = 0
        for n, (sha, path) in enumerate(todo):
            data = path.read_bytes()
            chunk.append((f"{sha}{path.suffix}", data))
            size += len(data)
            if len(chunk) >= 50 or size > 20_000_000 or n == len(todo) - 1:
                self.client.upload_files(holder, chunk)
                self.uploaded += len(chunk)
                chunk, size = [], 0
        if todo:
            have = self._uploaded(holder)
        for sha in files:
            if sha not in have:
                raise LabelStudioError(f"image {sha} was uploaded but Label Studio does not list it")
            self.urls[sha] = have[sha]

    def _uploaded(self, holder: int) -> dict[str, str]:
        # Label Studio prefixes each uploaded name with 8 random hex digits and a dash
        out: dict[str, str] = {}
        for u in self.client.uploads(holder):
            name = u["file"].rsplit("/", 1)[-1]
            stem = Path(name.split("-", 1)[-1]).stem
            out.setdefault(stem, "/data/" + u["file"])
        return out

    def _upload_project(self) -> int:
        title = f"mmrb images for project {self.project_id}"
        found = self.client.projects_titled(title)
        if found:
            return found[0].id
        p = self.client.create_project(
            title=title,
            label_config=IMAGES_CONFIG,
            description=f"holds the images of project {self.project_id} for mmrb-studio; do not delete or label",
        )
        return p.id

    def _attach_storage(self) -> None:
        path = str(self.root)
        if any(str(s.path).rstrip("/") == path for s in self.client.local_storages(self.project_id)):
            return
        self.client.create_local_storage(self.project_id, path, "mmrb images")


def build_tasks(store: Store, pairs: list[Pair], seed: int) -> tuple[list[dict], dict[str, Path], list[str]]:
    """Task payloads (image fields hold the sha256 until URLs are known), image files, warnings."""
    items = _items(store, {p.item_id for p in pairs})
    cands = _candidates(store, {c for p in pairs for c in (p.first_id, p.second_id)})
    files: dict[str, Path] = {}
    no_image, several = 0, 0
    known = store.image_paths(
        im.sha256 for item in items.values() for im in item.images if im.status == "ok" and im.sha256
    )
    tasks = []
    for p in pairs:
        item = items[p.item_id]
        left = left_side(p.id, seed)
        a, b = shown_pair(p.first_id, p.second_id, left)
        ok = [im for im in item.images if im.status == "ok" and im.sha256]
        sha = ok[0].sha256 if ok else None
        if sha and sha not in files:
            path = known.get(sha)
            if path is None or not path.exists():
                sha = None
            else:
                files[sha] = path
        no_image += sha is None and bool(item.images)
        several += len(item.images) > 1
        tasks.append(
            {
                "data": {
                    "pair_id": p.id,
                    "left": left,
                    "left_id": a,
                    "right_id": b,
                    "item_id": item.id,
                    "category": item.category,
                    "image": sha or "",
                    "prompt": item.prompt,
                    "response_a": cands[a].text,
                    "response_b": cands[b].text,
                }
            }
        )
    warnings = []
    if no_image:
        warnings.append(
            f"{plural(no_image, 'pair', verb=('has', 'have'))} no usable image (missing or corrupt at ingest): "
            "pushed without one"
        )
    if several:
        warnings.append(
            f"{plural(several, 'pair', verb=('belongs', 'belong'))} to items with several images: "
            "Label Studio shows only the first"
        )
    return tasks, files, warnings


def push(
    store: Store,
    client: Client,
    title: str,
    *,
    overlap: int | None = None,
    categories: Iterable[str] | None = None,
    batch: str | None = None,
    status: str | None = None,
    images: ImageMode = "upload",
    document_root: str | None = None,
    guidelines: str | None = None,
    seed: int = 0,
    chunk_size: int = 500,
) -> PushResult:
    """Create or reuse the project and import the chosen pairs that are not in it yet.
    ``guidelines``: Markdown shown as the instructions (None: the guidelines in the store)."""
    client.check()
    pairs = select_pairs(store, categories=categories, batch=batch, status=status)
    md = store.get_setting("guidelines_md") if guidelines is None else guidelines
    project_id, created = ensure_project(
        client, title, overlap=overlap, instructions=instructions_html(md) if md else None
    )
    there = {t["data"].get("pair_id") for t in client.task_data(project_id)}
    todo = [p for p in pairs if p.id not in there]
    result = PushResult(project_id, created, len(pairs), len(pairs) - len(todo), 0)
    if not todo:
        return result
    tasks, files, result.warnings = build_tasks(store, todo, seed)
    imgs = _Images(store, client, project_id, images, document_root)
    imgs.prepare(files)
    result.images_uploaded = imgs.uploaded
    for t in tasks:
        t["data"]["image"] = imgs.urls.get(t["data"]["image"], "")
    for n in range(0, len(tasks), chunk_size):
        chunk = tasks[n : n + chunk_size]
        try:
            result.pushed += client.import_tasks(project_id, chunk)
        except MmrbError as e:
            raise MmrbError(
                f"{e} -- {result.pushed} of {plural(len(tasks), 'new pair', verb=('was', 'were'))} pushed before this; "
                "run the same command again to push the rest (pairs already in the project are not pushed twice)"
            ) from None
    return result
