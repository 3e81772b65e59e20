"""The bundled sample project: built on first start of the app, with demo accounts.

It runs the real pipeline on data/sample/items.jsonl (ingest, pairing, assignment), into a
temporary file renamed into place at the end, so an interrupted first start leaves nothing
half-built. The demo passwords are public (printed and shown on the sign-in page): the
sample store is for trying the app, never for real work.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

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
K = 2  # labels per pair in the sample
# The sample leaves one image out on purpose (data/make_sample.py); its item's metadata says so
# under this key, and the app's placeholder then says it is deliberate.
DELIBERATE_MISSING_IMAGE = "deliberately_missing_image"
DELIBERATE_MISSING_NOTE = "This is the sample's deliberately missing image: it shows how the app presents one."
CAP = 2  # pairs per prompt: a calm first session


@dataclass(frozen=True)
class Sample:
    """Where the sample project is, and its demo accounts."""

    db: str
    images: str
    guidelines: str
    accounts: tuple[tuple[str, str, str], ...]  # (name, password, role)


def build_sample(db: Path, images: Path, sample: Path = SAMPLE) -> None:
    """Ingest, pair and assign the sample into ``db`` (which must not exist yet)."""
    from curate.assign import assign
    from curate.ingest import ingest_items
    from curate.pairing import pair_items
    from curate.store import Store

    from . import auth

    with Store(str(db), images) as store:
        ingest_items(store, sample / "items.jsonl", allow_missing_images=True)
        pair_items(store, strategy="cross_model", cap_per_item=CAP, seed=0)
        for name, password, role in ACCOUNTS:
            auth.add_account(store, name, password, role)
        assign(store, k=K, annotators=[n for n, _, r in ACCOUNTS if r == "annotator"], seed=0)
        guidelines = sample / "guidelines.md"
        if guidelines.exists():
            store.set_setting("guidelines_md", guidelines.read_text(encoding="utf-8"))
        store.checkpoint()  # the WAL into the file before it is renamed


def print_accounts() -> None:
    print("mmrb-studio: demo accounts (name / password / role):", file=sys.stderr)
    for name, password, role in ACCOUNTS:
        print(f"    {name} / {password} / {role}", file=sys.stderr)


def ensure_sample(db: Path | None = None, *, announce: bool = False) -> Sample:
    """The sample store, built on first use. The demo accounts are printed when it is built,
    and with ``announce`` also when it was there already (the app's start-up)."""
    db = Path(db or DEFAULT_DB)
    images = Path(str(db) + ".images")
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        tmp = db.with_name(f".{db.name}.{os.getpid()}.tmp")
        for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            p.unlink(missing_ok=True)
        build_sample(tmp, images)
        for suffix in ("-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, db)
        print(f"mmrb-studio: built the sample project in {db}", file=sys.stderr)
        print_accounts()
    elif announce:
        print(f"mmrb-studio: the sample project is in {db}", file=sys.stderr)
        print_accounts()
    return Sample(str(db), str(images), str(SAMPLE / "guidelines.md"), ACCOUNTS)
