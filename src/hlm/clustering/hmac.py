"""Hierarchical mode association clustering (HMAC; dissertation sections 4.2, 5.4; docs/hmac-spec.md).

Given bandwidths ``sigma_1 < ... < sigma_eta``, HMAC starts from every point as its own cluster (the limit
``sigma -> 0``). At level ``l`` the modes of level ``l - 1`` (at level 1: the points) climb by modal EM
(:func:`modal_em`) on the Gaussian KDE of *all* ``n`` points at ``sigma_l``; converged points closer than
``merge_tol * sigma_l`` are merged (single linkage), and each new cluster's mode is its member of highest
density. The clusterings are nested: a point's label at level ``l`` is ``parent_l[label_{l-1}]``.

Clusters are in a canonical order, by their smallest member index, so results of the serial and the
parallel approaches (``parallel="I"`` / ``"II"``, :mod:`hlm.clustering.hmac_parallel`) compare cluster by
cluster. Weights of the modes for the weighted PCA of section 4.3.1: ``sizes / n``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from hlm.clustering.hmac_mem import (
    BLOCK_BYTES,
    Centred,
    check_bandwidth,
    check_options,
    check_points,
    climb,
    modal_em,
    warn_unconverged,
)
from hlm.errors import ConfigError, DataError

__all__ = ["HMACResult", "ModeClustering", "bandwidth_sequence", "hmac", "modal_em", "PARALLEL"]

#: the parallel approaches of sections 5.2 (I) and 5.3 (II); None is serial
PARALLEL = (None, "I", "II")

#: default merge radius of converged points, in units of the level's bandwidth [P]
MERGE_TOL = 1e-3


@dataclass(frozen=True, eq=False)
class ModeClustering:
    """The clustering of one HMAC level (one bandwidth).

    bandwidth : the level's ``sigma_l``.
    modes : (m, p) float64, the cluster representatives (modes of the KDE at ``sigma_l``).
    labels : (n,) int in ``0..m-1``, the cluster of each original point.
    sizes : (m,) int, ``bincount(labels)``; every size >= 1.
    parent : (m_prev,) int, cluster of level ``l - 1`` -> cluster of this level. At the first level the
        preceding clustering is the ``n`` singletons (``sigma -> 0``), so ``parent`` is (n,) and equals ``labels``.
    changed : the clustering differs from the preceding level's (``m < m_prev``; first level: ``m`` below the
        number of distinct points, as identical points, with ``allow_duplicates``, share a cluster from the start).
    density : (m,) log KDE density at each mode, at this bandwidth.

    Clusters are ordered by their smallest member index. Arrays are read-only; ``eq=False``: instances
    compare by identity.
    """

    bandwidth: float
    modes: np.ndarray
    labels: np.ndarray
    sizes: np.ndarray
    parent: np.ndarray
    changed: bool
    density: np.ndarray

    @property
    def n_clusters(self) -> int:
        """Number of clusters ``m``."""
        return int(self.modes.shape[0])

    @property
    def weights(self) -> np.ndarray:
        """``sizes / n``: each mode's share of the points (the MPCA weights of section 4.3.1)."""
        return self.sizes / self.sizes.sum()


@dataclass(frozen=True, eq=False)
class HMACResult:
    """HMAC's levels, one per bandwidth in increasing order.

    levels : the :class:`ModeClustering` of each bandwidth.
    bandwidths : (eta,) float64, increasing.
    n_iter : (eta,) int, the largest number of MEM iterations of any start at each level.
    """

    levels: list[ModeClustering]
    bandwidths: np.ndarray
    n_iter: np.ndarray | None = None

    @property
    def n_clusters(self) -> np.ndarray:
        """(eta,) number of clusters per level (non-increasing)."""
        return np.array([level.n_clusters for level in self.levels], dtype=np.intp)


