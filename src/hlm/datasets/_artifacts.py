"""Parquet artifacts of the pipeline, written atomically.

Every artifact is written to a temporary file in the destination folder and
then renamed over the destination, so a killed job never leaves a
half-written file behind. The file gets the mode a plain ``open(path, "w")``
would give under the current umask (a group sharing the results folder can
read it), and its writer holds a lock on the temporary file, so that
:func:`remove_stale_temps` removes only the temporaries of killed writers.
Nothing here reads or writes pickles.

The distance artifact is two files. ``results/distances/{dataset}.parquet`` has
one row per object: ``id`` (string) and ``label`` (string); data sets of
``kind: vectors`` keep their feature vectors in ``vectors`` (list<double>).
Beside it, ``{dataset}.npy`` holds its N x N matrices, stacked (k, N, N),
float64 or, when the run asks for it (config ``distance_dtype``), float32 (the
metadata's ``dtype``), in the order the metadata's ``matrices`` lists them: ``distances``
(the final distance matrix) and, for data sets that ship a similarity,
``similarities`` unconverted (row i = psi(x_i, .)), for the compared methods
(spec 4.2: use the native similarity, never a round trip through a distance).
A job memory-maps the ``.npy`` and reads only the blocks it slices (a fit
part, a test part), not the whole matrix; :func:`take` returns them as
float64 whatever the stored type, so every method computes in float64. A data set whose distance uses the
class labels (metadata ``uses_labels``: House Votes' VDM) has no matrix (k = 0):
it keeps its records as integer codes in ``records`` (list<int64>), and the
evaluation builds the distances per fit set from the fit set's labels only
(``hlm.distances._vdm``). The Parquet's schema metadata (key ``hlm``)
is a JSON object recording the source, the conversion and the shape. An
artifact of the earlier layout (the matrices as list<double> columns of the
Parquet, no ``.npy``) is still read.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hlm.base._blocks import row_blocks
from hlm.errors import DataError

METADATA_KEY = b"hlm"


#: temporaries of :func:`atomic_path`: ``.{name}.XXXXXXXX.tmp`` (8 random hex digits)
TEMP_PATTERN = re.compile(r"^\..+\.[0-9a-f]{8}\.tmp$")
#: a temporary younger than this is never removed: its writer may not have locked it yet
STALE_AFTER_SECONDS = 5.0


def _create_temp(path: Path) -> tuple[int, Path]:
    """Create ``.{name}.XXXXXXXX.tmp`` beside ``path`` as ``open(path, "w")`` would: mode 0o666
    less the umask (and any default ACL), unlike ``mkstemp``'s 0600. Returns (fd, temp path)."""
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name}")  # pragma: no cover


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched.
    The result has the mode a new file gets under the umask. The temporary stays
    locked (``flock``) while it is written: a killed writer releases the lock,
    which tells :func:`remove_stale_temps` that it is left over.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temp(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # blocks only while remove_stale_temps looks at it
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        os.close(fd)  # releases the lock


def remove_stale_temps(root: str | os.PathLike, min_age: float = STALE_AFTER_SECONDS) -> list[Path]:
    """Remove the temporaries of :func:`atomic_path` under ``root`` that killed writers left behind.

    A temporary is removed only if no process holds its lock (its writer is dead)
    and it was last modified at least ``min_age`` seconds ago (a writer locks it
    right after creating it). Snakemake locks output files, not the working
    directory: a second Snakemake run with other targets may be writing in
    ``results/`` at the same time, and the lock keeps its temporaries. Returns
    the removed paths.
    """
    removed = []
    root = Path(root)
    if not root.is_dir():
        return removed
    now = time.time()
    for dirpath, _, names in os.walk(root):
        for name in names:
            if not TEMP_PATTERN.match(name):
                continue
            tmp = Path(dirpath) / name
            try:
                fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:  # renamed or removed meanwhile, or not a file we can open
                continue
            try:
                if now - os.fstat(fd).st_mtime < min_age:  # before locking: a new writer must get its lock
                    continue
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.unlink(tmp)
                removed.append(tmp)
            except OSError:  # locked: a live writer owns it
                continue
            finally:
                os.close(fd)
    return sorted(removed)


def write_table(table: pa.Table, path: str | os.PathLike) -> None:
    """Write a pyarrow table to Parquet atomically."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def write_frame(frame, path: str | os.PathLike, metadata: dict | None = None) -> None:
    """Write a pandas DataFrame to Parquet atomically (index dropped).

    ``metadata`` (JSON-serialisable) is stored in the schema under key ``hlm``.
    """
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata is not None:
        table = table.replace_schema_metadata(
            {**(table.schema.metadata or {}), METADATA_KEY: json.dumps(metadata).encode()}
        )
    write_table(table, path)


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write a text file atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def read_metadata(path: str | os.PathLike) -> dict:
    """The ``hlm`` JSON metadata of a Parquet artifact ({} if absent)."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(METADATA_KEY)
    return json.loads(raw) if raw else {}


@dataclass
class DistanceArtifact:
    """The preprocessed data set: ids, labels and the final distance matrix (or, for a distance
    that uses the labels, the records it is built from per fit set).

    What :func:`hlm.datasets.prepare_dataset` makes of a registry entry (paper section 5.2) and
    :func:`write_distances` stores as ``results/distances/{dataset}.parquet`` with its ``.npy`` (module
    docstring). A data set whose distance uses the labels (House Votes' VDM) keeps ``records`` and no
    matrix (beyond-the-paper spec, section 4).

    Attributes
    ----------
    ids : ndarray of shape (N,), str
        The objects' ids.
    labels : ndarray of shape (N,), str
        Their class labels.
    distances : ndarray of shape (N, N), float64, or None
        The final distance matrix (symmetric, zero diagonal); None when the distance uses the labels
        (``records`` instead). A read-only memory map when read by :func:`read_distances`.
    metadata : dict, default {}
        The source, its SHA-256, the conversion (``to_distance``, ``upper_bound``, ``symmetrized``,
        ``distance``), ``class_counts``, ... (JSON-serialisable).
    similarities : ndarray of shape (N, N) or None, default None
        The native similarity, unconverted (row i = psi(x_i, .)), if the data set has one.
    vectors : ndarray of shape (N, p) or None, default None
        The feature vectors, for kind vectors (unstandardised).
    records : ndarray of shape (N, F), int64, or None, default None
        Category codes, for a distance that uses labels (the VDM is built per fit set from them).
    n : int
        Property: the number of objects.
    conversion : str
        Property: how the distances were obtained (see :attr:`conversion`).

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.datasets import DistanceArtifact
    >>> artifact = DistanceArtifact(ids=np.array(["x", "y", "z"]), labels=np.array(["a", "a", "b"]),
    ...                             distances=np.array([[0.0, 0.2, 0.8], [0.2, 0.0, 0.6], [0.8, 0.6, 0.0]]),
    ...                             metadata={"to_distance": "bound_minus", "symmetrized": True})
    >>> artifact.n, artifact.conversion
    (3, 'bound_minus+symmetrized')
    """

    ids: np.ndarray  # (N,) str
    labels: np.ndarray  # (N,) str
    distances: np.ndarray | None  # (N, N) float64; None when the distance uses labels (records instead)
    metadata: dict = field(default_factory=dict)
    similarities: np.ndarray | None = None  # (N, N) native similarity, if the data set has one
    vectors: np.ndarray | None = None  # (N, p) feature vectors, for kind: vectors
    records: np.ndarray | None = None  # (N, F) int64 category codes, for a distance that uses labels

    @property
    def n(self) -> int:
        """The number of objects N (``len(ids)``)."""
        return len(self.ids)

    @property
    def conversion(self) -> str:
        """How the distances were obtained: 'bound_minus', 'euclidean', 'identity+symmetrized', ...

        'euclidean (standardized)': on features z-scored with every object's mean and sd.
        'vdm': built per fit set from its labels only (``records``).
        """
        m = self.metadata
        label = m.get("to_distance") or m.get("distance") or "unknown"
        if m.get("standardize"):  # kind vectors: z-scores of all objects (data/README.md)
            label += " (standardized)"
        if m.get("symmetrized"):
            label += "+symmetrized"
        return label


#: the matrices an artifact may hold, in the order of the ``.npy``'s first axis
MATRICES = ("distances", "similarities")
#: the types the ``.npy`` may store its matrices in (config ``distance_dtype``)
STORAGE_DTYPES = ("float64", "float32")


def matrix_path(path: str | os.PathLike) -> Path:
    """The ``.npy`` beside a distance artifact's Parquet: its N x N matrices, stacked (k, N, N)."""
    return Path(path).with_suffix(".npy")


def write_distances(artifact: DistanceArtifact, path: str | os.PathLike, dtype: str = "float64") -> None:
    """Write a distance artifact atomically: the Parquet at ``path`` (ids, labels, vectors or records) and its
    matrices in :func:`matrix_path` (written first, each file by :func:`atomic_path`), stored as ``dtype``
    (float64, or float32: half the file; a finite value beyond float32's range is an error, not inf; one
    below about 1e-38 becomes subnormal or 0, as numpy's cast makes it).

    Parameters
    ----------
    artifact : DistanceArtifact
        The artifact: N ids and labels, and a distance matrix or (for a distance that uses labels) records.
    path : str or PathLike
        The Parquet file to write (``results/distances/{dataset}.parquet``); the matrices go to the ``.npy``
        beside it, stacked (k, N, N) in the order the metadata's ``matrices`` lists them.
    dtype : {"float64", "float32"}, default "float64"
        The storage type of the matrices (config ``distance_dtype``); reading gives float64 blocks either way.

    Returns
    -------
    None

    Raises
    ------
    DataError
        For another ``dtype``, labels, matrices, vectors or records that do not match the N ids, an artifact
        with neither distances nor records, or (float32) a finite value beyond float32's range.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from hlm.datasets import DistanceArtifact, read_distances, write_distances
    >>> artifact = DistanceArtifact(ids=np.array(["x", "y", "z"]), labels=np.array(["a", "a", "b"]),
    ...                             distances=np.array([[0.0, 1, 4], [1, 0, 2], [4, 2, 0]]),
    ...                             metadata={"dataset": "toy", "to_distance": "identity"})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_distances(artifact, Path(tmp) / "toy.parquet", dtype="float32")
    ...     print(sorted(p.name for p in Path(tmp).iterdir()))
    ...     back = read_distances(Path(tmp) / "toy.parquet")
    ...     print(back.distances.dtype, back.metadata["matrices"], back.metadata["dtype"])
    ['toy.npy', 'toy.parquet']
    float32 ['distances'] float32
    """
    if not isinstance(dtype, str) or dtype not in STORAGE_DTYPES:
        raise DataError(f"{path}: cannot store matrices as {dtype!r}; expected one of {', '.join(STORAGE_DTYPES)}")
    n = len(artifact.ids)
    if len(artifact.labels) != n:
        raise DataError(f"{path}: {len(artifact.labels)} labels do not match {n} ids")
    if artifact.distances is None and artifact.records is None:
        raise DataError(f"{path}: an artifact needs a distance matrix or, for a distance that uses labels, records")
    matrices = {}
    for name in MATRICES:
        M = getattr(artifact, name)
        if M is not None:
            if np.shape(M) != (n, n):
                raise DataError(f"{path}: {name} matrix {np.shape(M)} does not match {n} ids and labels")
            matrices[name] = M
    meta = {**artifact.metadata, **({"shape": [n, n]} if matrices else {}), "matrices": list(matrices),
            "dtype": dtype}  # the .npy's, also when it holds no matrix
    columns = {"id": pa.array([str(i) for i in artifact.ids], pa.string()),
               "label": pa.array([str(y) for y in artifact.labels], pa.string())}
    if artifact.vectors is not None:
        V = np.ascontiguousarray(artifact.vectors, dtype=np.float64)
        if V.ndim != 2 or V.shape[0] != n:
            raise DataError(f"{path}: vectors {V.shape} do not match {n} objects")
        columns["vectors"] = _row_lists(V)
    if artifact.records is not None:
        R = np.ascontiguousarray(artifact.records, dtype=np.int64)
        if R.ndim != 2 or R.shape[0] != n:
            raise DataError(f"{path}: records {R.shape} do not match {n} ids and labels")
        columns["records"] = _row_lists(R)
        meta["records_shape"] = list(R.shape)
    table = pa.table(columns).replace_schema_metadata({METADATA_KEY: json.dumps(meta).encode()})  # fails first
    with atomic_path(matrix_path(path)) as tmp, open(tmp, "wb") as fh:  # by write(): no mapped pages
        np.lib.format.write_array_header_2_0(fh, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                                  "fortran_order": False, "shape": (len(matrices), n, n)})
        for name, M in matrices.items():
            for rows in row_blocks(n, n):  # contiguous rows, a block at a time
                block = np.ascontiguousarray(M[rows], dtype=np.float64)
                with np.errstate(over="ignore"):  # checked below
                    stored = block.astype(dtype, copy=False)
                if dtype != "float64":
                    _check_range(block, stored, path, name, rows.start)
                stored.tofile(fh)
    write_table(table, path)


