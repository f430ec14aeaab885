"""Similarity <-> distance conversions and symmetrisation (paper section 5.2).

* similarity -> distance: ``d = S_bar - s`` when S has an obvious upper bound
  ``S_bar``, otherwise ``d = 1/s`` (section 5.2); ``-log(s/S_bar)`` is offered too.
  Every conversion sets the self-distance (diagonal) to 0.
* distance -> similarity (for the similarity-based baselines): ``s = 1/d`` with
  the self-similarity an upper bound ``U`` of all similarities; ``U`` is
  fixed precisely by compared-methods spec section 4.2.
* asymmetric distances are replaced by ``(D + D^T)/2`` (section 5.2).

``where`` (optional, keyword-only) prefixes error messages, e.g.
``dataset 'x' (data/raw/x.mat)``.
"""

from __future__ import annotations

import numpy as np

from hlm.errors import DataError

METHODS = ("auto", "bound_minus", "reciprocal", "neg_log")


def _err(where: str | None, msg: str) -> DataError:
    return DataError(f"{where}: {msg}" if where else msg)


def _bound(S: np.ndarray, upper_bound: float | None, where: str | None) -> float:
    top = float(S.max())
    if upper_bound is None:
        return top
    ub = float(upper_bound)
    if not np.isfinite(ub):
        raise _err(where, f"upper_bound must be a finite number (got {ub:g})")
    if top > ub:
        over = int(np.count_nonzero(S > ub))
        raise _err(
            where,
            f"upper_bound {ub:g} is below the largest similarity {top:g} "
            f"({over} entr{'y' if over == 1 else 'ies'} exceed it)",
        )
    return ub


def has_obvious_upper_bound(S: np.ndarray) -> bool:
    """True when the diagonal is constant and equals max(S) (self-similarity maximal)."""
    diag = np.diag(S)
    return bool(diag.size) and bool(np.all(diag == diag[0])) and float(diag[0]) == float(S.max())


