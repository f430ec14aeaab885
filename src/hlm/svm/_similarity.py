"""Global SVMs of the comparison (spec ``docs/compared-methods-spec.md`` sections 6.6, 6.7; HLM paper 5.1, 5.3).

* ``SVMSimilarityKernel``: the fit-set similarity matrix made PSD by clip, flip
  or shift (spec 6.6), with the consistent test treatment, as a precomputed
  kernel.
* ``SVMSimilarityFeatures``: each object's similarity vector to the fit set as
  its feature vector, linear or RBF kernel (spec 6.7).
* ``SVMVectors``: a standard SVM on raw feature vectors (HLM paper end of 5.3);
  not pairwise.

All are one-vs-one (libsvm's C-SVC) [V: HLM 5.1; spec 2]. libsvm breaks
vote ties by the first (smallest sorted) class. ``max_iter`` caps libsvm (at
C = 1e5 it can take very long, spec 6.6/8.8); hitting it is re-emitted as a
``ConvergenceWarning`` naming the method and C.

The two similarity SVMs have precomputed kernels and fit them with
``PrecomputedSVC`` (libsvm called as ``SVC(kernel="precomputed")`` calls it,
without SVC's per-fit validation, which dominated their CV grids: ~6 ms per
fit), in the CV grid path and the final fit alike. ``SVMVectors`` uses
``SVC``'s own linear/RBF kernel.

``probability=True`` adds libsvm's Platt scaling (``predict_proba``; an internal
5-fold CV per class pair, seed 0), for the final fit only: the evaluation sets it
there (``MethodSpec.final_fixed``), the CV grid paths never fit it, and the SVM
and its predictions do not change (docs/beyond-the-paper-spec.md section 3).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.metaestimators import available_if

from hlm.base._classifiers import (
    CachedParamNames,
    FastPathMixin,
    SimilarityClassifier,
    as_vectors,
    fit_classes,
    fitted_vectors,
    standard_scale,
)
from hlm.base._grid import group_grid
from hlm.svm._libsvm import PrecomputedSVC
from hlm.svm._spectrum import fit_spectrum

#: Constraints shared by every SVM here (sklearn's SVC: max_iter = -1 means no limit).
_SVC_CONSTRAINTS = {
    "C": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1})],
    "cache_size": [Interval(Real, 0, None, closed="neither")],
    "probability": ["boolean"],
}


# ---------------------------------------------------------------- shared helpers
def fit_svc(K, y, *, C, max_iter, cache_size, kernel="precomputed", gamma="scale",
            probability=False) -> tuple[SVC, bool]:
    """Fit ``SVC`` (one-vs-one; ``SVMVectors``); return it and whether libsvm stopped at ``max_iter``.

    libsvm's own ConvergenceWarning is swallowed (the caller re-emits a clearer
    one); any other warning is passed on unchanged. ``probability``: libsvm's Platt scaling, seed 0;
    scikit-learn 1.9 deprecates that parameter (to go in 1.11; the pinned 1.9.1 has it), and its
    FutureWarning is swallowed too.
    """
    svc = SVC(kernel=kernel, C=float(C), gamma=gamma, max_iter=int(max_iter), cache_size=float(cache_size),
              probability=bool(probability), random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svc.fit(K, y)
    hit = False
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            hit = True
        elif issubclass(w.category, FutureWarning) and "`probability` parameter" in str(w.message):
            pass
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return svc, hit


def fit_precomputed(estimator, y_idx: np.ndarray, what: str) -> None:
    """Fit ``estimator.svc_``: ``PrecomputedSVC`` (one-vs-one, equal to ``SVC(kernel="precomputed")``,
    tested) on ``estimator._kernel``; set ``converged_`` and warn, naming ``what``, if libsvm hit max_iter."""
    estimator.svc_ = PrecomputedSVC(float(estimator.C), max_iter=int(estimator.max_iter),
                                    cache_size=float(estimator.cache_size),
                                    probability=bool(estimator.probability)).fit(estimator._kernel, y_idx)
    estimator.converged_ = not estimator.svc_.hit_max_iter
    if not estimator.converged_:
        warn_max_iter(what, estimator.C, estimator.max_iter)


def warn_max_iter(what: str, C: float, max_iter: int, detail: str = "") -> None:
    """The one-line ConvergenceWarning for an SVM that hit ``max_iter`` (spec 6.6, 8.8: record it)."""
    warnings.warn(
        f"{what} C={C:g}: libsvm stopped at max_iter={max_iter} before converging{detail}; "
        "predictions use the unconverged solution",
        ConvergenceWarning,
        stacklevel=3,
    )


def squared_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """||A_i - B_j||^2 by the BLAS expansion, tiny negative round-off clipped to 0."""
    d2 = (A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :] - 2.0 * (A @ B.T)
    return np.maximum(d2, 0.0)


# ---------------------------------------------------------------- spec 6.6
class SVMSimilarityKernel(SimilarityClassifier):
    """SVM with the similarities as kernel, spectrum made PSD (spec 6.6; HLM paper 5.1, Table 3).

    The HLM paper's "SVM-similarities as kernel (clip)" (section 5.1, after Chen et al. [12]).
    K = clip/flip/shift of Sym(S_fit) (``fit_spectrum``, :class:`SpectrumTransform`); test kernel S_te P
    for clip/flip, S_te for shift (consistent test treatment [V: skl-groups]). One-vs-one libsvm C-SVC
    on the precomputed kernel (``PrecomputedSVC``); vote ties go to the first (smallest) class.

    Parameters
    ----------
    C : float, default=1.0
        SVM cost (> 0); CV grid 1e-3..1e5 [V: Sadowski].
    spectrum : {"clip", "flip", "shift"}, default="clip"
        "clip" (negative eigenvalues set to 0: the nearest PSD matrix in Frobenius norm) is the method of
        the comparison; "flip" (U |Lambda| U^T) and "shift" (Sym(S) + max(0, -lambda_min) I) are variants.
    max_iter : int, default=100_000
        libsvm's iteration cap (-1: none), passed to ``PrecomputedSVC`` as ``SVC``'s. Hitting it emits a
        ``ConvergenceWarning`` naming the method and C (at C = 1e5 libsvm can take very long, spec 6.6).
    cache_size : float, default=200
        libsvm's kernel cache in MB.
    probability : bool, default=False
        Fit libsvm's Platt scaling too (``predict_proba``; an internal 5-fold CV per class pair, seed 0);
        predictions do not change.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels.
    n_features_in_ : int
        Number of fit objects (the columns ``predict`` expects).
    class_prior_ : ndarray of shape (n_classes,)
        Class frequencies of the fit set.
    transform_ : SpectrumTransform
        The fitted similarity-to-kernel transform: the training kernel and the test map.
    negative_eigenfraction_ : float
        Share of |eigenvalue| mass of Sym(S_fit) on negative eigenvalues (0 for a PSD matrix).
    converged_ : bool
        False if libsvm stopped at ``max_iter``.
    svc_ : PrecomputedSVC
        The SVM on the kernel, classes 0..c-1 (indices into ``classes_``).

    See Also
    --------
    SVMSimilarityFeatures : the similarities as features (spec 6.7).
    SVMKNN : the same kernels on each test object's neighbourhood (spec 6.8).

    Examples
    --------
    Three well separated blobs. The similarity -||x - z|| is indefinite (half of its spectrum's absolute
    mass is on negative eigenvalues, since the trace is 0); the clip makes it a kernel.

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.svm import SVMSimilarityKernel
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> X = np.vstack([rng.normal(c, 0.5, (10, 2)) for c in centres])
    >>> y = np.repeat(["a", "b", "c"], 10)
    >>> X_te = centres + rng.normal(0.0, 0.3, centres.shape)  # one test object near each centre
    >>> S, S_te = -cdist(X, X), -cdist(X_te, X)  # S_train_train, S_test_train
    >>> model = SVMSimilarityKernel(C=1.0, spectrum="clip").fit(S, y)
    >>> print(model.predict(S_te))
    ['a' 'b' 'c']
    >>> round(model.negative_eigenfraction_, 2), model.converged_
    (0.5, True)

    Platt probabilities, one column per class of ``classes_``:

    >>> proba = SVMSimilarityKernel(probability=True).fit(S, y).predict_proba(S_te)
    >>> proba.shape
    (3, 3)
    >>> print(proba.argmax(axis=1))
    [0 1 2]
    """

    _parameter_constraints = {**_SVC_CONSTRAINTS, "spectrum": [StrOptions({"clip", "flip", "shift"})]}

    _path_params = ("C",)  # the spectrum transform does not depend on C

    def __init__(self, C: float = 1.0, spectrum: str = "clip", max_iter: int = 100_000, cache_size: float = 200,
                 probability: bool = False):
        self.C = C
        self.spectrum = spectrum
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.probability = probability

    def fit(self, S, y):
        """Fit the PSD kernel of the fit set and the one-vs-one SVM on it.

        Parameters
        ----------
        S : array-like of shape (n, n)
            Similarities among the fit objects (S_train_train); symmetrised.
        y : array-like of shape (n,)
            Class labels (at least 2 classes).

        Returns
        -------
        self : SVMSimilarityKernel
            The fitted estimator.
        """
        y_idx = self._fit_kernel(S, y)
        self._fit_svc(y_idx)
        return self

    def _fit_kernel(self, S, y) -> np.ndarray:
        """Checks and the PSD kernel of the fit set (independent of C); returns the class indices."""
        self._validate_params()
        S, y_idx = self._check_fit_input(S, y)
        self.transform_ = fit_spectrum(S, self.spectrum)
        self.negative_eigenfraction_ = self.transform_.negative_eigenfraction
        self._kernel = self.transform_.kernel
        return y_idx

    def _fit_svc(self, y_idx: np.ndarray) -> None:
        fit_precomputed(self, y_idx, f"SVM (sims-as-kernel, {self.spectrum})")

    def _test_kernel(self, S: np.ndarray) -> np.ndarray:
        return self.transform_.transform_test(S)

    def predict(self, S):
        """Labels of the test objects: the one-vs-one vote on the test kernel (``transform_``).

        Parameters
        ----------
        S : array-like of shape (m, n)
            Similarities of the test objects (rows) to the fit objects (columns), S_test_train.

        Returns
        -------
        labels : ndarray of shape (m,)
            Predicted labels, values of ``classes_``.
        """
        S = self._check_predict_input(S)
        return self.classes_[self.svc_.predict(self._test_kernel(S))]

    @available_if(lambda self: self.probability)  # as SVC: only with Platt scaling
    def predict_proba(self, S):
        """Platt probabilities over ``classes_`` (needs ``probability=True``).

        Parameters
        ----------
        S : array-like of shape (m, n)
            S_test_train, as for ``predict``.

        Returns
        -------
        proba : ndarray of shape (m, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        S = self._check_predict_input(S)
        return self.svc_.predict_proba(self._test_kernel(S))

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: the spectrum transform once, an SVM per C (equal to refits, tested).

        Parameters
        ----------
        S_fit : array-like of shape (n, n)
            Similarities among the fold's fit objects.
        y : array-like of shape (n,)
            Their labels.
        S_val : array-like of shape (m, n)
            Similarities of the fold's validation objects to its fit objects.
        grid : list of dict
            Parameter settings, e.g. ``[{"C": 0.1}, {"C": 10.0}]``.

        Returns
        -------
        predictions : list of ndarray of shape (m,)
            The labels of S_val at each setting, in the order of ``grid``.
        """
        return _svm_grid_path(self, S_fit, y, S_val, grid)


# ---------------------------------------------------------------- spec 6.7
class SVMSimilarityFeatures(SimilarityClassifier):
    """SVM with each object's similarity vector to the fit set as features (spec 6.7; HLM paper 5.1, Tables 2-3).

    The HLM paper's "SVM-similarities as features" (section 5.1), linear (Table 3) or RBF (Table 2).
    Features: the rows of S_fit (self-similarity included [R]) and of S_te; no feature scaling [P].
    Kernel F F^T (linear; spectrum's "square") or exp(-gamma' ||F_i - F_j||^2) (rbf), precomputed;
    one-vs-one libsvm C-SVC (``PrecomputedSVC``). The feature dimension is the number of fit objects.

    Parameters
    ----------
    C : float, default=1.0
        SVM cost (> 0; grid 1e-3..1e5 [V: Sadowski]).
    kernel : {"linear", "rbf"}, default="linear"
        Kernel on the similarity features.
    gamma : float, default=1e-3
        RBF width (> 0); ignored for linear.
    gamma_scale : {"absolute", "median"}, default="absolute"
        "absolute": gamma' = gamma (grid 1e-5..1e2 [P]); "median": gamma' =
        gamma / median_{i<j} ||F_i - F_j||^2 over the fit rows (scale-free, grid
        2^-5..2^5 [P], spec 3). If that median is 0 the mean over i<j is used
        instead [P]; if all rows are identical, gamma' = gamma (with a warning).
    max_iter : int, default=100_000
        libsvm's iteration cap (-1: none), passed to ``PrecomputedSVC`` as ``SVC``'s; hitting it warns
        (``ConvergenceWarning``).
    cache_size : float, default=200
        libsvm's kernel cache in MB.
    probability : bool, default=False
        Fit libsvm's Platt scaling too (``predict_proba``; an internal 5-fold CV per class pair, seed 0);
        predictions do not change.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels.
    n_features_in_ : int
        Number of fit objects (the columns ``predict`` expects).
    class_prior_ : ndarray of shape (n_classes,)
        Class frequencies of the fit set.
    features_ : ndarray of shape (n, n)
        The fit set's feature vectors F (the rows of S_fit).
    gamma_ : float
        The gamma' used (NaN for linear).
    converged_ : bool
        False if libsvm stopped at ``max_iter``.
    svc_ : PrecomputedSVC
        The SVM on the kernel, classes 0..c-1 (indices into ``classes_``).

    See Also
    --------
    SVMSimilarityKernel : the similarity matrix itself as the kernel (spec 6.6).

    Notes
    -----
    If the variance between classes is large relative to the variance within classes, the features
    can discriminate poorly even for well separated classes (HLM paper section 1, citing Chen et al.).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.svm import SVMSimilarityFeatures
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> X = np.vstack([rng.normal(c, 0.5, (10, 2)) for c in centres])
    >>> y = np.repeat(["a", "b", "c"], 10)
    >>> X_te = centres + rng.normal(0.0, 0.3, centres.shape)  # one test object near each centre
    >>> S, S_te = np.exp(-cdist(X, X) ** 2), np.exp(-cdist(X_te, X) ** 2)
    >>> model = SVMSimilarityFeatures(C=1.0, kernel="rbf", gamma=1.0, gamma_scale="median").fit(S, y)
    >>> print(model.predict(S_te))
    ['a' 'b' 'c']
    >>> model.features_.shape  # one feature per fit object
    (30, 30)
    >>> linear = SVMSimilarityFeatures(kernel="linear").fit(S, y)
    >>> print(linear.predict(S_te), np.isnan(linear.gamma_))
    ['a' 'b' 'c'] True
    """

    _parameter_constraints = {
        **_SVC_CONSTRAINTS,
        "kernel": [StrOptions({"linear", "rbf"})],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "gamma_scale": [StrOptions({"absolute", "median"})],
    }

    _path_params = ("C", "gamma")  # the features and their squared distances depend on neither

    def __init__(
        self,
        C: float = 1.0,
        kernel: str = "linear",
        gamma: float = 1e-3,
        gamma_scale: str = "absolute",
        max_iter: int = 100_000,
        cache_size: float = 200,
        probability: bool = False,
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.gamma_scale = gamma_scale
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.probability = probability

    def fit(self, S, y):
        """Fit the features, their kernel (and gamma') and the one-vs-one SVM.

        Parameters
        ----------
        S : array-like of shape (n, n)
            Similarities among the fit objects (S_train_train); row i is object i's feature vector.
        y : array-like of shape (n,)
            Class labels (at least 2 classes).

        Returns
        -------
        self : SVMSimilarityFeatures
            The fitted estimator.
        """
        y_idx = self._fit_kernel(S, y)
        self._fit_svc(y_idx)
        return self

    def _fit_kernel(self, S, y) -> np.ndarray:
        """Checks, features and the kernel of the fit set (independent of C); returns the class indices."""
        self._validate_params()
        F, y_idx = self._check_fit_input(S, y)
        self.features_ = F
        if self.kernel == "linear":
            self.gamma_ = np.nan
            K = F @ F.T
        else:
            d2 = squared_distances(F, F)
            np.fill_diagonal(d2, 0.0)
            self._d2 = (d2 + d2.T) / 2.0
            self.gamma_ = self._effective_gamma(self._d2)
            K = np.exp(-self.gamma_ * self._d2)
        self._kernel = (K + K.T) / 2.0
        return y_idx

    def _set_gamma(self, gamma: float) -> None:
        """Another gamma on the same fit set: only the RBF kernel is recomputed (CV grid path)."""
        self.gamma = gamma
        if self.kernel == "rbf":
            self.gamma_ = self._effective_gamma(self._d2)
            K = np.exp(-self.gamma_ * self._d2)
            self._kernel = (K + K.T) / 2.0

    def _fit_svc(self, y_idx: np.ndarray) -> None:
        fit_precomputed(self, y_idx, f"SVM (sims-as-features, {self.kernel})")

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: features and squared distances once, the kernel per gamma,
        an SVM per (gamma, C) (equal to refits, tested).

        Parameters
        ----------
        S_fit : array-like of shape (n, n)
            Similarities among the fold's fit objects.
        y : array-like of shape (n,)
            Their labels.
        S_val : array-like of shape (m, n)
            Similarities of the fold's validation objects to its fit objects.
        grid : list of dict
            Parameter settings, e.g. ``[{"C": 1.0, "gamma": 0.5}, {"C": 10.0, "gamma": 0.5}]``.

        Returns
        -------
        predictions : list of ndarray of shape (m,)
            The labels of S_val at each setting, in the order of ``grid``.
        """
        return _svm_grid_path(self, S_fit, y, S_val, grid)

    def _effective_gamma(self, d2: np.ndarray) -> float:
        if self.gamma_scale == "absolute":
            return float(self.gamma)
        upper = d2[np.triu(np.ones(d2.shape, dtype=bool), k=1)]
        scale = float(np.median(upper)) if upper.size else 0.0
        if scale <= 0.0 and upper.size:
            scale = float(upper.mean())  # [P] more than half the pairs are duplicates
        if scale <= 0.0:
            warnings.warn(
                "SVM (sims-as-features, rbf): all fit rows are identical, so gamma_scale='median' "
                "has no scale; using gamma unscaled",
                UserWarning,
                stacklevel=3,
            )
            return float(self.gamma)
        return float(self.gamma) / scale

    def _test_kernel(self, S_te: np.ndarray, d2: np.ndarray | None = None) -> np.ndarray:
        if self.kernel == "linear":
            return S_te @ self.features_.T
        return np.exp(-self.gamma_ * (squared_distances(S_te, self.features_) if d2 is None else d2))

    def predict(self, S):
        """Labels of the test objects, whose features are their similarities to the fit objects.

        Parameters
        ----------
        S : array-like of shape (m, n)
            Similarities of the test objects (rows) to the fit objects (columns), S_test_train.

        Returns
        -------
        labels : ndarray of shape (m,)
            Predicted labels, values of ``classes_``.
        """
        S = self._check_predict_input(S)
        return self.classes_[self.svc_.predict(self._test_kernel(S))]

    @available_if(lambda self: self.probability)  # as SVC: only with Platt scaling
    def predict_proba(self, S):
        """Platt probabilities over ``classes_`` (needs ``probability=True``).

        Parameters
        ----------
        S : array-like of shape (m, n)
            S_test_train, as for ``predict``.

        Returns
        -------
        proba : ndarray of shape (m, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        S = self._check_predict_input(S)
        return self.svc_.predict_proba(self._test_kernel(S))


def _svm_grid_path(estimator, S_fit, y, S_val, grid: list[dict]) -> list:
    """Shared grid path of the global similarity SVMs: per setting of the parameters other than
    ``_path_params`` the fit-set kernel once (``_fit_kernel``), per gamma (features, rbf) the
    kernels, per C an SVM (without Platt scaling: predictions only, which it does not change)."""
    out: list = [None] * len(grid)
    for outer, points in group_grid(estimator, grid, estimator._path_params).items():
        model = clone(estimator).set_params(**dict(outer))
        model.probability = False
        y_idx = model._fit_kernel(S_fit, y)
        S_te = model._check_predict_input(S_val)
        d2_te = squared_distances(S_te, model.features_) if getattr(model, "kernel", None) == "rbf" else None
        by_gamma: dict = {}
        for g, p in points:
            by_gamma.setdefault(p.get("gamma"), []).append((g, p["C"]))
        for gamma, costs in by_gamma.items():
            if gamma is not None:
                model._set_gamma(gamma)
            K_te = model._test_kernel(S_te, d2_te) if gamma is not None else model._test_kernel(S_te)
            for g, C in costs:
                model.C = C
                model._fit_svc(y_idx)
                out[g] = model.classes_[model.svc_.predict(K_te)]
    return out


# ---------------------------------------------------------------- HLM end of 5.3
class SVMVectors(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """Standard SVM on raw feature vectors (HLM paper, end of 5.3); ``fit(X, y)``, ``predict(X_te)``.

    The paper's "SVM (standard linear)" and "SVM (standard rbf)" on the vector data sets (Sonar,
    Imagery). Features are standardised with the fit-set mean and sd (a constant feature
    keeps sd 1) [P: the paper does not say]. One-vs-one ``SVC``. Not pairwise:
    the CV slices rows only; the fast-path protocol's defaults (one refit per
    grid point) run its grid.

    Parameters
    ----------
    C : float, default=1.0
        SVM cost (> 0).
    kernel : {"linear", "rbf"}, default="linear"
        ``SVC``'s kernel on the standardised features.
    gamma : float, default=0.1
        RBF width on the standardised features (> 0); ignored for linear.
    max_iter : int, default=100_000
        libsvm's iteration cap (-1: none), passed to ``SVC``; hitting it warns (``ConvergenceWarning``).
    cache_size : float, default=200
        libsvm's kernel cache in MB, passed to ``SVC``.
    probability : bool, default=False
        Fit libsvm's Platt scaling too (``predict_proba``; seed 0); predictions do not change.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels.
    n_features_in_ : int
        Number of features of X.
    mean_, scale_ : ndarray of shape (n_features_in_,)
        The fit set's feature means and sds (1 for a constant feature): the SVM sees (X - mean_) / scale_.
    converged_ : bool
        False if libsvm stopped at ``max_iter``.
    svc_ : sklearn.svm.SVC
        The SVM on the standardised features, classes 0..c-1 (indices into ``classes_``).

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.svm import SVMVectors
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> X = np.vstack([rng.normal(c, 0.5, (10, 2)) for c in centres])
    >>> y = np.repeat(["a", "b", "c"], 10)
    >>> X_te = centres + rng.normal(0.0, 0.3, centres.shape)  # one test object near each centre
    >>> model = SVMVectors(C=1.0, kernel="rbf", gamma=0.1).fit(X, y)
    >>> print(model.predict(X_te))
    ['a' 'b' 'c']
    >>> proba = SVMVectors(probability=True).fit(X, y).predict_proba(X_te)
    >>> proba.shape, proba.argmax(axis=1).tolist()
    ((3, 3), [0, 1, 2])
    """

    _parameter_constraints = {
        **_SVC_CONSTRAINTS,
        "kernel": [StrOptions({"linear", "rbf"})],
        "gamma": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        C: float = 1.0,
        kernel: str = "linear",
        gamma: float = 0.1,
        max_iter: int = 100_000,
        cache_size: float = 200,
        probability: bool = False,
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.probability = probability

    def fit(self, X, y):
        """Standardise the features and fit the one-vs-one SVM.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Feature vectors of the fit objects.
        y : array-like of shape (n,)
            Class labels (at least 2 classes).

        Returns
        -------
        self : SVMVectors
            The fitted estimator.
        """
        self._validate_params()
        X = as_vectors(X, "fit: X")
        self.classes_, y_idx = fit_classes(y, X.shape[0], "rows of X")
        self.n_features_in_ = X.shape[1]
        self.mean_, self.scale_ = standard_scale(X)
        self.svc_, hit = fit_svc(
            (X - self.mean_) / self.scale_, y_idx, C=self.C, max_iter=self.max_iter,
            cache_size=self.cache_size, kernel=self.kernel, gamma=float(self.gamma), probability=self.probability,
        )
        self.converged_ = not hit
        if hit:
            warn_max_iter(f"SVM (vectors, {self.kernel})", self.C, self.max_iter)
        return self

    def predict(self, X):
        """Labels of the rows of X.

        Parameters
        ----------
        X : array-like of shape (m, n_features)
            Feature vectors of the test objects.

        Returns
        -------
        labels : ndarray of shape (m,)
            Predicted labels, values of ``classes_``.
        """
        X = fitted_vectors(self, X, "classes_")
        return self.classes_[self.svc_.predict((X - self.mean_) / self.scale_)]

    @available_if(lambda self: self.probability)  # as SVC: only with Platt scaling
    def predict_proba(self, X):
        """Platt probabilities over ``classes_`` (needs ``probability=True``).

        Parameters
        ----------
        X : array-like of shape (m, n_features)
            Feature vectors of the test objects.

        Returns
        -------
        proba : ndarray of shape (m, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        X = fitted_vectors(self, X, "classes_")
        return self.svc_.predict_proba((X - self.mean_) / self.scale_)
