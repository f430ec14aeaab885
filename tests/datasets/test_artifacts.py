"""Atomic artifact writes: a writer killed mid-way leaves no file behind, only a temporary that
the next run removes; artifacts get the umask's mode."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hlm.datasets import _artifacts as artifacts
from hlm.datasets._artifacts import (
    DistanceArtifact,
    atomic_path,
    read_distances,
    remove_stale_temps,
    take,
    write_distances,
    write_frame,
    write_text,
)
from hlm.errors import DataError


def test_exception_leaves_no_partial_file(tmp_path):
    target = tmp_path / "out.parquet"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_existing_artifact_survives_failed_rewrite(tmp_path):
    target = tmp_path / "out.parquet"
    write_frame(pd.DataFrame({"a": [1, 2]}), target)
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"garbage")
            raise RuntimeError("boom")
    assert pd.read_parquet(target)["a"].tolist() == [1, 2]


def test_killed_process_leaves_no_destination(tmp_path):
    """SIGKILL while writing: the destination never exists half-written."""
    target = tmp_path / "big.parquet"
    code = textwrap.dedent(f"""
        import time
        from hlm.datasets._artifacts import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            with open(tmp, "wb") as fh:
                fh.write(b"x" * 1000)
                fh.flush()
                print("writing", flush=True)
                time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not target.exists()
    # only the hidden temporary file can remain; no reader takes it for the artifact
    assert all(p.name.startswith(".big.parquet.") for p in tmp_path.iterdir())


@pytest.fixture(params=[0o022, 0o002], ids=["umask022", "umask002"])
def umask(request):
    """Run the test under this umask (restored afterwards)."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_artifacts_get_the_umask_mode(tmp_path, umask):
    """Not mkstemp's 0600: what open(path, "w") gives, so a group sharing results/ can read them."""
    expected = 0o666 & ~umask
    write_frame(pd.DataFrame({"a": [1]}), tmp_path / "a.parquet")
    write_text("x\n", tmp_path / "b.txt")
    with atomic_path(tmp_path / "c.png") as tmp:
        tmp.write_bytes(b"png")
    (tmp_path / "plain.txt").write_text("y")  # the reference: a plain open(path, "w")
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == {"a.parquet": expected, "b.txt": expected, "c.png": expected, "plain.txt": expected}
    # rewriting an artifact keeps the umask's mode too
    write_frame(pd.DataFrame({"a": [2]}), tmp_path / "a.parquet")
    assert (tmp_path / "a.parquet").stat().st_mode & 0o777 == expected


def _backdate(path, seconds=60):
    t = path.stat().st_mtime - seconds
    os.utime(path, (t, t))


def test_remove_stale_temps(tmp_path):
    """Only our temporaries, only when no writer holds them and they are not brand new."""
    sub = tmp_path / "evaluation/ds"
    sub.mkdir(parents=True)
    stale = [sub / ".knn.parquet.ab12cd9f.tmp", tmp_path / ".error_rates.csv.0123abcd.tmp"]
    young = sub / ".svm.parquet.deadbeef.tmp"
    others = [sub / "knn.parquet", sub / "notes.tmp", sub / ".knn.parquet.tmp", tmp_path / ".x.toolongname.tmp"]
    for p in [*stale, young, *others]:
        p.write_bytes(b"x")
    for p in [*stale, *others]:
        _backdate(p)
    with atomic_path(sub / "live.parquet") as live:  # a writer at work: locked, even if old
        live.write_bytes(b"half")
        _backdate(live)
        assert remove_stale_temps(tmp_path) == sorted(stale)
        assert live.exists()
    assert (sub / "live.parquet").read_bytes() == b"half"
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        [young, *others, sub / "live.parquet"])
    assert remove_stale_temps(tmp_path, min_age=0) == [young]
    assert remove_stale_temps(tmp_path / "missing") == []


