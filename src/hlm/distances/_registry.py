"""The distances by name: what each one takes, whether it is a similarity, and the function that computes it.

As aeon's ``distances`` package: one distance per module (``_dtw``, ``_alignment``, ``_hamming``,
``_euclidean``, ``_cdist``, ``_vdm``), and this table. Every function here has the signature
``f(rows, cols, **options) -> ndarray`` (rows x cols, float64). The distance stage's row blocks
(:mod:`hlm.distances._blocks`) and CLARA look a distance up by its name; a registry entry names it in its
``distance`` field.

Examples
--------
The table :data:`DISTANCES`, by name:

>>> from hlm.distances import DISTANCES
>>> list(DISTANCES)  # doctest: +NORMALIZE_WHITESPACE
['dtw', 'ddtw', 'wdtw', 'wddtw', 'lcss', 'erp', 'edr', 'msm', 'twe', 'adtw', 'shape_dtw',
 'alignment', 'hamming', 'euclidean', 'cityblock', 'cosine', 'vdm']
>>> DISTANCES["msm"].options
('window', 'independent', 'c', 'itakura_max_slope')
>>> DISTANCES["alignment"].kind, DISTANCES["alignment"].similarity
('sequences', True)
>>> DISTANCES["dtw"].options
('window',)
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

import numpy as np

from hlm.errors import DataError


@dataclass(frozen=True)
class Distance:
    """One distance of the table :data:`DISTANCES`: what it compares, whether it is a similarity, how to compute it.

    A frozen dataclass; its fields are the attributes below, given in that order or by keyword (``name``,
    ``kind`` and ``function`` are required). A registry entry names a distance in its ``distance`` field
    (docs/data.md).

    Attributes
    ----------
    name : str
        The distance's name, its key in :data:`DISTANCES` (e.g. ``"dtw"``).
    kind : str
        The registry kind of the objects it compares: ``"series"``, ``"sequences"``, ``"vectors"`` or
        ``"categorical"``.
    function : str or None
        ``"module:function"`` of ``f(rows, cols, **options) -> ndarray`` (rows x cols, float64). None: it needs
        the class labels (the VDM is built per fit set by :class:`hlm.distances.VDMDistances`).
    similarity : bool, default False
        Its values are similarities, converted to distances afterwards (paper section 5.2).
    options : tuple of str, default ()
        The options a registry entry may give it (e.g. DTW's ``window``).
    fixed : tuple of (str, object) pairs, default ()
        Options fixed by the table (e.g. SciPy's metric name), passed on every call.
    matrix : str or None, default None
        ``"module:function"`` of the whole N x N matrix of N objects, where one is faster than ``function``.

    Examples
    --------
    >>> from hlm.distances import get_distance
    >>> d = get_distance("hamming")
    >>> d.kind, d.similarity
    ('sequences', False)
    >>> print(d.pairwise(["ACGTAC", "ACGTTC"], ["ACGTAC", "ACGTTC", "TCGTAA"]))
    [[0. 1. 2.]
     [1. 0. 3.]]
    >>> print(get_distance("euclidean").full([[0, 0], [3, 0], [0, 4]]))
    [[0. 3. 4.]
     [3. 0. 5.]
     [4. 5. 0.]]
    """

    name: str
    #: the registry kind of the objects it compares
    kind: str
    #: "module:function" of ``f(rows, cols, **options)``; None: it needs the class labels (the VDM is built per
    #: fit set by :class:`hlm.distances.VDMDistances`)
    function: str | None
    #: its values are similarities (converted afterwards, paper section 5.2)
    similarity: bool = False
    #: the options a registry entry may give it (e.g. DTW's ``window``)
    options: tuple[str, ...] = ()
    #: options fixed by the table (e.g. SciPy's metric name)
    fixed: tuple[tuple[str, object], ...] = ()
    #: "module:function" of the whole N x N matrix of N objects, where one is faster than ``function``
    matrix: str | None = None

    def pairwise(self, rows, cols, options: dict | None = None) -> np.ndarray:
        """The distance (or similarity) of every row object to every column object.

        Parameters
        ----------
        rows, cols : sequence of objects
            Objects of this distance's ``kind``: series (1-D arrays), strings, or feature vectors (rows of a
            2-D array).
        options : dict or None, default None
            The distance's options (names in ``options``, e.g. ``{"window": 0.1}``); None: none.

        Returns
        -------
        ndarray of shape (len(rows), len(cols)), float64
            Entry ``[i, j]`` compares ``rows[i]`` with ``cols[j]``.

        Raises
        ------
        DataError
            For a distance that uses the class labels (``function`` None: the VDM), or an option the distance
            does not take.
        """
        if self.function is None:
            raise DataError(f"distance {self.name!r} uses the class labels: it is built per fit set "
                            "(hlm.distances.VDMDistances), not between objects alone")
        unknown = sorted(set(options or {}) - set(self.options))
        if unknown:
            takes = f"its options: {', '.join(self.options)}" if self.options else "it takes none"
            raise DataError(f"distance {self.name!r} has no option {unknown[0]!r} ({takes})")
        return _load(self.function)(rows, cols, **dict(self.fixed), **(options or {}))

    def full(self, X) -> np.ndarray:
        """The N x N matrix of the objects ``X`` (``matrix`` when the table names one, else ``pairwise(X, X)``).

        Parameters
        ----------
        X : sequence of N objects
            Objects of this distance's ``kind``.

        Returns
        -------
        ndarray of shape (N, N), float64
            The distances (or similarities) of every object to every object.
        """
        if self.matrix is not None:
            return _load(self.matrix)(X)
        return self.pairwise(X, X)


#: aeon's elastic distances (hlm.distances._elastic): name -> the parameters an entry may give (aeon 1.6's,
#: less its implementation arguments). Here, not there: the DTW jobs' code inputs hold this table, not that module
ELASTIC = {
    "ddtw": ("window", "itakura_max_slope"),
    "wdtw": ("window", "g", "itakura_max_slope"),
    "wddtw": ("window", "g", "itakura_max_slope"),
    "lcss": ("window", "epsilon", "itakura_max_slope"),
    "erp": ("window", "g", "itakura_max_slope"),
    "edr": ("window", "epsilon", "itakura_max_slope"),
    "msm": ("window", "independent", "c", "itakura_max_slope"),
    "twe": ("window", "nu", "lmbda", "itakura_max_slope"),
    "adtw": ("window", "warp_penalty", "itakura_max_slope"),
    "shape_dtw": ("window", "descriptor", "reach", "itakura_max_slope"),
}


def _load(function: str):
    module, name = function.split(":")
    return getattr(import_module(module), name)


#: The table of distances, ``{name: Distance}``: ``dtw`` and aeon's elastic distances (series:
#: :data:`hlm.distances._elastic.ELASTIC`), ``alignment`` (sequences; a similarity),
#: ``hamming`` (sequences), ``euclidean``, ``cityblock`` and ``cosine`` (feature vectors), ``vdm`` (categorical
#: records; it uses the class labels, so it has no ``function``). Examples: the module docstring.
DISTANCES: dict[str, Distance] = {d.name: d for d in (
    Distance("dtw", "series", "hlm.distances._dtw:dtw", options=("window",)),
    *(Distance(n, "series", "hlm.distances._elastic:elastic", options=o, fixed=(("metric", n),))
      for n, o in ELASTIC.items()),
    Distance("alignment", "sequences", "hlm.distances._alignment:alignment_scores", similarity=True,
             options=("mode", "substitution_matrix", "match_score", "mismatch_score", "open_gap_score",
                      "extend_gap_score")),
    Distance("hamming", "sequences", "hlm.distances._hamming:hamming"),
    Distance("euclidean", "vectors", "hlm.distances._euclidean:pairwise_euclidean",
             matrix="hlm.distances._euclidean:euclidean"),
    Distance("cityblock", "vectors", "hlm.distances._cdist:cdist_pairwise", fixed=(("metric", "cityblock"),)),
    Distance("cosine", "vectors", "hlm.distances._cdist:cdist_pairwise", fixed=(("metric", "cosine"),)),
    Distance("vdm", "categorical", None),
)}
#: the names of the distances between feature vectors
VECTOR_DISTANCES = tuple(n for n, d in DISTANCES.items() if d.kind == "vectors")
#: the names of the distances whose values are similarities
SIMILARITIES = tuple(n for n, d in DISTANCES.items() if d.similarity)


def get_distance(name: str) -> Distance:
    """The distance called ``name`` in :data:`DISTANCES`; a one-line DataError naming the known ones otherwise.

    Parameters
    ----------
    name : str
        A key of :data:`DISTANCES` (a registry entry's ``distance`` field).

    Returns
    -------
    Distance
        The table's entry.

    Raises
    ------
    DataError
        For an unknown name (or one that is not a string); the message lists the known names.

    Examples
    --------
    >>> from hlm.distances import get_distance
    >>> get_distance("dtw").options
    ('window',)
    >>> get_distance("levenshtein")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    hlm.errors.DataError: unknown distance 'levenshtein'; expected one of dtw, ddtw, wdtw, ...
    """
    try:
        return DISTANCES[name]
    except (KeyError, TypeError):
        raise DataError(f"unknown distance {name!r}; expected one of {', '.join(DISTANCES)}") from None


def pairwise(rows, cols, distance: str, options: dict | None = None) -> np.ndarray:
    """The distance (or, for a similarity such as ``alignment``, the similarity) of every row object to every
    column object, by name.

    Parameters
    ----------
    rows, cols : sequence of objects
        Objects of the distance's kind: series (1-D arrays) for ``dtw``, strings for ``alignment`` and
        ``hamming``, feature vectors (rows of a 2-D array) for ``euclidean``, ``cityblock`` and ``cosine``.
    distance : str
        The distance's name in :data:`DISTANCES`.
    options : dict or None, default None
        The distance's options (e.g. ``{"window": 0.1}`` for ``dtw``); None: its defaults.

    Returns
    -------
    ndarray of shape (len(rows), len(cols)), float64
        Entry ``[i, j]`` compares ``rows[i]`` with ``cols[j]``. A similarity (``alignment``) is returned as it
        is: its conversion to distances is :func:`hlm.distances.similarity_to_distance` (paper section 5.2).

    Raises
    ------
    DataError
        For an unknown name, or ``vdm`` (it needs the class labels: :class:`hlm.distances.VDMDistances`).

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.distances import pairwise
    >>> dna = ["ACGTAC", "ACGTTC", "TCGTAA"]
    >>> print(pairwise(dna, dna, "hamming"))
    [[0. 1. 2.]
     [1. 0. 3.]
     [2. 3. 0.]]
    >>> print(pairwise(dna, dna, "alignment"))  # global alignment scores: a similarity
    [[6. 4. 2.]
     [4. 6. 0.]
     [2. 0. 6.]]
    >>> series = [np.array([0.0, 1, 2, 1]), np.array([0.0, 0, 1, 2, 1]), np.array([2.0, 1, 0, 1])]
    >>> print(pairwise(series, series, "dtw").round(3))
    [[0.    0.    2.449]
     [0.    0.    2.449]
     [2.449 2.449 0.   ]]
    >>> print(pairwise([[0, 0]], [[3, 0], [3, 4]], "cityblock"))
    [[3. 7.]]
    """
    return get_distance(distance).pairwise(rows, cols, options)
