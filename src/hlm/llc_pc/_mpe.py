"""Pairwise linear classifiers and the MPE criterion of LLC-PC (Chen, Lu & Boedihardjo, section 4;
spec ``docs/llc-pc-spec.md`` sections 2-3).

A pair (C_ij, C_kp) of subclasses of different classes gets one hyperplane f(x) = w'x + b, > 0 for
the pair's first subclass ("a"), on standardised features:

* ``svm_pair``: the soft-margin linear SVM by libsvm on the pair's linear kernel Xp Xp' (the binding
  ``hlm.svm._libsvm`` uses; equal to ``SVC(kernel="linear")``, tested), and its atomic error of
  MPE-SVM, eq. (3): the primal objective 1/2 ||w||^2 + C sum(slacks) at the optimum.
* ``lda_pair``: Fisher's direction w = (S_W + tau I)^-1 (m_a - m_b), threshold at the midpoint, and its
  atomic error of MPE-LDA, eq. (2): w'S_W w / w'S_B w, S_B = 1/2 Delta Delta'.

``pair_weights`` and ``mpe`` give eq. (1): Q = sum_U P_ij-kp E, P_ij-kp = P_ij P_kp / sum_U P_ij P_kp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.svm import _libsvm

from hlm.svm._libsvm import _FIT_ARGS

#: ridge of the LDA within-class scatter on standardised features (singleton and flat subclasses), spec 2
TAU = 1e-8


@dataclass
class PairModel:
    """One pair's classifier f(x) = coef'x + intercept (> 0: the pair's first subclass) and its errors."""

    coef: np.ndarray
    intercept: float
    #: E of the criterion (eq. 3 for "mpe_svm", eq. 2 for "mpe_lda")
    error: float
    #: the classifier's misclassified fraction on the pair's own objects (f < 0 for a, f > 0 for b)
    train_error: float
    #: False if libsvm stopped at max_iter (for either fit of the pair)
    converged: bool = True
    #: Platt's (A, B) on the classifier's training decision values: r = 1 / (1 + exp(A f + B)); None if not fitted
    platt: tuple[float, float] | None = None


def libsvm_fit(K: np.ndarray, y_enc: np.ndarray, *, C: float, tol: float, max_iter: int, cache_size: float):
    """libsvm's C-SVC on a precomputed kernel: ``hlm.svm._libsvm.fit_costs``'s call with ``tol`` set
    (``fit_costs`` fixes SVC's 1e-3). K C-contiguous float64, ``y_enc`` float64 codes 0/1, both present.
    Returns (support, dual coefficients y_i alpha_i with +1 for code 0, intercept, libsvm fit status)."""
    _libsvm.set_verbosity_wrap(0)  # as SVC before every fit; libsvm prints otherwise
    model = _libsvm.fit(K, y_enc, C=float(C), **dict(_FIT_ARGS, tol=float(tol), cache_size=float(cache_size),
                                                       max_iter=int(max_iter)),
                        class_weight=_ONES2, random_seed=0)
    return model[0], model[3][0], float(model[4][0]), int(model[7])


_ONES2 = np.ones(2)


def svm_pair(Xa: np.ndarray, Xb: np.ndarray, *, C: float, tol: float = 1e-3, max_iter: int = 10_000_000,
             cache_size: float = 200.0) -> tuple[np.ndarray, float, float, np.ndarray, bool]:
    """Linear SVM of a (+1) against b (-1): (w, b, E of eq. 3, decision values on [Xa; Xb], converged).

    w = sum_i y_i alpha_i x_i over the support vectors, b libsvm's (-rho), slacks
    zeta_o = max(0, 1 - y_o f(x_o)); E = 1/2 ||w||^2 + C sum_o zeta_o (exact up to libsvm's ``tol``).
    """
    Xp = np.concatenate([Xa, Xb])
    y_enc = np.zeros(len(Xp))
    y_enc[len(Xa):] = 1.0
    support, dual, b, status = libsvm_fit(Xp @ Xp.T, y_enc, C=C, tol=tol, max_iter=max_iter, cache_size=cache_size)
    w = dual @ Xp[support]
    f = Xp @ w + b
    slack = np.maximum(0.0, 1.0 - f[:len(Xa)]).sum() + np.maximum(0.0, 1.0 + f[len(Xa):]).sum()
    return w, b, 0.5 * float(w @ w) + float(C) * float(slack), f, status != 1


def scatter(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, covariance with ddof 0) of the rows of X."""
    m = X.mean(axis=0)
    Z = X - m
    return m, (Z.T @ Z) / len(X)


def lda_pair(Xa: np.ndarray, Xb: np.ndarray, tau: float = TAU) -> tuple[np.ndarray, float, float]:
    """Fisher LDA of a against b: (w, b, E of eq. 2); w = (S_W + tau I)^-1 Delta, b = -w'(m_a + m_b)/2.

    E = w'S_W w / w'S_B w with S_B = 1/2 Delta Delta' (= 2 / Delta'S_W^-1 Delta at tau = 0); +inf when
    the subclass means coincide (no Fisher separation).
    """
    ma, Sa = scatter(Xa)
    mb, Sb = scatter(Xb)
    SW = Sa + Sb
    delta = ma - mb
    w = np.linalg.solve(SW + tau * np.eye(len(delta)), delta)
    between = 0.5 * float(w @ delta) ** 2
    E = float(w @ SW @ w) / between if between > 0 else np.inf
    return w, -0.5 * float(w @ (ma + mb)), E


def train_error(f: np.ndarray, n_a: int) -> float:
    """Misclassified fraction of a pair's objects from their decision values (first ``n_a`` in a):
    an object of a is lost where f < 0, one of b where f > 0 (delta(z) = 1[z >= 0] on both sides)."""
    return float((f[:n_a] < 0).sum() + (f[n_a:] > 0).sum()) / len(f)


def platt_fit(f: np.ndarray, n_a: int) -> tuple[float, float]:
    """Platt's (A, B) on training decision values: Pr(a | a or b, f) = 1 / (1 + exp(A f + B))
    (scikit-learn's ``_sigmoid_calibration``, Platt's target smoothing)."""
    from sklearn.calibration import _sigmoid_calibration

    y = np.zeros(len(f))
    y[:n_a] = 1.0
    a, b = _sigmoid_calibration(f, y)
    return float(a), float(b)


def fit_pair(Xa: np.ndarray, Xb: np.ndarray, *, classifier: str, criterion: str, C: float, tol: float,
             max_iter: int, cache_size: float, platt: bool = False) -> PairModel:
    """The pair's classifier and its criterion error E; one fit when the criterion's model is the
    classifier (spec 4 "Reuse"), else both."""
    n_a = len(Xa)
    converged = True
    if classifier == "svm":
        w, b, E_svm, f, converged = svm_pair(Xa, Xb, C=C, tol=tol, max_iter=max_iter, cache_size=cache_size)
        E = E_svm if criterion == "mpe_svm" else lda_pair(Xa, Xb)[2]
    else:
        w, b, E = lda_pair(Xa, Xb)
        f = np.concatenate([Xa, Xb]) @ w + b
        if criterion == "mpe_svm":
            _, _, E, _, converged = svm_pair(Xa, Xb, C=C, tol=tol, max_iter=max_iter, cache_size=cache_size)
    return PairModel(w, b, E, train_error(f, n_a), converged, platt_fit(f, n_a) if platt else None)


# ---------------------------------------------------------------- eq. (1)
def normaliser(class_sizes) -> float:
    """sum over ordered pairs of U of P_ij P_kp = 1 - sum_i P_i^2: the same for any subclasses (spec 3)."""
    P = np.asarray(class_sizes, dtype=np.float64)
    P = P / P.sum()
    return 1.0 - float(P @ P)


def pair_weights(size_a, size_b, n_fit: int, class_sizes) -> np.ndarray:
    """P_ij-kp of eq. (1) per unordered pair of U (sizes of its two subclasses): 2 P_ij P_kp / (1 - sum_i
    P_i^2), which sums to 1 over the unordered pairs, as P_ij-kp does over the ordered ones."""
    return 2.0 * (np.asarray(size_a, dtype=np.float64) / n_fit) * (np.asarray(size_b, dtype=np.float64) / n_fit) \
        / normaliser(class_sizes)


def cross_pairs(sub_class: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices (a, b) of the unordered pairs of U among subclasses with classes ``sub_class``: every
    a < b of different classes, in lexicographic order."""
    a, b = np.triu_indices(len(sub_class), k=1)
    keep = sub_class[a] != sub_class[b]
    return a[keep], b[keep]


