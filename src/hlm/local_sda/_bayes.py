"""Bayesian and pairwise Bayesian local SDA (docs/local-sda-family-spec.md §2, §3, §3.1, §5).

From *Bayesian and Pairwise Local Similarity Discriminant Analysis* (Sadowski,
Cazzanti and Gupta; "the paper"). For a test object x with neighbourhood
N = N_k(x) (spec §5 of docs/compared-methods-spec.md: the k most similar fit
objects by (-s_i, i)), N_g its class-g members, k_g = |N_g| and G_x the classes
present:

- **Bayesian local SDA** (paper §III, spec §3) models the similarity of x to
  the local centroid mu_h of class h (local SDA's centroid, spec §6.5) given
  class g by a multinomial theta_gh over the r bins of Omega with a Dirichlet
  prior alpha_gh. Its data are the histogram m of
  {psi(z, mu_h) : z in N_g} (k_g counts; z = mu_g counts when h = g), and the
  estimate is the posterior mean, eq. (5):

      theta_gh = (alpha_gh + m) / sum_j (alpha_gh[j] + m[j]).

  Decision, eq. (6) with 0-1 cost: argmax over g in G_x of
  log P(g) + sum_{h in G_x} log theta_gh[j(psi(x, mu_h))], j(.) the bin.
- **Pairwise Bayesian local SDA** (end of paper §IV, spec §5): m counts all
  pairwise similarities psi(z_i, z_l), z_i in N_g, z_l in N_h (k_g k_h
  counts, z_i = z_l included when g = h), and the marginal of class h is
  eq. (7) with the posterior mean in place of the exponential pmf [P: spec §5]:
  P_h(T_h(x) | g) = (1/k_h) sum_{z in N_h} theta_gh[j(psi(x, z))]; decision by
  eq. (6) with these marginals.
- **alpha_gh** (paper §III.B, spec §3.1): maximum likelihood (hlm.local_sda._dirichlet,
  the Pólya likelihood) from the n histograms of the fit set's leave-one-out
  neighbourhoods: every fit object's k most similar *other* fit objects, its
  centroids and, for every ordered class pair (g, h) present, the histogram
  as above. A pair never present in any neighbourhood gets the pooled estimate
  of all pairs' histograms [P: spec §3.1]. This runs once per fit (per k).
- **Omega** (spec §2): the r bins of ``make_bins``, built from the fit set (within the CV:
  the fold's), through which every similarity is mapped to its bin j(psi).

Class posteriors are the softmax of the scores over G_x, exactly 0 for classes
absent from N [P: spec §3]; a neighbourhood of one class gives that class
posterior 1 [P]. Every theta_gh[j] > 0 because alpha_gh >= alpha_min > 0, so
no model degenerates (the paper's motivation, §VI).

Choices of this module the spec leaves open [P]:

- The bins (spec §2 fixes the rule, not these details): the distinct values
  are counted over all entries of the fit matrix, its diagonal included (the
  pairwise histograms count the self-similarities); the quantiles are those of
  numpy's "inverted_cdf" (data values, no interpolation) at the levels
  (j - 1/2) / n_bins, j = 1..n_bins, whose distinct values are the bin centres;
  a value on an edge (a midpoint) goes to the upper bin.
- alpha by hlm.local_sda._dirichlet's safeguarded Newton iteration (the spec names Minka's
  fixed point; both maximise the same likelihood, tests/test_dirichlet.py), from
  a method-of-moments start; when every histogram of a pair holds one count
  (k_g = 1 for all, e.g. k = 2 with two classes) alpha_0 is not identified and
  is set to r (the value the fixed point keeps from its flat start).
- The pooled estimate of a pair without histograms is the fit of all pairs'
  histograms together (each row once per pair it holds).
- Ties of the decision: local SDA's rule (spec §5): the largest score with
  ``isclose(rtol=1e-12)``, then the larger fit-set prior pi_g, then the class
  of the best-ranked neighbour (``hlm.neighbors._knn.break_vote_ties``).
- Local centroids as local SDA's (spec §6.5), ties included: the larger
  psi(x, v), then the lower index; for a leave-one-out neighbourhood x is the
  fit object whose neighbourhood it is.
- The leave-one-out neighbourhoods rank the other fit objects by
  (-psi(z_i, z), index), from row z_i of the fit matrix; k is capped at n - 1
  there (at n for test objects).
- The histograms m hold the self-similarity psi(mu_g, mu_g) (centroid, h = g)
  or psi(z, z) (pairwise, g = h), as the paper's formulas are written, though a
  test similarity psi(x, .) never is one.

Implementation: the neighbourhood histograms of all rows run in compiled
kernels (numba; ``_local_sda_kernels.bayes``, with local SDA's centroid rule),
which add the ranked neighbours one by one so that one pass serves every k (a
symmetric matrix counts each pair of neighbours once); the Dirichlet fits are
hlm.local_sda._dirichlet's compiled solver, called per class pair (a pair whose
histograms equal those of its transpose reuses its fit); the scores are numpy.
``predict_grid`` shares, across the grid of k, the bins, the binned matrices,
the leave-one-out ranking of the fit set (local SDA's ``leave_one_out_order``),
the ranking of the validation rows and the histograms of every k (tested equal
to refits, tests/test_grid_paths.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions

from hlm.base._classifiers import CompiledKernels, SimilarityClassifier
from hlm.local_sda._dirichlet import (
    ALPHA_MAX,
    ALPHA_MIN,
    MAX_ITER,
    STATUS,
    TOL,
    _polya_ml,
    sufficient_stats,
    warn_max_iter,
)
from hlm.local_sda._kernels.bayes import (
    _bin_index,
    _centroid_histograms,
    _pair_histograms,
    _pairwise_histograms,
)
from hlm.local_sda._local_sda import leave_one_out_order
from hlm.neighbors._knn import break_vote_ties

#: ``alpha_status_`` of a class pair with no histogram: the pooled estimate of all pairs (spec §3.1 [P])
POOLED = "pooled"
_STATUS = np.array([*STATUS, POOLED], dtype=object)
_POOLED = len(STATUS)


# ----------------------------------------------------------------- the bins of Omega (spec §2)
@dataclass(frozen=True)
class Bins:
    """The r bins of Omega: bin j holds the similarities between ``edges[j-1]`` and ``edges[j]``.

    ``centres`` are the bins' representative values (the distinct values or the
    quantiles), ``edges`` the midpoints between consecutive centres. A value equal
    to an edge goes to the upper bin; values beyond the end edges go to the end bins.
    """

    centres: np.ndarray
    edges: np.ndarray

    @property
    def r(self) -> int:
        return int(self.centres.size)

    def index(self, S: np.ndarray) -> np.ndarray:
        """The bin j(psi) of every similarity of the matrix ``S`` (int32; numpy's searchsorted, side "right")."""
        return _bin_index(np.ascontiguousarray(S, dtype=np.float64), self.edges)


def make_bins(S: np.ndarray, n_bins: int) -> Bins:
    """Omega of the multinomial models from the fit-set similarities ``S`` (spec §2) [P].

    At most ``n_bins`` distinct values among all entries of S (Aural Sonar: 10):
    each value is a bin. Otherwise the centres are the distinct quantiles of the
    off-diagonal entries at levels (j - 1/2) / n_bins, j = 1..n_bins, each the
    smallest value whose empirical cdf reaches its level (numpy's "inverted_cdf";
    a data value, no interpolation): bins of about equal frequency. Tied quantiles
    merge, so there may be fewer than ``n_bins`` bins.
    """
    S = np.asarray(S, dtype=np.float64)
    if np.unique(S[0]).size <= n_bins and (values := np.unique(S)).size <= n_bins:
        centres = values
    else:
        n = S.shape[0]
        off = np.sort(S[~np.eye(n, dtype=bool)] if n > 1 else S.ravel())
        # index ceil(level * N) - 1 of the sorted values, level = (2j - 1) / (2 n_bins), in integers
        idx = ((2 * np.arange(n_bins) + 1) * off.size + 2 * n_bins - 1) // (2 * n_bins) - 1
        centres = np.unique(off[idx])
    return Bins(centres, (centres[:-1] + centres[1:]) / 2.0)


def posterior_mean(alpha: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Eq. (5): the posterior mean (alpha + m) / sum_j (alpha[j] + m[j]) of a multinomial with a Dirichlet(alpha)
    prior after the histogram m (last axis: the bins; the leading axes broadcast)."""
    return (alpha + m) / (alpha.sum(axis=-1, keepdims=True) + m.sum(axis=-1, keepdims=True))


# ----------------------------------------------------------------- estimators
class _BayesianLocalSDABase(CompiledKernels, SimilarityClassifier):
    """Bayesian local SDA with the statistic ``_statistic``: "centroid" (paper §III) or "pairwise" (end of §IV)."""

    _statistic = "centroid"

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_bins": [Interval(Integral, 2, None, closed="left")],
        "prior": [StrOptions({"local", "global"})],
        "alpha_min": [Interval(Real, 0, None, closed="neither")],
        "alpha_max": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    _path_params = ("n_neighbors",)  # one set of bins and one ranking serve every k (``predict_grid``)

    def __init__(
        self,
        n_neighbors: int = 8,
        n_bins: int = 20,
        prior: str = "local",
        alpha_min: float = ALPHA_MIN,
        alpha_max: float = ALPHA_MAX,
        max_iter: int = MAX_ITER,
        tol: float = TOL,
    ):
        self.n_neighbors = n_neighbors
        self.n_bins = n_bins
        self.prior = prior
        self.alpha_min = alpha_min
        self.alpha_max = alpha_max
        self.max_iter = max_iter
        self.tol = tol

    # -- fit ------------------------------------------------------------------
    def fit(self, S, y):
        """Bins of the fit set, the leave-one-out histograms and alpha_gh by maximum likelihood (spec §3.1).

        Parameters
        ----------
        S : array-like of shape (n_samples, n_samples)
            ``S_train_train``: the similarities among the training objects (finite; may be negative).
        y : array-like of shape (n_samples,)
            The training labels, at least 2 classes.

        Returns
        -------
        self : object
            The fitted estimator (``bins_``, ``alpha_``, ``alpha_status_``, ``n_iter_`` set).
        """
        self._validate_params()
        S, y_idx = self._check_fit_input(S, y)
        loo_order = self._prepare(S, y_idx)
        k = min(int(self.n_neighbors), loo_order.shape[1])
        counts, hist, _ = self._histograms(self._S, self._B, loo_order[:, :k], [k], with_stat=False)[k]
        self._fit_alpha(counts, hist)
        return self

    def _validate_params(self) -> None:
        """scikit-learn's checks of each parameter, and alpha_min < alpha_max (also for the config checks)."""
        super()._validate_params()
        if not self.alpha_min < self.alpha_max:
            raise InvalidParameterError(f"{type(self).__name__}: alpha_min ({self.alpha_min}) must be below "
                                        f"alpha_max ({self.alpha_max})")

    def _prepare(self, S: np.ndarray, y_idx: np.ndarray) -> np.ndarray:
        """What every k shares: the fit set, its bins and binned matrix; returns the leave-one-out ranking."""
        self._S = np.ascontiguousarray(S)
        self._y_idx = np.ascontiguousarray(y_idx, dtype=np.int64)
        self.bins_ = make_bins(S, int(self.n_bins))
        self._B = self.bins_.index(S)
        self._symmetric = bool(np.array_equal(self._B, self._B.T))  # halves the pairwise counting
        return leave_one_out_order(S)

    def _histograms(self, S_rows, B_rows, nbs, ks, with_stat: bool) -> dict:
        """{k: (counts, hist, stat)} of the rows' neighbourhoods ``nbs[:, :k]`` for every k in ``ks``
        (the compiled kernels; one pass over the ranked neighbours serves every k)."""
        ks = np.array(sorted(set(ks)), dtype=np.int64)
        nbs = np.ascontiguousarray(nbs[:, : ks[-1]], dtype=np.int64)
        args = (np.ascontiguousarray(B_rows), self._B, nbs, self._y_idx, len(self.classes_), self.bins_.r, ks)
        if self._statistic == "pairwise":
            counts, hist, stat = _pairwise_histograms(*args, self._symmetric, with_stat)
        else:
            counts, hist, stat = _centroid_histograms(np.ascontiguousarray(S_rows), self._S, *args, with_stat)
        return {int(k): (counts[q], hist[q], stat[q]) for q, k in enumerate(ks)}

    def _fit_alpha(self, counts: np.ndarray, hist: np.ndarray) -> None:
        """alpha_gh by Pólya maximum likelihood of the leave-one-out histograms (spec §3.1)."""
        alpha, n_iter, status, pooled_status = _fit_alphas(hist, counts, float(self.alpha_min),
                                                           float(self.alpha_max), int(self.max_iter), float(self.tol))
        self.alpha_ = alpha
        self.n_iter_ = n_iter
        self.alpha_status_ = _STATUS[status]
        n_max = int(np.sum(status == STATUS.index("max_iter"))) + int(pooled_status == STATUS.index("max_iter"))
        if n_max:
            warn_max_iter(n_max, int(self.max_iter), f" ({type(self).__name__}, k={self.n_neighbors})")

    # -- predict --------------------------------------------------------------
    def _neighbours(self, S_te: np.ndarray) -> np.ndarray:
        """The k most similar fit objects per row, by (-s_i, i) (spec §5), k capped at the fit-set size."""
        k = min(int(self.n_neighbors), S_te.shape[1])
        return np.argsort(-S_te, axis=1, kind="stable")[:, :k]

    def predict_log_scores(self, S_te) -> np.ndarray:
        """log P(g) + sum_h log P_h(x | g) per row and class (eq. (6)); -inf for classes absent from N.

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        scores : ndarray of shape (n_queries, n_classes)
            Columns in the order of ``classes_``.
        """
        S_te = self._check_predict_input(S_te)
        nbs = self._neighbours(S_te)
        k = nbs.shape[1]
        return self._log_scores(*self._histograms(S_te, self.bins_.index(S_te), nbs, [k], with_stat=True)[k])

    def predict_log_proba(self, S_te) -> np.ndarray:
        """Log class posteriors: the softmax of the scores over the classes present (-inf for the others).

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        log_proba : ndarray of shape (n_queries, n_classes)
            Columns in the order of ``classes_``.
        """
        scores = self.predict_log_scores(S_te)
        return scores - logsumexp(scores, axis=1, keepdims=True)

    def predict_proba(self, S_te) -> np.ndarray:
        """Class posteriors over ``classes_``: 0 for the classes absent from the neighbourhood; rows sum to 1.

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            Columns in the order of ``classes_``.
        """
        return np.exp(self.predict_log_proba(S_te))

    def predict(self, S_te):
        """The class of the largest score of eq. (6) per row, ties by local SDA's rule (spec §5).

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            The predicted labels, of ``classes_``; classes absent from a row's neighbourhood never win.
        """
        S_te = self._check_predict_input(S_te)
        nbs = self._neighbours(S_te)
        k = nbs.shape[1]
        scores = self._log_scores(*self._histograms(S_te, self.bins_.index(S_te), nbs, [k], with_stat=True)[k])
        return self._decide(scores, nbs)

    def _decide(self, scores: np.ndarray, nbs: np.ndarray) -> np.ndarray:
        """The class of the largest score, ties by local SDA's rule (spec §5)."""
        return self.classes_[break_vote_ties(scores, self.class_prior_, self._y_idx[nbs])]

    def _log_scores(self, counts: np.ndarray, hist: np.ndarray, stat: np.ndarray) -> np.ndarray:
        """Eq. (6) from the rows' neighbourhood histograms (``_histograms``); -inf for absent classes."""
        present = counts > 0
        kg = counts.astype(np.float64)
        theta = posterior_mean(self.alpha_[None], hist)  # eq. (5): rows x g x h x bins
        with np.errstate(divide="ignore", invalid="ignore"):
            if self._statistic == "pairwise":  # eq. (7): the mean of theta_gh over the similarities to N_h
                marginal = np.einsum("ighj,ihj->igh", theta, stat) / kg[:, None, :]
            else:  # theta_gh at the bin of psi(x, mu_h)
                marginal = np.take_along_axis(theta, np.maximum(stat, 0)[:, None, :, None], axis=3)[..., 0]
            log_marginal = np.where(present[:, None, :], np.log(marginal), 0.0)
            log_prior = (np.log(kg / kg.sum(axis=1, keepdims=True)) if self.prior == "local"
                         else np.broadcast_to(np.log(self.class_prior_), kg.shape))
        scores = log_prior + log_marginal.sum(axis=2)
        return np.where(present, scores, -np.inf)

    # -- the CV grid path -------------------------------------------------------
    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """One CV fold at every k: the bins, the binned matrices, both rankings and the neighbourhood
        histograms of every k in one pass; per k, alpha and the predictions (equal to refits, tested).

        Parameters
        ----------
        S_fit : array-like of shape (n_fit, n_fit)
            The fold's fit similarities.
        y : array-like of shape (n_fit,)
            The fold's fit labels.
        S_val : array-like of shape (n_val, n_fit)
            Similarities of the validation objects to the fit objects.
        grid : list of dict
            ``set_params`` dicts; a point may leave out a parameter (the estimator's own value holds).

        Returns
        -------
        predictions : list of ndarray of shape (n_val,)
            The labels ``clone(self).set_params(**point).fit(S_fit, y).predict(S_val)`` of every grid point.
        """
        if any(set(p) - {"n_neighbors"} for p in grid):
            return super().predict_grid(S_fit, y, S_val, grid)
        for p in grid:  # invalid points raise as a refit would
            clone(self).set_params(**p)._validate_params()
        model = clone(self)
        model._validate_params()
        S, y_idx = model._check_fit_input(S_fit, y)
        loo_order = model._prepare(S, y_idx)
        S_val = model._check_predict_input(S_val)
        order = np.argsort(-S_val, axis=1, kind="stable")
        ks = [int(p.get("n_neighbors", self.n_neighbors)) for p in grid]
        k_loo = [min(k, loo_order.shape[1]) for k in ks]
        k_val = [min(k, S_val.shape[1]) for k in ks]
        loo = model._histograms(S, model._B, loo_order, k_loo, with_stat=False)
        val = model._histograms(S_val, model.bins_.index(S_val), order, k_val, with_stat=True)
        out = []
        for k, kl, kv in zip(ks, k_loo, k_val):
            model.set_params(n_neighbors=k)
            model._fit_alpha(*loo[kl][:2])
            out.append(model._decide(model._log_scores(*val[kv]), order[:, :kv]))
        return out


class BayesianLocalSDA(_BayesianLocalSDABase):
    """Bayesian local SDA (paper §III, spec §3): multinomial pmfs of the similarities to the local centroids
    with Dirichlet priors, estimated by the posterior mean, eq. (5), and classified by eq. (6).

    Sadowski, Cazzanti & Gupta, section III (docs/local-sda-family-spec.md §2, §3, §3.1). For a test
    object x with neighbourhood N = N_k(x), the similarity of x to the local centroid mu_h (local SDA's)
    given class g has a multinomial pmf theta_gh over the r bins of Omega with a Dirichlet prior
    alpha_gh. Its data are the histogram m of {psi(z, mu_h) : z in N_g}, and the estimate is the
    posterior mean, eq. (5): theta_gh = (alpha_gh + m) / sum_j (alpha_gh[j] + m[j]). The decision is
    eq. (6) with 0-1 cost: argmax over g in G_x of log P(g) + sum_{h in G_x} log theta_gh[j(psi(x, mu_h))],
    j(.) the bin. alpha_gh maximises the Pólya likelihood (``fit_polya``) of the n histograms of the fit
    set's leave-one-out neighbourhoods (section III.B, spec §3.1). Every theta_gh[j] > 0, so no model
    degenerates (the paper's motivation, section VI).

    Parameters
    ----------
    n_neighbors : int, default=8
        k; capped at the fit-set size (n - 1 for the leave-one-out neighbourhoods).
    n_bins : int, default=20
        r, the bins of Omega (spec §2, ``make_bins``) [P].
    prior : {"local", "global"}, default="local"
        P(g) = k_g / k (default) or the fit-set prior pi_g [P: as local SDA].
    alpha_min : float, default=1e-6
        Floor of every alpha_j in the maximum-likelihood fit (spec §3.1) [P]; must be below ``alpha_max``.
    alpha_max : float, default=1e6
        Cap of alpha_0 = sum_j alpha_j in the maximum-likelihood fit (spec §3.1) [P].
    max_iter : int, default=10000
        The fit stops after ``max_iter`` iterations with a ConvergenceWarning (spec §3.1) [P].
    tol : float, default=1e-8
        The fit stops when the largest relative change of alpha is at most ``tol`` (spec §3.1) [P].

    Attributes
    ----------
    bins_ : Bins
        Omega of the fit set: the bin ``centres`` (r = ``bins_.r`` of them) and the ``edges`` between them.
    alpha_ : ndarray of shape (n_classes, n_classes, r)
        alpha_gh, the Dirichlet prior of the similarities to class h's centroid given class g.
    alpha_status_ : ndarray of shape (n_classes, n_classes), dtype object
        Each pair's fit status: a ``PolyaFit`` status ("converged", "max_iter", "unidentified",
        "single_bin"), or "pooled" for a pair without histograms (the fit of all pairs' histograms).
    n_iter_ : ndarray of shape (n_classes, n_classes)
        The iterations of each pair's fit.
    classes_ : ndarray of shape (n_classes,)
        The class labels of the fit set, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The fit-set prior pi_g = n_g / n: P(g) with ``prior="global"``; it breaks ties of the decision.
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    PairwiseBayesianLocalSDA : The histograms of all pairwise similarities (end of paper §IV).
    LocalSDA : The exponential pmfs of local SDA.
    fit_polya : The maximum-likelihood fit of one alpha_gh.

    Examples
    --------
    Two well separated Gaussian blobs, similarities 1 - d / max d:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> D, D_test = cdist(X, X), cdist(X_test, X)
    >>> S, S_test = 1 - D / D.max(), 1 - D_test / D.max()
    >>> from hlm.local_sda import BayesianLocalSDA
    >>> model = BayesianLocalSDA(n_neighbors=8).fit(S, y)
    >>> print(model.predict(S_test))
    [0 1]
    >>> print(model.bins_.r, model.alpha_.shape, set(model.alpha_status_.ravel()))
    20 (2, 2, 20) {'converged'}
    >>> print(model.predict_proba(S_test).round(3))
    [[1. 0.]
     [0. 1.]]
    """

    _statistic = "centroid"


class PairwiseBayesianLocalSDA(_BayesianLocalSDABase):
    """Pairwise Bayesian local SDA (end of paper §IV, spec §5): the Dirichlet-multinomial model of all
    pairwise similarities among the neighbours of classes g and h, the posterior mean eq. (5), the
    marginal eq. (7) over the similarities of x to N_h, and decision eq. (6).

    Sadowski, Cazzanti & Gupta, end of section IV (docs/local-sda-family-spec.md §5): as
    ``BayesianLocalSDA``, but the histogram m counts all pairwise similarities psi(z_i, z_l),
    z_i in N_g, z_l in N_h (k_g k_h counts), and the marginal of class h is eq. (7) with the posterior
    mean in place of the exponential pmf [P: spec §5]:
    P_h(T_h(x) | g) = (1/k_h) sum_{z in N_h} theta_gh[j(psi(x, z))]. alpha_gh by spec §3.1, from the n
    leave-one-out pairwise histograms.

    Parameters
    ----------
    n_neighbors : int, default=8
        k; capped at the fit-set size (n - 1 for the leave-one-out neighbourhoods).
    n_bins : int, default=20
        r, the bins of Omega (spec §2, ``make_bins``) [P].
    prior : {"local", "global"}, default="local"
        P(g) = k_g / k (default) or the fit-set prior pi_g [P: as local SDA].
    alpha_min : float, default=1e-6
        Floor of every alpha_j in the maximum-likelihood fit (spec §3.1) [P]; must be below ``alpha_max``.
    alpha_max : float, default=1e6
        Cap of alpha_0 = sum_j alpha_j in the maximum-likelihood fit (spec §3.1) [P].
    max_iter : int, default=10000
        The fit stops after ``max_iter`` iterations with a ConvergenceWarning (spec §3.1) [P].
    tol : float, default=1e-8
        The fit stops when the largest relative change of alpha is at most ``tol`` (spec §3.1) [P].

    Attributes
    ----------
    bins_ : Bins
        Omega of the fit set: the bin ``centres`` (r = ``bins_.r`` of them) and the ``edges`` between them.
    alpha_ : ndarray of shape (n_classes, n_classes, r)
        alpha_gh, the Dirichlet prior of the similarities between class-g and class-h neighbours.
    alpha_status_ : ndarray of shape (n_classes, n_classes), dtype object
        Each pair's fit status: a ``PolyaFit`` status ("converged", "max_iter", "unidentified",
        "single_bin"), or "pooled" for a pair without histograms (the fit of all pairs' histograms).
    n_iter_ : ndarray of shape (n_classes, n_classes)
        The iterations of each pair's fit.
    classes_ : ndarray of shape (n_classes,)
        The class labels of the fit set, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The fit-set prior pi_g = n_g / n: P(g) with ``prior="global"``; it breaks ties of the decision.
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    BayesianLocalSDA : The similarities to the local centroids instead.
    PairwiseLocalSDA : The pairwise statistics with local SDA's exponential pmfs.

    Examples
    --------
    Two well separated Gaussian blobs, similarities 1 - d / max d:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> D, D_test = cdist(X, X), cdist(X_test, X)
    >>> S, S_test = 1 - D / D.max(), 1 - D_test / D.max()
    >>> from hlm.local_sda import PairwiseBayesianLocalSDA
    >>> model = PairwiseBayesianLocalSDA(n_neighbors=8).fit(S, y)
    >>> print(model.predict(S_test))
    [0 1]
    >>> print(model.alpha_.shape, set(model.alpha_status_.ravel()))
    (2, 2, 20) {'converged'}
    >>> print(model.predict_proba(S_test).round(3))
    [[1. 0.]
     [0. 1.]]
    """

    _statistic = "pairwise"


# ----------------------------------------------------------------- the Dirichlet fits (spec §3.1)
def _fit_alphas(hist, counts, alpha_min, alpha_max, max_iter, tol):
    """alpha_gh of every ordered class pair by Pólya maximum likelihood of its histograms (hlm.local_sda._dirichlet);
    pairs without any histogram get the pooled estimate of all pairs' histograms. Returns (alpha, iterations,
    status codes: hlm.local_sda._dirichlet's, or ``_POOLED``, and the pooled fit's status code, -1 if none).

    A Python loop over the pairs, around hlm.local_sda._dirichlet's compiled fit of one pair.
    """
    m, C, _, r = hist.shape
    alpha = np.empty((C, C, r))
    n_iter = np.zeros((C, C), dtype=np.int64)
    status = np.full((C, C), _POOLED, dtype=np.int64)
    rows = np.empty(m, dtype=np.int64)
    found = {}
    for g in range(C):
        for h in range(C):
            data = _pair_histograms(hist, counts, g, h, rows)
            if data.shape[0] == 0:
                continue
            found[g, h] = data
            # the same data as (h, g) (a symmetric S): the same fit
            if h < g and (h, g) in found and np.array_equal(found[h, g], data):
                alpha[g, h], n_iter[g, h], status[g, h] = alpha[h, g], n_iter[h, g], status[h, g]
                continue
            alpha[g, h], n_iter[g, h], status[g, h] = _polya_ml(*sufficient_stats(data), r, alpha_min, alpha_max,
                                                                max_iter, tol)
    pooled_status = -1
    if len(found) < C * C:
        a, it, pooled_status = _polya_ml(*sufficient_stats(np.concatenate(list(found.values()))), r, alpha_min,
                                         alpha_max, max_iter, tol)
        alpha[status == _POOLED] = a
        n_iter[status == _POOLED] = it
    return alpha, n_iter, status, pooled_status
