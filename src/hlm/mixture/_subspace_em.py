"""GEM of the Gaussian mixture with subspace constrained means (Qiao 2012, dissertation chapter 4, section 4.4;
docs/subspace-gmm-spec.md section 4), and the reduced-rank MDA M-step (Appendix B.4, spec 6.2).

Model: class k is a mixture of R_k Gaussians phi(x | mu_kr, Sigma) with one covariance Sigma for all components of
all classes (eq. 4.3); the means satisfy V_null^T mu_kr = c for all k, r (4.4) or c_k per class ("sep", 4.10).
``V_null`` with q = 0 columns is the unconstrained common-covariance MDA (spec 6.1).

Components are stacked class by class: ``comp_class[r]`` is component r's class index. Responsibilities are an
n x R matrix, zero outside the point's own class. Data are centred (and scaled) by the caller.

Every iteration: E-step (4.5) on one eigen-decomposition of Sigma; pi by (4.7); mu given Sigma by (4.8)-(4.9)
(App. B.3, the SVD route); Sigma given mu, plus the fixed ridge lambda I (spec 4.7), which makes the update the exact
maximiser of the penalised objective loglik - n/2 lambda tr(Sigma^-1): the GEM is monotone in that objective.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hlm.errors import DataError

LOG_2PI = np.log(2.0 * np.pi)
#: a component whose weight l_kr falls below this fraction of n_k is dead: weight 0, mean kept (spec 4.7)
DEAD = 1e-10
#: Sigma is singular when its smallest eigenvalue is at most this fraction of the largest (spec 4.7)
SINGULAR = 1e-12


@dataclass(frozen=True)
class Data:
    """The fit set: centred X (n x p), class index per row, components' classes, X^T X, class sizes."""

    X: np.ndarray
    y: np.ndarray
    comp_class: np.ndarray
    XtX: np.ndarray
    class_sizes: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray, y: np.ndarray, n_components: np.ndarray) -> Data:
        K = len(n_components)
        comp_class = np.repeat(np.arange(K), n_components)
        return cls(X, y, comp_class, X.T @ X, np.bincount(y, minlength=K).astype(np.float64))

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def mask(self) -> np.ndarray:
        """(n x R) True where component r belongs to point i's class."""
        return self.y[:, None] == self.comp_class[None, :]


@dataclass(frozen=True)
class Decomposition:
    """Sigma = vecs diag(vals) vecs^T: the whitening W = diag(vals)^-1/2 vecs^T and log|Sigma|."""

    vals: np.ndarray
    vecs: np.ndarray

    @classmethod
    def of(cls, cov: np.ndarray) -> Decomposition:
        if cov.ndim == 1:  # diagonal
            vals, vecs = cov.copy(), np.eye(cov.size)
        else:
            vals, vecs = np.linalg.eigh(cov)
        top = float(vals.max())
        if not (top > 0 and vals.min() > SINGULAR * top):
            raise DataError(f"fit: the common covariance is singular (smallest eigenvalue {vals.min():.3g}, largest "
                            f"{top:.3g}); raise reg_covar")
        return cls(vals, vecs)

    @property
    def whitening(self) -> np.ndarray:
        """W with W Sigma W^T = I: (Sigma^{-1/2})^T of the text, D^{-1/2} V_Sigma^T."""
        return self.vecs.T / np.sqrt(self.vals)[:, None]

    @property
    def root(self) -> np.ndarray:
        """Sigma^{1/2} = D^{1/2} V_Sigma^T of the text (Sigma = root^T root)."""
        return self.vecs.T * np.sqrt(self.vals)[:, None]

    @property
    def logdet(self) -> float:
        return float(np.sum(np.log(self.vals)))

    @property
    def inv_trace(self) -> float:
        return float(np.sum(1.0 / self.vals))


