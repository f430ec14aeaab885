"""Fit one method on the labelled objects of a registry entry and keep it (``hlm fit``; hlm.persistence).

The hyper-parameters come from the method's CV grid, chosen on all the objects with the pipeline's CV
(``cv_folds`` stratified folds, seeds derived from (seed, data set, "all")), as each split of the evaluation
chooses them on its training part (hlm.pipeline.evaluation.evaluate.fit_method). Or they are fixed: given
(``params``), or the point the pipeline chose most often over the splits (``from_results``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import numpy as np

from hlm.distances._channels import length
from hlm.errors import ConfigError, DataError

#: the seed part of a fit on all the labelled objects (the evaluation's splits are 0, 1, ...)
ALL = "all"


def project_config(root: str | Path = ".") -> dict:
    """The pipeline's settings as ``snakemake`` in ``root`` would read them: ``config/config.yaml``
    validated, its defaults filled in (only the schema's defaults without that file)."""
    from hlm.pipeline.config import config_defaults, load_config

    path = Path(root) / "config" / "config.yaml"
    return load_config(path) if path.is_file() else config_defaults()


def objects_artifact(spec, root, block_size: int | None = None, objects=None):
    """Raw objects -> distances in one process (the pipeline does it in cached row blocks, of the
    entry's ``block_size`` or the config's default ``distance_block_size``; so does this).
    ``objects``: the entry's ``load_objects`` result, if already read."""
    from hlm.datasets._objects import artifact_from_matrix, load_objects
    from hlm.distances._blocks import assemble, block_ranges, compute_block

    ids, objs, labels, meta = objects if objects is not None else load_objects(spec, root)
    options = spec.distance_options
    block_size = spec.block_size or block_size or project_config()["distance_block_size"]
    blocks = [(i0, i1, compute_block(objs, spec.distance, i0, i1, options))
              for i0, i1 in block_ranges(len(objs), block_size)]
    return artifact_from_matrix(spec, ids, labels, assemble(blocks, len(objs)), meta)


def dataset_objects(spec, root, config: dict):
    """(artifact, raw objects or None, standardised vectors or None) of a registry entry."""
    from hlm.datasets._prepare import load_vectors, prepare_dataset

    if spec.kind in ("series", "sequences"):
        from hlm.datasets._objects import load_objects

        loaded = load_objects(spec, root)
        return objects_artifact(spec, root, config["distance_block_size"], loaded), loaded[1], None
    artifact = prepare_dataset(spec, root)
    vectors = load_vectors(spec, root).X if spec.kind == "vectors" else None
    return artifact, None, vectors


def objects_sha256(ids, labels, objects) -> str:
    """SHA-256 of objects read from a package rather than a file: ids, labels and each object's values (and a
    multichannel series' shape, so that (6, 100) and (3, 200) differ)."""
    import hashlib

    digest = hashlib.sha256()
    for i, label, obj in zip(ids, labels, objects):
        digest.update(f"{i}\t{label}\t".encode())
        if not isinstance(obj, str) and np.ndim(obj) > 1:
            digest.update(f"{np.shape(obj)}\t".encode())
        digest.update(obj.encode() if isinstance(obj, str) else np.ascontiguousarray(obj, dtype="<f8").tobytes())
        digest.update(b"\n")
    return digest.hexdigest()


def chosen_params(evaluation_path: str | Path, method_id: str) -> dict:
    """The grid point the pipeline chose most often over the splits (ties: the first split's choice)."""
    import pandas as pd

    path = Path(evaluation_path)
    if not path.is_file():
        raise DataError(f"{path}: no evaluation of method '{method_id}' here; run the pipeline first "
                        f"(snakemake {path})")
    frame = pd.read_parquet(path, columns=["split", "params", "cv_error"])
    names = _grid_names(method_id)
    points = [json.dumps({k: v for k, v in json.loads(p).items() if k in names}, sort_keys=True)
              for p in frame.sort_values("split")["params"]]
    counts = Counter(points)
    best = max(counts.values())
    return json.loads(next(p for p in points if counts[p] == best))


def _grid_names(method_id: str) -> set[str]:
    from hlm.pipeline.evaluation.evaluate import _bare
    from hlm.pipeline.methods import METHODS

    grid = METHODS[method_id].default_grid
    points = grid if isinstance(grid, list) else [grid]
    return {_bare(k) for point in points for k in point}


def _fixed_grid(method_id: str, params: dict) -> dict:
    """``params`` (bare names) as a one-point grid in the method table's names (``estimator__`` kept)."""
    from hlm.pipeline.evaluation.evaluate import _bare
    from hlm.pipeline.methods import METHODS

    grid = METHODS[method_id].default_grid
    names = {_bare(k): k for point in (grid if isinstance(grid, list) else [grid]) for k in point}
    unknown = sorted(set(params) - set(names))
    known = ", ".join(sorted(names)) or "none"
    if unknown:
        raise ConfigError(f"--params: method '{method_id}' has no grid parameter {unknown[0]!r} (its grid: {known})")
    missing = sorted(set(names) - set(params))
    if missing:  # a partial point would leave the others at the estimator's defaults, which no CV chose
        raise ConfigError(f"--params: give every grid parameter of method '{method_id}' ({known}); missing: "
                          f"{', '.join(missing)}")
    return {names[k]: [v] for k, v in params.items()}


def fit_model(dataset: str, method_id: str, *, root: str | Path = ".", registry: str | None = None,
              params: dict | None = None, from_results: bool = False, config: dict | None = None,
              train: np.ndarray | None = None, split=ALL, loaded=None, spec=None):
    """Fit ``method_id`` on the labelled objects of registry entry ``dataset``; a ``SavedModel``.

    ``train`` (indices) and ``split`` fit on one split's training part instead, as the evaluation does (the
    equality tests); ``loaded`` is ``dataset_objects``'s result, if already read; ``spec`` the entry, if
    already validated (else it is read from the registry). ``config`` needs ``seed``, ``cv_folds`` and
    ``method_params`` (and ``registry`` and ``distance_block_size`` unless ``spec`` and ``loaded`` are given).
    """
    from hlm.datasets._prepare import source_sha256
    from hlm.datasets._registry import get_spec, load_registry
    from hlm.persistence._model import SavedModel
    from hlm.persistence._reference import reference_index
    from hlm.pipeline.evaluation.cv import grid_key
    from hlm.pipeline.evaluation.evaluate import _jsonable, _plain, fit_method, prepare_method
    from hlm.pipeline.methods import METHODS, method_applies

    config = config or project_config(root)
    if method_id not in METHODS:
        raise ConfigError(f"unknown method {method_id!r}; expected one of {', '.join(METHODS)}")
    if spec is None:
        spec = get_spec(load_registry(Path(root) / (registry or config["registry"]), names=[dataset]), dataset)
    if not method_applies(method_id, spec.kind):
        raise ConfigError(f"method '{method_id}' needs feature vectors; data set '{dataset}' is of kind {spec.kind}")
    artifact, objects, vectors = loaded or dataset_objects(spec, root, config)
    method_params = config["method_params"].get(method_id, {})
    grid = method_params.get("grid")
    if from_results:
        params = chosen_params(Path(root) / "results" / "evaluation" / dataset / f"{method_id}.parquet", method_id)
    if params is not None:
        grid = _fixed_grid(method_id, params)
    setup = prepare_method(artifact, method_id, grid, method_params.get("fixed"), method_params.get("cv_fixed"))
    index = np.arange(artifact.n) if train is None else np.asarray(train)
    t0 = time.perf_counter()
    fitted = fit_method(setup, artifact, index, dataset=dataset, seed=config["seed"], n_folds=config["cv_folds"],
                        split=split)
    seconds = time.perf_counter() - t0
    spec_method = METHODS[method_id]
    native_similarity = artifact.similarities is not None
    if artifact.records is not None:
        takes = "records"
    elif spec_method.input == "vectors":
        takes = "vectors"
    elif spec_method.input in ("similarity", "relation") and native_similarity:
        takes = "similarities"
    else:
        takes = "distances"
    meta = artifact.metadata
    # the training objects whose relation the model reads; none for vectors and records (it keeps them)
    ref = (reference_index(fitted.model, len(index)) if takes in ("distances", "similarities")
           else np.zeros(0, dtype=np.int64))
    rows = index[ref]
    reference_objects = None
    if takes in ("distances", "similarities"):
        if objects is not None:
            reference_objects = [objects[i] for i in rows]
        elif vectors is not None:
            reference_objects = vectors[rows]
    arrays = {}
    if meta.get("standardize") and vectors is not None:
        arrays = {"feature_mean": np.asarray(meta["feature_mean"]), "feature_sd": np.asarray(meta["feature_sd"])}
    sha = meta.get("sha256")
    if sha is None and spec.path and loaded is None:  # the pipeline's artifacts record it
        sha = source_sha256(Path(root) / spec.path, spec.where)
    if sha is None and objects is not None:  # read from a package (aeon): the SHA-256 of the objects read
        sha = objects_sha256(artifact.ids, artifact.labels, objects)
    description = {
        "name": dataset, "kind": spec.kind, "format": spec.format, "source": meta.get("source"), "sha256": sha,
        "distance": spec.distance, "options": spec.distance_options,
        "to_distance": meta.get("to_distance"), "upper_bound": meta.get("upper_bound"),
        "symmetrized": bool(meta.get("symmetrized")), "native_similarity": native_similarity,
        "standardize": bool(meta.get("standardize")), "n_objects": int(artifact.n),
        "features": (meta.get("features") if spec.kind == "vectors" else
                     list(meta["values"]) if spec.kind == "categorical" else None),
        "categories": meta.get("values") if spec.kind == "categorical" else None,
        "na_value": meta.get("na_value") if spec.kind == "categorical" else None,
        "alphabet": "".join(sorted(set("".join(objects)))) if spec.kind == "sequences" else None,
        "label_column": spec.label_column if spec.kind in ("vectors", "categorical", "sequences") else None,
        "header": spec.header,
        "series_lengths": ([min(map(length, objects)), max(map(length, objects))] if spec.kind == "series"
                           else None),
    }
    from hlm import __version__

    info = {
        "hlm_version": __version__, "label": spec_method.label, "seed": config["seed"],
        "cv_folds": len(fitted.folds), "cv_rule": spec_method.cv_rule, "split": split,
        "params_from": "given" if params is not None and not from_results else
                       "results" if from_results else "cv",
        "cv_error": {grid_key(p): float(e) for p, e in zip(fitted.searched, fitted.cv_error)},
        "fit_seconds": seconds, "n_train": int(len(index)),
    }
    return SavedModel(
        estimator=fitted.model, method=method_id, params=_jsonable(_plain(fitted.best)),
        classes=[str(c) for c in fitted.model.classes_], input=takes, dataset=description,
        n_train=len(index), reference_ids=[str(i) for i in artifact.ids[rows]], reference_index=ref,
        reference_objects=reference_objects, arrays=arrays, info=info,
    )
