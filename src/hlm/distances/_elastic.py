"""aeon's elastic distances between series, by name (kind series).

Each is aeon's own pairwise function (``aeon.distances.<name>_pairwise_distance``) with the parameters a
registry entry gives (``window`` and ``distance_params``): derivative and weighted DTW (``ddtw``, ``wdtw``,
``wddtw``), the edit distances with real penalties, on real sequences and for the longest common
subsequence (``erp``, ``edr``, ``lcss``), move-split-merge (``msm``), time-warp edit (``twe``), amerced DTW
(``adtw``) and shape DTW (``shape_dtw``). Their values are aeon's, unchanged (``dtw``, kept as the square
root of aeon's cost, is :func:`hlm.distances.dtw`). A series is a 1-D array (one channel); series may
differ in length.
"""

from __future__ import annotations

import warnings

import numpy as np


def _panel(series):
    """aeon's collection layout: (n, 1, m) for one length, else a list of (1, m_i) arrays."""
    series = [np.asarray(x, dtype=np.float64).reshape(1, -1) for x in series]
    return np.stack(series) if len({x.shape[1] for x in series}) == 1 else series


def elastic(rows, cols, metric: str, **params) -> np.ndarray:
    """aeon's ``metric`` distance of every row series to every column series.

    Parameters
    ----------
    rows, cols : list of ndarray
        1-D float series; lengths may differ.
    metric : str
        One of aeon's elastic distances (``hlm.distances._registry.ELASTIC``).
    **params
        The distance's parameters (names in ``ELASTIC[metric]``), passed to aeon unchanged.

    Returns
    -------
    ndarray of shape (len(rows), len(cols)), float64

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.distances import pairwise
    >>> series = [np.array([0.0, 1, 2, 1]), np.array([0.0, 0, 1, 2, 1]), np.array([2.0, 1, 0, 1])]
    >>> print(pairwise(series, series, "msm", {"c": 1.0}))  # move-split-merge: a split costs c
    [[0. 1. 4.]
     [1. 0. 5.]
     [4. 5. 0.]]
    """
    import aeon.distances as distances

    function = getattr(distances, f"{metric}_pairwise_distance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's cast notices inside aeon
        return np.asarray(function(_panel(rows), _panel(cols), **params), dtype=np.float64)