@dataclass(frozen=True)
class Mixture:
    """log pi (R,), means (R x p), covariance (p x p, or p for diagonal) and its decomposition."""

    log_weights: np.ndarray
    means: np.ndarray
    cov: np.ndarray
    dec: Decomposition

    @classmethod
    def of(cls, log_weights, means, cov) -> Mixture:
        return cls(log_weights, means, cov, Decomposition.of(cov))


def component_log_density(X: np.ndarray, means: np.ndarray, dec: Decomposition) -> np.ndarray:
    """log phi(x_i | mu_r, Sigma) for all points and components (n x R), from the whitened data and means."""
    W = dec.whitening
    Z = X @ W.T
    M = means @ W.T
    sq = np.sum(Z * Z, axis=1)[:, None] - 2.0 * (Z @ M.T) + np.sum(M * M, axis=1)[None, :]
    return -0.5 * (np.maximum(sq, 0.0) + dec.logdet + X.shape[1] * LOG_2PI)


def joint_log_density(X: np.ndarray, mix: Mixture) -> np.ndarray:
    """log pi_r + log phi(x_i | mu_r, Sigma) (n x R)."""
    with np.errstate(divide="ignore"):
        return component_log_density(X, mix.means, mix.dec) + mix.log_weights[None, :]


def e_step(data: Data, mix: Mixture) -> tuple[np.ndarray, float]:
    """(q (n x R, 4.5), sum_i log f_{y_i}(x_i)) under ``mix``: components of other classes masked out."""
    lj = np.where(data.mask, joint_log_density(data.X, mix), -np.inf)
    top = lj.max(axis=1, keepdims=True)
    q = np.exp(lj - top)
    total = q.sum(axis=1, keepdims=True)
    q /= total
    return q, float(np.sum(np.log(total) + top))


@dataclass(frozen=True)
class Sums:
    """l_kr (R,), component means xbar_kr (R x p; a dead component's is its previous mean), alive mask."""

    l: np.ndarray
    xbar: np.ndarray
    alive: np.ndarray


def sums(data: Data, q: np.ndarray, prev_means: np.ndarray | None) -> Sums:
    l = q.sum(axis=0)
    alive = l >= DEAD * data.class_sizes[data.comp_class]
    S1 = q.T @ data.X
    xbar = S1 / np.where(alive, l, 1.0)[:, None]
    if prev_means is not None:
        xbar = np.where(alive[:, None], xbar, prev_means)
    return Sums(np.where(alive, l, 0.0), xbar, alive)


def log_weights(data: Data, s: Sums) -> np.ndarray:
    """(4.7): log pi_kr = log(l_kr / n_k); -inf for a dead component."""
    with np.errstate(divide="ignore"):
        return np.where(s.alive, np.log(np.where(s.alive, s.l, 1.0) / data.class_sizes[data.comp_class]), -np.inf)


