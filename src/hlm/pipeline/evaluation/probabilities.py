"""Class probabilities, measured (docs/beyond-the-paper-spec.md section 3).

``P`` holds one row per test object and one column per class, in the order of
``classes``; ``y`` holds the true labels.

* Log-loss = -mean_i log max(p_i(y_i), eps), eps = ``EPS`` = 1e-15: a
  probability 0 for the true class would give an infinite loss. The clip is
  below only (no renormalisation); ``n_clipped`` counts the objects it hits.
* Brier score (multi-class, Brier 1950) = mean_i sum_g (p_ig - 1[y_i = g])^2,
  in [0, 2]; for two classes twice scikit-learn's ``brier_score_loss``.
* Reliability: the top-label confidence in ``N_BINS`` equal-width bins of
  [0, 1], the accuracy of the top label against the mean confidence per bin.

Bad probabilities (NaN or infinite, negative, a row not summing to 1, a label
not among ``classes``) raise a one-line ``DataError``. ``score_split`` (the
evaluation's) turns that into a warning of the split and NaN scores.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from hlm.errors import DataError

#: the clip of p(true class) below, in the log-loss (written in the tables' caption)
EPS = 1e-15
#: equal-width bins of the top-label confidence in the reliability diagram
N_BINS = 10
#: tolerance of a row sum of probabilities
SUM_ATOL = 1e-6
#: prefix of the probability columns of the predictions Parquet
PREFIX = "proba_"
#: the scores of a split without probabilities
NO_SCORES = {"log_loss": np.nan, "brier": np.nan, "n_clipped": np.nan}


def check_probabilities(y, P, classes) -> tuple[np.ndarray, np.ndarray]:
    """(P as float64, index of each true label in ``classes``); a one-line DataError if they cannot be scored."""
    P = np.asarray(P, dtype=np.float64)
    classes = np.asarray(classes)
    y = np.asarray(y)
    if P.ndim != 2 or P.shape != (len(y), len(classes)):
        raise DataError(f"probabilities: expected {len(y)} x {len(classes)} (objects x classes), got {P.shape}")
    bad = ~np.isfinite(P)
    if bad.any():
        i, g = np.argwhere(bad)[0]
        raise DataError(f"probabilities: {int(bad.sum())} NaN/inf entries, first at object {i}, "
                        f"class {classes.tolist()[g]!r}")
    if (P < 0).any() or (P > 1 + SUM_ATOL).any():
        i = int(np.flatnonzero(((P < 0) | (P > 1 + SUM_ATOL)).any(axis=1))[0])
        raise DataError(f"probabilities: entries outside [0, 1], first at object {i}")
    sums = P.sum(axis=1)
    off = np.abs(sums - 1.0) > SUM_ATOL
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise DataError(f"probabilities: {int(off.sum())} rows do not sum to 1, first object {i} "
                        f"(sum {sums[i]:.6g})")
    lookup = {c: g for g, c in enumerate(classes.tolist())}
    missing = [v for v in y.tolist() if v not in lookup]
    if missing:
        raise DataError(f"probabilities: true label {missing[0]!r} is not among the classes {classes.tolist()}")
    return P, np.array([lookup[v] for v in y.tolist()], dtype=np.intp)


def true_class_probability(y, P, classes) -> np.ndarray:
    """p_i(y_i) of every object."""
    P, idx = check_probabilities(y, P, classes)
    return P[np.arange(len(idx)), idx]


def log_loss(y, P, classes, eps: float = EPS) -> float:
    """-mean_i log max(p_i(y_i), eps)."""
    return float(-np.mean(np.log(np.maximum(true_class_probability(y, P, classes), eps))))


def n_clipped(y, P, classes, eps: float = EPS) -> int:
    """The objects whose true class has a probability below ``eps`` (the log-loss clips them)."""
    return int((true_class_probability(y, P, classes) < eps).sum())


def brier_score(y, P, classes) -> float:
    """mean_i sum_g (p_ig - 1[y_i = g])^2, in [0, 2]."""
    P, idx = check_probabilities(y, P, classes)
    onehot = np.zeros_like(P)
    onehot[np.arange(len(idx)), idx] = 1.0
    return float(np.mean(((P - onehot) ** 2).sum(axis=1)))


def scores(y, P, classes, eps: float = EPS) -> dict:
    """{"log_loss", "brier", "n_clipped"} of one split's test objects."""
    return {"log_loss": log_loss(y, P, classes, eps), "brier": brier_score(y, P, classes),
            "n_clipped": n_clipped(y, P, classes, eps)}


