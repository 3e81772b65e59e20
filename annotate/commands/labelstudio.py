"""`mmrb labelstudio push|pull`: the bridge to a Label Studio server."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from curate.commands.common import add_quiet_option, add_store_options, open_store, print_json, progress_bars
from curate.errors import MmrbError
from curate.extras import require_extra
from curate.wording import plural

if TYPE_CHECKING:
    from annotate.labelstudio.client import Client
    from annotate.labelstudio.push import Progress
    from curate.store import Store

HELP = "push pairs to a Label Studio project and pull its labels back"
DESCRIPTION = (
    "Push pairs to a Label Studio project (created or reused by title; only pairs not yet in it are "
    "added) and pull its annotations back as labels, mapped to response ids."
)


def _common(p: argparse.ArgumentParser) -> None:
    from annotate.labelstudio import DEFAULT_KEY_ENV

    add_store_options(p)
    p.add_argument("--url", required=True, help="Label Studio server, e.g. http://127.0.0.1:8080")
    p.add_argument(
        "--api-key-env",
        default=DEFAULT_KEY_ENV,
        metavar="VAR",
        help=f"environment variable holding the API key (default: {DEFAULT_KEY_ENV})",
    )
    p.add_argument("--project", required=True, metavar="TITLE", help="project title (3 to 50 characters)")
    add_quiet_option(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON (its schema: docs/json.md)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser("push", help="push pairs as tasks (idempotent: only pairs not yet in the project)")
    _common(p)
    p.add_argument("--overlap", type=int, default=None, help="annotations wanted per pair (maximum_annotations)")
    p.add_argument("--category", action="append", default=None, help="only pairs of this category (repeatable)")
    p.add_argument("--batch", default=None, help="only pairs assigned in this batch (see mmrb assign)")
    p.add_argument("--status", default=None, help="only pairs with this status (default: every pair not dropped)")
    p.add_argument(
        "--scheme",
        default=None,
        metavar="NAME",
        help="only pairs on this annotation scheme (a project holds one scheme: its config is the pairs' scheme's)",
    )
    p.add_argument(
        "--image-mode",
        choices=("upload", "local-files"),
        default="upload",
        help="upload images to Label Studio, or serve them from the image folder through a Local Files storage",
    )
    p.add_argument(
        "--document-root",
        default=os.environ.get("LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT"),
        help="the server's LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT "
        "(for --image-mode local-files; default: that variable)",
    )
    p.add_argument(
        "--guidelines",
        type=Path,
        default=None,
        help="markdown file shown as the instructions (default: the guidelines stored in the project)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the left/right order (default 0)")
    p = sub.add_parser("pull", help="pull annotations back as labels (idempotent)")
    _common(p)
    p = sub.add_parser(
        "config",
        help="print the labeling config of an annotation scheme (no server needed; push makes the pairs' scheme's)",
    )
    p.add_argument("--scheme", default="mmrb", help="a built-in scheme's name or a scheme file (default mmrb)")
    p.add_argument("--response-images", action="store_true", help="the config that shows responses' images")


def run(args: argparse.Namespace) -> int:
    from annotate.labelstudio.client import Client, api_key_from_env

    if args.action == "config":
        from annotate.labelstudio.config import scheme_config
        from curate.schemes import load

        print(scheme_config(load(args.scheme), response_images=args.response_images), end="")
        return 0
    require_extra("labelstudio", f"mmrb labelstudio {args.action}")  # before asking for a key it cannot use
    if args.action == "push" and args.overlap is not None and args.overlap < 1:
        raise MmrbError("--overlap must be at least 1")
    client = Client(args.url, api_key_from_env(args.api_key_env), key_name=f"the API key in ${args.api_key_env}")
    try:
        client.check()  # before the store is opened (or created): a wrong URL or key touches nothing
        with open_store(args) as store, progress_bars(quiet=args.quiet) as bars:
            progress = bars.named()  # a bar per stage; None when hidden: no per-task work
            run = _push if args.action == "push" else _pull
            reported = run(store, client, args, progress)
    finally:
        client.close()
    # after the bar: a transient bar would erase lines printed under it
    if args.json:
        for line in reported.warnings:  # on stderr too, where a person reads them
            print(line, file=sys.stderr)
        print_json(reported.doc)
    else:
        print("\n".join(reported.lines))
    return 0


class Reported(NamedTuple):
    """What push or pull reports: its text lines, the same as JSON (docs/json.md), its warnings."""

    lines: list[str]
    doc: dict[str, object]
    warnings: list[str]


def _push(store: Store, client: Client, args: argparse.Namespace, progress: Progress | None) -> Reported:
    from annotate.labelstudio.push import push

    guidelines = None
    if args.guidelines is not None:
        try:
            guidelines = args.guidelines.read_text(encoding="utf-8")
        except OSError as e:
            raise MmrbError(f"cannot read --guidelines {args.guidelines}: {e.strerror}") from None
    r = push(
        store,
        client,
        args.project,
        overlap=args.overlap,
        categories=args.category,
        batch=args.batch,
        status=args.status,
        scheme=args.scheme,
        images=args.image_mode,
        document_root=args.document_root,
        guidelines=guidelines,
        seed=args.seed,
        progress=progress,
    )
    doc: dict[str, object] = {"project": args.project, "url": client.url, **r.as_dict()}
    verb = "created" if r.project_created else "reused"
    out = [
        f"project {args.project!r} (id {r.project_id}) {verb} at {client.url}",
        f"pairs selected: {r.selected}; already in the project: {r.already}; pushed now: {r.pushed}",
    ]
    if r.images_uploaded:
        out.append(f"images uploaded: {r.images_uploaded}")
    for w in r.warnings:
        out.append(f"warning: {w}")
    return Reported(out, doc, [f"warning: {w}" for w in r.warnings])


def _pull(store: Store, client: Client, args: argparse.Namespace, progress: Progress | None) -> Reported:
    from annotate.labelstudio.pull import pull

    r = pull(store, client, args.project, progress=progress)
    doc: dict[str, object] = {"project": args.project, "url": client.url, **r.as_dict()}
    out = [
        f"project {args.project!r} (id {r.project_id}): {plural(r.annotations, 'annotation')} read",
        f"labels new: {r.new}; updated: {r.updated}; unchanged: {r.unchanged}",
    ]
    if r.annotators_created:
        out.append(f"annotators created: {', '.join(r.annotators_created)}")
    if r.cancelled:
        out.append(f"cancelled (skipped) annotations not imported: {len(r.cancelled)}")
        for pair_id, name in r.cancelled[:20]:
            out.append(f"  pair {pair_id} by {name}")
    if r.superseded:
        out.append(f"older annotations by the same user on the same pair ignored: {r.superseded}")
    if r.conflicts:
        out.append(f"kept labels made in the annotation app (Label Studio's version not imported): {len(r.conflicts)}")
        for pair_id, name in r.conflicts[:20]:
            out.append(f"  pair {pair_id} by {name}")
    return Reported(out, doc, [])
