"""Sign-in benchmark: does the answer's timing tell accounts apart, and what does the
server-side session check cost each rerun?

    python -m bench.signin            # 21 rounds
    python -m bench.signin --quick    # 5 rounds

Anchor: a wrong password for an existing account (one argon2id verification). An unknown
name, an account without a password and a disabled account must cost the same (ratio ~1.0;
before the dummy-hash verification, an account without a password answered in under 1 ms).
The session check (one indexed join, on every rerun of every page) is shown beside the
account lookup the app did per rerun before sessions were kept on the server.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from annotate import auth, sessions
from curate.store import Store


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    rounds = 5 if ap.parse_args(argv).quick else 21
    with tempfile.TemporaryDirectory() as d, Store(f"{d}/s.db", images=f"{d}/img") as s:
        alice = auth.add_account(s, "alice", "right password")
        auth.add_account(s, "gone", "right password")
        auth.set_active(s, "gone", False)
        s.ensure_annotator("nopw")
        auth.dummy_hash()  # made once per process
        cases = {
            "wrong password (anchor)": "alice",
            "unknown name": "nobody",
            "no password": "nopw",
            "disabled account": "gone",
        }
        ms: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(rounds):  # interleaved, so load on the machine hits every case alike
            for k, name in cases.items():
                t = time.perf_counter()
                auth.authenticate(s, name, "wrong password")
                ms[k].append((time.perf_counter() - t) * 1000)
        anchor = statistics.median(ms["wrong password (anchor)"])
        print(f"sign-in answer, median of {rounds} (SQLite):")
        for k, v in ms.items():
            print(f"  {k:<24} {statistics.median(v):7.1f} ms   ratio {statistics.median(v) / anchor:.2f}")
        sid = sessions.start(s, alice).id
        check, lookup = [], []
        for _ in range(2000):
            t = time.perf_counter()
            sessions.check(s, session_id=sid)
            check.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            s.get_annotator("alice")
            lookup.append((time.perf_counter() - t) * 1000)
        c, a = statistics.median(check), statistics.median(lookup)
        print(f"per rerun: session check {c:.3f} ms median vs account lookup {a:.3f} ms (ratio {c / a:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
