"""Turn one registry entry into a :class:`DistanceArtifact` (paper section 5.2).

read -> validate -> (similarity -> distance | vectors -> Euclidean |
categorical -> codes, the VDM built per fit set | distance as is) -> symmetrise -> validate again.

Records of ``kind: vectors`` (:func:`load_vectors`; read from a file, or drawn by
a generator with ``format: generated``, :mod:`hlm.datasets._generated`) go through,
in order: ``drop_columns`` (columns that are not features, e.g. an id),
``na_value`` (cells holding that sentinel become missing), ``factors:
numbers`` (a factor column whose levels are all numbers becomes those numbers,
the level values, never the factor's integer codes), ``remove_at_random``
(exactly round(fraction N p) observed cells blanked, drawn with a fixed seed,
once per data set, before any split), ``missing`` (without it a missing value
is an error; ``drop`` drops the objects that have one, with a warning;
``keep`` keeps NaN in the vectors), a warning for each constant feature (kept:
it adds nothing to the distances), and ``standardize`` (z-scores with the mean
and sd of all objects, no labels used; a constant feature keeps sd 1) before
the distance. The artifact keeps the unstandardised features as its
``vectors`` (the vector methods standardise on their fit part themselves). A
data set that keeps missing values has vectors but no distances:
:func:`prepare_dataset` refuses it, :func:`load_vectors` reads it.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.datasets import _readers as readers
from hlm.datasets._artifacts import DistanceArtifact
from hlm.datasets._generated import Generated, generate
from hlm.datasets._registry import DatasetSpec
from hlm.datasets._validation import (
    DataWarning,
    _few,
    align_labels,
    check_ids,
    check_informative,
    check_labels,
    check_matrix,
)
from hlm.distances._conversions import similarity_to_distance, symmetrize
from hlm.distances._registry import get_distance
from hlm.errors import DataError

VDM_Q = 2  # variant matching the UW Voting file best (data/README.md)


def file_sha256(path: str | Path, where: str | None = None) -> str:
    """Hex SHA-256 of a file (DataError naming it when it cannot be read)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        raise DataError(f"{where or path}: file not found") from None
    except OSError as exc:
        raise DataError(f"{where or path}: cannot read file ({exc.strerror})") from None
    return digest.hexdigest()


def folder_sha256(path: str | Path, where: str | None = None) -> str:
    """Hex SHA-256 over a folder's files: each relative path and the SHA-256 of its bytes, sorted.

    Hidden files ('.' first, as ``.DS_Store``) are left out, as the readers ignore them.
    """
    from hlm.datasets._textfiles import visible_files

    folder = Path(path)
    if not folder.is_dir():
        raise DataError(f"{where or path}: folder not found")
    digest = hashlib.sha256()
    for f in visible_files(folder):
        digest.update(f"{f.relative_to(folder).as_posix()}\0{file_sha256(f, where)}\n".encode())
    return digest.hexdigest()


def source_sha256(path: str | Path, where: str | None = None) -> str:
    """:func:`folder_sha256` of a folder, else :func:`file_sha256`."""
    return folder_sha256(path, where) if Path(path).is_dir() else file_sha256(path, where)


def _check_sha256(spec: DatasetSpec, src: Path) -> str:
    """The SHA-256 of the entry's file; DataError if it differs from the entry's ``sha256``."""
    sha = file_sha256(src, spec.where)
    if spec.sha256 and sha != spec.sha256:
        raise DataError(
            f"{spec.where}: SHA-256 {sha[:12]}... does not match field 'sha256' ({spec.sha256[:12]}...)"
        )
    return sha


def _source(spec: DatasetSpec, root: Path) -> tuple[Path | Generated, str]:
    """(the entry's raw file, or its generated draw; the SHA-256 checked against field ``sha256``)."""
    if spec.format != "generated":
        src = root / spec.path
        return src, _check_sha256(spec, src)
    data = generate(spec.generator, spec.n_objects, spec.n_features, spec.seed)
    if spec.sha256 and data.sha256 != spec.sha256:
        raise DataError(
            f"{spec.where}: the generated data's SHA-256 {data.sha256[:12]}... does not match field 'sha256' "
            f"({spec.sha256[:12]}...): the generator or numpy's legacy RandomState stream changed"
        )
    return data, data.sha256


