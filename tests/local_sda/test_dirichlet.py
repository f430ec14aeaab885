"""The Dirichlet-multinomial (Pólya) maximum-likelihood estimate (hlm.local_sda._dirichlet): known answers.

Parameter recovery on histograms drawn from the model (tolerance from the Fisher information),
equality with a direct scipy.optimize maximisation of the log-likelihood (scipy's gammaln) and
with Minka's fixed point (the spec's iteration), the degenerate cases of spec §3.1 (empty bins,
no over-dispersion, single counts), and the compiled special functions against scipy.special.
"""

import math
import warnings
from itertools import product

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import digamma as sp_digamma
from scipy.special import gammaln, polygamma
from sklearn.exceptions import ConvergenceWarning

from hlm.local_sda._dirichlet import (
    ALPHA_MAX,
    ALPHA_MIN,
    digamma,
    digamma_ratio,
    fit_polya,
    log_gamma_ratio,
    polya_log_likelihood,
    sufficient_stats,
    trigamma,
    trigamma_ratio,
)

EPS = np.finfo(np.float64).eps


def draw_polya(rng, alpha, sizes):
    """Histograms m^i ~ Mult(n_i, theta_i), theta_i ~ Dir(alpha): the model the estimate assumes."""
    return np.array([rng.multinomial(n, rng.dirichlet(alpha)) for n in sizes])


def information(alpha, counts):
    """The observed information -H of the Pólya log-likelihood at alpha (scipy's polygamma), r x r."""
    m = np.asarray(counts, dtype=np.float64)
    n = m.sum(axis=1)
    a0 = alpha.sum()
    q = np.sum(polygamma(1, alpha) - polygamma(1, alpha + m), axis=0)
    z = np.sum(polygamma(1, a0) - polygamma(1, a0 + n))
    return np.diag(q) - z


# ---------------------------------------------------------------- special functions
def test_digamma_and_trigamma_equal_scipy():
    x = np.concatenate([np.logspace(-7, 8, 400), np.arange(1, 40) + 0.25])
    for v in x:
        assert abs(digamma(v) - sp_digamma(v)) <= 4 * EPS * max(1.0, abs(sp_digamma(v))), v
        assert abs(trigamma(v) - polygamma(1, v)) <= 4 * EPS * polygamma(1, v), v


@pytest.mark.parametrize("a", [1e-6, 0.03, 0.7, 3.0, 9.99, 10.0, 47.5, 1e3, 1e6])
@pytest.mark.parametrize("c", [0, 1, 2, 4, 5, 31, 32, 33, 100, 4096])
def test_ratios_equal_their_exact_sums(a, c):
    """log Gamma(a + c) - log Gamma(a), psi(a + c) - psi(a), psi'(a) - psi'(a + c) are the sums over t < c of
    log(a + t), 1/(a + t), 1/(a + t)^2 (math.fsum: correctly rounded sums of the terms).

    Tolerance: a few ulp of the pieces the compiled code adds or subtracts (the terms, or the two
    function values of a difference, which cancel when c << a)."""
    t = a + np.arange(c, dtype=np.float64)
    exact = (math.fsum(np.log(t)), math.fsum(1.0 / t), math.fsum(1.0 / t**2))
    got = (log_gamma_ratio(a, c), digamma_ratio(a, c), trigamma_ratio(a, c))
    pieces = (math.fsum(np.abs(np.log(t))) + abs(gammaln(a)) + abs(gammaln(a + c)),
              exact[1] + abs(sp_digamma(a)) + abs(sp_digamma(a + c)),
              exact[2] + polygamma(1, a) + polygamma(1, a + c))
    for g, e, s in zip(got, exact, pieces):
        assert abs(g - e) <= 64 * EPS * s, (a, c, g, e)


