"""Reduced-rank mixture discriminant analysis by optimal scoring (MDA-RR-OS; Qiao 2012, dissertation section 4.5.1,
after Hastie & Tibshirani 1996, "Discriminant analysis by Gaussian mixtures"; docs/subspace-gmm-spec.md section 6.4).

The EM of MDA written as a multiple linear regression: the M-step regresses the blurred response matrix (each
object's subclass responsibilities, scored) on the features and takes the leading eigenvectors of the fitted
scores' cross-product; the E-step weighs each object's subclasses of its own class by the distances to their means
in that rank-``rank`` discriminant space. As the R package ``mda``'s ``mda()`` with ``method = polyreg`` (linear
regression), which the chapter ran: a fixed number of EM iterations (its ``iter = 5``) from the best of several
per-class k-means starts (its ``tries = 5``, by the training misclassification of the nearest centre).
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils._param_validation import Interval

from hlm.base._classifiers import CachedParamNames, as_vectors
from hlm.base._seeds import derive_seed
from hlm.errors import DataError
from hlm.mixture._posteriors import ScorePosteriors
from hlm.mixture._posteriors import base_seed as _base_seed
from hlm.mixture._posteriors import label as _label
from hlm.mixture._subspace import _prepare

__all__ = ["OptimalScoringMDA"]

#: eigenvalues of the scores' cross-product are kept below 1 - EPS and counted above EPS (the package's eps)
EPS = np.finfo(np.float64).eps


class OptimalScoringMDA(ScorePosteriors, ClassifierMixin, TransformerMixin, CachedParamNames, BaseEstimator):
    """MDA-RR-OS: reduced-rank mixture discriminant analysis by optimal scoring (Hastie & Tibshirani 1996; the
    dissertation's baseline of section 4.5.1; docs/subspace-gmm-spec.md section 6.4).

    Each class is a mixture of ``n_components`` Gaussian subclasses with one covariance for all; the subclass
    means lie in a ``rank``-dimensional discriminant space. EM with the M-step by optimal scoring: the linear
    regression of the scored responsibilities Theta = W theta on [1, X], then the eigenvectors of
    Theta' Theta_hat / n (eigenvalues lambda). An object's variates are eta(x) = (B'[1, x]) V / sqrt(lambda (1 -
    lambda)), a subclass's mean theta_r V sqrt(lambda / (1 - lambda)), and d_r(x) = ||eta(x) - mean_r||^2 its
    Mahalanobis distance up to a term common to all subclasses. Rule: argmax_k log a_k + log sum_r pi_kr
    exp(-d_r(x) / 2), a_k = n_k / n. A transformer too: ``transform`` gives the variates eta(x).

    Parameters
    ----------
    n_components : int, default=3
        Subclasses per class; a class with at most this many objects gets one (its mean), as ``mda``'s start.
    rank : int or None, default=None
        The discriminant dimension d of the chapter's tables (None: R - 1, the full MDA; capped at the number of
        eigenvalues above machine epsilon).
    n_iter : int, default=5
        EM iterations, a fixed number (``mda``'s ``iter``); the model is the last M-step's.
    n_starts : int, default=5
        k-means starts per fit (``mda.start``'s ``tries``); the start whose centres misclassify the fewest
        training objects by the nearest centre is kept (the first of equals).
    standardize : bool, default=False
        z-score each feature on the fit set first.
    random_state : int, RandomState or None, default=None
        Seeds the k-means starts through ``derive_seed``.

    Attributes
    ----------
    classes_, class_prior_ : ndarray of shape (n_classes,)
        The class labels and a_k = n_k / n.
    n_features_in_ : int
        Features seen in fit.
    component_class_ : ndarray of shape (R,)
        Each subclass's class label, classes in order; R counts the subclasses of the last M-step (a subclass
        whose responsibilities all vanished is dropped).
    weights_ : ndarray of shape (R,)
        pi_kr, each subclass's weight within its class (of the last M-step).
    coef_ : ndarray of shape (n_features + 1, R - 1)
        The regression of the scores on [1, X] (intercept first), in the standardised units.
    eigenvalues_ : ndarray of shape (R - 1,)
        lambda, descending, clipped at 1 - eps.
    rank_ : int
        The dimension used.
    means_ : ndarray of shape (R, rank_)
        The subclass means in the discriminant space.
    start_error_ : float
        The training misclassification of the start kept (the nearest k-means centre's class).
    n_components_per_class_ : ndarray of shape (n_classes,)
        Subclasses per class after the start's rule for small classes.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.mixture import OptimalScoringMDA
    >>> rng = np.random.default_rng(0)
    >>> centres = np.zeros((3, 4))
    >>> centres[1, 0] = centres[2, 1] = 6.0
    >>> X = np.vstack([rng.normal(c, 1, (20, 4)) for c in centres])
    >>> y = np.repeat([0, 1, 2], 20)
    >>> clf = OptimalScoringMDA(n_components=2, rank=2, random_state=0).fit(X, y)
    >>> print(clf.predict(centres), clf.means_.shape, clf.transform(centres).shape)
    [0 1 2] (6, 2) (3, 2)
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "rank": [Interval(Integral, 1, None, closed="left"), None],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "n_starts": [Interval(Integral, 1, None, closed="left")],
        "standardize": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=3, rank=None, n_iter=5, n_starts=5, standardize=False, random_state=None):
        self.n_components = n_components
        self.rank = rank
        self.n_iter = n_iter
        self.n_starts = n_starts
        self.standardize = standardize
        self.random_state = random_state

    def fit(self, X, y):
        """Fit by ``n_iter`` optimal-scoring EM iterations from the best of ``n_starts`` k-means starts.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, finite.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self
            The fitted classifier.
        """
        self._validate_params()
        Xc, y_idx, counts = _prepare(self, X, y)
        Xc = Xc + self.center_  # the regression has its intercept: the standardised rows as they are
        base = _base_seed(self.random_state)
        W, sub_class, self.start_error_ = best_start(Xc, y_idx, int(self.n_components), int(self.n_starts), base,
                                                     [_label(c) for c in self.classes_])
        H = np.column_stack([np.ones(len(Xc)), Xc])
        for _ in range(int(self.n_iter)):
            fit = m_step(H, W, sub_class, self.rank)
            W = e_step(variate_distances(H @ fit.coef, fit), W, fit.sub_class, y_idx, fit.log_weights)
        self._fit = fit
        self.component_class_ = self.classes_[fit.sub_class]
        self.weights_ = np.exp(fit.log_weights)
        self.coef_, self.eigenvalues_, self.rank_, self.means_ = fit.coef, fit.eigenvalues, fit.rank, fit.means
        self.n_components_per_class_ = np.bincount(fit.sub_class, minlength=len(self.classes_))
        return self

    def _design(self, X, what: str) -> np.ndarray:
        if not hasattr(self, "_fit"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        X = as_vectors(X, what)
        if X.shape[1] != self.n_features_in_:
            raise DataError(f"{what} has {X.shape[1]} features; the model was fitted on {self.n_features_in_}")
        return np.column_stack([np.ones(len(X)), (X - self.feature_mean_) / self.feature_scale_])

    def transform(self, X) -> np.ndarray:
        """The discriminant variates eta(x) (n x ``rank_``), where the subclass means are ``means_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, in the input's units.

        Returns
        -------
        ndarray of shape (n_samples, rank_)
            The scaled variates.
        """
        return variates(self._design(X, "transform: X") @ self.coef_, self._fit)

    def decision_function(self, X) -> np.ndarray:
        """log a_k + log sum_r pi_kr exp(-d_r(x) / 2) per class: the log joint density up to a term common to all
        classes (the distances are Mahalanobis distances up to such a term).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, in the input's units.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        H = self._design(X, "predict: X")
        fit = self._fit
        terms = fit.log_weights[None, :] - 0.5 * variate_distances(H @ fit.coef, fit)
        out = np.column_stack([logsumexp(terms[:, fit.sub_class == k], axis=1) for k in range(len(self.classes_))])
        return out + np.log(self.class_prior_)[None, :]


class ScoringFit:
    """One M-step: the regression ``coef`` (p + 1 x R - 1), the eigenvalues, the rank, the eigenvectors kept
    (R - 1 x rank), the subclass means in the variates' space (R x rank), sub_class and log pi."""

    def __init__(self, coef, eigenvalues, rank, vectors, means, sub_class, log_weights):
        self.coef, self.eigenvalues, self.rank, self.vectors = coef, eigenvalues, rank, vectors
        self.means, self.sub_class, self.log_weights = means, sub_class, log_weights


def initial_scores(dp: np.ndarray) -> np.ndarray:
    """R x (R - 1) scores theta with theta' D_p theta = I and 1' D_p theta = 0, D_p = diag(dp) (``contr.fda``'s
    conditions; any such basis gives the same fit, as the M-step's eigenvectors rotate it)."""
    R = len(dp)
    s = np.sqrt(dp)
    Q, _ = np.linalg.qr(s[:, None] * np.column_stack([np.ones(R), np.eye(R)[:, :R - 1]]))
    return Q[:, 1:] / s[:, None]


def m_step(H: np.ndarray, W: np.ndarray, sub_class: np.ndarray, rank: int | None) -> ScoringFit:
    """Optimal scoring on the blurred response: Theta = W theta (n x R - 1; W the responsibilities, zero outside an
    object's class), the least-squares fit Theta_hat = H B (H = [1, X]), and the eigen-decomposition of
    Theta' Theta_hat / n. Subclasses of zero weight are dropped."""
    totals = W.sum(axis=0)
    alive = totals > 0
    W, totals, sub_class = W[:, alive], totals[alive], sub_class[alive]
    n, R = W.shape
    theta = initial_scores(totals / totals.sum())
    Theta = W @ theta
    B = np.linalg.lstsq(H, Theta, rcond=None)[0]
    M = Theta.T @ (H @ B) / n
    lam, V = np.linalg.eigh((M + M.T) / 2)
    lam, V = np.minimum(lam[::-1], 1 - EPS), V[:, ::-1]
    d = min(R - 1 if rank is None else int(rank), int(np.sum(lam > EPS)))
    if d == 0:
        raise DataError("fit: optimal scoring found no discrimination (every eigenvalue is 0)")
    a = np.sqrt(lam[:d])
    means = (theta @ V[:, :d]) * (a / np.sqrt(1 - lam[:d]))
    log_w = np.empty(R)
    for k in np.unique(sub_class):
        own = sub_class == k
        log_w[own] = np.log(totals[own] / totals[own].sum())
    return ScoringFit(B, lam, d, V[:, :d], means, sub_class, log_w)


def variates(fitted: np.ndarray, fit: ScoringFit) -> np.ndarray:
    """eta = Theta_hat V / sqrt(lambda (1 - lambda)) for the fitted scores Theta_hat = H B."""
    lam = fit.eigenvalues[:fit.rank]
    return (fitted @ fit.vectors) / np.sqrt(lam * (1 - lam))


def variate_distances(fitted: np.ndarray, fit: ScoringFit) -> np.ndarray:
    """d_r = ||eta - mean_r||^2 (n x R)."""
    eta = variates(fitted, fit)
    return ((eta[:, None, :] - fit.means[None, :, :]) ** 2).sum(axis=2)


def e_step(dist: np.ndarray, W: np.ndarray, sub_class: np.ndarray, y_idx: np.ndarray,
           log_weights: np.ndarray) -> np.ndarray:
    """New responsibilities: for an object of class k, pi_kr exp(-d_r / 2) over k's subclasses, normalised; the
    columns of subclasses the M-step dropped stay zero."""
    out = np.zeros_like(W)
    alive = np.flatnonzero(W.sum(axis=0) > 0)
    for k in np.unique(sub_class):
        rows, cols = np.flatnonzero(y_idx == k), np.flatnonzero(sub_class == k)
        t = log_weights[cols][None, :] - 0.5 * dist[np.ix_(rows, cols)]
        out[np.ix_(rows, alive[cols])] = np.exp(t - logsumexp(t, axis=1, keepdims=True))
    return out


def kmeans_start(X: np.ndarray, y_idx: np.ndarray, R: int, seed_of) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hard responsibilities n x sum R_k, subclass class, centres): per class k-means from R of its rows drawn at
    random; a class of at most R objects, or R = 1, is one subclass at its mean (``kmeans.start``)."""
    blocks, sub_class, centres = [], [], []
    for k in range(int(y_idx.max()) + 1):
        rows = np.flatnonzero(y_idx == k)
        if R <= 1 or len(rows) <= R:
            labels, c = np.zeros(len(rows), dtype=int), X[rows].mean(axis=0, keepdims=True)
        else:
            rng = np.random.default_rng(seed_of(k))
            init = X[rows[rng.choice(len(rows), size=R, replace=False)]]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # fewer distinct rows than R: a cluster fewer
                km = KMeans(R, init=init, n_init=1).fit(X[rows])
            labels, c = km.labels_, km.cluster_centers_
        blocks.append((rows, labels, len(c)))
        sub_class += [k] * len(c)
        centres.append(c)
    W = np.zeros((len(X), len(sub_class)))
    offset = 0
    for rows, labels, m in blocks:
        W[rows, offset + labels] = 1.0
        offset += m
    return W, np.asarray(sub_class), np.vstack(centres)


def best_start(X: np.ndarray, y_idx: np.ndarray, R: int, n_starts: int, base: int, labels) -> tuple:
    """The k-means start (responsibilities, subclass class, its error) whose centres misclassify the fewest training
    objects by the nearest centre (``mda.start``'s "misclassification" criterion), the first of equals."""
    best, best_error = None, np.inf
    for start in range(n_starts):
        W, sub_class, centres = kmeans_start(
            X, y_idx, R, lambda k, s=start: derive_seed(base, labels[k], s, "mda-os") % 2**32)
        nearest = np.argmin(((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2), axis=1)
        error = float(np.mean(sub_class[nearest] != y_idx))
        if error < best_error:
            best, best_error = (W, sub_class), error
    return (*best, best_error)
