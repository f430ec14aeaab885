"""Regularized local SDA's compiled kernels (hlm.local_sda._regularized).

P_ave needs the local SDA model of every fit object per k: ~10x the constraints of the test rows. Their
lambdas are local SDA's roots to the same tolerance, but Brent starts from a bracket read off a table of
m(lambda) per support (no doubling: ~5 evaluations of m instead of ~15), and a memo per support keeps the
roots already found (lambda is a function of c and Omega only, so the memo changes no result). P_ave is
kept as its components (lambda, z per object and pair) and evaluated only where a test row reads it.
Built from local SDA's parts (``core``, ``local``); the reference is
tests/oracles/local_sda_regularized_reference.py.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hlm._numba_cache import cache_depends_on
from hlm.local_sda._kernels.core import (
    _BOUNDARY,
    _BRENT_MAXITER,
    _BRENT_RTOL,
    _CAP,
    _OK,
    BOUNDARY_RTOL,
    LAMBDA_CAP,
    UNIFORM,
    XTOL,
    _boundary_lambda_nb,
    _brentq_nb,
    _discrete_mean_nb,
    _log_z_nb,
    _pairwise_sum,
    _tilt,
    _uniform_z_nb,
)
from hlm.local_sda._kernels.local import (
    _centroid_means_nb,
    _centroids_nb,
    _decide_nb,
    _fallback_nb,
    _group_nb,
    _row_model_nb,
    _single_class_nb,
)

cache_depends_on(__name__, "hlm.local_sda._kernels.core", "hlm.local_sda._kernels.local")

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
def _solve_lambda_table_nb(c, omega, t_lam, t_m, mode, w):  # pragma: no cover - compiled
    """``_solve_lambda_nb`` on a discrete support, bracketed by the table (t_lam = LAMBDA_TABLE_T / r,
    t_m = m(t_lam)): the same boundary and cap statuses (the table's ends are the caps), the root by
    Brent from the table's bracket, m evaluated as ``_mean_nb`` does for ``mode`` (1: summed, or ``UNIFORM``
    for an equally spaced support: closed form). Returns (lambda, status code, brent error code)."""
    lo, hi = omega[0], omega[omega.size - 1]
    point_mass = _boundary_lambda_nb(c, lo, hi)
    if point_mass != 0.0:
        return point_mass, _BOUNDARY, 0
    r = hi - lo
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
                          mode, w)
    return lam, _OK, err


@njit(cache=True)
def _loo_model_nb(S, i, nb, y_idx, n_classes, omega, t_lam, t_m, mode, memo, w):  # pragma: no cover - compiled
    """Local SDA's model of fit object i on its leave-one-out neighbourhood ``nb``, as its pmfs: (classes,
    lambda, z, brent error, its x). Every constraint is solved (``_solve_lambda_table_nb``) through
    ``memo`` (c -> (lambda, status, z) on this support); z is the sum of the tilted weights (``_tilt``) of a
    solved or capped lambda (in closed form for ``mode`` = ``UNIFORM``), so the pmf is ``_tilt`` / z; a
    boundary constraint has lambda = -inf or +inf (the point mass at that end of Omega) and z = 1."""
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
            lam_gh, st, err = _solve_lambda_table_nb(key, omega, t_lam, t_m, mode, w)
            if err != 0:
                return classes, lam, z, err, lam_gh
            z_gh = 1.0
            if st != _BOUNDARY and mode == UNIFORM:
                z_gh = _uniform_z_nb(lam_gh, omega[0], omega[omega.size - 1], omega.size)
            elif st != _BOUNDARY:
                _tilt(lam_gh, omega, w)
                z_gh = _pairwise_sum(w, 0, omega.size)
            lam[g, h], z[g, h] = lam_gh, z_gh
            memo[key] = (lam_gh, st, z_gh)
    return classes, lam, z, 0, 0.0


@njit(cache=True)
def _loo_pmfs_nb(S, order, k, y_idx, n_classes, omega, t_lam, t_m, mode, memo, w):  # pragma: no cover - compiled
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
                                                    mode, memo, w)
        if err != 0:
            return lam_all, z_all, count, err, i, err_x
        for g in range(classes.size):
            for h in range(classes.size):
                lam_all[i, classes[g], classes[h]] = lam[g, h]
                z_all[i, classes[g], classes[h]] = z[g, h]
                count[classes[g], classes[h]] += 1
    return lam_all, z_all, count, 0, -1, 0.0


@njit(cache=True)
def _log_pave_at_nb(lam_all, z_all, count, omega, g, h, j):  # pragma: no cover - compiled
    """log P_ave(omega_j | g, h), in the log domain: the log of the mean over the objects whose
    neighbourhood holds g and h of their pmf at omega_j, log pmf = lambda (omega_j - top) - log z (or the
    point mass: 0 at its end of Omega, else -inf), by a log-sum-exp in object order; -log r (uniform) if
    there are none (one pass, rescaling the sum when the maximum grows). A pmf too small for a float64
    (e^-1000 at a capped lambda) still counts."""
    r = omega.size
    if count[g, h] == 0:
        return -np.log(np.float64(r))
    top_term = -np.inf  # the running maximum of the log pmfs, and the sum of e^(log pmf - it)
    total = 0.0
    for i in range(lam_all.shape[0]):
        lam = lam_all[i, g, h]
        if np.isnan(lam):
            continue
        if lam == -np.inf:
            t = 0.0 if j == 0 else -np.inf
        elif lam == np.inf:
            t = 0.0 if j == r - 1 else -np.inf
        else:
            top = omega[r - 1] if lam >= 0 else omega[0]
            t = lam * (omega[j] - top) - np.log(z_all[i, g, h])
        if t == -np.inf:
            continue
        if t <= top_term:
            total += np.exp(t - top_term)
        else:
            total = total * np.exp(top_term - t) + 1.0
            top_term = t
    if top_term == -np.inf:
        return -np.inf
    return top_term + np.log(total) - np.log(np.float64(count[g, h]))


@njit(cache=True)
def _pave_nb(lam_all, z_all, count, omega):  # pragma: no cover - compiled
    """P_ave on all of Omega (n_classes x n_classes x r), exp of ``_log_pave_at_nb``."""
    C = count.shape[0]
    out = np.empty((C, C, omega.size))
    for g in range(C):
        for h in range(C):
            for j in range(omega.size):
                out[g, h, j] = np.exp(_log_pave_at_nb(lam_all, z_all, count, omega, g, h, j))
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
def _regularized_predict_rows(S, S_te, nbs, y_idx, n_classes, omega, support_mode, log_prior_global, global_prior,
                              mode, class_prior, loo_lam, loo_z, loo_count, zetas, joint):  # pragma: no cover
    """Regularized local SDA for every row and every zeta in ``zetas``: one local SDA model per row serves
    every zeta. The marginal form: log P~(psi(x, mu_h) | g) = logaddexp(log(1 - zeta) + log P(psi(x, mu_h) | g),
    log zeta + log P_ave(omega_j | g, h)), summed over h; the joint form (``joint``): log P~(T(x) | g) =
    logaddexp(log(1 - zeta) + sum_h log P(psi(x, mu_h) | g), log zeta + sum_h log P_ave(omega_j | g, h));
    omega_j the point of Omega nearest to psi(x, mu_h) and P_ave
    from the leave-one-out pmfs (``loo_*`` of ``_loo_pmfs_nb``, by ``_log_pave_at_nb``); the local
    log pmf is local SDA's term (``exact``'s for a degenerate constraint). zeta = 0 is local SDA itself,
    its fallback included; for zeta > 0 the row falls back only if every class scores -inf. The rows'
    lambdas and log Z are local SDA's with m and Z evaluated as ``_mean_nb`` does for ``support_mode``
    (1, or ``UNIFORM`` on an equally spaced support: closed form, equal to rounding; the caller passes 1
    for zeta = 0, which is local SDA's own summation).

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
            S, s, nb, y_idx, n_classes, lo, hi, omega, support_mode, log_prior_global, global_prior,
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
                    local[g, h] = lam[g, h] * t_h - _log_z_nb(lam[g, h], lo, hi, omega, support_mode, w)
                elif st == _BOUNDARY:
                    local[g, h] = 0.0 if abs(t_h - c[g, h]) <= tol else -np.inf
                else:  # unsolved (only when every zeta is 0 and an earlier constraint was degenerate)
                    local[g, h] = np.nan
                degenerate = degenerate or st != _OK
                if not only_local:
                    ave[g, h] = _log_pave_at_nb(loo_lam, loo_z, loo_count, omega, classes[g], classes[h],
                                                _nearest_nb(omega, t_h))
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
                    if joint:
                        log_local = 0.0
                        log_ave = 0.0
                        for h in range(G):
                            log_local += local[g, h]
                            log_ave += ave[g, h]
                        scores[g] += _logaddexp_nb(log_keep + log_local, log_zeta + log_ave)
                    else:
                        for h in range(G):
                            scores[g] += _logaddexp_nb(log_keep + local[g, h], log_zeta + ave[g, h])
                winner = _decide_nb(scores, classes, n_classes, class_prior, y_nb, log_post[zi, i])
            if winner < 0:
                fell_back[zi, i] = True
                winner = _fallback_nb(mode, s, mu, classes, n_classes, class_prior, y_nb)
                log_post[zi, i, winner] = 0.0
            out[zi, i] = winner
    return out, fell_back, log_post, 0, -1, 0.0


#: numpy's NPY_LOGE2 (``np.logaddexp`` of equal arguments adds it)
_LOGE2 = 0.693147180559945309417232121458176568


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
