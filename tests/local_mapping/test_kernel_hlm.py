"""Kernel HLM (paper section 3.2) on precomputed distances: known answers."""

import warnings

import numpy as np
import pytest
import scipy.stats as st
from scipy.spatial.distance import cdist
from scipy.special import logsumexp

from hlm.errors import DataError
from hlm.local_mapping._kernel_hlm import KernelHLM, nearest_same_class_sq_distance


def _blobs(rng, n_per=30, p=3, sep=2.0):
    X = np.vstack([rng.normal(0, 1, (n_per, p)), rng.normal(sep, 1, (n_per, p))])
    y = np.repeat(np.array(["a", "b"]), n_per)
    return X, y


# ---------------------------------------------------------------- Kernel HLM
@pytest.mark.parametrize("p", [1, 2, 4])
def test_kernel_hlm_equals_gaussian_kde(p):
    """s = p/2 and fixed b: class log-scores equal an independent Gaussian KDE, variance b/2."""
    rng = np.random.default_rng(p)
    X, y = _blobs(rng, n_per=15, p=p)
    Xt = rng.normal(1, 2, (10, p))
    b = 0.7
    model = KernelHLM(shape=p / 2, scale=b).fit(cdist(X, X), y)
    scores = model.predict_log_scores(cdist(Xt, X))
    for k, cls in enumerate(model.classes_):
        members = X[y == cls]
        dens = np.array(
            [st.multivariate_normal(mean=m, cov=b / 2 * np.eye(p)).logpdf(Xt) for m in members]
        ).reshape(len(members), -1)
        expected = logsumexp(dens, axis=0) - np.log(len(members)) + np.log(len(members) / len(y))
        np.testing.assert_allclose(scores[:, k], expected, rtol=1e-10)
    proba = model.predict_proba(cdist(Xt, X))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.log(proba), scores - logsumexp(scores, axis=1, keepdims=True))


def test_kernel_hlm_estimates_gamma_from_nearest_same_class_neighbour():
    rng = np.random.default_rng(2)
    X, y = _blobs(rng, n_per=40, p=2)
    D = cdist(X, X)
    # u_i by brute force: squared distance to the closest *other* member of i's class
    u = np.array([min(np.sum((X[i] - X[j]) ** 2) for j in range(len(X)) if j != i and y[j] == y[i])
                  for i in range(len(X))])
    np.testing.assert_allclose(nearest_same_class_sq_distance(D, np.unique(y, return_inverse=True)[1]), u)
    model = KernelHLM(round_shape=False).fit(D, y)
    a, _, scale = st.gamma.fit(u, floc=0)
    assert model.shape_mle_ == pytest.approx(a, rel=1e-7)
    assert model.scale_ == pytest.approx(scale, rel=1e-7)
    rounded = KernelHLM().fit(D, y)
    assert rounded.shape_ == max(np.floor(2 * a + 0.5) / 2, 0.5)  # s* scores ...
    assert rounded.scale_ == pytest.approx(u.mean() / a, rel=1e-7)  # ... b = ubar / s-hat (eq. 3)


def test_kernel_hlm_zero_distances_are_left_out_with_warning():
    rng = np.random.default_rng(3)
    X, y = _blobs(rng, n_per=10, p=2)
    X = np.vstack([X, X[:2]])  # two exact duplicates in class 'a'
    y = np.concatenate([y, ["a", "a"]])
    D = cdist(X, X)
    with pytest.warns(UserWarning, match="duplicate"):
        model = KernelHLM().fit(D, y)
    assert model.n_zero_u_ == 4
    assert np.isfinite(model.scale_) and model.scale_ > 0


def test_kernel_hlm_all_equal_u_does_not_crash():
    # a regular simplex per class: every nearest-neighbour distance equals 1
    D = np.ones((6, 6)) - np.eye(6)
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(RuntimeWarning, match="unbounded"):
        model = KernelHLM().fit(D, y)
    Dt = np.array([[0.2, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0.3, 1]])
    np.testing.assert_array_equal(model.predict(Dt), [0, 1])
    assert np.isfinite(model.predict_log_proba(Dt)).all()


def test_kernel_hlm_no_positive_u_is_a_clear_error():
    D = np.array([[0, 0, 1.0], [0, 0, 1.0], [1.0, 1.0, 0]])
    y = np.array(["a", "a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DataError, match="no positive nearest-neighbour distance"):
            KernelHLM().fit(D, y)


def test_kernel_hlm_singleton_class_still_scores():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(0, 1, (10, 2)), [[8.0, 8.0]]])
    y = np.array(["big"] * 10 + ["tiny"])
    with pytest.warns(UserWarning, match="one training object"):
        model = KernelHLM().fit(cdist(X, X), y)
    assert model.predict(cdist([[8.1, 7.9]], X))[0] == "tiny"


def test_kernel_hlm_u_is_d_option_equals_squared_on_root_distances():
    rng = np.random.default_rng(12)
    X, y = _blobs(rng, n_per=20, p=3)
    Xt = rng.normal(1, 2, (10, 3))
    D, Dt = cdist(X, X), cdist(Xt, X)
    a = KernelHLM(squared=False).fit(D, y)
    b = KernelHLM().fit(np.sqrt(D), y)
    assert a.shape_ == b.shape_ and a.scale_ == pytest.approx(b.scale_)
    np.testing.assert_allclose(a.predict_log_proba(Dt), b.predict_log_proba(np.sqrt(Dt)))


