"""Duplicate images (perceptual hash) and duplicate prompts across items.

* Duplicate images: two items share an image when the 64-bit pHash (``imagehash.phash``) of
  one of their images is within ``max_distance`` bits (default 4 of 64: the same picture
  re-encoded, resized or lightly compressed; distinct photos are typically 20+ bits apart).
  Several questions about one picture are legitimate in a benchmark, so this is reported
  and only dropped on request.
* Duplicate prompts: the same normalised prompt *and* the same images (by the rule above), or
  the same prompt with no image: the same question asked twice, which inflates a benchmark.

Groups are connected components; in each, the item with the smallest id is kept and the
others are the duplicates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from .correctness import normalise
from .model import Item
from .wording import plural

if TYPE_CHECKING:  # not imported for `mmrb select --help`, which shows this module's defaults
    from .store.protocols import DedupStore

DEFAULT_MAX_DISTANCE = 4


DuplicateKind = Literal["image", "prompt"]


@dataclass(frozen=True)
class DuplicateGroup:
    kind: DuplicateKind
    keep: str  # item id
    duplicates: tuple[str, ...]


def phash_of(path) -> int | None:
    # deferred: imagehash (with scipy) only when images are compared; `mmrb select --help` imports this module
    import imagehash
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return int(str(imagehash.phash(im)), 16)
    except (OSError, UnidentifiedImageError):
        return None


Progress = Callable[[int, int], None]  # (items done, items): the long part is hashing their images


def item_hashes(store: DedupStore, items: Sequence[Item], progress: Progress | None = None) -> dict[str, list[int]]:
    """pHash of every stored image of each item (computed once per distinct image)."""
    by_sha: dict[str, int | None] = {}
    out: dict[str, list[int]] = {}
    known = store.image_paths(ref.sha256 for item in items for ref in item.images if ref.sha256)
    for done, item in enumerate(items, 1):
        if progress:
            progress(done - 1, len(items))
        hs = []
        for ref in item.images:
            if not ref.sha256:
                continue
            if ref.sha256 not in by_sha:
                p = known.get(ref.sha256)
                by_sha[ref.sha256] = phash_of(p) if p is not None and p.exists() else None
            h = by_sha[ref.sha256]
            if h is not None:
                hs.append(h)
        out[item.id] = hs
    if progress:
        progress(len(items), len(items))
    return out


class _UnionFind:
    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _near_pairs(hashes: list[tuple[str, int]], max_distance: int) -> list[tuple[str, str]]:
    """Pairs of owners whose hashes are within max_distance bits (vectorised, O(n^2/2))."""
    # deferred, as imagehash
    import numpy as np

    if len(hashes) < 2:
        return []
    owners = [o for o, _ in hashes]
    arr = np.array([h for _, h in hashes], dtype=np.uint64)
    out = []
    for i in range(len(arr) - 1):
        dist = np.bitwise_count(arr[i + 1 :] ^ arr[i])
        for j in np.nonzero(dist <= max_distance)[0]:
            a, b = owners[i], owners[i + 1 + int(j)]
            if a != b:
                out.append((a, b))
    return out


def _groups(uf: _UnionFind, ids: Sequence[str], kind: DuplicateKind) -> list[DuplicateGroup]:
    comps: dict[str, list[str]] = defaultdict(list)
    for i in ids:
        comps[uf.find(i)].append(i)
    out = []
    for members in comps.values():
        if len(members) > 1:
            members.sort()
            out.append(DuplicateGroup(kind, members[0], tuple(members[1:])))
    return sorted(out, key=lambda g: g.keep)


def find_duplicates(
    store: DedupStore,
    items: Sequence[Item],
    *,
    max_distance: int = DEFAULT_MAX_DISTANCE,
    progress: Progress | None = None,
) -> list[DuplicateGroup]:
    hashes = item_hashes(store, items, progress)
    flat = [(iid, h) for iid, hs in hashes.items() for h in hs]
    near = _near_pairs(flat, max_distance)

    img = _UnionFind()
    for first, second in near:
        img.union(first, second)
    image_groups = _groups(img, [i.id for i in items if hashes.get(i.id)], "image")

    # same prompt and same images: for items with images, the image relation must hold for
    # every image (compare sorted hash lists position by position)
    by_prompt: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        by_prompt[normalise(item.prompt)].append(item)
    pr = _UnionFind()
    for group in by_prompt.values():
        for x in range(len(group)):
            for y in range(x + 1, len(group)):
                a, b = group[x], group[y]
                ha, hb = sorted(hashes.get(a.id, [])), sorted(hashes.get(b.id, []))
                if len(a.images) != len(b.images) or len(ha) != len(hb):
                    continue
                if all(bin(p ^ q).count("1") <= max_distance for p, q in zip(ha, hb, strict=True)):
                    pr.union(a.id, b.id)
    prompt_groups = _groups(pr, [i.id for i in items], "prompt")
    return image_groups + prompt_groups


def duplicate_lines(groups: Sequence[DuplicateGroup]) -> list[str]:
    """How many items repeat another, and the first ten groups (none: no lines)."""
    img = [g for g in groups if g.kind == "image"]
    prm = [g for g in groups if g.kind == "prompt"]
    if not img and not prm:
        return []
    out = [
        f"duplicates: {plural(sum(len(g.duplicates) for g in img), 'item', verb=('shares', 'share'))} an image with "
        f"another, {plural(sum(len(g.duplicates) for g in prm), 'item', verb=('repeats', 'repeat'))} another item's "
        "prompt and image"
    ]
    out += [f"  {g.kind}: {', '.join(g.duplicates)} duplicate {g.keep}" for g in (prm + img)[:10]]
    return out


@dataclass(frozen=True)
class DuplicatesReport:
    """The duplicates among every item of the store (``mmrb select --duplicates-only``)."""

    groups: tuple[DuplicateGroup, ...]
    items: int = 0  # items compared
    max_distance: int = DEFAULT_MAX_DISTANCE

    def lines(self) -> list[str]:
        return duplicate_lines(self.groups) or ["no duplicates found"]

    def as_dict(self) -> dict[str, Any]:
        """`mmrb select --duplicates-only --json` (docs/json.md); a group as in `mmrb select --json`."""
        return {
            "items": self.items,
            "max_distance": self.max_distance,
            "duplicates": [asdict(g) for g in self.groups],
            "duplicate_items": sum(len(g.duplicates) for g in self.groups),
        }


def report_duplicates(
    store: DedupStore, *, max_distance: int = DEFAULT_MAX_DISTANCE, progress: Progress | None = None
) -> DuplicatesReport:
    """Report duplicates among all items; nothing is judged or changed."""
    items = store.items()
    groups = find_duplicates(store, items, max_distance=max_distance, progress=progress)
    return DuplicatesReport(tuple(groups), len(items), max_distance)


__all__ = [
    "DuplicateGroup",
    "DuplicatesReport",
    "duplicate_lines",
    "find_duplicates",
    "item_hashes",
    "phash_of",
    "report_duplicates",
]
