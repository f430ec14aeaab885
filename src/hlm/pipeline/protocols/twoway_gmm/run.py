"""The two-way GMM's grid protocol (dissertation chapter 2, Tables 2.1-2.3; docs/twoway-gmm-spec.md section 8).

On each of the project's random train/test splits (section 5.1: 20 x 80/20, the same
partitions as the main evaluation), every grid point is refitted on the training part
and tested, as the chapter's tables show the test error at every (M, L): the two-way
GMM at each (components per class, variable clusters) and MDA (no variable clustering)
at each number of components. Beside the grid, both are also chosen by the project's
inner CV on the training part, the honest figure. One row per (split, method, grid
point); error in %.
"""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.base._seeds import derive_seed
from hlm.errors import DataError, HLMError
from hlm.pipeline.evaluation.cv import make_folds, select_params
from hlm.pipeline.evaluation.splits import make_splits, split_indices
from hlm.pipeline.methods import TWOWAY_CLUSTERS_GRID, TWOWAY_COMPONENTS_GRID, make_method
from hlm.pipeline.progress import Progress
from hlm.pipeline.protocols.twoway_gmm import METHODS_BY_COVARIANCE

log = logging.getLogger("hlm")

COLUMNS = ["split", "method", "selection", "n_components", "n_clusters", "error", "fit_seconds", "n_iter",
           "converged", "n_parameters", "n_clusters_effective", "n_train", "n_classes"]


def cluster_grid(n_clusters, p: int) -> list[int]:
    """The L values of a grid below the dimension p (L >= p is MDA: spec section 3.6)."""
    return [int(L) for L in n_clusters if L < p]


def run_twoway_gmm(X: np.ndarray, y: np.ndarray, *, dataset: str, seed: int, cv_folds: int, n_splits: int,
                   test_fraction: float, n_components=TWOWAY_COMPONENTS_GRID,
                   n_clusters=TWOWAY_CLUSTERS_GRID, standardize: bool = False,
                   covariance=("diag",), splits: list[int] | None = None, n_jobs: int = 1) -> pd.DataFrame:
    """Rows (split, method, selection, n_components, n_clusters, error, ...) of the grid and the CV choice.

    ``X``: the feature vectors as read (NaN allowed: the missing-data EM); ``standardize``: z-score the
    features inside the estimator (data sets in mixed units); ``splits``: run only these (tests).
    ``n_components`` (per class; the chapter's M is this times the class count) and ``n_clusters`` (L;
    those below the dimension are used) are the table's rows and columns. ``n_clusters`` of MDA rows is -1.
    ``covariance``: "diag" (Tables 2.1-2.3: twoway_gmm, mda) and/or "full" (Table 2.4, after the per-class
    whitening of section 2.2.2: twoway_gmm_full, mda_full).
    """
    y = np.asarray(y)
    if "full" in covariance and np.isnan(X).any():
        log.info("%s: missing values, so no full-covariance rows (the missing-data EM is the diagonal model's)",
                 dataset)
        covariance = [c for c in covariance if c != "full"]
        if not covariance:
            raise DataError(f"two-way GMM protocol: data set '{dataset}' has missing values, and covariance "
                            "'full' has no missing-data EM; add 'diag' to twoway_gmm.covariance")
    Ls = cluster_grid(n_clusters, X.shape[1])
    Ms = [int(m) for m in n_components]
    table = make_splits(len(y), dataset=dataset, n_splits=n_splits, test_fraction=test_fraction, seed=seed)
    rows = []
    todo = list(splits) if splits is not None else list(range(n_splits))
    progress = Progress(len(todo))
    for done, split in enumerate(todo, 1):
        train, test = split_indices(table, split)
        fixed = {"standardize": standardize, "random_state": derive_seed(seed, dataset, split, "model") % 2**31}
        grids = []
        for c in covariance:
            two, mda = METHODS_BY_COVARIANCE[c]
            grids += [(two, [{"n_components": m, "n_clusters": L} for m in Ms for L in Ls]),
                      (mda, [{"n_components": m} for m in Ms])]
        for method, grid in grids:
            for point in grid:
                rows.append(_fit_row(split, method, "grid", {**fixed, **point}, X, y, train, test))
            folds = make_folds(y[train], cv_folds, derive_seed(seed, dataset, split, "cv"))
            estimator = make_method(method, fixed)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the CV's fits' warnings, as in the evaluation stage
                best, _, _ = select_params(estimator, X[train], y[train], grid, folds, n_jobs)
            cv_seconds = time.perf_counter() - t0
            row = _fit_row(split, method, "cv", {**fixed, **best}, X, y, train, test)
            rows.append({**row, "fit_seconds": row["fit_seconds"] + cv_seconds})
        log.info("%s: two-way GMM grid, split %d done; %s", dataset, split, progress(done))
    return pd.DataFrame(rows, columns=COLUMNS)


