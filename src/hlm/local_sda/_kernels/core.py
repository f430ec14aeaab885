"""The numerics of local SDA's compiled kernels: the exponential pmf on Omega and its lambda.

numpy's pairwise summation (``_pairwise_sum``), the tilted weights, mean and log partition
function of the discrete and continuous supports, a port of scipy's ``brentq.c``, the root
lambda of one moment constraint (``_solve_lambda_nb``) and its boundary test, and the
constants and status codes every kernel of the family shares.

They repeat the floating-point operations of the row-by-row reference
(tests/oracles/local_sda_reference.py) in their order, so they take the same decisions as
the reference and agree with its values to rounding (tests/test_local_sda.py). The one
exception is ``UNIFORM``: on an equally spaced support m(lambda) and Z(lambda) in closed
form (used by regularized local SDA only), equal to the sums to a bound its test derives;
decisions can then differ from the summing reference only at a near-tie.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: relative tolerance (times r) for "c is on the boundary of Omega" [P: spec §6.5]
BOUNDARY_RTOL = 1e-9
#: |lambda| <= LAMBDA_CAP / r; hitting it counts as degenerate [P: spec §6.5]
LAMBDA_CAP = 1e3
#: Brent's xtol is XTOL / r [P: spec §6.5]
XTOL = 1e-10
#: below this |lambda r| the continuous mean uses its Taylor series (lambda -> 0 limit)
_SERIES_T = 1e-2
#: scipy.optimize.brentq's defaults, used by the reference's ``solve_lambda`` and repeated by the compiled port
_BRENT_RTOL = 4 * np.finfo(float).eps
_BRENT_MAXITER = 100

# ----------------------------------------------------------------- compiled kernels
# They repeat the reference's floating-point operations in its order, so that the results agree
# to rounding (often to the last bit): numpy's sum of a contiguous float64 vector is its pairwise summation
# (``_pairwise_sum``); ``w @ omega`` and numba's ``np.dot`` both call the BLAS ddot; numpy's float64
# exp/log/expm1 (without AVX-512) and numba's call libm; Python's ``t**3`` and ``math.pow`` call pow;
# a column sum ``A.sum(axis=0)`` of a C-ordered block with >= 2 columns adds the rows in order.
# Caveats: on a CPU with AVX-512F numpy's float64 exp/log use their own SIMD code, and a discrete
# support of more than 10,000 points lets OpenBLAS split the dot product over threads; there the
# kernel differs from the reference in the last bits. The tests bound the difference by the
# computation's rounding, and ``make test`` runs them on both numpy dispatches.
_OK, _BOUNDARY, _CAP, _UNSOLVED = 0, 1, 2, 3  # statuses by name: tests/oracles/local_sda_reference.py
_DEGENERATE_CODE = {"centroid": 0, "knn": 1, "exact": 2}
_BRENT_CONVERR, _BRENT_NAN, _BRENT_SIGNERR = 1, 2, 3


def _raise_brent_error(err: int, x: float, row: int) -> None:
    """The errors scipy's brentq raises (non-convergence, NaN function value), from a kernel's code."""
    if err == _BRENT_CONVERR:
        raise RuntimeError(f"Failed to converge after {_BRENT_MAXITER} iterations, value is {x} (row {row})")
    if err == _BRENT_NAN:
        raise ValueError(f"The function value at x={x} is NaN; solver cannot continue. (row {row})")
    if err == _BRENT_SIGNERR:
        raise ValueError(f"f(a) and f(b) must have different signs (row {row})")


@njit(cache=True)
def _pairwise_block(a, start, n):  # pragma: no cover - compiled
    """numpy's ``DOUBLE_pairwise_sum`` of a[start:start + n] for n <= 128 (8 accumulators)."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[start + i]
        return res
    r0 = a[start]
    r1 = a[start + 1]
    r2 = a[start + 2]
    r3 = a[start + 3]
    r4 = a[start + 4]
    r5 = a[start + 5]
    r6 = a[start + 6]
    r7 = a[start + 7]
    m = n - n % 8
    i = 8
    while i < m:
        j = start + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i]
        i += 1
    return res


@njit(cache=True)
def _pairwise_sum(a, start, n):  # pragma: no cover - compiled
    """numpy's pairwise summation of a[start:start + n]: blocks of <= 128, above that
    sum(first n2) + sum(rest) with n2 = n // 2 rounded down to a multiple of 8.

    The recursion runs on an explicit stack (numba's on-disk cache cannot reload
    self-recursive functions).
    """
    if n <= 128:
        return _pairwise_block(a, start, n)
    depth = 192  # 3 entries per level; n halves per level
    node_start = np.empty(depth, dtype=np.int64)
    node_n = np.empty(depth, dtype=np.int64)
    node_open = np.empty(depth, dtype=np.bool_)  # True: both halves are on the value stack
    values = np.empty(depth)
    nv = 0
    node_start[0] = start
    node_n[0] = n
    node_open[0] = False
    top = 1
    while top > 0:
        top -= 1
        s0, n0, combine = node_start[top], node_n[top], node_open[top]
        if combine:
            nv -= 1
            values[nv - 1] = values[nv - 1] + values[nv]
        elif n0 <= 128:
            values[nv] = _pairwise_block(a, s0, n0)
            nv += 1
        else:
            n2 = n0 // 2
            n2 -= n2 % 8
            node_start[top], node_n[top], node_open[top] = s0, n0, True
            node_start[top + 1], node_n[top + 1], node_open[top + 1] = s0 + n2, n0 - n2, False
            node_start[top + 2], node_n[top + 2], node_open[top + 2] = s0, n2, False
            top += 3
    return values[0]


