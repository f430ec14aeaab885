"""Parameter choice by K-fold cross-validation on the training part (paper section 5.1).

Works on precomputed matrices: a fold fits on D[fit][:, fit] and predicts
D[val][:, fit]. Folds are stratified and shuffled with a seed derived from
(seed, dataset, split); a class with fewer than K members gets fewer folds
(``fold_count``), which the evaluation records. The estimator's fast-path
protocol (``hlm.base._classifiers.FastPathMixin``) runs the grid: all folds at once
through its ``predict_folds`` where it supports that (k-NN: no fit matrix
sliced per fold), else each fold through its ``predict_grid`` (shared work
across the grid, tested equal to one refit per point; the default is one
refit per point, as for any scikit-learn classifier without the protocol).
The chosen grid point has the lowest mean CV error; ties go to the earlier
grid point (grids are listed simplest first).

With ``n_jobs > 1`` the folds run in that many worker processes (joblib's
loky backend; ``predict_folds`` runs in this process); every fit is seeded by
its estimator's ``random_state``, not by the worker, so the errors are
identical for any ``n_jobs``.
"""

from __future__ import annotations

import json
import re
import threading
import warnings

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import get_tags

from hlm.base._classifiers import FastPathMixin, grid_predictions
from hlm.errors import HLMError