def mpe(X: np.ndarray, y_idx: np.ndarray, subclass: np.ndarray, *, criterion: str = "mpe_svm", C: float = 100.0,
        tol: float = 1e-3, max_iter: int = 10_000_000, cache_size: float = 200.0) -> tuple[float, np.ndarray]:
    """Q of eq. (1) with E of eq. (3) ("mpe_svm") or eq. (2) ("mpe_lda") for a labelling of the objects of
    X (rows, already standardised) into subclasses (``subclass``: any labels, each within one class).
    Returns (Q, E per unordered pair of ``cross_pairs`` over the sorted subclass labels)."""
    labels, sub = np.unique(subclass, return_inverse=True)
    sub_class = np.array([y_idx[sub == s][0] for s in range(len(labels))])
    if any(len(np.unique(y_idx[sub == s])) > 1 for s in range(len(labels))):
        raise ValueError("mpe: a subclass holds objects of two classes")
    a, b = cross_pairs(sub_class)
    E = np.empty(len(a))
    for p, (s, t) in enumerate(zip(a, b)):
        Xa, Xb = np.ascontiguousarray(X[sub == s]), np.ascontiguousarray(X[sub == t])
        E[p] = (svm_pair(Xa, Xb, C=C, tol=tol, max_iter=max_iter, cache_size=cache_size)[2]
                if criterion == "mpe_svm" else lda_pair(Xa, Xb)[2])
    sizes = np.bincount(sub)
    weights = pair_weights(sizes[a], sizes[b], len(y_idx), np.bincount(y_idx))
    return float(weights @ E), E
