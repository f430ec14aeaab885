"""Readers on small fixtures written to tmp_path (hlm.datasets._readers)."""

import numpy as np
import pandas as pd
import pyreadr
import pytest
import scipy.io

from hlm.datasets import _readers as readers
from hlm.datasets._artifacts import DistanceArtifact, write_distances
from hlm.errors import DataError
from messages import one_line

M = np.array([[1.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 1.0]])




# --- .mat -----------------------------------------------------------------


def test_read_mat_labels_become_strings(tmp_path):
    p = tmp_path / "x.mat"
    scipy.io.savemat(p, {"A": M, "C": np.array([[1], [2], [2]], dtype=np.uint8)})
    A, y = readers.read_mat(p, "A", "C")
    np.testing.assert_array_equal(A, M)
    assert A.dtype == np.float64 and y.tolist() == ["1", "2", "2"]


def test_read_mat_float_and_string_labels(tmp_path):
    p = tmp_path / "x.mat"
    scipy.io.savemat(p, {"A": M, "C": np.array([1.0, 2.0, 1.0]), "S": np.array(["a", "b", "c"])})
    assert readers.read_mat(p, "A", "C")[1].tolist() == ["1", "2", "1"]
    assert readers.read_mat(p, "A", "S")[1].tolist() == ["a", "b", "c"]


def test_read_mat_missing_key_lists_keys(tmp_path):
    p = tmp_path / "x.mat"
    scipy.io.savemat(p, {"K": M, "C": np.array([1, 2, 2])})
    with pytest.raises(DataError) as exc:
        readers.read_mat(p, "A", "C", where="dataset 'x' (data/raw/x.mat)")
    one_line(exc, "dataset 'x' (data/raw/x.mat): key 'A' not found; keys are: C, K")


def test_read_mat_labels_not_vector(tmp_path):
    p = tmp_path / "x.mat"
    scipy.io.savemat(p, {"A": M, "C": np.ones((3, 2))})
    with pytest.raises(DataError) as exc:
        readers.read_mat(p, "A", "C")
    one_line(exc, "x.mat", "labels variable 'C' is not a vector (shape (3, 2))")


@pytest.mark.parametrize(
    "suffix, reader",
    [
        (".mat", lambda p: readers.read_mat(p, "A", "C")),
        (".rda", readers.read_rda),
        (".npy", readers.read_npy),
        (".parquet", readers.read_parquet_matrix),
    ],
)
def test_unreadable_and_missing_files(tmp_path, suffix, reader):
    p = tmp_path / f"junk{suffix}"
    p.write_bytes(b"this is not a data file\x00\x01\x02" * 10)
    with pytest.raises(DataError) as exc:
        reader(p)
    one_line(exc, f"junk{suffix}", "cannot read")
    with pytest.raises(DataError) as exc:
        reader(tmp_path / f"absent{suffix}")
    one_line(exc, f"absent{suffix}: file not found")


# --- .rda -----------------------------------------------------------------


def test_read_rda_single_object_with_rownames(tmp_path):
    p = tmp_path / "x.rda"
    df = pd.DataFrame({"v": [1.0, 2.0], "Class": ["a", "b"]}, index=["r1", "r2"])
    pyreadr.write_rdata(str(p), df, df_name="Things")
    out = readers.read_rda(p)
    assert list(out.columns) == ["v", "Class"] and list(out.index) == ["r1", "r2"]


def test_read_rda_several_objects_needs_object_field(tmp_path):
    p = tmp_path / "x.rda"
    a = pd.DataFrame({"v": [1.0]})
    pyreadr.write_rdata(str(p), {"First": a, "Second": a})
    with pytest.raises(DataError) as exc:
        readers.read_rda(p, where="dataset 'x' (x.rda)")
    one_line(exc, "dataset 'x' (x.rda): file holds 2 objects (First, Second); name one with field 'object'")
    assert readers.read_rda(p, object="Second").shape == (1, 1)
    with pytest.raises(DataError) as exc:
        readers.read_rda(p, object="Third")
    one_line(exc, "object 'Third' not found; objects are: First, Second")


# --- csv matrix -----------------------------------------------------------


def test_read_csv_plain_matrix(tmp_path):
    p = tmp_path / "m.csv"
    np.savetxt(p, M, delimiter=",")
    A, ids = readers.read_csv_matrix(p)
    np.testing.assert_allclose(A, M)
    assert ids is None


def test_read_csv_matrix_with_header_and_ids(tmp_path):
    p = tmp_path / "m.csv"
    pd.DataFrame(M, index=["a", "b", "c"], columns=["a", "b", "c"]).to_csv(p)
    A, ids = readers.read_csv_matrix(p)
    np.testing.assert_allclose(A, M)
    assert ids.tolist() == ["a", "b", "c"]


