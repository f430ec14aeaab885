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

Implementation: the functions below (``solve_lambda`` with scipy's ``brentq``,
``local_centroids``, ``fit_row``, ``log_scores``) state the method row by row
and are the reference. ``LocalSDA.predict`` runs all rows in one compiled
kernel (``_predict_rows``, in ``_local_sda_kernels``) that repeats the same floating-point operations in
the same order -- numpy's pairwise summation, the BLAS dot product, exp/log/expm1/pow and a port
of scipy's ``brentq.c``. numpy picks its exp/log kernels by CPU (AVX-512 has its own), so the two
agree to rounding, not always to the last bit. tests/test_local_sda.py checks that they take the
same decisions (centroids, statuses, predictions), that every lambda of both meets the moment
constraint to Brent's tolerance, and that the scores agree within the rounding of their terms.
``predict_grid`` shares the support and the neighbour ranking of a CV fold across the grid of k.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from scipy.optimize import brentq
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.models._base import CompiledKernels, SimilarityClassifier
from hlm.models.knn import break_vote_ties
from hlm.models._local_sda_kernels import (  # noqa: F401 - the constants are part of this module's API
    BOUNDARY_RTOL, LAMBDA_CAP, XTOL, _BRENT_MAXITER, _BRENT_RTOL, _DEGENERATE_CODE, _SERIES_T,
    _predict_rows, _raise_brent_error,
)


# ----------------------------------------------------------------- supports
def discrete_mean(lam: float, omega: np.ndarray) -> float:
    """m(lambda) = E_lambda[w] over a sorted finite support, shifted by max(lambda w) (spec §6.5, §8.6)."""
    top = omega[-1] if lam >= 0 else omega[0]
    w = np.exp(lam * (omega - top))
    return float(w @ omega / w.sum())


def discrete_log_z(lam: float, omega: np.ndarray) -> float:
    """log Z(lambda) = logsumexp(lambda w) over a sorted finite support (spec §6.5)."""
    top = omega[-1] if lam >= 0 else omega[0]
    return float(lam * top + np.log(np.exp(lam * (omega - top)).sum()))


def continuous_mean(lam: float, lo: float, hi: float) -> float:
    """Mean of the truncated exponential density on [lo, hi] (spec §6.5, option ``continuous``) [P].

    m = lo + r g(lambda r) with g(t) = 1/(1 - e^-t) - 1/t, which equals the spec's
    (hi e^{lambda hi} - lo e^{lambda lo}) / (e^{lambda hi} - e^{lambda lo}) - 1/lambda.
    As lambda -> 0, g -> 1/2 (the uniform mean); for |t| < 1e-2 the series
    1/2 + t/12 - t^3/720 + t^5/30240 (error < 1e-20) avoids the cancellation.
    """
    r = hi - lo
    t = lam * r
    if abs(t) < _SERIES_T:
        g = 0.5 + t / 12.0 - t**3 / 720.0 + t**5 / 30240.0
    else:
        with np.errstate(over="ignore"):
            g = -1.0 / np.expm1(-t) - 1.0 / t
    return float(lo + r * g)


def continuous_log_z(lam: float, lo: float, hi: float) -> float:
    """log of Z = int_lo^hi e^{lambda w} dw = (e^{lambda hi} - e^{lambda lo}) / lambda, stably; log r at lambda = 0."""
    r = hi - lo
    t = lam * r
    if t == 0.0:
        return float(np.log(r))
    top = hi if t > 0 else lo
    return float(lam * top + np.log(r) + np.log(-np.expm1(-abs(t))) - np.log(abs(t)))


@dataclass(frozen=True)
class Support:
    """The support Omega of the similarity pmfs (spec §6.5 "Support Omega" [P]).

    ``omega`` holds the sorted points of a discrete support; it is None for the
    continuous truncated-exponential option on [lo, hi].
    """

    lo: float
    hi: float
    omega: np.ndarray | None = None

    @property
    def r(self) -> float:
        return self.hi - self.lo

    def mean(self, lam: float) -> float:
        if self.omega is None:
            return continuous_mean(lam, self.lo, self.hi)
        return discrete_mean(lam, self.omega)

    def log_z(self, lam: float) -> float:
        if self.omega is None:
            return continuous_log_z(lam, self.lo, self.hi)
        return discrete_log_z(lam, self.omega)


