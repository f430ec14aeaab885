"""Kernel HLM's CV over the distance transform and the scale factor, every fold at once.

``kernel_hlm_cv`` (docs/beyond-the-paper-spec.md sections 1-2) predicts each
CV fold at every (``to_distance``, c) point. ``DistanceTransform.predict_folds``
hands such a grid here; what the points and folds share is computed once:

- one copy of the training relation with its rows grouped by fold and its
  columns by (class, fold), so that a validation row's fit columns of class k
  are class k's block less its own fold's group;
- each object's nearest object in every (class, fold) group. The candidates
  are monotone maps of the relation, so the nearest fit object of the same
  class (u_i, section 3.2) is the same under each; a candidate maps only its
  value;
- per candidate, one pass of exponentials over all folds' rows (each with its
  fold's S-bar, floor and b-hat), at the largest c of the grid: a c half as
  large squares every kernel term, exp(-x / c) = exp(-x / 2c)^2 (x = u - min u
  over the class, so the largest term is 1);
  a compiled kernel squares and sums each term for up to 9 factors in one
  pass (``_chain_sums``).

The class scores are those of ``KernelHLM._log_scores`` (eq. 1 and 6) less
what all classes share (s log(pi b), log pi_k - log n_k = -log n); they equal
one refit per point up to rounding (below 1e-12: the sum order, and the
squarings, which multiply a term's relative error by at most 2^8), and so do
the decisions (tests/test_grid_paths.py, tests/test_distance_transform.py).
Only two classes whose scores are equal in exact arithmetic (tied similarities)
can go either way: rounding decides, here as in a refit, whose own decision
for such an object changes with the batch it is predicted in (numpy's sum
order). Measured in docs/performance.md. Memory: three n x n float64 arrays
(the copy, u, the terms).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.base import clone

from hlm.distances._transform import transform
from hlm.errors import DataError


def predict_transform_folds(wrapper, R: np.ndarray, y, folds, groups: dict, facts) -> list | None:
    """Per fold, the predictions at every grid point (``FastPathMixin.predict_folds``), for a
    ``DistanceTransform`` around a ``KernelHLM``; None (decline) for a grid with other inner
    parameters than ``scale_factor`` or folds that do not partition the objects.

    ``groups``: ``{to_distance: [(grid index, inner params), ...]}``; ``facts``: the whole relation's
    ``_Facts`` (None for distances).
    """
    n = len(R)
    if any(set(inner) - {"scale_factor"} for points in groups.values() for _, inner in points):
        return None
    fold_of = np.full(n, -1)
    for f, (_, val) in enumerate(folds):
        if np.any(fold_of[val] >= 0):
            return None
        fold_of[val] = f
    if np.any(fold_of < 0) or any(not np.array_equal(np.bincount(fit, minlength=n), fold_of != f)
                                  for f, (fit, _) in enumerate(folds)):
        return None  # each fit set must be exactly the objects outside its fold
    inner = wrapper.estimator
    inner._validate_params()
    factors = {to_distance: [params.get("scale_factor", inner.scale_factor) for _, params in points]
               for to_distance, points in groups.items()}
    for c in {c for values in factors.values() for c in values}:
        clone(inner).set_params(scale_factor=c)._validate_params()  # the errors a refit raises
    classes, y_idx = np.unique(np.asarray(y), return_inverse=True)
    shared = _Shared(np.asarray(R), y_idx, fold_of, len(folds), len(classes), wrapper.relation)
    out = [[None] * sum(len(p) for p in groups.values()) for _ in folds]
    rank = np.empty(n, dtype=np.intp)  # each object's place among its fold's rows in ``_Shared``
    rank[shared.rows] = np.arange(n) - shared.row_starts[fold_of[shared.rows]]
    for to_distance, points in groups.items():
        fold = clone(wrapper).set_params(to_distance=to_distance)  # its constants: each fold's in turn
        model = clone(inner).set_params(scale_factor=1.0)  # refitted on each fold in turn
        fitted, constants = _fit_folds(fold, model, shared, R, folds, fold_of, y_idx, classes, facts)
        if not fitted.any():
            continue
        values = [float(c) for c in factors[to_distance]]
        winners = _winners(shared, constants, model.squared, to_distance, wrapper.relation, values)
        for f, (_, val) in enumerate(folds):
            if fitted[f]:
                rows = shared.row_starts[f] + rank[val]
                for (g, _), c in zip(points, values):
                    out[f][g] = classes[winners[c][rows]]
    return out


class _Shared:
    """The relation with its rows grouped by fold and its columns by (class, fold), each row's nearest
    entry per column group (diagonal left out), and the row, group and class ranges."""

    def __init__(self, R: np.ndarray, y_idx: np.ndarray, fold_of: np.ndarray, n_folds: int, n_classes: int,
                 relation: str):
        self.similarity = relation == "similarity"
        key = y_idx * n_folds + fold_of
        order = np.argsort(key, kind="stable")
        rows = np.argsort(fold_of, kind="stable")
        self.R = np.take(np.take(R, rows, axis=0), order, axis=1)
        position = np.empty(len(R), dtype=np.intp)
        position[order] = np.arange(len(R))
        far = -np.inf if self.similarity else np.inf
        self.R[np.arange(len(R)), position[rows]] = far  # the diagonal; a row's own fold masks it anyway
        self.row_starts = np.searchsorted(fold_of[rows], np.arange(n_folds + 1))
        self.rows = rows  # original index of each row (ascending within its fold)
        keys = key[order]
        self.starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        self.ends = np.r_[self.starts[1:], len(keys)]
        self.group_class, self.group_fold = keys[self.starts] // n_folds, keys[self.starts] % n_folds
        near = np.maximum if self.similarity else np.minimum
        self.nearest = np.empty((len(R), len(self.starts)))
        self.nearest[rows] = near.reduceat(self.R, self.starts, axis=1)  # original row order
        self.class_starts = np.searchsorted(keys, np.arange(n_classes + 1) * n_folds)[:-1]
        self.far = far

    def fold_rows(self, f: int) -> slice:
        return slice(self.row_starts[f], self.row_starts[f + 1])


def _u(values: np.ndarray, to_distance: str, relation: str, bound, floor, squared: bool, fit: bool) -> np.ndarray:
    """Kernel HLM's u of relation values under a transform with constants S-bar and floor (scalars, or
    one per row as a column): D^2, or D unsquared (fit: sqrt(D)^2), by ``KernelHLM.fit``'s and
    ``_test_u``'s arithmetic."""
    u = transform(values, to_distance, relation, bound, floor)  # a new array
    if squared:
        return np.square(u, out=u)
    if fit:
        np.sqrt(u, out=u)
        np.square(u, out=u)
    return u


