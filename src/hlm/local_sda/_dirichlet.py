"""The Dirichlet prior of a multinomial by maximum likelihood from histograms (the Pólya distribution).

Bayesian local SDA (docs/local-sda-family-spec.md §3.1) gives every class
pair a Dirichlet prior alpha over the r bins of the similarity domain and
estimates it from n histograms m^1..m^n of counts. Integrating the multinomial
over its Dirichlet prior gives the Dirichlet-multinomial (multivariate Pólya)
likelihood of the histograms,

    L(alpha) = prod_i  Gamma(alpha_0) / Gamma(alpha_0 + n_i)  prod_j  Gamma(alpha_j + m^i_j) / Gamma(alpha_j),

alpha_0 = sum_j alpha_j, n_i = sum_j m^i_j (the multinomial coefficients do not
depend on alpha and are left out of ``polya_log_likelihood``). ``fit_polya``
maximises it (Minka, "Estimating a Dirichlet distribution", 2000/2003, the
Pólya section), as the paper *Bayesian and Pairwise Local Similarity
Discriminant Analysis* (Sadowski, Cazzanti and Gupta, §III.B) prescribes.

Like hlm.local_mapping._gamma, the estimate works from sufficient statistics: per bin j the
distinct nonzero counts c with their multiplicities (how many histograms have
m_j = c), and the distinct totals n_i with theirs (``sufficient_stats``). Bins
and histograms that hold no count add nothing to the likelihood except through
alpha_0.

The solver [P] (the spec names Minka's fixed point; any maximiser of the same
likelihood qualifies): Newton's method on alpha, whose Hessian is Minka's
diagonal-plus-rank-one form

    H = -diag(q) + z 1 1^T,  q_j = sum_i psi'(alpha_j) - psi'(alpha_j + m^i_j),
                             z   = sum_i psi'(alpha_0) - psi'(alpha_0 + n_i),

solved by the Sherman-Morrison formula; the step is taken in log alpha (alpha
stays positive, at most a factor e^3 per iteration) and halved until the
likelihood increases. Where H is not negative definite, the step scales alpha
(up or down, by the sign of the derivative along alpha_0) or, failing that,
follows the diagonal ascent direction g/q; where no halving helps, one step of
Minka's fixed point (the spec's iteration, which never decreases the
likelihood) is tried, and if that does not help either the likelihood is at its
maximum to rounding. At the cap of alpha_0 (below) the Newton step is restricted
to the hyperplane sum alpha = alpha_max. Start: the method of moments [P]: the
pooled mean pmf p and the concentration s = 1/rho - 1 from the over-dispersion
rho of the counts. Stop when the largest relative change of alpha is at most
``tol`` (1e-8) or after ``max_iter`` iterations (a ConvergenceWarning).
tests/test_dirichlet.py checks the optimum against a direct scipy.optimize
maximisation and against the fixed point itself.

Degenerate data (spec §3.1) [P]:

- a bin empty in every histogram drives its alpha_j to 0: it is held at
  ``alpha_min`` (1e-6), so the posterior mean stays positive; any other alpha_j
  is floored there too (an active set: a floored bin whose gradient points
  down stays floored);
- histograms without over-dispersion (e.g. all identical) drive alpha_0 to
  infinity: alpha_0 is capped at ``alpha_max`` (1e6), and at the cap the mean
  alpha / alpha_0 is still the maximiser on the hyperplane sum alpha = alpha_max
  (Newton restricted to it); all counts in one bin is the extreme case (status
  "single_bin");
- histograms of at most one count (n_i <= 1) carry no information on alpha_0
  (the likelihood depends on alpha / alpha_0 only): alpha = r times the pooled
  mean pmf, i.e. alpha_0 = r, the value Minka's fixed point keeps from the flat
  start alpha_j = 1 (status "unidentified").

The special functions are compiled here (numba): psi and psi' by recurrence to
x >= 10 and their asymptotic series (error below 1e-15), log Gamma by the C
library. The differences the likelihood needs for an integer count c are sums
over t < c: log Gamma(a + c) - log Gamma(a) is the log of prod (a + t) for
c <= 32, psi(a + c) - psi(a) and psi'(a) - psi'(a + c) the direct sums of
1/(a + t) and 1/(a + t)^2 for c <= 4; above that, differences of the functions,
written with log1p for a >= 10 so that a large alpha loses no precision
(tests/test_dirichlet.py checks them against exact sums and scipy.special).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.special import gammaln
from sklearn.exceptions import ConvergenceWarning

#: floor of every alpha_j (spec §3.1 [P]): a bin empty in every histogram goes there
ALPHA_MIN = 1e-6
#: cap of alpha_0 (spec §3.1 [P]): histograms without over-dispersion go there
ALPHA_MAX = 1e6
#: iterations before giving up with a ConvergenceWarning (spec §3.1 [P])
MAX_ITER = 10_000
#: convergence: the largest relative change of alpha (spec §3.1 [P])
TOL = 1e-8

#: ``PolyaFit.status`` by the solver's code
STATUS = ("converged", "max_iter", "unidentified", "single_bin")
_CONVERGED, _MAX_ITER, _UNIDENTIFIED, _SINGLE_BIN = 0, 1, 2, 3
#: largest |log step| of one alpha_j per iteration, and the step halvings tried
_LOG_STEP = 3.0
_HALVINGS = 40
#: up to this many terms a difference of log Gamma is one log of a product, of psi / psi' a direct sum
_DIRECT = 32
_DIRECT_DERIV = 4


# ----------------------------------------------------------------- the estimate
@dataclass(frozen=True)
class PolyaFit:
    """The maximum-likelihood Dirichlet parameter of a set of histograms, as ``fit_polya`` returns it.

    The Dirichlet prior alpha of a multinomial maximising the Pólya (Dirichlet-multinomial) likelihood
    of the histograms (Sadowski, Cazzanti & Gupta, section III.B; docs/local-sda-family-spec.md §3.1).

    ``status``: "converged"; "max_iter" (stopped at ``max_iter``; warned);
    "unidentified" (every histogram holds at most one count: alpha_0 = r);
    "single_bin" (all counts in one bin: alpha_0 at the cap).

    Parameters
    ----------
    alpha : ndarray of shape (r,)
        The estimate, one alpha_j > 0 per bin.
    n_iter : int
        The solver's iterations (0 for "unidentified" and "single_bin", solved in closed form).
    status : {"converged", "max_iter", "unidentified", "single_bin"}
        How the fit ended, as above.

    Attributes
    ----------
    alpha : ndarray of shape (r,)
        As the parameter (the dataclass is frozen).
    n_iter : int
        As the parameter.
    status : str
        As the parameter.

    See Also
    --------
    fit_polya : The fit that returns it.

    Examples
    --------
    Histograms of at most one count each do not identify alpha_0: alpha = r times the pooled mean pmf.

    >>> from hlm.local_sda import fit_polya
    >>> print(fit_polya([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1]]))
    PolyaFit(alpha=array([1.5 , 0.75, 0.75]), n_iter=0, status='unidentified')
    """

    alpha: np.ndarray
    n_iter: int
    status: str


def polya_log_likelihood(alpha, counts) -> float:
    """log L(alpha) of the histograms (rows of ``counts``), multinomial coefficients left out (scipy's gammaln)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    m = np.asarray(counts, dtype=np.float64)
    n = m.sum(axis=1)
    a0 = alpha.sum()
    return float(np.sum(gammaln(a0) - gammaln(a0 + n)) + np.sum(gammaln(alpha + m) - gammaln(alpha)))


def fit_polya(counts, *, alpha_min: float = ALPHA_MIN, alpha_max: float = ALPHA_MAX, max_iter: int = MAX_ITER,
              tol: float = TOL) -> PolyaFit:
    """The alpha maximising the Pólya likelihood of the histograms in the rows of ``counts`` (n x r, integers >= 0).

    The maximum-likelihood Dirichlet prior of Bayesian local SDA (Sadowski, Cazzanti & Gupta,
    section III.B, after Minka's "Estimating a Dirichlet distribution"; docs/local-sda-family-spec.md
    §3.1): L(alpha) = prod_i Gamma(alpha_0) / Gamma(alpha_0 + n_i) prod_j Gamma(alpha_j + m^i_j) /
    Gamma(alpha_j), maximised by a safeguarded Newton iteration in log alpha from a method-of-moments
    start (module docstring) [P].

    Histograms without any count carry no information and are ignored; at least
    one must hold a count. ``alpha_min`` floors every alpha_j, ``alpha_max`` caps
    alpha_0 (module docstring).

    Parameters
    ----------
    counts : array-like of shape (n, r)
        The histograms m^1..m^n, one per row: counts per bin, integers >= 0.
    alpha_min : float, default=1e-6
        Floor of every alpha_j (a bin empty in every histogram goes there); 0 < alpha_min < alpha_max.
    alpha_max : float, default=1e6
        Cap of alpha_0 = sum_j alpha_j (histograms without over-dispersion go there).
    max_iter : int, default=10000
        Iterations before giving up with a ConvergenceWarning (status "max_iter").
    tol : float, default=1e-8
        Convergence: the largest relative change of alpha in one iteration.

    Returns
    -------
    fit : PolyaFit
        The estimate alpha, the solver's iterations and the status.

    Raises
    ------
    ValueError
        If ``counts`` is not 2-D with at least one bin, holds a value that is not a non-negative
        integer, or no count at all; or unless 0 < alpha_min < alpha_max.

    Warns
    -----
    ConvergenceWarning
        If the fit stops at ``max_iter``.

    See Also
    --------
    PolyaFit : The result.
    BayesianLocalSDA : Fits one alpha per ordered class pair.

    Examples
    --------
    Over-dispersed histograms of 20 counts, drawn with pmfs from a Dirichlet(2, 4, 6):

    >>> import numpy as np
    >>> from hlm.local_sda import fit_polya
    >>> rng = np.random.default_rng(0)
    >>> pmfs = rng.dirichlet([2.0, 4.0, 6.0], size=200)
    >>> counts = np.array([rng.multinomial(20, q) for q in pmfs])
    >>> fit = fit_polya(counts)
    >>> print(fit.status, fit.alpha.round())
    converged [2. 4. 6.]

    All counts in one bin: no over-dispersion, alpha_0 at the cap.

    >>> print(fit_polya([[3, 0, 0], [5, 0, 0]]).status)
    single_bin
    """
    m = np.asarray(counts)
    if m.ndim != 2 or m.shape[1] == 0:
        raise ValueError(f"fit_polya: counts must be a 2-D array (histograms x bins), got shape {m.shape}")
    if m.size and (not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(m != np.round(m))):
        raise ValueError("fit_polya: counts must be non-negative integers")
    if not m.sum() > 0:
        raise ValueError("fit_polya: no histogram holds a count")
    if not 0 < alpha_min < alpha_max:
        raise ValueError(f"fit_polya: need 0 < alpha_min < alpha_max (got {alpha_min}, {alpha_max})")
    stats = sufficient_stats(np.ascontiguousarray(m, dtype=np.int64))
    alpha, n_iter, status = _polya_ml(*stats, m.shape[1], float(alpha_min), float(alpha_max), int(max_iter),
                                      float(tol))
    if status == _MAX_ITER:
        warn_max_iter(1, max_iter)
    return PolyaFit(alpha, int(n_iter), STATUS[status])


def warn_max_iter(n_fits: int, max_iter: int, what: str = "") -> None:
    """The one-line ConvergenceWarning of ``n_fits`` estimates stopped at ``max_iter``."""
    warnings.warn(f"Dirichlet ML{what}: {n_fits} estimate(s) stopped at max_iter={max_iter} before the relative "
                  "change of alpha fell below tol", ConvergenceWarning, stacklevel=3)


@njit(cache=True)
def _run_lengths(x, n, vals, wts, pos):  # pragma: no cover - compiled
    """Sort x[:n] and append its distinct values and their multiplicities to vals/wts from ``pos``; new pos."""
    y = np.sort(x[:n])
    i = 0
    while i < n:
        v = y[i]
        w = 0
        while i < n and y[i] == v:
            w += 1
            i += 1
        vals[pos] = v
        wts[pos] = w
        pos += 1
    return pos


@njit(cache=True)
def sufficient_stats(counts):  # pragma: no cover - compiled
    """(vals, wts, start, nvals, nwts) of histograms ``counts`` (n x r, int64 >= 0).

    Bin j's distinct nonzero counts are ``vals[start[j]:start[j+1]]`` (ascending),
    ``wts`` how many histograms have each; ``nvals``/``nwts`` the same for the
    nonzero totals n_i. Everything the likelihood depends on.
    """
    n, r = counts.shape
    col = np.empty(n, dtype=np.int64)
    vals = np.empty(n * r, dtype=np.int64)
    wts = np.empty(n * r, dtype=np.int64)
    start = np.empty(r + 1, dtype=np.int64)
    pos = 0
    for j in range(r):
        start[j] = pos
        cnt = 0
        for i in range(n):
            if counts[i, j] > 0:
                col[cnt] = counts[i, j]
                cnt += 1
        pos = _run_lengths(col, cnt, vals, wts, pos)
    start[r] = pos
    cnt = 0
    for i in range(n):
        t = 0
        for j in range(r):
            t += counts[i, j]
        if t > 0:
            col[cnt] = t
            cnt += 1
    nvals = np.empty(n, dtype=np.int64)
    nwts = np.empty(n, dtype=np.int64)
    npos = _run_lengths(col, cnt, nvals, nwts, 0)
    return vals[:pos].copy(), wts[:pos].copy(), start, nvals[:npos].copy(), nwts[:npos].copy()


# ----------------------------------------------------------------- special functions (compiled)
@njit(cache=True)
def _psi_rest(x):  # pragma: no cover - compiled
    """psi(x) - log(x) for x >= 10: -1/(2x) - sum_n B_2n / (2n x^2n), to x^-14."""
    inv = 1.0 / x
    inv2 = inv * inv
    return -0.5 * inv - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 - inv2 / 12.0))))))


