"""MLflow tracking of evaluation results in an embedded SQLite store (no server).

Settings come only from the environment:

- ``MLFLOW_TRACKING_URI`` (required), e.g. ``sqlite:////abs/path/mlflow.db``;
- ``HLM_MLFLOW_ARTIFACTS``: artifact root directory; default ``mlruns`` next to
  the SQLite file (required for non-SQLite URIs);
- ``MLFLOW_DISABLE_TELEMETRY`` is forced to ``true`` when this module is imported.

Each (dataset, method) pair is one parent run with a nested child run per
split; logging a pair again replaces (soft-deletes) its earlier runs, unless
they already record the same result file (tag ``hlm.digest``, the SHA-256 of
the evaluation Parquet): then nothing is logged. After a killed job, whatever
point the kill came at, the next call leaves exactly one finished parent per
pair with one child per split (see :func:`log_pair`). The pipeline logs from
one job per data set (rule ``track``), so MLflow is imported and its store
opened once per data set rather than once per method job.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import random
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

_MLFLOW_PREIMPORTED = "mlflow" in sys.modules
os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"

import pandas as pd  # noqa: E402
from mlflow.entities import Metric, Param, RunStatus, ViewType  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

from hlm.data.artifacts import read_metadata  # noqa: E402
from hlm.errors import ConfigError  # noqa: E402

if _MLFLOW_PREIMPORTED:  # mlflow started its telemetry client before we set the variable
    from mlflow.telemetry import set_telemetry_client

    set_telemetry_client()  # re-reads MLFLOW_DISABLE_TELEMETRY -> drops the client

PAIR_TAG = "hlm.pair"
DIGEST_TAG = "hlm.digest"
PARENT_TAG = "mlflow.parentRunId"
RETRY_SECONDS = 60.0

_log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- settings
def tracking_uri() -> str:
    """``MLFLOW_TRACKING_URI`` (raises ConfigError if unset)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if not uri:
        raise ConfigError("MLFLOW_TRACKING_URI is not set (e.g. sqlite:////abs/path/mlflow.db)")
    return uri


def _sqlite_file() -> Path | None:
    uri = tracking_uri()
    if not uri.startswith("sqlite:///"):
        return None
    return Path(unquote(urlparse(uri).path)).resolve()


def artifact_root() -> Path:
    """``HLM_MLFLOW_ARTIFACTS``, else ``mlruns`` next to the SQLite database file."""
    root = os.environ.get("HLM_MLFLOW_ARTIFACTS", "").strip()
    if root:
        return Path(root).resolve()
    db = _sqlite_file()
    if db is None:
        raise ConfigError(f"HLM_MLFLOW_ARTIFACTS must be set for tracking URI {tracking_uri()!r}")
    return db.parent / "mlruns"


@contextlib.contextmanager
def _init_lock():
    """Exclusive lock file ``<db>-init.lock`` serialising schema/experiment creation.

    MLflow's SQLite tracking store creates its tables without a lock, so two
    processes opening a fresh database race ("table alembic_version already exists").
    """
    db = _sqlite_file()
    if db is None:
        yield
        return
    db.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{db}-init.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _client() -> MlflowClient:
    return MlflowClient(tracking_uri=tracking_uri())


# --------------------------------------------------------------------------- retries
def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "database table is locked" in text


def _retry(call, *args, **kwargs):
    """Call ``call``; on SQLite lock errors retry with jittered backoff for ~60 s."""
    deadline = time.monotonic() + RETRY_SECONDS
    delay = 0.05
    while True:
        try:
            return call(*args, **kwargs)
        except Exception as exc:  # MlflowException or sqlalchemy/sqlite3 OperationalError
            if not _is_lock_error(exc) or time.monotonic() + delay > deadline:
                raise
            _log.warning("tracking store locked; retrying %s in %.2f s", call.__name__, delay)
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 5.0)


