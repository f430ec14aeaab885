"""Bayesian and pairwise Bayesian local SDA (docs/local-sda-family-spec.md §2, §3, §3.1, §5, §9).

Known answers: the posterior-mean limits of spec §9, pairwise histograms against a brute-force
count on a hand-built neighbourhood, the bins of §2, and the estimators against a slow row-by-row
reference written here (numpy, obvious loops; the local centroids from local SDA's reference):
the same histograms, alpha and classes, the posteriors within the rounding of their computation.
"""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from test_local_sda import S_TE_THREE, S_THREE, Y_THREE, check_bad_input

from hlm.errors import ConfigError
from hlm.local_sda._bayes import (
    BayesianLocalSDA,
    Bins,
    PairwiseBayesianLocalSDA,
    make_bins,
    posterior_mean,
)
from hlm.local_sda._dirichlet import fit_polya
from hlm.local_sda._local_sda import leave_one_out_order
from hlm.pipeline.methods import METHODS, check_method_params
from oracles.local_sda_reference import local_centroids
from oracles.tie_rules import tie_winner

EPS = np.finfo(np.float64).eps
ESTIMATORS = {"centroid": BayesianLocalSDA, "pairwise": PairwiseBayesianLocalSDA}


# ---------------------------------------------------------------- the row-by-row reference
def ref_bins(S, n_bins):
    """Spec §2: the distinct values if there are at most n_bins, else the distinct inverted-cdf quantiles of
    the off-diagonal entries at levels (j - 1/2) / n_bins; edges at the midpoints."""
    values = np.unique(S)
    if values.size > n_bins:
        off = S[~np.eye(len(S), dtype=bool)]
        values = np.unique(np.quantile(off, (np.arange(n_bins) + 0.5) / n_bins, method="inverted_cdf"))
    return values, (values[:-1] + values[1:]) / 2


def ref_bin(edges, value):
    """The bin of a value: how many edges are <= it."""
    return int(np.count_nonzero(edges <= value))


def ref_neighbourhood(S, s, ranked, y, n_classes, r, edges, statistic):
    """One neighbourhood's statistics, written out: (k_g per class, histograms m[g, h], and the centroids
    mu per class or None). ``ranked``: the neighbours, best first; ``s``: the object's similarities."""
    counts = np.bincount(y[ranked], minlength=n_classes)
    members = {g: np.array([z for z in ranked if y[z] == g]) for g in range(n_classes) if counts[g]}
    m = np.zeros((n_classes, n_classes, r), dtype=np.int64)
    mu = None
    if statistic == "centroid":
        present = sorted(members)
        mu = dict(zip(present, local_centroids(S, s, [members[g] for g in present])))
        for g in present:
            for h in present:
                for z in members[g]:
                    m[g, h, ref_bin(edges, S[z, mu[h]])] += 1
    else:
        for g in members:
            for h in members:
                for zi in members[g]:
                    for zl in members[h]:
                        m[g, h, ref_bin(edges, S[zi, zl])] += 1
    return counts, m, mu


def ranked_others(s, exclude=None):
    """Indices by (-s_z, z), without ``exclude``."""
    order = sorted(range(len(s)), key=lambda z: (-s[z], z))
    return np.array([z for z in order if z != exclude])


def ref_fit(S, y, k, statistic, n_bins=20):
    """alpha per class pair from the leave-one-out histograms (spec §3.1), the pooled estimate for pairs
    without any; returns (alpha, edges, the histograms of every pair)."""
    n_classes = y.max() + 1
    centres, edges = ref_bins(S, n_bins)
    data = {}
    for i in range(len(S)):
        nb = ranked_others(S[i], exclude=i)[:k]
        counts, m, _ = ref_neighbourhood(S, S[i], nb, y, n_classes, centres.size, edges, statistic)
        for g in range(n_classes):
            for h in range(n_classes):
                if counts[g] and counts[h]:
                    data.setdefault((g, h), []).append(m[g, h])
    alpha = np.empty((n_classes, n_classes, centres.size))
    for g in range(n_classes):
        for h in range(n_classes):
            pool = data.get((g, h), [hist for v in data.values() for hist in v])
            alpha[g, h] = fit_polya(np.array(pool)).alpha
    return alpha, edges, data


