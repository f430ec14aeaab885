"""Mixture HLM (section 3.1): parameter recovery, eqs. 3-6, export, fallbacks."""

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from scipy.special import logsumexp

from hlm.errors import DataError
from hlm.local_mapping._kernel_hlm import KernelHLM
from hlm.local_mapping._mixture_hlm import HLMModel, MixtureHLM


class OneClassHLM(MixtureHLM):
    """Mixture HLM of a single class, to check one class's estimates (a classifier's ``fit`` refuses
    one class; the incremental learners' batch refits accept it, as this does)."""

    _min_classes = 1


def _gaussians(rng, centres, sigmas, n_per):
    X = np.vstack([rng.normal(c, s, (n_per, len(c))) for c, s in zip(centres, sigmas)])
    return np.vstack([X, centres])  # the true centres are the last objects


@pytest.mark.parametrize("d", [2, 5, 8])
def test_known_answer_true_centres(d):
    """Spherical Gaussians in d dimensions: 2 s* = d and b_j = 2 sigma_j^2 (section 2.1)."""
    rng = np.random.default_rng(d)
    sigmas = np.array([0.5, 1.0, 2.0])
    centres = np.eye(3, d) * 100.0
    n_per = 4000
    X = _gaussians(rng, centres, sigmas, n_per)
    y = np.zeros(len(X), int)
    protos = np.arange(3 * n_per, 3 * n_per + 3)
    model = OneClassHLM().fit(cdist(X, X), y, prototypes=protos)
    assert 2 * model.shape_ == d
    order = np.argsort(model.prototypes_)
    # sampling sd of b_j ~ b_j * sqrt(2 / (n d)) < 1 %; shrinkage bias ~ 1/n
    np.testing.assert_allclose(model.scales_[order], 2 * sigmas**2, rtol=0.03)
    np.testing.assert_allclose(model.weights_, 1 / 3, atol=1e-3)


def test_per_class_shapes():
    rng = np.random.default_rng(1)
    Xa = rng.normal(0, 1, (3000, 2))
    Xb = rng.normal(0, 1, (3000, 6))
    # embed both in 6-d: class a lives in a 2-d plane far away
    Xa6 = np.hstack([Xa + 50, np.zeros((3000, 4))])
    X = np.vstack([Xa6, [[50, 50, 0, 0, 0, 0]], Xb, np.zeros((1, 6))])
    y = np.repeat([0, 1], 3001)
    model = MixtureHLM(shape="per_class").fit(cdist(X, X), y, prototypes=[3000, 6001])
    np.testing.assert_array_equal(2 * model.shape_, [2, 6])
    common = MixtureHLM().fit(cdist(X, X), y, prototypes=[3000, 6001])
    assert np.ndim(common.shape_) == 0 and 2 < 2 * common.shape_ < 6


def test_estimate_by_hand_with_shrinkage_and_small_clusters():
    # one class; prototypes 0 and 3; cluster A = {0, 1, 2}, cluster B = {3, 4} (too small: left out)
    D = np.array([
        [0, 1, 2, 9, 9],
        [1, 0, 9, 9, 9],
        [2, 9, 0, 9, 9],
        [9, 9, 9, 0, 3],
        [9, 9, 9, 3, 0],
    ], dtype=float)
    y = np.zeros(5, int)
    model = OneClassHLM(round_shape=False).fit(D, y, prototypes=[0, 3])
    u = np.array([1.0, 4.0])  # squared distances in cluster A
    c = np.log(u.mean()) - np.log(u).mean()
    from hlm.local_mapping._gamma import solve_shape

    s_hat = float(solve_shape(c))
    assert model.shape_ == pytest.approx(s_hat)
    lam = 2 / 3
    np.testing.assert_allclose(model.scales_, [(lam * 2.5 + (1 - lam) * 2.5) / s_hat, 2.5 / s_hat])
    np.testing.assert_allclose(model.weights_, [3 / 5, 2 / 5])


def test_weighted_eq4_equals_replication():
    rng = np.random.default_rng(4)
    X = rng.normal(0, 1, (30, 3))
    D = cdist(X, X)
    y = np.zeros(30, int)
    w = rng.integers(1, 4, 30).astype(float)
    weighted = OneClassHLM(round_shape=False).fit(D, y, sample_weight=w, prototypes=[0, 1])
    rep = np.repeat(np.arange(30), w.astype(int))
    # replicate objects, but keep a single copy of each prototype (the others are members at distance 0,
    # which carry no scale information and are left out)
    first = {0: np.flatnonzero(rep == 0)[0], 1: np.flatnonzero(rep == 1)[0]}
    replicated = OneClassHLM(round_shape=False).fit(D[np.ix_(rep, rep)], y[rep], prototypes=[first[0], first[1]])
    assert weighted.shape_mle_ == pytest.approx(replicated.shape_mle_, rel=1e-10)


