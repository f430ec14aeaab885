"""Local SDA (spec section 6.5): known answers and the section 9 oracles."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import logsumexp
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.utils._param_validation import InvalidParameterError

import hlm.models.local_sda as lsda
from hlm.errors import DataError
from hlm.models.local_sda import (
    LocalSDA,
    Support,
    continuous_log_z,
    continuous_mean,
    discrete_log_z,
    discrete_mean,
    fit_row,
    log_scores,
    make_support,
    solve_lambda,
)


def _discrete(omega):
    omega = np.sort(np.asarray(omega, dtype=np.float64))
    return Support(float(omega[0]), float(omega[-1]), omega)


# ---------------------------------------------------------------- lambda
@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_lambda_solves_constraint_and_minimises_dual(kind):
    rng = np.random.default_rng(1)
    omega = np.sort(rng.uniform(-0.4, 1.3, 25))
    sup = _discrete(omega) if kind == "discrete" else Support(-0.4, 1.3)
    r = sup.r
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
        assert abs(sup.mean(lam) - c) < 1e-9 * r
        F = log_z - grid * c
        lam_grid = grid[np.argmin(F)]
        assert abs(lam - lam_grid) <= 5e-3 / r
        assert sup.log_z(lam) - lam * c <= F.min() + 1e-12


def test_lambda_near_boundary_dense_support_and_degenerate_statuses():
    sup = _discrete(np.linspace(0.0, 1.0, 1000))  # the Voting-size grid
    lam, status = solve_lambda(0.995, sup)
    assert status == "ok" and lam > 100 and abs(sup.mean(lam) - 0.995) < 1e-9
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


# ---------------------------------------------------------------- continuous support
def test_continuous_mean_and_log_z_match_quadrature():
    lo, hi = -0.3, 1.2
    for lam in (-60.0, -3.0, -1e-5, 2e-4, 0.7, 25.0):
        z = quad(lambda w: np.exp(lam * w), lo, hi, epsabs=0, epsrel=1e-13)[0]
        m = quad(lambda w: w * np.exp(lam * w), lo, hi, epsabs=1e-14, epsrel=1e-13)[0] / z
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


def test_single_class_neighbourhood_shortcut(monkeypatch):
    m = LocalSDA(n_neighbors=2).fit(S_DEG, Y_DEG)

    def boom(*a, **k):
        raise AssertionError("fit_row must not run when |G_x| = 1")

    monkeypatch.setattr(lsda, "fit_row", boom)
    # neighbours 0, 1 (both a) although b's single object is the global minority
    assert m.predict(np.array([[0.9, 0.8, 0.1, 0.7]]))[0] == "a" and m.n_degenerate_ == 0
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


@pytest.mark.parametrize("support", ["discrete", "continuous"])
def test_pairwise_cross_val_score(support):
    S, y = _blob_similarity()
    assert LocalSDA().__sklearn_tags__().input_tags.pairwise
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    acc = cross_val_score(LocalSDA(n_neighbors=8, support=support), S, y, cv=cv)
    assert acc.shape == (5,) and acc.mean() > 0.85


def test_bad_input_and_params():
    S, y = _blob_similarity(n_per=5)
    with pytest.raises(DataError):
        LocalSDA().fit(S[:, :-1], y)
    with pytest.raises(DataError):
        LocalSDA().fit(S, y[:-1])
    bad = S.copy()
    bad[0, 1] = np.nan
    with pytest.raises(DataError):
        LocalSDA().fit(bad, y)
    m = LocalSDA().fit(S, y)
    with pytest.raises(DataError):
        m.predict(S[:, :-1])
    with pytest.raises(DataError):
        m.predict(np.full((1, S.shape[1]), np.inf))
    bad_params = (
        {"n_neighbors": 0},
        {"support": "histogram"},
        {"prior": "flat"},
        {"degenerate": "drop"},
        {"max_support": 1},
    )
    for kw in bad_params:
        with pytest.raises(InvalidParameterError):
            LocalSDA(**kw).fit(S, y)
