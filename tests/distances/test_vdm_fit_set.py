"""Distances that use labels, from the fit set's labels only (docs/beyond-the-paper-spec.md, sections 4 and 6).

Known answers: a brute-force VDM written here from its definition, a value absent from the fit set
(the prior), and the invariance of every distance the evaluation computes to the test labels, at
split and at CV-fold level.
"""

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError

import hlm.distances._vdm_classifier as ld
from hlm.base._grid import predict_each
from hlm.datasets._artifacts import DistanceArtifact, read_distances, write_distances
from hlm.datasets._prepare import category_codes, prepare_dataset
from hlm.datasets._registry import validate_entry
from hlm.distances._vdm import training_vdm, value_difference_metric
from hlm.distances._vdm_classifier import VDMDistances
from hlm.errors import DataError
from hlm.local_mapping._kernel_hlm import KernelHLM
from hlm.neighbors._knn import KNNClassifier
from hlm.pipeline.evaluation.cv import cv_errors, make_folds
from hlm.pipeline.evaluation.evaluate import evaluate_method
from hlm.pipeline.evaluation.splits import make_splits, split_indices
from hlm.pipeline.incremental.run import run_incremental
from messages import one_line


def brute_vdm(rows, cols, fit_records, fit_labels, q=2):
    """VDM from its definition: P(c | x_f = a) counted in the fit set, the prior for a value it lacks."""
    classes = sorted(set(fit_labels))
    prior = {c: list(fit_labels).count(c) / len(fit_labels) for c in classes}
    counts = defaultdict(lambda: defaultdict(int))
    for record, label in zip(fit_records, fit_labels):
        for f, a in enumerate(record):
            counts[(f, a)][label] += 1

    def p(f, a, c):
        n = sum(counts[(f, a)].values()) if (f, a) in counts else 0
        return counts[(f, a)][c] / n if n else prior[c]

    return np.array([[sum(abs(p(f, x[f], c) - p(f, z[f], c)) ** q for f in range(len(x)) for c in classes)
                      for z in cols] for x in rows])


def toy(n=60, n_features=5, seed=0):
    """Categorical records (3 values per feature, value 2 rare) whose first features follow the class."""
    rng = np.random.default_rng(seed)
    y = np.array(["a", "b"])[rng.integers(0, 2, n)]
    R = rng.choice(3, size=(n, n_features), p=[0.45, 0.45, 0.1])
    R[:, :2] = np.where(rng.random((n, 2)) < 0.8, (y == "b")[:, None].astype(int), R[:, :2])
    return R, y


def artifact(R, y):
    return DistanceArtifact(ids=np.array([f"o{i}" for i in range(len(y))]), labels=y, distances=None,
                            metadata={"dataset": "toy", "kind": "categorical", "distance": "vdm", "vdm_q": 2,
                                      "uses_labels": True}, records=R)


# --- the VDM of a fit set ------------------------------------------------------------------


def test_per_split_vdm_equals_brute_force_on_the_training_records():
    R, y = toy()
    splits = make_splits(len(y), dataset="toy", n_splits=2, test_fraction=0.25, seed=3)
    train, test = split_indices(splits, 0)
    D = training_vdm(R, y, train)
    np.testing.assert_allclose(D[np.ix_(train, train)], brute_vdm(R[train], R[train], R[train], y[train]),
                               rtol=1e-12, atol=1e-12)
    model = VDMDistances(KNNClassifier()).fit(R[train], y[train])
    np.testing.assert_allclose(model.distances(R[test]), brute_vdm(R[test], R[train], R[train], y[train]),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.distances(R[test]), D[np.ix_(test, train)], rtol=1e-12, atol=1e-12)
    # with every object's labels it is the whole-set VDM of hlm.distances._euclidean
    np.testing.assert_allclose(training_vdm(R, y, np.arange(len(y))), value_difference_metric(R, y),
                               rtol=1e-12, atol=1e-12)


def test_fit_distances_are_symmetric_with_exact_zero_diagonal():
    R, y = toy()
    D = training_vdm(R, y, np.arange(40))
    assert np.array_equal(D, D.T) and not np.diag(D).any()


@pytest.mark.parametrize("q", [1, 2, 3])
def test_exponent_q(q):
    R, y = toy(30)
    model = VDMDistances(KNNClassifier(), q=q).fit(R[:20], y[:20])
    np.testing.assert_allclose(model.distances(R[20:]), brute_vdm(R[20:], R[:20], R[:20], y[:20], q=q),
                               rtol=1e-10, atol=1e-12)