def ref_log_scores(S, y, alpha, edges, s_te, k, statistic, prior):
    """Eq. (6) for one test row, written out; returns (scores over all classes, their magnitudes' sum)."""
    n_classes = alpha.shape[0]
    nb = ranked_others(s_te)[:k]
    counts, m, mu = ref_neighbourhood(S, s_te, nb, y, n_classes, alpha.shape[2], edges, statistic)
    scores = np.full(n_classes, -np.inf)
    size = np.zeros(n_classes)
    for g in np.flatnonzero(counts):
        score = np.log(counts[g] / k) if prior is None else prior[g]
        size[g] = abs(score)
        for h in np.flatnonzero(counts):
            theta = (alpha[g, h] + m[g, h]) / np.sum(alpha[g, h] + m[g, h])  # eq. (5)
            if statistic == "centroid":
                term = np.log(theta[ref_bin(edges, s_te[mu[h]])])
            else:  # eq. (7)
                term = np.log(np.mean([theta[ref_bin(edges, s_te[z])] for z in nb if y[z] == h]))
            score += term
            size[g] += abs(term)
        scores[g] = score
    return scores, size, nb


def random_problem(rng, n_fit, n_val, n_classes, style):
    """Fit and validation similarities: clustered points, exp(-d); "rounded" to few values (ties, the
    distinct-value bins), "asymmetric" with noise, or "continuous"."""
    n = n_fit + n_val
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    X = rng.normal(size=(n, 3)) + 1.2 * np.eye(3)[y % 3] + 0.7 * (y >= 3)[:, None]
    S = np.exp(-np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)))
    if style == "rounded":
        S = np.round(S * 8) / 8
    elif style == "asymmetric":
        S = S + 0.05 * rng.normal(size=S.shape)
    fit = np.arange(n_fit)
    val = np.arange(n_fit, n)
    return S[np.ix_(fit, fit)], y[fit], S[np.ix_(val, fit)]


# ---------------------------------------------------------------- estimators == reference
@pytest.mark.parametrize("statistic", ["centroid", "pairwise"])
@pytest.mark.parametrize("style", ["continuous", "rounded", "asymmetric"])
def test_predictions_equal_the_row_by_row_reference(statistic, style):
    """Same histograms and alpha (integers, then the same solver: exactly), the same classes, and log
    posteriors within the rounding of the scores: each score adds |G_x| + 1 logs of ratios (eq. (5)) or of
    means of k_h of them (eq. (7)), computed here in another order; a few ulp per operation of the
    magnitude of the summed terms bounds the difference, and the softmax at most doubles it."""
    rng = np.random.default_rng({"continuous": 1, "rounded": 2, "asymmetric": 3}[style])
    for trial in range(3):
        n_classes = 2 + trial
        S, y, S_val = random_problem(rng, 36 + 6 * trial, 12, n_classes, style)
        for k in (1, 2, 5, 11, len(y) - 1, len(y), 200):
            alpha, edges, data = ref_fit(S, y, min(k, len(y) - 1), statistic)
            for prior in ("local", "global"):
                est = ESTIMATORS[statistic](n_neighbors=k, prior=prior).fit(S, y)
                np.testing.assert_array_equal(est.bins_.edges, edges)
                np.testing.assert_array_equal(est.alpha_, alpha)
                assert set(data) == {tuple(p) for p in np.argwhere(est.alpha_status_ != "pooled")}
                log_proba = est.predict_log_proba(S_val)
                pred = est.predict(S_val)
                for i, s in enumerate(S_val):
                    want, size, nb = ref_log_scores(S, y, alpha, edges, s, min(k, len(y)), statistic,
                                                    None if prior == "local" else np.log(est.class_prior_))
                    want_log_proba = want - logsumexp(want)
                    tol = 2 * 16 * (k + 8) * EPS * (1.0 + size.max())
                    finite = np.isfinite(want)
                    np.testing.assert_array_equal(np.isfinite(log_proba[i]), finite)
                    np.testing.assert_allclose(log_proba[i][finite], want_log_proba[finite], rtol=0, atol=tol)
                    winner = tie_winner(list(want), list(est.class_prior_), list(y[nb]))
                    top = np.sort(want[finite])[::-1]
                    if top.size == 1 or top[0] - top[1] > tol:  # not a tie to rounding: the same class
                        assert pred[i] == est.classes_[winner], (trial, k, i)


