"""Local SDA (spec section 6.5): known answers and the section 9 oracles."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import logsumexp
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.utils._param_validation import InvalidParameterError

import hlm.local_sda._kernels.core as kernels
import hlm.local_sda._local_sda as lsda
import oracles.local_sda_reference as lsda_ref
from hlm.errors import DataError
from hlm.local_sda import _local_sda as local_sda_module
from hlm.local_sda._kernels.core import _raise_brent_error, _solve_lambda_nb
from hlm.local_sda._kernels.local import _log_scores_nb, _row_model_nb
from hlm.local_sda._local_sda import LocalSDA, Support, make_support
from oracles.local_sda_reference import (
    STATUS_NAMES,
    RowModel,
    continuous_log_z,
    continuous_mean,
    discrete_log_z,
    discrete_mean,
    fit_row,
    log_scores,
    solve_lambda,
    support_log_z,
    support_mean,
    support_r,
)
from oracles.tie_rules import neighbours, tie_winner


# ------------------------------------------------- the row-by-row reference of the compiled predict
def _reference_predict(est: LocalSDA, S_te) -> tuple[np.ndarray, int]:
    """``LocalSDA.predict`` row by row with the reference's ``fit_row``/``log_scores`` (tests/oracles).

    Returns (predicted labels, number of rows that used the fallback rule). Used by the tests.
    """
    S_te = est._check_predict_input(S_te)
    nbs = [np.array(neighbours(s, est.n_neighbors)) for s in S_te]  # from the spec, not est._neighbours
    out = np.empty(S_te.shape[0], dtype=np.intp)
    n_deg = 0
    for i, (s, nb) in enumerate(zip(S_te, nbs)):
        out[i], fell_back = _reference_predict_row(est, s, nb)
        n_deg += fell_back
    return est.classes_[out], int(n_deg)


def _reference_predict_row(est: LocalSDA, s: np.ndarray, nb: np.ndarray) -> tuple[int, bool]:
    """Class index for one row, and whether the fallback rule was used."""
    y_nb = est._y_idx[nb]
    if np.all(y_nb == y_nb[0]):  # |G_x| = 1 -> that class [P]
        return int(y_nb[0]), False
    exact = est.degenerate == "exact"
    prior = None if est.prior == "local" else np.log(est.class_prior_)
    model = lsda_ref.fit_row(est._S, s, nb, est._y_idx, est.support_, prior, stop_early=not exact)
    degenerate = np.any(model.status != "ok")
    if degenerate and not exact:
        return _reference_fallback(est, s, nb, model), True
    scores = log_scores(model, est.support_, exact=exact)
    if np.all(scores == -np.inf):
        return _reference_fallback(est, s, nb, model), True
    return _reference_argmax(est, scores, model.classes, y_nb), False


def _reference_argmax(est: LocalSDA, values: np.ndarray, classes: np.ndarray, y_nb: np.ndarray) -> int:
    """argmax over G_x with the spec §5 tie rule (isclose, then prior pi_g, then best-ranked neighbour)."""
    full = np.full(len(est.classes_), -np.inf)
    full[classes] = values
    return tie_winner(list(full), list(est.class_prior_), list(y_nb))


def _reference_fallback(est: LocalSDA, s: np.ndarray, nb: np.ndarray, model: RowModel) -> int:
    """Local nearest centroid argmax_h psi(x, mu_h) [V: Sadowski], or the k-NN vote (option ``knn``) [P]."""
    y_nb = est._y_idx[nb]
    if est.degenerate == "knn":
        votes = np.bincount(y_nb, minlength=len(est.classes_)).astype(np.float64)
        return tie_winner(list(votes), list(est.class_prior_), list(y_nb))
    return _reference_argmax(est, model.t, model.classes, y_nb)


# ------------------------------------------------- the compiled kernels, called like the reference
def _fit_row_fast(S, s, nb, y_idx, n_classes, support: Support, prior=None, stop_early=False) -> RowModel:
    """``fit_row`` through the compiled kernel (for tests): the same RowModel, status names included."""
    discrete = support.omega is not None
    omega = np.ascontiguousarray(support.omega if discrete else np.empty(0), dtype=np.float64)
    w = np.empty(omega.size)
    classes, mu, c, lam, status, log_prior, err, err_x = _row_model_nb(
        np.ascontiguousarray(S, dtype=np.float64), np.ascontiguousarray(s, dtype=np.float64),
        np.ascontiguousarray(nb, dtype=np.int64), np.ascontiguousarray(y_idx, dtype=np.int64), int(n_classes),
        float(support.lo), float(support.hi), omega, discrete,
        np.empty(0) if prior is None else np.ascontiguousarray(prior, dtype=np.float64), prior is not None,
        bool(stop_early), w,
    )
    _raise_brent_error(err, err_x, 0)
    return RowModel(classes.astype(np.intp), mu.astype(np.intp), s[mu], c, lam, STATUS_NAMES[status], log_prior)


def _log_scores_fast(model: RowModel, s, support: Support, exact: bool = False) -> np.ndarray:
    """``log_scores`` through the compiled kernel (for tests)."""
    discrete = support.omega is not None
    omega = np.ascontiguousarray(support.omega if discrete else np.empty(0), dtype=np.float64)
    codes = {name: i for i, name in enumerate(STATUS_NAMES)}
    status = np.array([[codes[x] for x in row] for row in model.status], dtype=np.int64).reshape(model.status.shape)
    return _log_scores_nb(
        np.asarray(model.classes, dtype=np.int64), np.asarray(model.mu, dtype=np.int64),
        np.ascontiguousarray(s, dtype=np.float64), model.c, model.lam, status,
        np.asarray(model.log_prior, dtype=np.float64), float(support.lo), float(support.hi), omega, discrete,
        bool(exact), np.empty(omega.size),
    )


def _solve_lambda_fast(c: float, support: Support) -> tuple[float, str]:
    """``solve_lambda`` through the compiled kernel (for tests)."""
    discrete = support.omega is not None
    omega = np.ascontiguousarray(support.omega if discrete else np.empty(0), dtype=np.float64)
    lam, status, err = _solve_lambda_nb(float(c), float(support.lo), float(support.hi), omega, discrete,
                                        np.empty(omega.size))
    _raise_brent_error(err, lam, 0)
    return float(lam), str(STATUS_NAMES[status])



def _discrete(omega):
    omega = np.sort(np.asarray(omega, dtype=np.float64))
    return Support(float(omega[0]), float(omega[-1]), omega)


# ---------------------------------------------------------------- lambda
@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_lambda_solves_constraint_and_minimises_dual(kind):
    rng = np.random.default_rng(1)
    omega = np.sort(rng.uniform(-0.4, 1.3, 25))
    sup = _discrete(omega) if kind == "discrete" else Support(-0.4, 1.3)
    r = support_r(sup)
    grid = np.linspace(-300, 300, 120000) / r  # step ~5e-3 / r, avoids 0
    if kind == "discrete":
        log_z = logsumexp(grid[:, None] * omega[None, :], axis=1)
    else:
        t = grid * r  # log Z = log((e^{lam hi} - e^{lam lo}) / lam), no grid point at 0
        log_z = grid * sup.lo + np.log(np.expm1(t) / t) + np.log(r)
    for q in (0.02, 0.2, 0.5, 0.77, 0.98):
        c = sup.lo + q * r
        lam, status = solve_lambda(c, sup)
        assert status == "ok"
        assert abs(support_mean(sup, lam) - c) < 1e-9 * r
        F = log_z - grid * c
        lam_grid = grid[np.argmin(F)]
        assert abs(lam - lam_grid) <= 5e-3 / r
        assert support_log_z(sup, lam) - lam * c <= F.min() + 1e-12


def test_lambda_near_boundary_dense_support_and_degenerate_statuses():
    sup = _discrete(np.linspace(0.0, 1.0, 1000))  # the Voting-size grid
    lam, status = solve_lambda(0.995, sup)
    assert status == "ok" and lam > 100 and abs(support_mean(sup, lam) - 0.995) < 1e-9
    assert solve_lambda(1.0 - 1e-7, sup) == (1e3, "cap")  # root beyond |lambda| <= 1e3 / r
    assert solve_lambda(1e-7, sup) == (-1e3, "cap")
    assert solve_lambda(1.0 - 1e-10, sup) == (np.inf, "boundary")
    assert solve_lambda(0.0, sup) == (-np.inf, "boundary")
    assert solve_lambda(0.5, _discrete([0.3, 0.3]))[1] == "boundary"  # r = 0
    # stable m and log Z far beyond the cap (no overflow)
    assert discrete_mean(1e6, sup.omega) == 1.0
    assert discrete_log_z(1e6, sup.omega) == pytest.approx(1e6)


def test_support_from_fit_set():
    S = np.array([[1.0, 0.2, 0.2], [0.2, 1.0, 0.5], [0.0, 0.5, 1.0]])
    np.testing.assert_array_equal(make_support(S).omega, [0.0, 0.2, 0.5, 1.0])
    grid = make_support(S, max_support=3).omega  # 4 unique values > 3 -> equally spaced
    np.testing.assert_allclose(grid, [0.0, 0.5, 1.0])
    cont = make_support(S, "continuous")
    assert cont.omega is None and (cont.lo, cont.hi) == (0.0, 1.0)


@pytest.mark.parametrize("n_unique", [5, 40, 41, 300])
def test_support_by_row_blocks_equals_unique_of_the_whole_matrix(monkeypatch, n_unique):
    """Omega read by row blocks of 2 rows (stopping once there are more than max_support values) is np.unique of
    the whole matrix when it has at most max_support = 40 values, else 40 equally spaced points."""
    from hlm.distances import _conversions as conversions

    read = []

    def row_blocks(n_rows, n_cols):  # blocks of 2 rows, each recorded as the loop reads it
        for rows in conversions.row_blocks(n_rows, n_cols, 2 * n_cols):
            read.append(rows)
            yield rows

    monkeypatch.setattr(local_sda_module, "row_blocks", row_blocks)
    rng = np.random.default_rng(n_unique)
    S = rng.choice(rng.normal(size=n_unique), size=(23, 23))
    values = np.unique(S)
    got = make_support(S, max_support=40)
    if values.size <= 40:
        np.testing.assert_array_equal(got.omega, values)
        assert len(read) == 12  # every block
    else:
        np.testing.assert_array_equal(got.omega, np.linspace(S.min(), S.max(), 40))
        first = next(i for i in range(1, 13) if np.unique(S[: 2 * i]).size > 40)
        assert len(read) == first  # stopped at the block that passed 40 values
    assert (got.lo, got.hi) == (S.min(), S.max())


# ---------------------------------------------------------------- continuous support
def test_continuous_mean_and_log_z_match_quadrature():
    lo, hi = -0.3, 1.2
    for lam in (-60.0, -3.0, -1e-5, 2e-4, 0.7, 25.0):
        z = quad(lambda w, lam=lam: np.exp(lam * w), lo, hi, epsabs=0, epsrel=1e-13)[0]
        m = quad(lambda w, lam=lam: w * np.exp(lam * w), lo, hi, epsabs=1e-14, epsrel=1e-13)[0] / z
        assert continuous_mean(lam, lo, hi) == pytest.approx(m, abs=1e-11)
        assert continuous_log_z(lam, lo, hi) == pytest.approx(np.log(z), abs=1e-11)


def test_continuous_lambda_to_zero_limit():
    lo, hi = -0.3, 1.2
    r = hi - lo
    assert continuous_mean(0.0, lo, hi) == pytest.approx((lo + hi) / 2, abs=1e-15)
    assert continuous_log_z(0.0, lo, hi) == pytest.approx(np.log(r), abs=1e-15)
    # the spec's closed form, evaluated where it is well conditioned, joins the series branch smoothly
    t = 1e-2  # the series / closed-form switch
    series = (lo + hi) / 2 + r * (t / 12 - t**3 / 720 + t**5 / 30240)
    for lam in ((t * (1 - 1e-12)) / r, (t * (1 + 1e-12)) / r):
        assert continuous_mean(lam, lo, hi) == pytest.approx(series, abs=1e-13)
    for t in (1e-12, 1e-7, -1e-4):  # first-order limit m = mid + r t / 12
        assert continuous_mean(t / r, lo, hi) == pytest.approx((lo + hi) / 2 + r * t / 12, abs=1e-14)
    lam = 0.5
    closed = (hi * np.exp(lam * hi) - lo * np.exp(lam * lo)) / (np.exp(lam * hi) - np.exp(lam * lo)) - 1 / lam
    assert continuous_mean(lam, lo, hi) == pytest.approx(closed, abs=1e-14)
    # huge |lambda|: the mean goes to the ends without overflow
    assert continuous_mean(1e6, lo, hi) == pytest.approx(hi - 1 / 1e6, abs=1e-12)
    assert continuous_mean(-1e6, lo, hi) == pytest.approx(lo + 1 / 1e6, abs=1e-12)


# ---------------------------------------------------------------- hand-made example
# Omega = {0, 1}: m(lambda) = sigmoid(lambda), so lambda_gh = logit(c_gh) and
# lambda t - log Z = t logit(c) + log(1 - c).
S_HAND = np.array(
    [  # rows are "from"; classes a, a, a, b, b, b
        [1, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [0, 0, 1, 1, 0, 0],
        [0, 0, 1, 1, 0, 0],
        [1, 0, 0, 0, 1, 0],
        [0, 0, 0, 0, 0, 1],
    ],
    dtype=np.float64,
)
Y_HAND = np.array(["a", "a", "a", "b", "b", "b"])
# neighbours (k=5): 3, 0, 4, 1, 2; object 5 (s = 0) is left out
S_TE_HAND = np.array([[0.5, 0.1, 0.1, 0.9, 0.2, 0.0]])


def _hand_scores(log_pa, log_pb):
    # mu_a = 0 (column sums over a-rows 0,1,2: 2, 1, 1); mu_b = 3 (tie 1, 1 with
    # object 4, broken by larger psi(x, v): 0.9 > 0.2). t = (s[0], s[3]) = (0.5, 0.9).
    # c_aa = mean S[{0,1,2}, 0] = 2/3, c_ab = mean S[{0,1,2}, 3] = 1/3,
    # c_ba = mean S[{3,4}, 0] = 1/2, c_bb = mean S[{3,4}, 3] = 1/2
    def term(c, t):
        return t * np.log(c / (1 - c)) + np.log(1 - c)

    a = log_pa + term(2 / 3, 0.5) + term(1 / 3, 0.9)
    b = log_pb + term(1 / 2, 0.5) + term(1 / 2, 0.9)
    return np.array([a, b])


def test_hand_example_decision():
    m = LocalSDA(n_neighbors=5).fit(S_HAND, Y_HAND)
    np.testing.assert_array_equal(m.support_.omega, [0.0, 1.0])
    s, nb = S_TE_HAND[0], m._neighbours(S_TE_HAND)[0]
    np.testing.assert_array_equal(nb, [3, 0, 4, 1, 2])
    row = fit_row(m._S, s, nb, m._y_idx, m.support_, prior=None)
    np.testing.assert_array_equal(row.mu, [0, 3])
    np.testing.assert_allclose(row.c, [[2 / 3, 1 / 3], [1 / 2, 1 / 2]], atol=1e-15)
    np.testing.assert_allclose(row.lam, np.log(row.c / (1 - row.c)), atol=1e-9)
    # local prior 3/5, 2/5: a wins by ~0.0104 although the nearest centroid is b's
    expected = _hand_scores(np.log(0.6), np.log(0.4))
    np.testing.assert_allclose(log_scores(row, m.support_), expected, atol=1e-9)
    assert expected[0] - expected[1] > 0.01
    assert m.predict(S_TE_HAND)[0] == "a" and m.n_degenerate_ == 0
    # global prior 1/2, 1/2 flips the decision to b
    g = LocalSDA(n_neighbors=5, prior="global").fit(S_HAND, Y_HAND)
    row_g = fit_row(g._S, s, nb, g._y_idx, g.support_, prior=np.log(g.class_prior_))
    expected_g = _hand_scores(np.log(0.5), np.log(0.5))
    np.testing.assert_allclose(log_scores(row_g, g.support_), expected_g, atol=1e-9)
    assert expected_g[1] - expected_g[0] > 0.3
    assert g.predict(S_TE_HAND)[0] == "b"


# Three classes on Omega = {0, 1/2, 1}, by hand (no code of production or of the oracle): with u = e^(lambda/2),
# m(lambda) = (u/2 + u^2) / (1 + u + u^2), so m = c solves (c - 1) u^2 + (c - 1/2) u + c = 0; for c = 3/4,
# u^2 - u - 3 = 0, u = (1 + sqrt 13) / 2; c = 1/4 gives 1/u. log p(t) = lambda t - log Z, Z = 1 + u + u^2.
S_THREE = np.array(
    [  # rows are "from"; classes a, a, b, b, c, c
        [1.0, 0.5, 0.0, 0.5, 0.0, 0.0],
        [0.5, 1.0, 0.5, 0.0, 0.0, 0.5],
        [0.0, 0.5, 1.0, 0.5, 0.5, 0.0],
        [0.5, 0.0, 0.5, 1.0, 0.0, 0.5],
        [0.0, 0.0, 0.5, 0.0, 1.0, 0.5],
        [0.5, 0.5, 0.0, 0.0, 0.5, 1.0],
    ]
)
Y_THREE = np.array(["a", "a", "b", "b", "c", "c"])
# every class's centroid candidates tie (column sums 1.5): broken by the larger psi(x, v): mu = (0, 2, 5)
S_TE_THREE = np.array([[0.9, 0.3, 0.6, 0.2, 0.1, 0.7]])
U_THREE = (1 + np.sqrt(13)) / 2  # u of c = 3/4 on {0, 1/2, 1}; c = 1/4 has 1/u
Z_THREE = 1 + U_THREE + U_THREE**2


def three_point_pmf(c, t):
    """gamma e^(lambda t) on Omega = {0, 1/2, 1} for the constraints of the hand examples, by hand: c = 3/4 gives
    u^(2t) / Z, c = 1/4 gives u^(2 - 2t) / Z (Z(-lambda) = Z / u^2), c = 1/2 the uniform 1/3 (lambda = 0)."""
    t = np.asarray(t, dtype=float)
    if c == 0.5:
        return np.full_like(t, 1 / 3)
    if c not in (0.25, 0.75):
        raise ValueError(f"no hand-made pmf for c = {c}")
    return U_THREE ** (2 * t if c == 0.75 else 2 - 2 * t) / Z_THREE


def test_three_class_hand_example_on_a_three_point_support():
    """c_gh = mean over class g's neighbours of S[i, mu_h] = 3/4 on the diagonal, 1/4 off it; lambda = +-L with
    L = 2 log((1 + sqrt 13) / 2), log Z(1/4) = log Z(3/4) - L. With t = (0.9, 0.6, 0.7) and the local prior
    (2 of 6 each), score_g = log(1/3) + L * (1.6, 1.0, 1.2)_g - 3 log Z(3/4): a wins."""
    m = LocalSDA(n_neighbors=6).fit(S_THREE, Y_THREE)
    np.testing.assert_array_equal(m.support_.omega, [0.0, 0.5, 1.0])
    L, log_z = 2 * np.log(U_THREE), np.log(Z_THREE)
    scores = np.log(1 / 3) + L * np.array([1.6, 1.0, 1.2]) - 3 * log_z
    expected = np.exp(scores - logsumexp(scores))
    np.testing.assert_allclose(m.predict_proba(S_TE_THREE)[0], expected, rtol=0, atol=1e-9)  # Brent's xtol
    assert m.predict(S_TE_THREE)[0] == "a" and m.n_degenerate_ == 0
    # k = 4 keeps objects 0, 5, 2, 1: classes b and c have one neighbour each, their constraints are degenerate,
    # and the row falls back to the nearest centroid, a's (0.9)
    four = LocalSDA(n_neighbors=4).fit(S_THREE, Y_THREE)
    assert four.predict(S_TE_THREE)[0] == "a" and four.n_degenerate_ == 1


# ---------------------------------------------------------------- degeneracy
S_DEG = np.array(
    [[1.0, 0.7, 0.3, 0.2], [0.7, 1.0, 0.35, 0.25], [0.3, 0.35, 1.0, 0.1], [0.2, 0.25, 0.1, 1.0]]
)
Y_DEG = np.array(["a", "a", "a", "b"])
S_TE_DEG = np.array([[0.8, 0.5, 0.4, 0.9]])  # k=3: neighbours 3 (b), 0, 1 (a); k_b = 1


def test_degenerate_when_class_has_one_neighbour_falls_back_to_nearest_centroid():
    m = LocalSDA(n_neighbors=3).fit(S_DEG, Y_DEG)
    nb = m._neighbours(S_TE_DEG)[0]
    row = fit_row(m._S, S_TE_DEG[0], nb, m._y_idx, m.support_, prior=None)
    # c_bb = psi(mu_b, mu_b) = 1 = max Omega: a point mass
    assert row.status[1, 1] == "boundary" and row.c[1, 1] == 1.0
    # mu_a: column sums over {0, 1} tie (1.7, 1.7) -> larger psi(x, v): object 0
    np.testing.assert_array_equal(row.mu, [0, 3])
    # nearest centroid: psi(x, mu_b) = 0.9 > psi(x, mu_a) = 0.8 -> b; the k-NN vote would say a
    assert m.predict(S_TE_DEG)[0] == "b" and m.n_degenerate_ == 1
    knn = LocalSDA(n_neighbors=3, degenerate="knn").fit(S_DEG, Y_DEG)
    assert knn.predict(S_TE_DEG)[0] == "a" and knn.n_degenerate_ == 1


def test_fallback_uses_local_centroid_not_nearest_neighbour():
    # a: object 0; b: 1 (an outlier of b, but x's nearest), 2, 3. mu_b: column sums over
    # {1,2,3} are 1.2, 2.0, 2.0 -> tie -> larger psi(x, v): object 2 (0.6 > 0.5).
    S = np.array(
        [[1.0, 0.2, 0.3, 0.3], [0.2, 1.0, 0.1, 0.1], [0.3, 0.1, 1.0, 0.9], [0.3, 0.1, 0.9, 1.0]]
    )
    y = np.array(["a", "b", "b", "b"])
    s_te = np.array([[0.85, 0.9, 0.6, 0.5]])
    # k_a = 1 -> degenerate; centroid rule: psi(x, mu_a) = 0.85 > psi(x, mu_b) = 0.6 -> a,
    # while the nearest neighbour and the k-NN vote say b
    m = LocalSDA(n_neighbors=4).fit(S, y)
    assert m.predict(s_te)[0] == "a" and m.n_degenerate_ == 1
    assert LocalSDA(n_neighbors=4, degenerate="knn").fit(S, y).predict(s_te)[0] == "b"


def test_exact_option_point_masses():
    m = LocalSDA(n_neighbors=3, degenerate="exact").fit(S_DEG, Y_DEG)
    # psi(x, mu_b) = 0.9 != 1: class b has probability 0; class a has c_ab = 0.225 inside
    # Omega, so it keeps a finite score and wins, without fallback
    assert m.predict(S_TE_DEG)[0] == "a" and m.n_degenerate_ == 0
    # a test object identical to object 3 matches b's point mass: b gets log 1 there
    dup = S_DEG[[3]]
    nb = m._neighbours(dup)[0]
    row = fit_row(m._S, dup[0], nb, m._y_idx, m.support_, prior=None)
    sc = log_scores(row, m.support_, exact=True)
    assert row.status[1, 1] == "boundary" and np.isfinite(sc[1])
    # k = 2 with k_a = k_b = 1: both c_gg are point masses at 1 that x misses -> fallback
    m2 = LocalSDA(n_neighbors=2, degenerate="exact").fit(S_DEG, Y_DEG)
    assert m2.predict(S_TE_DEG)[0] == "b" and m2.n_degenerate_ == 1


def test_single_class_neighbourhood_shortcut():
    """|G_x| = 1: the row is that class without a model (spec 6.5). Objects 0 and 1 are identical (s = 1), so
    class a's model on the neighbours {0, 1} would have its mean at the support's top, a degenerate
    constraint, and the row would fall back (n_degenerate_ = 1): the shortcut is what keeps n_degenerate_ 0."""
    S = S_DEG.copy()
    S[0, 1] = S[1, 0] = 1.0
    m = LocalSDA(n_neighbors=2).fit(S, Y_DEG)
    x = np.array([[0.9, 0.8, 0.1, 0.7]])  # neighbours 0, 1 (both a) although b's single object is nearer than 2
    assert m.predict(x)[0] == "a" and m.n_degenerate_ == 0
    np.testing.assert_array_equal(m.predict_proba(x), [[1.0, 0.0]])
    assert _reference_predict(m, x) == (["a"], 0)
    # the same row with a 3-neighbourhood (b joins G_x) is modelled, and degenerate: the contrast
    three = LocalSDA(n_neighbors=3).fit(S, Y_DEG)
    three.predict(x)
    assert three.n_degenerate_ == 1
    b_only = LocalSDA(n_neighbors=1).fit(S_DEG, Y_DEG)
    assert b_only.predict(S_TE_DEG)[0] == "b"


def test_k_capped_and_neighbour_ties_by_index():
    m = LocalSDA(n_neighbors=50).fit(S_DEG, Y_DEG)
    np.testing.assert_array_equal(m._neighbours(np.array([[0.5, 0.5, 0.5, 0.5]]))[0], [0, 1, 2, 3])
    m.predict(S_TE_DEG)  # runs with k = n_fit


# ---------------------------------------------------------------- sklearn plumbing, input checks
def _blob_similarity(seed=0, n_per=25):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (n_per, 2)), rng.normal(2.5, 1, (n_per, 2))])
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-D2 / 4.0), np.repeat([0, 1], n_per)


def blob_accuracy_floor(seed=0, n_per=25) -> float:
    """A floor for a classifier's CV accuracy on ``_blob_similarity``'s objects, from the data: the Bayes rule of
    its two unit-covariance Gaussians (means 0 and (2.5, 2.5): class 1 iff x1 + x2 > 2.5) on the same objects,
    less 3 of its binomial SE, sqrt(a (1 - a) / n)."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (n_per, 2)), rng.normal(2.5, 1, (n_per, 2))])
    a = np.mean((X.sum(axis=1) > 2.5) == np.repeat([0, 1], n_per).astype(bool))
    return float(a - 3 * np.sqrt(a * (1 - a) / len(X)))


