"""The subspace selection protocol's job on one data set (the package docstring): the rows of Table 4.5 and of
Figures 4.1-4.2 on the first partition of chapter 4's protocol, to Parquet, and the figure."""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.base._seeds import derive_seed
from hlm.errors import HLMError
from hlm.pipeline.methods import METHODS

log = logging.getLogger("hlm")

#: Table 4.5's subspaces (MPCA and MPCA-MEAN); Figure 4.1's methods
CLOSENESS_METHODS = ("gmm_mpca", "gmm_mpca_mean")
SELECTION_METHODS = ("gmm_mpca", "gmm_mpca_mean", "gmm_mpca_sep")
#: GMM-MPCA-SEP's smallest d' = d - (K - 1), as in chapter 4's grid
SEP_MIN_EXTRA = 2

COLUMNS = ["kind", "method", "n_dims", "level", "bandwidth", "n_modes", "candidate", "mean_closeness",
           "log_likelihood", "test_error", "chosen", "n_train", "n_test"]


def first_partition(X, y, spec, settings: dict, dataset: str):
    """(X_train, y_train, X_test, y_test): fold 0 of chapter 4's stratified ``n_folds``-fold CV (the grid
    protocol's folds), or its first simulation of a generated data set."""
    from hlm.pipeline.protocols.chapter4_parts import cv_parts, simulation_parts

    if spec.format == "generated":
        return simulation_parts(spec, 1, settings["n_train"], settings["n_test"], settings["seed"], dataset)[0]
    return cv_parts(X, y, settings["n_folds"], settings["seed"], dataset)[0]


def mean_closeness(subspaces: list[np.ndarray]) -> list[float]:
    """Section 4.5.3: per level l, the mean of closeness(V_l, V_l') over the preceding levels l' < l (NaN at the
    first)."""
    from hlm.mixture import closeness

    return [float(np.mean([closeness(V, W) for W in subspaces[:i]])) if i else float("nan")
            for i, V in enumerate(subspaces)]


def selection_rows(part, *, dataset: str, seed: int, n_components: int, dims, standardize: bool) -> list[dict]:
    """The rows of one partition: Table 4.5's ("closeness": every HMAC level, MPCA and MPCA-MEAN at each d) and
    Figures 4.1-4.2's ("selection": every candidate subspace of GMM-MPCA, -MEAN and -SEP at each d)."""
    X_train, y_train, X_test, y_test = part
    K = len(np.unique(y_train))
    base = {"n_train": int(len(y_train)), "n_test": int(len(y_test))}
    state = derive_seed(seed, dataset, 0, "model") % 2**31  # the grid protocol's model seed of partition 0
    rows = []
    for d in dims:
        for method in SELECTION_METHODS:
            if method == "gmm_mpca_sep" and d - (K - 1) < SEP_MIN_EXTRA:
                continue
            model = METHODS[method].make({"n_components": n_components, "n_dims": d, "standardize": standardize,
                                          "random_state": state})
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter, as in the grid protocol
                    levels = model.level_subspaces(X_train, y_train) if method in CLOSENESS_METHODS else []
                    model.fit(X_train, y_train)
            except HLMError as exc:  # a cell the method cannot fit (a class smaller than R): no rows, as logged
                log.warning("%s/%s d=%d: not fitted (%s)", dataset, method, d, exc)
                continue
            for lv, c in zip(levels, mean_closeness([lv["subspace"] for lv in levels])):
                rows.append({**base, "kind": "closeness", "method": method, "n_dims": int(d),
                             "level": lv["level"] + 1, "bandwidth": lv["bandwidth"], "n_modes": lv["n_modes"],
                             "candidate": bool(lv["candidate"]), "mean_closeness": c,
                             "log_likelihood": float("nan"), "test_error": float("nan"), "chosen": False})
            errors = 100.0 * np.mean(model.candidate_predict(X_test) != np.asarray(y_test)[None, :], axis=1)
            # fit's choice (the first of the largest likelihoods), by its bandwidth
            chosen = next(i for i, c in enumerate(model.candidates_) if c["bandwidth"] == model.bandwidth_)
            for i, (c, e) in enumerate(zip(model.candidates_, errors)):
                level = c["level"] + 1 if c["level"] is not None else 0
                rows.append({**base, "kind": "selection", "method": method, "n_dims": int(d), "level": level,
                             "bandwidth": c["bandwidth"] if c["bandwidth"] is not None else float("nan"),
                             "n_modes": c["n_modes"] if c["n_modes"] is not None else -1, "candidate": True,
                             "mean_closeness": float("nan"), "log_likelihood": float(c["log_likelihood"]),
                             "test_error": float(e), "chosen": i == chosen})
    return rows


def run(*, dataset: str, entry: dict, outputs: dict, settings: dict, tags: dict, n_jobs: int = 1,
        root: str | Path = ".") -> None:
    """The rows to Parquet and the figure. ``settings``: ``seed`` and the section's ``n_components``, ``n_dims``,
    ``n_folds`` (``n_train``, ``n_test`` for a generated data set)."""
    from hlm.pipeline.protocols.common import protocol_vectors, write_protocol
    from hlm.pipeline.protocols.subspace_selection.figure import plot_selection

    spec, records = protocol_vectors("subspace selection protocol", dataset, entry, root)
    X, y = np.asarray(records.features, dtype=np.float64), np.asarray(records.labels)
    part = first_partition(X, y, spec, settings, dataset)
    dims = [int(d) for d in settings["n_dims"] if int(d) < X.shape[1]]
    t0 = time.perf_counter()
    rows = selection_rows(part, dataset=dataset, seed=settings["seed"], n_components=settings["n_components"],
                          dims=dims, standardize=bool(spec.standardize))
    frame = pd.DataFrame(rows, columns=COLUMNS)
    seconds = time.perf_counter() - t0
    write_protocol(frame, outputs["runs"], {"dataset": dataset, "seed": settings["seed"],
                                            "n_components": settings["n_components"], "seconds": seconds,
                                            "standardize": bool(spec.standardize)}, tags)
    plot_selection(frame, outputs["figure"], dataset=dataset, n_components=settings["n_components"])
    chosen = frame[frame.chosen]
    for r in chosen.itertuples():
        log.info("%s/%s d=%d: the most likely candidate (level %d) has test error %.2f%%", dataset, r.method,
                 r.n_dims, r.level, r.test_error)
    log.info("%s: %d rows in %.1f s", dataset, len(frame), seconds)
