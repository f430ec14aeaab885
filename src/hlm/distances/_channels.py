"""Series as (channels x length) arrays: the layout every series distance takes (aeon's).

A series object is a 1-D array (one channel) or a 2-D array of shape (channels, length). Series of one
data set share their number of channels; their lengths may differ.

Examples
--------
>>> import numpy as np
>>> from hlm.distances._channels import as_channels, length, panel
>>> as_channels(np.arange(3.0)).shape, length(np.zeros((2, 5)))
((1, 3), 5)
>>> panel([np.zeros((2, 4)), np.ones((2, 4))]).shape  # one shape: aeon's collection (n, channels, length)
(2, 2, 4)
>>> panel([np.zeros((2, 4)), np.ones((3, 4))])  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
hlm.errors.DataError: series of 2 and 3 channels: every series of a data set has the same channels
"""

from __future__ import annotations

import numpy as np

from hlm.errors import DataError


def as_channels(x) -> np.ndarray:
    """The series ``x`` as a float64 (channels, length) array (a 1-D series: one channel)."""
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(1, -1) if x.ndim == 1 else x


def length(x) -> int:
    """The number of time points of a series (its last axis)."""
    return int(np.shape(x)[-1])


def channels(x) -> int:
    """The number of channels of a series (1 for a 1-D array)."""
    return 1 if np.ndim(x) == 1 else int(np.shape(x)[0])


def panel(series):
    """aeon's collection of ``series``: an (n, channels, length) array when they share a length, else a list
    of (channels, length) arrays. Series of different channel counts are a DataError."""
    xs = [as_channels(x) for x in series]
    check_channels(xs)
    if len({x.shape for x in xs}) == 1:
        return np.stack(xs)
    return xs


def panels(rows, cols):
    """:func:`panel` of the rows and of the columns, which must have the same channels."""
    check_channels([*rows, *cols])
    return panel(rows), panel(cols)


def check_channels(series, ids=None, where: str | None = None) -> None:
    """A one-line DataError when ``series`` do not all have the first one's number of channels; with ``ids``
    (and ``where``, the file or data set) it names the first object that differs and the first object."""
    counts = [channels(x) for x in series]
    k = next((k for k, c in enumerate(counts) if c != counts[0]), None)
    if k is None:
        return
    if ids is None:
        raise DataError(f"series of {counts[0]} and {counts[k]} channels: every series of a data set has the same "
                        "channels")
    raise DataError(f"{where}: object {ids[k]!r} has {counts[k]} channel{'s' * (counts[k] > 1)}, object "
                    f"{ids[0]!r} {counts[0]}: every series of a data set has the same channels")
