"""Local similarity discriminant analysis (local SDA, Cazzanti & Gupta 2007) — spec section 6.5.

Model [V: Sadowski §II]: for a test object x with neighbourhood N = N_k(x)
(spec §5), each class h present in N gets a local centroid mu_h (the
neighbour of class h with the largest summed similarity to its class-mates in
N). The statistics are T(x) = {psi(x, mu_h)}. Given class g, each
psi(x, mu_h) follows an exponential pmf gamma_gh exp(lambda_gh w) on a
finite support Omega, with lambda_gh fixed by the moment constraint
E[w] = c_gh = mean_{z in N_g} psi(z, mu_h). The decision maximises
log P(g) + sum_h (lambda_gh psi(x, mu_h) - log Z(lambda_gh)).

Details [P] (spec §6.5): lambda is the root of m(lambda) - c (m = tilted
mean, strictly increasing), bracketed by doubling from [-1, 1]/r and refined
with Brent; |lambda| <= 1e3/r. A constraint is degenerate if c lies within
1e-9 r of min/max Omega [V: Sadowski, the point-mass case] or the cap is hit
[P]; the row then falls back to the local nearest-centroid rule [V: Sadowski,
citing ICML'07], or per the ``degenerate`` option.

Choices the sources leave open [P]: the pmf formula gamma e^{lambda w} is
evaluated at psi(x, mu_h) even when that value is not a point of Omega (a new
test similarity) or lies outside [min Omega, max Omega]; with the ``exact``
option a matched point mass adds log 1 = 0, also for the continuous support
(a mass next to densities, a convention).

Implementation: ``LocalSDA.predict`` runs all rows in one compiled kernel (``_predict_rows``,
in ``_local_sda_kernels.local``). Its reference states the method row by row with numpy and scipy's
``brentq`` (``solve_lambda``, ``local_centroids``, ``fit_row``, ``log_scores`` in
tests/oracles/local_sda_reference.py); the kernel repeats the same floating-point operations in
the same order -- numpy's pairwise summation, the BLAS dot product, exp/log/expm1/pow and a port
of scipy's ``brentq.c``. numpy picks its exp/log kernels by CPU (AVX-512 has its own), so the two
agree to rounding, not always to the last bit. tests/test_local_sda.py checks that they take the
same decisions (centroids, statuses, predictions), that every lambda of both meets the moment
constraint to Brent's tolerance, and that the scores agree within the rounding of their terms.
``predict_grid`` shares the support and the neighbour ranking of a CV fold across the grid of k.
``predict_proba`` (``_log_posterior_rows``): the softmax of the same scores, decisions as ``predict``'s
(docs/beyond-the-paper-spec.md section 3).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._blocks import row_blocks
from hlm.base._classifiers import CompiledKernels, SimilarityClassifier
from hlm.local_sda._kernels.core import (  # noqa: F401 - the constants are part of this module's API
    _BRENT_MAXITER,
    _BRENT_RTOL,
    _DEGENERATE_CODE,
    _SERIES_T,
    BOUNDARY_RTOL,
    LAMBDA_CAP,
    XTOL,
    _raise_brent_error,
)
from hlm.local_sda._kernels.local import _log_posterior_rows, _predict_rows


# ----------------------------------------------------------------- supports
@dataclass(frozen=True)
class Support:
    """The support Omega of the similarity pmfs (spec §6.5 "Support Omega" [P]).

    ``omega`` holds the sorted points of a discrete support; it is None for the
    continuous truncated-exponential option on [lo, hi].
    """

    lo: float
    hi: float
    omega: np.ndarray | None = None


def make_support(S: np.ndarray, kind: str = "discrete", max_support: int = 1000) -> Support:
    """Omega from the fit-set similarities (all entries) [P: spec §6.5].

    Discrete: the sorted unique values of S, or ``max_support`` equally spaced
    points on [min S, max S] when there are more unique values than that.
    Continuous: the interval [min S, max S].
    """
    lo, hi = float(S.min()), float(S.max())
    if kind == "continuous":
        return Support(lo, hi)
    omega = _unique_at_most(S, max_support)
    return Support(lo, hi, np.linspace(lo, hi, max_support) if omega is None else omega)


def _unique_at_most(S: np.ndarray, limit: int) -> np.ndarray | None:
    """``np.unique(S)`` if it has at most ``limit`` values, else None; by row blocks, stopping as soon as
    there are more (no sorted copy of an N x N matrix: 1.7 GB for a fold of Letter)."""
    seen = np.empty(0)
    for rows in row_blocks(S.shape[0], S.shape[1]):
        seen = np.union1d(seen, S[rows])
        if seen.size > limit:
            return None
    return seen


def leave_one_out_order(S: np.ndarray) -> np.ndarray:
    """Per fit object i, the other fit objects ranked by (-S[i, j], j) (n x n-1, int64): the leave-one-out
    neighbourhoods of every k are its prefixes (regularized and Bayesian local SDA fit on them)."""
    order = np.argsort(-S, axis=1, kind="stable")
    n = S.shape[0]
    keep = order != np.arange(n)[:, None]
    return np.ascontiguousarray(order[keep].reshape(n, n - 1), dtype=np.int64)


# ----------------------------------------------------------------- estimator
class LocalSDA(CompiledKernels, SimilarityClassifier):
    """Local similarity discriminant analysis on precomputed similarities (compared-methods spec §6.5).

    Cazzanti & Gupta (ICML 2007), as reviewed in Sadowski, Cazzanti & Gupta, section II: the local SDA
    of the HLM paper's comparison (Qiao & Li, section 5.1, item 4; Tables 2-3). For a test object x with
    neighbourhood N = N_k(x) (spec §5), each class h present in N gets a local centroid mu_h (the
    neighbour of class h with the largest summed similarity to its class-mates in N). Given class g,
    each psi(x, mu_h) follows an exponential pmf gamma_gh exp(lambda_gh w) on a finite support Omega,
    with lambda_gh fixed by the moment constraint E[w] = c_gh = mean_{z in N_g} psi(z, mu_h)
    (Sadowski et al., eq. (2)). The decision is eq. (1) with 0-1 cost:
    argmax_g log P(g) + sum_h (lambda_gh psi(x, mu_h) - log Z(lambda_gh)).
    A constraint is degenerate if c_gh lies within 1e-9 r of min/max Omega (r = max Omega - min Omega)
    [V: Sadowski, the point-mass case] or lambda hits its cap |lambda| <= 1e3 / r [P]; the row then
    falls back to the rule of ``degenerate``. A neighbourhood of one class gives that class.

    Parameters
    ----------
    n_neighbors : int, default=8
        k; neighbours ranked by (-s_i, i), k capped at the fit-set size (spec §5).
    support : {"discrete", "continuous"}, default="discrete"
        Omega: unique fit-set similarities (or an equally spaced grid), or the
        continuous truncated exponential on [min S, max S] [P].
    max_support : int, default=1000
        Above this many unique values the discrete support becomes
        ``max_support`` equally spaced points [P].
    prior : {"local", "global"}, default="local"
        P(g) = k_g / k (default) or the fit-set prior pi_g [P].
    degenerate : {"centroid", "knn", "exact"}, default="centroid"
        Fallback when a constraint is degenerate: local nearest centroid
        [V: Sadowski], k-NN vote [P], or exact point masses with the centroid
        rule only if every class scores -inf [P].

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
        The fit-set prior pi_g = n_g / n: P(g) with ``prior="global"``; it breaks ties of the decision (spec §5).
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    PairwiseLocalSDA : The similarities to all neighbours as statistics (Sadowski et al., section IV).
    RegularizedLocalSDA : The local pmfs mixed with their fit-set average (Sadowski et al., section II).
    BayesianLocalSDA : Multinomial pmfs with a Dirichlet prior (Sadowski et al., section III).

    Examples
    --------
    Two well separated Gaussian blobs, similarities 1 - d / max d; with k = 8 every neighbourhood
    holds both classes:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_sda import LocalSDA
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> D, D_test = cdist(X, X), cdist(X_test, X)
    >>> S, S_test = 1 - D / D.max(), 1 - D_test / D.max()
    >>> model = LocalSDA(n_neighbors=8).fit(S, y)
    >>> print(model.predict(S_test), model.n_degenerate_)
    [0 1] 0
    >>> print(model.support_.lo, model.support_.hi)  # Omega spans [min S, max S]
    0.0 1.0
    >>> print(model.predict_proba(S_test).round(3))
    [[1. 0.]
     [0. 1.]]

    With exp(-d**2) the similarities across the blobs are within 1e-9 r of min Omega (r = 1 here): a
    degenerate constraint, so both rows fall back to the local nearest centroid:

    >>> E, E_test = np.exp(-D ** 2), np.exp(-D_test ** 2)
    >>> model = LocalSDA(n_neighbors=8).fit(E, y)
    >>> print(model.predict(E_test), model.n_degenerate_)
    [0 1] 2
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "support": [StrOptions({"discrete", "continuous"})],
        "max_support": [Interval(Integral, 2, None, closed="left")],
        "prior": [StrOptions({"local", "global"})],
        "degenerate": [StrOptions({"centroid", "knn", "exact"})],
    }

    _path_params = ("n_neighbors",)  # one fit (support) and one ranking serve every k (``predict_grid``)

    def __init__(
        self,
        n_neighbors: int = 8,
        support: str = "discrete",
        max_support: int = 1000,
        prior: str = "local",
        degenerate: str = "centroid",
    ):
        self.n_neighbors = n_neighbors
        self.support = support
        self.max_support = max_support
        self.prior = prior
        self.degenerate = degenerate

    def fit(self, S, y):
        """Store the fit set and build Omega from it (spec §1: estimated on the fit set only).

        Parameters
        ----------
        S : array-like of shape (n_samples, n_samples)
            ``S_train_train``: the similarities among the training objects (finite; may be negative).
        y : array-like of shape (n_samples,)
            The training labels, at least 2 classes.

        Returns
        -------
        self : object
            The fitted estimator (``support_`` set).
        """
        self._validate_params()
        S, self._y_idx = self._check_fit_input(S, y)
        self._S = S
        self.support_ = make_support(S, self.support, int(self.max_support))
        return self

    def _neighbours(self, S_te: np.ndarray) -> np.ndarray:
        """Indices of the k most similar fit objects per row, by (-s_i, i) (spec §5)."""
        k = min(int(self.n_neighbors), S_te.shape[1])
        return np.argsort(-S_te, axis=1, kind="stable")[:, :k]

    def predict(self, S_te):
        """The class of the largest score of the decision rule (Sadowski et al., eq. (1) with 0-1 cost) per
        row, or of the fallback rule where a constraint is degenerate; sets ``n_degenerate_``.

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
        out, fell_back = self._predict_idx(S_te, self._neighbours(S_te))
        self.n_degenerate_ = int(fell_back.sum())
        return self.classes_[out]

    def predict_log_proba(self, S_te):
        """log P(g | x) over ``classes_``: the log softmax of the class scores over the classes in N (-inf for
        the others); a row with one class in N or decided by the fallback rule: 0 for its class
        (docs/beyond-the-paper-spec.md section 3) [P]. Its argmax is ``predict``'s decision.

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
        _, fell_back, log_post, err, err_row, err_x = _log_posterior_rows(
            *self._kernel_args(S_te, self._neighbours(S_te)))
        _raise_brent_error(err, err_x, err_row)
        self.n_degenerate_ = int(fell_back.sum())
        return log_post

    def predict_proba(self, S_te):
        """P(g | x) over ``classes_`` (``predict_log_proba``); rows sum to 1.

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

    def _warm_up(self) -> None:
        """``CompiledKernels._warm_up``, and the kernel of ``predict_proba`` (the evaluation stores it)."""
        super()._warm_up()
        S = np.exp(-np.abs(np.subtract.outer(np.arange(6.0), np.arange(6.0))))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone(self).fit(S, np.repeat([0, 1], 3)).predict_proba(S)

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: one fit (support) and one neighbour ranking, the predictions of
        every k from its prefixes (equal to refitting per grid point, tested).

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
        model = clone(self).fit(S_fit, y)
        S = model._check_predict_input(S_val)
        order = np.argsort(-S, axis=1, kind="stable")
        out = []
        for p in grid:
            model.set_params(n_neighbors=p.get("n_neighbors", self.n_neighbors))._validate_params()
            k = min(int(model.n_neighbors), S.shape[1])
            idx, fell_back = model._predict_idx(S, order[:, :k])
            model.n_degenerate_ = int(fell_back.sum())
            out.append(model.classes_[idx])
        return out

    def _predict_idx(self, S_te: np.ndarray, nbs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class index per row and whether the row used the fallback rule (compiled ``_predict_rows``)."""
        out, fell_back, err, err_row, err_x = _predict_rows(*self._kernel_args(S_te, nbs))
        _raise_brent_error(err, err_x, err_row)
        return out.astype(np.intp), fell_back

    def _kernel_args(self, S_te: np.ndarray, nbs: np.ndarray) -> tuple:
        """The arguments of the row kernels (``_predict_rows``, pairwise's ``_pairwise_predict_rows``): the fit
        set, the rows and their neighbours, the support, the prior and the fallback rule."""
        sup = self.support_
        discrete = sup.omega is not None
        omega = np.ascontiguousarray(sup.omega if discrete else np.empty(0), dtype=np.float64)
        log_prior = np.log(self.class_prior_) if self.prior == "global" else np.empty(0)
        return (
            np.ascontiguousarray(self._S, dtype=np.float64),
            np.ascontiguousarray(S_te, dtype=np.float64),
            np.ascontiguousarray(nbs, dtype=np.int64),
            np.ascontiguousarray(self._y_idx, dtype=np.int64),
            len(self.classes_), float(sup.lo), float(sup.hi), omega, discrete,
            np.ascontiguousarray(log_prior, dtype=np.float64), self.prior == "global",
            _DEGENERATE_CODE[self.degenerate], np.ascontiguousarray(self.class_prior_, dtype=np.float64),
        )
