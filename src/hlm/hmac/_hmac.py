"""Hierarchical mode association clustering (HMAC; dissertation sections 4.2, 5.4; docs/hmac-spec.md).

Given bandwidths ``sigma_1 < ... < sigma_eta``, HMAC starts from every point as its own cluster (the limit
``sigma -> 0``). At level ``l`` the modes of level ``l - 1`` (at level 1: the points) climb by modal EM
(:func:`modal_em`) on the Gaussian KDE of *all* ``n`` points at ``sigma_l``; converged points closer than
``merge_tol * sigma_l`` are merged (single linkage), and each new cluster's mode is its member of highest
density. The clusterings are nested: a point's label at level ``l`` is ``parent_l[label_{l-1}]``. HMAC's
option of no nesting (section 5.4, ``nested=False``) climbs every point at every level instead, so each level is
the one-level HMAC of its bandwidth.

Clusters are in a canonical order, by their smallest member index, so results of the serial and the
parallel approaches (``parallel="I"`` / ``"II"``, :mod:`hlm.hmac._parallel`) compare cluster by
cluster. Weights of the modes for the weighted PCA of section 4.3.1: ``sizes / n``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from hlm.errors import ConfigError, DataError
from hlm.hmac._modal_em import (
    BLOCK_BYTES,
    Centred,
    check_bandwidth,
    check_options,
    check_points,
    climb,
    modal_em,
    warn_unconverged,
)

__all__ = ["HMACResult", "ModeClustering", "bandwidth_sequence", "hmac", "modal_em", "PARALLEL"]

#: the parallel approaches of sections 5.2 (I) and 5.3 (II); None is serial
PARALLEL = (None, "I", "II")

#: default merge radius of converged points, in units of the level's bandwidth [P]
MERGE_TOL = 1e-3


@dataclass(frozen=True, eq=False)
class ModeClustering:
    """The clustering of one HMAC level (one bandwidth; dissertation sections 4.2, 5.4; docs/hmac-spec.md
    sections 3, 4).

    Clusters are ordered by their smallest member index. Arrays are read-only; ``eq=False``: instances
    compare by identity. Made by :func:`hmac`, one per bandwidth (``HMACResult.levels``).

    Attributes
    ----------
    bandwidth : float
        The level's ``sigma_l``.
    modes : ndarray of shape (m, p), float64
        The cluster representatives (modes of the KDE at ``sigma_l``).
    labels : ndarray of shape (n,), int
        The cluster, in ``0..m-1``, of each original point.
    sizes : ndarray of shape (m,), int
        ``bincount(labels)``; every size >= 1.
    parent : ndarray of shape (m_prev,), int
        Cluster of level ``l - 1`` -> cluster of this level. At the first level the preceding clustering is
        the ``n`` singletons (``sigma -> 0``), so ``parent`` is (n,) and equals ``labels``; so it is at every
        level of a non-nested run, whose levels each start from the singletons.
    changed : bool
        The clustering differs from the preceding level's (nested: ``m < m_prev``; non-nested: another
        partition; first level: ``m`` below the number of distinct points, as identical points, with
        ``allow_duplicates``, share a cluster from the start).
    density : ndarray of shape (m,), float64
        log KDE density at each mode, at this bandwidth.
    n_clusters : int
        Number of clusters ``m`` (a property).
    weights : ndarray of shape (m,)
        ``sizes / n``: each mode's share of the points, the MPCA weights of section 4.3.1 (a property).

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.hmac import hmac
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    >>> X = np.vstack([rng.normal(c, 1, (15, 2)) for c in centres])
    >>> level = hmac(X, [1.5, 3.0, 20.0]).levels[0]
    >>> print(level.n_clusters, level.sizes, level.modes.shape, level.labels.shape, level.changed)
    3 [15 15 15] (3, 2) (45,) True
    >>> print(level.weights.round(3), level.parent.shape)
    [0.333 0.333 0.333] (45,)
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
    """HMAC's levels, one per bandwidth in increasing order (docs/hmac-spec.md section 4); returned by :func:`hmac`.

    Attributes
    ----------
    levels : list of ModeClustering
        The clustering of each bandwidth; nested (the default): a point's label at level ``l`` is
        ``levels[l].parent[levels[l - 1].labels]``.
    bandwidths : ndarray of shape (eta,), float64
        The bandwidths, increasing.
    n_iter : ndarray of shape (eta,), int, or None
        The largest number of MEM iterations of any start at each level.
    nested : bool
        Whether each level climbed from the preceding level's modes (True) or from every point (False).
    n_clusters : ndarray of shape (eta,)
        Number of clusters per level, non-increasing when nested (a property).

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.hmac import hmac
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    >>> X = np.vstack([rng.normal(c, 1, (15, 2)) for c in centres])
    >>> result = hmac(X, [1.5, 3.0, 20.0])
    >>> print(result.n_clusters, len(result.levels), result.bandwidths.shape, result.n_iter.shape)
    [3 3 1] 3 (3,) (3,)
    >>> print(bool((result.levels[1].parent[result.levels[0].labels] == result.levels[1].labels).all()))
    True
    """

    levels: list[ModeClustering]
    bandwidths: np.ndarray
    n_iter: np.ndarray | None = None
    nested: bool = True

    @property
    def n_clusters(self) -> np.ndarray:
        """(eta,) number of clusters per level (non-increasing when nested)."""
        return np.array([level.n_clusters for level in self.levels], dtype=np.intp)


