"""Square matrices by blocks of rows: no N x N temporaries (at Letter's size each is 3.2 GB)."""

from __future__ import annotations

import numpy as np


def row_blocks(n_rows: int, n_cols: int, size: int = 1 << 22):
    """Slices of consecutive rows of an n_rows x n_cols matrix, about ``size`` entries each."""
    step = max(1, size // max(n_cols, 1))
    return [slice(lo, min(lo + step, n_rows)) for lo in range(0, n_rows, step)]


def mirror_upper(M: np.ndarray) -> np.ndarray:
    """In place: the lower triangle of the square ``M`` becomes the mirror of its upper one (copies, so the
    result is exactly symmetric), by blocks of rows: temporaries of about one block (``row_blocks``' size).
    Returns ``M``."""
    n = M.shape[0]
    for rows in row_blocks(n, n):
        i0, i1 = rows.start, rows.stop
        M[i0:i1, :i0] = M[:i0, i0:i1].T
        square = M[i0:i1, i0:i1]
        lower = np.tril_indices(i1 - i0, -1)
        square[lower] = square.T[lower]
    return M


def nonfinite(M: np.ndarray) -> tuple[int, int, int] | None:
    """(count, row, column) of the NaN/inf entries of a 2-D array (first one, 0-based), or None; by blocks of
    rows (no N x N mask)."""
    if M.ndim != 2:
        raise ValueError(f"nonfinite takes a 2-D array, not {M.ndim}-D")
    count, first = 0, None
    for rows in row_blocks(M.shape[0], M.shape[1]):
        bad = ~np.isfinite(M[rows])
        found = int(np.count_nonzero(bad))
        if found and first is None:
            i, j = np.argwhere(bad)[0]
            first = (rows.start + int(i), int(j))
        count += found
    return None if first is None else (count, *first)
