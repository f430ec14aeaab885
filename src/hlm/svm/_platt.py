"""Platt scaling of pairwise decision values, as libsvm does it (for SVMs without libsvm: P-SVM).

``sigmoid_train`` is libsvm's ``sigmoid_train`` (Platt 2000, with the Newton
method and line search of Lin, Lin & Weng 2007, "A note on Platt's
probabilistic outputs for support vector machines"): P(first | f) =
1 / (1 + exp(A f + B)), fitted to regularised targets (N+ + 1) / (N+ + 2) and
1 / (N- + 2). ``pair_proba`` couples the pairs' probabilities into class
probabilities as libsvm's ``svm_predict_probability``: two classes directly,
more by Wu, Lin & Weng's second method (``hlm.svm._coupling.couple``).
"""

from __future__ import annotations

import numpy as np

from hlm.svm._coupling import couple, pair_probabilities

#: libsvm's constants of ``sigmoid_train``
MAX_ITER = 100
MIN_STEP = 1e-10
SIGMA = 1e-12
GRAD_TOL = 1e-5


def _objective(f: np.ndarray, t: np.ndarray, A: float, B: float) -> float:
    """sum_i the cross-entropy of target t_i and 1 / (1 + exp(A f_i + B)), stably."""
    z = f * A + B
    return float(np.sum(np.where(z >= 0, t * z + np.log1p(np.exp(-np.abs(z))),
                                 (t - 1.0) * z + np.log1p(np.exp(-np.abs(z))))))


def sigmoid_train(f, positive) -> tuple[float, float]:
    """(A, B) of P(positive | f) = 1 / (1 + exp(A f + B)) fitted to decision values ``f`` with labels
    ``positive`` (bool), libsvm's algorithm and constants. Without objects, or of one side only, the
    start (0, log((N- + 1) / (N+ + 1))) is returned after the same iterations (a constant probability)."""
    f = np.asarray(f, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    t = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    fval = _objective(f, t, A, B)
    for _ in range(MAX_ITER):
        z = f * A + B
        p = np.where(z >= 0, np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))), 1.0 / (1.0 + np.exp(-np.abs(z))))
        q = 1.0 - p
        d2 = p * q
        h11, h22, h21 = SIGMA + np.sum(f * f * d2), SIGMA + np.sum(d2), np.sum(f * d2)
        d1 = t - p
        g1, g2 = np.sum(f * d1), np.sum(d1)
        if abs(g1) < GRAD_TOL and abs(g2) < GRAD_TOL:
            break
        det = h11 * h22 - h21 * h21
        dA, dB = -(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= MIN_STEP:
            new_f = _objective(f, t, A + step * dA, B + step * dB)
            if new_f < fval + 1e-4 * step * gd:
                A, B, fval = A + step * dA, B + step * dB, new_f
                break
            step /= 2.0
        if step < MIN_STEP:
            break  # line search failed: keep the last point (libsvm says so and stops)
    return float(A), float(B)


def pair_proba(F: np.ndarray, platt: np.ndarray, first: np.ndarray, second: np.ndarray, n_classes: int) -> np.ndarray:
    """Class probabilities (objects x classes) from pairwise decision values ``F`` (objects x pairs; f > 0
    favours ``first``) and each pair's (A, B) in ``platt`` (pairs x 2), as libsvm couples them."""
    r = pair_probabilities(np.asarray(F, dtype=np.float64), np.asarray(platt, dtype=np.float64))
    if n_classes == 2:
        P = np.empty((r.shape[0], 2))
        P[:, first[0]], P[:, second[0]] = r[:, 0], 1.0 - r[:, 0]
        return P
    return couple(r, np.asarray(first), np.asarray(second), n_classes)
