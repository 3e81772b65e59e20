"""``mmrb sample``: ask VLM endpoints for candidate responses; resumable at any moment."""

from __future__ import annotations

import argparse

HELP = "sample candidate responses from OpenAI-compatible VLM endpoints (resumable)"
DESCRIPTION = (
    "Send each item's images and prompt to every model of a models file (TOML or YAML) and store "
    "each response as it arrives, keyed by (item, model, parameters, sample index). Killed and started "
    "again, it sends only the missing requests. Requests that still fail after retries, and empty or "
    "oversized answers, are not stored as candidates: the command exits 1 and a rerun sends only those. "
    "See data/sample/models.toml for the file format."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_quiet_option, add_response_limit_option, add_store_options

    add_store_options(p)
    p.add_argument("--models", required=True, help="models file (.toml, .yaml or .yml)")
    p.add_argument("--items", default=None, help="file with one item id per line: sample only these")
    p.add_argument("--only", default=None, help="comma-separated model names of the file to use")
    p.add_argument("--max-side", type=int, default=1024, help="downscale images to this longest side (0: never)")
    p.add_argument("--no-check", action="store_true", help="do not ask each endpoint for its model list first")
    add_quiet_option(p)
    # its earlier name, kept so that existing scripts still work
    p.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--flush-every", type=int, default=64, help="commit at least every N responses (default 64)")
    add_response_limit_option(p, "models file")
    p.add_argument("--json", action="store_true", help="print the report as JSON (its schema: docs/json.md)")


def run(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from curate.commands.common import Counter, load_models, names, open_store, print_json, progress_bars, read_ids
    from curate.errors import MmrbError
    from curate.sampling import sample_async

    specs = load_models(args.models, args)
    wanted = names(args.only)
    if wanted is not None:
        unknown = sorted(set(wanted) - {s.label for s in specs})
        if unknown:
            raise MmrbError(f"--only names models not in {args.models}: {', '.join(unknown)}")
        specs = [s for s in specs if s.label in wanted]
    item_ids = read_ids(args.items)

    with open_store(args) as store, progress_bars(quiet=args.quiet) as bars:
        counters: dict[str, Counter | None] = {}
        failed: dict[str, int] = {}

        def on_start(todo: dict[str, int]) -> None:
            for name, n in todo.items():
                counters[name] = counter = bars.counter(name, n)
                failed[name] = 0
                if counter is not None:
                    counter.note("failed 0")

        def on_progress(name: str, ok: int, bad: int) -> None:
            counter = counters[name]
            assert counter is not None  # only called when the bars are shown
            counter.advance()
            if bad:
                failed[name] += bad
                counter.note(f"failed {failed[name]}")

        report = asyncio.run(
            sample_async(
                store,
                specs,
                item_ids=item_ids,
                max_side=args.max_side or None,
                check=not args.no_check,
                flush_every=args.flush_every,
                on_progress=on_progress if bars.shown else None,  # no per-response work when hidden
                on_start=on_start,
            )
        )
    if args.json:
        print_json(report.as_dict())
    else:
        print("\n".join(report.lines()))
    if report.failed:
        print("\n".join(report.failure_lines()), file=sys.stderr)
        return 1
    return 0
