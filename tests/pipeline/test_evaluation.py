"""Splits, seeds, CV selection and the evaluation loop."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from hlm.base._seeds import derive_seed
from hlm.datasets._artifacts import DistanceArtifact
from hlm.neighbors._knn import KNNClassifier
from hlm.pipeline.evaluation.cv import fold_count, make_folds, select_params
from hlm.pipeline.evaluation.evaluate import evaluate_method
from hlm.pipeline.evaluation.splits import make_splits, split_indices


def test_seed_is_stable_and_distinct():
    assert derive_seed(1, "voting", 3) == derive_seed(1, "voting", 3)
    # the value itself is fixed forever: results must reproduce on every machine
    # sha256("20121/aural_sonar/0")[:4], little-endian (checked with sha256sum)
    assert derive_seed(20121, "aural_sonar", 0) == 1512430447
    from oracles.protocol_reference import seed  # the spec's rule (docs/architecture.md), written from scratch

    assert all(derive_seed(s, d, k, "cv") == seed(s, d, k, "cv") for s in (0, 20121) for d in ("voting", "x")
               for k in range(5))
    assert len({derive_seed(1, "voting", s) for s in range(100)}) == 100


@pytest.mark.parametrize("n,expected_test", [(100, 20), (213, 43), (435, 87)])
def test_splits_match_paper_test_sizes(n, expected_test):
    table = make_splits(n, dataset="x", n_splits=20, test_fraction=0.2, seed=0)
    assert list(table.columns) == ["split", "index", "role"]
    for s in range(20):
        train, test = split_indices(table, s)
        assert len(test) == expected_test and len(train) == n - expected_test
        assert not set(train) & set(test)
    # different splits differ, same arguments reproduce exactly
    assert not np.array_equal(split_indices(table, 0)[1], split_indices(table, 1)[1])
    again = make_splits(n, dataset="x", n_splits=20, test_fraction=0.2, seed=0)
    pd.testing.assert_frame_equal(table, again)
    other = make_splits(n, dataset="y", n_splits=20, test_fraction=0.2, seed=0)
    assert not other.equals(table)


def test_split_k_does_not_depend_on_n_splits():
    a = make_splits(50, dataset="x", n_splits=3, test_fraction=0.2, seed=0)
    b = make_splits(50, dataset="x", n_splits=7, test_fraction=0.2, seed=0)
    np.testing.assert_array_equal(split_indices(a, 2)[1], split_indices(b, 2)[1])


def test_folds_stratified_when_possible():
    y = np.array([0] * 30 + [1] * 20)
    folds = make_folds(y, 10, seed=1)
    assert len(folds) == 10
    for _fit, val in folds:
        assert sorted(np.bincount(y[val])) == [2, 3]
    tiny = np.array([0] * 30 + [1] * 3)  # class of 3 < 10 folds: 3 stratified folds
    folds = make_folds(tiny, 10, seed=1)
    assert len(folds) == fold_count(tiny, 10) == 3
    assert all(np.bincount(tiny[val], minlength=2)[1] == 1 for _, val in folds)
    single = np.array([0] * 30 + [1])  # a singleton class: 2 folds, not an error
    assert len(make_folds(single, 10, seed=1)) == fold_count(single, 10) == 2
    assert fold_count(np.array([0, 1, 0, 1]), 10) == 2


@pytest.mark.parametrize("labels", ["str", "int", "float"])
def test_make_folds_equals_sklearns_splitters(labels):
    """make_folds' own stratified split == StratifiedKFold(shuffle=True) (KFold with a singleton class)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    rng = np.random.default_rng(len(labels))
    for trial in range(60):
        n = int(rng.integers(2, 300))
        y = rng.integers(0, int(rng.integers(1, 5)), n)
        if trial % 4 == 0:
            y[: int(rng.integers(1, 4))] = 9  # a small class: fewer folds, or KFold
        y = {"str": y.astype(str), "int": (3 * y).astype(np.int32), "float": y.astype(float)}[labels]
        n_folds, seed = int(rng.integers(2, 11)), int(rng.integers(0, 2**32))
        n_used = fold_count(y, n_folds)
        Splitter = StratifiedKFold if np.unique(y, return_counts=True)[1].min() >= n_used else KFold
        expected = list(Splitter(n_used, shuffle=True, random_state=seed).split(np.zeros(n), y))
        got = make_folds(y, n_folds, seed)
        assert len(got) == len(expected)
        for (fit, val), (fit_ref, val_ref) in zip(got, expected):
            np.testing.assert_array_equal(fit, fit_ref)
            np.testing.assert_array_equal(val, val_ref)
            assert fit.dtype == fit_ref.dtype and val.dtype == val_ref.dtype


