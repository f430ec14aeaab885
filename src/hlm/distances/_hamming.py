"""The Hamming distance between sequences of one length (a distance of kind sequences)."""

from __future__ import annotations

import numpy as np

from hlm.errors import DataError


def hamming(rows: list[str], cols: list[str], where: str = "hamming") -> np.ndarray:
    """Number of differing positions; all sequences must have one length.

    Parameters
    ----------
    rows, cols : list of str
        The sequences, all of one length (ASCII letters, e.g. DNA strings).
    where : str, default "hamming"
        Prefix of the error message (e.g. the data set's name).

    Returns
    -------
    ndarray of shape (len(rows), len(cols)), float64
        The number of positions at which each row sequence differs from each column sequence.

    Raises
    ------
    DataError
        If the sequences do not all have one length.

    Examples
    --------
    >>> from hlm.distances import hamming
    >>> dna = ["ACGTAC", "ACGTTC", "TCGTAA"]
    >>> print(hamming(dna, dna))
    [[0. 1. 2.]
     [1. 0. 3.]
     [2. 3. 0.]]
    >>> hamming(["ACGT"], ["ACG"])
    Traceback (most recent call last):
        ...
    hlm.errors.DataError: hamming: the Hamming distance needs sequences of one length, got lengths [3, 4]
    """
    lengths = {len(s) for s in (*rows, *cols)}
    if len(lengths) != 1:
        raise DataError(f"{where}: the Hamming distance needs sequences of one length, got lengths "
                        f"{sorted(lengths)[:5]}")
    A = np.frombuffer("".join(rows).encode(), dtype=np.uint8).reshape(len(rows), -1)
    B = np.frombuffer("".join(cols).encode(), dtype=np.uint8).reshape(len(cols), -1)
    return (A[:, None, :] != B[None, :, :]).sum(axis=2).astype(np.float64)