def bandwidth_sequence(X, n_levels: int = 20, low: float = 0.1, high: float = 2.0) -> np.ndarray:
    """``n_levels`` bandwidths equally spaced in ``[low * s, high * s]``, ``s`` the largest column sd (ddof=1).

    The chapter's default (section 4.5.2; docs/hmac-spec.md section 3): 20 values in ``[0.1 s, 2 s]``.

    Parameters
    ----------
    X : array-like of shape (n, p)
        The points (at least 2, finite, not all columns constant).
    n_levels : int, default=20
        Number of bandwidths.
    low : float, default=0.1
        The smallest bandwidth, relative to ``s``.
    high : float, default=2.0
        The largest bandwidth, relative to ``s`` (above ``low``, or equal to it with ``n_levels=1``).

    Returns
    -------
    ndarray of shape (n_levels,)
        The bandwidths, increasing.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.hmac import bandwidth_sequence
    >>> X = np.random.default_rng(0).normal(0, [1, 3], (30, 2))
    >>> b = bandwidth_sequence(X, 5)
    >>> print(b.shape, (b / X.std(axis=0, ddof=1).max()).round(3))
    (5,) [0.1   0.575 1.05  1.525 2.   ]
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


def run_levels(data: Centred, bandwidths: np.ndarray, climber, merge_tol: float, nested: bool = True) -> HMACResult:
    """HMAC's bottom-up pass; ``climber(Z, sigma) -> (modes, n_iter, n_unconverged)`` on centred points.
    Nested: each level climbs from the preceding level's modes; else from every point (section 5.4)."""
    n = data.C.shape[0]
    starts = data.C
    prev_labels = np.arange(n)
    prev_count = len(np.unique(data.C, axis=0))  # level 0: the distinct points (copies are one cluster)
    levels, n_iters = [], []
    for sigma in bandwidths:
        sigma = float(sigma)
        Z, n_iter, _ = climber(starts if nested else data.C, sigma)
        dens = data.log_density(Z, sigma)
        parent, reps = merge_modes(Z, dens, sigma, merge_tol)
        labels = parent[prev_labels] if nested else parent
        modes = np.ascontiguousarray(Z[reps])
        changed = reps.size < prev_count if nested or not levels else not np.array_equal(labels, prev_labels)
        levels.append(
            ModeClustering(
                bandwidth=sigma,
                modes=_frozen(modes + data.mean),
                labels=_frozen(labels),
                sizes=_frozen(np.bincount(labels, minlength=reps.size)),
                parent=_frozen(parent),
                changed=bool(changed),
                density=_frozen(dens[reps]),
            )
        )
        n_iters.append(int(n_iter.max(initial=0)))
        starts = modes
        prev_labels, prev_count = labels, reps.size
    return HMACResult(levels, _frozen(np.array(bandwidths, dtype=np.float64)), _frozen(np.array(n_iters)), nested)