@pytest.mark.parametrize("support", ["discrete", "continuous"])
def test_pairwise_cross_val_score(support):
    S, y = _blob_similarity()
    assert LocalSDA().__sklearn_tags__().input_tags.pairwise
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    acc = cross_val_score(LocalSDA(n_neighbors=8, support=support), S, y, cv=cv)
    assert acc.shape == (5,) and acc.mean() >= blob_accuracy_floor()  # the Bayes rule's 0.94 here, less 3 SE: 0.84


def check_bad_input(cls, bad_params) -> None:
    """The input checks every estimator of the local SDA family shares: a fit matrix that is not square
    or not finite, labels of the wrong length or of one class, test rows of the wrong width or not finite
    (``predict`` and, where there is one, ``predict_proba``) raise DataError; each of ``bad_params``
    raises InvalidParameterError at fit."""
    S, y = _blob_similarity(n_per=5)
    nan_S = S.copy()
    nan_S[0, 1] = np.nan
    for fit_args in ((S[:, :-1], y), (S, y[:-1]), (S, np.zeros_like(y)), (nan_S, y)):
        with pytest.raises(DataError):
            cls().fit(*fit_args)
    m = cls().fit(S, y)
    for rows in (S[:, :-1], np.full((1, S.shape[1]), np.nan), np.full((1, S.shape[1]), np.inf)):
        for method in ("predict", "predict_proba"):
            if hasattr(m, method):
                with pytest.raises(DataError):
                    getattr(m, method)(rows)
    for kw in bad_params:
        with pytest.raises(InvalidParameterError):
            cls(**kw).fit(S, y)