def test_select_params_matches_brute_force_and_drops_large_k():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (25, 2)), rng.normal(1.5, 1, (25, 2))])
    y = np.repeat([0, 1], 25)
    D = cdist(X, X)
    folds = make_folds(y, 5, seed=3)
    grid = [{"n_neighbors": k} for k in (1, 2, 4, 8, 16, 32, 64)]
    best, searched, errors = select_params(KNNClassifier(), D, y, grid, folds)
    assert [p["n_neighbors"] for p in searched] == [1, 2, 4, 8, 16, 32]  # 64 >= fold size 40
    brute = []
    for p in searched:
        errs = [np.mean(KNNClassifier(**p).fit(D[np.ix_(f, f)], y[f]).predict(D[np.ix_(v, f)]) != y[v])
                for f, v in folds]
        brute.append(np.mean(errs))
    np.testing.assert_allclose(errors, brute)
    assert best == searched[int(np.argmin(brute))]


def test_a_fold_with_a_single_class_is_left_out_of_the_choice():
    """30 objects of 'a' and one of 'b': the fold whose validation part holds 'b' fits on 'a' alone,
    which every estimator refuses. Its errors are infinite at every k; the choice uses the other
    folds (equal to their brute-force means), with a warning, instead of falling back to grid[0]."""
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(0, 1, (30, 2)), [[4.0, 4.0]]])
    y = np.array(["a"] * 30 + ["b"])
    D = cdist(X, X)
    folds = make_folds(y, 3, seed=0)  # a singleton class: 2 plain (unstratified) folds
    single = [i for i, (f, _) in enumerate(folds) if len(set(y[f])) == 1]
    assert len(single) == 1
    grid = [{"n_neighbors": k} for k in (1, 2, 4, 8)]
    with pytest.warns(UserWarning, match="1 of 2 folds could not fit any grid point"):
        best, searched, means = select_params(KNNClassifier(), D, y, grid, folds)
    brute = [np.mean([np.mean(KNNClassifier(**p).fit(D[np.ix_(f, f)], y[f]).predict(D[np.ix_(v, f)]) != y[v])
                      for i, (f, v) in enumerate(folds) if i not in single]) for p in searched]
    np.testing.assert_allclose(means, brute)
    assert np.isfinite(means).all() and best == searched[int(np.argmin(brute))]


