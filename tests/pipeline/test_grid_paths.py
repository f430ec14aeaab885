"""The fast-path protocol (``hlm.base._classifiers.FastPathMixin``): every fast path equals plain refits.

CV grid paths (``predict_grid``) give the predictions of one refit per grid
point (``predict_each``): each estimator that shares work across its grid
(eigendecompositions that do not depend on C or the ridge, kernels that do not
depend on C, warm-started solvers) is run on the same fold both ways. Paths
over all folds at once (``predict_folds``) give the per-fold predictions. A new
fast path is registered here (``GRIDS``, ``FOLD_GRIDS``); a test fails for a
method of ``hlm.pipeline.methods.METHODS`` whose override is not.
"""

import inspect
import warnings
from numbers import Real
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import ParameterGrid
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils._param_validation import Interval

from hlm.base._classifiers import FastPathMixin, PrecomputedClassifier
from hlm.base._grid import predict_each
from hlm.distances._reciprocal import SimilarityFromDistances
from hlm.distances._transform import DistanceTransform
from hlm.errors import DataError
from hlm.llc_pc._llc_pc import LLCPairwiseCoupling
from hlm.local_mapping._kernel_hlm import KernelHLM
from hlm.local_mapping._mixture_hlm import MixtureHLM
from hlm.local_sda._bayes import BayesianLocalSDA, PairwiseBayesianLocalSDA
from hlm.local_sda._local_sda import LocalSDA
from hlm.local_sda._pairwise import PairwiseLocalSDA
from hlm.local_sda._regularized import RegularizedLocalSDA
from hlm.neighbors._knn import KNNClassifier
from hlm.neighbors._weighted import KRIKNN, KRRKNN, AffinityKNN
from hlm.pipeline.evaluation.cv import cv_errors, make_folds
from hlm.pipeline.methods import METHODS
from hlm.svm._psvm import PSVM
from hlm.svm._similarity import SVMSimilarityFeatures, SVMSimilarityKernel, SVMVectors
from hlm.svm._svm_knn import SVMKNN

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def aural():
    """Aural Sonar (indefinite similarities, 2 classes): fit = 4 of every 5 objects."""
    mat = scipy.io.loadmat(ROOT / "data" / "raw" / "AuraSonar.mat")
    S, y = np.asarray(mat["A"], dtype=np.float64), mat["C"].ravel().astype(int)
    val = np.arange(len(y)) % 5 == 0
    return S[np.ix_(~val, ~val)], y[~val], S[np.ix_(val, ~val)], y[val]


@pytest.fixture(scope="module")
def three_class():
    """A 3-class, indefinite, slightly asymmetric similarity (exp(-d^1.5) plus noise) on 90 objects."""
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1, 2], 30)
    X = rng.normal(size=(90, 4)) + 1.3 * np.eye(4)[y]
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    S = np.exp(-(D**1.5)) + 0.02 * rng.normal(size=D.shape)
    val = np.arange(90) % 4 == 0
    return S[np.ix_(~val, ~val)], y[~val], S[np.ix_(val, ~val)], y[val]


def as_distances(S):
    """Some positive distance from a similarity (for the distance estimators and the 1/d wrapper)."""
    return np.maximum(S.max() - S, 0.0) + 0.01


def assert_paths_equal(estimator, fold, grid):
    S_fit, y_fit, S_val, _ = fold
    if getattr(estimator, "_input_kind", None) == "distance":
        S_fit, S_val = as_distances(S_fit), as_distances(S_val)
    fast = estimator.predict_grid(S_fit, y_fit, S_val, grid)
    slow = predict_each(estimator, S_fit, y_fit, S_val, grid)
    assert len(fast) == len(slow) == len(grid)
    for params, a, b in zip(grid, fast, slow):
        np.testing.assert_array_equal(a, b, err_msg=str(params))
    return fast


