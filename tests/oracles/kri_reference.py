"""One KRI simplex QP at a time: ``simplex_qp``, the one-problem form of ``hlm.neighbors._kri.simplex_qp_rows``.

Production code solves every row of a prediction in one compiled call
(``simplex_qp_rows``); the tests use this form for single problems (known
answers, the plain-numpy reference active set, the iteration cap). It calls the
same compiled iteration (``_active_set``) with A^{-1} from ``np.linalg.inv`` and
tol = KKT_RTOL * max(1, |A|max, |b|max), as ``simplex_qp_rows`` does per row.
"""

from __future__ import annotations

import numpy as np

from hlm.neighbors._kri import KKT_RTOL, REFRESH_EVERY, _active_set, _warn_not_converged, default_max_iter


def simplex_qp(A: np.ndarray, b: np.ndarray, max_iter: int | None = None) -> np.ndarray:
    """Exact minimiser of 1/2 w^T A w - b^T w over the probability simplex (spec 6.3 step 3).

    ``A`` must be symmetric positive definite (k x k), ``b`` a k-vector.
    Returns w (k,), w >= 0, sum(w) = 1.

    Implementation: ``_active_set`` (see ``simplex_qp_rows``).
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    k = b.shape[0]
    if A.shape != (k, k):
        raise ValueError(f"simplex_qp: A must be {k} x {k}, got {A.shape}")
    if k == 1:
        return np.ones(1)
    tol = KKT_RTOL * max(1.0, np.abs(A).max(), np.abs(b).max())
    max_iter = default_max_iter(k) if max_iter is None else int(max_iter)
    w, converged, _ = _active_set(A, b, np.linalg.inv(A), tol, max_iter, REFRESH_EVERY)
    if not converged:
        _warn_not_converged(max_iter, 1, stacklevel=3)
    return w