def _fit_row(split: int, method: str, selection: str, params: dict, X, y, train, test) -> dict:
    """One refit on the training part, tested; a point the data cannot support (a class smaller than
    its components) gets a NaN error, as the CV scores it invalid."""
    row = {"split": int(split), "method": method, "selection": selection, "n_components": int(params["n_components"]),
           "n_clusters": int(params.get("n_clusters") or -1), "n_train": int(len(train)),
           "n_classes": int(len(np.unique(y[train])))}
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter: recorded as converged False
            model = make_method(method, params).fit(X[train], y[train])
    except HLMError:
        return {**row, "error": float("nan"), "fit_seconds": time.perf_counter() - t0, "n_iter": 0,
                "converged": False, "n_parameters": 0, "n_clusters_effective": 0.0}
    seconds = time.perf_counter() - t0
    return {**row, "error": 100.0 * float(np.mean(model.predict(X[test]) != y[test])), "fit_seconds": seconds,
            "n_iter": int(np.max(model.n_iter_)), "converged": bool(np.all(model.converged_)),
            "n_parameters": int(model.n_parameters_),
            "n_clusters_effective": float(np.mean(model.n_clusters_effective_))}


def run(*, dataset: str, entry: dict, outputs: dict, settings: dict, tags: dict, n_jobs: int = 1,
        root: str | Path = ".", part: str | None = None) -> None:
    """The two-way GMM at every (M, L) and MDA at every M on the project's splits, plus both chosen by CV,
    to Parquet. ``settings``: ``seed``, ``cv_folds``, ``n_splits``, ``test_fraction`` and the section's grids
    ``n_components`` and ``n_clusters``. Features are z-scored inside the estimator where the registry
    standardizes them (mixed units). ``part`` ("split<s>", the section's ``split_jobs``): that split alone."""
    from hlm.pipeline.protocols.common import protocol_vectors, write_protocol

    spec, records = protocol_vectors("two-way GMM protocol", dataset, entry, root)
    grids = {k: settings[k] for k in ("n_components", "n_clusters", "covariance") if k in settings}
    frame = run_twoway_gmm(records.features, records.labels, dataset=dataset, seed=settings["seed"],
                           cv_folds=settings["cv_folds"], n_splits=settings["n_splits"],
                           test_fraction=settings["test_fraction"], standardize=bool(spec.standardize),
                           n_jobs=n_jobs, **({"splits": [int(part.removeprefix("split"))]} if part else {}), **grids)
    metadata = _metadata(dataset, settings, bool(spec.standardize))
    write_protocol(frame, outputs["runs"], {**metadata, **({"part": part} if part else {})}, tags)
    if part is None:
        _summary(dataset, frame)


def gather(*, dataset: str, parts: list[str], outputs: dict, settings: dict, tags: dict) -> None:
    """The whole run of one data set from its parts' files (one per split), rows in the order of one job."""
    from hlm.datasets._artifacts import read_metadata
    from hlm.pipeline.protocols.common import write_protocol

    frames = [pd.read_parquet(p) for p in parts]
    frame = pd.concat(sorted(frames, key=lambda f: int(f["split"].iloc[0])), ignore_index=True)
    standardize = read_metadata(parts[0])["standardize"]
    write_protocol(frame, outputs["runs"], _metadata(dataset, settings, standardize), tags)
    _summary(dataset, frame)


def _metadata(dataset: str, settings: dict, standardize: bool) -> dict:
    return {"dataset": dataset, "seed": settings["seed"], "n_splits": settings["n_splits"],
            "cv_folds": settings["cv_folds"], "test_fraction": settings["test_fraction"], "standardize": standardize}


def _summary(dataset: str, frame: pd.DataFrame) -> None:
    for (method, selection), g in frame.groupby(["method", "selection"], sort=False):
        log.info("%s/%s (%s): error %.2f%% (mean over %d fits), %.2f s per fit", dataset, method, selection,
                 g.error.mean(), len(g), g.fit_seconds.mean())
