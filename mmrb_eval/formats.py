"""Precomputed judgments, so a judge's saved outputs score without calling it.

The files are read by ``curate.formats`` (one module per format); this module turns their
records into Judgments in stored terms and the pairs they are scored against, one reader per
format (``read_*``: ``(path, dataset pairs | None, ReadOptions) -> JudgmentFile``), which
the format's entry in curate/formats/registry.py names. Formats:

- ``mmrb``: Multimodal RewardBench judge outputs, JSONL ``ID, Label, output`` (or
  ``outputs``, a list, for several samples) and ``Meta.Category``; the rows carry the
  labels, so no dataset is needed. The verdict is read with the ``[[A]]``/``[[B]]`` parser
  (the ``mmrb`` preset re-reads the text with the script's own rule). An output that is
  exactly ``"None"`` is what the benchmark's judge script writes when a request failed after
  its retries: it is read as a failed request, never scored.
- ``mmrb2``: MMRB2 judgements, ``{pair_id: {"forward": [{"judgement": "A"|"B"}], "reverse":
  [...]}}``; scored against the ``chosen`` of the ground-truth files (``--dataset``). A
  reverse judgement names the responses as shown, so "A" there is ``response_b``. As in
  compute_accuracy.py, an empty judgement (null, "", an empty list) is no judgement, a pair
  named in the file is not missing even without one, and any other value than "A"/"B" is an
  answer that names neither response (read as unparsed).
- ``vlrewardbench``: VL-RewardBench inference records (``id, query, response, ranking,
  meta.filter_choice, meta.random_number``), one per sample; the verdict is re-read from
  ``filter_choice`` as cal.py does (reparse=True), or taken from ``flag_status`` with
  ``trust_flag``. The records carry the labels; groups come from the id's prefix.
- ``r1-rewards``: R1-Reward's outputs, the benchmark's own rows (Multimodal RewardBench
  ``ID, Output1, Output2, Better, Category``, or ``id, prompt, chosen, rejected, image``)
  plus ``rewards: [reward of chosen, reward of rejected]``: its harness always shows the
  chosen response first, and a row is right when ``rewards[0] > rewards[1]``.
- ``mmrb-studio``: this project's judgments as JSONL (one stored ``judgments`` row per line).

With a dataset (``--dataset``), each row judges the dataset pair of its id (``_DatasetIds``:
a repeated row judges it again, as the scripts count every row). A row whose id the dataset
lacks, or whose label differs from the dataset's, is a doubt: a warning, and with
``--strict`` an error (``JudgmentFile.doubts``); the dataset's label is what is scored.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from curate.errors import InputError, InputProblem
from curate.formats import detect_layout, mm_rlhf, mmrb, mmrb2, r1_rewards, triplets
from curate.formats import judgments as own
from curate.formats import vlrewardbench as vlrb
from curate.formats.fields import Fields, checked, parse_rows
from curate.formats.reader import load_rows
from curate.formats.registry import lookup
from curate.judging.parsing import parse_brackets, vlrb_answer_number
from curate.judging.records import Judgment
from curate.model import Side
from curate.sides import copy_order, from_letter, order_of, other, shown_order, verdict_from_letter
from curate.wording import plural

from .datasets import first_record, judge_output_pair, mmrb_pair, renamed, triplet_pair, unique_ids
from .records import EvalPair
from .rules import source_id

# The judge script of Multimodal RewardBench (1_run_model_as_judge_gpt4o.py) returns this
# string when every retry of a request failed.
MMRB_FAILED_OUTPUT = "None"
# cal.py's main() seeds once, then shuffles a fresh copy of the records for each k in turn.
CAL_KS = (1, 3, 5, 7, 9)
CAL_SEED = 1234


@dataclass(frozen=True)
class JudgmentFile:
    judgments: list[Judgment]  # in file order
    pairs: list[EvalPair]  # what they are scored against
    listed: frozenset[str] | None = None  # pair ids the file names (MMRB2), for "missing"
    warnings: tuple[str, ...] = ()
    # Rows that disagree with the dataset given beside the file (an id it does not have, a
    # label other than its own): each is a warning (summed up in ``warnings``), and with
    # ``mmrb score --strict`` the file is refused with all of them.
    doubts: tuple[InputProblem, ...] = ()


@dataclass(frozen=True)
class ReadOptions:
    """What a reader may be told besides the file (VL-RewardBench's ``--vlrb-k`` and
    ``--trust-flag``; the other formats ignore them)."""

    vlrb_k: int | None = None
    trust_flag: bool = False


JudgmentReader = Callable[[Path, Sequence[EvalPair] | None, ReadOptions], JudgmentFile]


def read_judgments(
    path: str | Path,
    fmt: str,
    pairs: Sequence[EvalPair] | None = None,
    *,
    vlrb_k: int | None = None,
    trust_flag: bool = False,
) -> tuple[list[Judgment], list[EvalPair]]:
    """(judgments in file order, the pairs they are scored against)."""
    f = read_judgment_file(path, fmt, pairs, vlrb_k=vlrb_k, trust_flag=trust_flag)
    return f.judgments, f.pairs


def read_judgment_file(
    path: str | Path,
    fmt: str,
    pairs: Sequence[EvalPair] | None = None,
    *,
    vlrb_k: int | None = None,
    trust_flag: bool = False,
) -> JudgmentFile:
    """A file of judgments in ``fmt`` (a format's name or alias). ``pairs`` is the dataset;
    formats that carry labels build it from the file when None."""
    p = Path(path)
    if not p.exists():
        raise InputError([InputProblem(str(p), None, None, "file not found")])
    reader: JudgmentReader = lookup(fmt, "judgments", p, what="judgment format").load("judgments")
    return reader(p, pairs, ReadOptions(vlrb_k, trust_flag))


def _with_unknown_pairs(p: Path, f: JudgmentFile) -> JudgmentFile:
    """A file matched to the dataset by pair id alone: each pair it judges that the dataset
    does not have is a doubt."""
    known = {x.id for x in f.pairs}
    unknown = dict.fromkeys(j.pair_id for j in f.judgments if j.pair_id not in known)
    doubts = tuple(InputProblem(str(p), None, None, f"pair {pid!r} is not in the dataset") for pid in unknown)
    return replace(f, doubts=f.doubts + doubts)


LABEL_FIELDS = ("Label", "Better", "chosen", "ranking")  # the fields of a doubt about a row's label


def doubt_summary(doubts: Sequence[InputProblem]) -> list[str]:
    """The warning for rows whose label differs from the dataset's, with a count and three
    examples. (Rows the dataset does not have are counted by scoring, whatever read them.)"""
    label = [d for d in doubts if d.field in LABEL_FIELDS]
    if not label:
        return []
    examples = "; ".join(str(d) for d in label[:3])
    one = len(label) == 1
    return [
        f"{plural(len(label), 'row')} state{'s' if one else ''} a preference other than the dataset's and "
        f"{'is' if one else 'are'} scored against the dataset (e.g. {examples}); --strict refuses such a file"
    ]


def _own_pairs(records: list, to_pair: Callable[[Any, Path], EvalPair], p: Path, ids: list[str]) -> list[EvalPair]:
    """The pairs a self-labelled file describes, under the file's (de-duplicated) ids."""
    own_pairs = [to_pair(rec, p) for rec in records]
    return [x if x.id == new else renamed(x, new) for x, new in zip(own_pairs, ids, strict=True)]


class _DatasetIds:
    """The dataset pair each row of a file of judgments is about, by the id the row gives:
    the one pair of that id (a row repeated in the file judges it again, as the scripts
    count every row); where the dataset repeats the id (``id#0``, ``id#1``...), the k-th row
    of that id judges the k-th pair; else none (the dataset does not have it)."""

    def __init__(self, pairs: Sequence[EvalPair]):
        self.by_source: dict[str, list[str]] = defaultdict(list)
        for x in pairs:
            self.by_source[source_id(x)].append(x.id)
        self.seen: Counter = Counter()

    def __call__(self, rid: str) -> str | None:
        k = self.seen[rid]
        self.seen[rid] += 1
        same = self.by_source.get(rid, [])
        return same[0] if len(same) == 1 else same[k] if k < len(same) else None


def _row_ids(p: Path, field: str, rows: Sequence[tuple[int, str]], pairs: Sequence[EvalPair] | None):
    """(pair id of each row, problems of rows the dataset does not have, warnings). Without a
    dataset every row is a pair of its own (repeated ids become ``id#0``, ``id#1``...)."""
    repeated = {rid: n for rid, n in Counter(rid for _, rid in rows).items() if n > 1}
    warnings = []
    if repeated:
        shown = ", ".join(f"{rid!r} ({n} rows)" for rid, n in list(repeated.items())[:3])
        warnings.append(
            f"{plural(len(repeated), 'id')} repeated in the file ({shown}{', ...' if len(repeated) > 3 else ''}): "
            "every row is scored, as the benchmark's script counts every row"
        )
    if pairs is None:
        return unique_ids([rid for _, rid in rows]), [], warnings
    match = _DatasetIds(pairs)
    ids: list[str] = []
    unknown = []
    for line, rid in rows:
        pid = match(rid)
        if pid is None:
            unknown.append(InputProblem(str(p), line, field, f"{rid!r} is not in the dataset"))
        ids.append(rid if pid is None else pid)
    return ids, unknown, warnings


def _side_of(text: str, pair: EvalPair) -> Side:
    """The side of ``pair`` whose response is ``text`` (a row's chosen response, found in the
    dataset by its text); the pair's preferred side where the text does not tell."""
    if pair.first != pair.second and text in (pair.first, pair.second):
        return "first" if text == pair.first else "second"
    return pair.preferred


def _label_doubt(p: Path, line: int, field: str, stated: str, pid: str, dataset: str) -> InputProblem:
    return InputProblem(str(p), line, field, f"{stated}, while the dataset prefers {dataset} in pair {pid!r}")


# -- Multimodal RewardBench ------------------------------------------------------------------
def read_mmrb(p: Path, pairs: Sequence[EvalPair] | None, opts: ReadOptions) -> JudgmentFile:
    labelled = pairs is None

    def parse(f: Fields) -> mmrb.MmrbJudgeOutput | None:
        # labelled: the file's categories are what is reported
        return mmrb.parse_output(f, labelled=labelled, reported=labelled)

    lines_records = parse_rows(p, load_rows(p), parse)
    records = [rec for _, rec in lines_records]
    ids, doubts, warnings = _row_ids(p, "ID", [(line, rec.id) for line, rec in lines_records], pairs)
    if pairs is not None:
        preferred = {x.id: x.preferred for x in pairs}
        for (line, rec), pid in zip(lines_records, ids, strict=True):
            if rec.label and pid in preferred and from_letter(rec.label, "forward") != preferred[pid]:
                theirs = "A" if preferred[pid] == "first" else "B"
                doubts.append(_label_doubt(p, line, "Label", f"Label {rec.label}", pid, f"{theirs} (Output1 is A)"))
    judgments = []
    for rec, pid in zip(records, ids, strict=True):
        for i, text in enumerate(rec.outputs):
            if text == MMRB_FAILED_OUTPUT:
                judgments.append(
                    Judgment(
                        pid,
                        "forward",
                        i,
                        None,
                        "error",
                        raw=text,
                        error="failed in the judge script: its marker of a failed request",
                    )
                )
                continue
            parsed = parse_brackets(text)
            judgments.append(
                Judgment(
                    pair_id=pid,
                    order="forward",  # Output1 is always A: the official run never shuffles
                    sample_index=i,
                    verdict=verdict_from_letter(parsed.shown, "forward"),
                    outcome=parsed.outcome,
                    raw=text,
                )
            )
    if pairs is None:
        pairs = _own_pairs(records, judge_output_pair, p, ids)
    return JudgmentFile(judgments, list(pairs), warnings=tuple(warnings + doubt_summary(doubts)), doubts=tuple(doubts))


# -- MMRB2 ---------------------------------------------------------------------------------
def read_mmrb2(p: Path, dataset: Sequence[EvalPair] | None, opts: ReadOptions) -> JudgmentFile:
    if dataset is None:
        raise InputError([InputProblem(str(p), None, None, "MMRB2 judgements need --dataset (the ground-truth files)")])
    pairs = list(dataset)
    file = mmrb2.read_judgements(p)
    # a ground-truth id repeated in its file names every pair read from it (the script
    # looks each pair up by id)
    by_source: dict[str, list[str]] = defaultdict(list)
    for x in pairs:
        by_source[source_id(x)].append(x.id)
    listed: set[str] = set()
    for pid in file.listed:
        listed.update(by_source.get(pid) or [pid])
    out: list[Judgment] = []
    for j in file.judgements:
        raw = json.dumps(j.value, ensure_ascii=False)
        known = j.value in ("A", "B")
        for t in by_source.get(j.pair_id) or [j.pair_id]:
            # any other value is counted by the script, and never equals the ground truth
            out.append(
                Judgment(
                    t,
                    j.order,
                    j.index,
                    verdict_from_letter(j.value, j.order) if known else None,
                    "parsed" if known else "unparsed",
                    raw=raw,
                    extra={"verdict_from": "judgement"},
                )
            )
    return _with_unknown_pairs(p, JudgmentFile(out, pairs, frozenset(listed)))


# -- VL-RewardBench ------------------------------------------------------------------------
def _vlrb_shuffle(data: list, rng: random.Random) -> list:
    # cal.py's shuffle_data (not a Fisher-Yates), reproduced for its k-cap.
    data = list(data)
    for i in range(len(data)):
        j = rng.randint(0, len(data) - 1)
        data[i], data[j] = data[j], data[i]
    return data


def cal_order(data: list, k: int) -> list:
    """The records in the order cal.py caps them at k: main() seeds once with 1234 and
    shuffles a fresh copy for k = 1, 3, 5, 7, 9 in turn, so k=3 uses the second shuffle. Any
    other k gets one shuffle after a fresh seed (as if main() ran that k alone)."""
    rng = random.Random(CAL_SEED)
    out = data
    for _ in range(CAL_KS.index(k) + 1 if k in CAL_KS else 1):
        out = _vlrb_shuffle(data, rng)
    return out


def _inference_records(p: Path, trust_flag: bool) -> list[tuple[int, vlrb.VlrbInference | None]]:
    """(line, record) in file order, null ones kept (cal.py shuffles them too, then skips
    them); the file refused where cal.py would stop or merge two items (vlrewardbench.py)."""
    data: list[tuple[int, vlrb.VlrbInference | None]] = []
    problems: list[InputProblem] = []
    for line, rec in vlrb.unwrap_inferences(p, load_rows(p, nulls=True)):
        if rec is None:
            data.append((line, None))
        elif not isinstance(rec, dict):
            problems.append(InputProblem(str(p), line, None, "not a JSON object"))
        else:
            f = checked(p, line, rec)
            data.append((line, vlrb.parse_inference(f, trust_flag=trust_flag) if not f.problems else None))
            problems += f.problems
    if not problems:
        problems = vlrb.key_collisions(p, ((line, r) for line, r in data if r is not None))
    if problems:
        raise InputError(problems)
    return data


FLAG_STATUSES = ("agree", "reject", "doesntMatch")  # what cal.py counts of flag_status


def read_vlrb(p: Path, pairs: Sequence[EvalPair] | None, opts: ReadOptions) -> JudgmentFile:
    k, trust_flag = opts.vlrb_k, opts.trust_flag
    if k is not None and k < 1:
        raise InputError([InputProblem(str(p), None, None, "the VL-RewardBench k must be at least 1")])
    data = _inference_records(p, trust_flag)
    warnings: list[str] = []
    doubts: list[InputProblem] = []
    if trust_flag:
        odd = sum(1 for _, r in data if r is not None and r.flag_status not in FLAG_STATUSES)
        if odd:
            warnings.append(
                f"{odd} records whose flag_status is not agree, reject or doesntMatch are ignored, as cal.py does"
            )
    # pairs from the records: one per item (cal.py's key of id + query + responses), first
    # seen in the file
    first: dict[str, tuple[int, vlrb.VlrbInference]] = {}
    for line, rec in data:
        if rec is not None:
            first.setdefault(rec.key, (line, rec))
    own_ids = dict(zip(first, unique_ids([r.id for _, r in first.values()]), strict=True))
    if pairs is None:
        pairs = [_vlrb_pair(own_ids[key], key, r) for key, (_, r) in first.items()]
        target = own_ids
    else:
        target, mismatched = _match_vlrb({key: r for key, (_, r) in first.items()}, own_ids, pairs)
        if mismatched:
            warnings.append(
                f"the responses of {plural(mismatched, 'item')} differ from the dataset pair of the same id: "
                "check that the records and --dataset are the same benchmark copy"
            )
        doubts += [
            InputProblem(str(p), line, "id", f"{r.id!r} (query {r.query!r}) is not in the dataset")
            for key, (line, r) in first.items()
            if target[key].startswith(NOT_IN_DATASET)
        ]
    records = [(line, r) for line, r in (cal_order(data, k) if k is not None else data) if r is not None]
    out, disagreeing = _vlrb_judgments(p, records, target, pairs, target is not own_ids, opts, doubts)
    if disagreeing:
        warnings.append(
            f"the records of {plural(disagreeing, 'item')} disagree on which response is preferred: "
            "each record is scored against its own ranking, as cal.py does"
        )
    return JudgmentFile(out, list(pairs), warnings=tuple(warnings + doubt_summary(doubts)), doubts=tuple(doubts))


def _vlrb_pair(pair_id: str, key: str, r: vlrb.VlrbInference) -> EvalPair:
    """The pair of an item when no dataset is given: the records carry its label."""
    return EvalPair(
        id=pair_id,
        prompt=r.query,
        first=r.response[0],
        second=r.response[1],
        preferred=r.preferred,
        category=vlrb.group_of(r.id),
        source="vlrewardbench",
        metadata={"vlrb_key": key, "source_id": r.id},
    )


def _vlrb_status(rec: vlrb.VlrbInference, trust_flag: bool) -> str | None:
    """What a record's answer counts as (agree, reject, doesntMatch); None: a flag cal.py ignores."""
    if trust_flag:
        return rec.flag_status if rec.flag_status in FLAG_STATUSES else None
    n = vlrb_answer_number(rec.filter_choice or "")
    rejected_shown = rec.ranking.index(1 if rec.random_number == 0 else 0) + 1  # cal.py's own arithmetic
    return "doesntMatch" if n is None else "reject" if n == rejected_shown else "agree"


def _vlrb_judgments(
    p: Path,
    records: list[tuple[int, vlrb.VlrbInference]],
    target: dict[str, str],
    pairs: Sequence[EvalPair],
    dataset_given: bool,
    opts: ReadOptions,
    doubts: list[InputProblem],
) -> tuple[list[Judgment], int]:
    """The records' judgments, at most k per item, each record's label doubts added to
    ``doubts``; and how many items' records disagree on which response is preferred."""
    pair_by_id = {x.id: x for x in pairs}
    seen: Counter = Counter()
    doubted: set[str] = set()
    disagreeing: set[str] = set()
    out = []
    for line, rec in records:
        key = rec.key
        status = _vlrb_status(rec, opts.trust_flag)
        if status is None or (opts.vlrb_k is not None and seen[key] >= opts.vlrb_k):
            continue
        i = seen[key]
        seen[key] += 1
        pid = target[key]
        pair = pair_by_id.get(pid)
        # the side of the pair that this record's ranking calls chosen. Scored against the
        # records themselves, each record's own ranking is right, as in cal.py (records of one
        # item may disagree: a warning); against a dataset, its label is, and a record's
        # chosen response is found there by its text
        chosen: Side = pair.preferred if pair else rec.preferred
        if pair and dataset_given:
            chosen = _side_of(rec.response[0 if rec.preferred == "first" else 1], pair)
            if chosen != pair.preferred and key not in doubted:
                doubted.add(key)
                doubts.append(
                    _label_doubt(p, line, "ranking", f"ranking {list(rec.ranking)}", pid, "the other response")
                )
        elif pair and rec.response[0 if rec.preferred == "first" else 1] != pair.chosen:
            disagreeing.add(key)
        # "agree" is any answer number but the rejected one's, as cal.py counts it
        verdict = {"agree": chosen, "reject": other(chosen)}.get(status)
        out.append(
            Judgment(
                pair_id=pid,
                # the record lists the pair's responses in its own order, and cal.py shows
                # that list in rec.shown order
                order=shown_order(copy_order(chosen, rec.preferred), rec.shown),
                sample_index=i,
                verdict=verdict,
                outcome="parsed" if verdict else "unparsed",
                raw=rec.filter_choice,
                prompt=rec.filter_prompt,
                extra={"verdict_from": "flag_status"} if opts.trust_flag else {},
            )
        )
    return out, len(disagreeing)


NOT_IN_DATASET = "(not in the dataset) "


def _match_vlrb(
    first: dict[str, vlrb.VlrbInference], own_ids: dict[str, str], pairs: Sequence[EvalPair]
) -> tuple[dict[str, str], int]:
    """Dataset pair of each record item: by cal.py's key when the dataset has it (the
    original layout), else by id and the two responses (a copy that renamed its fields),
    else by id alone; the count of items matched by id whose responses differ."""
    by_key = {x.metadata["vlrb_key"]: x.id for x in pairs if x.metadata.get("vlrb_key")}
    by_texts = {(source_id(x), frozenset((x.first, x.second))): x.id for x in pairs}
    by_id: dict[str, list[str]] = defaultdict(list)
    for x in pairs:
        by_id[source_id(x)].append(x.id)
    target: dict[str, str] = {}
    mismatched = 0
    for key, rec in first.items():
        hit = by_key.get(key) or by_texts.get((rec.id, frozenset(rec.response)))
        if hit is None:
            same_id = by_id.get(rec.id, [])
            mismatched += bool(same_id)
            # one dataset pair of that id: score against it; none or several: an unknown pair
            hit = same_id[0] if len(same_id) == 1 else NOT_IN_DATASET + own_ids[key]
        target[key] = hit
    return target, mismatched


# -- R1-Reward ----------------------------------------------------------------------------
R1_LAYOUTS = ("mmrb", "triplet")  # the benchmark rows R1-Reward's outputs carry


def read_rewards(p: Path, pairs: Sequence[EvalPair] | None, opts: ReadOptions) -> JudgmentFile:
    rows = load_rows(p)
    first_row = first_record(p, rows)
    layout = detect_layout(first_row.data, p).name
    if layout not in R1_LAYOUTS:
        why = (
            "R1-Reward rows are Multimodal RewardBench rows "
            "(ID, Output1, Output2, Better, Category) or triplets (id, prompt, chosen, rejected)"
        )
        raise InputError([InputProblem(str(p), first_row.line, None, why)])
    labelled = pairs is None and layout == "mmrb"

    def parse_row(f: Fields) -> Any:
        if layout == "triplet":
            return triplets.parse(f)
        return mmrb.parse(f, reported=labelled)  # labelled: the file's categories are what is reported

    lines_records = parse_rows(p, rows, lambda f: r1_rewards.parse(f, parse_row))
    id_field = "ID" if layout == "mmrb" else "id"
    if layout == "triplet":
        _refuse_split_media(p, lines_records)
    ids, doubts, warnings = _row_ids(p, id_field, [(line, rec.row.id) for line, rec in lines_records], pairs)
    # the id as the script's dict holds it: 3 and "3" are two ids there (MM-RLHF's Acc+)
    raw_ids = {r.line: json.dumps(r.data.get(id_field)) for r in rows if r.data is not None}
    if pairs is None:
        own_pair = mmrb_pair if layout == "mmrb" else triplet_pair
        pairs = _own_pairs([rec.row for _, rec in lines_records], own_pair, p, ids)
    pair_by_id = {x.id: x for x in pairs}
    script_ids: dict[str, str] = {}
    out = []
    for (line, rec), pid in zip(lines_records, ids, strict=True):
        pair = pair_by_id.get(pid)
        script_ids.setdefault(pid, raw_ids[line])
        # the side of the pair this row calls chosen, whose reward is rewards[0]
        if pair is None:
            chosen: Side = "first"
        elif layout == "mmrb":
            chosen = rec.row.preferred
        else:
            chosen = _side_of(rec.row.chosen, pair)
        if pair is not None and chosen != pair.preferred:
            doubts.append(_reward_label_doubt(p, line, layout, rec.row, pair))
        out.append(_reward_judgment(pid, chosen, rec))
    pairs = [
        replace(x, metadata={**x.metadata, "script_id": script_ids[x.id]}) if x.id in script_ids else x for x in pairs
    ]
    return JudgmentFile(out, pairs, warnings=tuple(warnings + doubt_summary(doubts)), doubts=tuple(doubts))


def _reward_label_doubt(p: Path, line: int, layout: str, row: Any, pair: EvalPair) -> InputProblem:
    """A row whose chosen response is the dataset pair's rejected one."""
    if layout == "mmrb":
        theirs = "Output1" if pair.preferred == "first" else "Output2"
        return _label_doubt(p, line, "Better", f"Better {row.better}", pair.id, theirs)
    return _label_doubt(p, line, "chosen", "chosen is the dataset's rejected response", pair.id, "the other")


def _reward_judgment(pid: str, chosen: Side, rec: r1_rewards.Rewards[Any]) -> Judgment:
    """A row's rewards as a judgment: right when the chosen response's reward is higher."""
    r_chosen, r_rejected = rec.chosen, rec.rejected
    # NaN is neither higher, lower nor equal: no verdict (the script counts it wrong)
    verdict = (
        chosen
        if r_chosen > r_rejected
        else other(chosen)
        if r_chosen < r_rejected
        else "tie"
        if r_chosen == r_rejected
        else None
    )
    first, second = (r_chosen, r_rejected) if chosen == "first" else (r_rejected, r_chosen)
    return Judgment(
        pair_id=pid,
        order=order_of(chosen),  # the harness shows the chosen one first
        verdict=verdict,
        outcome="parsed" if verdict else "unparsed",
        raw=rec.critic,
        score_first=float(first),
        score_second=float(second),
        extra={"verdict_from": "rewards"},
    )


def _refuse_split_media(p: Path, lines_records: Sequence[tuple[int, Any]]) -> None:
    """MM-RLHF's get_acc.py counts a row's total in the first keyword of its image path (its
    video path when it has no image) but its accuracy in the first keyword of either path:
    a row with both paths whose keywords differ would add to one category's right answers and
    to another's total. Such rows are refused rather than scored a third way."""
    problems = []
    for line, rec in lines_records:
        image, video = rec.row.image, rec.row.video
        if image and video:
            total, right = mm_rlhf.category_of(image, video), mm_rlhf.accuracy_keyword(image, video)
            if total != right:
                problems.append(
                    InputProblem(
                        str(p),
                        line,
                        "video",
                        f"the row has an image path ({image!r}: {total or 'no keyword'}) and a video path "
                        f"({video!r}) whose first keyword differs ({right}): get_acc.py would count it in the "
                        f"total of {total or 'no category'} and the right answers of {right}; give one path",
                    )
                )
    if problems:
        raise InputError(problems)


# -- this project's own JSONL --------------------------------------------------------------
def read_own(p: Path, pairs: Sequence[EvalPair] | None, opts: ReadOptions) -> JudgmentFile:
    if pairs is None:
        raise InputError([InputProblem(str(p), None, None, "mmrb-studio judgments need --dataset")])
    return _with_unknown_pairs(p, JudgmentFile(own.read(p), list(pairs)))


def write_judgments(path: str | Path, judgments: Iterable[Judgment]) -> int:
    """The project's own JSONL (readable back with format ``mmrb-studio``)."""
    return own.write(Path(path), judgments)