def test_reference_runs_cover_pooled_pairs_and_several_bins():
    """The random problems above reach the pooled estimate (k = 1: only (g, g) pairs) and both kinds of bins."""
    rng = np.random.default_rng(2)
    S, y, _ = random_problem(rng, 36, 12, 2, "rounded")
    assert np.unique(S).size <= 20 and make_bins(S, 20).r == np.unique(S).size
    est = BayesianLocalSDA(n_neighbors=1).fit(S, y)
    assert set(est.alpha_status_[0, 1:]) == {"pooled"}
    S, y, _ = random_problem(rng, 36, 12, 2, "continuous")
    assert make_bins(S, 20).r == 20


# ---------------------------------------------------------------- posterior-mean limits (spec §9)
def test_posterior_mean_tends_to_the_prior_mean_as_the_prior_concentrates():
    """alpha = c p, c -> infinity: (c p + m) / (c + n) -> p, the gap |m - n p| / (c + n)."""
    p = np.array([0.1, 0.4, 0.2, 0.3])
    m = np.array([5, 0, 2, 1])
    for c in (1e2, 1e5, 1e8, 1e12):
        theta = posterior_mean(c * p, m)
        np.testing.assert_allclose(theta, p, rtol=0, atol=np.abs(m - m.sum() * p).max() / (c + m.sum()) + 4 * EPS)
        assert theta.sum() == pytest.approx(1.0, abs=4 * EPS)


def test_posterior_mean_tends_to_the_empirical_pmf_as_the_prior_vanishes():
    """alpha = eps 1, eps -> 0: (eps + m) / (r eps + n) -> m / n, the gap at most eps (r + 1) / n."""
    m = np.array([5, 0, 2, 1])
    for eps in (1e-1, 1e-4, 1e-8, 1e-14):
        theta = posterior_mean(np.full(4, eps), m)
        np.testing.assert_allclose(theta, m / m.sum(), rtol=0, atol=eps * 5 / m.sum() + 4 * EPS)
        assert np.all(theta > 0)


@pytest.mark.parametrize("statistic", ["centroid", "pairwise"])
def test_a_concentrated_prior_classifies_by_the_prior_mean(statistic):
    """With every alpha_gh = c p_gh, c huge, the scores are log P(g) + sum_h log p_gh[j(psi(x, mu_h))] (centroid)
    or the log of the mean of p_gh over the similarities to N_h (pairwise): the data no longer count."""
    rng = np.random.default_rng(11)
    S, y, S_val = random_problem(rng, 40, 10, 3, "continuous")
    est = ESTIMATORS[statistic](n_neighbors=7).fit(S, y)
    p = rng.dirichlet(np.ones(est.bins_.r), size=(3, 3))
    est.alpha_ = 1e14 * p
    got = est.predict_log_scores(S_val)
    want = np.array([ref_log_scores(S, y, 1e300 * p, est.bins_.edges, s, 7, statistic, None)[0] for s in S_val])
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    np.testing.assert_allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=1e-9)