def _toy_artifact(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (n // 2, 3)), rng.normal(2.5, 1, (n // 2, 3))])
    y = np.repeat(["a", "b"], n // 2)
    return DistanceArtifact(np.arange(n).astype(str), y, cdist(X, X), {"to_distance": "euclidean"})


@pytest.mark.parametrize("method", ["knn", "kernel_hlm", "hlm_vsh", "hlm_kernel_vsh"])
def test_evaluate_method_outputs(method):
    art = _toy_artifact()
    splits = make_splits(art.n, dataset="toy", n_splits=3, test_fraction=0.2, seed=0)
    res = evaluate_method(art, splits, method, dataset="toy", seed=0, n_folds=5)
    ev, pred = res.evaluation, res.predictions
    assert list(ev["split"]) == [0, 1, 2]
    assert (ev["n_test"] == 12).all() and (ev["n_train"] == 48).all()
    assert (ev["error_rate"] < 20).all()
    # error rates agree with the stored predictions
    for s, group in pred.groupby("split"):
        assert ev.loc[ev.split == s, "error_rate"].item() == pytest.approx(
            100 * np.mean(group.y_true != group.y_pred))
    params = json.loads(ev["params"].iloc[0])
    if method == "knn":
        assert "n_neighbors" in params
    else:
        assert "shape" in params
    np.testing.assert_allclose(pred[["proba_a", "proba_b"]].sum(axis=1), 1.0)  # k-NN: Laplace-corrected shares
    assert (ev["log_loss"] > 0).all() and (ev["brier"] >= 0).all() and (ev["n_clipped"] >= 0).all()
    if method.startswith("hlm_"):
        chosen = params["n_components"]
        assert chosen in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, "kernel"]
        expected = 48 if chosen == "kernel" else 2 * min(chosen, 24)
        assert params["n_prototypes"] == expected
    again = evaluate_method(art, splits, method, dataset="toy", seed=0, n_folds=5)
    pd.testing.assert_frame_equal(again.predictions, pred)


def test_unsplittable_data_is_a_clear_error():
    from hlm.errors import DataError

    with pytest.raises(DataError, match="dataset 'tiny': 3 objects cannot be split"):
        make_splits(3, dataset="tiny", n_splits=2, test_fraction=0.9, seed=0)


def test_fit_errors_name_dataset_method_and_split():
    from hlm.errors import DataError

    # every same-class neighbour is a duplicate: Kernel HLM has no positive u
    D = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [1, 1, 0, 0], [1, 1, 0, 0]], dtype=float)
    D = np.kron(D, np.ones((3, 3)))  # 12 objects in 4 groups of identical objects
    y = np.repeat(["a", "b"], 6)
    art = DistanceArtifact(np.arange(12).astype(str), y, D, {})
    splits = make_splits(12, dataset="dup", n_splits=1, test_fraction=0.25, seed=0)
    with pytest.raises(DataError, match=r"dataset 'dup', method 'kernel_hlm', split 0: .*no positive"):
        evaluate_method(art, splits, "kernel_hlm", dataset="dup", seed=0, n_folds=3)


def test_cv_fixed_params_apply_to_the_cv_only():
    art = _toy_artifact()
    splits = make_splits(art.n, dataset="toy", n_splits=1, test_fraction=0.2, seed=0)
    # during CV no cluster can reach 1000 objects: every candidate fails, the first (M = 1) is kept;
    # the final fit, without the override, works
    res = evaluate_method(art, splits, "hlm_vsh", dataset="toy", seed=0, n_folds=3,
                          grid_config={"n_components": [1, 2, 3]}, cv_fixed_params={"min_cluster_size": 1000})
    params = json.loads(res.evaluation["params"].iloc[0])
    assert params["n_components"] == 1 and params["n_prototypes"] == 2
    assert all(v == float("inf") for v in json.loads(res.evaluation["cv_error"].iloc[0]).values())


def test_hlm_models_are_exported_as_json():
    from hlm.local_mapping._mixture_hlm import HLMModel

    art = _toy_artifact()
    splits = make_splits(art.n, dataset="toy", n_splits=1, test_fraction=0.2, seed=0)
    res = evaluate_method(art, splits, "hlm_vsh", dataset="toy", seed=0, n_folds=3,
                          grid_config={"n_components": [2]})
    exported = json.loads(res.evaluation["model"].iloc[0])
    train, test = split_indices(splits, 0)
    assert set(exported["prototype_object_index"]) <= set(train)
    assert exported["prototype_id"] == [str(i) for i in exported["prototype_object_index"]]
    fields = {k: v for k, v in exported.items() if k not in ("prototype_object_index", "prototype_id")}
    model = HLMModel(**fields)
    # the exported model classifies the test part from test-to-prototype distances alone
    D_proto = art.distances[np.ix_(test, exported["prototype_object_index"])]
    pred = np.asarray(model.classes)[model.log_scores(D_proto).argmax(axis=1)]
    stored = res.predictions.sort_values("index")["y_pred"].to_numpy()
    np.testing.assert_array_equal(pred, stored)
    knn = evaluate_method(art, splits, "knn", dataset="toy", seed=0, n_folds=3)
    assert knn.evaluation["model"].isna().all()


