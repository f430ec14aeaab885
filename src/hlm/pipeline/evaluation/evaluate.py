"""The per-split evaluation loop (paper section 5.1).

For every split: choose parameters by K-fold CV on the training part only,
refit on the whole training part, classify the test part. ``fit_seconds``
covers parameter selection plus the final fit (the paper's "training");
``cv_seconds`` is the selection part alone. An estimator's compiled kernels
are loaded before the first split is timed (its ``_warm_up``, part of the
fast-path protocol ``hlm.base._classifiers.FastPathMixin``): a once-per-process
cost, like loading a library.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import warnings
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone

from hlm.base._classifiers import FastPathMixin
from hlm.base._seeds import derive_seed
from hlm.datasets._artifacts import DistanceArtifact, take
from hlm.distances._reciprocal import SimilarityFromDistances
from hlm.distances._vdm_classifier import VDMDistances, for_artifact
from hlm.errors import DataError, HLMError
from hlm.pipeline.evaluation.cv import grid_key, make_folds, select_params
from hlm.pipeline.evaluation.probabilities import final_fit_params, score_split
from hlm.pipeline.evaluation.splits import split_indices
from hlm.pipeline.faults import fault_point
from hlm.pipeline.methods import METHODS, check_method_params
from hlm.pipeline.progress import Progress

log = logging.getLogger("hlm")


@dataclass
class EvaluationResult:
    evaluation: pd.DataFrame  # one row per split
    predictions: pd.DataFrame  # one row per (split, test object)


def evaluate_method(
    artifact: DistanceArtifact,
    splits: pd.DataFrame,
    method_id: str,
    *,
    dataset: str,
    seed: int,
    n_folds: int,
    grid_config: dict | None = None,
    fixed_params: dict | None = None,
    cv_fixed_params: dict | None = None,
    split_ids: list[int] | None = None,
    n_jobs: int = 1,
    known_cv: dict[int, dict[str, float]] | None = None,
    known_cv_seconds: dict[int, float] | None = None,
) -> EvaluationResult:
    """Evaluate one method on every split of one data set.

    ``cv_fixed_params`` override ``fixed_params`` while choosing parameters by
    CV only (the final fit uses ``fixed_params``), e.g. fewer VSH restarts.
    ``n_jobs`` worker processes share the CV folds (same results for any value).
    ``known_cv`` (split -> {grid key: mean CV error}) are CV errors recorded by
    an evaluation with the same estimator, seed and folds (hlm.pipeline.evaluation.reuse):
    those grid points are not cross-validated again. Their recorded CV seconds
    (``known_cv_seconds``) are added to ``fit_seconds`` and ``cv_seconds``, so
    that the run time stays the method's own cost.
    """
    method = METHODS[method_id]
    setup = prepare_method(artifact, method_id, grid_config, fixed_params, cv_fixed_params)
    labels, X, pairwise = artifact.labels, setup.X, setup.pairwise
    _warm_up(setup.estimator)
    rows, preds = [], []
    todo = list(split_ids) if split_ids is not None else sorted(splits["split"].unique())
    progress = Progress(len(todo))
    for done, split in enumerate(todo, 1):
        train, test = split_indices(splits, int(split))
        y_test = labels[test]
        with warnings.catch_warnings(record=True) as caught, _context(dataset, method_id, int(split)):
            warnings.simplefilter("always")
            fitted = fit_method(setup, artifact, train, dataset=dataset, seed=seed, n_folds=n_folds, split=int(split),
                                n_jobs=n_jobs, known=(known_cv or {}).get(int(split), {}),
                                known_seconds=(known_cv_seconds or {}).get(int(split), 0.0))
            model, best, searched, cv_err, folds = (fitted.model, fitted.best, fitted.searched, fitted.cv_error,
                                                    fitted.folds)
            t0, t_cv, t_fit, reused = fitted.t0, fitted.t_cv, fitted.t_fit, fitted.reused
            D_te = take(X, test, train) if pairwise else X[test]
            t_read = time.perf_counter()
            y_pred = model.predict(D_te)
            proba = model.predict_proba(D_te) if method.gives_probabilities else None
            t_pred = time.perf_counter()
            P, prob_scores = score_split(proba, model.classes_, y_test, np.unique(labels))
        fault_point(f"evaluate/{dataset}/{method_id}")  # a split done, nothing written: where a test kills it
        messages = sorted({str(w.message) for w in caught})
        rows.append(
            {
                "split": int(split),
                "error_rate": 100.0 * float(np.mean(y_pred != y_test)),
                **prob_scores,  # log_loss, brier, n_clipped (NaN without probabilities)
                "n_train": int(len(train)),
                "n_test": int(len(test)),
                "fit_seconds": t_fit - t0,
                "predict_seconds": t_pred - t_read,
                "cv_seconds": t_cv - t0,
                "cv_folds": len(folds),
                "params": json.dumps(_jsonable({**_plain(best), **_fitted_summary(model)}), sort_keys=True),
                "cv_error": json.dumps({grid_key(p): float(e) for p, e in zip(searched, cv_err)}),
                "cv_reused": int(reused),
                "warnings": json.dumps(messages),
                "model": _exported_model(model, artifact.ids, train),
            }
        )
        pred = pd.DataFrame(
            {"split": int(split), "index": test.astype("int64"), "y_true": y_test, "y_pred": y_pred.astype(str)}
        )
        if P is not None:  # a column per class of the data set (0 for one the training part lacks)
            for k, cls in enumerate(np.unique(labels)):
                pred[f"proba_{cls}"] = P[:, k]
        preds.append(pred)
        del D_te, model, proba, P  # before the next split's blocks are read
        log.info("%s/%s: split %d error %.2f%%, fit %.1f s, predict %.1f s; %s", dataset, method_id, int(split),
                 rows[-1]["error_rate"], t_fit - t0, t_pred - t_read, progress(done))
    return EvaluationResult(pd.DataFrame(rows), pd.concat(preds, ignore_index=True))


@dataclass
class MethodSetup:
    """A method made ready for one data set: its estimator, CV grid and input matrix (:func:`prepare_method`)."""

    method_id: str
    estimator: object  # with the method's and the config's fixed hyper-parameters (wrapped where needed)
    grid: list[dict]
    fixed_params: dict | None
    cv_fixed_params: dict | None
    X: np.ndarray  # what the method works on (method_input), or the records of a distance that uses labels
    pairwise: bool  # X is an N x N matrix (rows and columns are objects)


def prepare_method(artifact: DistanceArtifact, method_id: str, grid_config: dict | None = None,
                   fixed_params: dict | None = None, cv_fixed_params: dict | None = None) -> MethodSetup:
    """The estimator, grid and input of a method on a data set, as every split of the evaluation uses them."""
    method = METHODS[method_id]
    if method.standardize_as_registry and "standardize" not in (fixed_params or {}):
        fixed_params = {**(fixed_params or {}), "standardize": bool(artifact.metadata.get("standardize"))}
    if method.input == "relation" and "relation" not in (fixed_params or {}):  # DistanceTransform
        fixed_params = {**(fixed_params or {}),
                        "relation": "similarity" if artifact.similarities is not None else "distance"}
    grid = check_method_params(method_id, {"grid": grid_config, "fixed": fixed_params, "cv_fixed": cv_fixed_params})
    estimator = method.make(fixed_params)
    X, wrapped = method_input(artifact, method_id)
    if wrapped:  # similarity method on distance-only data: 1/d with the fit set's bound (spec 4.2)
        estimator = SimilarityFromDistances(estimator)
        grid = [_nested(p) for p in grid]
        cv_fixed_params = _nested(cv_fixed_params or {})
    pairwise = method.input != "vectors" and artifact.records is None
    if artifact.records is not None:  # a distance that uses labels: built per fit set (VDMDistances, below)
        X, grid, cv_fixed_params = artifact.records, [_nested(p) for p in grid], _nested(cv_fixed_params or {})
    return MethodSetup(method_id, estimator, grid, fixed_params, cv_fixed_params, X, pairwise)


@dataclass
class FittedMethod:
    """What :func:`fit_method` chose and fitted, with its times (``time.perf_counter`` readings)."""

    model: object
    best: dict
    searched: list[dict]
    cv_error: np.ndarray
    folds: list
    reused: int  # grid points whose CV errors were known
    t0: float  # start (earlier by the known CV seconds when some were reused)
    t_cv: float  # end of the parameter choice
    t_fit: float  # end of the final fit


def fit_method(setup: MethodSetup, artifact: DistanceArtifact, train: np.ndarray, *, dataset: str, seed: int,
               n_folds: int, split, n_jobs: int = 1, known: dict | None = None,
               known_seconds: float = 0.0) -> FittedMethod:
    """Choose the parameters by CV on the objects ``train``, then refit on all of them (paper section 5.1).

    The folds and the estimator's seed derive from (seed, dataset, split): the evaluation's splits are
    integers; ``hlm fit`` on all labelled objects uses ``split="all"``.
    """
    method = METHODS[setup.method_id]
    labels = artifact.labels
    D_tt = take(setup.X, train, train) if setup.pairwise else setup.X[train]
    y_train = labels[train]
    t0 = time.perf_counter()
    folds = make_folds(y_train, n_folds, derive_seed(seed, dataset, split, "cv"))
    if 1 < len(folds) < min(n_folds, len(y_train)):
        warnings.warn(
            f"CV: the smallest class has {int(np.unique(y_train, return_counts=True)[1].min())} "
            f"training objects, fewer than cv_folds={n_folds}; {len(folds)} folds used",
            UserWarning,
            stacklevel=2,
        )
    split_estimator = _seeded(setup.estimator, setup.fixed_params, seed, dataset, split)
    if artifact.records is not None:  # the fit set's labels only (spec "beyond the paper", section 4)
        split_estimator = for_artifact(split_estimator, artifact.metadata)
    cv_estimator = clone(split_estimator).set_params(**(setup.cv_fixed_params or {}))
    known = known or {}
    split_grid = applicable_grid(split_estimator, D_tt, setup.grid)
    best, searched, cv_err = select_params(cv_estimator, D_tt, y_train, split_grid, folds, n_jobs, known,
                                           method.cv_rule)
    t_cv = time.perf_counter()
    reused = sum(grid_key(p) in known for p in searched)
    t0 -= known_seconds if reused else 0.0
    final = final_fit_params(split_estimator, method.final_fixed)  # e.g. Platt scaling: not in the CV
    model = clone(split_estimator).set_params(**best, **final).fit(D_tt, y_train)
    t_fit = time.perf_counter()
    return FittedMethod(model, best, searched, cv_err, folds, reused, t0, t_cv, t_fit)


def method_input(artifact: DistanceArtifact, method_id: str) -> tuple[np.ndarray, bool]:
    """The matrix a method works on, and whether it must be wrapped in SimilarityFromDistances.

    distance methods: the distances; similarity methods: the native similarity
    if the data set has one, else the distances (converted per fit set);
    vector methods: the feature vectors (kind: vectors only).
    """
    kind = METHODS[method_id].input
    if kind == "distance":
        return artifact.distances, False
    if kind == "relation":  # DistanceTransform: the native similarity, else the distances as they are
        return (artifact.similarities if artifact.similarities is not None else artifact.distances), False
    if kind == "similarity":
        if artifact.similarities is not None:
            return artifact.similarities, False
        return artifact.distances, True
    if artifact.vectors is None:
        raise DataError(
            f"method '{method_id}' needs feature vectors; data set '{artifact.metadata.get('dataset', '?')}' "
            f"is of kind '{artifact.metadata.get('kind', '?')}' (only kind: vectors has them)"
        )
    return artifact.vectors, False


def applicable_grid(estimator, R_train: np.ndarray, grid: list[dict]) -> list[dict]:
    """The grid points whose ``to_distance`` applies to the split's training relation (a ``DistanceTransform``,
    also inside wrappers such as ``VDMDistances``; other estimators: the grid). Similarity candidates left
    out are warned about; none left is an error."""
    name, inner = "to_distance", estimator
    while not hasattr(inner, "valid_candidates") and hasattr(inner, "estimator"):
        name, inner = f"estimator__{name}", inner.estimator
    if not hasattr(inner, "valid_candidates"):
        return grid
    valid = inner.valid_candidates(R_train)
    kept = [p for p in grid if p.get(name, inner.to_distance) in valid]
    dropped = sorted({p.get(name, inner.to_distance) for p in grid} - set(valid))
    if not kept:
        raise DataError(f"no to_distance candidate of the grid applies to the training part "
                        f"(given: {', '.join(dropped)}; valid here: {', '.join(valid)})")
    if dropped and inner.relation == "similarity":
        warnings.warn(f"to_distance {', '.join(dropped)} left out: some off-diagonal training similarities are "
                      "negative, or none is positive", UserWarning, stacklevel=2)
    return kept


def _nested(params: dict) -> dict:
    return {f"estimator__{k}": v for k, v in params.items()}


def _plain(params: dict) -> dict:
    return {_bare(k): v for k, v in params.items()}


def _bare(name: str) -> str:
    """A parameter's name without the wrappers' ``estimator__`` prefixes."""
    while name.startswith("estimator__"):
        name = name.removeprefix("estimator__")
    return name


def _seeded(estimator, fixed_params, seed: int, dataset: str, split):
    """The estimator with ``random_state`` (a wrapped estimator's too) derived from (seed, dataset, split),
    unless fixed in config."""
    names = [k for k in estimator.get_params() if k == "random_state" or k.endswith("__random_state")]
    if not names or any(k in (fixed_params or {}) for k in names):  # also a wrapped one (estimator__...)
        return estimator
    return clone(estimator).set_params(**dict.fromkeys(names, derive_seed(seed, dataset, split, "model") % 2**31))


@contextlib.contextmanager
def _context(dataset: str, method_id: str, split: int):
    """Prefix a user-facing error raised while fitting with where it happened."""
    try:
        yield
    except HLMError as exc:
        raise type(exc)(f"dataset '{dataset}', method '{method_id}', split {split}: {exc}") from None


def _exported_model(model, ids: np.ndarray, train: np.ndarray) -> str | None:
    """The fitted HLM mixture as JSON, its prototypes also named by object id and index; None if not exportable."""
    model = model.estimator_ if isinstance(model, VDMDistances) else model  # same fit rows
    if not hasattr(model, "model"):
        return None
    exported = asdict(model.model())
    objects = train[np.asarray(exported["prototype_index"], dtype=np.intp)]
    exported["prototype_object_index"] = objects.tolist()
    exported["prototype_id"] = [str(i) for i in ids[objects]]
    return json.dumps(exported)


#: fitted attributes recorded under another name than their hyper-parameter's (the chosen K is kept)
FITTED_NAMES = {"n_subclasses_": "n_subclasses_effective"}


def _fitted_summary(model) -> dict:
    """Estimated quantities worth recording with the CV choice (e.g. Kernel HLM's s, b)."""
    out = {}
    model = model.estimator_ if isinstance(model, VDMDistances) else model  # the distances' wrapper
    inner = getattr(model, "estimator_", None)  # SimilarityFromDistances: also the wrapped model's
    for name in ("shape_", "scale_", "shape_mle_", "n_prototypes_", "upper_bound_", "gamma_",
                 "negative_eigenfraction_", "n_subclasses_", "n_clusters_effective_"):
        value = getattr(model, name, getattr(inner, name, None))
        if value is None:
            continue
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 0 and np.isfinite(value):  # shape_mle_ is NaN when the shape is fixed
            key = FITTED_NAMES.get(name, name.rstrip("_"))
            out[key] = int(value) if name in ("n_prototypes_", "n_subclasses_") else float(value)
        elif value.ndim == 1 and np.isfinite(value).all():  # per-class shapes
            out[name.rstrip("_")] = value.tolist()
    return out


def _jsonable(d: dict) -> dict:
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in d.items()}


def _warm_up(estimator) -> None:
    """Load the estimator's compiled kernels before any split is timed (``FastPathMixin._warm_up``).

    Only a speed-up of the first split's timing: a failure here is ignored (the
    real fits report their own errors).
    """
    if isinstance(estimator, FastPathMixin):
        try:
            estimator._warm_up()
        except Exception:  # noqa: BLE001 - the splits' own fits raise what matters
            pass
