"""Making an indefinite similarity matrix a kernel, with the consistent test treatment.

Spec ``compared-methods.md`` section 6.6 (Chen et al. 2009; Sadowski et al. section I):

* clip:  K = U max(Lambda, 0) U^T, the nearest PSD matrix in Frobenius norm;
* flip:  K = U |Lambda| U^T;
* shift: K = Sym(S) + max(0, -lambda_min) I (only self-similarities change);
* square: K = S S^T (similarities as linear features).

clip and flip are linear maps of the similarity vectors, K = P Sym(S), and a
test vector s is mapped the same way, K_te = S_te P (spec 6.6 "consistent
test treatment"). shift leaves test rows unchanged; square maps s to S s.
Everything is estimated from the fit set only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SPECTRUM_METHODS = ("clip", "flip", "shift", "square")

#: Relative eigenvalue tolerance: eigenvalues at or below tau = EIG_RTOL * max|mu| count as zero.
EIG_RTOL = 1e-12


def symmetrize(S: np.ndarray) -> np.ndarray:
    """Sym(S) = (S + S^T) / 2."""
    return (S + S.T) / 2.0


@dataclass(frozen=True)
class SpectrumTransform:
    """A fitted similarity-to-kernel transform (one of SPECTRUM_METHODS).

    ``kernel`` is the n x n training kernel; ``transform_test(S_te)`` maps an
    m x n test-to-training similarity matrix to the m x n test kernel.
    """

    method: str
    kernel: np.ndarray
    projector: np.ndarray | None  # P (clip, flip); None for shift
    S_fit: np.ndarray | None  # Sym(S) for square
    eigenvalues: np.ndarray

    def transform_test(self, S_te: np.ndarray) -> np.ndarray:
        if self.method in ("clip", "flip"):
            return S_te @ self.projector  # P is symmetric: (P s)^T = s^T P
        if self.method == "square":
            return S_te @ self.S_fit.T
        return np.asarray(S_te, dtype=np.float64)  # shift

    @property
    def negative_eigenfraction(self) -> float:
        """Share of the spectrum's absolute mass on negative eigenvalues (a diagnostic)."""
        total = np.abs(self.eigenvalues).sum()
        return float(np.abs(self.eigenvalues[self.eigenvalues < 0]).sum() / total) if total > 0 else 0.0


def fit_spectrum(S: np.ndarray, method: str = "clip") -> SpectrumTransform:
    """Fit the transform of ``method`` on the fit-set similarity matrix S (spec 6.6)."""
    if method not in SPECTRUM_METHODS:
        raise ValueError(f"spectrum method must be one of {SPECTRUM_METHODS}, got {method!r}")
    A = symmetrize(np.asarray(S, dtype=np.float64))
    if method == "square":
        return SpectrumTransform(method, A @ A.T, None, A, np.linalg.eigvalsh(A))
    mu, U = np.linalg.eigh(A)
    return _from_eigh(method, A, mu, U)


def fit_spectra(S: np.ndarray, method: str = "clip") -> list[SpectrumTransform]:
    """``[fit_spectrum(S_i, method) for S_i in S]`` for a stack S of m n x n matrices, with one
    batched ``eigh`` (numpy runs the same LAPACK call on each matrix: equal bit for bit, tested).
    Not for "square"."""
    if method not in SPECTRUM_METHODS or method == "square":
        raise ValueError(f"fit_spectra: method must be clip, flip or shift, got {method!r}")
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 3 or S.shape[1] != S.shape[2]:
        raise ValueError(f"fit_spectra: expected a stack of square matrices, got shape {S.shape}")
    A = (S + S.transpose(0, 2, 1)) / 2.0  # symmetrize, matrix by matrix
    mu, U = np.linalg.eigh(A)
    return [_from_eigh(method, A[i], mu[i], U[i]) for i in range(len(A))]


def _from_eigh(method: str, A: np.ndarray, mu: np.ndarray, U: np.ndarray) -> SpectrumTransform:
    """The clip, flip or shift transform of Sym(S) = A = U diag(mu) U^T."""
    tau = EIG_RTOL * max(np.abs(mu).max(initial=0.0), np.finfo(float).tiny)
    if method == "shift":
        K = A + max(0.0, -mu.min(initial=0.0)) * np.eye(len(A))
        return SpectrumTransform(method, K, None, None, mu)
    if method == "clip":
        keep = mu > tau
        P = (U[:, keep]) @ U[:, keep].T  # two copies: gemm (one array and its transpose would be syrk)
        K = (U[:, keep] * mu[keep]) @ U[:, keep].T
    else:  # flip
        sign = np.where(mu > tau, 1.0, np.where(mu < -tau, -1.0, 0.0))
        P = (U * sign) @ U.T
        K = (U * np.abs(mu)) @ U.T
    K = symmetrize(K)
    return SpectrumTransform(method, K, symmetrize(P), None, mu)