# ---------------------------------------------------------------- histograms by brute force
def test_pairwise_histograms_equal_a_brute_force_count():
    """A hand-built neighbourhood: 6 fit objects of 2 classes, similarities on 4 distinct values (one bin
    each); the counts of every (z_i, z_l) in N_g x N_h, z_i = z_l included, are written out here."""
    S = np.array([
        [1.0, 0.5, 0.2, 0.5, 0.0, 0.2],
        [0.5, 1.0, 0.0, 0.2, 0.5, 0.5],
        [0.2, 0.0, 1.0, 0.5, 0.2, 0.0],
        [0.5, 0.2, 0.5, 1.0, 0.0, 0.2],
        [0.0, 0.5, 0.2, 0.0, 1.0, 0.5],
        [0.2, 0.5, 0.0, 0.2, 0.5, 1.0],
    ])
    y = np.array([0, 0, 1, 1, 0, 1])
    x = np.array([[0.9, 0.8, 0.7, 0.1, 0.6, 0.05]])  # neighbours at k = 4: 0, 1, 2, 4 (classes 0, 0, 1, 0)
    est = PairwiseBayesianLocalSDA(n_neighbors=4).fit(S, y)
    np.testing.assert_array_equal(est.bins_.centres, [0.0, 0.2, 0.5, 1.0])
    counts, hist, stat = est._histograms(x, est.bins_.index(x), est._neighbours(x), [4], with_stat=True)[4]
    np.testing.assert_array_equal(counts, [[3, 1]])
    # N_0 = {0, 1, 4}, N_1 = {2}; bins 0.0 -> 0, 0.2 -> 1, 0.5 -> 2, 1.0 -> 3
    # (0,0): S[{0,1,4}, {0,1,4}] = 1, .5, 0 / .5, 1, .5 / 0, .5, 1 -> three 1.0, four 0.5, two 0.0
    np.testing.assert_array_equal(hist[0, 0, 0], [2, 0, 4, 3])
    # (0,1): S[{0,1,4}, 2] = .2, 0, .2; (1,0): S[2, {0,1,4}] = .2, 0, .2; (1,1): S[2, 2] = 1
    np.testing.assert_array_equal(hist[0, 0, 1], [1, 2, 0, 0])
    np.testing.assert_array_equal(hist[0, 1, 0], [1, 2, 0, 0])
    np.testing.assert_array_equal(hist[0, 1, 1], [0, 0, 0, 1])
    # x's own similarities to N_0 = .9, .8, .6 -> bin 3, 3, 2 (edges .1, .35, .75); to N_1 = .7 -> bin 2
    np.testing.assert_array_equal(stat[0], [[0, 0, 1, 2], [0, 0, 1, 0]])


def test_three_class_hand_example_with_a_given_prior():
    """S_THREE of tests/local_sda/test_local_sda.py, k = 6, alpha_gh = (1/2, 1, 2) on the bins {0}, {1/2}, {1} for every
    pair; theta = (alpha + m) / (alpha_0 + sum m) of eq. (5), the histograms counted by hand.

    Centroid statistic (mu = 0, 2, 5; 2 counts): m_gg = (0, 1, 1), m_gh = (1, 1, 0) off the diagonal, so theta_gg =
    (.5, 2, 3) / 5.5 and theta_gh = (1.5, 2, 2) / 5.5. psi(x, mu) = (0.9, 0.6, 0.7) falls in bins (2, 1, 1):
    a scores 3 * 2 * 2, b and c 2 * 2 * 2 (/ 5.5^3): posteriors (3/7, 2/7, 2/7).

    Pairwise statistic (4 counts): S[N_g, N_g] = (1, .5, .5, 1), m = (0, 2, 2); S[N_a, N_c] = (0, 0, 0, .5) and
    S[N_c, N_b] = (.5, 0, 0, 0), m = (3, 1, 0); every other pair (0, .5, .5, 0) or (.5, 0, 0, .5), m = (2, 2, 0).
    theta = (.5, 3, 4), (3.5, 2, 2), (2.5, 3, 2) / 7.5. The bins of x's similarities: (2, 1) on N_a, (1, 0) on N_b,
    (0, 1) on N_c; eq. (7) averages theta over them: a scores 3.5 * 2.75 * 2.75, b 2.5 * 1.75 * 2.75 and c
    2.5 * 2.75 * 1.75 (/ 7.5^3)."""
    alpha = np.broadcast_to([0.5, 1.0, 2.0], (3, 3, 3)).copy()
    want = {BayesianLocalSDA: np.array([3, 2, 2]) / 7,
            PairwiseBayesianLocalSDA: np.array([3.5 * 2.75**2, 2.5 * 1.75 * 2.75, 2.5 * 2.75 * 1.75])}
    for cls, expected in want.items():
        est = cls(n_neighbors=6).fit(S_THREE, Y_THREE)
        np.testing.assert_array_equal(est.bins_.centres, [0.0, 0.5, 1.0])
        est.alpha_ = alpha
        np.testing.assert_allclose(est.predict_proba(S_TE_THREE)[0], expected / expected.sum(),
                                   rtol=1e-14)  # products of 3 exact ratios, normalised once: ~10 ulp
        assert est.predict(S_TE_THREE)[0] == "a"


