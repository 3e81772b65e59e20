"""Image bytes and image-store tampering the tests share."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image


def swap_for_link(path: Path, target: Path) -> None:
    path.unlink()
    path.symlink_to(target)


def jpeg(color: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), color).save(buf, format="JPEG")
    return buf.getvalue()
