"""The value difference metric (VDM) of categorical records: a distance that uses the class labels.

:func:`value_difference_metric` is the VDM of a whole labelled set (data/README.md's comparison with the
University of Washington Voting file; the Stanfill-Waltz weight w_f(a) = sqrt(sum_c P(c | x_f = a)^2) of the
first record's value is optional and makes D asymmetric). Computed on all objects it would let test labels
shape the distances of a later train/test split (as the UW Voting file does), so the pipeline stores
categorical records as codes (``hlm.datasets._prepare.category_codes``) and builds the VDM per fit set from
its labels only (beyond-the-paper spec, section 4).

House Votes' value difference metric (VDM; Stanfill & Waltz 1986, Cost & Salzberg 1993),

    delta_f(a, b) = sum_c |P(c | x_f = a) - P(c | x_f = b)|^q,     D(x, z) = sum_f delta_f(x_f, z_f),

estimates P(c | x_f = a) from class labels: ``vdm_tables`` from a fit set's records and labels,
``vdm_between`` the distances under those tables (:class:`hlm.distances.VDMDistances`, in
``_vdm_classifier``, wraps a classifier on them). A value absent from the fit set gets the fit set's class
prior as its P(c | a).

Records are integer codes 0, 1, ... per feature (a missing value coded as a value of its own), as
the distance artifact stores them (``DistanceArtifact.records``). The VDM is the q-th power of the
Minkowski-q distance between the records' concatenated P(. | x_f) rows (``vdm_embedding``).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from hlm.errors import DataError


def check_records(R, what: str) -> np.ndarray:
    """Records as a non-empty 2-D int64 array of non-negative codes, else a one-line DataError naming ``what``."""
    try:
        R = np.asarray(R)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{what}: records must be a 2-D array of integer codes ({exc})") from None
    if R.ndim != 2 or R.shape[0] == 0 or R.shape[1] == 0:
        raise DataError(f"{what}: records must be a non-empty 2-D array of integer codes, got shape {R.shape}")
    if R.dtype.kind not in "biuf":
        raise DataError(f"{what}: records must be integer codes (one per value of a feature), got dtype {R.dtype}")
    if R.dtype.kind == "f":
        bad = ~np.isfinite(R) | (R != np.round(R))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise DataError(f"{what}: {int(bad.sum())} entries are not integer codes, first {R[i, j]} at [{i}, {j}]")
    R = R.astype(np.int64)
    if (R < 0).any():
        i, j = np.argwhere(R < 0)[0]
        raise DataError(f"{what}: {int((R < 0).sum())} negative codes, first {R[i, j]} at [{i}, {j}]")
    return R


def vdm_tables(R: np.ndarray, y_idx: np.ndarray, n_classes: int) -> tuple[list[np.ndarray], np.ndarray]:
    """(one P(c | x_f = a) table per feature, class prior) from codes R and class indices y_idx.

    Table f has a row per code 0..max(R[:, f]) and one more row, the prior, for larger codes; a
    code in range that R does not hold also gets the prior.
    """
    counts_y = np.bincount(y_idx, minlength=n_classes).astype(np.float64)
    prior = counts_y / counts_y.sum()
    tables = []
    for f in range(R.shape[1]):
        k = int(R[:, f].max()) + 1
        counts = np.zeros((k + 1, n_classes))
        np.add.at(counts, (R[:, f], y_idx), 1.0)
        n_a = counts.sum(axis=1, keepdims=True)
        tables.append(np.where(n_a > 0, counts / np.maximum(n_a, 1.0), prior))
    return tables, prior


def vdm_embedding(R: np.ndarray, tables: list[np.ndarray]) -> np.ndarray:
    """Each record's P(. | x_f) rows, concatenated over the features (n x F*C)."""
    if R.shape[1] != len(tables):
        raise DataError(f"records have {R.shape[1]} features but the VDM tables {len(tables)}")
    return np.hstack([P[np.minimum(R[:, f], len(P) - 1)] for f, P in enumerate(tables)])


def vdm_between(A: np.ndarray, B: np.ndarray, q: float) -> np.ndarray:
    """VDM of the embedded records A (rows) to B (columns): sum over every (feature, class) of |a - b|^q."""
    if q == 2:
        return cdist(A, B, "sqeuclidean")
    if q == 1:
        return cdist(A, B, "cityblock")
    return cdist(A, B, "minkowski", p=q) ** q


def training_vdm(records, labels, fit, q: float = 2) -> np.ndarray:
    """The N x N VDM of all ``records`` under the tables of ``records[fit]`` and ``labels[fit]`` only."""
    R = check_records(records, "records")
    _, y_idx = np.unique(np.asarray(labels)[fit], return_inverse=True)
    tables, _ = vdm_tables(R[fit], y_idx.ravel(), int(y_idx.max()) + 1)
    E = vdm_embedding(R, tables)
    return vdm_between(E, E, q)


# -- the VDM of a whole labelled set, and the records' codes


def _codes(column: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer codes 0..k-1 of the values of one categorical column."""
    _, codes = np.unique(column.astype(str), return_inverse=True)
    return codes.ravel(), int(codes.max()) + 1


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

    The VDM of a whole labelled set, ``D(x, z) = sum_f sum_c |P(c | x_f) - P(c | z_f)|^q`` (module docstring;
    data/README.md compares it with the UW Voting file). It lets every label shape the distances; the
    pipeline builds the VDM per fit set instead (:class:`VDMDistances`; beyond-the-paper spec, section 4).

    Parameters
    ----------
    records : array-like of shape (N, F)
        Categorical records: category codes or strings, no missing value (None or NaN).
    y : array-like of shape (N,)
        The class labels (compared as strings).
    q : int, default 2
        Keyword-only: the exponent of ``|P(c | a) - P(c | b)|``.
    weighted : bool, default False
        Keyword-only: multiply each feature's term by the Stanfill-Waltz weight
        ``w_f(a) = sqrt(sum_c P(c | x_f = a)^2)`` of the row record's value (D is then asymmetric).

    Returns
    -------
    ndarray of shape (N, N), float64
        The VDM of every record (row) to every record (column); symmetric unless ``weighted``.

    Raises
    ------
    DataError
        If ``records`` is not 2-D, ``y`` has another length, or a value is missing.

    Examples
    --------
    >>> from hlm.distances import value_difference_metric
    >>> votes = [["y", "n"], ["y", "n"], ["n", "n"], ["n", "y"]]
    >>> print(value_difference_metric(votes, ["a", "a", "b", "b"]).round(3))
    [[0.    0.    2.    2.889]
     [0.    0.    2.    2.889]
     [2.    2.    0.    0.889]
     [2.889 2.889 0.889 0.   ]]
    >>> print(value_difference_metric(votes, ["a", "a", "b", "b"], q=1).round(3))
    [[0.    0.    2.    3.333]
     [0.    0.    2.    3.333]
     [2.    2.    0.    1.333]
     [3.333 3.333 1.333 0.   ]]
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
