"""Dawid-Skene and the majority vote on integer codes: one label a row of three int arrays
(task, worker, value), every step a ``np.bincount``.

Why not crowd-kit's ``DawidSkene`` (which this replaces in the production path; crowd-kit stays
for MACE and as the reference in tests/test_dawid_skene.py): it joins and groups pandas frames
of object labels at every EM step, about 0.2 s a fit even on a few dozen labels plus 1.7 s to
import, and the Quality page fits one model per field and category. This EM is the same model
step for step, so the same numbers (tests hold posteriors, priors, confusion matrices and
reliabilities to crowd-kit's within 1e-6 on seeded random data and on MMRB2's three raters):

- initialisation: the majority vote's shares of each task's labels, gold tasks set to their
  gold value; priors their mean;
- M-step: per worker, observed value l and true value c, the summed posterior of c over the
  worker's labels of l, clipped below at 1e-10 (only the (worker, value) rows the worker
  gave, as crowd-kit's groupby), each true value's column normalised over l;
- E-step in base 2 with the row maximum subtracted, priors clipped below at 1e-10, gold tasks
  set to their gold value again;
- stop after ``n_iter`` steps or once the evidence lower bound per label rises by less than
  ``tol``; the posteriors returned are clipped below at 1e-10, as crowd-kit leaves them.

Tasks with the same labels and gold share their posteriors at every step, so the EM runs on
distinct label patterns (a sparse patterns x (worker, value) matrix of counts) weighted by
the tasks behind each; the bootstrap over pairs (``bootstrap_reliability``) only reweights
the patterns, so all its resamples run as one batched EM, each stopping at its own step.

One difference by design: a gold value no annotator gave is a class here (crowd-kit adds a
column of missing values for it). Measured on bench/quality.py (3 million labels) and on the
bundled sample: see the note of issue 28.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

EPS = 1e-10  # crowd-kit's _EPS: the floor of every probability in the model


@dataclass(frozen=True)
class DawidSkeneFit:
    posteriors: np.ndarray  # (tasks, classes): P(true value | labels)
    priors: np.ndarray  # (classes,)
    errors: np.ndarray  # (workers, observed, true): P(worker gives observed | true); 0 where never given
    labels: np.ndarray  # (tasks,): the most probable class (the first on a tie)
    iterations: int

    def reliability(self) -> np.ndarray:
        """Per worker: the chance of giving the true value, the diagonal of their confusion
        matrix weighted by the priors (a value they never gave contributes 0)."""
        diagonal = np.diagonal(self.errors, axis1=1, axis2=2)
        return np.asarray(diagonal @ self.priors, dtype=float)


def vote_counts(task: np.ndarray, value: np.ndarray, n_tasks: int, n_classes: int) -> np.ndarray:
    """(tasks, classes) label counts."""
    flat = np.bincount(task * n_classes + value, minlength=n_tasks * n_classes)
    return flat.reshape(n_tasks, n_classes)


def unique_majority(counts: np.ndarray) -> np.ndarray:
    """Per task: the unique modal class, else -1 (a tie between values decides nothing)."""
    top = counts.max(axis=1, keepdims=True)
    modal = counts == top
    return np.where(modal.sum(axis=1) == 1, counts.argmax(axis=1), -1)


def majority_skills(
    task: np.ndarray, worker: np.ndarray, value: np.ndarray, counts: np.ndarray, n_workers: int
) -> np.ndarray:
    """Per worker: the share of their labels equal to the majority vote with ties broken by
    the first class, as crowd-kit's MajorityVote.skills_ (one label per worker and task)."""
    voted = counts.argmax(axis=1)
    right = np.bincount(worker, weights=(value == voted[task]).astype(float), minlength=n_workers)
    total = np.bincount(worker, minlength=n_workers)
    with np.errstate(invalid="ignore", divide="ignore"):
        return right / total


def _with_gold(probas: np.ndarray, gold: np.ndarray | None) -> np.ndarray:
    if gold is not None:
        known = gold >= 0
        probas[known] = 0.0
        probas[known, gold[known]] = 1.0
    return probas


