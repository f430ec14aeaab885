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

The MLflow 3.17 UI opens an experiment on the GenAI overview unless the
browser's sidebar switch says "Model training" (URL parameter ``workflowType``,
else the browser's local storage; the experiment tag ``mlflow.experimentKind``
is no longer read), and its runs table shows no metric or parameter column until
one is picked. :func:`init_store` therefore stores, in the experiment's tags, a
saved runs-table view (:data:`VIEW_KEY`: the parent runs with ``error_rate_mean``,
``error_rate_sd``, ``to_distance`` and ``chosen_params``) and a description
whose first line links to it (:func:`ui_path`); see :func:`init_store`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlparse

_MLFLOW_PREIMPORTED = "mlflow" in sys.modules
os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"

import pandas as pd  # noqa: E402
from mlflow.entities import Metric, Param, RunStatus, ViewType  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

from hlm.datasets._artifacts import read_metadata  # noqa: E402
from hlm.errors import ConfigError  # noqa: E402
from hlm.pipeline.faults import fault_point  # noqa: E402

if _MLFLOW_PREIMPORTED:  # mlflow started its telemetry client before we set the variable
    from mlflow.telemetry import set_telemetry_client

    set_telemetry_client()  # re-reads MLFLOW_DISABLE_TELEMETRY -> drops the client

PAIR_TAG = "hlm.pair"
DIGEST_TAG = "hlm.digest"
PARENT_TAG = "mlflow.parentRunId"
RETRY_SECONDS = 60.0

# Experiment tags read by the MLflow UI (names and formats of MLflow 3.17's UI bundle).
KIND_TAG = "mlflow.experimentKind"  # earlier 3.x UIs open the runs table for it; 3.17's ignores it
NOTE_TAG = "mlflow.note.content"  # the experiment's description (Markdown)
VIEW_KEY = "hlm-results"  # ?viewStateShareKey=...: the saved view in tag mlflow.sharedViewState.<key>
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
VIEW_NAME = "hlm results"
#: the view's columns (after Run Name and Created) and their widths in pixels
VIEW_COLUMNS = {"metrics.`error_rate_mean`": 125, "metrics.`error_rate_sd`": 110,
                "params.`to_distance`": 110, "params.`chosen_params`": 360}

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

    New and existing experiments (made by earlier versions) get the tags the
    MLflow UI reads (:func:`_ui_tags`): the saved runs-table view :data:`VIEW_TAG`
    (rewritten when it differs from :func:`view_state`), ``mlflow.experimentKind``
    = ``custom_model_development`` and a description linking to the view (both
    only when missing: a description edited in the UI is kept).
    """
    with _init_lock():
        client = _retry(_client)
        exp = _retry(client.get_experiment_by_name, experiment)
        if exp is None:
            root = artifact_root()
            root.mkdir(parents=True, exist_ok=True)
            exp_id = _retry(client.create_experiment, experiment, artifact_location=root.as_uri())
            exp = _retry(client.get_experiment, exp_id)
        elif exp.lifecycle_stage == "deleted":
            _retry(client.restore_experiment, exp.experiment_id)
        _ui_tags(client, exp.experiment_id, exp.tags)
        return exp.experiment_id


def view_state() -> dict:
    """The runs-table state of the saved view :data:`VIEW_KEY` (MLflow UI's search facets and UI state).

    The top-level runs (parents and incremental schemes; the per-split children
    are filtered out, so that one page of the table holds every pair) sorted by
    name, i.e. by data set then method, with :data:`VIEW_COLUMNS` (the UI
    applies a width only to a column listed in ``columnOrder``).
    """
    return {
        "searchFilter": "tags.`hlm.role` != 'child'",
        "orderByKey": "tags.`mlflow.runName`",
        "orderByAsc": True,
        "selectedColumns": list(VIEW_COLUMNS),
        "columnOrder": list(VIEW_COLUMNS),
        "columnWidths": dict(VIEW_COLUMNS),
    }


def ui_path(experiment_id: str) -> str:
    """The UI's address (after ``http://host:port/``) of the runs table in the saved view."""
    return f"#/experiments/{experiment_id}/runs?workflowType=machine_learning&viewStateShareKey={VIEW_KEY}"


def _note(experiment_id: str) -> str:
    return (
        f"[Runs table: error rates and chosen parameters]({ui_path(experiment_id)}) (opens in a new tab). "
        "One run per (data set, method) with `error_rate_mean`, `error_rate_sd` (%, over the splits) "
        "and `chosen_params` (the cross-validated choices: value and number of splits, or median and "
        "range); its per-split runs are nested under it (this view hides them: clear the search box to "
        "see them). Without the link: switch the sidebar to *Model training*, open *Runs*, then "
        "*Views* \u25b8 *hlm results*."
    )


def _ui_tags(client, exp_id: str, tags: dict) -> None:
    """Set the experiment tags the MLflow UI reads, writing only those that change."""
    wanted = {}
    if KIND_TAG not in tags:
        wanted[KIND_TAG] = "custom_model_development"
    if not tags.get(NOTE_TAG):
        wanted[NOTE_TAG] = _note(exp_id)
    state = json.dumps(view_state(), sort_keys=True)
    try:
        old = json.loads(tags[VIEW_TAG])
        created = int(old["createdAt"])
        current = old["state"] == state and old["name"] == VIEW_NAME
    except (KeyError, TypeError, ValueError):
        created, current = None, False
    if not current:
        now = int(time.time() * 1000)
        wanted[VIEW_TAG] = json.dumps({"name": VIEW_NAME, "createdAt": created or now, "updatedAt": now,
                                       "state": state})
    for key, value in wanted.items():
        _retry(client.set_experiment_tag, exp_id, key, value)


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
    from hlm.datasets._prepare import file_sha256

    digest = file_sha256(path)
    exp_id = init_store(experiment)
    return exp_id, digest, logged_run(pair, digest, experiment)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, dict)):
        return f"<{len(value)}-vector>" if isinstance(value, list) else "<dict>"
    return value if isinstance(value, str) else json.dumps(value)