def bandwidth_sequence(X, n_levels: int = 20, low: float = 0.1, high: float = 2.0) -> np.ndarray:
    """``n_levels`` bandwidths equally spaced in ``[low * s, high * s]``, ``s`` the largest column sd (ddof=1).

    The chapter's default (section 4.5.2): 20 values in ``[0.1 s, 2 s]``.
    """
    X = check_points(X, "X", min_rows=2)
    if isinstance(n_levels, bool) or not isinstance(n_levels, numbers.Integral) or n_levels < 1:
        raise DataError(f"n_levels must be a positive integer, got {n_levels!r}")
    low = check_bandwidth(low, "low")
    high = check_bandwidth(high, "high")
    if not (low < high or (low == high and n_levels == 1)):
        raise DataError(f"low must be below high, got low={low!r}, high={high!r}")
    s = float(X.std(axis=0, ddof=1).max())
    if not s > 0:
        raise DataError(f"X: every column is constant over the {X.shape[0]} points; no bandwidth scale")
    return np.linspace(low * s, high * s, int(n_levels))


def check_bandwidths(bandwidths) -> np.ndarray:
    """A non-empty, strictly increasing 1-D array of finite positive bandwidths, else a DataError."""
    try:
        b = np.atleast_1d(np.asarray(bandwidths, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise DataError(f"bandwidths: not numeric ({str(exc).splitlines()[0]})") from None
    if b.ndim != 1 or b.size == 0:
        raise DataError(f"bandwidths must be a non-empty 1-D sequence, got shape {b.shape}")
    bad = ~(np.isfinite(b) & (b > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"bandwidths must be positive and finite; bandwidths[{i}] = {b[i]!r}")
    if b.size > 1 and not (np.diff(b) > 0).all():
        i = int(np.flatnonzero(np.diff(b) <= 0)[0])
        raise DataError(
            f"bandwidths must be strictly increasing; bandwidths[{i}] = {b[i]!r} >= bandwidths[{i + 1}] = {b[i + 1]!r}"
        )
    return b


def first_duplicate(X: np.ndarray) -> tuple[int, int] | None:
    """The pair ``(i, j)``, ``i < j``, of identical rows with the smallest ``j`` (``i``: its first copy); else None."""
    order = np.lexsort(X.T[::-1])
    same = (X[order[1:]] == X[order[:-1]]).all(axis=1)
    if not same.any():
        return None
    run = np.concatenate([[0], np.cumsum(~same)])  # run of equal rows of each sorted position
    run_min = np.full(run[-1] + 1, X.shape[0])
    np.minimum.at(run_min, run, order)
    copy = order != run_min[run]
    j = int(order[copy].min())
    return int(run_min[run[np.flatnonzero(order == j)[0]]]), j


def merge_modes(Z: np.ndarray, log_dens: np.ndarray, sigma: float, merge_tol: float):
    """Merge converged points closer than ``merge_tol * sigma`` (single linkage) [P, docs/hmac-spec.md section 2].

    Returns ``(group, reps)``: ``group`` (m,) the cluster of each point, numbered by first appearance;
    ``reps`` (k,) the index of each cluster's member of highest density (ties: smallest index).
    """
    m = Z.shape[0]
    pairs = cKDTree(Z).query_pairs(merge_tol * sigma, output_type="ndarray") if m > 1 else np.empty((0, 2), int)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(m, m))
    _, comp = connected_components(graph, directed=False)
    _, first, inverse = np.unique(comp, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    group = rank[inverse]
    order = np.lexsort((np.arange(m), -log_dens, group))
    starts = np.flatnonzero(np.concatenate([[True], group[order][1:] != group[order][:-1]]))
    return group, order[starts]


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def run_levels(data: Centred, bandwidths: np.ndarray, climber, merge_tol: float) -> HMACResult:
    """HMAC's bottom-up pass; ``climber(Z, sigma) -> (modes, n_iter, n_unconverged)`` on centred points."""
    n = data.C.shape[0]
    starts = data.C
    prev_labels = np.arange(n)
    prev_count = len(np.unique(data.C, axis=0))  # level 0: the distinct points (copies are one cluster)
    levels, n_iters = [], []
    for sigma in bandwidths:
        sigma = float(sigma)
        Z, n_iter, _ = climber(starts, sigma)
        dens = data.log_density(Z, sigma)
        parent, reps = merge_modes(Z, dens, sigma, merge_tol)
        labels = parent[prev_labels]
        starts = np.ascontiguousarray(Z[reps])
        levels.append(
            ModeClustering(
                bandwidth=sigma,
                modes=_frozen(starts + data.mean),
                labels=_frozen(labels),
                sizes=_frozen(np.bincount(labels, minlength=reps.size)),
                parent=_frozen(parent),
                changed=bool(reps.size < prev_count),
                density=_frozen(dens[reps]),
            )
        )
        n_iters.append(int(n_iter.max(initial=0)))
        prev_labels, prev_count = labels, reps.size
    return HMACResult(levels, _frozen(np.array(bandwidths, dtype=np.float64)), _frozen(np.array(n_iters)))


def hmac(
    X,
    bandwidths=None,
    *,
    tol: float = 1e-6,
    max_iter: int = 500,
    merge_tol: float = MERGE_TOL,
    allow_duplicates: bool = False,
    parallel=None,
    n_workers=None,
    scheduler=None,
    connect_timeout: float = 5.0,
    block_bytes: int = BLOCK_BYTES,
) -> HMACResult:
    """HMAC of the points ``X`` (n, p) over increasing ``bandwidths`` (default :func:`bandwidth_sequence`).

    MEM stops a start when its step is below ``tol * sigma_l`` (``max_iter`` at most, ConvergenceWarning);
    converged points within ``merge_tol * sigma_l`` form one mode. Duplicate rows are rejected unless
    ``allow_duplicates`` (spec section 6). ``parallel``: None (serial), ``"I"`` (each MEM iteration's sums
    split over Dask workers, section 5.2) or ``"II"`` (the starts split over workers, section 5.3); the
    workers are a new ``LocalCluster`` of ``n_workers`` processes (default: the machine's cores), or those
    of ``scheduler`` (an address such as ``"tcp://host:8786"``, or a ``distributed.Client``; ``n_workers``
    then caps how many are used).
    """
    if parallel not in PARALLEL:
        raise ConfigError(f"parallel must be None, 'I' or 'II', got {parallel!r}")
    if parallel is None and (n_workers is not None or scheduler is not None):
        raise ConfigError("n_workers and scheduler need parallel='I' or 'II'")
    if parallel is not None:
        from hlm.clustering.hmac_parallel import check_workers

        check_workers(n_workers, scheduler)
    X = check_points(X, "X", min_rows=2)
    tol, max_iter = check_options(tol, max_iter)
    merge_tol = check_bandwidth(merge_tol, "merge_tol")
    bandwidths = bandwidth_sequence(X) if bandwidths is None else check_bandwidths(bandwidths)
    if not allow_duplicates and (pair := first_duplicate(X)) is not None:
        raise DataError(
            f"X: rows {pair[0]} and {pair[1]} are identical (duplicate points); "
            "pass allow_duplicates=True to cluster them together"
        )
    if parallel is None:
        data = Centred(X)

        def climber(Z, sigma):
            out = climb(lambda A: data.step(A, sigma, block_bytes), Z, sigma, tol, max_iter)
            warn_unconverged(out[2], Z.shape[0], max_iter, sigma)
            return out

        return run_levels(data, bandwidths, climber, merge_tol)
    from hlm.clustering.hmac_parallel import parallel_hmac

    return parallel_hmac(
        X,
        bandwidths,
        approach=parallel,
        tol=tol,
        max_iter=max_iter,
        merge_tol=merge_tol,
        n_workers=n_workers,
        scheduler=scheduler,
        connect_timeout=connect_timeout,
        block_bytes=block_bytes,
    )
