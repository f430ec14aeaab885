"""Pairwise distances of raw objects in row blocks (the scalable distance stage).

The N x N matrix is cut into row blocks ``[i0, i1)`` of ``block_size`` rows.
Each block is computed on its own (a Snakemake job, cached as its own file, so
an interrupted run resumes from the finished blocks). For a symmetric distance
a block computes only the columns j >= i0 and leaves the pairs j < i undefined
(NaN): the upper triangle. ``assemble`` fills the lower triangle by symmetry.

A block looks its distance up by name in the table of distances
(:mod:`hlm.distances._registry`).

Examples
--------
Three DNA strings in blocks of two rows, then the whole matrix:

>>> from hlm.distances import assemble, block_ranges, compute_block
>>> dna = ["ACGTAC", "ACGTTC", "TCGTAA"]
>>> blocks = [(i0, i1, compute_block(dna, "hamming", i0, i1)) for i0, i1 in block_ranges(len(dna), 2)]
>>> print(assemble(blocks, len(dna)))
[[0. 1. 2.]
 [1. 0. 3.]
 [2. 3. 0.]]
"""

from __future__ import annotations

import numpy as np

from hlm.distances._registry import pairwise
from hlm.errors import DataError


def block_ranges(n: int, block_size: int) -> list[tuple[int, int]]:
    """[(i0, i1), ...] covering 0..n-1 in blocks of ``block_size`` rows (the last one may be shorter).

    Parameters
    ----------
    n : int
        The number of objects (rows of the N x N matrix).
    block_size : int
        Rows per block, at least 1 (the config's ``distance_block_size``, or an entry's ``block_size``).

    Returns
    -------
    list of (int, int)
        The half-open row ranges ``[i0, i1)``, in order; empty for ``n = 0``.

    Raises
    ------
    DataError
        If ``block_size < 1``.

    Examples
    --------
    >>> from hlm.distances import block_ranges
    >>> block_ranges(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    if block_size < 1:
        raise DataError(f"block_size must be a positive integer, got {block_size}")
    return [(i0, min(i0 + block_size, n)) for i0 in range(0, n, block_size)]


def compute_block(objects: list, distance: str, i0: int, i1: int, options: dict | None = None) -> np.ndarray:
    """Rows i0..i1-1 against every object: an (i1 - i0) x N array, NaN where j < i (upper triangle only).

    Parameters
    ----------
    objects : list
        The N objects (series, strings or feature vectors) of the distance's kind.
    distance : str
        The distance's name in :data:`hlm.distances.DISTANCES` (a symmetric one).
    i0, i1 : int
        The block's rows ``[i0, i1)``, with ``0 <= i0 < i1 <= N`` (one pair of :func:`block_ranges`).
    options : dict or None, default None
        The distance's options (e.g. ``{"window": 0.1}`` for ``dtw``).

    Returns
    -------
    ndarray of shape (i1 - i0, N), float64
        Row ``r`` holds the distances of object ``i0 + r`` to the objects ``j >= i0 + r``; the entries of
        ``j < i0 + r`` are NaN (:func:`assemble` fills them by symmetry).

    Raises
    ------
    DataError
        If the rows are out of range.

    Examples
    --------
    >>> from hlm.distances import compute_block
    >>> print(compute_block(["ACGTAC", "ACGTTC", "TCGTAA"], "hamming", 0, 2))
    [[ 0.  1.  2.]
     [nan  0.  3.]]
    """
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
    that reads each block file as it is asked for) is read once.

    Parameters
    ----------
    blocks : iterable of (int, int, ndarray)
        ``(i0, i1, block)`` triples, ``block`` of shape (i1 - i0, n) as :func:`compute_block` makes it; every
        row 0..n-1 in exactly one block, in any order.
    n : int
        The number of objects.
    where : str, default "distance blocks"
        Prefix of the error messages (e.g. the data set's name).

    Returns
    -------
    ndarray of shape (n, n), float64
        The symmetric matrix: the blocks' upper triangles, mirrored into the lower one.

    Raises
    ------
    DataError
        If a block has the wrong shape, a row is covered by no block or by several, or the upper triangle has
        a missing or non-finite value.

    Examples
    --------
    >>> from hlm.distances import assemble, compute_block
    >>> dna = ["ACGTAC", "ACGTTC", "TCGTAA"]
    >>> blocks = [(2, 3, compute_block(dna, "hamming", 2, 3)), (0, 2, compute_block(dna, "hamming", 0, 2))]
    >>> print(assemble(blocks, 3))
    [[0. 1. 2.]
     [1. 0. 3.]
     [2. 3. 0.]]
    >>> assemble(blocks[1:], 3)
    Traceback (most recent call last):
        ...
    hlm.errors.DataError: distance blocks: row 2 is covered by 0 blocks (expected 1)
    """
    from hlm.base._blocks import mirror_upper, row_blocks

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
