"""MLflow tracking into an embedded SQLite store."""

import json
import multiprocessing as mp
import subprocess

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from hlm import tracking
from hlm.data.artifacts import write_frame
from hlm.errors import ConfigError

N = 5
TAGS = {"rule": "track", "wildcards": {"dataset": "ds1", "method": "knn"}, "config_hash": "abc123def456",
        "git_commit": "unknown"}
PARAMS = {"n_splits": N, "test_fraction": 0.2, "seed": 1}


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/mlflow.db")
    monkeypatch.delenv("HLM_MLFLOW_ARTIFACTS", raising=False)
    return tmp_path


def make_pair(root, dataset, method, seed=0):
    rng = np.random.default_rng(seed)
    ev = pd.DataFrame({
        "split": np.arange(N), "error_rate": rng.uniform(5, 30, N), "n_train": 80, "n_test": 20,
        "fit_seconds": rng.uniform(0, 1, N), "predict_seconds": rng.uniform(0, 0.1, N),
        "params": [json.dumps({"n_neighbors": int(k)}) for k in rng.integers(1, 9, N)],
    })
    pred = pd.DataFrame({"split": np.repeat(np.arange(N), 2), "index": np.tile([0, 1], N),
                         "y_true": "x", "y_pred": "y"})
    e = root / f"results/evaluation/{dataset}/{method}.parquet"
    p = root / f"results/predictions/{dataset}/{method}.parquet"
    write_frame(ev, e, {"dataset": dataset, "method": method, "to_distance": "bound_minus"})
    write_frame(pred, p, {"dataset": dataset, "method": method})
    return ev, e, p


def log(root, dataset="ds1", method="knn", seed=0):
    ev, e, p = make_pair(root, dataset, method, seed)
    run_id = tracking.log_pair(dataset=dataset, method=method, evaluation_path=e, prediction_path=p,
                               tags=TAGS, params=PARAMS)
    return ev, run_id


def pair_frame(pair):
    return mlflow.search_runs(experiment_names=["hlm"], filter_string=f"tags.`hlm.pair` = '{pair}'")


def test_telemetry_disabled():
    import os

    from mlflow.telemetry.client import get_telemetry_client

    assert os.environ["MLFLOW_DISABLE_TELEMETRY"] == "true"
    assert get_telemetry_client() is None  # mlflow was imported (above) before hlm.tracking


def test_requires_tracking_uri(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(ConfigError, match="MLFLOW_TRACKING_URI"):
        tracking.init_store()


def test_init_store_idempotent(store):
    first = tracking.init_store()
    assert tracking.init_store() == first
    exp = MlflowClient().get_experiment_by_name("hlm")
    assert exp.experiment_id == first
    assert exp.artifact_location == (store / "mlruns").as_uri()


def test_artifact_root_env(store, monkeypatch):
    monkeypatch.setenv("HLM_MLFLOW_ARTIFACTS", str(store / "art"))
    tracking.init_store("other")
    assert MlflowClient().get_experiment_by_name("other").artifact_location == (store / "art").as_uri()


def test_log_pair(store):
    tracking.init_store()
    ev, parent_id = log(store)
    runs = pair_frame("ds1/knn")
    assert len(runs) == 1 + N
    parent = runs[runs.run_id == parent_id].iloc[0]
    children = runs[runs["tags.mlflow.parentRunId"] == parent_id].sort_values("params.split", key=lambda s: s.astype(int))
    assert len(children) == N and set(runs.status) == {"FINISHED"}

    assert parent["tags.mlflow.runName"] == "ds1/knn"
    assert (parent["params.dataset"], parent["params.method"], parent["params.to_distance"]) == ("ds1", "knn", "bound_minus")
    assert (parent["params.n_splits"], parent["params.test_fraction"], parent["params.seed"]) == ("5", "0.2", "1")
    assert parent["metrics.error_rate_mean"] == pytest.approx(ev.error_rate.mean())
    assert parent["metrics.error_rate_sd"] == pytest.approx(ev.error_rate.std(ddof=1))
    assert parent["metrics.fit_seconds_mean"] == pytest.approx(ev.fit_seconds.mean())
    assert parent["metrics.predict_seconds_mean"] == pytest.approx(ev.predict_seconds.mean())
    assert parent["tags.rule"] == "track" and parent["tags.config_hash"] == "abc123def456"
    assert json.loads(parent["tags.wildcards"]) == TAGS["wildcards"]
    assert parent["tags.hlm.pair"] == "ds1/knn"

    assert list(children["tags.mlflow.runName"]) == [f"ds1/knn/split-{k:02d}" for k in range(N)]
    assert list(children["params.n_neighbors"]) == [str(json.loads(p)["n_neighbors"]) for p in ev.params]
    assert np.allclose(children["metrics.error_rate"], ev.error_rate)
    assert np.allclose(children["metrics.n_test"], 20) and np.allclose(children["metrics.n_train"], 80)

    client = MlflowClient()
    arts = {f.path for sub in ("evaluation", "predictions") for f in client.list_artifacts(parent_id, sub)}
    assert arts == {"evaluation/knn.parquet", "predictions/knn.parquet"}


def test_rerun_replaces(store):
    tracking.init_store()
    _, first = log(store)
    _, other = log(store, method="kernel_hlm")
    _, second = log(store, seed=1)
    assert second != first
    runs = pair_frame("ds1/knn")
    assert len(runs) == 1 + N and set(runs["tags.mlflow.parentRunId"].dropna()) == {second}
    assert MlflowClient().get_run(first).info.lifecycle_stage == "deleted"
    assert len(pair_frame("ds1/kernel_hlm")) == 1 + N  # other pairs untouched


def test_same_file_is_not_logged_again(store):
    """The pair's runs already record this evaluation file (same SHA-256): nothing new is logged."""
    tracking.init_store()
    ev, first = log(store)
    n_runs = len(pair_frame("ds1/knn"))
    _, e, p = make_pair(store, "ds1", "knn", seed=0)  # rewritten, byte-identical
    again = tracking.log_pair(dataset="ds1", method="knn", evaluation_path=e, prediction_path=p,
                              tags=TAGS, params=PARAMS)
    assert again == first and len(pair_frame("ds1/knn")) == n_runs == 1 + N
    digest = MlflowClient().get_run(first).data.tags["hlm.digest"]
    from hlm.data.prepare import file_sha256

    assert digest == file_sha256(e)
    _, changed = log(store, seed=2)  # a different result replaces
    assert changed != first and MlflowClient().get_run(first).info.lifecycle_stage == "deleted"


def test_retry_on_lock(monkeypatch):
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise MlflowException("(sqlite3.OperationalError) database is locked")
        return "ok"

    assert tracking._retry(flaky) == "ok" and len(calls) == 3
    with pytest.raises(MlflowException, match="other"):
        tracking._retry(lambda: (_ for _ in ()).throw(MlflowException("other")))
    monkeypatch.setattr(tracking, "RETRY_SECONDS", 0.2)
    with pytest.raises(MlflowException, match="locked"):
        tracking._retry(lambda: (_ for _ in ()).throw(MlflowException("database is locked")))


def _worker(root, dataset):
    from pathlib import Path

    log(Path(root), dataset=dataset, method="knn")


def test_concurrent_processes(store):
    # no init_store here: both processes race to create the schema and experiment
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(str(store), ds)) for ds in ("ds1", "ds2")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    for ds in ("ds1", "ds2"):
        assert len(pair_frame(f"{ds}/knn")) == 1 + N




