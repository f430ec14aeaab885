"""Chapter 4's grid protocol: GMMs with subspace-constrained means beside reduced-rank and projected MDA
(dissertation Tables 4.1-4.2; docs/subspace-gmm-spec.md section 1).

Every method is fitted at every (components per class R, discriminant dimension d) of the chapter's grid and
tested, as its tables show the test error of each cell:
- a generated data set (Waveform) is drawn afresh for each of ``n_simulations`` simulations, ``n_train``
  training and ``n_test`` test objects (the chapter: ten of 300 and 500), seeds derived from (data set,
  simulation, "train" / "test");
- any other data set runs ``n_folds``-fold stratified cross-validation (the chapter: five), the folds seeded by
  (data set, "folds").
One row per (fold, method, R, d); error in %; a cell the method cannot fit (a class smaller than R) has a NaN
error. GMM-MPCA-SEP's cells with fewer than ``SEP_MIN_EXTRA`` subspace dimensions beyond the K - 1 of the class
means are NaN too, as the chapter's tables have them NA (docs/subspace-gmm-spec.md section 1: the text allows
d >= K - 1, every table starts at d - (K - 1) = 2).
"""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.base._seeds import derive_seed
from hlm.errors import HLMError
from hlm.pipeline.progress import Progress
from hlm.pipeline.protocols.chapter4_parts import cv_parts, simulation_parts

log = logging.getLogger("hlm")

#: the chapter's methods, in its tables' order (MDA-RR-OS: Hastie and Tibshirani's optimal scoring)
METHOD_ORDER = ("gmm_mpca", "gmm_mpca_mean", "gmm_mpca_sep", "mda_rr", "mda_rr_os", "mda_dr_mpca",
                "mda_dr_mpca_mean")
#: the chapter's components per class (its tables' row blocks)
COMPONENTS = (3, 4, 5)
#: the chapter's discriminant dimensions per data set (its tables' columns); others: DEFAULT_DIMS below p
PAPER_DIMS = {"waveform": (2, 4, 6, 8, 10, 12, 14, 16), "sonar": (2, 3, 5, 7, 9, 11, 13, 15),
              "satellite": (2, 4, 7, 9, 11, 13, 15, 17)}
DEFAULT_DIMS = (2, 3, 4, 6, 8)
#: GMM-MPCA-SEP's smallest d' = d - (K - 1) in the chapter's tables
SEP_MIN_EXTRA = 2

COLUMNS = ["fold", "method", "n_components", "n_dims", "error", "fit_seconds", "bandwidth", "log_likelihood",
           "n_candidates", "n_train", "n_test", "n_classes"]


def make_estimator(method: str, n_components: int, n_dims: int, fixed: dict):
    """The estimator of one method at one grid cell (``fixed``: standardize, random_state)."""
    from hlm.mixture._mda_os import OptimalScoringMDA
    from hlm.mixture._mda_rr import ReducedRankMDA
    from hlm.mixture._subspace import ProjectedMDA, SubspaceGMMClassifier

    if method == "mda_rr":
        return ReducedRankMDA(n_components=n_components, rank=n_dims, **fixed)
    if method == "mda_rr_os":
        return OptimalScoringMDA(n_components=n_components, rank=n_dims, **fixed)
    if method.startswith("mda_dr_"):
        subspace = method.removeprefix("mda_dr_")
        return ProjectedMDA(n_components=n_components, n_dims=n_dims, subspace=subspace, **fixed)
    return SubspaceGMMClassifier(n_components=n_components, n_dims=n_dims, subspace=method.removeprefix("gmm_"),
                                 **fixed)


def dims_for(dataset: str, p: int, n_dims=None) -> list[int]:
    """The d values of the grid: the config's, else the chapter's for its data sets, else DEFAULT_DIMS; those
    below the dimension p only (d = p is unconstrained)."""
    values = n_dims if n_dims is not None else PAPER_DIMS.get(dataset, DEFAULT_DIMS)
    return [int(d) for d in values if int(d) < p]


def run_subspace_gmm(parts, *, dataset: str, seed: int, n_components=COMPONENTS, n_dims=None,
                     methods=METHOD_ORDER, standardize: bool = False, n_jobs: int = 1) -> pd.DataFrame:
    """Rows (fold, method, n_components, n_dims, error, ...) of every grid cell on every part
    (``simulation_parts`` or ``cv_parts``). The folds run in ``n_jobs`` processes."""
    from joblib import Parallel, delayed

    p = parts[0][0].shape[1]
    dims = dims_for(dataset, p, n_dims)
    Rs = [int(r) for r in n_components]
    tasks = [delayed(_fold_rows)(f, part, dataset, seed, Rs, dims, tuple(methods), standardize)
             for f, part in enumerate(parts)]
    done = Parallel(n_jobs=n_jobs, return_as="generator")(tasks) if n_jobs > 1 else (
        t[0](*t[1], **t[2]) for t in tasks)
    progress, results = Progress(len(tasks)), []
    for rows in done:  # in the folds' order, each logged as it is done
        results.append(rows)
        log.info("%s: fold %d of the grid done; %s", dataset, len(results) - 1, progress(len(results)))
    return pd.DataFrame([row for rows in results for row in rows], columns=COLUMNS)


