"""Benchmark of the Label Studio bridge: push 10,000 pairs, pull 20,000 annotations.

    python -m bench.labelstudio            # 10,000 pairs, 2 annotations each
    python -m bench.labelstudio --quick    # 200 pairs
    python -m bench.labelstudio --url http://127.0.0.1:8080 --api-key-env LABEL_STUDIO_API_KEY

Without --url it starts its own Label Studio (tests/support/labelstudio_server.py) in a
temporary folder. Anchors, measured in the same run on the same server:
- push: Label Studio's own bulk import of the same task payloads into a scratch project;
- pull: Label Studio's own JSON export of the annotated project (download + parse).
The annotations are created fast by importing the pushed tasks, annotations included, into a
second project (two users, every pair annotated by both); pull then reads that project.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
import uuid
from pathlib import Path

from PIL import Image

from annotate.labelstudio.client import Client, api_key_from_env
from annotate.labelstudio.config import labeling_config
from annotate.labelstudio.pull import pull
from annotate.labelstudio.push import push
from curate.model import Candidate, ImageRef, Item, Pair
from curate.store import Store

ROOT = Path(__file__).resolve().parents[1]

CHOICES = ("Correct", "Incorrect", "Unsure")


def build_store(path: Path, n_pairs: int, n_images: int = 50) -> Store:
    store = Store(str(path / "bench.db"), images=path / "images")
    stored = []
    for n in range(n_images):
        buf = io.BytesIO()
        Image.new("RGB", (320, 240), ((n * 37) % 256, (n * 91) % 256, (n * 53) % 256)).save(buf, format="PNG")
        stored.append(store.images.put(buf.getvalue()))
    store.add_images(stored)
    items = [
        Item(
            f"item{n:05d}",
            f"Question {n}: what does the chart show, and which bar is highest?",
            ("vqa", "reasoning", "safety")[n % 3],
            (ImageRef(f"img{n % n_images}.png", stored[n % n_images].sha256, "ok", 320, 240),),
        )
        for n in range(n_pairs)
    ]
    text = "The chart shows quarterly revenue; the third bar is highest at 42 million. " * 4
    with store.write() as c:
        store.add_items(items, conn=c)
        store.add_candidates(
            (Candidate(f"{i.id}/{m}", i.id, m, f"{m}: {text}") for i in items for m in ("alpha", "beta")), conn=c
        )
        store.add_pairs(
            (Pair(f"pair{n:05d}", i.id, f"{i.id}/alpha", f"{i.id}/beta", "bench") for n, i in enumerate(items)), conn=c
        )
    return store


def result(n: int) -> list[dict]:
    return [
        {"from_name": "correct_a", "to_name": "response_a", "type": "choices", "value": {"choices": [CHOICES[n % 3]]}},
        {
            "from_name": "correct_b",
            "to_name": "response_b",
            "type": "choices",
            "value": {"choices": [CHOICES[(n + 1) % 3]]},
        },
        {
            "from_name": "preference",
            "to_name": "prompt",
            "type": "choices",
            "value": {"choices": [("A", "B", "Tie")[n % 3]]},
        },
        {"from_name": "rationale", "to_name": "prompt", "type": "textarea", "value": {"text": [f"reason {n}"]}},
    ]


def user_ids(client: Client, emails: list[str]) -> list[int]:
    have = {u.email: u.id for u in client.sdk.users.list()}
    return [
        have.get(e) or client.sdk.users.create(email=e, username=e.split("@")[0], password=uuid.uuid4().hex).id
        for e in emails
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="200 pairs instead of 10,000")
    ap.add_argument("--pairs", type=int, default=None)
    ap.add_argument("--url", default=None, help="an existing Label Studio (default: start one)")
    ap.add_argument("--api-key-env", default="LABEL_STUDIO_API_KEY")
    ap.add_argument("--workdir", default=None, help="folder for the store (default: a temporary one)")
    args = ap.parse_args(argv)
    n_pairs = args.pairs or (200 if args.quick else 10_000)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="mmrb-bench-ls-"))
    work.mkdir(parents=True, exist_ok=True)
    stop = None
    if args.url:
        url, token = args.url, api_key_from_env(args.api_key_env)
    else:
        from tests.support.labelstudio_server import start_label_studio

        t = time.perf_counter()
        url, token, stop = start_label_studio(work / "server")
        print(f"started Label Studio at {url} in {time.perf_counter() - t:.1f} s")
    try:
        client = Client(url, token)
        tag = uuid.uuid4().hex[:6]
        t = time.perf_counter()
        store = build_store(work / f"store-{tag}", n_pairs)
        print(f"store with {n_pairs:,} pairs built in {time.perf_counter() - t:.1f} s")

        title = f"bench-{tag}"
        t = time.perf_counter()
        r = push(store, client, title, overlap=2)
        push_s = time.perf_counter() - t
        assert r.pushed == n_pairs, r

        tasks = client.task_data(r.project_id)
        payload = [{"data": t["data"]} for t in tasks]
        anchor = client.create_project(title=f"bench-{tag}-anchor", label_config=labeling_config())
        t = time.perf_counter()
        for n in range(0, len(payload), 500):
            client.import_tasks(anchor.id, payload[n : n + 500])
        anchor_push_s = time.perf_counter() - t

        users = user_ids(client, ["bench-a@example.com", "bench-b@example.com"])
        annotated_title = f"bench-{tag}-ann"
        annotated = client.create_project(title=annotated_title, label_config=labeling_config(), maximum_annotations=2)
        t = time.perf_counter()
        n_ann = 0
        for n in range(0, len(tasks), 500):
            chunk = []
            for k, task in enumerate(tasks[n : n + 500], start=n):
                anns = [{"result": result(k + j), "completed_by": u, "lead_time": 5.0 + j} for j, u in enumerate(users)]
                n_ann += len(anns)
                chunk.append({"data": task["data"], "annotations": anns})
            client.import_tasks(annotated.id, chunk)
        print(f"{n_ann:,} annotations created (bulk import) in {time.perf_counter() - t:.1f} s")

        t = time.perf_counter()
        exported = client.export_json(annotated.id)
        anchor_pull_s = time.perf_counter() - t
        assert sum(len(x["annotations"]) for x in exported) == n_ann

        t = time.perf_counter()
        got = pull(store, client, annotated_title)
        pull_s = time.perf_counter() - t
        assert got.new == n_ann, got
        t = time.perf_counter()
        client.export_json(annotated.id)
        anchor_pull_s = (anchor_pull_s + time.perf_counter() - t) / 2  # before and after: the server's speed drifts
        t = time.perf_counter()
        again = pull(store, client, annotated_title)
        repull_s = time.perf_counter() - t
        assert again.unchanged == n_ann and again.new == again.updated == 0

        print(
            f"push  {n_pairs:>7,} pairs        {push_s:7.1f} s  {n_pairs / push_s:8.0f} items/s   "
            f"anchor (LS bulk import) {anchor_push_s:6.1f} s  ratio {push_s / anchor_push_s:.2f}"
        )
        print(
            f"pull  {n_ann:>7,} annotations  {pull_s:7.1f} s  {n_ann / pull_s:8.0f} items/s   "
            f"anchor (LS JSON export, mean of 2) {anchor_pull_s:6.1f} s  ratio {pull_s / anchor_pull_s:.2f}"
        )
        print(f"pull again (nothing changed)  {repull_s:7.1f} s  {n_ann / repull_s:8.0f} items/s")
        print(
            f"pull breakdown: Label Studio export {got.seconds['export']:.1f} s, mapping + store write "
            f"{got.seconds['store']:.1f} s ({n_ann / got.seconds['store']:.0f} annotations/s); "
            f"the export anchor varies with server load, so compare the two parts"
        )
        store.close()
        client.close()
    finally:
        if stop:
            stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
