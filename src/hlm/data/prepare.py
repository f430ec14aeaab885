"""Turn one registry entry into a :class:`DistanceArtifact` (paper section 5.2).

read -> validate -> (similarity -> distance | vectors -> Euclidean |
categorical -> VDM | distance as is) -> symmetrise -> validate again.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.data import readers
from hlm.data.artifacts import DistanceArtifact
from hlm.data.conversions import similarity_to_distance, symmetrize
from hlm.data.registry import DatasetSpec
from hlm.data.validation import _few, align_labels, check_ids, check_informative, check_labels, check_matrix, nonfinite
from hlm.data.vectors import euclidean, value_difference_metric
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
    from hlm.data.textfiles import visible_files

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


def _records(spec: DatasetSpec, src: Path) -> tuple[pd.DataFrame, np.ndarray | None, np.ndarray]:
    """(feature frame, ids or None, labels) for the record formats."""
    w = spec.where
    if spec.format == "rda":
        frame = readers.read_rda(src, object=spec.object, where=w)
        ids = None if isinstance(frame.index, pd.RangeIndex) else frame.index.to_numpy(dtype=object)
    else:
        frame = readers.read_table(src, where=w)
        ids = frame.pop("id").to_numpy(dtype=object) if "id" in frame.columns else None
    if spec.label_column not in frame.columns:
        cols = ", ".join(map(str, frame.columns[:12]))
        raise DataError(f"{w}: label column '{spec.label_column}' not found; columns are: {cols}")
    labels = readers.labels_to_str(frame.pop(spec.label_column).to_numpy(dtype=object))
    if frame.shape[1] == 0:
        raise DataError(f"{w}: no feature columns besides '{spec.label_column}'")
    return frame, ids, labels


def _vectors(frame: pd.DataFrame, w: str) -> np.ndarray:
    bad = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        raise DataError(f"{w}: kind vectors needs numeric columns; non-numeric: {', '.join(bad[:5])}")
    X = frame.to_numpy(dtype=np.float64)
    miss = nonfinite(X)
    if miss:
        count, i, j = miss
        raise DataError(
            f"{w}: {count} missing/non-finite feature values (first at row {i + 1}, column '{frame.columns[j]}')"
        )
    return X


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
    """
    root = Path(root)
    src = root / spec.path
    w = spec.where
    sha = file_sha256(src, w)
    if spec.sha256 and sha != spec.sha256:
        raise DataError(f"{w}: SHA-256 {sha[:12]}... does not match field 'sha256' ({spec.sha256[:12]}...)")
    meta = {
        "dataset": spec.name,
        "source": spec.path,
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
    else:
        frame, ids, labels = _records(spec, src)
        n = len(frame)
        ids = check_ids(ids if ids is not None else range(n), name=spec.name, path=spec.path)
        labels = check_labels(labels, n, name=spec.name, path=spec.path, ids=ids)
        meta["distance"] = spec.distance
        if spec.kind == "vectors":
            X = _vectors(frame, w)
            if spec.distance == "euclidean":
                D = euclidean(X)
            else:  # cityblock, cosine
                from scipy.spatial.distance import cdist

                D = cdist(X, X, metric=spec.distance)
            native = {"vectors": X}
        else:
            D = value_difference_metric(_categories(frame, spec.na_value, w), labels, q=VDM_Q)
            meta.update({"vdm_q": VDM_Q, "na_value": spec.na_value, "uses_labels": True})
    D, asym = symmetrize(D)
    meta["symmetrized"] = asym
    D = check_matrix(D, name=spec.name, path=spec.path, kind="distance")
    check_informative(D, labels, name=spec.name, path=spec.path, kind=spec.kind)
    meta["class_counts"] = dict(sorted(Counter(labels.tolist()).items()))
    meta["native"] = sorted(native)
    return DistanceArtifact(ids=ids, labels=labels, distances=D, metadata=meta, **native)
