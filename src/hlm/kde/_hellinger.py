"""The Hellinger distance between two Gaussian mixtures by the unscented transform (spec 4.2).

D_H^2(p1, p2) = 1/2 int (sqrt p1 - sqrt p2)^2 dx, estimated with importance
mixture p0 = (p1 + p2)/2 and the sigma points of each of its components:
D_H^2 ~ 1/2 sum_i omega_i sum_j W_j (sqrt p1 - sqrt p2)^2 / p0 at X_i^(j).
"""

from __future__ import annotations

import numpy as np

from hlm.kde._gaussians import cholesky, log_mixture, sigma_points

Mixture = tuple[np.ndarray, np.ndarray, np.ndarray]  # (w, mu, cov), weights summing to 1


def hellinger(p1: Mixture, p2: Mixture) -> float:
    """Unscented estimate of D_H(p1, p2) in [0, 1] (weights of each mixture sum to 1)."""
    w1, mu1, cov1 = p1
    w2, mu2, cov2 = p2
    w0 = 0.5 * np.concatenate([w1, w2])
    mu0 = np.concatenate([mu1, mu2])
    cov0 = np.concatenate([cov1, cov2])
    points, W = sigma_points(mu0, cov0)
    keep = W > 0
    X = points[:, keep].reshape(-1, mu0.shape[1])
    L1 = log_mixture(X, w1, mu1, cholesky(cov1))
    L2 = log_mixture(X, w2, mu2, cholesky(cov2))
    L0 = np.logaddexp(L1, L2) - np.log(2.0)
    terms = (np.exp(0.5 * (L1 - L0)) - np.exp(0.5 * (L2 - L0))) ** 2
    d2 = 0.5 * float((w0[:, None] * W[keep][None, :] * terms.reshape(len(w0), -1)).sum())
    return float(np.sqrt(min(max(d2, 0.0), 1.0)))
