"""Pairwise coupling: class probabilities from pairwise ones by Wu, Lin & Weng's second method.

As libsvm's ``svm_predict_probability``: pairwise probabilities r_st = Pr(s | s or t, x) (a sigmoid of the
decision value, or Platt's), clipped to [MIN_PROB, 1 - MIN_PROB], are coupled into p = argmin p'Q p subject
to 1'p = 1. LLC-PC couples its subclass pairs the same way, over its pair set U (``hlm.llc_pc``).
"""

from __future__ import annotations

import numpy as np

#: libsvm's clip of pairwise probabilities before coupling (min_prob of svm_predict_probability)
MIN_PROB = 1e-7
#: objects per batch of KKT systems in ``couple`` (memory: rows x (K+1)^2 floats)
COUPLE_ROWS = 1024


def incidence(index: np.ndarray, n_sub: int) -> np.ndarray:
    """(pairs x subclasses) 0/1 matrix: row p has a 1 at column index[p]."""
    A = np.zeros((len(index), n_sub))
    A[np.arange(len(index)), index] = 1.0
    return A


def pair_probabilities(f: np.ndarray, platt: np.ndarray | None = None) -> np.ndarray:
    """r_ij-kp: the sigmoid 1/(1 + e^-f) (r > 1/2 iff f > 0), or Platt's 1/(1 + e^(A f + B)) per pair
    (``platt``: pairs x 2); clipped to [MIN_PROB, 1 - MIN_PROB] as libsvm does before coupling."""
    z = -f if platt is None else platt[:, 0] * f + platt[:, 1]
    return np.clip(0.5 * (1.0 - np.tanh(0.5 * z)), MIN_PROB, 1.0 - MIN_PROB)


def coupling_matrix(r: np.ndarray, first: np.ndarray, second: np.ndarray, n_sub: int) -> np.ndarray:
    """Q of min_p p'Q p = sum_U (r_ts p_s - r_st p_t)^2 per object: Q_ss = sum_t r_ts^2, Q_st = -r_ts r_st
    (r: objects x pairs, r_st = Pr(s | s or t) for s = first, t = second)."""
    m = r.shape[0]
    Q = np.zeros((m, n_sub, n_sub))
    off = -r * (1.0 - r)
    Q[:, first, second] = off
    Q[:, second, first] = off
    diag = ((1.0 - r) ** 2) @ incidence(first, n_sub) + (r ** 2) @ incidence(second, n_sub)
    Q[:, np.arange(n_sub), np.arange(n_sub)] = diag
    return Q


def couple(r: np.ndarray, first: np.ndarray, second: np.ndarray, n_sub: int) -> np.ndarray:
    """Subclass probabilities p (objects x subclasses) from pairwise r by Wu-Lin-Weng's second method
    restricted to U: argmin p'Q p subject to 1'p = 1, from its KKT system [[Q, 1], [1', 0]] [p; b] = [0; 1]
    (regular: U's graph is complete multipartite, hence connected, and 0 < r < 1)."""
    out = np.empty((r.shape[0], n_sub))
    rhs = np.zeros(n_sub + 1)
    rhs[-1] = 1.0
    for start in range(0, r.shape[0], COUPLE_ROWS):
        rows = slice(start, start + COUPLE_ROWS)
        Q = coupling_matrix(r[rows], first, second, n_sub)
        M = np.ones((Q.shape[0], n_sub + 1, n_sub + 1))
        M[:, :n_sub, :n_sub] = Q
        M[:, -1, -1] = 0.0
        out[rows] = np.linalg.solve(M, np.broadcast_to(rhs, (Q.shape[0], n_sub + 1))[..., None])[:, :n_sub, 0]
    return out
