"""Time series as objects: UCR sets bundled with aeon, CSV tables or folders of series.

Their distances (DTW) are in :mod:`hlm.distances`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from hlm.datasets._textfiles import csv_rows, labels_by_id, read_text
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


#: suffixes of a series file in a folder ("" = none)
SERIES_SUFFIXES = ("", ".csv", ".tsv", ".txt")
_SEPARATOR = re.compile(r"\s*,\s*|\s+")


def read_series_folder(path, labels_path=None):
    """(ids, series, labels) from a folder holding one series per file; the id is the file stem.

    Labels: the class sub-folder (``path/<class>/<id>.csv``), or, with ``labels_path``,
    a CSV ``id,label`` for files directly in ``path``. Names starting with '.' are
    ignored; objects come in sorted order of their paths.
    """
    folder = Path(path)
    files = _series_files(folder, by_class=labels_path is None)
    ids = _unique_stems(folder, files)
    series = [read_series_file(f, i) for f, i in zip(files, ids)]
    labels = [f.parent.name for f in files] if labels_path is None else labels_by_id(labels_path, ids)
    return ids, series, labels


def read_series_file(path, obj: str) -> np.ndarray:
    """One series: a single row or a single column of numbers (commas or whitespace between, no header)."""
    lines = [(n, _SEPARATOR.split(line.strip()))
             for n, line in enumerate(read_text(path).splitlines(), 1) if line.strip()]
    lines = [(n, cells[:-1] if len(cells) > 1 and cells[-1] == "" else cells) for n, cells in lines]  # trailing comma
    wide = [(n, cells) for n, cells in lines if len(cells) > 1]
    if wide and len(lines) > 1:
        n, cells = wide[0]
        raise DataError(f"{path}: object {obj!r} has {len(cells)} values on line {n} of {len(lines)} lines; "
                        "a series file is a single row or a single column")
    tokens = [t for _, cells in lines for t in cells]
    for k, token in enumerate(tokens, 1):
        try:
            float(token)
        except ValueError:
            what = "an empty value" if token == "" else f"a non-numeric value {token!r}"
            hint = ("; values are separated by commas or whitespace, not ';'" if ";" in token
                    else "; a series file holds numbers only, no header")
            raise DataError(f"{path}: object {obj!r} has {what} (value {k}{hint})") from None
    x = np.array(tokens, dtype=np.float64)
    check_series([obj], [x], where=str(path))
    return x


def _visible(folder: Path) -> tuple[list[Path], list[Path]]:
    """(sub-folders, files) directly in ``folder``, sorted, without names starting with '.'."""
    entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    return [p for p in entries if p.is_dir()], [p for p in entries if not p.is_dir()]


def _series_files(folder: Path, by_class: bool) -> list[Path]:
    """The series files of a folder entry: in class sub-folders (``by_class``) or directly in it."""
    if not folder.is_dir():
        raise DataError(f"{folder}: not a folder")
    dirs, files = _visible(folder)
    if not dirs and not files:
        raise DataError(f"{folder}: empty folder (expected one file per series)")
    if by_class and files:
        where = f"next to class sub-folders ({dirs[0].name}/)" if dirs else "without a class"
        raise DataError(f"{folder}: series file {files[0].name!r} {where}; without labels_path every "
                        "series goes into the sub-folder of its class")
    if not by_class and dirs:
        raise DataError(f"{folder}: sub-folder {dirs[0].name!r}; with labels_path the series files "
                        "sit directly in the folder")
    if by_class:
        files = [f for d in dirs for f in _class_files(d)]
    bad = [f for f in files if f.suffix.lower() not in SERIES_SUFFIXES]
    if bad:
        raise DataError(f"{bad[0]}: a series file ends in .csv, .tsv, .txt or has no suffix")
    return files


def _class_files(folder: Path) -> list[Path]:
    dirs, files = _visible(folder)
    if dirs:
        raise DataError(f"{dirs[0]}: a class folder holds series files, not sub-folders")
    if not files:
        raise DataError(f"{folder}: empty class folder")
    return files


def _unique_stems(folder: Path, files: list[Path]) -> list[str]:
    """The ids (file stems); one id in two files is an error naming both."""
    first = {}
    for f in files:
        if f.stem in first:
            raise DataError(f"{folder}: duplicate id {f.stem!r} ({first[f.stem].relative_to(folder)} and "
                            f"{f.relative_to(folder)})")
        first[f.stem] = f
    return [f.stem for f in files]


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