def test_posteriors_eq6_and_prototype_only_prediction():
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(0, 1, (60, 2)), rng.normal(3, 1, (60, 2))])
    y = np.repeat(["a", "b"], 60)
    Xt = rng.normal(1.5, 2, (25, 2))
    model = MixtureHLM(n_components=3, n_init=5).fit(cdist(X, X), y)
    assert model.n_prototypes_ == 6
    Dt = cdist(Xt, X)
    # eq. 5 written out
    expected = np.empty((25, 2))
    for k in range(2):
        cols = model.component_class_ == k
        b = model.scales_[cols]
        dens = np.log(model.weights_[cols]) - model.shape_ * np.log(np.pi * b) - Dt[:, model.prototypes_[cols]] ** 2 / b
        expected[:, k] = np.log(0.5) + logsumexp(dens, axis=1)
    np.testing.assert_allclose(model.predict_log_scores(Dt), expected)
    np.testing.assert_allclose(model.predict_proba(Dt).sum(axis=1), 1)
    # prediction needs only the distances to the prototypes, also after a JSON round trip
    D_proto = Dt[:, model.prototypes_]
    np.testing.assert_array_equal(model.predict_from_prototypes(D_proto), model.predict(Dt))
    restored = HLMModel.from_json(model.model().to_json())
    np.testing.assert_allclose(restored.log_scores(D_proto), model.predict_log_scores(Dt))
    with pytest.raises(DataError, match="prototypes"):
        restored.log_scores(Dt)


def test_kernel_option_is_kernel_hlm():
    rng = np.random.default_rng(6)
    X = np.vstack([rng.normal(0, 1, (30, 2)), rng.normal(2, 1, (20, 2))])
    y = np.repeat([0, 1], [30, 20])
    Xt = rng.normal(1, 2, (15, 2))
    mix = MixtureHLM(n_components="kernel").fit(cdist(X, X), y)
    ker = KernelHLM().fit(cdist(X, X), y)
    np.testing.assert_allclose(mix.predict_log_proba(cdist(Xt, X)), ker.predict_log_proba(cdist(Xt, X)))
    assert mix.n_prototypes_ == 50


@pytest.mark.parametrize("method", ["vsh", "gknn", "ward"])
def test_clustering_methods_and_cap_at_class_size(method):
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(4, 1, (6, 2))])
    y = np.repeat([0, 1], [40, 6])
    model = MixtureHLM(n_components=10, clustering=method, n_init=3).fit(cdist(X, X), y)
    assert np.bincount(model.component_class_).tolist() == [10, 6]
    assert model.score(cdist(X, X), y) > 0.9


def test_tiny_class_falls_back_to_kernel_form():
    rng = np.random.default_rng(8)
    X = np.vstack([rng.normal(0, 1, (30, 2)), [[6.0, 6.0], [6.2, 5.9]]])
    y = np.array([0] * 30 + [1, 1])
    with pytest.warns(UserWarning, match="too small to cluster"):
        model = MixtureHLM(n_components=4, n_init=3).fit(cdist(X, X), y)
    assert model.fallback_classes_ == ["1"]
    assert np.sum(model.component_class_ == 1) == 2
    assert model.predict(cdist([[6.1, 6.0]], X))[0] == 1


def test_no_estimable_cluster_is_a_clear_error():
    D = np.ones((4, 4)) - np.eye(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DataError, match="no cluster with at least 3"):
            MixtureHLM(n_components=2, n_init=2).fit(D, [0, 0, 1, 1])


def test_u_is_d_option():
    rng = np.random.default_rng(9)
    X = rng.normal(0, 1, (200, 3))
    D = cdist(X, X)
    y = np.zeros(200, int)
    a = OneClassHLM(squared=False, round_shape=False).fit(D**2, y, prototypes=[0])
    b = OneClassHLM(round_shape=False).fit(D, y, prototypes=[0])
    assert a.shape_mle_ == pytest.approx(b.shape_mle_) and a.scales_ == pytest.approx(b.scales_)
