"""Reference solvers of the P-SVM dual (spec ``docs/compared-methods-spec.md`` 6.9), test oracles for
``hlm.svm._psvm.solver``.

    min_a 1/2 a'Qa - c'a + eps |a|_1  s.t.  -C <= a_j <= C

They stop on the KKT rule of spec 6.9 (max violation <= tol * max(1, |c|_inf)),
the production solver's, so they reach its solution to within that tolerance,
by other paths and with other rounding:

* ``cd_solve_dual``: pure exact cyclic coordinate descent (single-variable SMO,
  the spec's method), no acceleration; slow on ill-conditioned or rank-deficient
  problems, where it crawls.
* ``newton_solve_dual``: coordinate descent plus, after a block of sweeps that
  left the sign pattern unchanged, Newton phases on the free set (scalar pivoted
  Cholesky, column-wise Givens downdates, null-space steps for dependent
  coordinates): the solver before the production one's active-set phase.
* ``reference_dual_path``: one of them (default ``newton_solve_dual``) along a CV
  grid with the warm starts and the reuse rule of that time (the start: the
  previous C's solution, else the previous epsilon's).

Self-contained (frozen copies of the coordinate-descent kernels), so that they do
not move with the production code; compiled with numba (pure Python would be too
slow even for the tests' problems). ``cd_solve_dual`` and ``newton_solve_dual``
give bit for bit the results of the earlier ``psvm_dual(..., newton=False)`` and
``psvm_dual(..., legacy=True)`` of ``hlm.svm._psvm``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: CD sweeps per block (between exact gradient recomputations and, for the Newton reference, phases).
SWEEPS_PER_BLOCK = 10

#: Relative pivot tolerance of the pivoted Cholesky (dependent free columns are left out).
PIVOT_RTOL = 1e-13

#: Newton phases in a row while the previous one took steps (each refactorises the new free set).
NEWTON_REPEATS = 10


def cd_solve_dual(Q, c, C, epsilon, tol=1e-6, max_sweeps=10_000, alpha0=None):
    """Pure cyclic coordinate descent. Returns ``(alpha, n_sweeps, converged)``."""
    return _solve(Q, c, C, epsilon, tol, max_sweeps, alpha0, newton=False)


def newton_solve_dual(Q, c, C, epsilon, tol=1e-6, max_sweeps=10_000, alpha0=None):
    """Coordinate descent with the reference Newton phases. Returns ``(alpha, n_sweeps, converged)``."""
    return _solve(Q, c, C, epsilon, tol, max_sweeps, alpha0, newton=True)


def reference_dual_path(Q, c, points, tol=1e-6, max_sweeps=10_000, solve=newton_solve_dual):
    """``solve`` (one of the oracles above) at every (C, epsilon) of ``points``: per epsilon, C
    ascending, each solve starts from the previous C's solution, the smallest C from the previous
    epsilon's at that C; a converged solution with no coordinate on the box (max |a_j| < C) is
    reused for the next C as is (0 sweeps). Returns {(C, epsilon): (alpha, n_sweeps, converged)}."""
    out, by_eps = {}, {}
    for C, eps in points:
        by_eps.setdefault(float(eps), []).append(float(C))
    last_eps = {}
    for eps, costs in by_eps.items():
        start, this_eps = None, {}
        for C in sorted(set(costs)):
            if start is not None and out[start][2] and np.abs(out[start][0]).max(initial=0.0) < start[0]:
                alpha, _, converged = out[start]
                out[(C, eps)] = (alpha, 0, converged)
            else:
                warm = out[start][0] if start is not None else last_eps.get(C)
                out[(C, eps)] = solve(Q, c, C, eps, tol, max_sweeps, alpha0=warm)
            start = (C, eps)
            this_eps[C] = out[start][0]
        last_eps = this_eps
    return out


def _solve(Q, c, C, epsilon, tol, max_sweeps, alpha0, newton):
    Q, c = np.ascontiguousarray(Q, dtype=np.float64), np.ascontiguousarray(c, dtype=np.float64)
    alpha = np.zeros(Q.shape[0])
    if Q.shape[0] == 0 or epsilon >= np.abs(c).max():  # a = 0 is the solution
        return alpha, 0, True
    C, epsilon = float(C), float(epsilon)
    tol_abs = tol * max(1.0, float(np.abs(c).max()))
    if alpha0 is not None:
        alpha = np.clip(np.asarray(alpha0, dtype=np.float64), -C, C)
    sweeps, pattern = 0, None
    while sweeps < max_sweeps:
        done, converged = _coordinate_descent(Q, c, alpha, C, epsilon, tol_abs,
                                              min(SWEEPS_PER_BLOCK, max_sweeps - sweeps))
        sweeps += int(done)
        if converged:
            return alpha, sweeps, True
        previous, pattern = pattern, np.sign(alpha)
        if newton and previous is not None and np.array_equal(previous, pattern):
            for _ in range(NEWTON_REPEATS):
                if _newton_phase(Q, c, alpha, C, epsilon, PIVOT_RTOL, tol_abs) == 0:
                    break
    return alpha, sweeps, bool(_max_kkt_violation(alpha, Q @ alpha - c, C, epsilon) <= tol_abs)


# -- coordinate descent --------------------------------------------------------------
@njit(cache=True)
def _violation(a, gj, C, eps):  # pragma: no cover - compiled
    """KKT violation of one coordinate at value a with gradient g_j (spec 6.9)."""
    if a == 0.0:
        return abs(gj) - eps
    if a == C:
        return gj + eps
    if a == -C:
        return eps - gj
    if a > 0.0:
        return abs(gj + eps)
    return abs(gj - eps)


@njit(cache=True)
def _max_kkt_violation(alpha, g, C, eps):  # pragma: no cover - compiled
    worst = 0.0
    for j in range(alpha.shape[0]):
        v = _violation(alpha[j], g[j], C, eps)
        if v > worst:
            worst = v
    return worst


@njit(cache=True)
def _full_gradient(Q, c, alpha, g):  # pragma: no cover - compiled
    """g = Q alpha - c from scratch."""
    P = alpha.shape[0]
    for i in range(P):
        s = -c[i]
        for j in range(P):
            if alpha[j] != 0.0:
                s += Q[i, j] * alpha[j]
        g[i] = s


@njit(cache=True)
def _coordinate_descent(Q, c, alpha, C, eps, tol_abs, max_sweeps):  # pragma: no cover - compiled
    """Cyclic exact CD in place: a_j <- clip(soft_{eps/Q_jj}(a_j - g_j/Q_jj), -C, C), the gradient
    updated incrementally and confirmed exactly before stopping. Returns (sweeps, converged)."""
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
            _full_gradient(Q, c, alpha, g)
            if _max_kkt_violation(alpha, g, C, eps) <= tol_abs:
                return sweep, True
    return max_sweeps, False


# -- Newton phases on the free set ---------------------------------------------------
@njit(cache=True)
def _pivoted_cholesky(A, rtol):  # pragma: no cover - compiled
    """Diagonally pivoted Cholesky of a symmetric PSD, possibly singular A (like LAPACK pstrf).

    Returns ``(L, piv, rank)``: A[piv[:rank]][:, piv[:rank]] = L L' with L ``rank x rank`` lower
    triangular (piv: all n, dependent last); pivots whose Schur complement falls to
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
def _cholesky_solve(L, r, b):  # pragma: no cover - compiled
    """x with (L L') x = b, L[:r, :r] lower triangular (forward, then back substitution)."""
    z = np.empty(r)
    for i in range(r):
        acc = b[i]
        for k in range(i):
            acc -= L[i, k] * z[k]
        z[i] = acc / L[i, i]
    for i in range(r - 1, -1, -1):
        acc = z[i]
        for k in range(i + 1, r):
            acc -= L[k, i] * z[k]
        z[i] = acc / L[i, i]
    return z