def test_bad_input_and_params():
    check_bad_input(LocalSDA, ({"n_neighbors": 0}, {"support": "histogram"}, {"prior": "flat"},
                               {"degenerate": "drop"}, {"max_support": 1}))


# ---------------------------------------------------------------- compiled kernel == reference, to rounding
# The compiled kernels repeat the reference's operations in its order, but numpy picks its exp/log
# kernels by CPU at import (AVX-512F has its own SIMD code) while numba calls libm: the two agree to
# a few ulp, not to the last bit. So the tests ask what the computation guarantees: the same
# decisions (classes, centroids, statuses, predictions) and values within a bound derived from the
# operation -- the moment constraint for lambda, a few ulp of the summands' scale for sums.
EPS = np.finfo(np.float64).eps
#: ulp budget of a sum of exp/log terms: a few ulp per libm/SIMD call, log2(n) from pairwise summation
ULPS = 64


def _bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and bool(np.all(a == b))
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def _random_support(rng, kind):
    if kind == "discrete":
        return _discrete(rng.uniform(-1.0, 2.0, int(rng.integers(2, 80))))
    if kind == "rounded":  # few distinct values, like Voting's
        omega = np.unique(np.round(rng.uniform(0, 1, int(rng.integers(3, 1000))), int(rng.integers(1, 4))))
        return _discrete(omega) if omega.size > 1 else _discrete([0.0, 1.0])
    if kind == "grid":  # the max_support grid
        return _discrete(np.linspace(0.0, 1.0, int(rng.integers(2, 1001))))
    lo = float(rng.uniform(-1.0, 0.5))
    return Support(lo, lo + float(rng.exponential(1.0)) + 1e-3)