def _check_range(block: np.ndarray, stored: np.ndarray, path, name: str, first_row: int) -> None:
    """Raise DataError at the first finite value of ``block`` that ``stored`` (its narrower copy) made infinite."""
    lost = np.isinf(stored) & np.isfinite(block)
    if lost.any():
        i, j = np.argwhere(lost)[0]
        raise DataError(f"{path}: {name}[{first_row + i}, {j}] = {block[i, j]:.6g} lies beyond the range of "
                        f"{stored.dtype}; store the matrices as float64 (config distance_dtype)")


def _row_lists(M: np.ndarray) -> pa.ListArray:
    """A matrix as one list<double> per row."""
    n, p = M.shape
    offsets = pa.array(np.arange(0, n * p + 1, p, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(M.ravel()))


def _row_matrix(table: pa.Table, name: str, path, width: int | None, dtype=np.float64) -> np.ndarray | None:
    """The list column ``name`` as an N x width matrix (None if absent)."""
    if name not in table.column_names:
        return None
    n = table.num_rows
    flat = table.column(name).combine_chunks().flatten().to_numpy(zero_copy_only=False)
    p = width if width is not None else (flat.size // n if n else 0)
    if flat.size != n * p:
        raise DataError(f"{path}: column '{name}' does not form a {n} x {p} matrix")
    return np.asarray(flat, dtype=dtype).reshape(n, p)


def read_distances(path: str | os.PathLike) -> DistanceArtifact:
    """Read a distance artifact written by :func:`write_distances`. Its matrices are read-only memory maps
    of the ``.npy``: slicing a block reads that block (and a matrix is never loaded whole by reading it).

    An artifact of the earlier layout (the matrices as list<double> columns of the Parquet, no ``.npy``) is
    read too (module docstring).

    Parameters
    ----------
    path : str or PathLike
        The artifact's Parquet file; its matrices are in the ``.npy`` beside it.

    Returns
    -------
    DistanceArtifact
        ``ids`` and ``labels`` as str arrays; ``distances`` and ``similarities`` as read-only memory maps
        (N, N) of the stored type (float64 or float32; :func:`take` returns float64 blocks), or None;
        ``vectors`` (N, p) float64 and ``records`` (N, F) int64, or None; the ``metadata`` written
        (with ``matrices`` and ``dtype``, and ``shape`` when it holds a matrix).

    Raises
    ------
    DataError
        If the Parquet or the ``.npy`` cannot be read, lacks a column, or does not match the metadata.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from hlm.datasets import DistanceArtifact, read_distances, write_distances
    >>> S = np.array([[1.0, 0.8, 0.2], [0.8, 1.0, 0.4], [0.2, 0.4, 1.0]])
    >>> artifact = DistanceArtifact(ids=np.array(["x", "y", "z"]), labels=np.array(["a", "a", "b"]),
    ...                             distances=1 - S, similarities=S, metadata={"to_distance": "bound_minus"})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_distances(artifact, Path(tmp) / "toy.parquet")
    ...     back = read_distances(Path(tmp) / "toy.parquet")
    ...     print(back.ids, back.labels, back.conversion)
    ...     print(np.array(back.distances).round(3))
    ...     print(back.metadata["shape"], back.metadata["matrices"])
    ['x' 'y' 'z'] ['a' 'a' 'b'] bound_minus
    [[0.  0.2 0.8]
     [0.2 0.  0.6]
     [0.8 0.6 0. ]]
    [3, 3] ['distances', 'similarities']
    """
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise DataError(f"{path}: cannot read distance artifact ({exc})") from None
    meta = json.loads((table.schema.metadata or {}).get(METADATA_KEY, b"{}"))
    missing = {"id", "label"} - set(table.column_names)
    if missing:
        raise DataError(f"{path}: distance artifact lacks column(s) {sorted(missing)}")
    earlier = "matrices" not in meta  # the earlier layout: the matrices as list columns, no .npy
    if earlier and not {"distances", "records"} & set(table.column_names):
        raise DataError(f"{path}: distance artifact lacks column(s) ['distances'] (and lists no matrices)")
    n = table.num_rows
    if earlier:
        matrices = {name: _row_matrix(table, name, path, n) for name in MATRICES}
    else:
        matrices = dict.fromkeys(MATRICES)
        matrices.update(zip(meta["matrices"], _read_matrices(path, len(meta["matrices"]), n,
                                                             meta.get("dtype", "float64"))))
    return DistanceArtifact(
        ids=np.asarray(table.column("id").to_pylist(), dtype=object).astype(str),
        labels=np.asarray(table.column("label").to_pylist(), dtype=object).astype(str),
        distances=matrices["distances"],
        metadata=meta,
        similarities=matrices["similarities"],
        vectors=_row_matrix(table, "vectors", path, None),
        records=_row_matrix(table, "records", path, None, np.int64),
    )


def _read_matrices(path, k: int, n: int, dtype: str) -> list[np.ndarray]:
    """The k n x n matrices (``dtype``: float64 or float32) of the artifact at ``path``, each memory-mapped
    read-only (see :func:`take`)."""
    npy = matrix_path(path)
    try:
        stacked = np.load(npy, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"{npy}: cannot read the matrices of {path} ({_oneline(exc) or type(exc).__name__})") from None
    if not stacked.flags.c_contiguous:  # Fortran order: the maps below read rows
        raise DataError(f"{npy}: holds its matrices in Fortran order; {path} needs them in C order")
    if dtype not in STORAGE_DTYPES or stacked.dtype != np.dtype(dtype) or stacked.shape != (k, n, n):
        raise DataError(f"{npy}: holds {stacked.dtype} {tuple(stacked.shape)}; {path} lists {k} matrices of "
                        f"{n} x {n} {dtype}")
    out = []
    for i in range(k):
        offset = stacked.offset + i * n * n * stacked.itemsize
        M = np.memmap(npy, dtype=stacked.dtype, mode="r", offset=offset, shape=(n, n))
        M.source = (str(npy), offset)  # the whole matrix: views and slices do not carry it
        out.append(M)
    return out


def take(M: np.ndarray, rows, cols=None) -> np.ndarray:
    """``M[np.ix_(rows, cols)]`` (``M[rows]`` without ``cols``), in memory: float64 from a matrix of
    :func:`read_distances` whatever its storage (float32 too from an array), of its own type from another array.

    From a matrix of :func:`read_distances`, the rows are read in chunks of about ``TAKE_CHUNK_BYTES``, each
    through a map of its own that is closed after it: the process then holds the block it asked for, not the
    pages of the file it read (with one map, every page read stays resident until the map is closed)."""
    rows = _indices(rows, M.shape[0])
    cols = None if cols is None else _indices(cols, M.shape[1])
    source = M.__dict__.get("source") if isinstance(M, np.memmap) else None
    if source is None:
        block = M[np.ix_(rows, cols)] if cols is not None else M[rows]
        return block if block.dtype != np.float32 else block.astype(np.float64)
    path, offset = source
    n_cols, itemsize = M.shape[1], M.dtype.itemsize
    out = np.empty((len(rows), n_cols if cols is None else len(cols)))
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    step = max(1, TAKE_CHUNK_BYTES // (itemsize * n_cols))
    for lo in range(0, len(rows), step):
        chunk = ordered[lo:lo + step]
        first = int(chunk[0])
        part = np.memmap(path, dtype=M.dtype, mode="r", offset=offset + first * itemsize * n_cols,
                         shape=(int(chunk[-1]) - first + 1, n_cols))
        block = part[chunk - first]  # a copy: the map closes with ``part``
        out[order[lo:lo + step]] = block if cols is None else block[:, cols]
        del part, block
    return out


def _indices(index, n: int) -> np.ndarray:
    """Integer positions in [-n, n) as non-negative intp (negative ones count from the end, as in numpy);
    out of range raises IndexError as numpy does, and so do floats and, unlike numpy, boolean masks."""
    index = np.asarray(index)
    if index.size == 0:
        return np.zeros(index.shape, dtype=np.intp)
    if index.dtype.kind not in "iu":
        raise IndexError(f"take: positions must be integers, not {index.dtype}")
    if index.min() < -n or index.max() >= n:
        raise IndexError(f"take: positions must lie in [-{n}, {n})")
    return np.where(index < 0, index + n, index).astype(np.intp)


#: bytes of rows :func:`take` reads through one map
TAKE_CHUNK_BYTES = 64 << 20


def _oneline(exc: BaseException) -> str:
    return " ".join(str(exc).split())
