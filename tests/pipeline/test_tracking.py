"""MLflow tracking into an embedded SQLite store."""

import json
import multiprocessing as mp
import os

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from hlm.datasets._artifacts import write_frame
from hlm.errors import ConfigError
from hlm.pipeline import tracking

#: the pipeline's plumbing, no numerical code: run once, not again on the other CPU dispatch (Makefile)
pytestmark = pytest.mark.plumbing

N = 5
TAGS = {"rule": "track", "wildcards": {"dataset": "ds1", "method": "knn"}, "config_hash": "abc123def456",
        "git_commit": "unknown"}
PARAMS = {"n_splits": N, "test_fraction": 0.2, "seed": 1}


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/mlflow.db")
    monkeypatch.delenv("HLM_MLFLOW_ARTIFACTS", raising=False)
    return tmp_path


def make_pair(root, dataset, method, seed=0, n=N):
    rng = np.random.default_rng(seed)
    ev = pd.DataFrame({
        "split": np.arange(n), "error_rate": rng.uniform(5, 30, n), "n_train": 80, "n_test": 20,
        "fit_seconds": rng.uniform(0, 1, n), "predict_seconds": rng.uniform(0, 0.1, n),
        "params": [json.dumps({"n_neighbors": int(k)}) for k in rng.integers(1, 9, n)],
    })
    pred = pd.DataFrame({"split": np.repeat(np.arange(n), 2), "index": np.tile([0, 1], n),
                         "y_true": "x", "y_pred": "y"})
    e = root / f"results/evaluation/{dataset}/{method}.parquet"
    p = root / f"results/predictions/{dataset}/{method}.parquet"
    write_frame(ev, e, {"dataset": dataset, "method": method, "to_distance": "bound_minus"})
    write_frame(pred, p, {"dataset": dataset, "method": method})
    return ev, e, p


def log(root, dataset="ds1", method="knn", seed=0, n=N):
    ev, e, p = make_pair(root, dataset, method, seed, n)
    run_id = tracking.log_pair(dataset=dataset, method=method, evaluation_path=e, prediction_path=p,
                               tags=TAGS, params=PARAMS)
    return ev, run_id


def pair_frame(pair):
    return mlflow.search_runs(experiment_names=["hlm"], filter_string=f"tags.`hlm.pair` = '{pair}'")


def test_telemetry_disabled():
    import os

    from mlflow.telemetry.client import get_telemetry_client

    assert os.environ["MLFLOW_DISABLE_TELEMETRY"] == "true"
    assert get_telemetry_client() is None  # mlflow was imported (above) before hlm.pipeline.tracking


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


def view_tag(exp):
    envelope = json.loads(exp.tags[tracking.VIEW_TAG])
    return envelope, json.loads(envelope["state"])


def test_init_store_sets_the_ui_tags(store):
    """A new experiment: the saved runs-table view, the experiment kind and a description linking to the view."""
    exp_id = tracking.init_store()
    exp = MlflowClient().get_experiment(exp_id)
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    envelope, state = view_tag(exp)
    assert tracking.VIEW_TAG == "mlflow.sharedViewState.hlm-results"
    assert envelope["name"] == "hlm results" and isinstance(envelope["createdAt"], int)
    assert envelope["updatedAt"] == envelope["createdAt"]
    columns = ["metrics.`error_rate_mean`", "metrics.`error_rate_sd`", "params.`to_distance`",
               "params.`chosen_params`"]
    assert state["selectedColumns"] == state["columnOrder"] == columns and set(state["columnWidths"]) == set(columns)
    assert (state["orderByKey"], state["orderByAsc"]) == ("tags.`mlflow.runName`", True)
    path = f"#/experiments/{exp_id}/runs?workflowType=machine_learning&viewStateShareKey=hlm-results"
    assert tracking.ui_path(exp_id) == path
    assert f"]({path})" in exp.tags["mlflow.note.content"]
    # a second call writes nothing: same tags, same timestamps
    tracking.init_store()
    assert MlflowClient().get_experiment(exp_id).tags == exp.tags


def test_view_filter_selects_the_top_level_runs(store):
    """The saved view's search filter, run by the tracking server, keeps parents and incremental runs."""
    tracking.init_store()
    log(store)
    (_, state), client = view_tag(MlflowClient().get_experiment_by_name("hlm")), MlflowClient()
    runs = client.search_runs([tracking.init_store()], filter_string=state["searchFilter"],
                              order_by=["tags.`mlflow.runName` ASC"])
    assert [r.data.tags["hlm.role"] for r in runs] == ["parent"]
    assert set(runs[0].data.metrics) >= {"error_rate_mean", "error_rate_sd"}
    assert set(runs[0].data.params) >= {"chosen_params", "to_distance"}


