"""Nearest-neighbour classifiers on precomputed distances or similarities (HLM paper's Tables 2-3).

* :class:`KNNClassifier`: k-NN on distances, ties broken by the class prior.
* :class:`AffinityKNN`, :class:`KRIKNN`, :class:`KRRKNN`: k-NN on similarities weighted by affinity, by
  kernel ridge interpolation (an exact simplex QP) or by kernel ridge regression (compared-methods spec,
  sections 6.2-6.4).
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "KNNClassifier": "hlm.neighbors._knn",
    "AffinityKNN": "hlm.neighbors._weighted",
    "KRIKNN": "hlm.neighbors._weighted",
    "KRRKNN": "hlm.neighbors._weighted",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
