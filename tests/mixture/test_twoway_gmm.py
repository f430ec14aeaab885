"""Known answers for the two-way Gaussian mixture classifier and MDA (docs/twoway-gmm-spec.md section 7)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp
from scipy.stats import multivariate_normal, norm
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score
from sklearn.naive_bayes import GaussianNB
from sklearn.utils import get_tags

from hlm.errors import DataError
from hlm.mixture._twoway import TwoWayGMMClassifier
from hlm.mixture._twoway_em import (
    ClassData,
    Params,
    choose_clusters,
    cluster_gain,
    e_step,
    gem_m_step,
    initial_params,
    m_step,
    run_gem,
    statistics,
)
from hlm.pipeline.evaluation.cv import cv_errors, make_folds


def _blocks(rng, n_per=60, p=10, shift=5.0):
    """Two classes with per-variable means and sds (not one cluster structure)."""
    X0 = rng.normal(shift, rng.uniform(0.5, 2, p), size=(n_per, p))
    X1 = rng.normal(shift + rng.normal(0, 1, p), rng.uniform(0.5, 2, p), size=(n_per + 15, p))
    X = np.vstack([X0, X1])
    y = np.repeat(["a", "b"], [n_per, n_per + 15])
    return X, y


def _planted(rng, n_per=2000, p=40, L=4):
    """Data drawn from the two-way model (2.3): K = 2, R_k = 2, well separated (spec 7, test 5)."""
    truth = {}
    Xs, ys = [], []
    for k in range(2):
        c = rng.permutation(np.arange(p) % L)
        means = np.array([[-3.0, 0.0, 3.0, 6.0], [2.0, 5.0, -2.0, 1.0]]) + 1.5 * k
        variances = np.array([[1.0, 0.5, 2.0, 1.0], [0.7, 1.5, 1.0, 0.5]])
        weights = np.array([0.4, 0.6])
        z = rng.choice(2, size=n_per, p=weights)
        X = rng.normal(means[z][:, c], np.sqrt(variances[z][:, c]))
        truth[k] = dict(c=c, means=means, variances=variances, weights=weights, z=z)
        Xs.append(X)
        ys.append(np.full(n_per, k))
    return np.vstack(Xs), np.concatenate(ys), truth


def _one_line_error(match, fn):
    with pytest.raises(DataError, match=match) as info:
        fn()
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------ 1: L = p is MDA
def test_l_equal_p_is_mda_and_identity_is_a_fixed_point():
    rng = np.random.default_rng(1)
    X, y = _blocks(rng)
    p = X.shape[1]
    mda = TwoWayGMMClassifier(n_components=3, n_clusters=None, random_state=4).fit(X, y)
    for L in (p, p + 7):  # n_clusters > p is treated as p (spec 3.6)
        two = TwoWayGMMClassifier(n_components=3, n_clusters=L, random_state=4).fit(X, y)
        for a, b in zip(two.log_likelihood_path_, mda.log_likelihood_path_):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_array_equal(two.predict(X), mda.predict(X))
        np.testing.assert_array_equal(two.assignments_, np.tile(np.arange(p), (2, 1)))
        assert two.n_parameters_ == mda.n_parameters_ == 2 * (2 + 2 * 3 * p) + 1


@pytest.mark.parametrize("source", ["random", "digits"])
def test_cluster_step_forced_on_keeps_the_identity(source):
    """At L = p the identity is a fixed point of (2.12): GEM with the cluster step on follows MDA's path.
    On digits, pixels constant in a class tie exactly; the tie rule keeps them in their own clusters."""
    if source == "digits":
        X, y = load_digits(return_X_y=True)
        X, y = X[y < 5], y[y < 5]
    else:
        X, y = _blocks(np.random.default_rng(2), n_per=80, p=8)
        y = (y == "b").astype(int)
    X = X - X.mean()
    floor = 1e-3 * X.var(axis=0).mean()
    p = X.shape[1]
    ties = 0
    for k in np.unique(y):
        data = ClassData.of(X[y == k])
        q = np.eye(2)[np.random.default_rng(int(k)).permutation(data.n) % 2]
        runs = [run_gem([data], [initial_params(data, q, np.arange(p), p, ident, floor)], [p], [ident], [floor],
                        max_iter=30, tol=1e-6) for ident in (True, False)]
        np.testing.assert_allclose(runs[1].path, runs[0].path, rtol=1e-12)
        np.testing.assert_array_equal(runs[1].params[0].assignment, np.arange(p))
        fitted = runs[0].params[0]
        q, _ = e_step(data, fitted, p, True)
        s = statistics(data, q, fitted)
        G = cluster_gain(s, *m_step(s, fitted.assignment, p, True, fitted, floor)[1:])
        np.testing.assert_array_equal(choose_clusters(G, np.arange(p)), np.arange(p))
        ties += int((np.argmax(G, axis=1) != np.arange(p)).sum())  # exact ties: plain argmax moves them
    assert (ties > 0) == (source == "digits")


# ------------------------------------------------------------------ 2: diagonal QDA
def test_one_component_mda_is_diagonal_qda():
    rng = np.random.default_rng(3)
    X, y = _blocks(rng, n_per=50, p=6)
    m = TwoWayGMMClassifier(n_components=1, n_clusters=None, var_floor=1e-12, random_state=0).fit(X, y)
    assert m.n_iter_.tolist() == [1, 1] and m.converged_.all()
    for k, c in enumerate(m.classes_):
        Xc = X[y == c]
        np.testing.assert_allclose(m.means_[k][0] + m.shift_, Xc.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(m.variances_[k][0], Xc.var(axis=0), rtol=1e-10)
    np.testing.assert_allclose(np.exp(m.class_log_prior_), [50 / 115, 65 / 115], rtol=1e-14)
    Z = rng.normal(5, 2, size=(40, 6))
    nb = GaussianNB(var_smoothing=0).fit(X, y)
    np.testing.assert_allclose(m.predict_log_proba(Z), nb.predict_log_proba(Z), atol=1e-10)
    np.testing.assert_array_equal(m.predict(Z), nb.predict(Z))


# ------------------------------------------------------------------ 3: cluster step by brute force
def _expected_log_phi(X, observed, a, b, mu, var):
    """E log phi(x | mu, var) per entry: observed x, else x ~ N(a, b) (Appendix A.2)."""
    obs = norm.logpdf(np.where(observed, X, 0.0), mu, np.sqrt(var))
    mis = -0.5 * np.log(2 * np.pi * var) - ((a - mu) ** 2 + b) / (2 * var)
    return np.where(observed, obs, mis)


@pytest.mark.parametrize("missing", [False, True])
def test_cluster_step_is_the_exhaustive_maximiser(missing):
    """(2.12) / (2.17) against Q over all L^p assignments; the statistics-form M-step against (2.15)/(2.16)."""
    rng = np.random.default_rng(5 + missing)
    n, p, R, L = 40, 6, 2, 3
    X = rng.normal(rng.normal(0, 2, p), rng.uniform(0.5, 2, p), size=(n, p))
    if missing:
        X[rng.random(X.shape) < 0.15] = np.nan
    observed = ~np.isnan(X)
    data = ClassData.of(X)
    old = Params(np.log([0.3, 0.7]), rng.normal(0, 2, (R, L)), rng.uniform(0.5, 3, (R, L)), rng.integers(0, L, p))
    q = rng.dirichlet(np.ones(R), size=n)
    s = statistics(data, q, old)
    _, mu, var = m_step(s, old.assignment, L, False, old, 1e-9)
    # (2.15), (2.16) entry by entry
    for m in range(R):
        for ell in range(L):
            cols = old.assignment == ell
            if not cols.any():
                continue
            xt = np.where(observed[:, cols], X[:, cols], old.means[m, ell])
            den = cols.sum() * q[:, m].sum()
            mu_ref = (q[:, m] @ xt.sum(axis=1)) / den
            dev = (xt - mu_ref) ** 2 + (~observed[:, cols]) * old.variances[m, ell]
            np.testing.assert_allclose(mu[m, ell], mu_ref, rtol=1e-12)
            np.testing.assert_allclose(var[m, ell], (q[:, m] @ dev.sum(axis=1)) / den, rtol=1e-12)
    # Q(c) of the fixed (q, mu, var), brute force over every assignment
    a, b = old.means[:, old.assignment], old.variances[:, old.assignment]
    best, best_c = -np.inf, None
    for c in itertools.product(range(L), repeat=p):
        c = np.array(c)
        value = sum(q[:, m] @ _expected_log_phi(X, observed, a[m], b[m], mu[m, c], var[m, c]).sum(axis=1)
                    for m in range(R))
        if value > best:
            best, best_c = value, c
    np.testing.assert_array_equal(choose_clusters(cluster_gain(s, mu, var), old.assignment), best_c)


def test_homogeneous_cluster_step_maximises_the_sum_over_classes():
    """clustering="shared": one GEM M-step's c maximises sum_k Q_k over all L^p common assignments, for the
    mu, sigma2 of (2.10), (2.11) under the old c."""
    rng = np.random.default_rng(53)
    n, p, R, L = 30, 5, 2, 3
    c_old = rng.integers(0, L, p)
    Xs = [rng.normal(rng.normal(0, 2, p), rng.uniform(0.5, 2, p), size=(n, p)) for _ in range(2)]
    datas = [ClassData.of(X) for X in Xs]
    qs = [rng.dirichlet(np.ones(R), size=n) for _ in range(2)]
    olds = [Params(np.log([0.5, 0.5]), rng.normal(size=(R, L)), np.ones((R, L)), c_old) for _ in range(2)]
    stats = [statistics(d, q, o) for d, q, o in zip(datas, qs, olds)]
    new, _ = gem_m_step(stats, olds, [L, L], [False, False], [1e-9, 1e-9], 1, shared=True)
    best, best_c = -np.inf, None
    for c in itertools.product(range(L), repeat=p):
        c = np.array(c)
        value = sum(q[:, m] @ norm.logpdf(X, pr.means[m, c], np.sqrt(pr.variances[m, c])).sum(axis=1)
                    for X, q, pr in zip(Xs, qs, new) for m in range(R))
        if value > best:
            best, best_c = value, c
    assert not np.array_equal(best_c, c_old)
    for pr, o, st in zip(new, olds, stats):
        np.testing.assert_array_equal(pr.assignment, best_c)
        np.testing.assert_allclose(pr.means, m_step(st, c_old, L, False, o, 1e-9)[1], rtol=1e-12)


def test_one_component_restarts_reach_the_profile_likelihood_maximum():
    """M = 1: the best of 20 GEM restarts equals the maximum over all 3^6 assignments of the profile
    log-likelihood (per cluster the MLE mean and variance of its entries)."""
    rng = np.random.default_rng(7)
    n, p, L = 60, 6, 3
    X0 = rng.normal([0, 0.3, 2, 2.4, -2, 1], [1, 0.8, 1.5, 1, 0.6, 2], size=(n, p))
    X = np.vstack([X0, rng.normal(size=(n, p))])
    y = np.repeat([0, 1], n)
    m = TwoWayGMMClassifier(n_components=1, n_clusters=L, n_init=20, var_floor=1e-9, random_state=3).fit(X, y)
    best = -np.inf
    for c in itertools.product(range(L), repeat=p):
        c = np.array(c)
        ll = sum(norm.logpdf(X0[:, c == ell], X0[:, c == ell].mean(), X0[:, c == ell].std()).sum()
                 for ell in range(L) if (c == ell).any())
        best = max(best, ll)
    np.testing.assert_allclose(m.log_likelihood_path_[0][-1], best, rtol=1e-10)


# ------------------------------------------------------------------ 4: monotone
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("clustering", ["class", "shared"])
@pytest.mark.parametrize("sweeps", [1, 3])
def test_loglikelihood_never_decreases(missing, clustering, sweeps):
    rng = np.random.default_rng(11)
    X, y = _blocks(rng, n_per=70, p=12)
    X[:, :3] *= 0.05  # low-variance variables: the floor binds
    if missing:
        X[rng.random(X.shape) < 0.08] = np.nan
    m = TwoWayGMMClassifier(n_components=3, n_clusters=4, clustering=clustering, cluster_sweeps=sweeps,
                            var_floor=0.2, max_iter=300, random_state=1).fit(X, y)
    assert any((v == m.var_floor_).any() for v in m.variances_)
    for path in m.log_likelihood_path_:
        assert len(path) > 3
        assert np.all(np.diff(path) >= -1e-9 * np.abs(path[1:]))
    if clustering == "shared":
        assert (m.assignments_ == m.assignments_[0]).all()


def test_convergence_waits_for_an_iteration_without_reassignment():
    """With tol = inf only the assignment rule stops GEM (spec 3.6): iterations 1..n-1 moved variables, n did not."""
    rng = np.random.default_rng(47)
    X, _ = _blocks(rng, n_per=90, p=12)
    data = ClassData.of(X - X.mean())
    q = np.eye(2)[np.arange(data.n) % 2]
    start = initial_params(data, q, rng.permutation(12) % 4, 4, False, 1e-3)

    def run(max_iter):
        return run_gem([data], [start.copy()], [4], [False], [1e-3], max_iter=max_iter, tol=np.inf)

    full = run(100)
    n = full.n_iter
    assert full.converged and n >= 2
    c = [run(i).params[0].assignment for i in (n - 2, n - 1)]
    assert not np.array_equal(c[0], c[1])
    np.testing.assert_array_equal(c[1], full.params[0].assignment)


# ------------------------------------------------------------------ 5, 6: recovery; missing data
def _check_recovery(m, X, y, truth, keep=1.0):
    for k in range(2):
        t = truth[k]
        pr = m.params_[k]
        assert adjusted_rand_score(t["c"], pr.assignment) == 1.0
        to_true = np.array([t["c"][pr.assignment == ell][0] for ell in range(4)])  # fitted l -> true cluster
        data = ClassData.of(X[y == k] - m.shift_)
        q, _ = e_step(data, pr, 4, False)
        assert adjusted_rand_score(t["z"], q.argmax(axis=1)) == 1.0
        mu = np.empty((2, 4))
        mu[:, to_true] = pr.means + m.shift_
        var = np.empty((2, 4))
        var[:, to_true] = pr.variances
        _, match = linear_sum_assignment(((t["means"][:, None, :] - mu[None]) ** 2).sum(-1))  # true -> fitted
        counts = np.bincount(t["z"], minlength=2)[:, None] * np.bincount(t["c"], minlength=4)[None, :] * keep
        se_mu = np.sqrt(t["variances"] / counts)
        se_var = t["variances"] * np.sqrt(2 / counts)
        assert np.all(np.abs(mu[match] - t["means"]) <= 4 * se_mu)
        assert np.all(np.abs(var[match] - t["variances"]) <= 4 * se_var)
        w = np.exp(pr.log_weights)[match]
        assert np.all(np.abs(w - t["weights"]) <= 4 * np.sqrt(t["weights"] * (1 - t["weights"]) / len(t["z"])))


@pytest.fixture(scope="module")
def planted():
    return _planted(np.random.default_rng(13))


def test_planted_model_is_recovered(planted):
    """With the k-means start (the chapter's random start merges clusters here: 2-3 of 4 stay occupied)."""
    X, y, truth = planted
    m = TwoWayGMMClassifier(n_components=2, n_clusters=4, init="kmeans", random_state=0).fit(X, y)
    assert m.converged_.all()
    _check_recovery(m, X, y, truth)


def test_missing_path_equals_complete_path_without_missing_values(planted):
    X, y, _ = planted
    Xk = X[y == 0][:400] - X.mean()
    complete = ClassData.of(Xk)
    forced = ClassData(np.hstack([Xk, Xk ** 2, np.ones_like(Xk)]), np.vstack([Xk, Xk ** 2, np.ones_like(Xk)]),
                       Xk.shape[0], Xk.shape[1], True, complete.global_mean, complete.global_var)
    q = np.eye(2)[np.arange(400) % 2]
    c = np.arange(40) % 4
    runs = [run_gem([d], [initial_params(d, q, c, 4, False, 1e-3)], [4], [False], [1e-3], max_iter=50, tol=1e-8)
            for d in (complete, forced)]
    np.testing.assert_allclose(runs[1].path, runs[0].path, rtol=1e-12)
    np.testing.assert_array_equal(runs[1].params[0].assignment, runs[0].params[0].assignment)
    np.testing.assert_allclose(runs[1].params[0].means, runs[0].params[0].means, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(runs[1].params[0].variances, runs[0].params[0].variances, rtol=1e-12)


def test_five_percent_missing_recovers_the_model_and_uses_the_marginal(planted):
    X, y, truth = planted
    rng = np.random.default_rng(17)
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.05] = np.nan
    m = TwoWayGMMClassifier(n_components=2, n_clusters=4, init="kmeans", random_state=0).fit(Xm, y)
    _check_recovery(m, Xm, y, truth, keep=0.95)
    # E-step / test density = the marginal over the observed coordinates
    Z = Xm[::97][:25]
    dens = m.class_log_density(Z)
    for k, pr in enumerate(m.params_):
        ref = np.empty(len(Z))
        for i, z in enumerate(Z - m.shift_):
            obs = ~np.isnan(z)
            comp = [pr.log_weights[r] + norm.logpdf(z[obs], pr.means[r, pr.assignment[obs]],
                                                    np.sqrt(pr.variances[r, pr.assignment[obs]])).sum()
                    for r in range(2)]
            ref[i] = logsumexp(comp)
        np.testing.assert_allclose(dens[:, k], ref, rtol=1e-10)


# ------------------------------------------------------------------ 7: full covariance
@pytest.mark.parametrize("whitening", ["symmetric", "cholesky"])
def test_full_variant_with_one_component_is_the_ml_gaussian(whitening):
    rng = np.random.default_rng(19)
    A = rng.normal(size=(4, 4))
    X = np.vstack([rng.normal(size=(80, 4)) @ A + 3, rng.normal(size=(60, 4)) @ A.T - 1])
    y = np.repeat([0, 1], [80, 60])
    m = TwoWayGMMClassifier(n_components=1, n_clusters=None, covariance="full", var_floor=1e-13,
                            whitening=whitening, random_state=0).fit(X, y)
    Z = rng.normal(size=(30, 4)) * 3
    ref = np.column_stack([multivariate_normal(X[y == k].mean(0), np.cov(X[y == k].T, bias=True)).logpdf(Z)
                           for k in (0, 1)])
    np.testing.assert_allclose(m.class_log_density(Z), ref, rtol=1e-10)
    assert m.n_parameters_ == 2 * (0 + 2 * 4 + 10) + 1


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_density_integrates_to_one_in_2d(covariance):
    rng = np.random.default_rng(23)
    X = np.vstack([rng.multivariate_normal([0, 1], [[1, 0.6], [0.6, 1.5]], 150),
                   rng.multivariate_normal([2, -1], [[0.8, -0.3], [-0.3, 0.6]], 150)])
    y = np.repeat([0, 1], 150)
    m = TwoWayGMMClassifier(n_components=2, n_clusters=1, covariance=covariance, random_state=0).fit(X, y)
    g = np.linspace(-12, 12, 601)
    G1, G2 = np.meshgrid(g, g)
    dens = np.exp(m.score_samples(np.column_stack([G1.ravel(), G2.ravel()])))
    assert abs(dens.sum() * (g[1] - g[0]) ** 2 - 1) < 1e-4


# ------------------------------------------------------------------ 8: sufficient statistics
@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_sufficient_statistics_classify(covariance):
    rng = np.random.default_rng(29)
    X, y = _blocks(rng, n_per=60, p=9)
    m = TwoWayGMMClassifier(n_components=2, n_clusters={"a": 3, "b": 4}, covariance=covariance,
                            random_state=2).fit(X, y)
    Z = rng.normal(5, 2, size=(50, 9))
    T = m.sufficient_statistics(Z)
    assert T.shape == (50, 2 * (3 + 4))
    np.testing.assert_allclose(m.decision_from_statistics(T), m.decision_function(Z), rtol=1e-10)
    np.testing.assert_array_equal(m.classes_[np.argmax(m.decision_from_statistics(T), axis=1)], m.predict(Z))


# ------------------------------------------------------------------ 9: bad input
def test_bad_input_gives_one_line_errors():
    rng = np.random.default_rng(31)
    X, y = _blocks(rng, n_per=6, p=5)
    _one_line_error("class 'a' has 6 objects for 8 components",
                    lambda: TwoWayGMMClassifier(n_components=8, n_clusters=2).fit(X, y))
    with pytest.warns(UserWarning, match="capped"):
        m = TwoWayGMMClassifier(n_components=8, n_clusters=2, on_small_class="cap", random_state=0).fit(X, y)
    assert m.n_components_.tolist() == [6, 8]
    Xm = X.copy()
    Xm[y == "a", 2] = np.nan
    _one_line_error("variable 2 is missing for every object of class 'a'", lambda: TwoWayGMMClassifier().fit(Xm, y))
    Xm = X.copy()
    Xm[4] = np.nan
    _one_line_error("every value missing", lambda: TwoWayGMMClassifier().fit(Xm, y))
    Xm = X.copy()
    Xm[0, 0] = np.nan
    _one_line_error("covariance='full'", lambda: TwoWayGMMClassifier(covariance="full").fit(Xm, y))
    full = TwoWayGMMClassifier(n_components=1, covariance="full", random_state=0).fit(X, y)
    _one_line_error("covariance='full'", lambda: full.predict(Xm))
    Xm[0, 0] = np.inf
    _one_line_error("infinite", lambda: TwoWayGMMClassifier().fit(Xm, y))
    _one_line_error("single class", lambda: TwoWayGMMClassifier(n_components=1).fit(X, np.zeros(len(y))))
    _one_line_error("was fitted on 5", lambda: full.predict(X[:, :4]))
    Xc = X.copy()
    Xc[:, 1] = 3.0
    with pytest.warns(UserWarning, match="constant on the fit set"):
        TwoWayGMMClassifier(n_components=1, n_clusters=2, random_state=0).fit(Xc, y)
    _one_line_error("every feature is constant", lambda: TwoWayGMMClassifier().fit(np.ones_like(X), y))


def test_missing_test_values_are_integrated_out():
    rng = np.random.default_rng(37)
    X, y = _blocks(rng, n_per=40, p=5)
    m = TwoWayGMMClassifier(n_components=2, n_clusters=2, random_state=0).fit(X, y)
    Z = X[:3].copy()
    Z[0] = np.nan
    np.testing.assert_allclose(m.predict_proba(Z)[0], np.exp(m.class_log_prior_), rtol=1e-12)
    Z[1, 1:] = np.nan  # only x_0 observed: the one-variable marginal mixture
    ref = [logsumexp(pr.log_weights + norm.logpdf(Z[1, 0] - m.shift_, pr.means[:, pr.assignment[0]],
                                                  np.sqrt(pr.variances[:, pr.assignment[0]]))) for pr in m.params_]
    np.testing.assert_allclose(m.class_log_density(Z)[1], ref, rtol=1e-12)


def test_proportional_allocation_by_largest_remainder():
    rng = np.random.default_rng(41)
    X = rng.normal(size=(100, 4))
    y = np.repeat([0, 1, 2], [50, 30, 20])
    m = TwoWayGMMClassifier(n_components=2, n_clusters=2, allocation="proportional", random_state=0).fit(X, y)
    assert m.n_components_.tolist() == [3, 2, 1]  # quotas 3, 1.8, 1.2


# ------------------------------------------------------------------ 10: estimator
def test_estimator_conventions_and_reproducibility():
    rng = np.random.default_rng(43)
    X, y = _blocks(rng, n_per=50, p=8)
    est = TwoWayGMMClassifier(n_components=2, n_clusters=3, random_state=7)
    assert get_tags(est).input_tags.allow_nan
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert clone(est).get_params() == est.get_params()
    a, b = clone(est).fit(X, y), clone(est).fit(X, y)
    np.testing.assert_array_equal(a.assignments_, b.assignments_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not hasattr(est, "classes_")  # fit works on clones; the estimator itself is untouched
    folds = make_folds(y, 3, 5)
    grid = [{"n_components": R, "n_clusters": L} for R in (1, 2) for L in (2, None)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(cv_errors(est, X, y, grid, folds, n_jobs=1),
                                      cv_errors(est, X, y, grid, folds, n_jobs=2))


def test_standardize_keeps_a_constant_feature_at_scale_one():
    """A feature constant at 0.1 over the fit set (its float sd is ~1e-17, not 0) keeps scale 1 and its value
    as the mean, so a test value of 0.2 there moves the log-density by a bounded amount, not by 1e30."""
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 40)
    X = np.column_stack([rng.normal(size=80) + 2.0 * y, np.full(80, 0.1)])
    with pytest.warns(UserWarning):
        model = TwoWayGMMClassifier(n_components=1, n_clusters=None, standardize=True, random_state=0).fit(X, y)
    assert model.feature_scale_[1] == 1.0 and model.feature_mean_[1] == 0.1
    test = np.array([[0.0, 0.1], [0.0, 0.2]])
    proba = model.predict_proba(test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert model.predict(test).tolist() == [0, 0]


def test_full_covariance_with_several_components_and_clusters_is_eq_2_5():
    """covariance="full" with M = 2 components per class and L = 2 variable clusters (section 2.2.2, eq. 2.5):
    log f_k(x) = log|det W_k| + log sum_r pi_kr prod_j N(z_j; mu_{r,c(k,j)}, sigma^2_{r,c(k,j)}), z = W_k x' in
    the fitted space x' = (x - mean) / scale - shift, written here from the fitted parameters (scipy's normal
    densities); the posteriors are Bayes' rule on it."""
    rng = np.random.default_rng(12)
    A = np.array([[1.0, 0.6, 0.0, 0.0], [0.0, 1.0, 0.5, 0.0], [0.0, 0.0, 1.0, 0.4], [0.2, 0.0, 0.0, 1.0]])
    X = np.vstack([rng.normal(size=(80, 4)) @ A + np.r_[0, 0, 2, 2], rng.normal(size=(80, 4)) @ A.T + 1.5])
    y = np.repeat(["a", "b"], 80)
    model = TwoWayGMMClassifier(n_components=2, n_clusters=2, covariance="full", random_state=0).fit(X, y)
    assert list(model.n_components_) == [2, 2] and list(model.n_clusters_) == [2, 2]
    Xt = (X - model.feature_mean_) / model.feature_scale_ - model.shift_
    expected = np.empty((len(y), 2))
    for k in range(2):
        Z = Xt @ model.whitening_[k].T
        c = model.assignments_[k]
        parts = [np.log(model.weights_[k][r]) + norm.logpdf(Z, model.means_[k][r][c],
                                                              np.sqrt(model.variances_[k][r][c])).sum(axis=1)
                 for r in range(2)]
        expected[:, k] = logsumexp(np.column_stack(parts), axis=1) + np.log(abs(np.linalg.det(model.whitening_[k])))
    np.testing.assert_allclose(model.class_log_density(X), expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(model.log_det_whitening_, [np.log(abs(np.linalg.det(W))) for W in model.whitening_],
                               rtol=1e-12)
    joint = expected + model.class_log_prior_
    np.testing.assert_allclose(model.predict_proba(X), np.exp(joint - logsumexp(joint, axis=1, keepdims=True)),
                               rtol=1e-9, atol=1e-12)