GRIDS = {
    "knn": (KNNClassifier(), {"n_neighbors": [1, 2, 4, 8, 16, 32, 64]}),
    "svm_kernel_clip": (SVMSimilarityKernel(), {"C": [1e-3, 0.1, 10.0, 1e3]}),
    "svm_kernel_flip": (SVMSimilarityKernel(spectrum="flip"), {"C": [0.1, 10.0]}),
    "svm_features_linear": (SVMSimilarityFeatures(), {"C": [1e-3, 0.1, 10.0, 1e3]}),
    "svm_features_rbf": (SVMSimilarityFeatures(kernel="rbf"), {"C": [0.1, 10.0, 1e3], "gamma": [1e-3, 0.1, 10.0]}),
    "svm_features_rbf_median": (SVMSimilarityFeatures(kernel="rbf", gamma_scale="median"),
                                {"C": [1.0, 100.0], "gamma": [0.25, 4.0]}),
    "svm_features_rbf_wide": (SVMSimilarityFeatures(kernel="rbf"),
                              {"C": [1e-3, 1.0, 1e5], "gamma": [1e-5, 1e-3, 1e-2, 1.0, 100.0]}),
    "affinity_knn": (AffinityKNN(), {"n_neighbors": [1, 4, 16, 64]}),
    "kri_knn": (KRIKNN(), {"n_neighbors": [2, 8, 32], "ridge": [10.0, 0.1, 0.001]}),
    "kri_knn_raw": (KRIKNN(test_transform="raw"), {"n_neighbors": [4, 16], "ridge": [1.0, 0.01]}),
    "kri_knn_unsorted": (KRIKNN(), {"n_neighbors": [32, 1, 8, 2, 128], "ridge": [0.001, 10.0, 0.1]}),
    "kri_knn_transforms": (KRIKNN(), {"n_neighbors": [2, 16, 64], "ridge": [1.0, 0.01],
                                      "test_transform": ["consistent", "raw"]}),
    "krr_knn": (KRRKNN(), {"n_neighbors": [2, 8, 32], "ridge": [10.0, 0.1, 0.001]}),
    "psvm": (PSVM(max_sweeps=100_000), {"C": [1e-3, 0.1, 10.0, 1e3, 1e5], "epsilon": [1.0, 0.1, 0.01, 0.001]}),
    "hlm_vsh": (MixtureHLM(n_init=3, random_state=4), {"n_components": [1, 2, 3, 5, 40, "kernel"]}),
    "hlm_gknn_per_class": (MixtureHLM(clustering="gknn", shape="per_class"),
                           {"n_components": [2, 4], "round_shape": [True, False]}),
    "svm_knn": (SVMKNN(), {"n_neighbors": [2, 8, 32], "C": [1e-3, 0.1, 10.0, 1e3]}),
    "svm_knn_flip": (SVMKNN(local_kernel="flip"), {"n_neighbors": [2, 8, 32], "C": [1e-3, 0.1, 10.0, 1e3]}),
    "svm_knn_shift": (SVMKNN(local_kernel="shift"), {"n_neighbors": [2, 8, 32], "C": [1e-3, 0.1, 10.0, 1e3]}),
    "svm_knn_features": (SVMKNN(local_kernel="features"), {"n_neighbors": [2, 8, 32], "C": [1e-3, 0.1, 10.0, 1e3]}),
    "svm_knn_kernels": (SVMKNN(), {"n_neighbors": [4, 16], "C": [0.1, 100.0],
                                   "local_kernel": ["clip", "flip", "shift", "features"]}),
    "local_sda": (LocalSDA(), {"n_neighbors": [1, 2, 4, 8, 16, 32, 64]}),
    "local_sda_continuous_exact": (LocalSDA(support="continuous", degenerate="exact"), {"n_neighbors": [2, 8, 32]}),
    "local_sda_bayes": (BayesianLocalSDA(), {"n_neighbors": [2, 4, 8, 16, 32, 64, 128]}),
    "local_sda_pairwise_bayes": (PairwiseBayesianLocalSDA(), {"n_neighbors": [2, 4, 8, 16, 32, 64, 128]}),
    "local_sda_bayes_unsorted": (BayesianLocalSDA(prior="global", n_bins=6),
                                 {"n_neighbors": [32, 1, 8, 200, 2, 8, 79, 80]}),
    "local_sda_pairwise_bayes_unsorted": (PairwiseBayesianLocalSDA(prior="global", n_bins=6),
                                          {"n_neighbors": [32, 1, 8, 200, 2, 8, 79, 80]}),
    "local_sda_pairwise": (PairwiseLocalSDA(), {"n_neighbors": [2, 4, 8, 16, 32, 64]}),
    "local_sda_pairwise_continuous_exact": (PairwiseLocalSDA(support="continuous", degenerate="exact"),
                                            {"n_neighbors": [2, 8, 32]}),
    "local_sda_regularized": (RegularizedLocalSDA(), {"n_neighbors": [2, 8, 32, 64],
                                                      "zeta": [1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9]}),
    "local_sda_regularized_zeta_ends": (RegularizedLocalSDA(degenerate="knn"), {"n_neighbors": [1, 4, 16],
                                                                                 "zeta": [0.0, 0.5, 1.0]}),
    "kernel_hlm_scale": (KernelHLM(), {"scale_factor": [1.0, 0.5, 2.0, 0.0625, 16.0]}),
    "kernel_hlm_cv": (DistanceTransform(KernelHLM()), {"to_distance": ["bound_minus", "sqrt", "square"],
                                                       "estimator__scale_factor": [1.0, 0.25, 8.0]}),
    "hlm_vsh_cv": (DistanceTransform(MixtureHLM(n_init=2, random_state=0)),
                   {"to_distance": ["bound_minus", "sqrt", "square"], "estimator__n_components": [1, 2]}),
}


