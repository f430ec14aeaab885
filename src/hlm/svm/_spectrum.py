"""Making an indefinite similarity matrix a kernel, with the consistent test treatment.

Spec ``docs/compared-methods-spec.md`` section 6.6 (Chen et al. 2009; Sadowski et al. section I):

* clip:  K = U max(Lambda, 0) U^T, the nearest PSD matrix in Frobenius norm;
* flip:  K = U |Lambda| U^T;
* shift: K = Sym(S) + max(0, -lambda_min) I (only self-similarities change);
* square: K = S S^T (similarities as linear features).

clip and flip are linear maps of the similarity vectors, K = P Sym(S), and a
test vector s is mapped the same way, K_te = S_te P (spec 6.6 "consistent
test treatment"). shift leaves test rows unchanged; square maps s to S s.
Everything is estimated from the fit set only. The clip is written once,
``clip_eigenpairs``, for one matrix or a stack (KRI k-NN's local clips).
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
    """A fitted similarity-to-kernel transform (one of SPECTRUM_METHODS; spec 6.6, after Chen et al. 2009).

    ``kernel`` is the n x n training kernel; ``transform_test(S_te)`` maps an
    m x n test-to-training similarity matrix to the m x n test kernel (the consistent
    test treatment: K_te = S_te P for clip and flip, S_te for shift, S_te Sym(S)^T for square).
    Made by ``fit_spectrum`` (one matrix) or ``fit_spectra`` (a stack) from the fit set only;
    ``SVMSimilarityKernel.transform_`` holds the one of a fitted SVM. Frozen.

    Parameters
    ----------
    method : {"clip", "flip", "shift", "square"}
        The transform: clip U max(Lambda, 0) U^T (the nearest PSD matrix in Frobenius norm),
        flip U |Lambda| U^T, shift Sym(S) + max(0, -lambda_min) I, square Sym(S) Sym(S)^T
        (the similarities as linear features).
    kernel : ndarray of shape (n, n)
        The training kernel K: symmetric, PSD up to round-off.
    projector : ndarray of shape (n, n) or None
        P of clip (U diag(1[lambda > tau]) U^T) and flip (U sign(Lambda) U^T), with K = P Sym(S);
        None for shift and square.
    S_fit : ndarray of shape (n, n) or None
        Sym(S) for square (the test map); None otherwise.
    eigenvalues : ndarray of shape (n,)
        The eigenvalues of Sym(S), ascending. Eigenvalues within tau = ``EIG_RTOL`` * max|lambda|
        of 0 count as zero in clip and flip.

    Attributes
    ----------
    negative_eigenfraction : float
        Share of the spectrum's absolute mass on negative eigenvalues (a diagnostic; 0 for a PSD Sym(S)).

    Examples
    --------
    The transform of a fitted :class:`SVMSimilarityKernel`, on the indefinite similarity -||x - z||
    of three blobs (its trace is 0, so half of the absolute mass is negative):

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.svm import SpectrumTransform, SVMSimilarityKernel
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.5, (10, 2)) for c in ([0.0, 0.0], [4.0, 0.0], [0.0, 4.0])])
    >>> y = np.repeat([0, 1, 2], 10)
    >>> S = -cdist(X, X)
    >>> t = SVMSimilarityKernel(spectrum="clip").fit(S, y).transform_
    >>> isinstance(t, SpectrumTransform), t.method, t.kernel.shape
    (True, 'clip', (30, 30))
    >>> round(t.negative_eigenfraction, 2)
    0.5
    >>> mu = np.linalg.eigvalsh(t.kernel)  # the clipped kernel is PSD (up to round-off)
    >>> bool(mu.min() > -1e-9 * mu.max()), int((t.eigenvalues < 0).sum()) > 0
    (True, True)

    Training rows as test rows reproduce the training kernel (P S_{:,i} = K_{:,i}, spec 6.6):

    >>> print(np.allclose(t.transform_test(S), t.kernel))
    True
    """

    method: str
    kernel: np.ndarray
    projector: np.ndarray | None  # P (clip, flip); None for shift
    S_fit: np.ndarray | None  # Sym(S) for square
    eigenvalues: np.ndarray

    def transform_test(self, S_te: np.ndarray) -> np.ndarray:
        """The test kernel of test-to-training similarities (the consistent test treatment, spec 6.6).

        Parameters
        ----------
        S_te : ndarray of shape (m, n)
            Similarities of the test objects (rows) to the fit objects (columns).

        Returns
        -------
        K_te : ndarray of shape (m, n)
            S_te P (clip, flip), S_te Sym(S)^T (square) or S_te as float64 (shift).
        """
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


def eig_tolerance(mu: np.ndarray) -> np.ndarray:
    """tau = EIG_RTOL * max|mu| of a spectrum (the last axis; per matrix of a stack): eigenvalues in
    [-tau, tau] count as zero."""
    return EIG_RTOL * np.maximum(np.abs(mu).max(axis=-1, initial=0.0), np.finfo(float).tiny)


def clip_eigenpairs(mu: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The clip of A = U diag(mu) U^T (``eigh``'s output): the one implementation of spec 6.6's clip.

    For one matrix (mu: n, U: n x n) or a stack (mu: m x n, U: m x n x n). Eigenvalues at or
    below tau (``eig_tolerance``) are dropped. Returns (mu_clip, U_keep, K): the kept
    eigenvalues, their eigenvectors, and K = Sym(U_keep diag(mu_clip) U_keep^T); the projector
    is P = U_keep U_keep^T. ``eigh`` sorts the eigenvalues in ascending order, so the kept ones
    are the last of each matrix: only the last R columns are returned, R = the most kept in
    any matrix of a stack; in a matrix that keeps fewer, the others are zeroed (eigenvalue and
    eigenvector), which adds nothing to K or P. One matrix: exactly its kept eigenpairs.
    """
    keep = mu > eig_tolerance(mu)[..., None]
    first = mu.shape[-1] - int(keep.sum(axis=-1).max(initial=0))  # columns before it are dropped everywhere
    keep = keep[..., first:]
    mu_clip = np.where(keep, mu[..., first:], 0.0)
    U_keep = U[..., first:] * keep[..., None, :]
    if U_keep.ndim == 2:  # column-major, as ``U[:, keep]``: BLAS may round products of other layouts differently
        U_keep = np.asfortranarray(U_keep)
    K = (U_keep * mu_clip[..., None, :]) @ np.swapaxes(U_keep, -1, -2)
    return mu_clip, U_keep, (K + np.swapaxes(K, -1, -2)) / 2.0


def _from_eigh(method: str, A: np.ndarray, mu: np.ndarray, U: np.ndarray) -> SpectrumTransform:
    """The clip, flip or shift transform of Sym(S) = A = U diag(mu) U^T."""
    if method == "shift":
        K = A + max(0.0, -mu.min(initial=0.0)) * np.eye(len(A))
        return SpectrumTransform(method, K, None, None, mu)
    if method == "clip":
        _, U_keep, K = clip_eigenpairs(mu, U)
        P = U_keep @ U_keep.copy(order="F").T  # two arrays: gemm (one array and its transpose would be syrk)
        return SpectrumTransform(method, K, symmetrize(P), None, mu)
    tau = eig_tolerance(mu)  # flip
    sign = np.where(mu > tau, 1.0, np.where(mu < -tau, -1.0, 0.0))
    P = (U * sign) @ U.T
    K = (U * np.abs(mu)) @ U.T
    return SpectrumTransform(method, symmetrize(K), symmetrize(P), None, mu)