# --------------------------------------------------------------------------- store
def init_store(experiment: str = "hlm") -> str:
    """Create the store's schema and ``experiment`` if missing; return its id (idempotent).

    The experiment's artifact location is the file URI of :func:`artifact_root`;
    an existing experiment keeps the location it was created with. Safe to call
    from concurrent processes (serialised by a lock file next to the database).
    """
    with _init_lock():
        client = _retry(_client)
        exp = _retry(client.get_experiment_by_name, experiment)
        if exp is not None:
            if exp.lifecycle_stage == "deleted":
                _retry(client.restore_experiment, exp.experiment_id)
            return exp.experiment_id
        root = artifact_root()
        root.mkdir(parents=True, exist_ok=True)
        return _retry(client.create_experiment, experiment, artifact_location=root.as_uri())


# --------------------------------------------------------------------------- logging
def _str(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _metrics(values: dict, ts: int) -> list[Metric]:
    return [Metric(k, float(v), ts, 0) for k, v in values.items() if not pd.isna(v)]


def _run(client, exp_id, name, tags, params, metrics, artifacts=()) -> str:
    run = _retry(client.create_run, exp_id, run_name=name, tags={k: _str(v) for k, v in tags.items()})
    run_id = run.info.run_id
    ts = int(time.time() * 1000)
    _retry(
        client.log_batch,
        run_id,
        metrics=_metrics(metrics, ts),
        params=[Param(k, _str(v)) for k, v in params.items()],
    )
    for sub, path in artifacts:
        _retry(client.log_artifact, run_id, str(path), artifact_path=sub)
    return run_id


def _pair_runs(client, pair: str, experiment: str) -> list:
    """The active runs (parents and children) tagged ``hlm.pair == pair``."""
    exp = _retry(client.get_experiment_by_name, experiment)
    if exp is None:
        return []
    runs, token = [], None
    while True:
        page = _retry(
            client.search_runs,
            [exp.experiment_id],
            filter_string=f"tags.`{PAIR_TAG}` = '{pair}'",
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=1000,
            page_token=token,
        )
        runs += list(page)
        token = page.token
        if not token:
            return runs


def pair_runs(pair: str, experiment: str = "hlm") -> list[str]:
    """Ids of the active runs (parents and children) tagged ``hlm.pair == pair``."""
    return [r.info.run_id for r in _pair_runs(_client(), pair, experiment)]


def logged_run(pair: str, digest: str, experiment: str = "hlm") -> str | None:
    """Id of the pair's finished active top-level run that records the result file with this digest, if any."""
    client = _client()
    exp = _retry(client.get_experiment_by_name, experiment)
    if exp is None:
        return None
    runs = _retry(
        client.search_runs,
        [exp.experiment_id],
        filter_string=f"tags.`{PAIR_TAG}` = '{pair}' and tags.`{DIGEST_TAG}` = '{digest}' "
                      "and attributes.status = 'FINISHED'",
        run_view_type=ViewType.ACTIVE_ONLY,
        max_results=1,
    )
    return runs[0].info.run_id if runs else None


def _open(pair: str, path, experiment: str) -> tuple[str, str, str | None]:
    """(experiment id, SHA-256 of the result file, the pair's run already recording it or None)."""
    from hlm.data.prepare import file_sha256

    digest = file_sha256(path)
    exp_id = init_store(experiment)
    return exp_id, digest, logged_run(pair, digest, experiment)


def _warnings(row) -> list[str]:
    """Warnings the fit raised on one split (the evaluation's ``warnings`` JSON column)."""
    raw = getattr(row, "warnings", None)
    return json.loads(raw) if isinstance(raw, str) and raw else []


def log_pair(
    *,
    dataset: str,
    method: str,
    evaluation_path: str | os.PathLike,
    prediction_path: str | os.PathLike,
    tags: dict,
    params: dict,
    experiment: str = "hlm",
) -> str:
    """Log one (dataset, method) evaluation as a parent run with a child run per split.

    Parent: params ``dataset``, ``method``, ``to_distance`` (from the evaluation
    metadata) plus ``params``; metrics ``error_rate_mean``, ``error_rate_sd``
    (ddof=1), ``fit_seconds_mean``, ``predict_seconds_mean``, ``n_splits``; tags
    ``tags`` plus ``hlm.pair``; metric ``n_splits_with_warnings``; the two Parquet files as artifacts
    (``evaluation/``, ``predictions/``). Children (``{pair}/split-{k:02d}``):
    params = the split's CV choice plus ``split``; metrics ``error_rate``,
    ``fit_seconds``, ``predict_seconds``, ``n_train``, ``n_test``; tags ``tags``
    plus ``hlm.pair``, ``hlm.split``, ``hlm.cv_folds`` (folds used; fewer than
    ``params["cv_folds"]`` when a class is that small, then the parent is tagged
    ``hlm.cv_folds_reduced``), the parent link and ``hlm.warnings`` (the
    split's fit warnings, e.g. singleton classes or zero distances) when any;
    artifact ``model.json`` when the evaluation has a ``model`` (fitted HLM mixture).

    The new runs are created first and marked FINISHED last (children, then the
    parent); only then are the pair's older active runs soft-deleted. A killed
    job thus never removes the previous result, and its half-logged runs (status
    RUNNING) are deleted by the next call. If the pair's current runs already
    record this evaluation file (same SHA-256, tag ``hlm.digest`` on a FINISHED
    parent, hence with all its children), nothing is logged, but the pair's
    other active runs are still soft-deleted: a job killed while it deleted them
    left them behind. Returns the parent run id.
    """
    pair = f"{dataset}/{method}"
    exp_id, digest, existing = _open(pair, evaluation_path, experiment)
    client = _client()
    if existing:
        _keep_only(client, existing, pair, experiment)
        return existing
    evaluation = pd.read_parquet(evaluation_path).sort_values("split")
    meta = read_metadata(evaluation_path)
    base_tags = {**tags, PAIR_TAG: pair}
    err = evaluation["error_rate"].astype(float)
    folds = evaluation["cv_folds"].astype(int) if "cv_folds" in evaluation else None
    reduced = folds is not None and "cv_folds" in params and bool((folds < int(params["cv_folds"])).any())
    parent_id = _run(
        client, exp_id, pair,
        tags={**base_tags, "hlm.role": "parent", DIGEST_TAG: digest,
              **({"hlm.cv_folds_reduced": f"{int(folds.min())}-{int(folds.max())} of {params['cv_folds']} folds"}
                 if reduced else {})},
        params={"dataset": dataset, "method": method,
                "to_distance": meta.get("to_distance", "unknown"), **params},
        metrics={
            "error_rate_mean": err.mean(),
            "error_rate_sd": err.std(ddof=1),
            "fit_seconds_mean": evaluation["fit_seconds"].mean(),
            "predict_seconds_mean": evaluation["predict_seconds"].mean(),
            "n_splits": len(evaluation),
            "n_splits_with_warnings": int(sum(bool(_warnings(r)) for r in evaluation.itertuples())),
        },
        artifacts=[("evaluation", evaluation_path), ("predictions", prediction_path)],
    )
    children = []
    for row in evaluation.itertuples(index=False):
        k = int(row.split)
        cv = json.loads(row.params) if isinstance(row.params, str) and row.params else {}
        children.append(_run(
            client, exp_id, f"{pair}/split-{k:02d}",
            tags={**base_tags, "hlm.role": "child", "hlm.split": str(k), PARENT_TAG: parent_id,
                  **({"hlm.cv_folds": str(int(row.cv_folds))} if folds is not None else {}),
                  **({"hlm.warnings": "; ".join(_warnings(row))[:5000]} if _warnings(row) else {})},
            params={**cv, "split": k},
            metrics={c: getattr(row, c) for c in
                     ("error_rate", "fit_seconds", "predict_seconds", "n_train", "n_test")},
        ))
    for child_id, row in zip(children, evaluation.itertuples(index=False)):
        model = getattr(row, "model", None)
        if isinstance(model, str) and model:  # a fitted HLM mixture (JSON)
            _retry(client.log_text, child_id, model, "model.json")
    _finish(client, [*children, parent_id], pair, experiment)
    return parent_id


def _finish(client, new_runs: list[str], pair: str, experiment: str) -> None:
    """Mark the new runs FINISHED (the parent, last in ``new_runs``, after its children),
    then soft-delete the pair's older active runs (rerun replacement)."""
    for run_id in new_runs:
        _retry(client.set_terminated, run_id, RunStatus.to_string(RunStatus.FINISHED))
    _keep_only(client, new_runs[-1], pair, experiment)


def _keep_only(client, parent_id: str, pair: str, experiment: str) -> None:
    """Soft-delete the pair's active runs other than ``parent_id`` and its children.

    Runs that never finished were being logged by a killed job: their artifact
    folders may hold MLflow's staging files (``.artifact.uploading.*``), which are
    removed. (Snakemake runs one ``track`` job per data set at a time: the output
    ``results/tracking/{dataset}.json`` is locked, so no live job owns them. A store
    that another project or a hand-run script writes to at the same time, under the
    same experiment and pair names, is not supported.)
    """
    for run in _pair_runs(client, pair, experiment):
        if run.info.run_id == parent_id or run.data.tags.get(PARENT_TAG) == parent_id:
            continue
        _retry(client.delete_run, run.info.run_id)
        if run.info.status != RunStatus.to_string(RunStatus.FINISHED):
            _remove_staging_files(run.info.artifact_uri)


def _remove_staging_files(artifact_uri: str | None) -> None:
    """Remove MLflow's temporaries of interrupted uploads from a local artifact folder."""
    try:  # a private name of MLflow's; its value in 3.17 otherwise
        from mlflow.store.artifact.local_artifact_repo import _TEMP_ARTIFACT_PREFIX
    except ImportError:  # pragma: no cover - another MLflow version
        _TEMP_ARTIFACT_PREFIX = ".artifact.uploading."

    if not artifact_uri or not artifact_uri.startswith("file:"):
        return
    folder = Path(unquote(urlparse(artifact_uri).path))
    for tmp in folder.rglob(f"{_TEMP_ARTIFACT_PREFIX}*"):
        with contextlib.suppress(OSError):
            tmp.unlink()


def log_incremental(*, dataset: str, scheme: str, path: str | os.PathLike, tags: dict, params: dict,
                    experiment: str = "hlm") -> str:
    """Log one (dataset, incremental scheme) as one run with the learning curve as metric steps.

    Metrics per round r (step = r): ``error_rate_mean``, ``error_rate_sd`` (over the
    splits), ``round_seconds_mean``, ``n_seen``, ``n_components_mean``; single
    values ``total_seconds_mean`` (Table 5) and ``last_round_error_mean``. The
    Parquet file is the artifact. Reruns replace the previous run (tag ``hlm.pair``
    = ``{dataset}/{scheme}``), or log nothing for the same file, as in :func:`log_pair`.
    """
    pair = f"{dataset}/{scheme}"
    exp_id, digest, existing = _open(pair, path, experiment)
    client = _client()
    if existing:
        _keep_only(client, existing, pair, experiment)
        return existing
    frame = pd.read_parquet(path)
    per_round = frame.groupby("round").agg(
        error_rate_mean=("error_rate", "mean"), error_rate_sd=("error_rate", "std"),
        round_seconds_mean=("round_seconds", "mean"), n_seen=("n_seen", "mean"),
        n_components_mean=("n_components", "mean"),
    )
    totals = frame.groupby("split")["round_seconds"].sum()
    run_id = _run(
        client, exp_id, pair, tags={**tags, PAIR_TAG: pair, "hlm.role": "incremental", DIGEST_TAG: digest},
        params={"dataset": dataset, "scheme": scheme, **params},
        metrics={"total_seconds_mean": totals.mean(), "n_splits": totals.size,
                 "last_round_error_mean": per_round["error_rate_mean"].iloc[-1]},
        artifacts=[("incremental", path)],
    )
    ts = int(time.time() * 1000)
    steps = [Metric(name, float(value), ts, int(r)) for r, row in per_round.iterrows()
             for name, value in row.items() if not pd.isna(value)]
    _retry(client.log_batch, run_id, metrics=steps)
    _finish(client, [run_id], pair, experiment)
    return run_id


__all__ = [
    "init_store", "log_pair", "log_incremental", "logged_run", "pair_runs",
    "tracking_uri", "artifact_root",
]