#: fractions q of c = lo + q r: interior, near the boundary tolerance 1e-9 r, beyond the cap, outside
_EDGE_Q = (1e-12, 1e-10, 2e-9, 1e-8, 1e-7, 1e-5, 1e-3, 0.5, 1 - 1e-3, 1 - 1e-5, 1 - 1e-7, 1 - 1e-8,
           1 - 2e-9, 1 - 1e-10, 0.0, 1.0, -0.1, 1.1)


def _mean_noise(sup: Support, c: float = 0.0) -> float:
    """Bound on the rounding of m(lambda) - c: ULPS ulp of the support's scale (m is a weighted mean of Omega)."""
    return ULPS * EPS * (max(abs(sup.lo), abs(sup.hi)) + abs(c))


def assert_solves_moment_constraint(lam: float, c: float, sup: Support):
    """lambda is a root of m(lambda) = c to Brent's tolerance: scipy's brentq guarantees the exact root
    within xtol + rtol |lambda|, so m - c changes sign (up to its rounding) across that interval."""
    delta = 1.01 * (lsda.XTOL / support_r(sup) + lsda._BRENT_RTOL * abs(lam))
    noise = _mean_noise(sup, c)
    below, above = support_mean(sup, lam - delta) - c, support_mean(sup, lam + delta) - c
    assert below <= noise and above >= -noise, (lam, c, sup.lo, sup.hi, below, above)


