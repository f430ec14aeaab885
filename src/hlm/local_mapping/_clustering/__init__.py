"""Distance-based clustering for Mixture HLM (paper section 2.2; dissertation section 3.4).

Convention: row = point, column = prototype -- point ``i`` assigned to
prototype ``m`` costs ``R[i, m]``; with ``weights``, ``R = diag(weights) @ D``
(paper section 4.2, incremental learning), which is asymmetric in general.

Methods: ``"vsh"`` (vertex substitution heuristic, best of ``n_init`` random
starts), ``"gknn"`` (generalized k-means, k-center initialization), ``"ward"``
(agglomerative, Ward's linkage on the symmetrized distances, SciPy's ward.D2
update) or ``"ward_d"`` (the Lance-Williams update on the distances, ward.D).

On feature vectors, :mod:`hlm.hmac._hmac` is HMAC, hierarchical mode association clustering by modal EM
on Gaussian kernel densities (dissertation chapter 5, docs/hmac-spec.md), serial or on Dask. It is not
imported here, so that the distance-based clustering's users (Mixture HLM) do not depend on its files.
"""

from __future__ import annotations

from hlm.local_mapping._clustering.generalized_kmeans import _generalized_kmeans, generalized_kmeans
from hlm.local_mapping._clustering.result import Clustering, check_k, check_matrix
from hlm.local_mapping._clustering.vsh import _vsh, vsh
from hlm.local_mapping._clustering.ward import _ward, ward

__all__ = ["Clustering", "cluster", "vsh", "generalized_kmeans", "ward", "METHODS"]

METHODS = ("vsh", "gknn", "ward", "ward_d")


def cluster(D, k: int, method: str = "vsh", *, seed: int = 0, n_init: int = 20, weights=None) -> Clustering:
    """Cluster the points of distance matrix ``D`` into ``k`` clusters.

    ``1 <= k <= n`` (ValueError otherwise); ``k == n`` makes every point its
    own prototype. ``weights`` (n,) positive gives ``R = diag(weights) @ D``
    (``"vsh"`` and ``"gknn"`` only; ValueError for ``"ward"``). ``seed`` and
    ``n_init`` are used by ``"vsh"`` only. Deterministic given ``seed``.
    """
    if method not in METHODS:
        raise ValueError(f"clustering: unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if method.startswith("ward") and weights is not None:
        raise ValueError(f"clustering: method {method!r} does not support weights")
    R = check_matrix(D, weights)
    k = check_k(k, R.shape[0])
    if method == "vsh":
        return _vsh(R, k, seed, n_init)
    if method == "gknn":
        return _generalized_kmeans(R, k)
    return _ward(R, k, "d" if method == "ward_d" else "d2")