DENSE_LIMIT = 5_000_000  # cells of the tasks x (worker, value) count matrix the compression may hold (40 MB)


def _patterns(task, cell, n_tasks: int, n_cells: int, gold: np.ndarray | None):
    """Tasks with the same labels (the same count of each (worker, value)) and the same gold
    have the same posteriors at every step: the EM runs once per distinct pattern, weighted
    by how many tasks share it (3 million labels of 5 annotators hold a few hundred).
    Returns (pattern of each task, tasks per pattern, the patterns' labels as (pattern,
    cell, multiplicity)); over DENSE_LIMIT each task is its own pattern."""
    if n_tasks * n_cells <= DENSE_LIMIT:
        dense = np.bincount(task * (n_cells + 1) + cell, minlength=n_tasks * (n_cells + 1)).reshape(n_tasks, -1)
        dense[:, n_cells] = 0 if gold is None else gold + 1
        # each row as one int64 (mixed radix), ranked again before it could overflow
        key: np.ndarray = np.zeros(n_tasks, dtype=np.int64)
        for column in dense.T:
            base = int(column.max(initial=0)) + 1
            if int(key.max(initial=0)) >= (2**62) // base:
                key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
            key = key * base + column
        _, first, inverse, size = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
        rows = dense[first, :n_cells]
        at, c = np.nonzero(rows)
        return inverse.reshape(-1), size, (at, c, rows[at, c].astype(float))
    return np.arange(n_tasks), np.ones(n_tasks, dtype=np.int64), (task, cell, np.ones(len(task)))


def _last_max(x: np.ndarray) -> np.ndarray:
    """``x.max(axis=-1, keepdims=True)`` as elementwise maxima of the slices: numpy reduces a
    short last axis (the classes) about thirty times slower than it compares whole arrays."""
    out = x[..., 0].copy()
    for c in range(1, x.shape[-1]):
        np.maximum(out, x[..., c], out=out)
    return out[..., None]


