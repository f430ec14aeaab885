"""New objects to classify, read from a file in their data set's own format, with or without labels.

* series: a CSV ``id,label,`` then the values (an empty label: none), a folder of series files (one
  sub-folder per class, or the files directly in it: no labels), or a ``.ts``, ``.arff`` or ``.tsv`` file
  of the archive (ids 0, 1, ... in file order; a ``.ts`` may say ``@classLabel false``, while ``.arff`` and
  ``.tsv`` files hold their class column, as aeon's loaders read them). Multichannel series: a folder or an
  archive file;
* sequences: FASTA, ``>id|label`` or ``>id``, or an R data file of StatLog DNA's indicator columns (the
  label column optional);
* vectors: a record table (CSV with a header, Parquet, or an R data file) holding the data set's feature
  columns by name, an optional ``id`` column and optionally the label column;
* categorical records: the same, their values among the training values of each feature (a missing cell
  is the entry's ``na_value``), read as the training codes.

Messages name the file and the line, row or object, as the registry's readers do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hlm.errors import DataError


def read_new_objects(kind: str, path: str | Path, *, features: list[str] | None = None,
                     label_column: str | None = None, categories: dict | None = None, na_value: str | None = None,
                     alphabet: str | None = None, header: bool = True):
    """(ids, objects, labels or None) of the new objects in ``path``.

    Parameters
    ----------
    kind : {"series", "sequences", "vectors"}
        The data set's kind.
    path : str or Path
        The file (or, for series, a folder).
    features : list of str or None
        kind vectors: the feature columns, in the model's order.
    label_column : str or None
        kinds vectors, categorical and sequences (an R data file): the label column, if the file has it.
    categories : dict of str to list of str, or None
        kind categorical: each feature's values, in code order (the records become these codes).
    na_value : str or None
        kind categorical: the value a missing cell takes, as in the registry entry.
    alphabet : str or None
        kind sequences: the letters a sequence may hold (None: DNA's).
    header : bool, default True
        kinds vectors and categorical, a CSV: False when the data set's file has no header row (registry
        ``header: false``), its columns then named ``x1``, ``x2``, ...

    Returns
    -------
    ids : list of str
    objects : list or ndarray
        Series (1-D arrays), sequences (str), an (n, p) float64 array of the features as read, or an (n, F)
        int64 array of category codes.
    labels : list of str or None
        None when no object has a label; an object without one has ``None``.

    Raises
    ------
    DataError
        For a missing file, a malformed object, or a vector file that lacks a feature column.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file or folder")
    if kind == "series":
        from hlm.datasets import _series as series

        if path.is_dir():
            by_class = any(p.is_dir() and not p.name.startswith(".") for p in path.iterdir())
            files = series._series_files(path, by_class=by_class)
            ids = series._unique_stems(path, files)
            objects = [series.read_series_file(f, i) for f, i in zip(files, ids)]
            series.check_series(ids, objects, where=str(path))
            labels = [f.parent.name for f in files] if by_class else [""] * len(ids)
        elif path.suffix.lower().lstrip(".") in series.TS_FORMATS:  # the archive's .ts, .arff, .tsv
            fmt = path.suffix.lower().lstrip(".")  # aeon's .tsv and .arff loaders always read a class column
            ids, objects, labels = series.read_archive_file(path, fmt, None, labels=fmt != "ts")
        else:
            ids, objects, labels = series.read_series_csv(path)
        return ids, objects, _labels(labels)
    if kind == "sequences":
        from hlm.datasets import _sequences as sequences

        if path.suffix.lower() in (".rda", ".rdata", ".rds"):  # StatLog DNA's indicator columns
            from hlm.datasets import _readers as readers

            frame = readers.read_rda(path)
            labels = (_labels(readers.labels_to_str(frame.pop(label_column).to_numpy(dtype=object)))
                      if label_column and label_column in frame.columns else None)
            try:
                objects = sequences.decode_indicators(frame.astype(int).to_numpy(), where=str(path))
            except (TypeError, ValueError):
                raise DataError(f"{path}: the indicator columns must hold 0 and 1 only") from None
            ids = [str(i) for i in frame.index]
            sequences.check_sequences(ids, objects, where=str(path))
            return ids, objects, labels
        ids, objects, labels = sequences.read_fasta(path, labels_required=False,
                                                    alphabet=alphabet or sequences.DNA_ALPHABET)
        return ids, objects, _labels(labels)
    if kind == "vectors":
        return _vectors(path, features or [], label_column, header)
    if kind == "categorical":
        return _records(path, categories or {}, label_column, na_value, header)
    raise DataError(f"{path}: new objects of kind {kind} are given by their distances to the reference objects "
                    "(--distances), not as raw objects")


def _labels(labels) -> list | None:
    labels = [str(x) if x not in (None, "") else None for x in labels]
    return labels if any(x is not None for x in labels) else None


def _table(path: Path, features: list[str], header: bool = True):
    """(frame, ids) of a record file holding the model's ``features``."""
    from hlm.datasets import _readers as readers

    frame = (readers.read_rda(path) if path.suffix.lower() in (".rda", ".rdata", ".rds")
             else readers.read_table(path, header=header))
    missing = [c for c in features if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: no feature column {missing[0]!r} (the model's features: {', '.join(features)})")
    if "id" in frame.columns:
        ids = [str(i) for i in frame["id"]]
    elif frame.index.dtype == object:
        ids = [str(i) for i in frame.index]
    else:
        ids = [str(i + 1) for i in range(len(frame))]
    seen = set()
    for i in ids:
        if i in seen:
            raise DataError(f"{path}: object id {i!r} appears twice")
        seen.add(i)
    return frame, ids


def _file_labels(frame, label_column):
    from hlm.datasets import _readers as readers

    if label_column and label_column in frame.columns:
        return _labels(readers.labels_to_str(frame[label_column].to_numpy(dtype=object)))
    return None


def _records(path: Path, categories: dict, label_column: str | None, na_value: str | None, header: bool = True):
    features = list(categories)
    frame, ids = _table(path, features, header)
    codes = np.empty((len(frame), len(features)), dtype=np.int64)
    for j, column in enumerate(features):
        index = {v: k for k, v in enumerate(categories[column])}
        for i, value in enumerate(frame[column].astype(object).tolist()):
            cell = na_value if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)
            if cell not in index:
                raise DataError(f"{path}, row {i + 1} (id {ids[i]!r}): column {column!r} holds {value!r}, not one "
                                f"of the training values ({', '.join(categories[column])})")
            codes[i, j] = index[cell]
    return ids, codes, _file_labels(frame, label_column)


def _vectors(path: Path, features: list[str], label_column: str | None, header: bool = True):
    frame, ids = _table(path, features, header)
    X = np.empty((len(frame), len(features)))
    for j, column in enumerate(features):
        for i, value in enumerate(frame[column].tolist()):
            try:
                X[i, j] = float(str(value)) if not isinstance(value, (int, float)) else float(value)
            except ValueError:
                raise DataError(f"{path}, row {i + 1} (id {ids[i]!r}): column {column!r} holds {value!r}, "
                                "not a number") from None
    bad = np.argwhere(~np.isfinite(X))
    if len(bad):
        i, j = bad[0]
        raise DataError(f"{path}, row {i + 1} (id {ids[i]!r}): column {features[j]!r} is missing or not finite")
    return ids, X, _file_labels(frame, label_column)