def test_split_warnings_become_tags(store):
    ev, e, p = make_pair(store, "ds3", "kernel_hlm")
    ev["warnings"] = [json.dumps(["class(es) c have one training object"]) if k == 2 else "[]" for k in ev.split]
    write_frame(ev, e, {"dataset": "ds3", "method": "kernel_hlm", "to_distance": "bound_minus"})
    tracking.log_pair(dataset="ds3", method="kernel_hlm", evaluation_path=e, prediction_path=p,
                      tags=TAGS, params=PARAMS)
    runs = pair_frame("ds3/kernel_hlm")
    children = runs[runs["tags.hlm.role"] == "child"].set_index("tags.hlm.split")
    assert children.loc["2", "tags.hlm.warnings"] == "class(es) c have one training object"
    assert children["tags.hlm.warnings"].isna().sum() == N - 1
    assert runs.loc[runs["tags.hlm.role"] == "parent", "metrics.n_splits_with_warnings"].item() == 1


def test_models_are_logged_as_child_artifacts(store):
    ev, e, p = make_pair(store, "ds4", "hlm_vsh")
    ev["model"] = [json.dumps({"split": int(k)}) if k == 1 else None for k in ev.split]
    write_frame(ev, e, {"dataset": "ds4", "method": "hlm_vsh", "to_distance": "bound_minus"})
    tracking.log_pair(dataset="ds4", method="hlm_vsh", evaluation_path=e, prediction_path=p,
                      tags=TAGS, params=PARAMS)
    runs = pair_frame("ds4/hlm_vsh")
    children = runs[runs["tags.hlm.role"] == "child"].set_index("tags.hlm.split")
    client = MlflowClient()
    assert [a.path for a in client.list_artifacts(children.loc["1", "run_id"])] == ["model.json"]
    assert json.loads(mlflow.artifacts.load_text(f"runs:/{children.loc['1', 'run_id']}/model.json")) == {"split": 1}
    assert client.list_artifacts(children.loc["0", "run_id"]) == []


def test_reduced_cv_folds_are_tagged(store):
    ev, e, p = make_pair(store, "ds5", "knn")
    ev["cv_folds"] = [10 if k else 4 for k in ev.split]
    write_frame(ev, e, {"dataset": "ds5", "method": "knn", "to_distance": "bound_minus"})
    tracking.log_pair(dataset="ds5", method="knn", evaluation_path=e, prediction_path=p,
                      tags=TAGS, params={**PARAMS, "cv_folds": 10})
    runs = pair_frame("ds5/knn")
    children = runs[runs["tags.hlm.role"] == "child"].set_index("tags.hlm.split")
    assert children.loc["0", "tags.hlm.cv_folds"] == "4" and children.loc["1", "tags.hlm.cv_folds"] == "10"
    assert runs.loc[runs["tags.hlm.role"] == "parent", "tags.hlm.cv_folds_reduced"].item() == "4-10 of 10 folds"