def full_proba(proba: np.ndarray, fitted: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``proba`` (columns: the fitted classes) with a column per class of ``classes``; a class the fit set
    did not hold gets probability 0 (and a test object of that class is then clipped)."""
    proba = np.asarray(proba, dtype=np.float64)
    where = {c: g for g, c in enumerate(np.asarray(classes).tolist())}
    out = np.zeros((proba.shape[0], len(classes)))
    out[:, [where[c] for c in np.asarray(fitted).tolist()]] = proba
    return out


def score_split(proba, fitted, y_test, classes) -> tuple[np.ndarray | None, dict]:
    """The evaluation's: (probabilities over every class of the data set, their scores) of one split.

    ``proba`` None (a method without probabilities): (None, NaN scores). Probabilities that cannot be
    scored (``check_probabilities``) give a warning naming the problem, and NaN scores.
    """
    if proba is None:
        return None, dict(NO_SCORES)
    P = full_proba(proba, fitted, classes)
    absent = sorted(set(np.asarray(classes).tolist()) - set(np.asarray(fitted).tolist()))
    if absent:
        warnings.warn(f"probabilities: classes {absent} are not in the training part; their probability is 0",
                      UserWarning, stacklevel=2)
    try:
        return P, scores(y_test, P, classes)
    except DataError as exc:
        warnings.warn(f"{exc}; log_loss and brier are NaN for this split", UserWarning, stacklevel=2)
        return P, dict(NO_SCORES)


# ----------------------------------------------------------------- the predictions Parquet
def proba_matrix(predictions: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
    """(classes, P) from the ``proba_<class>`` columns of a predictions frame; None if it has none.
    Classes are strings (the column names')."""
    columns = [c for c in predictions.columns if c.startswith(PREFIX)]
    if not columns:
        return None
    return np.array([c[len(PREFIX):] for c in columns]), predictions[columns].to_numpy(dtype=np.float64)


# ----------------------------------------------------------------- reliability
RELIABILITY_COLUMNS = ["bin", "lo", "hi", "count", "confidence", "accuracy"]


def top_label(P: np.ndarray, classes, y_pred=None) -> tuple[np.ndarray, np.ndarray]:
    """(confidence max_g p_ig, top label) per object. The top label is the method's own prediction
    ``y_pred`` where that has the largest probability (its tie rule), else the first class of largest
    probability (e.g. where an SVM's vote and its Platt probabilities disagree)."""
    P = np.asarray(P, dtype=np.float64)
    classes = np.asarray(classes)
    conf = P.max(axis=1)
    top = np.argmax(P, axis=1)
    if y_pred is not None:
        lookup = {c: g for g, c in enumerate(classes.tolist())}
        idx = np.array([lookup.get(v, -1) for v in np.asarray(y_pred).tolist()], dtype=np.intp)
        own = (idx >= 0) & (P[np.arange(len(idx)), np.maximum(idx, 0)] == conf)
        top = np.where(own, idx, top)
    return conf, classes[top]


def reliability_bins(y, P, classes, y_pred=None, n_bins: int = N_BINS) -> pd.DataFrame:
    """Per equal-width bin of the top-label confidence: its bounds, count, mean confidence and the accuracy
    of the top label (NaN in an empty bin). Confidence 1 falls in the last bin."""
    P, idx = check_probabilities(y, P, classes)
    conf, label = top_label(P, classes, y_pred)
    correct = label == np.asarray(classes)[idx]
    b = np.minimum((conf * n_bins).astype(np.intp), n_bins - 1)
    count = np.bincount(b, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(b, weights=conf, minlength=n_bins) / count
        accuracy = np.bincount(b, weights=correct.astype(float), minlength=n_bins) / count
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return pd.DataFrame({"bin": np.arange(n_bins), "lo": edges[:-1], "hi": edges[1:], "count": count,
                         "confidence": mean_conf, "accuracy": accuracy}, columns=RELIABILITY_COLUMNS)


def predictions_reliability(predictions: pd.DataFrame, n_bins: int = N_BINS) -> pd.DataFrame | None:
    """``reliability_bins`` over all splits' test objects of a predictions frame; None without probabilities.
    Labels are compared as strings (the ``proba_<class>`` column names')."""
    found = proba_matrix(predictions)
    if found is None:
        return None
    classes, P = found
    return reliability_bins(predictions["y_true"].astype(str).to_numpy(), P, classes,
                            predictions["y_pred"].astype(str).to_numpy(), n_bins)


def final_fit_params(estimator, fixed: dict) -> dict:
    """``fixed`` (a method's final-fit hyper-parameters, ``MethodSpec.final_fixed``) named as ``estimator``
    has them: also a wrapped estimator's (``estimator__<name>``, at any depth)."""
    names = estimator.get_params()
    return {n: value for key, value in fixed.items() for n in names if n == key or n.endswith(f"__{key}")}
