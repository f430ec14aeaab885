"""SVM-KNN (clip) on similarities (spec docs/compared-methods-spec.md 6.8): known answers (spec 9)."""

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
from hlm.models.spectrum import fit_spectrum
from hlm.models.svm_knn import SVMKNN
from hlm.models.svm_similarity import SVMSimilarityKernel

ROOT = Path(__file__).resolve().parents[1]


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

    monkeypatch.setattr("hlm.models.svm_knn.fit_spectra", no_svm)
    monkeypatch.setattr("hlm.models.svm_knn.fit_costs", no_svm)
    # row 0: neighbours {0, 1} (both 'a'); row 1: {2, 3} (both 'b') although object 0 ('a') is close behind
    S_te = np.array([[0.8, 0.7, 0.0, 0.6], [0.5, 0.1, 0.6, 0.55]])
    np.testing.assert_array_equal(model.predict(S_te), ["a", "b"])


def test_one_class_fit_is_refused():
    """A classifier needs 2 classes (every estimator, hlm.models._base); a one-class neighbourhood
    at predict time is still fine (test above)."""
    S = np.full((3, 3), 0.5) + 0.5 * np.eye(3)
    with pytest.raises(DataError, match="single class 'z'"):
        SVMKNN(n_neighbors=2).fit(S, ["z", "z", "z"])


def test_identical_neighbour_sets_share_one_svm(aural_split, monkeypatch):
    _, _, S, y, S_te, _ = aural_split
    model = SVMKNN(n_neighbors=len(y), C=1.0).fit(S, y)  # every row has the same (full) set
    calls = []
    import hlm.models.svm_knn as module

    original = module.fit_spectra
    monkeypatch.setattr(module, "fit_spectra", lambda S_N, how: calls.append(len(S_N)) or original(S_N, how))
    model.predict(S_te)
    assert calls == [1]  # one clip for all rows
    model.predict(S_te)  # the cache lives within one predict call
    assert calls == [1, 1]


def test_batched_clips_and_shared_sets_equal_one_by_one(aural_split, monkeypatch):
    """Clips computed in several stacks, rows sharing a set: the per-row local SVMs exactly."""
    _, _, S, y, S_te, _ = aural_split
    S_te = np.vstack([S_te, S_te[:7]])  # repeated rows share their neighbour sets
    k, costs = 16, [0.01, 1.0, 1e3]
    import hlm.models.svm_knn as module

    monkeypatch.setattr(module, "_STACK_MAX_SIZE", 3 * k * k)  # stacks of 3 sets
    ours = SVMKNN(n_neighbors=k).fit(S, y)._predict_costs(S_te, costs)
    for C, pred in zip(costs, ours):
        expected = []
        for s in S_te:
            N = np.sort(np.argsort(-s, kind="stable")[:k])
            if len(set(y[N])) == 1:
                expected.append(y[N][0])
                continue
            t = fit_spectrum(S[np.ix_(N, N)], "clip")
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
    "est", [SVMKNN(n_neighbors=0), SVMKNN(n_neighbors=2.5), SVMKNN(C=0.0), SVMKNN(C=-1), SVMKNN(cache_size=0)]
)
def test_invalid_parameters(est):
    with pytest.raises(InvalidParameterError):
        est.fit(np.eye(3), [0, 1, 1])