#: fast paths of estimators on feature vectors (rows; no distance wrapper): checked on a 3-class fold
VECTOR_GRIDS = {
    "llc_pc_mpe": (LLCPairwiseCoupling(), {"n_subclasses": [1, 2, 3, 4, 6, 9, 13, 20]}),
    "llc_pc_kmeans": (LLCPairwiseCoupling(subclassing="kmeans"), {"n_subclasses": [1, 2, 3, 4, 6, 9, 13, 20]}),
    "llc_pc_mpe_minmax": (LLCPairwiseCoupling(combination="minmax", selection="aggregate"),
                          {"n_subclasses": [3, 5, 8], "C": [1.0, 100.0]}),
}


@pytest.fixture(scope="module")
def vectors():
    """Three overlapping classes of 30 points in 2-D: fit = 3 of every 4 objects."""
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 30)
    X = rng.normal(size=(90, 2)) + 1.2 * np.array([[0, 0], [1, 1], [2, 0]])[y]
    val = np.arange(90) % 4 == 0
    return X[~val], y[~val], X[val], y[val]


@pytest.mark.parametrize("name", sorted(VECTOR_GRIDS))
def test_vector_grid_path_equals_refits(name, vectors):
    estimator, grid = VECTOR_GRIDS[name]
    predictions = assert_paths_equal(estimator, vectors, list(ParameterGrid(grid)))
    assert len({tuple(p) for p in predictions}) > 1  # the grid points really differ


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_grid_path_equals_refits(name, aural, three_class):
    estimator, grid = GRIDS[name]
    distinct = 0
    for fold in (aural, three_class):
        predictions = assert_paths_equal(estimator, fold, list(ParameterGrid(grid)))
        distinct = max(distinct, len({tuple(p) for p in predictions if p is not None}))
    assert distinct > 1  # the grid points really differ


def test_mixture_hlm_grid_path_shares_the_input_check_and_gives_none_where_a_refit_fails(monkeypatch, three_class):
    """One input check for the points that differ in M; a point no cluster can estimate (M = 40 for classes of
    22: singletons) is None, as predict_each gives; a subclass with its own fit takes the plain refits."""
    S_fit, y_fit, S_val, _ = three_class
    D_fit, D_val = as_distances(S_fit), as_distances(S_val)
    checks, check = [], MixtureHLM._check_fit_input
    monkeypatch.setattr(MixtureHLM, "_check_fit_input", lambda self, D, y: checks.append(1) or check(self, D, y))
    out = MixtureHLM(n_init=2).predict_grid(D_fit, y_fit, D_val, [{"n_components": m} for m in (1, 3, 40)])
    assert len(checks) == 1 and out[2] is None and all(p is not None for p in out[:2])

    class OwnFit(MixtureHLM):
        def fit(self, D, y):
            return super().fit(D, y)

    checks.clear()
    OwnFit(n_init=2).predict_grid(D_fit, y_fit, D_val, [{"n_components": m} for m in (1, 3)])
    assert len(checks) == 2


