"""Readers for the raw data formats of the registry (paper section 5.2 data).

Every reader takes the file ``path`` and an optional message prefix
``where`` (default: the path) and raises a one-line
:class:`~hlm.errors.DataError` for a missing, unreadable or malformed file.
Labels are returned as object arrays of ``str`` with ``None`` for a missing
label; integral numeric labels become ``"1"``, ``"2"``, ... (the UW .mat
files store 1-based integer classes). No reader unpickles anything.

Layout rules
------------
* csv matrix: a plain numeric N x N table without header, OR (when any cell
  of the first row is not a number, e.g. empty or ``id``) a header row of
  ids plus a first column of the same ids in the same order, as
  ``pandas.DataFrame.to_csv()`` writes a labelled square matrix.
* npy: a numeric N x N array (``allow_pickle=False``).
* parquet matrix: our distance artifact (columns ``id``, ``label``, its
  matrix in the ``.npy`` beside it, ``hlm.datasets._artifacts``; or the earlier
  layout, ``distances`` = list of N doubles), OR a square numeric table whose
  columns are the objects, with an optional string column ``id``.
* labels file: ``.npy`` (1-D array), ``.parquet`` (column ``label``, optional
  ``id``), or text/CSV: either a header row containing ``label`` (and
  optionally ``id``; other columns are ignored) or a single column without
  header, one label per line. Empty cells and ``NA``/``NaN`` are missing.
* record tables (csv/parquet with ``kind: vectors``/``categorical``): a header
  row; a column named ``id`` (if any) gives the ids.
* every text file is UTF-8 and comma-separated: another encoding is an error
  naming the line and byte, a tab- or ';'-separated file one naming the
  delimiter found (``hlm.datasets._textfiles``).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from hlm.datasets._textfiles import delimiter_error, other_delimiter, read_text
from hlm.errors import DataError


def _where(path, where: str | None) -> str:
    return where if where else str(path)


def _exists(path, where: str | None) -> Path:
    p = Path(path)
    if not p.exists():
        raise DataError(f"{_where(path, where)}: file not found")
    if p.is_dir():
        raise DataError(f"{_where(path, where)}: is a directory, not a file")
    return p


def _oneline(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:160] + "...") if len(text) > 160 else text or type(exc).__name__


def labels_to_str(values) -> np.ndarray:
    """Labels as an object array of str; integral numbers -> '1'; NaN/None -> None."""
    out = []
    for x in np.asarray(values, dtype=object).ravel():
        if isinstance(x, np.generic):
            x = x.item()
        if x is None or (isinstance(x, float) and math.isnan(x)):
            out.append(None)
        elif isinstance(x, bytes):
            out.append(x.decode().strip())
        elif isinstance(x, float) and x.is_integer():
            out.append(str(int(x)))
        elif isinstance(x, np.ndarray):  # MATLAB cell entry
            out.append(labels_to_str(x)[0] if x.size == 1 else str(x))
        else:
            out.append(str(x).strip())
    return np.asarray(out, dtype=object)


def read_mat(path, matrix_key: str, labels_key: str, *, where: str | None = None):
    """Read a square matrix and its labels from a MATLAB .mat file (v4-v7.2).

    Returns ``(M float64, labels object array of str)``.
    """
    import scipy.io
    import scipy.sparse

    w = _where(path, where)
    p = _exists(path, where)
    try:
        data = scipy.io.loadmat(p)
    except NotImplementedError:
        raise DataError(f"{w}: MATLAB v7.3 (HDF5) files are not supported; save with -v7") from None
    except Exception as exc:  # scipy raises many types for a corrupt file
        raise DataError(f"{w}: cannot read .mat file ({_oneline(exc)})") from None
    keys = sorted(k for k in data if not k.startswith("__"))
    for key in (matrix_key, labels_key):
        if key not in data:
            raise DataError(f"{w}: key '{key}' not found; keys are: {', '.join(keys) or '(none)'}")
    M = data[matrix_key]
    if scipy.sparse.issparse(M):
        M = M.toarray()
    M = np.asarray(M)
    if M.dtype.kind not in "biuf":
        raise DataError(f"{w}: variable '{matrix_key}' is not a numeric matrix (MATLAB {M.dtype})")
    y = np.asarray(data[labels_key])
    if y.ndim > 2 or (y.ndim == 2 and min(y.shape) > 1):
        raise DataError(f"{w}: labels variable '{labels_key}' is not a vector (shape {y.shape})")
    return M.astype(np.float64), labels_to_str(y.ravel())


def read_rda(path, *, object: str | None = None, where: str | None = None) -> pd.DataFrame:
    """Read a data frame from an R data file (.rda/.RData/.rds) with pyreadr.

    The object is the file's only one, or the one named by ``object``.
    """
    import pyreadr

    w = _where(path, where)
    p = _exists(path, where)
    try:
        objects = pyreadr.read_r(str(p))
    except Exception as exc:  # pyreadr/librdata errors
        raise DataError(f"{w}: cannot read R data file ({_oneline(exc)})") from None
    names = [str(k) for k in objects.keys()]
    if object is None:
        if len(objects) != 1:
            raise DataError(
                f"{w}: file holds {len(objects)} objects ({', '.join(names) or 'none'}); "
                "name one with field 'object'"
            )
        return next(iter(objects.values()))
    if object not in objects:
        raise DataError(f"{w}: object '{object}' not found; objects are: {', '.join(names) or '(none)'}")
    frame = objects[object]
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{w}: object '{object}' is not a data frame")
    return frame


def _read_csv(p: Path, w: str, what: str = "CSV", *, single_column: bool = False, **kwargs) -> pd.DataFrame:
    """pandas.read_csv of a UTF-8 text file with every failure turned into a one-line DataError.

    A first line in tabs or ';' instead of commas is an error saying which delimiter was
    found (with ``single_column``, only when it names a 'label' column or every line has it).
    """
    text = read_text(p, w)
    lines = text.splitlines()
    delimiter = other_delimiter(lines[0]) if lines else None
    if delimiter and single_column:
        head = [x.strip().lower() for x in lines[0].split(delimiter)]
        if "label" not in head and not all(delimiter in line for line in lines if line.strip()):
            delimiter = None  # one label per line that happens to hold the character
    if delimiter:
        raise delimiter_error(w, delimiter)
    try:
        return pd.read_csv(io.StringIO(text), skipinitialspace=True, **kwargs)
    except pd.errors.EmptyDataError:
        raise DataError(f"{w}: {'labels file' if what != 'CSV' else 'file'} is empty") from None
    except (pd.errors.ParserError, OSError) as exc:
        raise DataError(f"{w}: cannot parse {what} ({_oneline(exc)})") from None


def _numeric_cells(frame: pd.DataFrame, w: str, row0: int = 0, col0: int = 0) -> np.ndarray:
    """Parse a frame of strings as float64, naming the first bad cell."""
    values = frame.to_numpy(dtype=object)
    out = np.empty(values.shape, dtype=np.float64)
    for (i, j), x in np.ndenumerate(values):
        try:
            out[i, j] = float(x) if x is not None and str(x).strip() != "" else np.nan
        except ValueError:
            raise DataError(
                f"{w}: non-numeric cell {str(x)!r} at row {i + row0 + 1}, column {j + col0 + 1}"
            ) from None
    return out


def _is_number(x) -> bool:
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return str(x).strip() != ""


def read_csv_matrix(path, *, where: str | None = None):
    """Read a square matrix from CSV (layout rule: module docstring).

    Returns ``(M float64, ids or None)``.
    """
    w = _where(path, where)
    p = _exists(path, where)
    raw = _read_csv(p, w, header=None, dtype=str, keep_default_na=False)
    first = raw.iloc[0].tolist()
    if all(_is_number(x) for x in first):
        return _numeric_cells(raw, w), None
    ids = raw.iloc[1:, 0].str.strip().to_numpy(dtype=object)
    header = [str(x).strip() for x in first[1:]]
    if header != [str(x) for x in ids]:
        raise DataError(
            f"{w}: header row ({len(header)} names) does not list the row ids "
            f"({len(ids)} rows) in the same order"
        )
    return _numeric_cells(raw.iloc[1:, 1:], w, row0=1, col0=1), ids.astype(str)


def read_npy(path, *, where: str | None = None) -> np.ndarray:
    """Read a numeric array from a .npy file (no pickles)."""
    w = _where(path, where)
    p = _exists(path, where)
    with open(p, "rb") as fh:
        if fh.read(6) != b"\x93NUMPY":
            raise DataError(f"{w}: cannot read .npy file (not in NumPy .npy format)")
    try:
        M = np.load(p, allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise DataError(f"{w}: array holds Python objects; pickles are not read") from None
        raise DataError(f"{w}: cannot read .npy file ({_oneline(exc)})") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"{w}: cannot read .npy file ({_oneline(exc)})") from None
    if not isinstance(M, np.ndarray):
        raise DataError(f"{w}: expected a single array (.npy), not an archive")
    return M


def _read_parquet(p: Path, w: str) -> pa.Table:
    try:
        return pq.read_table(p)
    except (OSError, pa.ArrowException) as exc:
        raise DataError(f"{w}: cannot read Parquet file ({_oneline(exc)})") from None


def read_parquet_matrix(path, *, where: str | None = None):
    """Read a square matrix from Parquet (layout rule: module docstring).

    Returns ``(M float64, ids or None, labels or None)``; labels only for the
    distance artifact layout.
    """
    w = _where(path, where)
    table = _read_parquet(_exists(path, where), w)
    cols = table.column_names
    if "matrices" in _artifact_metadata(table):  # our artifact: its matrix is in the .npy beside it
        from hlm.datasets._artifacts import read_distances

        art = read_distances(path)
        if art.distances is None:
            raise DataError(f"{w}: the artifact has no distance matrix (its distance is built per training part)")
        return np.array(art.distances, dtype=np.float64), art.ids.astype(object), labels_to_str(art.labels.tolist())
    if "distances" in cols and pa.types.is_list(table.schema.field("distances").type):
        missing = {"id", "label"} - set(cols)
        if missing:
            raise DataError(f"{w}: distance artifact lacks column(s) {', '.join(sorted(missing))}")
        n = table.num_rows
        rows = table.column("distances").to_pylist()
        if any(r is None or len(r) != n for r in rows):
            raise DataError(f"{w}: 'distances' rows do not all have {n} values")
        M = np.array(rows, dtype=np.float64).reshape(n, n)
        ids = table.column("id").to_pylist()
        return M, np.asarray(ids, dtype=object), labels_to_str(table.column("label").to_pylist())
    frame = table.to_pandas()
    ids = None
    if "id" in frame.columns:
        ids = frame.pop("id").to_numpy(dtype=object)
    bad = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        raise DataError(f"{w}: non-numeric column(s) {', '.join(map(str, bad[:3]))} in matrix table")
    return frame.to_numpy(dtype=np.float64), ids, None


def _artifact_metadata(table: pa.Table) -> dict:
    """The ``hlm`` metadata of a Parquet table that carries it (our artifacts), else {}."""
    raw = (table.schema.metadata or {}).get(b"hlm")
    try:
        meta = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def read_table(path, *, where: str | None = None, header: bool = True) -> pd.DataFrame:
    """Read a record table (CSV with header, or Parquet) as a DataFrame. ``header=False``: a CSV without a
    header row (as KEEL's and many UCI files), its columns named ``x1``, ``x2``, ... in file order."""
    w = _where(path, where)
    p = _exists(path, where)
    if p.suffix.lower() in (".parquet", ".pq"):
        return _read_parquet(p, w).to_pandas()
    if not header:
        frame = _read_csv(p, w, header=None)
        frame.columns = [f"x{k}" for k in range(1, frame.shape[1] + 1)]
        return frame
    return _read_csv(p, w)


def read_labels_file(path, *, where: str | None = None):
    """Read class labels (layout rule: module docstring).

    Returns ``(labels object array of str/None, ids or None)``.
    """
    w = _where(path, where)
    p = _exists(path, where)
    suffix = p.suffix.lower()
    if suffix == ".npy":
        y = read_npy(p, where=w)
        if y.ndim != 1 and not (y.ndim == 2 and min(y.shape) == 1):
            raise DataError(f"{w}: labels array is not 1-D (shape {y.shape})")
        return labels_to_str(y.ravel()), None
    if suffix in (".parquet", ".pq"):
        frame = _read_parquet(p, w).to_pandas()
        if "label" not in frame.columns and frame.shape[1] != 1:
            raise DataError(f"{w}: labels table has no 'label' column (columns: {', '.join(map(str, frame.columns))})")
        col = frame["label"] if "label" in frame.columns else frame.iloc[:, 0]
        ids = frame["id"].to_numpy(dtype=object) if "id" in frame.columns else None
        return labels_to_str(col.to_numpy(dtype=object)), ids
    raw = _read_csv(p, w, "labels file", single_column=True, header=None, dtype=str, skip_blank_lines=False)
    while len(raw) and raw.iloc[-1].isna().all():  # trailing blank lines
        raw = raw.iloc[:-1]
    head = [str(x).strip().lower() for x in raw.iloc[0].tolist()] if len(raw) else []
    if "label" in head:
        frame = raw.iloc[1:]
        y = frame.iloc[:, head.index("label")].to_numpy(dtype=object)
        ids = frame.iloc[:, head.index("id")].to_numpy(dtype=object) if "id" in head else None
        return labels_to_str(y), ids
    if raw.shape[1] != 1:
        raise DataError(
            f"{w}: labels file has {raw.shape[1]} columns but no header row naming "
            "the 'label' column (and optionally 'id')"
        )
    return labels_to_str(raw.iloc[:, 0].to_numpy(dtype=object)), None
