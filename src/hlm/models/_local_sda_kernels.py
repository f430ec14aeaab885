"""Compiled kernels of local SDA (hlm.models.local_sda): every row of a prediction in one call.

They repeat the floating-point operations of the row-by-row reference
(tests/oracles/local_sda_reference.py) in their order (numpy's pairwise
summation, the BLAS dot product, exp/log/expm1/pow, a port of scipy's
``brentq.c``), so they take the same decisions as the reference and agree with
its values to rounding (tests/test_local_sda.py).

The kernels of pairwise local SDA (hlm.models.local_sda_pairwise) and regularized
local SDA (hlm.models.local_sda_regularized), at the end, are built from the same
parts and follow the same rule with their references
(tests/oracles/local_sda_pairwise_reference.py, local_sda_regularized_reference.py).
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
def _group_nb(nb, y_idx, n_classes):  # pragma: no cover - compiled
    """The classes of a neighbourhood ``nb``: (classes present, ascending; start; members; counts).

    ``members[start[j]:start[j + 1]]`` are the neighbours of class ``classes[j]``, in neighbour
    order (``nb[y_nb == g]``); ``counts`` holds k_g per class index (0 for absent classes).
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
    return classes, start, members, counts


@njit(cache=True)
def _centroids_nb(S, s, members, start):  # pragma: no cover - compiled
    """``local_centroids``: mu per class group of ``_group_nb``; column sums add the class members in
    neighbour order, as numpy's ``S[np.ix_(idx, idx)].sum(axis=0)`` does."""
    G = start.size - 1
    mu = np.empty(G, dtype=np.int64)
    sums = np.empty(members.size)
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
    return mu


@njit(cache=True)
def _solve_constraints_nb(c, lo, hi, omega, discrete, stop_early, w):  # pragma: no cover - compiled
    """The statuses and lambdas of a G x G matrix of moment constraints ``c`` (``fit_row``'s loop):
    boundary constraints first (no root finding), then ``_solve_lambda_nb`` per (g, h) in row order;
    with ``stop_early`` the solve stops at the first degenerate one (the rest stay unsolved).

    Returns (lambda, status codes, brent error code, its x).
    """
    G = c.shape[0]
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
                    return lam, status, e, lam_gh
                if stop_early and st != _OK:
                    done = True
                    break
            if done:
                break
    return lam, status, 0, 0.0


@njit(cache=True)
def _local_log_prior_nb(classes, counts, k, log_prior_global, global_prior):  # pragma: no cover - compiled
    """log P(g) per class of G_x: the fit-set prior's log, or log(k_g / k) (local, the default)."""
    G = classes.size
    log_prior = np.empty(G)
    for g in range(G):
        if global_prior:
            log_prior[g] = log_prior_global[classes[g]]
        else:
            log_prior[g] = np.log(np.float64(counts[classes[g]]) / np.float64(k))
    return log_prior


@njit(cache=True)
def _centroid_means_nb(S, members, start, mu):  # pragma: no cover - compiled
    """c[g, h] = mean_{z in N_g} S[z, mu_h]: the class-g members added in neighbour order, as numpy's
    ``S[np.ix_(idx, mu)].mean(axis=0)``."""
    G = start.size - 1
    c = np.empty((G, G))
    for g in range(G):
        a0, a1 = start[g], start[g + 1]
        for h in range(G):
            acc = S[members[a0], mu[h]]
            for p in range(a0 + 1, a1):
                acc += S[members[p], mu[h]]
            c[g, h] = acc / np.float64(a1 - a0)
    return c


