"""``PrecomputedSVC`` (libsvm called directly) equals ``SVC(kernel="precomputed")`` exactly."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from hlm.svm._libsvm import FIT_STATUS, PrecomputedSVC, fit_costs, predict_model


def _problem(n_classes, seed, kind):
    """A random PSD kernel (RBF: full rank; linear: rank 6) on 45 objects, labels not 0..c-1, and test rows."""
    rng = np.random.default_rng(seed)
    y = np.array([2, 5, 7, 9])[np.arange(45) % n_classes]
    X = rng.normal(size=(45, 6)) + 0.8 * np.eye(6)[y % 6]
    T = rng.normal(size=(30, 6))
    if kind == "rbf":
        K = np.exp(-0.2 * ((X[:, None] - X[None]) ** 2).sum(-1))
        K_te = np.exp(-0.2 * ((T[:, None] - X[None]) ** 2).sum(-1))
    else:
        K, K_te = X @ X.T, T @ X.T
    assert np.linalg.eigvalsh(K).min() > -1e-10
    return K, y, K_te


def _fit_svc(K, y, **params):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svc = SVC(kernel="precomputed", **params).fit(K, y)
    return svc, any(issubclass(w.category, ConvergenceWarning) for w in caught)


@pytest.mark.parametrize("kind", ["rbf", "linear"])
@pytest.mark.parametrize("n_classes", [2, 3, 4])
@pytest.mark.parametrize("C", [1e-3, 1.0, 1e5])
def test_equals_sklearn_svc(n_classes, C, kind):
    K, y, K_te = _problem(n_classes, seed=n_classes, kind=kind)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PrecomputedSVC never warns
        ours = PrecomputedSVC(C, max_iter=100_000, cache_size=200).fit(K, y)
    ref, warned = _fit_svc(K, y, C=C, max_iter=100_000, cache_size=200)
    for name in ("classes_", "support_", "n_support_", "dual_coef_", "intercept_", "n_iter_"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name), err_msg=name)
    np.testing.assert_array_equal(ours.predict(K_te), ref.predict(K_te))
    np.testing.assert_array_equal(ours.decision_function(K_te), ref.decision_function(K_te))
    np.testing.assert_array_equal(ours.predict(K), ref.predict(K))
    assert ours.hit_max_iter == warned == (ref.fit_status_ == 1)
    if C == 1.0:
        assert len(set(ref.predict(K_te))) == n_classes  # every class takes part in the vote


def test_hit_max_iter_exactly_when_svc_warns():
    """3 classes: for small max_iter libsvm stops early in some of the pairwise SVMs; SVC then warns."""
    K, y, K_te = _problem(3, seed=11, kind="linear")
    seen = set()
    for C in (0.01, 1.0, 1e3):
        for max_iter in (1, 2, 5, 20, 100, 1000, -1):
            ours = PrecomputedSVC(C, max_iter=max_iter, cache_size=200).fit(K, y)
            ref, warned = _fit_svc(K, y, C=C, max_iter=max_iter, cache_size=200)
            assert ours.hit_max_iter == warned, (C, max_iter)
            np.testing.assert_array_equal(ours.dual_coef_, ref.dual_coef_)
            np.testing.assert_array_equal(ours.predict(K_te), ref.predict(K_te))
            seen.add(warned)
    assert seen == {True, False}


def test_input_errors():
    K, y, K_te = _problem(2, seed=0, kind="rbf")
    with pytest.raises(ValueError, match="2 classes"):
        PrecomputedSVC().fit(K, np.zeros(len(y)))
    with pytest.raises(ValueError, match="square"):
        PrecomputedSVC().fit(K[:, :-1], y)
    model = PrecomputedSVC().fit(K, y)
    with pytest.raises(ValueError, match="columns"):
        model.predict(K_te[:, :-1])
    with pytest.raises(ValueError, match="columns"):
        model.decision_function(K_te[0])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_fit_encoded_equals_fit(n_classes):
    """Labels encoded once by the caller (SVM-KNN fits every C on one encoding) give fit's model."""
    K, y, K_te = _problem(n_classes, seed=7, kind="rbf")
    classes, y_enc = np.unique(y, return_inverse=True)
    ours = PrecomputedSVC(10.0).fit_encoded(K, y_enc.astype(np.float64), classes)
    ref = PrecomputedSVC(10.0).fit(K, y)
    for name in ("classes_", "support_", "n_support_", "dual_coef_", "intercept_", "n_iter_"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name), err_msg=name)
    np.testing.assert_array_equal(ours.predict(K_te), ref.predict(K_te))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("max_iter", [3, 100_000])
def test_fit_costs_equals_fit_encoded(n_classes, max_iter):
    """SVM-KNN's unwrapped calls: the models and predictions of fit_encoded, one per cost."""
    K, y, K_te = _problem(n_classes, seed=11, kind="rbf")
    classes, y_enc = np.unique(y, return_inverse=True)
    y_enc = y_enc.astype(np.float64)
    costs = [1e-3, 1.0, 1e5]
    models = fit_costs(K, y_enc, len(classes), costs, max_iter=max_iter, cache_size=200)
    for C, model in zip(costs, models, strict=True):
        ref = PrecomputedSVC(C, max_iter=max_iter, cache_size=200).fit_encoded(K, y_enc, classes)
        for a, b in zip(model, (ref.support_, ref.support_vectors_, ref._n_support, ref._dual_coef,
                                ref._intercept, ref._probA, ref._probB, ref.fit_status_, ref.n_iter_)):
            np.testing.assert_array_equal(a, b)
        assert (model[FIT_STATUS] == 1) == ref.hit_max_iter
        np.testing.assert_array_equal(classes[predict_model(model, K_te, 200).astype(np.intp)], ref.predict(K_te))
