"""Exact solver of the simplex-constrained QP behind KRI k-NN weights (spec section 6.3).

    minimise  1/2 w^T A w - b^T w   subject to  w >= 0,  1^T w = 1,

with A symmetric positive definite (in KRI: A = clip(Sym(S_N)) + lambda I,
b = P s_N). Solved by the primal active-set method of spec 6.3 step 3 [P]:
start at w = 1/k with every index free; repeatedly take the equality-constrained
minimiser on the free set F; if it is feasible, release the zero-set index with
the most negative multiplier (or stop when none is negative); otherwise step
towards it as far as w >= 0 allows and fix the blocking indices at 0.

The iteration runs in a numba kernel (``_active_set``; ``_active_set_rows`` for
a stack of problems). It works on the free set only, so an iteration costs
O(|F|^2) instead of the O(k^2) of the padded dense formulation.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit
from sklearn.exceptions import ConvergenceWarning

#: Multiplier tolerance of the stopping test, relative to the problem scale max(1, |A|max, |b|max).
#: Spec 6.3 uses the absolute -1e-12 [P]; for [0,1] similarities with unit diagonal the scale is
#: about 1 + lambda, so the two differ by that factor only. Scaling keeps the test meaningful for large lambda.
KKT_RTOL = 1e-12

#: Recompute A_FF^{-1} from scratch after this many O(k^2) updates (bounds rounding drift).
REFRESH_EVERY = 32


def default_max_iter(k: int) -> int:
    """Iteration cap of the active-set loop for a k-variable problem."""
    return 10 * k + 50


def simplex_qp_rows(
    A: np.ndarray, b: np.ndarray, A_inv: np.ndarray | None = None, max_iter: int | None = None,
    w0: np.ndarray | None = None,
) -> np.ndarray:
    """Exact minimiser of 1/2 w^T A w - b^T w over the probability simplex (spec 6.3 step 3), per row.

    A is m x k x k (each A[r] symmetric positive definite), b is m x k; returns W
    (m x k), each row >= 0 with sum 1. ``A_inv`` (m x k x k), if given,
    is the inverse of every A[r], the B of the starting free set F = all indices
    (e.g. from an eigendecomposition the caller already has); by default it is
    ``np.linalg.inv(A)``. One ConvergenceWarning covers all rows that hit the cap.

    ``w0`` (m x k, each row on the simplex), if given, is a warm start: each row
    starts at w0 with F = its support (A_FF^{-1} computed directly; ``A_inv`` is
    then not used), e.g. the solution for the previous ridge of a CV grid, or for the
    same ridge at the previous k padded with zeros (``KRIKNN._weights_path``). The
    minimiser is unique (A positive definite), so the result is the same up to
    rounding; only the path is shorter.

    Implementation (``_active_set`` per row): B holds A_FF^{-1} on the free rows/columns
    and zeros elsewhere. It is updated in O(|F|^2) when an index enters or leaves
    F (rank-one Schur-complement updates), recomputed from A_FF every
    ``REFRESH_EVERY`` updates, and always recomputed before the stopping test is
    accepted, so the returned w is the direct solution on its final support.
    The one-problem form (``simplex_qp``) is in tests/oracles/kri_reference.py.
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    if A.ndim != 3 or b.ndim != 2 or A.shape != (b.shape[0], b.shape[1], b.shape[1]):
        raise ValueError(f"simplex_qp_rows: need A (m, k, k) and b (m, k), got {A.shape} and {b.shape}")
    m, k = b.shape
    if k == 1:
        return np.ones((m, 1))
    if w0 is not None:
        w0 = np.ascontiguousarray(w0, dtype=np.float64)
        if w0.shape != b.shape or (w0 < 0).any():
            raise ValueError(f"simplex_qp_rows: w0 must be non-negative of shape {b.shape}")
        A_inv = np.empty((m, 0, 0))
    else:
        w0 = np.empty((0, k))
        A_inv = np.linalg.inv(A) if A_inv is None else np.array(A_inv, dtype=np.float64, order="C")
        if A_inv.shape != A.shape:
            raise ValueError(f"simplex_qp_rows: A_inv must have the shape of A {A.shape}, got {A_inv.shape}")
    max_iter = default_max_iter(k) if max_iter is None else int(max_iter)
    W, n_failed = _active_set_rows(A, b, A_inv, KKT_RTOL, max_iter, REFRESH_EVERY, w0)
    if n_failed:
        _warn_not_converged(max_iter, n_failed, stacklevel=3)
    return W


