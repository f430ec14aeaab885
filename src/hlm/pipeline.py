"""The work of each pipeline stage, called by the thin scripts in workflow/scripts.

Every function reads its inputs, computes through the library, and writes its
outputs atomically. Estimators never touch files or MLflow; this module does.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.data.artifacts import read_distances, write_distances, write_frame
from hlm.methods import METHODS

log = logging.getLogger("hlm")


def preprocess(name: str, entry: dict, output: str, root: str | Path = ".") -> None:
    """Raw data set -> ``results/distances/{dataset}.parquet`` (paper section 5.2)."""
    from hlm.data.prepare import prepare_dataset
    from hlm.data.registry import validate_entry

    spec = validate_entry(name, entry)
    artifact = prepare_dataset(spec, Path(root))
    write_distances(artifact, output)
    log.info(
        "%s: %d objects, %d classes, conversion %s, written to %s",
        name, artifact.n, len(np.unique(artifact.labels)), artifact.conversion, output,
    )


def splits(distances: str, output: str, *, dataset: str, n_splits: int, test_fraction: float, seed: int) -> None:
    """``results/splits/{dataset}.parquet``: split, index, role."""
    from hlm.evaluation.splits import make_splits

    n = len(pd.read_parquet(distances, columns=["id"]))
    table = make_splits(n, dataset=dataset, n_splits=n_splits, test_fraction=test_fraction, seed=seed)
    write_frame(table, output, metadata={"dataset": dataset, "n": n, "n_splits": n_splits,
                                         "test_fraction": test_fraction, "seed": seed})
    log.info("%s: %d splits of %d objects", dataset, n_splits, n)


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
) -> None:
    """Evaluate one method on every split of one data set, write Parquet, log to MLflow."""
    from hlm.evaluation.evaluate import evaluate_method

    artifact = read_distances(distances)
    split_table = pd.read_parquet(splits_path)
    result = evaluate_method(
        artifact, split_table, method, dataset=dataset, seed=seed, n_folds=cv_folds,
        grid_config=method_params.get("grid"), fixed_params=method_params.get("fixed"),
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


def tables(evaluations: list[str], *, datasets: list[str], methods: list[str], csv_out: str, md_out: str,
           summary_out: str, test_fraction: float) -> None:
    """``results/tables/error_rates.{csv,md}`` (paper Table 2 layout) and the tidy summary CSV."""
    from hlm.reporting.tables import load_evaluations, write_error_rate_tables

    labels = {m: METHODS[m].label for m in methods}
    write_error_rate_tables(load_evaluations(evaluations), datasets, methods, csv_out, md_out, labels=labels,
                            summary_path=summary_out, test_fraction=test_fraction)
    log.info("tables written: %s, %s", csv_out, md_out)


def figure(evaluations: list[str], *, datasets: list[str], methods: list[str], output: str) -> None:
    """``results/figures/error_rates.png``: mean +- sd per method and data set."""
    from hlm.reporting.figures import plot_error_rates
    from hlm.reporting.tables import load_evaluations

    labels = {m: METHODS[m].label for m in methods}
    plot_error_rates(load_evaluations(evaluations), datasets, methods, output, labels=labels)
    log.info("figure written: %s", output)


def cv_components_figure(evaluations: list[str], methods: list[str], *, dataset: str, output: str) -> None:
    """``results/figures/cv_components_{dataset}.png``: CV error against M for split 0."""
    from hlm.reporting.figures import plot_cv_components

    frames = {m: pd.read_parquet(p) for m, p in zip(methods, evaluations)}
    plot_cv_components(frames, output, dataset=dataset, labels={m: METHODS[m].label for m in methods})
    log.info("figure written: %s", output)
