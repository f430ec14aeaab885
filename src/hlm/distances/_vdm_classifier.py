"""A classifier on the VDM of each fit set's labels only (beyond-the-paper spec, section 4).

House Votes' distance, the value difference metric (``_vdm``), uses the class labels: :class:`VDMDistances`
wraps a classifier on distances, estimates the VDM's tables from the records and labels it is fitted on (in
the evaluation a split's training part, or a CV fold's fit set) and classifies by the distances under those
tables, so no label outside the fit set shapes a distance.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metaestimators import available_if

from hlm.base._classifiers import CachedParamNames, FastPathMixin, fit_classes, grid_predictions
from hlm.base._grid import predict_each
from hlm.distances._vdm import check_records, vdm_between, vdm_embedding, vdm_tables
from hlm.errors import DataError


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

    Label-dependent distances from training labels only (beyond-the-paper spec, section 4): ``fit(R, y)``
    estimates P(c | x_f = a) from the records and labels it is given (a split's training part, or a CV fold's
    fit set) and fits ``estimator`` on their VDM, ``delta_f(a, b) = sum_c |P(c | a) - P(c | b)|^q`` summed over
    the features; ``predict(R_new)`` classifies by the VDM of R_new to the fit records under the same tables.
    A value absent from the fit set gets the fit set's class prior as its P(c | a) (module docstring).

    Parameters
    ----------
    estimator : classifier on precomputed distances
        ``fit(D_fit_fit, y)``, ``predict(D_new_fit)``; its hyper-parameters are set as ``estimator__<name>``
        (scikit-learn's nested-parameter convention), so CV grids work unchanged.
    q : float, default 2
        The VDM's exponent, > 0 (2: the variant matching the UW Voting similarity, data/README.md).

    Attributes
    ----------
    tables_ : list of ndarray
        Per feature, P(c | a) by code: a row per code 0..max code of the fit records, then one more row, the
        class prior (for larger codes); a code in range that the fit records do not hold also gets the prior.
    class_prior_ : ndarray of shape (n_classes,)
        The fit labels' class frequencies.
    embedding_ : ndarray of shape (n_fit, n_features * n_classes)
        The fit records' P(. | x_f) rows, concatenated over the features.
    estimator_ : classifier
        The fitted clone of ``estimator``.
    classes_ : ndarray of shape (n_classes,)
        The class labels (``estimator_.classes_``).
    n_features_in_ : int
        The number of features (columns of the records) seen in ``fit``.

    Examples
    --------
    Records are integer codes per feature (``DistanceArtifact.records``):

    >>> import numpy as np
    >>> from hlm.distances import VDMDistances
    >>> from hlm.neighbors import KNNClassifier
    >>> R = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 0], [1, 1]])
    >>> y = np.array(["a", "a", "a", "b", "b", "b"])
    >>> model = VDMDistances(KNNClassifier(n_neighbors=1)).fit(R, y)
    >>> print(model.tables_[1].round(3))  # feature 1: P(c | code 0), P(c | code 1), the prior
    [[0.667 0.333]
     [0.333 0.667]
     [0.5   0.5  ]]
    >>> model.embedding_.shape
    (6, 4)
    >>> R_new = np.array([[0, 1], [1, 0]])
    >>> print(model.distances(R_new).round(3))
    [[0.222 0.222 0.    2.    2.222 2.   ]
     [2.    2.    2.222 0.222 0.    0.222]]
    >>> print(model.predict(R_new))
    ['a' 'b']
    >>> print(model.predict_proba(R_new).round(3))
    [[0.667 0.333]
     [0.333 0.667]]
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
        """Estimate the VDM's tables from ``(R, y)`` and fit ``estimator`` on the fit records' VDM.

        Parameters
        ----------
        R : array-like of shape (n_fit, n_features)
            The fit records: non-negative integer codes, one per value of a feature.
        y : array-like of shape (n_fit,)
            Their class labels.

        Returns
        -------
        self : VDMDistances
            The fitted wrapper.
        """
        D = self._tables(R, y)
        self.estimator_ = clone(self.estimator).fit(D, y)
        self.classes_ = self.estimator_.classes_
        return self

    def distances(self, R) -> np.ndarray:
        """VDM of the records R (rows) to the fit records (columns), under the fit set's tables.

        Parameters
        ----------
        R : array-like of shape (m, n_features)
            Records as integer codes (a code the fit set does not hold gets the class prior).

        Returns
        -------
        ndarray of shape (m, n_fit), float64
            The VDM of every record of ``R`` to every fit record.
        """
        if not hasattr(self, "embedding_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        R = check_records(R, "predict: R")
        if R.shape[1] != self.n_features_in_:
            raise DataError(f"predict: R has {R.shape[1]} features but the model was fitted on {self.n_features_in_}")
        return vdm_between(vdm_embedding(R, self.tables_), self.embedding_, self.q)

    def predict(self, R):
        """Classify records by the wrapped estimator on their VDM to the fit records.

        Parameters
        ----------
        R : array-like of shape (m, n_features)
            Records as integer codes.

        Returns
        -------
        ndarray of shape (m,)
            The predicted class labels.
        """
        D = self.distances(R)  # first: NotFittedError before estimator_ is read
        return self.estimator_.predict(D)

    @available_if(_inner_has("predict_proba"))
    def predict_proba(self, R):
        """The wrapped estimator's class probabilities on the VDM of ``R`` to the fit records.

        Available when the wrapped estimator has ``predict_proba``.

        Parameters
        ----------
        R : array-like of shape (m, n_features)
            Records as integer codes.

        Returns
        -------
        ndarray of shape (m, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        D = self.distances(R)
        return self.estimator_.predict_proba(D)

    @available_if(_inner_has("predict_log_proba"))
    def predict_log_proba(self, R):
        """The wrapped estimator's log class probabilities on the VDM of ``R`` (if it has the method).

        Parameters
        ----------
        R : array-like of shape (m, n_features)
            Records as integer codes.

        Returns
        -------
        ndarray of shape (m, n_classes)
            Log class probabilities, columns in the order of ``classes_``.
        """
        D = self.distances(R)
        return self.estimator_.predict_log_proba(D)

    @available_if(_inner_has("decision_function"))
    def decision_function(self, R):
        """The wrapped estimator's decision function on the VDM of ``R`` (if it has the method).

        Parameters
        ----------
        R : array-like of shape (m, n_features)
            Records as integer codes.

        Returns
        -------
        ndarray
            The wrapped estimator's scores, of the shape it gives them.
        """
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
