"""Pairwise alignment scores between sequences (a similarity of kind sequences).

Alignment scores by Biopython's ``PairwiseAligner``: by default the global scheme ``ALIGNMENT_SCHEME``
(match +1, mismatch -1, gap open -2, gap extend -1); an entry's ``distance_params`` may set ``mode``
(``global``, Needleman-Wunsch, or ``local``, Smith-Waterman), a ``substitution_matrix`` by any name
Biopython knows (``BLOSUM62``, ``PAM250``, ``NUC.4.4``, ...), which replaces the match and mismatch
scores, and the gap scores. A score is a similarity, so the pipeline converts it like any similarity
(paper section 5.2).
"""

from __future__ import annotations

import numpy as np

#: global alignment scoring (documented in the registry and README); symmetric, so the
#: score matrix is symmetric and only its upper triangle is computed
ALIGNMENT_SCHEME = {"mode": "global", "match_score": 1.0, "mismatch_score": -1.0,
                    "open_gap_score": -2.0, "extend_gap_score": -1.0}


def aligner(**options):
    """Biopython's ``PairwiseAligner`` with ``ALIGNMENT_SCHEME`` updated by ``options`` (a
    ``substitution_matrix`` given by name replaces the match and mismatch scores)."""
    from Bio.Align import PairwiseAligner, substitution_matrices

    from hlm.errors import DataError

    scheme = {**ALIGNMENT_SCHEME, **options}
    name = scheme.pop("substitution_matrix", None)
    if name is not None:
        known = substitution_matrices.load()  # the names Biopython ships (not a path: nothing untracked)
        if name not in known:
            raise DataError(f"no substitution matrix {name!r} in Biopython; known: {', '.join(known)}")
        scheme["substitution_matrix"] = substitution_matrices.load(name)
        scheme.pop("match_score"), scheme.pop("mismatch_score")
    if scheme["mode"] not in ("global", "local"):
        raise DataError(f"alignment mode must be global or local, got {scheme['mode']!r}")
    return PairwiseAligner(**scheme)


def alignment_scores(rows: list[str], cols: list[str], *, col_offset: int | None = None, row_offset: int = 0,
                     symmetric: bool = False, **options) -> np.ndarray:
    """Alignment scores of every (row, column) pair (``ALIGNMENT_SCHEME``, or ``options``).

    Biopython's ``PairwiseAligner``, global mode: match +1, mismatch -1, gap open -2, gap extend -1. A score
    is a similarity, converted like any similarity (paper section 5.2).

    With ``symmetric=True`` the rows are objects ``row_offset + r`` and the columns
    ``col_offset + c`` of one symmetric problem: pairs with column < row are left
    NaN (the lower triangle, filled by symmetry when the blocks are assembled).

    Parameters
    ----------
    rows, cols : list of str
        The sequences (e.g. DNA strings).
    col_offset : int or None, default None
        With ``symmetric``: the index of ``cols[0]`` in the whole problem (None: 0).
    row_offset : int, default 0
        With ``symmetric``: the index of ``rows[0]`` in the whole problem.
    symmetric : bool, default False
        Compute only the pairs with column index >= row index; the others are NaN.
    **options
        ``mode``, ``substitution_matrix`` (a name), ``match_score``, ``mismatch_score``, ``open_gap_score``,
        ``extend_gap_score`` (module docstring).

    Returns
    -------
    ndarray of shape (len(rows), len(cols)), float64
        The alignment score of every (row, column) pair (a similarity: higher is closer); NaN below the
        diagonal with ``symmetric``.

    Examples
    --------
    >>> from hlm.distances import alignment_scores
    >>> dna = ["ACGTAC", "ACGTTC", "TCGTAA"]
    >>> print(alignment_scores(dna, dna))
    [[6. 4. 2.]
     [4. 6. 0.]
     [2. 0. 6.]]
    >>> print(alignment_scores(["ACGT"], ["AGT", "ACGT"]))  # one gap (-2) and three matches
    [[1. 4.]]
    >>> print(alignment_scores(dna[1:], dna, row_offset=1, symmetric=True))  # rows 1 and 2: upper triangle
    [[nan  6.  0.]
     [nan nan  6.]]

    Durbin et al.'s example (Biological Sequence Analysis, 1998, section 2.3), BLOSUM50 with a linear gap
    of -8: the global score 1 and the local one 28 (AWGHE against AW-HE):

    >>> pair = (["HEAGAWGHEE"], ["PAWHEAE"])
    >>> blosum50 = {"substitution_matrix": "BLOSUM50", "open_gap_score": -8, "extend_gap_score": -8}
    >>> print(alignment_scores(*pair, **blosum50), alignment_scores(*pair, mode="local", **blosum50))
    [[1.]] [[28.]]
    """
    a = aligner(**options)
    matrix = a.substitution_matrix
    if matrix is not None:  # letters the matrix lacks: one line naming the sequence, not Biopython's error
        letters = set(matrix.alphabet)
        for s in (*rows, *cols):
            missing = sorted(set(s) - letters)
            if missing:
                from hlm.errors import DataError

                raise DataError(f"sequence {s[:20]!r}{'...' if len(s) > 20 else ''} has letter(s) "
                                f"{''.join(missing)} that the substitution matrix lacks")
    out = np.full((len(rows), len(cols)), np.nan)
    for r, s in enumerate(rows):
        for c, t in enumerate(cols):
            if symmetric and (col_offset or 0) + c < row_offset + r:
                continue
            out[r, c] = a.score(s, t)
    return out
