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

One difference by design: a gold value no annotator gave is a class here (crowd-kit adds a
column of missing values for it). Measured on bench/quality.py (3 million labels) and on the
bundled sample: see the note of issue 28.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _m_step(probas, weight, task, cell, seen, n_cells: int):
    """(summed posteriors per (worker, observed) cell and true class, clipped errors)."""
    n_classes = probas.shape[1]
    sums = np.empty((n_cells, n_classes))
    for c in range(n_classes):
        sums[:, c] = np.bincount(cell, weights=weight * probas[task, c], minlength=n_cells)
    errors = np.where(seen[:, None], np.maximum(sums, EPS), 0.0)
    return sums, errors


def _normalise(errors: np.ndarray, n_workers: int, n_classes: int) -> np.ndarray:
    cube = errors.reshape(n_workers, n_classes, n_classes)
    return cube / cube.sum(axis=1, keepdims=True)


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
) -> DawidSkeneFit:
    """Fit the model to labels given as codes: ``task`` in [0, n_tasks), ``worker`` in
    [0, n_workers), ``value`` in [0, n_classes); every task has a label. ``gold``: per task
    the known class, -1 where none."""
    task = np.asarray(task, dtype=np.intp)
    n_labels = len(task)
    n_cells = n_workers * n_classes
    cell = np.asarray(worker, dtype=np.intp) * n_classes + np.asarray(value, dtype=np.intp)
    seen = np.bincount(cell, minlength=n_cells) > 0
    of_task, size, (ptask, pcell, mult) = _patterns(task, cell, n_tasks, n_cells, gold)
    n_pat = len(size)
    pgold = None
    if gold is not None:
        pgold = np.full(n_pat, -1, dtype=np.intp)
        pgold[of_task] = gold
    share = size / n_tasks
    weight = mult * size[ptask]  # a pattern's label stands for this many labels
    counts = np.zeros((n_pat, n_classes))
    np.add.at(counts, (ptask, pcell % n_classes), mult)
    probas = _with_gold(counts / counts.sum(axis=1, keepdims=True), pgold)
    priors = np.maximum(share @ probas, EPS)  # crowd-kit clips them in place before any use
    _, flat = _m_step(probas, weight, ptask, pcell, seen, n_cells)
    errors = _normalise(flat, n_workers, n_classes)
    loss = -np.inf
    done = 0
    for step in range(1, n_iter + 1):
        done = step
        log_err = np.log2(errors, where=errors > 0, out=np.zeros_like(errors)).reshape(n_cells, n_classes)
        log_lik = np.empty((n_pat, n_classes))
        per_label = log_err[pcell]
        for c in range(n_classes):
            log_lik[:, c] = np.bincount(ptask, weights=mult * per_label[:, c], minlength=n_pat)
        log_lik += np.log2(priors)
        scaled = np.exp2(log_lik - log_lik.max(axis=1, keepdims=True))
        probas = _with_gold(scaled / scaled.sum(axis=1, keepdims=True), pgold)
        priors = np.maximum(share @ probas, EPS)
        sums, flat = _m_step(probas, weight, ptask, pcell, seen, n_cells)
        errors = _normalise(flat, n_workers, n_classes)
        # the evidence lower bound from the M-step's sums: sum over labels and classes of
        # P(c) (ln e[w, l, c] + ln prior c), plus the posteriors' entropy
        ln_err = np.log(errors, where=errors > 0, out=np.zeros_like(errors)).reshape(n_cells, n_classes)
        joint = float((sums * ln_err).sum() + sums.sum(axis=0) @ np.log(priors))
        probas = np.maximum(probas, EPS)
        entropy = -float(size @ (probas * np.log(probas)).sum(axis=1))
        new_loss = (joint + entropy) / n_labels
        if new_loss - loss < tol:
            break
        loss = new_loss
    posteriors = probas[of_task]
    return DawidSkeneFit(posteriors, priors, errors, posteriors.argmax(axis=1), done)


__all__ = ["EPS", "DawidSkeneFit", "dawid_skene", "majority_skills", "unique_majority", "vote_counts"]