@pytest.mark.parametrize("kind", ["discrete", "rounded", "grid", "continuous"])
def test_compiled_lambda_equals_scipy_brentq_to_its_tolerance(kind):
    """The numba port of scipy's brentq.c (with the same bracket doubling) reaches the same status as
    ``solve_lambda`` (scipy.optimize.brentq), and both of its lambdas meet the moment constraint."""
    from scipy.optimize import brentq

    assert lsda_ref.brentq is brentq
    rng = np.random.default_rng({"discrete": 1, "rounded": 2, "grid": 3, "continuous": 4}[kind])
    statuses = set()
    for _ in range(120):
        sup = _random_support(rng, kind)
        for q in (*rng.uniform(0, 1, 6), *_EDGE_Q):
            c = sup.lo + q * support_r(sup)
            ref = solve_lambda(c, sup)
            fast = _solve_lambda_fast(c, sup)
            assert fast[1] == ref[1], (c, sup.lo, sup.hi, ref, fast)  # the decision: ok, boundary or cap
            if ref[1] == "ok":
                assert_solves_moment_constraint(ref[0], c, sup)
                assert_solves_moment_constraint(fast[0], c, sup)
            else:  # +-inf at the boundary, +-cap: no rounding involved
                assert fast[0] == ref[0], (c, ref, fast)
            statuses.add(ref[1])
    assert statuses == {"ok", "boundary", "cap"}