def test_read_csv_header_must_match_ids(tmp_path):
    p = tmp_path / "m.csv"
    pd.DataFrame(M, index=["a", "b", "c"], columns=["a", "c", "b"]).to_csv(p)
    with pytest.raises(DataError) as exc:
        readers.read_csv_matrix(p)
    one_line(exc, "m.csv", "does not list the row ids")


def test_read_csv_non_numeric_cell(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("1,0.5\n0.5,oops\n")
    with pytest.raises(DataError) as exc:
        readers.read_csv_matrix(p)
    one_line(exc, "m.csv", "non-numeric cell 'oops' at row 2, column 2")


def test_read_csv_empty_and_ragged(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("")
    with pytest.raises(DataError, match="file is empty"):
        readers.read_csv_matrix(p)
    p.write_text("1,2\n3,4,5,6\n")
    with pytest.raises(DataError) as exc:
        readers.read_csv_matrix(p)
    one_line(exc, "m.csv", "cannot parse CSV")


# --- npy / parquet --------------------------------------------------------


def test_read_npy(tmp_path):
    p = tmp_path / "m.npy"
    np.save(p, M)
    np.testing.assert_array_equal(readers.read_npy(p), M)


def test_read_npy_refuses_object_arrays(tmp_path):
    p = tmp_path / "m.npy"
    np.save(p, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(DataError) as exc:
        readers.read_npy(p)
    one_line(exc, "m.npy", "pickles are not read")


def test_read_parquet_square_table_with_ids(tmp_path):
    p = tmp_path / "m.parquet"
    frame = pd.DataFrame(M, columns=["a", "b", "c"])
    frame.insert(0, "id", ["a", "b", "c"])
    frame.to_parquet(p)
    A, ids, labels = readers.read_parquet_matrix(p)
    np.testing.assert_array_equal(A, M)
    assert ids.tolist() == ["a", "b", "c"] and labels is None


def test_read_parquet_non_numeric_column(tmp_path):
    p = tmp_path / "m.parquet"
    pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}).to_parquet(p)
    with pytest.raises(DataError) as exc:
        readers.read_parquet_matrix(p)
    one_line(exc, "m.parquet", "non-numeric column(s) b")


def test_read_parquet_distance_artifact_layout(tmp_path):
    p = tmp_path / "d.parquet"
    D = 1 - M
    np.fill_diagonal(D, 0)
    write_distances(DistanceArtifact(np.array(["p", "q", "r"]), np.array(["1", "2", "2"]), D), p)
    A, ids, labels = readers.read_parquet_matrix(p)
    np.testing.assert_allclose(A, D)
    assert ids.tolist() == ["p", "q", "r"] and labels.tolist() == ["1", "2", "2"]


# --- labels files ---------------------------------------------------------


def test_labels_single_column(tmp_path):
    p = tmp_path / "y.csv"
    p.write_text("a\nb\n\na\n\n")  # an empty line is a missing label; trailing blanks dropped
    y, ids = readers.read_labels_file(p)
    assert y.tolist() == ["a", "b", None, "a"] and ids is None


def test_labels_with_header_and_ids(tmp_path):
    p = tmp_path / "y.csv"
    p.write_text("id,label,comment\n001,1,x\n002,2,y\n")
    y, ids = readers.read_labels_file(p)
    assert y.tolist() == ["1", "2"] and ids.tolist() == ["001", "002"]


def test_labels_without_header_but_several_columns(tmp_path):
    p = tmp_path / "y.csv"
    p.write_text("a,1\nb,2\n")
    with pytest.raises(DataError) as exc:
        readers.read_labels_file(p, where="dataset 'x' (y.csv)")
    one_line(exc, "dataset 'x' (y.csv): labels file has 2 columns but no header row")


def test_labels_npy_and_parquet(tmp_path):
    p = tmp_path / "y.npy"
    np.save(p, np.array([1, 2, 2]))
    assert readers.read_labels_file(p)[0].tolist() == ["1", "2", "2"]
    q = tmp_path / "y.parquet"
    pd.DataFrame({"id": ["a", "b"], "label": ["u", "v"]}).to_parquet(q)
    y, ids = readers.read_labels_file(q)
    assert y.tolist() == ["u", "v"] and ids.tolist() == ["a", "b"]


def test_labels_file_missing(tmp_path):
    with pytest.raises(DataError) as exc:
        readers.read_labels_file(tmp_path / "nope.csv")
    one_line(exc, "nope.csv: file not found")


def test_read_table_csv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("id,f1,f2,y\na,1,2,u\nb,3,4,v\n")
    t = readers.read_table(p)
    assert list(t.columns) == ["id", "f1", "f2", "y"]
