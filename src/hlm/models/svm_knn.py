"""SVM-KNN (clip): a small SVM on each test object's neighbourhood (spec ``compared-methods.md`` 6.8).

Zhang et al.'s naive algorithm [V: Zhang et al. section 2] on a similarity
matrix, with the "(clip)" kernel of HLM/[Chen09] [R/P]:

1. N = the k most similar fit-set objects, ranked by (-s_i, i) (spec 5 [P]);
   if they all share one class, return it;
2. local kernel = clip of Sym(S_N), test row (P s_N)^T (``fit_spectrum``);
3. ``SVC(kernel="precomputed", C)``, one-vs-one [P] (Zhang et al. use DAGSVM).

With k = n_fit this is the global clip SVM [V: Zhang, K = n].

The local SVMs are libsvm's C-SVC called directly (``PrecomputedSVC``): the
same solver, tolerance, shrinking and one-vs-one vote as ``SVC(kernel=
"precomputed")``, without the estimator's per-call validation, which cost
about 2 ms per fit and predict against 0.04-0.35 ms of libsvm work on these
8-128 object problems (SVM-KNN fits one per test object and grid point).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval

from hlm.models._base import SimilarityClassifier
from hlm.models._grid import group_grid
from hlm.models._libsvm import PrecomputedSVC
from hlm.models.spectrum import fit_spectrum
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

    def __init__(self, n_neighbors: int = 8, C: float = 1.0, max_iter: int = 100_000, cache_size: float = 200):
        self.n_neighbors = n_neighbors
        self.C = C
        self.max_iter = max_iter
        self.cache_size = cache_size

    def fit(self, S, y):
        self._validate_params()
        self.S_fit_, self._y_idx = self._check_fit_input(S, y)
        return self

    def _neighbour_sets(self, S_te: np.ndarray) -> np.ndarray:
        """Per test row, the indices of its k most similar fit objects (ties: lower index first), sorted."""
        k = min(int(self.n_neighbors), S_te.shape[1])
        return np.sort(np.argsort(-S_te, axis=1, kind="stable")[:, :k], axis=1)

    def predict(self, S):
        return self._predict_costs(self._check_predict_input(S), [self.C])[0]

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: per k, each neighbour set's clip is computed once and
        its local SVM fitted for every C (equal to refitting per grid point, tested)."""
        out: list = [None] * len(grid)
        for outer, points in group_grid(self, grid, ("C",)).items():
            model = clone(self).set_params(**dict(outer)).fit(S_fit, y)
            predictions = model._predict_costs(model._check_predict_input(S_val), [p["C"] for _, p in points])
            for (g, _), pred in zip(points, predictions):
                out[g] = pred
        return out

    def _predict_costs(self, S: np.ndarray, costs: list[float]) -> list[np.ndarray]:
        """Predictions of the rows of S with local SVMs of each cost C in ``costs``.

        Test objects with the same neighbour set share its clip transform and local SVMs.
        """
        neighbours = self._neighbour_sets(S)
        out = np.empty((len(costs), S.shape[0]), dtype=np.intp)
        cache: dict[tuple[int, ...], tuple] = {}
        for i, N in enumerate(neighbours):
            labels = self._y_idx[N]
            if (labels == labels[0]).all():
                out[:, i] = labels[0]  # |G_x| = 1 shortcut
                continue
            key = tuple(N.tolist())
            if key not in cache:
                transform = fit_spectrum(self.S_fit_[np.ix_(N, N)], "clip")
                present, local = np.unique(labels, return_inverse=True)  # encoded once for every C
                local = local.astype(np.float64)
                svcs = [
                    PrecomputedSVC(C, max_iter=self.max_iter, cache_size=self.cache_size)
                    .fit_encoded(transform.kernel, local, present)
                    for C in costs
                ]
                cache[key] = (transform, svcs)
            transform, svcs = cache[key]
            K_te = transform.transform_test(S[i, N][None, :])
            for c, svc in enumerate(svcs):
                out[c, i] = svc.predict(K_te)[0]
        for c, C in enumerate(costs):
            n_hit = sum(svcs[c].hit_max_iter for _, svcs in cache.values())
            if n_hit:
                warn_max_iter(
                    f"SVM-KNN (clip) k={self.n_neighbors}", C, self.max_iter,
                    f" in {n_hit} of {len(cache)} local SVMs",
                )
        return [self.classes_[row] for row in out]

