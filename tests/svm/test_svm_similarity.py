"""Global SVMs on similarities (spec docs/compared-methods-spec.md 6.6, 6.7) and on vectors: known answers (spec 9)."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from scipy.spatial.distance import cdist, pdist
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from hlm.errors import DataError
from hlm.svm._similarity import SVMSimilarityFeatures, SVMSimilarityKernel, SVMVectors
from hlm.svm._spectrum import fit_spectra, fit_spectrum

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def aural():
    mat = scipy.io.loadmat(ROOT / "data" / "raw" / "AuraSonar.mat")
    return np.asarray(mat["A"], dtype=np.float64), mat["C"].ravel().astype(int)


def _rbf_problem(seed=0, n_per=15, m=30, gamma=0.5):
    """A PD similarity (RBF kernel of 3-class 2-D points) and its test rows."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, 1.0, (n_per, 2)) for c in ((0, 0), (2.5, 0), (0, 2.5))])
    y = np.repeat(np.array(["u", "v", "w"]), n_per)
    Xt = rng.normal(1.0, 1.8, (m, 2))
    S = np.exp(-gamma * cdist(X, X, "sqeuclidean"))
    S_te = np.exp(-gamma * cdist(Xt, X, "sqeuclidean"))
    return S, y, S_te


# ---------------------------------------------------------------- clip (spec 6.6, 9)
def test_clip_projector_reproduces_training_columns_on_aural_sonar(aural):
    A, _ = aural
    t = fit_spectrum(A, "clip")
    K = t.kernel
    np.testing.assert_allclose(t.projector @ A, K, atol=1e-12)  # P S_{:,i} = K_{:,i}
    np.testing.assert_allclose(t.transform_test(A), K, atol=1e-12)  # training rows as test rows
    assert np.linalg.eigvalsh(K).min() >= -1e-10 * np.linalg.norm(K, 2)
    assert np.linalg.eigvalsh(A).min() < -1.0  # Aural Sonar really is indefinite: clip did something
    assert t.negative_eigenfraction == pytest.approx(0.207, abs=1e-3)  # spec 4.3


def test_clip_is_identity_on_positive_definite_matrix():
    S, _, _ = _rbf_problem()
    assert np.linalg.eigvalsh(S).min() > 1e-6  # precondition: well inside PD
    t = fit_spectrum(S, "clip")
    np.testing.assert_allclose(t.projector, np.eye(len(S)), atol=1e-10)
    np.testing.assert_allclose(t.kernel, S, atol=1e-10)


def test_model_exposes_negative_eigenfraction(aural):
    A, y = aural
    model = SVMSimilarityKernel().fit(A, y)
    assert model.negative_eigenfraction_ == pytest.approx(0.2066, abs=1e-3)
    assert model.converged_


# ---------------------------------------------------------------- sims-as-kernel (spec 6.6)
@pytest.mark.parametrize("spectrum", ["clip", "flip", "shift"])
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_kernel_svm_on_psd_similarity_equals_precomputed_svc(spectrum, C):
    S, y, S_te = _rbf_problem()
    ours = SVMSimilarityKernel(C=C, spectrum=spectrum).fit(S, y)
    ref = SVC(kernel="precomputed", C=C).fit(S, y)
    np.testing.assert_array_equal(ours.predict(S_te), ref.predict(S_te))
    np.testing.assert_allclose(
        ours.svc_.decision_function(ours.transform_.transform_test(S_te)), ref.decision_function(S_te), atol=5e-3
    )  # equal up to libsvm's tolerance (tol=1e-3): P and K are I and S only to rounding
    assert len(set(ref.predict(S_te))) == 3  # the check involves all three classes


