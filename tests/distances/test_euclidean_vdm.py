"""Record distances: Euclidean and the value difference metric (paper 5.2, Table 1)."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from hlm.distances._euclidean import euclidean
from hlm.distances._vdm import value_difference_metric
from hlm.errors import DataError

# f1 separates the classes; f2 = x in rows 0, 2, 3 (classes 0, 1, 1), y in row 1 (class 0)
RECORDS = np.array([["a", "x"], ["a", "y"], ["b", "x"], ["b", "x"]])
Y = np.array(["0", "0", "1", "1"])


def test_euclidean_matches_scipy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 4))
    D = euclidean(X)
    assert D.dtype == np.float64 and D.shape == (7, 7)
    np.testing.assert_allclose(D, cdist(X, X), atol=1e-12)
    np.testing.assert_array_equal(np.diag(D), 0.0)
    assert euclidean(np.ones((1, 3))).shape == (1, 1)


@pytest.mark.parametrize("rows_per_block", [1, 3, 100])
def test_euclidean_by_row_blocks_is_pdist_to_the_bit(monkeypatch, rows_per_block):
    """The upper triangle by blocks of rows (cdist), mirrored in place: pdist's values (SciPy's two loops; equal
    to the bit on our machines, here to a few ulps), exactly symmetric (copies), a zero diagonal; on real-valued
    and on integer features."""
    from scipy.spatial.distance import pdist, squareform

    from hlm.distances import _conversions as conversions
    from hlm.distances import _euclidean as vectors

    row_blocks = conversions.row_blocks
    small = lambda n_rows, n_cols, size=None: row_blocks(n_rows, n_cols, rows_per_block * n_cols)  # noqa: E731
    monkeypatch.setattr(vectors, "row_blocks", small)
    monkeypatch.setattr(conversions, "row_blocks", small)
    rng = np.random.default_rng(3)
    for X in (rng.normal(size=(23, 5)) * 100, rng.integers(0, 16, size=(17, 16)).astype(float)):
        D = euclidean(X)
        np.testing.assert_allclose(D, squareform(pdist(X)), rtol=4e-16 * X.shape[1], atol=0)
        np.testing.assert_array_equal(D, D.T)
        np.testing.assert_array_equal(np.diag(D), 0.0)
    X = np.array([[1.0, np.nan], [0.0, 0.0], [1.0, 1.0]])  # a bad row: NaN off the diagonal only, as pdist's
    np.testing.assert_array_equal(np.isnan(euclidean(X)), np.isnan(squareform(pdist(X))))


def test_vdm_q1_by_hand():
    # P(c|a) = (1, 0), P(c|b) = (0, 1)        -> delta_1(a, b) = 2
    # P(c|x) = (1/3, 2/3), P(c|y) = (1, 0)    -> delta_2(x, y) = 2/3 + 2/3 = 4/3
    D = value_difference_metric(RECORDS, Y, q=1)
    e = 4 / 3
    expected = np.array(
        [[0, e, 2, 2], [e, 0, 2 + e, 2 + e], [2, 2 + e, 0, 0], [2, 2 + e, 0, 0]], dtype=float
    )
    np.testing.assert_allclose(D, expected)


def test_vdm_q2_by_hand():
    # delta_1(a, b) = 1 + 1 = 2; delta_2(x, y) = (2/3)^2 + (2/3)^2 = 8/9
    D = value_difference_metric(RECORDS, Y, q=2)
    e = 8 / 9
    expected = np.array(
        [[0, e, 2, 2], [e, 0, 2 + e, 2 + e], [2, 2 + e, 0, 0], [2, 2 + e, 0, 0]], dtype=float
    )
    np.testing.assert_allclose(D, expected)
    # default variant is q = 2
    np.testing.assert_allclose(value_difference_metric(RECORDS, Y), expected)


def test_vdm_stanfill_waltz_weight_is_asymmetric():
    # weight of the first record's value: w(x) = sqrt(1/9 + 4/9) = sqrt(5)/3, w(y) = 1
    D = value_difference_metric(RECORDS, Y, q=1, weighted=True)
    np.testing.assert_allclose(D[0, 1], 4 / 3 * np.sqrt(5) / 3)
    np.testing.assert_allclose(D[1, 0], 4 / 3)


def test_vdm_integer_codes_equal_strings():
    codes = np.array([[0, 0], [0, 1], [1, 0], [1, 0]])
    np.testing.assert_allclose(value_difference_metric(codes, Y), value_difference_metric(RECORDS, Y))


def test_vdm_rejects_missing_values_and_bad_shapes():
    rec = RECORDS.astype(object)
    rec[1, 1] = None
    with pytest.raises(DataError) as exc:
        value_difference_metric(rec, Y)
    assert "\n" not in str(exc.value) and "na_value" in str(exc.value)
    with pytest.raises(DataError, match="3 labels for 4 records"):
        value_difference_metric(RECORDS, Y[:3])
    with pytest.raises(DataError, match="2-D"):
        value_difference_metric(np.array(["a", "b"]), Y[:2])
