"""Bayesian and pairwise Bayesian local SDA's compiled kernels (hlm.local_sda._bayes).

The bins of a similarity matrix (``_bin_index``) and the neighbourhood histograms of every row
(``_pairwise_histograms``, ``_centroid_histograms``), which add the ranked neighbours one by one
so that one pass serves every k (a symmetric matrix counts each pair of neighbours once); the
centroids are local SDA's (``local._centroid_argmax_nb``). ``_pair_histograms`` collects one class
pair's histograms for its Dirichlet fit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hlm._numba_cache import cache_depends_on
from hlm.local_sda._kernels.local import _centroid_argmax_nb

cache_depends_on(__name__, "hlm.local_sda._kernels.local")


@njit(cache=True)
def _bin_index(S, edges):  # pragma: no cover - compiled
    """np.searchsorted(edges, S, side="right") of a matrix, as int32: the number of edges <= each value."""
    m, n = S.shape
    out = np.empty((m, n), dtype=np.int32)
    ne = edges.size
    for i in range(m):
        for j in range(n):
            x = S[i, j]
            if ne <= 64:  # a branch-free count for the usual few edges (sorted: the same number)
                c = 0
                for e in range(ne):
                    c += edges[e] <= x
                out[i, j] = c
                continue
            lo = 0
            hi = ne
            while lo < hi:
                mid = (lo + hi) >> 1
                if edges[mid] <= x:
                    lo = mid + 1
                else:
                    hi = mid
            out[i, j] = lo
    return out


@njit(cache=True)
def _pairwise_histograms(B_rows, B, nbs, y_idx, C, r, ks, symmetric, with_stat):  # pragma: no cover - compiled
    """Pairwise statistics (spec §5) of every row's neighbourhood prefixes ``nbs[i, :k]``, k in ``ks`` (ascending).

    Returns, with a leading axis over ``ks``: ``counts`` (k_g per row and class),
    ``hist`` (row x g x h x bin: m[j] = #{(z_i, z_l) in N_g x N_h : j(psi(z_i, z_l)) = j},
    i = l included) and, with ``with_stat``, ``stat`` (row x h x bin: the histogram
    of the bins of psi(x, z), z in N_h, from ``B_rows``). The neighbours are added
    in rank order, each with its pairs to those before it, so one pass serves every
    k; with a symmetric ``B`` each unordered pair is counted once and mirrored.
    """
    m = nbs.shape[0]
    nk = ks.size
    counts = np.zeros((nk, m, C), dtype=np.int64)
    hist = np.zeros((nk, m, C, C, r), dtype=np.int64)
    stat = np.zeros((nk, m, C, r if with_stat else 0), dtype=np.int64)
    acc = np.zeros((C, C, r), dtype=np.int64)
    cnt = np.zeros(C, dtype=np.int64)
    own = np.zeros((C, r), dtype=np.int64)
    for i in range(m):
        nb = nbs[i]
        acc[:] = 0
        cnt[:] = 0
        own[:] = 0
        q = 0
        for b in range(ks[nk - 1]):
            zb = nb[b]
            hb = y_idx[zb]
            row_b = B[zb]
            if symmetric:  # pair (a, b) and (b, a) share a bin: count into the upper class pair
                for a in range(b):
                    za = nb[a]
                    ga = y_idx[za]
                    if ga == hb:
                        acc[ga, ga, row_b[za]] += 2
                    elif ga < hb:
                        acc[ga, hb, row_b[za]] += 1
                    else:
                        acc[hb, ga, row_b[za]] += 1
            else:
                for a in range(b):
                    za = nb[a]
                    ga = y_idx[za]
                    acc[ga, hb, B[za, zb]] += 1
                    acc[hb, ga, row_b[za]] += 1
            acc[hb, hb, row_b[zb]] += 1
            cnt[hb] += 1
            if with_stat:
                own[hb, B_rows[i, zb]] += 1
            if b + 1 == ks[q]:
                counts[q, i] = cnt
                hist[q, i] = acc
                if symmetric:
                    for g in range(C):
                        for h in range(g):
                            hist[q, i, g, h] = acc[h, g]
                if with_stat:
                    stat[q, i] = own
                q += 1
    return counts, hist, stat


@njit(cache=True)
def _centroid_histograms(S_rows, S, B_rows, B, nbs, y_idx, C, r, ks, with_stat):  # pragma: no cover - compiled
    """Centroid statistics (spec §3) of every row's neighbourhood prefixes ``nbs[i, :k]``, k in ``ks`` (ascending).

    Returns, with a leading axis over ``ks``: ``counts`` (k_g), ``hist`` (row x g x h
    x bin: the histogram of the bins of psi(z, mu_h), z in N_g) and, with
    ``with_stat``, ``stat`` (row x h: the bin of psi(x, mu_h) from ``B_rows``, -1
    for absent h). The centroid mu_h is local SDA's (``local._centroid_argmax_nb``, ties by
    psi(x, v) = ``S_rows[i, v]``): its column sums add the class members in
    neighbour order, as local SDA's kernel does, kept up to date as neighbours join
    (the same additions in the same order), so one pass serves every k.
    """
    m, K = nbs.shape
    nk = ks.size
    counts = np.zeros((nk, m, C), dtype=np.int64)
    hist = np.zeros((nk, m, C, C, r), dtype=np.int64)
    stat = np.full((nk, m, C if with_stat else 0), -1, dtype=np.int64)
    members = np.empty((C, K), dtype=np.int64)
    sums = np.empty((C, K))
    n_mem = np.zeros(C, dtype=np.int64)
    mu = np.empty(C, dtype=np.int64)
    for i in range(m):
        nb = nbs[i]
        s = S_rows[i]
        n_mem[:] = 0
        q = 0
        for b in range(ks[nk - 1]):
            u = nb[b]
            h = y_idx[u]
            n = n_mem[h]
            for p in range(n):  # u joins class h: every member's column sum gains S[u, v]
                sums[h, p] += S[u, members[h, p]]
            acc = S[members[h, 0], u] if n > 0 else S[u, u]  # u's own column sum, members in order, u last
            for p in range(1, n):
                acc += S[members[h, p], u]
            if n > 0:
                acc += S[u, u]
            members[h, n] = u
            sums[h, n] = acc
            n_mem[h] = n + 1
            if b + 1 == ks[q]:
                for g in range(C):
                    counts[q, i, g] = n_mem[g]
                    mu[g] = _centroid_argmax_nb(sums[g], members[g], 0, n_mem[g], s) if n_mem[g] > 0 else -1
                for g in range(C):
                    for p in range(n_mem[g]):
                        row = B[members[g, p]]
                        for hh in range(C):
                            if mu[hh] >= 0:
                                hist[q, i, g, hh, row[mu[hh]]] += 1
                if with_stat:
                    for hh in range(C):
                        if mu[hh] >= 0:
                            stat[q, i, hh] = B_rows[i, mu[hh]]
                q += 1
    return counts, hist, stat


@njit(cache=True)
def _pair_histograms(hist, counts, g, h, rows):  # pragma: no cover - compiled
    """The histograms of pair (g, h) of the rows where both classes are present (n_rows x bins), in row order."""
    m = hist.shape[0]
    r = hist.shape[3]
    nr = 0
    for i in range(m):
        if counts[i, g] > 0 and counts[i, h] > 0:
            rows[nr] = i
            nr += 1
    out = np.empty((nr, r), dtype=np.int64)
    for a in range(nr):
        for j in range(r):
            out[a, j] = hist[rows[a], g, h, j]
    return out