def _warn_not_converged(max_iter: int, n_failed: int, stacklevel: int) -> None:
    what = "active set did not" if n_failed == 1 else f"active set did not, for {n_failed} problems,"
    warnings.warn(
        f"simplex_qp: {what} terminate in {max_iter} iterations; returning the current feasible point",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )


# ------------------------------------------------------------------ compiled kernels
@njit(cache=True)
def _active_set_rows(A, b, A_inv, rtol, max_iter, refresh_every, W0):  # pragma: no cover - compiled
    """``_active_set`` on every row, tol = rtol * max(1, |A_r|max, |b_r|max). Returns (W, n_not_converged).

    ``W0`` with m rows: warm starts (see ``simplex_qp_rows``); with 0 rows: cold starts from A_inv.
    """
    m, k = b.shape
    warm = W0.shape[0] == m
    W = np.empty((m, k))
    n_failed = 0
    for r in range(m):
        scale = 1.0
        for i in range(k):
            scale = max(scale, abs(b[r, i]))
            for j in range(k):
                scale = max(scale, abs(A[r, i, j]))
        if warm:
            w, converged, _ = _active_set_from(A[r], b[r], W0[r], rtol * scale, max_iter, refresh_every)
        else:
            w, converged, _ = _active_set(A[r], b[r], A_inv[r], rtol * scale, max_iter, refresh_every)
        W[r] = w
        if not converged:
            n_failed += 1
    return W, n_failed


@njit(cache=True, fastmath={"reassoc"})
def _active_set(A, b, A_inv, tol, max_iter, refresh_every):  # pragma: no cover - compiled
    """Primal active-set iteration of spec 6.3 step 3 on one problem (k >= 2); A_inv = A^{-1}.

    Returns (w, converged, n_released); n_released counts indices moved from Z back into F.

    Storage: F is kept in slots 0..nf-1; ``idx[s]`` is the index held by slot s and
    ``slot[i]`` the slot of index i (-1 for i in Z). ``Bc[:nf, :nf]`` is A_FF^{-1} in slot
    order (the padded B of the dense formulation, compacted), so every O(|F|^2) loop runs
    over contiguous rows. "reassoc" lets the compiler vectorise the dot-product sums (it may
    reorder them: rounding-level differences from the dense numpy formulation only).
    """
    k = b.shape[0]
    w = np.full(k, 1.0 / k)  # spec start: uniform weights, every index free
    idx = np.arange(k)
    slot = np.arange(k)
    return _iterate(A, b, w, idx, slot, k, A_inv.copy(), b.copy(), tol, max_iter, refresh_every)


@njit(cache=True)
def _active_set_from(A, b, w0, tol, max_iter, refresh_every):  # pragma: no cover - compiled
    """``_active_set`` started at the feasible point w0 (>= 0, sum 1) with F = its support."""
    k = b.shape[0]
    w = w0 / w0.sum()
    idx = np.empty(k, dtype=np.int64)
    slot = np.full(k, -1, dtype=np.int64)
    nf = 0
    for i in range(k):
        if w[i] > 0.0:
            idx[nf] = i
            slot[i] = nf
            nf += 1
        else:
            w[i] = 0.0
    idx[nf:] = 0  # slots beyond nf are never read
    Bc = np.zeros((k, k))
    _fresh_inverse(A, idx, nf, Bc)
    bc = np.zeros(k)
    for p in range(nf):
        bc[p] = b[idx[p]]
    return _iterate(A, b, w, idx, slot, nf, Bc, bc, tol, max_iter, refresh_every)


