"""SVM-KNN (clip): a small SVM on each test object's neighbourhood (spec ``compared-methods.md`` 6.8).

Zhang et al.'s naive algorithm [V: Zhang et al. section 2] on a similarity
matrix, with the "(clip)" kernel of HLM/[Chen09] [R/P]:

1. N = the k most similar fit-set objects, ranked by (-s_i, i) (spec 5 [P]);
   if they all share one class, return it;
2. local kernel = clip of Sym(S_N), test row (P s_N)^T (``fit_spectrum``);
3. ``SVC(kernel="precomputed", C)``, one-vs-one [P] (Zhang et al. use DAGSVM).

With k = n_fit this is the global clip SVM [V: Zhang, K = n].

The local SVMs are libsvm's C-SVC called directly (``_LocalSVC``): the same
solver, tolerance, shrinking and one-vs-one vote as ``SVC(kernel=
"precomputed")``, without the estimator's per-call validation, which cost
about 2 ms per fit and predict against 0.04-0.35 ms of libsvm work on these
8-128 object problems (SVM-KNN fits one per test object and grid point).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.svm import _libsvm
from sklearn.utils._param_validation import Interval

from hlm.models._base import SimilarityClassifier
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

    def _local_model(self, N: np.ndarray):
        """(clip transform, local SVM, hit max_iter) for neighbour set N, which has at least two classes."""
        transform = fit_spectrum(self.S_fit_[np.ix_(N, N)], "clip")
        svc = _LocalSVC(transform.kernel, self._y_idx[N], C=self.C, max_iter=self.max_iter,
                        cache_size=self.cache_size)
        return transform, svc, svc.hit_max_iter

    def predict(self, S):
        S = self._check_predict_input(S)
        neighbours = self._neighbour_sets(S)
        out = np.empty(S.shape[0], dtype=np.intp)
        cache: dict[tuple[int, ...], tuple] = {}
        for i, N in enumerate(neighbours):
            labels = self._y_idx[N]
            if (labels == labels[0]).all():
                out[i] = labels[0]  # |G_x| = 1 shortcut
                continue
            key = tuple(N.tolist())
            if key not in cache:
                cache[key] = self._local_model(N)
            transform, svc, _ = cache[key]
            out[i] = svc.predict(transform.transform_test(S[i, N][None, :]))[0]
        n_hit = sum(hit for _, _, hit in cache.values())
        if n_hit:
            warn_max_iter(
                f"SVM-KNN (clip) k={self.n_neighbors}", self.C, self.max_iter,
                f" in {n_hit} of {len(cache)} local SVMs",
            )
        return self.classes_[out]


class _LocalSVC:
    """One-vs-one C-SVC on a precomputed kernel, by scikit-learn's libsvm binding directly.

    ``predict`` equals ``SVC(kernel="precomputed", C=C).fit(K, y).predict``
    (tested); ``hit_max_iter`` is libsvm's fit status 1 (stopped at max_iter).
    """

    def __init__(self, K: np.ndarray, y: np.ndarray, *, C: float, max_iter: int, cache_size: float):
        self.labels, y_enc = np.unique(y, return_inverse=True)
        self.cache_size = float(cache_size)
        _libsvm.set_verbosity_wrap(0)  # SVC does the same before every fit; libsvm prints otherwise
        (self.support, self.support_vectors, self.n_support, self.dual_coef, self.intercept, self.probA,
         self.probB, fit_status, _) = _libsvm.fit(
            np.ascontiguousarray(K, dtype=np.float64), y_enc.astype(np.float64), svm_type=0,
            kernel="precomputed", C=float(C), cache_size=self.cache_size, max_iter=int(max_iter))
        self.hit_max_iter = fit_status == 1

    def predict(self, K_te: np.ndarray) -> np.ndarray:
        pred = _libsvm.predict(
            np.ascontiguousarray(K_te, dtype=np.float64), self.support, self.support_vectors, self.n_support,
            self.dual_coef, self.intercept, self.probA, self.probB, svm_type=0, kernel="precomputed",
            cache_size=self.cache_size)
        return self.labels[pred.astype(np.intp)]
