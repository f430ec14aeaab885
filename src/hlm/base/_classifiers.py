"""Shared input checks, scikit-learn plumbing and the fast-path protocol of estimators on precomputed matrices.

Every estimator here takes ``fit(D_train_train, y)`` and
``predict(D_test_train)``: rows are the objects to fit or classify, columns the
fitted (training) objects. The ``pairwise`` input tag makes scikit-learn's CV
tools slice square training matrices on both axes.

The fast-path protocol (``FastPathMixin``)
------------------------------------------
The evaluation chooses hyper-parameters by K-fold CV over a grid
(``hlm.pipeline.evaluation.cv``): per fold, the predictions of the validation rows at
every grid point. By definition that is one refit per grid point and fold
(``hlm.base._grid.predict_each``), and that is what an estimator gets without
doing anything: ``FastPathMixin`` (a base of ``PrecomputedClassifier``, and of
``SVMVectors`` on feature vectors) supplies correct, slow defaults, and the CV
calls its methods directly. To be fast, a method overrides some of them:

``predict_grid(X_fit, y, X_val, grid)``
    one fold, every grid point, sharing what the points share (a spectrum
    that does not depend on C, a neighbour ranking that does not depend on k).
    Must equal ``predict_each`` exactly; register it in tests/test_grid_paths.py.
``predict_folds(X, y, folds, grid)``
    every fold at once from the whole training matrix (k-NN: no fit matrix
    sliced per fold); the default returns None (not supported). Must equal
    the per-fold path; register it in tests/test_grid_paths.py too.
``_warm_up()``
    load compiled code before the first split is timed (``CompiledKernels``
    for numba estimators); the default does nothing.
``_transform_folds(wrapper, R, y, folds, groups, facts)``
    ``predict_folds`` of a ``DistanceTransform`` wrapping this estimator,
    over the transform and this estimator's own grid at once (Kernel HLM:
    ``hlm.local_mapping._kernel_hlm_folds``); the default returns None (the wrapper's
    generic path). Registered with the wrapper in tests/test_grid_paths.py.
``_path_params``
    the grid parameters ``predict_grid`` varies on one shared fit
    (``hlm.base._grid.group_grid``'s inner parameters).

``FastPathMixin``'s docstring is the full contract: inputs, outputs, None and
``HLMError`` semantics, and the process rules. ``grid_predictions`` is how the
CV calls ``predict_grid`` (with the fall-back to refits); ``CompiledKernels``
is the ``_warm_up`` of numba estimators.
"""

from __future__ import annotations

import warnings
from functools import cache
from numbers import Number

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from hlm.base._blocks import nonfinite
from hlm.base._grid import predict_each
from hlm.errors import DataError, HLMError


@cache
def _init_parameter_names(cls) -> tuple[str, ...]:
    """``BaseEstimator._get_param_names`` of ``cls``, computed once per class."""
    return tuple(BaseEstimator._get_param_names.__func__(cls))


class CachedParamNames:
    """Mixin (before ``BaseEstimator``): the ``__init__`` parameter names, looked up once per class.

    scikit-learn inspects ``__init__``'s signature on every ``get_params``,
    ``set_params`` and ``clone`` (~40 us); a CV grid path calls them thousands of
    times per split. A class's signature does not change, so the names are cached.
    """

    @classmethod
    def _get_param_names(cls):
        return list(_init_parameter_names(cls))