def test_parallel_cv_gives_the_same_results_as_serial():
    """CV folds in worker processes: identical CV errors, choices and predictions (seeds do not depend on workers)."""
    art = _toy_artifact()
    splits = make_splits(art.n, dataset="toy", n_splits=2, test_fraction=0.2, seed=0)
    kw = dict(dataset="toy", seed=0, n_folds=5, grid_config={"n_components": [1, 2, 3, 5]})
    serial = evaluate_method(art, splits, "hlm_vsh", **kw)
    parallel = evaluate_method(art, splits, "hlm_vsh", n_jobs=2, **kw)
    assert list(serial.evaluation["cv_error"]) == list(parallel.evaluation["cv_error"])
    assert list(serial.evaluation["params"]) == list(parallel.evaluation["params"])
    pd.testing.assert_frame_equal(serial.predictions, parallel.predictions)


def test_small_class_gets_fewer_folds_and_a_recorded_warning():
    """A class with fewer training members than cv_folds: fewer (stratified) folds, not an error."""
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(3, 1, (5, 2))])
    y = np.array(["a"] * 40 + ["b"] * 5)
    art = DistanceArtifact(np.arange(45).astype(str), y, cdist(X, X), {"to_distance": "euclidean"})
    splits = make_splits(art.n, dataset="small", n_splits=2, test_fraction=0.2, seed=0)
    ev = evaluate_method(art, splits, "knn", dataset="small", seed=0, n_folds=10).evaluation
    for row in ev.itertuples():
        train = split_indices(splits, row.split)[0]
        n_b = int((y[train] == "b").sum())
        assert row.cv_folds == max(n_b, 2) < 10
        assert any(f"{row.cv_folds} folds used" in w for w in json.loads(row.warnings))


def test_kernel_vsh_reusing_vsh_cv_equals_its_own_cv(tmp_path, caplog):
    """HLM(kernel-vsh) with HLM(vsh)'s recorded CV errors == HLM(kernel-vsh) cross-validating all (the oracle)."""
    from hlm.datasets._artifacts import write_distances
    from hlm.pipeline.stages.evaluate import evaluate as evaluate_stage

    art = _toy_artifact(n=80, seed=3)
    splits = make_splits(art.n, dataset="toy", n_splits=3, test_fraction=0.2, seed=0)
    dist, split_path = tmp_path / "d.parquet", tmp_path / "s.parquet"
    write_distances(art, dist)
    splits.to_parquet(split_path)
    params = {"hlm_vsh": {"fixed": {"n_init": 3}}, "hlm_kernel_vsh": {"fixed": {"n_init": 3}}}

    def run(method, cv_from=None, method_params=None):
        out = tmp_path / f"{method}{'-reuse' if cv_from else ''}.parquet"
        evaluate_stage(dataset="toy", method=method, distances=str(dist), splits_path=str(split_path),
                       evaluation_out=str(out), predictions_out=str(tmp_path / f"p-{out.name}"), seed=0,
                       cv_folds=5, method_params=method_params or params[method], tags={}, cv_from=cv_from)
        return pd.read_parquet(out)

    vsh = run("hlm_vsh")
    own = run("hlm_kernel_vsh")
    reused = run("hlm_kernel_vsh", cv_from=str(tmp_path / "hlm_vsh.parquet"))
    assert (own["cv_reused"] == 0).all() and (reused["cv_reused"] == 13).all()
    for column in ("error_rate", "params", "cv_error"):
        assert list(reused[column]) == list(own[column])
    # the recorded M = 1..16 errors are HLM(vsh)'s, the "kernel" one is new
    for row_vsh, row in zip(vsh.itertuples(), reused.itertuples()):
        errors = json.loads(row.cv_error)
        assert {k: v for k, v in errors.items() if "kernel" not in k} == json.loads(row_vsh.cv_error)
        assert row.cv_seconds > row_vsh.cv_seconds  # the reused CV time is counted as the method's own
    # a different estimator (5 restarts instead of 3) must not reuse: it cross-validates everything
    with caplog.at_level("WARNING", logger="hlm"):
        other = run("hlm_kernel_vsh", cv_from=str(tmp_path / "hlm_vsh.parquet"),
                    method_params={"fixed": {"n_init": 5}})
    assert (other["cv_reused"] == 0).all()
    assert "not reusing the CV errors of hlm_vsh" in caplog.text and "estimator parameters differ" in caplog.text