def chosen_summary(choices: list[dict]) -> str:
    """One line summarising the per-split CV choices (the evaluation's ``params`` JSON).

    Per parameter, in order of appearance: ``name=value`` when every split chose
    the same value; ``name~median (min..max)`` for non-integer numbers that
    differ in more than half the splits (estimates such as a kernel scale); else the most
    frequent value and its count, ``name=value (k/n)``. Vectors show as
    ``<len-vector>``. ``none`` when the method has no parameters.
    """
    n = len(choices)
    keys = list(dict.fromkeys(k for c in choices for k in c))
    parts = []
    for key in keys:
        values = [c[key] for c in choices if key in c]
        shown = Counter(_fmt(v) for v in values)
        top, count = shown.most_common(1)[0]
        continuous = (all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
                      and any(isinstance(v, float) and not v.is_integer() for v in values))
        if any(isinstance(v, list) for v in values):
            parts.append(f"{key}={top}")
        elif len(shown) == 1:
            parts.append(f"{key}={top}" + ("" if len(values) == n else f" ({len(values)}/{n})"))
        elif continuous and len(shown) > len(values) / 2:
            parts.append(f"{key}~{_fmt(float(statistics.median(values)))} "
                         f"({_fmt(float(min(values)))}..{_fmt(float(max(values)))})")
        else:
            parts.append(f"{key}={top} ({count}/{n})")
    return ", ".join(parts)[:1000] or "none"


def _choices(evaluation: pd.DataFrame) -> list[dict]:
    if "params" not in evaluation:
        return []
    return [json.loads(p) if isinstance(p, str) and p else {} for p in evaluation["params"]]


