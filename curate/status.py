"""What is in the store, stage by stage: the numbers behind ``mmrb status``.

Image counts come from the files, not the rows: every image an item or a candidate response
refers to as stored is looked up by its content hash in the image folder (there, a regular
file inside the folder, no symbolic link, of the recorded size, whose header pillow reads),
and one that is not is counted as ``broken``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .store.counts import CategoryCounts, StoredImageUse
from .wording import plural

if TYPE_CHECKING:
    from .store import Store


@dataclass(frozen=True)
class Status:
    db: str
    backend: str
    stages: dict[str, int]
    pairs_by_status: dict[str, int]
    labels_by_status: dict[str, int]
    assignments_by_state: dict[str, int]
    categories: dict[str, CategoryCounts]
    # item image references by status: ok (the file is there and readable), broken (stored,
    # but the file is gone or unreadable), and as imported: missing / corrupt / too_large
    images: dict[str, int]
    missing_examples: list[dict[str, str]] = field(default_factory=list)
    broken_files: int = 0  # distinct image files behind the broken references
    broken_examples: list[dict[str, str]] = field(default_factory=list)
    labels_per_pair: dict[int, int] = field(default_factory=dict)  # n submitted labels -> n pairs
    label_sources: dict[str, int] = field(default_factory=dict)
    # the images in candidate responses (issue 15), by status as imported, and broken (stored,
    # but the file is gone, a link or unreadable) like the items' (issue 25)
    response_images: dict[str, int] = field(default_factory=dict)
    response_broken_files: int = 0
    response_broken_examples: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["labels_per_pair"] = {str(k): v for k, v in self.labels_per_pair.items()}
        return d


def collect(store: Store, examples: int = 10) -> Status:
    with store.read() as c:  # one snapshot
        tallies = store.tallies(conn=c)
        stages = store.counts(conn=c).as_dict()
        images, broken = _checked(store, store.stored_image_uses(conn=c), tallies.image_refs_by_status)
        responses, response_broken = _checked(
            store, store.stored_image_uses(conn=c, responses=True), tallies.response_image_refs_by_status
        )
        broken_rows = (
            store.image_refs(stored=True, sha256s=sorted(broken)[:examples], limit=examples, conn=c) if broken else []
        )
        response_broken_rows = (
            store.image_refs(
                stored=True, sha256s=sorted(response_broken)[:examples], limit=examples, responses=True, conn=c
            )
            if response_broken
            else []
        )
        missing = store.image_refs(stored=False, limit=examples, conn=c)
    return Status(
        db=store.display_name,
        backend=store.backend,
        stages=stages,
        pairs_by_status=tallies.pairs_by_status,
        labels_by_status=tallies.labels_by_status,
        assignments_by_state=tallies.assignments_by_state,
        categories=tallies.categories,
        images=images,
        missing_examples=[{"item": r.item_id, "source": r.source, "status": r.status} for r in missing],
        broken_files=len(broken),
        broken_examples=[
            {"item": r.item_id, "source": r.source, "problem": broken[r.sha256 or ""]} for r in broken_rows
        ],
        labels_per_pair=tallies.labels_per_pair,
        label_sources=tallies.label_sources,
        response_images=responses,
        response_broken_files=len(response_broken),
        response_broken_examples=[
            {"candidate": r.item_id, "source": r.source, "problem": response_broken[r.sha256 or ""]}
            for r in response_broken_rows
        ],
    )


def _checked(
    store: Store, uses: list[StoredImageUse], by_status: dict[str, int]
) -> tuple[dict[str, int], dict[str, str]]:
    """References by status with those whose file is broken moved from ``ok`` to ``broken``,
    and why each broken file is (sha256 -> problem)."""
    counts = dict(by_status)
    broken_refs, broken = 0, {}
    for use in uses:
        why = store.images.check(use.path, use.bytes)
        if why:
            broken[use.sha256] = why
            broken_refs += use.refs
    if broken_refs:
        counts["ok"] = counts.get("ok", 0) - broken_refs
        counts["broken"] = broken_refs
        if not counts["ok"]:
            del counts["ok"]
    return counts, broken


def render(st: Status) -> str:
    """Plain-text report (the CLI prints it; kept here so it can be tested as a value)."""
    out = [f"store: {st.db} ({st.backend})", "", "stages:"]
    for k, v in st.stages.items():
        extra = ""
        if k == "pairs" and st.pairs_by_status:
            extra = "  (" + ", ".join(f"{s} {n}" for s, n in sorted(st.pairs_by_status.items())) + ")"
        if k == "labels" and st.labels_by_status:
            extra = "  (" + ", ".join(f"{s} {n}" for s, n in sorted(st.labels_by_status.items())) + ")"
        if k == "assignments" and st.assignments_by_state:
            extra = "  (" + ", ".join(f"{s} {n}" for s, n in sorted(st.assignments_by_state.items())) + ")"
        out.append(f"  {k:<14}{v:>8}{extra}")
    if st.categories:
        out += [
            "",
            "per category:",
            f"  {'category':<36}{'items':>7}{'cands':>7}{'pairs':>7}{'selected':>9}{'labels':>8}",
        ]
        for name, cc in st.categories.items():
            out.append(f"  {name:<36}{cc.items:>7}{cc.candidates:>7}{cc.pairs:>7}{cc.selected:>9}{cc.labels:>8}")
    total_refs = sum(st.images.values())
    bad = {k: v for k, v in st.images.items() if k not in ("ok", "broken")}
    out += ["", f"images: {plural(total_refs, 'reference')}, {st.images.get('ok', 0)} stored and readable"]
    if st.broken_files:
        out.append(
            f"  BROKEN: {plural(st.images['broken'], 'reference')} to {plural(st.broken_files, 'stored file')} gone "
            "or unreadable (the store is damaged: restore the image folder from a backup)"
        )
        for ex in st.broken_examples:
            out.append(f"    {ex['item']}: {ex['source']} ({ex['problem']})")
    for k, v in sorted(bad.items()):
        out.append(f"  {k}: {v}")
    for ex in st.missing_examples:
        out.append(f"    {ex['item']}: {ex['source']} ({ex['status']})")
    if sum(bad.values()) > len(st.missing_examples):
        out.append(f"    ... and {sum(bad.values()) - len(st.missing_examples)} more")
    if st.response_images:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(st.response_images.items()))
        out.append(f"response images: {plural(sum(st.response_images.values()), 'reference')} ({shown})")
    if st.response_broken_files:
        out.append(
            f"  BROKEN: {plural(st.response_images['broken'], 'response image reference')} to "
            f"{plural(st.response_broken_files, 'stored file')} gone or unreadable (the store is damaged: "
            "restore the image folder from a backup)"
        )
        for ex in st.response_broken_examples:
            out.append(f"    {ex['candidate']}: {ex['source']} ({ex['problem']})")
    if st.labels_per_pair:
        out += ["", "submitted labels per pair:"]
        for n, pairs in sorted(st.labels_per_pair.items()):
            out.append(f"  {plural(n, 'label')}: {plural(pairs, 'pair')}")
    if st.label_sources:
        out.append("  label sources: " + ", ".join(f"{k} {v}" for k, v in sorted(st.label_sources.items())))
    return "\n".join(out)