def _last_sum(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=-1, keepdims=True)``, bit for bit: below eight values numpy adds a row
    left to right, as these slice additions do (about twenty times faster); from eight on
    its pairwise sum is kept."""
    if x.shape[-1] >= 8:
        return x.sum(axis=-1, keepdims=True)
    out = x[..., 0].copy()
    for c in range(1, x.shape[-1]):
        out += x[..., c]
    return out[..., None]


def _normalise(sums: np.ndarray, seen: np.ndarray, n_workers: int, n_classes: int) -> np.ndarray:
    """Errors from the M-step's sums (replicates, cells, true): clipped below where the cell
    was seen, each true value's column summed to 1 over the worker's observed values (a
    worker absent from a replicate keeps zeros)."""
    clipped = np.where(seen[:, :, None], np.maximum(sums, EPS), 0.0)
    cube = clipped.reshape(len(sums), n_workers, n_classes, n_classes)
    total = cube.sum(axis=2, keepdims=True)
    return np.divide(cube, total, out=np.zeros_like(cube), where=total > 0)


def _em(A, size: np.ndarray, gold: np.ndarray | None, n_workers: int, n_classes: int, n_iter: int, tol: float):
    """The EM over patterns for every replicate at once. ``A``: (patterns, cells) sparse
    multiplicities of each pattern's labels; ``size``: (replicates, patterns) tasks each
    pattern stands for. A replicate stops at its own step (its figures are frozen there),
    as a fit of its own would. Returns (posteriors, priors, errors, steps) per replicate."""
    n_rep, n_pat = size.shape
    n_cells = n_workers * n_classes
    label_mult = np.asarray(A.sum(axis=1)).reshape(-1)  # labels in each pattern
    n_labels = size @ label_mult
    seen = (A.T @ (size > 0).T.astype(float)).T > 0  # (replicates, cells)
    onehot = np.zeros((n_cells, n_classes))
    onehot[np.arange(n_cells), np.arange(n_cells) % n_classes] = 1.0
    counts = A @ onehot
    first = counts / counts.sum(axis=1, keepdims=True)
    if gold is not None:
        first = _with_gold(first, gold)
    probas = np.broadcast_to(first, (n_rep, n_pat, n_classes)).copy()

    def priors_of(pr: np.ndarray, size: np.ndarray) -> np.ndarray:  # crowd-kit clips them in place before any use
        return np.maximum(np.einsum("rp,rpc->rc", size, pr) / size.sum(axis=1, keepdims=True), EPS)

    def m_step(pr: np.ndarray, size: np.ndarray, seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        weighted = (size[:, :, None] * pr).transpose(1, 0, 2).reshape(n_pat, -1)
        sums = np.asarray(A.T @ weighted).reshape(n_cells, len(size), n_classes).transpose(1, 0, 2)
        return sums, _normalise(sums, seen, n_workers, n_classes)

    priors = priors_of(probas, size)
    _, errors = m_step(probas, size, seen)
    loss = np.full(n_rep, -np.inf)
    steps = np.zeros(n_rep, dtype=int)
    # the replicates still running: each step computes only theirs (every operation is row by
    # row, so a replicate's numbers are those of its own fit); one slow replicate no longer
    # keeps two hundred finished ones computing until the step limit
    run = np.arange(n_rep)
    for step in range(1, n_iter + 1):
        k, sz = len(run), size[run]
        flat = errors[run].reshape(k, n_cells, n_classes)
        log_err = np.log2(flat, where=flat > 0, out=np.zeros_like(flat)).transpose(1, 0, 2).reshape(n_cells, -1)
        log_lik = np.asarray(A @ log_err).reshape(n_pat, k, n_classes).transpose(1, 0, 2)
        log_lik = log_lik + np.log2(priors[run])[:, None, :]
        scaled = np.exp2(log_lik - _last_max(log_lik))
        new = scaled / _last_sum(scaled)
        if gold is not None:
            known = gold >= 0
            new[:, known] = 0.0
            new[:, known, gold[known]] = 1.0
        new_priors = priors_of(new, sz)
        sums, new_errors = m_step(new, sz, seen[run])
        # the evidence lower bound from the M-step's sums: sum over labels and classes of
        # P(c) (ln e[w, l, c] + ln prior c), plus the posteriors' entropy
        flat = new_errors.reshape(k, n_cells, n_classes)
        ln_err = np.log(flat, where=flat > 0, out=np.zeros_like(flat))
        joint = (sums * ln_err).sum(axis=(1, 2)) + np.einsum("rc,rc->r", sums.sum(axis=1), np.log(new_priors))
        new = np.maximum(new, EPS)
        entropy = -np.einsum("rp,rp->r", sz, _last_sum(new * np.log(new))[..., 0])
        new_loss = (joint + entropy) / n_labels[run]
        probas[run], priors[run], errors[run] = new, new_priors, new_errors
        steps[run] = step
        going = ~(new_loss - loss[run] < tol)
        loss[run] = new_loss
        run = run[going]
        if not len(run):
            break
    return probas, priors, errors, steps


def _patterns_matrix(task, cell, n_tasks: int, n_cells: int, gold: np.ndarray | None):
    """(pattern of each task, tasks per pattern, sparse (patterns, cells) multiplicities, gold per pattern)."""
    from scipy.sparse import csr_matrix  # deferred: only a fit needs it

    of_task, size, (ptask, pcell, mult) = _patterns(task, cell, n_tasks, n_cells, gold)
    A = csr_matrix((mult, (ptask, pcell)), shape=(len(size), n_cells))
    pgold = None
    if gold is not None:
        pgold = np.full(len(size), -1, dtype=np.intp)
        pgold[of_task] = gold
    return of_task, size, A, pgold


@dataclass(frozen=True)
class LabelPatterns:
    """Labels as their distinct patterns (:func:`_patterns_matrix`): made once, a fit and
    the bootstrap of its labels share them (a field of 200,000 pairs: 0.04 s each time)."""

    of_task: np.ndarray  # pattern of each task
    size: np.ndarray  # tasks per pattern
    matrix: Any  # scipy.sparse csr (patterns, worker x value cells) of multiplicities
    gold: np.ndarray | None  # gold class per pattern, -1 where none


def label_patterns(
    task: np.ndarray,
    worker: np.ndarray,
    value: np.ndarray,
    *,
    n_tasks: int,
    n_workers: int,
    n_classes: int,
    gold: np.ndarray | None = None,
) -> LabelPatterns:
    """The patterns of labels given as :func:`dawid_skene` takes them."""
    task = np.asarray(task, dtype=np.intp)
    cell = np.asarray(worker, dtype=np.intp) * n_classes + np.asarray(value, dtype=np.intp)
    return LabelPatterns(*_patterns_matrix(task, cell, n_tasks, n_workers * n_classes, gold))


def dawid_skene(
    task: np.ndarray,
    worker: np.ndarray,
    value: np.ndarray,
    *,
    n_tasks: int,
    n_workers: int,
    n_classes: int,
    gold: np.ndarray | None = None,
    n_iter: int = 100,
    tol: float = 1e-5,
    patterns: LabelPatterns | None = None,
) -> DawidSkeneFit:
    """Fit the model to labels given as codes: ``task`` in [0, n_tasks), ``worker`` in
    [0, n_workers), ``value`` in [0, n_classes); every task has a label. ``gold``: per task
    the known class, -1 where none. ``patterns``: :func:`label_patterns` of these labels,
    when the caller has made them."""
    shape = {"n_tasks": n_tasks, "n_workers": n_workers, "n_classes": n_classes}
    p = patterns or label_patterns(task, worker, value, **shape, gold=gold)
    probas, priors, errors, steps = _em(
        p.matrix, p.size[None, :].astype(float), p.gold, n_workers, n_classes, n_iter, tol
    )
    posteriors = probas[0][p.of_task]
    return DawidSkeneFit(posteriors, priors[0], errors[0], posteriors.argmax(axis=1), int(steps[0]))


def bootstrap_reliability(
    task: np.ndarray,
    worker: np.ndarray,
    value: np.ndarray,
    *,
    n_tasks: int,
    n_workers: int,
    n_classes: int,
    gold: np.ndarray | None = None,
    resamples: int = 200,
    seed: int = 0,
    n_iter: int = 100,
    tol: float = 1e-5,
    patterns: LabelPatterns | None = None,
) -> np.ndarray:
    """(resamples, workers) reliabilities of fits to the tasks resampled with replacement
    (the bootstrap over pairs: a task drawn k times counts k times), NaN where a worker has
    no label in a resample. All resamples run as one batched EM over the label patterns, and
    each draws its patterns' counts, not its tasks."""
    shape = {"n_tasks": n_tasks, "n_workers": n_workers, "n_classes": n_classes}
    p = patterns or label_patterns(task, worker, value, **shape, gold=gold)
    size, A, pgold = p.size, p.matrix, p.gold
    # A resample draws n_tasks tasks with replacement; the fit sees only how many of each
    # pattern it holds, and those counts are multinomial over the patterns with each one's
    # share of the tasks. Drawn so, a resample costs a draw per pattern, not per task (200
    # resamples of 200,000 tasks: 2 s a field before; the same distribution, other draws).
    rng = np.random.default_rng(seed)
    sizes = rng.multinomial(n_tasks, size / n_tasks, size=resamples).astype(float)  # (resamples, patterns)
    _, priors, errors, _ = _em(A, sizes, pgold, n_workers, n_classes, n_iter, tol)
    diagonal = np.diagonal(errors, axis1=2, axis2=3)  # (resamples, workers, classes)
    out = np.einsum("rwc,rc->rw", diagonal, priors)
    present = (A.T @ (sizes > 0).T.astype(float)).T.reshape(resamples, n_workers, n_classes).sum(axis=2) > 0
    return np.where(present, out, np.nan)


__all__ = [
    "EPS",
    "DawidSkeneFit",
    "LabelPatterns",
    "bootstrap_reliability",
    "dawid_skene",
    "label_patterns",
    "majority_skills",
    "unique_majority",
    "vote_counts",
]
