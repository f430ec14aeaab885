"""Exact solver of the simplex-constrained QP behind KRI k-NN weights (spec section 6.3).

    minimise  1/2 w^T A w - b^T w   subject to  w >= 0,  1^T w = 1,

with A symmetric positive definite (in KRI: A = clip(Sym(S_N)) + lambda I,
b = P s_N). Solved by the primal active-set method of spec 6.3 step 3 [P]:
start at w = 1/k with every index free; repeatedly take the equality-constrained
minimiser on the free set F; if it is feasible, release the zero-set index with
the most negative multiplier (or stop when none is negative); otherwise step
towards it as far as w >= 0 allows and fix the blocking indices at 0.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

#: Multiplier tolerance of the stopping test, relative to the problem scale max(1, |A|max, |b|max).
#: Spec 6.3 uses the absolute -1e-12 [P]; for [0,1] similarities with unit diagonal the scale is
#: about 1 + lambda, so the two differ by that factor only. Scaling keeps the test meaningful for large lambda.
KKT_RTOL = 1e-12

#: Recompute A_FF^{-1} from scratch after this many O(k^2) updates (bounds rounding drift).
REFRESH_EVERY = 32


def simplex_qp(A: np.ndarray, b: np.ndarray, max_iter: int | None = None) -> np.ndarray:
    """Exact minimiser of 1/2 w^T A w - b^T w over the probability simplex (spec 6.3 step 3).

    ``A`` must be symmetric positive definite (k x k), ``b`` a k-vector.
    Returns w (k,), w >= 0, sum(w) = 1.

    Implementation: B holds A_FF^{-1} on the free rows/columns and zeros
    elsewhere. It is updated in O(k^2) when an index enters or leaves F (rank-one
    Schur-complement updates), recomputed from A_FF every ``REFRESH_EVERY``
    updates, and always recomputed before the stopping test is accepted, so the
    returned w is the direct solution on its final support.
    """
    A = np.asarray(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    k = b.shape[0]
    if A.shape != (k, k):
        raise ValueError(f"simplex_qp: A must be {k} x {k}, got {A.shape}")
    if k == 1:
        return np.ones(1)
    tol = KKT_RTOL * max(1.0, np.abs(A).max(), np.abs(b).max())
    max_iter = 10 * k + 50 if max_iter is None else max_iter
    w = np.full(k, 1.0 / k)  # spec start: uniform weights, every index free
    free = np.ones(k, dtype=bool)
    B, n_updates = np.linalg.inv(A), 0
    for _ in range(max_iter):
        if n_updates >= REFRESH_EVERY:
            B, n_updates = _fresh_inverse(A, free), 0
        w_eq, nu = _equality_minimiser(B, b)
        if (w_eq[free] >= 0).all():
            w = w_eq
            g = A @ w - b - nu  # multipliers of w_Z >= 0 on the zero set Z
            g[free] = np.inf
            j = int(np.argmin(g))
            if g[j] >= -tol:
                if n_updates == 0:
                    return w
                n_updates = REFRESH_EVERY  # confirm on a freshly computed inverse
                continue
            _grow(B, A, free, j)
            free[j] = True
        else:
            d = w_eq - w
            shrinking = free & (d < 0)
            ratios = np.full(k, np.inf)
            ratios[shrinking] = w[shrinking] / -d[shrinking]
            t = ratios.min()  # in [0, 1): some free w_eq < 0
            hit = np.flatnonzero(ratios <= t)
            w = np.maximum(w + t * d, 0.0)
            w[hit] = 0.0
            for p in hit:
                _drop(B, p)
            free[hit] = False
        n_updates += 1
    warnings.warn(
        f"simplex_qp: active set did not terminate in {max_iter} iterations; "
        "returning the current feasible point",
        ConvergenceWarning,
        stacklevel=2,
    )
    return w / w.sum()


def _equality_minimiser(B: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """Minimiser of 1/2 w^T A w - b^T w on the free set subject to 1^T w = 1, and its multiplier nu.

    B = A_FF^{-1} padded with zeros; w = B (b + nu 1), nu = (1 - 1^T B b) / (1^T B 1)
    (spec 6.3 step 3.1). Entries off F are exactly 0.
    """
    x_b, x_1 = B @ b, B.sum(axis=1)
    nu = (1.0 - x_b.sum()) / x_1.sum()
    return x_b + nu * x_1, float(nu)


def _fresh_inverse(A: np.ndarray, free: np.ndarray) -> np.ndarray:
    """A_FF^{-1} computed directly, padded with zeros to k x k."""
    F = np.flatnonzero(free)
    B = np.zeros_like(A)
    B[np.ix_(F, F)] = np.linalg.inv(A[np.ix_(F, F)])
    return B


def _grow(B: np.ndarray, A: np.ndarray, free: np.ndarray, j: int) -> None:
    """In place: B = A_FF^{-1} (padded) becomes the padded inverse for F + {j} (bordering)."""
    a = np.where(free, A[:, j], 0.0)
    u = B @ a  # zero off F
    schur = A[j, j] - a @ u  # > 0 for positive definite A
    B += np.outer(u / schur, u)
    B[:, j] = B[j, :] = -u / schur
    B[j, j] = 1.0 / schur


def _drop(B: np.ndarray, p: int) -> None:
    """In place: remove index p from the padded inverse (rank-one Schur downdate; row/col p become 0)."""
    col = B[:, p].copy()
    B -= np.outer(col / col[p], col)
    B[:, p] = B[p, :] = 0.0
