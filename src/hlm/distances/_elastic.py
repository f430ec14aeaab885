"""aeon's elastic distances between series, by name (kind series).

Each is aeon's own pairwise function (``aeon.distances.<name>_pairwise_distance``) with the parameters a
registry entry gives (``window`` and ``distance_params``): derivative and weighted DTW (``ddtw``, ``wdtw``,
``wddtw``), the edit distances with real penalties, on real sequences and for the longest common
subsequence (``erp``, ``edr``, ``lcss``), move-split-merge (``msm``), time-warp edit (``twe``), amerced DTW
(``adtw``) and shape DTW (``shape_dtw``). Their values are aeon's, unchanged (``dtw``, kept as the square
root of aeon's cost, is :func:`hlm.distances.dtw`). A series is a 1-D array (one channel) or a
(channels, length) array, as aeon takes it (the channels are warped together, except where a distance's
``independent`` parameter says otherwise). Series may differ in length: then each pair goes through aeon's
``<name>_distance``, as aeon's pairwise functions mishandle rows of several lengths against columns of one.
"""

from __future__ import annotations

import warnings

import numpy as np

from hlm.distances._channels import as_channels, panels


def elastic(rows, cols, metric: str, **params) -> np.ndarray:
    """aeon's ``metric`` distance of every row series to every column series.

    Parameters
    ----------
    rows, cols : list of ndarray
        Series: 1-D arrays (one channel) or (channels, length) arrays, all of one channel count; lengths may
        differ.
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

    X, Y = panels(rows, cols)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's cast notices inside aeon
        if isinstance(X, np.ndarray) and isinstance(Y, np.ndarray) and X.shape[2] == Y.shape[2]:
            function = getattr(distances, f"{metric}_pairwise_distance")  # one length: aeon's pairwise function
            return np.asarray(function(X, Y, **params), dtype=np.float64)
        # several: aeon's distance pair by pair. Its pairwise functions take the unequal-length path from
        # the columns alone and reuse the first pair's bounding matrix for rows of other lengths (aeon 1.6:
        # inf, or other values, where the rows' lengths vary and the columns' do not)
        function = getattr(distances, f"{metric}_distance")
        out = np.empty((len(rows), len(cols)))
        for i, x in enumerate(rows):
            x = as_channels(x)
            for j, y in enumerate(cols):
                out[i, j] = function(x, as_channels(y), **params)
        return out
