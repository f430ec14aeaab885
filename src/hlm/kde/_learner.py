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

from hlm.base._classifiers import standard_scale
from hlm.errors import DataError
from hlm.kde import ODKDEClassifier, OKDEClassifier


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
    """An online KDE classifier (``discriminative``: odKDE, else oKDE) behind the incremental interface of the
    HLM paper's section 5.5 protocol (docs/online-kde-spec.md section 9).

    The same interface as the HLM schemes (``partial_fit(ids, y, rows)``, ``predict(ids, rows)``,
    ``n_components_``), but ``rows(ids)`` returns feature vectors (e.g. :class:`VectorRows`, standardised with
    the split's training part). The first batch starts every class in it as one batch; every later batch
    arrives one object at a time, in its order.

    Parameters
    ----------
    discriminative : bool, default=False
        True: :class:`ODKDEClassifier` (odKDE); False: :class:`OKDEClassifier` (oKDE).
    random_state : int, default=0
        Not used: the learner is deterministic; kept for the runner's interface.
    **params
        Further hyper-parameters of the classifier (``threshold``, ``n_init``, ...). ``standardize`` is fixed
        to False: ``rows`` gives the features already standardised.

    Attributes
    ----------
    model : OKDEClassifier or ODKDEClassifier
        The wrapped classifier (fitted by ``partial_fit``).
    n_components_ : ndarray of shape (n_classes,)
        Components per class of the current model (a property).

    Examples
    --------
    Objects are named by ids; here the ids are row numbers of ``X``:

    >>> import numpy as np
    >>> from hlm.kde import OnlineKDELearner
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(6, 1, (20, 2))])
    >>> y = np.repeat([0, 1], 20)
    >>> def rows(ids):
    ...     return X[np.asarray(ids, dtype=int)]
    >>> order = rng.permutation(40)
    >>> learner = OnlineKDELearner(discriminative=True)
    >>> learner = learner.partial_fit(order[:20], y[order[:20]], rows)  # the initial batch
    >>> learner = learner.partial_fit(order[20:], y[order[20:]], rows)  # one object at a time
    >>> print(type(learner.model).__name__, learner.predict([0, 1, 38, 39], rows))
    ODKDEClassifier [0 0 1 1]
    >>> print(learner.n_components_.shape)
    (2,)
    """

    def __init__(self, discriminative: bool = False, random_state: int = 0, **params):
        self.discriminative = discriminative
        self.random_state = random_state  # the learner is deterministic; kept for the runner's interface
        self.model = (ODKDEClassifier if discriminative else OKDEClassifier)(standardize=False, **params)

    def partial_fit(self, ids, y, rows) -> OnlineKDELearner:
        """Learn a batch: the first one initialises every class in it, later ones stream one object at a time.

        Parameters
        ----------
        ids : sequence
            The batch's object ids, in their order; an empty batch changes nothing.
        y : array-like of shape (len(ids),)
            Their class labels; a label not seen before starts a new class.
        rows : callable
            ``rows(ids)`` -> ndarray of shape (len(ids), n_features), the objects' feature vectors.

        Returns
        -------
        self
            The updated learner.
        """
        if len(ids):
            self.model.partial_fit(rows(ids), np.asarray(y))
        return self

    def predict(self, ids, rows) -> np.ndarray:
        """Classify objects by the current model (prior x density, the odKDE paper's eq. 9).

        Parameters
        ----------
        ids : sequence
            The objects' ids.
        rows : callable
            ``rows(ids)`` -> ndarray of shape (len(ids), n_features), the objects' feature vectors.

        Returns
        -------
        ndarray of shape (len(ids),)
            The predicted class labels (NotFittedError before the first ``partial_fit``).
        """
        if not hasattr(self.model, "models_"):
            raise NotFittedError("OnlineKDELearner is not fitted yet; call partial_fit first")
        return self.model.predict(rows(ids))

    @property
    def n_components_(self) -> np.ndarray:
        """Components per class of the current model."""
        return self.model.n_components_
