"""Pull the annotations of a pushed project back into the store as Labels.

Results are read by ``from_name`` and ``type`` only (Label Studio's UI and its SDK write
``to_name`` differently for some tags). Sides go back to the canonical first/second through
the ``left`` recorded in each task by push. Everything is checked before anything is
written; the writes are one transaction, so an error leaves the store as it was.

A Label Studio user becomes the annotator named by their e-mail (created on first sight).
Cancelled (skipped) annotations are not labels: they are counted and reported. A label the
same person made in the annotation app is never overwritten (reported as a conflict).
Pulling again rewrites only labels whose content changed in Label Studio, through
``store.save_label`` so the earlier version stays in the label history.

Annotation schemes (curate/schemes.py): a pair's annotation is read into its scheme's fields
(mmrb's exactly as before schemes). Each control's result is the field's value on screen (a
choice, a scale point, a Rating's star as the scale's point, a text), ``stored_values`` with
the task's left side makes it stored terms (a side-naming choice and a pairwise scale are
mirrored as in the app), and ``to_label`` the label, under the pair's scheme version. An
annotation missing a required field, or holding a value its scheme does not know, is a
problem named by task, field and value: reported with the others, and nothing is written.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from curate.errors import MmrbError
from curate.model import SIDES, Label, Preference, Side
from curate.schemes import BUILT_IN, DEFAULT, Scheme, SchemeField, missing, schemes_of, stored_values, to_label
from curate.sides import preference_from_screen, shown_pair, stored_pair
from curate.store import Store
from curate.wording import plural

from .client import Client
from .config import (
    CONTROLS,
    CORRECTNESS_CHOICES,
    FLAG_CHOICES,
    PREFERENCE_CHOICES,
    Control,
    config_problems,
    scheme_controls,
)
from .push import Progress, config_changed_message, config_scheme, instructions_html, known_schemes, scheme_name
from .shown_guidelines import version_at

SOURCE = "labelstudio"
_COMPARED = (
    "correctness_first",
    "correctness_second",
    "preference",
    "rationale",
    "flag",
    "flag_note",
    "seconds",
    "status",
    "ratings",
    "scheme_version",
)


@dataclass
class PullResult:
    project_id: int
    annotations: int = 0  # read from Label Studio, cancelled included
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    cancelled: list[tuple[str, str]] = field(default_factory=list)  # (pair id, annotator)
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # labels from the app, kept
    superseded: int = 0  # older annotations by the same user on the same task
    annotators_created: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # "export" (Label Studio), "store" (ours)

    def as_dict(self) -> dict[str, object]:
        """The pull's figures as its text reports them (`mmrb labelstudio pull --json`): its
        timings (the bench's) left out."""

        def named(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
            return [{"pair_id": p, "annotator": a} for p, a in pairs]

        figures = {k: v for k, v in asdict(self).items() if k != "seconds"}
        return {**figures, "cancelled": named(self.cancelled), "conflicts": named(self.conflicts)}


class AnnotationProblem(MmrbError):
    def __init__(self, title: str, problems: list[str]):
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(
            f"{plural(len(problems), 'problem')} in the annotations of Label Studio project {title!r}, "
            f"nothing was written:\n{shown}{more}"
        )


def _ts(value: str | None) -> str | None:
    if not value:
        return None
    d = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d.astimezone(UTC).isoformat(timespec="microseconds")


def annotator_name(user: Any, user_id: int | None) -> str:
    email = getattr(user, "email", None) if user is not None else None
    return email or f"labelstudio-user-{user_id}"


def _results(
    result: list, controls: Mapping[str, Control], where: str, problems: list[str]
) -> Iterator[tuple[str, Control, dict]]:
    """An annotation's results that answer a control of the config, each control once; any
    other result is a problem (added to ``problems``), named by its place and control."""
    seen: set[str] = set()
    for n, r in enumerate(result):
        name, rtype = r.get("from_name"), r.get("type")
        control = controls.get(name) if isinstance(name, str) else None
        if control is None:
            problems.append(f"{where}: result {n} has an unexpected from_name {name!r} (type {rtype!r})")
        elif rtype != control.result_type:
            problems.append(f"{where}: result {n} ({name}) has type {rtype!r}, expected {control.result_type!r}")
        elif name in seen:
            problems.append(f"{where}: more than one result for {name!r}")
        else:
            seen.add(name)
            yield name, control, r


def convert(annotation: dict, task: dict, annotator: str, where: str) -> tuple[Label | None, list[str]]:
    """One Label Studio annotation -> a Label in canonical terms, or the problems found.
    The task has passed ``_task_problems``: its ``left`` is first or second."""
    data = task.get("data") or {}
    left: Side = data["left"]
    problems: list[str] = []
    values: dict[str, Any] = {}
    for name, control, r in _results(annotation.get("result") or [], CONTROLS, where, problems):
        value = r.get("value") or {}
        if control.result_type == "choices":
            got = value.get("choices")
            if not isinstance(got, list) or len(got) != 1 or got[0] not in control.choices:
                problems.append(f"{where}: {name} has choices {got!r}, expected one of {list(control.choices)}")
                continue
            values[name] = got[0]
        else:
            got = value.get("text")
            if isinstance(got, str):
                got = [got]
            if not isinstance(got, list) or not all(isinstance(t, str) for t in got):
                problems.append(f"{where}: {name} has text {got!r}, expected a list of strings")
                continue
            values[name] = "\n".join(got).strip()
    if problems:
        return None, problems

    # response A is on the left, B on the right
    a, b = (CORRECTNESS_CHOICES[values[c]] if c in values else None for c in ("correct_a", "correct_b"))
    correctness_first, correctness_second = stored_pair(a, b, left)
    pref = values.get("preference")
    lead = annotation.get("lead_time")
    label = Label(
        pair_id=data["pair_id"],
        annotator=annotator,
        correctness_first=correctness_first,
        correctness_second=correctness_second,
        preference=preference_from_screen(PREFERENCE_CHOICES[pref] if pref is not None else None, left),
        rationale=values.get("rationale", ""),
        flag=FLAG_CHOICES[values["flag"]] if "flag" in values else None,
        flag_note=values.get("flag_note", ""),
        seconds=round(float(lead), 3) if isinstance(lead, (int, float)) else None,
        status="submitted",
        source=SOURCE,
        created_at=_ts(annotation.get("created_at")),
        updated_at=_ts(annotation.get("updated_at")),
    )
    return label, []


def _result_value(control: Control, f: SchemeField | None, r: dict, where: str) -> tuple[Any, str | None]:
    """One result of a scheme's control -> (its field's value on screen, None), or (None, the
    problem: task, field and value). A choice of a scale is its point, a side-naming choice
    left / right / tie, a Rating's n-th star the scale's n-th point; a multi-select a list."""
    value = r.get("value") or {}
    name = control.name
    if control.tag == "TextArea":
        got = value.get("text")
        if isinstance(got, str):
            got = [got]
        if not isinstance(got, list) or not all(isinstance(t, str) for t in got):
            return None, f"{where}: field {name} has text {got!r}, expected a list of strings"
        return "\n".join(got).strip(), None
    if control.tag == "Rating":
        got = value.get("rating")
        if isinstance(got, bool) or not isinstance(got, int) or not 1 <= got <= control.points:
            return None, f"{where}: field {name} has rating {got!r}, expected 1 to {control.points}"
        assert f is not None
        return f.low + got - 1, None
    got = value.get("choices")
    multi = f is not None and f.kind == "multi"
    ok = isinstance(got, list) and all(c in control.choices for c in got) and (len(got) == 1 or multi and got)
    if not ok:
        return None, f"{where}: field {name} has choices {got!r}, expected {'some' if multi else 'one'} of " + str(
            list(control.choices)
        )
    assert isinstance(got, list)
    if f is None:  # the flag
        return got[0], None
    if multi:
        return [c for c in control.choices if c in got], None  # in the scheme's order
    if f.kind == "scale":
        return f.low + control.choices.index(got[0]), None
    if f.sides:
        return PREFERENCE_CHOICES[got[0]], None  # A / B / Tie: left / right / tie
    return got[0], None


@functools.lru_cache(maxsize=64)
def _form(scheme: Scheme) -> tuple[dict[str, Control], dict[str, tuple[SchemeField | None, int | None]]]:
    """A scheme's controls, and the field (and side: 0 left, 1 right) each one answers; made
    once per scheme, not once per annotation."""
    owner: dict[str, tuple[SchemeField | None, int | None]] = {}
    for sf in scheme.fields:
        if sf.per_response:
            owner[f"{sf.name}_a"], owner[f"{sf.name}_b"] = (sf, 0), (sf, 1)
        else:
            owner[sf.name] = (sf, None)
    return scheme_controls(scheme), owner


def scheme_screen_values(scheme: Scheme, result: list, where: str) -> tuple[dict[str, Any], list[str]]:
    """An annotation's results -> the scheme's fields as shown (a per-response field: (left,
    right)) and the flag's, or the problems found."""
    controls, owner = _form(scheme)
    problems: list[str] = []
    shown: dict[str, Any] = {}
    halves: dict[str, list[Any]] = {}
    for _, control, r in _results(result, controls, where, problems):
        f, half = owner.get(control.name, (None, None))
        value, problem = _result_value(control, f, r, where)
        if problem is not None:
            problems.append(problem)
        elif f is None or half is None:
            shown[control.name] = value
        else:
            halves.setdefault(f.name, [None, None])[half] = value
    shown |= {name: tuple(pair) for name, pair in halves.items()}
    return shown, problems


def convert_scheme(
    annotation: dict, task: dict, annotator: str, where: str, scheme: Scheme, scheme_version: int | None
) -> tuple[Label | None, list[str]]:
    """One annotation of a task of ``scheme`` (not mmrb: ``convert``) -> a Label in stored
    terms, or the problems found (a required field without an answer, a value the scheme does
    not know): never a label made of half the fields."""
    data = task.get("data") or {}
    left: Side = data["left"]
    shown, problems = scheme_screen_values(scheme, annotation.get("result") or [], where)
    if problems:
        return None, problems
    flag, note = shown.pop("flag", None), shown.pop("flag_note", "")
    values = stored_values(scheme, shown, left)
    for name in missing(scheme, values):
        got = values.get(name)
        problems.append(f"{where}: field {name} is required but has {'no answer' if got is None else repr(got)}")
    if problems:
        return None, problems
    lead = annotation.get("lead_time")
    return to_label(
        scheme,
        data["pair_id"],
        annotator,
        values,
        proposal=task_proposal(data),
        flag=FLAG_CHOICES[flag] if flag is not None else None,
        flag_note=note,
        seconds=round(float(lead), 3) if isinstance(lead, (int, float)) else None,
        status="submitted",
        source=SOURCE,
        created_at=_ts(annotation.get("created_at")),
        updated_at=_ts(annotation.get("updated_at")),
        scheme_version=scheme_version,
    ), []


def task_proposal(data: dict) -> Preference | None:
    """The judges' proposal a verify task showed (A / B / Tie), in stored terms; None if it
    showed none: the label records what the annotator agreed with."""
    screen = PREFERENCE_CHOICES.get(data.get("proposal") or "")
    return preference_from_screen(screen, data["left"]) if screen is not None else None


def task_scheme(data: dict) -> tuple[str, int | None]:
    """The scheme a task was pushed under: (name, version); a task without one is mmrb's."""
    v = data.get("scheme_version")
    return str(data.get("scheme") or DEFAULT), v if isinstance(v, int) else None


def _task_problems(task: dict, pairs: dict, schemes: dict[str, Scheme] | None = None) -> list[str]:
    data = task.get("data") or {}
    where = f"task {task.get('id')}"
    pid = data.get("pair_id")
    if not pid or data.get("left") not in SIDES:
        return [f"{where}: its data has no pair_id/left: it was not pushed by mmrb labelstudio push"]
    pair = pairs.get(pid)
    if pair is None:
        return [f"{where}: pair {pid!r} is not in this store (wrong --db?)"]
    if (data.get("left_id"), data.get("right_id")) != shown_pair(pair.first_id, pair.second_id, data["left"]):
        return [
            f"{where}: pair {pid!r} now holds responses {pair.first_id!r}/{pair.second_id!r}, but the task shows "
            f"{data.get('left_id')!r}/{data.get('right_id')!r}"
        ]
    scheme = (schemes or {}).get(pid, BUILT_IN[DEFAULT])
    name, version = task_scheme(data)
    if name != scheme.name or (version is not None and version != scheme.version):
        pushed = f"{name!r}" + (f" version {version}" if version is not None else "")
        return [
            f"{where}: pair {pid!r} is now on scheme {scheme_name(scheme)}, but its task was pushed under scheme "
            f"{pushed}: push the pair into a new project to label it on its scheme"
        ]
    return []


def _check_config(project: Any, title: str, tasks: list[dict], schemes: dict[str, Scheme], store: Store) -> None:
    """The project's config is its tasks' scheme's (cosmetic edits aside); a project without
    tasks of a known pair: any known scheme's. Else it was changed by hand: refused."""
    xml = project.label_config or ""
    of_tasks = {}
    for t in tasks:
        pid = (t.get("data") or {}).get("pair_id")
        s = schemes.get(pid) if isinstance(pid, str) else None
        if s is not None and s.name == task_scheme(t["data"])[0]:
            of_tasks[(s.name, s.version)] = s
    if not of_tasks:
        if config_scheme(xml, known_schemes(store)) is None:
            raise MmrbError(config_changed_message(title, project.id, config_problems(xml)))
        return
    for s in of_tasks.values():
        problems = config_problems(xml, s)
        if problems:
            raise MmrbError(config_changed_message(title, project.id, problems))


def find_project(client: Client, title: str):
    found = client.projects_titled(title)
    if not found:
        raise MmrbError(f"Label Studio at {client.url} has no project titled {title!r} (push to it first)")
    if len(found) > 1:
        raise MmrbError(
            f"{len(found)} Label Studio projects are titled {title!r} (ids {', '.join(str(p.id) for p in found)})"
        )
    return client.get_project(found[0].id)


def pull(store: Store, client: Client, title: str, *, progress: Progress | None = None) -> PullResult:
    """``progress(what, done, total)``: the export (one request: 0 then 1 of 1), the tasks
    read, then the labels written."""
    client.check()
    project = find_project(client, title)
    t0 = time.perf_counter()
    if progress:
        progress("exporting tasks", 0, 1)
    tasks = client.export_json(project.id)
    users = client.users()
    if progress:
        progress("exporting tasks", 1, 1)
    result = PullResult(project.id)
    t1 = time.perf_counter()
    result.seconds["export"] = t1 - t0

    pair_ids = sorted({pid for t in tasks if (pid := (t.get("data") or {}).get("pair_id")) is not None})
    pairs = {}
    for n in range(0, len(pair_ids), 500):
        pairs.update({p.id: p for p in store.pairs(ids=pair_ids[n : n + 500])})
    schemes = schemes_of(store, list(pairs))
    _check_config(project, title, tasks, schemes, store)

    shown_version = version_at(store, client, project.id, project.expert_instruction or "", instructions_html)
    problems = []
    latest: dict[tuple[str, str], tuple[str, Label]] = {}
    for n, task in enumerate(tasks, 1):
        if progress:
            progress("tasks read", n, len(tasks))
        anns = task.get("annotations") or []
        if not anns:
            continue
        tp = _task_problems(task, pairs, schemes)
        if tp:
            problems += tp
            continue
        for ann in anns:
            result.annotations += 1
            by = ann.get("completed_by")
            uid = by.get("id") if isinstance(by, dict) else by
            name = annotator_name(users.get(uid) if uid is not None else None, uid)
            if ann.get("was_cancelled"):
                result.cancelled.append((task["data"]["pair_id"], name))
                continue
            where = f"task {task.get('id')} (pair {task['data']['pair_id']}), annotation {ann.get('id')} by {name}"
            scheme = schemes.get(task["data"]["pair_id"], BUILT_IN[DEFAULT])
            if scheme.name == DEFAULT:
                label, ps = convert(ann, task, name, where)
            else:
                version = pairs[task["data"]["pair_id"]].scheme_version
                label, ps = convert_scheme(ann, task, name, where, scheme, version)
            if label is None:
                problems += ps
                continue
            label = replace(label, guidelines_version=shown_version(label.created_at))
            key = (label.pair_id, name)
            stamp = label.updated_at or ""
            if key in latest:
                result.superseded += 1
                if latest[key][0] >= stamp:
                    continue
            latest[key] = (stamp, label)
    if problems:
        raise AnnotationProblem(title, problems)

    current = {(lb.pair_id, lb.annotator): lb for lb in store.labels(status=None)}
    known = {a.name for a in store.annotators()}
    queued = {(a.pair_id, a.annotator) for a in store.assignments()}
    fresh: list[Label] = []
    with store.write() as conn:
        for n, ((pair_id, name), (_, label)) in enumerate(sorted(latest.items()), 1):
            if progress:
                progress("labels compared", n, len(latest))
            if name not in known:
                store.ensure_annotator(name, conn=conn)
                known.add(name)
                result.annotators_created.append(name)
            cur = current.get((pair_id, name))
            if cur is None:
                if (pair_id, name) in queued:  # also in their app queue: save_label closes it
                    store.save_label(label, conn=conn)
                else:
                    fresh.append(label)
                result.new += 1
            elif cur.source != SOURCE:
                result.conflicts.append((pair_id, name))
            elif all(getattr(cur, f) == getattr(label, f) for f in _COMPARED):
                result.unchanged += 1
            else:
                store.save_label(label, expected_revision=cur.revision, conn=conn)
                result.updated += 1
        store.add_labels(fresh, conn=conn)  # one bulk insert for the common case
    result.seconds["store"] = time.perf_counter() - t1
    return result