def _matrix_source(spec: DatasetSpec, src: Path, root: Path, meta: dict):
    """(M checked, ids or None, labels) for the matrix formats."""
    w = spec.where
    if spec.format == "mat":
        M, labels = readers.read_mat(src, spec.matrix_key, spec.labels_key, where=w)
        return check_matrix(M, name=spec.name, path=spec.path, kind=spec.kind), None, labels
    label_ids = labels = None
    if spec.labels_path:
        lw = f"dataset '{spec.name}' ({spec.labels_path})"
        lsrc = root / spec.labels_path
        meta["labels_source"] = spec.labels_path
        meta["labels_sha256"] = file_sha256(lsrc, lw)
        labels, label_ids = readers.read_labels_file(lsrc, where=lw)
    if spec.format == "csv":
        M, ids = readers.read_csv_matrix(src, where=w)
        own_labels = None
    elif spec.format == "npy":
        M, ids, own_labels = readers.read_npy(src, where=w), None, None
    elif spec.format == "parquet":
        M, ids, own_labels = readers.read_parquet_matrix(src, where=w)
    else:  # pragma: no cover - the schema forbids it
        raise DataError(f"{w}: format {spec.format} cannot hold a {spec.kind} matrix")
    M = check_matrix(M, name=spec.name, path=spec.path, kind=spec.kind)
    if own_labels is not None:
        if labels is not None:
            raise DataError(f"{w}: file carries its own labels; remove field 'labels_path'")
        return M, ids, own_labels
    if labels is None:
        raise DataError(f"{w}: no labels; set field 'labels_path'")
    if ids is not None and spec.labels_order:
        raise DataError(f"{w}: the matrix has ids, so labels are matched by id; remove field 'labels_order'")
    if label_ids is None and spec.labels_order:
        raise DataError(f"{w}: the labels file ({spec.labels_path}) has no ids, so its labels are in row order "
                        "already; remove field 'labels_order'")
    if label_ids is not None:
        if ids is None:
            ids, labels = _labels_of_rows(spec, label_ids, labels, M.shape[0])
        else:
            M_ids = check_ids(ids, name=spec.name, path=spec.path)
            labels = align_labels(M_ids, label_ids, labels, name=spec.name, path=spec.labels_path)
    return M, ids, labels