@njit(cache=True)
def _row_model_nb(S, s, nb, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior,
                  stop_early, w):  # pragma: no cover - compiled
    """``fit_row`` for one row: (classes, mu, c, lam, status codes, log prior, brent error, its x).

    Centroid column sums and the means c add the class members in neighbour order, as numpy's
    ``S[np.ix_(idx, idx)].sum(axis=0)`` and ``.mean(axis=0)`` do.
    """
    classes, start, members, counts = _group_nb(nb, y_idx, n_classes)
    mu = _centroids_nb(S, s, members, start)
    c = _centroid_means_nb(S, members, start, mu)
    log_prior = _local_log_prior_nb(classes, counts, nb.size, log_prior_global, global_prior)
    lam, status, err, err_x = _solve_constraints_nb(c, lo, hi, omega, discrete, stop_early, w)
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
def _fallback_nb(mode, s, mu, classes, n_classes, class_prior, y_nb):  # pragma: no cover - compiled
    """The fallback rule's class index: the k-NN vote (mode 1), else the local nearest centroid
    argmax_h psi(x, mu_h) [V: Sadowski]; ties by ``_break_ties_nb``."""
    if mode == 1:  # k-NN vote
        votes = np.zeros(n_classes)
        for q in range(y_nb.size):
            votes[y_nb[q]] += 1.0
        return _break_ties_nb(votes, class_prior, y_nb)
    t = np.empty(classes.size)  # local nearest centroid argmax_h psi(x, mu_h)
    for j in range(classes.size):
        t[j] = s[mu[j]]
    return _argmax_nb(t, classes, n_classes, class_prior, y_nb)


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
            out[i] = _fallback_nb(mode, s, mu, classes, n_classes, class_prior, y_nb)
    return out, fell_back, 0, -1, 0.0


# ----------------------------------------------------------------- shared by the variants below
#: numpy's NPY_LOGE2 (``np.logaddexp`` of equal arguments adds it)
_LOGE2 = 0.693147180559945309417232121458176568


@njit(cache=True)
def _single_class_nb(nb, y_idx, y_nb):  # pragma: no cover - compiled
    """Fill ``y_nb`` with the neighbours' class indices; True if they are all one class (|G_x| = 1)."""
    single = True
    for q in range(nb.size):
        y_nb[q] = y_idx[nb[q]]
        if y_nb[q] != y_nb[0]:
            single = False
    return single


@njit(cache=True)
def _decide_nb(scores, classes, n_classes, class_prior, y_nb, log_post_row):  # pragma: no cover - compiled
    """The argmax of finite class scores (tie rule of ``_argmax_nb``), and the log posteriors
    scores - logsumexp(scores) over G_x written into ``log_post_row`` (-inf stays for absent classes).
    Returns -1 if every score is -inf (the caller falls back)."""
    top = -np.inf
    for g in range(scores.size):
        if scores[g] > top:
            top = scores[g]
    if top == -np.inf:
        return -1
    total = 0.0
    for g in range(scores.size):
        total += np.exp(scores[g] - top)
    lse = top + np.log(total)
    for g in range(scores.size):
        log_post_row[classes[g]] = scores[g] - lse
    return _argmax_nb(scores, classes, n_classes, class_prior, y_nb)


@njit(cache=True)
def _logaddexp_nb(x, y):  # pragma: no cover - compiled
    """numpy's ``npy_logaddexp``: log(e^x + e^y), exact for x = -inf or y = -inf."""
    if x == y:
        return x + _LOGE2
    tmp = x - y
    if tmp > 0:
        return x + np.log1p(np.exp(-tmp))
    if tmp <= 0:
        return y + np.log1p(np.exp(tmp))
    return tmp


# ----------------------------------------------------------------- pairwise local SDA (local_sda_pairwise)
@njit(cache=True)
def _pairwise_means_nb(S, members, start, buf):  # pragma: no cover - compiled
    """c[g, h] of eq. (8): the mean of S[z_i, z_j] over the k_g k_h pairs z_i in N_g, z_j in N_h (self-pairs
    included when g = h), as numpy's ``S[np.ix_(N_g, N_h)].mean()``: the pairs in row-major order, pairwise
    summation, then / (k_g k_h). ``buf`` is scratch of at least k^2."""
    G = start.size - 1
    c = np.empty((G, G))
    for g in range(G):
        for h in range(G):
            n = 0
            for p in range(start[g], start[g + 1]):
                zi = members[p]
                for q in range(start[h], start[h + 1]):
                    buf[n] = S[zi, members[q]]
                    n += 1
            c[g, h] = _pairwise_sum(buf, 0, n) / np.float64(n)
    return c


