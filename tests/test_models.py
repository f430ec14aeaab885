"""k-NN and Kernel HLM on precomputed distances: known answers."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as st
from scipy.spatial.distance import cdist
from scipy.special import logsumexp
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from hlm.errors import DataError
from hlm.evaluation.cv import cv_errors, make_folds, select_params
from hlm.models._grid import predict_each
from hlm.models.kernel_hlm import KernelHLM, nearest_same_class_sq_distance
from hlm.models.knn import KNNClassifier, break_vote_ties


def _blobs(rng, n_per=30, p=3, sep=2.0):
    X = np.vstack([rng.normal(0, 1, (n_per, p)), rng.normal(sep, 1, (n_per, p))])
    y = np.repeat(np.array(["a", "b"]), n_per)
    return X, y


# ---------------------------------------------------------------- k-NN
def test_knn_equals_sklearn_without_ties():
    rng = np.random.default_rng(0)
    X, y = _blobs(rng)
    Xt = rng.normal(1, 1.5, (40, 3))
    D, Dt = cdist(X, X), cdist(Xt, X)
    for k in (1, 3, 7):
        ours = KNNClassifier(n_neighbors=k).fit(D, y).predict(Dt)
        ref = KNeighborsClassifier(n_neighbors=k, metric="precomputed").fit(D, y).predict(Dt)
        np.testing.assert_array_equal(ours, ref)


def test_knn_vote_tie_goes_to_larger_prior():
    # training: class 'x' has 3 objects, 'y' has 2 -> prior(x) > prior(y)
    y = np.array(["y", "y", "x", "x", "x"])
    D = np.ones((5, 5)) - np.eye(5)
    # test object: nearest is a 'y' (0.1), then an 'x' (0.2): k=2 vote is 1-1
    Dt = np.array([[0.1, 0.9, 0.2, 0.9, 0.9]])
    assert KNNClassifier(n_neighbors=2).fit(D, y).predict(Dt)[0] == "x"
    assert KNNClassifier(n_neighbors=1).fit(D, y).predict(Dt)[0] == "y"


def test_knn_equal_prior_tie_goes_to_highest_ranked_neighbour():
    y = np.array(["p", "q", "p", "q"])
    D = np.ones((4, 4)) - np.eye(4)
    Dt = np.array([[0.5, 0.1, 0.9, 0.9], [0.1, 0.5, 0.9, 0.9]])
    np.testing.assert_array_equal(KNNClassifier(n_neighbors=2).fit(D, y).predict(Dt), ["q", "p"])


def test_knn_distance_ties_ranked_by_index_and_k_capped():
    y = np.array(["a", "b", "b"])
    D = np.zeros((3, 3))
    Dt = np.array([[0.3, 0.3, 0.3]])  # all equidistant: k=1 takes index 0
    assert KNNClassifier(n_neighbors=1).fit(D, y).predict(Dt)[0] == "a"
    assert KNNClassifier(n_neighbors=50).fit(D, y).predict(Dt)[0] == "b"


def test_pairwise_tag_lets_sklearn_cv_slice_square_matrices():
    rng = np.random.default_rng(1)
    X, y = _blobs(rng, sep=3.0)
    D = cdist(X, X)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    ours = cross_val_score(KNNClassifier(n_neighbors=3), D, y, cv=cv)
    ref = cross_val_score(KNeighborsClassifier(n_neighbors=3, metric="precomputed"), D, y, cv=cv)
    np.testing.assert_allclose(ours, ref)
    assert cross_val_score(KernelHLM(), D, y, cv=cv).mean() > 0.9


# ---------------------------------------------------------------- k-NN: compiled paths = the definition
class ReferenceKNN(KNNClassifier):
    """k-NN by its definition (the code before the compiled kernels): a full stable argsort of each
    row, the vote, ``break_vote_ties``; the CV refits per grid point and fold."""

    def predict_folds(self, D, y, folds, grid):
        return None  # declined: the per-fold path

    def predict_grid(self, D_fit, y, D_val, grid):
        return predict_each(self, D_fit, y, D_val, grid)

    def predict(self, D):
        D = self._check_predict_input(D)
        k = min(int(self.n_neighbors), D.shape[1])
        nb_labels = self._y_idx[np.argsort(D, axis=1, kind="stable")[:, :k]]
        votes = np.zeros((D.shape[0], len(self.classes_)))
        np.add.at(votes, (np.arange(D.shape[0])[:, None], nb_labels), 1.0)
        return self.classes_[break_vote_ties(votes, self.class_prior_, nb_labels)]


class PerFoldKNN(KNNClassifier):
    """The compiled per-fold path only (``predict_grid`` on sliced fold matrices)."""

    def predict_folds(self, D, y, folds, grid):
        return None  # declined: the per-fold path


def _tied_problem(rng, n, n_values, singleton=False):
    """Integer distances (many ties), not symmetric, uneven classes, one class of 2 members (fewer
    than the folds: 2 stratified folds) or of 1 (KFold: a fit set without that class)."""
    D = rng.integers(0, n_values, (n, n)).astype(float)
    np.fill_diagonal(D, 0.0)
    y = rng.choice(np.array(["a", "b", "c"]), n, p=[0.6, 0.3, 0.1])
    y[rng.choice(n, 1 if singleton else 2, replace=False)] = "z"
    return D, y


@pytest.mark.parametrize("seed", range(6))
def test_knn_cv_fast_path_equals_refits_with_tied_distances(seed):
    """cv_errors through predict_folds == per-fold predict_grid == one stable-argsort refit per point."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 160))
    D, y = _tied_problem(rng, n, n_values=int(rng.integers(2, 12)), singleton=seed % 3 == 0)
    grid = [{"n_neighbors": k} for k in (1, 2, 3, 4, 5, 8, 16, 32, 64, 128, 500)]
    for n_folds, fold_seed in ((10, seed), (3, seed + 1)):
        folds = make_folds(y, n_folds, fold_seed)
        if seed % 2:  # stratified folds, every class large enough
            keep = y != "z"
            D, y = D[np.ix_(keep, keep)], y[keep]
            folds = make_folds(y, n_folds, fold_seed)
        assert KNNClassifier().predict_folds(D, y, folds, grid) is not None  # the fast path ran
        fast = cv_errors(KNNClassifier(), D, y, grid, folds)
        np.testing.assert_array_equal(fast, cv_errors(PerFoldKNN(), D, y, grid, folds))
        np.testing.assert_array_equal(fast, cv_errors(ReferenceKNN(), D, y, grid, folds))
        np.testing.assert_array_equal(fast, cv_errors(KNNClassifier(), D, y, grid, folds, n_jobs=2))
        (best, searched, means), (best_ref, searched_ref, means_ref) = (
            select_params(e, D, y, grid, folds) for e in (KNNClassifier(), ReferenceKNN()))
        assert best == best_ref and searched == searched_ref
        np.testing.assert_array_equal(means, means_ref)