@njit(cache=True)
def digamma(x):  # pragma: no cover - compiled
    """psi(x) for x > 0: psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series."""
    res = 0.0
    while x < 10.0:
        res -= 1.0 / x
        x += 1.0
    return res + math.log(x) + _psi_rest(x)


@njit(cache=True)
def trigamma(x):  # pragma: no cover - compiled
    """psi'(x) for x > 0: psi'(x) = psi'(x + 1) + 1/x^2 up to x >= 10, then the asymptotic series, to x^-15."""
    res = 0.0
    while x < 10.0:
        res += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    return res + inv + inv2 * (0.5 + inv * (1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (1.0 / 42 - inv2 * (
        1.0 / 30 - inv2 * (5.0 / 66 - inv2 * (691.0 / 2730 - inv2 * 7.0 / 6)))))))


@njit(cache=True)
def _stirling_rest(x):  # pragma: no cover - compiled
    """log Gamma(x) - [(x - 1/2) log x - x + log(2 pi)/2] for x >= 10, to x^-13."""
    inv = 1.0 / x
    inv2 = inv * inv
    return inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (1.0 / 1680 - inv2 * (
        1.0 / 1188 - inv2 * (691.0 / 360360 - inv2 / 156.0))))))


@njit(cache=True)
def _lgamma_base(a):  # pragma: no cover - compiled
    """What ``_lgamma_ratio`` needs of a: the Stirling remainder (a >= 10) or log Gamma(a)."""
    return _stirling_rest(a) if a >= 10.0 else math.lgamma(a)


