"""The Euclidean distance between feature vectors (paper section 5.2, Table 1: Sonar)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from hlm.base._blocks import mirror_upper, row_blocks
from hlm.errors import DataError


def euclidean(X) -> np.ndarray:
    """Pairwise Euclidean distances of the rows of X (N x p) as an N x N float64 matrix: the upper triangle by
    blocks of rows (SciPy's ``cdist``; ``pdist``'s values, to the bit on our machines), mirrored in place; the
    matrix is the only N x N array made (``squareform(pdist(X))`` held the condensed half beside it: 1.6 GB at
    Letter's size).

    The distance of the vector data sets (paper section 5.2, Table 1: Sonar, Imagery).

    Parameters
    ----------
    X : array-like of shape (N, p)
        The feature vectors, one per row (converted to float64).

    Returns
    -------
    ndarray of shape (N, N), float64
        The symmetric Euclidean distances, with a zero diagonal.

    Raises
    ------
    DataError
        If ``X`` is not 2-D.

    Examples
    --------
    >>> from hlm.distances import euclidean
    >>> print(euclidean([[0, 0], [3, 0], [0, 4]]))
    [[0. 3. 4.]
     [3. 0. 5.]
     [4. 5. 0.]]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise DataError(f"records must be a 2-D array (got shape {X.shape})")
    if X.shape[0] < 2:
        return np.zeros((X.shape[0], X.shape[0]))
    n = X.shape[0]
    D = np.empty((n, n))
    for rows in row_blocks(n, n):
        D[rows, rows.start:] = cdist(X[rows], X[rows.start:], metric="euclidean")
    np.fill_diagonal(D, 0.0)  # as squareform: 0 even for a row with NaN/inf (refused later, by name)
    return mirror_upper(D)


def pairwise_euclidean(rows, cols) -> np.ndarray:
    """Euclidean distances of every row vector to every column vector (SciPy's ``cdist``).

    Series of one shape (kind series: 1-D, or (channels, length) arrays) are flattened: their lock-step
    Euclidean distance, summed over the channels (aeon's DTW with ``window=0``, square-rooted).
    """
    shapes = sorted({np.shape(x) for x in (*rows, *cols)})
    if len(shapes) > 1:
        raise DataError(f"the Euclidean distance needs objects of one shape (got {shapes[0]} and {shapes[1]})")
    X, Y = (np.asarray(a, dtype=np.float64).reshape(len(a), -1) for a in (rows, cols))
    return cdist(X, Y, metric="euclidean")