def test_kernel_svm_uses_consistent_test_treatment(aural):
    """Test rows are mapped by P: training rows given as test rows score like the training kernel."""
    A, y = aural
    model = SVMSimilarityKernel(C=1.0).fit(A, y)
    np.testing.assert_allclose(
        model.svc_.decision_function(model.transform_.transform_test(A)),
        model.svc_.decision_function(model.transform_.kernel),
        atol=1e-10,
    )
    raw = model.svc_.decision_function(A)  # without P the scores differ
    assert np.abs(raw - model.svc_.decision_function(model.transform_.kernel)).max() > 1e-3


def test_kernel_svm_labels_map_back_to_classes():
    S, y, S_te = _rbf_problem()
    labels = np.array([{"u": 30, "v": 10, "w": 20}[c] for c in y])
    ours = SVMSimilarityKernel(C=1.0).fit(S, labels)
    ref = SVC(kernel="precomputed", C=1.0).fit(S, labels)
    np.testing.assert_array_equal(ours.classes_, [10, 20, 30])
    np.testing.assert_array_equal(ours.predict(S_te), ref.predict(S_te))


def test_max_iter_gives_one_clear_convergence_warning(aural):
    A, y = aural
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SVMSimilarityKernel(C=100.0, max_iter=1).fit(A, y)
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1
    msg = str(conv[0].message)
    assert "SVM (sims-as-kernel, clip) C=100: libsvm stopped at max_iter=1" in msg
    assert not model.converged_


# ---------------------------------------------------------------- sims-as-features (spec 6.7)
@pytest.mark.parametrize("C", [0.01, 1.0])
def test_features_linear_equals_linear_svc_on_rows(aural, C):
    A, y = aural
    te = np.arange(100) % 5 == 0
    tr = ~te
    S, S_te = A[np.ix_(tr, tr)], A[np.ix_(te, tr)]
    ours = SVMSimilarityFeatures(C=C, kernel="linear").fit(S, y[tr])
    ref = SVC(kernel="linear", C=C).fit(S, y[tr])
    np.testing.assert_array_equal(ours.predict(S_te), ref.predict(S_te))
    np.testing.assert_allclose(
        ours.svc_.decision_function(S_te @ S.T), ref.decision_function(S_te), atol=1e-6
    )


@pytest.mark.parametrize("gamma", [0.05, 0.5])
def test_features_rbf_equals_rbf_svc_on_rows(aural, gamma):
    A, y = aural
    te = np.arange(100) % 5 == 0
    tr = ~te
    S, S_te = A[np.ix_(tr, tr)], A[np.ix_(te, tr)]
    ours = SVMSimilarityFeatures(C=3.0, kernel="rbf", gamma=gamma).fit(S, y[tr])
    ref = SVC(kernel="rbf", C=3.0, gamma=gamma).fit(S, y[tr])
    assert ours.gamma_ == gamma
    np.testing.assert_array_equal(ours.predict(S_te), ref.predict(S_te))
    K_te = np.exp(-gamma * cdist(S_te, S, "sqeuclidean"))
    np.testing.assert_allclose(ours.svc_.decision_function(K_te), ref.decision_function(S_te), atol=1e-6)


def test_features_rbf_median_scaling(aural):
    A, y = aural
    S = A[:60, :60]
    med = np.median(pdist(S, "sqeuclidean"))
    ours = SVMSimilarityFeatures(C=1.0, kernel="rbf", gamma=2.0, gamma_scale="median").fit(S, y[:60])
    assert ours.gamma_ == pytest.approx(2.0 / med, rel=1e-10)
    ref = SVC(kernel="rbf", C=1.0, gamma=2.0 / med).fit(S, y[:60])
    np.testing.assert_array_equal(ours.predict(A[60:, :60]), ref.predict(A[60:, :60]))


def test_features_rbf_training_kernel_is_safe():
    """Duplicate rows: squared distance exactly 0 (not a tiny negative), kernel entry 1."""
    S = np.array([[1.0, 1.0, 0.2], [1.0, 1.0, 0.2], [0.2, 0.2, 1.0]]) * 1e4
    model = SVMSimilarityFeatures(C=100.0, kernel="rbf", gamma=1e-7).fit(S, ["a", "a", "b"])
    K_te = model._test_kernel(S)
    assert np.all(K_te <= 1.0) and K_te[0, 1] == 1.0
    np.testing.assert_array_equal(model.predict(S), ["a", "a", "b"])


