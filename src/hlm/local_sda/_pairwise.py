"""Pairwise local SDA (Sadowski, Cazzanti & Gupta, "Bayesian and Pairwise Local Similarity Discriminant
Analysis", section IV) -- docs/local-sda-family-spec.md section 4.

Model [V: section IV]: for a test object x with neighbourhood N = N_k(x) (local SDA's, spec §6.5 of
docs/compared-methods-spec.md), the statistics are all its similarities to its neighbours,
T_h(x) = {psi(x, z): z in N_h}. Given class g, each psi(x, z), z in N_h, follows the exponential pmf
gamma_gh exp(lambda_gh w) on local SDA's support Omega, and the marginal of T_h is their average,
eq. (7):

    P_h(T_h(x) | g) = (1 / k_h) sum_{z in N_h} gamma_gh exp(lambda_gh psi(x, z)),

in logs logsumexp_{z in N_h}(lambda_gh psi(x, z)) - log k_h - log Z(lambda_gh). lambda_gh meets the
moment constraint of eq. (8), E[w] = c_gh, the mean of psi(z_i, z_j) over all k_g k_h pairs
z_i in N_g, z_j in N_h (self-pairs included when g = h, as the formula is written). The joint is the
product over h, eq. (9), and the decision is eq. (1) with 0-1 cost:
argmax_g [log P(g) + sum_h log P_h(T_h(x) | g)].

As local SDA [P: spec §4]: the support Omega (``make_support``), the lambda solver (its compiled
``_solve_lambda_nb``: bracket doubling, Brent, |lambda| <= 1e3 / r), the boundary test (c within
1e-9 r of min/max Omega) and the cap count as degenerate, and a degenerate constraint sends the row to
the fallback of the ``degenerate`` option (local nearest centroid by default, with local SDA's
centroids; ``knn``; ``exact``). With g = h and k_g = 1, c_gg = psi(z, z), usually max Omega: a point mass.

Choices of ours [P]:
- ``exact``: a boundary constraint is the point mass at c_gh, so the marginal of eq. (7) is the
  fraction of neighbours z in N_h with psi(x, z) within 1e-9 r of c_gh (log 0 = -inf if none); the
  fallback is used only if every class scores -inf (as local SDA's ``exact``).
- ``predict_proba``: the class posteriors P(g | x) proportional to P(g) P(T(x) | g) over the classes
  present in N (the softmax of the scores of eq. (1)); 0 for the classes absent from N. A row whose
  neighbours are all one class, or that falls back, gets the posterior of the rule that decided it:
  1 for that class.
- The exponential is evaluated at psi(x, z) even off Omega (a new test similarity), as local SDA does.

Implementation: every row in one compiled kernel (``_pairwise_predict_rows`` in
``_local_sda_kernels.pairwise``); its row-by-row reference is tests/oracles/local_sda_pairwise_reference.py
(numpy and scipy's ``brentq``), which the kernel repeats operation for operation (c_gh as numpy's
``S[np.ix_(N_g, N_h)].mean()``, the logsumexp as max-shifted exp, pairwise summation, log). The class
is local SDA's with another row model: the same hyper-parameters, ``fit`` (the support) and CV path
(``predict_grid``: one fit and one neighbour ranking per fold serve every k).
"""

from __future__ import annotations

import numpy as np

from hlm.local_sda._kernels.core import _raise_brent_error
from hlm.local_sda._kernels.pairwise import _pairwise_predict_rows
from hlm.local_sda._local_sda import LocalSDA