def test_sufficient_stats_count_the_distinct_values():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 6, size=(40, 7)) * (rng.random((40, 7)) < 0.6)
    counts[3] = 0  # an empty histogram: no total
    vals, wts, start, nvals, nwts = sufficient_stats(counts.astype(np.int64))
    for j in range(7):
        col = counts[:, j][counts[:, j] > 0]
        u, c = np.unique(col, return_counts=True)
        np.testing.assert_array_equal(vals[start[j]:start[j + 1]], u)
        np.testing.assert_array_equal(wts[start[j]:start[j + 1]], c)
    n = counts.sum(axis=1)
    u, c = np.unique(n[n > 0], return_counts=True)
    np.testing.assert_array_equal(nvals, u)
    np.testing.assert_array_equal(nwts, c)


def test_polya_likelihood_is_a_pmf():
    """exp(log L) times the multinomial coefficient sums to 1 over all histograms of n counts in r bins."""
    alpha = np.array([0.4, 2.5, 1.1])
    n = 6
    total = 0.0
    for m in product(range(n + 1), repeat=3):
        if sum(m) != n:
            continue
        m = np.array([m])
        coef = gammaln(n + 1) - gammaln(m + 1).sum()
        total += np.exp(coef + polya_log_likelihood(alpha, m))
    assert total == pytest.approx(1.0, rel=1e-12)


# ---------------------------------------------------------------- the estimate
def direct_ml(counts, r):
    """A direct maximisation of the Pólya log-likelihood: L-BFGS-B on log alpha, scipy's gammaln."""
    res = minimize(lambda u: -polya_log_likelihood(np.exp(u), counts), np.zeros(r), method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20_000, "maxcor": 30})
    return np.exp(res.x)


def minka_fixed_point(counts, iterations=200_000, tol=1e-13):
    """The spec's iteration (Minka's fixed point for the Pólya), from alpha = 1, to a tight tolerance."""
    m = np.asarray(counts, dtype=np.float64)
    n = m.sum(axis=1)
    alpha = np.ones(m.shape[1])
    for _ in range(iterations):
        a0 = alpha.sum()
        new = alpha * np.sum(sp_digamma(m + alpha) - sp_digamma(alpha), axis=0) / np.sum(
            sp_digamma(n + a0) - sp_digamma(a0))
        if np.max(np.abs(new - alpha) / new) < tol:
            return new
        alpha = new
    raise AssertionError("the fixed point did not converge")


