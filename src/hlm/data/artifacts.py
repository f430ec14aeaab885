"""Parquet artifacts of the pipeline, written atomically.

Every artifact is written to a temporary file in the destination folder and
then renamed over the destination, so a killed job never leaves a
half-written file behind. The file gets the mode a plain ``open(path, "w")``
would give under the current umask (a group sharing the results folder can
read it), and its writer holds a lock on the temporary file, so that
:func:`remove_stale_temps` removes only the temporaries of killed writers.
Nothing here reads or writes pickles.

The distance artifact (``results/distances/{dataset}.parquet``) has one row
per object: ``id`` (string), ``label`` (string) and ``distances``
(list<double>, that object's row of the final N x N distance matrix). Data
sets that ship a similarity also keep it, unconverted, in ``similarities``
(list<double>, row i = psi(x_i, .)), for the compared methods (spec 4.2: use
the native similarity, never a round trip through a distance); data sets of
``kind: vectors`` keep their feature vectors in ``vectors``. A data set
whose distance uses the class labels (metadata ``uses_labels``: House Votes'
VDM) has no ``distances``: it keeps its records as integer codes in
``records`` (list<int64>), and the evaluation builds the distances per fit set
from the fit set's labels only (``hlm.models.label_distances``). Its
schema metadata (key ``hlm``) is a JSON object recording the source, the
conversion and the shape.
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
    that uses the labels, the records it is built from per fit set)."""

    ids: np.ndarray  # (N,) str
    labels: np.ndarray  # (N,) str
    distances: np.ndarray | None  # (N, N) float64; None when the distance uses labels (records instead)
    metadata: dict = field(default_factory=dict)
    similarities: np.ndarray | None = None  # (N, N) native similarity, if the data set has one
    vectors: np.ndarray | None = None  # (N, p) feature vectors, for kind: vectors
    records: np.ndarray | None = None  # (N, F) int64 category codes, for a distance that uses labels

    @property
    def n(self) -> int:
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


DISTANCE_SCHEMA = pa.schema(
    [("id", pa.string()), ("label", pa.string()), ("distances", pa.list_(pa.float64()))]
)


def write_distances(artifact: DistanceArtifact, path: str | os.PathLike) -> None:
    """Write a distance artifact (one row per object) atomically."""
    if artifact.distances is None:
        return _write_records(artifact, path)
    D = np.ascontiguousarray(artifact.distances, dtype=np.float64)
    n = D.shape[0]
    if D.shape != (n, n) or len(artifact.ids) != n or len(artifact.labels) != n:
        raise DataError(
            f"{path}: distance matrix {D.shape} does not match {len(artifact.ids)} ids "
            f"and {len(artifact.labels)} labels"
        )
    if n * n >= 2**31:
        raise DataError(f"{path}: {n} objects exceed the N x N artifact limit (N^2 < 2^31)")
    meta = {**artifact.metadata, "shape": [n, n]}
    columns = {
        "id": pa.array([str(i) for i in artifact.ids], pa.string()),
        "label": pa.array([str(y) for y in artifact.labels], pa.string()),
        "distances": _row_lists(D),
    }
    schema = DISTANCE_SCHEMA
    for name, M, width in (("similarities", artifact.similarities, n), ("vectors", artifact.vectors, None)):
        if M is None:
            continue
        M = np.ascontiguousarray(M, dtype=np.float64)
        if M.ndim != 2 or M.shape[0] != n or (width is not None and M.shape[1] != width):
            raise DataError(f"{path}: {name} {M.shape} do not match {n} objects")
        columns[name] = _row_lists(M)
        schema = schema.append(pa.field(name, pa.list_(pa.float64())))
    table = pa.table(columns, schema=schema.with_metadata({METADATA_KEY: json.dumps(meta).encode()}))
    write_table(table, path)


def _write_records(artifact: DistanceArtifact, path) -> None:
    """A data set whose distance uses labels: ids, labels and the records' codes (no matrix)."""
    R = artifact.records
    if R is None:
        raise DataError(f"{path}: an artifact needs a distance matrix or, for a distance that uses labels, records")
    R = np.ascontiguousarray(R, dtype=np.int64)
    n = len(artifact.ids)
    if R.ndim != 2 or R.shape[0] != n or len(artifact.labels) != n:
        raise DataError(f"{path}: records {R.shape} do not match {n} ids and {len(artifact.labels)} labels")
    meta = {**artifact.metadata, "records_shape": list(R.shape)}
    schema = pa.schema([("id", pa.string()), ("label", pa.string()), ("records", pa.list_(pa.int64()))])
    table = pa.table({"id": pa.array([str(i) for i in artifact.ids], pa.string()),
                      "label": pa.array([str(y) for y in artifact.labels], pa.string()),
                      "records": _row_lists(R)}, schema=schema.with_metadata({METADATA_KEY: json.dumps(meta).encode()}))
    write_table(table, path)


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
    """Read a distance artifact written by :func:`write_distances`."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise DataError(f"{path}: cannot read distance artifact ({exc})") from None
    missing = {"id", "label", "distances"} - set(table.column_names)
    if "records" in table.column_names:  # a distance that uses labels: records instead of a matrix
        missing.discard("distances")
    if missing:
        raise DataError(f"{path}: distance artifact lacks column(s) {sorted(missing)}")
    n = table.num_rows
    meta = json.loads((table.schema.metadata or {}).get(METADATA_KEY, b"{}"))
    return DistanceArtifact(
        ids=np.asarray(table.column("id").to_pylist(), dtype=object).astype(str),
        labels=np.asarray(table.column("label").to_pylist(), dtype=object).astype(str),
        distances=_row_matrix(table, "distances", path, n),
        metadata=meta,
        similarities=_row_matrix(table, "similarities", path, n),
        vectors=_row_matrix(table, "vectors", path, None),
        records=_row_matrix(table, "records", path, None, np.int64),
    )
