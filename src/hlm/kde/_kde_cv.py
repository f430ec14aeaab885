"""Batch KDE classifier with Gaussian kernels, the bandwidth of each class chosen by CV
(the "CV" column of the odKDE paper's Table 1; docs/online-kde-spec.md section 8).

Per class c, scikit-learn's ``KernelDensity`` on the standardised features, with
the bandwidth h_c that maximises the 5-fold held-out log-likelihood over
``BANDWIDTHS`` (ties go to the larger h). Classify by argmax_c log pi_c + log p(x | c).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.neighbors import KernelDensity
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


class KDEClassifier(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """Gaussian KDE per class, prior x density: the batch "CV" baseline of the odKDE paper's Table 1
    (docs/online-kde-spec.md section 8).

    Per class c, scikit-learn's ``KernelDensity`` on the standardised features, with the bandwidth h_c that
    maximises the held-out log-likelihood over ``BANDWIDTHS`` (26 values in [0.02, 3], geometric; ties go to
    the larger h). Classify by argmax_c log pi_c + log p(x | c), pi_c = n_c / n; ties go to the first
    (smallest) class label.

    Parameters
    ----------
    bandwidth : "cv" or float, default="cv"
        "cv": each class's h by its own ``cv_folds``-fold held-out log-likelihood over ``BANDWIDTHS`` (a class
        with one object gets Silverman's rule for unit sd, with a warning); a number: that h for every class
        (e.g. chosen by the pipeline's CV error).
    cv_folds : int, default=5
        Folds of the likelihood CV (fewer for a smaller class).
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
    densities_ : list of sklearn.neighbors.KernelDensity
        The fitted KDE of each class.

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
        """Fit each class's KDE and choose its bandwidth (spec 8).

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
        self.densities_ = [KernelDensity(bandwidth=float(h)).fit(Xs[y_idx == c])
                           for c, h in enumerate(self.bandwidths_)]
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
        folds = KFold(min(int(self.cv_folds), n), shuffle=True, random_state=0)
        search = GridSearchCV(KernelDensity(), {"bandwidth": BANDWIDTHS[::-1]}, cv=folds)  # ties: larger h
        return float(search.fit(Xc).best_params_["bandwidth"])

    def decision_function(self, X) -> np.ndarray:
        """log pi_c + log p(x | c), one column per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The joint log densities, columns in the order of ``classes_``.
        """
        X = fitted_vectors(self, X, "densities_")
        Xs = (X - self.mean_) / self.scale_
        return np.column_stack([lp + kde.score_samples(Xs) for lp, kde in zip(self.class_log_prior_,
                                                                               self.densities_)])

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
