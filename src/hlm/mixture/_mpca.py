"""Weighted PCA, modal PCA (MPCA), MPCA-MEAN and subspace closeness (Qiao 2012, dissertation chapter 4;
docs/subspace-gmm-spec.md section 3).

A subspace is a p x d matrix with orthonormal columns. MPCA: the d leading eigenvectors of the weighted covariance
of the modes of a kernel density estimate, each mode weighted by the share of points ascending to it (section
4.3.1). MPCA-MEAN: of the class means alone (d < K) or of the class means and the modes with a share gamma of the
weight on the means, each set centred at its own weighted mean as the text's Sigma_{G u J} (section 4.3.2).
"""

from __future__ import annotations

import numpy as np

#: eigenvalues at or below this fraction of the largest are "zero": their eigenvectors are arbitrary (spec 3.2)
RANK_TOL = 1e-10


def _signed(vectors: np.ndarray) -> np.ndarray:
    """Columns with their largest-|.| entry positive (a deterministic sign; the span does not depend on it)."""
    if vectors.size == 0:
        return vectors
    idx = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[idx, np.arange(vectors.shape[1])])
    return vectors * np.where(signs == 0, 1.0, signs)


def weighted_scatter(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_r w_r (M_r - mu)(M_r - mu)^T with w normalised to sum 1 and mu = sum_r w_r M_r (section 4.3.1)."""
    points = np.asarray(points, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    w = w / w.sum()
    centred = points - w @ points
    return (centred * w[:, None]).T @ centred


def principal_axes(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvalues descending, eigenvectors as columns, signed) of a symmetric matrix."""
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
    order = np.argsort(vals)[::-1]
    return vals[order], _signed(vecs[:, order])


def weighted_pca(points, weights) -> tuple[np.ndarray, np.ndarray]:
    """Weighted PCA of the rows of ``points``: (eigenvalues descending, principal axes as columns)."""
    return principal_axes(weighted_scatter(points, weights))


def leading_subspace(cov: np.ndarray, d: int, complete: np.ndarray | None = None) -> np.ndarray:
    """The d leading eigenvectors of ``cov`` (p x d). If fewer than d eigenvalues exceed RANK_TOL * largest, keep
    the informative ones and complete with the leading eigenvectors of ``complete`` (e.g. the data covariance)
    restricted to their orthogonal complement (spec 3.2); without ``complete`` the zero-eigenvalue vectors stay."""
    vals, vecs = principal_axes(cov)
    if d == 0:
        return vecs[:, :0]
    rank = int(np.sum(vals > RANK_TOL * max(vals[0], 0.0))) if vals[0] > 0 else 0
    if rank >= d or complete is None:
        return vecs[:, :d]
    basis = [vecs[:, j] for j in range(rank)]
    proj = np.eye(cov.shape[0]) - vecs[:, :rank] @ vecs[:, :rank].T
    _, extra = principal_axes(proj @ complete @ proj)
    for v in extra.T:  # Gram-Schmidt in the complement's eigen-order (leading first), skipping dependent vectors
        for b in basis:
            v = v - (b @ v) * b
        norm = np.linalg.norm(v)
        if norm > 1e-8:
            basis.append(v / norm)
        if len(basis) == d:
            break
    return _signed(np.column_stack(basis))


def null_basis(V: np.ndarray) -> np.ndarray:
    """An orthonormal basis (p x (p - d)) of the orthogonal complement of span(V)."""
    p, d = V.shape
    if d == 0:
        return np.eye(p)
    u, _, _ = np.linalg.svd(V, full_matrices=True)
    return _signed(u[:, d:])


def orthonormal(A: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """orth(A): an orthonormal basis of the column span of A (rank by singular values > tol * largest)."""
    if A.size == 0:
        return A.reshape(A.shape[0], 0)
    u, s, _ = np.linalg.svd(A, full_matrices=False)
    if s.size == 0 or s[0] == 0:
        return u[:, :0]
    return _signed(u[:, :int(np.sum(s > tol * s[0]))])


def closeness(V1: np.ndarray, V2: np.ndarray) -> float:
    """Closeness of two subspaces (section 4.5.3; docs/subspace-gmm-spec.md section 3.5):
    sum_ij (v_i^(1)T v_j^(2))^2 = ||V1^T V2||_F^2, in [0, d]; d iff the spans coincide.

    Parameters
    ----------
    V1 : array-like of shape (p, d1)
        A subspace: orthonormal columns.
    V2 : array-like of shape (p, d2)
        Another subspace of the same space.

    Returns
    -------
    float
        The closeness, between 0 (orthogonal spans) and min(d1, d2).

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.mixture import closeness
    >>> E = np.eye(3)
    >>> print(closeness(E[:, :2], E[:, 1:]))  # the two planes share one axis
    1.0
    >>> c, s = np.cos(0.3), np.sin(0.3)
    >>> print(round(closeness(E[:, :2], E[:, :2] @ [[c, -s], [s, c]]), 6))  # the same plane, another basis
    2.0
    """
    return float(np.sum((np.asarray(V1).T @ np.asarray(V2)) ** 2))


def mpca_subspace(modes, weights, d: int, data_cov: np.ndarray | None = None) -> np.ndarray:
    """MPCA (section 4.3.1; docs/subspace-gmm-spec.md sections 3.1, 3.2): the d leading weighted principal axes
    of the modes (weights = shares of points).

    Parameters
    ----------
    modes : array-like of shape (m, p)
        The modes, e.g. ``ModeClustering.modes`` of one HMAC level.
    weights : array-like of shape (m,)
        Their weights, e.g. ``ModeClustering.weights`` (normalised to sum 1 here).
    d : int
        The subspace's dimension.
    data_cov : ndarray of shape (p, p) or None, default=None
        If the modes span fewer than d directions (eigenvalues above ``RANK_TOL`` times the largest), the basis
        is completed with the leading eigenvectors of ``data_cov`` in their orthogonal complement (spec 3.2);
        None keeps the arbitrary zero-eigenvalue vectors.

    Returns
    -------
    ndarray of shape (p, d)
        Orthonormal columns, the leading axis first, each with its largest-|.| entry positive.

    Examples
    --------
    Modes in the plane of the first two axes, spread most along the first:

    >>> import numpy as np
    >>> from hlm.mixture import closeness, mpca_subspace
    >>> modes = np.array([[0.0, 0, 0], [4, 0, 0], [0, 2, 0], [4, 2, 0]])
    >>> V = mpca_subspace(modes, [0.4, 0.3, 0.2, 0.1], 2)
    >>> print(V.shape, round(closeness(V, np.eye(3)[:, :2]), 6))
    (3, 2) 2.0
    >>> print(np.abs(mpca_subspace(modes, [0.4, 0.3, 0.2, 0.1], 1)).argmax())  # the leading axis
    0

    Two modes span one direction; ``data_cov`` gives the second:

    >>> rng = np.random.default_rng(0)
    >>> data = rng.normal(0, [1, 1, 3], (50, 3))  # the third axis has the largest spread
    >>> V = mpca_subspace(modes[:2], [0.5, 0.5], 2, data_cov=np.cov(data.T))
    >>> print(round(closeness(V, np.eye(3)[:, [0, 2]]), 2))
    2.0
    """
    return leading_subspace(weighted_scatter(modes, weights), d, data_cov)


def mpca_mean_subspace(class_means, class_weights, d: int, modes=None, mode_weights=None, gamma: float = 60.0,
                       data_cov: np.ndarray | None = None) -> np.ndarray:
    """MPCA-MEAN (section 4.3.2; docs/subspace-gmm-spec.md section 3.3). d < K: weighted PCA of the class means
    (weights a_k). Otherwise Sigma = gamma% * Sigma_J + (100 - gamma)% * Sigma_G, each set centred at its own
    weighted mean (the text's formula, spec 3.3), and its d leading axes.

    Parameters
    ----------
    class_means : array-like of shape (K, p)
        The class means M'_k.
    class_weights : array-like of shape (K,)
        Their weights a_k = n_k / n.
    d : int
        The subspace's dimension.
    modes : array-like of shape (m, p) or None, default=None
        The modes of one HMAC level; used when d >= K (None: the class means alone, whatever d).
    mode_weights : array-like of shape (m,) or None, default=None
        The modes' weights (shares of points).
    gamma : float, default=60.0
        The class means' share of the weight, in % (60 in section 4.5.2).
    data_cov : ndarray of shape (p, p) or None, default=None
        Completes a rank-deficient basis, as in :func:`mpca_subspace`.

    Returns
    -------
    ndarray of shape (p, d)
        Orthonormal columns, the leading axis first.

    Examples
    --------
    With d < K the class means alone decide (here their leading axis is the direction (1, -1, 0)):

    >>> import numpy as np
    >>> from hlm.mixture import closeness, mpca_mean_subspace
    >>> class_means = np.array([[0.0, 0, 0], [6, 0, 0], [0, 6, 0]])
    >>> V = mpca_mean_subspace(class_means, [1 / 3] * 3, 1)
    >>> print(V.shape, round(closeness(V, np.array([[1], [-1], [0]]) / np.sqrt(2)), 6))
    (3, 1) 1.0

    With d >= K the modes join in, with 40% of the weight:

    >>> modes = np.array([[0.0, 0, 0], [6, 0, 0], [0, 3, 0]])
    >>> V = mpca_mean_subspace(class_means[:2], [0.5, 0.5], 2, modes, [0.5, 0.3, 0.2], gamma=60)
    >>> print(V.shape, round(closeness(V, np.eye(3)[:, :2]), 6))
    (3, 2) 2.0
    """
    class_means = np.asarray(class_means, dtype=np.float64)
    if d < class_means.shape[0] or modes is None:
        return leading_subspace(weighted_scatter(class_means, class_weights), d, data_cov)
    g = gamma / 100.0
    cov = g * weighted_scatter(class_means, class_weights) + (1.0 - g) * weighted_scatter(modes, mode_weights)
    return leading_subspace(cov, d, data_cov)
