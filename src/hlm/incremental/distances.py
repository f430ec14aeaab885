"""Distances looked up by object id: ``distances(rows, cols)`` (ids in, matrix out)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hlm.data.artifacts import take
from hlm.errors import DataError

#: ``distances(row_ids, col_ids) -> matrix``: how the incremental learners read distances
Distances = Callable[[np.ndarray, np.ndarray], np.ndarray]


class MatrixDistances:
    """``distances(rows, cols)`` from a full distance matrix whose rows/columns are ``ids``."""

    def __init__(self, D, ids: Sequence):
        self._D = D if isinstance(D, np.memmap) else np.asarray(D, dtype=np.float64)  # an artifact's: see take
        ids = np.asarray(ids).astype(str)
        if self._D.ndim != 2 or self._D.shape != (len(ids), len(ids)):
            raise DataError(f"MatrixDistances: need a {len(ids)} x {len(ids)} matrix, got {self._D.shape}")
        self._pos = {i: k for k, i in enumerate(ids)}
        if len(self._pos) != len(ids):
            raise DataError("MatrixDistances: duplicate ids")

    def __call__(self, rows, cols) -> np.ndarray:
        return take(self._D, self._positions(rows), self._positions(cols))

    def _positions(self, ids) -> np.ndarray:
        ids = np.asarray(ids).astype(str)
        missing = [i for i in ids if i not in self._pos]
        if missing:
            raise DataError(f"no distances for object(s) {', '.join(missing[:5])}"
                            f"{' ...' if len(missing) > 5 else ''} ({len(missing)} missing)")
        return np.fromiter((self._pos[i] for i in ids), dtype=np.intp, count=len(ids))
