"""Distances that use the class labels, built from the fit set's labels only (beyond-the-paper spec, section 4).

House Votes' value difference metric (VDM; Stanfill & Waltz 1986, Cost & Salzberg 1993),

    delta_f(a, b) = sum_c |P(c | x_f = a) - P(c | x_f = b)|^q,     D(x, z) = sum_f delta_f(x_f, z_f),

estimates P(c | x_f = a) from class labels. :class:`VDMDistances` wraps a classifier on distances:
``fit(R, y)`` estimates these tables from the records R and labels y it is given (in the evaluation
a split's training part, or a CV fold's fit set) and fits the wrapped classifier on the VDM of R;
``predict(R_new)`` classifies by the distances of R_new to the fit records under the same tables.
So no label outside the fit set shapes a distance. A value absent from the fit set gets the fit
set's class prior as its P(c | a).

Records are integer codes 0, 1, ... per feature (a missing value coded as a value of its own), as
the distance artifact stores them (``DistanceArtifact.records``). The VDM is the q-th power of the
Minkowski-q distance between the records' concatenated P(. | x_f) rows (``vdm_embedding``).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metaestimators import available_if

from hlm.errors import DataError
from hlm.models._base import CachedParamNames, FastPathMixin, fit_classes, grid_predictions
from hlm.models._grid import predict_each


def check_records(R, what: str) -> np.ndarray:
    """Records as a non-empty 2-D int64 array of non-negative codes, else a one-line DataError naming ``what``."""
    try:
        R = np.asarray(R)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{what}: records must be a 2-D array of integer codes ({exc})") from None
    if R.ndim != 2 or R.shape[0] == 0 or R.shape[1] == 0:
        raise DataError(f"{what}: records must be a non-empty 2-D array of integer codes, got shape {R.shape}")
    if R.dtype.kind not in "biuf":
        raise DataError(f"{what}: records must be integer codes (one per value of a feature), got dtype {R.dtype}")
    if R.dtype.kind == "f":
        bad = ~np.isfinite(R) | (R != np.round(R))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise DataError(f"{what}: {int(bad.sum())} entries are not integer codes, first {R[i, j]} at [{i}, {j}]")
    R = R.astype(np.int64)
    if (R < 0).any():
        i, j = np.argwhere(R < 0)[0]
        raise DataError(f"{what}: {int((R < 0).sum())} negative codes, first {R[i, j]} at [{i}, {j}]")
    return R


def vdm_tables(R: np.ndarray, y_idx: np.ndarray, n_classes: int) -> tuple[list[np.ndarray], np.ndarray]:
    """(one P(c | x_f = a) table per feature, class prior) from codes R and class indices y_idx.

    Table f has a row per code 0..max(R[:, f]) and one more row, the prior, for larger codes; a
    code in range that R does not hold also gets the prior.
    """
    counts_y = np.bincount(y_idx, minlength=n_classes).astype(np.float64)
    prior = counts_y / counts_y.sum()
    tables = []
    for f in range(R.shape[1]):
        k = int(R[:, f].max()) + 1
        counts = np.zeros((k + 1, n_classes))
        np.add.at(counts, (R[:, f], y_idx), 1.0)
        n_a = counts.sum(axis=1, keepdims=True)
        tables.append(np.where(n_a > 0, counts / np.maximum(n_a, 1.0), prior))
    return tables, prior


def vdm_embedding(R: np.ndarray, tables: list[np.ndarray]) -> np.ndarray:
    """Each record's P(. | x_f) rows, concatenated over the features (n x F*C)."""
    if R.shape[1] != len(tables):
        raise DataError(f"records have {R.shape[1]} features but the VDM tables {len(tables)}")
    return np.hstack([P[np.minimum(R[:, f], len(P) - 1)] for f, P in enumerate(tables)])


def vdm_between(A: np.ndarray, B: np.ndarray, q: float) -> np.ndarray:
    """VDM of the embedded records A (rows) to B (columns): sum over every (feature, class) of |a - b|^q."""
    if q == 2:
        return cdist(A, B, "sqeuclidean")
    if q == 1:
        return cdist(A, B, "cityblock")
    return cdist(A, B, "minkowski", p=q) ** q


def training_vdm(records, labels, fit, q: float = 2) -> np.ndarray:
    """The N x N VDM of all ``records`` under the tables of ``records[fit]`` and ``labels[fit]`` only."""
    R = check_records(records, "records")
    _, y_idx = np.unique(np.asarray(labels)[fit], return_inverse=True)
    tables, _ = vdm_tables(R[fit], y_idx.ravel(), int(y_idx.max()) + 1)
    E = vdm_embedding(R, tables)
    return vdm_between(E, E, q)


