"""A saved hlm model (hlm.persistence) as an MLflow Model: pyfunc defined from code, no cloudpickle.

:func:`log_saved_model` logs the model folder as the artifact ``hlm_model`` of an MLflow Model whose
code is :data:`CODE` (this project's ``hlm/pipeline/_pyfunc_code.py``), with a signature:

* a data set of feature vectors: the feature columns, by name (new objects as raw vectors);
* categorical records: the feature columns, by name, holding the category codes (``dataset.categories``
  of the model folder lists each feature's values in code order);
* any other: one column per reference object, by id (the new objects' distances, or a similarity data
  set's similarities, to them);

and the outputs ``predicted`` and ``proba_<class>``. ``mlflow.pyfunc.load_model("runs:/<id>/model")``
then predicts from such a DataFrame. The model is registered in MLflow's model registry.
"""

from __future__ import annotations

import warnings
from pathlib import Path

#: the pyfunc's code file (MLflow's "models from code": the file is copied into the model and run at load)
CODE = Path(__file__).with_name("_pyfunc_code.py")


def signature(model):
    """The MLflow signature of a :class:`hlm.persistence.SavedModel`."""
    from mlflow.models import ModelSignature
    from mlflow.types import ColSpec, Schema

    if model.dataset["kind"] == "vectors" and model.input in ("vectors", "distances"):
        inputs = [ColSpec("double", str(c)) for c in model.dataset["features"]]
    elif model.input == "records":  # categorical records: each feature's category code (docs/models.md)
        inputs = [ColSpec("long", str(c)) for c in model.dataset["features"]]
    else:
        inputs = [ColSpec("double", str(r)) for r in model.reference_ids]
    outputs = [ColSpec("string", "predicted")]
    if hasattr(model.estimator, "predict_proba"):
        outputs += [ColSpec("double", f"proba_{c}") for c in model.classes]
    return ModelSignature(inputs=Schema(inputs), outputs=Schema(outputs))


def log_saved_model(model_dir, *, run_id: str, name: str, experiment: str) -> dict:
    """Log ``model_dir`` into the run ``run_id`` as the MLflow Model ``model`` and register it as ``name``."""
    import mlflow

    from hlm import __version__
    from hlm.persistence import load_model
    from hlm.pipeline.tracking import _retry, tracking_uri

    model = load_model(model_dir)
    mlflow.set_tracking_uri(tracking_uri())
    mlflow.set_experiment(experiment)
    client = mlflow.MlflowClient()
    status = client.get_run(run_id).info.status
    with mlflow.start_run(run_id=run_id), warnings.catch_warnings():
        # the signature is given (type hints would infer one); no input example: the model holds no objects
        warnings.filterwarnings("ignore", message=".*(type hints|input example|input_example).*")
        logged = _retry(mlflow.pyfunc.log_model, name="model", python_model=str(CODE),
                        artifacts={"hlm_model": str(Path(model_dir).resolve())}, signature=signature(model),
                        pip_requirements=[f"hlm=={__version__}"], registered_model_name=name)
    if status != "RUNNING":  # start_run(run_id) ends the run FINISHED; keep the parent's own status
        client.set_terminated(run_id, status)
    version = logged.registered_model_version
    return {"run_id": run_id, "model_uri": f"runs:/{run_id}/model", "model_id": logged.model_id,
            "registered_name": name, "version": version}
