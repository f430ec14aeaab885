"""Pairwise local SDA's compiled rows (hlm.local_sda._pairwise).

The constraints c_gh of eq. (8) (the mean similarity over all pairs of class-g and class-h
neighbours), the log marginals of eq. (7), one row's model and ``_pairwise_predict_rows`` for
every row; built from local SDA's parts (``core``, ``local``) and following its rule with the
reference tests/oracles/local_sda_pairwise_reference.py.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hlm._numba_cache import cache_depends_on
from hlm.local_sda._kernels.core import _BOUNDARY, _CAP, _OK, BOUNDARY_RTOL, _log_z_nb, _pairwise_sum
from hlm.local_sda._kernels.local import (
    _centroids_nb,
    _decide_nb,
    _fallback_nb,
    _group_nb,
    _local_log_prior_nb,
    _max_nb,
    _single_class_nb,
    _solve_constraints_nb,
)

cache_depends_on(__name__, "hlm.local_sda._kernels.core", "hlm.local_sda._kernels.local")


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
