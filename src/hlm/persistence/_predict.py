"""``hlm predict``: new objects from a file, classified by a saved model, the predictions written to a file.

The input is read and checked whole before anything is computed or written: a refused input writes nothing.
The output (CSV or Parquet, by its suffix) has ``id``, ``predicted``, ``proba_<class>`` where the method gives
probabilities, and, for Mixture HLM, ``nearest_prototype`` (the id of the reference object nearest to the
object). With labels in the input, the error rate is reported; a label outside the model's classes is a
warning (those objects count as errors).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.errors import DataError
from hlm.persistence._model import CHUNK_ROWS, SavedModel
from hlm.persistence._reference import _unwrapped

OUTPUT_SUFFIXES = (".csv", ".parquet")


def _has_proba(model: SavedModel) -> bool:
    return hasattr(model.estimator, "predict_proba")


def _is_mixture_hlm(model: SavedModel) -> bool:
    """Mixture HLM itself (not under a transform): its reference objects are its prototypes, by distance."""
    return hasattr(model.estimator, "prototypes_") and _unwrapped(model.estimator) is model.estimator


def reference_listing(model: SavedModel) -> str:
    """The reference objects' ids, one per line (the columns ``--distances`` expects, in order)."""
    if not model.takes_relation:
        return ""
    return "".join(f"{i}\n" for i in model.reference_ids)


def read_relation(model: SavedModel, path: str | Path):
    """(ids, relation (n, R) in reference order, labels or None) from a CSV/Parquet/NPY file."""
    path = Path(path)
    if not model.takes_relation:
        raise DataError(f"{path}: method '{model.method}' takes {model.input}, not distances to reference "
                        "objects; give the new objects themselves")
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if path.suffix.lower() == ".npy":
        try:
            R = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise DataError(f"{path}: not a numeric .npy file ({str(exc).splitlines()[0]})") from None
        if R.ndim != 2 or R.shape[1] != len(model.reference_ids):
            raise DataError(f"{path}: expected {len(model.reference_ids)} columns (the reference objects, in the "
                            f"order of hlm predict --reference), got shape {R.shape}")
        return [str(i + 1) for i in range(len(R))], _numeric(R, path, model=model), None
    from hlm.datasets import _readers as readers

    frame = readers.read_table(path)
    if "id" not in frame.columns:
        raise DataError(f"{path}: no 'id' column (one row per new object, one column per reference id)")
    ids = [str(i) for i in frame.pop("id")]
    labels = None
    if "label" in frame.columns:
        labels = [None if x is None else str(x) for x in readers.labels_to_str(frame.pop("label").to_numpy(object))]
    columns = [str(c) for c in frame.columns]
    missing = [r for r in model.reference_ids if r not in set(columns)]
    if missing:
        raise DataError(f"{path}: no column for reference object {missing[0]!r} ({len(missing)} of "
                        f"{len(model.reference_ids)} missing; hlm predict --reference lists them)")
    extra = [c for c in columns if c not in set(model.reference_ids)]
    if extra:
        raise DataError(f"{path}: column {extra[0]!r} is not a reference object of the model "
                        f"({len(extra)} such columns)")
    frame.columns = columns
    try:
        R = frame[model.reference_ids].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{path}: the relation holds a value that is not a number") from None
    return ids, _numeric(R, path, ids, model), labels


def _numeric(R: np.ndarray, path: Path, ids=None, model: SavedModel | None = None) -> np.ndarray:
    R = np.asarray(R, dtype=np.float64)
    bad = np.argwhere(~np.isfinite(R))

    def name(i):
        return f"id {ids[i]!r}" if ids else f"row {i + 1}"

    if len(bad):
        raise DataError(f"{path}: {name(bad[0][0])} has a missing or non-finite value")
    rule = model.dataset.get("to_distance") if model is not None else None
    if model is not None and not model.dataset.get("native_similarity") and (R < 0).any():
        raise DataError(f"{path}: {name(np.argwhere(R < 0)[0][0])} has a negative distance")
    if model is not None and model.dataset.get("native_similarity") and rule in ("reciprocal", "neg_log") \
            and (R <= 0).any():
        raise DataError(f"{path}: {name(np.argwhere(R <= 0)[0][0])} has a similarity <= 0, which to_distance "
                        f"{rule} cannot convert")
    return R


