"""Local SDA's compiled rows (hlm.local_sda._local_sda): one neighbourhood's model and its decision.

The class groups of a neighbourhood, the local centroids, the moment constraints and their
lambdas, the log prior and class scores, the tie rule and the fallback, and ``_predict_rows``,
which runs them for every row of a prediction. The variants' kernels (``pairwise``,
``regularized``, ``bayes``) reuse these parts. They repeat the reference's floating-point
operations in its order (tests/oracles/local_sda_reference.py; see ``core``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hlm._numba_cache import cache_depends_on
from hlm.local_sda._kernels.core import (
    _BOUNDARY,
    _CAP,
    _OK,
    _UNSOLVED,
    BOUNDARY_RTOL,
    _log_z_nb,
    _solve_lambda_nb,
)

cache_depends_on(__name__, "hlm.local_sda._kernels.core")


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
        mu[j] = _centroid_argmax_nb(sums, members, a0, a1, s)
    return mu


@njit(cache=True)
def _centroid_argmax_nb(sums, members, a0, a1, s):  # pragma: no cover - compiled
    """The centroid rule (``local_centroids``) among ``members[a0:a1]`` with column sums ``sums[a0:a1]``:
    the largest sum (NaN if one is NaN, as ``np.max``) with the sums isclose to it (rtol 1e-12, atol 0),
    then the larger s[v], then the lower index v. Also Bayesian local SDA's (``bayes``)."""
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
    return best


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
    """``hlm.neighbors._knn.break_vote_ties`` of one row."""
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

    Returns (class index per row, fallback used per row, brent error code, its row, its x): those of
    ``_log_posterior_rows``, without the posteriors.
    """
    out, fell_back, _, err, err_row, err_x = _log_posterior_rows(
        S, S_te, nbs, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior, mode, class_prior
    )
    return out, fell_back, err, err_row, err_x


# ----------------------------------------------------------------- shared by the variants
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
def _log_posterior_rows(S, S_te, nbs, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior,
                        mode, class_prior):  # pragma: no cover - compiled
    """``_reference_predict_row`` for every row, with the log posteriors: the softmax of the class scores
    over the classes in N (``_decide_nb``; -inf for the others), and for a row of one class in N or decided
    by the fallback rule 0 at its class, -inf elsewhere (docs/beyond-the-paper-spec.md section 3).

    Returns (class index per row, fallback used per row, log posteriors (m x n_classes), brent error code,
    its row, its x).
    """
    m, k = nbs.shape
    out = np.empty(m, dtype=np.int64)
    fell_back = np.zeros(m, dtype=np.bool_)
    log_post = np.full((m, n_classes), -np.inf)
    w = np.empty(omega.size)
    y_nb = np.empty(k, dtype=np.int64)
    exact = mode == 2
    for i in range(m):
        nb = nbs[i]
        s = S_te[i]
        if _single_class_nb(nb, y_idx, y_nb):  # |G_x| = 1 -> that class
            out[i] = y_nb[0]
            log_post[i, y_nb[0]] = 0.0
            continue
        classes, mu, c, lam, status, log_prior, err, err_x = _row_model_nb(
            S, s, nb, y_idx, n_classes, lo, hi, omega, discrete, log_prior_global, global_prior, not exact, w
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
            scores = _log_scores_nb(classes, mu, s, c, lam, status, log_prior, lo, hi, omega, discrete, exact, w)
            winner = _decide_nb(scores, classes, n_classes, class_prior, y_nb, log_post[i])
        if winner < 0:  # degenerate, or every class scores -inf (exact)
            fell_back[i] = True
            winner = _fallback_nb(mode, s, mu, classes, n_classes, class_prior, y_nb)
            log_post[i] = -np.inf
            log_post[i, winner] = 0.0
        out[i] = winner
    return out, fell_back, log_post, 0, -1, 0.0
