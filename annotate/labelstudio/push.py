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

Responses with images (curate.model.Part) go with their images in order: the task
gets ``response_a_images``/``response_b_images`` (see config.py) and the project the config
with response images, set when the first such pair is pushed (the controls are the same, so
labels already made stay valid). A project with that config gets the two lists in every
task, empty for plain-text pairs (Label Studio requires every field its config reads).
Response images missing or corrupt at ingest show as a marker in the text.

Annotation schemes (curate/schemes.py): a project holds the pairs of one scheme and its
config is that scheme's (``scheme_config``; mmrb's is the config made before schemes). Pushing
pairs of several schemes at once is refused, naming each scheme and how many pairs it has
(``--scheme NAME`` pushes one scheme's pairs, each scheme into its own project), and so is
pushing into a project whose config is another scheme's: a config is never replaced under
annotations made with it. A task of a scheme other than mmrb records it (``scheme``,
``scheme_version``), so pull can tell a pair given another scheme since; a verify task shows
the judges' proposal as the annotator sees it (``proposal``: A, B or Tie).

Images reach Label Studio either uploaded (files go to a companion project's upload folder,
named by content hash so a second push reuses them; Label Studio accepts direct file uploads
only into projects with a single data field) or through a Local Files storage attached to
the project and covering the image folder (Label Studio serves local files only then).
Response images go the same way as prompt images (never as data URLs inlined in the task: a
generated 1024x1024 image would make each task megabytes, and a shared image is stored once).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from markdown_it import MarkdownIt

from curate.errors import MmrbError
from curate.images import ImageProblem
from curate.model import Candidate, Item, Pair
from curate.schemes import BUILT_IN, DEFAULT, Scheme, proposal_of, resolve, schemes_of
from curate.sides import labelstudio_left, preference_from_screen, shown_pair
from curate.store import Store
from curate.wording import plural

from .client import Client, LabelStudioError
from .config import IMAGE_FIELDS, PREFERENCE_CHOICES, config_problems, has_response_images, scheme_config
from .shown_guidelines import record_push

ImageMode = Literal["upload", "local-files"]
# progress(what, done, total): a command's bar per "what" (push and pull)
Progress = Callable[[str, int, int], None]
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

    def as_dict(self) -> dict[str, object]:
        """The push's figures (`mmrb labelstudio push --json`)."""
        return asdict(self)


# Which response is shown as A (on the left) of a task, decided in curate/sides.py.
left_side = labelstudio_left


def select_pairs(
    store: Store,
    *,
    categories: Iterable[str] | None = None,
    batch: str | None = None,
    status: str | None = None,
    scheme: str | None = None,
) -> list[Pair]:
    """Pairs to push: not dropped (or exactly ``status``), in ``categories``, in ``batch``,
    on the annotation scheme named ``scheme``."""
    pairs = store.pairs(status=status) if status else [p for p in store.pairs() if p.status != "dropped"]
    if scheme is not None:
        on = [p for p in pairs if (p.scheme or DEFAULT) == scheme]
        if not on:  # a misspelt name must not make an empty project of mmrb's config
            there = sorted({p.scheme or DEFAULT for p in pairs})
            raise MmrbError(
                f"no pairs on annotation scheme {scheme!r} (the pairs' schemes: {', '.join(there) or 'none'})"
            )
        pairs = on
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


def default_instructions(scheme: Scheme) -> str:
    """The instructions of a project without guidelines: mmrb's as before, else the scheme's title."""
    if scheme.name == DEFAULT:
        return DEFAULT_INSTRUCTIONS
    return f"<p>For each pair (response A on the left, B on the right): {html.escape(scheme.title)}.</p>"


def instructions_html(markdown_text: str | None) -> str:
    if not markdown_text:
        return DEFAULT_INSTRUCTIONS
    return MarkdownIt("commonmark", {"html": False}).render(markdown_text)


def existing_project(client: Client, title: str, scheme: Scheme | None = None, known: Iterable[Scheme] = ()):
    """The project titled ``title``, or None; an error if several have that title, its config
    is another scheme's (one of ``known``; ``scheme`` None: any known scheme's will do) or was
    changed in a way that breaks pulling."""
    if len(title.strip()) < 3 or len(title) > 50:
        raise MmrbError(f"project title {title!r}: Label Studio needs 3 to 50 characters")
    found = client.projects_titled(title)
    if len(found) > 1:
        raise MmrbError(
            f"{len(found)} Label Studio projects are titled {title!r} (ids {', '.join(str(p.id) for p in found)}): "
            "rename all but one"
        )
    if not found:
        return None
    project = client.get_project(found[0].id)
    xml = project.label_config or ""
    problems = config_problems(xml, scheme)
    if not problems:
        return project
    holds = config_scheme(xml, known)
    if holds is not None and scheme is None:
        return project
    if holds is not None and scheme is not None:
        raise MmrbError(
            f"Label Studio project {title!r} (id {project.id}) holds the labeling config of scheme "
            f"{scheme_name(holds)}, and these pairs are on scheme {scheme_name(scheme)}: a project holds one "
            "scheme and its config is never replaced under its annotations; push them into another project "
            "(another --project title)"
        )
    raise MmrbError(config_changed_message(title, project.id, problems))


def config_scheme(xml: str, known: Iterable[Scheme]) -> Scheme | None:
    """The first of ``known`` whose config ``xml`` is (cosmetic edits aside), or None."""
    return next((s for s in known if not config_problems(xml, s)), None)


def scheme_name(scheme: Scheme) -> str:
    return f"{scheme.name!r} version {scheme.version}"


def known_schemes(store: Store) -> list[Scheme]:
    """Every scheme a project's config may be: the built-ins and each version the store holds."""
    definitions = store.scheme_definitions()
    stored = [resolve(n, v, definitions) for n, v in sorted(definitions)]
    return [*stored, *BUILT_IN.values()]


def one_scheme(pairs: list[Pair], schemes: dict[str, Scheme]) -> Scheme:
    """The one scheme of the pairs to push (mmrb when there are none); several: refused,
    naming each and how many pairs it has."""
    count: dict[tuple[str, int], int] = {}
    by_key: dict[tuple[str, int], Scheme] = {}
    for p in pairs:
        s = schemes.get(p.id, BUILT_IN[DEFAULT])
        key = (s.name, s.version)
        count[key] = count.get(key, 0) + 1
        by_key[key] = s
    if len(count) > 1:
        names = {n for n, _ in count}
        each = ", ".join(
            f"{n}{f' version {v}' if len(names) < len(count) else ''}: {plural(k, 'pair')}"
            for (n, v), k in sorted(count.items())
        )
        raise MmrbError(
            f"the selected pairs are on {len(count)} annotation schemes ({each}); a Label Studio project holds "
            "one scheme: push each into its own project, e.g. --scheme NAME --project 'TITLE NAME' "
            "(or choose the pairs with --batch)"
        )
    return next(iter(by_key.values()), BUILT_IN[DEFAULT])


def ensure_project(
    client: Client,
    title: str,
    *,
    overlap: int | None,
    instructions: str | None,
    response_images: bool = False,
    project: Any = None,
    scheme: Scheme | None = None,
) -> tuple[int, bool]:
    """The id of the project titled ``title`` (created if missing) and whether it was created.
    ``response_images``: the project gets the config that shows response images (an existing
    one is moved to it). ``project``: the project already found by ``existing_project``.
    ``scheme``: the pairs' scheme, whose config a new project gets (None: mmrb's)."""
    scheme = scheme or BUILT_IN[DEFAULT]
    if project is None:
        project = existing_project(client, title, scheme)
    if project is None:
        kw = dict(
            title=title,
            label_config=scheme_config(scheme, response_images=response_images),
            expert_instruction=instructions or default_instructions(scheme),
            show_instruction=True,
            show_skip_button=True,
            description="pairs pushed by mmrb-studio (mmrb labelstudio push); pull labels with mmrb labelstudio pull",
        )
        if overlap is not None:
            kw["maximum_annotations"] = overlap
        return client.create_project(**kw).id, True
    changes: dict[str, Any] = {}
    if overlap is not None and project.maximum_annotations != overlap:
        changes["maximum_annotations"] = overlap
    if instructions is not None and (project.expert_instruction or "") != instructions:
        changes["expert_instruction"] = instructions
    if response_images and not has_response_images(project.label_config or ""):
        changes["label_config"] = scheme_config(scheme, response_images=True)
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

    def prepare(self, files: dict[str, Path], progress: Progress | None = None) -> None:
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
            try:
                data = self.store.images.read_stored(_name(self.store, path))
            except ImageProblem as e:
                raise MmrbError(f"image {sha} cannot be uploaded: {e}") from None
            chunk.append((f"{sha}{path.suffix}", data))
            size += len(data)
            if len(chunk) >= 50 or size > 20_000_000 or n == len(todo) - 1:
                self.client.upload_files(holder, chunk)
                self.uploaded += len(chunk)
                chunk, size = [], 0
                if progress:
                    progress("images uploaded", self.uploaded, len(todo))
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


def response_fields(cand: Candidate, usable: set[str]) -> tuple[list[dict[str, str]], str, int]:
    """A response as the config with response images reads it: one entry per image
    (``text`` before it, ``image`` its sha256 until URLs are known), the text after the last
    image, and how many of its images are not usable (a marker in the text instead)."""
    if not cand.content:
        return [], cand.text, 0
    entries: list[dict[str, str]] = []
    texts: list[str] = []
    missing = 0
    for part in cand.content:
        im = part.image
        if part.kind == "image" and im is not None and im.status == "ok" and im.sha256 in usable:
            entries.append({"text": "\n\n".join(texts), "image": im.sha256})
            texts = []
        elif part.kind == "image":
            missing += 1
            texts.append(f"[image not available: {im.source if im else '?'}]")
        elif part.text.strip():
            texts.append(part.text.strip())
    return entries, "\n\n".join(texts), missing


def _name(store: Store, path: Path) -> str:
    """A stored file's name in the image folder (``Store.image_paths`` gives its path)."""
    return path.relative_to(store.images.root).as_posix()


def build_tasks(
    store: Store, pairs: list[Pair], seed: int, *, response_images: bool = False, scheme: Scheme | None = None
) -> tuple[list[dict], dict[str, Path], list[str]]:
    """Task payloads (image fields hold the sha256 until URLs are known), image files, warnings.
    Every task gets the response image fields (config.IMAGE_FIELDS) when ``response_images``
    (the project's config reads them) or when a response of these pairs has images; otherwise
    the tasks are those of the plain config. ``scheme``: the pairs' one scheme (None: mmrb,
    whose tasks are those made before schemes)."""
    items = _items(store, {p.item_id for p in pairs})
    cands = _candidates(store, {c for p in pairs for c in (p.first_id, p.second_id)})
    files: dict[str, Path] = {}
    no_image, several, response_missing, no_proposal = 0, 0, 0, 0
    known = store.image_paths(
        [im.sha256 for item in items.values() for im in item.images if im.status == "ok" and im.sha256]
        + [im.sha256 for c in cands.values() for im in c.images if im.status == "ok" and im.sha256]
    )
    # a regular file inside the image folder: never a symbolic link out of it (issue 25)
    usable = {sha for sha, path in known.items() if store.images.servable(_name(store, path))}
    with_images = response_images or any(c.images for c in cands.values())
    tasks = []
    for p in pairs:
        item = items[p.item_id]
        left = left_side(p.id, seed)
        a, b = shown_pair(p.first_id, p.second_id, left)
        ok = [im for im in item.images if im.status == "ok" and im.sha256]
        sha = ok[0].sha256 if ok else None
        if sha and sha not in usable:
            sha = None
        if sha:
            files[sha] = known[sha]
        no_image += sha is None and bool(item.images)
        several += len(item.images) > 1
        data: dict[str, Any] = {
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
        if with_images:
            missing = 0
            for key, cid in (("response_a", a), ("response_b", b)):
                entries, tail, n = response_fields(cands[cid], usable)
                data[key] = tail
                data[IMAGE_FIELDS[key]] = entries
                files.update((e["image"], known[e["image"]]) for e in entries)
                missing += n
            response_missing += missing > 0
        if scheme is not None and scheme.name != DEFAULT:
            data |= {"scheme": scheme.name, "scheme_version": scheme.version}
        if scheme is not None and scheme.shows_proposal:
            data["proposal"] = shown_proposal(proposal_of(p), left)
            no_proposal += data["proposal"] == NO_PROPOSAL
        tasks.append({"data": data})
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
    if response_missing:
        warnings.append(
            f"{plural(response_missing, 'pair', verb=('has', 'have'))} response images missing or corrupt at "
            "ingest: each shows as a marker in the response text"
        )
    if no_proposal:
        warnings.append(
            f"{plural(no_proposal, 'pair', verb=('has', 'have'))} no judges' proposal (mmrb select makes it): "
            f"shown as {NO_PROPOSAL!r}, and agreeing with it gives no preference"
        )
    return tasks, files, warnings


# what a verify task shows when the judges proposed nothing (not a choice of the config)
NO_PROPOSAL = "none"


def shown_proposal(proposal: Any, left: Any) -> str:
    """The judges' proposal (stored terms) as a verify task shows it: A (left), B or Tie, the
    choice that pull reads back as the proposal (annotate/form.py alone turns labels to screen terms)."""
    shown = (c for c, screen in PREFERENCE_CHOICES.items() if preference_from_screen(screen, left) == proposal)
    return next(shown, NO_PROPOSAL) if proposal is not None else NO_PROPOSAL


def push(
    store: Store,
    client: Client,
    title: str,
    *,
    overlap: int | None = None,
    categories: Iterable[str] | None = None,
    batch: str | None = None,
    status: str | None = None,
    scheme: str | None = None,
    images: ImageMode = "upload",
    document_root: str | None = None,
    guidelines: str | None = None,
    seed: int = 0,
    chunk_size: int = 500,
    progress: Progress | None = None,
) -> PushResult:
    """Create or reuse the project and import the chosen pairs that are not in it yet.
    ``progress(what, done, total)``: images uploaded, then pairs pushed, after each request.
    ``guidelines``: Markdown shown as the instructions (None: the guidelines in the store).
    ``scheme``: only the pairs on the annotation scheme of this name. The pairs' scheme makes
    the project's config; pairs of several schemes are refused (one project, one scheme)."""
    client.check()
    pairs = select_pairs(store, categories=categories, batch=batch, status=status, scheme=scheme)
    the_scheme = one_scheme(pairs, schemes_of(store, [p.id for p in pairs]))
    stored = store.guidelines() if guidelines is None else None
    md = (stored.text if stored is not None else None) if guidelines is None else guidelines
    known = known_schemes(store)
    project = existing_project(client, title, the_scheme if pairs else None, known)
    there = {t["data"].get("pair_id") for t in client.task_data(project.id)} if project is not None else set()
    todo = [p for p in pairs if p.id not in there]
    had_images = project is not None and has_response_images(project.label_config or "")
    tasks, files, warnings = build_tasks(store, todo, seed, response_images=had_images, scheme=the_scheme)
    project_id, created = ensure_project(
        client,
        title,
        overlap=overlap,
        instructions=instructions_html(md) if md else None,
        response_images=any(IMAGE_FIELDS["response_a"] in t["data"] for t in tasks),
        project=project,
        scheme=the_scheme if pairs or project is None else config_scheme(project.label_config or "", known),
    )
    if guidelines is not None:  # a file's text: no version of the store's guidelines
        record_push(store, client, project_id, None)
    elif stored is not None:
        record_push(store, client, project_id, stored.version)
    result = PushResult(project_id, created, len(pairs), len(pairs) - len(todo), 0, warnings=warnings)
    if not todo:
        return result
    imgs = _Images(store, client, project_id, images, document_root)
    imgs.prepare(files, progress)
    result.images_uploaded = imgs.uploaded
    for t in tasks:
        d = t["data"]
        d["image"] = imgs.urls.get(d["image"], "")
        for key in IMAGE_FIELDS.values():
            for entry in d.get(key, ()):
                entry["image"] = imgs.urls[entry["image"]]
    for n in range(0, len(tasks), chunk_size):
        chunk = tasks[n : n + chunk_size]
        try:
            result.pushed += client.import_tasks(project_id, chunk)
            if progress:
                progress("pairs pushed", result.pushed, len(tasks))
        except MmrbError as e:
            raise MmrbError(
                f"{e} -- {result.pushed} of {plural(len(tasks), 'new pair', verb=('was', 'were'))} pushed before this; "
                "run the same command again to push the rest (pairs already in the project are not pushed twice)"
            ) from None
    return result
