"""What each stage may ask of the store: one ``typing.Protocol`` per stage, listing only the
store methods it calls (and those of the functions it hands the store to). A stage's functions
take its protocol, not ``Store``: what a stage reads and writes is said where it is typed, and
a test may hand it a small fake. ``Store`` satisfies every one (checked by mypy below).

Stages open their units of work with ``transaction`` (or ``snapshot`` for reads only) and
pass the :class:`~curate.store.base.Transaction` as ``conn=``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..images import ImageStore, StoredImage
from ..model import (
    Adjudication,
    Annotator,
    Assignment,
    AuditAction,
    Candidate,
    Gold,
    Item,
    JudgeRun,
    Judgment,
    JudgmentKey,
    Label,
    Outcome,
    Pair,
    RunStatus,
    SampleFailure,
)
from .base import Transaction
from .columns import CodedColumn, LabelColumns
from .counts import AnnotatorWork
from .items import SampleKey

if TYPE_CHECKING:
    from . import Store


class Audits(Protocol):
    """A stage whose changes go into the audit trail, in their own transaction."""

    def record_audit(
        self,
        who: str,
        what: AuditAction,
        subject: str = "",
        details: Mapping[str, Any] | None = None,
        conn: Transaction | None = None,
    ) -> None: ...


class Writes(Protocol):
    def transaction(self) -> AbstractContextManager[Transaction]: ...


class Reads(Protocol):
    def snapshot(self) -> AbstractContextManager[Transaction]: ...


# the reads several stages share, each declared once
class ReadsItems(Protocol):
    def items(
        self, *, ids: Iterable[str] | None = None, category: str | None = None, conn: Transaction | None = None
    ) -> list[Item]: ...


class ReadsCandidates(Protocol):
    def candidates(
        self, *, item_id: str | None = None, ids: Iterable[str] | None = None, conn: Transaction | None = None
    ) -> list[Candidate]: ...


class ReadsPairs(Protocol):
    def pairs(
        self,
        *,
        status: str | None = None,
        item_id: str | None = None,
        ids: Iterable[str] | None = None,
        conn: Transaction | None = None,
    ) -> list[Pair]: ...


class SchemeReader(Protocol):
    """Each pair's annotation scheme (``curate.schemes.schemes_of``)."""

    def scheme_definitions(self, conn: Transaction | None = None) -> dict[tuple[str, int], dict[str, Any]]: ...

    def pair_schemes(
        self, ids: Iterable[str] | None = None, conn: Transaction | None = None
    ) -> dict[str, tuple[str | None, int | None]]: ...

    def scheme_keys(self, conn: Transaction | None = None) -> set[tuple[str | None, int | None]]: ...


class SchemeWriter(SchemeReader, Protocol):
    """``curate/assign.py``: a batch's scheme kept and given to its pairs."""

    def add_scheme(self, name: str, version: int, definition: Any, conn: Transaction | None = None) -> None: ...

    def set_pair_scheme(
        self,
        pair_ids: Iterable[str],
        name: str | None,
        version: int | None,
        *,
        relabel: bool = False,
        conn: Transaction | None = None,
    ) -> int: ...


class ReadsLabels(Protocol):
    def labels(
        self,
        *,
        pair_id: str | None = None,
        annotator: str | None = None,
        status: str | None = "submitted",
        control: bool | None = None,
        conn: Transaction | None = None,
    ) -> list[Label]: ...


class ReadsGold(Protocol):
    def gold(self, conn: Transaction | None = None) -> dict[str, Gold]: ...


class ReadsImageFiles(Protocol):
    def image_paths(self, sha256s: Iterable[str], conn: Transaction | None = None) -> dict[str, Path]: ...


class PairingStore(Writes, ReadsItems, ReadsCandidates, ReadsPairs, Protocol):
    """``curate/pairing.py``: items and their candidates in, pairs out."""

    def add_pairs(self, pairs: Iterable[Pair], conn: Transaction | None = None) -> int: ...


class DedupStore(ReadsItems, ReadsImageFiles, Protocol):
    """``curate/dedup.py``: items and their image files."""


