"""What every estimator shares (hlm.base): input checks, cached parameter names, warm-up, standardisation."""


import numpy as np
import pytest

from hlm.errors import DataError
from hlm.local_mapping._kernel_hlm import KernelHLM
from hlm.neighbors._knn import KNNClassifier


def _blobs(rng, n_per=30, p=3, sep=2.0):
    X = np.vstack([rng.normal(0, 1, (n_per, p)), rng.normal(sep, 1, (n_per, p))])
    y = np.repeat(np.array(["a", "b"]), n_per)
    return X, y


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


def test_cached_parameter_names_equal_sklearns():
    """``CachedParamNames`` returns BaseEstimator's __init__ parameter names for every method's estimators."""
    from sklearn.base import BaseEstimator, clone

    from hlm.pipeline.methods import METHODS

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
    from hlm.distances._reciprocal import SimilarityFromDistances
    from hlm.local_sda._local_sda import LocalSDA
    from hlm.neighbors._weighted import KRIKNN
    from hlm.svm._psvm import PSVM

    for est in (KRIKNN(n_neighbors=4), LocalSDA(n_neighbors=4), PSVM(), SimilarityFromDistances(KRIKNN())):
        est._warm_up()
        assert not hasattr(est, "classes_")
        assert not hasattr(getattr(est, "estimator", est), "classes_")


def test_evaluate_warms_up_before_the_first_split(monkeypatch):
    """evaluate_method calls the estimator's ``_warm_up`` once, before any split is timed."""
    import pandas as pd

    from hlm.datasets._artifacts import DistanceArtifact
    from hlm.neighbors._weighted import KRIKNN
    from hlm.pipeline.evaluation import evaluate as ev

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


def test_warm_up_failure_does_not_stop_the_evaluation(monkeypatch):
    """``_warm_up`` only speeds up the first split's timing: an error there is ignored."""
    from hlm.neighbors._knn import KNNClassifier as K
    from hlm.pipeline.evaluation import evaluate as ev

    def broken(self):
        raise RuntimeError("toy problem failed")

    monkeypatch.setattr(K, "_warm_up", broken)
    ev._warm_up(K())  # no error


def test_standard_scale_finds_constant_features_exactly():
    """A constant column whose float mean is inexact (0.1) has sd ~1e-17, not 0: it keeps scale 1 and its own
    value as the mean, so a test value off that constant stays finite after scaling (the vector SVMs, KDE)."""
    from hlm.base._classifiers import standard_scale

    X = np.column_stack([np.full(7, 0.1), np.arange(7.0)])
    assert X[:, 0].std() > 0  # the trap
    mean, scale = standard_scale(X)
    assert mean.tolist() == [0.1, 3.0] and scale.tolist() == [1.0, 2.0]
    assert np.abs((np.array([[0.2, 0.0]]) - mean) / scale).max() < 2
    _, scale = standard_scale(np.array([[1e-170], [0.0], [0.0]]))  # varies, but its sd underflows to 0
    assert scale.tolist() == [1.0]
