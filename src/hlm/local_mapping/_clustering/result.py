"""Clustering result and helpers shared by the clustering methods.

Convention (everywhere in :mod:`hlm.local_mapping._clustering`): row = point, column =
prototype, i.e. point ``i`` assigned to prototype ``m`` costs ``R[i, m]``.
``R`` may be asymmetric, e.g. the weighted matrix ``R = H D`` of paper
section 4.2 / dissertation section 3.6.2 (``R[i, m] = h_i * D[i, m]``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from hlm.errors import DataError


@dataclass(frozen=True, eq=False)
class Clustering:
    """A partition of ``n`` points into ``k`` clusters, each with a prototype.

    prototypes : (k,) int, indices into the points, sorted ascending.
    assignment : (n,) int in ``0..k-1``, an index into ``prototypes``;
        prototype ``prototypes[j]`` always has ``assignment == j``.
    total_distance : ``sum_i R[i, prototypes[assignment[i]]]`` (eq. 3.5 of the
        dissertation; the p-median objective).

    The arrays are read-only. ``eq=False``: instances compare by identity
    (element-wise array comparison has no single truth value).
    """

    prototypes: np.ndarray
    assignment: np.ndarray
    total_distance: float


def check_matrix(D, weights=None) -> np.ndarray:
    """Return ``R = diag(weights) @ D`` as a C-contiguous float64 array.

    Raises DataError for a matrix that is not square, empty or not finite;
    ValueError for bad ``weights`` (computed by the program, not user input).
    """
    R = np.asarray(D, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] == 0:
        raise DataError(f"clustering: distance matrix must be square and non-empty, got shape {R.shape}")
    if not np.isfinite(R).all():
        raise DataError("clustering: distance matrix contains NaN or infinite values")
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (R.shape[0],):
            raise ValueError(f"clustering: weights must have shape ({R.shape[0]},), got {w.shape}")
        if not (np.isfinite(w).all() and (w > 0).all()):
            raise ValueError("clustering: weights must be finite and positive")
        R = w[:, None] * R  # R = H D: R[i, m] = h_i * D[i, m]
    return np.ascontiguousarray(R)


def check_k(k, n: int) -> int:
    """Validate the number of clusters: an integer with ``1 <= k <= n``."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"clustering: k must be an integer, got {k!r}")
    k = int(k)
    if not 1 <= k <= n:
        raise ValueError(f"clustering: k must satisfy 1 <= k <= n = {n}, got k = {k}")
    return k


def nearest(R: np.ndarray, prototypes: np.ndarray) -> tuple[np.ndarray, float]:
    """Assign each point to its nearest prototype (``prototypes`` sorted ascending).

    Ties go to the lowest-index prototype; a prototype is always assigned to
    itself (matters with ties, zero distances between duplicates, or a
    non-zero diagonal). Returns ``(assignment, total_distance)``.
    """
    sub = R[:, prototypes]
    assignment = sub.argmin(axis=1)
    assignment[prototypes] = np.arange(prototypes.size)
    total = float(sub[np.arange(R.shape[0]), assignment].sum())
    return assignment, total


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def make_result(R: np.ndarray, prototypes, assignment=None) -> Clustering:
    """Build a :class:`Clustering` from prototypes (any order).

    Without ``assignment`` each point goes to its nearest prototype (see
    :func:`nearest`). With ``assignment`` (labels indexing the given
    ``prototypes`` order, e.g. Ward's partition) the labels are kept and only
    remapped to the ascending prototype order.
    """
    protos = np.asarray(prototypes, dtype=np.intp)
    order = np.argsort(protos, kind="stable")
    protos = protos[order]
    if assignment is None:
        assignment, total = nearest(R, protos)
    else:
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        assignment = inverse[np.asarray(assignment, dtype=np.intp)]
        total = float(R[np.arange(R.shape[0]), protos[assignment]].sum())
    return Clustering(_frozen(protos), _frozen(assignment), total)


def singletons(R: np.ndarray) -> Clustering:
    """``k == n``: every point is its own prototype."""
    n = R.shape[0]
    return Clustering(_frozen(np.arange(n)), _frozen(np.arange(n)), float(np.trace(R)))