def test_init_store_upgrades_an_existing_experiment(store):
    """An experiment made by an earlier version (no UI tags, an outdated view) gets them; a description
    the user wrote is kept."""
    client = MlflowClient()
    exp_id = client.create_experiment("hlm", artifact_location=(store / "mlruns").as_uri())
    client.set_experiment_tag(exp_id, "mlflow.note.content", "my notes")
    client.set_experiment_tag(exp_id, tracking.VIEW_TAG, json.dumps(
        {"name": "hlm results", "createdAt": 1000, "updatedAt": 1000, "state": json.dumps({"selectedColumns": []})}))
    assert tracking.init_store() == exp_id
    exp = client.get_experiment(exp_id)
    assert exp.tags["mlflow.note.content"] == "my notes"
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    envelope, state = view_tag(exp)
    assert envelope["createdAt"] == 1000 and envelope["updatedAt"] > 1000
    assert state == tracking.view_state()

    client.delete_experiment_tag(exp_id, "mlflow.experimentKind")
    client.delete_experiment(exp_id)  # a deleted experiment is restored, then tagged
    assert tracking.init_store() == exp_id
    exp = client.get_experiment(exp_id)
    assert exp.lifecycle_stage == "active" and exp.tags["mlflow.experimentKind"] == "custom_model_development"


def test_chosen_summary():
    choices = [{"n_neighbors": 1, "C": 10.0, "scale": [0.1, 0.2], "shape_mle": 1.0 + k / 10,
                "M": "kernel" if k < 3 else 4, "k": [5, 1, 2, 7, 7][k]} for k in range(5)]
    choices[4]["C"] = 100.0
    assert tracking.chosen_summary(choices) == (
        "n_neighbors=1, C=10 (4/5), scale=<2-vector>, shape_mle~1.2 (1..1.4), M=kernel (3/5), k=7 (2/5)")
    assert tracking.chosen_summary([{}, {}]) == tracking.chosen_summary([]) == "none"
    assert tracking.chosen_summary([{"a": 1}, {}]) == "a=1 (1/2)"


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
    children = runs[runs["tags.mlflow.parentRunId"] == parent_id]
    children = children.sort_values("params.split", key=lambda s: s.astype(int))
    assert len(children) == N and set(runs.status) == {"FINISHED"}

    assert parent["tags.mlflow.runName"] == "ds1/knn"
    params = (parent["params.dataset"], parent["params.method"], parent["params.to_distance"])
    assert params == ("ds1", "knn", "bound_minus")
    assert (parent["params.n_splits"], parent["params.test_fraction"], parent["params.seed"]) == ("5", "0.2", "1")
    assert parent["metrics.error_rate_mean"] == pytest.approx(ev.error_rate.mean())
    assert parent["metrics.error_rate_sd"] == pytest.approx(ev.error_rate.std(ddof=1))
    assert parent["metrics.fit_seconds_mean"] == pytest.approx(ev.fit_seconds.mean())
    assert parent["metrics.predict_seconds_mean"] == pytest.approx(ev.predict_seconds.mean())
    assert parent["tags.rule"] == "track" and parent["tags.config_hash"] == "abc123def456"
    assert json.loads(parent["tags.wildcards"]) == TAGS["wildcards"]
    assert parent["tags.hlm.pair"] == "ds1/knn"
    k = [json.loads(p)["n_neighbors"] for p in ev.params]
    top = max(k, key=lambda v: (k.count(v), -k.index(v)))  # the most frequent, the first of ties
    assert parent["params.chosen_params"] == f"n_neighbors={top} ({k.count(top)}/{N})"

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
    from hlm.datasets._prepare import file_sha256

    assert digest == file_sha256(e)
    _, changed = log(store, seed=2)  # a different result replaces
    assert changed != first and MlflowClient().get_run(first).info.lifecycle_stage == "deleted"


def test_parent_of_an_earlier_version_gets_the_summary_params(store):
    """A parent logged before ``chosen_params`` existed, for the same result file, gets it in place:
    same run, no new runs."""
    tracking.init_store()
    ev, _ = log(store)
    client = MlflowClient()
    with pytest.MonkeyPatch.context() as m:  # what an earlier version logged: no chosen_params
        m.setattr(tracking, "_summary_params", lambda evaluation: {})
        m.setattr(tracking, "SUMMARY_PARAMS", ())
        _, old = log(store, dataset="ds2")
    assert "chosen_params" not in client.get_run(old).data.params
    _, again = log(store, dataset="ds2")
    assert again == old and len(pair_frame("ds2/knn")) == 1 + N
    assert client.get_run(old).data.params["chosen_params"] == tracking.chosen_summary(
        [json.loads(p) for p in ev.params])


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


