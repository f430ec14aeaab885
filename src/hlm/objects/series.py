"""Time series as objects: UCR sets bundled with aeon, CSV tables of series, DTW distances.

DTW is aeon's (``aeon.distances.dtw_pairwise_distance``), with an optional
Sakoe-Chiba ``window`` (a fraction of the series length; None = the full
window). aeon returns the cost of the optimal warping path in squared
differences; the pipeline uses its square root so that DTW on equal series
reduces to the Euclidean distance (the HLM model squares distances itself).
DTW is not a metric; the conversion rules of the data sets apply unchanged.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hlm.errors import DataError

#: registry ``source`` name -> aeon loader (offline: the data ship inside the aeon wheel)
AEON_SETS = {"GunPoint": "load_gunpoint", "ItalyPowerDemand": "load_italy_power_demand"}


def load_aeon(name: str) -> tuple[list[str], list[np.ndarray], list[str]]:
    """(ids, series, labels) of a bundled UCR set, train then test part (ids ``train-0``, ``test-0``, ...)."""
    if name not in AEON_SETS:
        raise DataError(f"aeon data set {name!r} is not available offline; known: {', '.join(AEON_SETS)}")
    import aeon.datasets

    loader = getattr(aeon.datasets, AEON_SETS[name])
    ids, series, labels = [], [], []
    for part in ("train", "test"):
        X, y = loader(split=part)
        for k in range(len(y)):
            ids.append(f"{part}-{k}")
            series.append(np.asarray(X[k], dtype=np.float64).reshape(-1))
            labels.append(str(y[k]))
    return ids, series, labels


def read_series_csv(path, id_column: str = "id", label_column: str = "label"):
    """(ids, series, labels) from a CSV with one series per row: ``id``, ``label``, then the values.

    Rows may have different lengths (trailing empty cells); empty series, non-numeric
    or non-finite values and duplicate ids are errors naming the row.
    """
    from hlm.objects._files import csv_rows

    path = Path(path)
    rows = csv_rows(path)
    if not rows or rows[0][:2] != [id_column, label_column]:
        raise DataError(f"{path}: the header must start with '{id_column},{label_column}' then the values")
    ids, series, labels = [], [], []
    for n, row in enumerate(rows[1:], 2):
        if not row:
            continue
        obj = row[0]
        values = list(row[2:])
        while values and values[-1].strip() == "":  # shorter series: trailing empty cells
            values.pop()
        if any(v.strip() == "" for v in values):
            raise DataError(f"{path}, line {n}: object {obj!r} has an empty value inside the series")
        try:
            x = np.array(values, dtype=np.float64)
        except ValueError:
            raise DataError(f"{path}, line {n}: object {obj!r} has a non-numeric value") from None
        ids.append(obj)
        series.append(x)
        labels.append(row[1] if len(row) > 1 else "")
    check_series(ids, series, where=str(path))
    return ids, series, labels


def check_series(ids, series, where: str = "series", equal_length: bool = False) -> None:
    seen = set()
    for i, x in zip(ids, series):
        if i in seen:
            raise DataError(f"{where}: duplicate id {i!r}")
        seen.add(i)
        if x.size == 0:
            raise DataError(f"{where}: object {i!r} is an empty series")
        if not np.isfinite(x).all():
            raise DataError(f"{where}: object {i!r} has NaN or infinite values")
    lengths = {x.size for x in series}
    if equal_length and len(lengths) > 1:
        raise DataError(f"{where}: series of different lengths ({min(lengths)}..{max(lengths)}) "
                        "but the distance needs equal lengths")


def dtw(rows: list[np.ndarray], cols: list[np.ndarray], window: float | None = None) -> np.ndarray:
    """sqrt of aeon's DTW cost between every row and column series (unequal lengths allowed)."""
    from aeon.distances import dtw_pairwise_distance

    def stack(xs):
        if len({x.size for x in xs}) == 1:
            return np.stack([x.reshape(1, -1) for x in xs])
        return [x.reshape(1, -1) for x in xs]

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's uint64 -> int64 cast notice inside aeon
        cost = dtw_pairwise_distance(stack(rows), stack(cols), window=window)
    return np.sqrt(np.maximum(np.asarray(cost, dtype=np.float64), 0.0))
