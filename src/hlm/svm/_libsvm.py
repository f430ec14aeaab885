"""One-vs-one C-SVC on a precomputed kernel by scikit-learn's libsvm binding directly.

``SVC(kernel="precomputed")`` spends about 6 ms per fit on validation
(``check_array``, parameter checks, ...) around libsvm's own work, which on
the comparison's data sets (a few hundred objects) is often less than that;
the CV grids fit hundreds of SVMs per split. ``PrecomputedSVC`` makes the
same ``sklearn.svm._libsvm`` calls with the same arguments as ``SVC`` and
nothing else. The binding is private: this module follows ``sklearn/svm/
_base.py`` of the pinned scikit-learn 1.9.1 (equality is tested).
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import _libsvm
from sklearn.utils.multiclass import _ovr_decision_function

# The arguments SVC(kernel="precomputed") passes to libsvm besides C, max_iter and
# cache_size (svm/_base.py: BaseLibSVM._dense_fit, _dense_predict; SVC's defaults).
# gamma, degree, coef0, nu and epsilon do not enter a precomputed C-SVC.
_FIT_ARGS = dict(svm_type=0, kernel="precomputed", degree=3, gamma=0.0, coef0=0.0, tol=1e-3, nu=0.0,
                 epsilon=0.0, shrinking=True, probability=False, sample_weight=np.empty(0))
_PREDICT_ARGS = dict(svm_type=0, kernel="precomputed", degree=3, coef0=0.0, gamma=0.0)


def fit_costs(K: np.ndarray, y_enc: np.ndarray, n_classes: int, costs, *, max_iter: int,
              cache_size: float) -> list[tuple]:
    """libsvm's models of ``PrecomputedSVC(C, max_iter=, cache_size=).fit_encoded(K, y_enc, classes)``
    for each C in ``costs``: the same ``_libsvm.fit`` calls, without the per-fit wrapper (SVM-KNN
    fits 9 costs on each of several hundred small local kernels per split).

    Not validated: K must be a C-contiguous finite float64 square matrix, ``y_enc`` a float64
    vector of codes 0..n_classes-1 (every one present, n_classes >= 2), one per row of K.
    Raises ValueError as ``fit_encoded`` if a model's coefficients are not finite. A model is
    the tuple ``_libsvm.fit`` returns; ``predict_model`` predicts with it, and its element
    ``FIT_STATUS`` is 1 where libsvm stopped at ``max_iter``.
    """
    kwargs = dict(_FIT_ARGS, cache_size=float(cache_size), max_iter=int(max_iter),
                  class_weight=np.ones(n_classes), random_seed=0)
    _libsvm.set_verbosity_wrap(0)  # as SVC before every fit; libsvm prints otherwise
    models = [_libsvm.fit(K, y_enc, C=float(C), **kwargs) for C in costs]
    coefs = [a for m in models for a in (m[3].ravel(), m[4])]
    if not np.isfinite(np.concatenate(coefs)).all():
        raise ValueError("PrecomputedSVC: the dual coefficients or intercepts are not finite")
    return models


#: Index of libsvm's fit status in a ``fit_costs`` model.
FIT_STATUS = 7


def predict_model(model: tuple, K_te: np.ndarray, cache_size: float) -> np.ndarray:
    """libsvm's one-vs-one votes (class codes, float64) of the rows of ``K_te`` with a ``fit_costs``
    model: ``PrecomputedSVC.predict``'s libsvm call, unvalidated (``K_te`` C-contiguous float64
    with a column per fitted object). Rows are predicted independently."""
    return _libsvm.predict(K_te, *model[:7], cache_size=float(cache_size), **_PREDICT_ARGS)


class PrecomputedSVC:
    """One-vs-one C-SVC on a precomputed kernel (scikit-learn 1.9.1's libsvm binding).

    ``PrecomputedSVC(C, max_iter=m, cache_size=c).fit(K, y)`` equals
    ``SVC(kernel="precomputed", C=C, max_iter=m, cache_size=c).fit(K, y)`` in
    ``classes_``, ``support_``, ``n_support_``, ``dual_coef_``, ``intercept_``
    (SVC's signs), ``n_iter_``, ``predict`` and ``decision_function`` (SVC's
    default ``decision_function_shape="ovr"``) (tested). ``hit_max_iter`` is
    libsvm's fit status 1 (stopped at ``max_iter``), the condition under which
    ``SVC.fit`` emits its ConvergenceWarning; no warning is emitted here.

    Not validated: K must be a finite square matrix and ``K_te`` a finite
    matrix with a column per fitted object (the callers check their input).
    libsvm's ``random_seed`` (used for probability estimates only) is 0,
    where SVC draws it from its ``random_state``.

    ``probability=True`` is ``SVC(probability=True)``: libsvm's Platt scaling, a
    sigmoid per class pair fitted on decision values of an internal 5-fold CV,
    coupled across pairs (``predict_proba``). The SVM itself, hence ``predict``,
    is the same (libsvm fits it apart from the CV; tested).
    """

    def __init__(self, C: float = 1.0, *, max_iter: int = -1, cache_size: float = 200.0,
                 probability: bool = False):
        self.C = C
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.probability = probability

    def fit(self, K, y) -> PrecomputedSVC:
        classes, y_enc = np.unique(np.asarray(y), return_inverse=True)
        return self.fit_encoded(K, y_enc.astype(np.float64), classes)

    def fit_encoded(self, K, y_enc: np.ndarray, classes: np.ndarray) -> PrecomputedSVC:
        """``fit(K, classes[y_enc])`` for labels already encoded: ``classes`` sorted and unique,
        ``y_enc`` their float64 indices 0..len(classes)-1, every class present (callers that fit
        several costs on one label vector encode it once)."""
        K = np.ascontiguousarray(K, dtype=np.float64)
        y_enc = np.ascontiguousarray(y_enc, dtype=np.float64)
        if len(classes) < 2:
            raise ValueError(f"PrecomputedSVC: need at least 2 classes in y, got {len(classes)}")
        if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] != y_enc.shape[0]:
            raise ValueError(f"PrecomputedSVC: K is {K.shape}, expected square with {y_enc.shape[0]} rows")
        self.classes_ = classes
        _libsvm.set_verbosity_wrap(0)  # as SVC before every fit; libsvm prints otherwise
        (self.support_, self.support_vectors_, self._n_support, self._dual_coef, self._intercept,
         self._probA, self._probB, self.fit_status_, self.n_iter_) = _libsvm.fit(
            K, y_enc, C=float(self.C), cache_size=float(self.cache_size),
            max_iter=int(self.max_iter), class_weight=np.ones(len(classes)), random_seed=0,
            **{**_FIT_ARGS, "probability": bool(self.probability)})
        if not (np.isfinite(self._intercept).all() and np.isfinite(self._dual_coef).all()):
            raise ValueError("PrecomputedSVC: the dual coefficients or intercepts are not finite")
        self.hit_max_iter = bool(self.fit_status_ == 1)
        self.shape_fit_ = K.shape
        return self

    @property
    def n_support_(self) -> np.ndarray:
        return self._n_support

    @property
    def dual_coef_(self) -> np.ndarray:
        """SVC's ``dual_coef_``: libsvm's, sign-flipped for two classes."""
        return -self._dual_coef if len(self.classes_) == 2 else self._dual_coef

    @property
    def intercept_(self) -> np.ndarray:
        """SVC's ``intercept_``: libsvm's, sign-flipped for two classes."""
        return -self._intercept if len(self.classes_) == 2 else self._intercept

    def _test_kernel(self, K_te) -> np.ndarray:
        K_te = np.ascontiguousarray(K_te, dtype=np.float64)
        if K_te.ndim != 2 or K_te.shape[1] != self.shape_fit_[0]:
            raise ValueError(
                f"PrecomputedSVC: test kernel is {K_te.shape}, expected {self.shape_fit_[0]} columns"
            )
        return K_te

    def predict(self, K_te) -> np.ndarray:
        """Class labels of the rows of ``K_te`` (test x fit kernel), by one-vs-one vote."""
        pred = _libsvm.predict(
            self._test_kernel(K_te), self.support_, self.support_vectors_, self._n_support, self._dual_coef,
            self._intercept, self._probA, self._probB, cache_size=float(self.cache_size), **_PREDICT_ARGS)
        return self.classes_.take(np.asarray(pred, dtype=np.intp))

    def predict_proba(self, K_te) -> np.ndarray:
        """libsvm's Platt probabilities (columns: ``classes_``); needs ``probability=True`` at fit."""
        if self._probA.size == 0:
            raise ValueError("PrecomputedSVC: predict_proba needs a fit with probability=True")
        return _libsvm.predict_proba(
            self._test_kernel(K_te), self.support_, self.support_vectors_, self._n_support, self._dual_coef,
            self._intercept, self._probA, self._probB, cache_size=float(self.cache_size), **_PREDICT_ARGS)

    def decision_function(self, K_te) -> np.ndarray:
        """SVC's ``decision_function`` (shape "ovr"): (m,) for two classes, else (m, n_classes)."""
        dec = _libsvm.decision_function(
            self._test_kernel(K_te), self.support_, self.support_vectors_, self._n_support, self._dual_coef,
            self._intercept, self._probA, self._probB, cache_size=float(self.cache_size), **_PREDICT_ARGS)
        if len(self.classes_) == 2:
            return -dec.ravel()
        return _ovr_decision_function(dec < 0, -dec, len(self.classes_))
