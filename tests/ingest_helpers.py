"""Shared by the ingest tests: fixture copies with images drawn by pillow, a CLI runner,
'nothing was written' checks, and the store's indexes and keys as its catalog lists them."""

from __future__ import annotations

import argparse
import io
import json
import shutil
from pathlib import Path

from PIL import Image, ImageDraw

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"


def png(color="red", size=(40, 30)) -> bytes:
    im = Image.new("RGB", size, "white")
    ImageDraw.Draw(im).ellipse([5, 5, size[0] - 5, size[1] - 5], fill=color)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def write_image(path: Path, color="red", size=(40, 30)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png(color, size))
    return path


def fixture_copy(name: str, tmp: Path, images: dict[str, str] | None = None) -> Path:
    """Copy a fixture to ``tmp`` and draw the images it names (relative path -> colour)."""
    dst = tmp / name
    shutil.copy(FIXTURES / name, dst)
    for rel, color in (images or {}).items():
        write_image(tmp / rel, color)
    return dst


def counts(store) -> dict[str, int]:
    c, t = store.counts(), store.tallies()
    return {
        "items": c.items,
        "item_images": sum(t.image_refs_by_status.values()),
        "images": len(store.image_hashes()),
        "candidates": c.candidates,
        "pairs": c.pairs,
        "labels": c.labels,
        "annotators": c.annotators,
    }


def assert_nothing_written(store) -> None:
    assert all(v == 0 for v in counts(store).values()), counts(store)
    files = [p for p in store.images.root.rglob("*") if p.is_file()] if store.images.root.exists() else []
    assert files == [], files


def run_cli(module, argv: list[str], capsys) -> tuple[int, str, str]:
    """Run one command module the way ``mmrb`` does (errors -> one line, exit 1)."""
    from curate.errors import MmrbError

    p = argparse.ArgumentParser()
    module.add_arguments(p)
    args = p.parse_args(argv)
    try:
        rc = module.run(args)
    except MmrbError as e:
        print(f"error: {e}", file=__import__("sys").stderr)
        rc = 1
    out = capsys.readouterr()
    return rc, out.out, out.err


def fail_writing_candidates(monkeypatch, store) -> None:
    """An import into ``store`` fails ("disk full") writing its candidates: after its items
    and their images, in the middle of its transaction."""
    import curate.store.imports as imports

    real = imports.insert_rows

    def insert_rows(conn, table, cols, rows, *a, **kw):
        if table.name == "candidates" and conn.engine.pool is store.engine.pool:
            raise RuntimeError("disk full")
        return real(conn, table, cols, rows, *a, **kw)

    monkeypatch.setattr(imports, "insert_rows", insert_rows)


def text_pairs_file(path: Path, n: int = 5, bad: bool = False) -> Path:
    """VL-RewardBench text pairs r0..r{n-1}; ``bad`` adds a record without its responses."""
    rows = [{"id": f"r{k}", "prompt": f"question {k}", "chosen": f"yes {k}", "rejected": f"no {k}"} for k in range(n)]
    rows += [{"id": "x", "prompt": "q"}] if bad else []
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def upkeep(store) -> list[tuple]:
    """The store's indexes (and on PostgreSQL its foreign keys), as its catalog says."""
    with store.engine.connect() as c:
        if store.backend == "sqlite":
            return c.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name").all()
        return c.exec_driver_sql(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE contype = 'f' UNION ALL SELECT tablename, indexname, indexdef FROM pg_indexes"
            " WHERE schemaname = 'public' ORDER BY 1, 2"
        ).all()
