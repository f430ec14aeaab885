"""Pipeline stage: one method on every split of one data set (workflow/rules/evaluate.smk)."""

from __future__ import annotations

import json
import logging

import pandas as pd

from hlm.datasets._artifacts import read_distances, write_frame

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
    n_jobs: int = 1,
    cv_from: str | None = None,
) -> None:
    """Evaluate one method on every split of one data set and write Parquet (MLflow: stages.track).

    ``cv_from``: the evaluation Parquet of the method whose CV errors this one
    may reuse (``MethodSpec.cv_from``; used only if it ran the same CV).
    """
    from hlm.pipeline.evaluation.evaluate import evaluate_method
    from hlm.pipeline.evaluation.reuse import cv_estimator

    artifact = read_distances(distances)
    split_table = pd.read_parquet(splits_path)
    fixed, cv_fixed = method_params.get("fixed"), method_params.get("cv_fixed")
    estimator = cv_estimator(method, fixed, cv_fixed)
    known, known_seconds = _known_cv(cv_from, split_table, estimator=estimator, seed=seed, n_folds=cv_folds)
    result = evaluate_method(
        artifact, split_table, method, dataset=dataset, seed=seed, n_folds=cv_folds,
        grid_config=method_params.get("grid"), fixed_params=fixed, cv_fixed_params=cv_fixed, n_jobs=n_jobs,
        known_cv=known, known_cv_seconds=known_seconds,
    )
    meta = {
        "dataset": dataset,
        "method": method,
        "to_distance": artifact.conversion,
        "source": artifact.metadata.get("source"),
        "n_splits": int(split_table["split"].nunique()),
        "seed": seed,
        "cv_folds": cv_folds,
        "cv_estimator": estimator,
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


def _known_cv(path: str | None, split_table: pd.DataFrame, **same) -> tuple[dict, dict]:
    """CV errors recorded in the evaluation at ``path`` when it ran the same CV (hlm.pipeline.evaluation.reuse)."""
    if not path:
        return {}, {}
    from hlm.datasets._artifacts import read_metadata
    from hlm.pipeline.evaluation.reuse import known_cv_errors
    from hlm.pipeline.evaluation.splits import split_indices

    n_train = {int(k): len(split_indices(split_table, int(k))[0]) for k in split_table["split"].unique()}
    meta = read_metadata(path)
    errors, seconds, why = known_cv_errors(pd.read_parquet(path), meta, n_train=n_train, **same)
    if why:
        log.warning("not reusing the CV errors of %s (%s): %s; cross-validating every grid point",
                    meta.get("method", "?"), path, why)
    else:
        log.info("reusing the CV errors of %s (%s) for %d grid points per split",
                 meta.get("method", "?"), path, min(len(e) for e in errors.values()) if errors else 0)
    return errors, seconds