@njit(cache=True)
def _pairwise_log_scores_nb(members, start, s, c, lam, status, log_prior, lo, hi, omega, discrete, exact, w,
                            a):  # pragma: no cover - compiled
    """Pairwise ``log_scores``: log P(g) + sum_h log P_h(T_h(x) | g), the log of eq. (7) being
    logsumexp_{z in N_h}(lambda_gh psi(x, z)) - log k_h - log Z(lambda_gh) (eqs. (7), (9), (1)).

    As local SDA's: with ``exact`` a capped lambda is used as it is and a boundary constraint is the
    point mass at c, giving log(#{z in N_h: |psi(x, z) - c| <= 1e-9 r} / k_h) (-inf if none);
    otherwise a degenerate constraint makes the class's score NaN. ``a`` is scratch of size k.
    """
    G = start.size - 1
    scores = log_prior.copy()
    tol = BOUNDARY_RTOL * (hi - lo)
    for g in range(G):
        for h in range(G):
            st = status[g, h]
            a0, a1 = start[h], start[h + 1]
            n = a1 - a0
            if st == _OK or (exact and st == _CAP):
                lam_gh = lam[g, h]
                for q in range(n):
                    a[q] = lam_gh * s[members[a0 + q]]
                top = _max_nb(a[:n])
                for q in range(n):
                    a[q] = np.exp(a[q] - top)
                lse = np.log(_pairwise_sum(a, 0, n)) + top
                scores[g] += (lse - np.log(np.float64(n))) - _log_z_nb(lam_gh, lo, hi, omega, discrete, w)
            elif exact and st == _BOUNDARY:
                hits = 0
                for q in range(a0, a1):
                    if abs(s[members[q]] - c[g, h]) <= tol:
                        hits += 1
                scores[g] += np.log(np.float64(hits) / np.float64(n)) if hits > 0 else -np.inf
            else:
                scores[g] = np.nan
    return scores


@njit(cache=True)
def _pairwise_row_nb(S, s, nb, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior,
                     stop_early, w, buf):  # pragma: no cover - compiled
    """One row's pairwise model: (classes, start, members, c, lambda, status codes, log prior, brent error,
    its x); ``members[start[j]:start[j + 1]]`` is N_h of class ``classes[j]`` in neighbour order."""
    classes, start, members, counts = _group_nb(nb, y_idx, n_classes)
    c = _pairwise_means_nb(S, members, start, buf)
    log_prior = _local_log_prior_nb(classes, counts, nb.size, log_prior_global, global_prior)
    lam, status, err, err_x = _solve_constraints_nb(c, lo, hi, omega, discrete, stop_early, w)
    return classes, start, members, c, lam, status, log_prior, err, err_x


@njit(cache=True)
def _pairwise_predict_rows(S, S_te, nbs, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global,
                           global_prior, mode, class_prior):  # pragma: no cover - compiled
    """Pairwise local SDA for every row, as ``_predict_rows`` with the pairwise model and marginal.

    Returns (class index per row, fallback used per row, log posteriors (m x n_classes; a row that
    falls back or has one class: 0 at its class, -inf elsewhere), brent error code, its row, its x).
    """
    m, k = nbs.shape
    out = np.empty(m, dtype=np.int64)
    fell_back = np.zeros(m, dtype=np.bool_)
    log_post = np.full((m, n_classes), -np.inf)
    w = np.empty(omega.size)
    buf = np.empty(k * k)
    a = np.empty(k)
    y_nb = np.empty(k, dtype=np.int64)
    exact = mode == 2
    for i in range(m):
        nb = nbs[i]
        s = S_te[i]
        if _single_class_nb(nb, y_idx, y_nb):  # |G_x| = 1 -> that class
            out[i] = y_nb[0]
            log_post[i, y_nb[0]] = 0.0
            continue
        classes, start, members, c, lam, status, log_prior, err, err_x = _pairwise_row_nb(
            S, s, nb, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior, not exact, w, buf
        )
        if err != 0:
            return out, fell_back, log_post, err, i, err_x
        degenerate = False
        for g in range(classes.size):
            for h in range(classes.size):
                if status[g, h] != _OK:
                    degenerate = True
        winner = -1
        if not (degenerate and not exact):
            scores = _pairwise_log_scores_nb(members, start, s, c, lam, status, log_prior, lo, hi, omega, discrete,
                                             exact, w, a)
            winner = _decide_nb(scores, classes, n_classes, class_prior, y_nb, log_post[i])
        if winner < 0:  # degenerate, or every class scores -inf (exact)
            fell_back[i] = True
            mu = _centroids_nb(S, s, members, start) if mode != 1 else np.empty(0, dtype=np.int64)
            winner = _fallback_nb(mode, s, mu, classes, n_classes, class_prior, y_nb)
            log_post[i, winner] = 0.0
        out[i] = winner
    return out, fell_back, log_post, 0, -1, 0.0


