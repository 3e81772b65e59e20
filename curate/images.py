"""Content-addressed image storage: verified with pillow, EXIF-oriented, thumbnails cached."""

from __future__ import annotations

import base64
import binascii
import errno
import fcntl
import hashlib
import io
import os
import re
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
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
# A stored file's name, relative to the image folder: its content hash, under a folder named by
# the hash's first two digits, with its format's extension. Nothing else is ever opened there.
_HASH = re.compile(r"[0-9a-f]{64}")
_EXT = re.compile(r"[a-z0-9]{1,10}")
_STORED_NAME = re.compile(r"([0-9a-f]{2})/([0-9a-f]{64})\.[a-z0-9]{1,10}")


def extension(fmt: str) -> str:
    """The extension a stored file of pillow's format ``fmt`` has."""
    return {"JPEG": "jpg"}.get(fmt.upper(), fmt.lower())


def stored_name(sha256: str, fmt: str) -> str | None:
    """Where an image's file is in the image folder: named by its content hash and its
    format, never by a path read from the store's table. None when the hash or the format
    cannot name a stored file."""
    ext = extension(fmt or "")
    if not _HASH.fullmatch(sha256 or "") or not _EXT.fullmatch(ext):
        return None
    return f"{sha256[:2]}/{sha256}.{ext}"


def _hash_of(name: str) -> str:
    """The content hash a stored file's name carries; an ImageProblem for any other name."""
    m = _STORED_NAME.fullmatch(name)
    if m is None or not m.group(2).startswith(m.group(1)):
        raise ImageProblem("missing", "not the name of a stored image")
    return m.group(2)


