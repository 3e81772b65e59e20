"""What a judge is shown of a task, whatever the kind of judge: its images as the URLs sent
(a local file as a downscaled data URL), the images it cannot be shown, and a response's parts
as OpenAI-style content parts."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import MmrbError
from ..llm import encode_image, image_data_url, openai_content
from ..model import Part
from ..wording import plural
from .records import JudgeTask


def _remote(img: str) -> bool:
    return "://" in img or img.startswith("data:")


def task_images(task: JudgeTask) -> list[Part]:
    """Every image of a task, the prompt's first, then the first and second response's."""
    return [Part.of_image(i) for i in task.images] + list(task.response_images)


def check_images(tasks: Sequence[JudgeTask]) -> list[str]:
    """Images a judge could not be shown: local paths that do not exist, and response images
    the input names but that were never stored (the prompt's and the responses' alike)."""
    missing = []
    for t in tasks:
        for img in task_images(t):
            if img.missing or not (_remote(img.value) or Path(img.value).exists()):
                missing.append(img.value)
    return missing


def require_images(tasks: Sequence[JudgeTask], allow_missing: bool) -> None:
    """Refuse tasks with images a judge cannot be shown, unless ``allow_missing``."""
    missing = check_images(tasks)
    if missing and not allow_missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise MmrbError(
            f"{plural(len(missing), 'image')} not found: {shown} (a judge cannot see a missing image; "
            "pass --allow-missing-images to judge on the text alone)"
        )


def missing_marker(img: Part) -> str:
    """What a judge reads in place of a response image it cannot be shown (only with
    ``allow_missing_images``: the response keeps its shape)."""
    name = img.value if _remote(img.value) else Path(img.value).name
    return f"[image not available: {name}]"


def message_content(parts: Iterable[Part], image_urls: Mapping[str, str]) -> list[dict[str, Any]]:
    """Parts as OpenAI-compatible content parts (``curate.llm.openai_content``): a text as a
    text part, an image that can be shown (``image_urls``, see ``image_urls()``) as an
    ``image_url`` part, any other image as its ``missing_marker`` text."""
    shown = (
        p if p.kind == "text" or (not p.missing and p.value in image_urls) else Part.of_text(missing_marker(p))
        for p in parts
    )
    return openai_content(shown, image_urls)


def downscaled(url: str, max_side: int | None) -> str:
    """A base64 data URL of an image larger than ``max_side``, downscaled; any other data
    URL as it is (``curate.llm.encode_image`` keeps small images byte for byte)."""
    head, _, body = url.partition(",")
    if ";base64" not in head:
        return url
    try:
        return encode_image(base64.b64decode(body, validate=True), max_side)
    except (ValueError, OSError):  # not base64, or not an image pillow reads: sent as given
        return url


def image_urls(task: JudgeTask, max_side: int | None) -> dict[str, str]:
    """Each image of the task that can be shown -> the URL sent: a local file as a data URL,
    downscaled to ``max_side`` (``curate.llm.image_data_url``), a data URL downscaled the
    same way, another URL as it is. Missing images are left out."""
    out: dict[str, str] = {}
    for img in task_images(task):
        if img.missing or img.value in out:
            continue
        if img.value.startswith("data:"):
            out[img.value] = downscaled(img.value, max_side)
        elif _remote(img.value):
            out[img.value] = img.value
        elif Path(img.value).exists():
            out[img.value] = image_data_url(img.value, max_side)
    return out


__all__ = [
    "check_images",
    "downscaled",
    "image_urls",
    "message_content",
    "missing_marker",
    "require_images",
    "task_images",
]