@pytest.mark.parametrize("mask", [0o022, 0o002], ids=["umask022", "umask002"])
def test_artifact_copies_keep_the_umask_mode(store, mask):
    """MLflow copies the result files with their mode (shutil.copystat): the umask's, as the artifacts."""
    old = os.umask(mask)
    try:
        tracking.init_store()
        ev, e, p = make_pair(store, "ds6", "hlm_vsh")
        ev["model"] = [json.dumps({"split": int(k)}) for k in ev.split]  # model.json: logged from text
        write_frame(ev, e, {"dataset": "ds6", "method": "hlm_vsh", "to_distance": "bound_minus"})
        tracking.log_pair(dataset="ds6", method="hlm_vsh", evaluation_path=e, prediction_path=p,
                          tags=TAGS, params=PARAMS)
    finally:
        os.umask(old)
    copies = [f for f in (store / "mlruns").rglob("*") if f.is_file()]
    assert {f.name for f in copies} == {"hlm_vsh.parquet", "model.json"} and len(copies) == 2 + N
    assert {f.stat().st_mode & 0o777 for f in [e, p, *copies]} == {0o666 & ~mask}


class Killed(BaseException):
    """Stands for SIGKILL: not an Exception, so nothing catches it."""


#: the client calls that write to the store, in the order log_pair makes them
WRITES = ("create_run", "log_batch", "log_artifact", "log_text", "set_terminated", "delete_run")


def _kill_at(monkeypatch, k):
    """Make the k-th (0-based) store write of this process raise Killed (None: none); return the
    names of the writes made."""
    calls = []
    for name in WRITES:
        real = getattr(MlflowClient, name)

        def write(self, *args, _real=real, _name=name, **kwargs):
            if k is not None and len(calls) == k:
                raise Killed(_name)
            calls.append(_name)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(MlflowClient, name, write)
    return calls


def assert_one_result(pair, evaluation_path, n=N):
    """Exactly one active FINISHED parent recording this file, with one FINISHED child per split."""
    from hlm.datasets._prepare import file_sha256

    runs = pair_frame(pair)
    parents = runs[runs["tags.hlm.role"] == "parent"]
    assert len(parents) == 1, parents[["run_id", "status", "tags.hlm.digest"]]
    parent = parents.iloc[0]
    assert parent["tags.hlm.digest"] == file_sha256(evaluation_path)
    children = runs[runs["tags.hlm.role"] == "child"]
    assert (children["tags.mlflow.parentRunId"] == parent.run_id).all()
    assert sorted(children["tags.hlm.split"].astype(int)) == list(range(n))
    assert set(runs.status) == {"FINISHED"} and len(runs) == 1 + n


@pytest.mark.parametrize("previous", [False, True], ids=["first-log", "replacing"])
def test_killed_logging_converges(store, previous):
    """A track job killed before any one of its store writes: the next call leaves exactly one
    parent (recording the new file) with one child per split, none duplicated, none missing.

    ``replacing``: the pair already had a result (another file), which the killed job was replacing.
    """
    n = 2  # splits: 3 runs per pair keep the loop over every kill point short
    tracking.init_store()
    with pytest.MonkeyPatch.context() as m:  # the writes of one uninterrupted call
        if previous:
            log(store, dataset="count", seed=7, n=n)
        calls = _kill_at(m, None)
        log(store, dataset="count", seed=1, n=n)
    assert calls == ["create_run", "log_batch", "log_artifact", "log_artifact", *["create_run", "log_batch"] * n,
                     *["set_terminated"] * (1 + n), *(["delete_run"] * (1 + n) if previous else [])]
    for k in range(len(calls)):
        ds = f"ds{k}"
        if previous:
            log(store, dataset=ds, seed=7, n=n)
        with pytest.MonkeyPatch.context() as m:
            _kill_at(m, k)
            with pytest.raises(Killed):
                log(store, dataset=ds, seed=1, n=n)
        log(store, dataset=ds, seed=1, n=n)  # the rerun
        assert_one_result(f"{ds}/knn", store / f"results/evaluation/{ds}/knn.parquet", n=n)


def test_staging_files_of_a_killed_upload_are_removed(store):
    """MLflow stages an artifact as .artifact.uploading.* beside it: the rerun removes those of the killed job."""
    tracking.init_store()
    with pytest.MonkeyPatch.context() as m:
        _kill_at(m, 3)  # create parent, log its batch, copy the evaluation; killed copying the predictions
        with pytest.raises(Killed):
            log(store)
    (partial,) = MlflowClient().search_runs([tracking.init_store()])
    folder = store / "mlruns" / partial.info.run_id / "artifacts"
    assert partial.info.artifact_uri == folder.as_uri() and (folder / "evaluation/knn.parquet").exists()
    staged = folder / "predictions/.artifact.uploading.k2j4_x8q"
    staged.parent.mkdir()
    staged.write_bytes(b"half")
    log(store)
    assert not staged.exists() and (folder / "evaluation/knn.parquet").exists()
    assert_one_result("ds1/knn", store / "results/evaluation/ds1/knn.parquet")