#: parent params derived from the evaluation, logged into parents of earlier versions that lack them
SUMMARY_PARAMS = ("chosen_params",)


def _summary_params(evaluation: pd.DataFrame) -> dict:
    return {"chosen_params": chosen_summary(_choices(evaluation))}


def _complete_parent(client, run_id: str, evaluation_path) -> None:
    """Log the :func:`_summary_params` that a parent logged by an earlier version lacks."""
    have = _retry(client.get_run, run_id).data.params
    if all(k in have for k in SUMMARY_PARAMS):
        return
    evaluation = pd.read_parquet(evaluation_path).sort_values("split")
    missing = {k: v for k, v in _summary_params(evaluation).items() if k not in have}
    _retry(client.log_batch, run_id, params=[Param(k, _str(v)) for k, v in missing.items()])


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
    metadata), ``chosen_params`` (the splits' CV choices in one line,
    :func:`chosen_summary`) plus ``params``; metrics ``error_rate_mean``, ``error_rate_sd``
    (ddof=1), ``fit_seconds_mean``, ``predict_seconds_mean``, ``n_splits``, and for a method with class
    probabilities ``log_loss_mean``, ``brier_mean`` and ``n_clipped`` (over the splits); tags
    ``tags`` plus ``hlm.pair``; metric ``n_splits_with_warnings``; the two Parquet files as artifacts
    (``evaluation/``, ``predictions/``). Children (``{pair}/split-{k:02d}``):
    params = the split's CV choice plus ``split``; metrics ``error_rate``,
    ``fit_seconds``, ``predict_seconds``, ``n_train``, ``n_test`` (and ``log_loss``, ``brier``,
    ``n_clipped`` with probabilities; docs/beyond-the-paper-spec.md section 3); tags ``tags``
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
    left them behind; and a parent logged by an earlier version of this module
    gets the params it lacks (``chosen_params``). Returns the parent run id.
    """
    pair = f"{dataset}/{method}"
    exp_id, digest, existing = _open(pair, evaluation_path, experiment)
    client = _client()
    if existing:
        _complete_parent(client, existing, evaluation_path)
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
                "to_distance": meta.get("to_distance", "unknown"), **_summary_params(evaluation), **params},
        metrics={
            "error_rate_mean": err.mean(),
            "error_rate_sd": err.std(ddof=1),
            "fit_seconds_mean": evaluation["fit_seconds"].mean(),
            "predict_seconds_mean": evaluation["predict_seconds"].mean(),
            "n_splits": len(evaluation),
            "n_splits_with_warnings": int(sum(bool(_warnings(r)) for r in evaluation.itertuples())),
            **_probability_means(evaluation),
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
            metrics={c: getattr(row, c, float("nan")) for c in
                     ("error_rate", "fit_seconds", "predict_seconds", "n_train", "n_test", *PROBABILITY_METRICS)},
        ))
        if len(children) == 1:  # the parent and a first child logged, RUNNING: where the fault test kills
            fault_point(f"track/{dataset}")
    for child_id, row in zip(children, evaluation.itertuples(index=False)):
        model = getattr(row, "model", None)
        if isinstance(model, str) and model:  # a fitted HLM mixture (JSON)
            _retry(client.log_text, child_id, model, "model.json")
    _finish(client, [*children, parent_id], pair, experiment)
    return parent_id


#: the per-split scores of class probabilities (NaN, hence not logged, for a method without them)
PROBABILITY_METRICS = ("log_loss", "brier", "n_clipped")


def _probability_means(evaluation: pd.DataFrame) -> dict:
    """The parent's ``log_loss_mean``, ``brier_mean`` and ``n_clipped`` (total), over the splits scored."""
    if "log_loss" not in evaluation or evaluation["log_loss"].isna().all():
        return {}
    return {"log_loss_mean": evaluation["log_loss"].mean(), "brier_mean": evaluation["brier"].mean(),
            "n_clipped": evaluation["n_clipped"].sum()}


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


