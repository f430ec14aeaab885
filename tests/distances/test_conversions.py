"""Similarity <-> distance conversions on hand-computed 3 x 3 examples (paper 5.2)."""

import numpy as np
import pytest

from hlm.distances import _conversions as conversions
from hlm.distances._conversions import distance_to_similarity, similarity_to_distance, symmetrize
from hlm.errors import DataError

S = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.4], [0.2, 0.4, 1.0]])


def test_bound_minus_uses_max_as_upper_bound():
    D, info = similarity_to_distance(S, "bound_minus")
    expected = np.array([[0.0, 0.5, 0.8], [0.5, 0.0, 0.6], [0.8, 0.6, 0.0]])
    np.testing.assert_allclose(D, expected)
    assert info == {"to_distance": "bound_minus", "upper_bound": 1.0}


def test_bound_minus_with_given_bound():
    D, info = similarity_to_distance(S, "bound_minus", upper_bound=2.0)
    # 2 - s off the diagonal; the self-distance is set to 0
    expected = np.array([[0.0, 1.5, 1.8], [1.5, 0.0, 1.6], [1.8, 1.6, 0.0]])
    np.testing.assert_allclose(D, expected)
    assert info["upper_bound"] == 2.0


def test_bound_below_max_is_an_error():
    with pytest.raises(DataError) as exc:
        similarity_to_distance(S, "bound_minus", upper_bound=0.9, where="dataset 'x' (x.mat)")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("dataset 'x' (x.mat): upper_bound 0.9")
    assert "3 entries exceed it" in msg


def test_reciprocal():
    D, info = similarity_to_distance(S, "reciprocal")
    expected = np.array([[0.0, 2.0, 5.0], [2.0, 0.0, 2.5], [5.0, 2.5, 0.0]])
    np.testing.assert_allclose(D, expected)
    assert info == {"to_distance": "reciprocal", "upper_bound": None}


def test_reciprocal_rejects_non_positive_similarities():
    bad = S.copy()
    bad[0, 1] = bad[1, 0] = 0.0
    bad[0, 2] = -0.1
    with pytest.raises(DataError) as exc:
        similarity_to_distance(bad, "reciprocal", where="dataset 'x' (x.csv)")
    msg = str(exc.value)
    assert "\n" not in msg and "dataset 'x' (x.csv)" in msg and "3 off-diagonal entries are <= 0" in msg


def test_neg_log():
    D, info = similarity_to_distance(S, "neg_log")
    expected = np.array(
        [[0.0, np.log(2), np.log(5)], [np.log(2), 0.0, np.log(2.5)], [np.log(5), np.log(2.5), 0.0]]
    )
    np.testing.assert_allclose(D, expected)
    assert info == {"to_distance": "neg_log", "upper_bound": 1.0}
    with pytest.raises(DataError, match="neg_log needs positive"):
        similarity_to_distance(np.where(S == 0.2, 0.0, S), "neg_log")


def test_auto_picks_bound_minus_for_unit_diagonal_and_reciprocal_otherwise():
    assert similarity_to_distance(S)[1]["to_distance"] == "bound_minus"
    T = S.copy()
    T[2, 2] = 0.9  # diagonal not constant: no obvious upper bound
    D, info = similarity_to_distance(T)
    assert info["to_distance"] == "reciprocal"
    np.testing.assert_allclose(D[0, 2], 5.0)
    assert np.all(np.diag(D) == 0)
    # a given upper bound means bound_minus
    assert similarity_to_distance(T, upper_bound=1.0)[1]["to_distance"] == "bound_minus"


def test_unknown_method():
    with pytest.raises(DataError, match="to_distance must be one of"):
        similarity_to_distance(S, "cosine")


def test_symmetrize():
    A = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 4.0], [2.0, 6.0, 0.0]])
    Dsym, was = symmetrize(A)
    assert was
    np.testing.assert_allclose(Dsym, [[0, 2, 2], [2, 0, 5], [2, 5, 0]])
    same, was = symmetrize(Dsym + 1e-15 * np.triu(np.ones((3, 3)), 1))
    assert not was


