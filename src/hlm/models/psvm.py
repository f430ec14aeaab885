"""P-SVM (potential support vector machine) on a precomputed similarity matrix.

Spec ``compared-methods.md`` section 6.9 (Hochreiter & Obermayer 2006):

* data matrix K = rows of S_fit (samples to classify) x columns (training
  objects), neither square nor PSD needed [V: abstract];
* columns centred over the rows and scaled to unit Euclidean norm, K~; near
  constant columns dropped; test rows use the fit-set statistics [V: implementation];
* dual  min_a 1/2 a'Qa - c'a + eps |a|_1,  -C <= a_j <= C,  Q = K~'K~,
  c = K~'y (y centred) [V: implementation], i.e. a box-constrained lasso;
* solved by exact cyclic coordinate descent (single-variable SMO) with a KKT
  stopping rule [P], accelerated by Newton steps on the free set once the sign
  pattern has settled (a [P] departure for speed: same solution, same stopping
  rule; ``psvm_dual(..., newton=False)`` is pure CD); the free-set factorisation
  is LAPACK's pivoted Cholesky (``legacy=True``: the earlier scalar numba
  version, kept as the reference); by default (``active_set=True``) the phase
  after every block of CD sweeps is a primal active-set method that also adds
  violating coordinates to the free set itself, with Cholesky updates and
  downdates instead of refactorisations (``_active_set_steps``; ``active_set=False``:
  the previous Newton phases);
* b = mean(y) [V]; decision f(u) = k~(u)'a + b;
* multi-class: one-vs-one voting, one P-SVM per class pair [P] (spec 2, 6.9).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from numba import njit
from scipy.linalg.lapack import dpstrf
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.models._base import CompiledKernels, SimilarityClassifier
from hlm.models._grid import group_grid

#: [P] a column whose (population) std is at most this times max(1, max|column|) is dropped (spec 6.9).
CONST_COLUMN_RTOL = 1e-12


# -- normalisation (spec 6.9 "Normalisation") ---------------------------------
def normalise_columns(K: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre the columns of K over its m rows and divide by std * sqrt(m) (spec 6.9) [V: implementation].

    std is the population std (ddof=0), so kept columns get unit Euclidean norm
    exactly ([P]: the spec's "approx. unit norm" leaves ddof open). Near-constant
    columns are dropped ([P] threshold ``CONST_COLUMN_RTOL``).

    Returns ``(K_tilde, mean, scale, keep)``: ``keep`` is a boolean mask over
    the columns of K; ``mean`` and ``scale`` hold the statistics of the kept
    columns; ``K_tilde = (K[:, keep] - mean) / scale``.
    """
    K = np.asarray(K, dtype=np.float64)
    m = K.shape[0]
    mean = K.mean(axis=0)
    std = K.std(axis=0)
    magnitude = np.maximum(1.0, np.abs(K).max(axis=0, initial=0.0))
    keep = std > CONST_COLUMN_RTOL * magnitude
    mean, scale = mean[keep], std[keep] * np.sqrt(m)
    return (K[:, keep] - mean) / scale, mean, scale, keep


