"""SVM-KNN (clip): a small SVM on each test object's neighbourhood (spec ``docs/compared-methods-spec.md`` 6.8).

Zhang et al.'s naive algorithm [V: Zhang et al. section 2] on a similarity
matrix, with the "(clip)" kernel of HLM/[Chen09] [R/P]:

1. N = the k most similar fit-set objects, ranked by (-s_i, i) (spec 5 [P]);
   if they all share one class, return it;
2. local kernel = clip of Sym(S_N), test row (P s_N)^T (``fit_spectrum``);
3. ``SVC(kernel="precomputed", C)``, one-vs-one [P] (Zhang et al. use DAGSVM).

With k = n_fit this is the global clip SVM [V: Zhang, K = n].

The local SVMs are libsvm's C-SVC called directly (``_libsvm.fit_costs`` and
``predict_model``, the calls of ``PrecomputedSVC``): the same solver,
tolerance, shrinking and one-vs-one vote as ``SVC(kernel="precomputed")``,
without the estimator's per-call validation, which cost about 2 ms per fit and
predict against 0.04-0.35 ms of libsvm work on these 8-128 object problems
(SVM-KNN fits one per test object and grid point). The clips of a call's
neighbour sets share one batched ``eigh`` (``fit_spectra``); the rest is
``fit_spectrum``'s operations set by set, and the results equal the one-by-one
computation bit for bit (tested).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval

from hlm.models._base import SimilarityClassifier
from hlm.models._grid import group_grid
from hlm.models._libsvm import FIT_STATUS, fit_costs, predict_model
from hlm.models.spectrum import fit_spectra
from hlm.models.svm_similarity import _SVC_CONSTRAINTS, warn_max_iter


class SVMKNN(SimilarityClassifier):
    """SVM-KNN (clip), spec 6.8.

    Parameters
    ----------
    n_neighbors : int
        k; capped at the number of fitted objects (grid as k-NN, spec 3).
    C : float
        Cost of every local SVM (1e-3..1e5 [V: Sadowski]).
    max_iter, cache_size
        Passed to each local ``SVC``.

    Notes
    -----
    Within one ``predict`` call, test objects with the same neighbour *set*
    share one local SVM. The neighbours enter the local SVM in ascending index
    order (so k = n_fit reproduces the global clip SVM exactly). Local SVMs
    that stop at ``max_iter`` are reported in one ConvergenceWarning per call.
    """

    _parameter_constraints = {**_SVC_CONSTRAINTS, "n_neighbors": [Interval(Integral, 1, None, closed="left")]}

    _path_params = ("C",)  # per k: the neighbour sets and their clips do not depend on C

    def __init__(self, n_neighbors: int = 8, C: float = 1.0, max_iter: int = 100_000, cache_size: float = 200):
        self.n_neighbors = n_neighbors
        self.C = C
        self.max_iter = max_iter
        self.cache_size = cache_size

    def fit(self, S, y):
        self._validate_params()
        self.S_fit_, self._y_idx = self._check_fit_input(S, y)
        return self

    def _neighbour_sets(self, S_te: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
        """Per test row, the indices of its k most similar fit objects (ties: lower index first), sorted.

        ``order``: ``np.argsort(-S_te, axis=1, kind="stable")`` if already computed (shared by every k).
        """
        k = min(int(self.n_neighbors), S_te.shape[1])
        if order is None:
            order = np.argsort(-S_te, axis=1, kind="stable")
        return np.sort(order[:, :k], axis=1)

    def predict(self, S):
        return self._predict_costs(self._check_predict_input(S), [self.C])[0]

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: per k, each neighbour set's clip is computed once and
        its local SVM fitted for every C (equal to refitting per grid point, tested). The fit
        (input checks) and the similarity ranking of the rows of S_val are shared by every k."""
        out: list = [None] * len(grid)
        groups = group_grid(self, grid, self._path_params)  # validates every grid point
        model = clone(self).fit(S_fit, y)  # fit stores the data only: the same for every k
        S_val = model._check_predict_input(S_val)
        order = np.argsort(-S_val, axis=1, kind="stable")
        for outer, points in groups.items():
            model.set_params(**dict(outer))
            predictions = model._predict_costs(S_val, [p["C"] for _, p in points], order)
            for (g, _), pred in zip(points, predictions):
                out[g] = pred
        return out

    def _predict_costs(self, S: np.ndarray, costs: list[float], order: np.ndarray | None = None) -> list[np.ndarray]:
        """Predictions of the rows of S with local SVMs of each cost C in ``costs``.

        Test objects with the same neighbour set share its clip transform and local SVMs. The
        clips of up to ``_STACK_MAX_SIZE / k^2`` sets are computed together (``fit_spectra``:
        one batched ``eigh``, otherwise ``fit_spectrum``'s operations on each set); a set's SVMs
        are fitted by ``fit_costs`` and predict all of its rows in one libsvm call per C.
        """
        neighbours = self._neighbour_sets(S, order)
        labels = self._y_idx[neighbours]
        out = np.empty((len(costs), S.shape[0]), dtype=np.intp)
        out[:] = labels[:, 0]  # |G_x| = 1 shortcut; the other rows are overwritten below
        rows_of: dict[bytes, list[int]] = {}  # neighbour set -> its mixed-class rows, first-seen order
        for i in np.flatnonzero((labels != labels[:, :1]).any(axis=1)).tolist():
            rows_of.setdefault(neighbours[i].tobytes(), []).append(i)
        groups = list(rows_of.values())
        n_hit = [0] * len(costs)
        k = neighbours.shape[1]
        step = max(1, _STACK_MAX_SIZE // (k * k))
        S_flat, n_fit, n_classes = self.S_fit_.reshape(-1), self.S_fit_.shape[1], len(self.classes_)
        for start in range(0, len(groups), step):
            block = groups[start:start + step]
            sets = neighbours[[rows[0] for rows in block]]
            S_N = S_flat.take(sets[:, :, None] * n_fit + sets[:, None, :])  # S_fit_[np.ix_(N, N)] of each set
            for N, rows, transform in zip(sets, block, fit_spectra(S_N, "clip")):
                # the set's classes and its labels coded 0..len(present)-1 (as np.unique), once for every C
                present = np.flatnonzero(np.bincount(labels[rows[0]], minlength=n_classes))
                local = present.searchsorted(labels[rows[0]]).astype(np.float64)
                models = fit_costs(transform.kernel, local, len(present), costs,
                                   max_iter=self.max_iter, cache_size=self.cache_size)
                K_te = [S[i, N][None, :] @ transform.projector for i in rows]  # transform_test, row by row
                K_te = K_te[0] if len(K_te) == 1 else np.concatenate(K_te)
                votes = [predict_model(model, K_te, self.cache_size) for model in models]  # (costs, rows)
                out[:, rows] = present[np.array(votes, dtype=np.intp)]
                for c, model in enumerate(models):
                    n_hit[c] += model[FIT_STATUS] == 1
        for c, C in enumerate(costs):
            if n_hit[c]:
                warn_max_iter(
                    f"SVM-KNN (clip) k={self.n_neighbors}", C, self.max_iter,
                    f" in {n_hit[c]} of {len(groups)} local SVMs",
                )
        return [self.classes_[row] for row in out]


#: Largest m * k * k of the stack of local similarity blocks whose clips are computed together
#: (16 MB; e.g. 128 sets at k = 128).
_STACK_MAX_SIZE = 2**21
