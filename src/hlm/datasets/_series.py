"""Time series as objects: UCR sets bundled with aeon, CSV tables or folders of series.

Their distances (DTW) are in :mod:`hlm.distances`.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hlm.datasets._textfiles import csv_rows, labels_by_id, read_text
from hlm.distances._channels import check_channels, length
from hlm.errors import DataError


@dataclass(frozen=True)
class AeonSet:
    """A classification set shipped inside the installed aeon wheel (its ``_TRAIN.ts`` and ``_TEST.ts``)."""

    name: str
    train: Path
    test: Path
    univariate: bool
    equal_length: bool


def aeon_sets() -> dict[str, AeonSet]:
    """The classification sets the installed aeon bundles, by name: the folders of ``aeon/datasets/data``
    holding ``<name>_TRAIN.ts`` and ``<name>_TEST.ts`` whose header says ``@classLabel true`` (regression and
    forecasting sets are left out)."""
    import aeon.datasets

    root = Path(aeon.datasets.__file__).parent / "data"
    out = {}
    for train in sorted(root.glob("*/*_TRAIN.ts")):
        name = train.name.removesuffix("_TRAIN.ts")
        test = train.with_name(f"{name}_TEST.ts")
        if name != train.parent.name or not test.is_file():
            continue
        header = _ts_header(train)
        if header.get("classlabel", "").split()[:1] == ["true"]:
            out[name] = AeonSet(name, train, test, header.get("univariate") == "true",
                                header.get("equallength", "true") == "true")
    return out


def _ts_header(path: Path) -> dict[str, str]:
    """The ``@key value`` lines of a ``.ts`` file before ``@data`` (keys lower-cased)."""
    header = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.lower().startswith("@data"):
                break
            if line.startswith("@"):
                key, _, value = line[1:].partition(" ")
                header[key.lower()] = value.strip().lower()
    return header


def load_aeon(name: str) -> tuple[list[str], list[np.ndarray], list[str]]:
    """(ids, series, labels) of a bundled classification set, train then test part (ids ``train-0``, ...),
    read by aeon's ``load_from_ts_file``. A one-channel series is a 1-D array, a multichannel one a
    (channels, length) array."""
    sets = aeon_sets()
    if name not in sets:
        raise DataError(f"aeon data set {name!r} is not bundled with the installed aeon; bundled classification "
                        f"sets: {', '.join(sets)} (hlm datasets --aeon lists them)")
    ids, series, labels = [], [], []
    for part, path in (("train", sets[name].train), ("test", sets[name].test)):
        more = read_archive_file(path, "ts", part)
        ids, series, labels = ids + more[0], series + more[1], labels + more[2]
    return ids, series, labels


def _layout(x) -> np.ndarray:
    """A series as read by aeon, (channels, length): 1-D for one channel, as every series here."""
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(-1) if x.ndim == 1 or x.shape[0] == 1 else x


#: the archive's file formats, read by aeon's own loaders
TS_FORMATS = {"ts": "load_from_ts_file", "arff": "load_from_arff_file", "tsv": "load_from_tsv_file"}


def read_archive_file(path, fmt: str, prefix: str | None,
                      labels: bool = True) -> tuple[list[str], list[np.ndarray], list[str]]:
    """(ids, series, labels) of a UCR/UEA archive file (``.ts``, ``.arff`` or ``.tsv``) by aeon's loader;
    ids ``{prefix}-0``, ``{prefix}-1``, ... in file order (``0``, ``1``, ... without a prefix); labels from the
    file. A multichannel series is a (channels, length) array; an object whose channel count differs from the
    first one's is refused, naming it. ``labels=False`` (new objects to classify): a file without class
    labels is read too, each label then ``""``."""
    import aeon.datasets

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if labels and fmt == "ts" and _ts_header(path).get("classlabel", "").split()[:1] != ["true"]:
        raise DataError(f"{path}: the header does not say @classLabel true: not a classification set")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X, y = getattr(aeon.datasets, TS_FORMATS[fmt])(str(path))
    except Exception as exc:  # noqa: BLE001 - aeon's loaders raise IOError, ValueError, ...: one line
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        mixed = re.search(r"dimensions in case (\d+)\. Expecting (\d+) but have read (\d+)", message)
        if mixed:  # aeon's words for mixed channel counts, as ours
            case, expected, read = mixed.groups()
            raise DataError(f"{path}: series {case} of the file has {read} channel(s), the series before it "
                            f"{expected}: every series of a data set has the same channels") from None
        raise DataError(f"{path}: not a readable .{fmt} file ({message})") from None
    if len(X) == 0:
        raise DataError(f"{path}: no series read: is the header well formed (its last line @data)?")
    if y is None or len(y) != len(X):
        if labels:
            raise DataError(f"{path}: no class labels in the file (a classification set has them)")
        y = [""] * len(X)
    ids = [f"{prefix}-{k}" if prefix else str(k) for k in range(len(X))]
    series = [_layout(x) for x in X]
    check_series(ids, series, where=str(path))
    return ids, series, [str(v) for v in y]


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
    check_series(ids, series, where=str(folder))
    labels = [f.parent.name for f in files] if labels_path is None else labels_by_id(labels_path, ids)
    return ids, series, labels


def read_series_file(path, obj: str) -> np.ndarray:
    """One series: a single row or a single column of numbers (one channel), or a table of one line per time
    point and one column per channel (several channels: a (channels, length) array). Commas or whitespace
    between the values, no header."""
    lines = [(n, _SEPARATOR.split(line.strip()))
             for n, line in enumerate(read_text(path).splitlines(), 1) if line.strip()]
    lines = [(n, cells[:-1] if len(cells) > 1 and cells[-1] == "" else cells) for n, cells in lines]  # trailing comma
    width = len(lines[0][1]) if lines else 1
    table = len(lines) > 1 and width > 1  # a line per time point, a column per channel
    for n, cells in lines:
        if len(lines) > 1 and len(cells) != width:
            raise DataError(f"{path}: object {obj!r} has {len(cells)} value(s) on line {n} and {width} on line "
                            f"{lines[0][0]}; a series file is a single row, a single column, or one column per "
                            "channel with the same number of values on every line")
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
    if table:
        x = np.ascontiguousarray(x.reshape(len(lines), width).T)
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
    """One-line DataErrors for duplicate ids, empty series, NaN or infinite values, series whose channel count
    differs from the first one's, and (``equal_length``) series of different lengths."""
    seen = set()
    for i, x in zip(ids, series):
        if i in seen:
            raise DataError(f"{where}: duplicate id {i!r}")
        seen.add(i)
        if x.ndim not in (1, 2):
            raise DataError(f"{where}: object {i!r} is a {x.ndim}-D array; a series is 1-D, or 2-D (channels x "
                            "length)")
        if x.size == 0:
            raise DataError(f"{where}: object {i!r} is an empty series")
        if not np.isfinite(x).all():
            raise DataError(f"{where}: object {i!r} has NaN or infinite values")
    check_channels(series, list(ids), where)
    lengths = {length(x) for x in series}
    if equal_length and len(lengths) > 1:
        raise DataError(f"{where}: series of lengths {min(lengths)} to {max(lengths)}, but the Euclidean distance "
                        "needs series of one length; give an elastic distance (dtw, msm, twe, ...) instead")