# ---------------------------------------------------------------- sklearn integration (spec 2)
def test_cross_val_score_slices_square_matrix(aural):
    A, y = aural
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for est in (SVMSimilarityKernel(C=1.0), SVMSimilarityFeatures(C=0.1, kernel="linear")):
        scores = cross_val_score(est, A, y, cv=cv)
        manual = []
        for tr, te in cv.split(A, y):
            model = type(est)(**est.get_params()).fit(A[np.ix_(tr, tr)], y[tr])
            manual.append(np.mean(model.predict(A[np.ix_(te, tr)]) == y[te]))
        np.testing.assert_allclose(scores, manual, atol=1e-15)


def test_grid_search_cv_picks_manual_best(aural):
    A, y = aural
    cv = StratifiedKFold(4, shuffle=True, random_state=1)
    grid = [0.001, 0.1, 10.0]
    gs = GridSearchCV(SVMSimilarityKernel(), {"C": grid}, cv=cv).fit(A, y)
    means = []
    for C in grid:
        acc = [
            np.mean(SVMSimilarityKernel(C=C).fit(A[np.ix_(tr, tr)], y[tr]).predict(A[np.ix_(te, tr)]) == y[te])
            for tr, te in cv.split(A, y)
        ]
        means.append(np.mean(acc))
    np.testing.assert_allclose(gs.cv_results_["mean_test_score"], means, atol=1e-15)
    assert gs.best_params_["C"] == grid[int(np.argmax(means))]


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("cls", [SVMSimilarityKernel, SVMSimilarityFeatures])
def test_bad_similarity_input(cls):
    S, y, S_te = _rbf_problem()
    with pytest.raises(DataError, match="square"):
        cls().fit(S[:, :-1], y)
    bad = S.copy()
    bad[2, 3] = np.nan
    with pytest.raises(DataError, match="NaN"):
        cls().fit(bad, y)
    with pytest.raises(DataError, match="labels"):
        cls().fit(S, y[:-1])
    with pytest.raises(DataError, match="2 classes"):
        cls().fit(S, np.zeros(len(y)))
    model = cls().fit(S, y)
    with pytest.raises(DataError, match="columns"):
        model.predict(S_te[:, :-1])
    with pytest.raises(DataError, match="NaN"):
        model.predict(np.where(S_te > 0.5, np.inf, S_te))


@pytest.mark.parametrize(
    "est",
    [
        SVMSimilarityKernel(C=0.0),
        SVMSimilarityKernel(C=-1.0),
        SVMSimilarityKernel(spectrum="square"),
        SVMSimilarityKernel(max_iter=0),
        SVMSimilarityFeatures(kernel="poly"),
        SVMSimilarityFeatures(gamma=0.0),
        SVMSimilarityFeatures(gamma_scale="mean"),
        SVMVectors(C="big"),
    ],
)
def test_invalid_parameters(est):
    S, y, _ = _rbf_problem()
    with pytest.raises(InvalidParameterError):
        est.fit(S, y)


# ---------------------------------------------------------------- SVM on vectors (HLM end of 5.3)
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_vectors_equal_svc_on_standardised_features(kernel):
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0, 1, (20, 4)), rng.normal(1.0, 1, (20, 4))]) * [1.0, 100.0, 0.01, 5.0] + 7.0
    y = np.repeat(["p", "q"], 20)
    Xt = rng.normal(0.5, 1.5, (25, 4)) * [1.0, 100.0, 0.01, 5.0] + 7.0
    mu, sd = X.mean(axis=0), X.std(axis=0)
    ref = SVC(kernel=kernel, C=2.0, gamma=0.3).fit((X - mu) / sd, y)
    ours = SVMVectors(C=2.0, kernel=kernel, gamma=0.3).fit(X, y)
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict((Xt - mu) / sd))
    if kernel == "rbf":
        raw = SVC(kernel=kernel, C=2.0, gamma=0.3).fit(X, y).predict(Xt)
        assert not np.array_equal(raw, ref.predict((Xt - mu) / sd))  # standardising matters here