# ----------------------------------------------------------------- regularized local SDA (local_sda_regularized)
# P_ave needs the local SDA model of every fit object per k: ~10x the constraints of the test rows. Their
# lambdas are local SDA's roots to the same tolerance, but Brent starts from a bracket read off a table of
# m(lambda) per support (no doubling: ~5 evaluations of m instead of ~15), and a memo per support keeps the
# roots already found (lambda is a function of c and Omega only, so the memo changes no result). P_ave is
# kept as its components (lambda, z per object and pair) and evaluated only where a test row reads it.
_TABLE_STEPS = 2.0 ** (np.arange(-24, 80) / 8.0)  # 1/8 ... 939.6
#: lambda r of the table: -cap, -2^(j/8) ... 0 ... 2^(j/8), cap (ascending; ``_solve_lambda_table_nb``)
LAMBDA_TABLE_T = np.concatenate([[-LAMBDA_CAP], -_TABLE_STEPS[::-1], [0.0], _TABLE_STEPS, [LAMBDA_CAP]])


@njit(cache=True)
def _mean_table_nb(t_lam, omega, w):  # pragma: no cover - compiled
    """m(lambda) of the discrete support at every lambda of the table."""
    t_m = np.empty(t_lam.size)
    for j in range(t_lam.size):
        t_m[j] = _discrete_mean_nb(t_lam[j], omega, w)
    return t_m


@njit(cache=True)
def _solve_lambda_table_nb(c, omega, t_lam, t_m, w):  # pragma: no cover - compiled
    """``_solve_lambda_nb`` on a discrete support, bracketed by the table (t_lam = LAMBDA_TABLE_T / r,
    t_m = m(t_lam)): the same boundary and cap statuses (the table's ends are the caps), the root by
    Brent from the table's bracket. Returns (lambda, status code, brent error code)."""
    lo, hi = omega[0], omega[omega.size - 1]
    r = hi - lo
    tol = BOUNDARY_RTOL * r
    if r <= 0 or c - lo <= tol:
        return -np.inf, _BOUNDARY, 0
    if hi - c <= tol:
        return np.inf, _BOUNDARY, 0
    a, b = 0, t_lam.size - 1
    fa = t_m[a] - c
    fb = t_m[b] - c
    if fa > 0:  # root below -cap
        return t_lam[a], _CAP, 0
    if fb < 0:  # root above cap
        return t_lam[b], _CAP, 0
    if fa == 0.0:
        return t_lam[a], _OK, 0
    if fb == 0.0:
        return t_lam[b], _OK, 0
    while b - a > 1:  # bisect the table, keeping f(a) < 0 < f(b)
        mid = (a + b) // 2
        fm = t_m[mid] - c
        if fm == 0.0:
            return t_lam[mid], _OK, 0
        if fm < 0:
            a, fa = mid, fm
        else:
            b, fb = mid, fm
    lam, err = _brentq_nb(c, t_lam[a], t_lam[b], fa, fb, XTOL / r, _BRENT_RTOL, _BRENT_MAXITER, lo, hi, omega,
                          True, w)
    return lam, _OK, err


@njit(cache=True)
def _loo_model_nb(S, i, nb, y_idx, n_classes, omega, t_lam, t_m, memo, w):  # pragma: no cover - compiled
    """Local SDA's model of fit object i on its leave-one-out neighbourhood ``nb``, as its pmfs: (classes,
    lambda, z, brent error, its x). Every constraint is solved (``_solve_lambda_table_nb``) through
    ``memo`` (c -> (lambda, status, z) on this support); z is the sum of the tilted weights (``_tilt``) of a
    solved or capped lambda, so the pmf is ``_tilt`` / z; a boundary constraint has lambda = -inf or +inf
    (the point mass at that end of Omega) and z = 1."""
    classes, start, members, _ = _group_nb(nb, y_idx, n_classes)
    mu = _centroids_nb(S, S[i], members, start)
    c = _centroid_means_nb(S, members, start, mu)
    G = classes.size
    lam = np.empty((G, G))
    z = np.empty((G, G))
    for g in range(G):
        for h in range(G):
            key = c[g, h]
            if key in memo:
                lam[g, h], _, z[g, h] = memo[key]
                continue
            lam_gh, st, err = _solve_lambda_table_nb(key, omega, t_lam, t_m, w)
            if err != 0:
                return classes, lam, z, err, lam_gh
            z_gh = 1.0
            if st != _BOUNDARY:
                _tilt(lam_gh, omega, w)
                z_gh = _pairwise_sum(w, 0, omega.size)
            lam[g, h], z[g, h] = lam_gh, z_gh
            memo[key] = (lam_gh, st, z_gh)
    return classes, lam, z, 0, 0.0


