"""SVM-KNN on similarities (spec docs/compared-methods-spec.md 6.8; the flip, shift and sims-as-features
local kernels of docs/local-sda-family-spec.md 7): known answers (spec 9; local SDA family spec 9)."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from hlm.errors import DataError
from hlm.svm._libsvm import PrecomputedSVC
from hlm.svm._similarity import SVMSimilarityFeatures, SVMSimilarityKernel
from hlm.svm._spectrum import fit_spectrum, symmetrize
from hlm.svm._svm_knn import SVMKNN, _local_kernels

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def aural_split():
    """Aural Sonar (indefinite, 2 classes), every 5th object held out."""
    mat = scipy.io.loadmat(ROOT / "data" / "raw" / "AuraSonar.mat")
    A, y = np.asarray(mat["A"], dtype=np.float64), mat["C"].ravel().astype(int)
    te = np.arange(len(y)) % 5 == 0
    tr = ~te
    return A, y, A[np.ix_(tr, tr)], y[tr], A[np.ix_(te, tr)], y[te]


# ---------------------------------------------------------------- k = n_fit is the global SVM (spec 9)
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_k_equal_n_fit_is_global_clip_svm(aural_split, C):
    _, _, S, y, S_te, _ = aural_split
    glob = SVMSimilarityKernel(C=C, spectrum="clip").fit(S, y).predict(S_te)
    for k in (len(y), len(y) + 50):  # k is capped at n_fit
        local = SVMKNN(n_neighbors=k, C=C).fit(S, y).predict(S_te)
        np.testing.assert_array_equal(local, glob)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("local_kernel", ["flip", "shift", "features"])
def test_k_equal_n_fit_is_the_global_svm_of_each_local_kernel(aural_split, local_kernel, C):
    """flip, shift: SVMSimilarityKernel(spectrum=...); features: SVMSimilarityFeatures(kernel="linear")
    (its features are the rows of S_fit, Sym(S_fit) = S_fit here: Aural Sonar is symmetric)."""
    _, _, S, y, S_te, _ = aural_split
    assert np.array_equal(S, S.T)
    if local_kernel == "features":
        glob = SVMSimilarityFeatures(C=C, kernel="linear").fit(S, y)
    else:
        glob = SVMSimilarityKernel(C=C, spectrum=local_kernel).fit(S, y)
    expected = glob.predict(S_te)
    assert len(set(expected)) > 1
    for k in (len(y), len(y) + 50):  # k is capped at n_fit
        local = SVMKNN(n_neighbors=k, C=C, local_kernel=local_kernel).fit(S, y).predict(S_te)
        np.testing.assert_array_equal(local, expected)


def test_matches_manual_local_svms(aural_split):
    """Each row: its k most similar fit objects (ties -> lower index), clip kernel, P s_N, SVC."""
    _, _, S, y, S_te, _ = aural_split
    k, C = 8, 10.0
    expected = []
    for s in S_te:
        order = sorted(range(len(s)), key=lambda i: (-s[i], i))[:k]
        N = np.sort(order)
        if len(set(y[N])) == 1:
            expected.append(y[N][0])
            continue
        t = fit_spectrum(S[np.ix_(N, N)], "clip")
        svc = SVC(kernel="precomputed", C=C).fit(t.kernel, y[N])
        expected.append(svc.predict(s[N][None, :] @ t.projector)[0])
    ours = SVMKNN(n_neighbors=k, C=C).fit(S, y).predict(S_te)
    np.testing.assert_array_equal(ours, expected)
    mixed = sum(len(set(y[np.argsort(-s, kind="stable")[:k]])) > 1 for s in S_te)
    assert mixed >= 5  # the local SVMs were exercised, not only the shortcut


# ---------------------------------------------------------------- neighbourhoods (spec 5)
def test_neighbours_ranked_by_similarity_then_index():
    S = np.eye(5)
    model = SVMKNN(n_neighbors=3).fit(S, [0, 0, 1, 1, 1])
    s_te = np.array([[0.5, 0.9, 0.5, 0.5, 0.9], [0.1, 0.1, 0.1, 0.1, 0.1]])
    np.testing.assert_array_equal(model._neighbour_sets(s_te), [[0, 1, 4], [0, 1, 2]])


def test_single_class_neighbourhood_shortcut(monkeypatch):
    S = np.array(
        [
            [1.0, 0.9, 0.1, 0.1],
            [0.9, 1.0, 0.1, 0.1],
            [0.1, 0.1, 1.0, 0.9],
            [0.1, 0.1, 0.9, 1.0],
        ]
    )
    model = SVMKNN(n_neighbors=2, C=1.0).fit(S, ["a", "a", "b", "b"])

    def no_svm(*args, **kwargs):
        raise AssertionError("a local SVM was fitted for a one-class neighbourhood")

    monkeypatch.setattr("hlm.svm._svm_knn.fit_spectra", no_svm)
    monkeypatch.setattr("hlm.svm._svm_knn.fit_costs", no_svm)
    # row 0: neighbours {0, 1} (both 'a'); row 1: {2, 3} (both 'b') although object 0 ('a') is close behind
    S_te = np.array([[0.8, 0.7, 0.0, 0.6], [0.5, 0.1, 0.6, 0.55]])
    np.testing.assert_array_equal(model.predict(S_te), ["a", "b"])


def test_one_class_fit_is_refused():
    """A classifier needs 2 classes (every estimator, hlm.base._classifiers); a one-class neighbourhood
    at predict time is still fine (test above)."""
    S = np.full((3, 3), 0.5) + 0.5 * np.eye(3)
    with pytest.raises(DataError, match="single class 'z'"):
        SVMKNN(n_neighbors=2).fit(S, ["z", "z", "z"])


def test_identical_neighbour_sets_share_one_svm(aural_split, monkeypatch):
    _, _, S, y, S_te, _ = aural_split
    model = SVMKNN(n_neighbors=len(y), C=1.0).fit(S, y)  # every row has the same (full) set
    calls = []
    import hlm.svm._svm_knn as module

    original = module.fit_spectra
    monkeypatch.setattr(module, "fit_spectra", lambda S_N, how: calls.append(len(S_N)) or original(S_N, how))
    model.predict(S_te)
    assert calls == [1]  # one clip for all rows
    model.predict(S_te)  # the cache lives within one predict call
    assert calls == [1, 1]


@pytest.mark.parametrize("local_kernel", ["clip", "flip", "shift", "features"])
def test_batched_kernels_and_shared_sets_equal_one_by_one(aural_split, monkeypatch, local_kernel):
    """Kernels computed in several stacks, rows sharing a set: the per-row local SVMs exactly, each
    set transformed by ``fit_spectrum`` on its own ("features": its "square", spec 6.6)."""
    _, _, S, y, S_te, _ = aural_split
    S_te = np.vstack([S_te, S_te[:7]])  # repeated rows share their neighbour sets
    k, costs = 16, [0.01, 1.0, 1e3]
    import hlm.svm._svm_knn as module

    monkeypatch.setattr(module, "_STACK_MAX_SIZE", 3 * k * k)  # stacks of 3 sets
    ours = SVMKNN(n_neighbors=k, local_kernel=local_kernel).fit(S, y)._predict_costs(S_te, costs)
    how = "square" if local_kernel == "features" else local_kernel
    for C, pred in zip(costs, ours):
        expected = []
        for s in S_te:
            N = np.sort(np.argsort(-s, kind="stable")[:k])
            if len(set(y[N])) == 1:
                expected.append(y[N][0])
                continue
            t = fit_spectrum(S[np.ix_(N, N)], how)
            svc = SVC(kernel="precomputed", C=C).fit(t.kernel, y[N])
            expected.append(svc.predict(t.transform_test(s[N][None, :]))[0])
        np.testing.assert_array_equal(pred, expected, err_msg=f"C={C}")


def test_max_iter_gives_one_summary_warning(aural_split):
    _, _, S, y, S_te, _ = aural_split
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SVMKNN(n_neighbors=8, C=10.0, max_iter=1).fit(S, y).predict(S_te)
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1
    msg = str(conv[0].message)
    assert msg.startswith("SVM-KNN (clip) k=8 C=10: libsvm stopped at max_iter=1") and "local SVMs" in msg


# ---------------------------------------------------------------- sklearn integration (spec 2)
def test_cross_val_score_and_grid_search_slice_square_matrix(aural_split):
    A, y, *_ = aural_split
    A, y = A[:60, :60], y[:60]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = {"n_neighbors": [4, 16], "C": [0.1, 10.0]}
    manual = {}
    for k in grid["n_neighbors"]:
        for C in grid["C"]:
            manual[(k, C)] = [
                np.mean(SVMKNN(n_neighbors=k, C=C).fit(A[np.ix_(tr, tr)], y[tr]).predict(A[np.ix_(te, tr)]) == y[te])
                for tr, te in cv.split(A, y)
            ]
    scores = cross_val_score(SVMKNN(n_neighbors=4, C=0.1), A, y, cv=cv)
    np.testing.assert_allclose(scores, manual[(4, 0.1)], atol=1e-15)
    gs = GridSearchCV(SVMKNN(), grid, cv=cv).fit(A, y)
    for params, mean in zip(gs.cv_results_["params"], gs.cv_results_["mean_test_score"]):
        assert mean == pytest.approx(np.mean(manual[(params["n_neighbors"], params["C"])]), abs=1e-15)


# ---------------------------------------------------------------- bad input
def test_bad_input(aural_split):
    _, _, S, y, S_te, _ = aural_split
    with pytest.raises(DataError, match="square"):
        SVMKNN().fit(S[:, :-1], y)
    bad = S.copy()
    bad[0, 1] = np.nan
    with pytest.raises(DataError, match="NaN"):
        SVMKNN().fit(bad, y)
    model = SVMKNN().fit(S, y)
    with pytest.raises(DataError, match="columns"):
        model.predict(S_te[:, 1:])


@pytest.mark.parametrize(
    "est",
    [SVMKNN(n_neighbors=0), SVMKNN(n_neighbors=2.5), SVMKNN(C=0.0), SVMKNN(C=-1), SVMKNN(cache_size=0),
     SVMKNN(local_kernel="square"), SVMKNN(local_kernel="Flip"), SVMKNN(local_kernel=None)],
)
def test_invalid_parameters(est):
    with pytest.raises(InvalidParameterError):
        est.fit(np.eye(3), [0, 1, 1])


# ---------------------------------------------------------------- the other local kernels (local SDA family spec 7, 9)
def test_default_local_kernel_is_clip():
    assert SVMKNN().local_kernel == "clip"
    assert SVMKNN().get_params()["local_kernel"] == "clip"


def _psd_problem(rank: int | None, seed: int = 3):
    """Similarities of a PSD kernel on 3 classes (fit 60, test 30): linear of rank ``rank`` (X X^T,
    rank-deficient), or a Gaussian kernel plus 0.5 I (positive definite) when ``rank`` is None."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 30)
    X = rng.normal(size=(90, rank or 4)) + 1.2 * np.eye(rank or 4)[y % (rank or 4)]
    if rank is None:
        S = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 4.0) + 0.5 * np.eye(90)
    else:
        S = X @ X.T
    fit = np.arange(90) % 3 != 0
    return S[np.ix_(fit, fit)], y[fit], S[np.ix_(~fit, fit)]


