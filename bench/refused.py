"""How long `mmrb select` and `mmrb evaluate` take to fail when every endpoint refuses
connections (a server not started, a wrong port): a clear error after the first round, not
retries with backoff.

    python -m bench.refused                          # this tree
    python -m bench.refused --compare-tree ../before # and another checkout with its own .venv

The store: the bundled sample ingested and paired (select's input), and its example labels
built into triplets (evaluate's dataset), made once with this tree. Each command runs in a
child process against a port nothing listens on; wall and CPU seconds of the child. The
anchor, in the same run: `mmrb status` of the same store in a child process (start-up and one
read of the store): the ratio is the failure's wall time over it.
"""

from __future__ import annotations

import argparse
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


def closed_port() -> int:
    """A loopback port nothing listens on: bound and released, so a connection is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def mmrb(tree: Path, *args: str) -> tuple[float, float, int]:
    """`mmrb ARGS` of the project in ``tree`` in a child: (wall s, CPU s, exit code)."""
    python = sys.executable if tree == ROOT else str(tree / ".venv" / "bin" / "python")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([python, "-m", "curate.cli", *args], cwd=tree, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def prepare(tmp: Path) -> tuple[Path, Path]:
    """The sample's store (paired) and its triplets, made with this tree."""
    db, out = tmp / "sample.db", tmp / "build"
    steps = [
        ["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images"],
        ["pair"],
        ["labels", "import", str(SAMPLE / "example-labels.jsonl")],
        ["build", "--rules", str(SAMPLE / "rules.toml"), "--out", str(out)],
    ]
    for step in steps:
        proc = subprocess.run(
            [sys.executable, "-m", "curate.cli", *step, "--db", str(db)], cwd=ROOT, capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"bench/refused.py: mmrb {step[0]} failed: {proc.stderr.strip()}")
    return db, out / "triplets.jsonl"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare-tree", type=Path, action="append", default=[], help="another checkout with a .venv")
    args = ap.parse_args(argv)
    trees = [ROOT, *(t.resolve() for t in args.compare_tree)]
    for tree in trees[1:]:
        if not (tree / ".venv" / "bin" / "python").exists():
            ap.error(f"--compare-tree: no {tree}/.venv/bin/python")
    print("refused connections: every endpoint's port closed; wall and CPU s of the command in a child process")
    print(f"{'tree':<6}{'command':<10}{'wall s':>9}{'CPU s':>8}{'exit':>6}{'anchor s':>10}{'of anchor':>11}")
    with tempfile.TemporaryDirectory(prefix="mmrb-bench-refused-") as name:
        tmp = Path(name)
        db, triplets = prepare(tmp)
        url = f"http://127.0.0.1:{closed_port()}/v1"
        judges = tmp / "judges.toml"
        judges.write_text(
            "".join(f'[[models]]\nname = "{j}"\nbase_url = "{url}"\nmodel = "{j}"\n' for j in ("a", "b")),
            encoding="utf-8",
        )
        judge = tmp / "judge.toml"
        judge.write_text(f'name = "a"\nbase_url = "{url}"\nmodel = "a"\n', encoding="utf-8")
        for i, tree in enumerate(trees):
            label = "this" if i == 0 else f"[{i}]"
            anchor, _, rc = mmrb(tree, "status", "--db", str(db))
            if rc != 0:
                raise SystemExit(f"bench/refused.py: mmrb status failed in {tree}")
            # each tree its own copy of the store: a failed run records its requests in it
            store = tmp / f"select-{i}.db"
            store.write_bytes(db.read_bytes())
            runs = {
                "select": ("select", "--judges", str(judges), "--allow-missing-images", "--db", str(store)),
                "evaluate": ("evaluate", "--dataset", str(triplets), "--judge", str(judge), "--allow-missing-images")
                + ("--db", str(tmp / f"evaluate-{i}.db")),
            }
            for command, argv_ in runs.items():
                wall, cpu, rc = mmrb(tree, *argv_)
                print(f"{label:<6}{command:<10}{wall:>9.2f}{cpu:>8.2f}{rc:>6}{anchor:>10.2f}{wall / anchor:>10.1f}x")
    for i, tree in enumerate(trees[1:], start=1):
        print(f"  [{i}] {tree}")
    print("a refused endpoint is an error (exit 1) in every row; retries belong to timeouts and 5xx")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