def hmac(
    X,
    bandwidths=None,
    *,
    tol: float = 1e-6,
    max_iter: int = 500,
    merge_tol: float = MERGE_TOL,
    allow_duplicates: bool = False,
    nested: bool = True,
    parallel=None,
    n_workers=None,
    scheduler=None,
    connect_timeout: float = 5.0,
    block_bytes: int = BLOCK_BYTES,
) -> HMACResult:
    """HMAC of the points ``X`` (n, p) over increasing ``bandwidths`` (default :func:`bandwidth_sequence`).

    Hierarchical mode association clustering (dissertation sections 4.2, 5.4; docs/hmac-spec.md sections 1-3):
    HMAC starts from every point as its own cluster (``sigma -> 0``); at level ``l`` the modes of level
    ``l - 1`` (at level 1: the points) climb by modal EM (:func:`modal_em`) on the Gaussian KDE of all ``n``
    points at ``sigma_l``; converged points closer than ``merge_tol * sigma_l`` are merged (single linkage),
    and each new cluster's mode is its member of highest density. The clusterings are nested, unless
    ``nested=False`` (section 5.4: every level climbs from the points).

    Parameters
    ----------
    X : array-like of shape (n, p)
        The points: finite, at least 2.
    bandwidths : array-like of shape (eta,) or None, default=None
        Strictly increasing positive bandwidths; None: ``bandwidth_sequence(X)`` (20 values in
        ``[0.1 s, 2 s]``).
    tol : float, default=1e-6
        MEM stops a start when its step is below ``tol * sigma_l``.
    max_iter : int, default=500
        MEM iterations per start at most (ConvergenceWarning when some starts reach it).
    merge_tol : float, default=1e-3
        Converged points within ``merge_tol * sigma_l`` form one mode (spec section 2).
    allow_duplicates : bool, default=False
        Duplicate rows are rejected (DataError) unless True; then they share a cluster (spec section 6).
    nested : bool, default=True
        True: each level climbs from the preceding level's modes, so the clusterings are nested (a dendrogram).
        False: HMAC's option of no nesting (section 5.4): every level climbs from every point, so level ``l``
        is ``hmac(X, [bandwidths[l]])``'s one level, and the levels need not nest.
    parallel : {None, "I", "II"}, default=None
        None (serial), ``"I"`` (each MEM iteration's sums split over Dask workers, section 5.2) or ``"II"``
        (the starts split over workers, section 5.3); the results equal the serial ones up to rounding.
    n_workers : int or None, default=None
        With ``parallel``: the workers of a new ``LocalCluster`` of ``n_workers`` processes (default: the
        machine's cores); with ``scheduler``, a cap on how many of its workers are used.
    scheduler : str, distributed.Client or None, default=None
        With ``parallel``: the workers of an existing scheduler (an address such as ``"tcp://host:8786"``, or a
        ``distributed.Client``) instead of a new ``LocalCluster``.
    connect_timeout : float, default=5.0
        Seconds to wait when connecting to ``scheduler``, and for its first worker.
    block_bytes : int, default=64 MiB
        Memory bound of one block of the kernel matrix (spec section 7).

    Returns
    -------
    HMACResult
        One :class:`ModeClustering` per bandwidth, in increasing order.

    See Also
    --------
    modal_em : The hill climb of one level.
    bandwidth_sequence : The default bandwidths.

    Examples
    --------
    Three well separated blobs of 15 points: at small bandwidths each blob is one cluster, at a large one
    all points climb to one mode.

    >>> import numpy as np
    >>> from hlm.hmac import hmac
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    >>> X = np.vstack([rng.normal(c, 1, (15, 2)) for c in centres])
    >>> y = np.repeat([0, 1, 2], 15)
    >>> result = hmac(X, [1.5, 3.0, 20.0])
    >>> print(result.n_clusters)
    [3 3 1]
    >>> level = result.levels[0]
    >>> print([np.unique(level.labels[y == k]).tolist() for k in range(3)], level.sizes)
    [[0], [1], [2]] [15 15 15]
    >>> print(np.abs(level.modes - centres).max() < 1)  # each mode near its blob's centre
    True

    With the default bandwidths (20 levels), the number of clusters never increases:

    >>> counts = hmac(X).n_clusters
    >>> print(len(counts), bool((counts[1:] <= counts[:-1]).all()), counts[-1])
    20 True 1

    Without nesting, each level is the one-level HMAC of its bandwidth:

    >>> flat = hmac(X, [1.5, 3.0, 20.0], nested=False)
    >>> print(flat.n_clusters, flat.nested)
    [3 3 1] False
    >>> print(bool((flat.levels[1].labels == hmac(X, [3.0]).levels[0].labels).all()))
    True
    """
    if parallel not in PARALLEL:
        raise ConfigError(f"parallel must be None, 'I' or 'II', got {parallel!r}")
    if parallel is None and (n_workers is not None or scheduler is not None):
        raise ConfigError("n_workers and scheduler need parallel='I' or 'II'")
    if not isinstance(nested, (bool, np.bool_)):
        raise ConfigError(f"nested must be a bool, got {nested!r}")
    nested = bool(nested)
    if parallel is not None:
        from hlm.hmac._parallel import check_workers

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

        return run_levels(data, bandwidths, climber, merge_tol, nested)
    from hlm.hmac._parallel import parallel_hmac

    return parallel_hmac(
        X,
        bandwidths,
        approach=parallel,
        tol=tol,
        max_iter=max_iter,
        merge_tol=merge_tol,
        nested=nested,
        n_workers=n_workers,
        scheduler=scheduler,
        connect_timeout=connect_timeout,
        block_bytes=block_bytes,
    )