class FastPathMixin:
    """The fast-path protocol: how cross-validation runs an estimator over a parameter grid.

    ``hlm.pipeline.evaluation.cv`` predicts each fold at every grid point through these
    methods; the defaults refit a clone per grid point, so an estimator that
    overrides nothing is correct. Override to share work across grid points
    or folds; an override must give exactly what the defaults give.

    ``predict_grid(X_fit, y, X_val, grid)`` -- one CV fold, every grid point
        ``X_fit``: the fold's fit matrix (pairwise: n_fit x n_fit; feature
        vectors: n_fit rows), ``y`` its labels, ``X_val`` the validation rows
        (pairwise: n_val x n_fit), ``grid`` a list of ``set_params`` dicts (a
        point may leave out a parameter: the estimator's own value holds).
        Returns one entry per grid point: the labels predicted for ``X_val``
        by ``clone(self).set_params(**point).fit(X_fit, y)``, or None where
        that fit raises ``HLMError`` (the data cannot support the point); a
        2-D array with one row per point also does. It must equal
        ``hlm.base._grid.predict_each`` (the default) element for element,
        invalid grid points raising the same errors (``group_grid`` validates
        them); every override is registered in tests/test_grid_paths.py,
        which checks that. Returning None, or raising ``HLMError`` (e.g. a
        one-class fit set the shared part refuses), declines: the CV then
        refits per grid point (``grid_predictions``). Any other exception
        propagates.
    ``predict_folds(X, y, folds, grid)`` -- every fold at once
        ``X``: the whole training input as the CV got it, ``folds`` a list of
        (fit indices, validation indices). Returns, per fold, what
        ``predict_grid(X[fit][:, fit], y[fit], X[val][:, fit], grid)`` returns
        (rows only for feature vectors), or None to decline (the default:
        not supported); ``HLMError`` also declines. Every override is
        registered in tests/test_grid_paths.py too, which checks it against
        the per-fold path.
    ``predict_fold(X, y, fit, val, grid)`` -- one fold from the whole training matrix
        What ``predict_grid(X[fit][:, fit], y[fit], X[val][:, fit], grid)``
        returns, without holding the fold's fit block (pairwise input only;
        ``SimilarityFromDistances`` converts it to 1/d as it reads it). None
        declines (the default), as ``HLMError`` does: the CV slices the fold
        and calls ``predict_grid``. Every override is registered in
        tests/test_grid_paths.py, which checks it against that.
    ``_warm_up()``
        Loads compiled code (numba kernels) before the evaluation times the
        first split, once per process (``CompiledKernels``). Must leave the
        estimator unchanged (unfitted); any exception is ignored. Default: no-op.
    ``_transform_folds(wrapper, R, y, folds, groups, facts)``
        ``wrapper.predict_folds`` for a ``DistanceTransform`` around this
        estimator, given the wrapper's grid grouped by transform (``groups``)
        and the relation's facts: the same contract as ``predict_folds``.
        Default: None (the wrapper transforms per candidate, then calls this
        estimator's ``predict_grid`` per fold).
    ``_path_params``
        Class attribute: the grid parameters ``predict_grid`` varies on one
        shared fit (``group_grid``'s inner parameters, e.g. C of an SVM whose
        kernel does not depend on C); grid points differing in other
        parameters get a fit each. Read by the estimators' own ``predict_grid`` (not by the CV).

    Process rules: with ``n_jobs > 1`` the CV runs ``predict_grid`` and
    ``predict_fold`` of different folds in worker processes (joblib's loky
    backend, the estimator pickled); ``predict_folds`` runs once, in the
    calling process, for any ``n_jobs``. So a path must not modify ``self``
    (one estimator serves every fold: fit clones), must draw randomness only
    from the estimator's own ``random_state``, and may keep module-level
    caches only to save time, never to change a result: the CV errors are then
    the same for any ``n_jobs``. Warnings raised during CV are not shown (the
    final fit's are).
    """

    #: the grid parameters ``predict_grid`` varies on one shared fit (see the class docstring)
    _path_params: tuple[str, ...] = ()

    def predict_grid(self, X_fit, y, X_val, grid: list[dict]) -> list | None:
        """Predictions of ``X_val`` after a refit on ``(X_fit, y)`` at every grid point (one CV fold).

        The definition: one refit of a clone per grid point (``predict_each``; None
        where the data cannot support a point). Estimators whose grid points share
        work override this with a faster path, tested equal (see ``FastPathMixin``).
        """
        return predict_each(self, X_fit, y, X_val, grid)

    def predict_folds(self, X, y, folds, grid: list[dict]) -> list | None:
        """Every fold's ``predict_grid`` from the whole training input at once; None: not supported."""
        return None

    def predict_fold(self, X, y, fit, val, grid: list[dict]) -> list | None:
        """One fold's ``predict_grid`` read from the whole training matrix; None: not supported."""
        return None

    def _transform_folds(self, wrapper, R, y, folds, groups: dict, facts) -> list | None:
        """A ``DistanceTransform``'s ``predict_folds`` around this estimator; None: the generic path."""
        return None

    def _warm_up(self) -> None:
        """Load compiled code before the evaluation times the first split (nothing to load here)."""