def for_artifact(estimator, metadata: dict):
    """``estimator`` (a classifier on distances) wrapped to build the artifact's label-dependent
    distance per fit set (``metadata``: the distance artifact's)."""
    distance = metadata.get("distance")
    if distance != "vdm":
        raise DataError(f"data set '{metadata.get('dataset', '?')}': no fit-set builder for the label-dependent "
                        f"distance '{distance}' (known: vdm)")
    return VDMDistances(estimator, q=metadata.get("vdm_q", 2))


def _inner_has(name: str):
    """``available_if`` check: the wrapped (fitted, else unfitted) estimator has method ``name``."""
    return lambda self: hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, name)


class VDMDistances(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """``estimator`` fitted on the VDM of the fit records, the VDM's tables from the fit labels only.

    Parameters
    ----------
    estimator : classifier on precomputed distances (``fit(D_fit_fit, y)``, ``predict(D_new_fit)``);
        its hyper-parameters are set as ``estimator__<name>``.
    q : float, the VDM's exponent (2: the variant matching the UW Voting similarity, data/README.md).

    Fitted: ``tables_`` (per feature, P(c | a) by code; last row the prior), ``class_prior_``,
    ``embedding_`` (the fit records' P rows), ``estimator_``, ``classes_``, ``n_features_in_``.
    """

    _parameter_constraints = {"estimator": [HasMethods(["fit", "predict"])],
                              "q": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, estimator, q: float = 2):
        self.estimator = estimator
        self.q = q

    def _tables(self, R, y):
        """Validate, then set the tables from (R, y); returns the fit set's VDM."""
        self._validate_params()
        R = check_records(R, "fit: R")
        classes, y_idx = fit_classes(y, R.shape[0], rows="records", min_classes=1)
        self.tables_, self.class_prior_ = vdm_tables(R, y_idx, len(classes))
        self.embedding_ = vdm_embedding(R, self.tables_)
        self.n_features_in_ = R.shape[1]
        return vdm_between(self.embedding_, self.embedding_, self.q)

    def fit(self, R, y):
        D = self._tables(R, y)
        self.estimator_ = clone(self.estimator).fit(D, y)
        self.classes_ = self.estimator_.classes_
        return self

    def distances(self, R) -> np.ndarray:
        """VDM of the records R (rows) to the fit records (columns), under the fit set's tables."""
        if not hasattr(self, "embedding_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        R = check_records(R, "predict: R")
        if R.shape[1] != self.n_features_in_:
            raise DataError(f"predict: R has {R.shape[1]} features but the model was fitted on {self.n_features_in_}")
        return vdm_between(vdm_embedding(R, self.tables_), self.embedding_, self.q)

    def predict(self, R):
        D = self.distances(R)  # first: NotFittedError before estimator_ is read
        return self.estimator_.predict(D)

    @available_if(_inner_has("predict_proba"))
    def predict_proba(self, R):
        D = self.distances(R)
        return self.estimator_.predict_proba(D)

    @available_if(_inner_has("predict_log_proba"))
    def predict_log_proba(self, R):
        D = self.distances(R)
        return self.estimator_.predict_log_proba(D)

    @available_if(_inner_has("decision_function"))
    def decision_function(self, R):
        D = self.distances(R)
        return self.estimator_.decision_function(D)

    def predict_grid(self, R_fit, y, R_val, grid: list[dict]) -> list:
        """The wrapped estimator's grid path (``grid_predictions``) on this fold's VDM (tables from
        ``R_fit`` and ``y``), when the grid sets only ``estimator__*`` parameters (else one refit per point)."""
        prefix = "estimator__"
        if any(not name.startswith(prefix) for params in grid for name in params):
            return predict_each(self, R_fit, y, R_val, grid)
        fold = clone(self)
        D_fit = fold._tables(R_fit, y)
        plain = [{name.removeprefix(prefix): v for name, v in params.items()} for params in grid]
        return grid_predictions(clone(self.estimator), D_fit, y, fold.distances(R_val), plain)

    def _warm_up(self) -> None:
        """The wrapped estimator's (e.g. ``CompiledKernels``), if it follows the fast-path protocol."""
        if isinstance(self.estimator, FastPathMixin):
            self.estimator._warm_up()