def test_compiled_mean_and_log_z_equal_reference_to_rounding():
    """m(lambda) and log Z(lambda), compiled and numpy: within ULPS ulp of the magnitudes they add up."""
    rng = np.random.default_rng(5)
    lo, hi = -0.3, 1.2
    r = hi - lo
    lams = [0.0, 1e6, -1e6, *(np.array([1e-2, -1e-2]) / r), *(rng.normal(0, 1, 300) * 10.0 ** rng.integers(-6, 4, 300))]
    lams += [t * (1 + e) / r for t in (1e-2, -1e-2) for e in (-1e-15, 1e-15, -1e-12, 1e-12)]  # series switch
    omega = np.sort(rng.uniform(lo, hi, 333))
    w = np.empty(omega.size)
    scale = max(abs(lo), abs(hi))
    for lam in lams:
        lam = float(lam)
        top = hi if lam >= 0 else lo
        # the mean is a convex combination of support points: its rounding is a few ulp of max |w|
        assert abs(kernels._continuous_mean_nb(lam, lo, hi) - continuous_mean(lam, lo, hi)) <= ULPS * EPS * scale
        assert abs(kernels._discrete_mean_nb(lam, omega, w) - discrete_mean(lam, omega)) <= ULPS * EPS * scale
        # log Z = lambda top + log(sum): rounding relative to |lambda top| + |log r| + 1 (the log's scale)
        log_scale = abs(lam * top) + abs(np.log(r)) + np.log(omega.size) + 1.0
        for fast, ref in ((kernels._continuous_log_z_nb(lam, lo, hi), continuous_log_z(lam, lo, hi)),
                          (kernels._discrete_log_z_nb(lam, omega, w), discrete_log_z(lam, omega))):
            assert abs(fast - ref) <= ULPS * EPS * log_scale, (lam, fast, ref)