def _fit_folds(fold, model, shared: _Shared, R, folds, fold_of, y_idx, classes: np.ndarray, facts):
    """Fit ``model`` (the inner Kernel HLM at scale factor 1) on each fold's fit set in turn, from each
    fit object's nearest same-class fit object (its group extremes outside the fold). Returns which folds
    fitted (a refit raising: not), and per row of ``shared`` its fold's S-bar and floor (columns), b-hat
    and the classes of its fit set."""
    n_folds, n_classes = len(folds), len(classes)
    constants = np.full((n_folds, 3), np.nan)  # S-bar, floor, b-hat
    present = np.zeros((n_folds, n_classes), dtype=bool)
    for f, (fit, _) in enumerate(folds):
        counts = np.bincount(y_idx[fit], minlength=n_classes)
        if np.count_nonzero(counts) < 2:
            continue  # a one-class fit set: no fit (None at every point)
        try:
            fold._fold_constants(R, fit, fold_of != f, facts)
            own = (shared.group_class[None, :] == y_idx[fit][:, None]) & (shared.group_fold != f)[None, :]
            near = (np.max if shared.similarity else np.min)(np.where(own, shared.nearest[fit], shared.far),
                                                            axis=1)
            u = _u(near, fold.to_distance, fold.relation, fold.bound_, fold.floor_, model.squared, fit=True)
            u[np.isinf(near)] = np.inf  # no other object of its class in the fit set
            kept, y_fit = np.unique(y_idx[fit], return_inverse=True)
            model.classes_ = classes[kept]  # named in its warnings
            model._fit_u(u, y_fit)
        except DataError:
            continue  # as a refit that raises: None
        constants[f], present[f] = (fold.bound_, fold.floor_, model.scale_), counts > 0
    row_fold = np.repeat(np.arange(n_folds), np.diff(shared.row_starts))
    rows = constants[row_fold]
    return ~np.isnan(constants[:, 2]), (rows[:, :1], rows[:, 1:2], rows[:, 2], present[row_fold])


