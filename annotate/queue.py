"""What an annotator sees and what their answers mean, without Streamlit.

The annotator sees *left* and *right*; the store keeps *first* and *second* (the pair's
canonical order). The mapping is the Assignment's ``left`` side, fixed when the pair was
assigned, so a reload shows the same sides and labels never depend on screen position;
curate/sides.py applies it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from curate.model import Annotator, Assignment, Item, Label, Pair, Part, Preference, Side, category_title
from curate.quality.qualification import gate
from curate.schemes import BUILT_IN, DEFAULT, Scheme, proposal_of, resolve
from curate.sides import shown_pair
from curate.store import NEW_LABEL, ConflictError, QueueProgress, Store, Transaction
from curate.wording import snippet, utc_time

from .demo import DELIBERATE_MISSING_IMAGE
from .form import from_label
from .guidelines import changed_since_last_label
from .scheme_form import answers_text, is_default_form


@dataclass(frozen=True)
class PairView:
    """One pair as a given annotator must see it: no model names, no gold, no others' labels."""

    pair_id: str
    item_id: str
    prompt: str
    category: str
    left_text: str
    right_text: str
    left_side: Side  # which canonical response is on the left
    image_sha256: str | None
    image_status: str  # "ok", "missing", "corrupt", "too_large", or "none"
    image_error: str | None
    seq: int
    label: Label | None = None  # the annotator's own label, when reopening
    image_deliberately_missing: bool = False  # the bundled sample's item without its image, on purpose
    # each response's parts (text and images, in order) when it has images; empty: plain text
    left_parts: tuple[Part, ...] = ()
    right_parts: tuple[Part, ...] = ()
    # the pair's annotation scheme: the form it is labelled with (its options' words kept out of
    # the repr, which the control-task test reads for a leaked gold answer)
    scheme: Scheme = field(default=BUILT_IN[DEFAULT], repr=False)
    proposal: Preference | None = None  # the judges' proposal (stored terms), for a scheme that shows it
    # the guidelines' version when the pair was read (a label records it), and whether they
    # changed since the annotator's last label (the page says so)
    guidelines_version: int | None = None
    guidelines_changed: bool = False

    @property
    def has_response_images(self) -> bool:
        return any(p.kind == "image" for p in (*self.left_parts, *self.right_parts))


# Parsed schemes by (store, name, version). A stored version never changes, so a process reads
# the store's definitions once per version it meets, never once per pair.
_SCHEMES: dict[tuple[str, str, int], Scheme] = {}


def scheme_of(store: Store, pair: Pair, conn=None) -> Scheme:
    """The pair's scheme, from the name and version read with the pair: ``mmrb`` without the
    store; another read once per process (a stored definition wins over a built-in of its name)."""
    if pair.scheme is None:
        return BUILT_IN[DEFAULT]
    key = (store.db, pair.scheme, pair.scheme_version or 1)
    got = _SCHEMES.get(key)
    if got is None:
        got = _SCHEMES[key] = resolve(pair.scheme, pair.scheme_version, store.scheme_definitions(conn=conn))
    return got


def build_view(
    store: Store,
    assignment: Assignment,
    *,
    with_label: bool = False,
    guidelines_version: int | None = None,
    guidelines_changed: bool = False,
    conn=None,
) -> PairView | None:
    pair = store.get_pair(assignment.pair_id, conn=conn)
    if pair is None:
        return None
    scheme = scheme_of(store, pair, conn=conn)
    item = store.get_item(pair.item_id, conn=conn)
    cands = {c.id: c for c in store.candidates(ids=[pair.first_id, pair.second_id], conn=conn)}
    if item is None or pair.first_id not in cands or pair.second_id not in cands:
        return None
    first, second = cands[pair.first_id], cands[pair.second_id]
    left_text, right_text = shown_pair(first.text, second.text, assignment.left)
    left_parts, right_parts = shown_pair(first.content, second.content, assignment.left)
    img = item.images[0] if item.images else None
    return PairView(
        pair_id=pair.id,
        item_id=item.id,
        prompt=item.prompt,
        category=item.category,
        left_text=left_text,
        right_text=right_text,
        left_side=assignment.left,
        image_sha256=img.sha256 if img and img.status == "ok" else None,
        image_status=img.status if img else "none",
        image_error=img.error if img else None,
        seq=assignment.seq,
        label=store.get_label(pair.id, assignment.annotator, conn=conn) if with_label else None,
        image_deliberately_missing=bool(item.metadata.get(DELIBERATE_MISSING_IMAGE)),
        left_parts=left_parts,
        right_parts=right_parts,
        scheme=scheme,
        proposal=proposal_of(pair) if scheme.shows_proposal else None,
        guidelines_version=guidelines_version,
        guidelines_changed=guidelines_changed,
    )


