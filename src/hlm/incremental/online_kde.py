"""oKDE and odKDE as incremental learners of the section 5.5 protocol (docs/online-kde-spec.md section 9).

The same interface as the HLM schemes (``partial_fit(ids, y, rows)``, ``predict(ids, rows)``,
``n_components_``), but ``rows(ids)`` returns feature vectors: :class:`VectorRows`, standardised
with the split's training part. The first batch starts every class in it as one batch; every
later batch arrives one object at a time, in its order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.exceptions import NotFittedError

from hlm.errors import DataError
from hlm.models._base import standard_scale
from hlm.models.okde import ODKDEClassifier, OKDEClassifier


class VectorRows:
    """``rows(ids)``: the feature vectors of objects by id, standardised with the mean and sd of ``fit_ids``
    (a constant feature keeps sd 1)."""

    def __init__(self, X, ids: Sequence, fit_ids: Sequence):
        self._X = np.asarray(X, dtype=np.float64)
        self._pos = {i: k for k, i in enumerate(np.asarray(ids).astype(str))}
        self.mean_, self.scale_ = standard_scale(self._X[self._positions(fit_ids)])

    def __call__(self, ids) -> np.ndarray:
        return (self._X[self._positions(ids)] - self.mean_) / self.scale_

    def _positions(self, ids) -> np.ndarray:
        ids = np.asarray(ids).astype(str)
        missing = [i for i in ids if i not in self._pos]
        if missing:
            raise DataError(f"no feature vectors for object(s) {', '.join(missing[:5])} ({len(missing)} missing)")
        return np.fromiter((self._pos[i] for i in ids), dtype=np.intp, count=len(ids))


class OnlineKDELearner:
    """An online KDE classifier (``discriminative``: odKDE, else oKDE) behind the incremental interface."""

    def __init__(self, discriminative: bool = False, random_state: int = 0, **params):
        self.discriminative = discriminative
        self.random_state = random_state  # the learner is deterministic; kept for the runner's interface
        self.model = (ODKDEClassifier if discriminative else OKDEClassifier)(standardize=False, **params)

    def partial_fit(self, ids, y, rows) -> OnlineKDELearner:
        if len(ids):
            self.model.partial_fit(rows(ids), np.asarray(y))
        return self

    def predict(self, ids, rows) -> np.ndarray:
        if not hasattr(self.model, "models_"):
            raise NotFittedError("OnlineKDELearner is not fitted yet; call partial_fit first")
        return self.model.predict(rows(ids))

    @property
    def n_components_(self) -> np.ndarray:
        return self.model.n_components_
