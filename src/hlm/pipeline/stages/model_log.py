"""Pipeline stage: a kept model logged to MLflow as an MLflow Model in its (data set, method) parent run,
and registered in the model registry (hlm.pipeline.mlflow_model; workflow/rules/models.smk).
"""

from __future__ import annotations

import json
import logging

from hlm.datasets._artifacts import write_text

log = logging.getLogger("hlm")


def log_model(*, dataset: str, method: str, model_dir: str, tracking: str, experiment: str, out: str) -> None:
    """Log the model folder into the pair's parent run (from ``tracking``: the track job's JSON) as an
    MLflow Model, register it, and write ``out`` (JSON: run id, model URI, registered name and version)."""
    from pathlib import Path

    from hlm.pipeline.mlflow_model import log_saved_model

    runs = json.loads(Path(tracking).read_text())["runs"]
    run_id = runs[f"{dataset}/{method}"]
    info = log_saved_model(model_dir, run_id=run_id, name=f"{dataset}.{method}", experiment=experiment)
    write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", out)
    log.info("MLflow: %s/%s logged as %s, registered as %s version %s", dataset, method, info["model_uri"],
             info["registered_name"], info["version"])
