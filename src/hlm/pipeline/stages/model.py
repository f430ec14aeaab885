"""Pipeline stages: the models kept of each data set (workflow/rules/models.smk).

* :func:`choose`: the method of lowest mean error on the data set (the error table's winner; ties: the
  first in the config's ``methods``), and the config's ``models``;
* :func:`fit`: one of them fitted on all labelled objects, from the run's distance artifact and raw
  objects (hlm.pipeline.fit.fit_model), written as a model folder (hlm.persistence);
The folder is then logged to MLflow (hlm.pipeline.stages.model_log).
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd

from hlm.datasets._artifacts import write_text

log = logging.getLogger("hlm")


def choose(*, dataset: str, evaluations: dict[str, str], extra: list[str], out: str) -> None:
    """Write ``out``: JSON with the winner (lowest mean error) and the methods to keep."""
    means = {m: float(pd.read_parquet(p, columns=["error_rate"])["error_rate"].mean())
             for m, p in evaluations.items()}
    winner = min(means, key=lambda m: (means[m], list(evaluations).index(m)))
    methods = [winner, *(m for m in extra if m != winner and m in evaluations)]
    write_text(json.dumps({"dataset": dataset, "winner": winner, "mean_error": means[winner],
                           "methods": methods}, indent=2) + "\n", out)
    log.info("%s: the winner is %s (mean error %.2f%%); models kept: %s", dataset, winner, means[winner],
             ", ".join(methods))


def fit(*, dataset: str, method: str, entry: dict, distances: str, objects: str | None, seed: int, cv_folds: int,
        method_params: dict, out: str) -> None:
    """Fit ``method`` on all labelled objects of ``dataset`` (its registry ``entry``, the run's artifacts) with
    the pipeline's ``seed``, ``cv_folds`` and the method's ``method_params``; write the model folder."""
    from hlm.datasets._artifacts import read_distances
    from hlm.datasets._registry import validate_entry
    from hlm.persistence import save_model
    from hlm.pipeline.fit import fit_model

    artifact = read_distances(distances)
    raw = None
    if objects:
        from hlm.datasets._objects import read_objects

        ids, raw, _ = read_objects(objects)
        assert list(ids) == [str(i) for i in artifact.ids]
    vectors = artifact.vectors
    meta = artifact.metadata
    if vectors is not None and meta.get("standardize"):
        vectors = (vectors - np.asarray(meta["feature_mean"])) / np.asarray(meta["feature_sd"])
    config = {"seed": seed, "cv_folds": cv_folds, "method_params": {method: method_params}}
    model = fit_model(dataset, method, config=config, loaded=(artifact, raw, vectors),
                      spec=validate_entry(dataset, entry))
    save_model(model, out)
    log.info("%s/%s: fitted on %d objects (parameters %s); %d reference objects; written to %s", dataset,
             method, model.n_train, model.params, len(model.reference_ids), out)
