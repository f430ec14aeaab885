"""EM kernels of the two-way Gaussian mixture (Qiao 2012, dissertation chapter 2; docs/twoway-gmm-spec.md).

One class's mixture (or, with homogeneous clustering, every class's at once) is fitted by the generalized EM
of section 2.4: E-step (2.7) / (2.13) on the per-cluster sums T1, T2 of Theorem 2.3.1, M-step (2.9)-(2.11) /
(2.14)-(2.16), cluster step (2.12) / (2.17).

With missing entries, Q(psi' | psi_t) depends on the data only through the *completed* statistics
``S1 = sum_i q_im x~_ij`` and ``S2 = sum_i q_im E[x_ij^2]``, a missing x_ij given component m having mean
``a_mj = mu_t[m, c_t(j)]`` and second moment ``a_mj^2 + sigma2_t[m, c_t(j)]`` (Appendix A.2). Eqs. (2.15)-(2.17)
are the complete-data formulas (2.10)-(2.12) on these statistics (derived; docs/twoway-gmm-spec.md section 4,
checked in tests/test_twoway_gmm.py against the per-entry formulas), so one M-step serves both cases.

Shapes: n objects, p variables, R components, L clusters. Variable j of a class is in cluster
``assignment[j]``; ``identity`` marks the MDA case (L = p, c(j) = j), where the sums are the data themselves.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

LOG_2PI = np.log(2.0 * np.pi)
#: a component whose weight W_m falls below this fraction of n_k is dead: weight 0, parameters kept (spec 3.6)
DEAD = 1e-10
#: relative tolerance of the cluster step's tie rule (spec 3.4)
TIE = 1e-12


@dataclass
class ClassData:
    """One class's objects: ``H = [X, X^2(, Lambda)]`` side by side (for Q^T H) and stacked ``V`` (for V A).

    Missing entries are 0 in X and X^2; ``observed`` is the 0/1 matrix Lambda, None when nothing is missing.
    """

    H: np.ndarray
    V: np.ndarray
    n: int
    p: int
    observed: bool
    global_mean: float
    global_var: float

    @classmethod
    def of(cls, X: np.ndarray) -> ClassData:
        """From an n x p array with NaN for missing entries."""
        mask = np.isnan(X)
        missing = bool(mask.any())
        X0 = np.where(mask, 0.0, X) if missing else X
        blocks = [X0, X0 * X0] + ([(~mask).astype(np.float64)] if missing else [])
        values = X[~mask] if missing else X.ravel()
        return cls(np.hstack(blocks), np.vstack(blocks), X.shape[0], X.shape[1], missing,
                   float(values.mean()), float(values.var()))

    @property
    def X(self) -> np.ndarray:
        return self.H[:, :self.p]


@dataclass
class Params:
    """One class's mixture: log pi_kr (R,), mu and sigma^2 (R x L), cluster c(k, j) of each variable (p,)."""

    log_weights: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    assignment: np.ndarray

    def copy(self) -> Params:
        return Params(self.log_weights.copy(), self.means.copy(), self.variances.copy(), self.assignment.copy())


@dataclass
class Stats:
    """M-step statistics: W_m (R,), completed S1, S2 (R x p), and n_k."""

    W: np.ndarray
    S1: np.ndarray
    S2: np.ndarray
    n: int


def indicator(assignment: np.ndarray, L: int) -> np.ndarray:
    """The p x L 0/1 matrix A with A[j, c(j)] = 1."""
    A = np.zeros((assignment.size, L))
    A[np.arange(assignment.size), assignment] = 1.0
    return A


def cluster_sums(data: ClassData, assignment: np.ndarray, L: int, identity: bool):
    """(T1, T2, eta) of Theorem 2.3.1 over observed entries: T1, T2 n x L; eta (L,) or, with missing
    entries, the observed counts eta^obs (n x L) of (2.13)."""
    n = data.n
    if identity:
        T = data.V
    else:
        T = data.V @ indicator(assignment, L)
    if data.observed:
        return T[:n], T[n:2 * n], T[2 * n:]
    eta = np.ones(L) if identity else np.bincount(assignment, minlength=L).astype(np.float64)
    return T[:n], T[n:], eta