def test_a_value_absent_from_the_fit_set_gets_the_prior():
    R = np.array([[0], [0], [0], [1]])
    y = np.array(["a", "a", "b", "b"])
    model = VDMDistances(KNNClassifier()).fit(R, y)  # prior (1/2, 1/2); P(.|0) = (2/3, 1/3), P(.|1) = (0, 1)
    np.testing.assert_allclose(model.class_prior_, [0.5, 0.5])
    np.testing.assert_allclose(model.tables_[0][:2], [[2 / 3, 1 / 3], [0.0, 1.0]])
    for unseen in (2, 7):  # beyond every fit code
        np.testing.assert_allclose(model.distances([[unseen]]), [[1 / 18, 1 / 18, 1 / 18, 0.5]])
    gap = VDMDistances(KNNClassifier()).fit(np.array([[0], [0], [2], [2]]), y)  # code 1 inside the range, unseen
    np.testing.assert_allclose(gap.tables_[0][1], [0.5, 0.5])
    np.testing.assert_allclose(gap.distances([[1]]), [[0.5, 0.5, 0.5, 0.5]])


# --- no test label reaches a distance -------------------------------------------------------


@pytest.fixture
def recorded(monkeypatch):
    """Every VDM matrix computed, in order."""
    seen = []
    original = ld.vdm_between

    def record(A, B, q):
        D = original(A, B, q)
        seen.append(D.copy())
        return D

    monkeypatch.setattr(ld, "vdm_between", record)
    return seen


def permuted_test_labels(y, test, seed=0):
    """y with the test part's labels permuted (so that some of them change)."""
    rng = np.random.default_rng(seed)
    out = y.copy()
    while np.array_equal(out[test], y[test]):
        out[test] = rng.permutation(y[test])
    return out


@pytest.mark.parametrize("method", ["knn", "kernel_hlm", "affinity_knn"])
def test_test_labels_reach_no_distance_of_the_evaluation(method, recorded):
    R, y = toy()
    splits = make_splits(len(y), dataset="toy", n_splits=2, test_fraction=0.25, seed=3)
    _, test = split_indices(splits, 0)
    runs = []
    for labels in (y, permuted_test_labels(y, test)):
        recorded.clear()
        result = evaluate_method(artifact(R, labels), splits, method, dataset="toy", seed=1, n_folds=4,
                                 split_ids=[0])
        runs.append((list(recorded), result))
    (before, first), (after, second) = runs
    assert len(before) == len(after) >= 2 + (4 * 2 if method != "kernel_hlm" else 0)  # split (+ folds)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first.predictions["y_pred"], second.predictions["y_pred"])
    assert first.evaluation["params"].tolist() == second.evaluation["params"].tolist()
    assert first.evaluation["cv_error"].tolist() == second.evaluation["cv_error"].tolist()


class Recorder(ClassifierMixin, BaseEstimator):
    """1-NN that records the matrices it is given (class attribute: survives clone)."""

    seen: list = []

    def __init__(self, k=1):
        self.k = k

    def fit(self, D, y):
        Recorder.seen.append(("fit", D.copy()))
        self.classes_, self.y_ = np.unique(y), np.asarray(y)
        return self

    def predict(self, D):
        Recorder.seen.append(("predict", D.copy()))
        return self.y_[np.argmin(D, axis=1)]


def test_every_fold_builds_its_distances_from_its_fit_labels_only():
    R, y = toy(48)
    folds = make_folds(y, 4, seed=5)
    grid = [{"estimator__k": 1}]
    Recorder.seen = []
    cv_errors(VDMDistances(Recorder()), R, y, grid, folds)
    seen = list(Recorder.seen)
    assert [kind for kind, _ in seen] == ["fit", "predict"] * len(folds)
    for f, (fit, val) in enumerate(folds):
        np.testing.assert_allclose(seen[2 * f][1], brute_vdm(R[fit], R[fit], R[fit], y[fit]), atol=1e-12)
        np.testing.assert_allclose(seen[2 * f + 1][1], brute_vdm(R[val], R[fit], R[fit], y[fit]), atol=1e-12)
    fit0, val0 = folds[0]  # the validation part's labels changed: that fold's matrices do not move
    Recorder.seen = []
    cv_errors(VDMDistances(Recorder()), R, permuted_test_labels(y, val0), grid, folds[:1])
    for (_, a), (_, b) in zip(seen[:2], Recorder.seen):
        np.testing.assert_array_equal(a, b)


def test_incremental_distances_come_from_the_training_part(monkeypatch):
    """The matrix the incremental learners get is unchanged when the test part's labels change."""
    import hlm.pipeline.incremental.run as incremental

    seen = []

    class Recording(incremental.MatrixDistances):
        def __init__(self, D, ids):
            seen.append(np.array(D, copy=True))
            super().__init__(D, ids)

    monkeypatch.setattr(incremental, "MatrixDistances", Recording)
    R, y = toy(150, n_features=8)
    splits = make_splits(len(y), dataset="toy", n_splits=1, test_fraction=0.2, seed=3)
    train, test = split_indices(splits, 0)
    a = run_incremental(artifact(R, y), splits, "retrain", dataset="toy", seed=1)
    b = run_incremental(artifact(R, permuted_test_labels(y, test)), splits, "retrain", dataset="toy", seed=1)
    assert len(a) == 9 and a["n_components"].tolist() == b["n_components"].tolist()
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[0], seen[1])
    np.testing.assert_allclose(seen[0][np.ix_(train, train)], brute_vdm(R[train], R[train], R[train], y[train]),
                               atol=1e-12)