def test_float32_storage_gives_the_same_decisions(tmp_path):
    """On this toy, the scale profile's four methods on an artifact stored as float32 (config distance_dtype)
    choose the same parameters and predict the same classes as on float64 storage (on real data they need not:
    docs/performance.md, "Distances at scale"); the fitted scales and shapes agree to 1e-6
    relative (float32 rounds a distance by at most 6e-8 of it), the CV errors exactly but HLM(vsh)'s, whose
    clustering can take another path where two swaps' sums of distances nearly tie."""
    from hlm.datasets._artifacts import read_distances, write_distances

    art = _toy_artifact(n=80, seed=4)
    splits = make_splits(art.n, dataset="toy", n_splits=2, test_fraction=0.2, seed=0)
    for dtype in ("float64", "float32"):
        write_distances(art, tmp_path / f"{dtype}.parquet", dtype=dtype)
    stored = {dtype: read_distances(tmp_path / f"{dtype}.parquet") for dtype in ("float64", "float32")}
    assert stored["float32"].distances.dtype == np.float32
    for method in ("knn", "kernel_hlm", "hlm_vsh", "local_sda"):
        fixed = {"n_init": 3} if method == "hlm_vsh" else None
        res = {dtype: evaluate_method(a, splits, method, dataset="toy", seed=0, n_folds=5, fixed_params=fixed)
               for dtype, a in stored.items()}
        ev64, ev32 = res["float64"].evaluation, res["float32"].evaluation
        pd.testing.assert_frame_equal(res["float32"].predictions, res["float64"].predictions)
        assert list(ev32["error_rate"]) == list(ev64["error_rate"])
        for a, b in zip(ev32["params"], ev64["params"]):  # chosen ones equal, fitted ones (scale, shape) close
            a, b = json.loads(a), json.loads(b)
            assert a.keys() == b.keys()
            for key in a:
                if isinstance(b[key], float):
                    assert a[key] == pytest.approx(b[key], rel=1e-6), key
                else:
                    assert a[key] == b[key], key
        if method != "hlm_vsh":  # VSH's swaps compare sums of distances: at M = 9 of split 0 one fold's medoids
            assert list(ev32["cv_error"]) == list(ev64["cv_error"])  # differ, and its CV error by one object


@pytest.mark.parametrize("n_folds", [1, 0])
def test_make_folds_keeps_sklearns_checks_of_the_fold_count(n_folds):
    """Fold counts scikit-learn rejects (fewer than 2) are still rejected."""
    y = np.repeat(np.array(["a", "b"]), 20)
    with pytest.raises((ValueError, TypeError)):
        make_folds(y, n_folds, seed=1)


@pytest.mark.parametrize("registry_standardizes", [True, False])
def test_twoway_models_standardize_as_the_registry_does(registry_standardizes):
    """MDA's variance floor is a fraction of the mean feature variance, so features in mixed units (a registry
    entry with standardize: true) are z-scored inside the estimator: the evaluation passes the flag on, and its
    error equals a direct fit with that flag; the chosen M is recorded with it."""
    from hlm.pipeline.methods import METHODS

    rng = np.random.default_rng(4)
    y = np.repeat(["a", "b", "c"], 20)
    X = rng.normal(size=(60, 3)) + np.eye(3)[np.searchsorted(["a", "b", "c"], y)]
    X[:, 0] *= 1000.0  # one feature in large units: unscaled, it sets the floor above the others' variance
    meta = {"to_distance": "euclidean", "standardize": registry_standardizes}
    art = DistanceArtifact(np.arange(60).astype(str), y, cdist(X, X), meta, vectors=X)
    splits = make_splits(60, dataset="toy", n_splits=1, test_fraction=0.3, seed=0)
    res = evaluate_method(art, splits, "mda", dataset="toy", seed=0, n_folds=3)
    train, test = split_indices(splits, 0)
    chosen = json.loads(res.evaluation.params[0])["n_components"]
    model = METHODS["mda"].make({"n_components": chosen, "standardize": registry_standardizes,
                                 "random_state": derive_seed(0, "toy", 0, "model") % 2**31}).fit(X[train], y[train])
    assert res.evaluation.error_rate[0] == pytest.approx(100 * np.mean(model.predict(X[test]) != y[test]), abs=1e-12)
    assert model.feature_scale_[0] == (pytest.approx(X[train, 0].std()) if registry_standardizes else 1.0)