def make_support(S: np.ndarray, kind: str = "discrete", max_support: int = 1000) -> Support:
    """Omega from the fit-set similarities (all entries) [P: spec §6.5].

    Discrete: the sorted unique values of S, or ``max_support`` equally spaced
    points on [min S, max S] when there are more unique values than that.
    Continuous: the interval [min S, max S].
    """
    lo, hi = float(S.min()), float(S.max())
    if kind == "continuous":
        return Support(lo, hi)
    omega = np.unique(S)
    if omega.size > max_support:
        omega = np.linspace(lo, hi, max_support)
    return Support(lo, hi, omega)


# ----------------------------------------------------------------- lambda
def solve_lambda(c: float, support: Support) -> tuple[float, str]:
    """lambda with m(lambda) = c, and a status: "ok", "boundary" or "cap" (spec §6.5 "Solving for lambda" [P]).

    "boundary": c within 1e-9 r of min/max Omega (or outside, or r = 0): only
    a point mass fits, lambda = -/+inf. "cap": the root lies beyond
    |lambda| = 1e3/r; lambda is then the capped value. Both are degenerate.
    """
    r = support.r
    tol = BOUNDARY_RTOL * r
    if r <= 0 or c - support.lo <= tol:
        return -np.inf, "boundary"
    if support.hi - c <= tol:
        return np.inf, "boundary"
    cap = LAMBDA_CAP / r

    def f(lam):
        return support.mean(lam) - c

    a, b = -1.0 / r, 1.0 / r
    fa, fb = f(a), f(b)
    while fb < 0:  # root above b: double upwards
        if b >= cap:
            return cap, "cap"
        a, fa = b, fb
        b = min(2.0 * b, cap)
        fb = f(b)
    while fa > 0:  # root below a: double downwards
        if a <= -cap:
            return -cap, "cap"
        b, fb = a, fa
        a = max(2.0 * a, -cap)
        fa = f(a)
    if fa == 0.0:
        return a, "ok"
    if fb == 0.0:
        return b, "ok"
    return float(brentq(f, a, b, xtol=XTOL / r)), "ok"


# ----------------------------------------------------------------- one row
def local_centroids(S: np.ndarray, s: np.ndarray, members: list[np.ndarray]) -> np.ndarray:
    """mu_h = argmax_{v in N_h} sum_{a in N_h} psi(a, v) per class (spec §6.5 [V]).

    Ties (isclose, rtol 1e-12): larger psi(x, v), then the lower index [P].
    """
    mu = np.empty(len(members), dtype=np.intp)
    for j, idx in enumerate(members):
        sums = S[np.ix_(idx, idx)].sum(axis=0)  # column v: sum_a S[a, v] = sum_a psi(a, v)
        cand = idx[np.isclose(sums, sums.max(), rtol=1e-12, atol=0.0)]
        mu[j] = cand[np.lexsort((cand, -s[cand]))[0]]
    return mu


@dataclass
class RowModel:
    """Local SDA quantities for one test row (spec §6.5): present classes, centroids, c, lambda, status."""

    classes: np.ndarray  # class indices of G_x, ascending
    mu: np.ndarray  # centroid training index per class in G_x
    t: np.ndarray  # psi(x, mu_h)
    c: np.ndarray  # c[g, h]
    lam: np.ndarray  # lambda[g, h]
    status: np.ndarray  # "ok" | "boundary" | "cap" per (g, h)
    log_prior: np.ndarray


def fit_row(S, s, nb, y_idx, support, prior, stop_early=False) -> RowModel:
    """Centroids, constraints c_gh and their lambda_gh for one test row (spec §6.5).

    ``nb`` are the neighbour indices, best first; ``prior`` is the log prior per
    class index (None: local k_g / k). With ``stop_early`` the solve stops at
    the first degenerate constraint (its remaining entries stay unsolved).
    """
    y_nb = y_idx[nb]
    classes = np.unique(y_nb)
    members = [nb[y_nb == g] for g in classes]
    k_g = np.array([m.size for m in members], dtype=np.float64)
    mu = local_centroids(S, s, members)
    # c[g, h] = (1/k_g) sum_{z in N_g} psi(z, mu_h); includes z = mu_g when h = g [V]
    c = np.stack([S[np.ix_(m, mu)].mean(axis=0) for m in members])
    log_prior = np.log(k_g / nb.size) if prior is None else prior[classes]
    G = classes.size
    lam = np.full((G, G), np.nan)
    status = np.full((G, G), "unsolved", dtype=object)
    tol = BOUNDARY_RTOL * support.r
    boundary = (c - support.lo <= tol) | (support.hi - c <= tol) | (support.r <= 0)
    status[boundary] = "boundary"
    lam[boundary] = np.where(c[boundary] - support.lo <= tol, -np.inf, np.inf)
    if not (stop_early and boundary.any()):  # detect degeneracy before root finding (spec §8.6)
        for g, h in zip(*np.nonzero(~boundary)):
            lam[g, h], status[g, h] = solve_lambda(c[g, h], support)
            if stop_early and status[g, h] != "ok":
                break
    return RowModel(classes, mu, s[mu], c, lam, status, log_prior)