def make_folds(y: np.ndarray, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(fit, validation) index pairs, stratified; see ``fold_count`` for how many."""
    y = np.asarray(y)
    if (y.ndim == 1 and y.dtype.kind in "USiu" and len(y) >= 2 and isinstance(seed, (int, np.integer))
            and isinstance(n_folds, (int, np.integer)) and n_folds >= 2):  # same folds; else sklearn checks
        _, first, inverse, counts = np.unique(y, return_index=True, return_inverse=True, return_counts=True)
        n_used = int(min(n_folds, len(y), max(int(counts.min()), 2)))  # fold_count
        if counts.min() >= n_used:
            return _stratified_folds(first, inverse, n_used, seed)
    n_used = fold_count(y, n_folds)
    _, counts = np.unique(y, return_counts=True)
    if counts.min() >= n_used:
        splitter = StratifiedKFold(n_used, shuffle=True, random_state=seed)
    else:  # a singleton class cannot be spread over 2 folds
        splitter = KFold(n_used, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(y)), y))


def _stratified_folds(y_idx: np.ndarray, y_inv: np.ndarray, n_splits: int, seed: int):
    """``list(StratifiedKFold(n_splits, shuffle=True, random_state=seed).split(X, y))`` without its input
    checks, from ``np.unique(y, return_index=True, return_inverse=True)[1:]`` (1-D labels, every
    class with >= n_splits members): scikit-learn 1.9's ``_make_test_folds`` step by step, tested equal."""
    _, class_perm = np.unique(y_idx, return_inverse=True)
    y_encoded = class_perm[y_inv]  # classes numbered by first appearance
    n_classes = len(y_idx)
    y_order = np.sort(y_encoded)
    allocation = np.asarray([np.bincount(y_order[i::n_splits], minlength=n_classes) for i in range(n_splits)])
    test_folds = np.empty(len(y_inv), dtype="i")
    with _RNG_LOCK:  # one RandomState re-seeded: the stream of RandomState(seed), without its set-up cost
        _RNG.seed(seed)
        for k in range(n_classes):
            folds_for_class = np.arange(n_splits).repeat(allocation[:, k])
            _RNG.shuffle(folds_for_class)
            test_folds[y_encoded == k] = folds_for_class
    indices = np.arange(len(y_inv))
    return [(indices[test_folds != i], indices[test_folds == i]) for i in range(n_splits)]


_RNG = np.random.RandomState(0)
_RNG_LOCK = threading.Lock()


def fold_count(y: np.ndarray, n_folds: int) -> int:
    """The folds a CV on labels y gets: ``n_folds``, fewer when a class has fewer members.

    A class with m < n_folds members gets max(m, 2) folds (so every fold can hold
    one of its members, stratified); never more folds than objects.
    """
    y = np.asarray(y)
    if len(y) < 2:
        return len(y)
    _, counts = np.unique(y, return_counts=True)
    return int(min(n_folds, len(y), max(int(counts.min()), 2)))


def grid_point_fits(params: dict, n_fit: int) -> bool:
    """Neighbourhood sizes at or above the fit-set size are dropped (k-NN grids)."""
    k = next((v for name, v in params.items() if name.rsplit("__", 1)[-1] == "n_neighbors"), None)
    return k is None or k < n_fit


def cv_errors(estimator, D: np.ndarray, y: np.ndarray, grid: list[dict], folds, n_jobs: int = 1) -> np.ndarray:
    """Validation error rate for every (grid point, fold).

    A grid point the data cannot support on a fold (e.g. so many HLM
    components that no cluster is large enough to estimate from) scores an
    infinite error there instead of stopping the run.
    """
    fast = _all_folds_errors(estimator, D, y, grid, folds)
    if fast is not None:
        return fast
    if n_jobs > 1 and len(folds) > 1:
        from joblib import Parallel, delayed

        columns = Parallel(n_jobs=min(n_jobs, len(folds)), backend="loky")(
            delayed(_fold_errors)(estimator, D, y, grid, fit, val) for fit, val in folds
        )
    else:
        columns = [_fold_errors(estimator, D, y, grid, fit, val) for fit, val in folds]
    return np.column_stack(columns) if columns else np.empty((len(grid), 0))


def _all_folds_errors(estimator, D, y, grid, folds) -> np.ndarray | None:
    """The errors from the estimator's ``predict_folds`` (all folds in one call), or None where it
    declines (returns None or raises ``HLMError``; see ``FastPathMixin``). Runs in this process
    for any ``n_jobs``."""
    if not folds or not isinstance(estimator, FastPathMixin):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as in _fold_errors
        try:
            per_fold = estimator.predict_folds(D, y, folds, grid)
        except HLMError:
            return None
    if per_fold is None:
        return None
    return np.column_stack([_errors(predictions, y[val]) for (_, val), predictions in zip(folds, per_fold)])


def _errors(predictions, y_val: np.ndarray) -> np.ndarray:
    """Error rate of each grid point's predictions (inf for None); a 2-D array: one row per point."""
    if isinstance(predictions, np.ndarray) and predictions.ndim == 2:
        return np.mean(predictions != y_val[None, :], axis=1, dtype=np.float64)
    return np.array([np.inf if p is None else np.mean(p != y_val) for p in predictions], dtype=np.float64)


def _fold_errors(estimator, D, y, grid, fit, val) -> np.ndarray:
    """Validation error of every grid point on one fold (``grid_predictions``: the estimator's
    ``predict_grid``, or one refit per point where it declines; an estimator's ``predict_fold``, which reads
    its fold from the whole training matrix, where it has one and does not decline)."""
    pairwise = get_tags(estimator).input_tags.pairwise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fold-level warnings would repeat the final fit's
        fold_path = pairwise and isinstance(estimator, FastPathMixin)
        try:
            predictions = estimator.predict_fold(D, y, fit, val, grid) if fold_path else None
        except HLMError:  # declines, as predict_folds's HLMError does
            predictions = None
        if predictions is None:
            if pairwise:
                D_fit, D_val = D[np.ix_(fit, fit)], D[np.ix_(val, fit)]
            else:  # feature vectors
                D_fit, D_val = D[fit], D[val]
            predictions = grid_predictions(estimator, D_fit, y[fit], D_val, grid)
    return _errors(predictions, y[val])


def grid_key(params: dict) -> str:
    """A grid point as the JSON text the evaluation records its CV error under (``cv_error``)."""
    return json.dumps({re.sub(r"^(?:estimator__)+", "", k): v for k, v in params.items()}, sort_keys=True)


def select_params(
    estimator, D, y, grid: list[dict], folds, n_jobs: int = 1, known: dict[str, float] | None = None,
    rule: str = "min",
) -> tuple[dict, list[dict], np.ndarray]:
    """Best grid point by mean CV error (ties: the earlier one).

    ``rule="one_se"``: the earliest grid point whose mean CV error is within one standard error
    of the lowest (the SE over that point's folds; Breiman et al. 1984, the "one-standard-error
    rule"), for grids listed from the reference setting outward; no ``known`` errors then.

    Grid points that do not fit the smallest fold's training part are dropped
    first. ``known`` maps ``grid_key`` of some grid points to their mean CV error
    on these same folds (recorded by an earlier evaluation, see
    hlm.pipeline.evaluation.reuse); only the other points are cross-validated. Returns
    (best params, the grid actually searched, mean error per searched point;
    empty when there was nothing to choose).
    """
    n_fit = min(len(fit) for fit, _ in folds) if folds else len(y)
    searched = [p for p in grid if grid_point_fits(p, n_fit)] or grid[:1]
    if len(searched) <= 1:
        return (dict(searched[0]) if searched else {}), searched, np.zeros(0)
    known = known or {}
    if rule == "one_se":
        if known:
            raise ValueError("select_params: the one-standard-error rule needs every fold's error, not known means")
        errors = cv_errors(estimator, D, y, searched, folds, n_jobs)
        means = _fold_means(errors)
        return dict(searched[one_se_choice(errors, means)]), searched, means
    keys = [grid_key(p) for p in searched]
    todo = [p for p, key in zip(searched, keys) if key not in known]
    computed = iter(_fold_means(cv_errors(estimator, D, y, todo, folds, n_jobs))) if todo else iter(())
    means = np.array([known[key] if key in known else next(computed) for key in keys], dtype=np.float64)
    return dict(searched[int(np.argmin(means))]), searched, means


def one_se_choice(errors: np.ndarray, means: np.ndarray) -> int:
    """Index of the first grid point whose mean error is at most the lowest mean plus its standard error
    (sd over the usable folds / sqrt(their number)); the lowest point itself when it is infinite."""
    best = int(np.argmin(means))
    usable = np.isfinite(errors).any(axis=0)
    row = errors[best, usable] if usable.any() else errors[best]
    if not np.isfinite(means[best]) or row.size < 2:
        return best
    se = float(np.std(row, ddof=1) / np.sqrt(row.size))
    return int(np.flatnonzero(means <= means[best] + se)[0])


def _fold_means(errors: np.ndarray) -> np.ndarray:
    """Mean CV error per grid point over the folds where some grid point could be fitted.

    A fold on which every point fails (infinite error: e.g. its fit part has a single
    class, when a singleton class sits in its validation part) says nothing about the
    grid, and would make every mean infinite; it is left out, with a warning.
    """
    usable = np.isfinite(errors).any(axis=0)
    if usable.all() or not usable.any():
        return errors.mean(axis=1)
    warnings.warn(f"CV: {int((~usable).sum())} of {usable.size} folds could not fit any grid point "
                  "(e.g. a single class in the fit part); the choice uses the other folds", UserWarning,
                  stacklevel=3)
    return errors[:, usable].mean(axis=1)
