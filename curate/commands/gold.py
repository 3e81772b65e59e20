"""``mmrb gold``: gold answers (import, derive, list, stats) and the qualification set."""

from __future__ import annotations

import argparse
import json

HELP = "gold answers: import a file, derive from adjudications and references, list, stats, qualification"
DESCRIPTION = (
    "Gold answers are never shown to annotators: control tasks (mmrb assign --control-share) and the "
    "qualification set are scored against them, and the build uses them where present. "
    "A gold file is CSV or JSONL with pair_id and any of preference (first/second/tie), "
    "correctness_first, correctness_second (correct/incorrect/unsure), note, and for a pair on an annotation "
    "scheme its fields by their label names (score, grade_first, ...); in the pair's stored order."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from curate.commands.common import add_store_options

    sub = p.add_subparsers(dest="what", metavar="{import,derive,list,stats,qualify,resume}", required=True)
    imp = sub.add_parser("import", help="import a gold file (all or nothing)")
    imp.add_argument("file")
    imp.add_argument("--json", action="store_true", help="print the report as JSON (its schema: docs/json.md)")
    add_store_options(imp)
    der = sub.add_parser("derive", help="gold from adjudications and from references' automatic correctness")
    der.add_argument(
        "--from",
        dest="sources",
        default="adjudication,reference",
        help="comma-separated: adjudication, reference (default both)",
    )
    der.add_argument("--json", action="store_true", help="print the reports as JSON (its schema: docs/json.md)")
    add_store_options(der)
    ls = sub.add_parser("list", help="every gold answer")
    ls.add_argument("--json", action="store_true", help="one JSON object per line")
    add_store_options(ls)
    st = sub.add_parser("stats", help="gold answers by source, field and category; control tasks")
    st.add_argument("--json", action="store_true")
    add_store_options(st)
    q = sub.add_parser("qualify", help="set the qualification set that new annotators label first")
    q.add_argument("file", help="one pair id per line (pairs with gold)")
    q.add_argument("--min-score", type=float, default=0.8, help="share of gold values to match (default 0.8)")
    q.add_argument("--json", action="store_true", help="print the set's size as JSON (its schema: docs/json.md)")
    add_store_options(q)
    r = sub.add_parser("resume", help="let an annotator back into the queue (paused, or failed qualification)")
    r.add_argument("annotator")
    r.add_argument("--json", action="store_true", help="print what changed as JSON (its schema: docs/json.md)")
    add_store_options(r)


def run(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from curate.commands.common import cli_actor, names, open_store, print_json, read_ids
    from curate.quality import gold as G
    from curate.quality import qualification as Q
    from curate.wording import plural

    with open_store(args) as store:
        if args.what == "import":
            rep = G.import_gold(store, args.file, by=cli_actor())
            if args.json:
                print_json(asdict(rep))
            else:
                print("\n".join(rep.lines()))
        elif args.what == "derive":
            reps = G.derive_gold(store, names(args.sources) or [], by=cli_actor())
            if args.json:
                print_json({"reports": [asdict(r) for r in reps]})
            elif reps:
                print("\n".join(line for rep in reps for line in rep.lines()))
        elif args.what == "list":
            rows = G.gold_rows(store)
            if args.json:
                for g in rows:
                    print(json.dumps(asdict(g), ensure_ascii=False, sort_keys=True))
            else:
                for g in rows:
                    vals = ", ".join(
                        f"{n}={g.value(n)}"
                        for n in ("preference", "correctness_first", "correctness_second")
                        if g.value(n)
                    )
                    print(f"{g.pair_id}\t{g.source}\t{vals}")
                print(f"{len(rows)} gold answers")
        elif args.what == "stats":
            stats = G.gold_stats(store)
            print(json.dumps(asdict(stats), indent=1, sort_keys=True) if args.json else "\n".join(stats.lines()))
        elif args.what == "qualify":
            n = Q.set_qualification(store, read_ids(args.file) or [], args.min_score)
            if args.json:
                print_json({"pairs": n, "min_score": args.min_score})
                return 0
            print(
                f"qualification set: {plural(n, 'pair')}, minimum score {args.min_score:g}; "
                "new annotators get it on the next mmrb assign"
            )
        else:
            done = Q.resume(store, args.annotator, by=cli_actor())
            if args.json:
                print_json(asdict(done))
            else:
                print(f"{args.annotator}: back in the queue")
    return 0