@pytest.mark.parametrize("n_values", [1, 2, 5, 1000])
def test_knn_predict_equals_stable_argsort_reference(n_values):
    """predict (and predict_proba) == the stable-argsort definition, for k below, at and above n_fit."""
    rng = np.random.default_rng(n_values)
    D, y = _tied_problem(rng, 120, n_values)
    Dt = rng.integers(0, n_values, (70, 120)).astype(float) + (rng.random((70, 120)) if n_values == 1000 else 0)
    classes, y_idx = np.unique(y, return_inverse=True)
    for k in (1, 2, 3, 7, 16, 29, 31, 64, 119, 120, 300, 10**12, 2**70):  # k above n_fit: capped
        ours, ref = KNNClassifier(k).fit(D, y), ReferenceKNN(k).fit(D, y)
        np.testing.assert_array_equal(ours.predict(Dt), ref.predict(Dt))
        nb = np.argsort(Dt, axis=1, kind="stable")[:, : min(k, 120)]
        np.testing.assert_array_equal(ours._neighbours(Dt), nb)
        votes = (y_idx[nb][:, :, None] == np.arange(len(classes))).sum(axis=1)  # the votes by hand
        expected = (votes + 1) / (nb.shape[1] + len(classes))  # Laplace-corrected vote shares
        np.testing.assert_allclose(ours.predict_proba(Dt), expected, rtol=1e-14)


@pytest.mark.parametrize("bad", [np.nan, -1.0, np.inf, -0.0])
def test_knn_cv_fast_path_on_bad_entries_equals_the_per_fold_checks(bad):
    """A NaN/inf/negative entry: every fold that sees it scores inf, as the per-fold input checks give;
    -0.0 is a valid distance."""
    rng = np.random.default_rng(3)
    D, y = _tied_problem(rng, 60, 6)
    D[7, 30] = bad
    grid = [{"n_neighbors": k} for k in (1, 4, 16)]
    folds = make_folds(y, 5, 0)
    np.testing.assert_array_equal(cv_errors(KNNClassifier(), D, y, grid, folds),
                                  cv_errors(ReferenceKNN(), D, y, grid, folds))


