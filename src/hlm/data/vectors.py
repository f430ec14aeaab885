"""Distances computed from records (paper section 5.2, Table 1).

* :func:`euclidean` for numeric feature vectors (Sonar).
* :func:`value_difference_metric` for categorical records (Voting): the
  value difference metric of Stanfill & Waltz (1986) in the modified form of
  Cost & Salzberg (1993),

      delta_f(a, b) = sum_c |P(c | x_f = a) - P(c | x_f = b)|^q,
      D(x, z)       = sum_f delta_f(x_f, z_f)            [ * w_f(x_f) ],

  with the optional Stanfill-Waltz weight w_f(a) = sqrt(sum_c P(c | x_f = a)^2)
  of the first record's value (this makes D asymmetric; symmetrise it).
  The default q = 2, unweighted, is the variant that matches the University of
  Washington Voting similarity best (data/README.md, "house_votes vs voting").

The VDM uses the class labels: computed on all objects it would let test
labels shape the distances of a later train/test split (as the UW Voting file
does). So the pipeline stores categorical records as codes (:func:`category_codes`)
and builds the VDM per fit set from its labels only
(``hlm.models.label_distances``); :func:`value_difference_metric` is the VDM
of a whole labelled set (data/README.md's comparison with the UW file).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from hlm.data.conversions import mirror_upper, row_blocks
from hlm.errors import DataError


def euclidean(X) -> np.ndarray:
    """Pairwise Euclidean distances of the rows of X (N x p) as an N x N float64 matrix: the upper triangle by
    blocks of rows (SciPy's ``cdist``; ``pdist``'s values, to the bit on our machines), mirrored in place; the
    matrix is the only N x N array made (``squareform(pdist(X))`` held the condensed half beside it: 1.6 GB at
    Letter's size)."""
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


def _codes(column: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer codes 0..k-1 of the values of one categorical column."""
    _, codes = np.unique(column.astype(str), return_inverse=True)
    return codes.ravel(), int(codes.max()) + 1


def category_codes(records) -> tuple[np.ndarray, list[list[str]]]:
    """Categorical records (N x F, strings; a missing value already mapped to a value of its own) as
    int64 codes 0..k_f-1 per feature (values in sorted order), and each feature's values by code."""
    records = np.asarray(records)
    if records.ndim != 2:
        raise DataError(f"records must be a 2-D array (got shape {records.shape})")
    codes = np.empty(records.shape, dtype=np.int64)
    values = []
    for f in range(records.shape[1]):
        names, codes[:, f] = np.unique(records[:, f].astype(str), return_inverse=True)
        values.append(names.tolist())
    return codes, values


def _missing(records: np.ndarray) -> np.ndarray:
    if records.dtype.kind == "f":
        return np.isnan(records)
    if records.dtype.kind == "O":
        return np.array(
            [[x is None or (isinstance(x, float) and np.isnan(x)) for x in row] for row in records],
            dtype=bool,
        ).reshape(records.shape)
    return np.zeros(records.shape, dtype=bool)


def value_difference_metric(records, y, *, q: int = 2, weighted: bool = False) -> np.ndarray:
    """VDM distances (Stanfill & Waltz 1986; Cost & Salzberg 1993) of categorical records.

    ``records`` is N x F (category codes or strings; a missing value must
    already be mapped to a value of its own, e.g. 'abstain'); ``y`` the N
    class labels. Returns an N x N float64 matrix (symmetric unless weighted).
    """
    records = np.asarray(records)
    if records.ndim != 2:
        raise DataError(f"records must be a 2-D array (got shape {records.shape})")
    y = np.asarray(y).astype(str).ravel()
    n = records.shape[0]
    if len(y) != n:
        raise DataError(f"{len(y)} labels for {n} records")
    miss = _missing(records)
    if miss.any():
        i, j = np.argwhere(miss)[0]
        raise DataError(
            f"records have {int(miss.sum())} missing values (first at row {i + 1}, column {j + 1}); "
            "map them to a value of their own (registry field na_value)"
        )
    _, yc = np.unique(y, return_inverse=True)
    n_classes = int(yc.max()) + 1
    D = np.zeros((n, n))
    for f in range(records.shape[1]):
        codes, k = _codes(records[:, f])
        counts = np.zeros((k, n_classes))
        np.add.at(counts, (codes, yc), 1.0)
        P = counts / counts.sum(axis=1, keepdims=True)  # P(c | value), every value occurs
        delta = (np.abs(P[:, None, :] - P[None, :, :]) ** q).sum(axis=-1)
        if weighted:
            delta = delta * np.sqrt((P**2).sum(axis=1))[:, None]
        D += delta[codes][:, codes]
    return D
