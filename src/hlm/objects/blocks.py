"""Pairwise distances of raw objects in row blocks (the scalable distance stage).

The N x N matrix is cut into row blocks ``[i0, i1)`` of ``block_size`` rows.
Each block is computed on its own (a Snakemake job, cached as its own file, so
an interrupted run resumes from the finished blocks). For a symmetric distance
a block computes only the columns j >= i0 and leaves the pairs j < i undefined
(NaN): the upper triangle. ``assemble`` fills the lower triangle by symmetry.

Distances: ``dtw`` (series; option ``window``), ``alignment`` (sequences; a
similarity, the global alignment score), ``hamming`` (sequences), and for
vectors ``euclidean``, ``cityblock``, ``cosine`` (SciPy ``cdist``).
"""

from __future__ import annotations

import numpy as np

from hlm.errors import DataError

SERIES_DISTANCES = ("dtw",)
SEQUENCE_DISTANCES = ("alignment", "hamming")
VECTOR_DISTANCES = ("euclidean", "cityblock", "cosine")
#: distances whose values are similarities (converted afterwards, paper section 5.2)
SIMILARITIES = ("alignment",)


def block_ranges(n: int, block_size: int) -> list[tuple[int, int]]:
    """[(i0, i1), ...] covering 0..n-1 in blocks of ``block_size`` rows."""
    if block_size < 1:
        raise DataError(f"block_size must be a positive integer, got {block_size}")
    return [(i0, min(i0 + block_size, n)) for i0 in range(0, n, block_size)]


def pairwise(rows, cols, distance: str, options: dict | None = None) -> np.ndarray:
    """The distance (or, for ``alignment``, the similarity) of every row object to every column object."""
    options = options or {}
    if distance == "dtw":
        from hlm.objects.series import dtw

        return dtw(list(rows), list(cols), window=options.get("window"))
    if distance == "alignment":
        from hlm.objects.sequences import alignment_scores

        return alignment_scores(list(rows), list(cols))
    if distance == "hamming":
        from hlm.objects.sequences import hamming

        return hamming(list(rows), list(cols))
    if distance in VECTOR_DISTANCES:
        from scipy.spatial.distance import cdist

        return cdist(np.asarray(rows, dtype=np.float64), np.asarray(cols, dtype=np.float64), metric=distance)
    raise DataError(f"unknown distance {distance!r}; expected one of "
                    f"{', '.join(SERIES_DISTANCES + SEQUENCE_DISTANCES + VECTOR_DISTANCES)}")


def compute_block(objects: list, distance: str, i0: int, i1: int, options: dict | None = None) -> np.ndarray:
    """Rows i0..i1-1 against every object: an (i1 - i0) x N array, NaN where j < i (upper triangle only)."""
    n = len(objects)
    if not 0 <= i0 < i1 <= n:
        raise DataError(f"block rows {i0}..{i1} out of range for {n} objects")
    out = np.full((i1 - i0, n), np.nan)
    if i1 < n:  # the rectangle right of the block's diagonal square
        out[:, i1:] = pairwise(objects[i0:i1], objects[i1:], distance, options)
    for r in range(i0, i1):  # the square's upper triangle, row by row (the rest follows by symmetry)
        out[r - i0, r:i1] = pairwise(objects[r:r + 1], objects[r:i1], distance, options)[0]
    return out


def assemble(blocks, n: int, where: str = "distance blocks") -> np.ndarray:
    """The full symmetric matrix from upper-triangle row blocks ``(i0, i1, block)``, every row covered exactly
    once, built in place: the matrix is the only N x N array made, and ``blocks`` (any iterable, e.g. one
    that reads each block file as it is asked for) is read once."""
    from hlm.data.conversions import mirror_upper, row_blocks

    M = np.full((n, n), np.nan)
    covered = np.zeros(n, dtype=int)
    for i0, i1, block in blocks:
        if block.shape != (i1 - i0, n):
            raise DataError(f"{where}: block {i0}..{i1} has shape {block.shape}, expected {(i1 - i0, n)}")
        M[i0:i1] = block
        covered[i0:i1] += 1
    if (covered != 1).any():
        bad = int(np.flatnonzero(covered != 1)[0])
        raise DataError(f"{where}: row {bad} is covered by {covered[bad]} blocks (expected 1)")
    parts = row_blocks(n, n)
    for rows in parts:  # the upper triangle (columns j >= i of row i) must be there
        if not np.isfinite(np.triu(M[rows, rows.start:])).all():
            raise DataError(f"{where}: missing or non-finite values in the upper triangle")
    return mirror_upper(M)  # the lower triangle by symmetry
