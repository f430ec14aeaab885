"""Kernel HLM (paper section 3.2): every training object is a prototype of its class.

Each training object z_i gets u_i = D^2(z_i, nearest other object of its class).
One common Gamma(s, b) is fitted to all u_i (log s - psi(s) = log(ubar/utilde),
b = ubar/s), then s is rounded to s* (section 2.1) for scoring. As s and b are
common to all classes, the posteriors depend on b alone. A class
k scores z by log pi_k + log sum_i (1/n_k) phi~(z; z_i) with the pseudo-density
of eq. 1, and posteriors follow eq. 6, all in the log domain.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from scipy.special import logsumexp
from sklearn.utils._param_validation import Interval

from hlm.errors import DataError
from hlm.gamma import ComponentStats, fit_gamma, log_pseudo_density
from hlm.models._base import PosteriorClassifier


class KernelHLM(PosteriorClassifier):
    """Kernel HLM classifier on precomputed distances.

    Parameters
    ----------
    shape : float or None
        Fix the Gamma shape s (= d/2) instead of estimating it.
    scale : float or None
        Fix the Gamma scale b (= 2 sigma^2) instead of estimating it.
    round_shape : bool
        Round the estimated shape to s* = floor(2s + 0.5)/2 (section 2.1).
    squared : bool
        u = D^2 (the paper's reading, default) or u = D (dissertation ch. 3, D-tilde).

    Attributes
    ----------
    shape_, scale_ : the (s, b) used to score.
    shape_mle_ : the unrounded estimate (NaN when the shape is fixed).
    n_zero_u_ : how many nearest-neighbour distances were zero and left out.
    """

    _parameter_constraints = {
        "shape": [Interval(Real, 0, None, closed="neither"), None],
        "scale": [Interval(Real, 0, None, closed="neither"), None],
        "round_shape": ["boolean"],
        "squared": ["boolean"],
    }

    def __init__(self, shape: float | None = None, scale: float | None = None, round_shape: bool = True,
                 squared: bool = True):
        self.shape = shape
        self.scale = scale
        self.round_shape = round_shape
        self.squared = squared

    def fit(self, D, y):
        self._validate_params()
        D, y_idx = self._check_fit_input(D, y)
        self._y_idx = y_idx
        u = nearest_same_class_sq_distance(D if self.squared else np.sqrt(D), y_idx)
        singletons = [str(c) for c, n in zip(self.classes_, np.bincount(y_idx)) if n == 1]
        if singletons:
            warnings.warn(
                f"class(es) {', '.join(singletons)} have one training object: no u from them; "
                "their prototype still scores with the common (s, b)",
                UserWarning,
                stacklevel=2,
            )
        has_u = np.isfinite(u)
        zero = has_u & (u == 0)
        self.n_zero_u_ = int(zero.sum())
        if self.n_zero_u_:
            warnings.warn(
                f"{self.n_zero_u_} of {int(has_u.sum())} objects have a duplicate (distance 0) in "
                "their class; their u = 0 is left out of the (s, b) estimate",
                UserWarning,
                stacklevel=2,
            )
        u_pos = u[has_u & ~zero]
        if self.shape is not None and self.scale is not None:
            self.shape_mle_, self.shape_, self.scale_ = np.nan, float(self.shape), float(self.scale)
            return self
        if u_pos.size == 0:
            raise DataError(
                "KernelHLM.fit: no positive nearest-neighbour distance within any class "
                "(all classes are singletons or all same-class neighbours are duplicates); "
                "cannot estimate the Gamma shape and scale"
            )
        self._fit_gamma(u_pos)
        return self

    def _fit_gamma(self, u_pos: np.ndarray) -> None:
        stats = ComponentStats.from_samples(u_pos, np.zeros(u_pos.size, dtype=np.intp), 1)
        if self.shape is None:
            fit = fit_gamma(stats, rounding=self.round_shape)
            self.shape_mle_, self.shape_, scale = fit.shape_mle, fit.shape, float(fit.scale[0])
        else:  # fixed shape: b is the MLE given s
            self.shape_mle_, self.shape_ = np.nan, float(self.shape)
            scale = float(stats.mean_u[0] / self.shape_)
        self.scale_ = float(self.scale) if self.scale is not None else scale

    def predict_log_scores(self, D) -> np.ndarray:
        """log pi_k + log phi(z | M_k) for every row of ``D_test_train`` and class k (eq. 6 numerator)."""
        D = self._check_predict_input(D)
        log_kernel = log_pseudo_density(D**2 if self.squared else D, self.shape_, self.scale_)
        n_classes = len(self.classes_)
        scores = np.empty((D.shape[0], n_classes))
        counts = np.bincount(self._y_idx, minlength=n_classes)
        for k in range(n_classes):
            cols = self._y_idx == k
            scores[:, k] = logsumexp(log_kernel[:, cols], axis=1) - np.log(counts[k])
        return scores + np.log(self.class_prior_)[None, :]



def nearest_same_class_sq_distance(D: np.ndarray, y_idx: np.ndarray) -> np.ndarray:
    """u_i = D^2(z_i, nearest other object of the same class); inf for a class of one."""
    same = y_idx[:, None] == y_idx[None, :]
    np.fill_diagonal(same, False)
    masked = np.where(same, D, np.inf)
    return masked.min(axis=1) ** 2
