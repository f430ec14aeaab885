"""A similarity method run on distance-only data (paper section 5.2; spec section 4.2).

The compared methods take similarities. For a data set that ships only
distances (Sonar, House Votes, ...), s = 1/d, with the upper bound
U = max{1/d_ij : i != j, d_ij > 0} estimated on the fit set alone: the
self-similarity and d = 0 map to U, and test similarities are min(1/d, U).
Data sets with a native similarity use it directly, never this round trip.
"""

from __future__ import annotations

from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods

from hlm.data.conversions import distance_to_similarity, reciprocal_similarity
from hlm.models._base import PrecomputedClassifier


class SimilarityFromDistances(PrecomputedClassifier):
    """``estimator`` (a similarity classifier) fitted on 1/d similarities of the fit set.

    Its hyper-parameters are set as ``estimator__<name>`` (scikit-learn's
    nested-parameter convention), so CV grids work unchanged.
    """

    _parameter_constraints = {"estimator": [HasMethods(["fit", "predict"])]}

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, D, y):
        self._validate_params()
        D, _ = self._check_fit_input(D, y)
        S, _, self.upper_bound_ = distance_to_similarity(D, where="fit")
        self.estimator_ = clone(self.estimator).fit(S, y)
        self.classes_ = self.estimator_.classes_
        return self

    def _similarities(self, D):
        return reciprocal_similarity(self._check_predict_input(D), self.upper_bound_)

    def predict(self, D):
        return self.estimator_.predict(self._similarities(D))

    def predict_proba(self, D):
        return self.estimator_.predict_proba(self._similarities(D))