def predict_file(model: SavedModel, input_path, output_path, *, distances: bool = False):
    """Classify the new objects of ``input_path`` and write ``output_path``; yields the lines to print."""
    output_path = Path(output_path)
    if output_path.suffix.lower() not in OUTPUT_SUFFIXES:
        raise DataError(f"{output_path}: the predictions are written as .csv or .parquet")
    where = f"{input_path}"
    if distances:
        ids, R, labels = read_relation(model, input_path)
        objects = None
    else:
        from hlm.datasets._new_objects import read_new_objects

        if model.takes_relation and model.reference_objects is None:
            raise DataError(f"{where}: the model of data set '{model.dataset['name']}' (kind "
                            f"{model.dataset['kind']}) classifies new objects from their distances to its "
                            "reference objects: use --distances (hlm predict MODEL --reference lists them)")
        ids, objects, labels = read_new_objects(model.dataset["kind"], input_path,
                                                features=model.dataset.get("features"),
                                                label_column=model.dataset.get("label_column"),
                                                categories=model.dataset.get("categories"),
                                                na_value=model.dataset.get("na_value"),
                                                alphabet=model.dataset.get("alphabet"),
                                                header=model.dataset.get("header") is not False)
        R = None
        if model.dataset["kind"] == "vectors" or model.input == "records":
            objects = np.asarray(objects)
    if len(ids) == 0:
        raise DataError(f"{where}: no new objects")
    with_proba = _has_proba(model)
    predicted, proba, nearest = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the estimators' numerical warnings: the pipeline's logs keep them
        for i in range(0, len(ids), CHUNK_ROWS):  # the relation of one chunk in memory at a time
            if model.takes_relation:
                chunk = R[i:i + CHUNK_ROWS] if R is not None else model.relation(objects[i:i + CHUNK_ROWS])
                predicted.append(model.predict(relation=chunk))
                proba.append(model.predict_proba(relation=chunk) if with_proba else None)
                if _is_mixture_hlm(model):
                    D = model.estimator_input(chunk)[:, model.reference_index]
                    nearest.append(np.asarray(model.reference_ids, dtype=object)[np.argmin(D, axis=1)])
            else:
                chunk = objects[i:i + CHUNK_ROWS]
                predicted.append(model.predict(chunk))
                proba.append(model.predict_proba(chunk) if with_proba else None)
    out = pd.DataFrame({"id": ids, "predicted": np.concatenate(predicted).astype(str)})
    if with_proba:
        P = np.concatenate(proba)
        for k, cls in enumerate(model.classes):
            out[f"proba_{cls}"] = P[:, k]
    if nearest:
        out["nearest_prototype"] = np.concatenate(nearest)
    lines = []
    if objects is not None and model.takes_relation:
        lines.append(f"hlm: computed {model.n_computed} distances: {len(ids)} new objects x "
                     f"{len(model.reference_ids)} reference objects (of {model.n_train} training objects)")
    else:
        lines.append(f"hlm: {len(ids)} new objects")
    if labels is not None:
        known = [lab for lab in labels if lab is not None]
        outside = sorted({lab for lab in known} - set(model.classes))
        if outside:
            lines.append(f"hlm: warning: {sum(lab in outside for lab in known)} labels are not among the model's "
                         f"classes ({', '.join(outside[:5])}); those objects count as errors")
        mask = np.array([lab is not None for lab in labels])
        errors = np.asarray(labels, dtype=object)[mask] != out["predicted"].to_numpy(dtype=object)[mask]
        lines.append(f"hlm: error rate {100 * errors.mean():.2f}% ({int(errors.sum())} of {int(mask.sum())} "
                     "labelled objects)")
        out.insert(2, "label", [lab if lab is not None else "" for lab in labels])
    from hlm.datasets._artifacts import atomic_path

    output_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(output_path) as tmp:
        if output_path.suffix.lower() == ".csv":
            out.to_csv(tmp, index=False)
        else:
            out.to_parquet(tmp, index=False)
    lines.append(f"hlm: predictions written to {output_path}")
    return lines
