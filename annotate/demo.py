"""The bundled sample project: built on first start of the app, with demo accounts.

It runs the real pipeline on data/sample/items.jsonl (ingest, pairing, assignment), into a
temporary file renamed into place at the end, so an interrupted first start leaves nothing
half-built. The store remembers which sample it was built from (``VERSION_KEY``): a
store built from an older sample (or by an older demo) is rebuilt on the next start, the
old file kept beside it as ``sample.db.previous``. The pairs whose responses are images
come first in every demo queue, so the first pairs an annotator sees show them, labelled on
MMRB2's six-point scale (``IMAGE_SCHEME``); the others on the default form. The store also
holds the sample's example labels (annotate/example_labels.py: ada, grace and alan, accounts
without a password, every label's source "example"), so the lead's pages show real figures on
first start, while alice, bob and carol have their own queues to label, ``K`` to a pair as the
sample's rules ask (data/sample/rules.toml: ``min_labels = 3``). The demo
passwords are public (printed and shown on the sign-in page): the
sample store is for trying the app, never for real work.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from curate.store import Store

from . import auth

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
DEFAULT_DB = ROOT / ".mmrb" / "sample.db"
# (name, password, role)
ACCOUNTS = (
    ("lead", "lead-demo", "admin"),
    ("alice", "alice-demo", "annotator"),
    ("bob", "bob-demo", "annotator"),
    ("carol", "carol-demo", "annotator"),
)
K = 3  # labels per pair in the demo queues: the sample's rules ask min_labels = 3
# The sample leaves one image out on purpose (data/make_sample.py); its item's metadata says so
# under this key, and the app's placeholder then says it is deliberate.
DELIBERATE_MISSING_IMAGE = "deliberately_missing_image"
DELIBERATE_MISSING_NOTE = "This is the sample's deliberately missing image: it shows how the app presents one."
CAP = 2  # pairs per prompt: a calm first session
IMAGE_SCHEME = "mmrb2-pairwise"  # the scheme of the pairs whose responses are images; the others are on mmrb
VERSION_KEY = "demo.sample_version"  # the setting that says which sample a store was built from
BUILD = "4"  # the demo's own build steps: raise it when build_sample changes what it makes


def sample_version(sample: Path | None = None) -> str:
    """What the sample store is built from: the demo's build steps and the sample's items."""
    h = hashlib.sha256(f"demo build {BUILD}\n".encode())
    h.update(((sample or SAMPLE) / "items.jsonl").read_bytes())
    return h.hexdigest()  # a content digest, compared whole


@dataclass(frozen=True)
class Sample:
    """Where the sample project is, and its demo accounts."""

    db: str
    images: str
    guidelines: str
    accounts: tuple[tuple[str, str, str], ...]  # (name, password, role)


def build_sample(db: Path, images: Path, sample: Path | None = None) -> None:
    """Ingest, pair and assign the sample (default ``SAMPLE``) into ``db`` (which must not
    exist yet)."""
    # here, not at the top: the app imports this module on every start, and only a first
    # start builds the sample (pairing alone imports in about 80 ms)
    from curate.assign import assign
    from curate.ingest import ingest_items
    from curate.model import MMRB2_CATEGORIES
    from curate.pairing import pair_items
    from curate.schemes import BUILT_IN

    sample = sample or SAMPLE
    with Store(str(db), images) as store:
        ingest_items(store, sample / "items.jsonl", allow_missing_images=True)
        pair_items(store, strategy="cross_model", cap_per_item=CAP, seed=0)
        for name, password, role in ACCOUNTS:
            auth.add_account(store, name, password, role)
        annotators = [n for n, _, r in ACCOUNTS if r == "annotator"]
        with_images = {c.item_id for c in store.candidates() if c.images}
        task = {i.id: i.category for i in store.items() if i.id in with_images}
        order = {c: n for n, c in enumerate(MMRB2_CATEGORIES)}
        # the pairs with image responses first in every queue, on MMRB2's six-point scale, a task
        # after another in MMRB2's order: a drawn chart first, the quickest to judge at a glance
        pairs = store.pairs()
        for t in sorted(set(task.values()), key=lambda c: (order.get(c, len(order)), c)):
            ids = [p.id for p in pairs if task.get(p.item_id) == t]
            assign(store, k=K, annotators=annotators, seed=0, pair_ids=ids, scheme=BUILT_IN[IMAGE_SCHEME])
        assign(store, k=K, annotators=annotators, seed=0)
        add_example_labels(store)
        guidelines = sample / "guidelines.md"
        if guidelines.exists():
            store.seed_guidelines(guidelines.read_text(encoding="utf-8"), "sample")
        store.set_setting(VERSION_KEY, sample_version(sample))
        store.checkpoint()  # the WAL into the file before it is renamed


def add_example_labels(store: Store) -> int:
    """The sample's example labels of every pair, on its own scheme, in one transaction (their
    annotators made as ``mmrb labels import`` makes them: no password, no queue)."""
    from .example_labels import example_labels, pair_views  # only a first start builds the sample

    labels = example_labels(pair_views(store))
    with store.transaction() as tx:
        for who in sorted({lb.annotator for lb in labels}):
            store.ensure_annotator(who, conn=tx)
        return store.import_labels(labels, conn=tx)


def built_version(db: Path, images: Path) -> str | None:
    """The sample version a store was built from (None: a store older than the setting)."""
    with Store(str(db), images) as store:
        return store.get_setting(VERSION_KEY)


def print_accounts() -> None:
    print("mmrb-studio: demo accounts (name / password / role):", file=sys.stderr)
    for name, password, role in ACCOUNTS:
        print(f"    {name} / {password} / {role}", file=sys.stderr)


def ensure_sample(db: Path | None = None, *, announce: bool = False) -> Sample:
    """The sample store, built on first use. The demo accounts are printed when it is built,
    and with ``announce`` also when it was there already (the app's start-up)."""
    db = Path(db or DEFAULT_DB)
    images = Path(str(db) + ".images")
    outdated = db.exists() and built_version(db, images) != sample_version()
    if not db.exists() or outdated:
        db.parent.mkdir(parents=True, exist_ok=True)
        tmp = db.with_name(f".{db.name}.{os.getpid()}.tmp")
        for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            p.unlink(missing_ok=True)
        build_sample(tmp, images)
        for suffix in ("-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        if outdated:  # kept, labels and all, beside the new one
            previous = db.with_name(db.name + ".previous")
            for suffix in ("", "-wal", "-shm"):
                if Path(f"{db}{suffix}").exists():
                    os.replace(f"{db}{suffix}", f"{previous}{suffix}")
        os.replace(tmp, db)
        if outdated:
            print(
                f"mmrb-studio: the sample has changed since {db} was built: rebuilt it "
                f"(the old one is {db.name}.previous)",
                file=sys.stderr,
            )
        else:
            print(f"mmrb-studio: built the sample project in {db}", file=sys.stderr)
        print_accounts()
    elif announce:
        print(f"mmrb-studio: the sample project is in {db}", file=sys.stderr)
        print_accounts()
    return Sample(str(db), str(images), str(SAMPLE / "guidelines.md"), ACCOUNTS)