@pytest.mark.parametrize("seed", range(6))
def test_equals_a_direct_maximisation_and_minkas_fixed_point(seed):
    """Small problems: the estimate maximises the likelihood (not below the others' optimum) and equals the
    optimum of L-BFGS-B and of Minka's fixed point to their tolerance: near the maximum log L drops by
    (1/2) d^T I d for a step d (I the information), so a solution short of it by a gap in log L lies
    within (1/2) d^T I d <= 2 gap (L-BFGS-B stops early on flat optima; the fixed point runs to 1e-13)."""
    rng = np.random.default_rng(seed)
    r = int(rng.integers(2, 6))
    alpha = rng.gamma(1.5, 1.5, size=r) + 0.1
    counts = draw_polya(rng, alpha, rng.integers(2, 25, size=int(rng.integers(30, 120))))
    fit = fit_polya(counts)
    assert fit.status == "converged"
    ll = polya_log_likelihood(fit.alpha, counts)
    info = information(fit.alpha, counts)
    for other in (direct_ml(counts, r), minka_fixed_point(counts)):
        gap = ll - polya_log_likelihood(other, counts)
        assert gap >= -1e-12 * abs(ll)
        d = other - fit.alpha
        assert 0.5 * d @ info @ d <= 2 * max(gap, 0.0) + 1e-10, (fit.alpha, other)
    np.testing.assert_allclose(fit.alpha, minka_fixed_point(counts), rtol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_maximises_scipys_own_dirichlet_multinomial_likelihood(seed):
    """Against code production does not share: scipy's Dirichlet-multinomial pmf
    (``scipy.stats.dirichlet_multinomial``), summed over the histograms and maximised over log alpha by
    Nelder-Mead (no gradient, no polygamma). The estimate is at least as likely (to rounding), and the optimiser's
    point lies within its shortfall in log L of it: (1/2) d^T I d <= 2 gap + 1e-8, I the observed information
    (as in the test above)."""
    from scipy.stats import dirichlet_multinomial

    rng = np.random.default_rng(100 + seed)
    r = 3
    alpha = rng.gamma(1.5, 1.5, size=r) + 0.2
    counts = draw_polya(rng, alpha, rng.integers(3, 20, size=80))
    n = counts.sum(axis=1)

    def scipy_ll(a):
        return float(sum(dirichlet_multinomial.logpmf(m, a, k) for m, k in zip(counts, n)))

    res = minimize(lambda u: -scipy_ll(np.exp(u)), np.zeros(r), method="Nelder-Mead",
                   options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20_000, "maxfev": 40_000})
    other = np.exp(res.x)
    fit = fit_polya(counts)
    assert fit.status == "converged"
    gap = scipy_ll(fit.alpha) - scipy_ll(other)
    assert gap >= -1e-10 * abs(scipy_ll(fit.alpha))
    d = other - fit.alpha
    assert 0.5 * d @ information(fit.alpha, counts) @ d <= 2 * max(gap, 0.0) + 1e-8, (fit.alpha, other)
    # and production's likelihood is scipy's, less each histogram's multinomial coefficient
    coef = float(np.sum(gammaln(n + 1) - gammaln(counts + 1).sum(axis=1)))
    assert polya_log_likelihood(fit.alpha, counts) + coef == pytest.approx(scipy_ll(fit.alpha), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_recovers_alpha_from_histograms_drawn_from_the_model(seed):
    """Parameter recovery: |alpha_hat - alpha| within 4 standard errors of the Fisher information of the sample
    (per component; the seeds are fixed), and the standard errors shrink as the sample grows."""
    rng = np.random.default_rng(100 + seed)
    alpha = np.array([0.5, 1.0, 2.0, 4.0, 0.3, 6.0])[: 3 + seed]
    for n_hist in (300, 3000):
        counts = draw_polya(rng, alpha, rng.integers(5, 40, size=n_hist))
        fit = fit_polya(counts)
        se = np.sqrt(np.diag(np.linalg.inv(information(fit.alpha, counts))))
        assert np.all(np.abs(fit.alpha - alpha) <= 4 * se), (fit.alpha, alpha, se)
        assert np.all(se < 0.5 * alpha) if n_hist == 3000 else True


def test_recovery_over_repeated_draws_is_unbiased_within_its_spread():
    """Over 40 samples the mean estimate is within 4 standard errors of the mean of alpha (repeated draws)."""
    rng = np.random.default_rng(7)
    alpha = np.array([0.8, 2.0, 5.0])
    est = np.array([fit_polya(draw_polya(rng, alpha, np.full(400, 12))).alpha for _ in range(40)])
    spread = est.std(axis=0, ddof=1) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - alpha) <= 4 * spread + 0.02 * alpha)


def test_an_empty_bin_is_held_at_the_floor():
    rng = np.random.default_rng(3)
    counts = draw_polya(rng, np.array([1.0, 2.0, 0.5]), np.full(200, 10))
    counts = np.insert(counts, 1, 0, axis=1)  # bin 1 never observed
    fit = fit_polya(counts)
    assert fit.status == "converged" and fit.alpha[1] == ALPHA_MIN
    # the other bins are the maximiser with the empty bin fixed at the floor
    rest = fit_polya(np.delete(counts, 1, axis=1)).alpha
    np.testing.assert_allclose(np.delete(fit.alpha, 1), rest, rtol=1e-4)
    assert fit_polya(counts, alpha_min=1e-3).alpha[1] == 1e-3


def test_identical_histograms_go_to_the_cap():
    """No over-dispersion: alpha_0 -> infinity, capped at alpha_max; alpha / alpha_0 is the mean pmf (to
    O(n_i / alpha_0), the maximiser's distance from it at a finite alpha_0)."""
    m = np.array([3, 0, 5, 2])
    fit = fit_polya(np.tile(m, (50, 1)))
    assert fit.alpha.sum() == pytest.approx(ALPHA_MAX, rel=1e-12)
    assert fit.alpha[1] == ALPHA_MIN
    np.testing.assert_allclose(fit.alpha / fit.alpha.sum(), m / m.sum(), rtol=10 * m.sum() / ALPHA_MAX, atol=1e-11)
    capped = fit_polya(np.tile(m, (50, 1)), alpha_max=1e3)
    assert capped.alpha.sum() == pytest.approx(1e3, rel=1e-12)