@pytest.mark.parametrize("name", sorted(set(GRIDS) - {"knn"}))
def test_grid_path_through_distance_wrapper(name, aural):
    """On distance-only data the wrapper converts once per fold (U of the fold) and uses the path."""
    estimator, grid = GRIDS[name]
    S_fit, y_fit, S_val, y_val = aural
    fold = (as_distances(S_fit), y_fit, as_distances(S_val), y_val)
    nested = [{f"estimator__{k}": v for k, v in p.items()} for p in ParameterGrid(grid)]
    assert_paths_equal(SimilarityFromDistances(estimator), fold, nested)


MAX_ITER_GRIDS = {
    "svm_kernel_clip": (SVMSimilarityKernel(max_iter=3), {"C": [1e-3, 10.0, 1e5]}),
    "svm_features_linear": (SVMSimilarityFeatures(max_iter=3), {"C": [1e-3, 10.0, 1e5]}),
    "svm_features_rbf": (SVMSimilarityFeatures(kernel="rbf", max_iter=3), {"C": [1e-3, 10.0], "gamma": [1e-3, 1.0]}),
}


@pytest.mark.parametrize("name", sorted(MAX_ITER_GRIDS))
def test_grid_path_max_iter_warnings_equal_refits(name, aural, three_class):
    """Hitting max_iter: same predictions and the same one-per-fit warnings (method and C) as refits."""
    estimator, grid = MAX_ITER_GRIDS[name]
    grid = list(ParameterGrid(grid))
    for S_fit, y_fit, S_val, _ in (aural, three_class):
        predictions, messages = [], []
        for run in (estimator.predict_grid, lambda *a: predict_each(estimator, *a)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                predictions.append(run(S_fit, y_fit, S_val, grid))
            conv = sorted(str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning))
            messages.append(conv)
            assert len(conv) == len(grid)  # each grid point's SVM stops at max_iter=3 and says so once
            assert all(m.startswith("SVM (sims-as-") and "libsvm stopped at max_iter=3" in m for m in conv)
        assert messages[0] == messages[1]
        for params, a, b in zip(grid, *predictions):
            np.testing.assert_array_equal(a, b, err_msg=str(params))


def test_cv_errors_use_the_path(aural):
    """cv_errors with the path equals cv_errors by refits (an estimator without the path)."""
    S_fit, y_fit, _, _ = aural
    grid = list(ParameterGrid({"n_neighbors": [4, 16], "C": [0.1, 100.0]}))
    folds = make_folds(y_fit, 4, seed=3)

    class NoPath(SVMKNN):
        predict_grid = FastPathMixin.predict_grid  # the protocol's default: one refit per grid point

    np.testing.assert_array_equal(cv_errors(SVMKNN(), S_fit, y_fit, grid, folds),
                                  cv_errors(NoPath(), S_fit, y_fit, grid, folds))


def test_knn_grid_point_without_k_keeps_the_estimators_own():
    rng = np.random.default_rng(0)
    D = np.abs(rng.normal(size=(30, 30)))
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0)
    y = np.repeat([0, 1], 15)
    grid = [{"n_neighbors": 9}, {}]
    fast = KNNClassifier(1).predict_grid(D[:20, :20], y[:20], D[20:, :20], grid)
    slow = predict_each(KNNClassifier(1), D[:20, :20], y[:20], D[20:, :20], grid)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)


def test_a_one_class_fold_scores_infinity_instead_of_stopping_the_cv(aural):
    """The SVM grid path raises on a one-class fit set; the CV falls back to per-point fits."""
    S_fit, y_fit, _, _ = aural
    folds = [(np.flatnonzero(y_fit == y_fit[0])[:20], np.arange(5))]  # a fit set of one class
    grid = [{"C": 1.0}, {"C": 10.0}]
    errors = cv_errors(SVMSimilarityKernel(), S_fit, y_fit, grid, folds)
    assert np.isinf(errors).all()


# ---------------------------------------------------------------- all folds at once (predict_folds)
#: every ``predict_folds`` override, run here against the per-fold refits (k-NN: also tests/test_models.py)
FOLD_GRIDS = {
    "knn": (KNNClassifier(), {"n_neighbors": [1, 2, 4, 8, 16, 32, 64]}),
    "kernel_hlm_cv": (DistanceTransform(KernelHLM()), {"to_distance": ["bound_minus", "sqrt", "square"],
                                                       "estimator__scale_factor": [1.0, 0.25, 8.0]}),
    "hlm_vsh_cv": (DistanceTransform(MixtureHLM(n_init=2, random_state=0)),
                   {"to_distance": ["bound_minus", "square"], "estimator__n_components": [1, 2]}),
}