def constrained_means(s: Sums, comp_class: np.ndarray, V_null: np.ndarray, dec: Decomposition, sep: bool,
                      V: np.ndarray | None = None, route: str = "projector") -> np.ndarray:
    """mu_kr given Sigma by (4.8)-(4.9), App. B.3: minimise sum l (xbar - mu)^T Sigma^-1 (xbar - mu) subject to
    V_null^T mu_kr equal for all components (``sep``: within each class, section 4.4.2).

    ``route="svd"`` is the text's: Sigma^{1/2} = D^{1/2} V_Sigma^T; B = Sigma^{1/2} V_null = U_B D_B V_B^T;
    U^ = [U_B, complement]; x_check = U^T (Sigma^{-1/2})^T xbar; the first q coordinates pooled (weights l), the
    others kept; mu = (Sigma^{1/2})^T U^ mu_check. ``"projector"`` (default) gives the same mu without the p x p
    SVD: the complement of col(B) is col(W V), W = (Sigma^{-1/2})^T, V = the constrained subspace (u^T B = 0 iff
    Sigma^{1/2 T} u is orthogonal to V_null), so with P the orthogonal projector on col(W V), the whitened means
    are x~_pooled + P (x~ - x~_pooled). Dead components (l = 0) get the pooled null coordinates, keep the rest."""
    q = V_null.shape[1]
    if q == 0:
        return s.xbar.copy()
    if route == "svd":
        U, _, _ = np.linalg.svd(dec.root @ V_null, full_matrices=True)
        A = U.T @ dec.whitening  # x_check = A xbar  (U^T (Sigma^{-1/2})^T)
        xc = s.xbar @ A.T
        block = np.arange(xc.shape[1]) < q  # the pooled (null) coordinates
        back = dec.root.T @ U
    else:
        if V is None:
            V = null_basis_of(V_null)
        P, _ = np.linalg.qr(dec.whitening @ V)
        xt = s.xbar @ dec.whitening.T
        xc = np.hstack([xt - (xt @ P) @ P.T, xt @ P])  # null part (in R^p), own part (in P's coordinates)
        block = np.arange(xc.shape[1]) < xt.shape[1]
        back = None
    mc = xc.copy()
    if sep:
        C = np.eye(int(comp_class.max()) + 1)[comp_class]  # R x K one-hot
        pooled = (C.T @ (s.l[:, None] * xc[:, block])) / (C.T @ s.l)[:, None]
        mc[:, block] = pooled[comp_class]
    else:
        mc[:, block] = (s.l @ xc[:, block]) / s.l.sum()
    if back is not None:
        return mc @ back.T
    p = xt.shape[1]
    return (mc[:, :p] + mc[:, p:] @ P.T) @ dec.root


