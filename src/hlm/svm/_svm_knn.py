"""SVM-KNN: a small SVM on each test object's neighbourhood (spec ``docs/compared-methods-spec.md`` 6.8;
the variants of ``docs/local-sda-family-spec.md`` 7).

Zhang et al.'s naive algorithm [V: Zhang et al. section 2] on a similarity
matrix, with the "(clip)" kernel of HLM/[Chen09] [R/P] or one of the other
local kernels of Sadowski et al.'s Table II (``local_kernel``):

1. N = the k most similar fit-set objects, ranked by (-s_i, i) (spec 5 [P]);
   if they all share one class, return it;
2. local kernel of A = Sym(S_N) and the test row of s_N (``fit_spectrum``'s transforms):

   * "clip": U max(Lambda, 0) U^T, test row (P_clip s_N)^T (the HLM comparison's method);
   * "flip": U |Lambda| U^T, test row (P_flip s_N)^T, P_flip = U sign(Lambda) U^T;
   * "shift": A + max(0, -lambda_min) I, test row s_N unchanged;
   * "features": the rows of A as linear features, A A^T, test row s_N^T A^T (spec 6.6 "square");

3. ``SVC(kernel="precomputed", C)``, one-vs-one [P] (Zhang et al. use DAGSVM).

With k = n_fit this is the global SVM of the same kernel [V: Zhang, K = n]
(``SVMSimilarityKernel(spectrum=...)``; "features": ``SVMSimilarityFeatures(kernel="linear")``,
whose features are the rows of S_fit itself: the same on symmetric data).

The local SVMs are libsvm's C-SVC called directly (``_libsvm.fit_costs`` and
``predict_model``, the calls of ``PrecomputedSVC``): the same solver,
tolerance, shrinking and one-vs-one vote as ``SVC(kernel="precomputed")``,
without the estimator's per-call validation, which cost about 2 ms per fit and
predict against 0.04-0.35 ms of libsvm work on these 8-128 object problems
(SVM-KNN fits one per test object and grid point). The clips of a call's
neighbour sets share one batched ``eigh`` (``fit_spectra``); the rest is
``fit_spectrum``'s operations set by set, and the results equal the one-by-one
computation bit for bit (tested). flip and shift share the batched ``eigh`` as
clip; "features" needs no eigendecomposition (A A^T per set, as the global
``SVMSimilarityFeatures``).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._classifiers import SimilarityClassifier
from hlm.base._grid import group_grid
from hlm.svm._libsvm import FIT_STATUS, fit_costs, predict_model
from hlm.svm._similarity import _SVC_CONSTRAINTS, warn_max_iter
from hlm.svm._spectrum import fit_spectra

#: The local kernels and their names in messages (``SVMKNN.local_kernel``).
LOCAL_KERNELS = {"clip": "clip", "flip": "flip", "shift": "shift", "features": "sims-as-features"}


class SVMKNN(SimilarityClassifier):
    """SVM-KNN, spec 6.8 (clip) and local SDA family spec 7 (flip, shift, features).

    Zhang et al.'s SVM-KNN (CVPR 2006, section 2; the HLM paper's reference [11]) on a similarity
    matrix: the HLM paper's "SVM-KNN (clip)" (section 5.1, Table 3) and the "KNN-SVM" (clip, flip,
    shift, sims-as-features) rows of Sadowski et al.'s Table II. For each test object: its k most
    similar fit objects N; if they share one class, that class; otherwise a one-vs-one libsvm C-SVC
    on the local kernel of Sym(S_N) and the test row mapped consistently (module docstring). With
    k = n_fit it is the global SVM of the same kernel (:class:`SVMSimilarityKernel`; "features":
    :class:`SVMSimilarityFeatures` with ``kernel="linear"``, on symmetric data).

    Parameters
    ----------
    n_neighbors : int, default=8
        k (>= 1); capped at the number of fitted objects (grid as k-NN, spec 3).
    C : float, default=1.0
        Cost of every local SVM (> 0; 1e-3..1e5 [V: Sadowski]).
    local_kernel : {"clip", "flip", "shift", "features"}, default="clip"
        How the local similarity matrix becomes a kernel (module docstring); "clip" is the
        HLM comparison's SVM-KNN, the others are the variants of Sadowski et al.'s Table II.
    max_iter : int, default=100_000
        libsvm's iteration cap of each local SVM (-1: none), as ``SVC``'s.
    cache_size : float, default=200
        libsvm's kernel cache in MB, as ``SVC``'s.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels.
    n_features_in_ : int
        Number of fit objects (the columns ``predict`` expects).
    class_prior_ : ndarray of shape (n_classes,)
        Class frequencies of the fit set.
    S_fit_ : ndarray of shape (n, n)
        The fit-set similarities (float64), from which every local kernel is cut; ``fit`` stores the
        data only, the local SVMs are fitted in ``predict``.

    See Also
    --------
    SVMSimilarityKernel : the global SVM of the clip, flip and shift kernels (spec 6.6).

    Notes
    -----
    Within one ``predict`` call, test objects with the same neighbour *set*
    share one local SVM. The neighbours enter the local SVM in ascending index
    order (so k = n_fit reproduces the global SVM of the same kernel). Local SVMs
    that stop at ``max_iter`` are reported in one ConvergenceWarning per call.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.svm import SVMKNN, SVMSimilarityKernel
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> X = np.vstack([rng.normal(c, 0.5, (10, 2)) for c in centres])
    >>> y = np.repeat(["a", "b", "c"], 10)
    >>> X_te = centres + rng.normal(0.0, 0.3, centres.shape)  # one test object near each centre
    >>> S, S_te = np.exp(-cdist(X, X) ** 2), np.exp(-cdist(X_te, X) ** 2)

    k = 15 neighbourhoods hold two or three classes, so each test object gets a local SVM:

    >>> model = SVMKNN(n_neighbors=15, C=1.0, local_kernel="clip").fit(S, y)
    >>> print(model.predict(S_te))
    ['a' 'b' 'c']
    >>> print(SVMKNN(n_neighbors=15, local_kernel="features").fit(S, y).predict(S_te))
    ['a' 'b' 'c']

    With k = n_fit every test object has the same neighbourhood, the fit set: the global SVM.

    >>> local = SVMKNN(n_neighbors=30, local_kernel="flip").fit(S, y).predict(S_te)
    >>> bool((local == SVMSimilarityKernel(spectrum="flip").fit(S, y).predict(S_te)).all())
    True
    """

    _parameter_constraints = {
        **_SVC_CONSTRAINTS,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "local_kernel": [StrOptions(set(LOCAL_KERNELS))],
    }

    _path_params = ("C",)  # per k: the neighbour sets and their local kernels do not depend on C

    def __init__(self, n_neighbors: int = 8, C: float = 1.0, local_kernel: str = "clip", max_iter: int = 100_000,
                 cache_size: float = 200):
        self.n_neighbors = n_neighbors
        self.C = C
        self.local_kernel = local_kernel
        self.max_iter = max_iter
        self.cache_size = cache_size

    def fit(self, S, y):
        """Check and store the fit set (the local SVMs are fitted at prediction time).

        Parameters
        ----------
        S : array-like of shape (n, n)
            Similarities among the fit objects (S_train_train).
        y : array-like of shape (n,)
            Class labels (at least 2 classes).

        Returns
        -------
        self : SVMKNN
            The fitted estimator.
        """
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
        """Labels of the test objects: the one class of a one-class neighbourhood, else the local SVM's vote.

        Parameters
        ----------
        S : array-like of shape (m, n)
            Similarities of the test objects (rows) to the fit objects (columns), S_test_train.

        Returns
        -------
        labels : ndarray of shape (m,)
            Predicted labels, values of ``classes_``.
        """
        return self._predict_costs(self._check_predict_input(S), [self.C])[0]

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: per k (and local kernel), each neighbour set's local kernel
        is computed once and its local SVM fitted for every C (equal to refitting per grid point,
        tested). The fit (input checks) and the similarity ranking of the rows of S_val are
        shared by every k.

        Parameters
        ----------
        S_fit : array-like of shape (n, n)
            Similarities among the fold's fit objects.
        y : array-like of shape (n,)
            Their labels.
        S_val : array-like of shape (m, n)
            Similarities of the fold's validation objects to its fit objects.
        grid : list of dict
            Parameter settings, e.g. ``[{"n_neighbors": 8, "C": 1.0}, {"n_neighbors": 8, "C": 10.0}]``.

        Returns
        -------
        predictions : list of ndarray of shape (m,)
            The labels of S_val at each setting, in the order of ``grid``.
        """
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

        Test objects with the same neighbour set share its local kernel and local SVMs. The
        kernels of up to ``_STACK_MAX_SIZE / k^2`` sets are computed together (``_local_kernels``;
        clip, flip, shift: one batched ``eigh``, otherwise ``fit_spectrum``'s operations on each
        set); a set's SVMs are fitted by ``fit_costs`` and predict all of its rows in one libsvm
        call per C; each test row is mapped on its own (the same bits however rows are grouped).
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
            for N, rows, (kernel, test_map) in zip(sets, block, _local_kernels(S_N, self.local_kernel)):
                # the set's classes and its labels coded 0..len(present)-1 (as np.unique), once for every C
                present = np.flatnonzero(np.bincount(labels[rows[0]], minlength=n_classes))
                local = present.searchsorted(labels[rows[0]]).astype(np.float64)
                models = fit_costs(kernel, local, len(present), costs,
                                   max_iter=self.max_iter, cache_size=self.cache_size)
                K_te = [S[i, N][None, :] if test_map is None else S[i, N][None, :] @ test_map
                        for i in rows]  # transform_test, row by row
                K_te = K_te[0] if len(K_te) == 1 else np.concatenate(K_te)
                votes = [predict_model(model, K_te, self.cache_size) for model in models]  # (costs, rows)
                out[:, rows] = present[np.array(votes, dtype=np.intp)]
                for c, model in enumerate(models):
                    n_hit[c] += model[FIT_STATUS] == 1
        for c, C in enumerate(costs):
            if n_hit[c]:
                warn_max_iter(
                    f"SVM-KNN ({LOCAL_KERNELS[self.local_kernel]}) k={self.n_neighbors}", C, self.max_iter,
                    f" in {n_hit[c]} of {len(groups)} local SVMs",
                )
        return [self.classes_[row] for row in out]


def _local_kernels(S_N: np.ndarray, how: str):
    """(kernel, test map) of each matrix of the stack S_N (m x k x k) for the local kernel ``how``.

    A test row s_N (1 x k) becomes ``s_N @ test map``, or s_N itself where the map is None:
    clip and flip, the projector P (``fit_spectra``, one batched ``eigh``); shift, None;
    features, A^T with A = Sym(S_N) (kernel A A^T, no eigendecomposition: spectrum's "square").
    Yields one pair per matrix, in order.
    """
    if how != "features":
        for t in fit_spectra(S_N, how):
            yield t.kernel, t.projector
        return
    A = (S_N + S_N.transpose(0, 2, 1)) / 2.0  # Sym(S_N), matrix by matrix (as fit_spectra)
    for A_i in A:
        K = A_i @ A_i.T  # one 2-D product per set, as the global SVMSimilarityFeatures' F F^T
        yield (K + K.T) / 2.0, A_i.T


#: Largest m * k * k of the stack of local similarity blocks whose kernels are computed together
#: (16 MB; e.g. 128 sets at k = 128).
_STACK_MAX_SIZE = 2**21