def current_view(store: Store, annotator: str, *, account: Annotator | None = None) -> PairView | None:
    """The annotator's next open pair (the same one after a refresh), or None when done or
    when their queue is closed (paused, or a failed qualification: see ``closed_notice``).
    A control task comes out exactly as any other pair. ``account``: the annotator's row as
    the caller has just read it (the page's session check), for the queue's gate."""
    with store.snapshot() as conn:  # a Transaction: `gate` takes one
        return _current_view(store, annotator, account, conn)


def _current_view(store: Store, annotator: str, account: Annotator | None, conn: Transaction) -> PairView | None:
    head = store.queue_head(annotator, conn=conn)  # the guidelines' versions come with it
    a = head.assignment
    if a is None or not gate(store, annotator, conn=conn, account=account).open:
        return None
    changed = changed_since_last_label(head.guidelines_version, head.last_label_version)
    return build_view(store, a, guidelines_version=head.guidelines_version, guidelines_changed=changed, conn=conn)


def queue_page(store: Store, account: Annotator) -> tuple[QueueProgress, PairView | None]:
    """What the label page shows of the signed-in ``account``'s queue, in one read transaction:
    the progress and the next pair (``current_view``)."""
    with store.snapshot() as conn:
        return store.queue_progress(account.name, conn=conn), _current_view(store, account.name, account, conn)


def next_images(store: Store, annotator: str, after_seq: int) -> list[str]:
    """The stored images (sha256) of the pair after ``after_seq`` in the annotator's queue,
    the prompt's and the responses', so that their thumbnails can be made before it is shown."""
    with store.read() as conn:
        a = store.next_assignment(annotator, conn=conn, after_seq=after_seq)
        pair = store.get_pair(a.pair_id, conn=conn) if a is not None else None
        if pair is None:
            return []
        item = store.get_item(pair.item_id, conn=conn)
        cands = store.candidates(ids=[pair.first_id, pair.second_id], conn=conn)
    refs = [*(item.images[:1] if item is not None else ()), *(im for c in cands for im in c.images)]
    return [r.sha256 for r in refs if r.status == "ok" and r.sha256]


def closed_notice(store: Store, annotator: str) -> str | None:
    """Why the annotator's queue serves nothing although work is left (a message for them), or None."""
    g = gate(store, annotator)
    return None if g.open else g.message


def own_view(store: Store, annotator: str, pair_id: str) -> PairView | None:
    """A pair of the annotator's own queue, with their label, for editing. None if not theirs."""
    with store.read() as conn:
        a = store.get_assignment(pair_id, annotator, conn=conn)
        if a is None:
            return None
        g = store.guidelines(conn=conn)  # an edit is made under the guidelines of today
        return build_view(store, a, with_label=True, guidelines_version=g.version if g else None, conn=conn)


@dataclass(frozen=True)
class SaveResult:
    ok: bool
    message: str
    label: Label | None = None
    conflict: bool = False


def save(store: Store, label: Label, *, expected_revision: int | None = None) -> SaveResult:
    """Save and turn a lost race into a message the annotator can act on.
    ``expected_revision``: of the label the annotator opened, None when they had none."""
    try:
        saved = store.save_label(label, expected_revision=NEW_LABEL if expected_revision is None else expected_revision)
    except ConflictError:
        if expected_revision is None:
            msg = "This pair was already submitted (perhaps from another tab). Nothing was overwritten; moving on."
        else:
            msg = (
                "This label changed elsewhere since you opened it. "
                "Nothing was overwritten; reopen it to see the latest."
            )
        return SaveResult(False, msg, conflict=True)
    verb = {"skipped": "Skipped", "submitted": "Saved"}.get(saved.status, "Saved")
    return SaveResult(True, f"{verb}.", saved)