def test_an_evaluation_in_parts_gathers_the_rows_of_one_job(tmp_path):
    """evaluation_jobs: runs of consecutive splits, each evaluated alone, gathered from their files (any order):
    the errors, chosen parameters, CV errors and predictions of one job over every split, its metadata kept."""
    from hlm.datasets._artifacts import read_metadata, write_frame
    from hlm.pipeline.stages.evaluate import gather_evaluation, part_splits

    assert [part_splits(5, 3, k) for k in range(3)] == [[0, 1], [2, 3], [4]]
    assert [part_splits(20, 4, k) for k in range(4)] == [list(range(i, i + 5)) for i in (0, 5, 10, 15)]
    art = _toy_artifact()
    splits = make_splits(art.n, dataset="toy", n_splits=5, test_fraction=0.2, seed=0)
    whole = evaluate_method(art, splits, "hlm_vsh", dataset="toy", seed=0, n_folds=3)
    paths = {"evaluations": [], "predictions": []}
    for k in reversed(range(3)):
        part = evaluate_method(art, splits, "hlm_vsh", dataset="toy", seed=0, n_folds=3,
                               split_ids=part_splits(5, 3, k))
        for kind, frame in (("evaluations", part.evaluation), ("predictions", part.predictions)):
            paths[kind].append(tmp_path / f"{kind}-{k}.parquet")
            write_frame(frame, paths[kind][-1], metadata={"dataset": "toy", "n_splits": 5})
    gather_evaluation(**paths, evaluation_out=tmp_path / "ev.parquet", predictions_out=tmp_path / "pred.parquet")
    gathered = pd.read_parquet(tmp_path / "ev.parquet")
    timing = ["fit_seconds", "predict_seconds", "cv_seconds"]
    pd.testing.assert_frame_equal(gathered.drop(columns=timing), whole.evaluation.drop(columns=timing))
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "pred.parquet"), whole.predictions)
    assert read_metadata(tmp_path / "ev.parquet") == {"dataset": "toy", "n_splits": 5}


def test_gathering_parts_that_miss_or_repeat_a_split_is_one_line_error(tmp_path):
    from hlm.datasets._artifacts import write_frame
    from hlm.errors import DataError
    from hlm.pipeline.stages.evaluate import gather_evaluation

    for name, splits, meta in (("a", [0, 1], {"n_splits": 4}), ("b", [1, 3], {"n_splits": 4}),
                               ("c", [2], {"n_splits": 4, "seed": 1})):
        write_frame(pd.DataFrame({"split": splits}), tmp_path / f"{name}.parquet", metadata=meta)
    out = {"evaluation_out": tmp_path / "ev.parquet", "predictions_out": tmp_path / "pred.parquet"}
    with pytest.raises(DataError, match=r"parts hold splits \[0, 1, 1, 3\], not each of the 4 once"):
        gather_evaluation(evaluations=[tmp_path / "a.parquet", tmp_path / "b.parquet"],
                          predictions=[tmp_path / "a.parquet", tmp_path / "b.parquet"], **out)
    with pytest.raises(DataError, match="made under other settings"):
        gather_evaluation(evaluations=[tmp_path / "a.parquet", tmp_path / "c.parquet"],
                          predictions=[tmp_path / "a.parquet", tmp_path / "c.parquet"], **out)
    assert not (tmp_path / "ev.parquet").exists()
