"""The domain nouns of mmrb-studio, in one place.

Names follow the papers: a *prompt* (question + image) has candidate *responses*; a *pair*
holds two of them; annotators give *labels*; the benchmark row is a *triplet*
(prompt, image, chosen, rejected) as in Multimodal RewardBench (arXiv 2502.14191).

Preferences and correctness are always stored against the pair's canonical order
(``first`` = ``Pair.first_id``, ``second`` = ``Pair.second_id``), never against the
left/right sides an annotator saw: the side shown on the left is on the Assignment, and
curate/sides.py alone maps between the two.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

Correctness = Literal["correct", "incorrect", "unsure"]
Preference = Literal["first", "second", "tie"]
Side = Literal["first", "second"]  # a response in the pair's own order
# What was shown (curate/sides.py maps it to Side): an annotator's screen, in the app and in
# Label Studio; the name a judge saw; a judge's display order (forward: first shown as A).
Screen = Literal["left", "right"]
ScreenPreference = Literal["left", "tie", "right"]  # in the order the label form offers them
Letter = Literal["A", "B"]
LetterVerdict = Literal["A", "B", "tie"]
Order = Literal["forward", "reverse"]
LabelStatus = Literal["draft", "submitted", "skipped"]
Role = Literal["annotator", "admin"]
FlagReason = Literal["broken_image", "unsafe_content", "unclear_prompt", "other"]
ImageStatus = Literal["ok", "missing", "corrupt", "too_large"]
PartKind = Literal["text", "image"]  # a Part of a response or prompt
PairStatus = Literal["candidate", "selected", "dropped"]
AssignmentState = Literal["open", "done"]
# Where a gold answer came from: the lead's adjudication, the automatic correctness of a
# reference answer (with a benchmark's known preference), or an imported gold file.
GoldSource = Literal["adjudication", "reference", "import"]
# A new annotator's qualification: labelling the qualification pairs, passed, or failed (then
# the queue serves nothing else until the lead decides).
QualificationState = Literal["pending", "passed", "failed"]
# How the build turns several labels of a field into one (curate/quality/aggregate.py).
Aggregation = Literal["majority", "dawid-skene", "mace"]
Level = Literal["nominal", "ordinal", "interval", "ratio"]  # of measurement, for agreement

CORRECTNESS: tuple[Correctness, ...] = get_args(Correctness)
PREFERENCES: tuple[Preference, ...] = get_args(Preference)
SCREEN_PREFERENCES: tuple[ScreenPreference, ...] = get_args(ScreenPreference)
SIDES: tuple[str, ...] = get_args(Side)
ORDERS: tuple[str, ...] = get_args(Order)
LABEL_STATUSES: tuple[str, ...] = get_args(LabelStatus)
ROLES: tuple[Role, ...] = get_args(Role)
FLAG_REASONS: tuple[str, ...] = get_args(FlagReason)
PART_KINDS: tuple[PartKind, ...] = get_args(PartKind)
GOLD_SOURCES: tuple[GoldSource, ...] = get_args(GoldSource)
AGGREGATIONS: tuple[Aggregation, ...] = get_args(Aggregation)
# The label fields a gold answer, a control task and the reliability figures speak of.
LABEL_FIELDS: tuple[str, ...] = ("preference", "correctness_first", "correctness_second")

W = TypeVar("W", bound=str)


def word_of(vocabulary: tuple[W, ...], value: object) -> W | None:
    """``value`` as a word of ``vocabulary`` (the values of one of the Literals above), or None."""
    return next((w for w in vocabulary if w == value), None)


# The six areas of Multimodal RewardBench, then the groups of the other benchmarks we ingest.
MMRB_CATEGORIES = (
    "open_generation/correctness_task",
    "open_generation/preference_task",
    "knowledge",
    "reasoning",
    "safety",
    "vqa",
)
VLRB_CATEGORIES = ("general", "hallucination", "reasoning")
MMRB2_CATEGORIES = ("t2i", "edit", "interleaved", "reasoning")
# MMRB2's per-response letter grades (reasoning), best first: the published labels use A, B, C
# only, so that is the scale (an AC1 over six letters would count three never used).
MMRB2_GRADES = ("A", "B", "C")
MM_RLHF_CATEGORIES = ("mcq", "long", "short", "safety", "video")
DEFAULT_CATEGORIES: tuple[str, ...] = tuple(
    dict.fromkeys(MMRB_CATEGORIES + VLRB_CATEGORIES + MMRB2_CATEGORIES + MM_RLHF_CATEGORIES)
)
# What a person reads for each category id (the ids stay what the benchmarks write); any other
# category reads as its id in words ("chart_qa" -> "Chart qa"): ``category_title``.
CATEGORY_TITLES: dict[str, str] = {
    "open_generation/correctness_task": "Open-ended generation (correctness)",
    "open_generation/preference_task": "Open-ended generation (preference)",
    "knowledge": "Knowledge",
    "reasoning": "Reasoning",
    "safety": "Safety",
    "vqa": "Visual question answering",
    "general": "General",
    "hallucination": "Hallucination",
    "t2i": "Text to image",
    "edit": "Image editing",
    "interleaved": "Interleaved text and images",
    "mcq": "Multiple choice",
    "long": "Long answer",
    "short": "Short answer",
    "video": "Video",
}


def category_title(category: str) -> str:
    """A category as a person reads it: from ``CATEGORY_TITLES``, else its id in words."""
    known = CATEGORY_TITLES.get(category)
    if known is not None:
        return known
    words = " ".join(category.replace("/", " ").replace("_", " ").split())
    return words[:1].upper() + words[1:] if words else category


@dataclass(frozen=True)
class ImageRef:
    """One image of an item. ``sha256`` is None when the image could not be stored."""

    source: str  # the path or URI as written in the input file
    sha256: str | None = None
    status: ImageStatus = "ok"
    width: int | None = None
    height: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class Item:
    id: str
    prompt: str
    category: str
    images: tuple[ImageRef, ...] = ()
    reference: str | None = None
    source: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Part:
    """One part of a response (or of a prompt written interleaved), in order: a text, or an
    image. The one shape of a part inside the project; the files' shapes (a triplet's
    ``{"text": ...}`` dicts, MMRB2's ``[kind, value]`` lists, OpenAI content dicts) are made
    and read only where those files and requests are (their modules in curate/formats/,
    ``curate.llm.openai_content``).

    ``value`` is a text's text, or where an image is: a local path, a file name relative to
    its dataset, a data: / http URL, or, for a ``missing`` image, its source as written. A
    candidate's stored image also has its ``image`` (content-addressed, ``ImageRef.status``
    says why it is missing); an image given as bytes (embedded in the build's Parquet file, or
    decoded from a model's answer) has them in ``data``."""

    kind: PartKind
    value: str = ""
    image: ImageRef | None = None
    missing: bool = False  # an image the input names that could not be stored or found
    data: bytes | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """A text part's text ("" for an image)."""
        return self.value if self.kind == "text" else ""

    @staticmethod
    def of_text(text: str) -> Part:
        return Part("text", text)

    @staticmethod
    def of_image(where: str | ImageRef, missing: bool = False, data: bytes | None = None) -> Part:
        """An image at ``where`` (a path or URL), or a candidate's stored image (missing when
        it could not be stored)."""
        if isinstance(where, ImageRef):
            return Part("image", where.source, where, missing or where.sha256 is None)
        return Part("image", where, missing=missing, data=data)


def render_parts(parts: Iterable[Part], *, say_missing: bool = False) -> str:
    """Parts as one text, for whatever needs text (a text judge, the text exports, MMRB2's
    responses): each text part stripped, each image an ``[image: SOURCE]`` marker, blank
    lines between, empty parts left out. With ``say_missing`` (the build's texts, whose
    markers name files of the build) a missing image reads ``[image not available: SOURCE]``,
    as a judge reads it: there is no file to name. Without it a missing image keeps the
    marker it was stored with, as candidates' texts and ids always had it."""
    shown = (
        p.value
        if p.kind == "text"
        else f"[image not available: {p.value}]"
        if say_missing and p.missing
        else f"[image: {p.value}]"
        for p in parts
    )
    return "\n\n".join(t.strip() for t in shown if t.strip())


@dataclass(frozen=True)
class Candidate:
    """A candidate response to an item, from a model or from an imported benchmark.

    A plain-text response is ``text`` alone. A response with images also has ``content``,
    its parts in order (text and images), and then ``text`` is its text rendering
    (``render_parts``, images as ``[image: name]`` markers). ``parts`` is the one accessor
    for a response's parts, whichever kind it is."""

    id: str
    item_id: str
    model: str
    text: str
    params: Mapping[str, Any] = field(default_factory=dict)
    sample_index: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    content: tuple[Part, ...] = ()  # empty: a plain-text response, its one part is ``text``

    @property
    def parts(self) -> tuple[Part, ...]:
        """The response in order: ``content``, or one text part for a plain-text response."""
        return self.content or (Part.of_text(self.text),)

    @property
    def images(self) -> tuple[ImageRef, ...]:
        """The response's images in order (missing ones included, their status says so)."""
        return tuple(p.image for p in self.content if p.image is not None)


@dataclass(frozen=True)
class SampleFailure:
    """A sampling request that still failed after its retries: kept so a resumed run can
    send it again and a summary can count it; removed when the same key later succeeds."""

    item_id: str
    model: str
    params_key: str
    sample_index: int
    attempts: int
    error: str


# -- failed requests -------------------------------------------------------------------------
# Why a request still failed after its retries. curate/llm.py makes every failure as a
# ``Failure`` of one kind; a judgment (``Judgment.error``) or a sample failure stores its
# ``message``, and ``Failure.read`` gives a stored message its kind back.
FailureKind = Literal[
    "timeout",
    "connection error",
    "malformed response",  # a body that is not JSON (a truncated answer from a proxy)
    "response has no choices",
    "empty response",
    "over the size limit",  # max_response_chars
    "HTTP error",
    "other",  # an answer without what was read from it, an exception of another kind
]
FAILURE_KINDS: tuple[FailureKind, ...] = get_args(FailureKind)
# kinds whose messages start with their name (read back by that prefix)
_PREFIXED: tuple[FailureKind, ...] = (
    "empty response",
    "timeout",
    "connection error",
    "malformed response",
    "response has no choices",
)
_SIDES = ("first: ", "second: ")  # a reward model's failure names the response it scored


@dataclass(frozen=True)
class Failure:
    """A request that failed after its retries: its kind, and the message stored for it."""

    kind: FailureKind
    message: str

    @property
    def label(self) -> str:
        """How failures are counted: the kind, or the head of the message for an HTTP error
        (``HTTP 503``) and any other (``ValueError``)."""
        if self.kind in ("HTTP error", "other"):
            return _without_side(self.message).split(":", 1)[0][:40]
        return self.kind

    @staticmethod
    def read(message: str | None) -> Failure:
        """A stored message's failure, by the rules every stored run was counted with (a
        reward model's ``first: ...; second: ...`` is read from its first failure)."""
        text = message or "unknown error"
        head = _without_side(text)
        if "over the limit" in head:
            return Failure("over the size limit", text)
        for kind in _PREFIXED:
            if head.startswith(kind):
                return Failure(kind, text)
        return Failure("HTTP error" if head.startswith("HTTP ") else "other", text)


def _without_side(message: str) -> str:
    for side in _SIDES:
        if message.startswith(side):
            return message[len(side) :]
    return message


def count_failures(failures: Iterable[Failure]) -> str:
    """ "5 over the size limit, 1 empty response": failures by cause, most frequent first."""
    return ", ".join(f"{n} {k}" for k, n in Counter(f.label for f in failures).most_common())


# -- judge runs ------------------------------------------------------------------------------
Outcome = Literal["parsed", "unparsed", "both", "error"]  # of a judgment: a failed request is an error
OUTCOMES: tuple[str, ...] = get_args(Outcome)
RunPurpose = Literal["evaluate", "select", "bestofn"]  # bestofn: mmrb_eval/bestofn_run.py
# After each pass: "complete" (every planned judgment has an answer), else "incomplete"
RunStatus = Literal["complete", "incomplete"]
JudgmentKey = tuple[str, str, int]  # (pair, order, sample index)


@dataclass(frozen=True)
class Judgment:
    """One judge's answer on one pair in one display order: verdicts and scores in the pair's
    stored order (curate/sides.py), or a failed request (outcome ``error``, ``error`` its
    message) that holds no answer."""

    pair_id: str
    order: Order = "forward"  # which response was shown as A (curate/sides.py)
    sample_index: int = 0
    verdict: Preference | None = None  # stored terms, None if unparsed
    outcome: Outcome = "parsed"
    raw: str | None = None
    prompt: str = ""
    score_first: float | None = None
    score_second: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # format-specific, not stored

    @property
    def key(self) -> JudgmentKey:
        return (self.pair_id, self.order, self.sample_index)

    @property
    def failure(self) -> Failure | None:
        """A failed request's failure (None for an answer)."""
        return Failure.read(self.error) if self.outcome == "error" else None


@dataclass(frozen=True)
class RunDataset:
    """What a run judged: dataset files in order with the ``--limit`` on their pairs, or a
    named set that is no file (``mmrb select`` judges the store's own pairs)."""

    paths: tuple[str, ...] = ()
    limit: int | None = None
    name: str = ""

    @classmethod
    def files(cls, paths: str | Path | Iterable[str | Path], limit: int | None = None) -> RunDataset:
        """Absolute paths, so that a resumed run can check it is judging the same files."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        return cls(tuple(str(Path(p).resolve()) for p in paths), limit)

    @property
    def label(self) -> str:
        """How reports name the dataset, and what default run ids hash (unchanged since runs
        stored it as this one string: the same command still finds its run)."""
        if self.name:
            return self.name
        return ";".join(self.paths) + (f"[:{self.limit}]" if self.limit is not None else "")


NO_DATASET = RunDataset()  # a run that names no dataset (the default of the runners)


@dataclass(frozen=True)
class JudgeRun:
    id: str
    purpose: RunPurpose
    judge: str
    config: Mapping[str, Any]  # the judge's identity (Judge.identity)
    dataset: RunDataset
    created_at: str | None = None
    status: RunStatus | None = None  # None for runs stored before schema version 2
    planned: int | None = None  # judgments the last pass asked for
    failed: int | None = None  # of those, stored as failures (outcome "error")


@dataclass(frozen=True)
class Pair:
    id: str
    item_id: str
    first_id: str
    second_id: str
    origin: str  # e.g. "import:mmrb", "pair:cross_model"
    # automatic correctness of each response where a reference decides it
    auto_first: Correctness | None = None
    auto_second: Correctness | None = None
    auto_method: str | None = None
    # a preference already known (imported benchmark, gold pair); never shown to annotators
    known_preference: Preference | None = None
    task: str | None = None  # "correctness" or "preference" (the two MMRB judge tasks)
    status: PairStatus = "candidate"
    reason: str | None = None  # why it was selected or dropped
    is_gold: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # its annotation scheme (curate/schemes.py) and that scheme's version: None is "mmrb",
    # the form every pair had before schemes were declared
    scheme: str | None = None
    scheme_version: int | None = None


@dataclass(frozen=True)
class Annotator:
    name: str
    role: Role = "annotator"
    password_hash: str | None = None
    active: bool = True
    qualification: QualificationState | None = None  # None: no qualification asked of them
    paused: str | None = None  # why the queue serves them nothing (curate/quality/), else None


@dataclass(frozen=True)
class Assignment:
    pair_id: str
    annotator: str
    left: Side  # which response the annotator sees on the left
    seq: int  # position in the annotator's queue
    batch: str = ""
    # A control task (a gold pair mixed into the queue): its label is checked against gold
    # and never counts toward the pair's overlap, agreement or the build.
    is_gold: bool = False
    state: AssignmentState = "open"
    qualification: bool = False  # a control task of the qualification set, queued first


@dataclass(frozen=True)
class Label:
    pair_id: str
    annotator: str
    correctness_first: Correctness | None = None
    correctness_second: Correctness | None = None
    preference: Preference | None = None
    rationale: str = ""
    flag: FlagReason | None = None
    flag_note: str = ""
    seconds: float | None = None
    status: LabelStatus = "submitted"
    ratings: Mapping[str, Any] = field(default_factory=dict)  # extra ordered ratings
    source: str = "app"
    revision: int = 0
    created_at: str | None = None
    updated_at: str | None = None
    scheme_version: int | None = None  # the version of the pair's scheme it was made under
    guidelines_version: int | None = None  # the version of the guidelines shown when it was made


# A label's ``source`` for made-up example labels (the sample's, data/sample/example-labels.jsonl):
# the build's card warns when a benchmark holds them
EXAMPLE_SOURCE = "example"


@dataclass(frozen=True)
class LabelHistoryEntry:
    """An earlier version of a label, kept when it was edited or withdrawn (undone)."""

    pair_id: str
    annotator: str
    revision: int
    snapshot: Label  # the label as it was
    replaced_at: str
    # an edit, an undo, or a scheme changed under the label incompatibly (the label is kept
    # here under its scheme's version, and the pair is labelled again)
    action: Literal["edit", "undo", "rescheme"]


@dataclass(frozen=True)
class Adjudication:
    """The lead's final decision on a pair, kept apart from annotators' labels."""

    pair_id: str
    admin: str
    preference: Preference | None = None
    correctness_first: Correctness | None = None
    correctness_second: Correctness | None = None
    exclude: bool = False
    note: str = ""
    created_at: str | None = None
    # the other fields of the pair's scheme, decided, as a label keeps them (curate/schemes.py)
    ratings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Gold:
    """The known answer of a pair: its preference and/or the correctness of each response.
    Never shown to annotators; control tasks and reliability figures are scored against it."""

    pair_id: str
    source: GoldSource
    preference: Preference | None = None
    correctness_first: Correctness | None = None
    correctness_second: Correctness | None = None
    note: str = ""
    created_at: str | None = None
    # gold values of the other fields of the pair's scheme, by their label names (e.g. score)
    ratings: Mapping[str, Any] = field(default_factory=dict)

    def value(self, field_name: str) -> str | None:
        """The gold value of one of LABEL_FIELDS, or of a scheme's field (as a word)."""
        if field_name in LABEL_FIELDS:
            value: str | None = getattr(self, field_name)
            return value
        v = self.ratings.get(field_name)
        return None if v is None else str(v)


@dataclass(frozen=True)
class Triplet:
    """A row of the final benchmark: (prompt, image, chosen, rejected)."""

    id: str
    prompt: str
    images: tuple[str, ...]  # relative paths inside the built dataset
    chosen: str
    rejected: str
    category: str
    source: str = ""
    chosen_model: str = ""
    rejected_model: str = ""
    task: str | None = None
    n_labels: int = 0
    agreement: float | None = None
    # Responses with images: their parts in order, each image at its path relative to the
    # built dataset (an image missing from the store: missing under its source); empty for a
    # plain-text response, whose ``chosen`` / ``rejected`` text is the whole of it.
    chosen_parts: tuple[Part, ...] = ()
    rejected_parts: tuple[Part, ...] = ()


@dataclass(frozen=True)
class Guidelines:
    """One version of the project's labelling guidelines (Markdown). Versions count from 1."""

    version: int
    text: str
    author: str  # an account, or "cli:<user>" for `mmrb guidelines set`
    created_at: str  # UTC, ISO 8601


# What the audit trail records (store/audit.py), one word each.
AuditAction = Literal[
    "account.add",
    "account.role",
    "account.password",
    "account.disable",
    "account.enable",
    "account.signout",
    "assign",
    "annotator.pause",
    "annotator.resume",
    "gold.import",
    "adjudicate",
    "guidelines.set",
]
AUDIT_ACTIONS: tuple[AuditAction, ...] = get_args(AuditAction)


@dataclass(frozen=True)
class AuditEntry:
    """One change in the audit trail: who did what to which subject, when (UTC), with details."""

    id: int
    at: str  # UTC, ISO 8601
    who: str
    what: AuditAction
    subject: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
