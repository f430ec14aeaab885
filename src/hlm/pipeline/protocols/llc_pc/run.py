"""The LLC-PC paper's protocol (Chen, Lu and Boedihardjo, section 6; docs/llc-pc-spec.md section 8).

Random stratified partitions into training and test parts of the paper's Table 1 sizes
(Glass 128:86, Ringnorm 400:7000, both for the generated ``ringnorm`` and for DELVE's own realization
``ring``; 60:40 for another data set). On each training part,
per subclassing (Greedy-MPE, and k-means, HC and EM in each class): one fit up to ``k_max`` subclasses gives the test
accuracy and the MPE criterion at every total K (the paper's "optimal" accuracy is the best
K of the mean curve); the project's inner 10-fold CV chooses K, and that choice's test
accuracy is recorded too. With k-means subclasses, as the paper's section 6.2, the share of
test objects in the provable region of Theorem 3.1 and the agreement of voting with MinMax
and with the probability schema are recorded per K.
"""

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
from hlm.pipeline.progress import Progress
from hlm.pipeline.protocols.llc_pc import METHODS as LLC_METHODS

log = logging.getLogger("hlm")

#: training objects per partition, the paper's Table 1 (training:test); other data sets: TRAIN_FRACTION
TRAIN_SIZES = {"glass": 128, "ringnorm": 400, "ring": 400}  # ring: DELVE's own realization (KEEL's copy)
TRAIN_FRACTION = 0.6
#: the method whose subclasses the equivalence study of section 6.2 uses
EQUIVALENCE_METHOD = "llc_pc_kmeans"
COLUMNS = ["partition", "method", "selection", "n_subclasses", "accuracy", "mpe", "provable", "agree_minmax",
           "agree_probability", "fit_seconds", "n_train", "n_test"]


def partition(y: np.ndarray, dataset: str, seed: int, index: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) indices of one stratified random partition of the paper's sizes."""
    n = len(y)
    size = TRAIN_SIZES.get(dataset, int(round(TRAIN_FRACTION * n)))
    if not 0 < size < n:
        raise DataError(f"LLC-PC protocol: data set '{dataset}' has {n} objects, too few for {size} training ones")
    train, test = train_test_split(np.arange(n), train_size=size, stratify=y,
                                   random_state=derive_seed(seed, dataset, "llc-pc", index) % 2**32)
    return np.sort(train), np.sort(test)


def run_llc_pc(X: np.ndarray, y: np.ndarray, *, dataset: str, seed: int, cv_folds: int, n_partitions: int,
               k_max: int = SUBCLASS_GRID[-1], methods=LLC_METHODS, partitions: list[int] | None = None,
               n_jobs: int = 1, cv: bool = True) -> pd.DataFrame:
    """Rows (partition, method, selection 'path'|'cv', n_subclasses, accuracy %, mpe, ...).

    'path' rows: one fit to ``k_max`` on the training part, tested at every K from the class count N to
    ``k_max`` (the paper's "1 to 40": a K below N is N, one subclass per class); 'cv' rows: K chosen by the
    inner CV over the same range, refitted and tested (fit_seconds includes the CV); ``cv=False`` leaves them
    out (the paper's "optimal" needs only the path). ``partitions``: run only these (tests).
    """
    y = np.asarray(y)
    ks = list(range(len(np.unique(y)), k_max + 1))
    rows = []
    todo = list(partitions) if partitions is not None else list(range(n_partitions))
    progress = Progress(len(todo))
    for done, index in enumerate(todo, 1):
        train, test = partition(y, dataset, seed, index)
        state = derive_seed(seed, dataset, "llc-pc", index, "model") % 2**31
        for method in methods:
            rows += _path_rows(index, method, X, y, train, test, ks, state)
            if cv:
                rows.append(_cv_row(index, method, X, y, train, test, ks, state, cv_folds,
                                    derive_seed(seed, dataset, "llc-pc", index, "cv"), n_jobs))
        log.info("%s: LLC-PC partition %d done; %s", dataset, index, progress(done))
    return pd.DataFrame(rows, columns=COLUMNS)