def test_knn_cv_with_unsorted_or_partial_folds_equals_refits():
    rng = np.random.default_rng(5)
    D, y = _tied_problem(rng, 50, 4)
    grid = [{"n_neighbors": k} for k in (1, 2, 8)]
    folds = [(rng.permutation(np.arange(10, 50)), np.arange(10)),  # fit set not increasing
             (np.arange(0, 40, 2), np.arange(41, 50))]  # rows in no validation part
    assert KNNClassifier().predict_folds(D, y, folds[:1], grid) is None
    np.testing.assert_array_equal(cv_errors(KNNClassifier(), D, y, grid, folds),
                                  cv_errors(ReferenceKNN(), D, y, grid, folds))
    D[1, 3] = np.nan  # in a row no fold validates: the fast path must still see it
    np.testing.assert_array_equal(cv_errors(KNNClassifier(), D, y, grid, folds[1:]),
                                  cv_errors(ReferenceKNN(), D, y, grid, folds[1:]))


def test_knn_evaluation_on_voting_equals_the_reference(monkeypatch):
    """A real data set (House Votes, from the pipeline's results/): the evaluation rows and predictions of
    the compiled k-NN equal those of the stable-argsort definition."""
    import pandas as pd

    import hlm.models.knn as knn_module
    from hlm.data.artifacts import read_distances
    from hlm.evaluation.evaluate import evaluate_method

    root = Path(__file__).resolve().parents[1] / "results"
    if not (root / "distances" / "voting.parquet").exists():
        pytest.skip("needs results/distances/voting.parquet (make run)")
    art = read_distances(root / "distances" / "voting.parquet")
    splits = pd.read_parquet(root / "splits" / "voting.parquet")
    kw = dict(dataset="voting", seed=1, n_folds=10, grid_config={"n_neighbors": [1, 2, 4, 8, 16, 32, 64, 128]},
              split_ids=[0, 1, 2])
    ours = evaluate_method(art, splits, "knn", **kw)
    monkeypatch.setattr(knn_module, "KNNClassifier", ReferenceKNN)
    ref = evaluate_method(art, splits, "knn", **kw)
    same = ["split", "error_rate", "n_train", "n_test", "cv_folds", "params", "cv_error", "cv_reused", "warnings"]
    pd.testing.assert_frame_equal(ours.evaluation[same], ref.evaluation[same])
    pd.testing.assert_frame_equal(ours.predictions, ref.predictions)


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


@pytest.mark.parametrize("bad,match", [
    (np.array([[0.0, np.nan], [1.0, 0.0]]), "NaN"),
    (np.array([[0.0, -1.0], [1.0, 0.0]]), "negative"),
    (np.zeros((2, 3)), "square"),
])
def test_bad_matrices_are_clear_errors(bad, match):
    with pytest.raises(DataError, match=match):
        KernelHLM().fit(bad, [0, 1])


def test_predict_requires_training_columns():
    model = KNNClassifier().fit(np.zeros((3, 3)), [0, 1, 1])
    with pytest.raises(DataError, match="columns"):
        model.predict(np.zeros((2, 4)))


def test_kernel_hlm_u_is_d_option_equals_squared_on_root_distances():
    rng = np.random.default_rng(12)
    X, y = _blobs(rng, n_per=20, p=3)
    Xt = rng.normal(1, 2, (10, 3))
    D, Dt = cdist(X, X), cdist(Xt, X)
    a = KernelHLM(squared=False).fit(D, y)
    b = KernelHLM().fit(np.sqrt(D), y)
    assert a.shape_ == b.shape_ and a.scale_ == pytest.approx(b.scale_)
    np.testing.assert_allclose(a.predict_log_proba(Dt), b.predict_log_proba(np.sqrt(Dt)))


def test_cached_parameter_names_equal_sklearns():
    """``CachedParamNames`` returns BaseEstimator's __init__ parameter names for every method's estimators."""
    from sklearn.base import BaseEstimator, clone

    from hlm.methods import METHODS

    seen = 0
    for spec in METHODS.values():
        est = spec.make()
        for obj in [est, *[v for v in est.get_params(deep=True).values() if isinstance(v, BaseEstimator)]]:
            cls = type(obj)
            assert cls._get_param_names() == BaseEstimator._get_param_names.__func__(cls), cls.__name__
            assert clone(obj).get_params(deep=False).keys() == obj.get_params(deep=False).keys()
            seen += 1
    assert seen >= len(METHODS)


def test_compiled_kernels_warm_up_leaves_estimator_unfitted():
    """``_warm_up`` (CompiledKernels) runs the estimator on a toy problem through a clone: the
    estimator itself stays unfitted, and the distance wrapper forwards it."""
    from hlm.models.from_distances import SimilarityFromDistances
    from hlm.models.local_sda import LocalSDA
    from hlm.models.psvm import PSVM
    from hlm.models.weighted_knn import KRIKNN

    for est in (KRIKNN(n_neighbors=4), LocalSDA(n_neighbors=4), PSVM(), SimilarityFromDistances(KRIKNN())):
        est._warm_up()
        assert not hasattr(est, "classes_")
        assert not hasattr(getattr(est, "estimator", est), "classes_")