def test_compiled_pairwise_sum_is_numpys():
    rng = np.random.default_rng(6)
    for n in [*range(1, 300), 511, 512, 513, 1000, 1023, 1024, 1025, 4099, 70001]:
        a = np.exp(rng.normal(0, 3, n))
        assert kernels._pairwise_sum(a, 0, n) == a.sum()


def _random_problem(rng, n, n_classes, style):
    """A similarity fold with 2-4 classes: smooth, rounded (ties, few values), noisy (negative,
    asymmetric) or with duplicated columns."""
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    X = rng.normal(size=(n, 3)) + 1.5 * np.eye(3)[y % 3]
    S = np.exp(-np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)))
    if style == "rounded":
        S = np.round(S, 1)
    elif style == "noisy":
        S = S + 0.05 * rng.normal(size=S.shape)
    elif style == "duplicates":
        S = np.round(S * 16) / 16
        S[:, 1] = S[:, 0]
    val = np.arange(n) % 3 == 0
    return S[np.ix_(~val, ~val)], y[~val], S[np.ix_(val, ~val)]


STYLES = ["smooth", "rounded", "noisy", "duplicates"]


@pytest.mark.parametrize("support", ["discrete", "continuous"])
@pytest.mark.parametrize("prior", ["local", "global"])
def test_compiled_row_model_and_scores_equal_reference(support, prior):
    """The kernel's row model equals fit_row's: the same classes, centroids and statuses (decisions),
    c and the log prior to rounding, lambda solving the same moment constraint; its scores equal
    log_scores' up to the rounding of their terms and the lambdas' difference times d score/d lambda."""
    rng = np.random.default_rng(7)
    n_rows, statuses = 0, set()
    for trial in range(8):
        S_fit, y_fit, S_val = _random_problem(rng, 60, 2 + trial % 3, STYLES[trial % 4])
        max_support = 1000 if trial % 2 else 20
        m = LocalSDA(n_neighbors=4 + 5 * (trial % 3), support=support, prior=prior, max_support=max_support)
        m.fit(S_fit, y_fit)
        sup = m.support_
        log_prior = None if prior == "local" else np.log(m.class_prior_)
        s_scale = np.abs(m._S).max()
        for s, nb in zip(S_val, m._neighbours(S_val)):
            if np.all(m._y_idx[nb] == m._y_idx[nb[0]]):
                continue
            for stop_early in (False, True):
                ref = fit_row(m._S, s, nb, m._y_idx, sup, log_prior, stop_early=stop_early)
                fast = _fit_row_fast(m._S, s, nb, m._y_idx, len(m.classes_), sup, log_prior, stop_early)
                for field in ("classes", "mu", "t", "status"):  # decisions, and s at the chosen centroids
                    assert _bits_equal(getattr(ref, field), getattr(fast, field)), field
                # c: means of k_g similarities; the log prior: one log each
                np.testing.assert_allclose(fast.c, ref.c, rtol=0, atol=ULPS * EPS * s_scale)
                np.testing.assert_allclose(fast.log_prior, ref.log_prior, rtol=ULPS * EPS, atol=ULPS * EPS)
                solved = ref.status == "ok"
                for lam_f, lam_r, c in zip(fast.lam[solved], ref.lam[solved], ref.c[solved]):
                    assert_solves_moment_constraint(lam_f, c, sup)
                    assert_solves_moment_constraint(lam_r, c, sup)
                unsolved_or_degenerate = ~solved
                assert _bits_equal(fast.lam[unsolved_or_degenerate], ref.lam[unsolved_or_degenerate])
                statuses |= set(ref.status.ravel())
                n_rows += 1
                if not stop_early:
                    for exact in (False, True):
                        got, want = _log_scores_fast(ref, s, sup, exact=exact), log_scores(ref, sup, exact=exact)
                        assert _bits_equal(np.isfinite(got), np.isfinite(want))
                        finite = np.isfinite(want)
                        _assert_within(got[finite], want[finite], _score_tolerance(ref, sup)[finite])
                        # the kernel's own lambdas: the score moves by (t_h - m(lambda)) per unit of lambda
                        got = _log_scores_fast(fast, s, sup, exact=exact)
                        with np.errstate(invalid="ignore"):  # inf - inf where both are the same point mass
                            dlam = np.where(fast.lam == ref.lam, 0.0, np.abs(fast.lam - ref.lam))
                        slope = np.abs(ref.t[None, :] - ref.c)
                        atol = _score_tolerance(ref, sup) + np.nansum(dlam * slope, axis=1)
                        _assert_within(got[finite], want[finite], atol[finite])
    assert n_rows > 100 and {"ok", "boundary"} <= statuses


