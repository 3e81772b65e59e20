"""Reading precomputed judgments, so a judge's saved outputs score without calling it.

Formats:

- ``mmrb``: Multimodal RewardBench judge outputs, JSONL ``ID, Label, output`` (or
  ``outputs`` for several samples) and ``Meta.Category``; the verdict is read with the
  ``[[A]]``/``[[B]]`` parser; the rows also carry the labels, so no dataset is needed.
- ``mmrb2``: MMRB2 judgements, ``{pair_id: {"forward": [{"judgement": "A"|"B"}], "reverse":
  [...]}}``; scored against the ``chosen`` of the ground-truth files (``--dataset``). A
  reverse judgement names the responses as shown, so "A" there is ``response_b``.
- ``vlrewardbench``: VL-RewardBench inference records (``meta.filter_choice``,
  ``meta.random_number``, ``meta.flag_status``, ``ranking``, ``image_path``), one per
  sample; the verdict is re-read from ``filter_choice`` as cal.py does (reparse=True), or
  taken from ``flag_status`` with ``trust_flag``. The records carry the labels.
- ``mmrb-studio``: this project's judgments as JSONL (one stored ``judgments`` row per line).
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from curate.errors import InputError, InputProblem
from curate.judging.parsing import parse_brackets, vlrb_answer_number
from curate.judging.records import OUTCOMES, Judgment, to_canonical

from .datasets import _read_layout, iter_records, vlrb_group, vlrb_key
from .records import EvalPair

FORMATS = ("mmrb", "mmrb2", "vlrewardbench", "mmrb-studio")
# formats whose rows carry the labels themselves
SELF_LABELLED = ("mmrb", "vlrewardbench")


def read_judgments(
    path: str | Path,
    fmt: str,
    pairs: Sequence[EvalPair] | None = None,
    *,
    vlrb_k: int | None = None,
    trust_flag: bool = False,
) -> tuple[list[Judgment], list[EvalPair]]:
    """(judgments in file order, the pairs they are scored against).

    ``pairs`` is the dataset; formats that carry labels build it from the file when None.
    """
    p = Path(path)
    if not p.exists():
        raise InputError([InputProblem(str(p), None, None, "file not found")])
    if fmt == "mmrb":
        return _read_mmrb(p, pairs)
    if fmt == "mmrb2":
        if pairs is None:
            raise InputError([InputProblem(str(p), None, None, "MMRB2 judgements need --dataset (the ground-truth files)")])
        return _read_mmrb2(p, pairs), list(pairs)
    if fmt == "vlrewardbench":
        return _read_vlrb(p, pairs, vlrb_k, trust_flag)
    if fmt == "mmrb-studio":
        if pairs is None:
            raise InputError([InputProblem(str(p), None, None, "mmrb-studio judgments need --dataset")])
        return _read_own(p), list(pairs)
    raise InputError([InputProblem(str(p), None, None, f"unknown judgment format {fmt!r}: use one of {', '.join(FORMATS)}")])


def _renamer(ids: list[str]):
    """The dataset reader's rule for repeated ids: id#0, id#1, ... in file order."""
    counts = Counter(ids)
    seen: Counter = Counter()

    def rename(i: str) -> str:
        if counts[i] <= 1:
            return i
        out = f"{i}#{seen[i]}"
        seen[i] += 1
        return out

    return rename


def _read_mmrb(p: Path, pairs: Sequence[EvalPair] | None) -> tuple[list[Judgment], list[EvalPair]]:
    rows = list(iter_records(p))
    problems: list[InputProblem] = []
    for line, rec in rows:
        if not isinstance(rec, dict) or "ID" not in rec:
            problems.append(InputProblem(str(p), line, "ID", "missing"))
        elif not isinstance(rec.get("output", rec.get("outputs")), (str, list)):
            problems.append(InputProblem(str(p), line, "output", "missing (a judge output string)"))
    if problems:
        raise InputError(problems)
    own = None
    if pairs is None:
        own = _read_layout("mmrb_outputs", rows, p, problems)
        if problems:
            raise InputError(problems)
    ids = _ids_again(rows)
    judgments = []
    for (_, rec), pid in zip(rows, ids):
        outs = rec["outputs"] if "outputs" in rec and "output" not in rec else [rec["output"]]
        for i, text in enumerate(outs):
            parsed = parse_brackets(str(text))
            judgments.append(
                Judgment(
                    pair_id=pid,
                    order="forward",  # Output1 is always A: the official run never shuffles
                    sample_index=i,
                    verdict=to_canonical(parsed.shown, "forward"),
                    outcome=parsed.outcome,
                    raw=str(text),
                )
            )
    if own is not None:
        return judgments, [replace(x, id=pid) for x, pid in zip(own, ids)]
    return judgments, list(pairs)


def _ids_again(rows) -> list[str]:
    rename = _renamer([str(rec["ID"]) for _, rec in rows])
    return [rename(str(rec["ID"])) for _, rec in rows]


def _read_mmrb2(p: Path, pairs: Sequence[EvalPair]) -> list[Judgment]:
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError([InputProblem(str(p), e.lineno, None, f"invalid JSON: {e.msg}")]) from None
    if not isinstance(data, dict):
        raise InputError([InputProblem(str(p), None, None, "expected an object from pair id to {forward, reverse}")])
    out = []
    for pid, pred in data.items():
        if not isinstance(pred, dict):
            raise InputError([InputProblem(str(p), None, pid, "expected {forward: [...], reverse: [...]}")])
        for order in ("forward", "reverse"):
            entries = pred.get(order) or []
            for i, e in enumerate(entries):
                j = e.get("judgement") if isinstance(e, dict) else None
                if not j:  # compute_accuracy.py skips a missing or empty judgement
                    out.append(Judgment(pid, order, i, None, "unparsed", raw=json.dumps(e)))
                elif j in ("A", "B"):
                    out.append(Judgment(pid, order, i, to_canonical(j, order), "parsed", raw=json.dumps(e)))
                else:  # counted but never equal to the ground truth
                    out.append(Judgment(pid, order, i, "tie", "parsed", raw=json.dumps(e)))
    return out


