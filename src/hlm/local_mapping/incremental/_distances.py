"""Distances looked up by object id: ``distances(rows, cols)`` (ids in, matrix out)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hlm.datasets._artifacts import take
from hlm.errors import DataError

#: ``distances(row_ids, col_ids) -> matrix``: how the incremental learners read distances
Distances = Callable[[np.ndarray, np.ndarray], np.ndarray]


class MatrixDistances:
    """``distances(rows, cols)`` from a full distance matrix whose rows/columns are ``ids``.

    The look-up the incremental learners (paper section 4) read distances through: object ids in, the
    (len(rows), len(cols)) block of distances out. Any callable with that signature serves as well.

    Parameters
    ----------
    D : array-like of shape (n_objects, n_objects)
        The distances among all objects (a memory-mapped matrix of ``hlm.datasets`` is read in blocks).
    ids : sequence of length n_objects
        The id of each row/column (compared as strings; unique).

    Raises
    ------
    hlm.errors.DataError
        If ``D`` is not n_objects x n_objects or the ids repeat.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.local_mapping import MatrixDistances
    >>> dist = MatrixDistances(np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]]), ["p", "q", "r"])
    >>> dist(["p", "r"], ["q"])
    array([[1.],
           [3.]])
    >>> dist(["x"], ["p"])
    Traceback (most recent call last):
    ...
    hlm.errors.DataError: no distances for object(s) x (1 missing)
    """

    def __init__(self, D, ids: Sequence):
        self._D = D if isinstance(D, np.memmap) else np.asarray(D, dtype=np.float64)  # an artifact's: see take
        ids = np.asarray(ids).astype(str)
        if self._D.ndim != 2 or self._D.shape != (len(ids), len(ids)):
            raise DataError(f"MatrixDistances: need a {len(ids)} x {len(ids)} matrix, got {self._D.shape}")
        self._pos = {i: k for k, i in enumerate(ids)}
        if len(self._pos) != len(ids):
            raise DataError("MatrixDistances: duplicate ids")

    def __call__(self, rows, cols) -> np.ndarray:
        """The distances between the objects ``rows`` and ``cols`` (ids).

        Parameters
        ----------
        rows, cols : sequence
            Object ids (compared as strings).

        Returns
        -------
        ndarray of shape (len(rows), len(cols))
            The distances, as float64.

        Raises
        ------
        hlm.errors.DataError
            If an id has no row/column.
        """
        return take(self._D, self._positions(rows), self._positions(cols))

    def _positions(self, ids) -> np.ndarray:
        ids = np.asarray(ids).astype(str)
        missing = [i for i in ids if i not in self._pos]
        if missing:
            raise DataError(f"no distances for object(s) {', '.join(missing[:5])}"
                            f"{' ...' if len(missing) > 5 else ''} ({len(missing)} missing)")
        return np.fromiter((self._pos[i] for i in ids), dtype=np.intp, count=len(ids))
