"""Reduced-rank mixture discriminant analysis by weighted rank reduction (MDA-RR; Qiao 2012, dissertation
section 4.5.1 and Appendix B.4, after Hastie & Tibshirani 1996; docs/subspace-gmm-spec.md section 6.2).

EM for class-conditional Gaussian mixtures with one covariance for all components, whose R = sum_k R_k means are
confined to a rank-L subspace: the E-step is (4.5), pi is (4.7), and the M-step for the means and covariance is a
weighted LDA with R "classes" followed by the rank reduction (B.10), (B.11)
(``hlm.models.subspace_gmm_em.reduced_rank_m_step``). A rank >= min(p, R - 1) is the full MDA.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from hlm.models._base import CachedParamNames, FastPathMixin
from hlm.models.mpca import orthonormal
from hlm.models.subspace_gmm import (
    MIXTURE_CONSTRAINTS,
    MixtureClassifierMixin,
    _base_seed,
    _check_components,
    _prepare,
    _ridge,
    kmeans_responsibilities,
)
from hlm.models.subspace_gmm_em import Data, fit_reduced_rank

__all__ = ["ReducedRankMDA"]


class ReducedRankMDA(MixtureClassifierMixin, ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """MDA-RR: mixture discriminant analysis with the component means in a rank-``rank`` subspace (App. B.4).

    Parameters
    ----------
    n_components : int
        R_k, components per class (the same in every class).
    rank : int
        L, the discriminant dimension d of the chapter's tables (capped at p; >= R - 1 is the full MDA).
    covariance : {"full", "diag"}
        Common full or diagonal covariance.
    standardize, reg_covar, max_iter, tol, n_init, random_state
        As ``SubspaceGMMClassifier`` (the ridge enters W before the rank reduction, spec 6.2); each of the
        ``n_init`` restarts starts from per-class k-means; the highest log-likelihood is kept.

    Attributes
    ----------
    means_ (R x p, model space), component_class_, weights_, covariance_, class_prior_, log_likelihood_,
    n_iter_, converged_, log_likelihood_path_ (penalised objective), discriminant_basis_ (p x L: orth(V),
    V = the L leading columns of W^{-1/2} V* of the last M-step), ``transform`` projects on it.
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