def test_histograms_of_an_asymmetric_matrix_follow_the_formulas():
    """psi(z_i, z_l) is row z_i, column z_l (pairwise); psi(z, mu_h) row z (centroid): the brute force of the
    reference, on a matrix whose transpose differs, for every row and several k."""
    rng = np.random.default_rng(5)
    S, y, S_val = random_problem(rng, 30, 8, 3, "asymmetric")
    for statistic in ("centroid", "pairwise"):
        est = ESTIMATORS[statistic]().fit(S, y)
        assert not est._symmetric
        ks = [1, 3, 8, 30]
        got = est._histograms(S_val, est.bins_.index(S_val), np.argsort(-S_val, axis=1, kind="stable"), ks, True)
        for k in ks:
            for i, s in enumerate(S_val):
                counts, m, _ = ref_neighbourhood(S, s, ranked_others(s)[:k], y, 3, est.bins_.r, est.bins_.edges,
                                                 statistic)
                np.testing.assert_array_equal(got[k][0][i], counts)
                np.testing.assert_array_equal(got[k][1][i], m)


def test_leave_one_out_ranking_skips_the_object_and_breaks_ties_by_index():
    S = np.array([[1.0, 0.3, 0.3, 0.9], [0.3, 1.0, 0.5, 0.5], [0.2, 0.5, 1.0, 0.5], [0.9, 0.3, 0.5, 1.0]])
    np.testing.assert_array_equal(leave_one_out_order(S), [[3, 1, 2], [2, 3, 0], [1, 3, 0], [0, 2, 1]])


# ---------------------------------------------------------------- bins (spec §2)
def test_few_distinct_values_are_the_bins():
    S = np.array([[1.0, 0.3, 0.6], [0.3, 1.0, 0.6], [0.6, 0.6, 1.0]])
    bins = make_bins(S, 20)
    np.testing.assert_array_equal(bins.centres, [0.3, 0.6, 1.0])
    np.testing.assert_array_equal(bins.index(np.array([[0.3, 0.6, 1.0, -5.0, 7.0, 0.45, 0.44]])),
                                  [[0, 1, 2, 0, 2, 1, 0]])  # beyond the ends: the end bins; an edge: the upper bin


def test_many_values_give_equal_frequency_quantile_bins():
    rng = np.random.default_rng(0)
    A = rng.beta(5, 1, size=(120, 120))  # crowded near 1, as Voting's
    S = (A + A.T) / 2
    np.fill_diagonal(S, 1.0)
    bins = make_bins(S, 20)
    off = S[~np.eye(120, dtype=bool)]
    np.testing.assert_array_equal(
        bins.centres, np.unique(np.quantile(off, (np.arange(20) + 0.5) / 20, method="inverted_cdf")))
    freq = np.bincount(bins.index(off[None])[0], minlength=bins.r) / off.size
    assert bins.r == 20 and freq.min() > 0.5 / 20 and freq.max() < 2.0 / 20
    equal_width = np.histogram(off, bins=20, range=(off.min(), off.max()))[0] / off.size
    assert equal_width.min() < 0.1 / 20  # what the quantiles avoid


def test_bin_index_equals_searchsorted():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 40))
    x[0, :5] = [-np.inf, np.inf, 0.0, -0.0, 1e300]
    for n_edges in (1, 7, 64, 65, 300):
        edges = np.sort(rng.normal(size=n_edges))
        x[1, :n_edges] = edges[: x.shape[1]][:n_edges]  # values on the edges
        np.testing.assert_array_equal(Bins(np.empty(0), edges).index(x), np.searchsorted(edges, x, side="right"))


def test_ties_among_quantiles_merge_bins():
    S = np.ones((30, 30))
    S[:3, :3] = 0.2
    S[5, 7] = S[7, 5] = 0.4
    S[np.arange(30), (np.arange(30) + 1) % 30] = np.linspace(0.5, 0.9, 30)
    bins = make_bins(S, 20)
    assert bins.r < 20 and bins.centres[-1] == 1.0


# ---------------------------------------------------------------- alpha
def test_pairs_never_present_get_the_pooled_estimate():
    rng = np.random.default_rng(4)
    S, y, _ = random_problem(rng, 40, 5, 3, "continuous")
    est = PairwiseBayesianLocalSDA(n_neighbors=1).fit(S, y)  # a neighbourhood of one: pairs (g, g) only
    assert np.all(np.diag(est.alpha_status_) != "pooled")
    assert np.all(est.alpha_status_[~np.eye(3, dtype=bool)] == "pooled")
    _, _, data = ref_fit(S, y, 1, "pairwise")
    pooled = fit_polya(np.array([m for v in data.values() for m in v])).alpha
    np.testing.assert_array_equal(est.alpha_[0, 1], pooled)


