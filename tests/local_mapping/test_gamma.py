"""Gamma MLE (paper eqs. 3 and 4) against scipy and against known parameters."""

import numpy as np
import pytest
import scipy.stats as st
from scipy.special import digamma

from hlm.local_mapping._gamma import (
    MAX_SHAPE,
    ComponentStats,
    fit_gamma,
    log_pseudo_density,
    round_shape,
    shape_statistic,
    solve_shape,
)


@pytest.mark.parametrize("c", [1e-5, 1e-3, 0.1, 0.7, 1.0, 5.0, 50.0])
def test_solve_shape_is_root(c):
    s = solve_shape(c)
    assert np.log(s) - digamma(s) == pytest.approx(c, rel=1e-10)


def test_solve_shape_vectorised_and_degenerate():
    c = np.array([[0.0, 0.2], [2.0, 1e-9]])
    s = solve_shape(c)
    assert s.shape == (2, 2)
    assert s[0, 0] == MAX_SHAPE and s[1, 1] == MAX_SHAPE
    with pytest.raises(ValueError):
        solve_shape(-1.0)


@pytest.mark.parametrize("true_shape", [0.4, 1.0, 3.5, 25.0])
def test_matches_scipy_gamma_fit(true_shape):
    rng = np.random.default_rng(7)
    u = rng.gamma(true_shape, 3.0, size=500)
    stats = ComponentStats.from_samples(u, np.zeros(u.size, int), 1)
    fit = fit_gamma(stats, rounding=False)
    a, loc, scale = st.gamma.fit(u, floc=0)
    assert fit.shape_mle == pytest.approx(a, rel=1e-7)
    assert fit.scale[0] == pytest.approx(scale, rel=1e-7)


@pytest.mark.parametrize("true_shape,true_scale", [(0.5, 2.0), (2.0, 0.3), (10.0, 5.0)])
def test_recovers_known_parameters(true_shape, true_scale):
    rng = np.random.default_rng(11)
    n = 200_000
    u = rng.gamma(true_shape, true_scale, size=n)
    fit = fit_gamma(ComponentStats.from_samples(u, np.zeros(n, int), 1), rounding=False)
    # Standard errors of the MLE are O(1/sqrt(n)) ~ 0.2 %; allow 2 %.
    assert fit.shape_mle == pytest.approx(true_shape, rel=0.02)
    assert fit.scale[0] == pytest.approx(true_scale, rel=0.02)


def test_common_shape_with_several_scales_eq3():
    rng = np.random.default_rng(3)
    scales = np.array([0.5, 2.0, 8.0])
    comp = np.repeat(np.arange(3), 50_000)
    u = rng.gamma(1.5, scales[comp])
    fit = fit_gamma(ComponentStats.from_samples(u, comp, 3), rounding=False)
    assert fit.shape_mle == pytest.approx(1.5, rel=0.02)
    np.testing.assert_allclose(fit.scale, scales, rtol=0.02)
    # eq. 3 written out literally
    n_j = np.bincount(comp)
    ubar_j = np.bincount(comp, u) / n_j
    c = np.sum(n_j / u.size * np.log(ubar_j)) - np.mean(np.log(u))
    assert shape_statistic(ComponentStats.from_samples(u, comp, 3)) == pytest.approx(c, rel=1e-10)


def test_weighted_eq4_equals_eq3_for_uniform_weights_and_replication():
    rng = np.random.default_rng(5)
    u = rng.gamma(2.0, 1.0, size=40)
    comp = rng.integers(0, 3, size=40)
    plain = shape_statistic(ComponentStats.from_samples(u, comp, 3))
    uniform = shape_statistic(ComponentStats.from_samples(u, comp, 3, weights=np.full(40, 1 / 40)))
    assert uniform == pytest.approx(plain, rel=1e-12)
    # integer weights == replicating the samples
    w = rng.integers(1, 4, size=40)
    weighted = shape_statistic(ComponentStats.from_samples(u, comp, 3, weights=w.astype(float)))
    replicated = shape_statistic(ComponentStats.from_samples(np.repeat(u, w), np.repeat(comp, w), 3))
    assert weighted == pytest.approx(replicated, rel=1e-12)


def test_rounding_and_shrinkage():
    np.testing.assert_array_equal(round_shape([0.1, 0.74, 0.76, 1.24, 3.3]), [0.5, 0.5, 1.0, 1.0, 3.5])
    stats = ComponentStats(weight=np.array([1.0, 3.0]), sum_u=np.array([2.0, 12.0]), sum_log_u=np.array([0.5, 3.0]))
    fit = fit_gamma(stats, shrinkage=True, rounding=False)
    grand = 14.0 / 4.0
    expected = np.array([0.5 * 2.0 + 0.5 * grand, 0.75 * 4.0 + 0.25 * grand]) / fit.shape
    np.testing.assert_allclose(fit.scale, expected)


def test_rounding_changes_the_scoring_shape_not_the_scales():
    rng = np.random.default_rng(9)
    u = rng.gamma(1.3, 2.0, size=1000)
    comp = rng.integers(0, 2, size=1000)
    stats = ComponentStats.from_samples(u, comp, 2)
    raw, rounded = fit_gamma(stats, rounding=False), fit_gamma(stats)
    assert rounded.shape == round_shape(raw.shape_mle) and rounded.shape_mle == raw.shape_mle
    np.testing.assert_allclose(rounded.scale, stats.mean_u / raw.shape_mle)
    np.testing.assert_allclose(rounded.scale, raw.scale)


def test_equal_u_warns_and_caps():
    stats = ComponentStats.from_samples(np.full(10, 2.0), np.zeros(10, int), 1)
    with pytest.warns(RuntimeWarning, match="unbounded"):
        fit = fit_gamma(stats)
    assert fit.shape == MAX_SHAPE and np.isfinite(fit.scale).all()


def test_log_pseudo_density_is_gaussian():
    # eq. 1: (pi b)^{-s} exp(-D^2/b) is N(mu, b/2 I) in d = 2s dimensions
    x = np.array([0.3, -1.0, 2.0])
    b = 0.8
    expected = st.multivariate_normal(mean=np.zeros(3), cov=b / 2 * np.eye(3)).logpdf(x)
    assert log_pseudo_density(x @ x, 1.5, b) == pytest.approx(expected, rel=1e-12)