@pytest.mark.parametrize("name", sorted(FOLD_GRIDS))
def test_fold_path_equals_refits_per_fold(name, aural, three_class):
    estimator, grid = FOLD_GRIDS[name]
    grid = list(ParameterGrid(grid))
    for S_fit, y_fit, _, _ in (aural, three_class):
        X = as_distances(S_fit) if estimator._input_kind == "distance" else S_fit
        folds = make_folds(y_fit, 5, seed=2)
        per_fold = estimator.predict_folds(X, y_fit, folds, grid)
        assert per_fold is not None and len(per_fold) == len(folds)  # the path ran
        for (fit, val), fast in zip(folds, per_fold):
            slow = predict_each(estimator, X[np.ix_(fit, fit)], y_fit[fit], X[np.ix_(val, fit)], grid)
            assert len(fast) == len(slow) == len(grid)
            for params, a, b in zip(grid, fast, slow):
                np.testing.assert_array_equal(a, b, err_msg=str(params))


# ---------------------------------------------------------------- one fold from the whole matrix (predict_fold)
#: every ``predict_fold`` override: (estimator, grid) on distances, run against the sliced fold's predict_grid
ONE_FOLD_GRIDS = {
    f"1/d {name}": (SimilarityFromDistances(GRIDS[name][0]),
                    {f"estimator__{k}": v for k, v in GRIDS[name][1].items()})
    for name in ("local_sda", "svm_kernel_clip", "kri_knn", "local_sda_regularized", "local_sda_bayes")
}


@pytest.mark.parametrize("name", sorted(ONE_FOLD_GRIDS))
def test_one_fold_path_equals_the_sliced_fold(name, aural, three_class):
    """predict_fold on the training matrix gives predict_grid's predictions on the sliced fold, and through the
    CV the same errors as a sliced per-fold refit; a fold of one class, a bad entry on the diagonal of the fit
    block, a grid with the wrapper's own parameter, boolean masks or an empty fit part: declined (None), and the
    CV's sliced path scores it. A float32 or integer matrix gives the sliced fold's predictions too."""
    estimator, grid = ONE_FOLD_GRIDS[name]
    grid = list(ParameterGrid(grid))
    for S, y, _, _ in (aural, three_class):
        D = as_distances(S)
        D[np.diag_indices_from(D)] = 0.0
        D[3, 5] = D[5, 3] = 0.0  # a duplicate pair: d = 0 -> U
        folds = make_folds(y, 4, seed=3)
        for fit, val in folds:
            fast = estimator.predict_fold(D, y, fit, val, grid)
            slow = estimator.predict_grid(D[np.ix_(fit, fit)], y[fit], D[np.ix_(val, fit)], grid)
            assert fast is not None and len(fast) == len(slow) == len(grid)
            for params, a, b in zip(grid, fast, slow):
                np.testing.assert_array_equal(a, b, err_msg=str(params))
        np.testing.assert_array_equal(cv_errors(estimator, D, y, grid, folds),
                                      _refit_errors(estimator, D, y, grid, folds))
        one_class = (np.flatnonzero(y == y[0]), np.flatnonzero(y != y[0])[:5])
        assert estimator.predict_fold(D, y, *one_class, grid) is None
        assert np.isinf(cv_errors(estimator, D, y, grid, [one_class])).all()
        bad = D.copy()
        bad[folds[0][0][2], folds[0][0][2]] = -1.0  # the fit's own check refuses it; 1/d would not look at it
        assert estimator.predict_fold(bad, y, *folds[0], grid) is None
        assert estimator.predict_fold(D, y, *folds[0], [{"estimator": clone(estimator.estimator)}]) is None
        mask = np.zeros(len(y), dtype=bool)
        mask[folds[0][0]] = True
        assert estimator.predict_fold(D, y, mask, ~mask, grid) is None  # boolean masks: the sliced path
        assert estimator.predict_fold(D, y, folds[0][0][:0], folds[0][1], grid) is None  # an empty fit part
        fit, val = folds[1]
        for other in (D.astype(np.float32), np.rint(100 * D).astype(np.int64)):  # computed in float64 alike
            fast = estimator.predict_fold(other, y, fit, val, grid)
            slow = estimator.predict_grid(other[np.ix_(fit, fit)], y[fit], other[np.ix_(val, fit)], grid)
            for params, a, b in zip(grid, fast, slow, strict=True):
                np.testing.assert_array_equal(a, b, err_msg=f"{other.dtype} {params}")


