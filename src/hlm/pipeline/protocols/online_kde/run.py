"""The odKDE paper's protocol (Kristan and Leonardis, section 4; docs/online-kde-spec.md section 9).

Fourfold stratified CV; on each fold's training part, 3 random orderings. The
online learners (oKDE, odKDE) start each class from its first ``n_init`` (10)
objects of the ordering and take the others one at a time; the batch baselines
(KDE with CV bandwidth, SVM-RBF with C and gamma by our 10-fold CV) are fitted
once per fold, the orderings do not apply to them. One row per (fold, ordering,
method): test accuracy, components per class (the paper's bracketed numbers:
the online learners' mixture components; the KDE's training objects; the SVM's
support vectors, each averaged over the classes) and the fit seconds.
"""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from hlm.base._seeds import derive_seed
from hlm.errors import DataError
from hlm.pipeline.evaluation.cv import make_folds, select_params
from hlm.pipeline.methods import METHODS, make_method
from hlm.pipeline.progress import Progress
from hlm.pipeline.protocols.online_kde import BATCH_METHODS, N_FOLDS, N_ORDERINGS, ONLINE_METHODS

log = logging.getLogger("hlm")

N_INIT = 10
#: numbers of objects learnt (after the start) at which an online run's test accuracy is recorded, and at its end
CHECKPOINTS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


def check_protocol_data(y: np.ndarray, dataset: str, n_folds: int = N_FOLDS, n_init: int = N_INIT) -> None:
    """A one-line DataError for a class smaller than the folds; a warning for a class too small to start
    from ``n_init`` objects in every fold's training part."""
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    if counts.min() < n_folds:
        raise DataError(f"online KDE protocol: data set '{dataset}': class {labels[counts.argmin()]!r} has "
                        f"{counts.min()} objects, fewer than the {n_folds} folds")
    small = labels[counts * (n_folds - 1) / n_folds < n_init]
    if small.size:
        warnings.warn(f"online KDE protocol: data set '{dataset}': class(es) {', '.join(map(str, small))} have "
                      f"fewer than {n_init} training objects per fold; they start from all of them", UserWarning,
                      stacklevel=2)


def run_online_kde(X: np.ndarray, y: np.ndarray, *, dataset: str, seed: int, cv_folds: int,
                   methods=(*ONLINE_METHODS, *BATCH_METHODS), n_folds: int = N_FOLDS, n_orderings: int = N_ORDERINGS,
                   folds: list[int] | None = None, orderings: list[int] | None = None) -> pd.DataFrame:
    """Rows (fold, ordering, method, accuracy, components_per_class, fit_seconds, n_train, components_path);
    accuracy in %; ``components_path`` (online learners only): the mean components per class after the start and
    after each object learnt, the paper's complexity over time.
    ``X``: the feature vectors as read (each method standardises with its training part).

    ``cv_folds``: the folds of the SVM's parameter CV (the config's); ``folds`` and ``orderings``: run only
    these (a part, ``PARTS``; tests); ordering is -1 for the batch methods. Each fold's split and each
    ordering come from seeds of (seed, data set, fold, ordering), so a part's rows are those of the whole run.
    """
    y = np.asarray(y)
    check_protocol_data(y, dataset, n_folds)
    outer = StratifiedKFold(n_folds, shuffle=True, random_state=derive_seed(seed, dataset, "okde-cv") % 2**31)
    rows = []
    progress = Progress(len(set(folds) & set(range(n_folds))) if folds is not None else n_folds)
    done = 0
    for fold, (train, test) in enumerate(outer.split(X, y)):
        if folds is not None and fold not in folds:
            continue
        for method in methods:
            if method in ONLINE_METHODS:
                for ordering in range(n_orderings) if orderings is None else orderings:
                    order = np.random.default_rng(derive_seed(seed, dataset, fold, ordering, "okde-order")).permutation(
                        train)
                    t0 = time.perf_counter()
                    over_time = _OverTime(X[test], y[test])
                    model = make_method(method, {"n_init": N_INIT}).fit(X[order], y[order], on_update=over_time)
                    seconds = time.perf_counter() - t0 - over_time.seconds  # the checkpoints' predictions out
                    rows.append({**_row(fold, ordering, method, model, X[test], y[test], seconds,
                                        float(np.mean(model.n_components_)), len(train)), **over_time.columns()})
            else:
                t0 = time.perf_counter()
                model = _batch_fit(method, X[train], y[train], seed, dataset, fold, cv_folds)
                rows.append({**_row(fold, -1, method, model, X[test], y[test], time.perf_counter() - t0,
                                    _batch_components(model, y[train]), len(train)),
                             **dict.fromkeys(_OverTime.COLUMNS)})
        done += 1
        log.info("%s: fold %d done; %s", dataset, fold, progress(done))
    return pd.DataFrame(rows)