def null_basis_of(V_null: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the orthogonal complement of span(V_null) (the constrained subspace)."""
    u, _, _ = np.linalg.svd(V_null, full_matrices=True)
    return u[:, V_null.shape[1]:]


def covariance(data: Data, s: Sums, means: np.ndarray, ridge: float, diag: bool) -> np.ndarray:
    """Sigma given mu: (1/n) sum q (x - mu)(x - mu)^T = (1/n)[X^T X - sum_r l_r (xbar mu^T + mu xbar^T - mu mu^T)]
    (sum_r q_ir = 1), symmetrised, + ridge I; its diagonal for ``diag``."""
    lx = s.l[:, None] * s.xbar
    cross = lx.T @ means
    S = (data.XtX - cross - cross.T + (s.l[:, None] * means).T @ means) / data.n
    S = (S + S.T) / 2
    if diag:
        return np.maximum(np.diag(S), 0.0) + ridge
    S[np.diag_indices_from(S)] += ridge
    return S


def m_step(data: Data, q: np.ndarray, mix: Mixture | None, V_null: np.ndarray, sep: bool, ridge: float,
           diag: bool, V: np.ndarray | None = None) -> Mixture:
    """One GEM M-step (section 4.4.1): pi (4.7), mu given the current Sigma (4.8)-(4.9), Sigma given the new mu.
    ``mix`` None (the first step from hard responsibilities) only when q = 0 columns (unconstrained)."""
    s = sums(data, q, None if mix is None else mix.means)
    if mix is None and V_null.shape[1]:
        raise ValueError("a constrained M-step needs the current covariance")
    means = s.xbar.copy() if mix is None else constrained_means(s, data.comp_class, V_null, mix.dec, sep, V)
    return Mixture.of(log_weights(data, s), means, covariance(data, s, means, ridge, diag))


def reduced_rank_m_step(data: Data, q: np.ndarray, mix: Mixture | None, rank: int, ridge: float,
                        diag: bool) -> tuple[Mixture, np.ndarray]:
    """The M-step of reduced-rank MDA (App. B.4): a weighted LDA with R "classes". Returns the mixture with
    (B.10) mu^ = W V V^T (xbar_kr - xbar) + xbar and (B.11) Sigma^ = W + (1/n) sum l (xbar - mu^)(xbar - mu^)^T,
    W the pooled within-component covariance (+ ridge, spec 6.2), and V (p x rank), the leading columns of
    W^{-1/2} V*, B* = W^{-1/2} B W^{-1/2} = V* D V*^T."""
    s = sums(data, q, None if mix is None else mix.means)
    n = data.n
    mean = (s.l @ s.xbar) / s.l.sum()
    W = covariance(data, s, s.xbar, ridge, diag)
    Wm = np.diag(W) if diag else W
    Wdec = Decomposition.of(W)
    Winv_half = Wdec.vecs @ (Wdec.whitening)  # symmetric W^{-1/2}
    D = s.xbar - mean
    Bw = (s.l[:, None] * D).T @ D / n
    Bstar = Winv_half @ Bw @ Winv_half
    vals, vecs = np.linalg.eigh((Bstar + Bstar.T) / 2)
    order = np.argsort(vals)[::-1][:rank]
    V = Winv_half @ vecs[:, order]
    means = mean + D @ V @ V.T @ Wm
    E = s.xbar - means
    extra = (s.l[:, None] * E).T @ E / n
    cov = W + (np.diag(extra) if diag else (extra + extra.T) / 2)
    return Mixture.of(log_weights(data, s), means, cov), V


@dataclass(frozen=True)
class GEMResult:
    mixture: Mixture
    q: np.ndarray  # responsibilities of the last E-step (under ``mixture``)
    loglik: float  # sum_i log f_{y_i}(x_i) of ``mixture`` (plain; add sum log a_k for the joint)
    path: np.ndarray  # penalised objective after each M-step: loglik - n/2 ridge tr(Sigma^-1)
    n_iter: int
    converged: bool
    extra: object = None  # reduced-rank MDA: V of the last M-step


def run_em(data: Data, q0: np.ndarray, start: Mixture | None, step, *, ridge: float, max_iter: int,
           tol: float) -> GEMResult:
    """EM/GEM from responsibilities ``q0`` (and the mixture ``start`` whose Sigma the first constrained mean step
    uses): ``step(q, mix) -> (mixture, extra)``. Stops when the penalised objective gains at most tol |objective|
    or after ``max_iter`` M-steps (spec 4.7)."""
    mix, extra = step(q0, start)
    path, converged = [], False
    for it in range(max_iter):
        q, ll = e_step(data, mix)
        path.append(ll - 0.5 * data.n * ridge * mix.dec.inv_trace)
        if len(path) > 1 and path[-1] - path[-2] <= tol * abs(path[-1]):
            converged = True
            break
        if it == max_iter - 1:
            break
        mix, extra = step(q, mix)
    return GEMResult(mix, q, ll, np.asarray(path), len(path), converged, extra)


def fit_constrained(data: Data, q0: np.ndarray, start: Mixture | None, V_null: np.ndarray, *, sep: bool = False,
                    ridge: float, diag: bool, max_iter: int, tol: float) -> GEMResult:
    """The GEM of section 4.4 under (4.4) (or (4.10) with ``sep``) from responsibilities ``q0``; q = 0 columns of
    ``V_null`` is the unconstrained common-covariance MDA (``start`` may then be None)."""
    V = null_basis_of(V_null) if V_null.shape[1] else None

    def step(q, mix):
        return m_step(data, q, mix, V_null, sep, ridge, diag, V), None
    return run_em(data, q0, start, step, ridge=ridge, max_iter=max_iter, tol=tol)


def fit_reduced_rank(data: Data, q0: np.ndarray, rank: int, *, ridge: float, diag: bool, max_iter: int,
                     tol: float) -> GEMResult:
    """Reduced-rank MDA (App. B.4) from responsibilities ``q0``."""
    def step(q, mix):
        return reduced_rank_m_step(data, q, mix, rank, ridge, diag)
    return run_em(data, q0, None, step, ridge=ridge, max_iter=max_iter, tol=tol)