def log_scores(model: RowModel, support: Support, exact: bool = False) -> np.ndarray:
    """log P(g) + sum_h (lambda_gh psi(x, mu_h) - log Z(lambda_gh)) per class of G_x (spec §6.5 eq. (1)).

    Needs every constraint solved. With ``exact`` [P], a boundary constraint is
    the point mass at c: it adds log 1 = 0 if |psi(x, mu_h) - c| <= 1e-9 r,
    else -inf; "cap" constraints use the capped lambda. Without ``exact``, any
    degenerate constraint makes the row's scores NaN.
    """
    G = model.classes.size
    scores = model.log_prior.astype(np.float64).copy()
    tol = BOUNDARY_RTOL * support.r
    for g in range(G):
        for h in range(G):
            st = model.status[g, h]
            if st == "ok" or (exact and st == "cap"):
                lam = model.lam[g, h]
                scores[g] += lam * model.t[h] - support.log_z(lam)
            elif exact and st == "boundary":
                scores[g] += 0.0 if abs(model.t[h] - model.c[g, h]) <= tol else -np.inf
            else:
                scores[g] = np.nan
    return scores


# ----------------------------------------------------------------- estimator
class LocalSDA(CompiledKernels, SimilarityClassifier):
    """Local similarity discriminant analysis on precomputed similarities (spec §6.5).

    Parameters
    ----------
    n_neighbors : int
        k; neighbours ranked by (-s_i, i), k capped at the fit-set size (spec §5).
    support : {"discrete", "continuous"}
        Omega: unique fit-set similarities (or an equally spaced grid), or the
        continuous truncated exponential on [min S, max S] [P].
    max_support : int
        Above this many unique values the discrete support becomes
        ``max_support`` equally spaced points [P].
    prior : {"local", "global"}
        P(g) = k_g / k (default) or the fit-set prior pi_g [P].
    degenerate : {"centroid", "knn", "exact"}
        Fallback when a constraint is degenerate: local nearest centroid
        [V: Sadowski], k-NN vote [P], or exact point masses with the centroid
        rule only if every class scores -inf [P].

    Attributes
    ----------
    n_degenerate_ : int
        Rows of the last ``predict`` call that used the fallback rule.
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "support": [StrOptions({"discrete", "continuous"})],
        "max_support": [Interval(Integral, 2, None, closed="left")],
        "prior": [StrOptions({"local", "global"})],
        "degenerate": [StrOptions({"centroid", "knn", "exact"})],
    }

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
        """Store the fit set and build Omega from it (spec §1: estimated on the fit set only)."""
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
        S_te = self._check_predict_input(S_te)
        out, fell_back = self._predict_idx(S_te, self._neighbours(S_te))
        self.n_degenerate_ = int(fell_back.sum())
        return self.classes_[out]

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: one fit (support) and one neighbour ranking, the predictions of
        every k from its prefixes (equal to refitting per grid point, tested)."""
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
        sup = self.support_
        discrete = sup.omega is not None
        omega = np.ascontiguousarray(sup.omega if discrete else np.empty(0), dtype=np.float64)
        log_prior = np.log(self.class_prior_) if self.prior == "global" else np.empty(0)
        out, fell_back, err, err_row, err_x = _predict_rows(
            np.ascontiguousarray(self._S, dtype=np.float64),
            np.ascontiguousarray(S_te, dtype=np.float64),
            np.ascontiguousarray(nbs, dtype=np.int64),
            np.ascontiguousarray(self._y_idx, dtype=np.int64),
            len(self.classes_), float(sup.lo), float(sup.hi), omega, discrete,
            np.ascontiguousarray(log_prior, dtype=np.float64), self.prior == "global",
            _DEGENERATE_CODE[self.degenerate], np.ascontiguousarray(self.class_prior_, dtype=np.float64),
        )
        _raise_brent_error(err, err_x, err_row)
        return out.astype(np.intp), fell_back
