"""The plane protocol's job on one data set: one partition, LLC-PC (Greedy-MPE, K by CV) and odKDE, the rows and
the figure (the package docstring)."""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from hlm.base._seeds import derive_seed
from hlm.errors import DataError
from hlm.pipeline.evaluation.cv import make_folds, select_params
from hlm.pipeline.methods import METHODS, SUBCLASS_GRID

log = logging.getLogger("hlm")

COLUMNS = ["method", "accuracy", "n_parts", "parts_per_class", "params", "fit_seconds", "n_train", "n_test"]


def fit_plane(X: np.ndarray, y: np.ndarray, *, dataset: str, seed: int, cv_folds: int, n_train: int):
    """(rows, models, (train, test)): LLC-PC with K chosen by the inner CV over the class count..40 subclasses,
    and odKDE, fitted on one stratified partition of ``n_train`` training objects and tested on the rest."""
    if X.ndim != 2 or X.shape[1] != 2:
        raise DataError(f"plane: data set '{dataset}' has {X.shape[1]} features; the figure draws two")
    n_classes = len(np.unique(y))
    if not n_classes <= n_train <= len(y) - n_classes:
        raise DataError(f"plane: data set '{dataset}': n_train {n_train} must leave every one of its {n_classes} "
                        f"classes in both parts (between {n_classes} and {len(y) - n_classes} of {len(y)} objects)")
    train, test = train_test_split(np.arange(len(y)), train_size=n_train, stratify=y,
                                   random_state=derive_seed(seed, dataset, "plane") % 2**32)
    train, test = np.sort(train), np.sort(test)
    state = derive_seed(seed, dataset, "plane", "model") % 2**31
    ks = [k for k in SUBCLASS_GRID if k >= len(np.unique(y))]
    rows, models = [], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the CV's fits' warnings, as in the evaluation stage
        t0 = time.perf_counter()
        folds = make_folds(y[train], cv_folds, derive_seed(seed, dataset, "plane", "cv"))
        best, _, _ = select_params(METHODS["llc_pc_mpe"].make({"random_state": state}), X[train], y[train],
                                   [{"n_subclasses": k} for k in ks], folds, 1)
        llc = METHODS["llc_pc_mpe"].make({**best, "random_state": state}).fit(X[train], y[train])
        rows.append(_row("llc_pc_mpe", llc, X, y, train, test, llc.subclasses_per_class_, best, t0))
        t0 = time.perf_counter()
        odkde = METHODS["odkde"].make().fit(X[train], y[train])
        rows.append(_row("odkde", odkde, X, y, train, test, odkde.n_components_, {}, t0))
    models.update(llc_pc_mpe=llc, odkde=odkde)
    return pd.DataFrame(rows, columns=COLUMNS), models, (train, test)


def _row(method, model, X, y, train, test, per_class, params, t0) -> dict:
    import json

    seconds = time.perf_counter() - t0
    return {"method": method, "accuracy": 100.0 * float(np.mean(model.predict(X[test]) == y[test])),
            "n_parts": int(np.sum(per_class)), "parts_per_class": [int(v) for v in per_class],
            "params": json.dumps({k: int(v) for k, v in params.items()}), "fit_seconds": seconds,
            "n_train": len(train), "n_test": len(test)}


def run(*, dataset: str, entry: dict, outputs: dict, settings: dict, tags: dict, n_jobs: int = 1,
        root: str | Path = ".") -> None:
    """The rows to Parquet and the figure. ``settings``: ``seed``, ``cv_folds`` and the section's ``n_train``."""
    from hlm.pipeline.protocols.common import protocol_vectors, write_protocol
    from hlm.pipeline.protocols.plane.figure import plot_plane

    _, records = protocol_vectors("plane", dataset, entry, root)
    X, y = np.asarray(records.features, dtype=np.float64), np.asarray(records.labels)
    frame, models, (train, test) = fit_plane(X, y, dataset=dataset, seed=settings["seed"],
                                             cv_folds=settings["cv_folds"], n_train=settings["n_train"])
    write_protocol(frame, outputs["runs"], {"dataset": dataset, "seed": settings["seed"],
                                            "cv_folds": settings["cv_folds"], "n_train": settings["n_train"]}, tags)
    plot_plane(X, y, train, test, models, frame, outputs["figure"], dataset=dataset)
    for r in frame.itertuples():
        log.info("%s/%s: %.2f%% on %d test objects, %d parts %s", dataset, r.method, r.accuracy, r.n_test,
                 r.n_parts, r.parts_per_class)
