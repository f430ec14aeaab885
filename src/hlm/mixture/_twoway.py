"""Two-way Gaussian mixture classifier and MDA without variable clustering (Qiao 2012, dissertation chapter 2;
docs/twoway-gmm-spec.md).

Class k is a mixture of R_k diagonal Gaussians (eq. 2.3) whose p variables are grouped into L clusters that share
mean and variance in every component; c(k, j) is variable j's cluster. ``n_clusters=None`` (or L >= p) is
MDA-n.v.c. (eq. 2.2: every variable its own cluster). Classes are fitted independently (the likelihood factorises,
spec 3.1) by the generalized EM of section 2.4 (``hlm.mixture._twoway_em``), with missing entries (NaN)
integrated out (2.13-2.17). Rule: argmax_k log a_k + log f_k(x), a_k = n_k / n (end of section 2.2).
``covariance="full"`` is eq. (2.5): the two-way model after a per-class whitening z = W_k x (section 2.2.2), with
log f_k(x) = log|det W_k| + log g_k(W_k x).

Parameters are in the fitted feature space: x standardised (``standardize``) minus one scalar, the fit set's
grand mean (spec 3.6).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._classifiers import CachedParamNames, FastPathMixin, as_vectors, fit_classes, fitted_vectors
from hlm.base._seeds import derive_seed
from hlm.errors import DataError
from hlm.mixture._posteriors import JointDensityPosteriors
from hlm.mixture._posteriors import base_seed as _base_seed
from hlm.mixture._posteriors import label as _label
from hlm.mixture._twoway_em import (
    ClassData,
    GEMResult,
    cluster_sums,
    component_log_density,
    component_means,
    fill_missing,
    initial_params,
    kmeans_labels,
    run_gem,
    whitening_matrix,
)


class Start(NamedTuple):
    """One class's GEM start: its data (whitened for "full"), variance floor, (W_k, log|det W_k|) or None,
    responsibilities q and assignment c."""

    data: ClassData
    floor: float
    whitening: tuple[np.ndarray, float] | None
    q: np.ndarray
    assignment: np.ndarray


class TwoWayGMMClassifier(JointDensityPosteriors, ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """Class-conditional two-way Gaussian mixtures (eq. 2.3), or MDA-n.v.c. (eq. 2.2) with ``n_clusters=None``
    (Qiao 2012, dissertation chapter 2; docs/twoway-gmm-spec.md).

    Class k is a mixture of R_k diagonal Gaussians whose p variables are grouped into L_k clusters that share mean
    and variance in every component; c(k, j) is variable j's cluster (section 2.2.1). ``n_clusters=None`` (or
    L >= p) is MDA-n.v.c. (eq. 2.2: every variable its own cluster). Classes are fitted independently (spec 3.1)
    by the generalized EM of section 2.4 (eqs. 2.7-2.12), with missing entries (NaN) integrated out (eqs.
    2.13-2.17; spec 4). Rule: argmax_k log a_k + log f_k(x), a_k = n_k / n (end of section 2.2; spec 2.7).
    ``covariance="full"`` is eq. (2.5): the two-way model after a per-class whitening z = W_k x (section 2.2.2;
    spec 2.5), with log f_k(x) = log|det W_k| + log g_k(W_k x). Parameters are in the fitted feature space:
    x standardised (``standardize``) minus one scalar, the fit set's grand mean (spec 3.6).

    Parameters
    ----------
    n_components : int, default=2
        R_k, components per class (``allocation="proportional"``: K * n_components split by class share).
    n_clusters : int, dict or None, default=8
        L, variable clusters per class (a dict: class label -> L_k); None or >= p: MDA (no clustering).
    covariance : {"diag", "full"}, default="diag"
        "full": the whitened variant (2.5); no missing values.
    clustering : {"class", "shared"}, default="class"
        Inhomogeneous c(k, j) (the chapter's default) or one homogeneous c(j) for all classes (section 2.5).
    allocation : {"equal", "proportional"}, default="equal"
        R_k = ``n_components`` in every class, or the total K * ``n_components`` split in proportion to the
        class sizes by largest remainder, each R_k >= 1 (spec 2.1).
    init : {"random", "kmeans"}, default="random"
        Random hard components and clusters (section 2.4), or k-means of objects and of the variables'
        component-mean profiles. "full" always starts from its tied-covariance GMM (section 2.2.2).
    n_init : int, default=1
        Restarts; per class (all classes when "shared") the highest final log-likelihood is kept.
    max_iter : int, default=200
        GEM stops after ``max_iter`` iterations at most (ConvergenceWarning).
    tol : float, default=1e-6
        GEM stops when the log-likelihood gains <= tol |loglik| and no assignment changed (spec 3.6).
    cluster_sweeps : int, default=1
        Rounds of (2.10)-(2.12) per M-step (the chapter: 1).
    var_floor : float, default=1e-3
        sigma^2 >= var_floor * (mean feature variance of the fit set).
    standardize : bool, default=False
        z-score each feature (NaN-aware, fit set) first; changes the two-way model, not MDA.
    whitening : {"symmetric", "cholesky"}, default="symmetric"
        The root Sigma^{-1/2} of the full variant.
    on_small_class : {"error", "cap"}, default="error"
        A class with fewer objects than components: DataError, or R_k capped at n_k with a warning.
    random_state : int, RandomState or None, default=None
        Seeds each class's start through ``derive_seed`` (spec 3.6).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The class labels, sorted.
    class_log_prior_ : ndarray of shape (K,)
        log a_k = log n_k / n.
    n_features_in_ : int
        p, the number of features.
    weights_, means_, variances_ : list of ndarray
        Per class, pi_kr (R_k,), mu and sigma^2 (R_k x L_k), in the fitted space.
    assignments_ : ndarray of shape (K, p)
        c(k, j), 0-based.
    whitening_ : list of ndarray (p x p) or None
        Per class W_k ("full"), else None.
    log_det_whitening_ : ndarray of shape (K,)
        log|det W_k| (0 for "diag").
    n_components_, n_clusters_ : ndarray of shape (K,)
        R_k and L_k used (L_k = p: MDA).
    n_components_effective_, n_clusters_effective_ : ndarray of shape (K,)
        Live components (weight > 0) and used clusters per class.
    n_iter_, converged_ : ndarray of shape (K,)
        Per class, the GEM iterations and whether tol was reached.
    log_likelihood_path_ : list of ndarray
        Per class, the observed log-likelihood after 0, 1, ... iterations (all classes' sum when "shared").
    n_parameters_ : int
        Continuous parameters (spec 2.6): sum_k (R_k - 1) + 2 R_k L_k (+ p(p+1)/2 for "full"), + K - 1.
    shift_, feature_mean_, feature_scale_, var_floor_ : float, ndarray (p,), ndarray (p,), float
        The fitted space x' = (x - mean) / scale - shift and the variance floor in it.

    See Also
    --------
    SubspaceGMMClassifier : Common-covariance mixtures with subspace-constrained means (chapter 4).

    Examples
    --------
    Three classes in six dimensions; in class 2 the first three and the last three variables have different
    means, so its two variable clusters separate them:

    >>> import numpy as np
    >>> from hlm.mixture import TwoWayGMMClassifier
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0] * 6, [5.0] * 6, [0, 0, 0, 5, 5, 5]])
    >>> X = np.vstack([rng.normal(c, 1, (20, 6)) for c in centres])
    >>> y = np.repeat([0, 1, 2], 20)
    >>> clf = TwoWayGMMClassifier(n_components=2, n_clusters=2, random_state=0).fit(X, y)
    >>> print(clf.predict(centres))
    [0 1 2]
    >>> print(clf.n_clusters_, clf.assignments_[2], clf.n_parameters_)
    [2 2 2] [0 0 0 1 1 1] 29

    The 2 sum_k L_k sufficient statistics of Theorem 2.3.1 classify complete vectors; a missing entry is
    integrated out (eq. 2.13):

    >>> T = clf.sufficient_statistics(centres)
    >>> print(T.shape, clf.decision_from_statistics(T).argmax(axis=1))
    (3, 12) [0 1 2]
    >>> partial = centres.copy()
    >>> partial[:, 0] = np.nan
    >>> print(clf.predict(partial), clf.predict_proba(partial).shape)
    [0 1 2] (3, 3)

    Without variable clustering (MDA-n.v.c.) every variable is its own cluster:

    >>> mda = TwoWayGMMClassifier(n_components=2, n_clusters=None, random_state=0).fit(X, y)
    >>> print(mda.n_clusters_, mda.predict(centres))
    [6 6 6] [0 1 2]
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "n_clusters": [Interval(Integral, 1, None, closed="left"), dict, None],
        "covariance": [StrOptions({"diag", "full"})],
        "clustering": [StrOptions({"class", "shared"})],
        "allocation": [StrOptions({"equal", "proportional"})],
        "init": [StrOptions({"random", "kmeans"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "cluster_sweeps": [Interval(Integral, 1, None, closed="left")],
        "var_floor": [Interval(Real, 0, None, closed="neither")],
        "standardize": ["boolean"],
        "whitening": [StrOptions({"symmetric", "cholesky"})],
        "on_small_class": [StrOptions({"error", "cap"})],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=2, n_clusters=8, covariance="diag", clustering="class", allocation="equal",
                 init="random", n_init=1, max_iter=200, tol=1e-6, cluster_sweeps=1, var_floor=1e-3,
                 standardize=False, whitening="symmetric", on_small_class="error", random_state=None):
        self.n_components = n_components
        self.n_clusters = n_clusters
        self.covariance = covariance
        self.clustering = clustering
        self.allocation = allocation
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.cluster_sweeps = cluster_sweeps
        self.var_floor = var_floor
        self.standardize = standardize
        self.whitening = whitening
        self.on_small_class = on_small_class
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.covariance == "diag"  # the missing-data EM is the diagonal model's
        return tags

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit each class's two-way mixture by the GEM of section 2.4 (the best of ``n_init`` starts).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors; NaN marks a missing entry ("diag" only), +-inf is an error.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self
            The fitted classifier.
        """
        self._validate_params()
        X = as_vectors(X, "fit: X", allow_nan=True)
        self.classes_, y_idx = fit_classes(y, X.shape[0], "rows of X")
        self.n_features_in_ = p = X.shape[1]
        K = len(self.classes_)
        missing = np.isnan(X)
        _check_missing(missing, y_idx, self.classes_, self.covariance)
        Xt = self._fit_transform(X)
        counts = np.bincount(y_idx, minlength=K)
        self.class_log_prior_ = np.log(counts / counts.sum())
        self.n_components_ = self._components(counts)
        self.n_clusters_ = self._clusters(p)
        self.identity_ = self.n_clusters_ >= p
        parts = [Xt[y_idx == k] for k in range(K)]
        self._store(self._fit_classes(parts, _base_seed(self.random_state)))
        return self

    def _fit_transform(self, X: np.ndarray) -> np.ndarray:
        """Standardise (optional), subtract the grand mean; set the variance floor; warn on constant features."""
        if self.standardize:
            sd = np.nanstd(X, axis=0)
            constant = np.nanmax(X, axis=0) == np.nanmin(X, axis=0)  # exactly: a 0.1 column's sd is ~1e-17
            self.feature_mean_ = np.where(constant, np.nanmax(X, axis=0), np.nanmean(X, axis=0))
            self.feature_scale_ = np.where(constant | ~(sd > 0), 1.0, sd)
        else:
            self.feature_mean_, self.feature_scale_ = np.zeros(X.shape[1]), np.ones(X.shape[1])
        Xs = (X - self.feature_mean_) / self.feature_scale_
        self.shift_ = float(np.nanmean(Xs))
        Xt = Xs - self.shift_
        variances = np.nanvar(Xt, axis=0)
        if not variances.mean() > 0:
            raise DataError("fit: every feature is constant on the fit set; the variance floor would be 0")
        self.var_floor_ = float(self.var_floor * variances.mean())
        constant = np.flatnonzero(np.nanmax(X, axis=0) == np.nanmin(X, axis=0))
        if constant.size:
            warnings.warn(f"two-way GMM: {constant.size} feature(s) constant on the fit set (column "
                          f"{', '.join(map(str, constant[:5]))}{', ...' if constant.size > 5 else ''}); kept, "
                          "their variances held at the floor", UserWarning, stacklevel=3)
        return Xt

    def _components(self, counts: np.ndarray) -> np.ndarray:
        """R_k per class (spec 2.1), capped at n_k or refused (spec 6)."""
        K = len(counts)
        if self.allocation == "equal":
            R = np.full(K, int(self.n_components))
        else:
            R = _largest_remainder(counts, K * int(self.n_components))
        small = np.flatnonzero(counts < R)
        if small.size and self.on_small_class == "error":
            k = small[0]
            raise DataError(f"fit: class {_label(self.classes_[k])!r} has {counts[k]} objects for {R[k]} components")
        if small.size:
            warnings.warn("two-way GMM: components capped at the class size for class(es) "
                          + ", ".join(f"{_label(self.classes_[k])!r} ({R[k]} -> {counts[k]})" for k in small),
                          UserWarning, stacklevel=3)
        return np.minimum(R, counts)

    def _clusters(self, p: int) -> np.ndarray:
        """L_k per class, at most p (L >= p is MDA, spec 3.6)."""
        K = len(self.classes_)
        if self.n_clusters is None:
            L = np.full(K, p)
        elif isinstance(self.n_clusters, dict):
            labels = {_label(c): c for c in self.n_clusters}
            try:
                L = np.array([int(self.n_clusters[labels[_label(c)]]) for c in self.classes_])
            except KeyError:
                raise DataError(f"fit: n_clusters names no L for some of the classes {list(map(_label, self.classes_))}"
                                ) from None
            if (L < 1).any():
                raise DataError("fit: n_clusters must be >= 1 for every class")
        else:
            L = np.full(K, int(self.n_clusters))
        L = np.minimum(L, p)
        if self.clustering == "shared" and len(set(L.tolist())) > 1:
            raise DataError("fit: homogeneous clustering (clustering='shared') needs one n_clusters for all classes")
        return L

    def _seeds(self, base: int, k, restart: int) -> tuple[int, int]:
        """(component seed, cluster seed) of class k's restart (spec 3.6): independent of L and other classes."""
        who = "all classes" if self.clustering == "shared" else _label(self.classes_[k])
        return (derive_seed(base, _label(self.classes_[k]), restart, "components"),
                derive_seed(base, who, restart, "clusters"))

    def _start(self, Xk: np.ndarray, data: ClassData | None, k: int, restart: int, base: int) -> Start:
        """Class k's start (spec 3.6): hard random (or k-means) responsibilities and assignment c(k, .);
        for "full" (spec 2.5) W_k, q and the means from a tied-covariance GMM, c by k-means of W_k mu_m."""
        R, L, p = int(self.n_components_[k]), int(self.n_clusters_[k]), Xk.shape[1]
        seed_q, seed_c = self._seeds(base, k, restart)
        identity = bool(self.identity_[k])
        if self.covariance == "full":
            gm = GaussianMixture(R, covariance_type="tied", reg_covar=self.var_floor_,
                                 random_state=seed_q % 2**32).fit(Xk)
            W, logdet = whitening_matrix(gm.covariances_, self.whitening)
            data = ClassData.of(Xk @ W.T)
            c = np.arange(p) if identity else kmeans_labels((gm.means_ @ W.T).T, L, seed_c)
            return Start(data, float(self.var_floor * data.X.var(axis=0).mean()), (W, logdet),
                         gm.predict_proba(Xk), c)
        if self.init == "random":
            q = np.eye(R)[np.random.default_rng(seed_q).permutation(data.n) % R]
        else:
            q = np.eye(R)[kmeans_labels(fill_missing(data), R, seed_q)]
        if identity:
            c = np.arange(p)
        elif self.init == "random":
            c = np.random.default_rng(seed_c).permutation(p) % L
        else:
            c = kmeans_labels(component_means(data, q).T, L, seed_c)
        return Start(data, self.var_floor_, None, q, c)

    def _fit_classes(self, parts: list[np.ndarray], base: int) -> list[tuple[GEMResult, Start]]:
        """GEM per class (all classes together when "shared"), the best of ``n_init`` starts by log-likelihood."""
        K = len(parts)
        datas = [None if self.covariance == "full" else ClassData.of(Xk) for Xk in parts]
        groups = [list(range(K))] if self.clustering == "shared" else [[k] for k in range(K)]
        chosen: list = [None] * K
        for group in groups:
            best = None
            for restart in range(int(self.n_init)):
                starts = [self._start(parts[k], datas[k], k, restart, base) for k in group]
                if self.clustering == "shared":  # one c for all classes: the first class's
                    starts = [s._replace(assignment=starts[0].assignment) for s in starts]
                params = [initial_params(s.data, s.q, s.assignment, int(self.n_clusters_[k]),
                                         bool(self.identity_[k]), s.floor) for k, s in zip(group, starts)]
                res = run_gem([s.data for s in starts], params, [int(self.n_clusters_[k]) for k in group],
                              [bool(self.identity_[k]) for k in group], [s.floor for s in starts],
                              max_iter=int(self.max_iter), tol=float(self.tol), sweeps=int(self.cluster_sweeps),
                              shared=self.clustering == "shared")
                if best is None or res.path[-1] > best[0].path[-1]:
                    best = (res, starts)
            res, starts = best
            for i, k in enumerate(group):
                chosen[k] = (GEMResult([res.params[i]], res.path, res.n_iter, res.converged), starts[i])
        return chosen

    def _store(self, chosen: list[tuple[GEMResult, Start]]) -> None:
        results = [r for r, _ in chosen]
        whitening = [s.whitening for _, s in chosen]
        self.params_ = [r.params[0] for r in results]
        self.weights_ = [np.exp(pr.log_weights) for pr in self.params_]
        self.means_ = [pr.means for pr in self.params_]
        self.variances_ = [pr.variances for pr in self.params_]
        self.assignments_ = np.array([pr.assignment for pr in self.params_])
        self.whitening_ = None if self.covariance == "diag" else [w[0] for w in whitening]
        self.log_det_whitening_ = np.array([0.0 if w is None else w[1] for w in whitening])
        self.n_iter_ = np.array([r.n_iter for r in results])
        self.converged_ = np.array([r.converged for r in results])
        self.log_likelihood_path_ = [r.path for r in results]
        self.n_components_effective_ = np.array([int(np.isfinite(pr.log_weights).sum()) for pr in self.params_])
        self.n_clusters_effective_ = np.array([np.unique(pr.assignment).size for pr in self.params_])
        K, p = len(self.classes_), self.n_features_in_
        R, L = self.n_components_, self.n_clusters_
        extra = p * (p + 1) // 2 if self.covariance == "full" else 0
        self.n_parameters_ = int(np.sum(R - 1 + 2 * R * L + extra) + K - 1)
        if not self.converged_.all():
            bad = [_label(c) for c, ok in zip(self.classes_, self.converged_) if not ok]
            warnings.warn(f"two-way GMM: GEM stopped at max_iter={self.max_iter} before converging for class(es) "
                          f"{', '.join(map(repr, bad))}", ConvergenceWarning, stacklevel=3)

    # ------------------------------------------------------------------ predict
    def _transform(self, X, what: str) -> np.ndarray:
        X = fitted_vectors(self, X, "params_", what, allow_nan=True)
        if self.covariance == "full" and np.isnan(X).any():
            raise DataError(f"{what} has missing values (NaN); covariance='full' has no missing-data rule (use 'diag')")
        return (X - self.feature_mean_) / self.feature_scale_ - self.shift_

    def _class_data(self, Xt: np.ndarray, k: int) -> ClassData:
        return ClassData.of(Xt if self.whitening_ is None else Xt @ self.whitening_[k].T)

    def class_log_density(self, X) -> np.ndarray:
        """log f_k(x), n x K: eq. (2.3) with missing entries integrated out (2.13); (2.5) for "full".

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors; NaN marks a missing entry ("diag" only).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The class-conditional log densities, columns in the order of ``classes_``.
        """
        Xt = self._transform(X, "predict: X")
        out = np.empty((Xt.shape[0], len(self.classes_)))
        shared = ClassData.of(Xt) if self.whitening_ is None else None
        for k, pr in enumerate(self.params_):
            data = shared if shared is not None else self._class_data(Xt, k)
            T1, T2, eta = cluster_sums(data, pr.assignment, int(self.n_clusters_[k]), bool(self.identity_[k]))
            out[:, k] = self._mixture(k, T1, T2, eta)
        return out

    def _mixture(self, k: int, T1, T2, eta) -> np.ndarray:
        pr = self.params_[k]
        with np.errstate(divide="ignore"):
            joint = component_log_density(T1, T2, eta, pr.means, pr.variances) + pr.log_weights
        return logsumexp(joint, axis=1) + self.log_det_whitening_[k]

    def sufficient_statistics(self, X) -> np.ndarray:
        """The 2 sum_k L_k numbers of Theorem 2.3.1 per object: [T1_k, T2_k] for k = 1..K (per-cluster sums of
        x_j and x_j^2 in the fitted space; of z = W_k x for "full"). They classify complete vectors
        (``decision_from_statistics``); with missing entries they are sums over the observed ones.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors; NaN marks a missing entry ("diag" only).

        Returns
        -------
        ndarray of shape (n_samples, 2 * sum_k L_k)
            The blocks [T1_1, T2_1, T1_2, T2_2, ...], L_k columns each.
        """
        Xt = self._transform(X, "sufficient_statistics: X")
        blocks = []
        for k, pr in enumerate(self.params_):
            T1, T2, _ = cluster_sums(self._class_data(Xt, k), pr.assignment, int(self.n_clusters_[k]),
                                     bool(self.identity_[k]))
            blocks += [T1, T2]
        return np.hstack(blocks)

    def decision_from_statistics(self, T) -> np.ndarray:
        """log a_k + log f_k(x) (n x K) of complete vectors from their ``sufficient_statistics`` alone.

        Parameters
        ----------
        T : array-like of shape (n_samples, 2 * sum_k L_k)
            The output of :meth:`sufficient_statistics` for complete vectors.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The same scores as :meth:`decision_function` on those vectors.
        """
        T = np.asarray(T, dtype=np.float64)
        out, start = np.empty((T.shape[0], len(self.classes_))), 0
        for k in range(len(self.classes_)):
            L = int(self.n_clusters_[k])
            eta = np.bincount(self.params_[k].assignment, minlength=L).astype(np.float64)
            out[:, k] = self._mixture(k, T[:, start:start + L], T[:, start + L:start + 2 * L], eta)
            start += 2 * L
        return out + self.class_log_prior_

    def decision_function(self, X) -> np.ndarray:
        """log a_k + log f_k(x), one column per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors; NaN marks a missing entry ("diag" only).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The joint log densities, columns in the order of ``classes_``.
        """
        return self.class_log_density(X) + self.class_log_prior_


# ---------------------------------------------------------------------- helpers
def _check_missing(missing: np.ndarray, y_idx: np.ndarray, classes: np.ndarray, covariance: str) -> None:
    """Spec 4: DataError for NaN with "full", an all-missing fit row, or a variable missing in a whole class."""
    if not missing.any():
        return
    if covariance == "full":
        raise DataError("fit: X has missing values (NaN); covariance='full' has no missing-data EM (use 'diag')")
    rows = np.flatnonzero(missing.all(axis=1))
    if rows.size:
        raise DataError(f"fit: {rows.size} row(s) of X have every value missing, first row {rows[0]}")
    for k, c in enumerate(classes):
        gone = np.flatnonzero(missing[y_idx == k].all(axis=0))
        if gone.size:
            raise DataError(f"fit: variable {gone[0]} is missing for every object of class {_label(c)!r}")


def _largest_remainder(counts: np.ndarray, total: int) -> np.ndarray:
    """``total`` components split in proportion to the class sizes, largest remainder, each class >= 1."""
    quota = total * counts / counts.sum()
    R = np.maximum(np.floor(quota).astype(int), 1)
    order = np.argsort(-(quota - np.floor(quota)), kind="stable")
    i = 0
    while R.sum() < total:
        R[order[i % len(R)]] += 1
        i += 1
    for k in order[::-1]:  # over-allocated by the minimum of 1: take from the smallest remainders
        if R.sum() <= total:
            break
        if R[k] > 1:
            R[k] -= 1
    return R