@njit(cache=True)
def _lgamma_ratio(a, c, base):  # pragma: no cover - compiled
    """log Gamma(a + c) - log Gamma(a), ``base`` = ``_lgamma_base(a)``."""
    if c <= _DIRECT and a < 1e8:  # (a + 31)^32 < 1e256: no overflow
        p = 1.0
        for t in range(c):
            p *= a + t
        return math.log(p)
    if a >= 10.0:  # Stirling, the difference written with log1p (no cancellation for large a)
        x = a + c
        return (a - 0.5) * math.log1p(c / a) + c * math.log(x) - c + _stirling_rest(x) - base
    return math.lgamma(a + c) - base


@njit(cache=True)
def _psi_base(a):  # pragma: no cover - compiled
    """What ``_digamma_ratio`` needs of a: psi(a) - log(a) (a >= 10) or psi(a)."""
    return _psi_rest(a) if a >= 10.0 else digamma(a)


@njit(cache=True)
def _digamma_ratio(a, c, base):  # pragma: no cover - compiled
    """psi(a + c) - psi(a) = sum_{t<c} 1/(a + t), ``base`` = ``_psi_base(a)``."""
    if c <= _DIRECT_DERIV:
        s = 0.0
        for t in range(c):
            s += 1.0 / (a + t)
        return s
    if a >= 10.0:
        return math.log1p(c / a) + _psi_rest(a + c) - base
    return digamma(a + c) - base


