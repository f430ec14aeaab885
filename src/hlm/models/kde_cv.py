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

from hlm.models._base import CachedParamNames, FastPathMixin, as_vectors, fit_classes, fitted_vectors, standard_scale

#: the CV grid of h (standardised features), spec 8
BANDWIDTHS = np.geomspace(0.02, 3.0, 26)


class KDEClassifier(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """Gaussian KDE per class, prior x density.

    Parameters
    ----------
    bandwidth : "cv" or float
        "cv": each class's h by its own 5-fold held-out log-likelihood over ``BANDWIDTHS``;
        a number: that h for every class (e.g. chosen by the pipeline's CV error).
    cv_folds : int
        Folds of the likelihood CV (fewer for a smaller class).
    standardize : bool
        Standardise features with the fit set's mean and sd (a constant feature keeps sd 1).
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
        """log pi_c + log p(x | c), one column per class."""
        X = fitted_vectors(self, X, "densities_")
        Xs = (X - self.mean_) / self.scale_
        return np.column_stack([lp + kde.score_samples(Xs) for lp, kde in zip(self.class_log_prior_,
                                                                               self.densities_)])

    def predict_proba(self, X) -> np.ndarray:
        s = self.decision_function(X)
        return np.exp(s - logsumexp(s, axis=1, keepdims=True))

    def predict(self, X) -> np.ndarray:
        """argmax_c pi_c p(x | c); ties go to the first (smallest) class label."""
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]