def similarity_to_distance(
    S, method: str = "auto", upper_bound: float | None = None, *, where: str | None = None
) -> tuple[np.ndarray, dict]:
    """Convert a square similarity matrix to distances (paper section 5.2).

    ``bound_minus``: D = S_bar - S, S_bar = ``upper_bound`` or max(S).
    ``reciprocal``: D = 1/S (every off-diagonal S must be > 0).
    ``neg_log``: D = -log(S / S_bar) (every off-diagonal S must be > 0).
    ``auto``: ``bound_minus`` when ``upper_bound`` is given or the diagonal is
    constant and equal to max(S), else ``reciprocal``.
    The diagonal of D is set to 0 in every case.
    Returns ``(D, {"to_distance": method used, "upper_bound": S_bar or None})``.
    """
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise _err(where, f"similarity matrix is not square {S.shape}")
    if method not in METHODS:
        raise _err(where, f"to_distance must be one of {', '.join(METHODS)} (got {method!r})")
    if method == "auto":
        use_bound = upper_bound is not None or has_obvious_upper_bound(S)
        method = "bound_minus" if use_bound else "reciprocal"
    if method == "reciprocal" and upper_bound is not None:
        raise _err(where, "upper_bound is not used by to_distance reciprocal")
    n = S.shape[0]
    bound = None
    if method in ("reciprocal", "neg_log"):
        count, smallest = 0, np.inf
        for rows in row_blocks(n, n):  # the off-diagonal entries, a block of rows at a time
            block = S[rows].copy()
            block[np.arange(block.shape[0]), np.arange(rows.start, rows.stop)] = np.inf  # the diagonal: left out
            count += int(np.count_nonzero(~(block > 0)))
            smallest = float(np.minimum(smallest, block.min()))  # NaN propagates, as S[off].min() did
        if count:
            raise _err(
                where,
                f"to_distance {method} needs positive similarities, but "
                f"{count} off-diagonal entries are <= 0 "
                f"(min {smallest:g}); use to_distance bound_minus",
            )
    if method != "reciprocal":
        bound = _bound(S, upper_bound, where)
    D = np.empty(S.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for rows in row_blocks(n, n):  # no N x N temporaries
            if method == "bound_minus":
                np.subtract(bound, S[rows], out=D[rows])
            elif method == "reciprocal":
                np.divide(1.0, S[rows], out=D[rows])
            else:
                D[rows] = -np.log(S[rows] / bound)
    np.fill_diagonal(D, 0.0)
    return D, {"to_distance": method, "upper_bound": bound}


def row_blocks(n_rows: int, n_cols: int, size: int = 1 << 22):
    """Slices of consecutive rows of an n_rows x n_cols matrix, about ``size`` entries each."""
    step = max(1, size // max(n_cols, 1))
    return [slice(lo, min(lo + step, n_rows)) for lo in range(0, n_rows, step)]


def mirror_upper(M: np.ndarray) -> np.ndarray:
    """In place: the lower triangle of the square ``M`` becomes the mirror of its upper one (copies, so the
    result is exactly symmetric), by blocks of rows: temporaries of about one block (``row_blocks``' size).
    Returns ``M``."""
    n = M.shape[0]
    for rows in row_blocks(n, n):
        i0, i1 = rows.start, rows.stop
        M[i0:i1, :i0] = M[:i0, i0:i1].T
        square = M[i0:i1, i0:i1]
        lower = np.tril_indices(i1 - i0, -1)
        square[lower] = square.T[lower]
    return M


def symmetrize(D, tol: float = 1e-12) -> tuple[np.ndarray, bool]:
    """``(D + D^T)/2`` when max|D - D^T| > tol * max|D| (paper section 5.2).

    Returns ``(D_sym, was_asymmetric)``; D is returned unchanged when symmetric.
    """
    D = np.asarray(D, dtype=np.float64)
    scale = gap = 0.0
    for rows in row_blocks(D.shape[0], D.shape[1]):  # no N x N temporaries (Letter: 3.2 GB each)
        scale = max(scale, float(np.abs(D[rows]).max()))
        gap = max(gap, float(np.abs(D[rows] - D[:, rows].T).max()))
    if gap > tol * (scale if scale > 0 else 1.0):
        return (D + D.T) / 2.0, True
    return D, False


def distance_to_similarity(
    D_fit, D_test=None, *, where: str | None = None
) -> tuple[np.ndarray, np.ndarray | None, float]:
    """Reciprocal similarities for the baselines (section 5.2; spec section 4.2).

    ``U = max{1/d_ij : i != j, d_ij > 0}`` over the fit set. Fit similarities:
    off-diagonal ``1/d`` with ``d = 0 -> U``, diagonal ``U``. Test similarities
    (``D_test`` is m x n_fit): ``min(1/d, U)`` with ``d = 0 -> U``.
    Returns ``(S_fit, S_test or None, U)``.
    """
    D = np.asarray(D_fit, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise _err(where, f"fit distance matrix is not square {D.shape}")
    S_fit, U = fit_similarities(D, where=where)
    S_test = None
    if D_test is not None:
        T = np.asarray(D_test, dtype=np.float64)
        if T.ndim != 2 or T.shape[1] != D.shape[0]:
            raise _err(where, f"test distances {T.shape} do not have {D.shape[0]} columns")
        if (T < 0).any() or not np.isfinite(T).all():
            raise _err(where, "test distances must be finite and non-negative")
        S_test = reciprocal_similarity(T, U)
    return S_fit, S_test, U


def fit_similarities(D: np.ndarray, index=None, *, where: str | None = None,
                     whole: bool = False) -> tuple[np.ndarray, float]:
    """``distance_to_similarity``'s fit part of ``D[np.ix_(index, index)]`` (all of the square ``D`` when
    ``index`` is None): ``(S_fit, U)``, read by row blocks, so that neither that block of distances nor an
    N x N temporary is held (at Letter's size: 1.7 GB each per CV fold). ``whole``: refuse a NaN, infinite or
    negative entry on the diagonal too (as an estimator's fit does), not only off it."""
    n = D.shape[0] if index is None else len(index)
    S = np.empty((n, n))
    smallest = np.inf
    with np.errstate(divide="ignore"):
        for rows in row_blocks(n, n):
            # a float64 copy: D may be a memory map, or integer or float32 (spec 4.2 is computed in float64)
            block = (np.array(D[rows], dtype=np.float64) if index is None  # a view of D: copied
                     else np.asarray(D[np.ix_(index[rows], index)], dtype=np.float64))  # already a copy
            if whole and not _finite_non_negative(block):
                raise _err(where, "fit distances must be finite and non-negative")
            block[np.arange(block.shape[0]), np.arange(rows.start, rows.stop)] = 0.0  # the diagonal: left out
            if not _finite_non_negative(block):
                raise _err(where, "fit distances must be finite and non-negative")
            block += 0.0  # -0.0 -> +0.0, so that 1/d gives +inf and min(inf, U) = U below
            smallest = min(smallest, float(np.min(block, initial=np.inf, where=block > 0)))
            np.divide(1.0, block, out=S[rows])  # d = 0 -> inf, and min(inf, U) = U below
    if not np.isfinite(smallest):
        raise _err(where, "cannot convert distances to similarities: no positive off-diagonal distance")
    U = float(1.0 / smallest)
    for rows in row_blocks(n, n):
        np.minimum(S[rows], U, out=S[rows])
    np.fill_diagonal(S, U)
    return S, U


def _finite_non_negative(block: np.ndarray) -> bool:
    return bool(np.isfinite(block).all() and block.min() >= 0)


def reciprocal_similarity(D: np.ndarray, upper_bound: float) -> np.ndarray:
    """min(1/d, U) elementwise, with d = 0 -> U (spec section 4.2), in float64 for a 1- or 2-d ``D``."""
    D = np.asarray(D)
    if D.ndim not in (1, 2):
        raise ValueError(f"reciprocal_similarity takes a 1- or 2-d array, not {D.ndim}-d")
    U = float(upper_bound)
    out = np.empty(D.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for rows in row_blocks(D.shape[0], D.shape[1] if D.ndim == 2 else 1):  # no N x N temporaries
            block = np.asarray(D[rows], dtype=np.float64)
            out[rows] = np.where(block > 0, np.minimum(1.0 / block, U), U)
    return out