@njit(cache=True)
def _tilt(lam, omega, w):  # pragma: no cover - compiled
    """w = exp(lam (omega - top)) with top the support end where lam * omega is largest; returns top."""
    n = omega.size
    top = omega[n - 1] if lam >= 0 else omega[0]
    for i in range(n):
        w[i] = np.exp(lam * (omega[i] - top))
    return top


@njit(cache=True)
def _discrete_mean_nb(lam, omega, w):  # pragma: no cover - compiled
    """``discrete_mean``; ``w`` is scratch of omega's size."""
    _tilt(lam, omega, w)
    return np.dot(w, omega) / _pairwise_sum(w, 0, omega.size)


@njit(cache=True)
def _discrete_log_z_nb(lam, omega, w):  # pragma: no cover - compiled
    """``discrete_log_z``; ``w`` is scratch of omega's size."""
    top = _tilt(lam, omega, w)
    return lam * top + np.log(_pairwise_sum(w, 0, omega.size))


@njit(cache=True)
def _continuous_mean_nb(lam, lo, hi):  # pragma: no cover - compiled
    """``continuous_mean`` (``t**k`` of the reference is pow(t, k), as math.pow here)."""
    r = hi - lo
    t = lam * r
    if abs(t) < _SERIES_T:
        g = 0.5 + t / 12.0 - math.pow(t, 3.0) / 720.0 + math.pow(t, 5.0) / 30240.0
    else:
        g = -1.0 / np.expm1(-t) - 1.0 / t
    return lo + r * g


@njit(cache=True)
def _continuous_log_z_nb(lam, lo, hi):  # pragma: no cover - compiled
    """``continuous_log_z``."""
    r = hi - lo
    t = lam * r
    if t == 0.0:
        return np.log(r)
    top = hi if t > 0 else lo
    return lam * top + np.log(r) + np.log(-np.expm1(-abs(t))) - np.log(abs(t))


#: below this r |lambda| Delta (r points, spacing Delta) the uniform grid's mean uses its series
_SERIES_G = 0.1
#: ``discrete`` argument of ``_mean_nb`` and ``_brentq_nb`` for an equally spaced discrete support
UNIFORM = 2


@njit(cache=True)
def _uniform_mean_nb(lam, lo, hi, size):  # pragma: no cover - compiled
    """The mean of the exponential pmf on ``size`` equally spaced points of [lo, hi] in closed form (a
    truncated geometric distribution): with a = |lam| Delta and weights e^{-a j}, j = 0..size-1 counted from
    the end where lam omega is largest, E[j] = 1 / expm1(a) - size / expm1(size a); below size a = 0.1 the
    series (size-1)/2 - (size^2-1) a/12 + (size^4-1) a^3/720 - (size^6-1) a^5/30240 + (size^8-1) a^7/1209600
    (the Bernoulli expansion of 1 / expm1; the next term, 2 (size a)^9 / 47900160, is at most 4e-17
    relative, under half an ulp). Equals ``_discrete_mean_nb`` on ``np.linspace(lo, hi, size)`` to
    rounding, in O(1) instead of O(size)."""
    d = (hi - lo) / (size - 1)
    a = abs(lam) * d
    R = np.float64(size)
    if R * a < _SERIES_G:
        a2 = a * a
        e = (R - 1.0) / 2.0 - a * ((R * R - 1.0) / 12.0 - a2 * ((R**4 - 1.0) / 720.0 - a2 * (
            (R**6 - 1.0) / 30240.0 - a2 * (R**8 - 1.0) / 1209600.0)))
    else:
        e = 1.0 / np.expm1(a) - R / np.expm1(R * a)
    if lam > 0:
        return hi - d * e
    return lo + d * e


@njit(cache=True)
def _uniform_z_nb(lam, lo, hi, size):  # pragma: no cover - compiled
    """sum_j exp(lam (omega_j - top)) on ``size`` equally spaced points (``_tilt``'s weights summed), in
    closed form: expm1(-size a) / expm1(-a), a = |lam| Delta; ``size`` at lam = 0."""
    a = abs(lam) * (hi - lo) / (size - 1)
    if a == 0.0:
        return np.float64(size)
    return np.expm1(-size * a) / np.expm1(-a)


