"""The kernel covariance H of one class: the AMISE plug-in on its sample model (spec 3).

H = h^2 F in the whitened subspace of the sample model's covariance F, with the
curvature functional R of the pilot-smoothed sample model in closed form; the
directions the sample model does not span take the pooled rule H_pool.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hlm.kde._gaussians import moment_match

_LOG_2PI = math.log(2.0 * math.pi)

#: eigenvalues of F below this fraction of the largest are outside the subspace (Maggot)
SUBSPACE_EPS = 1e-7
#: the pooled rule's factor a: H_pool = a^2 Sigma_pool (4 / ((d + 2) N))^(2 / (d + 4)) (Maggot "Ht_global")
POOLED_FACTOR = 0.2


def pilot(d: int, n: float, kind: str = "maggot") -> float:
    """The pilot bandwidth g (G = g I in the whitened space): Maggot's default (``scale_factor_bw_global = 3``),
    4 (2 / (d + 2))^(2 / (d + 4)) N^(-2 / (d + 4)), or Silverman's normal rule (the toolbox's commented
    alternative). With Silverman's g, each point's pair with itself dominates R (25x the true R of Gaussian
    data at d = 4, at any N), so h comes out too small (docs/online-kde-spec.md section 3)."""
    if kind == "silverman":
        return (4.0 / ((d + 2.0) * n)) ** (2.0 / (d + 4.0))
    return 4.0 * (2.0 / (d + 2.0)) ** (2.0 / (d + 4.0)) * n ** (-2.0 / (d + 4.0))


@njit(cache=True)
def curvature_diag(w: np.ndarray, mu: np.ndarray, var: np.ndarray, g: float) -> float:
    """R = int tr^2(Hessian of the pilot-smoothed sample model) with diagonal covariances (spec 3).

    ``mu`` (M, d) and ``var`` (M, d) are whitened means and covariance diagonals; exact for
    diagonal covariances, O(M^2 d): the sum over pairs (j, k) of w_j w_k phi_jk (2 tr(A_jk B_jk) + tr(C_jk)^2),
    A_jk = (var_j + var_k + g)^-1 (diagonal), each pair once (the terms are symmetric).
    """
    M, d = mu.shape
    total = 0.0
    for j in range(M):
        for k in range(j, M):
            m = tr_ab = tr_c = log_det = 0.0
            for i in range(d):
                a = 1.0 / (var[j, i] + var[k, i] + g)
                delta2 = (mu[j, i] - mu[k, i]) ** 2
                m += a * delta2
                tr_ab += a * a - 2.0 * a**3 * delta2
                tr_c += a - a * a * delta2
                log_det += math.log(a)
            phi = math.exp(-0.5 * d * _LOG_2PI + 0.5 * log_det - 0.5 * m)
            term = w[j] * w[k] * phi * (2.0 * tr_ab + tr_c * tr_c)
            total += term if j == k else 2.0 * term
    return total


def curvature_full(w: np.ndarray, mu: np.ndarray, cov: np.ndarray, g: float) -> float:
    """As :func:`curvature_diag` with full whitened covariances (the exact reference, O(M^2 d^3))."""
    M, d = mu.shape
    S = cov[:, None] + cov[None, :] + g * np.eye(d)  # (M, M, d, d)
    A = np.linalg.inv(S)
    delta = mu[:, None, :] - mu[None, :, :]
    z = np.einsum("ijkl,ijl->ijk", A, delta)
    zz = (z * z).sum(-1)
    tr_a2 = np.einsum("ijkl,ijlk->ij", A, A)
    tr_ab = tr_a2 - 2.0 * np.einsum("ijk,ijkl,ijl->ij", z, A, z)
    tr_c = np.trace(A, axis1=-2, axis2=-1) - zz
    _, logdet_a = np.linalg.slogdet(A)
    log_phi = -0.5 * d * np.log(2.0 * np.pi) + 0.5 * logdet_a - 0.5 * (delta * z).sum(-1)
    return float(w @ (np.exp(log_phi) * (2.0 * tr_ab + tr_c**2)) @ w)


def amise_scale(r: float, d: int, n: float, form: str = "maggot") -> float:
    """h from the curvature R: [1 / (N d (4 pi)^(d/2) R)]^(1/(d+4)) (Maggot, the journal paper as recalled),
    or [d / (N (4 pi)^(d/2) R)]^(1/(d+4)) (the minimiser of Wand and Jones's AMISE; gives Silverman's rule)."""
    num = 1.0 / d if form == "maggot" else float(d)
    return float((num / (n * (4.0 * np.pi) ** (d / 2.0) * r)) ** (1.0 / (d + 4.0)))


def pooled_kernel(cov_pool: np.ndarray, n_all: float) -> np.ndarray:
    """H_pool = a^2 Sigma_pool (4 / ((d + 2) N_all))^(2 / (d + 4)) (spec 3); Sigma_pool = I if it is 0."""
    d = cov_pool.shape[0]
    if not np.any(cov_pool):
        cov_pool = np.eye(d)
    return POOLED_FACTOR**2 * cov_pool * (4.0 / ((d + 2.0) * n_all)) ** (2.0 / (d + 4.0))


def kernel_covariance(
    w: np.ndarray, mu: np.ndarray, cov: np.ndarray, n: float, h_pool: np.ndarray, *,
    pilot_kind: str = "maggot", curvature: str = "diag", form: str = "maggot",
    moments: tuple[float, np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """The class's kernel covariance H (spec 3): the plug-in h^2 F in the span of the sample model,
    the diagonal (in that basis) of ``h_pool`` outside it, eigenvalues floored at 1e-7 of the largest.
    ``moments``: the sample model's ``moment_match``, if the caller has it."""
    d = mu.shape[1]
    _, mbar, F = moment_match(w, mu, cov) if moments is None else moments
    lam, U = np.linalg.eigh(F)
    keep = lam > SUBSPACE_EPS * lam[-1] if lam[-1] > 0 else np.zeros(d, dtype=bool)
    values = np.zeros(d)  # H = U diag(values) U^T: F's eigenvectors are H's
    k = int(keep.sum())
    if k:
        T = U[:, keep].T / np.sqrt(lam[keep])[:, None]  # whitening, (k, d)
        mu_t = (mu - mbar) @ T.T
        g = pilot(k, n, pilot_kind)
        if curvature == "diag":  # the whitened covariances' diagonals, t_a^T cov_j t_a
            r = curvature_diag(w, mu_t, ((T @ cov) * T).sum(-1), g)
        else:
            r = curvature_full(w, mu_t, T @ cov @ T.T, g)
        h = amise_scale(r, k, n, form)
        values[keep] = h * h * lam[keep]
    if k < d:
        Up = U[:, ~keep]
        values[~keep] = np.diagonal(Up.T @ h_pool @ Up)
    if values.max() <= 0:
        return h_pool.copy()
    values = np.maximum(values, SUBSPACE_EPS * values.max())
    H = (U * values) @ U.T
    return 0.5 * (H + H.T)
