"""Gaussian mixtures with subspace constrained means: GMM-MPCA, GMM-MPCA-MEAN, GMM-MPCA-SEP, and MDA on the data
projected onto the chosen subspace (MDA-DR-MPCA); Qiao 2012, dissertation chapter 4; docs/subspace-gmm-spec.md.

Class k is a mixture of R_k Gaussians with one covariance for all components of all classes (eq. 4.3), whose means
lie in an affine subspace c + span(V) (constraint 4.4) or, for "sep", in a class-specific translate c_k + span(V)
(4.10). V comes from modal PCA (section 4.3.1): HMAC (``hlm.hmac._hmac``) finds the modes of kernel density
estimates of the training data over 20 bandwidths; at each level whose clustering changed and that has >= 3
modes, the weighted PCA of the modes (weights: shares of points) gives a candidate V; the GEM of section 4.4
(``hlm.mixture._subspace_em``) is run under each candidate, and the one with the largest training likelihood is
kept (section 4.4.1, step 3). Rule: argmax_k log a_k + log f_k(x).

Caches (spec 8): HMAC results, the standard-MDA start and whole fits are kept in small module-level LRU caches,
keyed by the data's bytes and the parameters, so that a CV grid over (n_components, n_dims) on one training fold
runs HMAC once. They save time and never change a result; ``clear_caches()`` empties them.
"""

from __future__ import annotations

import copy
import hashlib
import warnings
from collections import OrderedDict
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin, clone
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._classifiers import CachedParamNames, FastPathMixin, as_vectors, fit_classes, standard_scale
from hlm.base._seeds import derive_seed
from hlm.errors import DataError
from hlm.mixture._mpca import (
    closeness,
    leading_subspace,
    mpca_mean_subspace,
    mpca_subspace,
    null_basis,
    orthonormal,
    weighted_scatter,
)
from hlm.mixture._posteriors import JointDensityPosteriors
from hlm.mixture._posteriors import base_seed as _base_seed
from hlm.mixture._posteriors import label as _label
from hlm.mixture._subspace_em import Data, GEMResult, fit_constrained, joint_log_density

__all__ = ["SubspaceGMMClassifier", "ProjectedMDA", "clear_caches", "closeness"]


CACHE_SIZE = 16
_HMAC_CACHE: OrderedDict = OrderedDict()
_START_CACHE: OrderedDict = OrderedDict()
_FIT_CACHE: OrderedDict = OrderedDict()


def clear_caches() -> None:
    """Empty the HMAC, start and fit caches of this module."""
    for cache in (_HMAC_CACHE, _START_CACHE, _FIT_CACHE):
        cache.clear()


def _cached(cache: OrderedDict, key, compute):
    if key is not None and key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = compute()
    if key is not None:
        cache[key] = value
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)
    return value


def _digest(*arrays) -> str:
    h = hashlib.sha1()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.shape, a.dtype.str)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------------- shared pieces
def kmeans_responsibilities(data: Data, n_components: np.ndarray, classes, base: int, restart: int) -> np.ndarray:
    """Hard responsibilities (n x R) from per-class k-means, seeds derive_seed(base, class, restart, "kmeans")
    (spec 4.6); fewer distinct points than components leave components empty (dead)."""
    q = np.zeros((data.n, int(n_components.sum())))
    offset = 0
    for k, R in enumerate(n_components):
        rows = np.flatnonzero(data.y == k)
        if R == 1:
            labels = np.zeros(rows.size, dtype=int)
        else:
            seed = derive_seed(base, _label(classes[k]), restart, "kmeans") % 2**32
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                labels = KMeans(int(R), n_init=1, random_state=seed).fit(data.X[rows]).labels_
        q[rows, offset + labels] = 1.0
        offset += R
    return q


def standard_mda(data: Data, n_components: np.ndarray, classes, base: int, n_init: int, ridge: float, diag: bool,
                 max_iter: int, tol: float) -> GEMResult:
    """The unconstrained common-covariance MDA (the GEM with q = 0, spec 6.1) from per-class k-means, best of
    ``n_init`` restarts by log-likelihood: the "standard Gaussian mixture model" start of spec 4.6."""
    empty = np.zeros((data.X.shape[1], 0))
    best = None
    for restart in range(int(n_init)):
        q = kmeans_responsibilities(data, n_components, classes, base, restart)
        res = fit_constrained(data, q, None, empty, ridge=ridge, diag=diag, max_iter=max_iter, tol=tol)
        if best is None or res.loglik > best.loglik:
            best = res
    return best


