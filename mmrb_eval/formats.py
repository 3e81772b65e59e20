"""Precomputed judgments, so a judge's saved outputs score without calling it.

The files are read by ``curate.formats`` (one module per format); this module turns their
records into Judgments in stored terms and the pairs they are scored against. Formats:

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
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate.errors import InputError, InputProblem
from curate.formats import detect_layout, mmrb, mmrb2, r1_rewards, triplets
from curate.formats import judgments as own
from curate.formats import vlrewardbench as vlrb
from curate.formats.fields import Fields, checked, parse_rows
from curate.formats.reader import load_rows
from curate.judging.parsing import parse_brackets, vlrb_answer_number
from curate.judging.records import Judgment
from curate.model import Side
from curate.sides import copy_order, order_of, other, shown_order, verdict_from_letter
from curate.wording import plural

from .datasets import first_record, judge_output_pair, mmrb_pair, renamed, triplet_pair, unique_ids
from .records import EvalPair
from .rules import source_id

FORMATS = ("mmrb", "mmrb2", "vlrewardbench", "r1-rewards", "mmrb-studio")
# formats whose rows carry the labels themselves
SELF_LABELLED = ("mmrb", "vlrewardbench", "r1-rewards")

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
    """A file of judgments. ``pairs`` is the dataset; formats that carry labels build it
    from the file when None."""
    p = Path(path)
    if not p.exists():
        raise InputError([InputProblem(str(p), None, None, "file not found")])
    if fmt == "mmrb":
        return _read_mmrb(p, pairs)
    if fmt == "mmrb2":
        if pairs is None:
            raise InputError(
                [InputProblem(str(p), None, None, "MMRB2 judgements need --dataset (the ground-truth files)")]
            )
        return _read_mmrb2(p, list(pairs))
    if fmt == "vlrewardbench":
        if vlrb_k is not None and vlrb_k < 1:
            raise InputError([InputProblem(str(p), None, None, "the VL-RewardBench k must be at least 1")])
        return _read_vlrb(p, pairs, vlrb_k, trust_flag)
    if fmt == "r1-rewards":
        return _read_rewards(p, pairs)
    if fmt == "mmrb-studio":
        if pairs is None:
            raise InputError([InputProblem(str(p), None, None, "mmrb-studio judgments need --dataset")])
        return JudgmentFile(own.read(p), list(pairs))
    raise InputError(
        [InputProblem(str(p), None, None, f"unknown judgment format {fmt!r}: use one of {', '.join(FORMATS)}")]
    )


def _own_pairs(records: list, to_pair: Callable[[Any, Path], EvalPair], p: Path, ids: list[str]) -> list[EvalPair]:
    """The pairs a self-labelled file describes, under the file's (de-duplicated) ids."""
    own_pairs = [to_pair(rec, p) for rec in records]
    return [x if x.id == new else renamed(x, new) for x, new in zip(own_pairs, ids, strict=True)]


# -- Multimodal RewardBench ------------------------------------------------------------------
def _read_mmrb(p: Path, pairs: Sequence[EvalPair] | None) -> JudgmentFile:
    labelled = pairs is None

    def parse(f: Fields) -> mmrb.MmrbJudgeOutput | None:
        # labelled: the file's categories are what is reported
        return mmrb.parse_output(f, labelled=labelled, reported=labelled)

    records = [rec for _, rec in parse_rows(p, load_rows(p), parse)]
    ids = unique_ids([rec.id for rec in records])
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
    return JudgmentFile(judgments, list(pairs))


# -- MMRB2 ---------------------------------------------------------------------------------
def _read_mmrb2(p: Path, pairs: list[EvalPair]) -> JudgmentFile:
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
    return JudgmentFile(out, pairs, frozenset(listed))


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


def _inference_records(p: Path, trust_flag: bool) -> list[vlrb.VlrbInference | None]:
    """The records in file order, null ones kept (cal.py shuffles them too, then skips them)."""
    data: list[vlrb.VlrbInference | None] = []
    problems: list[InputProblem] = []
    for row in load_rows(p, nulls=True):
        rec = vlrb.unwrap_inference(row.data)
        if rec is None:
            data.append(None)
        elif not isinstance(rec, dict):
            problems.append(InputProblem(str(p), row.line, None, "not a JSON object"))
        else:
            f = checked(p, row.line, rec)
            data.append(vlrb.parse_inference(f, trust_flag=trust_flag) if not f.problems else None)
            problems += f.problems
    if problems:
        raise InputError(problems)
    return data


