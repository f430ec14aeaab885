"""The baseline of section 5.5: batch Mixture HLM retrained on everything seen so far."""

from __future__ import annotations

import numpy as np

from hlm.incremental.distances import Distances
from hlm.incremental.learner import COMPONENT_STEP, INITIAL_COMPONENTS, Incremental
from hlm.models.mixture_hlm import HLMModel, MixtureHLM


class _BatchMixtureHLM(MixtureHLM):
    """Mixture HLM that also fits a single class: an incremental learner's first batches may hold
    one (a later batch can add classes), unlike a classifier's training set."""

    _min_classes = 1


class Retrain(Incremental):
    """The baseline of section 5.5: batch Mixture HLM (VSH) on all data seen so far, refitted each round
    with Scheme II's number of components per class (4, 6, 8, ...)."""

    def __init__(self, n_components: int = INITIAL_COMPONENTS, step: int = COMPONENT_STEP, **kwargs):
        super().__init__(n_components=n_components, **kwargs)
        self.step = step
        self.seen_ids_ = np.empty(0, dtype=str)
        self.seen_y_: list = []

    def partial_fit(self, ids, y, distances: Distances) -> Retrain:
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
