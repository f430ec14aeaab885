"""A similarity method run on distance-only data (paper section 5.2; spec section 4.2).

The compared methods take similarities. For a data set that ships only
distances (Sonar, House Votes, ...), s = 1/d, with the upper bound
U = max{1/d_ij : i != j, d_ij > 0} estimated on the fit set alone: the
self-similarity and d = 0 map to U, and test similarities are min(1/d, U).
Data sets with a native similarity use it directly, never this round trip.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods

from hlm.base._classifiers import FastPathMixin, PrecomputedClassifier, fit_classes, grid_predictions
from hlm.base._grid import predict_each
from hlm.distances._conversions import distance_to_similarity, fit_similarities, reciprocal_similarity
from hlm.errors import HLMError


class SimilarityFromDistances(PrecomputedClassifier):
    """``estimator`` (a similarity classifier) fitted on 1/d similarities of the fit set.

    Its hyper-parameters are set as ``estimator__<name>`` (scikit-learn's
    nested-parameter convention), so CV grids work unchanged.

    A similarity method on distance-only data (paper section 5.2; compared-methods spec section 4.2):
    ``s = 1/d`` with ``U = max{1/d_ij : i != j, d_ij > 0}`` estimated on the fit set alone; the
    self-similarity and d = 0 map to U, test similarities are ``min(1/d, U)``
    (:func:`hlm.distances.distance_to_similarity`). Data sets with a native similarity use it directly.

    Parameters
    ----------
    estimator : classifier on precomputed similarities
        ``fit(S_fit_fit, y)``, ``predict(S_new_fit)`` (e.g. :class:`hlm.neighbors.AffinityKNN`).

    Attributes
    ----------
    upper_bound_ : float
        U of the fit set: 1 / its smallest positive off-diagonal distance.
    estimator_ : classifier
        The clone of ``estimator`` fitted on the fit similarities.
    classes_ : ndarray of shape (n_classes,)
        The class labels (``estimator_.classes_``).
    n_features_in_ : int
        The number of fit objects (columns of the distance matrices).
    class_prior_ : ndarray of shape (n_classes,)
        The fit labels' class frequencies.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.distances import SimilarityFromDistances, euclidean, pairwise
    >>> from hlm.neighbors import AffinityKNN
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (4, 2)), rng.normal(5, 1, (4, 2))])
    >>> y = np.repeat(["a", "b"], 4)
    >>> D, D_new = euclidean(X), pairwise([[0.0, 0.0], [5.0, 5.0]], X, "euclidean")
    >>> model = SimilarityFromDistances(AffinityKNN(n_neighbors=3)).fit(D, y)
    >>> round(model.upper_bound_, 3)
    1.765
    >>> print(model.predict(D_new))
    ['a' 'b']
    >>> print(model.predict_proba(D_new).round(3))
    [[0.8 0.2]
     [0.2 0.8]]
    >>> model.set_params(estimator__n_neighbors=1).get_params()["estimator__n_neighbors"]
    1
    """

    _parameter_constraints = {"estimator": [HasMethods(["fit", "predict"])]}

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, D, y):
        """Fit ``estimator`` on the 1/d similarities of the fit distances (U from ``D`` alone).

        Parameters
        ----------
        D : array-like of shape (n_fit, n_fit)
            The fit objects' distances (finite, non-negative).
        y : array-like of shape (n_fit,)
            Their class labels (at least 2 classes).

        Returns
        -------
        self : SimilarityFromDistances
            The fitted wrapper.
        """
        self._validate_params()
        D, _ = self._check_fit_input(D, y)
        S, _, self.upper_bound_ = distance_to_similarity(D, where="fit")
        self.estimator_ = clone(self.estimator).fit(S, y)
        self.classes_ = self.estimator_.classes_
        return self

    def predict_grid(self, D_fit, y, D_val, grid: list[dict]) -> list:
        """The wrapped estimator's grid path (``grid_predictions``) on 1/d of this fold (U from
        ``D_fit``), when the grid sets only ``estimator__*`` parameters (else one refit per grid point)."""
        prefix = "estimator__"
        if any(not name.startswith(prefix) for params in grid for name in params):
            return predict_each(self, D_fit, y, D_val, grid)
        fold = clone(self)
        fold._validate_params()
        D_fit, _ = fold._check_fit_input(D_fit, y)
        S_fit, _, fold.upper_bound_ = distance_to_similarity(D_fit, where="fit")
        inner = clone(self.estimator)
        plain = [{name.removeprefix(prefix): v for name, v in params.items()} for params in grid]
        return grid_predictions(inner, S_fit, y, fold._similarities(D_val), plain)

    def predict_fold(self, D, y, fit, val, grid: list[dict]) -> list | None:
        """``predict_grid(D[fit][:, fit], y[fit], D[val][:, fit], grid)`` with the fold's fit similarities read
        from ``D`` (the training part) by row blocks: the fold's fit distances are never held (at Letter's size,
        1.7 GB less per fold). None (the caller slices the fold) for a grid with other than ``estimator__*``
        parameters, or a fold whose fit would refuse its input (the sliced path scores that)."""
        prefix = "estimator__"
        if any(not name.startswith(prefix) for params in grid for name in params):
            return None
        fit, val = np.asarray(fit), np.asarray(val)
        if len(fit) == 0 or fit.dtype.kind not in "iu" or val.dtype.kind not in "iu":
            return None  # boolean masks, or an empty fit part: the sliced path
        fit, val = fit.astype(np.intp, copy=False), val.astype(np.intp, copy=False)
        fold = clone(self)
        fold._validate_params()
        try:  # what predict_grid's fit checks, in its order
            fold.classes_, _ = fit_classes(y[fit], len(fit), min_classes=fold._min_classes)
            fold.n_features_in_ = len(fit)
            S_fit, fold.upper_bound_ = fit_similarities(D, fit, where="fit", whole=True)
            S_val = fold._similarities(D[np.ix_(val, fit)])
        except HLMError:
            return None
        plain = [{name.removeprefix(prefix): v for name, v in params.items()} for params in grid]
        return grid_predictions(clone(self.estimator), S_fit, y[fit], S_val, plain)

    def _warm_up(self) -> None:
        """The wrapped estimator's (e.g. ``CompiledKernels``), if it follows the fast-path protocol."""
        if isinstance(self.estimator, FastPathMixin):
            self.estimator._warm_up()

    def _similarities(self, D):
        return reciprocal_similarity(self._check_predict_input(D), self.upper_bound_)

    def predict(self, D):
        """Classify by the wrapped estimator on the similarities ``min(1/d, U)``.

        Parameters
        ----------
        D : array-like of shape (m, n_fit)
            Distances of m objects to the fit objects.

        Returns
        -------
        ndarray of shape (m,)
            The predicted class labels.
        """
        S = self._similarities(D)  # first: NotFittedError before estimator_ is read
        return self.estimator_.predict(S)

    def predict_proba(self, D):
        """The wrapped estimator's class probabilities on the similarities ``min(1/d, U)``.

        Parameters
        ----------
        D : array-like of shape (m, n_fit)
            Distances of m objects to the fit objects.

        Returns
        -------
        ndarray of shape (m, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        S = self._similarities(D)
        return self.estimator_.predict_proba(S)

