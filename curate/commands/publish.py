"""``mmrb publish``: upload a built benchmark folder to the Hugging Face Hub."""

from __future__ import annotations

import argparse

HELP = "upload a built benchmark folder to a Hugging Face Hub dataset repository (one commit)"
DESCRIPTION = (
    "Upload every file of a folder written by `mmrb build --out` to the dataset repository REPO_ID "
    "in one commit, creating the repository if needed. The token is HF_TOKEN, else the one saved by "
    "`hf auth login`; HF_ENDPOINT names another Hub. --dry-run lists the files and sizes that would be "
    "sent and sends nothing."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_json_option

    p.add_argument("folder", metavar="FOLDER", help="the built benchmark folder (mmrb build --out)")
    p.add_argument("repo_id", metavar="REPO_ID", help="the dataset repository, e.g. my-team/my-benchmark")
    p.add_argument(
        "--private", action="store_true", help="create the repository private (an existing one keeps its visibility)"
    )
    p.add_argument("--revision", metavar="REV", help="the branch to commit to (created if needed; default main)")
    p.add_argument("--dry-run", action="store_true", help="list the files and sizes to upload; send nothing")
    add_json_option(p, "the files sent (or, with --dry-run, to send)")


def run(args: argparse.Namespace) -> int:
    import os

    from curate.commands.common import print_json
    from curate.publish import plan_dict, plan_lines, publish, upload_plan
    from curate.wording import plural

    target = {"dry_run": args.dry_run, "repo_id": args.repo_id, "revision": args.revision}
    if args.dry_run:
        files = upload_plan(args.folder)
        if args.json:
            print_json({**target, **plan_dict(files)})
            return 0
        where = f"{args.repo_id}" + (f" (branch {args.revision})" if args.revision else "")
        print(f"dry run: would upload to the dataset repository {where}, in one commit:")
        print("\n".join(plan_lines(files)))
        return 0
    # read here, not at huggingface_hub's import: the endpoint of this run
    res = publish(
        args.folder,
        args.repo_id,
        private=args.private,
        revision=args.revision,
        endpoint=os.environ.get("HF_ENDPOINT") or None,
    )
    if args.json:
        print_json({**target, **res.as_dict()})
        return 0
    sent = f"{plural(len(res.files), 'file')} ({res.as_dict()['bytes']:,} bytes)"
    print(f"uploaded {sent} to {res.repo_url} in one commit: {res.commit_url}")
    return 0