class _OverTime:
    """An online run's course (the paper's section 4: complexity "reached the upper bound ... relatively early",
    while accuracy "further increased"): the mean components per class after the start and after each object,
    and the test accuracy after the numbers of objects in ``CHECKPOINTS`` and at the end (the fit's ``on_update``).
    ``seconds``: the time of those predictions."""

    COLUMNS = ("components_path", "checkpoints", "accuracy_path")

    def __init__(self, X_test, y_test):
        self.X_test, self.y_test = X_test, y_test
        self.components: list[float] = []
        self.checkpoints: list[int] = []
        self.accuracy: list[float] = []
        self.seconds = 0.0
        self._last = None

    def __call__(self, model) -> None:
        """Record after an update: the components, and the accuracy at a checkpoint (the model is kept for the
        end's)."""
        learnt = len(self.components)  # objects added so far (0: the start)
        self.components.append(float(model.n_components_.mean()))
        self._last = model
        if learnt in CHECKPOINTS:
            self._score(learnt)

    def _score(self, learnt: int) -> None:
        t0 = time.perf_counter()
        self.accuracy.append(100.0 * float(np.mean(self._last.predict(self.X_test) == self.y_test)))
        self.checkpoints.append(learnt)
        self.seconds += time.perf_counter() - t0

    def columns(self) -> dict:
        """The row's columns; the end's accuracy is added if the end is not a checkpoint."""
        end = len(self.components) - 1
        if end not in self.checkpoints:
            self._score(end)
        return {"components_path": np.asarray(self.components), "checkpoints": np.asarray(self.checkpoints),
                "accuracy_path": np.asarray(self.accuracy)}


def _batch_fit(method: str, X, y, seed: int, dataset: str, fold: int, cv_folds: int):
    """The batch baseline, its grid (if any) chosen by the house CV on the fold's training part."""
    spec = METHODS[method]
    grid = spec.grid(None)
    estimator = spec.make()
    inner = make_folds(y, cv_folds, derive_seed(seed, dataset, fold, "okde-inner-cv"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # libsvm max_iter in the CV, as in the evaluation stage
        best, _, _ = select_params(estimator, X, y, grid, inner)
    return spec.make().set_params(**best).fit(X, y)


def _batch_components(model, y_train) -> float:
    """The paper's bracket for a batch method: support vectors per class (SVM), else training objects per class."""
    svc = getattr(model, "svc_", None)
    if svc is not None:
        return float(np.mean(svc.n_support_))
    return float(len(y_train) / len(np.unique(y_train)))


def _row(fold, ordering, method, model, X_test, y_test, seconds, components, n_train) -> dict:
    return {"fold": fold, "ordering": ordering, "method": method,
            "accuracy": 100.0 * float(np.mean(model.predict(X_test) == y_test)),
            "components_per_class": components, "fit_seconds": seconds, "n_train": n_train}


def _part_scope(part: str) -> dict:
    """The arguments of :func:`run_online_kde` that run only ``part`` (one of ``PARTS``)."""
    fold, *which = part.split("-")
    if len(which) == 1:  # fold{f}-{batch method}
        return {"folds": [int(fold[4:])], "methods": tuple(which)}
    return {"folds": [int(fold[4:])], "orderings": [int(which[0][8:])], "methods": (which[1],)}


def run(*, dataset: str, entry: dict, outputs: dict, settings: dict, tags: dict, n_jobs: int = 1,
        root: str | Path = ".", part: str | None = None) -> None:
    """oKDE, odKDE and the batch baselines under the paper's protocol on one data set, to Parquet.

    The feature vectors are read from the registry entry (no distance matrix: Letter's would be 3.2 GB).
    ``settings``: ``seed`` and ``cv_folds`` (the batch baselines' CV).
    """
    from hlm.pipeline.protocols.common import protocol_vectors, write_protocol

    seed, cv_folds = settings["seed"], settings["cv_folds"]
    _, records = protocol_vectors("online KDE protocol", dataset, entry, root)
    frame = run_online_kde(records.features, records.labels, dataset=dataset, seed=seed, cv_folds=cv_folds,
                           **(_part_scope(part) if part else {}))
    write_protocol(frame, outputs["runs"], _metadata(dataset, settings, part), tags)
    if part is None:
        _finish(dataset, frame, outputs)


def gather(*, dataset: str, parts: list[str], outputs: dict, settings: dict, tags: dict) -> None:
    """The whole run of one data set from its parts' files (``PARTS``), rows in the order of one job."""
    from hlm.pipeline.protocols.common import gathered_rows, write_protocol

    # by fold, then method (the paper's columns), then ordering
    frame = gathered_rows(parts, (*ONLINE_METHODS, *BATCH_METHODS), before=("fold",), after=("ordering",))
    write_protocol(frame, outputs["runs"], _metadata(dataset, settings, None), tags)
    _finish(dataset, frame, outputs)


def _metadata(dataset: str, settings: dict, part: str | None) -> dict:
    return {"dataset": dataset, "seed": settings["seed"], "folds": N_FOLDS, "orderings": N_ORDERINGS,
            "n_init": N_INIT, "cv_folds": settings["cv_folds"], **({"part": part} if part else {})}


def _finish(dataset: str, frame: pd.DataFrame, outputs: dict) -> None:
    """The whole run's figure (complexity over time) and its summary lines."""
    from hlm.pipeline.protocols.online_kde.figure import plot_complexity

    plot_complexity(frame, outputs["figure"], dataset=dataset)
    for method, g in frame.groupby("method", sort=False):
        log.info("%s/%s: accuracy %.2f%% (sd %.2f), %.1f components per class, %.2f s per fit", dataset, method,
                 g.accuracy.mean(), g.accuracy.std(ddof=1), g.components_per_class.mean(), g.fit_seconds.mean())
