"""Normalisation of P-SVM's data matrix (spec ``docs/compared-methods-spec.md`` 6.9 "Normalisation").

The columns (training objects) of K = S_fit are centred over the rows and
scaled to unit Euclidean norm, K~; near-constant columns are dropped; test rows
are mapped with the fit-set statistics [V: implementation].
"""

from __future__ import annotations

import numpy as np

#: [P] a column whose (population) std is at most this times max(1, max|column|) is dropped (spec 6.9).
CONST_COLUMN_RTOL = 1e-12


def normalise_columns(K: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre the columns of K over its m rows and divide by std * sqrt(m) (spec 6.9) [V: implementation].

    std is the population std (ddof=0), so kept columns get unit Euclidean norm
    exactly ([P]: the spec's "approx. unit norm" leaves ddof open). Near-constant
    columns are dropped ([P] threshold ``CONST_COLUMN_RTOL``).

    Returns ``(K_tilde, mean, scale, keep)``: ``keep`` is a boolean mask over
    the columns of K; ``mean`` and ``scale`` hold the statistics of the kept
    columns; ``K_tilde = (K[:, keep] - mean) / scale``.
    """
    K = np.asarray(K, dtype=np.float64)
    m = K.shape[0]
    mean = K.mean(axis=0)
    std = K.std(axis=0)
    magnitude = np.maximum(1.0, np.abs(K).max(axis=0, initial=0.0))
    keep = std > CONST_COLUMN_RTOL * magnitude
    mean, scale = mean[keep], std[keep] * np.sqrt(m)
    return (K[:, keep] - mean) / scale, mean, scale, keep


def apply_normalisation(K_te: np.ndarray, mean: np.ndarray, scale: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Normalise test rows with the **fit-set** column statistics (spec 6.9, spec 1 "fit set")."""
    return (np.asarray(K_te, dtype=np.float64)[:, keep] - mean) / scale
