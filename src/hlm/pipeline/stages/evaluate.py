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
    split_ids: list[int] | None = None,
) -> None:
    """Evaluate one method on every split of one data set and write Parquet (MLflow: stages.track).

    ``cv_from``: the evaluation Parquet of the method whose CV errors this one
    may reuse (``MethodSpec.cv_from``; used only if it ran the same CV). ``split_ids``: only these
    splits (a part of the evaluation, :func:`gather_evaluation`).
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
        known_cv=known, known_cv_seconds=known_seconds, split_ids=split_ids,
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


def part_splits(n_splits: int, n_parts: int, part: int) -> list[int]:
    """The splits of part ``part`` of ``n_parts``: consecutive runs of 0..n_splits-1, sizes differing by at
    most one (``numpy.array_split``)."""
    import numpy as np

    return [int(s) for s in np.array_split(np.arange(n_splits), n_parts)[part]]


def gather_evaluation(*, evaluations: list[str], predictions: list[str], evaluation_out: str,
                      predictions_out: str) -> None:
    """One method's evaluation of one data set from its parts' files (``split_ids``): the rows of one job, by
    split, with the parts' metadata (the same in every part)."""
    from hlm.datasets._artifacts import read_metadata
    from hlm.errors import DataError

    meta = read_metadata(evaluations[0])
    for path in evaluations[1:]:
        if read_metadata(path) != meta:
            raise DataError(f"{path}: made under other settings than {evaluations[0]}; rerun its part")
    evaluation = pd.concat([pd.read_parquet(p) for p in evaluations], ignore_index=True)
    expected = meta["n_splits"] if "n_splits" in meta else len(evaluation)  # the split table's, in every part
    if sorted(evaluation["split"]) != list(range(expected)):
        raise DataError(f"{evaluation_out}: its parts hold splits {sorted(evaluation['split'])}, not each of the "
                        f"{expected} once; rerun them")
    order = evaluation["split"].argsort(kind="stable")
    prediction = pd.concat([pd.read_parquet(p) for p in predictions], ignore_index=True)
    by_split = prediction["split"].argsort(kind="stable")  # each part's rows are in split order already
    write_frame(evaluation.iloc[order].reset_index(drop=True), evaluation_out, metadata=meta)
    write_frame(prediction.iloc[by_split].reset_index(drop=True), predictions_out, metadata=meta)
