"""The images of the label page (the prompt's and the responses'): thumbnails read once per
process, and the URL the Streamlit server serves each from (an original, for the full-size
view).

Every file is found by its image's content hash and read through ``curate.images.ImageStore``,
which opens only regular files inside the image folder (no symbolic link): the server is
never handed a path to serve.
"""

from __future__ import annotations

import base64
import functools
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from curate.images import ImageProblem, ImageStore, Original
from curate.store import Store

from .render import pair_token

_NAMES: dict[tuple[str, str], str] = {}


@functools.lru_cache(maxsize=512)
def _thumb_bytes(root: str, name: str) -> bytes:
    return ImageStore(root).thumbnail(name)


def _image_name(s: Store, sha256: str) -> str | None:
    """Content-addressed, so a hash's file never moves: found names are remembered (an
    unknown one is asked again, it may be imported later)."""
    key = (str(s.images.root), sha256)
    name = _NAMES.get(key)
    if name is None:
        name = s.image_name(sha256)
        if name is not None:
            _NAMES[key] = name
    return name


def image_bytes(s: Store, sha256: str | None) -> bytes | None:
    """The image's thumbnail (a JPEG), or None when the store has no readable file for it."""
    if not sha256:
        return None
    name = _image_name(s, sha256)
    if name is None:
        return None
    try:
        return _thumb_bytes(str(s.images.root), name)
    except (ImageProblem, OSError):
        return None


_WARMER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mmrb-thumbs")
_log = logging.getLogger(__name__)


def warm(s: Store, shas: Callable[[], Iterable[str]]) -> Future[None]:
    """Make and read the thumbnails of the images ``shas()`` names, in the background (one
    worker): the next pair's, while the annotator reads this one. Making a 1024 px thumbnail
    takes tens of milliseconds, which the next submit would otherwise wait for. A failure
    here costs nothing: the page makes what it shows itself."""

    def run() -> None:
        try:
            for sha in shas():
                image_bytes(s, sha)
        except Exception as e:
            _log.debug("thumbnails not warmed: %s", e)

    return _WARMER.submit(run)


def image_src(jpeg: bytes, item_id: str) -> str | None:
    """A URL the Streamlit server serves the JPEG from (None without a server, e.g. AppTest).

    Embedded as base64 the picture made every rerun's message ~40 KB and cost the browser
    a sanitiser pass over it; by URL the browser also caches a picture shared by items."""
    return _served(jpeg, "image/jpeg", f"mmrb-image-{pair_token(item_id)}")


def slot_src(data: bytes, slot: str, mimetype: str = "image/jpeg") -> str:
    """The URL of a response's image (a thumbnail's JPEG, or an original's bytes for the
    full-size view) served in one place of the screen, ``slot`` (e.g. "left-0"): the next
    pair's image takes the place, so the session holds no more files than the screen shows.
    Without a server (AppTest) the image is embedded as a data: URI."""
    url = _served(data, mimetype, f"mmrb-slot-{slot}")
    if url is not None:
        return url
    return f"data:{mimetype};base64," + base64.b64encode(data).decode("ascii")


def original(s: Store, sha256: str | None) -> Original | ImageProblem:
    """The stored original of an image (its bytes, format and size), or why there is none to
    show: no such image in the store, its file gone, a symbolic link, or unreadable."""
    if not sha256:
        return ImageProblem("missing", "no image")
    name = _image_name(s, sha256)
    if name is None:
        return ImageProblem("missing", "file gone")
    try:
        return s.images.original(name)
    except ImageProblem as e:
        return e
    except OSError as e:
        return ImageProblem("corrupt", f"cannot read the file: {e.strerror}")


def _served(data: bytes, mimetype: str, coordinates: str) -> str | None:
    # Streamlit's internal media manager, kept on purpose: no public API returns a served URL
    # for bytes (st.image would add an element to every rerun), and the public alternative, a
    # route of the app's own through st.App, was no faster in bench/annotate.py (7 A/B runs)
    # and would move the picture off /media, which web.MediaGuard and the browser tests guard.
    try:
        # deferred: this module is also used where no Streamlit runtime runs
        from streamlit import runtime

        if not runtime.exists():
            return None
        return runtime.get_instance().media_file_mgr.add(data, mimetype, coordinates)
    except Exception:  # an internal API: fall back to embedding rather than lose the image
        return None