class JudgeRunStore(Protocol):
    """``curate/judging/runner.py``: a judge run and its judgments."""

    def add_judge_run(self, run: JudgeRun, conn: Transaction | None = None) -> tuple[JudgeRun, bool]: ...

    def judgment_outcomes(self, run_id: str, conn: Transaction | None = None) -> dict[JudgmentKey, Outcome]: ...

    def judgment_errors(self, run_id: str, conn: Transaction | None = None) -> dict[JudgmentKey, str | None]: ...

    def set_judge_run_status(
        self,
        run_id: str,
        status: RunStatus,
        *,
        planned: int | None = None,
        failed: int | None = None,
        conn: Transaction | None = None,
    ) -> None: ...

    def add_judgments(
        self,
        run_id: str,
        judgments: Iterable[Judgment],
        *,
        replace: Collection[JudgmentKey] = (),
        conn: Transaction | None = None,
    ) -> int: ...


class SelectionStore(Writes, JudgeRunStore, DedupStore, ReadsCandidates, ReadsPairs, Protocol):
    """``curate/selection.py``: pairs judged (the runner's part), duplicates (dedup's), and
    each pair's decision written back."""

    def judgments(self, run_id: str, conn: Transaction | None = None) -> list[Judgment]: ...

    def update_pair(self, pair_id: str, conn: Transaction | None = None, **values: Any) -> None: ...


class BestOfNStore(JudgeRunStore, ReadsItems, ReadsCandidates, ReadsPairs, ReadsLabels, ReadsImageFiles, Protocol):
    """``mmrb_eval/bestofn_run.py``: items and their candidates in (their correctness from the
    reference or the pairs' labels and adjudications), a judge run's matches or scores; the
    method and seed each run was last made with, a setting (read back offline)."""

    def judgments(self, run_id: str, conn: Transaction | None = None) -> list[Judgment]: ...

    def adjudications(self, conn: Transaction | None = None) -> dict[str, Adjudication]: ...

    def judge_run(self, run_id: str, conn: Transaction | None = None) -> JudgeRun | None: ...

    def judge_runs(self, purpose: str | None = None, conn: Transaction | None = None) -> list[JudgeRun]: ...

    def get_setting(self, key: str, default: str | None = None, conn: Transaction | None = None) -> str | None: ...

    def set_setting(self, key: str, value: str, conn: Transaction | None = None) -> None: ...


class SamplingStore(ReadsItems, ReadsImageFiles, Protocol):
    """``curate/sampling.py``: items in, candidates (with their images) and failures out."""

    @property
    def display_name(self) -> str: ...

    @property
    def images(self) -> ImageStore: ...

    def candidate_keys(self, conn: Transaction | None = None) -> set[SampleKey]: ...

    def record_samples(
        self,
        answers: Sequence[Candidate],
        failures: Sequence[SampleFailure],
        conn: Transaction | None = None,
        *,
        images: Iterable[StoredImage] = (),
    ) -> None: ...


class QualificationSetStore(Protocol):
    """``curate.quality.qualification.qualification_pairs``: the qualification set, a setting."""

    def get_setting(self, key: str, default: str | None = None, conn: Transaction | None = None) -> str | None: ...


class QualificationStore(Writes, Audits, QualificationSetStore, ReadsGold, ReadsLabels, Protocol):
    """``curate/quality/qualification.py``: the qualification set (a setting), its pairs'
    gold, and each annotator's qualification state."""

    def set_setting(self, key: str, value: str, conn: Transaction | None = None) -> None: ...

    def labelled_annotators(self, conn: Transaction | None = None) -> set[str]: ...

    def get_annotator(self, name: str, conn: Transaction | None = None) -> Annotator | None: ...

    def update_annotator(self, name: str, conn: Transaction | None = None, **values: Any) -> None: ...

    def assignments(
        self, *, annotator: str | None = None, pair_id: str | None = None, conn: Transaction | None = None
    ) -> list[Assignment]: ...


