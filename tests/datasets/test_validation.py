"""Matrix, label and id checks (hlm.datasets._validation)."""

import warnings

import numpy as np
import pytest

from hlm.datasets._validation import DataWarning, align_labels, check_ids, check_labels, check_matrix
from hlm.errors import DataError
from messages import one_line

WHERE = "dataset 'x' (data/raw/x.mat)"
KW = {"name": "x", "path": "data/raw/x.mat"}




def test_good_matrix_passes_unchanged():
    D = np.array([[0.0, 1.0], [1.0, 0.0]])
    out = check_matrix(D, kind="distance", **KW)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, D)


def test_not_square():
    with pytest.raises(DataError) as exc:
        check_matrix(np.zeros((3, 4)), kind="similarity", **KW)
    one_line(exc, "matrix is not square (3 x 4)")


def test_not_2d_and_not_numeric():
    with pytest.raises(DataError) as exc:
        check_matrix(np.zeros(3), kind="distance", **KW)
    one_line(exc, "not 2-D")
    with pytest.raises(DataError) as exc:
        check_matrix(np.array([["a", "b"], ["c", "d"]]), kind="distance", **KW)
    one_line(exc, "not numeric")


def test_nan_and_inf_counted_with_first_position():
    M = np.ones((3, 3))
    M[1, 2] = np.nan
    M[2, 0] = np.inf
    with pytest.raises(DataError) as exc:
        check_matrix(M, kind="similarity", **KW)
    one_line(exc, "2 NaN/inf entries", "first at row 2, column 3")


def test_negative_distances():
    D = np.array([[0.0, -1.0, 2.0], [-1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    with pytest.raises(DataError) as exc:
        check_matrix(D, kind="distance", **KW)
    one_line(exc, "2 negative entries", "min -1")
    # negative similarities are fine
    check_matrix(D, kind="similarity", **KW)


def test_negative_diagonal_is_an_error():
    D = np.array([[-0.5, 1.0], [1.0, 0.0]])
    with pytest.raises(DataError) as exc:
        check_matrix(D, kind="distance", **KW)
    one_line(exc, "1 negative entries")


def test_positive_diagonal_is_zeroed_with_warning():
    D = np.array([[0.1, 1.0], [1.0, 0.0]])
    with pytest.warns(DataWarning, match="1 non-zero self-distances"):
        out = check_matrix(D, kind="distance", **KW)
    np.testing.assert_array_equal(np.diag(out), 0.0)
    assert D[0, 0] == 0.1  # input untouched


def test_label_count_mismatch():
    with pytest.raises(DataError) as exc:
        check_labels(["a", "b"], 3, **KW)
    one_line(exc, "2 labels for 3 objects")


@pytest.mark.parametrize("bad", [None, np.nan, "", "  "])
def test_missing_labels(bad):
    with pytest.raises(DataError) as exc:
        check_labels(["a", bad, "b", "a"], 4, **KW)
    one_line(exc, "1 objects have no label (rows 2)")


def test_missing_labels_named_by_id():
    with pytest.raises(DataError) as exc:
        check_labels(["a", None, "b"], 3, ids=np.array(["p", "q", "r"]), **KW)
    one_line(exc, "objects 'q'")


def test_fewer_than_two_classes():
    with pytest.raises(DataError) as exc:
        check_labels(["a", "a", "a"], 3, **KW)
    one_line(exc, "1 class(es); at least 2 are needed")


def test_single_member_class_warns_but_passes():
    with pytest.warns(DataWarning, match="single member: 'b'"):
        labels = check_labels(["a", "a", "b"], 3, **KW)
    assert labels.tolist() == ["a", "a", "b"]


def test_labels_become_strings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_labels([1, 2, 1, 2], 4, **KW).tolist() == ["1", "2", "1", "2"]


def test_duplicate_and_missing_ids():
    with pytest.raises(DataError) as exc:
        check_ids(["a", "b", "a"], **KW)
    one_line(exc, "duplicate ids 'a'")
    with pytest.raises(DataError) as exc:
        check_ids(["a", None], **KW)
    one_line(exc, "1 ids are missing")


def test_align_labels_by_id():
    out = align_labels(["a", "b", "c"], ["c", "a", "b"], ["z", "x", "y"], **KW)
    assert out.tolist() == ["x", "y", "z"]


def test_align_labels_ids_absent_from_labels_file():
    with pytest.raises(DataError) as exc:
        align_labels(["a", "b", "c", "d", "e"], ["a"], ["x"], **KW)
    one_line(exc, "4 objects have no label (ids 'b', 'c', 'd', ... (4 in all))")


def test_align_labels_extra_ids():
    with pytest.raises(DataError) as exc:
        align_labels(["a"], ["a", "zz"], ["x", "y"], **KW)
    one_line(exc, "labels file has 1 ids not in the matrix ('zz')")


@pytest.mark.parametrize("rows_per_block", [1, 2, 50])
def test_nonfinite_and_negative_counts_by_row_blocks(monkeypatch, rows_per_block):
    """By blocks of rows: the count and the first (row-major) NaN/inf entry as on the whole matrix, and the
    count of negative distances in check_matrix's error."""
    from hlm.datasets import _validation as validation
    from hlm.distances import _conversions as conversions

    row_blocks = conversions.row_blocks
    monkeypatch.setattr(validation, "row_blocks",
                        lambda n_rows, n_cols, size=None: row_blocks(n_rows, n_cols, rows_per_block * n_cols))
    M = np.abs(np.random.default_rng(2).normal(size=(7, 7)))
    assert validation.nonfinite(M) is None
    M[3, 5], M[3, 1], M[6, 0] = np.nan, np.inf, -np.inf
    bad = ~np.isfinite(M)
    i, j = np.argwhere(bad)[0]
    assert validation.nonfinite(M) == (3, i, j) == (3, 3, 1)
    M = np.abs(np.nan_to_num(M, nan=1.0, posinf=1.0, neginf=1.0))
    np.fill_diagonal(M, 0.0)
    M[2, 4], M[5, 6] = -0.5, -1e-3
    with pytest.raises(DataError, match=r"2 negative entries \(min -0.5\)"):
        validation.check_matrix(M, name="toy")