def _labels_of_rows(spec: DatasetSpec, label_ids, labels, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, labels) in row order of a matrix without ids, from a labels file with ids.

    The ids cannot name rows, except row numbers: 0..N-1 (hlm's own ids) or, without 0 and
    with N, 1..N, matched by number in any order. Other ids need ``labels_order: rows``
    (the labels file lists the rows in matrix order); else a reordered labels file would
    silently relabel the objects.
    """
    label_ids = check_ids(label_ids, name=spec.name, path=spec.labels_path, what="label ids")
    if spec.labels_order == "rows":
        return label_ids, labels
    if not all(i.isascii() and i.isdigit() for i in label_ids):
        raise DataError(
            f"dataset '{spec.name}' ({spec.labels_path}): the labels file has ids ({_few(label_ids)}) but the "
            f"matrix ({spec.path}) has none to match them to; set field 'labels_order: rows' if the labels "
            "file lists the objects in matrix row order, or use row numbers 0..N-1 as ids"
        )
    rows = [int(i) for i in label_ids]
    base = 1 if 0 not in rows and n in rows else 0
    row_ids = np.array([str(r + base) for r in range(n)])
    labels = align_labels(row_ids, [str(r) for r in rows], labels, name=spec.name, path=spec.labels_path)
    return row_ids, labels


def _records(spec: DatasetSpec, src: Path | Generated) -> tuple[pd.DataFrame, np.ndarray | None, np.ndarray]:
    """(feature frame, ids or None, labels) for the record formats; ``drop_columns`` removed."""
    w = spec.where
    if isinstance(src, Generated):
        return pd.DataFrame(src.X, columns=src.columns), None, src.labels
    if spec.format == "rda":
        frame = readers.read_rda(src, object=spec.object, where=w)
        ids = None if isinstance(frame.index, pd.RangeIndex) else frame.index.to_numpy(dtype=object)
    else:
        frame = readers.read_table(src, where=w, header=spec.header is not False)
        ids = frame.pop("id").to_numpy(dtype=object) if "id" in frame.columns else None
    if spec.label_column not in frame.columns:
        cols = ", ".join(map(str, frame.columns[:12]))
        raise DataError(f"{w}: label column '{spec.label_column}' not found; columns are: {cols}")
    if spec.drop_columns:
        frame = _drop_columns(frame, spec, id_column=ids is not None and spec.format != "rda")
    labels = readers.labels_to_str(frame.pop(spec.label_column).to_numpy(dtype=object))
    if frame.shape[1] == 0:
        raise DataError(f"{w}: no feature columns besides '{spec.label_column}'")
    return frame, ids, labels


def _drop_columns(frame: pd.DataFrame, spec: DatasetSpec, *, id_column: bool) -> pd.DataFrame:
    """The frame without the entry's ``drop_columns``; a name that is no column is an error."""
    w = spec.where
    names = [str(c) for c in frame.columns]
    for col in spec.drop_columns:
        if col == spec.label_column:
            raise DataError(f"{w}: field 'drop_columns' names the label column '{col}'")
        if col == "id" and id_column:
            raise DataError(f"{w}: field 'drop_columns': column 'id' holds the object ids, not a feature; "
                            "remove it from the list")
        if col not in names:
            hint = difflib.get_close_matches(col, names, n=1)
            tip = f" (did you mean '{hint[0]}'?)" if hint else f"; columns are: {', '.join(names[:12])}"
            raise DataError(f"{w}: field 'drop_columns': column '{col}' not found{tip}")
    return frame.drop(columns=[c for c in frame.columns if str(c) in spec.drop_columns])


@dataclass
class VectorRecords:
    """The feature vectors of one ``kind: vectors`` entry, ready for the distance (module docstring)."""

    ids: np.ndarray  # (N,) str: the objects kept
    labels: np.ndarray  # (N,) str
    features: np.ndarray  # (N, d) float64: as read (factor levels as numbers), kept rows and columns;
    #                       NaN for a missing value with missing: keep
    columns: list[str]  # the d feature names
    X: np.ndarray  # (N, d) float64: what the distance is computed on (z-scores if standardize)
    info: dict = field(default_factory=dict)  # the artifact metadata these steps add


def load_vectors(spec: DatasetSpec, root: str | Path = ".") -> VectorRecords:
    """Read (or draw) and check a ``kind: vectors`` entry without computing its distances (SHA-256
    checked). With ``missing: keep`` the missing values stay NaN in ``features`` and ``X``.

    The record steps of the module docstring (docs/data.md, "Records"), in order: ``drop_columns``,
    ``na_value``, ``factors``, ``remove_at_random``, ``missing``, a warning per constant feature, and
    ``standardize``. The protocols that read feature vectors (the two-way GMM's) use it; it also reads a
    data set that keeps missing values, which :func:`prepare_dataset` refuses.

    Parameters
    ----------
    spec : DatasetSpec
        An entry of ``kind: vectors`` (read from a file, or ``format: generated``).
    root : str or Path, default "."
        The folder the entry's ``path`` is relative to.

    Returns
    -------
    VectorRecords
        A dataclass with ``ids`` (N,) and ``labels`` (N,), str, of the objects kept; ``features`` (N, d),
        float64, as read (factor levels as numbers; NaN for a missing value with ``missing: keep``);
        ``columns``, the d feature names; ``X`` (N, d), float64, what the distance is computed on (z-scores
        with ``standardize``); and ``info``, the artifact metadata these steps add.

    Raises
    ------
    DataError
        If the entry is not of kind vectors, its file or SHA-256 is wrong, or a record step refuses the data
        (a non-numeric column, a missing value without ``missing``, ...).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from hlm.datasets import load_vectors, validate_entry
    >>> spec = validate_entry("points", {"path": "points.csv", "format": "csv", "kind": "vectors",
    ...                                  "distance": "euclidean", "label_column": "label", "standardize": True})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "points.csv").write_text("id,x1,x2,label\\np1,0,0,a\\np2,3,0,a\\np3,0,4,b\\np4,3,4,b\\n")
    ...     records = load_vectors(spec, root=tmp)
    >>> print(records.ids, records.labels, records.columns)
    ['p1' 'p2' 'p3' 'p4'] ['a' 'a' 'b' 'b'] ['x1', 'x2']
    >>> print(records.features)
    [[0. 0.]
     [3. 0.]
     [0. 4.]
     [3. 4.]]
    >>> print(records.X)  # standardize: z-scores with the mean and sd of all objects
    [[-1. -1.]
     [ 1. -1.]
     [-1.  1.]
     [ 1.  1.]]
    >>> records.info["feature_mean"], records.info["feature_sd"]
    ([1.5, 2.0], [1.5, 2.0])

    A generated entry reads no file:

    >>> spec = validate_entry("ring", {"format": "generated", "kind": "vectors", "distance": "euclidean",
    ...                                "generator": "ringnorm", "n_objects": 6, "n_features": 2, "seed": 0})
    >>> records = load_vectors(spec)
    >>> print(records.ids, records.labels, records.X.shape)
    ['0' '1' '2' '3' '4' '5'] ['1' '2' '2' '1' '1' '2'] (6, 2)
    """
    if spec.kind != "vectors":
        raise DataError(f"{spec.where}: kind {spec.kind}, not vectors")
    src, _ = _source(spec, Path(root))
    return _vector_records(spec, src)


def _vector_records(spec: DatasetSpec, src: Path | Generated) -> VectorRecords:
    w = spec.where
    frame, file_ids, labels = _records(spec, src)
    n = len(frame)
    ids = check_ids(file_ids if file_ids is not None else range(n), name=spec.name, path=spec.path)
    columns = [str(c) for c in frame.columns]

    def at(i: int) -> str:  # 'row 24', and the object's id when the file names it otherwise
        own = file_ids is not None and ids[i] != str(i + 1)
        return f"row {i + 1} (id {str(ids[i])!r})" if own else f"row {i + 1}"

    info = {
        "features": columns,
        "drop_columns": list(spec.drop_columns) if spec.drop_columns else None,
        "factors": spec.factors,
    }
    if spec.na_value is not None:
        frame, info["na_value_cells"] = _na_sentinel(frame, spec.na_value)
        info["na_value"] = spec.na_value
    X, info["factor_columns"] = _features(frame, spec, at)
    if spec.remove_at_random is not None:
        info["remove_at_random"] = _remove_at_random(X, spec)
    keep = _missing_rows(X, columns, spec, at)
    info.update(missing=spec.missing, missing_dropped=0)
    if keep is None:
        labels = check_labels(labels, n, name=spec.name, path=spec.path, ids=ids)
    else:
        with warnings.catch_warnings():  # a single-member class is judged on the objects kept
            warnings.simplefilter("ignore", DataWarning)
            check_labels(labels, n, name=spec.name, path=spec.path, ids=ids)
        dropped = ids[~keep]
        warnings.warn(
            f"{w}: missing: drop removed {len(dropped)} of {n} objects with a missing feature value "
            f"(ids {_few(dropped)}); {int(keep.sum())} remain",
            DataWarning,
            stacklevel=2,
        )
        info.update(missing_dropped=len(dropped), missing_dropped_ids=dropped.tolist())
        ids, X, labels = ids[keep], X[keep], np.asarray(labels, dtype=object)[keep]
        labels = check_labels(labels, len(ids), name=spec.name, path=spec.path, ids=ids)
    info["missing_cells"] = int(np.isnan(X).sum())  # kept as NaN (missing: keep)
    if info["missing_cells"]:
        _check_kept(X, ids, columns, spec)
    with warnings.catch_warnings():  # an all-NaN column is refused by _check_kept
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    constant = low == high
    info["constant_features"] = [columns[j] for j in np.flatnonzero(constant)]
    if constant.any():
        shown = ", ".join(f"'{columns[j]}' (value {low[j]:g})" for j in np.flatnonzero(constant)[:5])
        warnings.warn(
            f"{w}: {int(constant.sum())} constant feature column(s): {shown}; kept, they add nothing "
            "to the distances",
            DataWarning,
            stacklevel=2,
        )
    Z = X
    info["standardize"] = bool(spec.standardize)
    if spec.standardize:  # over the observed values of each feature (missing: keep leaves NaN)
        mean = np.nanmean(X, axis=0)
        sd = np.where(constant, 1.0, np.nanstd(X, axis=0))
        Z = (X - mean) / sd
        info.update(feature_mean=mean.tolist(), feature_sd=sd.tolist())
    return VectorRecords(ids=ids, labels=labels, features=X, columns=columns, X=Z, info=info)


def _number(level: str) -> float | None:
    """A factor level as a finite number, or None."""
    try:
        x = float(level)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _is_na(x) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def _features(frame: pd.DataFrame, spec: DatasetSpec, at) -> tuple[np.ndarray, list[str]]:
    """(N x d float64 with NaN for a missing value, the factor columns converted) of a record frame.

    A numeric or boolean column is taken as it is. A factor column whose levels are all numbers
    becomes those numbers with ``factors: numbers`` (else an error says so). Anything else is
    an error naming the column and its first value; with several bad columns, the first one
    (in file order) and how many more.
    """
    X = np.empty(frame.shape, dtype=np.float64)
    factor_columns, bad = [], []  # bad: (column, problem)
    for j, (name, col) in enumerate(frame.items()):
        name = str(name)
        if isinstance(col.dtype, pd.CategoricalDtype):
            levels = [str(c) for c in col.cat.categories]
            numbers = [_number(v) for v in levels]
            codes = col.cat.codes.to_numpy()
            if any(x is None for x in numbers):
                wrong = [v for v, x in zip(levels, numbers) if x is None]
                rows = [i for i, c in enumerate(codes) if c >= 0 and numbers[c] is None]
                first = f"; value {levels[codes[rows[0]]]!r} at {at(rows[0])}" if rows else ""
                bad.append((name, f"kind vectors needs numbers; column '{name}' is a factor with non-numeric "
                                  f"levels ({_few(wrong)}{first})"))
            elif spec.factors != "numbers":
                bad.append((name, f"column '{name}' is a factor (levels {_few(levels)}); set field "
                                  "'factors: numbers' to use its levels as numbers, or drop it with field "
                                  "'drop_columns'"))
            else:
                values = np.asarray(numbers, dtype=np.float64)
                X[:, j] = np.where(codes >= 0, values[np.maximum(codes, 0)], np.nan)  # code -1: missing
                factor_columns.append(name)
        elif pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            X[:, j] = col.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            values = col.to_numpy(dtype=object)
            rows = [i for i, x in enumerate(values) if not _is_na(x)]
            first = f" (value {values[rows[0]]!r} at {at(rows[0])})" if rows else ""
            bad.append((name, f"kind vectors needs numbers; column '{name}' is not numeric{first}; if it is "
                              "not a feature, drop it with field 'drop_columns'"))
    if bad:
        more = f"; other columns to fix: {_few([b[0] for b in bad[1:]])}" if len(bad) > 1 else ""
        raise DataError(f"{spec.where}: {bad[0][1]}{more}")
    return X, factor_columns


def _na_sentinel(frame: pd.DataFrame, token: str) -> tuple[pd.DataFrame, int]:
    """(the record frame with every cell equal to the sentinel ``na_value`` made missing, their count).

    A text or factor cell matches by its text (spaces stripped); a number matches when the sentinel
    is a number ("-999" blanks -999.0). A text column left with numbers only becomes numeric; a
    factor loses the sentinel level.
    """
    number = _number(token)
    out, count = {}, 0
    for name, col in frame.items():
        if isinstance(col.dtype, pd.CategoricalDtype):
            gone = [c for c in col.cat.categories if str(c).strip() == token]
            count += int(col.isin(gone).sum())
            col = col.cat.remove_categories(gone) if gone else col
        elif pd.api.types.is_bool_dtype(col):
            pass
        elif pd.api.types.is_numeric_dtype(col):
            if number is not None:
                hit = col.to_numpy(dtype=np.float64, na_value=np.nan) == number
                count += int(hit.sum())
                col = col.astype(np.float64).mask(hit)
        else:
            values = col.to_numpy(dtype=object)
            hit = np.array([not _is_na(x) and str(x).strip() == token for x in values], dtype=bool)
            count += int(hit.sum())
            values[hit] = np.nan
            rest = [x for x in values if not _is_na(x)]
            if hit.any() and all(_number(str(x)) is not None for x in rest):
                col = pd.Series([np.nan if _is_na(x) else float(x) for x in values], index=col.index)
            else:
                col = pd.Series(values, index=col.index, dtype=object)
        out[name] = col
    return pd.DataFrame(out, index=frame.index), count


def _remove_at_random(X: np.ndarray, spec: DatasetSpec) -> dict:
    """Blank round(fraction * N * p) of the observed cells of X in place, drawn uniformly without
    replacement by ``RandomState(seed).permutation`` over the observed cells in row-major order
    (field ``remove_at_random``); the metadata of the removal."""
    r = spec.remove_at_random
    cells = X.size
    k = int(round(r.fraction * cells))
    observed = np.flatnonzero(~np.isnan(X.ravel()))
    if k == 0:
        raise DataError(f"{spec.where}: field 'remove_at_random': fraction {r.fraction:g} of {cells} cells "
                        "removes no cell")
    if k > observed.size:
        raise DataError(f"{spec.where}: field 'remove_at_random': fraction {r.fraction:g} of {cells} cells is "
                        f"{k} cells, but only {observed.size} are observed")
    chosen = observed[np.random.RandomState(r.seed).permutation(observed.size)[:k]]  # frozen legacy stream
    X.flat[chosen] = np.nan
    return {"fraction": r.fraction, "seed": r.seed, "cells_removed": k, "cells": cells}


def _check_kept(X: np.ndarray, ids: np.ndarray, columns: list[str], spec: DatasetSpec) -> None:
    """``missing: keep``: a feature with no observed value is an error; an object with none warns."""
    nan = np.isnan(X)
    empty = np.flatnonzero(nan.all(axis=0))
    if empty.size:
        raise DataError(f"{spec.where}: feature column(s) {_few(columns[j] for j in empty)} have no observed "
                        "value (missing: keep); drop them with field 'drop_columns'")
    blank = nan.all(axis=1)
    if blank.any():
        warnings.warn(f"{spec.where}: {int(blank.sum())} object(s) with every feature value missing "
                      f"(ids {_few(ids[blank])}); kept (missing: keep)", DataWarning, stacklevel=3)


def _missing_rows(X: np.ndarray, columns: list[str], spec: DatasetSpec, at) -> np.ndarray | None:
    """None if no feature value is missing or ``missing: keep``; else the rows to keep (``missing: drop``).

    An infinite value is always an error; a missing one (NaN, R's NA) unless ``missing`` says
    what to do.
    """
    w = spec.where
    inf = np.isinf(X)
    if inf.any():
        i, j = np.argwhere(inf)[0]
        raise DataError(f"{w}: {int(inf.sum())} infinite feature values (first at {at(i)}, column "
                        f"'{columns[j]}')")
    nan = np.isnan(X)
    if not nan.any():
        return None
    i, j = np.argwhere(nan)[0]
    if spec.missing is None:
        raise DataError(
            f"{w}: {int(nan.sum())} missing feature values (first at {at(i)}, column '{columns[j]}'); "
            "set field 'missing: drop' to drop the objects that have one, or 'missing: keep' to keep them "
            "as NaN (for the protocols that read feature vectors)"
        )
    if spec.missing == "keep":
        return None
    keep = ~nan.any(axis=1)
    if not keep.any():
        raise DataError(f"{w}: every object has a missing feature value (missing: {spec.missing} leaves none)")
    return keep


def category_codes(records) -> tuple[np.ndarray, list[list[str]]]:
    """Categorical records (N x F, strings; a missing value already mapped to a value of its own) as
    int64 codes 0..k_f-1 per feature (values in sorted order), and each feature's values by code."""
    records = np.asarray(records)
    if records.ndim != 2:
        raise DataError(f"records must be a 2-D array (got shape {records.shape})")
    codes = np.empty(records.shape, dtype=np.int64)
    values = []
    for f in range(records.shape[1]):
        names, codes[:, f] = np.unique(records[:, f].astype(str), return_inverse=True)
        values.append(names.tolist())
    return codes, values


def _categories(frame: pd.DataFrame, na_value: str | None, w: str) -> np.ndarray:
    miss = frame.isna().to_numpy()
    if miss.any() and na_value is None:
        i, j = np.argwhere(miss)[0]
        raise DataError(
            f"{w}: {int(miss.sum())} missing values (first at row {i + 1}, column "
            f"'{frame.columns[j]}'); set field 'na_value' to treat them as a value of their own"
        )
    values = frame.astype(object).to_numpy()
    values[miss] = na_value
    return values.astype(str)


def prepare_dataset(spec: DatasetSpec, root: str | Path = ".") -> DistanceArtifact:
    """Read, check and convert one data set to distances (paper section 5.2).

    Paths in ``spec`` are relative to ``root``. Metadata records the source,
    its SHA-256 and every conversion applied.

    read -> validate -> (similarity -> distance by the entry's ``to_distance`` | vectors -> the entry's
    distance, e.g. Euclidean | categorical -> codes, the VDM built per fit set | distance as is) ->
    symmetrise -> validate again (module docstring; docs/data.md). A data set that ships a similarity keeps
    it unconverted as ``similarities``, for the compared methods (compared-methods spec section 4.2).

    Parameters
    ----------
    spec : DatasetSpec
        A registry entry of kind similarity, distance, vectors or categorical (raw series and sequences:
        :func:`hlm.datasets.load_objects` and the distance blocks).
    root : str or Path, default "."
        The folder the entry's paths are relative to.

    Returns
    -------
    DistanceArtifact
        ``ids`` and ``labels`` (N,), str; ``distances`` (N, N), float64, symmetric with a zero diagonal
        (None for categorical records, whose VDM uses the labels: their codes are ``records`` (N, F)
        instead); ``similarities`` (N, N) of a similarity data set, ``vectors`` (N, p) of a vectors one;
        ``metadata``: the source, its SHA-256, the conversion (``to_distance``, ``upper_bound``,
        ``symmetrized``), ``class_counts`` and which ``native`` matrices it keeps.

    Raises
    ------
    DataError
        If the file, its SHA-256, its labels or its matrix are refused (docs/data.md, "What is refused"), or
        a vectors entry keeps missing values (``missing: keep``: :func:`load_vectors` reads it).

    Examples
    --------
    A 4 x 4 similarity matrix with diagonal 1 and its labels in a temporary folder:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from hlm.datasets import prepare_dataset, validate_entry
    >>> spec = validate_entry("toy", {"path": "sim.csv", "format": "csv", "kind": "similarity",
    ...                               "labels_path": "labels.csv"})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "sim.csv").write_text("1,0.8,0.1,0.2\\n0.8,1,0.2,0.1\\n0.1,0.2,1,0.7\\n0.2,0.1,0.7,1\\n")
    ...     _ = (Path(tmp) / "labels.csv").write_text("a\\na\\nb\\nb\\n")
    ...     artifact = prepare_dataset(spec, root=tmp)
    >>> print(artifact.ids, artifact.labels)
    ['0' '1' '2' '3'] ['a' 'a' 'b' 'b']
    >>> print(artifact.distances.round(3))  # d = S_bar - s with S_bar = 1 (paper section 5.2)
    [[0.  0.2 0.9 0.8]
     [0.2 0.  0.8 0.9]
     [0.9 0.8 0.  0.3]
     [0.8 0.9 0.3 0. ]]
    >>> artifact.conversion, artifact.metadata["upper_bound"], artifact.metadata["native"]
    ('bound_minus', 1.0, ['similarities'])

    An entry of the project's registry (paths relative to the project folder):

    >>> from hlm.datasets import load_registry
    >>> sonar = prepare_dataset(load_registry("config/datasets.yaml", names=["aural_sonar"])["aural_sonar"])
    >>> sonar.distances.shape, sonar.conversion, sonar.metadata["class_counts"]
    ((100, 100), 'bound_minus', {'1': 50, '2': 50})
    """
    root = Path(root)
    w = spec.where
    src, sha = _source(spec, root)
    meta = {
        "dataset": spec.name,
        "source": spec.path if spec.format != "generated" else f"generator {spec.generator}",
        "sha256": sha,
        "format": spec.format,
        "kind": spec.kind,
        "to_distance": None,
        "upper_bound": None,
        "symmetrized": False,
        "distance": None,
    }
    native = {}  # the data set's own similarities or vectors, kept for the compared methods
    if spec.kind in ("similarity", "distance"):
        M, ids, labels = _matrix_source(spec, src, root, meta)
        n = M.shape[0]
        ids = check_ids(ids if ids is not None else range(n), name=spec.name, path=spec.path)
        if len(ids) != n:
            gap = f"{n - len(ids)} objects have no label" if len(ids) < n else "more ids than objects"
            raise DataError(f"{w}: {len(ids)} labelled ids for a {n} x {n} matrix ({gap})")
        labels = check_labels(labels, n, name=spec.name, path=spec.path, ids=ids)
        if spec.kind == "similarity":
            D, info = similarity_to_distance(M, spec.to_distance or "auto", spec.upper_bound, where=w)
            meta.update(info)
            native = {"similarities": M}
        else:
            D = M
            meta["to_distance"] = "identity"
    elif spec.kind == "vectors":
        rec = _vector_records(spec, src)
        if rec.info["missing_cells"]:
            raise DataError(
                f"{w}: keeps {rec.info['missing_cells']} missing feature values (missing: keep), so it has no "
                "distance matrix; only the protocols that read feature vectors (the two-way GMM's) can use it"
            )
        ids, labels = rec.ids, rec.labels
        if spec.format == "generated":
            meta["generator"] = {"name": spec.generator, "n_objects": spec.n_objects,
                                 "n_features": spec.n_features, "seed": spec.seed}
        meta["distance"] = spec.distance
        meta.update(rec.info)
        D = get_distance(spec.distance).full(rec.X)  # euclidean, cityblock, cosine
        native = {"vectors": rec.features}
    else:
        return _categorical_artifact(spec, src, meta)
    D, asym = symmetrize(D)
    meta["symmetrized"] = asym
    D = check_matrix(D, name=spec.name, path=spec.path, kind="distance")
    check_informative(D, labels, name=spec.name, path=spec.path, kind=spec.kind)
    meta["class_counts"] = dict(sorted(Counter(labels.tolist()).items()))
    meta["native"] = sorted(native)
    return DistanceArtifact(ids=ids, labels=labels, distances=D, metadata=meta, **native)


def _categorical_artifact(spec: DatasetSpec, src, meta: dict) -> DistanceArtifact:
    """Categorical records -> their codes, no matrix: the VDM uses the labels, so the evaluation builds it
    per fit set from that set's labels only (hlm.distances._vdm).

    The checks of the final matrix run on the share of differing values (Hamming), which no label
    shapes: the VDM of two records is 0 whenever that share is, for any labels.
    """
    from scipy.spatial.distance import pdist, squareform

    frame, ids, labels = _records(spec, src)
    n = len(frame)
    ids = check_ids(ids if ids is not None else range(n), name=spec.name, path=spec.path)
    labels = check_labels(labels, n, name=spec.name, path=spec.path, ids=ids)
    records, values = category_codes(_categories(frame, spec.na_value, spec.where))
    meta.update({"distance": spec.distance, "vdm_q": VDM_Q, "na_value": spec.na_value, "uses_labels": True,
                 "values": dict(zip(map(str, frame.columns), values))})
    H = squareform(pdist(records, "hamming")) if n >= 2 else np.zeros((n, n))
    off = H[~np.eye(n, dtype=bool)]
    if not (off.size and off.min() == off.max() > 0):  # equal positive shares say nothing of the VDM
        check_informative(H, labels, name=spec.name, path=spec.path, kind=spec.kind)
    meta["class_counts"] = dict(sorted(Counter(labels.tolist()).items()))
    meta["native"] = ["records"]
    return DistanceArtifact(ids=ids, labels=labels, distances=None, metadata=meta, records=records)