@pytest.mark.parametrize("rank", [None, 3], ids=["definite", "rank3"])
def test_flip_and_shift_are_clip_on_psd_neighbourhoods(rank):
    """A PSD local matrix: flip and shift give the clip's kernel and test rows (to rounding), and the
    same predictions. Rank 3: the projectors are not the identity, but s_N lies in the kernel's range."""
    S, y, S_te = _psd_problem(rank)
    for k in (8, 16, 40):
        sets = SVMKNN(n_neighbors=k).fit(S, y)._neighbour_sets(S_te)
        S_N = np.stack([S[np.ix_(N, N)] for N in sets])
        assert (np.linalg.eigvalsh(S_N).min(axis=1) > -1e-12 * np.abs(S_N).max()).all()  # PSD to rounding
        scale = np.abs(S_N).max()
        clip, flip, shift = (list(_local_kernels(S_N, how)) for how in ("clip", "flip", "shift"))
        for i, N in enumerate(sets):
            s_N = S_te[i, N][None, :]
            for kernel, test_map in (flip[i], shift[i]):
                np.testing.assert_allclose(kernel, clip[i][0], rtol=0, atol=1e-12 * scale)
                row = s_N if test_map is None else s_N @ test_map
                np.testing.assert_allclose(row, s_N @ clip[i][1], rtol=0, atol=1e-12 * scale)
        for C in (0.01, 1.0, 100.0):
            clipped = SVMKNN(n_neighbors=k, C=C).fit(S, y).predict(S_te)
            for how in ("flip", "shift"):
                np.testing.assert_array_equal(SVMKNN(n_neighbors=k, C=C, local_kernel=how).fit(S, y).predict(S_te),
                                              clipped, err_msg=f"{how} k={k} C={C}")