class _RefusingFold(SimilarityFromDistances):
    """A fold path that raises HLMError: the CV takes that as declining, not as a failure."""

    def predict_fold(self, D, y, fit, val, grid):
        raise DataError("this fold path refuses its input")


def test_an_hlm_error_from_the_fold_path_declines(aural):
    S, y, _, _ = aural
    D = as_distances(S)
    D[np.diag_indices_from(D)] = 0.0
    estimator, grid = ONE_FOLD_GRIDS["1/d local_sda"]
    refusing = _RefusingFold(estimator.estimator)
    grid, folds = list(ParameterGrid(grid)), make_folds(y, 4, seed=5)
    np.testing.assert_array_equal(cv_errors(refusing, D, y, grid, folds), _refit_errors(refusing, D, y, grid, folds))


# ---------------------------------------------------------------- the protocol itself
def _overrides(cls, hook: str) -> bool:
    return getattr(cls, hook) is not getattr(FastPathMixin, hook)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_follows_the_protocol_and_its_fast_paths_are_registered(method):
    """Each pipeline method's estimator is a FastPathMixin (the CV calls its hooks directly), and a
    predict_grid / predict_folds it overrides is checked against refits above."""
    estimator = METHODS[method].make()
    assert isinstance(estimator, FastPathMixin)
    cls = type(estimator)
    if _overrides(cls, "predict_grid"):
        assert cls in {type(e) for e, _ in (*GRIDS.values(), *VECTOR_GRIDS.values())}, \
            f"{method}: register {cls.__name__} in GRIDS (VECTOR_GRIDS for feature vectors)"
    if _overrides(cls, "predict_folds"):
        assert cls in {type(e) for e, _ in FOLD_GRIDS.values()}, f"{method}: register {cls.__name__} in FOLD_GRIDS"
    if _overrides(cls, "predict_fold"):
        assert cls in {type(e) for e, _ in ONE_FOLD_GRIDS.values()}, \
            f"{method}: register {cls.__name__} in ONE_FOLD_GRIDS"
    estimator._warm_up()  # the default does nothing; CompiledKernels fits a clone
    assert not hasattr(estimator, "classes_")
    if METHODS[method].input == "similarity":  # the 1/d wrapper forwards the protocol
        wrapped = SimilarityFromDistances(estimator)
        assert isinstance(wrapped, FastPathMixin) and wrapped.predict_folds(None, None, [], []) is None
        wrapped._warm_up()


def test_the_cv_calls_the_hooks_instead_of_looking_them_up():
    import hlm.distances._reciprocal as from_distances
    import hlm.pipeline.evaluation.cv as cv
    import hlm.pipeline.evaluation.evaluate as evaluate

    for module in (cv, evaluate, from_distances):
        text = inspect.getsource(module)
        for hook in ("predict_grid", "predict_folds", "predict_fold", "_warm_up", "_path_params"):
            assert f'"{hook}"' not in text and f"'{hook}'" not in text, (module.__name__, hook)


class NearestClassMean(PrecomputedClassifier):
    """A new method with ``fit`` and ``predict`` only: the smallest mean distance**power to a class."""

    _parameter_constraints = {"power": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, power: float = 1.0):
        self.power = power

    def fit(self, D, y):
        self._validate_params()
        D, self._y_idx = self._check_fit_input(D, y)
        return self

    def predict(self, D):
        D = self._check_predict_input(D) ** self.power
        means = [D[:, self._y_idx == g].mean(axis=1) for g in range(len(self.classes_))]
        return self.classes_[np.argmin(np.stack(means, axis=1), axis=1)]


def _refit_errors(estimator, X, y, grid, folds, pairwise=True):
    """The definition of the CV errors: a clone fitted per grid point and fold (grid point x fold)."""
    errors = np.empty((len(grid), len(folds)))
    for g, params in enumerate(grid):
        for f, (fit, val) in enumerate(folds):
            X_fit, X_val = (X[np.ix_(fit, fit)], X[np.ix_(val, fit)]) if pairwise else (X[fit], X[val])
            model = clone(estimator).set_params(**params).fit(X_fit, y[fit])
            errors[g, f] = np.mean(model.predict(X_val) != y[val])
    return errors