def _winners(shared: _Shared, constants: tuple, squared: bool, to_distance: str, relation: str,
             factors: list[float]) -> dict[float, np.ndarray]:
    """{c: class index predicted for each row of ``shared`` with b = c * b-hat of the row's fold} (rows of
    folds that did not fit: arbitrary): the argmax of eq. 6's numerator, log pi_k + log (1/n_k) sum_i
    phi~(z; z_i) (eq. 1), less what all classes share. ``constants``: from ``_fit_folds``."""
    bound, floor, b_hat, present = constants
    u = _u(shared.R, to_distance, relation, bound, floor, squared, fit=False)
    for f in range(len(shared.row_starts) - 1):
        rows = shared.fold_rows(f)
        for s, e in zip(shared.starts[shared.group_fold == f], shared.ends[shared.group_fold == f]):
            u[rows, s:e] = np.inf  # the row's own fold is not in its fit set
    ends = np.r_[shared.class_starts[1:], u.shape[1]]
    mins = np.zeros((len(u), len(ends)))
    for k in range(len(ends)):
        block = u[:, shared.class_starts[k] : ends[k]]
        np.min(block, axis=1, out=mins[:, k], where=present[:, k : k + 1], initial=np.inf)
        np.subtract(block, mins[:, k : k + 1], out=block, where=present[:, k : k + 1])
    # x = u - min u: 0 at each class's nearest; a class absent from the row's fit set stays inf (terms 0)
    winners = {}
    sums = np.empty((_LEVELS, len(u), len(ends)))
    for run in _halving_runs(factors):
        terms = np.multiply(u, (-1.0 / (run[0] * b_hat))[:, None])
        np.exp(terms, out=terms)
        _chain_sums(terms, shared.class_starts, ends, sums)
        b = np.array(run)[:, None, None] * b_hat[None, :, None]
        with np.errstate(divide="ignore", invalid="ignore"):  # an absent class: log 0 - inf; unfitted rows
            scores = np.log(sums[: len(run)]) - mins[None] / b
        for c, best in zip(run, np.argmax(scores, axis=2)):
            winners[c] = best
    return winners


#: scale factors one exponential serves: c, c/2, ..., c/2^(_LEVELS - 1) (``_chain_sums`` is unrolled)
_LEVELS = 9


def _halving_runs(factors: list[float]) -> list[list[float]]:
    """Distinct ``factors`` cut into runs of at most ``_LEVELS``, each factor half the one before (those of
    one mantissa together: 4, 3, 2, 1.5, 1 gives [4, 2, 1] and [3, 1.5])."""
    runs: list[list[float]] = []
    for c in sorted(set(factors), key=lambda c: (np.frexp(c)[0], -c)):
        if runs and len(runs[-1]) < _LEVELS and runs[-1][-1] == 2.0 * c:
            runs[-1].append(c)
        else:
            runs.append([c])
    return runs


@njit(cache=True)
def _chain_sums(E, starts, ends, out):
    """``out[l, r, k] = sum_j E[r, j] ** (2 ** l)`` over columns ``starts[k] <= j < ends[k]``, l < 9, by
    repeated squaring: exp(-x / c)^2 = exp(-x / (c / 2)). One pass over E, the sums in registers."""
    for r in range(E.shape[0]):
        for k in range(starts.shape[0]):
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s8 = 0.0
            for j in range(starts[k], ends[k]):
                t = E[r, j]
                s0 += t
                t *= t
                s1 += t
                t *= t
                s2 += t
                t *= t
                s3 += t
                t *= t
                s4 += t
                t *= t
                s5 += t
                t *= t
                s6 += t
                t *= t
                s7 += t
                t *= t
                s8 += t
            out[0, r, k], out[1, r, k], out[2, r, k] = s0, s1, s2
            out[3, r, k], out[4, r, k], out[5, r, k] = s3, s4, s5
            out[6, r, k], out[7, r, k], out[8, r, k] = s6, s7, s8


def warm_up() -> None:
    """Load the compiled kernel (``KernelHLM._warm_up``)."""
    _chain_sums(np.ones((1, 2)), np.array([0, 1]), np.array([1, 2]), np.empty((_LEVELS, 1, 2)))