def test_shift_changes_only_the_diagonal(aural_split):
    """On indefinite neighbourhoods: K = Sym(S_N) + max(0, -lambda_min) I exactly off the diagonal,
    by one constant on it; no test map."""
    _, _, S, y, S_te, _ = aural_split
    sets = SVMKNN(n_neighbors=16).fit(S, y)._neighbour_sets(S_te)
    S_N = np.stack([S[np.ix_(N, N)] for N in sets])
    shifted = 0
    for A, (kernel, test_map) in zip(S_N, _local_kernels(S_N, "shift")):
        assert test_map is None
        A = symmetrize(A)
        off = ~np.eye(len(A), dtype=bool)
        np.testing.assert_array_equal(kernel[off], A[off])
        lam_min = np.linalg.eigvalsh(A).min()
        np.testing.assert_allclose(np.diag(kernel) - np.diag(A), max(0.0, -lam_min), rtol=1e-10, atol=1e-12)
        shifted += lam_min < 0
    assert shifted >= 5  # indefinite neighbourhoods were exercised


def test_shift_leaves_the_test_rows_unchanged(aural_split, monkeypatch):
    """The local SVMs of shift predict on s_N itself (captured at the libsvm call)."""
    _, _, S, y, S_te, _ = aural_split
    import hlm.svm._svm_knn as module

    seen = []
    original = module.predict_model
    monkeypatch.setattr(module, "predict_model", lambda m, K_te, c: seen.append(K_te) or original(m, K_te, c))
    model = SVMKNN(n_neighbors=8, local_kernel="shift").fit(S, y)
    model.predict(S_te)
    sets = model._neighbour_sets(S_te)
    rows = {S_te[i, N].tobytes() for i, N in enumerate(sets)}
    assert len(seen) >= 5 and all(r.tobytes() in rows for K_te in seen for r in K_te)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_features_equals_linear_svc_on_the_explicit_features(aural_split, C):
    """Each local SVM of "features" is SVC(kernel="linear") on the rows of Sym(S_N), the query's
    features s_N: the same predictions, decision values to a tolerance."""
    _, _, S, y, S_te, _ = aural_split
    k = 16
    model = SVMKNN(n_neighbors=k, C=C, local_kernel="features").fit(S, y)
    sets = model._neighbour_sets(S_te)
    S_N = np.stack([S[np.ix_(N, N)] for N in sets])
    expected, mixed = [], 0
    for i, (N, (kernel, test_map)) in enumerate(zip(sets, _local_kernels(S_N, "features"))):
        s_N = S_te[i, N][None, :]
        if len(set(y[N])) == 1:
            expected.append(y[N][0])
            continue
        mixed += 1
        F = symmetrize(S[np.ix_(N, N)])
        ref = SVC(kernel="linear", C=C).fit(F, y[N])
        ours = PrecomputedSVC(C, max_iter=100_000).fit(kernel, y[N])
        np.testing.assert_allclose(ours.decision_function(s_N @ test_map), ref.decision_function(s_N),
                                   rtol=1e-6, atol=1e-6)
        expected.append(ref.predict(s_N)[0])
    assert mixed >= 5
    np.testing.assert_array_equal(model.predict(S_te), expected)


