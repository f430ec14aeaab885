"""The MLflow pyfunc of a saved hlm model ("models from code": MLflow runs this file when it loads the model).

``predict`` takes a DataFrame: the feature columns of a vector data set (raw vectors), or one column per
reference object (the new objects' distances, or a similarity data set's similarities, to them). It
returns ``predicted`` and, where the method has them, ``proba_<class>``.
"""

import mlflow
import numpy as np
import pandas as pd
from mlflow.pyfunc import PythonModel


class SavedHLMModel(PythonModel):
    def load_context(self, context):
        from hlm.persistence import load_model

        self.model = load_model(context.artifacts["hlm_model"])

    def predict(self, context, model_input, params=None):
        model = self.model
        frame = pd.DataFrame(model_input)
        columns = [str(c) for c in frame.columns]
        features = model.dataset.get("features") or []
        if features and set(features) <= set(columns):
            X = frame[features].to_numpy(dtype=np.int64 if model.input == "records" else np.float64)
            predicted, proba = model.predict(X), (model.predict_proba(X) if self._proba() else None)
        else:
            frame.columns = columns
            R = frame[[str(r) for r in model.reference_ids]].to_numpy(dtype=np.float64)
            predicted = model.predict(relation=R)
            proba = model.predict_proba(relation=R) if self._proba() else None
        out = pd.DataFrame({"predicted": np.asarray(predicted).astype(str)})
        for k, cls in enumerate(model.classes if proba is not None else ()):
            out[f"proba_{cls}"] = proba[:, k]
        return out

    def _proba(self):
        return hasattr(self.model.estimator, "predict_proba")


mlflow.models.set_model(SavedHLMModel())
