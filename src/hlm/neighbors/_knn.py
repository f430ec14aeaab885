"""k-nearest-neighbour classification on precomputed distances (paper section 5.1, item 5).

Neighbours are ranked by (distance, training index), a stable order. A vote
tie between classes goes to the class with the larger prior; if still tied,
to the tied class that owns the highest-ranked neighbour (spec section 5).

The ranking and the vote run in compiled kernels: one scan per row keeps the
candidates for the largest k (``_row_candidates``), which are cut down to each
smaller k by selection; no row is fully sorted (``_grid_winners_rows``). ``predict_folds``
is the CV path: every fold and every k from the whole training matrix, without
slicing a fit matrix per fold; it equals ``predict_grid`` per fold and one
refit per grid point (tests/test_models.py).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numba import njit
from sklearn.base import clone
from sklearn.utils._param_validation import Interval

from hlm._numba_cache import cache_depends_on
from hlm.base._classifiers import _INF_BITS, PrecomputedClassifier, _all_valid, fit_classes

cache_depends_on(__name__, "hlm.base._classifiers")  # _row_candidates reads _INF_BITS


class KNNClassifier(PrecomputedClassifier):
    """Majority vote among the ``n_neighbors`` closest training objects (compared-methods spec §6.1).

    The k-NN of the HLM paper's comparison (Qiao & Li, section 5.1, item 5; Tables 2-3), on precomputed
    distances: y^ = argmax_g sum_{i in N_k(x)} 1[y_i = g]. Neighbours are ranked by (distance, training
    index), a stable order. A vote tie between classes goes to the class with the larger prior; if still
    tied, to the tied class that owns the highest-ranked neighbour (spec §5).

    Parameters
    ----------
    n_neighbors : int, default=1
        k; capped at the number of fitted objects.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels of the fit set, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The fit-set prior pi_g = n_g / n, which breaks vote ties.
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    AffinityKNN, KRIKNN, KRRKNN : Weighted k-NN votes on similarities (spec §6.2-6.4).

    Examples
    --------
    Two well separated Gaussian blobs, Euclidean distances:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.neighbors import KNNClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> model = KNNClassifier(n_neighbors=3).fit(cdist(X, X), y)
    >>> print(model.predict(cdist(X_test, X)))
    [0 1]

    All 3 votes for one class, Laplace-corrected: (3 + 1) / (3 + 2) = 0.8.

    >>> print(model.predict_proba(cdist(X_test, X)).round(2))
    [[0.8 0.2]
     [0.2 0.8]]
    """

    _parameter_constraints = {"n_neighbors": [Interval(Integral, 1, None, closed="left")]}

    _path_params = ("n_neighbors",)  # one ranking serves every k (``predict_grid``, ``predict_folds``)

    def __init__(self, n_neighbors: int = 1):
        self.n_neighbors = n_neighbors

    def fit(self, D, y):
        """Check the fit set and keep its labels and class sizes (the votes need nothing else).

        Parameters
        ----------
        D : array-like of shape (n_samples, n_samples)
            ``D_train_train``: the distances among the training objects (finite, >= 0).
        y : array-like of shape (n_samples,)
            The training labels, at least 2 classes.

        Returns
        -------
        self : KNNClassifier
            The fitted estimator.
        """
        self._validate_params()
        D, self._y_idx = self._check_fit_input(D, y)
        self._class_counts = np.bincount(self._y_idx, minlength=len(self.classes_))
        return self

    def _neighbours(self, D) -> np.ndarray:
        k = min(int(self.n_neighbors), D.shape[1])
        return _ranked(D, np.arange(D.shape[0]), k)

    def _grid_ks(self, grid: list[dict]) -> list[int]:
        """k of every grid point, each validated as ``set_params(**p)`` would be (same errors)."""
        ks = []
        for p in grid:
            k = p.get("n_neighbors", self.n_neighbors)
            if not (isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 1):
                clone(self).set_params(n_neighbors=k)._validate_params()  # raises the usual error
            ks.append(int(k))
        return ks

    def predict_grid(self, D_fit, y, D_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: one ranking of the fit set, the votes of every k from its
        prefixes (equal to refitting per grid point, tested).

        Parameters
        ----------
        D_fit : array-like of shape (n_fit, n_fit)
            The fold's fit distances.
        y : array-like of shape (n_fit,)
            The fold's fit labels.
        D_val : array-like of shape (n_val, n_fit)
            Distances from the validation objects to the fit objects.
        grid : list of dict
            ``set_params`` dicts; a point may leave out ``n_neighbors`` (the estimator's own value holds).

        Returns
        -------
        predictions : list of ndarray of shape (n_val,)
            The labels ``clone(self).set_params(**point).fit(D_fit, y).predict(D_val)`` of every grid point.
        """
        if any(set(p) - {"n_neighbors"} for p in grid):
            return super().predict_grid(D_fit, y, D_val, grid)
        self._validate_params()
        ks = self._grid_ks(grid)
        model = clone(self).fit(D_fit, y)
        if not ks:
            return []
        D = model._check_predict_input(D_val)
        return list(model.classes_[_all_fitted(D, model._y_idx, model._class_counts, ks)])

    def predict_folds(self, D, y, folds, grid: list[dict]) -> list[np.ndarray] | None:
        """CV path: ``[predict_grid(D[fit][:, fit], y[fit], D[val][:, fit], grid) for fit, val in folds]``,
        each fold's as an array (grid point x validation object).

        Works on the whole training matrix ``D`` (rows and columns: the training
        objects): each validation row is ranked against its fold's fit columns
        only, by training index within the fit set, so no fit matrix is sliced.
        Returns None (use the per-fold path) for grids with other parameters, a
        subclass with its own ``predict``, fit sets empty, of one class or not in
        increasing order, or a matrix the per-fold fits would reject.

        Parameters
        ----------
        D : array-like of shape (n_samples, n_samples)
            The whole training distance matrix.
        y : array-like of shape (n_samples,)
            The training labels.
        folds : list of (array-like of int, array-like of int)
            (fit indices, validation indices) of every fold.
        grid : list of dict
            ``set_params`` dicts that vary ``n_neighbors`` only.

        Returns
        -------
        predictions : list of ndarray of shape (n_grid, n_val) or None
            Per fold, the labels of its validation objects at every grid point; None to decline.
        """
        if not grid or any(set(p) - {"n_neighbors"} for p in grid):
            return None
        if any(getattr(type(self), name) is not getattr(KNNClassifier, name) for name in _VOTE_METHODS):
            return None  # a subclass ranks or votes differently
        self._validate_params()
        ks = self._grid_ks(grid)
        D = np.asarray(D)
        if D.ndim != 2 or D.shape[0] != D.shape[1] or D.dtype != np.float64:
            return None  # per-fold path: converts, or rejects
        folds = [(np.asarray(fit, dtype=np.intp), np.asarray(val, dtype=np.intp)) for fit, val in folds]
        if any(len(fit) == 0 or np.any(fit[1:] <= fit[:-1]) for fit, _ in folds):
            return None  # ranks by index within the fit set: the kernel needs it increasing
        # the kernel checks the rows it scans; rows in no validation part are checked here
        scanned = np.zeros(D.shape[0], dtype=bool)
        for _, val in folds:
            scanned[val] = True
        if not scanned.all() and not _valid(D):
            return None  # the per-fold fits reject the matrix: scored there as failed fits
        classes, y_idx = fit_classes(y, D.shape[0], min_classes=1)
        fitted = np.zeros((len(folds), D.shape[0]), dtype=np.bool_)
        for f, (fit, _) in enumerate(folds):
            fitted[f, fit] = True
        counts = np.stack([np.bincount(y_idx[fit], minlength=len(classes)) for fit, _ in folds])
        if ((counts > 0).sum(axis=1) < 2).any():
            return None  # a one-class fit set: its fits refuse it (scored there as failed fits)
        sizes = [len(val) for _, val in folds]
        rows = np.concatenate([val for _, val in folds])
        winners, valid = _grid_winners(D, rows, np.repeat(np.arange(len(folds)), sizes), fitted, y_idx, counts, ks)
        if not valid:
            return None
        return np.split(classes[winners], np.cumsum(sizes)[:-1], axis=1)

    def _warm_up(self) -> None:
        """Load the compiled kernels now (once per process; hlm.pipeline.evaluation.evaluate calls this before
        timing the first split)."""
        _all_fitted(np.zeros((2, 2)), np.zeros(2, dtype=np.int64), np.array([2]), [1])

    def _votes(self, D, neighbours: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        nb_labels = self._y_idx[self._neighbours(D) if neighbours is None else neighbours]
        n_classes = len(self.classes_)
        votes = np.zeros((D.shape[0], n_classes))
        np.add.at(votes, (np.arange(D.shape[0])[:, None], nb_labels), 1.0)
        return votes, nb_labels

    def predict_proba(self, D):
        """The vote shares among the k neighbours, Laplace-corrected (``laplace_shares``): no class gets 0.

        Parameters
        ----------
        D : array-like of shape (n_queries, n_samples)
            ``D_test_train``: distances from the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            (k w_g + 1) / (k + G) for vote shares w_g, columns in the order of ``classes_``; rows sum to 1
            (docs/beyond-the-paper-spec.md section 3).
        """
        D = self._check_predict_input(D)
        votes, _ = self._votes(D)
        return laplace_shares(votes / votes.sum(axis=1, keepdims=True), votes.sum(axis=1, keepdims=True))

    def predict(self, D):
        """The class with the most votes among the k nearest training objects, ties as in spec §5.

        Parameters
        ----------
        D : array-like of shape (n_queries, n_samples)
            ``D_test_train``: distances from the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            The predicted labels, of ``classes_``.
        """
        D = self._check_predict_input(D)
        k = min(int(self.n_neighbors), D.shape[1])
        if k == 0:  # nothing fitted to vote: the tie rule on empty votes
            votes, nb_labels = self._votes(D)
            return self.classes_[break_vote_ties(votes, self.class_prior_, nb_labels)]
        return self.classes_[_all_fitted(D, self._y_idx, self._class_counts, [k])[0]]


def laplace_shares(shares: np.ndarray, k) -> np.ndarray:
    """(w_g + 1/k) / (1 + G/k) of class shares w (rows sum to 1) of k votes, G classes: the Laplace
    correction of the counts k w_g, (k w_g + 1) / (k + G), so that no probability is 0
    (docs/beyond-the-paper-spec.md section 3). ``k``: a number or one per row."""
    shares = np.asarray(shares, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    return (k * shares + 1.0) / (k + shares.shape[1])


def break_vote_ties(votes: np.ndarray, prior: np.ndarray, ranked_labels: np.ndarray) -> np.ndarray:
    """Winning class index per row: most votes, then larger prior, then highest-ranked neighbour.

    ``ranked_labels[i]`` lists the class indices of row i's neighbours, best first.
    """
    top = np.isclose(votes, votes.max(axis=1, keepdims=True), rtol=1e-12, atol=0.0)
    masked_prior = np.where(top, prior[None, :], -np.inf)
    top &= masked_prior == masked_prior.max(axis=1, keepdims=True)
    winner = np.argmax(top, axis=1)
    for i in np.flatnonzero(top.sum(axis=1) > 1):
        winner[i] = next(c for c in ranked_labels[i] if top[i, c])
    return winner


#: what ``predict_folds`` computes itself: a subclass that overrides one of them takes the per-fold path
_VOTE_METHODS = ("predict", "predict_grid", "_neighbours", "_votes")


def _grid_winners(D, rows, row_set, fitted, col_labels, class_counts, ks) -> tuple[np.ndarray, bool]:
    """Winning class index of each row of ``D[rows]`` at every k (grid point x row), and whether every
    entry of the rows ``D[rows]`` is a valid distance (finite, >= 0).

    Row ``rows[a]`` votes among the columns ``fitted[row_set[a]]`` (a mask; ranked
    by column index) with those columns' class sizes ``class_counts[row_set[a]]``
    (the prior's order); ``col_labels``: the class of every column.
    """
    fitted = np.asarray(fitted, dtype=np.bool_)
    ks = [min(int(k), D.shape[1]) for k in ks]  # k is capped at the fit set anyway; bounds the buffers
    invalid = np.zeros(1, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    winners = _grid_winners_rows(D, D.view(np.uint64), rows, np.asarray(row_set, dtype=np.int64), fitted,
                                 np.asarray(col_labels, dtype=np.int64), np.asarray(class_counts, dtype=np.int64),
                                 fitted.sum(axis=1), np.asarray(ks, dtype=np.int64), invalid)
    return winners, invalid[0] == 0 or _valid(D[rows])  # -0.0 is counted, but valid


def _valid(D: np.ndarray) -> bool:
    """Every entry finite and >= 0 (-0.0 included), as the per-fold input checks require."""
    return D.size == 0 or _all_valid(D, "distance") or bool(np.isfinite(D).all() and not (D < 0).any())


def _all_fitted(D, y_idx, class_counts, ks) -> np.ndarray:
    """``_grid_winners`` of every row of ``D`` against all its columns (one fitted model)."""
    n, m = D.shape
    winners, _ = _grid_winners(D, np.arange(n), np.zeros(n, dtype=np.int64), np.ones((1, m), dtype=np.bool_),
                               y_idx, np.asarray(class_counts)[None, :], ks)
    return winners


# ----------------------------------------------------------------- compiled kernels
# Distances must be finite and >= 0: each scanned row's bad entries are counted (``invalid``) and
# its result then means nothing (the callers validate first, or discard). Candidates are
# (distance, column) pairs; a smaller pair ranks first, so distance ties go to the earlier column
# (a stable sort's order: fit sets are increasing).
# The loops avoid data-dependent branches where they can (partition into two streams, conditional
# increments): mispredicted branches, not memory, bound a scan of this size.
_STEP = 8  # every 8th column gives a row's first bound
_SORT_BELOW = 32  # at most this many best left: sort them (stably), the smaller k are prefixes


@njit(cache=True)
def _row_candidates(D, U, r, fitted, m, k, bd, bp, w1, w2, invalid):
    """Buffer the fitted columns of row r that can be among its k best, in column order; returns
    their count (>= k). ``bp``: column indices.

    ``fitted[j]``: column j is one of the m fitted ones (ranked by column index, i.e. by
    position in an increasing fit set). A column enters if closer than a bound; when the
    buffer (2k) fills, only the k best stay and the bound drops to the k-th distance, so a
    later column must be strictly closer. The first bound is the (1.5 k / 8)-th distance of
    every 8th column, inclusive; if fewer than k columns pass it the row is scanned again
    without one. ``invalid[0]`` counts the row's entries that are NaN, infinite, negative or
    -0.0 (by their bits ``U``: D viewed as uint64).
    """
    n_cols = fitted.shape[0]
    n_sample = n_cols // _STEP
    kth = (3 * k) // (2 * _STEP)
    bound = np.inf
    if 2 * k <= m and kth < n_sample:
        for i in range(n_sample):
            w1[i] = D[r, i * _STEP]
        bound = np.nextafter(_select(w1, n_sample, kth, w2), np.inf)
    bad = 0
    for j in range(n_cols):  # sign bit set, or exponent all ones (inf, NaN): vectorized
        bad += U[r, j] >= _INF_BITS
    invalid[0] += bad
    for _ in range(2):
        cap = bd.shape[0]
        size = 0
        for j in range(n_cols):
            d = D[r, j]
            if d < bound and fitted[j]:
                bd[size] = d
                bp[size] = j
                size += 1
                if size == cap:
                    size, bound = _keep_best(bd, bp, size, k, w1, w2)
        if size >= k:
            return size
        bound = np.inf
    return size


@njit(cache=True)
def _keep_best(bd, bp, size, k, w1, w2):
    """Keep the k best of the ``size`` buffered pairs, in column order; returns (k, their worst distance)."""
    for i in range(size):
        w1[i] = bd[i]
    t = _select(w1, size, k - 1, w2)
    below = 0
    for i in range(size):
        below += bd[i] < t
    ties = k - below  # at distance t: the earliest columns
    j = 0
    for i in range(size):
        d = bd[i]
        tie = d == t and ties > 0
        keep = d < t or tie
        ties -= tie
        bd[j] = d
        bp[j] = bp[i]
        j += keep
    return j, t


@njit(cache=True)
def _select(x, n, kth, tmp):
    """The kth smallest (0-based) of x[:n]; x and tmp (same size) are overwritten.

    Quickselect with a three-way split into two streams (smaller ones in place,
    larger ones to the other buffer), branch-free, so ties cost nothing.
    """
    src, other = x, tmp
    while True:
        a, b, c = src[0], src[n >> 1], src[n - 1]
        if a > b:
            a, b = b, a
        if b > c:
            b = c
            if a > b:
                b = a
        pivot = b
        n_lt = 0
        n_gt = 0
        for i in range(n):
            v = src[i]
            src[n_lt] = v
            other[n_gt] = v
            n_lt += v < pivot
            n_gt += v > pivot
        if kth < n_lt:
            n = n_lt
        elif kth < n - n_gt:
            return pivot
        else:
            kth -= n - n_gt
            n = n_gt
            src, other = other, src


@njit(cache=True)
def _grid_winners_rows(D, U, rows, row_set, fitted, col_labels, class_counts, n_fit, ks, invalid):
    """``break_vote_ties`` of each row's votes at every k in ``ks`` (grid point x row); ``invalid[0]``
    counts the bad entries of the rows scanned.

    Row ``rows[a]`` votes among the columns of its fit set ``s = row_set[a]``:
    ``fitted[s]`` (a mask, ``n_fit[s]`` columns, ranked by index) with class
    sizes ``class_counts[s]``; k is capped at ``n_fit[s]``. ``col_labels``: the
    class of every column. The k best of a row are found once for the largest
    k, then cut down to each smaller k in turn by selection (sorted once at most
    32 are left); the highest-ranked neighbour of a tied class is its smallest
    (distance, column) among the k.
    """
    n, g = rows.shape[0], ks.shape[0]
    out = np.empty((g, n), dtype=np.int64)
    if g == 0 or n == 0:
        return out
    order = np.argsort(-ks, kind="mergesort")  # largest k first
    n_classes = class_counts.shape[1]
    cap = max(2 * ks[order[0]], 16)
    bd = np.empty(cap, dtype=np.float64)
    bp = np.empty(cap, dtype=np.int64)
    w_len = max(cap, fitted.shape[1] // _STEP + 1)
    w1 = np.empty(w_len, dtype=np.float64)
    w2 = np.empty(w_len, dtype=np.float64)
    votes = np.zeros(n_classes, dtype=np.int64)
    for a in range(n):
        s = row_set[a]
        m = n_fit[s]
        counts = class_counts[s]
        kmax = min(ks[order[0]], m)
        size = _row_candidates(D, U, rows[a], fitted[s], m, kmax, bd, bp, w1, w2, invalid)
        if size < kmax:  # only with NaN/inf entries (counted in invalid): no result
            out[:, a] = -1
            continue
        last_k = -1
        winner = 0
        ordered = False  # bd, bp sorted by (distance, column): each smaller k is a prefix
        for gi in range(g):
            k = min(ks[order[gi]], m)
            if k != last_k:
                if ordered:
                    size = k
                elif size > k:
                    size, _ = _keep_best(bd, bp, size, k, w1, w2)
                if not ordered and size <= _SORT_BELOW:
                    _insertion_sort(bd, bp, size)
                    ordered = True
                votes[:] = 0
                for j in range(k):
                    votes[col_labels[bp[j]]] += 1
                best_votes = -1
                best_count = -1
                n_top = 0
                for c in range(n_classes):
                    v = votes[c]
                    if v > best_votes or (v == best_votes and counts[c] > best_count):
                        best_votes, best_count, winner, n_top = v, counts[c], c, 1
                    elif v == best_votes and counts[c] == best_count:
                        n_top += 1
                if n_top > 1:  # the tied class that owns the highest-ranked neighbour
                    best_d = np.inf
                    best_p = -1
                    for j in range(k):
                        c = col_labels[bp[j]]
                        if votes[c] == best_votes and counts[c] == best_count:
                            if best_p < 0 or bd[j] < best_d or (bd[j] == best_d and bp[j] < best_p):
                                best_d, best_p, winner = bd[j], bp[j], c
                last_k = k
            out[order[gi], a] = winner
    return out


@njit(cache=True)
def _insertion_sort(bd, bp, k):
    """Sort the first k pairs by distance, stably (pairs in column order: by (distance, column))."""
    for i in range(1, k):
        d, p = bd[i], bp[i]
        j = i - 1
        while j >= 0 and bd[j] > d:
            bd[j + 1] = bd[j]
            bp[j + 1] = bp[j]
            j -= 1
        bd[j + 1] = d
        bp[j + 1] = p


@njit(cache=True)
def _ranked(D, rows, k):
    """Columns of the k best of each row, best first."""
    n, m = rows.shape[0], D.shape[1]
    k = min(k, m)
    fitted = np.ones(m, dtype=np.bool_)
    out = np.empty((n, k), dtype=np.int64)
    if k == 0 or n == 0:
        return out
    cap = max(2 * k, 16)
    bd = np.empty(cap, dtype=np.float64)
    bp = np.empty(cap, dtype=np.int64)
    w_len = max(cap, m // _STEP + 1)
    w1 = np.empty(w_len, dtype=np.float64)
    w2 = np.empty(w_len, dtype=np.float64)
    invalid = np.zeros(1, dtype=np.int64)
    U = D.view(np.uint64)
    for a in range(n):
        size = _row_candidates(D, U, rows[a], fitted, m, k, bd, bp, w1, w2, invalid)
        if size > k:
            size, _ = _keep_best(bd, bp, size, k, w1, w2)
        order = np.argsort(bd[:k], kind="mergesort")  # stable: ties stay in position order
        for j in range(k):
            out[a, j] = bp[order[j]]
    return out