def _path_rows(index, method, X, y, train, test, ks, state) -> list[dict]:
    equivalence = method == EQUIVALENCE_METHOD
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capped allocations, libsvm max_iter: per-K rows say nothing of them
        model = METHODS[method].make({"n_subclasses": ks[-1], "random_state": state}).fit(X[train], y[train])
        path = model.path_predictions(X[test], ks, combinations=("voting", "minmax", "probability")
                                      if equivalence else ("voting",))
    seconds = time.perf_counter() - t0
    rows = []
    for i, k in enumerate(ks):
        vote = path["predictions"]["voting"][i]
        row = {"partition": index, "method": method, "selection": "path", "n_subclasses": k,
               "accuracy": 100.0 * float(np.mean(vote == y[test])), "mpe": float(path["mpe"][i]),
               "provable": np.nan, "agree_minmax": np.nan, "agree_probability": np.nan,
               "fit_seconds": seconds, "n_train": len(train), "n_test": len(test)}
        if equivalence:
            row.update(provable=float(np.mean(path["provable"][i])),
                       agree_minmax=float(np.mean(path["predictions"]["minmax"][i] == vote)),
                       agree_probability=float(np.mean(path["predictions"]["probability"][i] == vote)))
        rows.append(row)
    return rows


def _cv_row(index, method, X, y, train, test, ks, state, cv_folds, cv_seed, n_jobs) -> dict:
    t0 = time.perf_counter()
    estimator = METHODS[method].make({"random_state": state})
    folds = make_folds(y[train], cv_folds, cv_seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the CV's fits' warnings, as in the evaluation stage
        best, _, _ = select_params(estimator, X[train], y[train], [{"n_subclasses": k} for k in ks], folds, n_jobs)
        model = METHODS[method].make({**best, "random_state": state}).fit(X[train], y[train])
    seconds = time.perf_counter() - t0
    return {"partition": index, "method": method, "selection": "cv", "n_subclasses": int(best["n_subclasses"]),
            "accuracy": 100.0 * float(np.mean(model.predict(X[test]) == y[test])), "mpe": float(model.mpe_),
            "provable": np.nan, "agree_minmax": np.nan, "agree_probability": np.nan, "fit_seconds": seconds,
            "n_train": len(train), "n_test": len(test)}


def run(*, dataset: str, entry: dict, outputs: dict, settings: dict, tags: dict, n_jobs: int = 1,
        root: str | Path = ".", part: str | None = None) -> None:
    """LLC-PC with Greedy-MPE, k-means, HC and EM subclasses under the paper's protocol on one data set, to Parquet
    (``part``: one subclassing's rows only, for :func:`gather`). ``settings``: ``seed``, ``cv_folds`` and the
    section's ``n_partitions``."""
    from hlm.pipeline.protocols.common import protocol_vectors, write_protocol

    seed, cv_folds, n_partitions = settings["seed"], settings["cv_folds"], settings["n_partitions"]
    _, records = protocol_vectors("LLC-PC protocol", dataset, entry, root)
    frame = run_llc_pc(records.features, records.labels, dataset=dataset, seed=seed, cv_folds=cv_folds,
                       n_partitions=n_partitions, n_jobs=n_jobs, **({"methods": (part,)} if part else {}))
    write_protocol(frame, outputs["runs"], _metadata(dataset, settings, part), tags)
    if part is None:
        _finish(dataset, frame, outputs)


def gather(*, dataset: str, parts: list[str], outputs: dict, settings: dict, tags: dict) -> None:
    """The whole run of one data set from its parts' files (one per subclassing), rows in the order of one job."""
    from hlm.pipeline.protocols.common import gathered_rows, write_protocol

    frame = gathered_rows(parts, LLC_METHODS, before=("partition",))
    write_protocol(frame, outputs["runs"], _metadata(dataset, settings, None), tags)
    _finish(dataset, frame, outputs)


def _metadata(dataset: str, settings: dict, part: str | None) -> dict:
    return {"dataset": dataset, "seed": settings["seed"], "n_partitions": settings["n_partitions"],
            "cv_folds": settings["cv_folds"], **({"part": part} if part else {})}


def _finish(dataset: str, frame: pd.DataFrame, outputs: dict) -> None:
    """The whole run's figure (Figures 7 and 9) and its summary lines."""
    from hlm.pipeline.protocols.llc_pc.figure import plot_llc_pc_curves

    plot_llc_pc_curves(frame, outputs["figure"], dataset=dataset)
    for method, g in frame.groupby("method", sort=False):
        curve = g[g.selection == "path"].groupby("n_subclasses").accuracy.mean()
        cv = g[g.selection == "cv"]
        log.info("%s/%s: optimal %.2f%% at K = %d; CV %.2f%% (median K %g)", dataset, method, curve.max(),
                 curve.idxmax(), cv.accuracy.mean(), cv.n_subclasses.median())