def _fold_rows(fold: int, part, dataset: str, seed: int, Rs, dims, methods, standardize: bool) -> list[dict]:
    X_train, y_train, X_test, y_test = part
    fixed = {"standardize": standardize, "random_state": derive_seed(seed, dataset, fold, "model") % 2**31}
    rows = []
    for method in methods:  # GMM-MPCA before MDA-DR-MPCA: the latter reuses its cached fit
        for R in Rs:
            for d in dims:
                rows.append(_cell(fold, method, R, d, fixed, X_train, y_train, X_test, y_test))
    return rows


def _cell(fold, method, R, d, fixed, X_train, y_train, X_test, y_test) -> dict:
    row = {"fold": int(fold), "method": method, "n_components": int(R), "n_dims": int(d),
           "n_train": int(len(y_train)), "n_test": int(len(y_test)), "n_classes": int(len(np.unique(y_train)))}
    t0 = time.perf_counter()
    if method == "gmm_mpca_sep" and d - (row["n_classes"] - 1) < SEP_MIN_EXTRA:
        return {**row, "error": float("nan"), "fit_seconds": 0.0, "bandwidth": float("nan"),
                "log_likelihood": float("nan"), "n_candidates": 0}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter
            model = make_estimator(method, R, d, fixed).fit(X_train, y_train)
    except HLMError:
        return {**row, "error": float("nan"), "fit_seconds": time.perf_counter() - t0, "bandwidth": float("nan"),
                "log_likelihood": float("nan"), "n_candidates": 0}
    seconds = time.perf_counter() - t0
    return {**row, "error": 100.0 * float(np.mean(model.predict(X_test) != y_test)), "fit_seconds": seconds,
            "bandwidth": float(getattr(model, "bandwidth_", np.nan) or np.nan),
            "log_likelihood": float(getattr(model, "log_likelihood_", np.nan)),
            "n_candidates": int(len(getattr(model, "candidates_", []) or []))}


def run(*, dataset: str, entry: dict, outputs: dict, settings: dict, tags: dict, n_jobs: int = 1,
        root: str | Path = ".") -> None:
    """Every method at every (R, d) of the grid on the chapter's partitions (ten fresh simulations of a generated
    data set, else stratified cross-validation), to Parquet; and the 2-D view of the first partition.
    ``settings``: ``seed`` and the section's grids and designs (``n_components``, ``n_dims``, ``n_folds``,
    ``n_simulations``, ``n_train``, ``n_test``)."""
    from hlm.pipeline.protocols.common import protocol_vectors, write_protocol
    from hlm.pipeline.protocols.subspace_gmm.view import plot_subspace_view

    seed = settings["seed"]
    spec, records = protocol_vectors("subspace GMM protocol", dataset, entry, root)
    if spec.format == "generated":
        design = {"design": "simulations", "n_simulations": settings["n_simulations"],
                  "n_train": settings["n_train"], "n_test": settings["n_test"]}
        parts = simulation_parts(spec, settings["n_simulations"], settings["n_train"], settings["n_test"], seed,
                                 dataset)
    else:
        design = {"design": "cv", "n_folds": settings["n_folds"]}
        parts = cv_parts(np.asarray(records.features, dtype=np.float64), np.asarray(records.labels),
                         settings["n_folds"], seed, dataset)
    standardize = bool(spec.standardize)
    frame = run_subspace_gmm(parts, dataset=dataset, seed=seed, n_components=settings["n_components"],
                             n_dims=settings.get("n_dims"), standardize=standardize, n_jobs=n_jobs)
    write_protocol(frame, outputs["runs"], {"dataset": dataset, "seed": seed, "standardize": standardize, **design},
                   tags)
    plot_subspace_view(parts[0], outputs["figure"], dataset=dataset, seed=seed, standardize=standardize,
                       make_estimator=make_estimator)
    for method, g in frame.groupby("method", sort=False):
        cells = g.groupby(["n_components", "n_dims"])["error"].mean()
        log.info("%s/%s: best cell %.2f%% at (R, d) = %s; %.2f s per fit", dataset, method, cells.min(),
                 cells.idxmin() if cells.notna().any() else None, g.fit_seconds.mean())
