"""One class's online KDE: its sample model, detailed models, kernel and compression trigger (spec 1, 2, 4.1).

The sample model is (w, mu, cov), cov = 0 for a Dirac (a raw observation);
each component j keeps a detailed model of one or two Gaussians
(det_w[j, 1] = 0 for one), whose moment match is component j. The KDE is the
sample model convolved with N(0, H): covariances cov_j + H.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from hlm.kde._gaussians import (
    cholesky,
    log_peaks,
    moment_match,
    precision_factors,
    quadratic_features,
    sigma_mahalanobis2,
    sigma_points,
    split_principal,
)


class Quadrature(NamedTuple):
    """Points of a class's KDE components for odKDE's cost: rows (M * n, d), their weights within a component
    (n,), their ``gaussians.quadratic_features`` and log w_j N(x; mu_j, cov_j + H) at each point x of component j."""

    points: np.ndarray
    weights: np.ndarray
    features: np.ndarray
    log_own: np.ndarray


@dataclass
class ClassKDE:
    w: np.ndarray  # (M,)
    mu: np.ndarray  # (M, d)
    cov: np.ndarray  # (M, d, d), of the sample model (without H)
    det_w: np.ndarray  # (M, 2) detailed-model weights (relative, sum 1)
    det_mu: np.ndarray  # (M, 2, d)
    det_cov: np.ndarray  # (M, 2, d, d)
    n: float  # effective number of observations
    n_thr: float  # compress when M > n_thr (spec 4.1)
    H: np.ndarray = field(default=None)  # (d, d) kernel covariance
    _chol: np.ndarray | None = None
    _factors: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    _quadrature: dict[str, Quadrature] = field(default_factory=dict)
    _moments: tuple[float, np.ndarray, np.ndarray] | None = None

    @classmethod
    def empty(cls, d: int) -> ClassKDE:
        z = np.zeros
        return cls(z(0), z((0, d)), z((0, d, d)), z((0, 2)), z((0, 2, d)), z((0, 2, d, d)), 0.0,
                   min(15.0, (d * d + 3 * d) / 2 + 1), np.eye(d))

    @property
    def n_components(self) -> int:
        return self.w.shape[0]

    def add(self, X: np.ndarray, forgetting: float) -> None:
        """Add the rows of X as Diracs (spec 2): N <- f N + n, old weights * f N_old / N, new ones 1 / N."""
        n_new, d = X.shape
        n_old = forgetting * self.n
        self.n = n_old + n_new
        z = np.zeros
        det_w = z((n_new, 2))
        det_w[:, 0] = 1.0
        self._set(np.concatenate([self.w * (n_old / self.n), np.full(n_new, 1.0 / self.n)]),
                  np.concatenate([self.mu, X]), np.concatenate([self.cov, z((n_new, d, d))]),
                  np.concatenate([self.det_w, det_w]), np.concatenate([self.det_mu, np.stack([X, X], axis=1)]),
                  np.concatenate([self.det_cov, z((n_new, 2, d, d))]))

    def _set(self, w, mu, cov, det_w, det_mu, det_cov) -> None:
        self.w, self.mu, self.cov = w, mu, cov
        self.det_w, self.det_mu, self.det_cov = det_w, det_mu, det_cov
        self._chol = self._factors = self._moments = None
        self._quadrature = {}

    def set_kernel(self, H: np.ndarray) -> None:
        self.H, self._chol, self._factors, self._quadrature = H, None, None, {}

    @property
    def chol(self) -> np.ndarray:
        """Cholesky factors of the KDE covariances cov_j + H, cached until the model or H changes."""
        if self._chol is None:
            self._chol = cholesky(self.cov + self.H)
        return self._chol

    @property
    def factors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``gaussians.precision_factors`` of the KDE components, cached until the model or H changes."""
        if self._factors is None:
            self._factors = precision_factors(self.mu, self.chol)
        return self._factors

    @property
    def moments(self) -> tuple[float, np.ndarray, np.ndarray]:
        """The sample model's moment match (weight, mean, covariance), cached until the model changes."""
        if self._moments is None:
            self._moments = moment_match(self.w, self.mu, self.cov)
        return self._moments

    def quadrature(self, kind: str = "sigma") -> Quadrature:
        """The points at which odKDE's cost integrates over the KDE components (spec 5), cached until the model
        or H changes. "sigma": the unscented transform's points with non-zero weight; "means": each
        component's mean, weight 1 (Maggot's ``cost_points: means``)."""
        if kind not in ("sigma", "means"):
            raise ValueError(f"quadrature: kind must be 'sigma' or 'means', not {kind!r}")
        if kind not in self._quadrature:
            d = self.mu.shape[1]
            if kind == "sigma":
                P, W = sigma_points(self.mu, self.cov + self.H)
                keep = W > 0
                P, W, maha2 = P[:, keep].reshape(-1, d), W[keep], sigma_mahalanobis2(d)[keep]
            else:
                P, W, maha2 = self.mu, np.ones(1), np.zeros(1)
            own = (np.log(self.w) + log_peaks(self.chol))[:, None] - 0.5 * maha2[None, :]
            self._quadrature[kind] = Quadrature(P, W, quadratic_features(P), own.ravel())
        return self._quadrature[kind]

    def revitalise(self, split: np.ndarray) -> None:
        """Replace each component j with split[j] by its two detailed components, each of which gets the
        principal-axis split of itself as detailed model (a Dirac keeps itself; spec 4.4)."""
        keep = ~split
        parts = [(self.w[keep], self.mu[keep], self.cov[keep], self.det_w[keep], self.det_mu[keep],
                  self.det_cov[keep])]
        for j in np.flatnonzero(split):
            for k in range(2):
                mu_k, cov_k = self.det_mu[j, k], self.det_cov[j, k]
                if np.any(cov_k):
                    dm, dc = split_principal(mu_k, cov_k)
                    dw = np.array([0.5, 0.5])
                else:
                    dm, dc, dw = np.stack([mu_k, mu_k]), np.stack([cov_k, cov_k]), np.array([1.0, 0.0])
                parts.append((np.array([self.w[j] * self.det_w[j, k]]), mu_k[None], cov_k[None], dw[None],
                              dm[None], dc[None]))
        self._set(*(np.concatenate([p[i] for p in parts]) for i in range(6)))

    def merge(self, clusters: list[list[int]], halves: list[tuple[list[int], list[int]] | None]) -> None:
        """Replace the sample model by the moment matches of ``clusters`` of its components; a merged
        cluster's detailed model is the moment matches of its two ``halves`` (the tree node's children)."""
        out = [[] for _ in range(6)]
        for idx, half in zip(clusters, halves):
            if len(idx) == 1:
                j = idx[0]
                for i, a in enumerate((self.w, self.mu, self.cov, self.det_w, self.det_mu, self.det_cov)):
                    out[i].append(a[j])
                continue
            W, m, S = moment_match(self.w[idx], self.mu[idx], self.cov[idx])
            sides = [moment_match(self.w[h], self.mu[h], self.cov[h]) for h in half]
            out[0].append(W)
            out[1].append(m)
            out[2].append(S)
            out[3].append(np.array([sides[0][0], sides[1][0]]) / W)
            out[4].append(np.stack([sides[0][1], sides[1][1]]))
            out[5].append(np.stack([sides[0][2], sides[1][2]]))
        self._set(*(np.asarray(o, dtype=np.float64) for o in out))

    def detailed(self, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Component j's detailed model (weights, means, covs), without zero-weight entries."""
        k = self.det_w[j] > 0
        return self.det_w[j][k], self.det_mu[j][k], self.det_cov[j][k]
