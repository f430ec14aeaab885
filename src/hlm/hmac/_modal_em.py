"""Modal EM (MEM) for a Gaussian kernel density with spherical bandwidth (dissertation sections 4.2 and 5.2).

The density is ``f(x) = (1/n) sum_k phi(x | x_k, sigma^2 I)``. From a start ``x^(0)`` MEM alternates

* E-step: ``p_k = phi(x^(t) | x_k) / sum_k' phi(x^(t) | x_k')``,
* M-step: ``x^(t+1) = sum_k p_k x_k``,

which never decreases ``f`` and stops at a mode (a stationary point) of it. Here all starting points climb
together: one E-step for ``a`` active points is an ``a x n`` kernel matrix, computed from one matrix product
``Z X^T`` in row blocks of at most ``block_bytes`` (docs/hmac-spec.md sections 1, 7).

Numerics [P]: the data are centred (MEM commutes with translations; centring bounds the cancellation in
``|z|^2 - 2 z.x + |x|^2``); kernel weights are taken in the log domain, the largest log kernel of each start
subtracted before ``exp`` (so the largest weight is exactly 1 and the sum never underflows), and floored at
``-LOG_FLOOR`` (no subnormal weights; a provably negligible change, see ``LOG_FLOOR``). A point stops
when its step length falls below ``tol * sigma``; its last iterate is returned.

The per-chunk sums of :func:`kernel_sums` -- (max log kernel, sum of scaled kernels, sum of scaled kernel
times x) -- are what the workers of parallel approach I return; :func:`combine_sums` merges them (a
log-sum-exp merge) into the sums of the one-chunk serial step, up to rounding (summation order).
"""

from __future__ import annotations

import numbers
import threading
import warnings

import numpy as np

from hlm.errors import DataError

#: memory bound of one block of the kernel matrix (rows x n float64), bytes [P]
BLOCK_BYTES = 64 * 2**20

#: log-weights (relative to a start's largest) are floored at -LOG_FLOOR before exp [P]: exp(-700) ~ 1e-304
#: is a normal float64, whereas exp of values below -708 gives subnormals that make exp and the M-step's
#: matrix product ~10x slower; each floored term is raised by < exp(-700) of the largest, so the sums change
#: by < n exp(-700) relatively -- below float64 resolution for any n < 1e280 (docs/hmac-spec.md section 7)
LOG_FLOOR = 700.0


def check_points(X, what: str, *, min_rows: int = 1) -> np.ndarray:
    """``X`` as a finite float64 (n, p) C-contiguous array, else a one-line DataError naming ``what``."""
    try:
        A = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{what}: not a numeric matrix ({str(exc).splitlines()[0]})") from None
    if A.ndim != 2:
        raise DataError(f"{what}: expected a 2-D array (points x dimensions), got {A.ndim}-D")
    if A.shape[0] < min_rows or A.shape[1] == 0:
        need = f"at least {min_rows} points" if min_rows > 1 else "a non-empty matrix"
        raise DataError(f"{what}: {A.shape[0]} x {A.shape[1]} data; HMAC needs {need} and at least 1 dimension")
    bad = ~np.isfinite(A)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(f"{what}: {int(bad.sum())} NaN/inf entries, first at [{i}, {j}]")
    return np.ascontiguousarray(A)


def check_bandwidth(bandwidth, what: str = "bandwidth") -> float:
    """A finite, positive real bandwidth, else a one-line DataError."""
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real):
        raise DataError(f"{what} must be a positive real number, got {bandwidth!r}")
    value = float(bandwidth)
    if not (np.isfinite(value) and value > 0):
        raise DataError(f"{what} must be positive and finite, got {value!r}")
    return value