def test_under_dispersed_counts_go_to_the_cap():
    """Multinomial draws with fewer spread than a multinomial's (balanced by construction): the cap."""
    rng = np.random.default_rng(4)
    base = np.array([6, 9, 15])
    counts = np.array([base + d for d in rng.integers(-1, 2, size=(300, 1)) * np.array([[1, -1, 0]])])
    fit = fit_polya(counts)
    assert fit.alpha.sum() == pytest.approx(ALPHA_MAX, rel=1e-9)
    np.testing.assert_allclose(fit.alpha / fit.alpha.sum(), counts.sum(0) / counts.sum(), rtol=1e-5)


def test_extreme_over_dispersion_goes_to_the_floor():
    """Every histogram in one bin (bins vary): alpha_0 -> 0; the smallest bin sits at the floor, the others
    keep the proportions of the bins' counts (the likelihood's limit depends on alpha / alpha_0 only)."""
    rng = np.random.default_rng(5)
    which = rng.choice(4, size=120, p=[0.1, 0.2, 0.3, 0.4])
    counts = np.eye(4, dtype=int)[which] * 5
    fit = fit_polya(counts)
    assert fit.status == "converged" and fit.alpha.sum() < 1e-4
    share = np.bincount(which, minlength=4) / len(which)
    j = np.argmin(share)
    assert fit.alpha[j] == ALPHA_MIN
    np.testing.assert_allclose(fit.alpha / fit.alpha[j], share / share[j], rtol=1e-3)


def test_single_counts_do_not_identify_the_concentration():
    """n_i = 1 everywhere: the likelihood depends on alpha / alpha_0 only; alpha = r times the pooled pmf."""
    counts = np.eye(4, dtype=int)[[0, 0, 1, 2, 2, 2, 0, 1]]
    fit = fit_polya(counts)
    assert fit.status == "unidentified"
    np.testing.assert_allclose(fit.alpha, [4 * 3 / 8, 4 * 2 / 8, 4 * 3 / 8, ALPHA_MIN])
    # mixed with informative histograms they enter the fit like any other
    mixed = np.vstack([counts, draw_polya(np.random.default_rng(0), np.ones(4), np.full(50, 6))])
    assert fit_polya(mixed).status == "converged"


def test_all_counts_in_one_bin():
    fit = fit_polya(np.array([[0, 4, 0], [0, 2, 0]]))
    assert fit.status == "single_bin"
    np.testing.assert_allclose(fit.alpha, [ALPHA_MIN, ALPHA_MAX - 2 * ALPHA_MIN, ALPHA_MIN])


def test_max_iter_warns():
    counts = draw_polya(np.random.default_rng(1), np.array([1.0, 3.0, 0.5]), np.full(100, 10))
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        fit = fit_polya(counts, max_iter=1)
    assert fit.status == "max_iter" and fit.n_iter == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_polya(counts)


def test_empty_histograms_are_ignored():
    counts = draw_polya(np.random.default_rng(2), np.array([1.0, 3.0, 0.5]), np.full(100, 10))
    with_empty = np.vstack([counts, np.zeros((5, 3), dtype=int)])
    np.testing.assert_array_equal(fit_polya(with_empty).alpha, fit_polya(counts).alpha)


@pytest.mark.parametrize("counts, match", [
    (np.zeros((3, 2)), "no histogram"),
    (np.array([[1, -1]]), "non-negative integers"),
    (np.array([[1.5, 1]]), "non-negative integers"),
    (np.array([1, 2]), "2-D"),
])
def test_bad_counts(counts, match):
    with pytest.raises(ValueError, match=match):
        fit_polya(counts)
    with pytest.raises(ValueError, match="alpha_min"):
        fit_polya(np.array([[1, 2]]), alpha_min=1.0, alpha_max=1.0)
