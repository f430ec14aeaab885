"""The row-by-row reference of local SDA (spec section 6.5), which the compiled kernels repeat.

``hlm.local_sda._local_sda.LocalSDA.predict`` runs every row in one compiled kernel
(``hlm.local_sda._kernels``). These functions state the method row by row
with numpy and scipy's ``brentq``: the moment constraint's tilted mean and log
partition function per support (``support_mean``, ``support_log_z``), the root
lambda (``solve_lambda``), the local centroids, one row's constraints and
lambdas (``fit_row``) and its class scores (``log_scores``).
tests/local_sda/test_local_sda.py checks that the kernels take the same decisions and
agree with these values to rounding. (They were ``hlm.local_sda._local_sda``'s own
reference functions; production code never ran them.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from hlm.local_sda._kernels.core import (
    _BOUNDARY,
    _CAP,
    _OK,
    _SERIES_T,
    _UNSOLVED,
    BOUNDARY_RTOL,
    LAMBDA_CAP,
    XTOL,
)
from hlm.local_sda._local_sda import Support

#: the name of each of the kernels' status codes (``STATUS_NAMES[code]``)
STATUS_NAMES = np.empty(4, dtype=object)
STATUS_NAMES[[_OK, _BOUNDARY, _CAP, _UNSOLVED]] = ["ok", "boundary", "cap", "unsolved"]


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


def support_r(support: Support) -> float:
    """r = max Omega - min Omega."""
    return support.hi - support.lo


def support_mean(support: Support, lam: float) -> float:
    """m(lambda) of the support: ``continuous_mean`` or ``discrete_mean``."""
    if support.omega is None:
        return continuous_mean(lam, support.lo, support.hi)
    return discrete_mean(lam, support.omega)


def support_log_z(support: Support, lam: float) -> float:
    """log Z(lambda) of the support: ``continuous_log_z`` or ``discrete_log_z``."""
    if support.omega is None:
        return continuous_log_z(lam, support.lo, support.hi)
    return discrete_log_z(lam, support.omega)


# ----------------------------------------------------------------- lambda
def solve_lambda(c: float, support: Support) -> tuple[float, str]:
    """lambda with m(lambda) = c, and a status: "ok", "boundary" or "cap" (spec §6.5 "Solving for lambda" [P]).

    "boundary": c within 1e-9 r of min/max Omega (or outside, or r = 0): only
    a point mass fits, lambda = -/+inf. "cap": the root lies beyond
    |lambda| = 1e3/r; lambda is then the capped value. Both are degenerate.
    """
    r = support_r(support)
    tol = BOUNDARY_RTOL * r
    if r <= 0 or c - support.lo <= tol:
        return -np.inf, "boundary"
    if support.hi - c <= tol:
        return np.inf, "boundary"
    cap = LAMBDA_CAP / r

    def f(lam):
        return support_mean(support, lam) - c

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
    tol = BOUNDARY_RTOL * support_r(support)
    boundary = (c - support.lo <= tol) | (support.hi - c <= tol) | (support_r(support) <= 0)
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
    tol = BOUNDARY_RTOL * support_r(support)
    for g in range(G):
        for h in range(G):
            st = model.status[g, h]
            if st == "ok" or (exact and st == "cap"):
                lam = model.lam[g, h]
                scores[g] += lam * model.t[h] - support_log_z(support, lam)
            elif exact and st == "boundary":
                scores[g] += 0.0 if abs(model.t[h] - model.c[g, h]) <= tol else -np.inf
            else:
                scores[g] = np.nan
    return scores