def test_temp_of_killed_writer_is_removed(tmp_path):
    """A live writer in another process keeps its temporary; once SIGKILLed, it is stale."""
    target = tmp_path / "big.parquet"
    code = textwrap.dedent(f"""
        import time
        from hlm.datasets._artifacts import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            tmp.write_bytes(b"x" * 1000)
            print(tmp, flush=True)
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        tmp = Path(proc.stdout.readline().strip())
        _backdate(tmp)
        assert remove_stale_temps(tmp_path) == [] and tmp.exists()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert remove_stale_temps(tmp_path) == [tmp] and list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ the distance artifact: Parquet + .npy
def _artifact(rng, n=7, similarities=True):
    X = rng.normal(size=(n, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    return DistanceArtifact(ids=np.array([f"o{i}" for i in range(n)]), labels=np.array(list("ab" * n)[:n]),
                            distances=D, metadata={"dataset": "toy", "distance": "euclidean"},
                            similarities=np.exp(-D) if similarities else None, vectors=X)


def test_distance_artifact_round_trip_memory_maps_its_matrices(tmp_path, umask):
    """The matrices go to the .npy beside the Parquet, stacked; reading gives read-only memory maps whose
    blocks are the written ones, ids, labels, vectors and metadata as written; both files get the umask's mode."""
    art = _artifact(np.random.default_rng(0))
    write_distances(art, tmp_path / "toy.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.npy", "toy.parquet"]
    assert all(p.stat().st_mode & 0o777 == 0o666 & ~umask for p in tmp_path.iterdir())
    back = read_distances(tmp_path / "toy.parquet")
    assert isinstance(back.distances, np.memmap) and not back.distances.flags.writeable
    np.testing.assert_array_equal(back.distances, art.distances)
    np.testing.assert_array_equal(back.similarities, art.similarities)
    np.testing.assert_array_equal(back.vectors, art.vectors)
    fit, test = np.array([4, 0, 2]), np.array([6, 1])
    np.testing.assert_array_equal(back.distances[np.ix_(test, fit)], art.distances[np.ix_(test, fit)])
    assert back.ids.tolist() == art.ids.tolist() and back.labels.tolist() == art.labels.tolist()
    assert back.metadata["matrices"] == ["distances", "similarities"] and back.metadata["distance"] == "euclidean"
    assert np.load(tmp_path / "toy.npy", mmap_mode="r").shape == (2, 7, 7)
    with pytest.raises(ValueError, match="read-only"):
        back.distances[0, 1] = 5.0


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_distance_artifact_of_records_has_no_matrix(tmp_path, dtype):
    """A distance built per training part (VDM): records in the Parquet, an empty (0, N, N) .npy of the run's
    distance_dtype, which reads back."""
    R = np.arange(12).reshape(4, 3)
    write_distances(DistanceArtifact(np.array(list("abcd")), np.array(list("xxyy")), None, {"uses_labels": True},
                                     records=R), tmp_path / "v.parquet", dtype=dtype)
    back = read_distances(tmp_path / "v.parquet")
    assert back.distances is None and back.similarities is None
    np.testing.assert_array_equal(back.records, R)
    assert np.load(tmp_path / "v.npy").shape == (0, 4, 4) and np.load(tmp_path / "v.npy").dtype == dtype


def test_distance_artifact_of_the_earlier_layout_is_read(tmp_path):
    """The earlier layout (the matrix as a list<double> column, no .npy) still reads."""
    D = np.array([[0.0, 1.0], [1.0, 0.0]])
    table = pa.table({"id": ["a", "b"], "label": ["x", "y"],
                      "distances": pa.array([list(r) for r in D], pa.list_(pa.float64()))})
    pq.write_table(table, tmp_path / "old.parquet")
    back = read_distances(tmp_path / "old.parquet")
    np.testing.assert_array_equal(back.distances, D)
    assert back.similarities is None and back.labels.tolist() == ["x", "y"]
    pq.write_table(pa.table({"id": ["a", "b"], "label": ["x", "y"],
                             "records": pa.array([[1, 2], [3, 4]], pa.list_(pa.int64()))}), tmp_path / "rec.parquet")
    back = read_distances(tmp_path / "rec.parquet")
    assert back.distances is None and back.records.tolist() == [[1, 2], [3, 4]]
    pq.write_table(pa.table({"id": ["a"], "label": ["x"]}), tmp_path / "none.parquet")
    with pytest.raises(DataError, match=r"none.parquet: distance artifact lacks column\(s\) \['distances'\]"):
        read_distances(tmp_path / "none.parquet")


def test_distance_artifact_with_a_bad_matrix_file_is_one_line(tmp_path):
    """A missing, truncated or mis-shaped .npy: one line naming the file and the artifact."""
    art = _artifact(np.random.default_rng(1), similarities=False)
    path = tmp_path / "toy.parquet"
    write_distances(art, path)
    (tmp_path / "toy.npy").unlink()
    with pytest.raises(DataError) as exc:
        read_distances(path)
    assert "toy.npy: cannot read the matrices of" in str(exc.value) and "\n" not in str(exc.value)
    np.save(tmp_path / "toy.npy", np.zeros((1, 6, 6)))
    with pytest.raises(DataError, match=r"toy.npy: holds float64 \(1, 6, 6\); .*toy.parquet lists 1 matrices of "
                                        r"7 x 7 float64"):
        read_distances(path)
    np.save(tmp_path / "toy.npy", np.zeros((1, 7, 7), dtype=np.float32))
    with pytest.raises(DataError, match="holds float32"):
        read_distances(path)
    (tmp_path / "toy.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(DataError, match="cannot read the matrices"):
        read_distances(path)
    (tmp_path / "toy.npy").write_bytes(b"")  # numpy raises EOFError here
    with pytest.raises(DataError, match="cannot read the matrices"):
        read_distances(path)
    np.save(tmp_path / "toy.npy", np.asfortranarray(art.distances[None] + np.arange(7)))  # rows would be columns
    with pytest.raises(DataError, match="Fortran order"):
        read_distances(path)
    with pytest.raises(DataError, match="does not match 7 ids"):
        write_distances(DistanceArtifact(art.ids, art.labels, art.distances[:6, :6]), path)


def test_take_reads_blocks_in_chunks_as_fancy_indexing_would(tmp_path, monkeypatch):
    """take() on an artifact's matrix, with chunks of a few rows (rows unsorted, repeated, across chunks), equals
    numpy's fancy indexing; on a plain array, or a view of the map, it is fancy indexing."""
    art = _artifact(np.random.default_rng(2), n=23)
    write_distances(art, tmp_path / "toy.parquet")
    back = read_distances(tmp_path / "toy.parquet")
    monkeypatch.setattr(artifacts, "TAKE_CHUNK_BYTES", 3 * 23 * 8)  # 3 rows per map
    rng = np.random.default_rng(3)
    rows, cols = rng.permutation(23)[:17], rng.permutation(23)[:9]
    rows[5] = rows[11]  # a row twice
    for M, ref in ((back.distances, art.distances), (back.similarities, art.similarities)):
        block = take(M, rows, cols)
        assert type(block) is np.ndarray and block.flags.writeable
        np.testing.assert_array_equal(block, ref[np.ix_(rows, cols)])
        np.testing.assert_array_equal(take(M, rows), ref[rows])
        np.testing.assert_array_equal(take(M[2:], rows[:4] % 21, cols), ref[2:][np.ix_(rows[:4] % 21, cols)])
    np.testing.assert_array_equal(take(art.distances, rows, cols), art.distances[np.ix_(rows, cols)])
    assert take(back.distances, [], cols).shape == (0, 9)
    np.testing.assert_array_equal(take(back.distances, [-1, 0], [-2]), art.distances[np.ix_([-1, 0], [-2])])
    for M in (back.distances, art.distances):  # out of range as numpy refuses; masks and floats refused too
        with pytest.raises(IndexError, match=r"lie in \[-23, 23\)"):
            take(M, [0, 23])
        with pytest.raises(IndexError, match="must be integers"):
            take(M, np.ones(23, dtype=bool))
        with pytest.raises(IndexError, match="must be integers"):
            take(M, [0], [1.0])


def test_float32_storage_halves_the_file_and_take_gives_float64(tmp_path, monkeypatch):
    """distance_dtype float32: the .npy stores float32 (half the bytes), the metadata says so, and take() returns
    float64 blocks equal to the float32-rounded matrices, across chunk borders, rows unsorted and repeated."""
    art = _artifact(np.random.default_rng(4), n=23)
    write_distances(art, tmp_path / "d64.parquet")
    write_distances(art, tmp_path / "d32.parquet", dtype="float32")
    data64 = np.load(tmp_path / "d64.npy", mmap_mode="r")
    data32 = np.load(tmp_path / "d32.npy", mmap_mode="r")
    assert data32.dtype == np.float32 and data32.shape == data64.shape == (2, 23, 23)
    assert data32.nbytes * 2 == data64.nbytes
    back = read_distances(tmp_path / "d32.parquet")
    assert back.metadata["dtype"] == "float32"
    assert read_distances(tmp_path / "d64.parquet").metadata["dtype"] == "float64"
    table = pq.read_table(tmp_path / "d64.parquet")  # written before distance_dtype: no "dtype", read as float64
    meta = json.loads(table.schema.metadata[b"hlm"])
    del meta["dtype"]
    pq.write_table(table.replace_schema_metadata({b"hlm": json.dumps(meta).encode()}), tmp_path / "d64.parquet")
    np.testing.assert_array_equal(read_distances(tmp_path / "d64.parquet").distances, art.distances)
    assert back.distances.dtype == np.float32 and not back.distances.flags.writeable
    monkeypatch.setattr(artifacts, "TAKE_CHUNK_BYTES", 3 * 23 * 4)  # 3 float32 rows per map
    rows, cols = np.array([7, 22, 0, 7, 13, 3, 19, 1]), np.array([5, 0, 21, 9])
    for M, ref in ((back.distances, art.distances), (back.similarities, art.similarities)):
        rounded = ref.astype(np.float32).astype(np.float64)
        block = take(M, rows, cols)
        assert block.dtype == np.float64 and type(block) is np.ndarray
        np.testing.assert_array_equal(block, rounded[np.ix_(rows, cols)])
        np.testing.assert_array_equal(take(M, rows), rounded[rows])
        np.testing.assert_array_equal(take(M[1:], [0, 4], cols), rounded[1:][np.ix_([0, 4], cols)])  # a view
        assert np.abs(block - ref[np.ix_(rows, cols)]).max() <= 2.0**-24 * np.abs(ref).max()  # float32's rounding


def test_float32_storage_refuses_what_it_cannot_hold(tmp_path):
    """A finite value beyond float32's range is one line naming the cell (no inf stored, no file left); an unknown
    dtype is refused; metadata that disagrees with the .npy's type is one line."""
    art = _artifact(np.random.default_rng(5), n=6, similarities=False)
    art.distances[4, 2] = art.distances[2, 4] = 1e39
    with pytest.raises(DataError, match=r"big.parquet: distances\[2, 4\] = 1e\+39 lies beyond the range of float32"):
        write_distances(art, tmp_path / "big.parquet", dtype="float32")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(DataError, match="cannot store matrices as 'float16'"):
        write_distances(art, tmp_path / "big.parquet", dtype="float16")
    with pytest.raises(DataError, match="cannot store matrices as dtype"):  # a numpy dtype, not its name
        write_distances(art, tmp_path / "big.parquet", dtype=np.dtype(np.float32))
    write_distances(art, tmp_path / "big.parquet")  # float64 holds it
    np.save(tmp_path / "big.npy", np.zeros((1, 6, 6), dtype=np.float32))
    with pytest.raises(DataError, match=r"holds float32 \(1, 6, 6\); .*lists 1 matrices of 6 x 6 float64"):
        read_distances(tmp_path / "big.parquet")