@njit(cache=True, fastmath={"reassoc"})
def _iterate(A, b, w, idx, slot, nf, Bc, bc, tol, max_iter, refresh_every):  # pragma: no cover - compiled
    """The iteration of ``_active_set`` from a feasible w with free set idx[:nf] (slot order) and
    Bc[:nf, :nf] = A_FF^{-1}, bc[:nf] = b_F."""
    k = b.shape[0]
    At = np.ascontiguousarray(A.T)  # rows of At are columns of A: (A w)_z = sum_i A[z, i] w_i
    n_updates = 0
    n_released = 0
    w_eq = np.zeros(k)  # slot order
    x_1 = np.zeros(k)
    u = np.zeros(k)
    a = np.zeros(k)
    g = np.zeros(k)
    ratio = np.zeros(k)  # index order
    d = np.zeros(k)  # index order
    for _ in range(max_iter):
        if n_updates >= refresh_every:
            _fresh_inverse(A, idx, nf, Bc)
            n_updates = 0
        # equality-constrained minimiser on F (spec 6.3 step 3.1): w = B (b + nu 1)
        sum_b = 0.0
        sum_1 = 0.0
        for p in range(nf):
            row = Bc[p]
            sb = 0.0
            s1 = 0.0
            for q in range(nf):
                sb += row[q] * bc[q]
                s1 += row[q]
            w_eq[p] = sb
            x_1[p] = s1
            sum_b += sb
            sum_1 += s1
        nu = (1.0 - sum_b) / sum_1
        feasible = True
        for p in range(nf):
            w_eq[p] += nu * x_1[p]
            if not w_eq[p] >= 0.0:
                feasible = False
        if feasible:
            for p in range(nf):
                w[idx[p]] = w_eq[p]
            # multipliers g = A w - b - nu on the zero set Z; the most negative one enters F
            g[:] = 0.0
            for p in range(nf):
                wi = w[idx[p]]
                row = At[idx[p]]
                for z in range(k):
                    g[z] += row[z] * wi
            j = -1
            g_min = np.inf
            for z in range(k):
                if slot[z] < 0:
                    gz = g[z] - b[z] - nu
                    if gz < g_min:
                        g_min = gz
                        j = z
            if j < 0 or g_min >= -tol:
                if n_updates == 0:
                    return w, True, n_released
                n_updates = refresh_every  # confirm on a freshly computed inverse
                continue
            # j enters F (bordering): u = A_FF^{-1} a, a = A[F, j], Schur complement A_jj - a^T u
            for p in range(nf):
                a[p] = A[idx[p], j]
            schur = A[j, j]
            for p in range(nf):
                row = Bc[p]
                s = 0.0
                for q in range(nf):
                    s += row[q] * a[q]
                u[p] = s
            for p in range(nf):
                schur -= a[p] * u[p]
            for p in range(nf):
                row = Bc[p]
                up = u[p] / schur
                for q in range(nf):
                    row[q] += up * u[q]
            for p in range(nf):
                Bc[p, nf] = -u[p] / schur
                Bc[nf, p] = -u[p] / schur
            Bc[nf, nf] = 1.0 / schur
            idx[nf] = j
            slot[j] = nf
            bc[nf] = b[j]
            nf += 1
            n_released += 1
        else:
            # step towards w_eq as far as w >= 0 allows; the blocking indices leave F
            t = np.inf
            for p in range(nf):
                i = idx[p]
                d[i] = w_eq[p] - w[i]
                ratio[i] = w[i] / -d[i] if d[i] < 0.0 else np.inf
                if ratio[i] < t:
                    t = ratio[i]  # in [0, 1): some free w_eq < 0
            for p in range(nf):
                i = idx[p]
                w[i] = max(w[i] + t * d[i], 0.0)
            for i in range(k):  # in increasing index order, like the dense formulation
                if slot[i] >= 0 and ratio[i] <= t:
                    w[i] = 0.0
                    nf = _drop(Bc, idx, slot, bc, nf, slot[i], u)
        n_updates += 1
    return w / w.sum(), False, n_released


@njit(cache=True)
def _drop(Bc, idx, slot, bc, nf, p, col):  # pragma: no cover - compiled
    """Remove slot p from F: rank-one Schur downdate of Bc, then the last slot moves into p. Returns nf - 1."""
    for q in range(nf):
        col[q] = Bc[q, p]
    piv = col[p]
    for r in range(nf):
        if r != p:
            row = Bc[r]
            cr = col[r] / piv
            for q in range(nf):
                row[q] -= cr * col[q]
    last = nf - 1
    slot[idx[p]] = -1
    if p != last:
        for q in range(nf):
            Bc[p, q] = Bc[last, q]
        for q in range(nf):
            Bc[q, p] = Bc[q, last]
        Bc[p, p] = Bc[last, last]
        idx[p] = idx[last]
        slot[idx[p]] = p
        bc[p] = bc[last]
    return last


@njit(cache=True)
def _fresh_inverse(A, idx, nf, Bc):  # pragma: no cover - compiled
    """In place: Bc[:nf, :nf] = A_FF^{-1} in slot order, computed directly."""
    A_FF = np.empty((nf, nf))
    for p in range(nf):
        for q in range(nf):
            A_FF[p, q] = A[idx[p], idx[q]]
    Bc[:nf, :nf] = np.linalg.inv(A_FF)