def apply_normalisation(K_te: np.ndarray, mean: np.ndarray, scale: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Normalise test rows with the **fit-set** column statistics (spec 6.9, spec 1 "fit set")."""
    return (np.asarray(K_te, dtype=np.float64)[:, keep] - mean) / scale


# -- dual solver (spec 6.9 "Solver") ------------------------------------------
@njit(cache=True)
def _violation(a, gj, C, eps):  # pragma: no cover - compiled
    """The KKT violation of spec 6.9 of one coordinate at value a with gradient gj."""
    if a == 0.0:
        return abs(gj) - eps  # |g_j| <= eps
    if a == C:
        return gj + eps  # g_j + eps <= 0
    if a == -C:
        return eps - gj  # g_j - eps >= 0
    if a > 0.0:
        return abs(gj + eps)  # interior: g_j + eps sign(a_j) = 0
    return abs(gj - eps)


@njit(cache=True)
def _max_kkt_violation(alpha, g, C, eps):  # pragma: no cover - compiled
    """Largest violation of the KKT conditions of spec 6.9 at (alpha, gradient g)."""
    worst = 0.0
    for j in range(alpha.shape[0]):
        v = _violation(alpha[j], g[j], C, eps)
        if v > worst:
            worst = v
    return worst


@njit(cache=True)
def _full_gradient(Q, c, alpha, g):  # pragma: no cover - compiled
    """g = Q alpha - c, recomputed from scratch (removes drift of the incremental updates)."""
    P = alpha.shape[0]
    for i in range(P):
        s = -c[i]
        for j in range(P):
            if alpha[j] != 0.0:
                s += Q[i, j] * alpha[j]
        g[i] = s


@njit(cache=True)
def _coordinate_descent(Q, c, alpha, C, eps, tol_abs, max_sweeps):  # pragma: no cover - compiled
    """Cyclic exact coordinate descent [P]; updates ``alpha`` in place. Returns (sweeps, converged).

    a_j <- clip(soft_{eps/Q_jj}(a_j - g_j/Q_jj), -C, C); the gradient g = Q a - c
    is kept up to date in O(P) per changed coordinate (Q symmetric: row j = column j).
    """
    P = alpha.shape[0]
    g = np.empty(P)
    _full_gradient(Q, c, alpha, g)
    if _max_kkt_violation(alpha, g, C, eps) <= tol_abs:
        return 0, True
    for sweep in range(1, max_sweeps + 1):
        for j in range(P):
            qjj = Q[j, j]
            z = alpha[j] - g[j] / qjj
            t = eps / qjj
            if z > t:
                a = z - t
            elif z < -t:
                a = z + t
            else:
                a = 0.0
            if a > C:
                a = C
            elif a < -C:
                a = -C
            d = a - alpha[j]
            if d != 0.0:
                alpha[j] = a
                for i in range(P):
                    g[i] += d * Q[j, i]
        if _max_kkt_violation(alpha, g, C, eps) <= tol_abs:
            _full_gradient(Q, c, alpha, g)  # confirm on the exact gradient
            if _max_kkt_violation(alpha, g, C, eps) <= tol_abs:
                return sweep, True
    return max_sweeps, False


def dual_terms(K_tilde: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q = K~'K~ and c = K~'(y - mean(y)) of the dual (spec 6.9)."""
    K_tilde = np.ascontiguousarray(K_tilde, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return K_tilde.T @ K_tilde, K_tilde.T @ (y - y.mean())


def kkt_violation(K_tilde: np.ndarray, y: np.ndarray, alpha: np.ndarray, C: float, epsilon: float) -> float:
    """Max KKT violation of ``alpha`` for the dual of spec 6.9 (0 at an exact solution)."""
    Q, c = dual_terms(K_tilde, y)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    return float(_max_kkt_violation(alpha, Q @ alpha - c, float(C), float(epsilon)))


def solver_tolerance(c: np.ndarray, tol: float) -> float:
    """Absolute KKT tolerance tol * max(1, |c|_inf) (spec 6.9)."""
    return tol * max(1.0, float(np.abs(c).max(initial=0.0)))


#: [P] relative pivot tolerance of the pivoted Cholesky in the Newton phase (dependent columns skipped).
PIVOT_RTOL = 1e-13


@njit(cache=True)
def _pivoted_cholesky(A, rtol):  # pragma: no cover - compiled
    """Diagonally pivoted Cholesky of a symmetric PSD, possibly singular A (like LAPACK pstrf).

    Returns ``(L, piv, rank)``: A[piv[:rank]][:, piv[:rank]] = L L' with L (piv: all n, dependent last)
    ``rank x rank`` lower triangular; pivots whose Schur complement falls to
    rtol * max(diag A) or below are left out (dependent columns).
    """
    n = A.shape[0]
    W = A.copy()
    piv = np.arange(n)
    tol = rtol * max(np.max(np.diag(A)), 1e-300)
    rank = n
    for k in range(n):
        j = k
        for i in range(k + 1, n):
            if W[i, i] > W[j, j]:
                j = i
        if W[j, j] <= tol:
            rank = k
            break
        if j != k:  # symmetric swap of rows/columns k and j
            for i in range(n):
                W[k, i], W[j, i] = W[j, i], W[k, i]
            for i in range(n):
                W[i, k], W[i, j] = W[i, j], W[i, k]
            piv[k], piv[j] = piv[j], piv[k]
        W[k, k] = np.sqrt(W[k, k])
        for i in range(k + 1, n):
            W[i, k] /= W[k, k]
        for jj in range(k + 1, n):  # full (symmetric) Schur complement: later swaps read both triangles
            f = W[jj, k]
            for i in range(k + 1, n):
                W[i, jj] -= W[i, k] * f
    L = np.zeros((rank, rank))
    for i in range(rank):
        for k in range(i + 1):
            L[i, k] = W[i, k]
    return L, piv, rank


@njit(cache=True)
def _lower_forward(L, r, b):  # pragma: no cover - compiled
    """z with L[:r, :r] z = b, L lower triangular (forward substitution by rows)."""
    z = np.empty(r)
    for i in range(r):
        acc = b[i]
        for k in range(i):
            acc -= L[i, k] * z[k]
        z[i] = acc / L[i, i]
    return z


@njit(cache=True)
def _cholesky_solve(L, r, b):  # pragma: no cover - compiled
    """x with (L L') x = b, L[:r, :r] lower triangular."""
    z = _lower_forward(L, r, b)
    for i in range(r - 1, -1, -1):
        acc = z[i]
        for k in range(i + 1, r):
            acc -= L[k, i] * z[k]
        z[i] = acc / L[i, i]
    return z


@njit(cache=True)
def _cholesky_delete(L, r, q):  # pragma: no cover - compiled
    """In place: L[:r-1, :r-1] becomes the factor of L L' without row/column q (Givens, O(r^2)).

    Row by row (contiguous access): row k takes old row k+1, gets the rotations
    of the rows above it, then the one that zeroes its superdiagonal entry. The
    same floating-point operations, in the same order per entry, as rotating
    column pairs over all rows.
    """
    cs = np.empty(r)
    sn = np.empty(r)
    for k in range(q, r - 1):
        for j in range(r):
            L[k, j] = L[k + 1, j]
        for i in range(q, k):
            x, y = L[k, i], L[k, i + 1]
            L[k, i] = cs[i] * x + sn[i] * y
            L[k, i + 1] = -sn[i] * x + cs[i] * y
        a, b = L[k, k], L[k, k + 1]
        rho = np.hypot(a, b)
        cs[k], sn[k] = a / rho, b / rho
        L[k, k] = cs[k] * a + sn[k] * b
        L[k, k + 1] = 0.0
    for k in range(r):
        L[k, r - 1] = 0.0
        L[r - 1, k] = 0.0


@njit(cache=True)
def _cholesky_delete_cols(L, r, q):  # pragma: no cover - compiled
    """``_cholesky_delete`` rotating column pairs over all rows (strided access; the reference path)."""
    for k in range(q, r - 1):
        for j in range(r):
            L[k, j] = L[k + 1, j]
    for i in range(q, r - 1):  # zero the superdiagonal entry L[i, i+1] left by the shift
        a, b = L[i, i], L[i, i + 1]
        rho = np.hypot(a, b)
        cs, sn = a / rho, b / rho
        for k in range(i, r - 1):
            x, y = L[k, i], L[k, i + 1]
            L[k, i] = cs * x + sn * y
            L[k, i + 1] = -sn * x + cs * y
        L[i, i + 1] = 0.0
    for k in range(r):
        L[k, r - 1] = 0.0
        L[r - 1, k] = 0.0


@njit(cache=True)
def _cholesky_solve_rows(L, r, b):  # pragma: no cover - compiled
    """``_cholesky_solve`` with the back substitution L'x = z done by rows of L (contiguous)."""
    z = _lower_forward(L, r, b)
    for i in range(r - 1, -1, -1):
        z[i] /= L[i, i]
        xi = z[i]
        for k in range(i):
            z[k] -= L[i, k] * xi
    return z


@njit(cache=True)
def _newton_phase(Q, c, alpha, C, eps, rtol, tol_abs):  # pragma: no cover - compiled
    """Safeguarded Newton steps on the free set, in place [P] (a primal active-set method).

    W = independent part of F = {j: 0 < |a_j| < C}, signs s fixed. On that
    face the dual is the quadratic 1/2 a'Qa - c'a + eps s'a; the Newton
    direction d solves Q_WW d = -(g_W + eps s), g = Qa - c. A step is cut at the
    first coordinate reaching 0 or +-C (set there exactly, then removed from W
    by a Cholesky downdate), so the objective never increases. Stops after the
    first uncut step, i.e. at the optimum of the final face.

    Free coordinates left out of W as dependent (Q is rank-deficient when a pair
    has fewer rows than columns) cannot be fixed on the face, and plain CD crawls
    there (objective gains of 1e-10 per sweep). After an uncut step, the worst such
    j with |g_j + eps s_j| > tol_abs takes one null-space step instead: along
    d = (d_j = 1, d_W = -Q_WW^{-1} Q_Wj), Q d = 0, so the objective is linear with
    slope g_j + eps s_j; move downhill until a coordinate reaches 0 or +-C (a
    degenerate simplex pivot; it leaves the free set). Returns the number of cut
    and null-space steps (0: nothing left to do on this face).

    (Reference version: scalar pivoted Cholesky in numba; ``_newton_phase_lapack`` is the
    same phase with LAPACK's pstrf.)
    """
    P = alpha.shape[0]
    nf = 0
    F = np.empty(P, dtype=np.int64)
    for j in range(P):
        if alpha[j] != 0.0 and abs(alpha[j]) < C:
            F[nf] = j
            nf += 1
    if nf == 0:
        return 0
    QF = np.empty((nf, nf))
    for a in range(nf):
        for b in range(nf):
            QF[a, b] = Q[F[a], F[b]]
    L, piv, r = _pivoted_cholesky(QF, rtol)
    return _newton_steps(Q, c, alpha, C, eps, tol_abs, L, r, F[:nf], piv)


@njit(cache=True)
def _newton_steps(Q, c, alpha, C, eps, tol_abs, L, r, F, piv, rows=False):  # pragma: no cover - compiled
    """The steps of ``_newton_phase`` given the pivoted factor Q_FF[piv[:r]][:, piv[:r]] = L L'
    of the free set F (in place on ``alpha`` and ``L``). Returns the number of steps taken.
    ``rows``: solve and downdate by rows of L (``_cholesky_solve_rows``, ``_cholesky_delete``: faster),
    and after a null-space step in which j itself left the free set, take the next one on the same
    factor (the reference version refactorises first)."""
    P = alpha.shape[0]
    nf = F.shape[0]
    W = np.empty(max(r, 1), dtype=np.int64)
    for a in range(r):
        W[a] = F[piv[a]]
    rhs = np.empty(max(r, 1))
    cuts = 0
    while r > 0:
        for a in range(r):
            i = W[a]
            acc = -c[i] + (eps if alpha[i] > 0.0 else -eps)
            if rows:  # dense dot (vectorised)
                acc += np.dot(Q[i], alpha)
            else:
                for j in range(P):
                    if alpha[j] != 0.0:
                        acc += Q[i, j] * alpha[j]
            rhs[a] = -acc
        d = _cholesky_solve_rows(L, r, rhs) if rows else _cholesky_solve(L, r, rhs)
        t, stop, landing = _ratio_test(alpha, W, d, r, C, 1.0)
        for a in range(r):
            i = W[a]
            v = alpha[i] + t * d[a]
            if v * alpha[i] <= 0.0:  # rounding guard: never cross a sign
                v = 0.0
            alpha[i] = min(max(v, -C), C)
        if stop < 0:
            if cuts == 0 and r < nf:
                dependent = F[piv[r:nf]]
                done = 0
                while True:
                    code = _null_space_step(Q, c, alpha, C, eps, tol_abs, L, r, W, dependent)
                    done += code > 0
                    if code != 2 or not rows:
                        return done
                    for a in range(r):  # j left, W unchanged: the next dependent j on the same factor
                        if alpha[W[a]] == 0.0 or abs(alpha[W[a]]) == C:
                            return done
            return cuts
        cuts += 1
        alpha[W[stop]] = landing  # exactly on the face that cut the step
        for a in range(r - 1, -1, -1):  # coordinates now at 0 or +-C leave W
            if alpha[W[a]] == 0.0 or abs(alpha[W[a]]) == C:
                if rows:
                    _cholesky_delete(L, r, a)
                else:
                    _cholesky_delete_cols(L, r, a)
                for b in range(a, r - 1):
                    W[b] = W[b + 1]
                r -= 1
    return cuts


def _newton_phase_lapack(Q, c, alpha, C, eps, rtol, tol_abs):
    """``_newton_phase`` with the pivoted Cholesky of Q_FF by LAPACK ``dpstrf`` (blocked, level-3
    BLAS; same pivot rule and rank cut-off rtol * max diag) [P: speed only, spec 6.9]."""
    F = np.flatnonzero((alpha != 0.0) & (np.abs(alpha) < C))
    if F.size == 0:
        return 0
    QF = Q[np.ix_(F, F)]
    tol = rtol * max(float(QF.diagonal().max()), 1e-300)
    factor, piv, rank, info = dpstrf(QF, lower=1, tol=tol, overwrite_a=1)
    if info < 0:  # pragma: no cover - bad argument
        raise RuntimeError(f"dpstrf failed (info={info})")
    L = np.ascontiguousarray(np.tril(factor[:rank, :rank]))
    return int(_newton_steps(Q, c, alpha, C, eps, tol_abs, L, int(rank), F.astype(np.int64),
                             (piv - 1).astype(np.int64), True))


@njit(cache=True)
def _ratio_test(alpha, idx, d, n, C, t_max):  # pragma: no cover - compiled
    """Longest step t <= t_max along d (over coordinates idx[:n]) keeping every one of them in
    [0, C] or [-C, 0] (no sign crossing). Returns (t, position that blocks or -1, its landing value).
    ``_ratio_test_signed`` with each coordinate's own sign (a coordinate at 0 does not block)."""
    s = np.empty(n)
    for a in range(n):
        s[a] = np.sign(alpha[idx[a]])
    return _ratio_test_signed(alpha, idx, s, d, n, C, t_max)


@njit(cache=True)
def _null_space_step(Q, c, alpha, C, eps, tol_abs, L, r, W, dependent):  # pragma: no cover - compiled
    """One downhill step along the null direction of the worst dependent free coordinate (see
    ``_newton_phase``). Returns 0 if no step was taken, 2 if j itself left the free set
    (W and its factor unchanged), else 1."""
    P = alpha.shape[0]
    best, j = tol_abs, -1
    for jj in dependent:
        if alpha[jj] == 0.0 or abs(alpha[jj]) == C:
            continue
        acc = -c[jj] + (eps if alpha[jj] > 0.0 else -eps)
        for i in range(P):
            if alpha[i] != 0.0:
                acc += Q[jj, i] * alpha[i]
        if abs(acc) > best:
            best, j, slope = abs(acc), jj, acc
    if j < 0:
        return 0
    rhs = np.empty(r)
    for a in range(r):
        rhs[a] = Q[W[a], j]
    beta = _cholesky_solve(L, r, rhs)
    idx = np.empty(r + 1, dtype=np.int64)
    d = np.empty(r + 1)
    sigma = -1.0 if slope > 0.0 else 1.0  # downhill
    for a in range(r):
        idx[a], d[a] = W[a], -sigma * beta[a]
    idx[r], d[r] = j, sigma
    t, stop, landing = _ratio_test(alpha, idx, d, r + 1, C, np.inf)
    if stop < 0:  # unbounded linear descent cannot happen in a box; be safe
        return 0
    for a in range(r + 1):
        i = idx[a]
        v = alpha[i] + t * d[a]
        if v * alpha[i] <= 0.0:
            v = 0.0
        alpha[i] = min(max(v, -C), C)
    alpha[idx[stop]] = landing
    return 2 if stop == r else 1


# -- active-set phase (homotopy-style additions; [P] speed only) ----------------
@njit(cache=True)
def _ratio_test_signed(alpha, idx, s, d, n, C, t_max):  # pragma: no cover - compiled
    """``_ratio_test`` with the orthant of each coordinate given by ``s`` (+-1), so that a
    coordinate at 0 that is joining the free set has a side: it stays in [0, C] (s = 1) or
    [-C, 0] (s = -1). Returns (t, blocking position or -1, its landing value)."""
    t, stop, landing = t_max, -1, 0.0
    for a in range(n):
        v, da = alpha[idx[a]], d[a] * s[a]
        if da < 0.0:
            lim, land = abs(v) / -da, 0.0
        elif da > 0.0:
            lim, land = (C - abs(v)) / da, s[a] * C
        else:
            continue
        if lim < t:
            t, stop, landing = lim, a, land
    return t, stop, landing


@njit(cache=True)
def _violations(alpha, g, C, eps):  # pragma: no cover - compiled
    """The KKT violation of every coordinate at (alpha, g) (``_max_kkt_violation`` before the max)."""
    out = np.empty(alpha.shape[0])
    for j in range(alpha.shape[0]):
        out[j] = _violation(alpha[j], g[j], C, eps)
    return out


@njit(cache=True)
def _upper_forward(U, r, b):  # pragma: no cover - compiled
    """z with U[:r, :r]' z = b, U upper triangular (by rows of U: contiguous axpys)."""
    w = b.copy()
    z = np.empty(r)
    for i in range(r):
        zi = w[i] / U[i, i]
        z[i] = zi
        row = U[i]
        for k in range(i + 1, r):
            w[k] -= zi * row[k]
    return z


@njit(cache=True)
def _upper_back(U, r, z):  # pragma: no cover - compiled
    """x with U[:r, :r] x = z, U upper triangular (by rows of U: contiguous dot products)."""
    x = np.zeros(r)
    for i in range(r - 1, -1, -1):
        x[i] = (z[i] - np.dot(U[i, i + 1 : r], x[i + 1 : r])) / U[i, i]
    return x


@njit(cache=True)
def _upper_delete(U, r, q, z):  # pragma: no cover - compiled
    """In place: U[:r-1, :r-1] becomes the upper factor of U'U without row/column q, and z[:r-1]
    becomes the solution of U_new' z_new = b without entry q, given U'z = b (z gets the same
    rotations: with U = Q1'K_W, z = Q1'u for a u with K_W'u = b, the QR column deletion).

    Column q is removed (later columns shift left, which leaves U upper Hessenberg from row
    q), and Givens rotations of the row pairs (k, k+1), k >= q, restore the triangle; row k+1
    is shifted during its rotation (one pass). Rows of U are contiguous: O(r^2) in passes
    over whole rows, no strided access."""
    for i in range(q + 1):
        row = U[i]
        for k in range(q, r - 1):
            row[k] = row[k + 1]
        row[r - 1] = 0.0
    for k in range(q, r - 1):
        top, bottom = U[k], U[k + 1]  # top: shifted; bottom: not yet (its entries from column k + 1)
        a, b = top[k], bottom[k + 1]
        rho = np.hypot(a, b)
        cs, sn = a / rho, b / rho
        top[k] = rho
        bottom[k] = 0.0
        zk, zk1 = z[k], z[k + 1]
        z[k] = cs * zk + sn * zk1
        z[k + 1] = -sn * zk + cs * zk1
        for j in range(k + 1, r - 1):
            x, y = top[j], bottom[j + 1]
            top[j] = cs * x + sn * y
            bottom[j] = -sn * x + cs * y
        bottom[r - 1] = 0.0
    for j in range(r):
        U[r - 1, j] = 0.0


@njit(cache=True)
def _lazy_gradient(Q, alpha, g, alpha_g, touched, n_touched):  # pragma: no cover - compiled
    """g += Q (alpha - alpha_g) over the touched coordinates (rows of Q: contiguous); alpha_g <- alpha."""
    P = alpha.shape[0]
    for a in range(n_touched):
        i = touched[a]
        f = alpha[i] - alpha_g[i]
        if f != 0.0:
            row = Q[i]
            for k in range(P):
                g[k] += f * row[k]
            alpha_g[i] = alpha[i]


@njit(cache=True)
def _active_set_steps(Q, c, alpha, C, eps, tol_abs, pivtol, U0, r, W0, max_steps, refresh, batch,
                      batch_fraction, stats):  # pragma: no cover
    """Primal active-set method on the free set, in place on ``alpha`` [P] (see ``_active_set_phase``).

    Starts from the pivoted upper factor U0'U0 = Q_WW of the independent free coordinates W0[:r].
    Each step: a Newton step on W (signs s fixed) for the residual res = g_W + eps s_W, cut at the
    first coordinate reaching 0 or +-C (it leaves W: ``_upper_delete``); after a cut the residual
    of the rest of W is (1 - t) res (Q_WW d = -res), and the forward solve z = U^{-T}(-res) follows
    the downdate's rotations, so a cut costs one back substitution and a downdate (O(r^2)), no
    gradient and no forward solve.
    After an uncut step (optimum of the face) the gradient g = Qa - c is brought up to date
    (``_lazy_gradient``, O(P r); exact ``Q @ a - c`` every ``refresh`` face optima and before
    stopping), and the worst KKT violator j joins W (a new column of U, O(r^2)) if its column is
    independent of W's (Schur complement > pivtol), else takes the null-space step of
    ``_null_space_step`` (Q d = 0: linear descent to the first bound). Up to ``batch`` violators
    (worst first, violation > batch_fraction * worst) join at one face optimum; a joining
    coordinate whose Newton direction would leave its face (wrong sign) is dropped again before
    the step. ``stats`` (6 counters, incremented): Newton steps, cuts, additions, null-space
    steps, exact gradients, drops.
    Returns (steps, converged): converged means max KKT violation <= tol_abs on the exact gradient.
    """
    P = alpha.shape[0]
    cap = min(P, max(r + 64, 2 * r))
    U = np.zeros((cap, cap))
    W = np.empty(cap, dtype=np.int64)
    s = np.empty(cap)
    res = np.empty(cap)
    z = np.empty(cap)  # U'z = -res while z_valid (kept through cuts by the rotations of the downdates)
    z_valid = False
    inW = np.zeros(P, dtype=np.bool_)
    for a in range(r):
        for b in range(a, r):
            U[a, b] = U0[a, b]
        W[a] = W0[a]
        s[a] = 1.0 if alpha[W0[a]] > 0.0 else -1.0
        inW[W0[a]] = True
    g = np.dot(Q, alpha) - c
    stats[4] += 1
    alpha_g = alpha.copy()
    touched = np.empty(P, dtype=np.int64)
    is_touched = np.zeros(P, dtype=np.bool_)
    n_touched = 0
    for a in range(r):
        res[a] = g[W[a]] + eps * s[a]
    optima, stalls = 0, 0
    for step in range(1, max_steps + 1):
        if r > 0:  # Newton step on the face of W
            for a in range(r):
                if not is_touched[W[a]]:
                    is_touched[W[a]] = True
                    touched[n_touched] = W[a]
                    n_touched += 1
            if not z_valid:
                rhs = np.empty(r)
                for a in range(r):
                    rhs[a] = -res[a]
                z[:r] = _upper_forward(U, r, rhs)
                z_valid = True
            d = _upper_back(U, r, z[:r])
            dropped = False  # joining coordinates (still at 0 or +-C) whose direction leaves their face
            for a in range(r - 1, -1, -1):
                i = W[a]
                if (alpha[i] == 0.0 and d[a] * s[a] <= 0.0) or (abs(alpha[i]) == C and d[a] * s[a] >= 0.0):
                    _upper_delete(U, r, a, z)
                    for b in range(a, r - 1):
                        W[b], s[b], res[b] = W[b + 1], s[b + 1], res[b + 1]
                    inW[i] = False
                    r -= 1
                    dropped = True
            if dropped:
                stats[5] += 1
                stalls += 1
                if stalls > 2 * batch + 2:
                    return step, False
                continue
            t, stop, landing = _ratio_test_signed(alpha, W, s, d, r, C, 1.0)
            stats[0] += 1
            for a in range(r):
                i = W[a]
                v = alpha[i] + t * d[a]
                if v * s[a] <= 0.0:  # rounding guard: never cross a sign
                    v = 0.0
                alpha[i] = min(max(v, -C), C)
                res[a] *= 1.0 - t
            for a in range(r):
                z[a] *= 1.0 - t
            if stop >= 0:
                alpha[W[stop]] = landing
                stats[1] += 1
                if t == 0.0:
                    stalls += 1
                    if stalls > 2:  # no progress (rounding): leave the rest to CD
                        return step, False
            r = _leave_bounds(alpha, C, U, r, W, s, res, inW, z)  # coordinates now at 0 or +-C leave W
            if stop >= 0:
                continue
        # optimum of the face: bring g up to date, find the worst violator
        optima += 1
        z_valid = False
        if optima % refresh == 0:
            g = np.dot(Q, alpha) - c
            stats[4] += 1
            alpha_g[:] = alpha
        else:
            _lazy_gradient(Q, alpha, g, alpha_g, touched, n_touched)
        for a in range(n_touched):
            is_touched[touched[a]] = False
        n_touched = 0
        viol = _violations(alpha, g, C, eps)
        j = np.argmax(viol)
        if viol[j] <= tol_abs:
            g = np.dot(Q, alpha) - c
            stats[4] += 1
            alpha_g[:] = alpha
            viol = _violations(alpha, g, C, eps)
            j = np.argmax(viol)
            if viol[j] <= tol_abs:
                return step, True
        for a in range(r):
            res[a] = g[W[a]] + eps * s[a]
        if inW[j]:  # the face is not solved to tolerance: another Newton step
            stalls += 1
            if stalls > 2:
                return step, False
            continue
        stalls = 0
        order = np.argsort(-viol) if batch > 1 else np.array([j])
        j = order[0]  # (ties: the worst violator as sorted, not in W since viol[j] is the max)
        floor = max(tol_abs, batch_fraction * viol[j])
        added = 0
        for q in range(order.shape[0]):
            jj = order[q]
            if added >= batch or viol[jj] <= floor:
                break
            if inW[jj]:
                continue
            sj, l = _joining(Q, U, W, r, alpha, g, jj)
            delta = Q[jj, jj] - np.dot(l, l)
            if delta > pivtol:  # jj joins W: one new column of the factor
                if r == cap:
                    cap = min(P, 2 * cap)
                    U2 = np.zeros((cap, cap))
                    U2[:r, :r] = U[:r, :r]
                    U = U2
                    W2, s2, res2 = np.empty(cap, dtype=np.int64), np.empty(cap), np.empty(cap)
                    W2[:r], s2[:r], res2[:r] = W[:r], s[:r], res[:r]
                    W, s, res, z = W2, s2, res2, np.empty(cap)
                for b in range(r):
                    U[b, r] = l[b]
                U[r, r] = np.sqrt(delta)
                W[r], s[r], res[r] = jj, sj, g[jj] + eps * sj
                inW[jj] = True
                r += 1
                added += 1
                stats[2] += 1
            elif q == 0:
                break  # the worst violator depends on W: null-space step below
        if added > 0:
            continue
        sj, l = _joining(Q, U, W, r, alpha, g, j)
        if inW[j] or Q[j, j] - np.dot(l, l) > pivtol:  # pragma: no cover - ties only; leave it to CD
            return step, False
        # j depends on W: null-space step (objective linear along d, slope g_j + eps s_j)
        beta = _upper_back(U, r, l)
        sigma = -1.0 if g[j] + eps * sj > 0.0 else 1.0
        idx = np.empty(r + 1, dtype=np.int64)
        dd, ss = np.empty(r + 1), np.empty(r + 1)
        for b in range(r):
            idx[b], dd[b], ss[b] = W[b], -sigma * beta[b], s[b]
        idx[r], dd[r], ss[r] = j, sigma, sj
        t, stop, landing = _ratio_test_signed(alpha, idx, ss, dd, r + 1, C, np.inf)
        if stop < 0 or t == 0.0:
            return step, False
        stats[3] += 1
        for b in range(r + 1):
            i = idx[b]
            v = alpha[i] + t * dd[b]
            if v * ss[b] <= 0.0:
                v = 0.0
            alpha[i] = min(max(v, -C), C)
            if not is_touched[i]:
                is_touched[i] = True
                touched[n_touched] = i
                n_touched += 1
        alpha[idx[stop]] = landing
        r = _leave_bounds(alpha, C, U, r, W, s, res, inW, z)
    return max_steps, False


@njit(cache=True)
def _leave_bounds(alpha, C, U, r, W, s, res, inW, z):  # pragma: no cover - compiled
    """Remove the free coordinates now at 0 or +-C from W[:r] (and their factor rows, signs and
    residuals), last first; returns the new r."""
    for a in range(r - 1, -1, -1):
        i = W[a]
        if alpha[i] == 0.0 or abs(alpha[i]) == C:
            _upper_delete(U, r, a, z)
            for b in range(a, r - 1):
                W[b], s[b], res[b] = W[b + 1], s[b + 1], res[b + 1]
            inW[i] = False
            r -= 1
    return r


@njit(cache=True)
def _joining(Q, U, W, r, alpha, g, j):  # pragma: no cover - compiled
    """For coordinate j joining the free set W[:r]: its sign on the face (its own, or the descent
    direction's if it is 0) and l = U'^{-1} Q[W, j], the new column of the factor above the diagonal."""
    a = alpha[j]
    if a == 0.0:
        sj = -1.0 if g[j] > 0.0 else 1.0
    else:
        sj = 1.0 if a > 0.0 else -1.0
    col = np.empty(r)
    for b in range(r):
        col[b] = Q[W[b], j]
    return sj, _upper_forward(U, r, col)


#: [P] cap on the steps of one active-set phase, as a multiple of the number of coordinates P.
ACTIVE_SET_STEPS_PER_COORDINATE = 4

#: [P] at most this many violators join the free set at one face optimum (the worst first) ...
ACTIVE_SET_BATCH = 8

#: [P] ... each with a violation of at least this fraction of the worst one.
ACTIVE_SET_BATCH_FRACTION = 0.1

#: [P] the active-set phase aims at a max KKT violation of this fraction of the tolerance (the
#: stopping rule stays tol_abs): its solutions then agree with CD's, which overshoots the tolerance.
ACTIVE_SET_TARGET = 0.1

#: [P] face optima between exact recomputations of the gradient in the active-set phase (drift).
ACTIVE_SET_REFRESH = 50


def _active_set_phase(Q, c, alpha, C, eps, rtol, tol_abs, stats=None):
    """Active-set phase [P: speed only, spec 6.9]: pivoted Cholesky Q_FF = U'U of the free set F
    (LAPACK ``dpstrf``, same pivot rule as ``_newton_phase_lapack``), then ``_active_set_steps``, which
    adds violating coordinates to the free set itself (factor updates) instead of leaving that to
    CD sweeps, down to ``ACTIVE_SET_TARGET * tol_abs``. Returns the number of steps taken (0: none)."""
    F = np.flatnonzero((alpha != 0.0) & (np.abs(alpha) < C))
    if F.size:
        QF = Q[np.ix_(F, F)]
        tol = rtol * max(float(QF.diagonal().max()), 1e-300)
        factor, piv, rank, info = dpstrf(QF, lower=0, tol=tol, overwrite_a=1)
        if info < 0:  # pragma: no cover - bad argument
            raise RuntimeError(f"dpstrf failed (info={info})")
        U0, W0 = np.ascontiguousarray(np.triu(factor[:rank, :rank])), F[piv[:rank] - 1].astype(np.int64)
    else:
        U0, W0, rank = np.zeros((1, 1)), np.zeros(1, dtype=np.int64), 0
    pivtol = rtol * max(float(Q.diagonal().max()), 1e-300)
    steps, _ = _active_set_steps(Q, c, alpha, C, eps, ACTIVE_SET_TARGET * tol_abs, pivtol, U0, int(rank), W0,
                                 ACTIVE_SET_STEPS_PER_COORDINATE * Q.shape[0], ACTIVE_SET_REFRESH,
                                 ACTIVE_SET_BATCH, ACTIVE_SET_BATCH_FRACTION,
                                 np.zeros(6, dtype=np.int64) if stats is None else stats)
    return int(steps)


#: [P] Newton phases in a row while the previous one was cut (each refactorises the new free set).
NEWTON_REPEATS = 10

#: [P] the active-set phase follows every CD block (not only blocks that left the signs unchanged).
ACTIVE_SET_EAGER = True

#: [P] CD sweeps per block; a Newton phase follows a block after which the signs of a did not change.
SWEEPS_PER_BLOCK = 10


def psvm_dual(
    K_tilde: np.ndarray,
    y: np.ndarray,
    C: float,
    epsilon: float,
    tol: float = 1e-6,
    max_sweeps: int = 10_000,
    newton: bool = True,
    legacy: bool = False,
    active_set: bool = True,
) -> tuple[np.ndarray, int, bool]:
    """Solve the P-SVM dual of spec 6.9 by cyclic coordinate descent [P].

    min 1/2 a'Qa - c'a + epsilon |a|_1  s.t. -C <= a_j <= C, with Q = K~'K~,
    c = K~'(y - mean y). ``C`` may be ``np.inf`` (then: a lasso). Stops when the
    max KKT violation is <= tol * max(1, |c|_inf). If epsilon >= |c|_inf the
    solution is a = 0 (returned with 0 sweeps).

    ``newton=True`` ([P] departure, speed only): after a block of
    ``SWEEPS_PER_BLOCK`` sweeps that left the sign pattern of a unchanged, Newton
    steps on the free set finish the ill-conditioned tail that plain CD crawls
    through. Both moves never increase the objective; stopping rule and
    solution are unchanged. ``newton=False`` is pure cyclic CD. ``max_sweeps``
    counts CD sweeps only. ``legacy=True`` runs the Newton phases of the reference
    version (scalar pivoted Cholesky and column-wise downdates in numba, slower;
    ``_newton_phase``) instead of ``_newton_phase_lapack``: same rules, other rounding.
    ``active_set=True`` (default, unless ``legacy``; [P] speed only): after every block of
    sweeps an active-set phase (``_active_set_phase``) takes over, which also adds violating
    coordinates to the free set itself and usually finishes the solve (not after the last
    block: a solve stopped by ``max_sweeps`` ends with CD sweeps); ``active_set=False``
    keeps the Newton phases of ``_newton_phase_lapack`` (the previous default).

    Returns ``(alpha, n_sweeps, converged)``.
    """
    Q, c = dual_terms(K_tilde, y)
    return solve_dual(Q, c, C, epsilon, tol, max_sweeps, newton, legacy=legacy, active_set=active_set)


def solve_dual(
    Q: np.ndarray,
    c: np.ndarray,
    C: float,
    epsilon: float,
    tol: float = 1e-6,
    max_sweeps: int = 10_000,
    newton: bool = True,
    alpha0: np.ndarray | None = None,
    legacy: bool = False,
    active_set: bool = True,
) -> tuple[np.ndarray, int, bool]:
    """``psvm_dual`` on given Q, c, optionally started from ``alpha0`` (clipped into the box).

    The start changes only the path, not the stopping rule: the result meets the
    same KKT tolerance (a warm start along a CV grid, see ``dual_path``). ``legacy``,
    ``active_set``: as in ``psvm_dual``.
    """
    Q, c = np.ascontiguousarray(Q, dtype=np.float64), np.ascontiguousarray(c, dtype=np.float64)
    alpha = np.zeros(Q.shape[0])
    if Q.shape[0] == 0 or epsilon >= np.abs(c).max():  # trivial eps (spec 3, 6.9 pitfalls)
        return alpha, 0, True
    C, epsilon, tol_abs = float(C), float(epsilon), solver_tolerance(c, tol)
    if alpha0 is not None:
        alpha = np.clip(np.asarray(alpha0, dtype=np.float64), -C, C)
    phase = _newton_phase if legacy else _newton_phase_lapack
    active = newton and active_set and not legacy
    sweeps, pattern = 0, None
    while sweeps < max_sweeps:
        block = min(SWEEPS_PER_BLOCK, max_sweeps - sweeps)
        done, converged = _coordinate_descent(Q, c, alpha, C, epsilon, tol_abs, block)
        sweeps += int(done)
        if converged:
            return alpha, sweeps, True
        previous, pattern = pattern, np.sign(alpha)
        if active:
            if sweeps < max_sweeps and (ACTIVE_SET_EAGER or np.array_equal(previous, pattern)):
                _active_set_phase(Q, c, alpha, C, epsilon, PIVOT_RTOL, tol_abs)
        elif newton and previous is not None and np.array_equal(previous, pattern):
            for _ in range(NEWTON_REPEATS):
                if phase(Q, c, alpha, C, epsilon, PIVOT_RTOL, tol_abs) == 0:
                    break
    converged = _max_kkt_violation(alpha, Q @ alpha - c, C, epsilon) <= tol_abs
    return alpha, sweeps, bool(converged)


def _dual_objective(Q, c, alpha, C, eps) -> float:
    """1/2 a'Qa - c'a + eps |a|_1 at a clipped into the box (spec 6.9)."""
    a = np.clip(alpha, -C, C)
    return float(0.5 * a @ (Q @ a) - c @ a + eps * np.abs(a).sum())


def dual_path(Q, c, points: list[tuple[float, float]], tol: float = 1e-6, max_sweeps: int = 10_000,
              legacy: bool = False, active_set: bool = True):
    """``solve_dual`` at every (C, epsilon) of a CV grid, sharing work [P: speed only].

    Per epsilon, C ascending: each solve starts from the solution at the previous
    C (feasible, as the box only grows), or, for the smallest C, from the previous
    epsilon's solution at that C. Once a solution has no coordinate on the box
    (max |a_j| < C), it satisfies the KKT conditions of every larger C unchanged
    (they involve C only through coordinates at +-C), so it is reused as is.
    Every returned solution meets the same KKT tolerance as a cold ``solve_dual``.
    Unless ``legacy``, a solve at a larger C starts from whichever of the two
    solutions (previous C, or previous epsilon at this C) has the lower objective,
    and the solves use the active-set phase (``active_set=True``) or the Newton phases of
    ``_newton_phase_lapack`` (``active_set=False``).
    Returns {(C, epsilon): (alpha, n_sweeps, converged)}.
    """
    out: dict[tuple[float, float], tuple[np.ndarray, int, bool]] = {}
    by_eps: dict[float, list[float]] = {}
    for C, eps in points:
        by_eps.setdefault(float(eps), []).append(float(C))
    last_eps: dict[float, np.ndarray] = {}  # C -> solution at the previous epsilon
    for eps, costs in by_eps.items():
        start, this_eps = None, {}
        for i, C in enumerate(sorted(set(costs))):
            if start is not None and out[start][2] and np.abs(out[start][0]).max(initial=0.0) < start[0]:
                alpha, _, converged = out[start]
                out[(C, eps)] = (alpha, 0, converged)
            else:
                warm = out[start][0] if start is not None else last_eps.get(C)
                if not legacy and start is not None and C in last_eps:  # the better of both starts
                    warm = min((warm, last_eps[C]), key=lambda a: _dual_objective(Q, c, a, C, eps))
                out[(C, eps)] = solve_dual(Q, c, C, eps, tol, max_sweeps, alpha0=warm, legacy=legacy,
                                           active_set=active_set)
            start = (C, eps)
            this_eps[C] = out[start][0]
        last_eps = this_eps
    return out


# -- classifier -----------------------------------------------------------------
@dataclass(frozen=True)
class PairModel:
    """One fitted binary P-SVM: class ``a`` (label +1) vs class ``b`` (label -1), a < b as indices."""

    a: int
    b: int
    columns: np.ndarray  # indices of the training objects (columns of S) that were kept
    mean: np.ndarray  # fit-set column means of the kept columns
    scale: np.ndarray  # fit-set std * sqrt(m) of the kept columns
    alpha: np.ndarray
    intercept: float  # b = mean(y) [V]
    n_sweeps: int
    converged: bool

    def decision(self, S_te: np.ndarray) -> np.ndarray:
        """f(u) = k~(u)'alpha + b, k~ normalised with the fit-set statistics (spec 6.9)."""
        K_te = (S_te[:, self.columns] - self.mean) / self.scale
        return K_te @ self.alpha + self.intercept


@dataclass(frozen=True)
class _PairProblem:
    """The normalised data of one class pair, before solving (shared by every (C, epsilon))."""

    a: int
    b: int
    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    K_tilde: np.ndarray
    y: np.ndarray

    def model(self, alpha: np.ndarray, n_sweeps: int, converged: bool, psvm: "PSVM") -> PairModel:
        """The fitted pair (b = mean(y) [V]); warns if the solver stopped at max_sweeps."""
        if not converged:
            violation = kkt_violation(self.K_tilde, self.y, alpha, psvm.C, psvm.epsilon)
            warnings.warn(
                f"P-SVM (C={psvm.C:g}, epsilon={psvm.epsilon:g}) did not converge for class pair "
                f"({psvm.classes_[self.a]}, {psvm.classes_[self.b]}) within max_sweeps={psvm.max_sweeps}; "
                f"max KKT violation {violation:.3g}",
                ConvergenceWarning,
                stacklevel=4,
            )
        return PairModel(self.a, self.b, self.columns, self.mean, self.scale, alpha, float(self.y.mean()),
                         n_sweeps, converged)


class PSVM(CompiledKernels, SimilarityClassifier):
    """P-SVM with one-vs-one voting on a precomputed similarity matrix (spec 6.9).

    Parameters
    ----------
    C : float
        Box bound on |alpha_j|; ``np.inf`` allowed (spec 3 grid: 1e-3..1e5 [P]).
    epsilon : float
        l1 weight on the normalised matrix (spec 3 grid: 1e-3..1 [P]).
    columns : {"all", "pair"}
        Columns of each pair's data matrix: all fit objects (default) or only
        the pair's own objects (spec 6.9 "Multi-class" [P]).
    tol : float
        Relative KKT tolerance of the solver (spec 6.9).
    max_sweeps : int
        Cap on coordinate-descent sweeps per pair; reaching it warns.
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, np.inf, closed="right")],  # C = inf allowed
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "columns": [StrOptions({"all", "pair"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_sweeps": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, C: float = 1.0, epsilon: float = 0.1, columns: str = "all", tol: float = 1e-6,
                 max_sweeps: int = 10_000):
        self.C = C
        self.epsilon = epsilon
        self.columns = columns
        self.tol = tol
        self.max_sweeps = max_sweeps

    def fit(self, S, y):
        self._validate_params()
        S, y_idx = self._check_fit_input(S, y)
        problems = self._pair_problems(S, y_idx)
        self.pair_models_ = [
            problem.model(*psvm_dual(problem.K_tilde, problem.y, self.C, self.epsilon, self.tol, self.max_sweeps),
                          self) for problem in problems
        ]
        return self

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: each class pair's normalisation and Q, c are computed
        once, and the (C, epsilon) grid is solved warm-started (``dual_path``). The
        solutions meet the same KKT tolerance as refits; predictions equal refits'
        except on test rows within that tolerance of a decision boundary."""
        out: list = [None] * len(grid)
        for outer, points in group_grid(self, grid, ("C", "epsilon")).items():
            model = clone(self).set_params(**dict(outer))
            S, y_idx = model._check_fit_input(S_fit, y)
            problems = model._pair_problems(S, y_idx)
            grid_points = [(p["C"], p["epsilon"]) for _, p in points]
            paths = [dual_path(*dual_terms(pr.K_tilde, pr.y), grid_points, model.tol, model.max_sweeps)
                     for pr in problems]
            for g, p in points:
                model.set_params(**p)
                key = (float(p["C"]), float(p["epsilon"]))
                model.pair_models_ = [pr.model(*path[key], model) for pr, path in zip(problems, paths)]
                out[g] = model.predict(S_val)
        return out

    def _pair_problems(self, S: np.ndarray, y_idx: np.ndarray) -> list["_PairProblem"]:
        """Per class pair a < b: rows = fit objects of a, b with y = +1 / -1, normalised columns (spec 6.9)."""
        problems = []
        G = len(self.classes_)
        for a in range(G):
            for b in range(a + 1, G):
                rows = np.flatnonzero((y_idx == a) | (y_idx == b))
                cols = rows if self.columns == "pair" else np.arange(S.shape[1])
                y_pm = np.where(y_idx[rows] == a, 1.0, -1.0)
                K_tilde, mean, scale, keep = normalise_columns(S[np.ix_(rows, cols)])
                problems.append(_PairProblem(a, b, cols[keep], mean, scale, K_tilde, y_pm))
        return problems

    def _pair_decisions(self, S_te: np.ndarray) -> np.ndarray:
        """(n_test, n_pairs) decision values; positive favours the pair's earlier class."""
        S_te = self._check_predict_input(S_te)
        out = np.empty((S_te.shape[0], len(self.pair_models_)))
        for p, model in enumerate(self.pair_models_):
            out[:, p] = model.decision(S_te)
        return out

    def predict(self, S_te):
        """One-vs-one vote (spec 2, 6.9) [P]: f >= 0 votes for the earlier class; vote ties go to
        the earliest (smallest) class, as in libsvm (spec 8.3)."""
        F = self._pair_decisions(S_te)
        votes = np.zeros((F.shape[0], len(self.classes_)))
        rows = np.arange(F.shape[0])
        for p, model in enumerate(self.pair_models_):
            np.add.at(votes, (rows, np.where(F[:, p] >= 0.0, model.a, model.b)), 1.0)
        return self.classes_[np.argmax(votes, axis=1)]