def component_log_density(T1, T2, eta, means: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """log prod_j phi(x_j | mu_{m,c(j)}, sigma2_{m,c(j)}) for every object and component (n x R), section 2.4:
    sum_l -(T2 - 2 mu T1 + eta mu^2) / (2 sigma2) - eta/2 log(2 pi sigma2)."""
    inv = 1.0 / variances
    out = T2 @ (-0.5 * inv).T
    out += T1 @ (means * inv).T
    const = -0.5 * (means * means * inv + np.log(variances) + LOG_2PI)
    if eta.ndim == 1:
        out += const @ eta
    else:
        out += eta @ const.T
    return out


def normalize(log_joint: np.ndarray) -> tuple[np.ndarray, float]:
    """(q_im by (2.7), the log-likelihood sum_i log sum_m exp(log_joint_im)); rows over components."""
    if log_joint.shape[1] == 1:
        return np.ones_like(log_joint), float(log_joint.sum())
    top = log_joint.max(axis=1, keepdims=True)
    q = np.exp(log_joint - top)
    total = q.sum(axis=1, keepdims=True)
    q /= total
    return q, float((np.log(total) + top).sum())


def e_step(data: ClassData, params: Params, L: int, identity: bool) -> tuple[np.ndarray, float]:
    """E-step (2.7) / (2.13): (responsibilities n x R, observed log-likelihood of ``params``)."""
    T1, T2, eta = cluster_sums(data, params.assignment, L, identity)
    with np.errstate(divide="ignore"):
        log_joint = component_log_density(T1, T2, eta, params.means, params.variances) + params.log_weights
    return normalize(log_joint)


def statistics(data: ClassData, q: np.ndarray, params: Params) -> Stats:
    """W_m, and S1, S2 (Q^T X, Q^T X^2) completed for missing entries by the current parameters (A.2)."""
    p = data.p
    W = q.sum(axis=0)
    QH = q.T @ data.H
    S1, S2 = QH[:, :p], QH[:, p:2 * p]
    if data.observed:
        U = W[:, None] - QH[:, 2 * p:]  # sum_i q_im (1 - Lambda_ij)
        a = params.means[:, params.assignment]
        S1 = S1 + U * a
        S2 = S2 + U * (a * a + params.variances[:, params.assignment])
    return Stats(W, S1, S2, data.n)


def m_step(stats: Stats, assignment: np.ndarray, L: int, identity: bool, prev: Params, floor: float):
    """(log pi, mu, sigma2) by (2.9)-(2.11) / (2.14)-(2.16) for the assignment c; sigma2 >= floor.

    A dead component (W_m < DEAD n_k) gets weight 0, an empty cluster (eta_l = 0) keeps ``prev``'s values.
    """
    W = stats.W
    alive = W >= DEAD * stats.n
    with np.errstate(divide="ignore"):
        log_weights = np.where(alive, np.log(np.where(alive, W, 1.0) / stats.n), -np.inf)
    if identity:
        S1A, S2A, eta = stats.S1, stats.S2, np.ones(L)
    else:
        A = indicator(assignment, L)
        S1A, S2A, eta = stats.S1 @ A, stats.S2 @ A, A.sum(axis=0)
    ok = alive[:, None] & (eta > 0)[None, :]
    den = np.where(ok, W[:, None] * eta[None, :], 1.0)
    mu = S1A / den
    var = np.maximum(S2A / den - mu * mu, floor)  # the floored MLE maximises Q under the floor
    return log_weights, np.where(ok, mu, prev.means), np.where(ok, var, prev.variances)


def cluster_gain(stats: Stats, means: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """G (p x L) of (2.12) / (2.17): G_jl = sum_m -(S2_mj - 2 mu_ml S1_mj + W_m mu_ml^2) / (2 sigma2_ml)
    - W_m/2 log sigma2_ml (the constant -W_m/2 log 2 pi dropped)."""
    inv = 1.0 / variances
    G = stats.S2.T @ (-0.5 * inv)
    G += stats.S1.T @ (means * inv)
    G -= 0.5 * (stats.W @ (means * means * inv + np.log(variances)))
    return G


def choose_clusters(G: np.ndarray, current: np.ndarray) -> np.ndarray:
    """argmax_l G_jl for every variable j; ties (relative TIE) keep the current cluster, else the smallest l."""
    top = G.max(axis=1, keepdims=True)
    near = G >= top - TIE * np.abs(top)
    keep = near[np.arange(G.shape[0]), current]
    return np.where(keep, current, np.argmax(near, axis=1))


def gem_m_step(stats: list[Stats], params: list[Params], L: list[int], identity: list[bool], floors: list[float],
               sweeps: int, shared: bool) -> tuple[list[Params], bool]:
    """One GEM M-step of section 3.5 for a group of classes: pi (2.9), then ``sweeps`` times mu (2.10),
    sigma2 (2.11) with the current c and c (2.12); no cluster step for an ``identity`` class (L >= p: MDA,
    spec 3.6). Homogeneous (``shared``): c maximises the sum of G over the group's classes. Returns the new
    parameters and whether any assignment changed."""
    new = [pr.copy() for pr in params]
    for _ in range(sweeps):
        for s, pr, Lk, ident, floor in zip(stats, new, L, identity, floors):
            pr.log_weights, pr.means, pr.variances = m_step(s, pr.assignment, Lk, ident, pr, floor)
        step = [k for k, ident in enumerate(identity) if not ident]
        if not step:
            break
        gains = {k: cluster_gain(stats[k], new[k].means, new[k].variances) for k in step}
        if shared:
            c = choose_clusters(np.sum(list(gains.values()), axis=0), new[step[0]].assignment)
            for k in step:
                new[k].assignment = c.copy()
        else:
            for k, G in gains.items():
                new[k].assignment = choose_clusters(G, new[k].assignment)
    changed = any(not np.array_equal(a.assignment, b.assignment) for a, b in zip(params, new))
    return new, changed


def initial_params(data: ClassData, q: np.ndarray, assignment: np.ndarray, L: int, identity: bool,
                   floor: float) -> Params:
    """One M-step (2.9)-(2.11) from responsibilities ``q`` and assignment c (no cluster step); an empty
    component or cluster gets the class's mean and variance over all its entries (section 2.4, spec 3.6),
    which also complete missing entries in this first step."""
    R = q.shape[1]
    start = Params(np.zeros(R), np.full((R, L), data.global_mean), np.full((R, L), max(data.global_var, floor)),
                   assignment)
    log_weights, means, variances = m_step(statistics(data, q, start), assignment, L, identity, start, floor)
    return Params(log_weights, means, variances, assignment)


@dataclass
class GEMResult:
    params: list[Params]
    path: np.ndarray  # observed log-likelihood of the group after 0, 1, ... iterations
    n_iter: int
    converged: bool


def run_gem(datas: list[ClassData], params: list[Params], L: list[int], identity: list[bool], floors: list[float],
            *, max_iter: int, tol: float, sweeps: int = 1, shared: bool = False) -> GEMResult:
    """Generalized EM (section 3.5) from ``params`` until the group's log-likelihood gains at most
    tol |loglik| in an iteration that changed no assignment (spec 3.6), or ``max_iter`` iterations."""
    fits = [e_step(d, pr, Lk, ident) for d, pr, Lk, ident in zip(datas, params, L, identity)]
    path = [sum(ll for _, ll in fits)]
    converged = False
    for _ in range(max_iter):
        stats = [statistics(d, q, pr) for d, (q, _), pr in zip(datas, fits, params)]
        params, changed = gem_m_step(stats, params, L, identity, floors, sweeps, shared)
        fits = [e_step(d, pr, Lk, ident) for d, pr, Lk, ident in zip(datas, params, L, identity)]
        path.append(sum(ll for _, ll in fits))
        if path[-1] - path[-2] <= tol * abs(path[-1]) and not changed:
            converged = True
            break
    return GEMResult(params, np.asarray(path), len(path) - 1, converged)


# ---------------------------------------------------------------------- starts (spec 2.5, 3.6)
def kmeans_labels(points: np.ndarray, n: int, seed: int) -> np.ndarray:
    """k-means labels (one start); fewer distinct points than n leaves clusters empty."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return KMeans(n, n_init=1, random_state=seed % 2**32).fit(points).labels_


def fill_missing(data: ClassData) -> np.ndarray:
    """The class's X with missing entries set to their variable's observed mean (for k-means only)."""
    p = data.p
    if not data.observed:
        return data.X
    obs = data.H[:, 2 * p:]
    mean = data.X.sum(axis=0) / obs.sum(axis=0)
    return np.where(obs > 0, data.X, mean)


def component_means(data: ClassData, q: np.ndarray) -> np.ndarray:
    """Observed mean of every variable in every component of a hard assignment q (R x p)."""
    p = data.p
    QH = q.T @ data.H
    counts = QH[:, 2 * p:] if data.observed else q.sum(axis=0)[:, None]
    return np.where(counts > 0, QH[:, :p] / np.where(counts > 0, counts, 1.0), data.global_mean)


def whitening_matrix(cov: np.ndarray, root: str) -> tuple[np.ndarray, float]:
    """(W, log|det W|) with W Sigma W^T = I: Sigma^{-1/2} (symmetric) or L^{-1} (Sigma = L L^T)."""
    if root == "symmetric":
        lam, V = np.linalg.eigh(cov)
        return (V / np.sqrt(lam)) @ V.T, float(-0.5 * np.log(lam).sum())
    chol = np.linalg.cholesky(cov)
    W = np.linalg.solve(chol, np.eye(cov.shape[0]))
    return W, float(-np.log(np.diag(chol)).sum())
