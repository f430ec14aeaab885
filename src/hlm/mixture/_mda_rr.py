"""Reduced-rank mixture discriminant analysis by weighted rank reduction (MDA-RR; Qiao 2012, dissertation
section 4.5.1 and Appendix B.4, after Hastie & Tibshirani 1996; docs/subspace-gmm-spec.md section 6.2).

EM for class-conditional Gaussian mixtures with one covariance for all components, whose R = sum_k R_k means are
confined to a rank-L subspace: the E-step is (4.5), pi is (4.7), and the M-step for the means and covariance is a
weighted LDA with R "classes" followed by the rank reduction (B.10), (B.11)
(``hlm.mixture._subspace_em.reduced_rank_m_step``). A rank >= min(p, R - 1) is the full MDA.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from hlm.base._classifiers import CachedParamNames, FastPathMixin
from hlm.mixture._mpca import orthonormal
from hlm.mixture._subspace import (
    MIXTURE_CONSTRAINTS,
    MixtureClassifierMixin,
    _base_seed,
    _check_components,
    _prepare,
    _ridge,
    kmeans_responsibilities,
)
from hlm.mixture._subspace_em import Data, fit_reduced_rank

__all__ = ["ReducedRankMDA"]


class ReducedRankMDA(MixtureClassifierMixin, ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """MDA-RR: mixture discriminant analysis with the component means in a rank-``rank`` subspace (Qiao 2012,
    dissertation section 4.5.1 and App. B.4, after Hastie & Tibshirani 1996; docs/subspace-gmm-spec.md section 6.2).

    EM for class-conditional Gaussian mixtures with one covariance for all components, whose R = sum_k R_k means
    are confined to a rank-L subspace: the E-step is (4.5), pi is (4.7), and the M-step for the means and
    covariance is a weighted LDA with R "classes" followed by the rank reduction (B.10), (B.11). A rank
    >= min(p, R - 1) is the full MDA. Rule: argmax_k log a_k + log f_k(x), a_k = n_k / n.

    Parameters
    ----------
    n_components : int, default=3
        R_k, components per class (the same in every class).
    rank : int, default=2
        L, the discriminant dimension d of the chapter's tables (capped at p; >= R - 1 is the full MDA).
    covariance : {"full", "diag"}, default="full"
        Common full or diagonal covariance.
    standardize : bool, default=False
        z-score each feature on the fit set first, as ``SubspaceGMMClassifier``.
    reg_covar : float, default=1e-6
        Ridge lambda = reg_covar * tr(total covariance) / p; it enters W before the rank reduction (spec 6.2).
    max_iter : int, default=200
        EM stops after at most ``max_iter`` iterations (ConvergenceWarning).
    tol : float, default=1e-6
        EM stops when the penalised log-likelihood gains <= tol |loglik|.
    n_init : int, default=1
        Restarts, each from per-class k-means; the highest log-likelihood is kept.
    random_state : int, RandomState or None, default=None
        Seeds the k-means starts through ``derive_seed``.

    Attributes
    ----------
    classes_, class_prior_, n_features_in_, feature_mean_, feature_scale_, center_
        As in ``SubspaceGMMClassifier``.
    means_ : ndarray of shape (R, p)
        The component means in model space, classes in order.
    component_class_, weights_ : ndarray of shape (R,)
        Each component's class label and its weight within the class.
    covariance_ : ndarray of shape (p, p), or (p,) for "diag"
        The common covariance (B.11).
    n_components_effective_ : int
        Components with weight > 0.
    log_likelihood_ : float
        sum_i log a_{y_i} f_{y_i}(x_i).
    n_iter_, converged_, log_likelihood_path_ : int, bool, ndarray
        EM iterations, whether it met ``tol``, and the penalised objective path.
    rank_ : int
        The rank used, min(``rank``, p).
    discriminant_basis_ : ndarray of shape (p, rank_)
        orth(V), V = the L leading columns of W^{-1/2} V* of the last M-step; ``transform`` projects on it.

    See Also
    --------
    SubspaceGMMClassifier : Means constrained to a subspace found by modal PCA.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.mixture import ReducedRankMDA
    >>> rng = np.random.default_rng(0)
    >>> centres = np.zeros((3, 4))
    >>> centres[1, 0] = centres[2, 1] = 6.0
    >>> X = np.vstack([rng.normal(c, 1, (20, 4)) for c in centres])
    >>> y = np.repeat([0, 1, 2], 20)
    >>> clf = ReducedRankMDA(n_components=2, rank=2, random_state=0).fit(X, y)
    >>> print(clf.predict(centres), clf.means_.shape, clf.discriminant_basis_.shape)
    [0 1 2] (6, 4) (4, 2)
    >>> print(clf.transform(centres).shape, clf.predict_proba(centres).shape)
    (3, 2) (3, 3)
    """

    _parameter_constraints = {"rank": [Interval(Integral, 1, None, closed="left")], **MIXTURE_CONSTRAINTS}

    def __init__(self, n_components=3, rank=2, covariance="full", standardize=False, reg_covar=1e-6, max_iter=200,
                 tol=1e-6, n_init=1, random_state=None):
        self.n_components = n_components
        self.rank = rank
        self.covariance = covariance
        self.standardize = standardize
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the reduced-rank mixture by EM, the best of ``n_init`` k-means starts (App. B.4).

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
        Xc, y_idx, counts = _prepare(self, X, y)
        R = _check_components(counts, int(self.n_components), self.classes_)
        data = Data.of(Xc, y_idx, R)
        ridge = _ridge(Xc, float(self.reg_covar))
        base = _base_seed(self.random_state)
        rank = min(int(self.rank), Xc.shape[1])
        best = None
        for restart in range(int(self.n_init)):
            q = kmeans_responsibilities(data, R, self.classes_, base, restart)
            res = fit_reduced_rank(data, q, rank, ridge=ridge, diag=self.covariance == "diag",
                                   max_iter=int(self.max_iter), tol=float(self.tol))
            if best is None or res.loglik > best.loglik:
                best = res
        if not best.converged:
            warnings.warn(f"reduced-rank MDA: EM did not converge in {self.max_iter} iterations (tol={self.tol})",
                          ConvergenceWarning, stacklevel=2)
        mix = best.mixture
        self._mixture = mix
        self._component_index = data.comp_class
        self.component_class_ = self.classes_[data.comp_class]
        self.means_ = mix.means + self.center_
        self.weights_ = np.exp(mix.log_weights)
        self.covariance_ = mix.cov
        self.n_components_effective_ = int(np.isfinite(mix.log_weights).sum())
        self.log_likelihood_ = best.loglik + float(counts @ np.log(self.class_prior_))
        self.log_likelihood_path_ = best.path
        self.n_iter_, self.converged_ = best.n_iter, best.converged
        self.rank_ = rank
        self.discriminant_basis_ = orthonormal(best.extra)
        return self