@pytest.mark.parametrize("local_kernel", ["clip", "flip", "shift", "features"])
def test_predict_grid_reuses_neighbour_sets_for_every_cost(aural_split, monkeypatch, local_kernel):
    """One local kernel per neighbour set and k, shared by every C of the grid path."""
    _, _, S, y, S_te, _ = aural_split
    import hlm.svm._svm_knn as module

    calls = []
    original = module._local_kernels
    monkeypatch.setattr(module, "_local_kernels", lambda S_N, how: calls.append((len(S_N), how)) or original(S_N, how))
    grid = [{"n_neighbors": k, "C": C} for k in (4, 16) for C in (0.1, 10.0, 1e3)]
    SVMKNN(local_kernel=local_kernel).predict_grid(S, y, S_te, grid)
    assert len(calls) == 2 and {how for _, how in calls} == {local_kernel}  # one stack per k, not per C


@pytest.mark.parametrize("local_kernel, label", [("flip", "flip"), ("features", "sims-as-features")])
def test_max_iter_warning_names_the_local_kernel(aural_split, local_kernel, label):
    _, _, S, y, S_te, _ = aural_split
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SVMKNN(n_neighbors=8, C=10.0, max_iter=1, local_kernel=local_kernel).fit(S, y).predict(S_te)
    conv = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1 and conv[0].startswith(f"SVM-KNN ({label}) k=8 C=10: libsvm stopped at max_iter=1")