def _assert_within(got, want, atol):
    """|got - want| <= atol elementwise (atol an array: one bound per entry)."""
    err = np.abs(np.asarray(got) - np.asarray(want))
    assert np.all(err <= atol), (got, want, err, atol)


def _score_tolerance(model: RowModel, sup: Support) -> np.ndarray:
    """Rounding bound of log P(g) + sum_h (lambda t_h - log Z): ULPS ulp of the sum of its terms' magnitudes."""
    lam = np.where(np.isfinite(model.lam), model.lam, 0.0)
    log_z = np.array([[abs(support_log_z(sup, v)) for v in row] for row in lam])
    terms = np.abs(model.log_prior) + np.sum(np.abs(lam * model.t[None, :]) + log_z, axis=1)
    return ULPS * EPS * (terms + 1.0)


@pytest.mark.parametrize("support", ["discrete", "continuous"])
@pytest.mark.parametrize("degenerate", ["centroid", "knn", "exact"])
@pytest.mark.parametrize("prior", ["local", "global"])
def test_compiled_predict_equals_reference(support, degenerate, prior):
    """predict (compiled kernel) == the row-by-row reference: labels and fallback counts."""
    rng = np.random.default_rng(8)
    n_fallback = n_scored = 0
    for trial in range(8):
        S_fit, y_fit, S_val = _random_problem(rng, 75, 2 + trial % 3, STYLES[trial % 4])
        for k in (1, 2, 3, 6, 12, 30):
            m = LocalSDA(n_neighbors=k, support=support, prior=prior, degenerate=degenerate,
                         max_support=1000 if trial % 2 else 25).fit(S_fit, y_fit)
            pred = m.predict(S_val)
            ref, n_deg = _reference_predict(m, S_val)
            np.testing.assert_array_equal(pred, ref, err_msg=f"trial {trial}, k {k}")
            assert m.n_degenerate_ == n_deg
            n_fallback += n_deg
            n_scored += len(S_val) - n_deg
    assert n_fallback > 0 and n_scored > 0


def test_predict_grid_equals_refits_for_every_option():
    from hlm.base._grid import predict_each

    rng = np.random.default_rng(9)
    S_fit, y_fit, S_val = _random_problem(rng, 90, 3, "rounded")
    grid = [{"n_neighbors": k} for k in (1, 2, 4, 8, 16, 32, 64, 128)]
    for support in ("discrete", "continuous"):
        for degenerate in ("centroid", "knn", "exact"):
            est = LocalSDA(support=support, degenerate=degenerate, prior="global")
            for a, b in zip(est.predict_grid(S_fit, y_fit, S_val, grid), predict_each(est, S_fit, y_fit, S_val, grid)):
                np.testing.assert_array_equal(a, b)
    mixed = [{"n_neighbors": 4, "support": "continuous"}, {"n_neighbors": 8}]  # not k alone: one refit per point
    est = LocalSDA()
    for a, b in zip(est.predict_grid(S_fit, y_fit, S_val, mixed), predict_each(est, S_fit, y_fit, S_val, mixed)):
        np.testing.assert_array_equal(a, b)