def _read_vlrb(p: Path, pairs: Sequence[EvalPair] | None, k: int | None, trust_flag: bool) -> JudgmentFile:
    data = _inference_records(p, trust_flag)
    warnings: list[str] = []
    if trust_flag:
        odd = sum(1 for r in data if r is not None and r.flag_status not in ("agree", "reject", "doesntMatch"))
        if odd:
            warnings.append(
                f"{odd} records whose flag_status is not agree, reject or doesntMatch are ignored, as cal.py does"
            )
    # pairs from the records: one per distinct key (cal.py's id + query + responses), first
    # seen in the file
    first: dict[str, vlrb.VlrbInference] = {}
    for rec in data:
        if rec is not None:
            first.setdefault(rec.key, rec)
    own_ids = dict(zip(first, unique_ids([r.id for r in first.values()]), strict=True))
    if pairs is None:
        pairs = [
            EvalPair(
                id=own_ids[key],
                prompt=r.query,
                first=r.response[0],
                second=r.response[1],
                preferred=r.preferred,
                category=vlrb.group_of(r.id),
                source="vlrewardbench",
                metadata={"vlrb_key": key, "source_id": r.id},
            )
            for key, r in first.items()
        ]
        target = own_ids
    else:
        target, mismatched = _match_vlrb(first, own_ids, pairs)
        if mismatched:
            warnings.append(
                f"the responses of {plural(mismatched, 'item')} differ from the dataset pair of the same id: "
                "check that the records and --dataset are the same benchmark copy"
            )
    pair_by_id = {x.id: x for x in pairs}

    if k is not None:
        data = cal_order(data, k)
    seen: Counter = Counter()
    out = []
    for rec in (r for r in data if r is not None):
        key = rec.key
        if trust_flag:
            status = rec.flag_status
            if status not in ("agree", "reject", "doesntMatch"):
                continue
        else:
            n = vlrb_answer_number(rec.filter_choice or "")
            rejected_shown = rec.ranking.index(1 if rec.random_number == 0 else 0) + 1  # cal.py's own arithmetic
            status = "doesntMatch" if n is None else "reject" if n == rejected_shown else "agree"
        if k is not None and seen[key] >= k:
            continue
        i = seen[key]
        seen[key] += 1
        pid = target[key]
        pair = pair_by_id.get(pid)
        preferred: Side = pair.preferred if pair else rec.preferred
        # the record lists the pair's responses in its own order (both list the chosen one
        # where they say), and cal.py shows that list in rec.shown order
        order = shown_order(copy_order(preferred, rec.preferred), rec.shown)
        # "agree" is any answer number but the rejected one's, as cal.py counts it
        verdict = {"agree": preferred, "reject": other(preferred)}.get(status)
        out.append(
            Judgment(
                pair_id=pid,
                order=order,
                sample_index=i,
                verdict=verdict,
                outcome="parsed" if verdict else "unparsed",
                raw=rec.filter_choice,
                prompt=rec.filter_prompt,
                extra={"verdict_from": "flag_status"} if trust_flag else {},
            )
        )
    return JudgmentFile(out, list(pairs), warnings=tuple(warnings))


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
            hit = same_id[0] if len(same_id) == 1 else f"(not in the dataset) {own_ids[key]}"
        target[key] = hit
    return target, mismatched


# -- R1-Reward ----------------------------------------------------------------------------
def _read_rewards(p: Path, pairs: Sequence[EvalPair] | None) -> JudgmentFile:
    rows = load_rows(p)
    first_row = first_record(p, rows)
    layout = detect_layout(first_row.data, p)
    if layout not in ("mmrb", "triplet"):
        raise InputError(
            [
                InputProblem(
                    str(p),
                    first_row.line,
                    None,
                    "R1-Reward rows are Multimodal RewardBench rows "
                    "(ID, Output1, Output2, Better, Category) or triplets (id, prompt, chosen, rejected)",
                )
            ]
        )
    labelled = pairs is None and layout == "mmrb"

    def parse_row(f: Fields) -> Any:
        if layout == "triplet":
            return triplets.parse(f)
        return mmrb.parse(f, reported=labelled)  # labelled: the file's categories are what is reported

    records = [rec for _, rec in parse_rows(p, rows, lambda f: r1_rewards.parse(f, parse_row))]
    ids = unique_ids([rec.row.id for rec in records])
    if pairs is None:
        pairs = _own_pairs([rec.row for rec in records], mmrb_pair if layout == "mmrb" else triplet_pair, p, ids)
    preferred_of = {x.id: x.preferred for x in pairs}
    out = []
    for rec, pid in zip(records, ids, strict=True):
        r_chosen, r_rejected = rec.chosen, rec.rejected
        chosen = preferred_of.get(pid, "first")
        rejected = other(chosen)
        # NaN is neither higher, lower nor equal: no verdict (the script counts it wrong)
        verdict = (
            chosen
            if r_chosen > r_rejected
            else rejected
            if r_chosen < r_rejected
            else "tie"
            if r_chosen == r_rejected
            else None
        )
        first, second = (r_chosen, r_rejected) if chosen == "first" else (r_rejected, r_chosen)
        out.append(
            Judgment(
                pair_id=pid,
                order=order_of(chosen),  # the harness shows the chosen one first
                verdict=verdict,
                outcome="parsed" if verdict else "unparsed",
                raw=rec.critic,
                score_first=float(first),
                score_second=float(second),
                extra={"verdict_from": "rewards"},
            )
        )
    warnings = []
    both = sum(1 for rec in records if layout == "triplet" and rec.row.image and rec.row.video)
    if both:
        warnings.append(f"{both} rows have both an image and a video path: grouped by the image")
    return JudgmentFile(out, list(pairs), warnings=tuple(warnings))


# -- this project's own JSONL --------------------------------------------------------------
def write_judgments(path: str | Path, judgments: Iterable[Judgment]) -> int:
    """The project's own JSONL (readable back with format ``mmrb-studio``)."""
    return own.write(Path(path), judgments)
