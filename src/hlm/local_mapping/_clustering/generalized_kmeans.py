"""Generalized k-means (k-medoids by alternation), paper section 2.2 and 5.1.

Initialization by the k-center (farthest-first) algorithm, which uses only
pairwise distances (paper section 5.1): the first prototype is the exact
1-median (minimum column sum ``sum_i R[i, m]``); each further prototype is the
point farthest from its nearest prototype (``max_i min_m R[i, m]``, ties: lowest
index). Then alternate: assign each point to the nearest prototype; replace
each cluster's prototype by the member ``m`` minimizing
``sum_{i in cluster} R[i, m]`` (dissertation section 3.4), until the
prototypes -- hence the partition -- no longer change.

Written here rather than with ``kmedoids.alternating``, which reads
asymmetric matrices transposed relative to our convention.
"""

from __future__ import annotations

import numpy as np

from hlm.local_mapping._clustering.result import Clustering, check_k, check_matrix, make_result, nearest, singletons

#: iteration cap; each iteration strictly lowers the total distance (zero-diagonal R), so
#: the cap is a safeguard only
MAX_ITER = 100


def generalized_kmeans(D, k: int, *, weights=None) -> Clustering:
    """Generalized k-means of ``D`` (or ``R = diag(weights) @ D``); deterministic."""
    R = check_matrix(D, weights)
    return _generalized_kmeans(R, check_k(k, R.shape[0]))


def k_center(R: np.ndarray, k: int) -> np.ndarray:
    """Farthest-first initial prototypes (sorted ascending)."""
    first = int(np.argmin(R.sum(axis=0)))
    protos = [first]
    near = R[:, first].copy()
    near[first] = -np.inf
    for _ in range(k - 1):
        p = int(np.argmax(near))  # never an existing prototype (they are -inf)
        protos.append(p)
        np.minimum(near, R[:, p], out=near)
        near[protos] = -np.inf
    return np.sort(np.array(protos, dtype=np.intp))


def update(R: np.ndarray, protos: np.ndarray, assignment: np.ndarray) -> np.ndarray:
    """One prototype update: each cluster's member with minimum ``sum_{i in cluster} R[i, m]``.

    The current prototype is kept when it attains the minimum (no cycling on
    ties); otherwise the lowest-index minimizer. Returns sorted prototypes.
    """
    new = protos.copy()
    for j, p in enumerate(protos):
        members = np.flatnonzero(assignment == j)
        if members.size == 0:  # impossible (a prototype is assigned to itself); guard
            continue
        cost = R[np.ix_(members, members)].sum(axis=0)
        best = int(np.argmin(cost))
        if cost[best] < cost[np.searchsorted(members, p)]:
            new[j] = members[best]
    return np.sort(new)


def _generalized_kmeans(R: np.ndarray, k: int) -> Clustering:
    n = R.shape[0]
    if k == n:
        return singletons(R)
    protos = k_center(R, k)
    for _ in range(MAX_ITER):
        assignment, _total = nearest(R, protos)
        new = update(R, protos, assignment)
        if np.array_equal(new, protos):
            break
        protos = new
    return make_result(R, protos)
