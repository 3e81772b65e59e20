"""Content-addressed image storage: verified with pillow, EXIF-oriented, thumbnails cached."""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import os
import re
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

from .model import ImageRef

# Multimodal benchmarks rarely exceed 40 megapixels; a decompression bomb is far above that.
DEFAULT_MAX_PIXELS = 50_000_000
_DATA_URI = re.compile(r"^data:image/[\w.+-]+;base64,(.*)$", re.S)


@dataclass(frozen=True)
class StoredImage:
    sha256: str
    path: str  # relative to the image root
    format: str
    width: int
    height: int
    bytes: int


class ImageProblem(Exception):
    def __init__(self, status: str, message: str):
        self.status = status  # "missing", "corrupt" or "too_large"
        super().__init__(message)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


class ImageStore:
    def __init__(self, root: str | Path, max_pixels: int = DEFAULT_MAX_PIXELS):
        self.root = Path(root)
        self.max_pixels = max_pixels

    # -- reading input -------------------------------------------------------------------
    def read_source(self, source: str, base_dir: Path | None) -> bytes:
        """The bytes behind a path (relative to ``base_dir``) or a base64 data URI."""
        m = _DATA_URI.match(source)
        if m:
            try:
                return base64.b64decode(m.group(1), validate=False)
            except (binascii.Error, ValueError) as e:
                raise ImageProblem("corrupt", f"data URI is not valid base64: {e}") from None
        path = Path(source)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise ImageProblem("missing", f"image file not found: {path}") from None
        except IsADirectoryError:
            raise ImageProblem("missing", f"image path is a folder: {path}") from None

    def prepare(self, data: bytes) -> tuple[bytes, str, int, int]:
        """Verify ``data`` and return (bytes to store, format, width, height).

        The pixel limit is checked from the header before decoding, so a bomb never
        allocates. An EXIF rotation is applied once here, so every later reader sees the
        image upright.
        """
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                im = Image.open(io.BytesIO(data))
                w, h = im.size
                if w * h > self.max_pixels:
                    raise ImageProblem(
                        "too_large", f"image is {w}x{h} = {w * h:,} pixels, over the limit of {self.max_pixels:,}"
                    )
                im.verify()
                im = Image.open(io.BytesIO(data))
                im.load()
        except ImageProblem:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
            raise ImageProblem("too_large", str(e)) from None
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
            raise ImageProblem("corrupt", f"not a readable image ({e})") from None
        fmt = (im.format or "PNG").upper()
        orientation = im.getexif().get(0x0112, 1)
        if orientation not in (1, None):
            im = ImageOps.exif_transpose(im)
            buf = io.BytesIO()
            im.save(buf, format="PNG")
            return buf.getvalue(), "PNG", im.width, im.height
        return data, fmt, w, h

    def put(self, data: bytes) -> StoredImage:
        data, fmt, w, h = self.prepare(data)
        sha = hashlib.sha256(data).hexdigest()
        ext = {"JPEG": "jpg"}.get(fmt, fmt.lower())
        rel = f"{sha[:2]}/{sha}.{ext}"
        target = self.root / rel
        if not target.exists():
            _atomic_write(target, data)
        return StoredImage(sha, rel, fmt, w, h, len(data))

    def ingest(self, source: str, base_dir: Path | None) -> tuple[ImageRef, StoredImage | None]:
        """Store one image; a problem becomes an ImageRef with its status, never a crash."""
        try:
            stored = self.put(self.read_source(source, base_dir))
        except ImageProblem as e:
            return ImageRef(source=source, status=e.status, error=str(e)), None  # type: ignore[arg-type]
        return ImageRef(source, stored.sha256, "ok", stored.width, stored.height), stored

    # -- serving -------------------------------------------------------------------------
    def path(self, rel: str) -> Path:
        return self.root / rel

    def thumbnail(self, rel: str, max_side: int = 1024) -> Path:
        """A JPEG no larger than ``max_side``, made once and cached beside the originals."""
        src = self.root / rel
        sha = Path(rel).stem
        out = self.root / "thumbs" / str(max_side) / f"{sha}.jpg"
        if out.exists():
            return out
        with Image.open(src) as im:
            im = im.convert("RGB") if im.mode not in ("RGB", "L") else im.copy()
            im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            im.save(buf, format="JPEG", quality=85, optimize=True)
        _atomic_write(out, buf.getvalue())
        return out