def _vlrb_shuffle(data: list, rng: random.Random) -> list:
    # cal.py's shuffle_data (not a Fisher-Yates), reproduced for its k-cap.
    data = list(data)
    for i in range(len(data)):
        j = rng.randint(0, len(data) - 1)
        data[i], data[j] = data[j], data[i]
    return data


def _read_vlrb(p: Path, pairs: Sequence[EvalPair] | None, k: int | None, trust_flag: bool):
    rows = [(line, rec) for line, rec in iter_records(p)]
    recs = []
    problems = []
    for line, rec in rows:
        if isinstance(rec, dict) and "0" in rec and "id" not in rec:
            rec = rec["0"]
        if rec is None:
            continue
        meta = rec.get("meta") if isinstance(rec, dict) else None
        need = ("id", "query", "response", "ranking")
        miss = [f for f in need if not isinstance(rec, dict) or f not in rec]
        if not miss and not isinstance(meta, dict):
            miss = ["meta"]
        if not miss and "random_number" not in meta:
            miss = ["meta.random_number"]
        if not miss and not trust_flag and "filter_choice" not in meta:
            miss = ["meta.filter_choice"]
        if not miss and trust_flag and "flag_status" not in meta:
            miss = ["meta.flag_status"]
        if miss:
            problems.append(InputProblem(str(p), line, miss[0], "missing"))
            continue
        if sorted(rec["ranking"]) != [0, 1]:
            problems.append(InputProblem(str(p), line, "ranking", f"must be [0, 1] or [1, 0], not {rec['ranking']!r}"))
            continue
        recs.append(rec)
    if problems:
        raise InputError(problems)
    if k is not None:
        recs = _vlrb_shuffle(recs, random.Random(1234))

    # pairs from the records: one per distinct key, in first-seen order
    keys: dict[str, dict] = {}
    for rec in recs:
        keys.setdefault(vlrb_key(rec), rec)
    rename = _renamer([str(r["id"]) for r in keys.values()])
    id_of_key = {key: rename(str(r["id"])) for key, r in keys.items()}
    if pairs is None:
        pairs = [
            EvalPair(
                id=id_of_key[key],
                prompt=str(r["query"]),
                first=str(r["response"][0]),
                second=str(r["response"][1]),
                label="first" if r["ranking"].index(0) == 0 else "second",
                category=vlrb_group(r.get("image_path", "")) or "all",
                source="vlrewardbench",
                metadata={"vlrb_key": key},
            )
            for key, r in keys.items()
        ]
    else:
        by_key = {x.metadata.get("vlrb_key"): x.id for x in pairs if x.metadata.get("vlrb_key")}
        if by_key:
            id_of_key = {key: by_key.get(key, id_of_key[key]) for key in keys}

    seen: Counter = Counter()
    out = []
    for rec in recs:
        key = vlrb_key(rec)
        if k is not None and seen[key] >= k:
            continue
        i = seen[key]
        seen[key] += 1
        rn = rec["meta"]["random_number"]
        order = "forward" if rn == 0 else "reverse"
        ranking = rec["ranking"]
        chosen = "first" if ranking.index(0) == 0 else "second"
        rejected = "second" if chosen == "first" else "first"
        text = rec["meta"].get("filter_choice")
        if trust_flag:
            status = rec["meta"]["flag_status"]
        else:
            n = vlrb_answer_number(str(text or ""))
            rejected_shown = ranking.index(1 if rn == 0 else 0) + 1
            status = "doesntMatch" if n is None else "reject" if n == rejected_shown else "agree"
        # "agree" is any answer number but the rejected one's, as cal.py counts it
        verdict = {"agree": chosen, "reject": rejected}.get(status)
        out.append(
            Judgment(
                pair_id=id_of_key[key],
                order=order,
                sample_index=i,
                verdict=verdict,
                outcome="parsed" if verdict else "unparsed",
                raw=text,
                prompt=str(rec["meta"].get("filter_prompt", "")),
            )
        )
    return out, list(pairs)


def _read_own(p: Path) -> list[Judgment]:
    out = []
    problems = []
    for line, rec in iter_records(p):
        if not isinstance(rec, dict) or "pair_id" not in rec:
            problems.append(InputProblem(str(p), line, "pair_id", "missing"))
            continue
        if rec.get("outcome", "parsed") not in OUTCOMES:
            problems.append(InputProblem(str(p), line, "outcome", f"must be one of {', '.join(OUTCOMES)}"))
            continue
        if rec.get("order", "forward") not in ("forward", "reverse"):
            problems.append(InputProblem(str(p), line, "order", "must be forward or reverse"))
            continue
        if rec.get("verdict") not in (None, "first", "second", "tie"):
            problems.append(InputProblem(str(p), line, "verdict", "must be first, second, tie or null"))
            continue
        fields = {k: rec[k] for k in Judgment.__dataclass_fields__ if k in rec and k != "extra"}
        out.append(Judgment(**fields))
    if problems:
        raise InputError(problems)
    return out


def write_judgments(path: str | Path, judgments: Iterable[Judgment]) -> int:
    """The project's own JSONL (readable back with format ``mmrb-studio``); written to a
    temporary file first so a failure leaves no half-written output."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as f:
        for j in judgments:
            d = asdict(j)
            d.pop("extra", None)
            f.write(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
    tmp.replace(p)
    return n
