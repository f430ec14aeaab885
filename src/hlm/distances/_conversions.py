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

from hlm.base._blocks import row_blocks
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

    The paper's rules (section 5.2; compared-methods spec section 4.1): ``d = S_bar - s`` when S has an
    obvious upper bound S_bar, otherwise ``d = 1/s``; ``-log(s/S_bar)`` is offered too.

    Parameters
    ----------
    S : array-like of shape (N, N)
        The similarity matrix (converted to float64).
    method : {"auto", "bound_minus", "reciprocal", "neg_log"}, default "auto"
        The conversion (the registry's ``to_distance``).
    upper_bound : float or None, default None
        S_bar for ``bound_minus`` and ``neg_log``, at least max(S); None: max(S). Not used by ``reciprocal``
        (giving one is an error).
    where : str or None, default None
        Keyword-only prefix of the error messages, e.g. ``dataset 'x' (data/raw/x.mat)``.

    Returns
    -------
    D : ndarray of shape (N, N), float64
        The distances, with a zero diagonal.
    info : dict
        ``{"to_distance": the method used, "upper_bound": S_bar as a float, or None for reciprocal}``
        (recorded in the distance artifact's metadata).

    Raises
    ------
    DataError
        If S is not square, ``method`` is unknown, ``upper_bound`` is below max(S) or not finite, or
        ``reciprocal`` or ``neg_log`` meet an off-diagonal similarity <= 0.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.distances import similarity_to_distance
    >>> S = np.array([[1.0, 0.8, 0.2], [0.8, 1.0, 0.4], [0.2, 0.4, 1.0]])
    >>> D, info = similarity_to_distance(S)  # constant diagonal = max(S): bound_minus with S_bar = 1
    >>> print(D.round(3))
    [[0.  0.2 0.8]
     [0.2 0.  0.6]
     [0.8 0.6 0. ]]
    >>> info
    {'to_distance': 'bound_minus', 'upper_bound': 1.0}
    >>> D, info = similarity_to_distance(S, "reciprocal")
    >>> print(D.round(3))
    [[0.   1.25 5.  ]
     [1.25 0.   2.5 ]
     [5.   2.5  0.  ]]
    >>> info
    {'to_distance': 'reciprocal', 'upper_bound': None}
    >>> D, info = similarity_to_distance(S, "neg_log")
    >>> print(D.round(3))
    [[0.    0.223 1.609]
     [0.223 0.    0.916]
     [1.609 0.916 0.   ]]
    >>> similarity_to_distance(S, upper_bound=0.9)
    Traceback (most recent call last):
        ...
    hlm.errors.DataError: upper_bound 0.9 is below the largest similarity 1 (3 entries exceed it)
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


def symmetrize(D, tol: float = 1e-12) -> tuple[np.ndarray, bool]:
    """``(D + D^T)/2`` when max|D - D^T| > tol * max|D| (paper section 5.2).

    Returns ``(D_sym, was_asymmetric)``; D is returned unchanged when symmetric.

    The paper replaces an asymmetric distance (Amazon-47, Patrol) by ``(D + D^T)/2`` (section 5.2;
    compared-methods spec section 4.1).

    Parameters
    ----------
    D : array-like of shape (N, N)
        The distance matrix (converted to float64).
    tol : float, default 1e-12
        Relative tolerance: D counts as symmetric when max|D - D^T| <= tol * max|D| (tol when D is all 0).

    Returns
    -------
    D_sym : ndarray of shape (N, N), float64
        ``(D + D^T)/2``, or D itself (as float64) when it is symmetric.
    was_asymmetric : bool
        Whether D was averaged with its transpose (the artifact metadata's ``symmetrized``).

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.distances import symmetrize
    >>> D = np.array([[0.0, 1, 4], [3, 0, 2], [4, 2, 0]])
    >>> D_sym, was_asymmetric = symmetrize(D)
    >>> print(D_sym)
    [[0. 2. 4.]
     [2. 0. 2.]
     [4. 2. 0.]]
    >>> was_asymmetric
    True
    >>> symmetrize(D_sym)[1]
    False
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

    The paper's ``s = 1/d`` with the self-similarity "an appropriate upper bound of all the similarities"
    (section 5.2), fixed by compared-methods spec section 4.2 as U above: maximal self-similarity for fit and
    test objects alike. Used for the similarity methods on distance-only data
    (:class:`hlm.distances.SimilarityFromDistances`).

    Parameters
    ----------
    D_fit : array-like of shape (n_fit, n_fit)
        The fit set's distances (finite and non-negative off the diagonal; the diagonal is not read).
    D_test : array-like of shape (m, n_fit) or None, default None
        Distances of m test objects to the fit objects (finite and non-negative).
    where : str or None, default None
        Keyword-only prefix of the error messages.

    Returns
    -------
    S_fit : ndarray of shape (n_fit, n_fit), float64
        The fit similarities, U on the diagonal and for d = 0.
    S_test : ndarray of shape (m, n_fit), float64, or None
        The test similarities ``min(1/d, U)`` (U for d = 0); None without ``D_test``.
    U : float
        The upper bound, ``1 / (the smallest positive off-diagonal fit distance)``.

    Raises
    ------
    DataError
        If ``D_fit`` is not square, a distance is negative or not finite, ``D_test`` does not have n_fit
        columns, or no off-diagonal fit distance is positive.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.distances import distance_to_similarity
    >>> D = np.array([[0.0, 1, 4], [1, 0, 2], [4, 2, 0]])
    >>> S_fit, S_test, U = distance_to_similarity(D, [[0.5, 0, 8]])
    >>> U  # 1 / the smallest positive fit distance
    1.0
    >>> print(S_fit)
    [[1.   1.   0.25]
     [1.   1.   0.5 ]
     [0.25 0.5  1.  ]]
    >>> print(S_test)  # 1/0.5 clipped to U, d = 0 -> U, 1/8
    [[1.    1.    0.125]]
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
