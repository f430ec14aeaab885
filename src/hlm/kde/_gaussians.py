"""Gaussian mixtures in the log domain: moment matching, the principal-axis split, sigma points.

A mixture is ``(w, mu, cov)``: weights (M,), means (M, d), covariances (M, d, d).
docs/online-kde-spec.md sections 1, 4.2 and 7.
"""

from __future__ import annotations

import warnings

import numpy as np

_LOG_2PI = np.log(2.0 * np.pi)


def symmetric_psd(S: np.ndarray) -> np.ndarray:
    """(S + S^T)/2 with negative eigenvalues clipped to 0 (spec 7); works on (..., d, d)."""
    S = 0.5 * (S + np.swapaxes(S, -1, -2))
    lam, U = np.linalg.eigh(S)
    if (lam >= 0).all():
        return S
    lam = np.clip(lam, 0.0, None)
    return (U * lam[..., None, :]) @ np.swapaxes(U, -1, -2)


def moment_match(w: np.ndarray, mu: np.ndarray, cov: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Weight, mean and covariance of a weighted set of Gaussians (spec 1):
    W = sum w, m = sum w mu / W, S = sum w (Sigma + (mu - m)(mu - m)^T) / W."""
    W = float(w.sum())
    m = w @ mu / W
    dev = mu - m
    d = mu.shape[1]
    S = ((w @ cov.reshape(-1, d * d)).reshape(d, d) + (dev * w[:, None]).T @ dev) / W
    return W, m, 0.5 * (S + S.T)


def logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    """log sum exp along ``axis`` (scipy's without its array-API overhead, which dominates on small arrays);
    -inf where every term is -inf."""
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(a - top), axis=axis)) + np.squeeze(top, axis=axis)


def split_principal(mu: np.ndarray, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two equal-weight Gaussians along the principal axis, with the same first two moments (spec 1):
    mu +- sqrt(lambda) u / 2, both with cov - lambda u u^T / 4. Returns (means (2, d), covs (2, d, d))."""
    lam, U = np.linalg.eigh(cov)
    lam_max, u = max(lam[-1], 0.0), U[:, -1]
    step = 0.5 * np.sqrt(lam_max) * u
    S = symmetric_psd(cov - 0.25 * lam_max * np.outer(u, u))
    return np.stack([mu + step, mu - step]), np.stack([S, S])


def cholesky(S: np.ndarray) -> np.ndarray:
    """Lower Cholesky factors of positive-definite covariances (..., d, d); jitter 1e-10 tr(S)/d on failure."""
    try:
        return np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        d = S.shape[-1]
        jitter = 1e-10 * np.trace(S, axis1=-2, axis2=-1)[..., None, None] / d + 1e-300
        warnings.warn("online KDE: a covariance is not positive definite; jitter added", RuntimeWarning,
                      stacklevel=2)
        return np.linalg.cholesky(S + jitter * np.eye(d))


def precision_factors(mu: np.ndarray, chol: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`log_gaussians_from` needs of components (mu_j, Sigma_j = L_j L_j^T), with Lambda_j = Sigma_j^{-1}:
    the rows (M, T + d), T = d(d+1)/2, of Lambda_j's upper triangle (off-diagonal entries doubled) and of
    -2 Lambda_j mu_j; mu_j^T Lambda_j mu_j (M,); and log N(mu_j; mu_j, Sigma_j) (M,). Components of several
    mixtures are evaluated in one call by concatenating their factors."""
    d = mu.shape[1]
    inv = np.linalg.inv(chol)  # (M, d, d), lower triangular
    lam = np.swapaxes(inv, -1, -2) @ inv
    lam = 0.5 * (lam + np.swapaxes(lam, -1, -2))
    rows, cols = np.triu_indices(d)
    lin = np.einsum("mij,mj->mi", lam, mu)
    coef = lam[:, rows, cols] * np.where(rows == cols, 1.0, 2.0)
    return np.concatenate([coef, -2.0 * lin], axis=1), np.einsum("mi,mi->m", lin, mu), log_peaks(chol)


def quadratic_features(X: np.ndarray) -> np.ndarray:
    """The monomials x_a x_b (a <= b, in :func:`precision_factors`' order) and x_a of every row of X: (P, T + d)."""
    P, d = X.shape
    out = np.empty((P, d * (d + 1) // 2 + d))
    k = 0
    for a in range(d):
        out[:, k:k + d - a] = X[:, a:a + 1] * X[:, a:]
        k += d - a
    out[:, k:] = X
    return out


def log_gaussians_from(X: np.ndarray, factors: tuple[np.ndarray, np.ndarray, np.ndarray],
                       features: np.ndarray | None = None) -> np.ndarray:
    """log N(x; mu_j, Sigma_j) (+ the constant the factors carry) for every row x of X (P, d): (P, M).
    ``features``: :func:`quadratic_features` of X, if the caller has them.

    The Mahalanobis distance expanded, x^T Lambda x - 2 x^T Lambda mu + mu^T Lambda mu: one matrix product
    of X's monomials with the factors (blocks of rows, when this function builds the monomials itself),
    no (P, M, d) intermediate. The expansion costs digits where its terms are large next to the result:
    the absolute error is a few ulp of |x|^T |Lambda| |x| + 2 |x|^T |Lambda mu| + |mu|^T |Lambda| |mu|
    (entrywise absolute values), at most about 1e-16 d ||Lambda||_2 (||x|| + ||mu||)^2: 1e-12 on the
    standardised features of Iris and Wine (the classifiers centre their features), but up to 1e-7 for
    a component with condition number 1e7 whose thin direction is rotated off the axes.
    :func:`log_gaussians` is the reference (whitening by the Cholesky factors).
    """
    coef, quad_mu, const = factors
    if features is None:
        T = coef.shape[1]
        step = max(1, _BLOCK // T)
        if X.shape[0] > step:
            return np.concatenate([log_gaussians_from(X[lo:lo + step], factors)
                                   for lo in range(0, X.shape[0], step)])
        features = quadratic_features(X)
    out = features @ coef.T
    out += quad_mu
    np.maximum(out, 0.0, out=out)  # a squared distance; rounding can leave it just below 0 at x = mu
    out *= -0.5
    out += const
    return out


def log_gaussians(X: np.ndarray, mu: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """log N(x; mu_j, L_j L_j^T) for every row x of X (P, d) and component j: (P, M), by whitening:
    z = L_j^{-1} x - L_j^{-1} mu_j for every j at once, one matrix product per block of rows (the reference
    for :func:`log_gaussians_from`)."""
    M, d = mu.shape
    inv = np.linalg.inv(chol)  # (M, d, d), lower triangular
    flat, shift = inv.reshape(M * d, d), np.einsum("mij,mj->mi", inv, mu).reshape(M * d)
    P = X.shape[0]
    out = np.empty((P, M))
    step = max(1, _BLOCK // max(M * d, 1))
    ones = np.ones(d)
    for lo in range(0, P, step):
        z = X[lo:lo + step] @ flat.T  # (p, M * d)
        z -= shift
        z *= z
        out[lo:lo + step] = (z.reshape(-1, d) @ ones).reshape(-1, M)  # sums of d squares, by BLAS
    out *= -0.5
    out += log_peaks(chol)
    return out


def log_peaks(chol: np.ndarray) -> np.ndarray:
    """log N(mu_j; mu_j, L_j L_j^T), the density at each component's mean: (M,)."""
    d = chol.shape[-1]
    return -np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1) - 0.5 * d * _LOG_2PI


#: doubles per block of log_gaussians' intermediate (1.6 MB)
_BLOCK = 200_000


def log_mixture(X: np.ndarray, w: np.ndarray, mu: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """log sum_j w_j N(x; mu_j, L_j L_j^T) for every row of X, by logsumexp (spec 7)."""
    return logsumexp(log_gaussians(X, mu, chol) + np.log(w), axis=1)


def sigma_points(mu: np.ndarray, cov: np.ndarray, m: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Unscented-transform points of each N(mu_j, cov_j) (spec 4.2; the paper's eq. 8 text, kappa = max(0, m - d)).

    Returns (points (M, 2d+1, d), weights (2d+1,)); the weights sum to 1 and the
    points reproduce each Gaussian's mean and covariance exactly.
    """
    M, d = mu.shape
    kappa = max(0.0, float(m - d))
    lam, U = np.linalg.eigh(cov)
    scale = np.sqrt((d + kappa) * np.clip(lam, 0.0, None))  # (M, d)
    axes = np.swapaxes(U, -1, -2) * scale[:, :, None]  # (M, d, d): row k = scaled k-th eigenvector
    points = np.concatenate([mu[:, None, :], mu[:, None, :] + axes, mu[:, None, :] - axes], axis=1)
    weights = np.full(2 * d + 1, 1.0 / (2.0 * (d + kappa)))
    weights[0] = kappa / (d + kappa)
    return points, weights


def sigma_mahalanobis2(d: int, m: int = 3) -> np.ndarray:
    """The squared Mahalanobis distance of each of :func:`sigma_points`' points from its Gaussian: 0, then d + kappa."""
    out = np.full(2 * d + 1, d + max(0.0, float(m - d)))
    out[0] = 0.0
    return out
