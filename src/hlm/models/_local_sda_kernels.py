"""Compiled kernels of local SDA (hlm.models.local_sda): every row of a prediction in one call.

They repeat the floating-point operations of the row-by-row reference
(tests/oracles/local_sda_reference.py) in their order (numpy's pairwise
summation, the BLAS dot product, exp/log/expm1/pow, a port of scipy's
``brentq.c``), so they take the same decisions as the reference and agree with
its values to rounding (tests/test_local_sda.py).
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


@njit(cache=True)
def _mean_nb(lam, lo, hi, omega, discrete, w):  # pragma: no cover - compiled
    if discrete:
        return _discrete_mean_nb(lam, omega, w)
    return _continuous_mean_nb(lam, lo, hi)


@njit(cache=True)
def _log_z_nb(lam, lo, hi, omega, discrete, w):  # pragma: no cover - compiled
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
def _solve_lambda_nb(c, lo, hi, omega, discrete, w):  # pragma: no cover - compiled
    """``solve_lambda``: returns (lambda, status code, brent error code)."""
    r = hi - lo
    tol = BOUNDARY_RTOL * r
    if r <= 0 or c - lo <= tol:
        return -np.inf, _BOUNDARY, 0
    if hi - c <= tol:
        return np.inf, _BOUNDARY, 0
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


@njit(cache=True)
def _row_model_nb(S, s, nb, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior,
                  stop_early, w):  # pragma: no cover - compiled
    """``fit_row`` for one row: (classes, mu, c, lam, status codes, log prior, brent error, its x).

    Centroid column sums and the means c add the class members in neighbour order, as numpy's
    ``S[np.ix_(idx, idx)].sum(axis=0)`` and ``.mean(axis=0)`` do.
    """
    k = nb.size
    counts = np.zeros(n_classes, dtype=np.int64)
    for i in range(k):
        counts[y_idx[nb[i]]] += 1
    G = 0
    for g in range(n_classes):
        if counts[g] > 0:
            G += 1
    classes = np.empty(G, dtype=np.int64)
    start = np.empty(G + 1, dtype=np.int64)
    slot = np.full(n_classes, -1, dtype=np.int64)
    j = 0
    start[0] = 0
    for g in range(n_classes):
        if counts[g] > 0:
            classes[j] = g
            slot[g] = j
            start[j + 1] = start[j] + counts[g]
            j += 1
    members = np.empty(k, dtype=np.int64)  # fit indices grouped by class, neighbour order within
    fill = start[:G].copy()
    for i in range(k):
        jj = slot[y_idx[nb[i]]]
        members[fill[jj]] = nb[i]
        fill[jj] += 1
    # local centroids (local_centroids)
    mu = np.empty(G, dtype=np.int64)
    sums = np.empty(k)
    for j in range(G):
        a0, a1 = start[j], start[j + 1]
        for q in range(a0, a1):
            v = members[q]
            acc = S[members[a0], v]
            for p in range(a0 + 1, a1):
                acc += S[members[p], v]
            sums[q] = acc
        mx = sums[a0]
        for q in range(a0 + 1, a1):
            if sums[q] > mx or np.isnan(sums[q]):
                mx = sums[q]
                if np.isnan(mx):
                    break
        best = -1
        for q in range(a0, a1):  # isclose(sums, max, rtol=1e-12, atol=0), then larger s, then lower index
            x = sums[q]
            close = (abs(x - mx) <= 0.0 + 1e-12 * abs(mx) and np.isfinite(mx)) or x == mx
            if close:
                v = members[q]
                if best < 0 or s[v] > s[best] or (s[v] == s[best] and v < best):
                    best = v
        mu[j] = best
    # c[g, h] = mean_{z in N_g} S[z, mu_h]
    c = np.empty((G, G))
    for g in range(G):
        a0, a1 = start[g], start[g + 1]
        for h in range(G):
            acc = S[members[a0], mu[h]]
            for p in range(a0 + 1, a1):
                acc += S[members[p], mu[h]]
            c[g, h] = acc / np.float64(a1 - a0)
    log_prior = np.empty(G)
    for g in range(G):
        if global_prior:
            log_prior[g] = log_prior_global[classes[g]]
        else:
            log_prior[g] = np.log(np.float64(counts[classes[g]]) / np.float64(k))
    lam = np.full((G, G), np.nan)
    status = np.full((G, G), _UNSOLVED, dtype=np.int64)
    r = hi - lo
    tol = BOUNDARY_RTOL * r
    any_boundary = False
    for g in range(G):
        for h in range(G):
            if (c[g, h] - lo <= tol) or (hi - c[g, h] <= tol) or (r <= 0):
                status[g, h] = _BOUNDARY
                lam[g, h] = -np.inf if c[g, h] - lo <= tol else np.inf
                any_boundary = True
    err = 0
    err_x = 0.0
    if not (stop_early and any_boundary):
        done = False
        for g in range(G):
            for h in range(G):
                if status[g, h] == _BOUNDARY:
                    continue
                lam_gh, st, e = _solve_lambda_nb(c[g, h], lo, hi, omega, discrete, w)
                lam[g, h] = lam_gh
                status[g, h] = st
                if e != 0:
                    return classes, mu, c, lam, status, log_prior, e, lam_gh
                if stop_early and st != _OK:
                    done = True
                    break
            if done:
                break
    return classes, mu, c, lam, status, log_prior, err, err_x


@njit(cache=True)
def _log_scores_nb(classes, mu, s, c, lam, status, log_prior, lo, hi, omega, discrete, exact,
                   w):  # pragma: no cover - compiled
    """``log_scores``."""
    G = classes.size
    scores = log_prior.copy()
    tol = BOUNDARY_RTOL * (hi - lo)
    for g in range(G):
        for h in range(G):
            st = status[g, h]
            t_h = s[mu[h]]
            if st == _OK or (exact and st == _CAP):
                lam_gh = lam[g, h]
                scores[g] += lam_gh * t_h - _log_z_nb(lam_gh, lo, hi, omega, discrete, w)
            elif exact and st == _BOUNDARY:
                scores[g] += 0.0 if abs(t_h - c[g, h]) <= tol else -np.inf
            else:
                scores[g] = np.nan
    return scores


@njit(cache=True)
def _max_nb(x):  # pragma: no cover - compiled
    """``np.max(x)``: NaN if any element is NaN."""
    mx = x[0]
    for i in range(1, x.size):
        if x[i] > mx or np.isnan(x[i]):
            mx = x[i]
            if np.isnan(mx):
                break
    return mx


@njit(cache=True)
def _break_ties_nb(votes, prior, ranked):  # pragma: no cover - compiled
    """``hlm.models.knn.break_vote_ties`` of one row."""
    n = votes.size
    mx = _max_nb(votes)
    top = np.empty(n, dtype=np.bool_)
    for i in range(n):
        x = votes[i]
        top[i] = (abs(x - mx) <= 0.0 + 1e-12 * abs(mx) and np.isfinite(mx)) or x == mx
    masked = np.empty(n)
    for i in range(n):
        masked[i] = prior[i] if top[i] else -np.inf
    mp = _max_nb(masked)
    n_top = 0
    winner = -1
    for i in range(n):
        top[i] = top[i] and masked[i] == mp
        if top[i]:
            n_top += 1
            if winner < 0:
                winner = i
    if winner < 0:
        return 0
    if n_top > 1:
        for q in range(ranked.size):
            if top[ranked[q]]:
                return ranked[q]
    return winner


@njit(cache=True)
def _argmax_nb(values, classes, n_classes, class_prior, y_nb):  # pragma: no cover - compiled
    full = np.full(n_classes, -np.inf)
    for j in range(classes.size):
        full[classes[j]] = values[j]
    return _break_ties_nb(full, class_prior, y_nb)


@njit(cache=True)
def _predict_rows(S, S_te, nbs, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior,
                  mode, class_prior):  # pragma: no cover - compiled
    """``_reference_predict_row`` for every row. mode: 0 centroid, 1 knn, 2 exact (``_DEGENERATE_CODE``).

    Returns (class index per row, fallback used per row, brent error code, its row, its x).
    """
    m, k = nbs.shape
    out = np.empty(m, dtype=np.int64)
    fell_back = np.zeros(m, dtype=np.bool_)
    w = np.empty(omega.size)
    exact = mode == 2
    for i in range(m):
        nb = nbs[i]
        s = S_te[i]
        y_nb = np.empty(k, dtype=np.int64)
        single = True
        for q in range(k):
            y_nb[q] = y_idx[nb[q]]
            if y_nb[q] != y_nb[0]:
                single = False
        if single:  # |G_x| = 1 -> that class
            out[i] = y_nb[0]
            continue
        classes, mu, c, lam, status, log_prior, err, err_x = _row_model_nb(
            S, s, nb, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior, not exact, w
        )
        if err != 0:
            return out, fell_back, err, i, err_x
        degenerate = False
        for g in range(classes.size):
            for h in range(classes.size):
                if status[g, h] != _OK:
                    degenerate = True
        use_fallback = degenerate and not exact
        if not use_fallback:
            scores = _log_scores_nb(classes, mu, s, c, lam, status, log_prior, lo, hi, omega, discrete, exact, w)
            all_neg_inf = True
            for g in range(scores.size):
                if not scores[g] == -np.inf:
                    all_neg_inf = False
            if all_neg_inf:
                use_fallback = True
            else:
                out[i] = _argmax_nb(scores, classes, n_classes, class_prior, y_nb)
        if use_fallback:
            fell_back[i] = True
            if mode == 1:  # k-NN vote
                votes = np.zeros(n_classes)
                for q in range(k):
                    votes[y_nb[q]] += 1.0
                out[i] = _break_ties_nb(votes, class_prior, y_nb)
            else:  # local nearest centroid argmax_h psi(x, mu_h)
                t = np.empty(classes.size)
                for j in range(classes.size):
                    t[j] = s[mu[j]]
                out[i] = _argmax_nb(t, classes, n_classes, class_prior, y_nb)
    return out, fell_back, 0, -1, 0.0
