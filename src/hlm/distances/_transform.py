"""The similarity-to-distance transform as a hyper-parameter (docs/beyond-the-paper-spec.md section 1).

The HLM paper converts a similarity S to d = S̄ − S (section 5.2) and uses a
distance as it comes. ``DistanceTransform`` makes the conversion a parameter
of a distance classifier, so that cross-validation chooses it jointly with the
classifier's own grid. Every candidate is a monotone map of the base
dissimilarity, computed with the fit set's S̄ only:

==============  ==========================  =================================
``to_distance``  similarity S                distance D (``relation="distance"``)
==============  ==========================  =================================
bound_minus     S̄ − S (the paper's rule)     D (as given)
neg_log         −log(S / S̄)                 not valid
reciprocal      1 / S                       not valid
sqrt            sqrt(S̄ − S)                  sqrt(D)
square          (S̄ − S)²                     D²
==============  ==========================  =================================

neg_log and reciprocal need non-negative off-diagonal similarities in the fit
set, some positive (``valid_candidates``); a similarity of 0 (unrelated
objects), and a negative test similarity, are raised to the fit set's smallest
positive similarity, so they get the largest fit distance instead of an
infinite one. S̄ is ``upper_bound`` when given, else the largest similarity of
the fit set. A test similarity above S̄ gives distance 0 under bound_minus,
sqrt, square and neg_log (clipped there); reciprocal gives 1/S.
"""

from __future__ import annotations

from functools import cached_property
from numbers import Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if

from hlm.base._classifiers import FastPathMixin, PrecomputedClassifier, grid_predictions
from hlm.base._grid import predict_each
from hlm.errors import DataError

#: the candidates, in the order CV ties are broken (the paper's rule first)
TRANSFORMS = ("bound_minus", "neg_log", "reciprocal", "sqrt", "square")
#: the candidates that need non-negative similarities (none applies to a distance)
_POSITIVE = ("neg_log", "reciprocal")


def transform(R: np.ndarray, to_distance: str, relation: str, bound: float | None, floor: float | None = None,
              diagonal: bool = False) -> np.ndarray:
    """The distances of relation ``R`` (rows of similarities or distances) under ``to_distance``.

    ``bound`` is S̄ (similarities), ``floor`` the smallest positive fit similarity (neg_log,
    reciprocal); ``diagonal`` sets the diagonal of a square fit matrix to 0.
    """
    R = np.asarray(R, dtype=np.float64)
    if relation == "similarity":
        if to_distance in _POSITIVE:
            D = np.maximum(R, floor)
            if to_distance == "neg_log":  # max(-log(S / S-bar), 0), in place
                np.divide(D, bound, out=D)
                np.log(D, out=D)
                np.negative(D, out=D)
                np.maximum(D, 0.0, out=D)
            else:
                np.divide(1.0, D, out=D)
        else:
            D = np.subtract(bound, R)
            np.maximum(D, 0.0, out=D)
    else:
        D = R.copy()
    if to_distance == "sqrt":
        np.sqrt(D, out=D)
    elif to_distance == "square":
        np.square(D, out=D)
    if diagonal:
        np.fill_diagonal(D, 0.0)
    return D


def valid_candidates(R_fit: np.ndarray, relation: str) -> tuple[str, ...]:
    """The transforms that apply to fit relation ``R_fit``: neg_log and reciprocal only for similarities
    whose off-diagonal entries are all non-negative, some positive."""
    R_fit = np.asarray(R_fit)
    if relation != "similarity":
        return tuple(t for t in TRANSFORMS if t not in _POSITIVE)
    off = ~np.eye(R_fit.shape[0], dtype=bool)
    values = R_fit[off]
    usable = bool(values.size) and bool(np.all(values >= 0)) and bool(np.any(values > 0))
    return TRANSFORMS if usable else tuple(t for t in TRANSFORMS if t not in _POSITIVE)


def _inner_has(method: str):
    """``available_if`` check: the wrapped classifier has ``method``."""
    return lambda self: hasattr(self.estimator, method)


class _Facts:
    """What the folds' constants need from a whole similarity matrix: its largest entry and the objects
    whose self-similarity it is, whether an off-diagonal entry is negative, and (computed when first read:
    only neg_log and reciprocal need them) the smallest positive off-diagonal entry, its pairs and the
    zero pairs."""

    def __init__(self, R: np.ndarray):
        self._R = R
        diagonal = np.diag(R)
        self.top = float(R.max())
        self.top_at = np.flatnonzero(diagonal == self.top)
        self.negative = bool(np.count_nonzero(R < 0) > np.count_nonzero(diagonal < 0))

    @cached_property
    def floor(self) -> float:
        positive = np.where(self._R > 0, self._R, np.inf)
        np.fill_diagonal(positive, np.inf)
        return float(floor) if np.isfinite(floor := positive.min()) else np.nan

    @cached_property
    def floor_at(self) -> np.ndarray:
        return np.argwhere(~np.eye(len(self._R), dtype=bool) & (self._R == self.floor))

    @cached_property
    def zeros(self) -> np.ndarray:
        # both triangles: R need not be symmetric
        return np.argwhere(~np.eye(len(self._R), dtype=bool) & (self._R == 0))