@njit(cache=True)
def _trigamma_ratio(a, c, base):  # pragma: no cover - compiled
    """psi'(a) - psi'(a + c) = sum_{t<c} 1/(a + t)^2, ``base`` = psi'(a)."""
    if c <= _DIRECT_DERIV:
        s = 0.0
        for t in range(c):
            u = a + t
            s += 1.0 / (u * u)
        return s
    return base - trigamma(a + c)


@njit(cache=True)
def log_gamma_ratio(a, c):  # pragma: no cover - compiled
    """log Gamma(a + c) - log Gamma(a) for a > 0 and an integer c >= 0."""
    return _lgamma_ratio(a, c, _lgamma_base(a))


@njit(cache=True)
def digamma_ratio(a, c):  # pragma: no cover - compiled
    """psi(a + c) - psi(a) = sum_{t<c} 1/(a + t) for a > 0 and an integer c >= 0."""
    return _digamma_ratio(a, c, _psi_base(a))


@njit(cache=True)
def trigamma_ratio(a, c):  # pragma: no cover - compiled
    """psi'(a) - psi'(a + c) = sum_{t<c} 1/(a + t)^2 for a > 0 and an integer c >= 0."""
    return _trigamma_ratio(a, c, trigamma(a))


# ----------------------------------------------------------------- the solver (compiled)
@njit(cache=True)
def _loglik(alpha, vals, wts, start, nvals, nwts):  # pragma: no cover - compiled
    """log L(alpha) from the sufficient statistics."""
    r = alpha.size
    a0 = 0.0
    for j in range(r):
        a0 += alpha[j]
    ll = 0.0
    for j in range(r):
        if start[j + 1] == start[j]:
            continue
        a = alpha[j]
        base = _lgamma_base(a) if vals[start[j + 1] - 1] > _DIRECT else 0.0
        for q in range(start[j], start[j + 1]):
            ll += wts[q] * _lgamma_ratio(a, vals[q], base)
    base = _lgamma_base(a0) if nvals[nvals.size - 1] > _DIRECT else 0.0
    for q in range(nvals.size):
        ll -= nwts[q] * _lgamma_ratio(a0, nvals[q], base)
    return ll


