"""Agglomerative clustering with Ward's linkage (paper sections 2.2 and 5.1).

The (possibly asymmetric) distances are symmetrized, ``(D + D.T) / 2``, and
clustered by ``scipy.cluster.hierarchy.linkage(..., method="ward")``. Ward's
criterion assumes Euclidean distances; for other distances it is applied as in
the paper (section 5.1), via the Lance-Williams update on the given distances.

The tree is cut into exactly ``k`` clusters by applying its first ``n - k``
merges. With distinct merge heights this equals ``fcluster(Z, k,
"maxclust")``; with tied heights ``fcluster`` may return fewer than ``k``
clusters, whereas this cut always returns ``k``.

Each cluster's prototype is its medoid: the member ``m`` with minimum
``sum_{i in cluster} D[i, m]`` (ties: lowest index). The assignment is Ward's
partition (not a re-assignment to the nearest medoid).
"""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

from hlm.clustering.result import Clustering, check_k, check_matrix, make_result, singletons


def ward(D, k: int) -> Clustering:
    """Ward clustering of the symmetrized ``D`` into exactly ``k`` clusters."""
    R = check_matrix(D)
    return _ward(R, check_k(k, R.shape[0]))


def cut(Z: np.ndarray, n: int, k: int) -> np.ndarray:
    """Cluster labels (0..k-1, by first appearance) after the first ``n - k`` merges of ``Z``."""
    parent = np.arange(2 * n - 1)
    steps = n - k
    if steps:
        merged = Z[:steps, :2].astype(np.intp)
        parent[merged[:, 0]] = n + np.arange(steps)
        parent[merged[:, 1]] = n + np.arange(steps)
        while True:  # pointer jumping to the roots
            nxt = parent[parent]
            if np.array_equal(nxt, parent):
                break
            parent = nxt
    _, labels = np.unique(parent[:n], return_inverse=True)
    return labels


def _ward(R: np.ndarray, k: int) -> Clustering:
    n = R.shape[0]
    if k == n:
        return singletons(R)
    if k == 1:
        return make_result(R, [int(np.argmin(R.sum(axis=0)))], np.zeros(n, dtype=np.intp))
    S = (R + R.T) / 2.0
    Z = linkage(squareform(S, checks=False), method="ward")
    labels = cut(Z, n, k)
    protos = np.empty(k, dtype=np.intp)
    for j in range(k):
        members = np.flatnonzero(labels == j)
        protos[j] = members[np.argmin(R[np.ix_(members, members)].sum(axis=0))]
    return make_result(R, protos, labels)