def _log_curve(pair: str, path, experiment: str, *, role: str, tags: dict, params: dict, summarize) -> str:
    """One run for a result file whose metrics have steps (a learning curve, HMAC's levels): skipped when the
    pair's run already records this file (same SHA-256), else logged and the pair's older runs removed.
    ``summarize(frame)`` gives (single metrics, {step: {metric: value}})."""
    exp_id, digest, existing = _open(pair, path, experiment)
    client = _client()
    if existing:
        _keep_only(client, existing, pair, experiment)
        return existing
    metrics, per_step = summarize(pd.read_parquet(path))
    run_id = _run(client, exp_id, pair, tags={**tags, PAIR_TAG: pair, "hlm.role": role, DIGEST_TAG: digest},
                  params=params, metrics=metrics, artifacts=[(role, path)])
    ts = int(time.time() * 1000)
    steps = [Metric(name, float(value), ts, int(step)) for step, row in per_step.items()
             for name, value in row.items() if not pd.isna(value)]
    _retry(client.log_batch, run_id, metrics=steps)
    _finish(client, [run_id], pair, experiment)
    return run_id


def log_incremental(*, dataset: str, scheme: str, path: str | os.PathLike, tags: dict, params: dict,
                    experiment: str = "hlm") -> str:
    """Log one (dataset, incremental scheme) as one run with the learning curve as metric steps.

    Metrics per round r (step = r): ``error_rate_mean``, ``error_rate_sd`` (over the
    splits), ``round_seconds_mean``, ``n_seen``, ``n_components_mean``; single
    values ``total_seconds_mean`` (Table 5) and ``last_round_error_mean``. The
    Parquet file is the artifact. Reruns replace the previous run (tag ``hlm.pair``
    = ``{dataset}/{scheme}``), or log nothing for the same file, as in :func:`log_pair`.
    """

    def summarize(frame):
        per_round = frame.groupby("round").agg(
            error_rate_mean=("error_rate", "mean"), error_rate_sd=("error_rate", "std"),
            round_seconds_mean=("round_seconds", "mean"), n_seen=("n_seen", "mean"),
            n_components_mean=("n_components", "mean"),
        )
        totals = frame.groupby("split")["round_seconds"].sum()
        return ({"total_seconds_mean": totals.mean(), "n_splits": totals.size,
                 "last_round_error_mean": per_round["error_rate_mean"].iloc[-1]},
                per_round.to_dict(orient="index"))

    return _log_curve(f"{dataset}/{scheme}", path, experiment, role="incremental", tags=tags,
                      params={"dataset": dataset, "scheme": scheme, **params}, summarize=summarize)


def log_hmac(*, dataset: str, path: str | os.PathLike, tags: dict, params: dict, experiment: str = "hlm") -> str:
    """Log HMAC on one data set as one run whose metric steps are the levels (step = level).

    Metrics per level: ``n_clusters``, ``bandwidth``, ``largest_cluster``; single values ``total_seconds``
    and ``n_levels``. The level sizes are the artifact (the Parquet file). Reruns replace the previous run
    (tag ``hlm.pair`` = ``{dataset}/hmac``), or log nothing for the same file, as in :func:`log_pair`.
    """

    def summarize(frame):
        per_level = {int(r.level): {"n_clusters": r.n_clusters, "bandwidth": r.bandwidth,
                                    "largest_cluster": max(r.sizes)} for r in frame.itertuples()}
        return {"total_seconds": float(frame["total_seconds"].iloc[0]), "n_levels": len(frame)}, per_level

    return _log_curve(f"{dataset}/hmac", path, experiment, role="hmac", tags=tags,
                      params={"dataset": dataset, **params}, summarize=summarize)


__all__ = [
    "init_store", "log_pair", "log_incremental", "log_hmac", "logged_run", "pair_runs",
    "tracking_uri", "artifact_root", "chosen_summary", "view_state", "ui_path",
]
