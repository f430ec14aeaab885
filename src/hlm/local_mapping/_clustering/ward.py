"""Agglomerative clustering with Ward's linkage (paper sections 2.2 and 5.1).

The (possibly asymmetric) distances are symmetrized, ``(D + D.T) / 2``, and
clustered by ``scipy.cluster.hierarchy.linkage(..., method="ward")``. SciPy's
Ward applies the Lance-Williams update to *squared* distances (R's
``ward.D2``): Ward's minimum-variance criterion when the distances are
Euclidean, and the default here. The paper (sections 2.2, 5.1) only says
"Ward's method" with a Lance-Williams update of "the distances"; the variant
``update="d"`` applies that update to the given distances themselves (R's
``ward.D``), computed as SciPy's Ward on sqrt(D) (``clustering="ward_d"`` in
Mixture HLM).

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

from hlm.local_mapping._clustering.result import Clustering, check_k, check_matrix, make_result, singletons

#: Lance-Williams update on squared distances (ward.D2, SciPy's) or on the distances (ward.D)
WARD_UPDATES = ("d2", "d")


def ward(D, k: int, update: str = "d2") -> Clustering:
    """Ward clustering of the symmetrized ``D`` into exactly ``k`` clusters."""
    R = check_matrix(D)
    return _ward(R, check_k(k, R.shape[0]), update)


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


def _ward(R: np.ndarray, k: int, update: str = "d2") -> Clustering:
    if update not in WARD_UPDATES:
        raise ValueError(f"ward: update must be one of {WARD_UPDATES}, got {update!r}")
    n = R.shape[0]
    if k == n:
        return singletons(R)
    if k == 1:
        return make_result(R, [int(np.argmin(R.sum(axis=0)))], np.zeros(n, dtype=np.intp))
    S = (R + R.T) / 2.0
    Z = linkage(squareform(np.sqrt(S) if update == "d" else S, checks=False), method="ward")
    labels = cut(Z, n, k)
    protos = np.empty(k, dtype=np.intp)
    for j in range(k):
        members = np.flatnonzero(labels == j)
        protos[j] = members[np.argmin(R[np.ix_(members, members)].sum(axis=0))]
    return make_result(R, protos, labels)
