"""The baseline of section 5.5: batch Mixture HLM retrained on everything seen so far."""

from __future__ import annotations

import numpy as np

from hlm.local_mapping._mixture_hlm import HLMModel, MixtureHLM
from hlm.local_mapping.incremental._distances import Distances
from hlm.local_mapping.incremental._learner import COMPONENT_STEP, INITIAL_COMPONENTS, Incremental


class _BatchMixtureHLM(MixtureHLM):
    """Mixture HLM that also fits a single class: an incremental learner's first batches may hold
    one (a later batch can add classes), unlike a classifier's training set."""

    _min_classes = 1


class Retrain(Incremental):
    """The baseline of section 5.5: batch Mixture HLM (VSH) on all data seen so far, refitted each round
    with Scheme II's number of components per class (4, 6, 8, ...).

    Each ``partial_fit`` fits :class:`~hlm.local_mapping.MixtureHLM` (section 3.1, eq. 3 with the
    shrinkage of section 2.1) to every object seen, with ``n_components + step * (round - 1)``
    components per class; it reads the distances among all of them.

    Parameters
    ----------
    n_components : int, default=4
        Components per class after the first batch (section 5.5: 4).
    step : int, default=2
        Components added per class each round (section 5.5: 2).
    n_init : int, default=20
        Random restarts of VSH (section 5.1: 20).
    min_cluster_size : int, default=3
        Clusters with fewer objects (prototype included) are left out of the estimate (section 5.5: 3);
        a class with fewer objects is not clustered (every object a prototype).
    squared : bool, default=True
        u = D^2 (the paper's reading) or u = D (dissertation ch. 3).
    round_shape : bool, default=True
        Score with s* = floor(2 s + 0.5) / 2 (section 2.1).
    random_state : int, default=0
        Seed of the clustering (and sampling) of every round, mixed with the round and the class.

    Attributes
    ----------
    classes_ : list
        The class labels, in the order they first appeared (the score columns' order).
    class_counts_ : list of int
        The objects seen per class (their frequencies are the class priors pi_k).
    n_rounds_ : int
        The batches learned (empty batches not counted).
    prototype_ids_ : ndarray of str
        The id of each component's prototype (the columns ``predict`` asks ``distances`` for).
    n_components_ : ndarray of shape (n_classes,)
        Components per class, in ``classes_`` order.
    seen_ids_ : ndarray of str
        The ids of every object seen, in arrival order.
    seen_y_ : list
        Their labels.

    See Also
    --------
    SchemeI, SchemeII : the incremental schemes of section 4 it is compared with.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_mapping import MatrixDistances, Retrain
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0.0, 1.0, (30, 2)), rng.normal(6.0, 1.0, (30, 2)),
    ...                [[0.0, 0.0], [6.0, 6.0], [1.0, -1.0], [5.0, 7.0]]])  # 60 objects to learn, 4 to classify
    >>> y = np.repeat(["a", "b"], 30)
    >>> ids = np.array([f"o{i}" for i in range(64)])
    >>> dist = MatrixDistances(cdist(X, X), ids)
    >>> batches = np.arange(60).reshape(20, 3).T  # 3 batches of 20 objects, 10 of each class
    >>> learner = Retrain(n_components=2, n_init=5)
    >>> for batch in batches:
    ...     _ = learner.partial_fit(ids[batch], y[batch], dist)
    >>> learner.seen_ids_.size, learner.n_components_
    (60, array([6, 6]))
    >>> " ".join(learner.predict(ids[60:], dist))
    'a b a b'
    """

    def __init__(self, n_components: int = INITIAL_COMPONENTS, step: int = COMPONENT_STEP, **kwargs):
        super().__init__(n_components=n_components, **kwargs)
        self.step = step
        self.seen_ids_ = np.empty(0, dtype=str)
        self.seen_y_: list = []

    def partial_fit(self, ids, y, distances: Distances) -> Retrain:
        """Add one batch and refit Mixture HLM on everything seen so far.

        Parameters
        ----------
        ids : sequence
            The ids of the batch's objects (unique; compared as strings).
        y : array-like of shape (len(ids),)
            Their labels; a batch may hold a single class, and new classes may appear in any batch.
        distances : callable
            ``distances(rows, cols)`` (ids in, matrix out), e.g. :class:`MatrixDistances`; asked for the
            distances among all objects seen.

        Returns
        -------
        self : Retrain
            The refitted learner (unchanged, with a warning, for an empty batch).

        Raises
        ------
        hlm.errors.DataError
            For a malformed batch, bad distances, or data the Mixture HLM fit cannot estimate from.
        """
        checked = self._check_batch(ids, y, distances)
        if checked is None:
            return self
        ids, _ = checked
        self.seen_ids_ = np.concatenate([self.seen_ids_, ids])
        self.seen_y_ = [*self.seen_y_, *np.asarray(y).tolist()]
        D = self._lookup(distances, self.seen_ids_, self.seen_ids_, "distances among all seen objects")
        M = self.n_components + self.step * (self.n_rounds_ - 1)
        labels = np.array([self.classes_.index(label) for label in self.seen_y_])
        fit = _BatchMixtureHLM(n_components=M, clustering="vsh", n_init=self.n_init,
                               min_cluster_size=self.min_cluster_size, squared=self.squared,
                               round_shape=self.round_shape, random_state=self._round_seed(0) % 2**31).fit(D, labels)
        model = fit.model()
        # MixtureHLM numbers only the classes present; map them to ours (all are present: all data seen)
        self.prototype_ids_ = self.seen_ids_[fit.prototypes_]
        self._model = HLMModel(
            classes=[str(c) for c in self.classes_], class_prior=model.class_prior,
            prototype_index=list(range(len(fit.prototypes_))),
            component_class=[int(fit.classes_[c]) for c in model.component_class], weight=model.weight,
            scale=model.scale, shape=model.shape, squared=self.squared,
        )
        return self
