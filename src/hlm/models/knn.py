"""k-nearest-neighbour classification on precomputed distances (paper section 5.1, item 5).

Neighbours are ranked by (distance, training index), a stable order. A vote
tie between classes goes to the class with the larger prior; if still tied,
to the tied class that owns the highest-ranked neighbour (spec section 5).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval

from hlm.models._base import PrecomputedClassifier


class KNNClassifier(PrecomputedClassifier):
    """Majority vote among the ``n_neighbors`` closest training objects.

    Parameters
    ----------
    n_neighbors : int
        k; capped at the number of fitted objects.
    """

    _parameter_constraints = {"n_neighbors": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, n_neighbors: int = 1):
        self.n_neighbors = n_neighbors

    def fit(self, D, y):
        self._validate_params()
        D, self._y_idx = self._check_fit_input(D, y)
        return self

    def _neighbours(self, D) -> np.ndarray:
        k = min(int(self.n_neighbors), D.shape[1])
        return np.argsort(D, axis=1, kind="stable")[:, :k]

    def predict_grid(self, D_fit, y, D_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: one ranking of the fit set, the votes of every k from its
        prefixes (equal to refitting per grid point, tested)."""
        if any(set(p) - {"n_neighbors"} for p in grid):
            return super().predict_grid(D_fit, y, D_val, grid)
        model = clone(self).fit(D_fit, y)
        D = model._check_predict_input(D_val)
        order = np.argsort(D, axis=1, kind="stable")
        out = []
        for p in grid:
            model.set_params(n_neighbors=p.get("n_neighbors", self.n_neighbors))._validate_params()
            votes, nb_labels = model._votes(D, order[:, : min(int(model.n_neighbors), D.shape[1])])
            out.append(model.classes_[break_vote_ties(votes, model.class_prior_, nb_labels)])
        return out

    def _votes(self, D, neighbours: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        nb_labels = self._y_idx[self._neighbours(D) if neighbours is None else neighbours]
        n_classes = len(self.classes_)
        votes = np.zeros((D.shape[0], n_classes))
        np.add.at(votes, (np.arange(D.shape[0])[:, None], nb_labels), 1.0)
        return votes, nb_labels

    def predict_proba(self, D):
        """Vote fractions among the k neighbours (not a calibrated posterior)."""
        D = self._check_predict_input(D)
        votes, _ = self._votes(D)
        return votes / votes.sum(axis=1, keepdims=True)

    def predict(self, D):
        D = self._check_predict_input(D)
        votes, nb_labels = self._votes(D)
        return self.classes_[break_vote_ties(votes, self.class_prior_, nb_labels)]


def break_vote_ties(votes: np.ndarray, prior: np.ndarray, ranked_labels: np.ndarray) -> np.ndarray:
    """Winning class index per row: most votes, then larger prior, then highest-ranked neighbour.

    ``ranked_labels[i]`` lists the class indices of row i's neighbours, best first.
    """
    top = np.isclose(votes, votes.max(axis=1, keepdims=True), rtol=1e-12, atol=0.0)
    masked_prior = np.where(top, prior[None, :], -np.inf)
    top &= masked_prior == masked_prior.max(axis=1, keepdims=True)
    winner = np.argmax(top, axis=1)
    for i in np.flatnonzero(top.sum(axis=1) > 1):
        winner[i] = next(c for c in ranked_labels[i] if top[i, c])
    return winner