@njit(cache=True)
def _derivatives(a, vals, wts, lo, hi):  # pragma: no cover - compiled
    """sum_q wts[q] (psi(a + c_q) - psi(a)) and sum_q wts[q] (psi'(a) - psi'(a + c_q)), c_q = vals[q], q in [lo, hi)."""
    big = hi > lo and vals[hi - 1] > _DIRECT_DERIV
    pb = _psi_base(a) if big else 0.0
    tb = trigamma(a) if big else 0.0
    g = 0.0
    h = 0.0
    for q in range(lo, hi):
        g += wts[q] * _digamma_ratio(a, vals[q], pb)
        h += wts[q] * _trigamma_ratio(a, vals[q], tb)
    return g, h


@njit(cache=True)
def _project(cand, free, fixed, alpha_min, alpha_max):  # pragma: no cover - compiled
    """Floor every alpha_j at alpha_min and cap alpha_0 at alpha_max (scaling the bins that hold data)."""
    r = cand.size
    total = 0.0
    for j in range(r):
        if cand[j] < alpha_min:
            cand[j] = alpha_min
        total += cand[j]
    if total > alpha_max:
        f = (alpha_max - fixed) / (total - fixed)
        for j in range(r):
            if free[j]:
                cand[j] = max(cand[j] * f, alpha_min)