def test_a_new_method_without_fast_paths_gets_its_cv_from_the_defaults(aural):
    """No override: predict_folds declines, _warm_up does nothing, predict_grid refits per point, and
    the CV errors are those of the refits."""
    S_fit, y_fit, _, _ = aural
    D = as_distances(S_fit)
    grid = [{"power": p} for p in (0.25, 1.0, 4.0, 16.0)]
    folds = make_folds(y_fit, 4, seed=1)
    estimator = NearestClassMean()
    assert estimator.predict_folds(D, y_fit, folds, grid) is None
    assert estimator._warm_up() is None and estimator._path_params == ()
    expected = _refit_errors(estimator, D, y_fit, grid, folds)
    assert len(np.unique(expected.mean(axis=1))) > 1  # the grid points really differ
    np.testing.assert_array_equal(cv_errors(estimator, D, y_fit, grid, folds), expected)
    # through the 1/d wrapper the same method is a similarity method's stand-in: also refits
    wrapped = SimilarityFromDistances(NearestClassMean())
    nested = [{f"estimator__{k}": v for k, v in p.items()} for p in grid]
    np.testing.assert_array_equal(cv_errors(wrapped, D, y_fit, nested, folds),
                                  _refit_errors(wrapped, D, y_fit, nested, folds))


def test_cv_of_estimators_outside_the_protocol_and_of_feature_vectors(aural):
    """Any scikit-learn classifier is refitted per grid point; SVMVectors (not pairwise) follows the
    protocol's defaults on rows of feature vectors."""
    S_fit, y_fit, _, _ = aural
    D = as_distances(S_fit)
    folds = make_folds(y_fit, 4, seed=5)
    sk = KNeighborsClassifier(metric="precomputed")
    grid = [{"n_neighbors": k} for k in (1, 3, 9)]
    np.testing.assert_array_equal(cv_errors(sk, D, y_fit, grid, folds), _refit_errors(sk, D, y_fit, grid, folds))
    X = np.random.default_rng(0).normal(size=(len(y_fit), 3)) + y_fit[:, None]
    svm = SVMVectors(kernel="rbf")
    grid = list(ParameterGrid({"C": [0.1, 10.0], "gamma": [0.01, 1.0]}))
    assert isinstance(svm, FastPathMixin) and svm.predict_folds(X, y_fit, folds, grid) is None
    np.testing.assert_array_equal(cv_errors(svm, X, y_fit, grid, folds),
                                  _refit_errors(svm, X, y_fit, grid, folds, pairwise=False))


def test_kernel_hlm_cv_chooses_as_plain_refits_and_the_one_se_rule_written_out(aural):
    """Kernel HLM (CV transform, scale), its whole default grid (5 transforms x 9 scale factors) by the
    pipeline's CV (select_params with the method's fold path and the one-SE rule) against plain refits of every
    point on every fold and the one-standard-error rule written from its definition (Breiman et al.): the first
    point in grid order whose mean error is at most the lowest mean plus the SE (sd over the folds, ddof 1, /
    sqrt(folds)) of the lowest point."""
    from hlm.pipeline.evaluation.cv import select_params
    from hlm.pipeline.methods import METHODS

    spec = METHODS["kernel_hlm_cv"]
    S_fit, y_fit, _, _ = aural
    grid = spec.grid(None)
    assert len(grid) == 45
    folds = make_folds(y_fit, 10, seed=4)
    chosen, searched, means = select_params(spec.make(), S_fit, y_fit, grid, folds, rule="one_se")
    errors = np.array([[np.mean(spec.make(point).fit(S_fit[np.ix_(fit, fit)], y_fit[fit])
                                .predict(S_fit[np.ix_(val, fit)]) != y_fit[val]) for fit, val in folds]
                       for point in grid])
    np.testing.assert_array_equal(means, errors.mean(axis=1))
    best = int(np.argmin(errors.mean(axis=1)))
    se = errors[best].std(ddof=1) / np.sqrt(len(folds))
    first = next(i for i, e in enumerate(errors.mean(axis=1)) if e <= errors[best].mean() + se)
    assert chosen == grid[first] and searched == grid