# --- the estimator and the artifact ---------------------------------------------------------


@pytest.mark.filterwarnings("ignore:.*duplicate:UserWarning")  # Kernel HLM: records at VDM 0 from each other
def test_a_proper_scikit_learn_estimator():
    R, y = toy(40)
    model = VDMDistances(KNNClassifier(n_neighbors=3), q=2)
    assert model.get_params()["estimator__n_neighbors"] == 3
    copy = clone(model).set_params(estimator__n_neighbors=5)
    assert copy.estimator.n_neighbors == 5 and model.estimator.n_neighbors == 3
    with pytest.raises(NotFittedError):
        model.predict(R)
    fitted = model.fit(R[:30], y[:30])
    assert fitted is model and list(model.classes_) == ["a", "b"] and model.n_features_in_ == 5
    np.testing.assert_array_equal(model.predict(R[30:]), KNNClassifier(n_neighbors=3).fit(
        model.distances(R[:30]), y[:30]).predict(model.distances(R[30:])))
    assert hasattr(model, "predict_proba") == hasattr(KNNClassifier(), "predict_proba")
    R, y = toy(60, n_features=12)  # no duplicate records within a class
    hlm = VDMDistances(KernelHLM()).fit(R[:45], y[:45])
    np.testing.assert_allclose(hlm.predict_proba(R[45:]).sum(axis=1), 1.0)


def test_grid_path_equals_refits():
    R, y = toy(48)
    grid = [{"estimator__n_neighbors": k} for k in (1, 2, 4, 8)]
    model = VDMDistances(KNNClassifier())
    fast = model.predict_grid(R[:36], y[:36], R[36:], grid)
    for a, b in zip(fast, predict_each(model, R[:36], y[:36], R[36:], grid)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad, message", [
    (np.array([[0, -1], [1, 0]]), "fit: R: 1 negative codes, first -1 at [0, 1]"),
    (np.array([[0.5, 1.0], [1.0, 0.0]]), "fit: R: 1 entries are not integer codes, first 0.5 at [0, 0]"),
    (np.array([[np.nan, 1.0], [1.0, 0.0]]), "fit: R: 1 entries are not integer codes, first nan at [0, 0]"),
    (np.array([["y", "n"], ["n", "y"]]), "fit: R: records must be integer codes"),
    (np.array([0, 1]), "fit: R: records must be a non-empty 2-D array of integer codes, got shape (2,)"),
])
def test_bad_records_are_one_line_errors(bad, message):
    with pytest.raises(DataError) as exc:
        VDMDistances(KNNClassifier()).fit(bad, ["a", "b"])
    one_line(exc, message)


def test_predict_with_other_features_is_a_one_line_error():
    R, y = toy(20)
    model = VDMDistances(KNNClassifier()).fit(R, y)
    with pytest.raises(DataError) as exc:
        model.predict(R[:, :3])
    one_line(exc, "predict: R has 3 features but the model was fitted on 5")


def test_records_artifact_round_trip(tmp_path):
    records, values = category_codes(np.array([["y", "n"], ["abstain", "n"], ["n", "y"]]))
    assert records.tolist() == [[2, 0], [0, 0], [1, 1]] and values == [["abstain", "n", "y"], ["n", "y"]]
    art = artifact(records, np.array(["a", "b", "a"]))
    write_distances(art, tmp_path / "r.parquet")
    back = read_distances(tmp_path / "r.parquet")
    assert back.distances is None and back.records.dtype == np.int64
    np.testing.assert_array_equal(back.records, records)
    assert back.conversion == "vdm" and back.metadata["records_shape"] == [3, 2]
    assert pd.read_parquet(tmp_path / "r.parquet").columns.tolist() == ["id", "label", "records"]


def test_hlm_check_summarises_the_records_of_house_votes():
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-m", "hlm.cli", "check", "house_votes"], cwd=root, capture_output=True,
                         text=True, check=True).stdout
    assert "conversion vdm\n" in out and "uses all labels" not in out
    assert "records: 16 categorical features (3 values each); vdm distances are built per training part" in out


def test_identical_records_carry_no_information(tmp_path):
    (tmp_path / "r.csv").write_text("v1,v2,cls\ny,n,a\ny,n,b\ny,n,a\ny,n,b\n")
    entry = validate_entry("same", {"path": "r.csv", "format": "csv", "kind": "categorical", "distance": "vdm",
                                    "label_column": "cls"})
    with pytest.raises(DataError) as exc:
        prepare_dataset(entry, tmp_path)
    one_line(exc, "dataset 'same' (r.csv): every pair of objects is at the same distance (0)")
    (tmp_path / "r.csv").write_text("v1,v2,cls\ny,n,a\nn,y,b\nx,x,a\nz,z,b\n")  # all pairs differ alike: no verdict
    assert prepare_dataset(entry, tmp_path).records.tolist() == [[2, 0], [0, 2], [1, 1], [3, 3]]