def progress_line(progress: QueueProgress, said: str | None = None) -> str:
    """The label page's progress line: a skip is no label, so labels and skips are counted apart.
    ``said``: the last action's confirmation ("Saved.", "Skipped."), first, in quiet green."""
    line = f"{progress.labelled} labelled, {progress.skipped} skipped of {progress.assigned}"
    return f":green[{said}] {line}" if said else line


def undo(store: Store, annotator: str) -> Label | None:
    return store.undo_last(annotator)


def my_labels(store: Store, annotator: str) -> list[tuple[Label, Assignment]]:
    """The annotator's own labels (submitted and skipped), newest first, with their sides."""
    with store.read() as conn:
        labels = store.labels(annotator=annotator, status=None, conn=conn)
        sides = {a.pair_id: a for a in store.assignments(annotator=annotator, conn=conn)}
    rows = [(lab, sides[lab.pair_id]) for lab in labels if lab.pair_id in sides]
    rows.sort(key=lambda r: r[0].updated_at or "", reverse=True)
    return rows


# My labels' columns: a FormInput field (the answers on her screen's sides) or a Label field -> header
OWN_HEADERS: dict[str, str] = {
    "prompt": "Prompt",
    "category": "Category",
    "status": "Status",
    "left": "Left is",
    "right": "Right is",
    "preference": "Better",
    "answers": "Answers",  # a declared scheme's (annotate/scheme_form.py)
    "rationale": "Rationale",
    "flag": "Flag",
    "saved": "Saved (UTC)",
}


def own_items(store: Store, pair_ids: Sequence[str]) -> dict[str, Item]:
    """The item of each of these pairs (My labels names a label by its prompt, not its pair id)."""
    with store.read() as conn:
        item_of = {p.id: p.item_id for p in store.pairs(ids=pair_ids, conn=conn)}
        items = {i.id: i for i in store.items(ids=set(item_of.values()), conn=conn)}
    return {pid: items[iid] for pid, iid in item_of.items() if iid in items}


def own_rows(
    rows: Sequence[tuple[Label, Assignment]],
    schemes: Mapping[str, Scheme] | None = None,
    items: Mapping[str, Item] | None = None,
) -> list[dict[str, str | None]]:
    """My labels as a table of OWN_HEADERS, as the annotator answered (her screen's sides),
    when each was last saved to the minute in UTC; a missing answer is None (shown as EMPTY).
    ``schemes``: a pair's scheme when it is not mmrb; its answers are summed up in one column.
    ``items``: each pair's item, for its prompt snippet and category title (else the pair id)."""
    out = []
    for lab, a in rows:
        item = (items or {}).get(lab.pair_id)
        shown = from_label(lab, a.left)
        scheme = (schemes or {}).get(lab.pair_id)
        declared = scheme is not None and not is_default_form(scheme)
        values = {
            "prompt": snippet(item.prompt) or lab.pair_id if item is not None else lab.pair_id,
            "category": category_title(item.category) if item is not None else None,
            "status": lab.status,
            "left": shown.left,
            "right": shown.right,
            "preference": shown.preference,
            "answers": (answers_text(scheme, lab, a.left) or None) if declared and scheme is not None else None,
            "rationale": shown.rationale or None,
            "flag": shown.flag,
            "saved": utc_time(lab.updated_at or lab.created_at).removesuffix(" UTC"),
        }
        out.append({OWN_HEADERS[k]: values[k] for k in OWN_HEADERS})
    return out


__all__ = [
    "OWN_HEADERS",
    "own_items",
    "own_rows",
    "PairView",
    "SaveResult",
    "build_view",
    "scheme_of",
    "closed_notice",
    "current_view",
    "queue_page",
    "next_images",
    "own_view",
    "save",
    "progress_line",
    "undo",
    "my_labels",
]