def test_distance_to_similarity_fit_and_test():
    D = np.array([[0.0, 2.0, 0.5], [2.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    # U = max 1/d over positive off-diagonal d = 1/0.5 = 2; d = 0 -> U; diagonal U
    S_fit, S_test, U = distance_to_similarity(D, np.array([[4.0, 0.0, 0.25]]))
    assert U == 2.0
    np.testing.assert_allclose(S_fit, [[2.0, 0.5, 2.0], [0.5, 2.0, 2.0], [2.0, 2.0, 2.0]])
    # test: 1/4, d=0 -> U, min(1/0.25, U) = 2
    np.testing.assert_allclose(S_test, [[0.25, 2.0, 2.0]])
    assert distance_to_similarity(D)[1] is None


def test_distance_to_similarity_errors():
    with pytest.raises(DataError, match="no positive off-diagonal distance"):
        distance_to_similarity(np.zeros((3, 3)))
    with pytest.raises(DataError, match="non-negative"):
        distance_to_similarity(np.array([[0.0, -1.0], [-1.0, 0.0]]))
    with pytest.raises(DataError, match="do not have 2 columns"):
        distance_to_similarity(np.array([[0.0, 1.0], [1.0, 0.0]]), np.ones((1, 3)))


def _small_blocks(monkeypatch, size: int = 25) -> None:
    """row_blocks of about ``size`` entries: a few rows per block, the last one short."""
    row_blocks = conversions.row_blocks
    monkeypatch.setattr(conversions, "row_blocks", lambda n_rows, n_cols, s=size: row_blocks(n_rows, n_cols, s))


@pytest.mark.parametrize("size", [25, 1 << 22])
def test_distance_to_similarity_by_row_blocks_equals_the_whole_matrix_formula(monkeypatch, size):
    """Spec 4.2 written on the whole matrix (U from the off-diagonal positive d, min(1/d, U), d = 0 -> U, U on the
    diagonal) equals the row-block computation bit for bit, blocks of 2 rows or one block; the diagonal's own
    entries (here NaN and -1) are not read."""
    _small_blocks(monkeypatch, size)
    rng = np.random.default_rng(4)
    D = rng.gamma(2.0, size=(11, 11))
    D = (D + D.T) / 2
    D[rng.random(D.shape) < 0.2] = 0.0
    D = np.minimum(D, D.T)  # zeros kept symmetric
    D[1, 8] = D[8, 1] = -0.0  # a zero all the same: U, as d = +0.0 gives
    D[3, 3], D[5, 5] = np.nan, -1.0
    T = np.abs(rng.normal(size=(4, 11)))
    T[0, 2] = 0.0
    off = ~np.eye(11, dtype=bool)
    U = 1.0 / D[off][D[off] > 0].min()
    expected = np.full(D.shape, U)
    expected[off & (D > 0)] = np.minimum(1.0 / D[off & (D > 0)], U)
    assert expected[1, 8] == U
    S_fit, S_test, got_U = distance_to_similarity(D, T)
    assert got_U == U
    np.testing.assert_array_equal(S_fit, expected)
    np.testing.assert_array_equal(S_test, np.where(T > 0, np.minimum(1.0 / np.where(T > 0, T, 1.0), U), U))
    index = np.array([9, 0, 4, 3, 10, 5, 1])  # a fold's fit part, unsorted: read from D without slicing it
    S_part, U_part = conversions.fit_similarities(D, index)
    S_ref, _, U_ref = distance_to_similarity(D[np.ix_(index, index)])
    assert U_part == U_ref
    np.testing.assert_array_equal(S_part, S_ref)
    S_whole, U_whole = conversions.fit_similarities(D)
    assert U_whole == U
    np.testing.assert_array_equal(S_whole, expected)
    with pytest.raises(DataError, match="finite and non-negative"):  # D[3, 3] is NaN: on this part's diagonal
        conversions.fit_similarities(D, index, whole=True)
    D[7, 2] = np.inf  # off the diagonal: refused, in whichever block it sits
    with pytest.raises(DataError, match="finite and non-negative"):
        distance_to_similarity(D)
    D[7, 2] = -0.5
    with pytest.raises(DataError, match="finite and non-negative"):
        distance_to_similarity(D)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint16])
def test_fit_similarities_computes_in_float64_whatever_the_matrix_dtype(monkeypatch, dtype):
    """An integer or float32 matrix (or memory map) gives spec 4.2 on its float64 values, by blocks or whole:
    no integer overflow of 1/d, no float32 rounding of 1/d."""
    _small_blocks(monkeypatch)
    rng = np.random.default_rng(7)
    D = rng.integers(0, 50, size=(9, 9)) if dtype != np.float32 else rng.gamma(2.0, size=(9, 9))
    D = np.triu(D, 1)
    D = (D + D.T).astype(dtype)
    D64 = D.astype(np.float64)
    index = np.array([8, 2, 5, 0, 7])
    for part in (None, index):
        got, U = conversions.fit_similarities(D, part, whole=True)
        ref = D64 if part is None else D64[np.ix_(part, part)]
        want, _, U_ref = distance_to_similarity(ref)
        assert got.dtype == np.float64 and U == U_ref
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(conversions.reciprocal_similarity(D, 0.5),
                                  conversions.reciprocal_similarity(D64, 0.5))


def test_reciprocal_similarity_takes_one_or_two_dimensions():
    np.testing.assert_array_equal(conversions.reciprocal_similarity(np.array([0.0, -0.0, 4.0, 0.25]), 2.0),
                                  [2.0, 2.0, 0.25, 2.0])
    with pytest.raises(ValueError, match="1- or 2-d"):
        conversions.reciprocal_similarity(np.float64(3.0), 2.0)


@pytest.mark.parametrize("size", [25, 1 << 22])
@pytest.mark.parametrize("method", ["bound_minus", "reciprocal", "neg_log"])
def test_similarity_to_distance_by_row_blocks_equals_the_whole_matrix_formula(monkeypatch, method, size):
    """Paper section 5.2's conversions written on the whole matrix equal the row-block computation bit for bit
    (the same elementwise arithmetic), blocks of 2 rows or one block; the count and the minimum in the error
    for non-positive off-diagonal similarities too."""
    _small_blocks(monkeypatch, size)
    rng = np.random.default_rng(9)
    S = rng.uniform(0.1, 1.0, size=(11, 11))
    S = (S + S.T) / 2
    np.fill_diagonal(S, 0.0)  # the diagonal is not read by reciprocal and neg_log, and set to 0 in D
    bound = S.max()
    expected = {"bound_minus": bound - S, "reciprocal": 1.0 / np.where(S > 0, S, 1.0),
                "neg_log": -np.log(S / bound)}[method]
    np.fill_diagonal(expected, 0.0)
    with np.errstate(divide="ignore"):
        D, info = similarity_to_distance(S, method)
    np.testing.assert_array_equal(D, expected)
    assert info["upper_bound"] == (None if method == "reciprocal" else bound)
    if method != "bound_minus":
        S[2, 7] = S[7, 2] = -0.25
        S[4, 9] = 0.0
        with pytest.raises(DataError, match=r"but 3 off-diagonal entries are <= 0 \(min -0.25\)"):
            similarity_to_distance(S, method)
        S[4, 9] = np.nan
        with pytest.raises(DataError, match=r"but 3 off-diagonal entries are <= 0 \(min nan\)"):
            similarity_to_distance(S, method)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3,), (2, 2, 2)])
def test_similarity_to_distance_refuses_a_matrix_that_is_not_square(shape):
    with pytest.raises(DataError, match=r"similarity matrix is not square"):
        similarity_to_distance(np.full(shape, 0.5), "reciprocal")