def test_vectors_constant_feature_and_not_pairwise():
    X = np.array([[0.0, 5.0], [1.0, 5.0], [3.0, 5.0], [4.0, 5.0]])
    model = SVMVectors(C=10.0).fit(X, [0, 0, 1, 1])
    np.testing.assert_array_equal(model.scale_, [np.std(X[:, 0]), 1.0])
    np.testing.assert_array_equal(model.predict([[0.5, 9.0], [3.5, -1.0]]), [0, 1])
    assert not model.__sklearn_tags__().input_tags.pairwise


def test_vectors_bad_input():
    X = np.arange(12.0).reshape(6, 2)
    y = [0, 0, 0, 1, 1, 1]
    with pytest.raises(DataError, match="2-D"):
        SVMVectors().fit(X.ravel(), y)
    with pytest.raises(DataError, match="NaN"):
        SVMVectors().fit(np.where(X == 3, np.nan, X), y)
    with pytest.raises(DataError, match="numeric"):
        SVMVectors().fit([["a", "b"]] * 6, y)
    with pytest.raises(DataError, match="labels"):
        SVMVectors().fit(X, y[:-1])
    model = SVMVectors().fit(X, y)
    with pytest.raises(DataError, match="features"):
        model.predict(X[:, :1])


@pytest.mark.parametrize("method", ["clip", "flip", "shift"])
@pytest.mark.parametrize("n", [1, 2, 5, 40])
def test_fit_spectra_equals_fit_spectrum_bit_for_bit(method, n):
    """The batched eigh runs LAPACK on each matrix as fit_spectrum does: identical arrays."""
    rng = np.random.default_rng(n)
    S = rng.normal(size=(6, n, n))  # not symmetric: fit_spectra symmetrises as fit_spectrum
    S[0] = S[0] @ S[0].T  # a PSD one
    for one, batched in zip([fit_spectrum(s, method) for s in S], fit_spectra(S, method), strict=True):
        assert one.method == batched.method
        for name in ("kernel", "projector", "eigenvalues"):
            a, b = getattr(one, name), getattr(batched, name)
            assert (a is None and b is None) or np.array_equal(a, b), name
        assert np.array_equal(one.transform_test(S[1, :2]), batched.transform_test(S[1, :2]))
    with pytest.raises(ValueError, match="square"):
        fit_spectra(S, "square")


@pytest.mark.parametrize("n, psd", [(57, False), (100, False), (100, True)])
def test_clip_products_by_gemm(n, psd):
    """P = U+ U+^T is a product of two distinct arrays (BLAS gemm): numpy computes ``X @ X.T`` of
    one array by syrk, whose rounding differs, and the recorded results come from gemm. The
    operands are laid out as ``U[:, keep]`` (column-major), as ``clip_eigenpairs`` keeps them:
    BLAS may round products of other layouts differently (OpenBLAS did at n = 100, every
    eigenvalue kept)."""
    rng = np.random.default_rng(3)
    S = rng.normal(size=(n, n))
    S = S @ S.T if psd else S
    A = (S + S.T) / 2.0
    mu, U = np.linalg.eigh(A)
    keep = mu > 1e-12 * np.abs(mu).max()
    assert keep.all() == psd
    P = U[:, keep] @ U[:, keep].T  # two copies: gemm
    K = (U[:, keep] * mu[keep]) @ U[:, keep].T
    t = fit_spectrum(S, "clip")
    assert np.array_equal(t.projector, (P + P.T) / 2.0)
    assert np.array_equal(t.kernel, (K + K.T) / 2.0)