class PairwiseLocalSDA(LocalSDA):
    """Pairwise local similarity discriminant analysis on precomputed similarities (local-sda-family spec §4).

    Sadowski, Cazzanti & Gupta, section IV, eqs. (7)-(9). For a test object x with neighbourhood
    N = N_k(x), the statistics are all its similarities to its neighbours, T_h(x) = {psi(x, z): z in N_h}.
    Given class g, each psi(x, z), z in N_h, follows local SDA's exponential pmf gamma_gh exp(lambda_gh w)
    on Omega, and the marginal of T_h is their average, eq. (7):
    P_h(T_h(x) | g) = (1 / k_h) sum_{z in N_h} gamma_gh exp(lambda_gh psi(x, z)). lambda_gh meets the
    moment constraint of eq. (8), E[w] = c_gh, the mean of psi(z_i, z_j) over all pairs z_i in N_g,
    z_j in N_h; the joint is the product over h, eq. (9), and the decision is eq. (1) with 0-1 cost:
    argmax_g [log P(g) + sum_h log P_h(T_h(x) | g)]. Omega, the lambda solver, the degeneracy tests and
    the fallback are local SDA's (``LocalSDA``, compared-methods spec §6.5).

    Parameters
    ----------
    n_neighbors : int, default=8
        k; neighbours ranked by (-s_i, i), k capped at the fit-set size (spec §5 of
        docs/compared-methods-spec.md).
    support : {"discrete", "continuous"}, default="discrete"
        Omega: local SDA's (the unique fit-set similarities or ``max_support`` equally spaced points,
        or the continuous truncated exponential on [min S, max S]) [P].
    max_support : int, default=1000
        Above this many unique values the discrete support becomes ``max_support`` equally spaced
        points [P].
    prior : {"local", "global"}, default="local"
        P(g) = k_g / k (default) or the fit-set prior pi_g [P].
    degenerate : {"centroid", "knn", "exact"}, default="centroid"
        Fallback when a constraint is degenerate: local nearest centroid [V: the paper, section II],
        k-NN vote [P], or exact point masses with the centroid rule only if every class scores -inf [P].

    Attributes
    ----------
    support_ : Support
        Omega, from the fit set: ``lo`` and ``hi`` (min S and max S) and ``omega``, the sorted points of
        the discrete support (None for the continuous one).
    n_degenerate_ : int
        Rows of the last ``predict`` (or ``predict_proba``) call that used the fallback rule.
    classes_ : ndarray of shape (n_classes,)
        The class labels of the fit set, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The fit-set prior pi_g = n_g / n: P(g) with ``prior="global"``; it breaks ties of the decision.
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    LocalSDA : The similarities to the local centroids as statistics.
    PairwiseBayesianLocalSDA : The pairwise statistics with Dirichlet-multinomial pmfs.

    Examples
    --------
    Two well separated Gaussian blobs, similarities 1 - d / max d:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_sda import PairwiseLocalSDA
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> D, D_test = cdist(X, X), cdist(X_test, X)
    >>> S, S_test = 1 - D / D.max(), 1 - D_test / D.max()
    >>> model = PairwiseLocalSDA(n_neighbors=8).fit(S, y)
    >>> print(model.predict(S_test), model.n_degenerate_)
    [0 1] 0
    >>> print(model.predict_proba(S_test).round(3))
    [[1. 0.]
     [0. 1.]]
    """

    def predict_log_proba(self, S_te):
        """log P(g | x) over ``classes_`` (-inf for the classes absent from N; a row that falls back
        or has one class in N: 0 for the class its rule chose) [P].

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        log_proba : ndarray of shape (n_queries, n_classes)
            Columns in the order of ``classes_``.
        """
        S_te = self._check_predict_input(S_te)
        _, fell_back, log_post = self._predict_all(S_te, self._neighbours(S_te))
        self.n_degenerate_ = int(fell_back.sum())
        return log_post

    def predict_proba(self, S_te):
        """Class posteriors P(g | x) of eqs. (1), (7)-(9) over ``classes_``; rows sum to 1.

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            Columns in the order of ``classes_``; 0 for the classes absent from a row's neighbourhood.
        """
        return np.exp(self.predict_log_proba(S_te))

    def _predict_idx(self, S_te: np.ndarray, nbs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class index per row and whether the row used the fallback rule (compiled kernel)."""
        out, fell_back, _ = self._predict_all(S_te, nbs)
        return out, fell_back

    def _predict_all(self, S_te: np.ndarray, nbs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class index per row, fallback used per row, log posteriors) from ``_pairwise_predict_rows``."""
        out, fell_back, log_post, err, err_row, err_x = _pairwise_predict_rows(*self._kernel_args(S_te, nbs))
        _raise_brent_error(err, err_x, err_row)
        return out.astype(np.intp), fell_back, log_post
