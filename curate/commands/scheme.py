"""mmrb scheme: the annotation schemes, built in or in a file: their fields, keys and rules."""

from __future__ import annotations

import argparse

HELP = "show an annotation scheme (built in or a TOML file) and check it"
DESCRIPTION = (
    "Without an argument, the built-in annotation schemes. With a name or a TOML file, that "
    "scheme's fields (kind, values or points, when required, keys) and how a pair's preference "
    "follows from them; a file with problems exits 1 naming each (file, line, field). "
    "See docs/schemes.md."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scheme", nargs="?", help="a built-in scheme's name or a scheme file (TOML)")
    p.add_argument("--json", action="store_true", help="print it as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from curate.schemes import BUILT_IN, DEFAULT, describe, load

    if args.scheme is None:
        rows = {name: s.title for name, s in BUILT_IN.items()}
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            for name, title in rows.items():
                print(f"{name:<16} {title}{'  (the default)' if name == DEFAULT else ''}")
        return 0
    scheme = load(args.scheme)
    print(json.dumps(describe(scheme), indent=2) if args.json else "\n".join(_lines(describe(scheme))))
    return 0


def _lines(d: dict) -> list[str]:
    out = [f"{d['name']}: {d['title']}"]
    for f in d["fields"]:
        answers = f.get("points") or f.get("values") or []
        keys = f" keys {' '.join(f['keys'])}" if f["keys"] else ""
        out.append(f"  {f['name']} ({f['kind']}, {f['required']}){keys}: {' / '.join(answers)}".rstrip(": "))
    out.append(f"  preference: {d['preference']}")
    return out