@njit(cache=True)
def _mean_nb(lam, lo, hi, omega, discrete, w):  # pragma: no cover - compiled
    """m(lam) of the support: continuous (``discrete`` False), discrete (True) or, for ``discrete`` =
    ``UNIFORM``, the discrete support ``omega`` known to be equally spaced (``_uniform_mean_nb``)."""
    if discrete == UNIFORM:
        return _uniform_mean_nb(lam, lo, hi, omega.size)
    if discrete:
        return _discrete_mean_nb(lam, omega, w)
    return _continuous_mean_nb(lam, lo, hi)


@njit(cache=True)
def _log_z_nb(lam, lo, hi, omega, discrete, w):  # pragma: no cover - compiled
    """log Z(lam) of the support, ``discrete`` as in ``_mean_nb``."""
    if discrete == UNIFORM:
        return lam * (hi if lam >= 0 else lo) + np.log(_uniform_z_nb(lam, lo, hi, omega.size))
    if discrete:
        return _discrete_log_z_nb(lam, omega, w)
    return _continuous_log_z_nb(lam, lo, hi)


@njit(cache=True)
def _brentq_nb(c, xpre, xcur, fpre, fcur, xtol, rtol, maxiter, lo, hi, omega, discrete, w):  # pragma: no cover
    """scipy.optimize.brentq (scipy/optimize/Zeros/brentq.c) on f(lam) = m(lam) - c, line by line.

    The bracket's f values ``fpre`` = f(xpre), ``fcur`` = f(xcur) are passed in (the caller has them;
    f is deterministic), both nonzero and of opposite signs. Returns (root, error code): 0,
    ``_BRENT_CONVERR`` (no convergence in ``maxiter`` iterations; scipy raises RuntimeError) or
    ``_BRENT_NAN`` (a NaN function value; scipy's wrapper raises ValueError).
    """
    xblk = 0.0
    fblk = 0.0
    spre = 0.0
    scur = 0.0
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and ((fpre < 0) != (fcur < 0)):  # signbit of nonzero, non-NaN values
            xblk = xpre
            fblk = fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre = xcur
            xcur = xblk
            xblk = xpre
            fpre = fcur
            fcur = fblk
            fblk = fpre
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur, 0
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:  # interpolate
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:  # extrapolate
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            bound = abs(spre) if abs(spre) < 3 * abs(sbis) - delta else 3 * abs(sbis) - delta  # C's MIN
            if 2 * abs(stry) < bound:  # good short step
                spre = scur
                scur = stry
            else:  # bisect
                spre = sbis
                scur = sbis
        else:  # bisect
            spre = sbis
            scur = sbis
        xpre = xcur
        fpre = fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
        fcur = _mean_nb(xcur, lo, hi, omega, discrete, w) - c
        if np.isnan(fcur):
            return xcur, _BRENT_NAN
    return xcur, _BRENT_CONVERR


@njit(cache=True)
def _boundary_lambda_nb(c, lo, hi):  # pragma: no cover - compiled
    """The boundary test of ``solve_lambda`` [P: spec §6.5]: -inf if c lies within BOUNDARY_RTOL r of
    lo (or r <= 0), +inf if within it of hi (lambda of the point mass there), else 0.0 (c is inside
    Omega: a root to find)."""
    r = hi - lo
    tol = BOUNDARY_RTOL * r
    if r <= 0 or c - lo <= tol:
        return -np.inf
    if hi - c <= tol:
        return np.inf
    return 0.0


@njit(cache=True)
def _solve_lambda_nb(c, lo, hi, omega, discrete, w):  # pragma: no cover - compiled
    """``solve_lambda``: returns (lambda, status code, brent error code)."""
    point_mass = _boundary_lambda_nb(c, lo, hi)
    if point_mass != 0.0:
        return point_mass, _BOUNDARY, 0
    r = hi - lo
    cap = LAMBDA_CAP / r
    a = -1.0 / r
    b = 1.0 / r
    fa = _mean_nb(a, lo, hi, omega, discrete, w) - c
    fb = _mean_nb(b, lo, hi, omega, discrete, w) - c
    while fb < 0:  # root above b: double upwards
        if b >= cap:
            return cap, _CAP, 0
        a = b
        fa = fb
        b = min(2.0 * b, cap)
        fb = _mean_nb(b, lo, hi, omega, discrete, w) - c
    while fa > 0:  # root below a: double downwards
        if a <= -cap:
            return -cap, _CAP, 0
        b = a
        fb = fa
        a = max(2.0 * a, -cap)
        fa = _mean_nb(a, lo, hi, omega, discrete, w) - c
    if fa == 0.0:
        return a, _OK, 0
    if fb == 0.0:
        return b, _OK, 0
    if np.isnan(fa) or np.isnan(fb):  # scipy's wrapper raises on a NaN value at the bracket
        return (a if np.isnan(fa) else b), _OK, _BRENT_NAN
    if fa * fb > 0:  # cannot happen after the doubling (fa < 0 < fb); scipy would raise
        return a, _OK, _BRENT_SIGNERR
    lam, err = _brentq_nb(c, a, b, fa, fb, XTOL / r, _BRENT_RTOL, _BRENT_MAXITER, lo, hi, omega, discrete, w)
    return lam, _OK, err