def test_alpha_max_iter_warns():
    rng = np.random.default_rng(4)
    S, y, _ = random_problem(rng, 40, 5, 2, "continuous")
    with pytest.warns(ConvergenceWarning, match="BayesianLocalSDA, k=8"):
        PairwiseBayesianLocalSDA(max_iter=1).fit(S, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PairwiseBayesianLocalSDA().fit(S, y)


def test_symmetric_pairs_share_their_fit():
    rng = np.random.default_rng(6)
    S, y, _ = random_problem(rng, 50, 5, 3, "continuous")
    est = PairwiseBayesianLocalSDA(n_neighbors=9).fit(S, y)
    assert est._symmetric
    np.testing.assert_array_equal(est.alpha_, est.alpha_.transpose(1, 0, 2))


# ---------------------------------------------------------------- posteriors and the estimator contract
@pytest.mark.parametrize("statistic", ["centroid", "pairwise"])
def test_posteriors(statistic):
    """Rows sum to 1 (to the rounding of exp(score - logsumexp(scores)): a few ulp of the largest |score|);
    exactly 0 for classes absent from the neighbourhood; 1 for a neighbourhood of one class; predict is the
    most probable class."""
    rng = np.random.default_rng(12)
    S, y, S_val = random_problem(rng, 60, 25, 4, "continuous")
    for k in (1, 3, 6, 60):
        est = ESTIMATORS[statistic](n_neighbors=k).fit(S, y)
        proba = est.predict_proba(S_val)
        scores = est.predict_log_scores(S_val)
        size = np.max(np.abs(np.where(np.isfinite(scores), scores, 0.0)), axis=1)
        assert np.all(np.abs(proba.sum(axis=1) - 1.0) <= 8 * EPS * (1.0 + size))
        nbs = np.argsort(-S_val, axis=1, kind="stable")[:, :k]
        present = np.zeros_like(proba, dtype=bool)
        np.put_along_axis(present, y[nbs], True, axis=1)
        assert np.all(proba[~present] == 0.0) and np.all(proba[present] > 0)
        np.testing.assert_array_equal(np.exp(est.predict_log_proba(S_val)), proba)
        assert np.all(proba[present.sum(axis=1) == 1].max(axis=1) == 1.0)
        assert np.mean(est.predict(S_val) == est.classes_[np.argmax(proba, axis=1)]) == 1.0
    assert k == 60 and (present.sum(axis=1) > 1).any()


@pytest.mark.parametrize("cls", [BayesianLocalSDA, PairwiseBayesianLocalSDA])
def test_estimator_contract(cls):
    rng = np.random.default_rng(13)
    S, y, S_val = random_problem(rng, 30, 5, 2, "continuous")
    labels = np.array(["a", "b"])[y]
    for method in ("predict", "predict_proba", "predict_log_proba"):
        with pytest.raises(NotFittedError):
            getattr(cls(), method)(S_val)
    est = cls(n_neighbors=4).fit(S, labels)
    assert set(est.predict(S_val)) <= {"a", "b"} and list(est.classes_) == ["a", "b"]
    assert clone(est).get_params() == est.get_params()
    check_bad_input(cls, ({"n_bins": 1}, {"alpha_min": 0.0}, {"alpha_min": 2.0, "alpha_max": 1.0},
                          {"prior": "flat"}, {"tol": -1.0}, {"n_neighbors": 0}))


def test_registered_methods():
    for method, cls in (("local_sda_bayes", BayesianLocalSDA), ("local_sda_pairwise_bayes", PairwiseBayesianLocalSDA)):
        spec = METHODS[method]
        assert isinstance(spec.make(), cls) and spec.posteriors and spec.input == "similarity"
        assert spec.grid(None) == [{"n_neighbors": k} for k in (2, 4, 8, 16, 32, 64, 128)]
        with pytest.raises(ConfigError, match="alpha_min"):
            check_method_params(method, {"fixed": {"alpha_min": 1.0, "alpha_max": 0.5}})