def check_options(tol, max_iter) -> tuple[float, int]:
    """``tol`` > 0 finite and ``max_iter`` >= 1 integer, else a one-line DataError."""
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (np.isfinite(tol) and tol > 0):
        raise DataError(f"tol must be a positive finite number, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise DataError(f"max_iter must be a positive integer, got {max_iter!r}")
    return float(tol), int(max_iter)


def block_rows(n: int, block_bytes: int = BLOCK_BYTES) -> int:
    """Rows of an ``rows x n`` float64 kernel block within ``block_bytes`` (at least 1)."""
    return max(1, int(block_bytes) // (8 * max(n, 1)))


def kernel_sums(
    C: np.ndarray,
    csq: np.ndarray,
    Z: np.ndarray,
    inv2s2: float,
    block_bytes: int = BLOCK_BYTES,
    work: np.ndarray | None = None,
):
    """Per-start sums of the scaled Gaussian kernels of the data chunk ``C`` (k, p) at the points ``Z`` (a, p).

    With ``l_k = -|z - c_k|^2 / (2 sigma^2)`` (``inv2s2 = 1 / (2 sigma^2)``, ``csq = |c_k|^2``) returns
    ``m = max_k l_k`` (a,), ``s = sum_k exp(l_k - m)`` (a,) and ``t = sum_k exp(l_k - m) c_k`` (a, p).
    ``work``: an optional float64 buffer of at least ``block_rows(k) * k`` entries for the kernel blocks.
    """
    a, k = Z.shape[0], C.shape[0]
    m = np.empty(a)
    s = np.empty(a)
    t = np.empty((a, C.shape[1]))
    rows = block_rows(k, block_bytes)
    if work is None or work.size < min(rows, a) * k:
        work = np.empty(min(rows, a) * k)
    for lo in range(0, a, rows):
        Zb = Z[lo : lo + rows]
        L = np.matmul(Zb, C.T, out=work[: Zb.shape[0] * k].reshape(Zb.shape[0], k))  # z.c
        L *= 2.0
        L -= csq
        L -= np.einsum("ij,ij->i", Zb, Zb)[:, None]  # -|z - c|^2 (up to rounding)
        np.minimum(L, 0.0, out=L)
        L *= inv2s2
        mb = L.max(axis=1)
        L -= mb[:, None]
        np.maximum(L, -LOG_FLOOR, out=L)  # no subnormal weights (spec section 7)
        np.exp(L, out=L)
        m[lo : lo + rows] = mb
        s[lo : lo + rows] = L.sum(axis=1)
        t[lo : lo + rows] = L @ C
    return m, s, t


def combine_sums(parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge per-chunk ``(m, s, t)`` of :func:`kernel_sums` into the sums over all chunks (log-sum-exp)."""
    parts = list(parts)
    m = parts[0][0].copy()
    for pm, _, _ in parts[1:]:
        np.maximum(m, pm, out=m)
    s = np.zeros_like(m)
    t = np.zeros_like(parts[0][2])
    for pm, ps, pt in parts:
        scale = np.exp(pm - m)
        s += scale * ps
        t += scale[:, None] * pt
    return m, s, t


def log_density(m: np.ndarray, s: np.ndarray, n: int, p: int, sigma: float) -> np.ndarray:
    """``log f(z)`` from the sums of :func:`kernel_sums` over all ``n`` points."""
    return m + np.log(s) - np.log(n) - 0.5 * p * np.log(2.0 * np.pi * sigma * sigma)


class KernelChunk:
    """Data rows ``C`` with ``|C_k|^2`` and kernel-block buffers reused across calls, one per thread.

    The buffer spares a fresh ``a x k`` allocation per MEM iteration (under Dask's ``MALLOC_TRIM_THRESHOLD_``
    each one is a new mmap with its page faults). One per thread: threaded Dask workers may share the
    object. Buffers are not pickled.
    """

    def __init__(self, C: np.ndarray):
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        self.csq = np.einsum("ij,ij->i", self.C, self.C)
        self._work = {}

    def sums(self, Z: np.ndarray, inv2s2: float, block_bytes: int = BLOCK_BYTES):
        """:func:`kernel_sums` of these rows at ``Z``."""
        need = min(block_rows(self.C.shape[0], block_bytes), Z.shape[0]) * self.C.shape[0]
        thread = threading.get_ident()
        work = self._work.get(thread)
        if work is None or work.size < need:
            work = self._work[thread] = np.empty(need)
        return kernel_sums(self.C, self.csq, Z, inv2s2, block_bytes, work)

    def __getstate__(self):
        return self.__dict__ | {"_work": {}}


class Centred(KernelChunk):
    """The data centred once (``C = X - mean``), shared by every level and start."""

    def __init__(self, X: np.ndarray):
        self.mean = X.mean(axis=0)
        super().__init__(X - self.mean)

    def step(self, Z: np.ndarray, sigma: float, block_bytes: int = BLOCK_BYTES) -> np.ndarray:
        """One MEM iteration (E- and M-step) of the centred points ``Z`` against all the data."""
        _, s, t = self.sums(Z, 0.5 / sigma**2, block_bytes)
        return t / s[:, None]

    def log_density(self, Z: np.ndarray, sigma: float) -> np.ndarray:
        """``log f`` at the centred points ``Z``."""
        m, s, _ = self.sums(Z, 0.5 / sigma**2)
        return log_density(m, s, self.C.shape[0], self.C.shape[1], sigma)


def climb_steps(Z0: np.ndarray, sigma: float, tol: float, max_iter: int):
    """MEM's iteration loop as a generator: yields the active points, is sent their next iterates.

    Every row of ``Z0`` is iterated until its step length is below ``tol * sigma`` (or ``max_iter`` steps).
    Only unconverged rows are iterated, so each row's trajectory does not depend on the others. Returns (as
    ``StopIteration.value``) ``(Z, n_iter per row, number of rows stopped at max_iter)``. One loop for the
    serial :func:`climb` and the event-loop driver of parallel approach I.
    """
    Z = np.array(Z0, dtype=np.float64, copy=True)
    n_iter = np.zeros(Z.shape[0], dtype=np.intp)
    active = np.arange(Z.shape[0])
    threshold = tol * sigma
    for _ in range(max_iter):
        if active.size == 0:
            break
        current = Z[active]
        new = yield current
        moved = np.sqrt(np.einsum("ij,ij->i", new - current, new - current))
        Z[active] = new
        n_iter[active] += 1
        active = active[moved >= threshold]
    return Z, n_iter, int(active.size)


def climb(step, Z0: np.ndarray, sigma: float, tol: float, max_iter: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Run :func:`climb_steps` with ``step`` mapping (a, p) active points to their next iterates."""
    steps = climb_steps(Z0, sigma, tol, max_iter)
    try:
        points = next(steps)
        while True:
            points = steps.send(step(points))
    except StopIteration as done:
        return done.value


def warn_unconverged(n_left: int, m: int, max_iter: int, sigma: float) -> None:
    """One ConvergenceWarning line for ``n_left`` of ``m`` starts stopped at ``max_iter``."""
    if n_left:
        from sklearn.exceptions import ConvergenceWarning  # here: keeps scikit-learn out of Dask workers' start-up

        warnings.warn(
            f"modal EM: {n_left} of {m} starting points stopped at max_iter={max_iter} before the step "
            f"length fell below tol * bandwidth (bandwidth {sigma:.6g})",
            ConvergenceWarning,
            stacklevel=3,
        )


def modal_em(
    X,
    starts,
    bandwidth: float,
    *,
    tol: float = 1e-6,
    max_iter: int = 500,
    return_n_iter: bool = False,
    block_bytes: int = BLOCK_BYTES,
):
    """Climb every row of ``starts`` (m, p) to a mode of the Gaussian KDE of ``X`` (n, p) (sections 4.2, 5.2).

    The KDE has equal weights ``1/n`` and covariance ``bandwidth^2 I``. MEM's E- and M-steps (the
    dissertation's section 5.2; docs/hmac-spec.md section 1) run for all starts at once (kernel matrix in row
    blocks of at most ``block_bytes``); a start stops when its step length is below ``tol * bandwidth`` (a
    ConvergenceWarning if some reach ``max_iter``).

    Parameters
    ----------
    X : array-like of shape (n, p)
        The points of the KDE, finite.
    starts : array-like of shape (m, p)
        The starting points, finite.
    bandwidth : float
        sigma, positive.
    tol : float, default=1e-6
        A start stops when its step is below ``tol * bandwidth``; its last iterate is returned.
    max_iter : int, default=500
        MEM iterations per start at most.
    return_n_iter : bool, default=False
        Also return the iteration counts.
    block_bytes : int, default=64 MiB
        Memory bound of one block of the kernel matrix.

    Returns
    -------
    modes : ndarray of shape (m, p)
        The modes reached from the starts.
    n_iter : ndarray of shape (m,)
        The iterations of each start; only with ``return_n_iter``.

    Examples
    --------
    Every point of three well separated blobs climbs to one of three modes:

    >>> import numpy as np
    >>> from hlm.hmac import modal_em
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    >>> X = np.vstack([rng.normal(c, 1, (15, 2)) for c in centres])
    >>> modes = modal_em(X, X, 1.5)
    >>> print(modes.shape, len(np.unique(modes.round(3), axis=0)))
    (45, 2) 3
    >>> modes, n_iter = modal_em(X, centres, 1.5, return_n_iter=True)
    >>> print(np.abs(modes - centres).max() < 1, n_iter.shape)
    True (3,)
    """
    X = check_points(X, "X")
    Z = check_points(starts, "starts")
    if Z.shape[1] != X.shape[1]:
        raise DataError(f"starts: {Z.shape[1]} dimensions, X has {X.shape[1]}")
    sigma = check_bandwidth(bandwidth)
    tol, max_iter = check_options(tol, max_iter)
    data = Centred(X)
    modes, n_iter, left = climb(lambda A: data.step(A, sigma, block_bytes), Z - data.mean, sigma, tol, max_iter)
    warn_unconverged(left, Z.shape[0], max_iter, sigma)
    modes += data.mean
    return (modes, n_iter) if return_n_iter else modes