class DistanceTransform(PrecomputedClassifier):
    """``estimator`` (a distance classifier) fitted on the distances ``to_distance`` makes of the fit relation.

    The similarity-to-distance transform as a hyper-parameter (beyond-the-paper spec, section 1): the paper's
    ``d = S̄ - S`` (section 5.2) is one candidate of ``TRANSFORMS``, and cross-validation chooses among them
    jointly with the classifier's own grid. S̄ and the floor come from the fit set only.

    Parameters
    ----------
    estimator : distance classifier
        Its hyper-parameters are set as ``estimator__<name>`` (nested-parameter convention).
    to_distance : str, default "bound_minus"
        One of ``TRANSFORMS`` (table in the module docstring): bound_minus, neg_log, reciprocal, sqrt,
        square; neg_log and reciprocal apply to similarities only.
    relation : {"similarity", "distance"}, default "similarity"
        What the input matrices hold.
    upper_bound : float or None, default None
        S̄ of a similarity (the registry's ``upper_bound``); None: the fit set's largest similarity.

    Attributes
    ----------
    bound_ : float
        S̄ used (NaN for distances).
    floor_ : float
        The smallest positive off-diagonal fit similarity, to which neg_log and reciprocal raise smaller
        similarities (NaN if unused).
    estimator_ : classifier
        The fitted inner classifier (a clone of ``estimator``).
    classes_ : ndarray of shape (n_classes,)
        The class labels (``estimator_.classes_``).
    n_features_in_ : int
        The number of fit objects (columns of the relation).
    class_prior_ : ndarray of shape (n_classes,)
        The fit labels' class frequencies.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.distances import DistanceTransform, euclidean, pairwise
    >>> from hlm.neighbors import KNNClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (4, 2)), rng.normal(5, 1, (4, 2))])
    >>> y = np.repeat(["a", "b"], 4)
    >>> S = 1 / (1 + euclidean(X))  # a similarity with diagonal 1
    >>> S_new = 1 / (1 + pairwise([[0.0, 0.0], [5.0, 5.0]], X, "euclidean"))
    >>> model = DistanceTransform(KNNClassifier(n_neighbors=3)).fit(S, y)  # the paper's S̄ - S
    >>> model.bound_
    1.0
    >>> print(model.predict(S_new))
    ['a' 'b']
    >>> print(model.predict_proba(S_new).round(3))
    [[0.8 0.2]
     [0.2 0.8]]
    >>> round(model.set_params(to_distance="neg_log").fit(S, y).floor_, 3)  # -log(S / S̄), S raised to floor_
    0.128
    >>> model.valid_candidates(S)
    ('bound_minus', 'neg_log', 'reciprocal', 'sqrt', 'square')
    >>> DistanceTransform(KNNClassifier(), relation="distance").valid_candidates(euclidean(X))
    ('bound_minus', 'sqrt', 'square')
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "to_distance": [StrOptions(set(TRANSFORMS))],
        "relation": [StrOptions({"similarity", "distance"})],
        "upper_bound": [Interval(Real, None, None, closed="neither"), None],
    }

    def __init__(self, estimator, to_distance: str = "bound_minus", relation: str = "similarity",
                 upper_bound: float | None = None):
        self.estimator = estimator
        self.to_distance = to_distance
        self.relation = relation
        self.upper_bound = upper_bound

    @property
    def _input_kind(self) -> str:
        return self.relation

    @property
    def metric(self) -> str | None:
        """"precomputed" when ``relation`` is a distance; None for a similarity (a kernel)."""
        return None if self.relation == "similarity" else "precomputed"

    def valid_candidates(self, R_fit) -> tuple[str, ...]:
        """The ``to_distance`` values that apply to this fit relation (see ``valid_candidates``).

        Parameters
        ----------
        R_fit : array-like of shape (n_fit, n_fit)
            The fit relation (similarities or distances, as ``relation`` says).

        Returns
        -------
        tuple of str
            The candidates of ``TRANSFORMS``, in order; without neg_log and reciprocal for distances, or for
            similarities with a negative off-diagonal entry or none positive.
        """
        return valid_candidates(R_fit, self.relation)

    def _fit_constants(self, R: np.ndarray) -> None:
        self.bound_, self.floor_ = np.nan, np.nan
        if self.relation != "similarity":
            if self.to_distance in _POSITIVE:
                raise DataError(f"to_distance {self.to_distance} applies to similarities, not distances")
            return
        top = float(R.max())
        if self.upper_bound is not None and top > float(self.upper_bound):
            raise DataError(f"upper_bound {float(self.upper_bound):g} is below the largest similarity {top:g}")
        self.bound_ = float(self.upper_bound) if self.upper_bound is not None else top
        if self.to_distance in _POSITIVE:
            off = R[~np.eye(R.shape[0], dtype=bool)]
            if off.size == 0 or np.any(off < 0) or not np.any(off > 0):
                raise DataError(f"to_distance {self.to_distance} needs non-negative similarities, some positive, "
                                f"but {int(np.count_nonzero(off < 0))} off-diagonal fit entries are negative")
            self.floor_ = float(off[off > 0].min())

    def _fold_constants(self, R: np.ndarray, fit: np.ndarray, fit_mask: np.ndarray, facts) -> None:
        """``_fit_constants`` of the fold block ``R[fit][:, fit]``, from the whole relation's ``facts`` where
        they settle it (S-bar on a fit object's diagonal, the smallest positive pair inside the fit part),
        else from the block."""
        if self.relation != "similarity":
            return self._fit_constants(R)  # no constants (R is not read)
        positive = self.to_distance in _POSITIVE
        settled = (facts is not None and self.upper_bound is None and fit_mask[facts.top_at].any()
                   and (not positive or (not facts.negative
                                         and np.any(fit_mask[facts.floor_at[:, 0]] & fit_mask[facts.floor_at[:, 1]]))))
        if not settled:
            return self._fit_constants(R[np.ix_(fit, fit)])
        self.bound_, self.floor_ = facts.top, facts.floor if positive else np.nan

    def _distances(self, R: np.ndarray, fit: bool = False) -> np.ndarray:
        return transform(R, self.to_distance, self.relation, self.bound_, self.floor_, diagonal=fit)

    def fit(self, R, y):
        """Set S̄ (and the floor) from the fit relation and fit ``estimator`` on its transformed distances.

        Parameters
        ----------
        R : array-like of shape (n_fit, n_fit)
            The fit objects' similarities or distances (``relation``).
        y : array-like of shape (n_fit,)
            Their class labels (at least 2 classes).

        Returns
        -------
        self : DistanceTransform
            The fitted wrapper.

        Raises
        ------
        DataError
            If ``upper_bound`` is below the largest fit similarity, or ``to_distance`` does not apply to the
            fit relation (neg_log or reciprocal on distances, or on fit similarities with a negative
            off-diagonal entry or none positive).
        """
        self._validate_params()
        R, _ = self._check_fit_input(R, y)
        self._fit_constants(R)
        self.estimator_ = clone(self.estimator).fit(self._distances(R, fit=True), y)
        self.classes_ = self.estimator_.classes_
        return self

    def predict_grid(self, R_fit, y, R_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: each candidate's distances once, then the inner estimator's own grid
        path (``grid_predictions``) over its ``estimator__*`` points (equal to one refit per point, tested)."""
        prefix = "estimator__"
        if any(name != "to_distance" and not name.startswith(prefix) for params in grid for name in params):
            return predict_each(self, R_fit, y, R_val, grid)
        groups = self._grid_groups(grid)
        out: list = [None] * len(grid)
        for to_distance, points in groups.items():
            fold = clone(self).set_params(to_distance=to_distance)
            fold._validate_params()
            R, _ = fold._check_fit_input(R_fit, y)
            try:
                fold._fit_constants(R)
            except DataError:
                continue  # this candidate does not apply to the fold: None (an infinite CV error)
            D_val = fold._distances(fold._check_predict_input(R_val))
            predictions = grid_predictions(clone(self.estimator), fold._distances(R, fit=True), y, D_val,
                                           [inner for _, inner in points])
            for (g, _), p in zip(points, predictions):
                out[g] = p
        return out

    def _grid_groups(self, grid: list[dict]) -> dict[str, list[tuple[int, dict]]]:
        """{to_distance: [(grid index, the inner estimator's params), ...]}; each candidate validated once
        (the inner estimator's path validates its own parameters)."""
        prefix, groups = "estimator__", {}
        for g, params in enumerate(grid):
            inner = {name.removeprefix(prefix): v for name, v in params.items() if name.startswith(prefix)}
            groups.setdefault(params.get("to_distance", self.to_distance), []).append((g, inner))
        for to_distance in groups:
            clone(self).set_params(to_distance=to_distance)._validate_params()  # the errors predict_each raises
        return groups

    def predict_folds(self, R, y, folds, grid: list[dict]) -> list | None:
        """CV path: ``[predict_grid(R[fit][:, fit], y[fit], R[val][:, fit], grid) for fit, val in folds]``.

        Each candidate transforms the whole training relation once; a fold whose S̄ is the whole one (a
        constant maximal self-similarity, or distances) slices its fit distances from it (elementwise
        the same), its validation rows use its own constants. Declines (None) for other grids.
        """
        prefix = "estimator__"
        if not grid or any(name != "to_distance" and not name.startswith(prefix) for p in grid for name in p):
            return None
        R = np.asarray(R)
        if R.ndim != 2 or R.shape[0] != R.shape[1] or R.dtype != np.float64:
            return None  # per-fold path: converts, or rejects
        try:
            clone(self)._check_fit_input(R, y)  # the whole matrix passes the fits' checks: so does each fold's
        except DataError:
            return None
        groups = self._grid_groups(grid)
        facts = _Facts(R) if self.relation == "similarity" else None
        if isinstance(self.estimator, FastPathMixin):  # an estimator's own path over transform and grid
            shared = self.estimator._transform_folds(self, R, y, folds, groups, facts)
            if shared is not None:
                return shared
        wholes, out = {}, [[None] * len(grid) for _ in folds]
        for to_distance in groups:
            whole = clone(self).set_params(to_distance=to_distance)
            whole.bound_ = facts.top if facts else np.nan
            whole.floor_ = facts.floor if facts and to_distance in _POSITIVE else np.nan  # at or below each fold's
            wholes[to_distance] = [whole, None]
        for f, (fit, val) in enumerate(folds):
            fit_mask = np.zeros(len(R), dtype=bool)
            fit_mask[fit] = True
            R_val = R[np.ix_(val, fit)]
            for to_distance, points in groups.items():
                whole, D_whole = wholes[to_distance]
                fold = clone(whole)
                try:
                    fold._fold_constants(R, fit, fit_mask, facts)
                except DataError:
                    continue  # the candidate does not apply to this fold: None (an infinite CV error)
                own_floor = to_distance in _POSITIVE and fold.floor_ != whole.floor_ and bool(
                    np.any(fit_mask[facts.zeros[:, 0]] & fit_mask[facts.zeros[:, 1]]))
                if facts and (fold.bound_ != whole.bound_ or own_floor):
                    D_fit = fold._distances(R[np.ix_(fit, fit)], fit=True)
                else:  # elementwise the fold's own: the same S-bar, and the same floor for its zeros
                    if D_whole is None:
                        D_whole = wholes[to_distance][1] = whole._distances(R, fit=True)
                    D_fit = D_whole[np.ix_(fit, fit)]
                predictions = grid_predictions(clone(self.estimator), D_fit, y[fit], fold._distances(R_val),
                                               [p for _, p in points])
                for (g, _), p in zip(points, predictions):
                    out[f][g] = p
        return out

    def _warm_up(self) -> None:
        """The wrapped estimator's, if it follows the fast-path protocol."""
        if isinstance(self.estimator, FastPathMixin):
            self.estimator._warm_up()

    def _inner(self, R) -> np.ndarray:
        return self._distances(self._check_predict_input(R))

    def predict(self, R):
        """Classify by the wrapped estimator on the distances ``to_distance`` makes of ``R`` (fit constants).

        Parameters
        ----------
        R : array-like of shape (m, n_fit)
            Similarities or distances (``relation``) of m objects to the fit objects.

        Returns
        -------
        ndarray of shape (m,)
            The predicted class labels.
        """
        D = self._inner(R)  # first: NotFittedError before estimator_ is read
        return self.estimator_.predict(D)

    @available_if(_inner_has("predict_proba"))
    def predict_proba(self, R):
        """The wrapped estimator's class probabilities on the transformed ``R`` (if it has the method).

        Parameters
        ----------
        R : array-like of shape (m, n_fit)
            Similarities or distances (``relation``) of m objects to the fit objects.

        Returns
        -------
        ndarray of shape (m, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        D = self._inner(R)  # first: NotFittedError before estimator_ is read
        return self.estimator_.predict_proba(D)

    @available_if(_inner_has("predict_log_proba"))
    def predict_log_proba(self, R):
        """The wrapped estimator's log class probabilities on the transformed ``R`` (if it has the method).

        Parameters
        ----------
        R : array-like of shape (m, n_fit)
            Similarities or distances (``relation``) of m objects to the fit objects.

        Returns
        -------
        ndarray of shape (m, n_classes)
            Log class probabilities, columns in the order of ``classes_``.
        """
        D = self._inner(R)  # first: NotFittedError before estimator_ is read
        return self.estimator_.predict_log_proba(D)