@dataclass(frozen=True)
class Original:
    """A stored image's file as served by the full-size view: its bytes and what its header says."""

    data: bytes
    format: str
    width: int
    height: int

    @property
    def mime(self) -> str:
        fmt = "JPEG" if self.format == "MPO" else self.format  # a JPEG with more frames after the first
        return Image.MIME.get(fmt, "application/octet-stream")


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
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:  # a full disk, most likely: no half-written file stays behind
        with suppress(OSError):
            os.unlink(tmp)
        raise


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
        # a folder opens (O_RDONLY) but os.fdopen refuses it with IsADirectoryError: ask first
        try:
            where = _opened_path(fd)
            if where is not None and not where.is_relative_to(real_root):
                raise ImageProblem("outside", outside_root(name, root))
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise ImageProblem("missing", f"image path is a folder: {name}")
            if not stat.S_ISREG(st.st_mode):
                raise ImageProblem("corrupt", f"image path is not a regular file: {name}")
        except BaseException:
            os.close(fd)
            raise
        with os.fdopen(fd, "rb") as f:
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
        rel = stored_name(sha, fmt)
        assert rel is not None, fmt  # pillow's format names are letters and digits
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

    # -- opening what is stored ----------------------------------------------------------
    # A stored file is found by its content hash (``stored_name``), never by a path read from
    # the store's table, and opened only when it is a regular file inside the image folder.
    # A symbolic link put in place of a file or of a folder (to /proc/self/environ, to
    # /etc/passwd, to a picture elsewhere) is refused: checked on the resolved path, again by
    # O_NOFOLLOW when opening, and on the opened file itself (a folder swapped in between).
    def _open_inside(self, rel: str) -> tuple[int, os.stat_result]:
        """An open descriptor of the regular file ``rel`` in the image folder and its status,
        or an ImageProblem saying why not (in words that never name the link's target)."""
        try:
            real_root = self.root.resolve()
            want = real_root / rel
            got = (self.root / rel).resolve()
        except (OSError, RuntimeError):  # a loop of symbolic links
            raise ImageProblem("outside", LINK) from None
        if not got.is_relative_to(real_root):
            raise ImageProblem("outside", LINK_OUT)
        if got != want:
            raise ImageProblem("outside", LINK)
        try:
            fd = os.open(want, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise ImageProblem("missing", "file gone") from None
        except OSError as e:
            if e.errno == errno.ELOOP:  # the file became a link after the check
                raise ImageProblem("outside", LINK) from None
            raise ImageProblem("corrupt", f"cannot open the file: {e.strerror}") from None
        try:
            where = _opened_path(fd)
            if where is not None and not where.is_relative_to(real_root):  # a folder became a link
                raise ImageProblem("outside", LINK_OUT)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise ImageProblem("corrupt", "not a regular file")
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    def servable(self, name: str) -> bool:
        """Whether the stored file ``name`` is a regular file inside the image folder (its
        content unread): what may be handed to another server by path or by upload."""
        try:
            _hash_of(name)
            fd, _ = self._open_inside(name)
        except ImageProblem:
            return False
        os.close(fd)
        return True

    def read_stored(self, name: str) -> bytes:
        """The bytes of the stored file ``name`` (``stored_name``), at most ``max_bytes``."""
        _hash_of(name)
        fd, st = self._open_inside(name)
        with os.fdopen(fd, "rb") as f:
            if st.st_size > self.max_bytes:
                raise ImageProblem("too_large", f"{st.st_size:,} bytes, over the limit of {self.max_bytes:,}")
            data = f.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:
            raise ImageProblem("too_large", f"over the limit of {self.max_bytes:,} bytes")
        return data

    def original(self, name: str) -> Original:
        """The stored file ``name`` for the full-size view, its header read by pillow."""
        data = self.read_stored(name)
        try:
            with Image.open(io.BytesIO(data)) as im:
                return Original(data, (im.format or "").upper(), im.width, im.height)
        except _UNREADABLE as e:
            raise ImageProblem("corrupt", f"unreadable ({e.__class__.__name__})") from None

    # -- checking what is stored ---------------------------------------------------------
    def check(self, name: str, size: int) -> str | None:
        """Why the stored file ``name`` (``stored_name``) cannot be served (None: it can):
        gone, a symbolic link, not a regular file, another size than recorded, or a header
        pillow cannot read."""
        try:
            _hash_of(name)
            fd, st = self._open_inside(name)
        except ImageProblem as e:
            return str(e)
        with os.fdopen(fd, "rb") as f:
            if st.st_size != size:
                return f"{st.st_size:,} bytes, {size:,} recorded"
            try:
                with Image.open(f):  # opening parses the header; the pixels stay unread
                    pass
            except _UNREADABLE as e:
                return f"unreadable ({e.__class__.__name__})"
        return None

    # -- serving -------------------------------------------------------------------------
    def path(self, rel: str) -> Path:
        return self.root / rel

    def thumbnail(self, name: str, max_side: int = 1024) -> bytes:
        """A JPEG of the stored file ``name`` no larger than ``max_side``, made once and cached
        beside the originals (``thumbs/<max_side>/<sha256>.jpg``, checked like an original)."""
        sha = _hash_of(name)
        rel = f"thumbs/{int(max_side)}/{sha}.jpg"
        try:
            fd, _ = self._open_inside(rel)
        except ImageProblem:
            pass  # not made yet, or no regular file of the folder: made again below
        else:
            with os.fdopen(fd, "rb") as f:
                return f.read()
        data = self.read_stored(name)
        try:
            with Image.open(io.BytesIO(data)) as opened:
                if opened.width * opened.height > self.max_pixels:
                    raise ImageProblem("too_large", f"{opened.width}x{opened.height} pixels")
                im = opened.convert("RGB") if opened.mode not in ("RGB", "L") else opened.copy()
            im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            im.save(buf, format="JPEG", quality=85, optimize=True)
        except _UNREADABLE as e:
            raise ImageProblem("corrupt", f"unreadable ({e.__class__.__name__})") from None
        folder = self.root / "thumbs" / str(int(max_side))
        try:
            inside = folder.resolve() == self.root.resolve() / "thumbs" / str(int(max_side))
        except (OSError, RuntimeError):
            inside = False
        if not inside:  # never write through a link (the file itself is replaced, not followed)
            raise ImageProblem("outside", LINK_OUT)
        _atomic_write(self.root / rel, buf.getvalue())
        return buf.getvalue()


LINK_OUT = "a symbolic link out of the image folder"
LINK = "a symbolic link"
# what pillow raises for a file that is not a readable image
_UNREADABLE = (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError)