class AssignStore(QualificationStore, ReadsPairs, SchemeWriter, Protocol):
    """``curate/assign.py``: pairs, gold and labels in, assignments (the qualification set's
    first) out, the annotators named."""

    def annotators(self, conn: Transaction | None = None) -> list[Annotator]: ...

    def ensure_annotator(self, name: str, role: str = "annotator", conn: Transaction | None = None) -> bool: ...

    def add_assignments(self, assignments: Iterable[Assignment], conn: Transaction | None = None) -> int: ...


class GoldStageStore(
    Writes, Reads, Audits, QualificationSetStore, ReadsGold, ReadsItems, ReadsPairs, ReadsLabels, SchemeReader, Protocol
):
    """``curate/quality/gold.py``: gold answers in and out, what they are derived from, and
    the figures of control tasks (the qualification set among them)."""

    def set_gold(self, golds: Iterable[Gold], conn: Transaction | None = None) -> int: ...

    def control_keys(self, conn: Transaction | None = None) -> set[tuple[str, str]]: ...

    def annotator_work(self, conn: Transaction | None = None) -> list[AnnotatorWork]: ...

    def adjudications(self, conn: Transaction | None = None) -> dict[str, Adjudication]: ...

    def gold_categories(self, conn: Transaction | None = None) -> dict[str, int]: ...

    def control_labels(self, conn: Transaction | None = None) -> int: ...


class RawLabelStore(Writes, Reads, ReadsGold, SchemeReader, Protocol):
    """``curate/rawlabels.py``: the raw labels out (with their pairs' items and categories,
    gold, control tasks) and a label file in (the pairs' items, the labels already there)."""

    def raw_labels(self, conn: Transaction | None = None) -> list[tuple[Label, str, str | None, bool]]: ...

    def pair_items(self, conn: Transaction | None = None) -> dict[str, str]: ...

    def label_keys(self, conn: Transaction | None = None) -> set[tuple[str, str]]: ...

    def control_keys(self, conn: Transaction | None = None) -> set[tuple[str, str]]: ...

    def ensure_annotator(self, name: str, role: str = "annotator", conn: Transaction | None = None) -> bool: ...

    def import_labels(self, labels: Iterable[Label], conn: Transaction | None = None) -> int: ...


class LabelFrameStore(SchemeReader, Protocol):
    """``curate/quality/frames.py``: the labels as columns of codes, which are control tasks,
    each pair's category, the schemes (which ratings hold a judgement)."""

    def label_columns(self) -> LabelColumns: ...

    def control_keys(self, conn: Transaction | None = None) -> set[tuple[str, str]]: ...

    def pair_category_columns(self) -> tuple[CodedColumn, CodedColumn]: ...


class AggregateStore(LabelFrameStore, ReadsGold, Protocol):
    """``curate/quality/aggregate.py``: the labels' frame and the gold."""


class ReliabilityStore(Writes, Audits, AggregateStore, Protocol):
    """``curate/quality/reliability.py``: the labels' frame, the gold, the accounts (paused
    by an alert)."""

    def annotators(self, conn: Transaction | None = None) -> list[Annotator]: ...

    def update_annotator(self, name: str, conn: Transaction | None = None, **values: Any) -> None: ...


def _store_satisfies_every_protocol(store: Store) -> None:
    """Never called: mypy checks here that ``Store`` is each protocol."""
    needs: tuple[
        PairingStore,
        DedupStore,
        JudgeRunStore,
        SelectionStore,
        SamplingStore,
        QualificationSetStore,
        QualificationStore,
        AssignStore,
        GoldStageStore,
        LabelFrameStore,
        AggregateStore,
        ReliabilityStore,
        BestOfNStore,
        RawLabelStore,
    ] = (store, store, store, store, store, store, store, store, store, store, store, store, store, store)
    del needs


__all__ = [
    "AggregateStore",
    "AssignStore",
    "BestOfNStore",
    "DedupStore",
    "GoldStageStore",
    "JudgeRunStore",
    "LabelFrameStore",
    "PairingStore",
    "QualificationSetStore",
    "QualificationStore",
    "RawLabelStore",
    "Reads",
    "ReliabilityStore",
    "SamplingStore",
    "SelectionStore",
    "Writes",
]
