"""Batch KDE classifier with Gaussian kernels, the bandwidth of each class chosen by CV
(the "CV" column of the odKDE paper's Table 1; docs/online-kde-spec.md section 8).

Per class c, the Gaussian KDE of its objects on the standardised features, with
the bandwidth h_c that maximises the 5-fold held-out log-likelihood over
``BANDWIDTHS`` (ties go to the larger h). Classify by argmax_c log pi_c + log p(x | c).

The CV criterion is the one of ``GridSearchCV(KernelDensity(), {"bandwidth": BANDWIDTHS[::-1]},
cv=KFold(k, shuffle=True, random_state=0))`` (its default scoring ``KernelDensity.score``, the sum of the
held-out log densities, averaged over the folds; the first best in grid order), computed directly
(:func:`held_out_log_likelihoods`): one squared-distance matrix per fold serves every bandwidth, the Gaussian
KDE's log density of a held-out x being

    log p_h(x) = logsumexp_j(-||x - x_j||^2 / (2 h^2)) - log n - (d/2) log(2 pi) - d log h    (1)

over the fold's n fit points x_j in R^d, a log-sum-exp shifted by its largest term, in float64: exact to
rounding, as scikit-learn's tree is while a fit part is one leaf (<= 2 leaf_size = 80 points, or
``KernelDensity(leaf_size=n)``). Beyond, the tree's search at ``rtol=0`` can stop early or keep a wrong node
bound at small h (a defect of scikit-learn 1.9's tree, shown by the tests): its scores, and then its
choice, may differ from eq. (1).

The classifier's densities log p(x | c) are eq. (1) too, with the class's n_c objects and h_c, by the same
function (:func:`kde_log_densities`), not ``KernelDensity.score_samples``: exact for classes of any size.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.spatial.distance import cdist
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import KFold
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._classifiers import (
    CachedParamNames,
    FastPathMixin,
    as_vectors,
    fit_classes,
    fitted_vectors,
    standard_scale,
)

#: the CV grid of h (standardised features), spec 8
BANDWIDTHS = np.geomspace(0.02, 3.0, 26)

#: working memory of one row block of :func:`held_out_log_likelihoods` (its distances and the per-bandwidth
#: exponents), bytes: memory stays bounded for any class size; larger blocks were not faster (measured)
BLOCK_BYTES = 8 * 2**20


def kde_log_densities(Z, X_fit, bandwidths, block_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """log p_h(z) of the Gaussian KDE on the points ``X_fit``, at every z of ``Z`` and every bandwidth h (eq. 1).

    Exact to rounding, for any number of points (unlike scikit-learn's ``KernelDensity`` tree beyond one leaf;
    see the module's docstring): the squared distances of a block of rows of ``Z`` to every fit point
    (``cdist``, no cancellation), then per bandwidth a log-sum-exp shifted by its largest term (the nearest fit
    point's), in float64. The one computation behind both the bandwidth CV (:func:`held_out_log_likelihoods`)
    and the classifier's densities (:meth:`KDEClassifier.decision_function`).

    Parameters
    ----------
    Z : array-like of shape (n_queries, n_features)
        Where to evaluate, finite.
    X_fit : array-like of shape (n_fit, n_features)
        The kernel centres x_j, finite; n_fit >= 1.
    bandwidths : array-like of shape (n_bandwidths,)
        Positive bandwidths h.
    block_bytes : int, default=BLOCK_BYTES
        Working memory of a block of rows of ``Z`` (its distances and exponents); the result does not depend
        on it.

    Returns
    -------
    ndarray of shape (n_bandwidths, n_queries)
        log p_h(z), eq. (1); -inf where a point's distances all overflow (a finite log density wherever
        they are finite, even when every kernel underflows).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import norm
    >>> from hlm.kde._kde_cv import kde_log_densities
    >>> X = np.array([[0.0], [1.0]])
    >>> log_p = kde_log_densities([[0.5], [40.0]], X, [0.5])
    >>> ref = np.log(norm.pdf([0.5], X.ravel(), 0.5).mean())  # the mean of the kernels at 0.5
    >>> print(bool(np.isclose(log_p[0, 0], ref, rtol=1e-14)), bool(np.isfinite(log_p[0, 1])))  # 40: underflows
    True True
    """
    Z = np.asarray(Z, dtype=np.float64)
    X_fit = np.asarray(X_fit, dtype=np.float64)
    h = np.asarray(bandwidths, dtype=np.float64).ravel()
    coef = (-0.5 / (h * h))[:, None]  # the exponent of eq. (1) is coef * ||x - x_j||^2
    n_fit, d = X_fit.shape
    log_knorm = -0.5 * d * np.log(2 * np.pi) - d * np.log(h)  # the kernel's normalisation, as scikit-learn's
    log_p = np.empty((h.size, Z.shape[0]))
    rows = max(1, block_bytes // (8 * n_fit * (h.size + 2)))
    for start in range(0, Z.shape[0], rows):
        sq = cdist(Z[start:start + rows], X_fit, "sqeuclidean")  # exact: no cancellation
        nearest = sq.min(axis=1)
        with np.errstate(invalid="ignore"):  # inf - inf where every distance overflowed: set below
            excess = sq - nearest[:, None]  # >= 0, 0 at the nearest fit point: the sum below is >= 1
        terms = coef[:, :, None] * excess  # (bandwidth, point, fit point)
        np.exp(terms, out=terms)
        lse = coef * nearest + np.log(terms.sum(axis=2))
        lse[:, np.isinf(nearest)] = -np.inf
        log_p[:, start:start + rows] = (lse + log_knorm[:, None]) - np.log(n_fit)
    return log_p


def held_out_log_likelihoods(X, bandwidths, folds, block_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """Each fold's total held-out log-likelihood of the Gaussian KDE, at every bandwidth (eq. 1 above).

    What ``GridSearchCV(KernelDensity(), {"bandwidth": bandwidths}, cv=folds)`` scores (``KernelDensity.score``
    on each fold's held-out part; its ``mean_test_score`` is this array's mean over axis 1) where its tree sums
    exactly (see the module's docstring), exact to rounding: :func:`kde_log_densities` of the held-out part on
    the fit part, one squared-distance matrix per fold (in row blocks) serving every bandwidth.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points, finite.
    bandwidths : array-like of shape (n_bandwidths,)
        Positive bandwidths h.
    folds : iterable of (fit indices, held-out indices)
        The CV folds, e.g. ``KFold(...).split(X)``; every fit part non-empty.
    block_bytes : int, default=BLOCK_BYTES
        Working memory of a block of held-out rows (its distances and exponents); the result does not depend
        on it.

    Returns
    -------
    ndarray of shape (n_bandwidths, n_folds)
        sum over the fold's held-out x of log p_h(x), eq. (1) with the fold's fit points; -inf where a point's
        distances all overflow.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import KFold
    >>> from sklearn.neighbors import KernelDensity
    >>> from hlm.kde._kde_cv import held_out_log_likelihoods
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    >>> scores = held_out_log_likelihoods(X, [0.3, 1.0], folds)
    >>> fit, held_out = folds[0]
    >>> ref = KernelDensity(bandwidth=0.3).fit(X[fit]).score(X[held_out])
    >>> print(scores.shape, bool(np.isclose(scores[0, 0], ref, rtol=1e-12)))
    (2, 3) True
    """
    X = np.asarray(X, dtype=np.float64)
    return np.column_stack([kde_log_densities(X[held_out], X[fit], bandwidths, block_bytes).sum(axis=1)
                            for fit, held_out in folds])


class KDEClassifier(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """Gaussian KDE per class, prior x density: the batch "CV" baseline of the odKDE paper's Table 1
    (docs/online-kde-spec.md section 8).

    Per class c, the Gaussian KDE of its n_c objects on the standardised features (eq. 1 of the module's
    docstring), with the bandwidth h_c that maximises the held-out log-likelihood over ``BANDWIDTHS`` (26 values
    in [0.02, 3], geometric; ties go to the larger h), GridSearchCV's criterion computed directly by eq. (1)
    (:func:`held_out_log_likelihoods`). Classify by argmax_c log pi_c + log p(x | c), pi_c = n_c / n, the
    density log p(x | c) by eq. (1) exactly (:func:`kde_log_densities`, as the CV); ties go to the first
    (smallest) class label.

    Parameters
    ----------
    bandwidth : "cv" or float, default="cv"
        "cv": each class's h by its own ``cv_folds``-fold held-out log-likelihood over ``BANDWIDTHS`` (a class
        with one object gets Silverman's rule for unit sd, with a warning); a number: that h for every class
        (e.g. chosen by the pipeline's CV error).
    cv_folds : int, default=5
        Folds of the likelihood CV (fewer for a smaller class): ``KFold(shuffle=True, random_state=0)``.
    standardize : bool, default=True
        Standardise features with the fit set's mean and sd (a constant feature keeps sd 1).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        Number of features of the fit set.
    mean_, scale_ : ndarray of shape (n_features_in_,)
        The standardisation x' = (x - mean_) / scale_ (0 and 1 without ``standardize``).
    class_log_prior_ : ndarray of shape (n_classes,)
        log pi_c = log n_c / n.
    bandwidths_ : ndarray of shape (n_classes,)
        h_c of each class, in standardised units.
    points_ : list of ndarray of shape (n_c, n_features_in_)
        Each class's training objects, standardised: the kernel centres of its KDE (with ``bandwidths_``, all
        the densities need; replaces the former ``densities_``, a list of scikit-learn ``KernelDensity``).

    See Also
    --------
    OKDEClassifier, ODKDEClassifier : The online KDEs this baseline is compared with.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.kde import KDEClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(6, 1, (20, 2))])
    >>> y = np.repeat([0, 1], 20)
    >>> clf = KDEClassifier().fit(X, y)
    >>> print(clf.predict([[0.0, 0.0], [6.0, 6.0]]), clf.bandwidths_.shape)
    [0 1] (2,)
    >>> print(bool(((clf.bandwidths_ >= 0.02) & (clf.bandwidths_ <= 3.0)).all()))  # h_c from the CV grid
    True
    >>> print(KDEClassifier(bandwidth=0.5).fit(X, y).bandwidths_)  # one fixed h for every class
    [0.5 0.5]
    """

    _parameter_constraints = {
        "bandwidth": [StrOptions({"cv"}), Interval(Real, 0, None, closed="neither")],
        "cv_folds": [Interval(Integral, 2, None, closed="left")],
        "standardize": ["boolean"],
    }

    def __init__(self, bandwidth="cv", cv_folds: int = 5, standardize: bool = True):
        self.bandwidth = bandwidth
        self.cv_folds = cv_folds
        self.standardize = standardize

    def fit(self, X, y):
        """Choose each class's bandwidth and keep its standardised objects, the KDE's centres (spec 8).

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
        X = as_vectors(X, "fit: X")
        self.classes_, y_idx = fit_classes(y, X.shape[0], "rows of X")
        self.n_features_in_ = X.shape[1]
        self.mean_, self.scale_ = standard_scale(X, self.standardize)
        Xs = (X - self.mean_) / self.scale_
        counts = np.bincount(y_idx, minlength=len(self.classes_))
        self.class_log_prior_ = np.log(counts / counts.sum())
        self.bandwidths_ = np.array([self._bandwidth(Xs[y_idx == c], c) for c in range(len(self.classes_))])
        self.points_ = [Xs[y_idx == c] for c in range(len(self.classes_))]
        return self

    def _bandwidth(self, Xc: np.ndarray, c: int) -> float:
        if self.bandwidth != "cv":
            return float(self.bandwidth)
        n = Xc.shape[0]
        if n < 2:
            h = (4.0 / ((Xc.shape[1] + 2.0) * n)) ** (1.0 / (Xc.shape[1] + 4.0))
            warnings.warn(f"KDE: class {self.classes_[c]!r} has one training object; its bandwidth is "
                          f"Silverman's rule for unit sd ({h:.3g}), not chosen by CV", UserWarning, stacklevel=3)
            return h
        folds = KFold(min(int(self.cv_folds), n), shuffle=True, random_state=0).split(Xc)
        grid = BANDWIDTHS[::-1]  # larger h first: the first best wins, as GridSearchCV's rank 1 in grid order
        return float(grid[np.argmax(held_out_log_likelihoods(Xc, grid, folds).mean(axis=1))])

    def decision_function(self, X) -> np.ndarray:
        """log pi_c + log p(x | c), one column per class, log p(x | c) by eq. (1) (:func:`kde_log_densities`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The joint log densities, columns in the order of ``classes_``.
        """
        X = fitted_vectors(self, X, "points_")
        Xs = (X - self.mean_) / self.scale_
        return np.column_stack([lp + kde_log_densities(Xs, Xc, [h])[0] for lp, Xc, h in
                                zip(self.class_log_prior_, self.points_, self.bandwidths_)])

    def predict_proba(self, X) -> np.ndarray:
        """Posteriors p(c | x) by Bayes' rule on the class KDEs (softmax of :meth:`decision_function`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns in the order of ``classes_``.
        """
        s = self.decision_function(X)
        return np.exp(s - logsumexp(s, axis=1, keepdims=True))

    def predict(self, X) -> np.ndarray:
        """argmax_c pi_c p(x | c); ties go to the first (smallest) class label.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predicted class labels.
        """
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]