@njit(cache=True)
def _cholesky_delete(L, r, q):  # pragma: no cover - compiled
    """In place: L[:r-1, :r-1] becomes the factor of L L' without row/column q (Givens rotations of
    column pairs, O(r^2))."""
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
def _ratio_test(alpha, idx, d, n, C, t_max):  # pragma: no cover - compiled
    """Longest step t <= t_max along d (over coordinates idx[:n]) keeping each of them in [0, C] or
    [-C, 0], its own sign's side (a coordinate at 0 does not block). Returns (t, blocking position
    or -1, its landing value)."""
    t, stop, landing = t_max, -1, 0.0
    for a in range(n):
        v = alpha[idx[a]]
        s = np.sign(v)
        da = d[a] * s
        if da < 0.0:
            lim, land = abs(v) / -da, 0.0
        elif da > 0.0:
            lim, land = (C - abs(v)) / da, s * C
        else:
            continue
        if lim < t:
            t, stop, landing = lim, a, land
    return t, stop, landing


@njit(cache=True)
def _newton_phase(Q, c, alpha, C, eps, rtol, tol_abs):  # pragma: no cover - compiled
    """Safeguarded Newton steps on the free set, in place (a primal active-set method).

    W = independent part of F = {j: 0 < |a_j| < C}, signs s fixed. On that face the dual is the
    quadratic 1/2 a'Qa - c'a + eps s'a; the Newton direction d solves Q_WW d = -(g_W + eps s),
    g = Qa - c. A step is cut at the first coordinate reaching 0 or +-C (set there exactly, then
    removed from W by a Cholesky downdate), so the objective never increases. Stops after the
    first uncut step, i.e. at the optimum of the final face; then, if no step was cut, one
    null-space step for the worst dependent free coordinate (``_null_space_step``). Returns the
    number of cut and null-space steps (0: nothing left to do on this face).
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
    F = F[:nf]
    W = np.empty(max(r, 1), dtype=np.int64)
    for a in range(r):
        W[a] = F[piv[a]]
    rhs = np.empty(max(r, 1))
    cuts = 0
    while r > 0:
        for a in range(r):
            i = W[a]
            acc = -c[i] + (eps if alpha[i] > 0.0 else -eps)
            for j in range(P):
                if alpha[j] != 0.0:
                    acc += Q[i, j] * alpha[j]
            rhs[a] = -acc
        d = _cholesky_solve(L, r, rhs)
        t, stop, landing = _ratio_test(alpha, W, d, r, C, 1.0)
        for a in range(r):
            i = W[a]
            v = alpha[i] + t * d[a]
            if v * alpha[i] <= 0.0:  # rounding guard: never cross a sign
                v = 0.0
            alpha[i] = min(max(v, -C), C)
        if stop < 0:
            if cuts == 0 and r < nf:
                return int(_null_space_step(Q, c, alpha, C, eps, tol_abs, L, r, W, F[piv[r:nf]]) > 0)
            return cuts
        cuts += 1
        alpha[W[stop]] = landing  # exactly on the face that cut the step
        for a in range(r - 1, -1, -1):  # coordinates now at 0 or +-C leave W
            if alpha[W[a]] == 0.0 or abs(alpha[W[a]]) == C:
                _cholesky_delete(L, r, a)
                for b in range(a, r - 1):
                    W[b] = W[b + 1]
                r -= 1
    return cuts


@njit(cache=True)
def _null_space_step(Q, c, alpha, C, eps, tol_abs, L, r, W, dependent):  # pragma: no cover - compiled
    """One downhill step along the null direction of the worst dependent free coordinate j with
    |g_j + eps s_j| > tol_abs: d = (d_j = 1, d_W = -Q_WW^{-1} Q_Wj), Q d = 0, so the objective is
    linear with slope g_j + eps s_j; move downhill until a coordinate reaches 0 or +-C (it leaves
    the free set). Returns 0 if no step was taken, 2 if j itself left the free set, else 1."""
    P = alpha.shape[0]
    best, j, slope = tol_abs, -1, 0.0
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
