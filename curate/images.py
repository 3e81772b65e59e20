"""Content-addressed image storage: verified with pillow, EXIF-oriented, thumbnails cached."""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import io
import os
import re
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PIL import Image, ImageOps, UnidentifiedImageError

# Multimodal benchmarks rarely exceed 40 megapixels; a decompression bomb is far above that.
DEFAULT_MAX_PIXELS = 50_000_000
# A 50-megapixel image is at most 200 MB even as uncompressed 32-bit PNG or BMP.
DEFAULT_MAX_BYTES = 200 * 1024 * 1024
_DATA_URI = re.compile(r"^data:image/[\w.+-]+;base64,(.*)$", re.S)
_OBJECT_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")


@dataclass(frozen=True)
class StoredImage:
    sha256: str
    path: str  # relative to the image root
    format: str
    width: int
    height: int
    bytes: int


ImageProblemKind = Literal["missing", "corrupt", "too_large", "outside"]  # "outside" the images root


class ImageProblem(Exception):
    def __init__(self, status: ImageProblemKind, message: str):
        self.status = status
        super().__init__(message)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def outside_root(source: str, root: Path) -> str:
    """The one message for a path outside the images root: it must not depend on whether
    anything exists there."""
    return f"image path {source!r} is outside the images root {root} (pass --images-root to widen it)"


def _confined(source: str, root: Path) -> tuple[Path, Path]:
    """``source`` resolved against ``root``, and the resolved root; an ImageProblem if it
    leads outside."""
    try:
        real_root = root.resolve()
        path = (root / source).resolve()  # an absolute source replaces root here
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL in the name
        raise ImageProblem("outside", outside_root(source, root)) from None
    if not path.is_relative_to(real_root):
        raise ImageProblem("outside", outside_root(source, root))
    return path, real_root


