"""Pipeline stage: one method on every split of one data set (workflow/rules/evaluate.smk)."""

from __future__ import annotations

import json
import logging

import pandas as pd

from hlm.data.artifacts import read_distances, write_frame

log = logging.getLogger("hlm")


def evaluate(
    *,
    dataset: str,
    method: str,
    distances: str,
    splits_path: str,
    evaluation_out: str,
    predictions_out: str,
    seed: int,
    cv_folds: int,
    method_params: dict,
    tags: dict,
    run_params: dict,
    experiment: str,
    n_jobs: int = 1,
) -> None:
    """Evaluate one method on every split of one data set, write Parquet, log to MLflow."""
    from hlm.evaluation.evaluate import evaluate_method

    artifact = read_distances(distances)
    split_table = pd.read_parquet(splits_path)
    result = evaluate_method(
        artifact, split_table, method, dataset=dataset, seed=seed, n_folds=cv_folds,
        grid_config=method_params.get("grid"), fixed_params=method_params.get("fixed"),
        cv_fixed_params=method_params.get("cv_fixed"), n_jobs=n_jobs,
    )
    meta = {
        "dataset": dataset,
        "method": method,
        "to_distance": artifact.conversion,
        "source": artifact.metadata.get("source"),
        "n_splits": int(split_table["split"].nunique()),
        **{k: v for k, v in tags.items() if k in ("config_hash", "git_commit")},
    }
    write_frame(result.evaluation, evaluation_out, metadata=meta)
    write_frame(result.predictions, predictions_out, metadata=meta)
    ev = result.evaluation
    for row in ev.itertuples():
        for message in json.loads(row.warnings):
            log.warning("split %d: %s", row.split, message)
    log.info(
        "%s/%s: error %.2f%% (sd %.2f) over %d splits; fit %.3fs, predict %.3fs per split",
        dataset, method, ev.error_rate.mean(), ev.error_rate.std(ddof=1) if len(ev) > 1 else 0.0,
        len(ev), ev.fit_seconds.mean(), ev.predict_seconds.mean(),
    )
    from hlm import tracking

    run_id = tracking.log_pair(
        dataset=dataset, method=method, evaluation_path=evaluation_out, prediction_path=predictions_out,
        tags=tags, params={**run_params, "to_distance": meta["to_distance"]}, experiment=experiment,
    )
    log.info("MLflow: parent run %s (experiment %s)", run_id, experiment)