@njit(cache=True)
def _loo_pmfs_nb(S, order, k, y_idx, n_classes, omega, t_lam, t_m, memo, w):  # pragma: no cover - compiled
    """The leave-one-out local pmfs behind P_ave: for every fit object i, its local SDA model on its
    neighbourhood ``order[i, :k]`` (``_loo_model_nb``). Returns (lambda, z) per object and pair of classes
    (n x n_classes x n_classes; lambda NaN where the pair is not in the neighbourhood), the count of
    objects per pair, brent error code, its object, its x."""
    n = S.shape[0]
    lam_all = np.full((n, n_classes, n_classes), np.nan)
    z_all = np.full((n, n_classes, n_classes), np.nan)
    count = np.zeros((n_classes, n_classes), dtype=np.int64)
    for i in range(n):
        classes, lam, z, err, err_x = _loo_model_nb(S, i, order[i, :k], y_idx, n_classes, omega, t_lam, t_m,
                                                    memo, w)
        if err != 0:
            return lam_all, z_all, count, err, i, err_x
        for g in range(classes.size):
            for h in range(classes.size):
                lam_all[i, classes[g], classes[h]] = lam[g, h]
                z_all[i, classes[g], classes[h]] = z[g, h]
                count[classes[g], classes[h]] += 1
    return lam_all, z_all, count, 0, -1, 0.0


@njit(cache=True)
def _pave_at_nb(lam_all, z_all, count, omega, g, h, j):  # pragma: no cover - compiled
    """P_ave(omega_j | g, h): the mean over the objects whose neighbourhood holds g and h of their pmf at
    omega_j (``_tilt`` / z, or the point mass), added in object order; uniform 1 / r if there are none."""
    r = omega.size
    if count[g, h] == 0:
        return 1.0 / r
    total = 0.0
    for i in range(lam_all.shape[0]):
        lam = lam_all[i, g, h]
        if np.isnan(lam):
            continue
        if lam == -np.inf:
            total += 1.0 if j == 0 else 0.0
        elif lam == np.inf:
            total += 1.0 if j == r - 1 else 0.0
        else:
            top = omega[r - 1] if lam >= 0 else omega[0]
            total += np.exp(lam * (omega[j] - top)) / z_all[i, g, h]
    return total / np.float64(count[g, h])


@njit(cache=True)
def _pave_nb(lam_all, z_all, count, omega):  # pragma: no cover - compiled
    """P_ave on all of Omega (n_classes x n_classes x r), by ``_pave_at_nb``."""
    C = count.shape[0]
    out = np.empty((C, C, omega.size))
    for g in range(C):
        for h in range(C):
            for j in range(omega.size):
                out[g, h, j] = _pave_at_nb(lam_all, z_all, count, omega, g, h, j)
    return out


@njit(cache=True)
def _nearest_nb(omega, t):  # pragma: no cover - compiled
    """Index of the point of the sorted ``omega`` nearest to t (``np.argmin(np.abs(omega - t))``: the
    lower one of two at equal distance)."""
    r = omega.size
    a, b = 0, r
    while a < b:  # the first index with omega >= t
        mid = (a + b) // 2
        if omega[mid] < t:
            a = mid + 1
        else:
            b = mid
    if a == 0:
        return 0
    if a == r:
        return r - 1
    return a - 1 if abs(omega[a - 1] - t) <= abs(omega[a] - t) else a