def _opened_path(fd: int) -> Path | None:
    """Where an open file really is (Linux), to catch a folder swapped for a symlink
    between the check and the open."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


class ImageStore:
    def __init__(self, root: str | Path, max_pixels: int = DEFAULT_MAX_PIXELS, max_bytes: int = DEFAULT_MAX_BYTES):
        self.root = Path(root)
        self.max_pixels = max_pixels
        self.max_bytes = max_bytes

    # -- reading input -------------------------------------------------------------------
    def read_source(self, source: str, root: Path) -> bytes:
        """The bytes behind a base64 data URI, or a path inside ``root``.

        A path resolves inside ``root`` (symlinks followed) or is refused with one message
        that is the same whether or not anything exists there: an input file must not be
        able to read, or learn about, files outside the folder it was given. Only regular
        files are read (a FIFO or a device would hang or never end), and the size is checked
        before reading.
        """
        m = _DATA_URI.match(source)
        if m:
            try:
                return base64.b64decode(m.group(1), validate=False)
            except (binascii.Error, ValueError) as e:
                raise ImageProblem("corrupt", f"data URI is not valid base64: {e}") from None
        root = Path(os.path.abspath(root))
        path, real_root = _confined(source, root)
        return self._read_file(path, source, root, real_root)

    def _read_file(self, path: Path, name: str, root: Path, real_root: Path) -> bytes:
        """A regular file's bytes, at most ``max_bytes``; ``path`` must lie in ``real_root``."""
        try:
            # O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the path is
            # resolved, so a symlink here was put there after the check
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise ImageProblem("missing", f"image file not found: {name}") from None
        except IsADirectoryError:
            raise ImageProblem("missing", f"image path is a folder: {name}") from None
        except OSError as e:
            raise ImageProblem("corrupt", f"cannot open image file {name}: {e.strerror}") from None
        with os.fdopen(fd, "rb") as f:
            where = _opened_path(fd)
            if where is not None and not where.is_relative_to(real_root):
                raise ImageProblem("outside", outside_root(name, root))
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise ImageProblem("missing", f"image path is a folder: {name}")
            if not stat.S_ISREG(st.st_mode):
                raise ImageProblem("corrupt", f"image path is not a regular file: {name}")
            if st.st_size > self.max_bytes:
                raise ImageProblem(
                    "too_large", f"image file {name} is {st.st_size:,} bytes, over the limit of {self.max_bytes:,}"
                )
            data = f.read(self.max_bytes + 1)  # the file may grow after fstat
        if len(data) > self.max_bytes:
            raise ImageProblem("too_large", f"image file {name} is over the limit of {self.max_bytes:,} bytes")
        return data

    def prepare(self, data: bytes, name: str = "image") -> tuple[bytes, str, int, int]:
        """Verify ``data`` and return (bytes to store, format, width, height).

        The pixel limit is checked from the header before decoding, so a bomb never
        allocates. An EXIF rotation is applied once here, so every later reader sees the
        image upright. ``name`` says which image in messages.
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
        except UnidentifiedImageError:
            raise ImageProblem("corrupt", f"not a readable image: {name} is in no image format pillow knows") from None
        except (OSError, SyntaxError, ValueError) as e:
            # pillow names its in-memory buffer (<_io.BytesIO object at 0x...>): say which image
            raise ImageProblem("corrupt", f"not a readable image: {name} ({_OBJECT_REPR.sub(name, str(e))})") from None
        fmt = (im.format or "PNG").upper()
        orientation = im.getexif().get(0x0112, 1)
        if orientation not in (1, None):
            upright = ImageOps.exif_transpose(im)
            buf = io.BytesIO()
            upright.save(buf, format="PNG")
            return buf.getvalue(), "PNG", upright.width, upright.height
        return data, fmt, w, h

    def put(self, data: bytes) -> StoredImage:
        return self.add(data)[0]

    def add(self, data: bytes, name: str = "image") -> tuple[StoredImage, bool]:
        """Store ``data`` once by its hash; the bool says whether this call created the file.

        An import calls it inside ``writing()``, which keeps ``remove_unreferenced`` from
        deleting the file before the row that names it is committed."""
        data, fmt, w, h = self.prepare(data, name)
        sha = hashlib.sha256(data).hexdigest()
        ext = {"JPEG": "jpg"}.get(fmt, fmt.lower())
        rel = f"{sha[:2]}/{sha}.{ext}"
        target = self.root / rel
        created = not target.exists()
        if created:
            _atomic_write(target, data)
        return StoredImage(sha, rel, fmt, w, h, len(data)), created

    # -- who may delete a file -----------------------------------------------------------
    # Files are content-addressed: another import may rely on a file this one wrote, and
    # commit its row after our own transaction failed. Writers hold a shared lock on the
    # image folder from the moment they look for a file until their rows are committed (or
    # rolled back); deleting takes the exclusive lock, so it happens only when no writer is
    # between "file written" and "row committed", and only for a file no committed row names.
    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._lock(fcntl.LOCK_SH):
            yield

    def remove_unreferenced(self, stored: Iterable[StoredImage], referenced: Callable[[list[str]], set[str]]) -> int:
        """Delete the files of ``stored`` whose hash ``referenced`` (asked under the
        exclusive lock, so it sees every committed row) does not return. Returns how many."""
        stored = list(stored)
        if not stored:
            return 0
        with self._lock(fcntl.LOCK_EX):
            try:
                keep = referenced([s.sha256 for s in stored])
            except Exception:  # the store cannot be asked: when in doubt, keep every file
                return 0
            gone = [s for s in stored if s.sha256 not in keep]
            for s in gone:
                (self.root / s.path).unlink(missing_ok=True)
        return len(gone)

    @contextmanager
    def _lock(self, how: int) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))  # flock works on a folder
        try:
            fcntl.flock(fd, how)
            yield
        finally:
            os.close(fd)  # releases the lock

    # -- checking what is stored ---------------------------------------------------------
    def check(self, rel: str, size: int) -> str | None:
        """Why the stored file ``rel`` cannot be served (None: it can): gone, not a regular
        file, another size than recorded, or a header pillow cannot read."""
        path = self.root / rel
        try:
            st = path.lstat()
        except FileNotFoundError:
            return "file gone"
        except OSError as e:
            return f"cannot stat the file: {e.strerror}"
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_size != size:
            return f"{st.st_size:,} bytes, {size:,} recorded"
        try:
            with Image.open(path):  # opening parses the header; the pixels stay unread
                pass
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
            return f"unreadable ({e.__class__.__name__})"
        return None

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
        with Image.open(src) as opened:
            im = opened.convert("RGB") if opened.mode not in ("RGB", "L") else opened.copy()
            im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            im.save(buf, format="JPEG", quality=85, optimize=True)
        _atomic_write(out, buf.getvalue())
        return out