def _check_components(counts: np.ndarray, R: int, classes) -> np.ndarray:
    small = np.flatnonzero(counts < R)
    if small.size:
        k = small[0]
        raise DataError(f"fit: class {_label(classes[k])!r} has {counts[k]} objects for {R} components")
    return np.full(len(counts), int(R))


#: the hyper-parameters every common-covariance mixture classifier here has (this module's and MDA-RR)
MIXTURE_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "covariance": [StrOptions({"full", "diag"})],
    "standardize": ["boolean"],
    "reg_covar": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "n_init": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}


class MixtureClassifierMixin(TransformerMixin, JointDensityPosteriors):
    """Prediction for a fitted class-conditional mixture with common covariance: ``_mixture`` (internal space),
    ``_component_index`` (class index per component), ``class_prior_``, ``classes_``, and the input map
    ``_internal``. A transformer too (scikit-learn's ``TransformerMixin``): ``transform`` gives the discriminant
    coordinates, ``fit_transform(X, y)`` those of the training objects."""

    def _internal(self, X, what: str = "predict: X") -> np.ndarray:
        if not hasattr(self, "_mixture"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        X = as_vectors(X, what)
        if X.shape[1] != self.n_features_in_:
            raise DataError(f"{what} has {X.shape[1]} features; the model was fitted on {self.n_features_in_}")
        return (X - self.feature_mean_) / self.feature_scale_ - self.center_

    def _scores(self, Z: np.ndarray) -> np.ndarray:
        lj = joint_log_density(Z, self._mixture)
        K = len(self.classes_)
        out = np.empty((Z.shape[0], K))
        for k in range(K):
            out[:, k] = logsumexp(lj[:, self._component_index == k], axis=1)
        return out + np.log(self.class_prior_)[None, :]

    def decision_function(self, X) -> np.ndarray:
        """log a_k f_k(x) for every class (n x K).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, in the input's units.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The joint log densities, columns in the order of ``classes_``.
        """
        return self._scores(self._model_input(self._internal(X)))

    def _model_input(self, Z: np.ndarray) -> np.ndarray:
        return Z

    def transform(self, X) -> np.ndarray:
        """Coordinates in the discriminant subspace (``discriminant_basis_``), for 2-D/3-D views.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, in the input's units.

        Returns
        -------
        ndarray of shape (n_samples, d)
            The projections of the centred (and scaled) rows on ``discriminant_basis_``.
        """
        return self._internal(X, "transform: X") @ self.discriminant_basis_

    def component_means(self) -> np.ndarray:
        """The component means in the units of the input X (R x p; ``transform`` of them places them in a view);
        rows ordered as ``component_class_``.

        Returns
        -------
        ndarray of shape (n_components_total, n_features)
            One row per component (R = sum_k R_k), classes in order.
        """
        if not hasattr(self, "_mixture"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        return (self._input_means() + self.center_) * self.feature_scale_ + self.feature_mean_

    def _input_means(self) -> np.ndarray:
        return self._mixture.means


def _prepare(est, X, y):
    """(X internal (centred, scaled), class index, counts): sets classes_, n_features_in_, class_prior_,
    feature_mean_, feature_scale_, center_."""
    X = as_vectors(X, "fit: X")
    est.classes_, y_idx = fit_classes(y, X.shape[0], "rows of X")
    est.n_features_in_ = X.shape[1]
    counts = np.bincount(y_idx, minlength=len(est.classes_))
    est.class_prior_ = counts / counts.sum()
    est.feature_mean_, est.feature_scale_ = standard_scale(X, est.standardize)
    Xs = (X - est.feature_mean_) / est.feature_scale_
    est.center_ = Xs.mean(axis=0)
    return Xs - est.center_, y_idx, counts


def _ridge(X: np.ndarray, reg_covar: float) -> float:
    """lambda = reg_covar * tr(T) / p, T the total covariance (ddof 0) of the centred fit set (spec 4.7)."""
    return float(reg_covar * np.mean(np.sum(X * X, axis=0) / X.shape[0]))


def _param_key(params: dict):
    items = []
    for name, value in sorted(params.items()):
        if isinstance(value, np.ndarray):
            value = ("array", _digest(np.asarray(value, dtype=np.float64)))
        elif isinstance(value, (list, tuple)):
            value = ("seq", _digest(np.asarray(value, dtype=np.float64)))
        items.append((name, value))
    return tuple(items)


def discriminant_basis(cov: np.ndarray, A: np.ndarray) -> np.ndarray:
    """orth(Sigma^-1 A) (Theorem 4.3.2, App. B.2); ``cov`` full (p x p) or diagonal (p,)."""
    if A.shape[1] == 0:
        return A
    S_inv_A = A / cov[:, None] if cov.ndim == 1 else np.linalg.solve(cov, A)
    return orthonormal(S_inv_A)


# ---------------------------------------------------------------------- the estimator
_SUBSPACES = {"mpca", "mpca_mean", "sep", "mpca_sep"}  # "mpca_sep": the chapter's name GMM-MPCA-SEP, = "sep"


class SubspaceSettings:
    """The hyper-parameters of the subspace-constrained GMM (``SubspaceGMMClassifier``) and of ``ProjectedMDA``,
    which fits that GMM's subspace first."""

    def __init__(self, n_components=3, n_dims=2, subspace="mpca", gamma=60, bandwidths=None,
                 bandwidth_range=(0.1, 2.0), n_bandwidths=20, covariance="full", standardize=False, reg_covar=1e-6,
                 max_iter=200, tol=1e-6, n_init=1, random_state=None):
        self.n_components = n_components
        self.n_dims = n_dims
        self.subspace = subspace
        self.gamma = gamma
        self.bandwidths = bandwidths
        self.bandwidth_range = bandwidth_range
        self.n_bandwidths = n_bandwidths
        self.covariance = covariance
        self.standardize = standardize
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.random_state = random_state


class SubspaceGMMClassifier(SubspaceSettings, MixtureClassifierMixin, ClassifierMixin, FastPathMixin,
                            CachedParamNames, BaseEstimator):
    """Class-conditional Gaussian mixtures with a common covariance and component means constrained to a subspace
    (Qiao 2012, dissertation chapter 4; docs/subspace-gmm-spec.md): GMM-MPCA, GMM-MPCA-MEAN, GMM-MPCA-SEP.

    Class k is a mixture of R_k Gaussians with one covariance for all components of all classes (eq. 4.3), whose
    means lie in an affine subspace c + span(V) (constraint 4.4) or, for "sep", in a class-specific translate
    c_k + span(V) (4.10; spec 2). V comes from modal PCA (section 4.3.1; spec 3): HMAC (:func:`hlm.hmac.hmac`)
    finds the modes of kernel density estimates of the training data over ``n_bandwidths`` bandwidths; at each
    level whose clustering changed and that has >= 3 modes, the weighted PCA of the modes (weights: shares of
    points) gives a candidate V. The GEM of section 4.4 (eqs. 4.5-4.9; spec 4) is run under each candidate and
    the one with the largest training likelihood is kept (section 4.4.1, step 3; spec 5). Rule:
    argmax_k log a_k + log f_k(x), a_k = n_k / n.

    Parameters
    ----------
    n_components : int, default=3
        R_k, components per class (the same in every class, section 4.5.2).
    n_dims : int, default=2
        The discriminant dimension d of the chapter's tables: the constrained subspace's dimension for "mpca" and
        "mpca_mean" (1 <= d < p); for "sep", d = K - 1 + d' with d' the constrained subspace's (d >= K - 1).
        Ignored when ``subspace`` is an array.
    subspace : {"mpca", "mpca_mean", "sep", "mpca_sep"} or array of shape (p, d), default="mpca"
        How V is found (sections 4.3.1, 4.3.2, 4.4.2; "mpca_sep" is an alias of "sep"), or a given subspace (its
        columns are orthonormalised; no HMAC).
    gamma : float, default=60
        MPCA-MEAN's share (in %) of the weight on the class means when d >= K (section 4.3.2; 60 in 4.5.2).
    bandwidths : array-like or None, default=None
        HMAC's kernel bandwidths (in model space), strictly increasing; None: ``n_bandwidths`` equally spaced in
        ``bandwidth_range`` times the largest column sd of the data HMAC runs on (the class-centred data for
        "sep").
    bandwidth_range : tuple of two floats, default=(0.1, 2.0)
        (low, high) of the default bandwidths, relative to that sd (section 4.5.2).
    n_bandwidths : int, default=20
        Number of default bandwidths (HMAC levels).
    covariance : {"full", "diag"}, default="full"
        A full or diagonal common covariance (section 4.5.2).
    standardize : bool, default=False
        z-score each feature on the fit set first (the model is then fitted in z-scores).
    reg_covar : float, default=1e-6
        Ridge lambda = reg_covar * tr(total covariance) / p added to Sigma (spec 4.7); 0: pure ML.
    max_iter : int, default=200
        GEM stops after at most ``max_iter`` M-steps (ConvergenceWarning).
    tol : float, default=1e-6
        GEM stops when the (penalised) log-likelihood gains <= tol |loglik|.
    n_init : int, default=1
        k-means restarts of the standard MDA the GEM starts from (spec 4.6).
    random_state : int, RandomState or None, default=None
        Seeds the k-means starts through ``derive_seed``.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The class labels, sorted.
    n_features_in_ : int
        p, the number of features.
    feature_mean_, feature_scale_ : ndarray of shape (p,)
        The standardisation into model space (0 and 1 without ``standardize``).
    center_ : ndarray of shape (p,)
        The fit set's mean in model space; the model is fitted on the data minus it.
    class_prior_ : ndarray of shape (K,)
        a_k = n_k / n.
    subspace_ : ndarray of shape (p, d), (p, d') for "sep"
        The chosen constrained subspace V (orthonormal columns).
    null_basis_ : ndarray of shape (p, p - d)
        An orthonormal basis of its complement.
    means_ : ndarray of shape (R, p)
        The component means in model space (z-scores with ``standardize``), classes in order;
        ``component_means()`` gives them in the input's units.
    component_class_ : ndarray of shape (R,)
        Each component's class label.
    weights_ : ndarray of shape (R,)
        The component weights pi_kr within their class.
    covariance_ : ndarray of shape (p, p), or (p,) for "diag"
        The common covariance Sigma.
    n_components_effective_ : int
        Components with weight > 0.
    bandwidth_ : float or None
        The chosen level's bandwidth (None: MPCA-MEAN with d < K, d' = 0, a given subspace, fallback).
    hmac_levels_ : int
        The number of HMAC levels computed (0 when no search ran).
    log_likelihood_ : float
        sum_i log a_{y_i} f_{y_i}(x_i) of the chosen model.
    candidates_ : list of dict
        Per candidate subspace: level, bandwidth, n_modes, log_likelihood, n_iter, converged.
    discriminant_basis_ : ndarray of shape (p, d)
        orth(Sigma^-1 V) (Theorem 4.3.2; with the class offsets for "sep"); ``transform`` projects on it.
    n_iter_, converged_, log_likelihood_path_ : int, bool, ndarray
        The chosen GEM's iterations, whether it met ``tol``, and its penalised objective path.

    See Also
    --------
    ProjectedMDA : MDA on the data projected onto the chosen subspace.
    ReducedRankMDA : The reduced-rank MDA baseline (MDA-RR).
    hlm.hmac.hmac : The mode clustering that gives the candidate subspaces.

    Examples
    --------
    Three classes in four dimensions whose means span the plane of the first two axes:

    >>> import numpy as np
    >>> from hlm.mixture import SubspaceGMMClassifier, closeness
    >>> rng = np.random.default_rng(0)
    >>> centres = np.zeros((3, 4))
    >>> centres[1, 0] = centres[2, 1] = 6.0
    >>> X = np.vstack([rng.normal(c, 1, (20, 4)) for c in centres])
    >>> y = np.repeat([0, 1, 2], 20)
    >>> clf = SubspaceGMMClassifier(n_components=2, n_dims=2, random_state=0).fit(X, y)
    >>> print(clf.predict(centres), clf.subspace_.shape, clf.component_class_)
    [0 1 2] (4, 2) [0 0 1 1 2 2]
    >>> print(clf.hmac_levels_, len(clf.candidates_))  # 20 HMAC levels, 4 usable candidate subspaces
    20 4
    >>> print(closeness(clf.subspace_, np.eye(4)[:, :2]) > 1.9)  # close to the plane of the class means
    True
    >>> print(clf.candidate_predict(centres).shape)  # every candidate's model (Figure 4.1)
    (4, 3)
    >>> print(clf.transform(centres).shape, clf.predict_proba(centres).shape)
    (3, 2) (3, 3)

    GMM-MPCA-MEAN with d < K takes the class means' principal axes, without a bandwidth search:

    >>> mean = SubspaceGMMClassifier(n_components=2, n_dims=2, subspace="mpca_mean", random_state=0).fit(X, y)
    >>> print(mean.predict(centres), mean.hmac_levels_, mean.bandwidth_)
    [0 1 2] 0 None
    """

    _parameter_constraints = {
        "n_dims": [Interval(Integral, 1, None, closed="left")],
        "subspace": [StrOptions(_SUBSPACES), np.ndarray, list],
        "gamma": [Interval(Real, 0, 100, closed="both")],
        "bandwidths": [np.ndarray, list, tuple, None],
        "bandwidth_range": [tuple, list],
        "n_bandwidths": [Interval(Integral, 1, None, closed="left")],
        **MIXTURE_CONSTRAINTS,
    }

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Find the candidate subspaces and fit the constrained GEM under each; keep the most likely (spec 3-5).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, finite.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes, each with at least ``n_components`` objects).

        Returns
        -------
        self
            The fitted classifier.
        """
        self._validate_params()
        key = None
        if isinstance(self.random_state, Integral):
            Xa = as_vectors(X, "fit: X")
            labels = np.asarray(y)
            key = (_digest(Xa), labels.dtype.kind, _digest(labels.astype(str)), _param_key(self.get_params()))
            if key in _FIT_CACHE:
                _FIT_CACHE.move_to_end(key)
                self.__dict__.update(copy.deepcopy(_FIT_CACHE[key]))
                return self
        fitted = self._fit(X, y)
        if key is not None:
            _cached(_FIT_CACHE, key, lambda: copy.deepcopy(fitted))
        return self

    def _fit(self, X, y) -> dict:
        Xc, y_idx, counts = _prepare(self, X, y)
        n, p = Xc.shape
        K = len(self.classes_)
        self.hmac_levels_ = 0
        R = _check_components(counts, int(self.n_components), self.classes_)
        given = not isinstance(self.subspace, str)
        if given:
            V_given = self._given_subspace(p)
        else:
            self._check_dims(p, K)
        sep = not given and self.subspace in ("sep", "mpca_sep")
        diag = self.covariance == "diag"
        base = _base_seed(self.random_state)
        data = Data.of(Xc, y_idx, R)
        ridge = _ridge(Xc, float(self.reg_covar))
        start_key = (_digest(Xc, y_idx), int(self.n_components), self.covariance, float(self.reg_covar),
                     int(self.max_iter), float(self.tol), int(self.n_init), base)
        start = _cached(_START_CACHE, start_key if isinstance(self.random_state, Integral) else None,
                        lambda: standard_mda(data, R, self.classes_, base, int(self.n_init), ridge, diag,
                                             int(self.max_iter), float(self.tol)))
        candidates = [(V_given, {"level": None, "bandwidth": None, "n_modes": None})] if given else \
            self._candidates(Xc, y_idx, counts)
        best, table, mixtures = None, [], []
        for V, info in candidates:
            res = fit_constrained(data, start.q, start.mixture, null_basis(V), sep=sep, ridge=ridge, diag=diag,
                                  max_iter=int(self.max_iter), tol=float(self.tol))
            table.append({**info, "log_likelihood": res.loglik + float(counts @ np.log(counts / n)),
                          "n_iter": res.n_iter, "converged": res.converged})
            mixtures.append(res.mixture)
            if best is None or res.loglik > best[0].loglik:
                best = (res, V, info)
        res, V, info = best
        self._candidate_mixtures = mixtures
        if not res.converged:
            warnings.warn(f"subspace GMM: the GEM did not converge in {self.max_iter} iterations (tol={self.tol})",
                          ConvergenceWarning, stacklevel=3)
        self._store(res, V, info, table, data, sep)
        return {k: v for k, v in self.__dict__.items()
                if k.endswith("_") or k in ("_mixture", "_component_index", "_candidate_mixtures")}

    def candidate_predict(self, X) -> np.ndarray:
        """The labels each candidate subspace's model gives (dissertation Figure 4.1: the test error of every
        bandwidth level's model, the chosen one among them), one row per entry of ``candidates_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, in the input's units.

        Returns
        -------
        ndarray of shape (n_candidates, n_samples)
            Row c: ``predict(X)`` of the GEM fitted under candidate c's subspace; the row of the chosen
            candidate (largest ``log_likelihood``) equals ``predict(X)``.
        """
        if not hasattr(self, "_candidate_mixtures"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        rows = []
        for mixture in self._candidate_mixtures:
            model = copy.copy(self)
            model._mixture = mixture
            rows.append(model.predict(X))
        return np.stack(rows)

    def _check_dims(self, p: int, K: int, what: str = "fit") -> None:
        """d below p, and (SEP) at least K - 1: else a one-line DataError."""
        if int(self.n_dims) >= p:
            raise DataError(f"{what}: n_dims={self.n_dims} must be below the {p} features (d = p is the "
                            "unconstrained MDA; use ReducedRankMDA(rank=p))")
        if self.subspace in ("sep", "mpca_sep") and int(self.n_dims) < K - 1:
            raise DataError(f"{what}: subspace='sep' needs n_dims >= K - 1 = {K - 1} (d = K - 1 + d'), got "
                            f"{self.n_dims}")

    def _given_subspace(self, p: int) -> np.ndarray:
        A = np.asarray(self.subspace, dtype=np.float64)
        if A.ndim == 1:
            A = A[:, None]
        if A.ndim != 2 or A.shape[0] != p or not np.isfinite(A).all():
            raise DataError(f"fit: subspace must be a finite p x d array with p = {p} rows, got shape {A.shape}")
        V = orthonormal(A)
        if V.shape[1] != A.shape[1] or V.shape[1] >= p:
            raise DataError(f"fit: the given subspace must have full column rank below p = {p}; its {A.shape[1]} "
                            f"columns have rank {V.shape[1]}")
        return V

    def _bandwidths(self, Xh: np.ndarray) -> np.ndarray:
        from hlm.hmac._hmac import bandwidth_sequence, check_bandwidths

        if self.bandwidths is not None:
            return check_bandwidths(self.bandwidths)
        low, high = self.bandwidth_range
        return bandwidth_sequence(Xh, int(self.n_bandwidths), float(low), float(high))

    def _levels(self, Xh: np.ndarray, every_level: bool = False) -> list:
        """HMAC levels usable for MPCA (spec 3.2): changed clustering and >= 3 modes (``every_level``: all
        levels); cached per data and bandwidths."""
        from hlm.hmac._hmac import hmac

        bandwidths = self._bandwidths(Xh)
        result = _cached(_HMAC_CACHE, (_digest(Xh), _digest(bandwidths)),
                         lambda: hmac(Xh, bandwidths, allow_duplicates=True))
        self.hmac_levels_ = len(result.levels)
        return [(i, lv) for i, lv in enumerate(result.levels) if every_level or (lv.changed and lv.n_clusters >= 3)]

    def level_subspaces(self, X, y) -> list[dict]:
        """The constrained subspace of every HMAC level of (X, y), as ``fit`` would make it there (section
        4.5.3: the subspaces' sensitivity to the bandwidth, Table 4.5), whether or not the level is a candidate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, finite.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        list of dict
            Per level, in increasing bandwidth: ``level`` (0-based), ``bandwidth``, ``n_modes``, ``candidate``
            (the level is one of ``fit``'s candidates: a changed clustering with at least 3 modes) and
            ``subspace`` (orthonormal columns, in model space: p x d; for SEP p x (d - K + 1), the part beyond
            the class means). Empty where ``fit`` runs no search (a given subspace, MPCA-MEAN with d < K, SEP
            with d = K - 1). The estimator itself is left as it was (fitted or not).
        """
        est = clone(self)
        est._validate_params()
        if not isinstance(est.subspace, str):
            return []
        Xc, y_idx, counts = _prepare(est, X, y)
        est._check_dims(Xc.shape[1], len(counts), "level_subspaces")
        usable = {i for i, _ in est._levels(est._search_points(Xc, y_idx, counts))}
        return [{**info, "candidate": info["level"] in usable, "subspace": V}
                for V, info in est._candidates(Xc, y_idx, counts, every_level=True) if info["level"] is not None]

    def _search_points(self, Xc: np.ndarray, y_idx: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The points HMAC clusters: the data, or (SEP) the data less their class means."""
        if self.subspace in ("sep", "mpca_sep"):
            class_means = np.stack([Xc[y_idx == k].mean(axis=0) for k in range(len(counts))])
            return Xc - class_means[y_idx]
        return Xc

    def _candidates(self, Xc: np.ndarray, y_idx: np.ndarray, counts: np.ndarray, every_level: bool = False) -> list:
        """[(V, info)] per usable HMAC level (spec 3; ``every_level``: per level), or the single fixed subspace
        where there is no search."""
        K = len(counts)
        d = int(self.n_dims)
        a = counts / counts.sum()
        class_means = np.stack([Xc[y_idx == k].mean(axis=0) for k in range(K)])
        none = {"level": None, "bandwidth": None, "n_modes": None}
        if self.subspace == "mpca_mean" and d < K:
            return [(mpca_mean_subspace(class_means, a, d, data_cov=weighted_scatter(Xc, np.ones(len(Xc)))), none)]
        if self.subspace in ("sep", "mpca_sep"):
            d = d - K + 1
            if d == 0:
                return [(np.zeros((Xc.shape[1], 0)), none)]
        Xh = self._search_points(Xc, y_idx, counts)
        cov = weighted_scatter(Xh, np.ones(Xh.shape[0]))
        out = []
        for i, lv in self._levels(Xh, every_level):
            modes = lv.modes
            if self.subspace == "mpca_mean":
                V = mpca_mean_subspace(class_means, a, d, modes, lv.weights, float(self.gamma), cov)
            else:
                V = mpca_subspace(modes, lv.weights, d, cov)
            out.append((V, {"level": i, "bandwidth": float(lv.bandwidth), "n_modes": lv.n_clusters}))
        if not out:
            warnings.warn("subspace GMM: no HMAC level with a changed clustering and >= 3 modes; the data's "
                          "principal components span the subspace", UserWarning, stacklevel=4)
            out = [(leading_subspace(cov, d), none)]
        return out

    def _store(self, res: GEMResult, V: np.ndarray, info: dict, table: list, data: Data, sep: bool) -> None:
        mix = res.mixture
        self._mixture = mix
        self.subspace_ = V
        self.null_basis_ = null_basis(V)
        self._component_index = data.comp_class
        self.component_class_ = self.classes_[data.comp_class]
        self.means_ = mix.means + self.center_
        self.weights_ = np.exp(mix.log_weights)
        self.covariance_ = mix.cov
        self.n_components_effective_ = int(np.isfinite(mix.log_weights).sum())
        self.bandwidth_ = info["bandwidth"]
        self.candidates_ = table
        self.log_likelihood_ = res.loglik + float(data.class_sizes @ np.log(self.class_prior_))
        self.log_likelihood_path_ = res.path
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        A = V
        if sep:  # the class offsets in the null space (spec 2.4)
            K = len(self.classes_)
            own = [data.comp_class == k for k in range(K)]
            cm = np.stack([self.weights_[m] @ mix.means[m] for m in own])
            N = self.null_basis_
            A = orthonormal(np.hstack([V, ((cm[1:] - cm[0]) @ N @ N.T).T]))
        self.discriminant_basis_ = discriminant_basis(mix.cov, A)


class ProjectedMDA(SubspaceSettings, MixtureClassifierMixin, ClassifierMixin, FastPathMixin, CachedParamNames,
                   BaseEstimator):
    """MDA-DR-MPCA / MDA-DR-MPCA-MEAN (Remark 2 of section 4.5; docs/subspace-gmm-spec.md section 6.3): standard
    common-covariance MDA on the data projected onto the constrained subspace V chosen by GMM-MPCA (or -MEAN) with
    the same settings.

    The fitted ``SubspaceGMMClassifier`` gives V (its constrained subspace, not the discriminant one); the
    centred training data are projected, z = V^T x, and MDA (the GEM without constraint, spec 6.1) is fitted on z
    from per-class k-means. Test points are projected the same way. Rule: argmax_k log a_k + log f_k(z).

    Parameters
    ----------
    n_components : int, default=3
        R_k, components per class, of the subspace GMM and of the MDA.
    n_dims : int, default=2
        d, the subspace's dimension (1 <= d < p); ignored when ``subspace`` is an array.
    subspace : {"mpca", "mpca_mean"} or array of shape (p, d), default="mpca"
        As in ``SubspaceGMMClassifier`` (no "sep").
    gamma : float, default=60
        As in ``SubspaceGMMClassifier``.
    bandwidths : array-like or None, default=None
        As in ``SubspaceGMMClassifier``.
    bandwidth_range : tuple of two floats, default=(0.1, 2.0)
        As in ``SubspaceGMMClassifier``.
    n_bandwidths : int, default=20
        As in ``SubspaceGMMClassifier``.
    covariance : {"full", "diag"}, default="full"
        The common covariance, of the subspace GMM and of the MDA on z.
    standardize : bool, default=False
        As in ``SubspaceGMMClassifier``.
    reg_covar : float, default=1e-6
        The ridge (spec 4.7), relative to the data's (for the MDA: z's) total variance.
    max_iter : int, default=200
        As in ``SubspaceGMMClassifier``, for both fits.
    tol : float, default=1e-6
        As in ``SubspaceGMMClassifier``, for both fits.
    n_init : int, default=1
        k-means restarts, for both fits.
    random_state : int, RandomState or None, default=None
        Seeds both fits (one base seed).

    Attributes
    ----------
    classes_, class_prior_, n_features_in_, feature_mean_, feature_scale_, center_
        As in ``SubspaceGMMClassifier``.
    subspace_ : ndarray of shape (p, d)
        V, the subspace GMM's chosen constrained subspace.
    subspace_model_ : SubspaceGMMClassifier
        The fitted subspace GMM.
    means_ : ndarray of shape (R, d)
        The MDA's component means on z = V^T x, classes in order.
    covariance_ : ndarray of shape (d, d), or (d,) for "diag"
        The MDA's common covariance on z.
    weights_, component_class_ : ndarray of shape (R,)
        The component weights within their class and each component's class label.
    log_likelihood_ : float
        sum_i log a_{y_i} f_{y_i}(z_i) of the MDA.
    n_iter_, converged_ : int, bool
        The MDA's EM iterations and whether it met ``tol``.
    discriminant_basis_ : ndarray of shape (p, d)
        V (the projection); ``transform`` gives z.

    See Also
    --------
    SubspaceGMMClassifier : The model that chooses V.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.mixture import ProjectedMDA
    >>> rng = np.random.default_rng(0)
    >>> centres = np.zeros((3, 4))
    >>> centres[1, 0] = centres[2, 1] = 6.0
    >>> X = np.vstack([rng.normal(c, 1, (20, 4)) for c in centres])
    >>> y = np.repeat([0, 1, 2], 20)
    >>> clf = ProjectedMDA(n_components=2, n_dims=2, random_state=0).fit(X, y)
    >>> print(clf.predict(centres), clf.subspace_.shape, clf.means_.shape, clf.covariance_.shape)
    [0 1 2] (4, 2) (6, 2) (2, 2)
    >>> print(clf.transform(centres).shape)
    (3, 2)
    """

    _parameter_constraints = {**SubspaceGMMClassifier._parameter_constraints,
                              "subspace": [StrOptions({"mpca", "mpca_mean"}), np.ndarray, list]}

    def fit(self, X, y):
        """Fit the subspace GMM, project the data onto its subspace and fit MDA there (spec 6.3).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, finite.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes, each with at least ``n_components`` objects).

        Returns
        -------
        self
            The fitted classifier.
        """
        self._validate_params()
        base = _base_seed(self.random_state)
        gmm = SubspaceGMMClassifier(**{**self.get_params(), "random_state": base}).fit(X, y)
        Xc, y_idx, counts = _prepare(self, X, y)
        V = gmm.subspace_
        Z = Xc @ V
        R = np.full(len(counts), int(self.n_components))
        data = Data.of(Z, y_idx, R)
        res = standard_mda(data, R, self.classes_, base, int(self.n_init), _ridge(Z, float(self.reg_covar)),
                           self.covariance == "diag", int(self.max_iter), float(self.tol))
        if not res.converged:
            warnings.warn(f"projected MDA: EM did not converge in {self.max_iter} iterations (tol={self.tol})",
                          ConvergenceWarning, stacklevel=2)
        self.subspace_model_ = gmm
        self.subspace_ = V
        self._mixture = res.mixture
        self._component_index = data.comp_class
        self.component_class_ = self.classes_[data.comp_class]
        self.means_ = res.mixture.means
        self.weights_ = np.exp(res.mixture.log_weights)
        self.covariance_ = res.mixture.cov
        self.log_likelihood_ = res.loglik + float(counts @ np.log(self.class_prior_))
        self.n_iter_, self.converged_ = res.n_iter, res.converged
        self.discriminant_basis_ = V
        return self

    def _model_input(self, Z: np.ndarray) -> np.ndarray:
        return Z @ self.subspace_

    def _input_means(self) -> np.ndarray:
        return self._mixture.means @ self.subspace_.T
