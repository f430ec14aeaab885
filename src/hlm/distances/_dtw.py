"""Dynamic time warping between series (a distance of kind series).

DTW is aeon's (``aeon.distances.dtw_pairwise_distance``), with an optional
Sakoe-Chiba ``window`` (a fraction of the series length; None = the full
window). aeon returns the cost of the optimal warping path in squared
differences; we use its square root so that DTW on equal series
reduces to the Euclidean distance (the HLM model squares distances itself).
A multichannel series is a (channels x length) array: a step's cost sums over the channels (aeon's
dependent DTW). DTW is not a metric; the conversion rules of the data sets apply unchanged.
"""

from __future__ import annotations

import numpy as np


def dtw(rows: list[np.ndarray], cols: list[np.ndarray], window: float | None = None) -> np.ndarray:
    """sqrt of aeon's DTW cost between every row and column series (unequal lengths allowed).

    The square root of aeon's ``dtw_pairwise_distance`` (a cost in squared differences), so that with
    ``window=0`` DTW on series of one length is their Euclidean distance (module docstring; docs/data.md,
    "Raw objects").

    Parameters
    ----------
    rows, cols : list of ndarray
        Series: 1-D arrays (one channel) or (channels, length) arrays, all of one channel count (aeon's
        multichannel DTW: the cost of a step sums the squared differences over the channels); lengths may
        differ.
    window : float or None, default None
        The Sakoe-Chiba band as a fraction of the series length (0: no warping); None: the full window.

    Returns
    -------
    ndarray of shape (len(rows), len(cols)), float64
        The DTW distance of every row series to every column series (non-negative).

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.distances import dtw
    >>> series = [np.array([0.0, 1, 2, 1]), np.array([0.0, 0, 1, 2, 1]), np.array([2.0, 1, 0, 1])]
    >>> print(dtw(series, series).round(3))  # the first two differ by a warp only
    [[0.    0.    2.449]
     [0.    0.    2.449]
     [2.449 2.449 0.   ]]
    >>> equal = [series[0], series[2]]
    >>> print(dtw(equal, equal, window=0) ** 2)  # no warping: the squared Euclidean distance
    [[0. 8.]
     [8. 0.]]
    """
    import warnings

    from aeon.distances import dtw_pairwise_distance

    from hlm.distances._channels import panels

    X, Y = panels(rows, cols)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's uint64 -> int64 cast notice inside aeon
        cost = dtw_pairwise_distance(X, Y, window=window)
    return np.sqrt(np.maximum(np.asarray(cost, dtype=np.float64), 0.0))
