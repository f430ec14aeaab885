"""SciPy's distances between feature vectors (``scipy.spatial.distance.cdist``): cityblock and cosine."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist


def cdist_pairwise(rows, cols, metric: str) -> np.ndarray:
    """``cdist`` of the float64 rows and columns under ``metric``."""
    return cdist(np.asarray(rows, dtype=np.float64), np.asarray(cols, dtype=np.float64), metric=metric)
