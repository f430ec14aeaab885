"""Pipeline stage: mirror one data set's results into MLflow (workflow/rules/track.smk).

One job per data set logs every (method, data set) evaluation and every
incremental scheme of it, so MLflow is imported and its SQLite store opened
once per data set instead of once per method job. A result file already logged
(same SHA-256) is skipped, so rerunning this job after one method changed logs
that method only. Tags: the rule and wildcards that produced each file, and the
config hash and git commit recorded in its Parquet metadata.
"""

from __future__ import annotations

import json
import logging

from hlm.datasets._artifacts import read_metadata, write_text

log = logging.getLogger("hlm")

PROVENANCE = ("config_hash", "git_commit")


def track(*, dataset: str, evaluations: dict[str, tuple[str, str]], incremental: dict[str, str],
          run_params: dict, incremental_run_params: dict, experiment: str, out: str,
          hmac: str | None = None) -> None:
    """Log ``evaluations`` (method -> (evaluation, predictions) Parquet), ``incremental``
    (scheme -> Parquet) and ``hmac`` (HMAC's levels, Parquet) of ``dataset``; write ``out``: JSON of
    pair -> MLflow run id."""
    from hlm.pipeline import tracking

    wildcards = f"dataset={dataset}"
    logged = {}
    for method, (evaluation, predictions) in evaluations.items():
        meta = read_metadata(evaluation)
        logged[f"{dataset}/{method}"] = tracking.log_pair(
            dataset=dataset, method=method, evaluation_path=evaluation, prediction_path=predictions,
            tags={**_provenance(meta), "rule": method, "wildcards": wildcards},
            params={**run_params, "to_distance": meta.get("to_distance", "unknown")}, experiment=experiment,
        )
    for scheme, path in incremental.items():
        meta = read_metadata(path)
        logged[f"{dataset}/{scheme}"] = tracking.log_incremental(
            dataset=dataset, scheme=scheme, path=path,
            tags={**_provenance(meta), "rule": f"incremental_{scheme}", "wildcards": wildcards},
            params={**incremental_run_params, **meta.get("params", {})}, experiment=experiment,
        )
    if hmac:
        meta = read_metadata(hmac)
        logged[f"{dataset}/hmac"] = tracking.log_hmac(
            dataset=dataset, path=hmac, tags={**_provenance(meta), "rule": "hmac", "wildcards": wildcards},
            params={k: meta.get(k) for k in ("n", "p", "standardize", "approach", "workers")}
            | dict(meta.get("settings", {})), experiment=experiment,
        )
    write_text(json.dumps({"experiment": experiment, "runs": logged}, indent=2, sort_keys=True) + "\n", out)
    log.info("MLflow: %d runs of %s in experiment %s", len(logged), dataset, experiment)


def _provenance(meta: dict) -> dict:
    return {k: meta.get(k, "unknown") for k in PROVENANCE}