@njit(cache=True)
def _search(alpha, d, act, free, fixed, cand, ll, alpha_min, alpha_max, vals, wts, start, nvals,
            nwts):  # pragma: no cover - compiled
    """Backtracking along the log-space step alpha_j exp(t d_j / alpha_j), t = 1, 1/2, ...: the first candidate
    (floored and capped, in ``cand``) whose likelihood exceeds ``ll``. Returns (found, its log L)."""
    r = alpha.size
    step = 1.0
    for _ in range(_HALVINGS):
        for j in range(r):
            if act[j]:
                u = min(max(step * d[j] / alpha[j], -_LOG_STEP), _LOG_STEP)
                cand[j] = alpha[j] * math.exp(u)
            else:
                cand[j] = alpha[j]
        _project(cand, free, fixed, alpha_min, alpha_max)
        ll_new = _loglik(cand, vals, wts, start, nvals, nwts)
        if ll_new > ll:
            return True, ll_new
        step *= 0.5
    return False, ll


@njit(cache=True)
def _polya_ml(vals, wts, start, nvals, nwts, r, alpha_min, alpha_max, max_iter, tol):  # pragma: no cover
    """(alpha, iterations, status code) maximising the Pólya likelihood (the module docstring's solver)."""
    alpha = np.full(r, alpha_min)
    free = np.zeros(r, dtype=np.bool_)
    tj = np.zeros(r)
    n_free = 0
    for j in range(r):
        for q in range(start[j], start[j + 1]):
            tj[j] += vals[q] * wts[q]
        if start[j + 1] > start[j]:
            free[j] = True
            n_free += 1
    fixed = (r - n_free) * alpha_min
    total = 0.0
    sum_n2 = 0.0
    for q in range(nvals.size):
        total += nvals[q] * nwts[q]
        sum_n2 += float(nvals[q]) * nvals[q] * nwts[q]
    if nvals[nvals.size - 1] <= 1:  # no histogram of two counts: alpha_0 not identified
        for j in range(r):
            if free[j]:
                alpha[j] = max(r * tj[j] / total, alpha_min)
        return alpha, 0, _UNIDENTIFIED
    if n_free == 1:  # every count in one bin: no over-dispersion at all
        for j in range(r):
            if free[j]:
                alpha[j] = alpha_max - fixed
        return alpha, 0, _SINGLE_BIN
    # start: method of moments, E sum_j (m_j - n p_j)^2 / p_j = n (1 + (n - 1) rho) (r' - 1)
    x2 = 0.0
    for j in range(r):
        if free[j]:
            pj = tj[j] / total
            for q in range(start[j], start[j + 1]):
                x2 += float(vals[q]) * vals[q] * wts[q] / pj
    x2 -= sum_n2
    rho = (x2 / (n_free - 1) - total) / (sum_n2 - total)
    s_lo = max(1e-2, 10.0 * r * alpha_min)
    s_hi = max(s_lo, 0.5 * alpha_max)
    s0 = s_hi if rho <= 0 else (s_lo if rho >= 1 else min(max(1.0 / rho - 1.0, s_lo), s_hi))
    for j in range(r):
        if free[j]:
            alpha[j] = max(s0 * tj[j] / total, alpha_min)
    _project(alpha, free, fixed, alpha_min, alpha_max)

    ll = _loglik(alpha, vals, wts, start, nvals, nwts)
    g = np.zeros(r)
    qd = np.ones(r)
    d = np.zeros(r)
    act = np.zeros(r, dtype=np.bool_)
    cand = np.empty(r)
    ll_new = ll
    status = _MAX_ITER
    it = 0
    while it < max_iter:
        it += 1
        a0 = 0.0
        for j in range(r):
            a0 += alpha[j]
        gv, zv = _derivatives(a0, nvals, nwts, 0, nvals.size)
        n_act = 0
        ds = 0.0
        sq = 0.0
        sg = 0.0
        for j in range(r):
            act[j] = False
            if not free[j]:
                continue
            gj, qj = _derivatives(alpha[j], vals, wts, start[j], start[j + 1])
            gj -= gv
            g[j] = gj
            qd[j] = qj
            if alpha[j] <= alpha_min and gj <= 0:
                continue  # floored and pushed down: stays at the floor
            act[j] = True
            n_act += 1
            ds += alpha[j] * gj
            sq += 1.0 / qj
            sg += gj / qj
        if n_act == 0:
            status = _CONVERGED
            break
        if a0 >= alpha_max * (1.0 - 1e-9) and ds > 0:  # at the cap, pushed out: Newton on sum alpha = const
            lam = sg / sq
            for j in range(r):
                d[j] = (g[j] - lam) / qd[j] if act[j] else 0.0
            accepted, ll_new = _search(alpha, d, act, free, fixed, cand, ll, alpha_min, alpha_max, vals, wts, start,
                                       nvals, nwts)
        else:
            den = 1.0 - zv * sq
            if den > 0:  # H negative definite: Newton (Sherman-Morrison)
                shift = zv * sg / den
                for j in range(r):
                    d[j] = (g[j] + shift) / qd[j] if act[j] else 0.0
                accepted, ll_new = _search(alpha, d, act, free, fixed, cand, ll, alpha_min, alpha_max, vals, wts,
                                           start, nvals, nwts)
            else:  # not concave along the concentration: scale alpha up or down, else the diagonal ascent g / q
                accepted = False
                if ds != 0:
                    for j in range(r):
                        d[j] = (_LOG_STEP if ds > 0 else -_LOG_STEP) * alpha[j] if act[j] else 0.0
                    accepted, ll_new = _search(alpha, d, act, free, fixed, cand, ll, alpha_min, alpha_max, vals, wts,
                                               start, nvals, nwts)
                if not accepted:
                    for j in range(r):
                        d[j] = g[j] / qd[j] if act[j] else 0.0
                    accepted, ll_new = _search(alpha, d, act, free, fixed, cand, ll, alpha_min, alpha_max, vals, wts,
                                               start, nvals, nwts)
        if not accepted:  # one step of Minka's fixed point, which never decreases the likelihood
            for j in range(r):
                cand[j] = alpha[j] * (g[j] + gv) / gv if free[j] else alpha[j]
            _project(cand, free, fixed, alpha_min, alpha_max)
            ll_new = _loglik(cand, vals, wts, start, nvals, nwts)
            if not ll_new > ll:  # no ascent left: the maximum, to rounding
                status = _CONVERGED
                break
        change = 0.0
        for j in range(r):
            change = max(change, abs(cand[j] - alpha[j]) / cand[j])
            alpha[j] = cand[j]
        ll = ll_new
        if change <= tol:
            status = _CONVERGED
            break
    return alpha, it, status