@njit(cache=True)
def _regularized_predict_rows(S, S_te, nbs, y_idx, n_classes, omega, log_prior_global, global_prior, mode,
                              class_prior, loo_lam, loo_z, loo_count, zetas):  # pragma: no cover - compiled
    """Regularized local SDA for every row and every zeta in ``zetas``: one local SDA model per row serves
    every zeta. log P~(psi(x, mu_h) | g) = logaddexp(log(1 - zeta) + log P(psi(x, mu_h) | g),
    log zeta + log P_ave(omega_j | g, h)), omega_j the point of Omega nearest to psi(x, mu_h) and P_ave
    from the leave-one-out pmfs (``loo_*`` of ``_loo_pmfs_nb``, by ``_pave_at_nb``); the local
    log pmf is local SDA's term (``exact``'s for a degenerate constraint). zeta = 0 is local SDA itself,
    its fallback included; for zeta > 0 the row falls back only if every class scores -inf.

    Returns (class index (n_zeta x m), fallback used (n_zeta x m), log posteriors (n_zeta x m x
    n_classes), brent error code, its row, its x).
    """
    n_z = zetas.size
    m, k = nbs.shape
    out = np.empty((n_z, m), dtype=np.int64)
    fell_back = np.zeros((n_z, m), dtype=np.bool_)
    log_post = np.full((n_z, m, n_classes), -np.inf)
    r = omega.size
    lo, hi = omega[0], omega[r - 1]
    tol = BOUNDARY_RTOL * (hi - lo)
    w = np.empty(r)
    y_nb = np.empty(k, dtype=np.int64)
    exact = mode == 2
    only_local = True  # every zeta is 0: local SDA, which stops solving at the first degenerate constraint
    for zi in range(n_z):
        if zetas[zi] != 0.0:
            only_local = False
    for i in range(m):
        nb = nbs[i]
        s = S_te[i]
        if _single_class_nb(nb, y_idx, y_nb):  # |G_x| = 1 -> that class
            for zi in range(n_z):
                out[zi, i] = y_nb[0]
                log_post[zi, i, y_nb[0]] = 0.0
            continue
        classes, mu, c, lam, status, log_prior, err, err_x = _row_model_nb(
            S, s, nb, y_idx, n_classes, lo, hi, omega, True, log_prior_global, global_prior,
            only_local and not exact, w
        )
        if err != 0:
            return out, fell_back, log_post, err, i, err_x
        G = classes.size
        local = np.empty((G, G))  # log P(psi(x, mu_h) | g), local SDA's exponential (exact for a point mass)
        ave = np.empty((G, G))  # log P_ave at the nearest point of Omega
        degenerate = False
        for g in range(G):
            for h in range(G):
                st = status[g, h]
                t_h = s[mu[h]]
                if st == _OK or st == _CAP:
                    local[g, h] = lam[g, h] * t_h - _discrete_log_z_nb(lam[g, h], omega, w)
                elif st == _BOUNDARY:
                    local[g, h] = 0.0 if abs(t_h - c[g, h]) <= tol else -np.inf
                else:  # unsolved (only when every zeta is 0 and an earlier constraint was degenerate)
                    local[g, h] = np.nan
                degenerate = degenerate or st != _OK
                if not only_local:
                    ave[g, h] = np.log(_pave_at_nb(loo_lam, loo_z, loo_count, omega, classes[g], classes[h],
                                                   _nearest_nb(omega, t_h)))
        for zi in range(n_z):
            zeta = zetas[zi]
            winner = -1
            if zeta == 0.0:  # local SDA (``_predict_rows``, ``_log_scores_nb``)
                if not (degenerate and not exact):
                    scores = log_prior.copy()
                    for g in range(G):
                        for h in range(G):
                            scores[g] += local[g, h]
                    winner = _decide_nb(scores, classes, n_classes, class_prior, y_nb, log_post[zi, i])
            else:
                log_keep = np.log1p(-zeta)
                log_zeta = np.log(zeta)
                scores = log_prior.copy()
                for g in range(G):
                    for h in range(G):
                        scores[g] += _logaddexp_nb(log_keep + local[g, h], log_zeta + ave[g, h])
                winner = _decide_nb(scores, classes, n_classes, class_prior, y_nb, log_post[zi, i])
            if winner < 0:
                fell_back[zi, i] = True
                winner = _fallback_nb(mode, s, mu, classes, n_classes, class_prior, y_nb)
                log_post[zi, i, winner] = 0.0
            out[zi, i] = winner
    return out, fell_back, log_post, 0, -1, 0.0