def grid_predictions(estimator, X_fit, y, X_val, grid: list[dict]) -> list:
    """One CV fold at every grid point: ``estimator.predict_grid``, or one refit per point where
    the path declines (returns None or raises ``HLMError``) or the estimator is not a
    ``FastPathMixin`` (any scikit-learn classifier)."""
    if isinstance(estimator, FastPathMixin):
        try:
            predictions = estimator.predict_grid(X_fit, y, X_val, grid)
        except HLMError:  # e.g. a one-class fold: score per point, None where a fit fails
            predictions = None
        if predictions is not None:
            return predictions
    return predict_each(estimator, X_fit, y, X_val, grid)


class PrecomputedClassifier(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """Base class: pairwise tag, input checks, label encoding, and the fast-path protocol's defaults
    (``FastPathMixin``: one refit per grid point)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        return tags

    #: scikit-learn's name for a matrix of distances between the objects (``metric="precomputed"``, as
    #: ``KNeighborsClassifier`` takes one); a similarity method's is None (``SimilarityClassifier``): its matrix
    #: is a kernel. scikit-learn's estimator checks give each the matrices it expects.
    metric = "precomputed"

    # -- input checks -------------------------------------------------------
    #: classes ``fit`` needs; 1 only for the incremental learners' batch refits (``hlm.local_mapping.incremental``)
    _min_classes = 2

    def _check_fit_input(self, D, y) -> tuple[np.ndarray, np.ndarray]:
        """(D as float64, class index per object); sets ``classes_``, ``n_features_in_``, ``class_prior_``.

        Every estimator's ``fit`` goes through here, so all refuse the same inputs with a
        one-line DataError (a ValueError): a matrix that is not square, empty or holds
        NaN/inf (distances: negative) entries; a ``y`` that is not 1-D, has the wrong length,
        missing labels (None/NaN) or labels of mixed types (e.g. 1 and 'a': convert them
        to one type first); and a ``y`` of a single class, as scikit-learn's SVC does: a
        classifier needs at least 2 classes. The incremental learners (``hlm.local_mapping.incremental``) may
        start from a single-class batch, since a later batch can add classes.
        """
        name = "S_train_train" if self._input_kind == "similarity" else "D_train_train"
        D = _as_matrix(D, name, self._input_kind)
        if D.shape[0] != D.shape[1]:
            raise DataError(f"fit: {name} must be square, got {D.shape[0]} x {D.shape[1]}")
        if D.shape[0] == 0:
            raise DataError(f"fit: {name} is empty (0 x 0); a classifier needs objects of at least 2 classes")
        classes, y_idx = fit_classes(y, D.shape[0], min_classes=self._min_classes)
        self.classes_ = classes
        self.n_features_in_ = D.shape[1]
        counts = np.bincount(y_idx, minlength=len(self.classes_))
        self.class_prior_ = counts / counts.sum()
        return D, y_idx

    #: "distance" (non-negative) or "similarity" (any finite value): what the matrices hold
    _input_kind = "distance"

    def _check_fitted(self) -> None:
        if not hasattr(self, "classes_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")

    def _check_predict_input(self, D) -> np.ndarray:
        self._check_fitted()
        name = "S_test_train" if self._input_kind == "similarity" else "D_test_train"
        D = _as_matrix(D, name, self._input_kind)
        if D.shape[1] != self.n_features_in_:
            raise DataError(
                f"predict: {name} has {D.shape[1]} columns but the model was fitted on "
                f"{self.n_features_in_} objects (columns must be the training objects)"
            )
        return D


class PosteriorClassifier(PrecomputedClassifier):
    """A classifier with class scores log pi_k + log phi(z | M_k): posteriors by eq. 6, in the log domain.

    Subclasses implement ``predict_log_scores(D_test_train)``.
    """

    def predict_log_proba(self, D):
        """Log class posteriors, log p_k(z) of eq. 6, normalised in the log domain.

        Parameters
        ----------
        D : array-like of shape (n_samples, n_train)
            Distances from the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        scores = self.predict_log_scores(D)
        return scores - logsumexp(scores, axis=1, keepdims=True)

    def predict_proba(self, D):
        """Class posteriors p_k(z) of eq. 6.

        Parameters
        ----------
        D : array-like of shape (n_samples, n_train)
            Distances from the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Each row sums to 1; columns in the order of ``classes_``.
        """
        return np.exp(self.predict_log_proba(D))

    def predict(self, D):
        """The class of highest posterior (eq. 6) of each row object.

        Parameters
        ----------
        D : array-like of shape (n_samples, n_train)
            Distances from the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        scores = self.predict_log_scores(D)  # first: NotFittedError before any fitted attribute is read
        return self.classes_[np.argmax(scores, axis=1)]


class CompiledKernels(FastPathMixin):
    """Mixin (before the base class) of estimators with numba kernels: ``_warm_up`` loads them before any timing.

    ``hlm.pipeline.evaluation.evaluate`` calls it before the first split's clock starts, so
    no split's fit or predict time carries the once-per-process load of the
    compiled code (like loading a library). It fits and predicts a clone on a
    6-object, 2-class toy problem, which loads the kernels that problem reaches
    (most of them; e.g. P-SVM's active-set phase may still load during split 0).
    """

    def _warm_up(self) -> None:
        from sklearn.base import clone

        S = np.exp(-np.abs(np.subtract.outer(np.arange(6.0), np.arange(6.0))))
        M = 1.0 - S if self._input_kind == "distance" else S
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone(self).fit(M, np.repeat([0, 1], 3)).predict(M)


class SimilarityClassifier(PrecomputedClassifier):
    """Base class of the compared methods (spec section 6): matrices hold similarities.

    ``fit(S_train_train, y)``, ``predict(S_test_train)``; row = the object to
    fit or classify, column = a training object. Similarities may be negative.
    """

    _input_kind = "similarity"
    metric = None


def fit_classes(y, n: int, rows: str = "objects", min_classes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """(classes, class index per row) of training labels ``y`` for ``n`` rows, checked as
    ``PrecomputedClassifier._check_fit_input`` documents (one-line DataErrors)."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise DataError(f"fit: y must be 1-D (one label per object), got an array of shape {y.shape}")
    if y.shape[0] != n:
        raise DataError(f"fit: y has {y.shape[0]} labels for {n} {rows}")
    if y.dtype.kind == "f" and np.isnan(y).any():
        bad = np.flatnonzero(np.isnan(y))
        raise DataError(f"fit: y has {bad.size} missing (NaN) labels, first at position {bad[0]}")
    if y.dtype == object:
        _check_label_types(y)
    if y.dtype.kind == "f" and not np.array_equal(y, np.round(y)):  # a regression target, not classes
        value = y[np.flatnonzero(y != np.round(y))[0]].item()
        raise DataError(f"fit: Unknown label type: continuous (y holds {value!r}); give class labels: integers "
                        "or strings")
    try:
        classes, y_idx = np.unique(y, return_inverse=True)
    except TypeError as exc:  # labels that cannot be ordered
        raise DataError(f"fit: the labels in y cannot be sorted ({exc}); give every label one type") from None
    if len(classes) < min_classes:
        first = classes[0].item() if isinstance(classes[0], np.generic) else classes[0]
        raise DataError(f"fit: y has a single class {first!r}; a classifier needs at least 2 classes")
    return classes, y_idx


def _check_label_types(y: np.ndarray) -> None:
    """DataError for a missing label (None/NaN) or labels of mixed types (numbers and strings) in ``y``."""
    values = y.tolist()
    if set(map(type, values)) == {str}:  # the usual case, checked at C speed
        return
    first_of = {}
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and v != v):
            raise DataError(f"fit: y has a missing label ({v!r}) at position {i}")
        kind = "str" if isinstance(v, str) else "number" if isinstance(v, Number) else type(v).__name__
        first_of.setdefault(kind, (i, v))
    if len(first_of) > 1:
        (k1, (i1, v1)), (k2, (i2, v2)) = list(first_of.items())[:2]
        raise DataError(f"fit: y mixes label types ({k1} {v1!r} at position {i1}, {k2} {v2!r} at position {i2}); "
                        "give every label one type, e.g. all strings")


def _numeric_matrix(D, what: str) -> np.ndarray:
    if np.asarray(D).dtype.kind == "c":  # float64 would silently drop the imaginary parts
        raise DataError(f"{what}: Complex data not supported; distances, similarities and features are real")
    try:
        D = np.asarray(D, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{what}: not a numeric matrix ({exc})") from None
    if D.ndim != 2:
        raise DataError(f"{what}: expected a 2-D matrix, got {D.ndim}-D")
    return D


def _as_matrix(D, what: str, kind: str = "distance") -> np.ndarray:
    D = _numeric_matrix(D, what)
    if D.size and _all_valid(D, kind):  # fast; the checks below name a bad entry
        return D
    bad = nonfinite(D)
    if bad:
        raise DataError(f"{what}: {bad[0]} NaN/inf entries, first at [{bad[1]}, {bad[2]}]")
    if kind == "distance" and (D < 0).any():
        raise DataError(f"{what}: {int((D < 0).sum())} negative distances (min {D.min():g})")
    return D


def _all_valid(D: np.ndarray, kind: str) -> bool:
    """No NaN/inf entry and, for distances, none negative (-0.0 is reported invalid: check exactly).

    Distances: one reduction, the largest bit pattern read as unsigned integer is below that of
    +inf (a set sign bit or an all-ones exponent is not); similarities: NaN propagates through
    min and max.
    """
    if kind == "distance":
        return bool(D.view(np.uint64).max() < _INF_BITS)
    lo, hi = D.min(), D.max()
    return bool(np.isfinite(lo) and np.isfinite(hi))


#: the bits of +inf: a finite float >= +0.0 read as uint64 is below it; a set sign bit or all-ones exponent is not
_INF_BITS = np.uint64(0x7FF0000000000000)


def as_vectors(X, what: str, allow_nan: bool = False) -> np.ndarray:
    """Feature vectors X as a finite, non-empty float64 2-D array, else a one-line DataError;
    ``allow_nan``: NaN (a missing value) passes, +-inf does not."""
    if not allow_nan:
        X = _as_matrix(X, what, kind="vectors")  # any finite value (the similarity rule)
    elif np.isinf(X := _numeric_matrix(X, what)).any():
        i, j = np.argwhere(np.isinf(X))[0]
        raise DataError(f"{what}: {int(np.isinf(X).sum())} infinite entries, first at [{i}, {j}]")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"{what}: empty matrix {X.shape[0]} x {X.shape[1]}")
    return X


def fitted_vectors(estimator, X, fitted: str, what: str = "predict: X", allow_nan: bool = False) -> np.ndarray:
    """X for a fitted estimator on feature vectors: NotFittedError before fit (``fitted``: an attribute fit
    sets), then ``as_vectors`` and the fitted feature count (one-line DataErrors)."""
    if not hasattr(estimator, fitted):
        raise NotFittedError(f"{type(estimator).__name__} is not fitted yet; call fit first")
    X = as_vectors(X, what, allow_nan)
    if X.shape[1] != estimator.n_features_in_:
        raise DataError(f"{what} has {X.shape[1]} features; the model was fitted on {estimator.n_features_in_}")
    return X


def standard_scale(X: np.ndarray, standardize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(mean, sd) of each feature of X, a constant feature keeping sd 1; (0, 1) without ``standardize``."""
    if not standardize:
        return np.zeros(X.shape[1]), np.ones(X.shape[1])
    constant = np.ptp(X, axis=0) == 0  # exactly: the sd of a constant 0.1 column is 1.4e-17, not 0
    sd = X.std(axis=0)
    mean = np.where(constant, X[0], X.mean(axis=0))
    return mean, np.where(constant | ~(sd > 0), 1.0, sd)  # sd 0 also where tiny values underflow