def test_evaluate_warms_up_before_the_first_split(monkeypatch):
    """evaluate_method calls the estimator's ``_warm_up`` once, before any split is timed."""
    import pandas as pd

    from hlm.data.artifacts import DistanceArtifact
    from hlm.evaluation import evaluate as ev
    from hlm.models.weighted_knn import KRIKNN

    calls = []
    monkeypatch.setattr(KRIKNN, "_warm_up", lambda self: calls.append(("warm", None)))
    fit = KRIKNN.fit
    monkeypatch.setattr(KRIKNN, "fit", lambda self, S, y: (calls.append(("fit", None)), fit(self, S, y))[1])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2)) + np.repeat([[0, 0], [3, 3]], 15, axis=0)
    S = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    labels = np.repeat(["a", "b"], 15)
    art = DistanceArtifact(ids=np.array([f"o{i}" for i in range(30)]), labels=labels, distances=1 - S,
                           similarities=S)
    splits = pd.DataFrame({"split": 0, "index": np.arange(30), "role": ["train"] * 24 + ["test"] * 6})
    ev.evaluate_method(art, splits, "kri_knn", dataset="toy", seed=1, n_folds=3,
                       grid_config={"n_neighbors": [2, 4], "ridge": [1.0]}, split_ids=[0])
    assert calls[0] == ("warm", None) and calls.count(("warm", None)) == 1


def test_knn_grid_paths_cap_a_huge_k():
    """k far above the fit set (10**12, 2**70) is k = n_fit on the grid and CV paths (no huge buffers)."""
    from hlm.evaluation.cv import make_folds

    rng = np.random.default_rng(5)
    D, y = _tied_problem(rng, 60, 4)
    grid = [{"n_neighbors": k} for k in (3, 10**12, 2**70)]
    path = KNNClassifier().predict_grid(D[:40, :40], y[:40], D[40:, :40], grid)
    np.testing.assert_array_equal(path[1], KNNClassifier(40).fit(D[:40, :40], y[:40]).predict(D[40:, :40]))
    np.testing.assert_array_equal(path[2], path[1])
    folds = make_folds(y, 3, 11)
    per_fold = KNNClassifier().predict_folds(D, y, folds, grid)
    for (fit, val), pred in zip(folds, per_fold):
        ref = KNNClassifier(len(fit)).fit(D[np.ix_(fit, fit)], y[fit]).predict(D[np.ix_(val, fit)])
        np.testing.assert_array_equal(pred[1], ref)
        np.testing.assert_array_equal(pred[2], ref)


def test_knn_subclass_voting_differently_takes_the_per_fold_path():
    class Farthest(KNNClassifier):
        def _neighbours(self, D):
            return np.argsort(-D, axis=1, kind="stable")[:, : min(int(self.n_neighbors), D.shape[1])]

    rng = np.random.default_rng(2)
    D, y = _tied_problem(rng, 30, 1000)
    assert Farthest().predict_folds(D, y, [(np.arange(20), np.arange(20, 30))], [{"n_neighbors": 3}]) is None


def test_warm_up_failure_does_not_stop_the_evaluation(monkeypatch):
    """``_warm_up`` only speeds up the first split's timing: an error there is ignored."""
    from hlm.evaluation import evaluate as ev
    from hlm.models.knn import KNNClassifier as K

    def broken(self):
        raise RuntimeError("toy problem failed")

    monkeypatch.setattr(K, "_warm_up", broken)
    ev._warm_up(K())  # no error


def test_standard_scale_finds_constant_features_exactly():
    """A constant column whose float mean is inexact (0.1) has sd ~1e-17, not 0: it keeps scale 1 and its own
    value as the mean, so a test value off that constant stays finite after scaling (the vector SVMs, KDE)."""
    from hlm.models._base import standard_scale

    X = np.column_stack([np.full(7, 0.1), np.arange(7.0)])
    assert X[:, 0].std() > 0  # the trap
    mean, scale = standard_scale(X)
    assert mean.tolist() == [0.1, 3.0] and scale.tolist() == [1.0, 2.0]
    assert np.abs((np.array([[0.2, 0.0]]) - mean) / scale).max() < 2
    _, scale = standard_scale(np.array([[1e-170], [0.0], [0.0]]))  # varies, but its sd underflows to 0
    assert scale.tolist() == [1.0]
